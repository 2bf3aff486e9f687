"""Per-packet traces (``run --trace``): for each received packet, what the lookup
stage decided and where the packet went — VPP's packet trace at l3fwd's semantics.

While an lcore forwards a super-burst, the first packets still to be traced get a
:class:`TraceRecord` (kept as :class:`TraceRecords`' columns): who received it (port,
queue, record number, rx burst), a copy of the header bytes the path reads (before any
edit), the lookup's answer (:class:`Decisions`, noted by the pipeline stages themselves
from the tables' own rule ids), and where it went (TX port and its position in that
port's output, or the drop reason). Records become JSON lines (:func:`trace_lines`)
right away, or — where the output positions are only known at the end (``--jobs``,
several lcores) — are spooled to a temporary file and rendered once the outputs are
complete (:func:`render_spools`).
"""
from __future__ import annotations

import os
import queue
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..capture.atomic import AtomicFile, Committable
from .hits import Decisions
from .jsonlines import LineBuffer, Lines, quoted

TRACE_FILE = "trace.jsonl"
SNAPSHOT_FROM, SNAPSHOT_TO = 12, 58           # frame bytes kept: EtherType up to the IPv6 5-tuple's ports

TraceRecord = np.dtype([
    ("rx_port", "<i2"), ("rx_queue", "<i2"), ("lcore", "<i2"), ("tx_port", "<i2"),
    ("index", "<i8"), ("burst", "<i8"), ("tx_index", "<i8"), ("rule", "<i8"), ("next_hop", "<i8"),
    ("caplen", "<i4"), ("table", "u1"), ("reason", "u1"),
    ("head", "u1", (SNAPSHOT_TO - SNAPSHOT_FROM,)),
])


IN_FLIGHT = 2       # batches a TraceFile renders and writes behind its caller, at most


