"""The multi-buffer path as numpy stages over a whole super-burst (DPDK's x86
``l3fwd_{lpm,em,fib}_send_packets``: classification and lookups, then
``send_packets_multi`` with ``processx4_step3`` = MAC rewrite + ``rfc1812_process``).

Inside an rx burst DPDK looks up 4 (LPM) or 8 (EM) packets at a time, or falls back to
per-packet lookups when a group mixes packet types; the answers are the same, so the
stages run over thousands of packets at once (design-notes §3). Where this path differs
from the simple one (path_differences.md): non-IP frames go back out of the input port
(D1); in EM mode so do IPv4 packets that are not TCP/UDP or have options (with TTL−1 and
the checksum update, D2/D3) and IPv6 packets with other next headers (D4); FIB looks up
every packet without the IPv4 type as IPv6 (D10); LPM and FIB do not re-check the
portmask (D7; unreachable since such routes are never installed). ACL mode has one
classification path in DPDK, so both pipelines forward alike there; only its TX calls
differ (``acl.account_acl``).

``multi.c`` is the compiled twin of :func:`forward`: the same steps, one packet at a time
over the super-burst, on the tables' own arrays (:mod:`.twins`). It runs when the
run uses the compiled twins (:mod:`l3fwd_sim.compiled`); these numpy stages are the
definition.
"""
from __future__ import annotations

import numpy as np

from .. import compiled
from . import acl, em, ptype, twins
from .pipelines import REASON_CODE
from .rfc1812 import rfc1812_process

TRUNCATED, RFC1812_INVALID = REASON_CODE["truncated"], REASON_CODE["rfc1812_invalid"]
UNKNOWN_PTYPE, ACL_DENY, ACL_MISS = REASON_CODE["unknown_ptype"], REASON_CODE["acl_deny"], REASON_CODE["acl_miss"]


def _select(mask: np.ndarray) -> np.ndarray | slice:
    """The rows ``mask`` selects: a slice when it selects all of them, so that the stages
    work on column views instead of gathered copies (the common, all-IPv4 case)."""
    return slice(None) if mask.all() else np.flatnonzero(mask)


def _any(rows, n: int) -> bool:
    return n > 0 if isinstance(rows, slice) else len(rows) > 0


def _ipv4_dst(heads, rows):
    return heads[rows, 30:34].view(">u4")[:, 0]


def _ipv6_dst(heads, rows):
    return np.ascontiguousarray(heads[rows, 38:54])


def _look_up(table, keys, rows, dest, trace, name: str) -> None:
    """``dest[rows]`` = the table's answer for each key, a miss keeping ``dest``; when
    tracing, the answers (rule ids, next hops) are noted for table ``name``."""
    if trace is None:
        dest[rows] = table.lookup_bulk(keys, dest[rows])
        return
    dest[rows], rule = table.lookup_bulk(keys, dest[rows], rules=True)
    trace.lookup(rows, name, rule, np.where(rule >= 0, dest[rows], -1))


def _lpm_lookup(v4, v6, batch, routes, dest, trace, name: str):
    """``rte_lpm_lookupx4`` / ``rte_lpm6_lookup`` (``rte_fib*_lookup_bulk`` in FIB mode,
    where a /0 route is the default next hop); a miss leaves the input port."""
    heads, n = batch.heads, len(batch)
    for family, rows, table, keys in ((4, v4, routes.v4, _ipv4_dst), (6, v6, routes.v6, _ipv6_dst)):
        if _any(rows, n):
            _look_up(table, keys(heads, rows), rows, dest, trace, f"{name}{family}")


def classify_lpm(batch, setup, dest, reason, trace=None):
    """``lpm_parse_ptype``, then the LPM lookups."""
    kind, caplen = ptype.lpm_ptype_bulk(batch.heads), batch.caplen
    truncated = caplen < ptype.LPM_NEED[kind]
    v4 = _select(~truncated & (kind == ptype.IPV4))
    v6 = np.flatnonzero(~truncated & (kind == ptype.IPV6))
    _lpm_lookup(v4, v6, batch, setup.routes, dest, trace, "lpm")
    reason[truncated] = TRUNCATED
    return v4


