"""Longest-prefix-match tables with DPDK rte_lpm (IPv4) and rte_lpm6 (IPv6) semantics.

One multibit stride table, :class:`StrideTable`, serves both families. Level 0
(``tbl24``, 2**24 entries) is indexed by the top 24 bits of the key. Each further
level is a 256-entry ``tbl8`` group indexed by the next 8 key bits. IPv4
(key_bits=32) is rte_lpm's DIR-24-8: tbl24 plus one tbl8 level. IPv6
(key_bits=128) is laid out like rte_lpm6: tbl24 on address bytes 0..2, then up to
13 tbl8 levels on bytes 3..15. All tbl8 groups live in one growable uint32 array.
Its capacity doubles when it runs out.

Entry encoding (uint32, the same in tbl24 and tbl8)::

    bit 31        valid
    bit 30        extended: the payload is a tbl8 group index; look one level deeper
    bits P..29    depth of the rule that wrote the entry (0 in extended entries);
                  D = key_bits.bit_length() bits: 6 for IPv4, 8 for IPv6
    bits 0..P-1   payload: next hop, or tbl8 group index when extended;
                  P = 30 - D: 24 bits for IPv4 (rte_lpm's 24-bit next hop and 2**24
                  groups), 22 bits for IPv6 (rte_lpm6's 21-bit next hop fits)

An all-zero entry is invalid, which means a miss. lookup_bulk returns int64 next
hops, with ``default`` where a key misses.

Beside every entry the table keeps the id of the rule that wrote it (``tbl24_rule``,
``tbl8_rule``: the caller's number for the rule, e.g. its line in a rule file; 0 when
none was given). The same writes set both, so ``lookup_rule`` / ``lookup_bulk(...,
rules=True)`` name the very rule whose next hop the lookup returns: after overrides
(the later rule) and deletes (the covering rule that takes over) alike.

Semantics modelled (rte_lpm.c / rte_lpm6.c):

* add: the prefix is masked to its depth. Cells covered by the prefix are
  overwritten when they are invalid or hold a rule of depth <= the new depth, so
  more specific rules survive. Extended cells are followed into their groups.
  Adding the same (prefix, depth) again replaces the next hop. The tbl8 groups
  for the whole path are checked before anything is written (rte_lpm6's
  simulate_add). If they run out, LpmError (ENOSPC) is raised and the table is
  unchanged.
* delete: cells of the rule get the longest less-specific covering rule
  (rte_lpm's find_previous_rule), or become invalid. After that, every tbl8 group
  on the rule's path that is all invalid, or all one rule whose depth does not
  reach into the group, is folded into its parent entry and freed (rte_lpm's
  tbl8_recycle_check). A new group takes the lowest free index, like rte_lpm's
  linear scan. (rte_lpm6 frees a group only when it holds no valid entry, so
  IPv6 group counts can be lower than rte_lpm6's. Lookups are the same.)
* No depth 0 (/0): rte_lpm and rte_lpm6 reject depth 0 and key_bits + 1.
"""

from __future__ import annotations

import heapq
import sys
from typing import Iterable

import numpy as np

__all__ = ["LpmError", "StrideTable", "Lpm4", "Lpm6", "Fib"]

_VALID = 0x80000000
_EXT = 0x40000000
_EXT_VALID = _VALID | _EXT  # an entry >= this is extended; valid entries are >= _VALID
_GROUP = 256


class LpmError(ValueError):
    """Bad depth, bad next hop or address, tbl8 groups exhausted (ENOSPC), or a
    delete of a rule that is not in the table. The message is one line."""


