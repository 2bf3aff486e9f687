"""``--jobs N``: one run split over N processes, output byte-identical to one.

Forwarding decisions do not depend on the order packets are processed in (design-notes
§3), and the output of a port is its packets in processing order. So the polling rounds
are cut into N contiguous ranges: this process forwards the first straight into the
outputs while forked worker k forwards range k (reading past the rounds before it) into
its own per-port segment files and records its TX calls. Before the outputs are
committed, the segments are appended in range order (copied inside the kernel), the TX
calls replayed in order into the one TX model, and the counters added up.
"""
from __future__ import annotations

import multiprocessing
import struct
import tempfile
from dataclasses import replace
from pathlib import Path

from .errors import SimError
from .lcore import Lcore, forward_rounds
from .stats import RunStats
from .tx import TxLog, TxModel

_PCAP_HEADER = 24


def estimated_rounds(inputs: dict, rx_burst: int) -> int:
    """Polling rounds, estimated from each file's size and first record (exact for
    fixed-size captures; elsewhere the last range simply runs to the end)."""
    longest = 0
    for path in inputs.values():
        with open(path, "rb") as f:
            header = f.read(_PCAP_HEADER + 16)
        caplen = struct.unpack_from("<I", header, _PCAP_HEADER + 8)[0] if len(header) == 40 else 0
        if caplen > 0xFFFF:
            caplen = struct.unpack_from(">I", header, _PCAP_HEADER + 8)[0]
        records = (Path(path).stat().st_size - _PCAP_HEADER) // (16 + max(1, min(caplen, 0xFFFF)))
        longest = max(longest, records)
    return -(-longest // rx_burst)


def _worker(conn, lcore: Lcore, segdir: Path, rx_ports: list[int], rounds) -> None:
    try:
        stats = RunStats(rx_ports, lcore.tx_ports)
        log = TxLog()
        forward_rounds(lcore, segdir, stats, log, rounds)
        conn.send(("ok", stats, log))
    except SimError as err:
        conn.send(("error", str(err), None))
    except BaseException as err:                 # reported by the parent, not as a traceback here
        conn.send(("error", f"worker failed: {err!r}", None))
    finally:
        conn.close()


def run_jobs(lcore: Lcore, jobs: int, outdir: Path, stats: RunStats, tx_model: TxModel) -> None:
    """Forward with ``jobs`` processes into ``outdir``, counting into ``stats`` and
    ``tx_model`` exactly as one process would: this one forwards the first range of
    rounds straight into the outputs, ``jobs - 1`` forked workers the others into
    segments, which are appended (in range order) before the outputs are committed."""
    total = estimated_rounds(lcore.inputs, lcore.rx_burst)
    bounds = [total * k // jobs for k in range(jobs)] + [None]
    worker_lcore = replace(lcore, progress=None)
    ctx = multiprocessing.get_context("fork")     # workers inherit the built tables
    with tempfile.TemporaryDirectory(prefix=".jobs-", dir=outdir) as tmp:
        segdirs = [Path(tmp) / str(k) for k in range(1, jobs)]
        workers = []
        for k, segdir in enumerate(segdirs, start=1):
            segdir.mkdir()
            receive, send = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_worker, daemon=True,
                                  args=(send, worker_lcore, segdir, stats.rx_ports, (bounds[k], bounds[k + 1])))
            process.start()
            send.close()
            workers.append((process, receive))

        def join_workers(outputs) -> None:
            """The workers' counters and TX calls after this range's, their segments
            behind this range's records."""
            try:
                results = [receive.recv() for _, receive in workers]
            except EOFError:
                raise SimError("a --jobs worker died; run again with --jobs 1") from None
            for status, payload, _ in results:
                if status != "ok":
                    raise SimError(payload)
            for _, worker_stats, log in results:
                stats.merge(worker_stats)
                log.replay(tx_model)
            for port, writer in outputs.writers.items():
                for segdir in segdirs:
                    writer.append_records_of(segdir / f"port{port}.pcap")

        try:
            forward_rounds(lcore, outdir, stats, tx_model, (bounds[0], bounds[1]), before_commit=join_workers)
        except BaseException:
            for process, _ in workers:
                process.kill()
            raise
        finally:
            for process, _ in workers:
                process.join()
