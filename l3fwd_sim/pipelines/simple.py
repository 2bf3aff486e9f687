"""The per-packet path, packet by packet in plain Python (DPDK's
``l3fwd_lpm_no_opt_send_packets`` → ``l3fwd_lpm_simple_forward``, ``l3fwd_lpm.h``)."""
from __future__ import annotations

import numpy as np

from .. import ptype
from ..rfc1812 import is_valid_ipv4_pkt, update_ttl_checksum
from ..stats import REASON_CODE

TRUNCATED = REASON_CODE["truncated"]
RFC1812_INVALID = REASON_CODE["rfc1812_invalid"]
UNKNOWN_PTYPE = REASON_CODE["unknown_ptype"]


def lpm_simple_forward(frame: bytearray, pkt_len: int, portid: int, setup) -> tuple[int, int]:
    """Forward one frame as ``l3fwd_lpm_simple_forward`` does; edits ``frame`` in place.
    Returns ``(dst_port, 0)`` or ``(-1, drop reason)``."""
    if pkt_len < ptype.MIN_ETHER:
        return -1, TRUNCATED
    ports, routes = setup.ports, setup.routes
    kind = ptype.lpm_ptype(frame)
    if kind == ptype.IPV4:
        if not is_valid_ipv4_pkt(frame, pkt_len):
            return -1, RFC1812_INVALID
        if pkt_len < ptype.MIN_IPV4_LPM:
            return -1, TRUNCATED
        next_hop = routes.v4.lookup(int.from_bytes(frame[30:34], "big"))
    elif kind == ptype.IPV6:
        if pkt_len < ptype.MIN_IPV6_LPM:
            return -1, TRUNCATED
        next_hop = routes.v6.lookup(int.from_bytes(frame[38:54], "big"))
    else:
        return -1, UNKNOWN_PTYPE     # "Free the mbuf that contains non-IPV4/IPV6 packet"
    dst_port = portid if next_hop is None else next_hop
    if not ports.is_enabled(dst_port):
        dst_port = portid
    if kind == ptype.IPV4:
        update_ttl_checksum(frame)
    ports.rewrite(frame, dst_port)
    return dst_port, 0


FORWARD = {"lpm": lpm_simple_forward}


def forward(batch, setup, timer) -> tuple[np.ndarray, np.ndarray]:
    n = len(batch)
    dest = np.full(n, -1, np.int64)
    reason = np.zeros(n, np.uint8)
    forward_one = FORWARD[setup.lookup]
    heads = batch.heads
    with timer("forward"):
        for i, (pkt_len, portid) in enumerate(zip(batch.caplen.tolist(), batch.in_port.tolist())):
            frame = batch.frame_head(i)
            dest[i], reason[i] = forward_one(frame, pkt_len, portid, setup)
            if dest[i] >= 0:
                heads[i, :len(frame)] = np.frombuffer(frame, np.uint8)
    return dest, reason
