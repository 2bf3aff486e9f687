"""The lcore's main loop: read a super-burst, forward it, account for TX, write it out
(l3fwd's ``lpm_main_loop``, testpmd's ``run_pkt_fwd_on_lcore``). Shared by ``run`` and
``testpmd``, and by ``--jobs`` processes."""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .. import compiled
from ..capture import location
from ..capture.offline import OpenCaptures, open_offline
from ..capture.pcap import PcapReader
from ..capture.writers import PortOutputs
from .polling import poll
from . import heap, rx
from .stats import RunStats
from .trace import BurstTracer, Decisions, Spool, TraceFile, Tracing


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


def forward_all(lcore: Lcore, outdir: Path, stats: RunStats, tx=None) -> list[Spool]:
    """Forward every polling round of the inputs into ``outdir/port<N>.pcap``
    (committed only if everything went well), counting into ``stats`` and ``tx``. When
    tracing, the trace goes to ``outdir/trace.jsonl``, or into the returned spool when
    ``lcore.tracing.spool`` (it is rendered once every output is complete)."""
    outputs = PortOutputs(outdir, lcore.tx_ports, lcore.nanosecond, lcore.output_name, lcore.output_format)
    tracing, trace_file, spools, tracer = lcore.tracing, None, [], None
    try:
        if tracing:
            if tracing.spool:
                spools.append(Spool.create(outdir))
                sink = spools[0].append
            else:
                trace_file = TraceFile(outdir, tracing.describe)
                sink = trace_file.write
            tracer = BurstTracer(tracing.limit, tracing.lcore, tracing.rx_queues, lcore.tx_ports, sink)
        with open_readers(lcore.inputs, lcore.captures) as readers:
            main_loop(lcore, poll(readers, lcore.rx_burst, lcore.chunk_packets), outputs, stats, tx, trace=tracer)
            report_cut_short(readers, stats)
        outputs.commit()
        if trace_file:
            trace_file.commit()
        if spools:
            spools[0].end_chunk(0, tracer.traced, tracer.sent)
        stats.traced += tracer.traced if tracer else 0
        return spools
    except BaseException:
        outputs.abort()
        for spool in spools:
            spool.remove()
        if trace_file:
            trace_file.abort()
        raise


@contextmanager
def open_readers(inputs: list[tuple[int, Path]], captures: OpenCaptures | None = None):
    """A reader per RX queue, as (port, reader) in polling order, closed on leaving;
    taken from ``captures`` where it was opened already."""
    readers: list[tuple[int, PcapReader]] = []
    try:
        for port, path in inputs:
            readers.append((port, captures.take(path) if captures else open_offline(path)))
        yield readers
    finally:
        for _, reader in readers:
            reader.close()


def report_cut_short(readers: list[tuple[int, PcapReader]], stats: RunStats) -> None:
    """After reading to the end: a warning per input that ends inside a record."""
    for port, reader in readers:
        if (warning := reader.cut_short()) is not None:
            stats.input_cut_short(port, warning)


def main_loop(lcore: Lcore, batches, outputs: PortOutputs, stats: RunStats, tx, turn=None,
              trace: BurstTracer | None = None) -> None:
    """Forward super-bursts, account for their TX, count and write them. With ``turn``
    (``--jobs``: the outputs are shared), each write takes its place in the files from
    ``turn.reserve``. With ``trace``, the packets it asks for are traced."""
    heap.keep_batches_on_heap()
    total_bytes = sum(location.size(p) for _, p in lcore.inputs)
    done_bytes = 0

    @contextmanager
    def timer(stage: str):
        t0, imported = time.perf_counter(), compiled.import_seconds
        yield
        once = compiled.import_seconds - imported      # the compiled kernels were imported in this stage
        stats.add_stage_time(stage, time.perf_counter() - t0 - once)
        if once:
            stats.add_setup_time("kernels", once)

    while True:
        kept = records = decisions = None
        with timer("read"):
            batch = next(batches, None)
            if batch is not None:
                stats.count_queues(batch.burst % len(lcore.inputs), len(lcore.inputs))
                records = trace.take(batch) if trace else None     # before any stage edits the heads
            if batch is not None and (dropped := rx.oversize(batch.caplen)).any():
                stats.count(batch.in_port[dropped], np.full(int(dropped.sum()), stats.code("oversize"), np.uint8),
                            np.full(int(dropped.sum()), -1))
                kept = np.flatnonzero(~dropped)
                batch = batch.select(kept)
        if batch is None:
            break
        if records is not None:
            decisions = Decisions(len(batch), lcore.tracing.describe.tables)
        dest, reason = np.zeros(0, np.int64), np.zeros(0, np.uint8)
        if len(batch):
            dest, reason = lcore.forward(batch, timer) if decisions is None else lcore.forward(batch, timer, decisions)
            with timer("tx"):
                if lcore.account:
                    lcore.account(tx, batch.burst, dest, reason)
                stats.count(batch.in_port, reason, dest)
        if trace:
            with timer("trace"):
                trace.record(records, kept, dest, reason, stats.code("oversize"), decisions)
        if not len(batch):
            continue
        with timer("write"):
            outputs.write(batch, dest, turn.reserve if turn else None)
        if lcore.progress:
            done_bytes += int(batch.caplen.sum()) + 16 * len(batch)
            lcore.progress(min(done_bytes, total_bytes), total_bytes)
