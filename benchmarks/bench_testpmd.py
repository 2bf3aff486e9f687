"""The seed's "gap": Mpps of testpmd's io and macswap engines next to l3fwd (lpm, multi)
on the same traffic — bench_run.py's 1M fixed-size 64-byte IPv4/UDP frames over 4 ports.

    python benchmarks/bench_testpmd.py [--packets N] [--repeat R] [--modes io macswap ...]

Each run is end to end (pcap in -> 4 pcaps + stats.json out), timed inside the process
(``elapsed_seconds`` of stats.json; Python start-up excluded), inputs in the page cache
(written just before). The runs are interleaved (io, macswap, l3fwd, io, ...) so that
load from other processes hits all alike; prints every run, then best, median and range.
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from bench_run import make_inputs

from l3fwd_sim import RunOptions, find_inputs, run
from l3fwd_sim.testpmd.run import FORWARD_MODES, TestpmdOptions, testpmd_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--modes", nargs="+", default=["io", "macswap"], choices=FORWARD_MODES)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        indir = base / "in"
        indir.mkdir()
        make_inputs(indir, args.packets)
        inputs = find_inputs([str(indir)])
        print(f"{args.packets} x 64-byte IPv4/UDP frames on 4 ports, {args.repeat} runs each")
        runs = {f"testpmd --forward-mode {mode}": (lambda mode=mode: testpmd_run(
                    TestpmdOptions(inputs=inputs, outdir=base / mode, forward_mode=mode)))
                for mode in args.modes}
        runs["run --lookup lpm --pipeline multi"] = lambda: run(
            RunOptions(inputs=inputs, outdir=base / "l3fwd", lookup="lpm", pipeline="multi"))
        mpps = {name: [] for name in runs}
        for _ in range(args.repeat):                 # interleaved, so load from elsewhere hits all alike
            for name, once in runs.items():
                stats = once()
                mpps[name].append(stats["mpps"])
                stages = ", ".join(f"{k} {v:.0f}" for k, v in stats["stages_ns_per_packet"].items())
                print(f"  {name:34}: {stats['mpps']:5.2f} Mpps ({stats['elapsed_seconds']:.2f} s; ns/packet: {stages})")
        for name, values in mpps.items():
            print(f"{name:36}: best {max(values):.2f}, median {statistics.median(values):.2f}, "
                  f"range {min(values):.2f}-{max(values):.2f} Mpps over {args.repeat} runs")

if __name__ == "__main__":
    main()
