"""The multi-buffer path as numpy stages over a whole super-burst (DPDK's x86
``l3fwd_lpm_send_packets``: ``processx4_step1/2`` lookups, then ``send_packets_multi``
with ``processx4_step3`` = MAC rewrite + ``rfc1812_process``).

Inside an rx burst DPDK looks up 4 packets at a time with ``rte_lpm_lookupx4`` (miss →
the input port) or falls back to per-packet lookups; the answers are the same, so the
stages run over thousands of packets at once (design-notes §3). Unlike the simple path
it sends non-IP frames back out of the input port (path_differences D1) and does not
re-check the portmask (D7; unreachable since such routes are never installed).
"""
from __future__ import annotations

import numpy as np

from .. import ptype
from ..rfc1812 import rfc1812_process
from ..stats import REASON_CODE


def _lpm_lookup(batch, setup, kind: np.ndarray, usable: np.ndarray, dest: np.ndarray) -> np.ndarray:
    """Destination ports (miss → input port); returns the IPv4 rows."""
    heads, routes = batch.heads, setup.routes
    v4 = np.flatnonzero(usable & (kind == ptype.IPV4))
    v6 = np.flatnonzero(usable & (kind == ptype.IPV6))
    if len(v4):
        ips = np.ascontiguousarray(heads[v4, 30:34]).view(">u4").ravel()
        dest[v4] = routes.v4.lookup_bulk(ips.astype(np.uint32), dest[v4])
    if len(v6):
        dest[v6] = routes.v6.lookup_bulk(np.ascontiguousarray(heads[v6, 38:54]), dest[v6])
    return v4


def forward(batch, setup, timer) -> tuple[np.ndarray, np.ndarray]:
    heads, caplen = batch.heads, batch.caplen
    with timer("classify"):
        kind = ptype.lpm_ptype_bulk(heads)
        truncated = caplen < ptype.MIN_ETHER
        truncated |= (kind == ptype.IPV4) & (caplen < ptype.MIN_IPV4_LPM)
        truncated |= (kind == ptype.IPV6) & (caplen < ptype.MIN_IPV6_LPM)
        usable = ~truncated
    with timer("lookup"):
        dest = batch.in_port.copy()
        v4 = _lpm_lookup(batch, setup, kind, usable, dest)
    with timer("rewrite"):
        rows = np.flatnonzero(usable)
        setup.ports.rewrite_bulk(heads, rows, dest[rows])
    with timer("rfc1812"):
        invalid = v4[rfc1812_process(heads, v4)]
    reason = np.zeros(len(batch), np.uint8)
    reason[invalid] = REASON_CODE["rfc1812_invalid"]
    reason[truncated] = REASON_CODE["truncated"]
    dest[reason != 0] = -1
    return dest, reason
