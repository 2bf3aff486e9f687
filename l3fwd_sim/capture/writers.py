"""The per-port pcap outputs of a run, fed super-burst by super-burst.

Packets go to the pcap of their TX port in processing order (TX buffering never
reorders a port, design-notes §1). One stable radix sort of the destinations groups a
super-burst by port; the records are laid out once in a reused buffer and each port's
contiguous slice is written with one call.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from . import kernels
from .atomic import AtomicFile
from .batch import PacketBatch
from .pcap import PcapWriter, paused_gc
from .records import HEAD_BYTES, RECORD_ROW, as_items


class PortOutputs:
    def __init__(self, outdir: Path, ports: list[int], nanosecond: bool, name: str = "port{port}.pcap"):
        self.writers: dict[int, PcapWriter] = {}
        try:
            for port in ports:
                self.writers[port] = PcapWriter(Path(outdir) / name.format(port=port), nanosecond)
        except BaseException:
            self.abort()
            raise
        self._nanosecond = nanosecond
        self._rows = np.empty(0, np.uint8)

    def _buffer(self, n: int, width: int) -> np.ndarray:
        if len(self._rows) < n * width:            # grown once, then reused: no page faults per batch
            self._rows = np.empty(n * RECORD_ROW, np.uint8)
        return self._rows[:n * width].reshape(n, width)

    def write(self, batch: PacketBatch, dest: np.ndarray, reserve=None) -> None:
        """Append the packets of ``batch`` to the pcap of their ``dest`` port (-1: dropped).
        With ``reserve`` (``--jobs``: the outputs are shared), ``reserve({port: bytes})``
        returns the file offset of each port's records instead, and they are written there."""
        order = np.argsort(dest.astype(np.int16), kind="stable")    # radix sort; drops first
        bounds = np.cumsum(np.bincount(dest + 1, minlength=max(self.writers) + 2))
        first = int(bounds[0])
        sent = order[first:]
        caplen = batch.caplen[sent]
        width = RECORD_ROW
        if len(sent) and caplen.max() < HEAD_BYTES and caplen.min() == caplen.max():
            width = 16 + int(caplen[0])            # short fixed-size frames: the records themselves
        sorted_rows = self._buffer(len(sent), width)
        np.take(as_items(batch.rows[:, :width]), sent, out=as_items(sorted_rows), mode="clip")
        self._to_output_resolution(batch, sent, sorted_rows)
        in_place = None
        if (caplen > HEAD_BYTES).any():
            offsets, block_id = batch.source_offsets(sent), batch.source_id[sent]
            in_place = _records_in_place(batch, sorted_rows, caplen, offsets, block_id)
        spans = {port: (int(bounds[port]) - first, int(bounds[port + 1]) - first) for port in self.writers}
        at = {}
        if reserve is not None:
            at = reserve({port: 16 * (end - start) + int(caplen[start:end].sum()) for port, (start, end) in spans.items()})
        for port, writer in self.writers.items():
            start, end = spans[port]
            if start == end:
                continue
            cap = caplen[start:end]
            if in_place is None:
                writer.write_rows(sorted_rows[start:end], cap, at.get(port))
            else:
                part = slice(start, end)
                writer.write_parts(_parts(batch, sorted_rows[part], cap, in_place[part], offsets[part],
                                          block_id[part]), end - start, at.get(port))

    def _to_output_resolution(self, batch: PacketBatch, sent: np.ndarray, rows: np.ndarray) -> None:
        """Record headers whose fractions are in another resolution than the output's: a
        microsecond input beside a nanosecond one, nanosecond rows of a pcapng input."""
        for i, source in enumerate(batch.sources):
            if source.nanosecond != self._nanosecond:
                frac = rows[:, 4:8].view("<u4")[:, 0]
                mine = batch.source_id[sent] == i
                frac[mine] = frac[mine] * 1000 if self._nanosecond else frac[mine] // 1000

    def flush(self) -> None:
        for writer in self.writers.values():
            writer.flush()

    def commit(self) -> None:
        for writer in self.writers.values():
            writer.commit()

    def abort(self) -> None:
        for writer in self.writers.values():
            writer.abort()


