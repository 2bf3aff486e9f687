"""Forwarding pipelines.

* ``simple``: DPDK's per-packet path (``l3fwd_lpm_simple_forward``), one packet at a
  time in plain Python: the readable reference.
* ``multi``: DPDK's x86 multi-buffer path (processx4 stages, ``rte_lpm_lookupx4``,
  ``rfc1812_process``, same-port grouping, ``send_packetsx4``), as numpy stages over a
  whole super-burst.

Both take a :class:`~l3fwd_sim.capture.batch.PacketBatch` and return ``(dest, reason)``: the
TX port of every packet (-1 when dropped) and the drop reason code
(:data:`REASON_CODE`), editing ``batch.heads`` in place. They differ
only where DPDK's two paths differ (path_differences.md).
"""
from __future__ import annotations

# Why a packet was dropped; index in this tuple + 1 is the code a pipeline writes into
# its ``reason`` array (0: forwarded).
DROP_REASONS = (
    "rfc1812_invalid",   # IPv4 header failing l3fwd's RFC 1812 checks
    "unknown_ptype",     # neither IPv4 nor IPv6: freed by the simple path, and by ACL mode in both
    "not_tcp_udp",       # EM simple path: IPv4/IPv6 that is not TCP/UDP, or has options / ext headers
    "truncated",         # frame shorter than the bytes the path reads (undefined in C)
    "acl_deny",          # ACL mode: the first matching rule is a deny (@) line
    "acl_miss",          # ACL mode: no rule matches (l3fwd drops it; lpm/em/fib send it back)
)
REASON_CODE = {name: i + 1 for i, name in enumerate(DROP_REASONS)}

