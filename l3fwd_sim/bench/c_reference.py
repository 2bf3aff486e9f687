"""l3fwd-sim against the machine: ``benchmarks/c_forwarder.c``, a plain C program doing
l3fwd's per-packet work of the multi-buffer path (default LPM routes) on the same pcaps,
built with the system compiler and run side by side with ``l3fwd-sim run``.

What is timed is what a user times: the wall clock of each command, as a process of its
own. The simulator's figure is net of its start-up — the same command on header-only
captures (Python, imports, tables, empty outputs), measured in the same rounds — so that
it is the time the traffic costs; the C program starts in about a millisecond. The
matrix: 64-byte IPV4-CONT-BURST and IPV4-4STREAMSX8 (4 × ``--count`` packets),
``generate random`` and IMIX (``--count`` packets), each with lpm, em, fib and lpm
``--jobs 2``. On ``generate random`` also the features users turn on (``FEATURES``): 4
lcores × 2 RSS queues per port, the same with ``--jobs 2``, ``--trace all``,
``--pipeline simple``, the same traffic as pcapng inputs (what Wireshark writes),
``--annotate`` on them, and ``--app graph`` (dpdk-l3fwd-graph). Every variant but the
one-lcore lpm run is also given as a ratio to the run it is measured against in the same
round (``Feature.versus``: the one-lcore run, or for ``--annotate`` the plain pcapng
run): its throughput over theirs, 0.5 meaning twice the time; ``lpm --jobs 2`` so shows
what ``--jobs 2`` brings one lcore, ``--app graph`` how dpdk-l3fwd-graph compares with
dpdk-l3fwd.

Each workload is run in rounds, C and the simulator's variants interleaved (each round
starting one later in their list), each into an empty output directory after a
``sync``: writeback of the previous outputs would otherwise stall the next run, and
replacing the previous round's files frees their blocks inside the timed run (on the
project VM's ext4 with ``discard``, the C forwarder measured 0.21 s into an empty
directory, 0.32 s over its previous outputs). The figures are medians, with the range
of the per-round ratios. Every round checks that both received and sent the same
numbers of packets.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..traffic.generate import GenerateOptions, generate

SOURCE = Path(__file__).resolve().parents[2] / "benchmarks" / "c_forwarder.c"
COMPILERS = ("cc", "gcc", "clang")
# (label, generate's pattern and --size, packets as a multiple of --count)
WORKLOADS = (("64 B CONT-BURST", "IPV4-CONT-BURST", "64", 4), ("64 B 4STREAMSX8", "IPV4-4STREAMSX8", "64", 4),
             ("generate random", "random", "64", 1), ("IMIX", "IPV4-CONT-BURST", "imix", 1))
PORTS = 4
ONE_LCORE = "lpm --jobs 1"
LCORES = "(0,0,0),(0,1,1),(1,0,2),(1,1,3),(2,0,0),(2,1,1),(3,0,2),(3,1,3)"      # 4 lcores x 2 RSS queues per port
PCAPNG = "pcapng inputs"


@dataclass(frozen=True)
class Feature:
    """A run of the simulator: its ``options``, its inputs written by ``generate`` as
    ``inputs`` (pcap or pcapng), its throughput given as a share of the variant
    ``versus`` of the same round."""
    options: tuple[str, ...]
    inputs: str = "pcap"
    versus: str = ONE_LCORE


# the simulator's runs of every workload, and (generate random only) of the features
VARIANTS = {f"{lookup} --jobs {jobs}": Feature(("--lookup", lookup, "--jobs", str(jobs)))
            for lookup, jobs in (("lpm", 1), ("em", 1), ("fib", 1), ("lpm", 2))}
FEATURES = {"4 lcores x 2 RSS queues": Feature(("--config", LCORES)),
            "4 lcores, --jobs 2": Feature(("--config", LCORES, "--jobs", "2")),
            "--trace all": Feature(("--trace", "all")), "--pipeline simple": Feature(("--pipeline", "simple")),
            PCAPNG: Feature((), inputs="pcapng"), "--annotate": Feature(("--annotate",), inputs="pcapng", versus=PCAPNG),
            "--app graph": Feature(("--app", "graph"))}       # dpdk-l3fwd-graph on the same traffic (docs/graph.md)
FEATURE_WORKLOAD = "generate random"
# issue 48's goals, each a bound on a row's ratio (ratio_to_c, or ratio_to_versus: its throughput over the run it is
# measured against): (workload, variant) -> (which ratio, at least); --trace all at most 2x the time is 0.5x the throughput
GOALS = {(FEATURE_WORKLOAD, ONE_LCORE): ("ratio_to_c", 0.8),
         (FEATURE_WORKLOAD, "4 lcores x 2 RSS queues"): ("ratio_to_versus", 0.8),
         (FEATURE_WORKLOAD, "4 lcores, --jobs 2"): ("ratio_to_versus", 1.3),
         ("64 B CONT-BURST", "lpm --jobs 2"): ("ratio_to_versus", 1.3),
         (FEATURE_WORKLOAD, "--trace all"): ("ratio_to_versus", 0.5)}


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


def slug(name: str) -> str:
    """A run's name as a directory name: ``lpm --jobs 1`` -> ``lpm-jobs-1``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _fresh(outdir: Path) -> None:
    """An empty ``outdir``, and nothing waiting to be written back."""
    shutil.rmtree(outdir, ignore_errors=True)
    outdir.mkdir(parents=True)
    os.sync()


