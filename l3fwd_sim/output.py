"""The per-port pcap outputs of a run, fed super-burst by super-burst.

Packets go to the pcap of their TX port in processing order (TX buffering never
reorders a port, design-notes §1). One stable radix sort of the destinations groups a
super-burst by port; the records are laid out once in a reused buffer and each port's
contiguous slice is written with one call.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .batch import PacketBatch
from .pcap import HEAD_BYTES, RECORD_ROW, PcapWriter, record_headers


class PortOutputs:
    def __init__(self, outdir: Path, ports: list[int], nanosecond: bool):
        self.writers: dict[int, PcapWriter] = {}
        try:
            for port in ports:
                self.writers[port] = PcapWriter(Path(outdir) / f"port{port}.pcap", nanosecond)
        except BaseException:
            self.abort()
            raise
        self._nanosecond = nanosecond
        self._rows = np.empty((0, RECORD_ROW), np.uint8)

    def _buffer(self, n: int) -> np.ndarray:
        if len(self._rows) < n:                    # grown once, then reused: no page faults per batch
            self._rows = np.empty((n, RECORD_ROW), np.uint8)
        return self._rows[:n]

    def write(self, batch: PacketBatch, dest: np.ndarray) -> None:
        """Append the packets of ``batch`` to the pcap of their ``dest`` port (-1: dropped)."""
        order = np.argsort(dest.astype(np.int16), kind="stable")    # radix sort; drops first
        bounds = np.cumsum(np.bincount(dest + 1, minlength=max(self.writers) + 2))
        first = int(bounds[0])
        sent = order[first:]
        sorted_rows = self._buffer(len(sent))
        np.take(batch.heads, sent, axis=0, out=sorted_rows[:, 16:], mode="clip")
        caplen = batch.caplen[sent]
        record_headers(sorted_rows, caplen, batch.wirelen[sent], batch.ts_ns[sent], self._nanosecond)
        for port, writer in self.writers.items():
            start, end = int(bounds[port]) - first, int(bounds[port + 1]) - first
            if start == end:
                continue
            cap = caplen[start:end]
            tails = batch.tails(sent[start:end]) if (cap > HEAD_BYTES).any() else None
            writer.write_rows(sorted_rows[start:end], cap, tails)

    def commit(self) -> None:
        for writer in self.writers.values():
            writer.commit()

    def abort(self) -> None:
        for writer in self.writers.values():
            writer.abort()
