"""The per-port outputs of a run (classic pcap or pcapng), fed super-burst by super-burst.

Packets go to the file of their TX port in processing order (TX buffering never
reorders a port, design-notes §1). One stable radix sort of the destinations groups a
super-burst by port; the records are laid out once in a reused buffer and each port's
contiguous slice is written with one call. Its compiled twin (``records.c``'s
``scatter_records``) lays every record — a classic pcap record or a pcapng Enhanced
Packet Block, its time stamp in the output's resolution, then the rest of the frame —
straight into its port's part of one reused buffer, in one pass.
"""
from __future__ import annotations

import threading
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

from .. import compiled
from ..errors import SimError
from . import kernels, twins
from .atomic import Committable
from .batch import PacketBatch
from .pcap import PcapWriter, paused_gc
from .pcapng_writer import PcapngWriter
from .records import HEAD_BYTES, RECORD_ROW, as_items, utc_text

OUTPUT_FORMATS = ("auto", "pcap", "pcapng")    # --output-format; a format's name is its files' suffix


def output_format(choice: str, input_formats) -> str:
    """``--output-format``: ``pcap`` or ``pcapng``; ``auto`` is pcapng when every input
    is pcapng (``input_formats``: each input's ``file_format``; none: pcap)."""
    if choice not in OUTPUT_FORMATS:
        raise SimError(f"--output-format {choice}: choose {', '.join(OUTPUT_FORMATS)}")
    if choice == "auto":
        return "pcapng" if set(input_formats) == {"pcapng"} else "pcap"
    return choice


def open_writer(output_format: str, path: Path, nanosecond: bool, interface: str,
                sink=None) -> PcapWriter | PcapngWriter:
    """The writer of one output file; ``interface`` names it in a pcapng (``port0``);
    with ``sink``, its records go there (``CaptureWriter``)."""
    if output_format == "pcapng":
        return PcapngWriter(path, nanosecond, interface, sink)
    return PcapWriter(path, nanosecond, sink)


_LAYOUT = threading.local()            # PortOutputs._bytes: one buffer per thread
_EMPTY = np.empty(0, np.uint8)


