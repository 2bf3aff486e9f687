"""The per-packet path, packet by packet in plain Python: DPDK's
``l3fwd_lpm_simple_forward`` (``l3fwd_lpm.h``), ``l3fwd_em_simple_forward``
(``l3fwd_em.h``) and the per-packet FIB variant (``l3fwd_fib.c``, non-x86), read line
by line. Each function forwards one frame, editing it in place, and returns
``(dst_port, 0)`` or ``(-1, drop reason)``; when tracing, ``note(table, rule,
next_hop)`` is told what the lookup answered.

``simple.c`` is the compiled twin of :func:`forward`: each function here, in C, on the
tables' own arrays (:mod:`.twins`). It runs when the run uses the compiled twins
(:mod:`l3fwd_sim.compiled`); this Python is the definition."""
from __future__ import annotations

import struct

import numpy as np

from .. import compiled
from ..capture.records import HEAD_BYTES
from . import acl, em, twins
from .ptype import (EM_IPV4, EM_IPV6, EM_TRUNCATED, EM_UNKNOWN, IPV4, IPV6, MIN_TUPLE_IPV4, MIN_TUPLE_IPV6, MIN_ETHER,
                    MIN_IPV4_LPM, MIN_IPV6_LPM, em_ptype, lpm_ptype)
from .pipelines import REASON_CODE
from .rfc1812 import is_valid_ipv4_pkt, rfc1812_process_one, update_ttl_checksum

TRUNCATED = REASON_CODE["truncated"]
RFC1812_INVALID = REASON_CODE["rfc1812_invalid"]
UNKNOWN_PTYPE = REASON_CODE["unknown_ptype"]
NOT_TCP_UDP = REASON_CODE["not_tcp_udp"]
ACL_DENY, ACL_MISS = REASON_CODE["acl_deny"], REASON_CODE["acl_miss"]
_BE32 = struct.Struct(">I").unpack_from           # an IPv4 address: 3x faster than int.from_bytes
_BE128 = struct.Struct(">QQ").unpack_from


def ipv4_dst(frame) -> int:
    return _BE32(frame, 30)[0]


def ipv6_dst(frame) -> int:
    high, low = _BE128(frame, 38)
    return high << 64 | low


def _send(frame: memoryview, next_hop: int | None, portid: int, ipv4: bool, ports) -> tuple[int, int]:
    """The common tail of the LPM and EM simple paths: a miss goes back to the input
    port, so does a port outside the portmask (the re-check), then ``--ttl; ++cksum``
    for IPv4 and the MAC rewrite."""
    dst_port = portid if next_hop is None or not ports.is_enabled(next_hop) else next_hop
    if ipv4:
        update_ttl_checksum(frame)
    ports.rewrite(frame, dst_port)
    return dst_port, 0


def lpm_simple_forward(frame: memoryview, pkt_len: int, portid: int, setup, note=None) -> tuple[int, int]:
    if pkt_len < MIN_ETHER:
        return -1, TRUNCATED
    routes = setup.routes
    kind = lpm_ptype(frame)
    if kind == IPV4:
        if not is_valid_ipv4_pkt(frame, pkt_len):
            return -1, RFC1812_INVALID
        if pkt_len < MIN_IPV4_LPM:
            return -1, TRUNCATED
        next_hop, rule = routes.v4.lookup_rule(ipv4_dst(frame))
    elif kind == IPV6:
        if pkt_len < MIN_IPV6_LPM:
            return -1, TRUNCATED
        next_hop, rule = routes.v6.lookup_rule(ipv6_dst(frame))
    else:
        return -1, UNKNOWN_PTYPE     # "Free the mbuf that contains non-IPV4/IPV6 packet" (D1)
    if note:
        note("lpm4" if kind == IPV4 else "lpm6", rule, next_hop)
    return _send(frame, next_hop, portid, kind == IPV4, setup.ports)


def em_simple_forward(frame: memoryview, pkt_len: int, portid: int, setup, note=None) -> tuple[int, int]:
    """Only IPv4/IPv6 TCP/UDP (by ``em_parse_ptype``) are forwarded; the rest is freed
    (D1–D4). DPDK frees an RFC 1812-invalid packet and then still enqueues it (a
    use-after-free, D9); l3fwd-sim drops it."""
    if pkt_len < MIN_ETHER:
        return -1, TRUNCATED
    routes = setup.routes
    kind, tcp_udp = em_ptype(frame, pkt_len)
    if kind == EM_TRUNCATED:
        return -1, TRUNCATED
    if kind == EM_IPV4 and tcp_udp:
        if not is_valid_ipv4_pkt(frame, pkt_len):
            return -1, RFC1812_INVALID
        if pkt_len < MIN_TUPLE_IPV4:
            return -1, TRUNCATED
        next_hop, rule = routes.v4.lookup_rule(em.key_of(frame, 4))
    elif kind == EM_IPV6 and tcp_udp:
        if pkt_len < MIN_TUPLE_IPV6:
            return -1, TRUNCATED
        next_hop, rule = routes.v6.lookup_rule(em.key_of(frame, 6))
    else:
        return -1, UNKNOWN_PTYPE if kind == EM_UNKNOWN else NOT_TCP_UDP
    if note:
        note("em4" if kind == EM_IPV4 else "em6", rule, next_hop)
    return _send(frame, next_hop, portid, kind == EM_IPV4, setup.ports)


