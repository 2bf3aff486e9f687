"""The per-packet path, packet by packet in plain Python (DPDK's
``l3fwd_lpm_no_opt_send_packets`` → ``l3fwd_lpm_simple_forward``, ``l3fwd_lpm.h``)."""
from __future__ import annotations

import numpy as np

from .. import ptype
from ..pcap import HEAD_BYTES
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
    forward_one = FORWARD[setup.lookup]
    width = HEAD_BYTES
    with timer("forward"):
        raw = bytearray(batch.heads.tobytes())    # one copy; frames are cut from it and put back
        dest, reason = [], []
        for i, (pkt_len, portid) in enumerate(zip(batch.caplen.tolist(), batch.in_port.tolist())):
            start = i * width
            frame = raw[start:start + min(pkt_len, width)]
            port, why = forward_one(frame, pkt_len, portid, setup)
            dest.append(port)
            reason.append(why)
            if port >= 0:
                raw[start:start + len(frame)] = frame
        batch.heads[:] = np.frombuffer(raw, np.uint8).reshape(batch.heads.shape)
    return np.array(dest, np.int64), np.array(reason, np.uint8)
