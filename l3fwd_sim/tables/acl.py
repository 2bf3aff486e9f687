"""Multi-field classification with rte_acl's observable semantics (``lib/acl``).

A rule has one condition per field, of one of rte_acl's three field types:

* ``MASK``: a prefix — the first ``mask_range`` bits of ``value`` (``/0`` matches all);
* ``RANGE``: ``value <= key <= mask_range``;
* ``BITMASK``: ``key & mask_range == value & mask_range``.

:meth:`AclTable.classify` returns, per key, the index of the first rule (in the order
given: rule 0 has the highest priority) whose every field matches, or -1. That is all
rte_acl's one-category classification observably does; how it finds the rule (a byte
trie) is its business.

Here: a bit-vector scheme. Each field's value space is cut into elementary intervals at
every rule boundary; per interval a bitset says which rules match there. A key's rules
are the AND of its fields' bitsets; the first set bit is the answer. Rules go in chunks
of 4096 (64 words of 64 bits) in priority order, and each interval also keeps a
64-bit summary of which words are non-zero, so a lookup ANDs one summary word per field,
then only the words the summary points at, and stops at the first chunk that matches.
Memory per chunk and field is (intervals) × 520 bytes, intervals ≤ 2 × 4096 + 1.

The walk has a compiled twin (``acl.c``, :mod:`l3fwd_sim.compiled`) over the same flat
arrays (:meth:`AclTable.walk_arrays`); the numpy walk below is the definition.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import compiled
from . import twins

MASK, RANGE, BITMASK = "mask", "range", "bitmask"
CHUNK = 4096                         # rules per chunk: 64 words of 64 bits
WORDS = CHUNK // 64


@dataclass(frozen=True)
class AclField:
    """An ``rte_acl_field_def``: its type and width in bits (BITMASK fields ≤ 16 bits)."""
    kind: str
    bits: int


def _intervals(field: AclField, value: np.ndarray, mask_range: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each rule's condition on ``field`` as an inclusive interval ``[lo, hi]``."""
    if field.kind == RANGE:
        return value, mask_range
    host = field.bits - mask_range                      # MASK: bits after the prefix are free
    span = (np.int64(1) << host) - 1
    lo = (value >> host) << host
    return lo, lo + span


MAX_INDEX_BITS = 16                  # a field's interval index has at most 2^16 entries


@dataclass
class _FieldChunk:
    """One field over one chunk of rules: elementary interval starts, and per interval
    the matching rules (``words``) and which words are non-zero (``summary``)."""
    starts: np.ndarray       # (m,) int64, starts[0] == 0
    words: np.ndarray        # (m, words of the chunk's rules: at most WORDS) uint64
    summary: np.ndarray      # (m,) uint64
    index: np.ndarray        # int32: the interval of every key value (shift -1), or of the first
    shift: int               # value of every slice key >> shift; the walk searches on from there

    def locate(self, keys: np.ndarray) -> np.ndarray:
        if self.shift < 0:
            return self.index[keys]
        return np.searchsorted(self.starts, keys, side="right") - 1


