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

Vectorised lookup: keys are hashed to 64 bits and kept sorted, a query is a
``searchsorted`` followed by a full-key comparison, so a hash collision can never
return a wrong port (the table is rebuilt with another hash seed in the unlikely case
two different keys collide). Scalar lookups (the simple pipeline) use a dict.
"""
from __future__ import annotations

import numpy as np

from .rules import EmRule

KEY_WORDS = {4: 2, 6: 5}
_MIX = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD], np.uint64)


def key_of(frame: bytes, family: int) -> tuple[int, ...]:
    """The key words of one frame (long enough for the key: MIN_EM_IPV4/6 bytes)."""
    if family == 4:
        return (int.from_bytes(frame[26:34], "big"),
                frame[23] << 32 | int.from_bytes(frame[34:38], "big"))
    return (int.from_bytes(frame[22:30], "big"), int.from_bytes(frame[30:38], "big"),
            int.from_bytes(frame[38:46], "big"), int.from_bytes(frame[46:54], "big"),
            frame[20] << 32 | int.from_bytes(frame[54:58], "big"))


def keys_of(heads: np.ndarray, rows: np.ndarray, family: int) -> np.ndarray:
    """The key words of ``heads[rows]`` as an (n, KEY_WORDS) uint64 array."""
    def be64(start):
        return np.ascontiguousarray(heads[rows, start:start + 8]).view(">u8").ravel().astype(np.uint64)

    def proto_ports(proto_at, ports_at):
        ports = np.ascontiguousarray(heads[rows, ports_at:ports_at + 4]).view(">u4").ravel()
        return heads[rows, proto_at].astype(np.uint64) << np.uint64(32) | ports.astype(np.uint64)

    if family == 4:
        return np.stack([be64(26), proto_ports(23, 34)], axis=1)
    return np.stack([be64(22), be64(30), be64(38), be64(46), proto_ports(20, 54)], axis=1)


def rule_key(rule: EmRule, family: int) -> tuple[int, ...]:
    tail = rule.proto << 32 | rule.src_port << 16 | rule.dst_port
    if family == 4:
        return (rule.src << 32 | rule.dst, tail)
    mask = (1 << 64) - 1
    return (rule.src >> 64, rule.src & mask, rule.dst >> 64, rule.dst & mask, tail)


class ExactMatchTable:
    """Flows of one address family → output port."""

    def __init__(self, family: int, flows: dict[tuple[int, ...], int] | None = None):
        self.family = family
        self.flows = dict(flows or {})
        words = KEY_WORDS[family]
        self._keys = np.array(list(self.flows), np.uint64).reshape(-1, words)
        self._ports = np.array(list(self.flows.values()), np.int64)
        self._seed = 0
        while True:
            hashes = self._hash(self._keys)
            order = np.argsort(hashes)
            self._hashes = hashes[order]
            if not (self._hashes[1:] == self._hashes[:-1]).any():
                break
            self._seed += 1                    # two keys collide: another seed
        self._keys, self._ports = self._keys[order], self._ports[order]

    @classmethod
    def from_rules(cls, rules: list[EmRule], family: int) -> "ExactMatchTable":
        """Flows in file order; a later duplicate key wins (``rte_hash_add_key``
        returns the existing slot, whose port is then overwritten)."""
        return cls(family, {rule_key(r, family): r.port for r in rules})

    def __len__(self) -> int:
        return len(self.flows)

    def _hash(self, keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            h = np.full(len(keys), np.uint64(self._seed) * _MIX[0], np.uint64)
            for i in range(keys.shape[1]):
                h ^= keys[:, i] * _MIX[i]
                h ^= h >> np.uint64(29)
                h *= _MIX[(i + 1) % len(_MIX)]
        return h

    def lookup(self, key: tuple[int, ...]) -> int | None:
        return self.flows.get(key)

    def lookup_bulk(self, keys: np.ndarray, default: np.ndarray) -> np.ndarray:
        """Port per key row, ``default`` (per row) on a miss."""
        if not len(self._ports) or not len(keys):
            return np.array(default, np.int64, copy=True)
        slot = np.searchsorted(self._hashes, self._hash(keys))
        np.minimum(slot, len(self._hashes) - 1, out=slot)
        hit = (self._keys[slot] == keys).all(axis=1)
        return np.where(hit, self._ports[slot], default)
