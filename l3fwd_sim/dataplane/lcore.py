"""The lcore's main loop: read a super-burst, forward it, account for TX, write it out
(l3fwd's ``lpm_main_loop``, testpmd's ``run_pkt_fwd_on_lcore``). Shared by ``run`` and
``testpmd``, and by ``--jobs`` processes.

Its compiled twin, ``lcore.c``, runs the stages between reading and writing for a path
that has one (l3fwd's paths: :attr:`Lcore.compiled_forward`) a sub-burst at a time,
so that each packet's bytes stay in the caches from stage to stage — the way DPDK's own
loop goes burst by burst — tracing the packets asked for on the way. The staged loop
below is the definition; it also runs whenever a super-burst needs more than the twin
does (a time stamp past 2106)."""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from .. import compiled, hold
from ..capture import location
from ..capture.offline import OpenCaptures, open_offline
from ..capture.pcap import PcapReader
from ..capture.records import CAPLEN, RECORD_ROW, header_field
from ..capture.writers import PortOutputs
from ..releases import CHAINED_TX_CAPLEN, Release, release as release_of
from .hits import Decisions
from .polling import Received, receive
from .rss import RssQueue, RssShare
from . import heap, rx, twins
from .ports import MAX_PORTS as MAX_TX_PORTS
from .stats import RunStats

if TYPE_CHECKING:
    from .trace import Tracing


@dataclass
class Lcore:
    """What one lcore's loop needs: its RX queues in polling order, each as (port, capture),
    the rx burst, how a
    super-burst is forwarded (``forward(batch, timer) -> (dest, reason)``) and how its
    transmission is accounted for (``account(tx, burst, dest, reason)``, see ``tx.py``; optional)."""
    inputs: list[tuple[int, Path]]
    rx_burst: int
    forward: Callable
    tx_ports: list[int]
    nanosecond: bool
    account: Callable | None = None
    chunk_packets: int = 65536
    progress: Callable[[int, int], None] | None = None
    output_name: str = "port{port}.pcap"     # per TX queue with several lcores: port{port}.q{queue}.pcap
    tracing: Tracing | None = None           # run --trace: then forward(batch, timer, decisions)
    captures: OpenCaptures | None = None     # the inputs, opened once up front (None: open them here)
    output_format: str = "pcap"              # or "pcapng" (then output_name ends in .pcapng)
    compiled_forward: Callable[[tuple | None], twins.LcorePath] | None = None   # the path's twin for lcore.c (arg: trace tables)
    comments: Callable[[int, int], tuple] | None = None      # --annotate as it forwards: PortOutputs.comment_with
    release: Release = field(default_factory=release_of)     # the DPDK release modelled (releases.py)
    send_order: Callable | None = None       # the application sends a super-burst in another order than received:
                                             # send_order(batch) -> the packets' indexes in sending order


def forward_all(lcore: Lcore, outdir: Path, stats: RunStats, tx=None) -> list:
    """Forward every polling round of the inputs into ``outdir/port<N>.pcap``
    (committed only if everything went well), counting into ``stats`` and ``tx``. When
    tracing, the trace goes to ``outdir/trace.jsonl``, or into the returned spool when
    ``lcore.tracing.spool`` (it is rendered once every output is complete)."""
    outputs = PortOutputs(outdir, lcore.tx_ports, lcore.nanosecond, lcore.output_name, lcore.output_format)
    outputs.comment_with(lcore.comments)
    trace = LcoreTrace(lcore, outdir)
    try:
        with open_readers(lcore.inputs, lcore.captures) as readers:
            main_loop(lcore, receive(readers, lcore.rx_burst, lcore.chunk_packets), outputs, stats, tx,
                      trace=trace.tracer)
            report_inputs(readers, stats)
        outputs.commit()
        return trace.finish(stats)
    except BaseException:
        outputs.abort()
        trace.abort()
        raise


class LcoreTrace:
    """Where an lcore's trace goes while it forwards (``lcore.tracing``; none: no
    tracer): ``outdir/trace.jsonl``, or a spool when ``tracing.spool`` (rendered once
    every output is complete)."""

    def __init__(self, lcore: Lcore, outdir: Path):
        tracing, self._file, self.spools, self.tracer = lcore.tracing, None, [], None
        if not tracing:
            return
        from .trace import BurstTracer, Spool                 # the trace machinery, only when tracing
        if tracing.spool:
            self.spools.append(Spool.create(outdir))
            sink = self.spools[0].append
        else:
            self._file = tracing.open_sink(outdir)
            sink = self._file.write
        self.tracer = BurstTracer(tracing.limit, tracing.lcore, tracing.rx_queues, lcore.tx_ports, sink)

    def finish(self, stats: RunStats) -> list:
        """The lcore's loop ended well: the trace complete; returns the spools."""
        if self._file:
            self._file.commit()
        if self.spools:
            self.spools[0].end_chunk(0, self.tracer.traced, self.tracer.sent)
        stats.traced += self.tracer.traced if self.tracer else 0
        return self.spools

    def abort(self) -> None:
        for spool in self.spools:
            spool.remove()
        if self._file:
            self._file.abort()


