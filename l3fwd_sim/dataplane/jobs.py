"""``--jobs N``: one run split over N processes, output byte-identical to one.

Forwarding decisions do not depend on the order packets are processed in (design-notes
§3), and the output of a port is its packets in processing order. So the polling rounds
are cut into chunks of equal length and dealt out in turn: process k forwards chunks k,
k + N, k + 2N, … (reading past the others) and writes each chunk's records into the
shared output files. A token passed round a ring of pipes says where each file ends
after the chunks before: a process takes its chunk's place from it, passes it on at
once, then writes its records there (``pwrite``) while the next process goes on. So the
files hold the chunks in order, no output is ever copied, and the writes overlap. This
process is number 0 (and holds the files); the TX calls of every chunk are replayed in
chunk order into the one TX model, and the counters added up.
"""
from __future__ import annotations

import itertools
import multiprocessing
from dataclasses import replace
from multiprocessing.connection import wait
from typing import Callable

from ..capture.writers import PortOutputs
from ..errors import SimError
from .lcore import Lcore, main_loop, open_readers, report_inputs
from . import polling
from .stats import RunStats
from .trace import BurstTracer, Spool
from .tx import TxLog, TxModel

_ABORTED = "another --jobs process failed"


class _Turn:
    """A process's turn to place a chunk in the shared outputs. The token from the
    process before it in the ring is where each port's file ends after the chunks
    before; it is passed on at once with this chunk's bytes added, and the chunk's
    records are then written at their offsets while the next process goes on (a chunk is
    one super-burst: ``run_jobs`` sizes it so). ``results`` (process 0 only) are the
    workers' result pipes, watched while waiting so that a worker's failure ends the wait."""

    def __init__(self, receive, send, results=None):
        self._receive, self._send, self._results = receive, send, results
        self.taken = False

    def reserve(self, sizes: dict[int, int]) -> dict[int, int]:
        """Each port's file offset for ``sizes[port]`` bytes of this chunk."""
        if self.taken:
            raise AssertionError("a --jobs chunk is one super-burst")
        self.taken = True
        while self._results is not None and self._receive not in wait([self._receive, *self._results.pending]):
            self._results.collect_ready()
        try:
            offsets = self._receive.recv()
        except EOFError:                          # the process before failed: say why, if it did
            if self._results is not None:
                self._results.collect_all()
            raise SimError(_ABORTED) from None
        try:
            self._send.send({port: end + sizes.get(port, 0) for port, end in offsets.items()})
        except BrokenPipeError:                   # the next process is gone: it found its chunk empty
            pass
        return offsets


class _Results:
    """What the workers send back once: ``("ok", (stats, logs))`` or ``("error", message)``."""

    def __init__(self, connections):
        self.pending = list(connections)
        self.received: list[tuple] = []

    def collect_ready(self) -> None:
        for conn in wait(self.pending, timeout=0):
            self._take(conn)

    def collect_all(self) -> list[tuple]:
        for conn in list(self.pending):
            self._take(conn)
        return self.received

    def _take(self, conn) -> None:
        self.pending.remove(conn)
        try:
            result = conn.recv()
        except EOFError:
            result = ("error", "a --jobs worker died; run again with --jobs 1")
        self.received.append(result)
        if result[0] == "error" and result[1] != _ABORTED:
            raise SimError(result[1])


def _forward_share(k: int, jobs: int, lcore: Lcore, outputs: PortOutputs, stats: RunStats, rounds: int,
                   receive, send, spool: Spool | None, results=None) -> dict[int, TxLog]:
    """Forward process ``k``'s chunks (``rounds`` polling rounds each); returns the TX
    calls of each chunk by chunk number. When tracing, each chunk's first packets go to
    ``spool`` (the first ``limit`` of the whole run are among them)."""
    logs = {}
    tracing = lcore.tracing
    with open_readers(lcore.inputs, lcore.captures) as readers:
        position = 0                                  # polling rounds the readers are past
        for chunk in itertools.count(k, jobs):
            first = chunk * rounds - position
            turn, log = _Turn(receive, send, results), TxLog()
            tracer = tracing and BurstTracer(tracing.limit, tracing.lcore, tracing.rx_queues, lcore.tx_ports,
                                             spool.append, position * len(lcore.inputs))
            main_loop(lcore, polling.receive(readers, lcore.rx_burst, lcore.chunk_packets, (first, first + rounds)),
                      outputs, stats, log, turn, tracer)
            position = (chunk + 1) * rounds
            if not turn.taken:                        # an empty chunk: every input is read
                break
            logs[chunk] = log
            if tracer:
                spool.end_chunk(chunk, tracer.traced, tracer.sent)
                stats.traced += tracer.traced
        if k == 0:
            report_inputs(readers, stats)
    return logs


def _ring_ends(ring, k: int, jobs: int):
    """Process ``k``'s ends of the token ring — receiving from its predecessor, sending
    to its successor — with every other end closed in this process, so that a failed
    process's successor sees EOF."""
    receive, send = ring[k][0], ring[(k + 1) % jobs][1]
    for conn in [end for pipe in ring for end in pipe]:
        if conn is not receive and conn is not send:
            conn.close()
    return receive, send