class StrideTable:
    """A tbl24 + 8-bit-stride tbl8 LPM table for keys of ``key_bits`` bits.

    Scalar keys are Python ints. Bulk operations take keys in a level-friendly
    form; :class:`Lpm4` and :class:`Lpm6` do the conversion. ``max_groups``
    models rte_lpm's ``number_tbl8s`` (None means unlimited).
    """

    def __init__(self, key_bits: int, next_hop_bits: int, max_groups: int | None = None):
        if key_bits < 24 or (key_bits - 24) % 8:
            raise ValueError("key_bits must be 24 + a multiple of 8")
        self.key_bits = key_bits
        self._key_limit = 1 << key_bits
        self._shift24 = key_bits - 24           # key >> _shift24 indexes tbl24
        self.levels = 1 + (key_bits - 24) // 8
        self._dshift = 30 - key_bits.bit_length()
        self._pmask = (1 << self._dshift) - 1
        # Bit 30 and the depth field together. A cell can be overwritten at depth d
        # iff (cell & _ext_depth) <= d << dshift, because an extended cell has bit 30 set.
        self._ext_depth = _EXT | (((1 << key_bits.bit_length()) - 1) << self._dshift)
        if next_hop_bits > self._dshift:
            raise ValueError("next_hop_bits does not fit the entry payload")
        self.max_next_hop = (1 << next_hop_bits) - 1
        if max_groups is not None and not 0 <= max_groups <= self._pmask + 1:
            raise LpmError(f"max_groups must be 0..{self._pmask + 1}")
        self.max_groups = max_groups
        nbytes = key_bits // 8
        # _byte_masks[d] = network-order byte mask of a /d prefix
        ones = (1 << key_bits) - 1
        raw = b"".join((ones ^ (ones >> d)).to_bytes(nbytes, "big") for d in range(key_bits + 1))
        self._byte_masks = np.frombuffer(raw, np.uint8).reshape(key_bits + 1, nbytes)
        self.clear()

    # ---------------------------------------------------------------- state
    def clear(self) -> None:
        """Empty the table (rte_lpm_delete_all). np.zeros keeps tbl24 pages lazy."""
        self.tbl24 = np.zeros(1 << 24, np.uint32)
        self.tbl8 = np.zeros(0, np.uint32)
        self.tbl24_rule = np.zeros(1 << 24, np.uint32)   # the rule id beside each entry
        self.tbl8_rule = np.zeros(0, np.uint32)
        self._tbl24_view, self._tbl24_rule_view = memoryview(self.tbl24), memoryview(self.tbl24_rule)
        self._tbl8_view, self._tbl8_rule_view = memoryview(self.tbl8), memoryview(self.tbl8_rule)
        self._free: list[int] = []  # heap of freed group indices, all below _high
        self._high = 0              # groups >= _high have never been used
        self._rule_dicts: list[dict[int, tuple[int, int]]] = [{} for _ in range(self.key_bits + 1)]
        self._pending = None  # rules from build(), turned into dicts on first use
        self._pending_len = 0

    @property
    def _rules(self) -> list[dict[int, tuple[int, int]]]:
        """Per depth, {masked key: (next hop, rule id)} (rte_lpm's rule table). After
        build() the dicts are made on first use, so a table that is only looked up never
        pays for them."""
        if self._pending is not None:
            words, deduped = self._pending
            self._pending = None
            wbits = words.itemsize * 8
            for d, (sel, nhs, ids) in deduped.items():
                ints = words[sel, 0].tolist()
                for c in range(1, words.shape[1]):
                    ints = [hi << wbits | lo for hi, lo in zip(ints, words[sel, c].tolist())]
                self._rule_dicts[d] = dict(zip(ints, zip(nhs.tolist(), ids.tolist())))
        return self._rule_dicts

    def __len__(self) -> int:
        if self._pending is not None:
            return self._pending_len
        return sum(map(len, self._rule_dicts))

    @property
    def groups_used(self) -> int:
        return self._high - len(self._free)

    def _table(self, level: int) -> np.ndarray:
        return self.tbl24 if level == 0 else self.tbl8

    def _rule_table(self, level: int) -> np.ndarray:
        return self.tbl24_rule if level == 0 else self.tbl8_rule

    def _alloc(self, n: int) -> np.ndarray:
        """Take the n lowest free group indices, the same order as rte_lpm's linear scan."""
        if self.max_groups is not None and self.groups_used + n > self.max_groups:
            raise LpmError(f"out of tbl8 groups (ENOSPC): {self.max_groups} in use")
        reuse = [heapq.heappop(self._free) for _ in range(min(n, len(self._free)))]
        fresh = np.arange(self._high, self._high + n - len(reuse), dtype=np.uint32)
        self._high += fresh.size
        if self._high * _GROUP > self.tbl8.size:
            cap = max(self._high, 2 * (self.tbl8.size // _GROUP), 16)
            if self.max_groups is not None:
                cap = max(min(cap, self.max_groups), self._high)
            grown, grown_rule = np.zeros(cap * _GROUP, np.uint32), np.zeros(cap * _GROUP, np.uint32)
            grown[: self.tbl8.size] = self.tbl8
            grown_rule[: self.tbl8.size] = self.tbl8_rule
            self.tbl8, self.tbl8_rule = grown, grown_rule
            self._tbl8_view, self._tbl8_rule_view = memoryview(grown), memoryview(grown_rule)
        return np.concatenate([np.array(reuse, np.uint32), fresh])

    # ---------------------------------------------------------------- helpers
    def _check(self, key, depth, next_hop=None, rule=0) -> tuple[int, int, int | None]:
        """Validate the scalar arguments and return them as Python ints."""
        if not isinstance(depth, (int, np.integer)) or not 1 <= depth <= self.key_bits:
            raise LpmError(f"depth must be 1..{self.key_bits}, got {depth!r}")
        if not isinstance(key, (int, np.integer)) or not 0 <= key < (1 << self.key_bits):
            raise LpmError(f"address must be a {self.key_bits}-bit unsigned int, got {key!r}")
        if next_hop is not None and (not isinstance(next_hop, (int, np.integer))
                                     or not 0 <= next_hop <= self.max_next_hop):
            raise LpmError(f"next hop must be 0..{self.max_next_hop}, got {next_hop!r}")
        if not isinstance(rule, (int, np.integer)) or not 0 <= rule <= 0xFFFFFFFF:
            raise LpmError(f"rule id must be 0..{0xFFFFFFFF}, got {rule!r}")
        return int(key), int(depth), None if next_hop is None else int(next_hop)

    def _mask(self, key: int, depth: int) -> int:
        return key & ~((1 << (self.key_bits - depth)) - 1)

    def _entry(self, next_hop: int, depth: int) -> int:
        return _VALID | depth << self._dshift | next_hop

    @staticmethod
    def _level(depth: int) -> int:
        return 0 if depth <= 24 else (depth - 17) // 8  # 25..32 -> 1, 33..40 -> 2, ...

    def _index(self, key: int, level: int, group: int = 0) -> int:
        """Flat index of key's cell at `level` (in `group` for tbl8 levels)."""
        if level == 0:
            return key >> (self.key_bits - 24)
        return group << 8 | (key >> (self.key_bits - 24 - 8 * level)) & 0xFF

    def _walk(self, key: int, level: int, create: bool) -> list[tuple[int, int]]:
        """Cells (level, flat index) from tbl24 down to `level`. When `create` is
        set, a tbl8 group is allocated where a cell is not extended yet, filled
        with that cell's rule (rte_lpm add_depth_big) and rule id."""
        path = [(0, self._index(key, 0))]
        for lvl in range(1, level + 1):
            plvl, pidx = path[-1]
            e = int(self._table(plvl)[pidx])
            if e & _EXT:
                g = e & self._pmask
            else:
                if not create:
                    raise AssertionError("rule path is not extended")
                g = int(self._alloc(1)[0])
                self.tbl8[g << 8:(g + 1) << 8] = e
                self.tbl8_rule[g << 8:(g + 1) << 8] = self._rule_table(plvl)[pidx]
                self._table(plvl)[pidx] = _EXT_VALID | g  # re-fetched: _alloc may grow tbl8
                self._rule_table(plvl)[pidx] = 0
            path.append((lvl, self._index(key, lvl, g)))
        return path

    def _groups_needed(self, key: int, level: int) -> int:
        e, lvl = int(self.tbl24[self._index(key, 0)]), 0
        while lvl < level and e & _EXT:
            lvl += 1
            e = int(self.tbl8[self._index(key, lvl, e & self._pmask)])
        return level - lvl

    def _paint(self, cell: tuple[int, int], depth: int, entry: int, rule: int) -> None:
        """Write `entry` and its `rule` id into every non-extended cell of the range a
        rule of `depth` covers from `cell` whose depth is <= `depth`. Extended cells are
        followed into their groups, all levels down. This one rule serves add (entry =
        the new rule) and delete (entry = the replacement rule, or 0)."""
        lvl, idx = cell
        span = slice(idx, idx + (1 << (24 + 8 * lvl - depth)))   # idx is aligned
        cells, rule_cells = self._table(lvl)[span], self._rule_table(lvl)[span]
        limit = depth << self._dshift
        mine = (cells & self._ext_depth) <= limit
        cells[mine] = entry
        rule_cells[mine] = rule
        groups = cells[cells >= _EXT_VALID] & self._pmask
        while groups.size:  # one level of child groups per pass
            grid, rule_grid = self.tbl8.reshape(-1, _GROUP), self.tbl8_rule.reshape(-1, _GROUP)
            rows, rule_rows = grid[groups], rule_grid[groups]
            mine = (rows & self._ext_depth) <= limit
            rows[mine] = entry
            rule_rows[mine] = rule
            grid[groups], rule_grid[groups] = rows, rule_rows
            groups = rows[rows >= _EXT_VALID] & self._pmask

    # ---------------------------------------------------------------- scalar API
    def add(self, key: int, depth: int, next_hop: int, rule: int = 0) -> None:
        key, depth, next_hop = self._check(key, depth, next_hop, rule)
        key = self._mask(key, depth)
        rules = self._rules[depth]
        if rules.get(key) == (next_hop, rule):  # an identical rule changes nothing
            return
        level = self._level(depth)
        need = self._groups_needed(key, level)
        if need and self.max_groups is not None and self.groups_used + need > self.max_groups:
            raise LpmError(f"out of tbl8 groups (ENOSPC): {self.max_groups} in use")
        path = self._walk(key, level, create=True)
        rules[key] = (next_hop, int(rule))
        self._paint(path[-1], depth, self._entry(next_hop, depth), int(rule))

    def delete(self, key: int, depth: int) -> None:
        key, depth, _ = self._check(key, depth)
        key = self._mask(key, depth)
        if key not in self._rules[depth]:
            raise LpmError(f"rule {key:#x}/{depth} not present")
        del self._rules[depth][key]
        repl, repl_rule = 0, 0
        for d in range(depth - 1, 0, -1):
            covering = self._rules[d].get(self._mask(key, d))
            if covering is not None:
                repl, repl_rule = self._entry(covering[0], d), covering[1]
                break
        level = self._level(depth)
        path = self._walk(key, level, create=False)
        self._paint(path[-1], depth, repl, repl_rule)
        # Fold uniform groups back into their parent cell, bottom up.
        for lvl in range(level, 0, -1):
            g = path[lvl][1] >> 8
            row = self.tbl8[g << 8:(g + 1) << 8]
            first = int(row[0])
            parent_bits = 16 + 8 * lvl  # key bits above this group
            if (first & self._ext_depth) > parent_bits << self._dshift or not (row == first).all():
                break  # extended, deeper than the parent level, or not uniform
            plvl, pidx = path[lvl - 1]
            self._table(plvl)[pidx] = first
            self._rule_table(plvl)[pidx] = self.tbl8_rule[g << 8]   # one rule fills the group
            heapq.heappush(self._free, g)

    def lookup(self, key: int) -> int | None:
        """The next hop of the longest matching rule, or None (-ENOENT)."""
        return self.lookup_rule(key)[0]

    def lookup_rule(self, key: int) -> tuple[int | None, int | None]:
        """(next hop, rule id) of the longest matching rule, or (None, None). The walk
        reads the entry, then the rule id beside it: the simple pipeline's per-packet
        lookup (memoryviews index to Python ints several times faster than numpy)."""
        if type(key) is not int or not 0 <= key < self._key_limit:
            key = self._lookup_key(key)
        shift = self._shift24
        index = key >> shift
        e = self._tbl24_view[index]
        if e < _EXT_VALID:
            return (e & self._pmask, self._tbl24_rule_view[index]) if e >= _VALID else (None, None)
        tbl8 = self._tbl8_view                    # replaced with tbl8 whenever it grows (_alloc)
        while e >= _EXT_VALID:
            shift -= 8
            index = (e & self._pmask) << 8 | (key >> shift) & 0xFF
            e = tbl8[index]
        return (e & self._pmask, self._tbl8_rule_view[index]) if e >= _VALID else (None, None)

    def _lookup_key(self, key) -> int:
        """``key`` as a Python int (numpy integers are accepted), or LpmError."""
        key = int(key)
        if not 0 <= key < self._key_limit:
            raise LpmError(f"address must be a {self.key_bits}-bit unsigned int, got {key!r}")
        return key

    def is_rule_present(self, key: int, depth: int) -> int | None:
        """The next hop of the exact rule key/depth, or None."""
        return self.rule(key, depth)[0]

    def rule(self, key: int, depth: int) -> tuple[int | None, int | None]:
        """(next hop, rule id) of the exact rule key/depth, or (None, None)."""
        key, depth, _ = self._check(key, depth)
        return self._rules[depth].get(self._mask(key, depth), (None, None))

    def tbl24_entry(self, key: int) -> tuple[bool, int | None]:
        """(extended, group index or next hop) of key's tbl24 cell; (False, None) if invalid."""
        e = int(self.tbl24[key >> (self.key_bits - 24)])
        return (bool(e & _EXT), e & self._pmask) if e & _VALID else (False, None)

    # ---------------------------------------------------------------- bulk API
    def walk_arrays(self, default_hop: int = -1, default_rule: int = -1) -> tuple:
        """What the compiled lookups (``lpm.h``) walk: this table's own tbl24/tbl8 arrays
        and rule ids (never a copy), the payload mask, the key's bytes, and the answer
        of a miss (rte_fib's default route; -1: none)."""
        return (self.tbl24, self.tbl24_rule, self.tbl8, self.tbl8_rule, self._pmask, self.key_bits // 8,
                default_hop, default_rule)

    def lookup_bulk(self, idx0: np.ndarray, tail: np.ndarray, default, out=None, rules: bool = False):
        """idx0 is the uint32 tbl24 index of each key. tail[:, k] is the key byte for
        tbl8 level k+1. Only keys that are still extended take part in each level's gather.
        With ``rules``, returns (next hops, rule ids) with rule id -1 on a miss."""
        e = np.take(self.tbl24, idx0)
        rule = np.take(self.tbl24_rule, idx0).astype(np.int64) if rules else None
        act = np.flatnonzero(e >= _EXT_VALID)
        lvl = 0
        while act.size:
            idx = e[act]
            idx &= self._pmask
            idx <<= 8  # < 2**32 while the group count is < 2**24
            idx |= tail[:, lvl][act]
            sub = np.take(self.tbl8, idx)
            e[act] = sub
            if rules:
                rule[act] = np.take(self.tbl8_rule, idx)
            act = act[sub >= _EXT_VALID]
            lvl += 1
        miss = e < _VALID
        e &= self._pmask
        if out is None:
            out = np.empty(e.size, np.int64)
        np.copyto(out, e)
        np.copyto(out, default, where=miss)
        if rules:
            rule[miss] = -1
            return out, rule
        return out

    def build(self, keys: np.ndarray, depths: np.ndarray, next_hops: np.ndarray,
              rule_ids: np.ndarray | None = None) -> None:
        """Add many rules to an empty table. The result looks up the same as add() in
        order (a later duplicate wins, its rule id with it). keys is (N, key_bits/8)
        uint8 in network order; ``rule_ids`` default to 0.

        The work is a few numpy calls per depth. Depths are written in ascending
        order, so each cell ends with its longest rule. Before a tbl8 level is written,
        its groups are allocated in one step (one per distinct parent cell of the
        deeper rules) and filled from the finished parent level.
        """
        if len(self) or self.groups_used:
            raise LpmError("build() needs an empty table")
        kb, nbytes = self.key_bits, self.key_bits // 8
        keys = np.ascontiguousarray(keys, np.uint8).reshape(-1, nbytes)
        depths, next_hops = np.asarray(depths).ravel(), np.asarray(next_hops).ravel()
        n = len(keys)
        if len(depths) != n or len(next_hops) != n:
            raise LpmError("keys, depths and next_hops must have the same length")
        if n == 0:
            return
        if depths.min() < 1 or depths.max() > kb:
            raise LpmError(f"depth must be 1..{kb}")
        if next_hops.min() < 0 or next_hops.max() > self.max_next_hop:
            raise LpmError(f"next hop must be 0..{self.max_next_hop}")
        rule_ids = np.zeros(n, np.uint32) if rule_ids is None else np.asarray(rule_ids).ravel()
        if len(rule_ids) != n or rule_ids.min() < 0 or rule_ids.max() > 0xFFFFFFFF:
            raise LpmError(f"rule ids must be 0..{0xFFFFFFFF}, one per rule")
        rule_ids = rule_ids.astype(np.uint32)
        keys = keys & self._byte_masks[depths.astype(np.intp)]
        entries = next_hops.astype(np.uint32) | (_VALID | depths.astype(np.uint32) << self._dshift)
        order = np.argsort(depths.astype(np.uint8), kind="stable")  # radix sort; keeps file order
        bounds = np.searchsorted(depths[order], np.arange(kb + 2))  # depth d: bounds[d]:bounds[d+1]
        deduped = {}  # depth -> (rule indices, last duplicate kept; their next hops; their ids)

        def write(level, d, sel, slots, span_bits):
            keep = self._last_unique(slots)
            sel, slots = sel[keep], slots[keep]
            for table, values in ((self._table(level), entries), (self._rule_table(level), rule_ids)):
                if span_bits == 0:
                    table[slots] = values[sel]
                else:
                    table.reshape(-1, 1 << span_bits)[slots] = values[sel][:, None]
            deduped[d] = (sel, next_hops[sel], rule_ids[sel])

        try:
            idx0 = keys.view(">u4")[:, 0] >> 8
            for d in range(1, 25):
                sel = order[bounds[d]:bounds[d + 1]]
                if sel.size:
                    write(0, d, sel, idx0[sel] >> (24 - d), 24 - d)
            start = bounds[25]
            deep = order[start:]
            cur = idx0[deep]  # each deep rule's cell in the parent level
            for lvl in range(1, self.levels):
                if deep.size == 0:
                    break
                parents, inv = np.unique(cur, return_inverse=True)
                groups = self._alloc(parents.size)
                ptable, prule = self._table(lvl - 1), self._rule_table(lvl - 1)  # after _alloc, which may grow tbl8
                self.tbl8.reshape(-1, _GROUP)[groups] = ptable[parents][:, None]
                self.tbl8_rule.reshape(-1, _GROUP)[groups] = prule[parents][:, None]
                ptable[parents] = _EXT_VALID | groups
                prule[parents] = 0
                cur = groups[inv.ravel()] << 8 | keys[deep, 2 + lvl]
                base = 16 + 8 * lvl  # key bits above this level
                for d in range(base + 1, base + 9):
                    a, b = bounds[d] - start, bounds[d + 1] - start
                    if a < b:
                        write(lvl, d, deep[a:b], cur[a:b] >> (base + 8 - d), base + 8 - d)
                cut = bounds[min(base + 9, kb + 1)] - start
                start += cut
                deep, cur = deep[cut:], cur[cut:]
        except LpmError:
            self.clear()
            raise
        self._pending = (keys.view(">u8" if nbytes % 8 == 0 else ">u4"), deduped)
        self._pending_len = sum(sel.size for sel, _, _ in deduped.values())

    @staticmethod
    def _last_unique(slots: np.ndarray) -> np.ndarray:
        """Positions of the last occurrence of each distinct slot (a later duplicate
        rule wins). One plain sort of slot<<32|position is faster than a stable argsort."""
        pos = np.arange(slots.size, dtype=np.uint64)
        packed = np.sort(slots.astype(np.uint64) << np.uint64(32) | pos)
        hi = packed >> np.uint64(32)
        last = np.empty(slots.size, bool)
        np.not_equal(hi[1:], hi[:-1], out=last[:-1])
        last[-1] = True
        return (packed[last] & np.uint64(0xFFFFFFFF)).astype(np.intp)


class _Lpm:
    """The shared thin wrapper. Subclasses set the key width and convert addresses."""

    KEY_BITS: int
    NEXT_HOP_BITS: int

    def __init__(self, max_tbl8_groups: int | None = None):
        self._t = StrideTable(self.KEY_BITS, self.NEXT_HOP_BITS, max_tbl8_groups)
        # lookup(ip) -> next hop of the longest matching rule, or None (-ENOENT);
        # lookup_rule(ip) -> (next hop, rule id) or (None, None). Bound straight to the
        # table: they are the simple pipeline's per-packet calls
        self.lookup = self._t.lookup
        self.lookup_rule = self._t.lookup_rule

    def add(self, ip: int, depth: int, next_hop: int, rule: int = 0) -> None:
        """rte_lpm_add / rte_lpm6_add. ip is masked to depth. Re-adding a prefix replaces
        its next hop (and rule id: the caller's number for the rule, 0..2**32-1).
        LpmError for a bad depth or next hop, or when tbl8 groups run out (ENOSPC; the
        table is unchanged)."""
        self._t.add(ip, depth, next_hop, rule)

    def delete(self, ip: int, depth: int) -> None:
        """rte_lpm_delete / rte_lpm6_delete. Addresses covered by the rule fall back to
        the next less specific rule, or miss. LpmError for a bad depth or an absent rule."""
        self._t.delete(ip, depth)

    def is_rule_present(self, ip: int, depth: int) -> int | None:
        """Next hop of the exact rule ip/depth, or None."""
        return self._t.is_rule_present(ip, depth)

    def rule(self, ip: int, depth: int) -> tuple[int | None, int | None]:
        """(next hop, rule id) of the exact rule ip/depth, or (None, None)."""
        return self._t.rule(ip, depth)

    def delete_all(self) -> None:
        """rte_lpm_delete_all / rte_lpm6_delete_all."""
        self._t.clear()

    def __len__(self) -> int:
        return len(self._t)

    @property
    def tbl8_groups_used(self) -> int:
        return self._t.groups_used

    def tbl24_entry(self, ip: int) -> tuple[bool, int | None]:
        """(extended, tbl8 group or next hop) of ip's tbl24 cell, as test_lpm test18
        reads tbl24[].valid_group / group_idx. (False, None) means an invalid cell."""
        return self._t.tbl24_entry(ip)

    def walk_arrays(self, default_hop: int = -1, default_rule: int = -1) -> tuple:
        """The table's arrays as the compiled lookups take them (:meth:`StrideTable.walk_arrays`)."""
        return self._t.walk_arrays(default_hop, default_rule)

    def lookup_bulk(self, ips, default, out: np.ndarray | None = None, rules: bool = False):
        """Vectorised lookup. Returns int64 next hops, with `default` (a scalar, or an
        array broadcast to the keys) where there is no match; with ``rules``, also the
        rule id of each answer (-1 on a miss)."""
        idx0, tail = self._bulk_keys(ips)
        return self._t.lookup_bulk(idx0, tail, default, out, rules)

    def build(self, ips, depths, next_hops, rule_ids=None) -> None:
        """Bulk add into an empty table. The lookups are the same as add() in order
        (a later duplicate prefix wins). ips is uint32 for Lpm4 and (N, 16) uint8 for
        Lpm6. On LpmError the table is left empty."""
        self._t.build(self._key_bytes(ips), depths, next_hops, rule_ids)

    @classmethod
    def from_rules(cls, rules: Iterable[tuple], max_tbl8_groups: int | None = None):
        """Table from (ip, depth, next_hop) or (ip, depth, next_hop, rule id) tuples in
        file order, built with build()."""
        rules = rules if isinstance(rules, (list, tuple)) else list(rules)
        n = len(rules)
        depths = np.fromiter((r[1] for r in rules), np.int64, n)
        nhs = np.fromiter((r[2] for r in rules), np.int64, n)
        ids = np.fromiter((r[3] if len(r) > 3 else 0 for r in rules), np.int64, n)
        lpm = cls(max_tbl8_groups)
        lpm.build(cls._ints_to_keys([r[0] for r in rules]), depths, nhs, ids)
        return lpm


class Lpm4(_Lpm):
    """IPv4 LPM with rte_lpm semantics (DIR-24-8). Depth is 1..32, the next hop has
    24 bits, and addresses are host-order ints or uint32. lookup_bulk is
    rte_lpm_lookupx4 with defv, generalised to any number of keys."""

    KEY_BITS, NEXT_HOP_BITS = 32, 24
    _LOW_BYTE = 0 if sys.byteorder == "little" else 3

    @classmethod
    def _bulk_keys(cls, ips):
        ips = np.ascontiguousarray(ips, np.uint32).ravel()
        low = ips.view(np.uint8)[cls._LOW_BYTE::4]  # zero-copy strided view of ip & 0xFF
        return ips >> 8, low[:, None]

    @staticmethod
    def _key_bytes(ips):
        ips = np.asarray(ips)
        if ips.size and (ips.min() < 0 or ips.max() > 0xFFFFFFFF):
            raise LpmError("IPv4 address out of range")
        return ips.astype(">u4").view(np.uint8).reshape(-1, 4)

    @staticmethod
    def _ints_to_keys(ips):
        try:
            return np.fromiter(ips, np.int64, len(ips))
        except (OverflowError, TypeError) as exc:
            raise LpmError(f"IPv4 address must be a 32-bit unsigned int ({exc})") from None


class Lpm6(_Lpm):
    """IPv6 LPM with rte_lpm6 semantics. Depth is 1..128, the next hop has 21 bits
    (0x1FFFFF max). Scalar addresses are 128-bit ints. Bulk addresses are an
    (N, 16) uint8 array in network order, and lookup_bulk with default=-1 behaves
    like rte_lpm6_lookup_bulk_func."""

    KEY_BITS, NEXT_HOP_BITS = 128, 21

    @staticmethod
    def _bulk_keys(addrs):
        a = np.ascontiguousarray(addrs, np.uint8).reshape(-1, 16)
        return a.view(">u4")[:, 0] >> 8, a[:, 3:]

    @staticmethod
    def _key_bytes(addrs):
        return np.ascontiguousarray(addrs, np.uint8).reshape(-1, 16)

    @staticmethod
    def _ints_to_keys(ips):
        try:
            raw = b"".join(ip.to_bytes(16, "big") for ip in ips)
        except (OverflowError, AttributeError) as exc:
            raise LpmError(f"IPv6 address must be a 128-bit unsigned int ({exc})") from None
        return np.frombuffer(raw, np.uint8).reshape(-1, 16)

    def delete_bulk(self, ips: Iterable[int], depths: Iterable[int]) -> None:
        """rte_lpm6_delete_bulk_func: delete several rules and skip the missing ones."""
        for ip, depth in zip(ips, depths):
            self._t._check(ip, depth)
            if self._t.is_rule_present(ip, depth) is not None:
                self._t.delete(ip, depth)


class Fib:
    """rte_fib / rte_fib6 as dpdk-l3fwd sets them up (``setup_fib``): the routes in an
    LPM table, and a ``/0`` route as the default next hop — what a key matching no
    longer prefix gets, with that rule's id, instead of a miss. Without a ``/0`` route
    a miss stays a miss (l3fwd then uses the input port). Same lookups as Lpm4/Lpm6."""

    def __init__(self, lpm: _Lpm, default: int | None = None, default_rule: int | None = None):
        self.lpm, self.default, self.default_rule = lpm, default, default_rule

    def __len__(self) -> int:
        return len(self.lpm) + (self.default is not None)

    def lookup_rule(self, ip) -> tuple[int | None, int | None]:
        next_hop, rule = self.lpm.lookup_rule(ip)
        return (self.default, self.default_rule) if next_hop is None else (next_hop, rule)

    def lookup(self, ip) -> int | None:
        return self.lookup_rule(ip)[0]

    def walk_arrays(self) -> tuple:
        """The LPM table's arrays, with the /0 route as the answer of a miss."""
        if self.default is None:
            return self.lpm.walk_arrays()
        return self.lpm.walk_arrays(self.default, self.default_rule)

    def lookup_bulk(self, ips, default, out: np.ndarray | None = None, rules: bool = False):
        """As :meth:`_Lpm.lookup_bulk`; ``default`` only answers where there is no /0 route."""
        if self.default is None:
            return self.lpm.lookup_bulk(ips, default, out, rules)
        result = self.lpm.lookup_bulk(ips, self.default, out, rules)
        if rules:
            result[1][result[1] < 0] = self.default_rule
        return result