class PortOutputs(Committable):
    """An lcore's outputs, one per TX port: files, or with ``queues`` (a
    ``merge.LcoreQueues``) its TX queues' records waiting for the merge."""

    def __init__(self, outdir: Path, ports: list[int], nanosecond: bool, name: str = "port{port}.pcap",
                 output_format: str = "pcap", queues=None):
        self.writers: dict[int, PcapWriter | PcapngWriter] = {}
        self._queues = queues
        try:
            for port in ports:
                self.writers[port] = open_writer(output_format, Path(outdir) / name.format(port=port), nanosecond,
                                                 f"port{port}", queues and queues.queues[port])
        except BaseException:
            self.abort()
            raise
        self._nanosecond = nanosecond
        self._pcapng = output_format == "pcapng"
        self._ports = max(self.writers, default=-1) + 1

    def comment_with(self, comments: Callable[[int, int], tuple] | None) -> None:
        """Append every packet with its comment (pcapng outputs): ``comments(port, n)``
        gives port ``port``'s next ``n`` (``PcapngWriter.comments``)."""
        if comments is not None and not self._pcapng:
            raise AssertionError("comments go into pcapng outputs only")
        for port, writer in self.writers.items():
            writer.comments = None if comments is None else partial(comments, port)

    @staticmethod
    def _bytes(size: int) -> np.ndarray:
        """The first ``size`` bytes of the thread's output buffer, valid for one write:
        grown once, then reused by every PortOutputs of the thread (the lcores of a run
        write in turn), so its pages are touched once — a fresh page costs more than the
        bytes put in it (docs/performance.md)."""
        if len(buffer := getattr(_LAYOUT, "buffer", _EMPTY)) < size:
            buffer = _LAYOUT.buffer = np.empty(size, np.uint8)
        return buffer[:size]

    def _buffer(self, n: int, width: int) -> np.ndarray:
        return self._bytes(n * RECORD_ROW)[:n * width].reshape(n, width)

    def write(self, batch: PacketBatch, dest: np.ndarray, reserve=None) -> None:
        """Append the packets of ``batch`` to the pcap of their ``dest`` port (-1: dropped).
        With ``reserve`` (``--jobs``: the outputs are shared), ``reserve({port: bytes})``
        returns the file offset of each port's records instead, and they are written there."""
        if compiled.enabled() and self.lays_out(batch.sources):
            return self._write_compiled(batch, dest, reserve)
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
        high = _seconds_high(batch, sent) if any(s.seconds_high is not None for s in batch.sources) else None
        if high is not None and not self._pcapng:
            _refuse_late(batch, sent, high)
        in_place = None
        long = bool((caplen > HEAD_BYTES).any())
        if long:
            offsets, block_id = batch.source_offsets(sent), batch.source_id[sent]
            if not self._pcapng:
                in_place = _records_in_place(batch, sorted_rows, caplen, offsets, block_id)
        spans = {port: (int(bounds[port]) - first, int(bounds[port + 1]) - first) for port in self.writers}
        at = {}
        if reserve is not None:
            at = reserve({port: self.writers[port].record_bytes(caplen[start:end])
                          for port, (start, end) in spans.items()})
        for port, writer in self.writers.items():
            start, end = spans[port]
            if start == end:
                continue
            cap = caplen[start:end]
            if self._pcapng:
                part = slice(start, end)
                tails = frame_tails(batch, cap, offsets[part], block_id[part]) if long else None
                writer.write_rows(sorted_rows[part], cap, at.get(port), None if high is None else high[part], tails)
            elif in_place is None:
                writer.write_rows(sorted_rows[start:end], cap, at.get(port))
            else:
                part = slice(start, end)
                writer.write_parts(_parts(batch, sorted_rows[part], cap, in_place[part], offsets[part],
                                          block_id[part]), end - start, at.get(port))

    def lays_out(self, sources: list) -> bool:
        """The compiled twins lay out records of these :class:`~.records.RecordBatch`:
        none has a time stamp past 2106 (a row's 32-bit seconds hold every other)."""
        return all(s.seconds_high is None for s in sources)

    @property
    def record_format(self) -> tuple[bool, int]:
        """The records' format as the compiled twins take it (``records.h``): pcapng,
        and the time stamps' ticks per second."""
        return self._pcapng, 10**9 if self._nanosecond else 10**6

    def room(self, record_bytes: int, packets: int) -> int:
        """The most bytes ``packets`` records take laid out, ``record_bytes`` in a classic
        pcap (:attr:`~.records.RecordBatch.record_bytes`): an EPB has 16 bytes of fields
        more and up to 3 of padding."""
        return record_bytes + (19 * packets if self._pcapng else 0)

    def layout(self, room: int) -> tuple[np.ndarray, int, np.ndarray]:
        """Where records are laid out by TX port (``lcore.c``): a buffer with a part per TX
        port (port k's first) with ``room`` bytes free in each (a row's room past its last
        record included), the parts' stride, and where in its part each port's records
        start — a reused buffer of parts that start empty, or the TX queues' own parts,
        after what waits there for the merge."""
        if self._queues is not None:
            return self._queues.layout(room)
        return self._bytes(self._ports * room), room, np.zeros(self._ports, np.int64)

    def write_laid_out(self, data: np.ndarray, stride: int, ends: np.ndarray, counts: np.ndarray,
                       reserve=None) -> None:
        """Port k's ``counts[k]`` records were laid out in its part of ``data``
        (:meth:`layout`), up to ``ends[k]``: write them (with ``reserve``, at the offsets
        it gives, as :meth:`write`), or leave them where they wait for the merge."""
        if self._queues is not None:
            self._queues.laid_out(ends[:self._ports])
            return
        self._write_parts(data, stride * np.arange(len(ends)), ends, counts, reserve)

    def _write_parts(self, data: np.ndarray, starts, sizes: np.ndarray, counts: np.ndarray, reserve) -> None:
        """Write port k's ``counts[k]`` records, ``data[starts[k]:starts[k] + sizes[k]]``."""
        at = reserve({port: int(sizes[port]) for port in self.writers}) if reserve is not None else {}
        for port, writer in self.writers.items():
            if counts[port]:
                start = int(starts[port])
                writer.write_parts([data[start:start + sizes[port]]], int(counts[port]), at.get(port))

    def _write_compiled(self, batch: PacketBatch, dest: np.ndarray, reserve) -> None:
        """:meth:`write` by ``scatter_records``: every sent record laid out once, in its
        port's part of one reused buffer (the parts one after another, each with a row's
        room after it); each part written with one call."""
        data = self._bytes(self.room(16 * len(batch) + int(batch.caplen.sum()), len(batch)) + self._ports * RECORD_ROW)
        sizes, counts, starts = np.zeros((3, self._ports), np.int64)
        twins.scatter_records(batch.arrays(with_sources=True), np.ascontiguousarray(dest, np.int64), self.record_format,
                          data, sizes, counts, starts)
        self._write_parts(data, starts, sizes, counts, reserve)

    def _to_output_resolution(self, batch: PacketBatch, sent: np.ndarray, rows: np.ndarray) -> None:
        """Record headers whose fractions are in another resolution than the output's: a
        microsecond input beside a nanosecond one, nanosecond rows of a pcapng input."""
        for i, source in enumerate(batch.sources):
            if source.nanosecond != self._nanosecond:
                frac = rows[:, 4:8].view("<u4")[:, 0]
                mine = batch.source_id[sent] == i
                frac[mine] = frac[mine] * 1000 if self._nanosecond else frac[mine] // 1000

    def header_bytes(self) -> dict[int, int]:
        """Where each port's records start in its file (``--jobs``' first offsets)."""
        return {port: writer.header_bytes for port, writer in self.writers.items()}

    def flush(self) -> None:
        for writer in self.writers.values():
            writer.flush()

    def commit(self) -> None:
        for writer in self.writers.values():
            writer.commit()

    def abort(self) -> None:
        """Abort every writer, even when one of them fails (the first failure is raised)."""
        failure = None
        for writer in self.writers.values():
            try:
                writer.abort()
            except BaseException as err:
                failure = failure or err
        if failure is not None:
            raise failure


