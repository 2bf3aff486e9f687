"""Exact-match flow tables, as dpdk-l3fwd's EM mode uses rte_hash.

l3fwd hashes a masked slice of the IP header (lpm_fib_hash_internals.md §5) and looks
it up in an rte_hash whose data is the output port. Observable semantics: an exact
match on (protocol, source address, destination address, L4 source port, L4
destination port); the hash function only decides placement. Here a key is a row of
64-bit words:

* IPv4 (frame bytes): ``src<<32 | dst`` (26..33), ``proto<<32 | sport<<16 | dport``
  (23, 34..37 — the ports at the fixed offset of an option-less header);
* IPv6: src high/low (22..37), dst high/low (38..53), ``next_header<<32 | ports``
  (20, 54..57).

Vectorised lookups use an open-addressing table that compares full keys, so a hash
collision can never return a wrong port; scalar lookups (the simple pipeline) use a
dict built from the same flows.
"""
from __future__ import annotations

import struct

import numpy as np

from .rules import EmRule

KEY_WORDS = {4: 2, 6: 5}
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD], np.uint64)


_V4_KEY = struct.Struct(">QI").unpack_from        # addresses at 26..33, L4 ports at 34..37
_V6_KEY = struct.Struct(">QQQQI").unpack_from     # addresses at 22..53, L4 ports at 54..57


def key_of(frame: bytes, family: int) -> tuple[int, ...]:
    """The key words of one frame (long enough for the key: MIN_EM_IPV4/6 bytes)."""
    if family == 4:
        addresses, ports = _V4_KEY(frame, 26)
        return addresses, frame[23] << 32 | ports
    *addresses, ports = _V6_KEY(frame, 22)
    return (*addresses, frame[20] << 32 | ports)


def keys_of(heads: np.ndarray, rows: np.ndarray | slice, family: int) -> np.ndarray:
    """The key words of ``heads[rows]`` as an (n, KEY_WORDS) uint64 array (``rows`` may
    be a slice: then the fields are read through strided views, not copied first)."""
    addresses_at, proto_at, ports_at = (26, 23, 34) if family == 4 else (22, 20, 54)
    words = KEY_WORDS[family]
    heads = heads[rows]
    keys = np.empty((len(heads), words), np.uint64)
    for word in range(words - 1):
        start = addresses_at + 8 * word
        keys[:, word] = heads[:, start:start + 8].view(">u8")[:, 0]
    keys[:, -1] = heads[:, proto_at]
    keys[:, -1] <<= np.uint64(32)
    keys[:, -1] |= heads[:, ports_at:ports_at + 4].view(">u4")[:, 0]
    return keys


def rule_key(rule: EmRule, family: int) -> tuple[int, ...]:
    tail = rule.proto << 32 | rule.src_port << 16 | rule.dst_port
    if family == 4:
        return (rule.src << 32 | rule.dst, tail)
    mask = (1 << 64) - 1
    return (rule.src >> 64, rule.src & mask, rule.dst >> 64, rule.dst & mask, tail)


class ExactMatchTable:
    """Flows of one address family → output port.

    Open addressing with linear probing over a power-of-two slot array at most half
    full; each slot holds a key and its port (-1 = empty), so a probe is one random
    access. Both the build and the lookup are vectorised: each round handles every key
    still probing."""

    def __init__(self, family: int, flows: dict[tuple[int, ...], int] | None = None):
        self.family = family
        self.flows = dict(flows or {})
        keys = np.array(list(self.flows), np.uint64).reshape(-1, KEY_WORDS[family])
        ports = np.array(list(self.flows.values()), np.int64)
        bits = max(4, (2 * len(keys) - 1).bit_length())
        self._mask = np.uint64((1 << bits) - 1)
        self._keys = np.zeros((1 << bits, KEY_WORDS[family]), np.uint64)
        self._ports = np.full(1 << bits, -1, np.int64)
        pending = np.arange(len(keys))
        pos = self._hash(keys) & self._mask
        while len(pending):
            free = self._ports[pos] < 0
            # of the keys aiming at one free slot, the first takes it; the rest probe on
            first = np.unique(pos[free], return_index=True)[1]
            winners = np.flatnonzero(free)[first]
            self._keys[pos[winners]] = keys[pending[winners]]
            self._ports[pos[winners]] = ports[pending[winners]]
            keep = np.ones(len(pending), bool)
            keep[winners] = False
            pending, pos = pending[keep], (pos[keep] + np.uint64(1)) & self._mask

    @classmethod
    def from_rules(cls, rules: list[EmRule], family: int) -> "ExactMatchTable":
        """Flows in file order; a later duplicate key wins (``rte_hash_add_key``
        returns the existing slot, whose port is then overwritten)."""
        return cls(family, {rule_key(r, family): r.port for r in rules})

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

    def lookup(self, key: tuple[int, ...]) -> int | None:
        return self.flows.get(key)

    def lookup_bulk(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        """Port per key row, ``default`` (per row) on a miss."""
        result = np.array(np.broadcast_to(default, len(keys)), np.int64)
        if not self.flows or not len(keys):
            return result
        active = np.arange(len(keys))
        pos = self._hash(keys) & self._mask
        probed = keys                                       # keys[active], without the first copy
        while len(active):
            port = self._ports[pos]
            stored = self._keys[pos]
            hit = port >= 0
            for word in range(probed.shape[1]):             # column by column: no (n, w) temporaries
                hit &= stored[:, word] == probed[:, word]
            result[active[hit]] = port[hit]
            probing = (port >= 0) & ~hit
            active, pos = active[probing], (pos[probing] + np.uint64(1)) & self._mask
            probed = keys[active]
        return result