def classify_fib(batch, setup, dest, reason, trace=None):
    """``fib_parse_packet``: the IPv4 type goes to rte_fib, every other packet — IPv6 or
    not — to rte_fib6 with frame bytes 38..53 (D10)."""
    kind, caplen = ptype.lpm_ptype_bulk(batch.heads), batch.caplen
    is_v4 = kind == ptype.IPV4
    truncated = caplen < ptype.FIB_NEED[kind]
    v4 = _select(~truncated & is_v4)
    v6 = np.flatnonzero(~truncated & ~is_v4)
    _lpm_lookup(v4, v6, batch, setup.routes, dest, trace, "fib")
    reason[truncated] = TRUNCATED
    return v4


def classify_em(batch, setup, dest, reason, trace=None):
    """``em_parse_ptype``, then ``em_get_dst_port`` per packet: IPv4/IPv6 TCP/UDP are
    looked up (miss → input port), everything else stays on the input port (D1–D4).
    l3fwd re-checks a found port against the portmask; here it cannot fail (only flows
    to enabled ports are installed, routing.py), so it is not done again per packet."""
    heads, caplen, routes = batch.heads, batch.caplen, setup.routes
    kind, tcp_udp = ptype.em_ptype_bulk(heads)
    if caplen.min() >= ptype.EM_NEED.max():            # the usual case: no frame is short for any class
        truncated = np.zeros(len(caplen), bool)
    else:
        truncated = caplen < ptype.em_need(kind, tcp_udp)
    usable = ~truncated
    for family, table, l3 in ((4, routes.v4, ptype.EM_IPV4), (6, routes.v6, ptype.EM_IPV6)):
        rows = _select(usable & tcp_udp & (kind == l3))
        if _any(rows, len(batch)):
            _look_up(table, em.keys_of(heads, rows, family), rows, dest, trace, f"em{family}")
    reason[truncated] = TRUNCATED
    return _select(usable & ((kind == ptype.EM_IPV4) | (kind == ptype.EM_IPV4_EXT)))


def classify_acl(batch, setup, dest, reason, trace=None):
    """``acl_process_pkts``: the EtherType picks the IPv4 or IPv6 context (anything else
    is dropped), rte_acl classifies the 5-tuple at fixed offsets, and the first matching
    line routes or denies; a miss is dropped."""
    kind, truncated, action = acl.classify_burst(setup.routes, batch.heads, batch.caplen, trace)
    reason[action == acl.MISS] = ACL_MISS
    reason[action == acl.DENY] = ACL_DENY
    reason[(kind != ptype.IPV4) & (kind != ptype.IPV6)] = UNKNOWN_PTYPE
    reason[truncated] = TRUNCATED
    forwarded = reason == 0
    dest[forwarded] = action[forwarded]
    return _select(forwarded & (kind == ptype.IPV4))


CLASSIFY = {"lpm": classify_lpm, "em": classify_em, "fib": classify_fib, "acl": classify_acl}


def forward(batch, setup, timer, trace=None) -> tuple[np.ndarray, np.ndarray]:
    """``trace``: a :class:`~l3fwd_sim.dataplane.hits.Decisions` the lookups note their
    answers in, or None."""
    if compiled.enabled():
        return twins.forward("multi", batch, setup, timer, trace)
    heads = batch.heads
    with timer("classify+lookup"):
        dest = batch.in_port.copy()
        reason = np.zeros(len(batch), np.uint8)
        v4 = CLASSIFY[setup.lookup](batch, setup, dest, reason, trace)      # the IPv4 rows it forwards
    with timer("rewrite"):
        rows = _select(reason == 0)
        setup.ports.rewrite_bulk(heads, rows, dest[rows])
    with timer("rfc1812"):
        invalid = np.arange(len(batch))[v4][rfc1812_process(heads, v4)] if _any(v4, len(batch)) else v4
    reason[invalid] = RFC1812_INVALID
    dest[reason != 0] = -1
    return dest, reason