def _wall(command: list[str]) -> tuple[float, str]:
    """The wall clock of ``command`` as a process of its own, and its stdout."""
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return time.perf_counter() - started, done.stdout


def _run_c(binary: Path, traffic: Path, outdir: Path) -> tuple[float, tuple[int, int]]:
    _fresh(outdir)
    seconds, stdout = _wall([str(binary), str(outdir), *(str(traffic / f"port{p}.pcap") for p in range(PORTS))])
    received, sent = map(int, stdout.split())
    return seconds, (received, sent)


def _run_sim(traffic: Path, outdir: Path, options: tuple[str, ...]) -> tuple[float, tuple[int, int]]:
    """``l3fwd-sim run`` as a user starts it (``python -m l3fwd_sim``, this Python)."""
    _fresh(outdir)
    seconds, _ = _wall([sys.executable, "-m", "l3fwd_sim", "run", str(traffic), "-o", str(outdir), "--quiet",
                        *options])
    totals = json.loads((outdir / "stats.json").read_text())["totals"]
    return seconds, (totals["rx"], totals["tx"])


def _headers_only(traffic: Path, directory: Path) -> Path:
    """The captures of ``traffic`` cut before their first packet record (pcap: the 24-byte
    file header; pcapng: the section header and interface blocks): the same command on
    them times the simulator's start-up."""
    directory.mkdir(parents=True, exist_ok=True)
    for capture in sorted(traffic.glob("port*.pcap*")):
        data = capture.read_bytes()
        (directory / capture.name).write_bytes(data[:24 if capture.suffix == ".pcap" else _first_record(data)])
    return directory