def _records_in_place(batch: PacketBatch, rows: np.ndarray, caplen: np.ndarray, offsets: np.ndarray,
                      block_id: np.ndarray) -> np.ndarray:
    """Which sent packets can be written straight from the input buffer, record header
    included: those whose input record header is already exactly the output one (a
    classic pcap record of the output's byte order and resolution, not cut or converted
    by the reader). Their edited heads are first put back into the buffer, so it then
    holds the output bytes; runs of such records are written with one call."""
    in_place = np.zeros(len(rows), bool)
    for i, source in enumerate(batch.sources):
        in_place[kernels.restore_records(source.block, offsets, caplen, rows, np.flatnonzero(block_id == i))] = True
    return in_place


def _parts(batch: PacketBatch, rows: np.ndarray, caplen: np.ndarray, in_place: np.ndarray,
           offsets: np.ndarray, block_id: np.ndarray) -> list[memoryview]:
    """The byte ranges that make up one port's records, in order: runs of consecutive
    in-place records as single slices of their input buffer, the others as their row
    (record header and head) followed by their tail."""
    follows = np.zeros(len(rows), bool)                   # record k directly follows record k-1 in its buffer
    follows[1:] = (in_place[1:] & in_place[:-1] & (block_id[1:] == block_id[:-1])
                   & (offsets[1:] - 16 == offsets[:-1] + caplen[:-1]))
    views = [memoryview(source.block) for source in batch.sources]
    flat = memoryview(rows.reshape(-1))
    width = rows.shape[1]
    parts = []
    starts = np.flatnonzero(~follows)
    lasts = np.append(starts[1:], len(rows)) - 1
    run = zip(starts.tolist(), in_place[starts].tolist(), block_id[starts].tolist(), offsets[starts].tolist(),
              (offsets[lasts] + caplen[lasts]).tolist(), caplen[starts].tolist())
    with paused_gc():
        for start, whole, block, first, end, cap in run:
            if whole:
                parts.append(views[block][first - 16:end])
            elif cap > HEAD_BYTES:                         # not in place: a run of one
                parts.append(flat[start * width:(start + 1) * width])
                parts.append(views[block][first + HEAD_BYTES:end])
            else:
                parts.append(flat[start * width:start * width + 16 + cap])
    return parts


def merge_by_time(paths: list[Path], target: Path) -> list[np.ndarray]:
    """``target``: the records of ``paths`` — classic little-endian pcaps this package
    wrote, of one time-stamp resolution — ordered by time stamp, ties in the order of
    ``paths`` and then of the file (a port's TX queues as one capture, for tools that
    read one file per port). Written atomically; the inputs are read whole. Returns,
    per path, the position in ``target`` of each of its records."""
    files = [np.fromfile(path, np.uint8) for path in paths]
    data = np.concatenate(files)
    keys, starts, lengths, base = [], [], [], 0
    for queue, part in enumerate(files):
        limit = max(0, (len(part) - 24) // 16)
        frames, headers = np.empty(limit, np.int64), np.empty((limit, 16), np.uint8)
        n, _, _ = kernels.scan_records(data, base + 24, base + len(part), limit, False, len(part), frames, headers)
        fields = headers[:n].view("<u4")
        keys.append(np.column_stack([fields[:, 0], fields[:, 1], np.full(n, queue), np.arange(n)]).astype(np.int64))
        starts.append(frames[:n] - 16)
        lengths.append(16 + fields[:, 2].astype(np.int64))
        base += len(part)
    key = np.concatenate(keys) if keys else np.zeros((0, 4), np.int64)
    order = np.lexsort((key[:, 3], key[:, 2], key[:, 1], key[:, 0]))
    starts = np.concatenate(starts)[order] if starts else np.zeros(0, np.int64)
    lengths = np.concatenate(lengths)[order] if lengths else np.zeros(0, np.int64)
    out = AtomicFile(target)
    try:
        out.file.write(files[0][:24].tobytes() if files else b"")
        out.file.write(kernels.concat_ranges(data, starts, lengths))
        out.commit()
    except BaseException:
        out.abort()
        raise
    position = np.empty(len(order), np.int64)
    position[order] = np.arange(len(order))
    return np.split(position, np.cumsum([len(k) for k in keys])[:-1]) if keys else []
