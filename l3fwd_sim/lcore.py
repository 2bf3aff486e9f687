"""The lcore's main loop over a range of polling rounds: read a super-burst, forward
it, account for TX, write it out (l3fwd's ``lpm_main_loop`` / ``em_main_loop``)."""
from __future__ import annotations

import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .output import PortOutputs
from .pcap import PcapReader
from .polling import poll
from .ports import MAX_PORTS
from .stats import RunStats
from .tx import same_port_runs


def forward_rounds(opt, setup, forward, outdir: Path, tx_ports: list[int], nanosecond: bool,
                   stats: RunStats, tx, rounds: tuple[int, int | None] = (0, None)) -> None:
    """Forward polling rounds ``rounds`` of ``opt.inputs`` into ``outdir/port<N>.pcap``
    (committed only if everything went well), counting into ``stats`` and ``tx`` (a
    TxModel, or a TxLog in a worker)."""
    readers: dict[int, PcapReader] = {}
    try:
        for port, path in sorted(opt.inputs.items()):
            readers[port] = PcapReader(path)
        outputs = PortOutputs(outdir, tx_ports, nanosecond)
        try:
            _loop(opt, poll(readers, opt.rx_burst, opt.chunk_packets, rounds), setup, forward, outputs, stats, tx)
            outputs.commit()
        except BaseException:
            outputs.abort()
            raise
    finally:
        for reader in readers.values():
            reader.close()
    for reader in readers.values():
        if reader.truncated_at is not None:
            stats.warnings.append(f"{reader.path}: last record cut short at offset {reader.truncated_at}; "
                                  "it was ignored")


def _loop(opt, batches, setup, forward, outputs: PortOutputs, stats: RunStats, tx) -> None:
    total_bytes = sum(Path(p).stat().st_size for p in opt.inputs.values())
    done_bytes = 0

    @contextmanager
    def timer(stage: str):
        t0 = time.perf_counter()
        yield
        stats.add_stage_time(stage, time.perf_counter() - t0)

    while True:
        with timer("read"):
            batch = next(batches, None)
        if batch is None:
            break
        dest, reason = forward(batch, setup, timer)
        with timer("tx"):
            if opt.pipeline == "multi":
                tx.send_runs(*same_port_runs(dest, batch.burst))
            else:
                counts = np.bincount(dest[dest >= 0], minlength=MAX_PORTS)
                tx.send_single({p: int(counts[p]) for p in outputs.writers if counts[p]})
            stats.count(batch.in_port, reason, dest)
        with timer("write"):
            outputs.write(batch, dest)
        if opt.progress:
            done_bytes += int(batch.caplen.sum()) + 16 * len(batch)
            opt.progress(done_bytes, total_bytes)
