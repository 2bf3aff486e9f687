"""l3fwd-sim against the machine: ``benchmarks/c_forwarder.c``, a plain C program doing
l3fwd's per-packet work of the multi-buffer path (default LPM routes) on the same pcaps,
built with the system compiler and run side by side with ``run``.

Each workload is run in rounds, C and the simulator's variants interleaved (each round
starting one later in their list), each into an empty output directory after a
``sync``: writeback of the previous outputs would otherwise stall the next run, and
replacing the previous round's files frees their blocks inside the timed run (on the
project VM's ext4 with ``discard``, the C forwarder measured 0.21 s into an empty
directory, 0.32 s over its previous outputs; l3fwd-sim varied 0.52-1.2 s);
the figures are medians and ranges over the rounds. The simulator is timed in-process
(``elapsed_seconds``: net of Python's start-up), the C program by the wall clock of its
process. Every round checks that both received and sent the same numbers of packets.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np

from ..dataplane.inputs import find_inputs
from ..l3fwd.run import RunOptions, run
from ..traffic.generate import GenerateOptions, generate

SOURCE = Path(__file__).resolve().parents[2] / "benchmarks" / "c_forwarder.c"
COMPILERS = ("cc", "gcc", "clang")
# (label, generate's --size, packets as a multiple of --count) and the simulator's variants
WORKLOADS = (("64 B", "64", 4), ("IMIX", "imix", 1))
VARIANTS = (("lpm", 1), ("em", 1), ("fib", 1), ("lpm", 2))
PORTS = 4


def build(directory: Path) -> tuple[Path | None, str]:
    """The compiled forwarder, or None and why not."""
    compiler = next((c for c in COMPILERS if shutil.which(c)), None)
    if not SOURCE.is_file():
        return None, f"{SOURCE} not found (an installed package has no benchmarks/)"
    if compiler is None:
        return None, "no C compiler (cc, gcc or clang) on PATH"
    binary = directory / "c_forwarder"
    done = subprocess.run([compiler, "-O2", "-o", str(binary), str(SOURCE)], capture_output=True, text=True)
    if done.returncode:
        return None, f"{compiler} failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}"
    return binary, f"{compiler} -O2"


def _fresh(outdir: Path) -> None:
    """An empty ``outdir``, and nothing waiting to be written back."""
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    os.sync()


def _run_c(binary: Path, traffic: Path, outdir: Path) -> tuple[float, tuple[int, int]]:
    inputs = [str(traffic / f"port{p}.pcap") for p in range(PORTS)]
    _fresh(outdir)
    started = time.perf_counter()
    done = subprocess.run([str(binary), str(outdir), *inputs], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - started
    received, sent = map(int, done.stdout.split())
    return seconds, (received, sent)


def _run_sim(traffic: Path, outdir: Path, lookup: str, jobs: int) -> tuple[float, tuple[int, int]]:
    _fresh(outdir)
    stats = run(RunOptions(inputs=find_inputs([str(traffic)]), outdir=outdir, lookup=lookup, pipeline="multi",
                           jobs=jobs))
    return stats["elapsed_seconds"], (stats["totals"]["rx"], stats["totals"]["tx"])


def measure(base: Path, count: int, rounds: int = 5, progress=None) -> dict:
    """Mpps of the C forwarder and of ``run --pipeline multi`` (lpm, em, fib; lpm with
    ``--jobs 2``) on each workload, and each variant's ratio to C."""
    base.mkdir(parents=True, exist_ok=True)
    binary, how = build(base)
    if binary is None:
        return {"skipped": how}
    result = {"compiler": how, "cpus": os.cpu_count(), "workloads": []}
    for label, size, times in WORKLOADS:
        packets = count * times
        traffic = base / f"c-{size}" / "in"
        generate(GenerateOptions(outdir=traffic, pattern="IPV4-CONT-BURST", ports=PORTS, count=packets // PORTS,
                                 size=size, seed=1))
        seconds = {"c": [], **{f"{lookup} --jobs {jobs}": [] for lookup, jobs in VARIANTS}}
        counts = {}
        load = []
        runs = [("c", None, None)] + [(f"{lookup} --jobs {jobs}", lookup, jobs) for lookup, jobs in VARIANTS]
        for round_ in range(rounds):
            load.append(os.getloadavg()[0])
            # each round starts one later in the list: no variant always runs right after another
            for name, lookup, jobs in runs[round_ % len(runs):] + runs[:round_ % len(runs)]:
                if lookup is None:
                    took, counts[name] = _run_c(binary, traffic, base / f"c-{size}" / "out-c")
                else:
                    took, counts[name] = _run_sim(traffic, base / f"c-{size}" / f"out-{lookup}-{jobs}", lookup, jobs)
                seconds[name].append(took)
            if counts["lpm --jobs 1"] != counts["c"]:
                raise RuntimeError(f"C and l3fwd-sim disagree on {label}: {counts['c']} against {counts['lpm --jobs 1']}")
        mpps = {name: packets / np.array(values) / 1e6 for name, values in seconds.items()}
        entry = {"workload": label, "packets": packets, "load_before_rounds": load,
                 "c_mpps": _summary(mpps["c"]), "variants": []}
        for name, values in mpps.items():
            if name != "c":
                entry["variants"].append({"variant": name, "mpps": _summary(values),
                                          "ratio_to_c": _summary(values / mpps["c"])})
        result["workloads"].append(entry)
        if progress:
            progress("\n".join(format_workload(entry)))
    return result


def _summary(values: np.ndarray) -> dict:
    return {"median": float(np.median(values)), "min": float(values.min()), "max": float(values.max())}


def format_workload(entry: dict) -> list[str]:
    c = entry["c_mpps"]
    label = f"C reference, {entry['workload']} ({entry['packets']:,} pkts)"
    lines = [f"{label:<36} {c['median']:7.2f} Mpps ({c['min']:.2f}-{c['max']:.2f})"]
    for variant in entry["variants"]:
        m, r = variant["mpps"], variant["ratio_to_c"]
        lines.append(f"{'  run multi ' + variant['variant']:<36} {m['median']:7.2f} Mpps   {r['median']:.2f}x C "
                     f"({r['min']:.2f}-{r['max']:.2f})")
    return lines
