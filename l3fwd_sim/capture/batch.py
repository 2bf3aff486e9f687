"""The packet batch: what flows from the pcap readers through the pipeline stages to
the TX model and the writers, as a struct of numpy arrays in lcore processing order."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .records import RecordBatch


@dataclass
class PacketBatch:
    rows: np.ndarray       # (n, RECORD_ROW) uint8: record header + frame head (RecordBatch.rows);
                           # stages edit the heads in place, the writers take whole rows
    caplen: np.ndarray     # int64: the frame length (DPDK's pkt_len with net_pcap)
    in_port: np.ndarray    # int64: RX port
    burst: np.ndarray      # int64: id of the rte_eth_rx_burst call that received the packet
    sources: list[RecordBatch]   # where bytes beyond HEAD_BYTES are
    source_id: np.ndarray  # int64 index into ``sources``
    source_row: np.ndarray # int64 row in that source

    def __len__(self) -> int:
        return len(self.caplen)

    @property
    def heads(self) -> np.ndarray:
        """(n, HEAD_BYTES) view: the first bytes of each frame, zero past its end."""
        return self.rows[:, 16:]

    @property
    def index(self) -> np.ndarray:
        """Each packet's record number in its capture (0-based, as ``compare`` counts)."""
        if all(source.numbers is None for source in self.sources):
            first = np.array([source.first for source in self.sources], np.int64)
            return first[self.source_id] + self.source_row
        index = np.empty(len(self), np.int64)
        for i, source in enumerate(self.sources):
            mine = self.source_id == i
            rows = self.source_row[mine]
            index[mine] = source.first + rows if source.numbers is None else source.numbers[rows]
        return index

    def arrays(self, with_sources: bool = False) -> tuple:
        """The batch as the compiled twins take it: (rows, caplen, in_port, sources,
        source_id, source_row), ``sources`` as (read buffer, frame offsets, rows' time-stamp
        ticks per second) per source (with ``with_sources``: the bytes of frames longer
        than a row's head, and the time stamps, are needed)."""
        sources = [source.compiled_source() for source in self.sources] if with_sources else None
        return (self.rows, self.caplen, self.in_port, sources, np.ascontiguousarray(self.source_id, np.int64),
                np.ascontiguousarray(self.source_row, np.int64))

    def select(self, rows: np.ndarray) -> "PacketBatch":
        """The packets ``rows`` (indexes, in order) as a batch of their own."""
        return PacketBatch(self.rows[rows], self.caplen[rows], self.in_port[rows], self.burst[rows], self.sources,
                           self.source_id[rows], self.source_row[rows])

    def source_offsets(self, rows: np.ndarray) -> np.ndarray:
        """Where the selected frames start in their sources' buffers."""
        offsets = np.empty(len(rows), np.int64)
        source_id = self.source_id[rows]
        for i, source in enumerate(self.sources):
            mine = source_id == i
            offsets[mine] = source.offsets[self.source_row[rows[mine]]]
        return offsets
