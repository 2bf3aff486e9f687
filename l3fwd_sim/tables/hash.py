"""Exact-match tables with rte_hash's observable semantics: a key either is stored,
with its data (here an output port), or it misses.

A key is a row of 64-bit words; what the words hold is the caller's business (l3fwd's
masked 5-tuple: :mod:`l3fwd_sim.l3fwd.em`). The hash function only decides placement.
Vectorised lookups use an open-addressing table that compares full keys, so a hash
collision can never return a wrong port; scalar lookups (the simple pipeline) use a
dict built from the same flows.
"""
from __future__ import annotations

import numpy as np

_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD], np.uint64)


class ExactMatchTable:
    """Keys → output port, and the id of the rule that stored it.

    Open addressing with linear probing over a power-of-two slot array at most half
    full; each slot holds a key, its port (-1 = empty) and its rule id, so a probe is
    one random access. Both the build and the lookup are vectorised: each round handles
    every key still probing."""

    def __init__(self, key_words: int, flows: dict[tuple[int, ...], int] | None = None,
                 rules: dict[tuple[int, ...], int] | None = None):
        """``flows`` maps keys (tuples of ``key_words`` 64-bit words) to ports;
        ``rules`` maps keys to the caller's id of the rule that stored them (e.g. its
        line; default 0)."""
        self.key_words = key_words
        self.flows = dict(flows or {})
        self.rules = {key: (rules or {}).get(key, 0) for key in self.flows}
        keys = np.array(list(self.flows), np.uint64).reshape(-1, key_words)
        ports = np.array(list(self.flows.values()), np.int64)
        rule_ids = np.array(list(self.rules.values()), np.int64)
        bits = max(4, (2 * len(keys) - 1).bit_length())
        self._mask = np.uint64((1 << bits) - 1)
        self._keys = np.zeros((1 << bits, key_words), np.uint64)
        self._ports = np.full(1 << bits, -1, np.int64)
        self._rules = np.full(1 << bits, -1, np.int64)
        pending = np.arange(len(keys))
        pos = self._hash(keys) & self._mask
        while len(pending):
            free = self._ports[pos] < 0
            # of the keys aiming at one free slot, the first takes it; the rest probe on
            first = np.unique(pos[free], return_index=True)[1]
            winners = np.flatnonzero(free)[first]
            self._keys[pos[winners]] = keys[pending[winners]]
            self._ports[pos[winners]] = ports[pending[winners]]
            self._rules[pos[winners]] = rule_ids[pending[winners]]
            keep = np.ones(len(pending), bool)
            keep[winners] = False
            pending, pos = pending[keep], (pos[keep] + np.uint64(1)) & self._mask

    def __len__(self) -> int:
        return len(self.flows)

    @staticmethod
    def _hash(keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            h = np.zeros(len(keys), np.uint64)
            for i in range(keys.shape[1]):
                h ^= keys[:, i] * _MIX[i]
                h ^= h >> np.uint64(29)
                h *= _MIX[(i + 1) % len(_MIX)]
            h ^= h >> np.uint64(32)
        return h

    def probe_arrays(self) -> tuple:
        """What the compiled lookup (``hash.h``) probes: the slots' keys, ports and rule
        ids (this table's own arrays)."""
        return self._keys, self._ports, self._rules

    def lookup(self, key: tuple[int, ...]) -> int | None:
        return self.flows.get(key)

    def lookup_rule(self, key: tuple[int, ...]) -> tuple[int | None, int | None]:
        """(port, rule id) of ``key``, or (None, None)."""
        port = self.flows.get(key)
        return (port, self.rules[key]) if port is not None else (None, None)

    def lookup_bulk(self, keys: np.ndarray, default: np.ndarray, rules: bool = False):
        """Port per key row, ``default`` (per row) on a miss; with ``rules``, also the
        rule id per row (-1 on a miss). Each round probes every key still probing; the
        first round, which finds most keys, works on the whole arrays."""
        if not self.flows or not len(keys):
            result = np.array(np.broadcast_to(default, len(keys)), np.int64)
            return (result, np.full(len(keys), -1, np.int64)) if rules else result
        # slots as intp: numpy gathers with them several times faster than with uint64 indexes
        pos = (self._hash(keys) & self._mask).astype(np.intp)
        port, hit = self._probe(keys, pos)
        if hit.all():                                       # every key found at its home slot
            return (port, np.take(self._rules, pos)) if rules else port
        result = np.where(hit, port, default)
        rule = np.where(hit, np.take(self._rules, pos), -1) if rules else None
        probing = (port >= 0) & ~hit
        active, pos = np.flatnonzero(probing), (pos[probing] + 1) & int(self._mask)
        while len(active):
            port, hit = self._probe(keys[active], pos)
            result[active[hit]] = port[hit]
            if rules:
                rule[active[hit]] = self._rules[pos[hit]]
            probing = (port >= 0) & ~hit
            active, pos = active[probing], (pos[probing] + 1) & int(self._mask)
        return (result, rule) if rules else result

    def _probe(self, keys: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ports in slots ``pos`` and whether each holds its key."""
        port = np.take(self._ports, pos)
        stored = np.take(self._keys, pos, axis=0)
        hit = port >= 0
        for word in range(keys.shape[1]):                   # column by column: no (n, w) temporaries
            hit &= stored[:, word] == keys[:, word]
        return port, hit
