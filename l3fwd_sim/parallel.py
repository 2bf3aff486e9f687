"""``--jobs N``: one run split over N worker processes, output byte-identical to one.

Forwarding decisions do not depend on the order packets are processed in (design-notes
§3), and the output of a port is its packets in processing order. So the polling rounds
are cut into N contiguous ranges; worker k forwards range k (reading past the rounds
before it) into its own per-port segment files, and records its TX calls. The parent
then appends the segments in range order behind the first one, replays the
TX calls in order into the one TX model, and adds up the counters.
"""
from __future__ import annotations

import multiprocessing
import os
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
    """Forward with ``jobs`` worker processes into ``outdir``, counting into ``stats``
    and ``tx_model`` exactly as one process would."""
    total = estimated_rounds(lcore.inputs, lcore.rx_burst)
    bounds = [total * k // jobs for k in range(jobs)] + [None]
    worker_lcore = replace(lcore, progress=None)
    ctx = multiprocessing.get_context("fork")     # workers inherit the built tables
    with tempfile.TemporaryDirectory(prefix=".jobs-", dir=outdir) as tmp:
        segdirs = [Path(tmp) / str(k) for k in range(jobs)]
        workers = []
        for k, segdir in enumerate(segdirs):
            segdir.mkdir()
            receive, send = ctx.Pipe(duplex=False)
            process = ctx.Process(target=_worker, daemon=True,
                                  args=(send, worker_lcore, segdir, stats.rx_ports, (bounds[k], bounds[k + 1])))
            process.start()
            send.close()
            workers.append((process, receive))
        try:
            results = [receive.recv() for _, receive in workers]
        except EOFError:
            raise SimError("a --jobs worker died; run again with --jobs 1") from None
        finally:
            for process, _ in workers:
                process.join()
        for status, payload, _ in results:
            if status != "ok":
                raise SimError(payload)
        for _, worker_stats, log in results:
            stats.merge(worker_stats)
            log.replay(tx_model)
        for port in lcore.tx_ports:
            _concatenate(outdir / f"port{port}.pcap", [d / f"port{port}.pcap" for d in segdirs])


def _concatenate(path: Path, segments: list[Path]) -> None:
    """Append the later segments' records to the first segment (in the same temporary
    directory), then rename it into place: the first range is never copied, the rest
    is copied inside the kernel (``copy_file_range``)."""
    first = segments[0]
    with open(first, "r+b") as out:
        end = os.fstat(out.fileno()).st_size
        for segment in segments[1:]:
            with open(segment, "rb") as f:
                offset, size = _PCAP_HEADER, os.fstat(f.fileno()).st_size
                while offset < size:
                    copied = os.copy_file_range(f.fileno(), out.fileno(), size - offset, offset, end)
                    if not copied:
                        raise SimError(f"{segment}: could not be appended to {path}")
                    offset += copied
                    end += copied
    path.unlink(missing_ok=True)        # see AtomicFile.commit: no forced flush on ext4
    os.replace(first, path)