def _first_record(pcapng: bytes) -> int:
    """Where the first block after the section header and interface description blocks
    starts (the order ``generate`` writes them in)."""
    order = "<" if pcapng[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    at = 0
    while at < len(pcapng) and struct.unpack_from(order + "I", pcapng, at)[0] in (0x0A0D0D0A, 1):
        at += struct.unpack_from(order + "I", pcapng, at + 4)[0]
    return at


def measure(base: Path, count: int, rounds: int = 5, progress=None,
            features: tuple[str, ...] = tuple(FEATURES)) -> dict:
    """Each workload: the C forwarder's Mpps, and each variant's Mpps net of start-up and
    its ratio to C; the start-up itself. ``features``: the ``FEATURES`` run on
    ``generate random``."""
    base.mkdir(parents=True, exist_ok=True)
    binary, how = build(base)
    if binary is None:
        return {"skipped": how}
    result = {"compiler": how, "cpus": os.cpu_count(), "workloads": []}
    for label, pattern, size, times in WORKLOADS:
        packets = count * times
        where = base / f"{pattern.lower()}-{size}"
        traffic = where / "in"
        variants = {**VARIANTS, **({name: FEATURES[name] for name in features} if label == FEATURE_WORKLOAD else {})}
        inputs = {}                 # format -> (traffic, its header-only twin)
        for fmt in dict.fromkeys(feature.inputs for feature in variants.values()):
            traffic = where / ("in" if fmt == "pcap" else f"in-{fmt}")
            generate(GenerateOptions(outdir=traffic, pattern=pattern, ports=PORTS, count=packets // PORTS, size=size,
                                     seed=1, output_format=fmt))
            inputs[fmt] = traffic, _headers_only(traffic, where / ("empty" if fmt == "pcap" else f"empty-{fmt}"))
        traffic = inputs["pcap"][0]
        seconds = {"c": [], **{name: [] for name in variants}, **{f"{name} start-up": [] for name in variants}}
        counts, load = {}, []
        runs = [("c", False)] + [(name, start_up) for name in variants for start_up in (False, True)]
        for round_ in range(rounds):
            load.append(os.getloadavg()[0])
            # each round starts one later in the list: no variant always runs right after another
            for name, start_up in runs[round_ % len(runs):] + runs[:round_ % len(runs)]:
                out = where / f"out-{slug(name)}{'-start-up' if start_up else ''}"
                if name == "c":
                    took, counts[name] = _run_c(binary, traffic, out)
                    seconds[name].append(took)
                elif not start_up:
                    took, counts[name] = _run_sim(inputs[variants[name].inputs][0], out, variants[name].options)
                    seconds[name].append(took)
                else:
                    seconds[f"{name} start-up"].append(
                        _run_sim(inputs[variants[name].inputs][1], out, variants[name].options)[0])
            if counts[ONE_LCORE] != counts["c"]:
                raise RuntimeError(f"C and l3fwd-sim disagree on {label}: {counts['c']} against {counts[ONE_LCORE]}")
        entry = _entry(label, packets, sum((traffic / f"port{p}.pcap").stat().st_size for p in range(PORTS)),
                       seconds, variants, load)
        result["workloads"].append(entry)
        if progress:
            progress("\n".join(format_workload(entry)))
    return result


def _entry(label: str, packets: int, input_bytes: int, seconds: dict, variants: dict[str, Feature],
           load: list[float]) -> dict:
    """Medians and ranges of one workload's rounds; each run's ratios to C and to the
    run it is measured against (``Feature.versus``) of the same round."""
    c = np.array(seconds["c"])
    entry = {"workload": label, "packets": packets, "input_bytes": input_bytes, "load_before_rounds": load,
             "c_mpps": _summary(packets / c / 1e6), "variants": []}
    net = {name: np.maximum(np.array(seconds[name]) - np.median(seconds[f"{name} start-up"]), 1e-6)
           for name in variants}
    for name, feature in variants.items():
        entry["variants"].append({"variant": name, "startup_seconds": float(np.median(seconds[f"{name} start-up"])),
                                  "net_seconds": _summary(net[name]),
                                  "mpps": _summary(packets / net[name] / 1e6),
                                  "ns_per_byte": _summary(net[name] / input_bytes * 1e9),
                                  "ratio_to_c": _summary(c / net[name]),
                                  "inputs": feature.inputs, "versus": feature.versus,
                                  "ratio_to_versus": _summary(net[feature.versus] / net[name])})
        if (goal := GOALS.get((label, name))) is not None:
            ratio, bound = goal
            entry["variants"][-1]["goal"] = {"ratio": ratio, "at_least": bound,
                                             "met": entry["variants"][-1][ratio]["median"] >= bound}
    return entry


def _summary(values: np.ndarray) -> dict:
    return {"median": float(np.median(values)), "min": float(values.min()), "max": float(values.max())}


def format_workload(entry: dict) -> list[str]:
    c = entry["c_mpps"]
    label = f"C reference, {entry['workload']} ({entry['packets']:,} pkts)"
    lines = [f"{label:<40} {c['median']:7.2f} Mpps ({c['min']:.2f}-{c['max']:.2f})"]
    for variant in entry["variants"]:
        m, r = variant["mpps"], variant["ratio_to_c"]
        line = (f"{'  run ' + variant['variant']:<40} {m['median']:7.2f} Mpps   {r['median']:.2f}x C "
                f"({r['min']:.2f}-{r['max']:.2f}), {variant['ns_per_byte']['median']:.2f} ns/byte, "
                f"start-up {variant['startup_seconds']:.2f} s")
        if variant["variant"] != ONE_LCORE:
            share, versus = variant["ratio_to_versus"], variant["versus"]
            line += (f"; {share['median']:.2f}x the throughput of {'one lcore' if versus == ONE_LCORE else versus} "
                     f"({share['min']:.2f}-{share['max']:.2f}), {1 / share['median']:.2f}x its time")
        if "goal" in variant:
            goal = variant["goal"]
            line += (f"; goal >= {goal['at_least']:.1f}x {'C' if goal['ratio'] == 'ratio_to_c' else 'its reference'}:"
                     f" {'met' if goal['met'] else 'NOT met'}")
        lines.append(line)
    return lines
