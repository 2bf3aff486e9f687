"""``--pcap-enable``: the graph's packet trace (``lib/graph/graph_pcap.c``; l3fwd_graph.md
§9). Every node call copies the packets it is about to process into one pcapng file,
each with the comment ``worker_<lcore>: <node>`` on the interface of its RX port, the
frame as it is before that node — until the graph has captured ``--pcap-num-cap``
packets. ip4_lookup is not in it (its init replaces the wrapped process function with
the SSE one), nor are the source nodes (called with no packets).

* The file is ``NAME_XXXXXX.pcapng`` (``mkstemps``: XXXXXX is random), or
  ``$HOME/dpdk_graph_pcap_capture_XXXXXX.pcapng``; written once the run is complete.
* Time stamps are the packets' capture time stamps (the real ones are copy times).
* The real wrapper copies into a 256-entry array on the stack: a node call of more than
  256 packets with more than 256 still due for capture (two RX queues on one lcore, the
  default 1024) crashes the real program with SIGSEGV, leaving its tx_pcap files without
  even a header. That is refused here, saying so.
"""
from __future__ import annotations

import os
import secrets
import string
from pathlib import Path

import numpy as np

from ..capture.atomic import AtomicFile
from ..errors import SimError
from ..capture.pcapng_writer import interface_block, packet_block, section_header
from ..capture.records import HEAD_BYTES
from ..capture.writers import frame_tails
from .walk import BURST_SIZE

NOT_WRAPPED = ("ip4_lookup",)
_LETTERS = string.ascii_letters + string.digits


class PcapTrace:
    """The trace of a run: ``limit`` packets per graph into ``NAME_XXXXXX.pcapng``."""

    def __init__(self, limit: int, name: str | None, ports: int, console: list[str]):
        prefix = name or os.path.join(os.environ.get("HOME", "."), "dpdk_graph_pcap_capture")
        self.path = self._fresh(prefix)
        console.append(f"GRAPH: pcap filename: {self.path}")
        self.limit, self.ports = limit, ports
        self.captured: dict[str, int] = {}
        self.blocks: list[bytes] = []
        self.batch = None                  # the super-burst being walked (its frames' bytes)

    @staticmethod
    def _fresh(prefix: str) -> Path:
        for _ in range(100):
            path = Path(f"{prefix}_{''.join(secrets.choice(_LETTERS) for _ in range(6))}.pcapng")
            if not path.exists():
                return path
        raise SimError(f"{prefix}_XXXXXX.pcapng: mkstemps() failure (no free name)")

    def __call__(self, graph, node: str, objs: np.ndarray) -> None:
        """``graph_pcap_dispatch`` before ``node`` processes ``objs``."""
        if node in NOT_WRAPPED:
            return
        done = self.captured.get(graph.name, 0)
        due = min(self.limit - done, len(objs))
        if due <= 0:
            return
        if due > BURST_SIZE:
            raise SimError(f"--pcap-enable: dpdk-l3fwd-graph crashes here (SIGSEGV): {graph.name}'s {node} is called "
                           f"with {len(objs)} packets and graph_pcap_dispatch copies up to {due} of them into a "
                           f"{BURST_SIZE}-entry array on the stack; give --pcap-num-cap {BURST_SIZE} or less, or one "
                           "RX queue per lcore")
        batch, comment = self.batch, f"{graph.name}: {node}"
        rows = objs[:due]
        caplen = batch.caplen[rows]
        tails = iter(frame_tails(batch, caplen, batch.source_offsets(rows), batch.source_id[rows]))
        for row, length, source in zip(rows.tolist(), caplen.tolist(), batch.source_id[rows].tolist()):
            frame = batch.heads[row, :min(length, HEAD_BYTES)].tobytes() + (bytes(next(tails))
                                                                          if length > HEAD_BYTES else b"")
            seconds, fraction = batch.rows[row, :8].view("<u4").tolist()
            ticks = seconds * 10**9 + fraction * (1 if batch.sources[source].nanosecond else 1000)
            self.blocks.append(packet_block(int(batch.in_port[row]), ticks, length, frame, comment))
        self.captured[graph.name] = done + due

    def close(self) -> None:
        """Write the file: the section, an interface per port (DLT_EN10MB), the packets."""
        with AtomicFile(self.path) as out:
            out.file.write(section_header("Graph pcap tracer"))
            for port in range(self.ports):
                out.file.write(interface_block(f"port{port}", nanosecond=True))
            for block in self.blocks:
                out.file.write(block)