class TraceRecords:
    """A super-burst's trace records as columns, one array per :data:`TraceRecord` field
    (of its type), read like a TraceRecord array (``records["index"]``, ``len``). Each
    field is filled and read a column at a time: a field of a TraceRecord array strides
    over 100-byte records (filling them took ~120 ms per 1M packets). :meth:`array` makes
    them one, for a spool."""

    def __init__(self, **columns):
        self.columns: dict[str, np.ndarray] = {}
        self.add(**columns)

    def add(self, **columns) -> None:
        """More fields: each a copy (the arrays given may be reused by the next super-burst)."""
        for name, column in columns.items():
            self.columns[name] = np.array(column, TraceRecord[name].base)

    @classmethod
    def empty(cls, n: int) -> "TraceRecords":
        """``n`` records with every field to fill (``lcore.c`` fills them)."""
        records = cls()
        records.columns = {name: np.empty((n, *TraceRecord[name].shape), TraceRecord[name].base)
                           for name in TraceRecord.names}
        return records

    def head(self, n: int) -> "TraceRecords":
        """The first ``n`` records (views of these columns)."""
        records = TraceRecords()
        records.columns = {name: column[:n] for name, column in self.columns.items()}
        return records

    def in_field_order(self) -> tuple[np.ndarray, ...]:
        """The columns in :data:`TraceRecord`'s field order (as ``twins.lcore_step``
        takes them)."""
        return tuple(self.columns[name] for name in TraceRecord.names)

    def __len__(self) -> int:
        return len(self.columns["index"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def array(self) -> np.ndarray:
        records = np.zeros(len(self), TraceRecord)
        for name, column in self.columns.items():
            records[name] = column
        return records


Records = np.ndarray | TraceRecords    # TraceRecord rows (from a spool), or a super-burst's columns


@dataclass
class Describe:
    """What the application adds to a line: ``middle(records, lines)`` appends the
    application's keys (packet type, table, key, rule, next hop) and
    ``detail(records) -> (texts, codes)`` gives each record's drop detail as a code:
    0 for none, i + 1 for ``texts[i]``."""
    middle: Callable[[Records, Lines], None]
    detail: Callable[[Records], tuple[list[str], np.ndarray]]
    reasons: tuple[str, ...]          # drop reason names; code = index + 1
    tables: tuple[str, ...]           # the lookup tables a packet may be traced in; code = index + 1
    decision: Callable[[Records], tuple[list[str], np.ndarray]] | None = None
    # (run --annotate) what decided each record, as plain text: (texts, code per record: an index into texts)


@dataclass
class Tracing:
    """What ``--trace`` asks of one lcore's loop."""
    limit: int | None          # packets to trace, the first ones in processing order (None: all)
    lcore: int
    rx_queues: list[int]       # the RX queue of each of the lcore's inputs, in polling order
    describe: Describe
    spool: bool = False        # render once the outputs are complete (--jobs, several lcores)
    open_sink: "Callable[[Path], RecordSink] | None" = None   # where finished records go (default: trace.jsonl)

    def __post_init__(self):
        if self.open_sink is None:
            self.open_sink = lambda outdir: RecordSink(outdir, self.describe)


def trace_lines(records: Records, describe: Describe) -> Lines:
    """The JSON lines of ``records`` (``tx_index`` final), to render."""
    lines = Lines(len(records))
    lines.text('{"rx_port":')
    lines.number(records["rx_port"])
    lines.text(',"rx_queue":')
    lines.number(records["rx_queue"])
    lines.text(',"index":')
    lines.number(records["index"])
    lines.text(',"lcore":')
    lines.number(records["lcore"])
    lines.text(',"burst":')
    lines.number(records["burst"])
    lines.text(",")
    describe.middle(records, lines)
    lines.text(',"tx_port":')
    lines.number(records["tx_port"])
    lines.text(',"tx_index":')
    lines.number(records["tx_index"])
    lines.text(',"drop":')
    lines.choice(["null", *map(quoted, describe.reasons)], records["reason"])
    lines.text(',"detail":')
    texts, codes = describe.detail(records)
    lines.choice(["null", *map(quoted, texts)], codes)
    lines.text("}")
    return lines


class BurstTracer:
    """One lcore's trace over one run of its main loop (the whole run, or one ``--jobs``
    chunk): picks the packets to trace, snapshots them before the pipeline edits them,
    and hands the finished records to ``sink``. ``tx_index`` counts from the start of
    the loop."""

    def __init__(self, limit: int | None, lcore: int, rx_queues: list[int], tx_ports: list[int],
                 sink: Callable[[TraceRecords], None], first_burst: int = 0):
        """``first_burst``: the burst id of the loop's first round (its batches count from 0)."""
        self.remaining = limit
        self.first_burst = first_burst
        self.lcore, self.rx_queues, self.sink = lcore, np.array(rx_queues, np.int16), sink
        self.sent = np.zeros(max(tx_ports, default=0) + 1, np.int64)    # packets sent per port so far
        self.traced = 0
        self._pool, self._filled = [TraceRecords.empty(0) for _ in range(IN_FLIGHT + 1)], 0   # to_fill's columns

    def take(self, batch) -> TraceRecords | None:
        """The records of the packets of ``batch`` to trace (its first ones), their
        receive side and header bytes filled in; None when none is left to trace."""
        n = len(batch) if self.remaining is None else min(len(batch), self.remaining)
        if n == 0:
            return None
        return TraceRecords(rx_port=batch.in_port[:n], rx_queue=self.rx_queues[batch.burst[:n] % len(self.rx_queues)],
                            index=batch.index[:n], lcore=np.full(n, self.lcore), burst=batch.burst[:n] + self.first_burst,
                            caplen=batch.caplen[:n], head=batch.heads[:n, SNAPSHOT_FROM:SNAPSHOT_TO])

    def to_fill(self, n: int) -> TraceRecords | None:
        """Records for the first of ``n`` packets received still to trace, for ``lcore.c``
        to fill (its twin of :meth:`take` and :meth:`record`); None when none is left."""
        n = n if self.remaining is None else min(n, self.remaining)
        if not n:
            return None
        # a sink holds at most IN_FLIGHT batches past its call (TraceFile's writer thread):
        # one more set of columns, taken in turn, is never one still being read
        self._filled = (self._filled + 1) % (IN_FLIGHT + 1)
        pool = self._pool[self._filled]
        if len(pool) < n:
            pool = self._pool[self._filled] = TraceRecords.empty(max(n, 2 * len(pool)))
        return pool.head(n)

    def filled(self, records: TraceRecords) -> None:
        """Complete ``records`` handed to the sink: those :meth:`record` completed, or
        those from :meth:`to_fill` that ``lcore.c`` filled (counting the sent packets in
        :attr:`sent` itself)."""
        if self.remaining is not None:
            self.remaining -= len(records)
        self.traced += len(records)
        self.sink(records)

    def record(self, records: TraceRecords | None, kept: np.ndarray | None, dest: np.ndarray, reason: np.ndarray,
               rx_drop: int, decisions: Decisions, order: np.ndarray | None = None) -> None:
        """Complete ``records`` (from :meth:`take`) once the super-burst is forwarded:
        ``dest``/``reason``/``decisions`` are over the packets the pipeline got,
        ``kept`` (None: all) their rows in the received burst; the others were dropped
        on receive for ``rx_drop``; ``order`` (None: as received): the order they were
        sent in, which numbers them on their TX port. Counts the sent packets either way."""
        if records is not None:
            n = len(records)
            got = n if kept is None else int(np.searchsorted(kept, n))    # the traced packets the pipeline got
            sent = dest[:got]
            sending = np.arange(len(dest)) if order is None else order
            ranks = np.full(len(dest), -1, np.int64)
            for port in np.flatnonzero(np.bincount(sent[sent >= 0])).tolist():
                at = sending[dest[sending] == port]
                ranks[at] = self.sent[port] + np.arange(len(at))
            rank = ranks[:got]
            columns = {"reason": reason[:got], "tx_port": sent, "tx_index": rank, "table": decisions.table[:got],
                       "rule": decisions.rule[:got], "next_hop": decisions.next_hop[:got]}
            if kept is not None:                   # at their received rows; the others were dropped on receive
                received = {"reason": rx_drop, "table": 0}
                for name, column in columns.items():
                    columns[name] = np.full(n, received.get(name, -1), column.dtype)
                    columns[name][kept[:got]] = column
            records.add(**columns)
            self.filled(records)
        self.sent += np.bincount(dest[dest >= 0], minlength=len(self.sent))[:len(self.sent)]


class TraceFile(Committable):
    """``OUTDIR/trace.jsonl``, written atomically: records made into lines' pieces in
    order by the caller (:func:`trace_lines`), rendered and appended by a writer thread
    meanwhile the caller goes on with the next super-burst — the compiled renderer and
    ``write()`` release the GIL (docs/performance.md#tracing). Two buffers take turns,
    so at most IN_FLIGHT batches are in flight; a writer's failure is raised by the next call."""

    def __init__(self, outdir: Path, describe: Describe):
        self.file = AtomicFile(Path(outdir) / TRACE_FILE)
        self.describe = describe
        self.lines = 0
        self._free: queue.SimpleQueue[LineBuffer] = queue.SimpleQueue()
        for _ in range(IN_FLIGHT):
            self._free.put(LineBuffer())
        self._batches: queue.SimpleQueue[tuple[Lines, LineBuffer] | None] = queue.SimpleQueue()
        self._failed: BaseException | None = None
        self._writer = threading.Thread(target=self._write_batches, name="trace writer", daemon=True)
        self._writer.start()

    def write(self, records: Records) -> None:
        lines = trace_lines(records, self.describe)
        buffer = self._free.get()                  # waits while IN_FLIGHT batches are in flight
        self._raise_failure()
        self._batches.put((lines, buffer))
        self.lines += len(records)

    def _write_batches(self) -> None:
        while (batch := self._batches.get()) is not None:
            lines, buffer = batch
            if self._failed is None:
                try:
                    self.file.file.write(lines.render(buffer))
                except BaseException as error:     # e.g. a full disk: raised on the caller's thread
                    self._failed = error
            self._free.put(buffer)

    def _raise_failure(self) -> None:
        if self._failed is not None:
            raise self._failed

    def _finish(self) -> None:
        self._batches.put(None)
        self._writer.join()

    def commit(self) -> None:
        self._finish()
        self._raise_failure()
        self.file.commit()

    def abort(self) -> None:
        self._finish()
        self.file.abort()


class RecordSink(Committable):
    """Where finished records go: ``trace.jsonl`` (:class:`TraceFile`, when asked for)
    and ``keep`` (the annotations of ``--annotate``/``--drops``), which takes them as they
    come — the records handed over may be reused by the caller afterwards."""

    def __init__(self, outdir: Path, describe: Describe, trace_file: bool = True,
                 keep: Callable[[Records], None] | None = None):
        self.file = TraceFile(outdir, describe) if trace_file else None
        self.keep = keep
        self.lines = 0

    def write(self, records: Records) -> None:
        if self.file:
            self.file.write(records)
        if self.keep:
            self.keep(records)
        self.lines += len(records)

    def commit(self) -> None:
        if self.file:
            self.file.commit()

    def abort(self) -> None:
        if self.file:
            self.file.abort()


@dataclass
class Spool:
    """Records kept for rendering at the end, in a temporary file beside the outputs:
    ``segments`` are (chunk, records, packets sent per port in that chunk) in order."""
    path: Path
    segments: list[tuple[int, int, np.ndarray]] = field(default_factory=list)

    @classmethod
    def create(cls, outdir: Path) -> "Spool":
        fd, name = tempfile.mkstemp(prefix=".trace.", suffix=".spool", dir=outdir)
        os.close(fd)
        return cls(Path(name))

    def append(self, records: TraceRecords) -> None:
        with open(self.path, "ab") as file:
            records.array().tofile(file)

    def end_chunk(self, chunk: int, records: int, sent: np.ndarray) -> None:
        self.segments.append((chunk, records, sent))

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def render_spools(lcore_spools: list[list[Spool]], limit: int | None, outdir: Path,
                  open_sink: Callable[[Path], RecordSink],
                  tx_position: Callable[[int, np.ndarray, np.ndarray], np.ndarray] | None = None,
                  block: int = 65536) -> int:
    """Hand spooled records to ``open_sink(outdir)`` (``trace.jsonl``): lcore by lcore (each a list
    of spools, e.g. one per ``--jobs`` process), chunk by chunk, at most ``limit``
    records per lcore. A record's ``tx_index`` is made absolute by the packets its
    lcore sent in earlier chunks, then mapped by ``tx_position(lcore, tx_port,
    tx_index)`` (several lcores: the position in the merged port file). Returns the
    lines written."""
    with open_sink(outdir) as out:
        for lcore, spools in enumerate(lcore_spools):
            segments = sorted(((chunk, n, sent, spool, at) for spool in spools
                               for at, (chunk, n, sent) in _offsets(spool.segments)), key=lambda s: s[0])
            left = limit
            base = np.zeros_like(segments[0][2]) if segments else None     # packets sent per port so far
            for chunk, n, sent, spool, at in segments:
                take = n if left is None else min(n, left)
                for start in range(0, take, block):
                    records = np.fromfile(spool.path, TraceRecord, min(block, take - start),
                                          offset=(at + start) * TraceRecord.itemsize)
                    sent_now = records["tx_port"] >= 0
                    records["tx_index"][sent_now] += base[records["tx_port"][sent_now]]
                    if tx_position is not None:
                        records["tx_index"][sent_now] = tx_position(lcore, records["tx_port"][sent_now],
                                                                    records["tx_index"][sent_now])
                    out.write(records)
                if left is not None:
                    left -= take
                base = base + sent
    return out.lines


def _offsets(segments):
    """(record offset in the spool file, segment) for each segment."""
    at = 0
    for segment in segments:
        yield at, segment
        at += segment[1]