def fib_forward(frame: memoryview, pkt_len: int, portid: int, setup, note=None) -> tuple[int, int]:
    """Every packet without the IPv4 type is looked up as IPv6 (D10); the default next
    hop (a miss) is the input port; no portmask re-check; RFC 1812 as the multi path."""
    if pkt_len < MIN_ETHER:
        return -1, TRUNCATED
    routes = setup.routes
    is_v4 = lpm_ptype(frame) == IPV4
    if pkt_len < (MIN_IPV4_LPM if is_v4 else MIN_IPV6_LPM):
        return -1, TRUNCATED
    if is_v4:
        next_hop, rule = routes.v4.lookup_rule(ipv4_dst(frame))     # a /0 route answers as the default
    else:
        next_hop, rule = routes.v6.lookup_rule(ipv6_dst(frame))
    if note:
        note("fib4" if is_v4 else "fib6", rule, next_hop)
    if next_hop is None:
        next_hop = portid
    setup.ports.rewrite(frame, next_hop)
    if is_v4 and rfc1812_process_one(frame):
        return -1, RFC1812_INVALID
    return next_hop, 0


def acl_forward(frame: memoryview, pkt_len: int, portid: int, setup, action: int) -> tuple[int, int]:
    """``acl_process_pkts``' verdict on one packet — its ``action`` comes from rte_acl's
    classification over the burst — then ``send_packets_single``: ``rfc1812_process``
    for IPv4 and the MAC rewrite. Unlike the other modes a miss is dropped."""
    if pkt_len < MIN_ETHER:
        return -1, TRUNCATED
    kind = lpm_ptype(frame)                    # em_parse_ptype's family: the EtherType alone
    if kind not in (IPV4, IPV6):
        return -1, UNKNOWN_PTYPE
    if pkt_len < (MIN_TUPLE_IPV4 if kind == IPV4 else MIN_TUPLE_IPV6):
        return -1, TRUNCATED
    if action == acl.DENY:
        return -1, ACL_DENY
    if action == acl.MISS:
        return -1, ACL_MISS
    if kind == IPV4 and rfc1812_process_one(frame):
        return -1, RFC1812_INVALID
    setup.ports.rewrite(frame, action)
    return action, 0


FORWARD = {"lpm": lpm_simple_forward, "em": em_simple_forward, "fib": fib_forward}


def forward(batch, setup, timer, trace=None) -> tuple[np.ndarray, np.ndarray]:
    """``trace``: a :class:`~l3fwd_sim.dataplane.hits.Decisions` the lookups note their
    answers in, or None."""
    if compiled.enabled():
        return twins.forward("simple", batch, setup, timer, trace)
    width = HEAD_BYTES
    with timer("forward"):
        if setup.lookup == "acl":            # rte_acl_classify runs over the burst, the rest per packet
            actions = iter(acl.classify_burst(setup.routes, batch.heads, batch.caplen, trace)[2].tolist())

            def forward_one(frame, pkt_len, portid, setup, note):
                return acl_forward(frame, pkt_len, portid, setup, next(actions))
        else:
            forward_one = FORWARD[setup.lookup]
        raw = bytearray(batch.heads.tobytes())    # one copy, edited in place through frame views
        frames = memoryview(raw)
        dest, reason = [], []
        starts = range(0, len(batch) * width, width)
        notes = [None] * len(batch) if trace is None or setup.lookup == "acl" else trace.notes()
        for start, frame_len, pkt_len, portid, note in zip(starts, np.minimum(batch.caplen, width).tolist(),
                                                           batch.caplen.tolist(), batch.in_port.tolist(), notes):
            port, why = forward_one(frames[start:start + frame_len], pkt_len, portid, setup, note)
            dest.append(port)
            reason.append(why)
        batch.heads[:] = np.frombuffer(raw, np.uint8).reshape(batch.heads.shape)
    return np.array(dest, np.int64), np.array(reason, np.uint8)
