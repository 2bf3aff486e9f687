"""l3fwd's EM key: what ``l3fwd_em.c`` masks out of a packet (``em_mask_key``) and out
of a rule line, as rows of 64-bit words for :class:`~l3fwd_sim.tables.hash.ExactMatchTable`.

l3fwd hashes a masked slice of the IP header (lpm_fib_hash_internals.md §5) and looks it
up in an rte_hash whose data is the output port. Observable semantics: an exact match on
(protocol, source address, destination address, L4 source port, L4 destination port).
Key words:

* IPv4 (frame bytes): ``src<<32 | dst`` (26..33), ``proto<<32 | sport<<16 | dport``
  (23, 34..37 — the ports at the fixed offset of an option-less header);
* IPv6: src high/low (22..37), dst high/low (38..53), ``next_header<<32 | ports``
  (20, 54..57).
"""
from __future__ import annotations

import struct

import numpy as np

from ..tables.hash import ExactMatchTable
from .rules import EmRule

KEY_WORDS = {4: 2, 6: 5}
_V4_KEY = struct.Struct(">QI").unpack_from        # addresses at 26..33, L4 ports at 34..37
_V6_KEY = struct.Struct(">QQQQI").unpack_from     # addresses at 22..53, L4 ports at 54..57


def key_of(frame: bytes, family: int) -> tuple[int, ...]:
    """The key words of one frame (long enough for the key: MIN_TUPLE_IPV4/6 bytes)."""
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
    """The key words of a rule line (``convert_ipv4_5tuple`` / ``convert_ipv6_5tuple``)."""
    tail = rule.proto << 32 | rule.src_port << 16 | rule.dst_port
    if family == 4:
        return (rule.src << 32 | rule.dst, tail)
    mask = (1 << 64) - 1
    return (rule.src >> 64, rule.src & mask, rule.dst >> 64, rule.dst & mask, tail)


def em_table(rules: list[EmRule], family: int) -> ExactMatchTable:
    """The flows of ``rules`` in file order, each with its line as rule id; a later
    duplicate key wins (``rte_hash_add_key`` returns the existing slot, whose port is
    then overwritten)."""
    keys = [rule_key(r, family) for r in rules]
    return ExactMatchTable(KEY_WORDS[family], {key: r.port for key, r in zip(keys, rules)},
                           {key: r.line for key, r in zip(keys, rules)})