@contextmanager
def open_readers(inputs: list[tuple[int, Path | RssShare]], captures: OpenCaptures | None = None):
    """A reader per RX queue, as (port, reader) in polling order, closed on leaving;
    taken from ``captures`` where it was opened already."""
    readers: list[tuple[int, PcapReader | RssQueue]] = []
    try:
        for port, source in inputs:
            if isinstance(source, RssShare):
                readers.append((port, source.open(captures)))
            else:
                readers.append((port, captures.take(source) if captures else open_offline(source)))
        yield readers
    finally:
        for _, reader in readers:
            reader.close()


def report_inputs(readers: list[tuple[int, PcapReader]], stats: RunStats) -> None:
    """After reading to the end: a warning per input that ends inside a record, and
    the packets libpcap failed to read (``rx_errors``, counted as dropped)."""
    for port, reader in readers:
        if (warning := reader.cut_short()) is not None:
            stats.input_cut_short(port, warning)
        if reader.rx_errors:
            stats.rx_errors(port, reader.rx_errors)


def main_loop(lcore: Lcore, received, outputs: PortOutputs, stats: RunStats, tx, turn=None,
              trace=None) -> None:
    """Forward the super-bursts of ``received`` (:func:`~.polling.receive`), account for
    their TX, count and write them. With ``turn`` (``--jobs``: the outputs are shared),
    each write takes its place in the files from ``turn.reserve``. With ``trace``, the
    packets it asks for are traced."""
    for _ in bursts(lcore, received, outputs, stats, tx, turn, trace):
        pass


def bursts(lcore: Lcore, received, outputs: PortOutputs, stats: RunStats, tx, turn=None,
           trace=None) -> Iterator[None]:
    """:func:`main_loop`, pausing after each super-burst (several lcores of one process
    take turns: ``merged.py``)."""
    heap.keep_batches_on_heap()
    total_bytes = sum(location.size(getattr(source, "path", source)) for _, source in lcore.inputs)
    done_bytes = 0
    scratch: dict = {}
    # the path's twin (twins.LcorePath); when tracing or counting rule hits, the tables' codes as both number them
    tables = lcore.tracing.describe.tables if trace else stats.hits.tables if stats.hits is not None else None
    path = lcore.compiled_forward(tables) if lcore.compiled_forward and compiled.enabled() else None

    @contextmanager
    def timer(stage: str):
        t0 = time.perf_counter()
        yield
        stats.add_stage_time(stage, time.perf_counter() - t0)

    while True:
        with timer("read"):
            burst = next(received, None)
        if burst is None:
            break
        stats.count_queues(burst.queue_rx)
        if path and outputs.lays_out([records for _, _, records in burst.sources]) \
                and not _chained_past_tx(lcore, burst):
            _forward_compiled(path, burst, outputs, stats, tx, turn, timer, scratch, rx.data_room(lcore.release),
                              trace)
        else:
            _forward_staged(lcore, burst, outputs, stats, tx, turn, trace, timer)
        if lcore.progress:
            done_bytes += burst.record_bytes
            lcore.progress(min(done_bytes, total_bytes), total_bytes)
        hold.point()
        yield


def _chained_past_tx(lcore: Lcore, burst: Received) -> bool:
    """A frame net_pcap receives chained and writes cut (before v26.07): the staged
    loop cuts it (``rx.cut_chained``); the compiled twin has no such step."""
    return rx.data_room(lcore.release) > rx.MBUF_DATA_ROOM and any(
        len(records) and header_field(records.records, CAPLEN).max() > CHAINED_TX_CAPLEN
        for _, _, records in burst.sources)