def _field_chunk(field: AclField, value: np.ndarray, mask_range: np.ndarray) -> _FieldChunk | None:
    """The field's tables for a chunk of rules, or None when every rule matches every key."""
    n = len(value)
    rules = np.arange(n)
    if field.kind == BITMASK:
        starts = np.arange(1 << field.bits, dtype=np.int64)
        match = (starts[:, None] & mask_range) == (value & mask_range)
        if match.all():
            return None
        padded = np.zeros((len(starts), CHUNK), bool)
        padded[:, :n] = match
        words = np.packbits(padded, axis=1, bitorder="little").view(np.uint64)
    else:
        lo, hi = _intervals(field, value, mask_range)
        if (lo == 0).all() and (hi == (1 << field.bits) - 1).all():
            return None
        starts = np.unique(np.concatenate([[0], lo, hi + 1]))
        starts = starts[starts < (1 << field.bits)]
        # Each rule's bit is toggled on at its first interval and off after its last; a
        # running XOR down the intervals then holds exactly the rules covering each one.
        toggles = np.zeros((len(starts) + 1, WORDS), np.uint64)
        bit = np.uint64(1) << (rules % 64).astype(np.uint64)
        for at in (np.searchsorted(starts, lo), np.searchsorted(starts, hi, side="right")):
            np.bitwise_xor.at(toggles, (at, rules // 64), bit)
        words = np.bitwise_xor.accumulate(toggles[:-1], axis=0)
    words = words[:, :(n + 63) // 64]                       # a short last chunk keeps only its words
    nonzero = np.zeros((len(words), WORDS), bool)
    nonzero[:, :words.shape[1]] = words != 0
    nonzero = np.packbits(nonzero, axis=1, bitorder="little").view(np.uint64)[:, 0]
    # About two index entries per interval: small enough to stay in cache, fine enough that
    # the search between two entries is a step or two.
    index_bits = min(field.bits, MAX_INDEX_BITS, max(4, int(len(starts)).bit_length() + 1))
    shift = field.bits - index_bits if field.bits > index_bits else -1
    points = np.arange((1 << index_bits) + (shift >= 0), dtype=np.int64) << max(shift, 0)
    index = (np.searchsorted(starts, points, side="right") - 1).astype(np.int32)
    return _FieldChunk(starts, np.ascontiguousarray(words), nonzero, index, shift)


def _lowest_bit(words: np.ndarray) -> np.ndarray:
    """Index of the lowest set bit of each non-zero uint64."""
    low = words & (~words + np.uint64(1))
    return np.log2(low.astype(np.float64)).astype(np.int64)        # a power of two: exact


class AclTable:
    """First-match classification over ``fields``; rule i's condition on field f is
    ``(values[i, f], mask_ranges[i, f])`` as an ``rte_acl_field`` holds it."""

    def __init__(self, fields: list[AclField], values: np.ndarray, mask_ranges: np.ndarray):
        self.fields = list(fields)
        values, mask_ranges = np.asarray(values, np.int64), np.asarray(mask_ranges, np.int64)
        self.rules = len(values)
        built, self._chunk_tables = [], [0]
        for first in range(0, self.rules, CHUNK):
            part = slice(first, first + CHUNK)
            tables = [(f, _field_chunk(field, values[part, f], mask_ranges[part, f]))
                      for f, field in enumerate(self.fields)]
            # the finest-cut fields first: they clear most summaries, so the walk stops sooner
            built += sorted(((f, t) for f, t in tables if t is not None), key=lambda ft: -len(ft[1].starts))
            self._chunk_tables.append(len(built))
        self._flatten(built)

    def _flatten(self, built: list[tuple[int, _FieldChunk]]) -> None:
        """All chunks' tables as a few flat arrays (what the compiled walk takes); each
        table keeps views into them."""
        sizes = [len(table.starts) for _, table in built]
        self._table_field = np.array([f for f, _ in built], np.int64)
        self._starts_at = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._rows_at = self._starts_at[:-1].copy()
        self._starts = np.concatenate([table.starts for _, table in built] or [np.zeros(0, np.int64)])
        self._summary = np.concatenate([table.summary for _, table in built] or [np.zeros(0, np.uint64)])
        # every table's rows of words, one after another (rows of a short last chunk are shorter)
        self._words = np.concatenate([table.words.reshape(-1) for _, table in built] or [np.zeros(0, np.uint64)])
        self._words_at = np.concatenate([[0], np.cumsum([table.words.size for _, table in built])]).astype(np.int64)
        index_sizes = [len(table.index) for _, table in built]
        self._index = np.concatenate([table.index for _, table in built] or [np.zeros(0, np.int32)])
        self._index_at = np.concatenate([[0], np.cumsum(index_sizes)]).astype(np.int64)
        self._shift = np.array([table.shift for _, table in built], np.int64)
        self._tables: list[tuple[int, _FieldChunk]] = []
        for t, (f, table) in enumerate(built):
            rows = slice(self._rows_at[t], self._rows_at[t] + sizes[t])
            index = self._index[self._index_at[t]:self._index_at[t + 1]]
            words = self._words[self._words_at[t]:self._words_at[t + 1]].reshape(sizes[t], -1)
            self._tables.append((f, _FieldChunk(self._starts[rows], words, self._summary[rows], index, table.shift)))
        self._chunk_tables = np.array(self._chunk_tables, np.int64)

    def __len__(self) -> int:
        return self.rules

    def walk_arrays(self) -> tuple:
        """What the compiled walk takes: the rule count, chunk size, field count and the
        flat arrays (views of this table's own, never copies)."""
        return (self.rules, CHUNK, len(self.fields), self._chunk_tables, self._table_field, self._starts,
                self._starts_at, self._index, self._index_at, self._shift, self._words, self._words_at,
                self._summary, self._rows_at)

    def classify(self, columns: np.ndarray) -> np.ndarray:
        """Index of the first matching rule per key, -1 when none matches. ``columns``
        holds one row per field: ``columns[f, k]`` is field f of key k."""
        columns = np.ascontiguousarray(columns, np.int64)
        result = np.empty(columns.shape[1], np.int64)
        if compiled.enabled():
            twins.acl_classify(self.walk_arrays(), columns, result)
            return result
        result[:] = -1
        pending = np.arange(len(result))
        for chunk_number in range(len(self._chunk_tables) - 1):
            if not len(pending):
                break
            tables = self._tables[self._chunk_tables[chunk_number]:self._chunk_tables[chunk_number + 1]]
            base = chunk_number * CHUNK
            everyone = len(pending) == len(result)
            rows = [table.locate(columns[f] if everyone else columns[f, pending]) for f, table in tables]
            summary = np.full(len(pending), _valid_words(self.rules - base))
            for (_, table), at in zip(tables, rows):
                summary &= table.summary[at]
            todo = np.flatnonzero(summary)
            while len(todo):
                word = _lowest_bit(summary[todo])
                bits = _valid_bits(self.rules - base, word)
                for (_, table), at in zip(tables, rows):
                    bits &= table.words[at[todo], word]
                hit = bits != 0
                result[pending[todo[hit]]] = base + word[hit] * 64 + _lowest_bit(bits[hit])
                summary[todo[hit]] = 0
                summary[todo[~hit]] &= ~(np.uint64(1) << word[~hit].astype(np.uint64))
                todo = todo[summary[todo] != 0]
            pending = pending[result[pending] < 0]
        return result


def _valid_words(rules: int) -> np.uint64:
    """Summary bits of the words that hold rules of a chunk with ``rules`` rules."""
    words = min(WORDS, (rules + 63) // 64)
    return np.uint64((1 << words) - 1)


def _valid_bits(rules: int, word: np.ndarray) -> np.ndarray:
    """Bits of rules that exist, in each given word of a chunk with ``rules`` rules."""
    left = np.clip(rules - word * 64, 0, 64)
    return np.where(left >= 64, ~np.uint64(0), (np.uint64(1) << left.astype(np.uint64)) - np.uint64(1))