def _seconds_high(batch: PacketBatch, sent: np.ndarray) -> np.ndarray:
    """The sent records' seconds above 32 bits (pcapng inputs past 2106), looked up in
    their sources as ``_to_output_resolution`` looks them up."""
    high = np.zeros(len(sent), np.int64)
    source_id, source_row = batch.source_id[sent], batch.source_row[sent]
    for i, source in enumerate(batch.sources):
        if source.seconds_high is not None:
            mine = source_id == i
            high[mine] = source.seconds_high[source_row[mine]]
    return high


def _refuse_late(batch: PacketBatch, sent: np.ndarray, high: np.ndarray) -> None:
    """A classic pcap holds 32-bit seconds: a later time stamp is an error naming its
    input record."""
    late = np.flatnonzero(high)
    if not len(late):
        return
    row = sent[late[0]]
    source = batch.sources[int(batch.source_id[row])]
    record = int(batch.source_row[row])
    seconds = (int(high[late[0]]) << 32) + int(source.records[record, :4].view("<u4")[0])
    raise SimError(f"{source.path}: packet {source.first + record} (counting from 0) has time stamp "
                   f"{utc_text(seconds * 10**9)}, past what a classic pcap output holds (2106-02-07 06:28:15 UTC); "
                   "use --output-format pcapng")


def frame_tails(batch: PacketBatch, caplen: np.ndarray, offsets: np.ndarray, block_id: np.ndarray) -> list[memoryview]:
    """The bytes past HEAD_BYTES of each frame longer than that, in order, in the
    sources' buffers."""
    views = [memoryview(source.block) for source in batch.sources]
    long = np.flatnonzero(caplen > HEAD_BYTES)
    with paused_gc():
        return [views[block][start + HEAD_BYTES:start + cap] for block, start, cap in
                zip(block_id[long].tolist(), offsets[long].tolist(), caplen[long].tolist())]


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