def _send_outcome(conn, work: Callable[[], object]) -> None:
    """Run ``work`` in a worker process and send the parent ``("ok", its result)`` or
    ``("error", one-line message)``: a worker's failure is reported by the parent, not
    as a traceback here."""
    try:
        conn.send(("ok", work()))
    except SimError as err:
        conn.send(("error", str(err)))
    except BaseException as err:
        conn.send(("error", f"worker failed: {err!r}"))
    finally:
        conn.close()


def _worker(k, jobs, lcore, outputs, parent_stats, rounds, ring, result, spool) -> None:
    receive, send = _ring_ends(ring, k, jobs)

    def work():
        stats = parent_stats.empty_like()
        logs = _forward_share(k, jobs, lcore, outputs, stats, rounds, receive, send, spool)
        return k, stats, logs, spool and spool.segments
    _send_outcome(result, work)


def run_jobs(lcore: Lcore, jobs: int, outdir, stats: RunStats, tx_model: TxModel) -> list[Spool]:
    """Forward with ``jobs`` processes into ``outdir``, counting into ``stats`` and
    ``tx_model`` exactly as one process would; returns the trace spools (when tracing)."""
    rounds = max(1, lcore.chunk_packets // (lcore.rx_burst * len(lcore.inputs)))
    lcore = replace(lcore, chunk_packets=rounds * lcore.rx_burst * len(lcore.inputs))   # a chunk: one super-burst
    ctx = multiprocessing.get_context("fork")     # workers inherit the tables and the open outputs
    outputs = PortOutputs(outdir, lcore.tx_ports, lcore.nanosecond, lcore.output_name, lcore.output_format)
    workers = []
    spools = [Spool.create(outdir) for _ in range(jobs)] if lcore.tracing else []   # one per process
    try:
        outputs.flush()                           # the file headers, written once
        ring = [ctx.Pipe(duplex=False) for _ in range(jobs)]       # (receive, send) of the token into process k
        ring[0][1].send(outputs.header_bytes())   # process 0 starts with the token: records start after the headers
        worker_lcore = replace(lcore, progress=None, captures=None)     # workers open the inputs again
        for k in range(1, jobs):
            receive_result, send_result = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_worker, daemon=True,
                                  args=(k, jobs, worker_lcore, outputs, stats, rounds, ring, send_result,
                                        spools[k] if spools else None))
            process.start()
            send_result.close()
            workers.append((process, receive_result))
        receive, send = _ring_ends(ring, 0, jobs)
        if lcore.progress:                        # this process sees about 1/jobs of the bytes
            progress = lcore.progress
            lcore = replace(lcore, progress=lambda done, total: progress(min(done * jobs, total), total))
        results = _Results([conn for _, conn in workers])
        logs = _forward_share(0, jobs, lcore, outputs, stats, rounds, receive, send, spools and spools[0], results)
        for status, payload in results.collect_all():
            if status != "ok":
                raise SimError(payload)
            k, worker_stats, worker_logs, segments = payload
            stats.merge(worker_stats)
            logs.update(worker_logs)
            if spools:
                spools[k].segments = segments
        for chunk in sorted(logs):
            logs[chunk].replay(tx_model)
        outputs.commit()
        return spools
    except BaseException:
        for process, _ in workers:
            process.kill()
        outputs.abort()
        for spool in spools:
            spool.remove()
        raise
    finally:
        for process, _ in workers:
            process.join()


def in_processes(tasks: list[Callable[[], object]], jobs: int) -> list:
    """Run independent ``tasks`` (several lcores' loops, ports' merges) over ``jobs``
    processes — this one and ``jobs - 1`` forked ones — task ``i`` in process ``i %
    jobs``; their results, in order. A process runs its tasks one after another (a fork
    per task cost more than the tasks: measured). A task's failure ends the run with its
    message, after the other processes are stopped."""
    ctx = multiprocessing.get_context("fork")
    jobs = max(1, min(jobs, len(tasks)))
    workers = []
    try:
        for k in range(1, jobs):
            receive, send = ctx.Pipe(duplex=False)
            mine = tasks[k::jobs]
            process = ctx.Process(target=_send_outcome, args=(send, lambda mine=mine: [task() for task in mine]),
                                  daemon=True)
            process.start()
            send.close()
            workers.append((process, receive))
        results: list = [None] * len(tasks)
        results[0::jobs] = [task() for task in tasks[0::jobs]]
        for k, (process, receive) in enumerate(workers, 1):
            status, payload = receive.recv() if receive.poll(None) else ("error", "worker ended without a result")
            process.join()
            if status != "ok":
                raise SimError(payload)
            results[k::jobs] = payload
        return results
    except EOFError:
        raise SimError("a --jobs worker died; run again with --jobs 1") from None
    finally:
        for process, _ in workers:
            if process.is_alive():
                process.kill()
            process.join()