def _forward_staged(lcore: Lcore, burst: Received, outputs: PortOutputs, stats: RunStats, tx, turn,
                    trace, timer) -> None:
    """One super-burst through the stages, each over all of it."""
    kept = decisions = None
    room = rx.data_room(lcore.release)
    with timer("read"):
        batch = burst.merge()
        records = trace.take(batch) if trace else None     # before any stage edits the heads
        if room > rx.MBUF_DATA_ROOM:
            batch.caplen[rx.cut_chained(batch.rows)] = CHAINED_TX_CAPLEN
        if (dropped := rx.oversize(batch.caplen, room)).any():
            stats.count(batch.in_port[dropped], np.full(int(dropped.sum()), stats.code("oversize"), np.uint8),
                        np.full(int(dropped.sum()), -1))
            kept = np.flatnonzero(~dropped)
            batch = batch.select(kept)
    if records is not None or stats.hits is not None:
        decisions = Decisions(len(batch), lcore.tracing.describe.tables if records is not None else stats.hits.tables)
    dest, reason, order = np.zeros(0, np.int64), np.zeros(0, np.uint8), None
    if len(batch):
        dest, reason = lcore.forward(batch, timer) if decisions is None else lcore.forward(batch, timer, decisions)
        if lcore.send_order is not None:          # handed to TX in the application's order
            order = lcore.send_order(batch)
            batch, sent_dest, sent_reason = batch.select(order), dest[order], reason[order]
        else:
            sent_dest, sent_reason = dest, reason
        with timer("tx"):
            if lcore.account:
                lcore.account(tx, batch.burst, sent_dest, sent_reason)
            stats.count(batch.in_port, sent_reason, sent_dest)
            if stats.hits is not None:
                received = slice(None) if order is None else order
                stats.hits.count(decisions.table[received], decisions.rule[received], sent_reason, batch.caplen)
    if trace:
        with timer("trace"):
            trace.record(records, kept, dest, reason, stats.code("oversize"), decisions, order)
    if len(batch):
        with timer("write"):
            outputs.write(batch, sent_dest, turn.reserve if turn else None)


SUB_BURST_PACKETS = 1024        # lcore.c's sub-bursts: a packet's row, columns and output stay in L1/L2


def _forward_compiled(path: twins.LcorePath, burst: Received, outputs: PortOutputs, stats: RunStats, tx, turn, timer,
                      scratch: dict, room: int, trace=None) -> None:
    """One super-burst by ``lcore.c``: received, forwarded, accounted for, counted and
    laid out per TX port sub-burst by sub-burst — the packets ``trace`` asks for traced
    on the way (its ``take`` and ``record``) — then the TX calls go to the TX model (or
    ``--jobs``' log) and each port's records are written with one call."""
    with timer("forward"):
        n = burst.packets
        sub = max(SUB_BURST_PACKETS, burst.rx_burst * len(burst.sources))
        if scratch.get("packets", 0) < sub:
            scratch.update(packets=sub, rows=np.empty((sub, RECORD_ROW), np.uint8),
                           columns=np.empty((6, sub), np.int64), reason=np.empty(sub, np.uint8),
                           notes=(np.empty(sub, np.int64), np.empty(sub, np.uint8), *np.empty((2, sub), np.int64)))
        traced = trace.to_fill(n) if trace else None
        tracing = None if traced is None else (
            traced.in_field_order(), len(traced), trace.rx_queues.astype(np.int64),
            np.array([records.first for _, _, records in burst.sources], np.int64),
            [records.numbers for _, _, records in burst.sources], trace.lcore, trace.first_burst, trace.sent,
            *scratch["notes"])
        space = outputs.room(burst.record_bytes, n) + RECORD_ROW   # any one port's records, and a row's room after
        data, stride, starts = outputs.layout(space)
        counts = stats.counters()
        runs = np.empty((2, n), np.int64), np.empty(n, np.uint8)
        out_bytes, out_packets = np.zeros((2, MAX_TX_PORTS), np.int64)
        out_bytes[:len(starts)] = starts
        _, n_runs, filled = twins.lcore_step(
            [(records.records, port, place) for place, port, records in burst.sources],
            [records.compiled_source() for _, _, records in burst.sources],
            (burst.rx_burst, burst.queues, burst.first_round), path,
            (stats.code("oversize"), room), counts, (*runs[0], runs[1]),
            (data, stride, out_bytes, out_packets, outputs.record_format),
            (scratch["rows"], *scratch["columns"], scratch["reason"]),
            tracing, None if stats.hits is None else (*stats.hits.compiled_args(), *scratch["notes"][1:]))
        stats.add_counts(*counts)
    if traced is not None:
        if filled != len(traced):
            raise AssertionError("lcore.c traced fewer packets than it received")
        with timer("trace"):
            trace.filled(traced)
    with timer("tx"):
        tx.send_runs(runs[0][0, :n_runs], runs[0][1, :n_runs], runs[1][:n_runs])
    with timer("write"):
        outputs.write_laid_out(data, stride, out_bytes, out_packets, turn.reserve if turn else None)
