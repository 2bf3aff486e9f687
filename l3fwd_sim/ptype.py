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
    ether_type = heads[:, 12].astype(np.uint16) << 8 | heads[:, 13]
    ptype = np.zeros(len(heads), np.uint8)
    ptype[ether_type == ETHER_TYPE_IPV4] = IPV4
    ptype[ether_type == ETHER_TYPE_IPV6] = IPV6
    return ptype
