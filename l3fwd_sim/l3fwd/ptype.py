"""Software packet-type parsing, as dpdk-l3fwd's ``--parse-ptype`` RX callbacks do it,
and the frame lengths each path needs.

``lpm_parse_ptype`` (lpm and fib modes) looks only at the outer EtherType at frame
offset 12: 0x0800 gives L3_IPV4_EXT_UNKNOWN, 0x86DD L3_IPV6_EXT_UNKNOWN, anything else
(ARP, 802.1Q/QinQ tags, LLDP, ...) RTE_PTYPE_UNKNOWN. Frames are never walked past
that field, so a VLAN-tagged IPv4 packet is "unknown".
"""
from __future__ import annotations

import numpy as np

ETHER_TYPE_IPV4 = 0x0800
ETHER_TYPE_IPV6 = 0x86DD

# Classes the pipelines branch on (not DPDK's bit values: only the branch matters).
UNKNOWN, IPV4, IPV6 = 0, 1, 2

# Frame lengths below which a path would read past the end of the frame (undefined
# behaviour in C: the mbuf's stale bytes). l3fwd-sim drops such frames as "truncated".
MIN_ETHER = 14         # EtherType at 12..13
MIN_IPV4_LPM = 34      # destination address at 30..33 (TTL 22, checksum 24..25 are earlier)
MIN_IPV6_LPM = 54      # destination address at 38..53


def lpm_ptype(frame: bytes) -> int:
    """Class of one frame of at least ``MIN_ETHER`` bytes (``lpm_parse_ptype``)."""
    ether_type = frame[12] << 8 | frame[13]
    if ether_type == ETHER_TYPE_IPV4:
        return IPV4
    if ether_type == ETHER_TYPE_IPV6:
        return IPV6
    return UNKNOWN


def lpm_ptype_bulk(heads: np.ndarray) -> np.ndarray:
    """``lpm_ptype`` over a batch of frame heads (rows of at least 14 bytes)."""
    ether_type = heads[:, 12:14].view(">u2")[:, 0]
    ptype = np.zeros(len(heads), np.uint8)
    ptype[ether_type == ETHER_TYPE_IPV4] = IPV4
    ptype[ether_type == ETHER_TYPE_IPV6] = IPV6
    return ptype


# em_parse_ptype (em mode): the L3 type and, for IPv4 without options or IPv6 without
# extension headers, whether the packet is TCP or UDP. Only EM_IPV4 / EM_IPV6 with
# ``tcp_udp`` are looked up; EM_IPV4 and EM_IPV4_EXT both carry the IPv4 bit that
# ``rfc1812_process`` keys on.
EM_UNKNOWN, EM_IPV4, EM_IPV4_EXT, EM_IPV6, EM_IPV6_EXT, EM_TRUNCATED = range(6)
MIN_TUPLE_IPV4 = 38       # key: protocol 23, addresses 26..33, L4 ports at the fixed offset 34..37
MIN_TUPLE_IPV6 = 58       # key: next header 20, addresses 22..53, L4 ports 54..57
_L4_TCP_UDP = (6, 17)
_IS_TCP_UDP = np.isin(np.arange(256), _L4_TCP_UDP)   # by protocol / next-header number


def em_ptype(frame: bytes, pkt_len: int) -> tuple[int, bool]:
    """``em_parse_ptype`` of one frame of at least ``MIN_ETHER`` bytes. A frame too
    short for the bytes the parser reads (IHL at 14, protocol at 23, next header at 20)
    is ``EM_TRUNCATED``."""
    kind = lpm_ptype(frame)
    if kind == IPV4:
        if pkt_len < 15:
            return EM_TRUNCATED, False
        if frame[14] & 0x0F != 5:          # IHL*4 != 20: options, no L4 type (version unchecked)
            return EM_IPV4_EXT, False
        if pkt_len < 24:
            return EM_TRUNCATED, False
        return EM_IPV4, frame[23] in _L4_TCP_UDP
    if kind == IPV6:
        if pkt_len < 21:
            return EM_TRUNCATED, False
        tcp_udp = frame[20] in _L4_TCP_UDP
        return (EM_IPV6 if tcp_udp else EM_IPV6_EXT), tcp_udp
    return EM_UNKNOWN, False


def _em_tables() -> tuple[np.ndarray, np.ndarray]:
    """(EM class, tcp_udp) by ``lpm class * 4 + no_options * 2 + L4 is TCP/UDP``: what
    ``em_ptype`` decides from those three facts."""
    em, tcp_udp = np.full(12, EM_UNKNOWN, np.uint8), np.zeros(12, bool)
    for no_options in (0, 1):
        for l4 in (0, 1):
            v4, v6 = IPV4 * 4 + no_options * 2 + l4, IPV6 * 4 + no_options * 2 + l4
            em[v4] = EM_IPV4 if no_options else EM_IPV4_EXT
            tcp_udp[v4] = bool(no_options and l4)
            em[v6], tcp_udp[v6] = (EM_IPV6 if l4 else EM_IPV6_EXT), bool(l4)
    return em, tcp_udp


_EM_CLASS_OF, _EM_TCP_UDP_OF = _em_tables()


def em_ptype_bulk(heads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``em_ptype`` over a batch: (class, tcp_udp) arrays. A frame too short for what
    the parser reads is classified from its zero padding; :data:`EM_NEED` then marks it
    as truncated (never EM_TRUNCATED here)."""
    kind = lpm_ptype_bulk(heads)
    code = kind << 2
    code |= ((heads[:, 14] & 0x0F) == 5).view(np.uint8) << 1              # IPv4 without options
    code |= _IS_TCP_UDP[np.where(kind == IPV4, heads[:, 23], heads[:, 20])].view(np.uint8)
    return _EM_CLASS_OF[code], _EM_TCP_UDP_OF[code]


# The frame length each path reads from a packet, by lpm class (UNKNOWN, IPV4, IPV6):
# a shorter frame is dropped as "truncated" (the reads would be undefined in C).
LPM_NEED = np.array([MIN_ETHER, MIN_IPV4_LPM, MIN_IPV6_LPM])
FIB_NEED = np.array([MIN_IPV6_LPM, MIN_IPV4_LPM, MIN_IPV6_LPM])   # every non-IPv4 frame is looked up as IPv6
ACL_NEED = np.array([MIN_ETHER, MIN_TUPLE_IPV4, MIN_TUPLE_IPV6])
# EM, by lpm class and tcp_udp: the 5-tuple of TCP/UDP; of other IPv4 the header up to
# the destination address (rfc1812_process, TTL, checksum); of other IPv6 the next header.
EM_NEED = np.array([[MIN_ETHER, MIN_ETHER], [MIN_IPV4_LPM, MIN_TUPLE_IPV4], [21, MIN_TUPLE_IPV6]])
_EM_CLASS = np.array([UNKNOWN, IPV4, IPV4, IPV6, IPV6])    # lpm class of each EM class


def em_need(kind: np.ndarray, tcp_udp: np.ndarray) -> np.ndarray:
    """:data:`EM_NEED` of each frame, from ``em_ptype_bulk``'s classes."""
    return EM_NEED[_EM_CLASS[kind], tcp_udp.astype(np.intp)]


def needed_bytes(lookup: str, heads: np.ndarray) -> np.ndarray:
    """Per frame, the bytes the ``lookup`` path reads from it (see the tables above)."""
    if lookup == "em":
        return em_need(*em_ptype_bulk(heads))
    return {"lpm": LPM_NEED, "fib": FIB_NEED, "acl": ACL_NEED}[lookup][lpm_ptype_bulk(heads)]
