"""Forwarding pipelines.

* ``simple``: DPDK's per-packet path (``l3fwd_lpm_simple_forward``), one packet at a
  time in plain Python: the readable reference.
* ``multi``: DPDK's x86 multi-buffer path (processx4 stages, ``rte_lpm_lookupx4``,
  ``rfc1812_process``, same-port grouping, ``send_packetsx4``), as numpy stages over a
  whole super-burst.

Both take a :class:`~l3fwd_sim.capture.batch.PacketBatch` and return ``(dest, reason)``: the
TX port of every packet (-1 when dropped) and the drop reason code
(:data:`l3fwd_sim.dataplane.stats.REASON_CODE`), editing ``batch.heads`` in place. They differ
only where DPDK's two paths differ (path_differences.md).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..dataplane.ports import PortConfig
from .routing import LpmRoutes


@dataclass
class Forwarding:
    """What a pipeline needs besides the packets: ports and route tables."""
    ports: PortConfig
    lookup: str
    routes: LpmRoutes


def pipeline(name: str):
    """The ``forward(batch, setup, timer)`` function of pipeline ``name``."""
    from . import multi, simple
    return {"simple": simple.forward, "multi": multi.forward}[name]
