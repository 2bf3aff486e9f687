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

Several lcores are forked once, all of them in every process: a chunk is then each
lcore's share of the same polling rounds (its own, in its own queues), forwarded into
its TX queues in memory, and the token also carries the merge of each port's queues
(``merged.py``): a process takes over what waited at the end of the chunk before,
merges its chunk's records after it, hands on what must wait for the next chunk, then
writes. An lcore that received nothing in a chunk is done (its queues are drained): its
queues close, and the chunk in which every lcore is done ends the merge.
"""
from __future__ import annotations

import fcntl
import itertools
import multiprocessing
from contextlib import ExitStack
from dataclasses import dataclass, replace
from multiprocessing.connection import wait
from typing import Callable

from ..capture.writers import PortOutputs
from ..errors import SimError
from .lcore import Lcore, main_loop, open_readers, report_inputs
from .merged import MergedPorts
from . import polling
from .stats import RunStats
from .trace import BurstTracer, Spool
from .tx import TxLog, TxModel

_ABORTED = "another --jobs process failed"


@dataclass
class _Merging:
    """The token of several lcores' chunks: where each port's file ends, each port's
    merge as the chunks before left it (``TxQueueMerge.plan``'s state), and whether
    every lcore is done."""
    ends: dict[int, int]
    merges: dict[int, tuple] | None = None
    done: bool = False


class _Turn:
    """A process's turn to place a chunk in the shared outputs. The token from the
    process before it in the ring is where each port's file ends after the chunks
    before (several lcores: with the merges' state, ``_Merging``); it is passed on as
    soon as this chunk's place is known, and the chunk's records are then written at
    their offsets while the next process goes on (a chunk is one super-burst per lcore:
    ``run_jobs`` sizes it so). ``results`` (process 0 only) are the workers' result
    pipes, watched while waiting so that a worker's failure ends the wait."""

    def __init__(self, receive, send, results=None):
        self._receive, self._send, self._results = receive, send, results
        self.taken = False

    def take(self):
        """The token, once the process before has passed it on."""
        if self.taken:
            raise AssertionError("a --jobs chunk is one super-burst")
        self.taken = True
        while self._results is not None and self._receive not in wait([self._receive, *self._results.pending]):
            self._results.collect_ready()
        try:
            return self._receive.recv()
        except EOFError:                          # the process before failed: say why, if it did
            if self._results is not None:
                self._results.collect_all()
            raise SimError(_ABORTED) from None

    def pass_on(self, token) -> None:
        try:
            self._send.send(token)
        except BrokenPipeError:                   # the next process is gone: it found its chunk past the end
            pass

    def reserve(self, sizes: dict[int, int]) -> dict[int, int]:
        """Each port's file offset for ``sizes[port]`` bytes of this chunk (one lcore)."""
        offsets = self.take()
        self.pass_on({port: end + sizes.get(port, 0) for port, end in offsets.items()})
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


@dataclass
class _Share:
    """What a process forwards: the lcores (``rounds[l]`` polling rounds of lcore l a
    chunk), each into ``outputs[l]`` counting into ``stats[l]`` and tracing into
    ``spools[l]``; with several lcores, ``ports`` merges their TX queues."""
    lcores: list[Lcore]
    rounds: list[int]
    outputs: list[PortOutputs]
    stats: list[RunStats]
    spools: list[Spool | None]
    ports: MergedPorts | None


def _forward_share(k: int, jobs: int, share: _Share, receive, send, results=None) -> tuple[dict, dict]:
    """Forward process ``k``'s chunks; returns the TX calls of each (lcore, chunk) and,
    when the merge keeps them, the queue of every record written per chunk and port.
    When tracing, each chunk's first packets go to the lcore's spool (the first
    ``limit`` of the whole run are among them)."""
    logs, sources = {}, {}
    past = [0] * len(share.lcores)                     # polling rounds each lcore's readers are past
    with ExitStack() as stack:
        readers = [stack.enter_context(open_readers(lcore.inputs, lcore.captures)) for lcore in share.lcores]
        for chunk in itertools.count(k, jobs):
            turn = _Turn(receive, send, results)
            received = []
            for n, (lcore, rounds, stats, spool) in enumerate(zip(share.lcores, share.rounds, share.stats,
                                                                   share.spools)):
                first, log, before = chunk * rounds - past[n], TxLog(), sum(stats.queue_rx)
                tracing = lcore.tracing
                tracer = tracing and BurstTracer(tracing.limit, tracing.lcore, tracing.rx_queues, lcore.tx_ports,
                                                 spool.append, past[n] * len(lcore.inputs))
                main_loop(lcore, polling.receive(readers[n], lcore.rx_burst, lcore.chunk_packets,
                                                 (first, first + rounds)),
                          share.outputs[n], stats, log, None if share.ports else turn, tracer)
                past[n] = (chunk + 1) * rounds
                received.append(sum(stats.queue_rx) - before)
                if received[-1]:
                    logs[n, chunk] = log
                    if tracer:
                        spool.end_chunk(chunk, tracer.traced, tracer.sent)
                        stats.traced += tracer.traced
            if share.ports is not None:
                share.ports.set_floors(readers)
                if not _merge_chunk(share.ports, turn, received, chunk, sources):
                    break
            elif not received[0]:                 # past the end of every input
                break
            elif not turn.taken:                  # every packet dropped before TX: the chunk's place is empty
                turn.reserve({})
        if k == 0:
            for reader, stats in zip(readers, share.stats):
                report_inputs(reader, stats)
    return logs, sources


def _merge_chunk(ports: MergedPorts, turn: _Turn, received: list[int], chunk: int, sources: dict) -> bool:
    """The merge of a chunk: the merges as the chunk before left them, then this chunk's
    records; what is certain written at the place the token gives, what must wait handed
    on. False past the end (the token said every lcore was done)."""
    token = turn.take()
    if token.done:
        turn.pass_on(token)
        return False
    if token.merges is not None:
        for port, merge in ports.merges.items():
            merge.take_over(token.merges[port])
    for lcore, packets in enumerate(received):
        if not packets:
            ports.close(lcore)
    plans = {port: merge.plan() for port, merge in ports.merges.items()}   # the token goes on before the copies
    done = not any(received)
    turn.pass_on(_Merging({port: end + plans[port][0] for port, end in token.ends.items()},
                          {port: state for port, (_, state) in plans.items()}, done))
    taken = ports.take()
    for merge in ports.merges.values():
        merge.clear()
    ports.write(taken, token.ends)
    if ports.sources is not None:
        sources[chunk] = {port: ports.sources[port][-1:] if taken[port][1] else [] for port in taken}
    return not done


def _pipe(ctx):
    """A one-way pipe for the token whose buffer holds a token with what several
    lcores' merges left waiting (usually some kB): passing it on does not wait for the
    next process to read it. Linux: ``F_SETPIPE_SZ``, up to ``pipe-max-size``."""
    receive, send = ctx.Pipe(duplex=False)
    try:
        fcntl.fcntl(send.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:                               # above the system's limit: the default buffer
        pass
    return receive, send


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


def _worker(k, jobs, share: _Share, ring, result) -> None:
    receive, send = _ring_ends(ring, k, jobs)

    def work():
        share.stats = [stats.empty_like() for stats in share.stats]
        logs, sources = _forward_share(k, jobs, share, receive, send)
        return k, share.stats, logs, sources, [spool and spool.segments for spool in share.spools]
    _send_outcome(result, work)


def run_jobs(lcores: list[Lcore], jobs: int, outdir, stats: list[RunStats], tx_models: list[TxModel],
             ports: MergedPorts | None = None) -> list[list[Spool]]:
    """Forward ``lcores`` with ``jobs`` processes, counting into ``stats`` and
    ``tx_models`` (one each) exactly as one process would: one lcore into its files in
    ``outdir``, several into ``ports`` (their TX queues merged: ``merged.py``), which
    keeps the places of the records when it keeps sources. Returns each lcore's trace
    spools (when tracing)."""
    # a chunk: the same polling rounds of every lcore, one super-burst each
    rounds = [max(1, lcore.chunk_packets // (lcore.rx_burst * max(1, len(lcore.inputs)))) for lcore in lcores]
    lcores = [replace(lcore, chunk_packets=n * lcore.rx_burst * max(1, len(lcore.inputs)))
              for lcore, n in zip(lcores, rounds)]
    ctx = multiprocessing.get_context("fork")     # workers inherit the tables and the open outputs
    if ports is None:
        lcore = lcores[0]
        outputs = [PortOutputs(outdir, lcore.tx_ports, lcore.nanosecond, lcore.output_name, lcore.output_format)]
        files = outputs[0]
    else:
        outputs, files = [ports.queue_outputs(n) for n in range(len(lcores))], ports.files
    workers = []
    spools = [[Spool.create(outdir) for _ in range(jobs)] if lcore.tracing else [] for lcore in lcores]
    try:
        files.flush()                             # the file headers, written once
        ring = [_pipe(ctx) for _ in range(jobs)]                   # (receive, send) of the token into process k
        ends = files.header_bytes()               # process 0 starts with the token: records after the headers
        ring[0][1].send(ends if ports is None else _Merging(ends))
        for k in range(1, jobs):
            receive_result, send_result = ctx.Pipe(duplex=False)
            share = _Share([replace(lcore, progress=None, captures=None) for lcore in lcores],   # inputs opened again
                           rounds, outputs, stats, [each[k] if each else None for each in spools], ports)
            process = ctx.Process(target=_worker, daemon=True, args=(k, jobs, share, ring, send_result))
            process.start()
            send_result.close()
            workers.append((process, receive_result))
        receive, send = _ring_ends(ring, 0, jobs)
        mine = lcores
        if lcores[0].progress:                    # this process sees about 1/jobs of the bytes
            progress = lcores[0].progress
            mine = [replace(lcores[0], progress=lambda done, total: progress(min(done * jobs, total), total))]
        results = _Results([conn for _, conn in workers])
        logs, sources = _forward_share(0, jobs, _Share(mine, rounds, outputs, stats,
                                                       [each[0] if each else None for each in spools], ports),
                                       receive, send, results)
        for status, payload in results.collect_all():
            if status != "ok":
                raise SimError(payload)
            k, worker_stats, worker_logs, worker_sources, segments = payload
            for total, each in zip(stats, worker_stats):
                total.merge(each)
            logs.update(worker_logs)
            sources.update(worker_sources)
            for each, segment in zip(spools, segments):
                if each:
                    each[k].segments = segment
        for n, chunk in sorted(logs):
            logs[n, chunk].replay(tx_models[n])
        if ports is not None and ports.sources is not None:
            ports.sources = {port: [source for chunk in sorted(sources) for source in sources[chunk][port]]
                             for port in ports.tx_ports}
        files.commit()
        return spools
    except BaseException:
        for process, _ in workers:
            process.kill()
        files.abort()
        for each in spools:
            for spool in each:
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
