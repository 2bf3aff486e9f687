"""Per-rule hit counters: for each lookup table and rule id (the rule's line in its file),
the received packets that rule decided and their bytes (the frame as net_pcap received
it: its captured length).

The rule ids come from the lookups that forward, as a trace's do: the stages note each
packet's table and rule in a :class:`Decisions` (``lcore.c`` in its own columns),
and a super-burst is counted in bulk once its verdicts are final, so that a packet another
check dropped (RFC 1812) counts for no rule. Which verdicts count is the application's
choice (``counted``: l3fwd counts what it sent, and ACL deny lines)."""
from __future__ import annotations

from typing import Callable

import numpy as np


class Decisions:
    """What the lookups answered for each packet of a super-burst, noted by the pipeline
    stages as they run (only when tracing): the table (its code: 1 + its index in the
    application's ``tables``; 0 for none), the id of the rule that decided (its line in
    the table's rule file; -1 for none) and the next hop (-1 for none)."""

    def __init__(self, n: int, tables: tuple[str, ...]):
        self.codes = {name: code for code, name in enumerate(tables, 1)}
        self.table = np.zeros(n, np.uint8)
        self.rule = np.full(n, -1, np.int64)
        self.next_hop = np.full(n, -1, np.int64)

    def lookup(self, rows, table: str, rule: np.ndarray, next_hop: np.ndarray) -> None:
        """The answers for ``rows`` (a slice or indexes) from ``table``."""
        self.table[rows] = self.codes[table]
        self.rule[rows] = rule
        self.next_hop[rows] = next_hop

    def notes(self) -> list[Callable]:
        """One ``note(table, rule, next_hop)`` per packet, for the per-packet path
        (``None`` stands for no rule / no next hop)."""
        def note_for(i: int):
            def note(table: str, rule: int | None, next_hop: int | None) -> None:
                self.table[i] = self.codes[table]
                self.rule[i] = -1 if rule is None else rule
                self.next_hop[i] = -1 if next_hop is None else next_hop
            return note
        return [note_for(i) for i in range(len(self.table))]


class RuleHits:
    """Counters of tables ``tables`` (a table's code is 1 + its index, as in
    :class:`Decisions`), ``sizes[name]`` rule ids each."""

    def __init__(self, tables: tuple[str, ...], sizes: dict[str, int], counted: tuple[int, ...]):
        self.tables, self.sizes, self.counted_codes = tables, dict(sizes), tuple(counted)
        sizes_by_code = [0] + [sizes.get(name, 0) for name in tables]
        self.base = np.concatenate([[0], np.cumsum(sizes_by_code)[:-1]]).astype(np.int64)   # by code
        total = int(sum(sizes_by_code))
        self.packets = np.zeros(total, np.int64)
        self.bytes = np.zeros(total, np.int64)
        self.counted = np.zeros(256, np.uint8)          # by reason code
        self.counted[list(counted)] = 1

    def empty_like(self) -> "RuleHits":
        return RuleHits(self.tables, self.sizes, self.counted_codes)

    def count(self, table: np.ndarray, rule: np.ndarray, reason: np.ndarray, caplen: np.ndarray) -> None:
        """A super-burst's notes and final verdicts: one bincount over (table, rule)."""
        mine = np.flatnonzero((table > 0) & (rule >= 0) & self.counted[reason].astype(bool))
        if not len(mine):
            return
        at = self.base[table[mine]] + rule[mine]
        self.packets += np.bincount(at, minlength=len(self.packets))
        self.bytes += np.bincount(at, weights=caplen[mine], minlength=len(self.bytes)).astype(np.int64)

    def merge(self, other: "RuleHits") -> None:
        self.packets += other.packets
        self.bytes += other.bytes

    def of(self, table: str) -> tuple[np.ndarray, np.ndarray]:
        """(packets, bytes) of ``table``, indexed by rule id."""
        start = int(self.base[self.tables.index(table) + 1])
        end = start + self.sizes.get(table, 0)
        return self.packets[start:end], self.bytes[start:end]

    def compiled_args(self) -> tuple:
        """What ``lcore.c`` counts into: the arrays themselves, the tables' bases by code,
        the counted reasons."""
        return self.packets, self.bytes, self.base, self.counted
