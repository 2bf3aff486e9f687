"""Throughput of `l3fwd-sim run`, end to end (pcap in -> per-port pcaps + stats out).

By default on 1M fixed-size 64-byte IPv4/UDP frames over 4 ports: port p sends
dpdk-l3fwd's default EM flow p^1 (198.18.q.1 -> 198.18.q.0, UDP 9 -> 9, q = p^1), so the
traffic is forwarded to port p^1 under lpm, em and fib alike. `--input DIR` measures an
existing traffic directory instead (e.g. one written by `l3fwd-sim generate`).

    python benchmarks/bench_run.py [--packets N | --input DIR] [--lookup lpm em fib]
                                   [--pipeline multi simple] [--jobs 1 2] [--repeat 5]

Each configuration runs once untimed, then `--repeat` times after a `sync`; prints the
median and range of Mpps measured inside the process (the `elapsed_seconds` of
stats.json; Python start-up excluded) and the median run's ns per packet by stage.
"""
from __future__ import annotations

import argparse
import os
import struct
import tempfile
from pathlib import Path

import numpy as np

from l3fwd_sim import RunOptions, find_inputs, run


def ipv4_udp_64(net: int) -> np.ndarray:
    """One 64-byte frame (a 60-byte minimum frame plus 4 bytes where a capture shows the
    FCS), IPv4 198.18.net.1 -> 198.18.net.0, UDP 9 -> 9, valid header checksum."""
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 46, 0, 0, 64, 17, 0,
                               bytes([198, 18, net, 1]), bytes([198, 18, net, 0])))
    words = struct.unpack(">10H", ip)
    total = sum(words)
    total = (total & 0xFFFF) + (total >> 16)
    ip[10:12] = struct.pack(">H", ~total & 0xFFFF)
    frame = bytes.fromhex("020000000001" "020000000009" "0800") + ip + struct.pack(">HHHH", 9, 9, 26, 0)
    return np.frombuffer(frame.ljust(64, b"\0"), np.uint8)


def make_inputs(directory: Path, packets: int, ports: int = 4) -> None:
    per_port = packets // ports
    for port in range(ports):
        rec = np.zeros((per_port, 80), np.uint8)
        rec[:, 16:] = ipv4_udp_64(port ^ 1)
        hdr = rec[:, :16].view("<u4")
        hdr[:, 0] = 1_700_000_000
        hdr[:, 1] = np.arange(per_port) % 1_000_000
        hdr[:, 2:4] = 64
        with open(directory / f"port{port}.pcap", "wb") as f:
            f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
            f.write(rec.tobytes())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=1_000_000)
    parser.add_argument("--input", type=Path, default=None, help="existing traffic directory")
    parser.add_argument("--lookup", nargs="+", default=["lpm"], choices=["lpm", "em", "fib"])
    parser.add_argument("--pipeline", nargs="+", default=["multi", "simple"], choices=["multi", "simple"])
    parser.add_argument("--jobs", nargs="+", type=int, default=[1])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = args.out or Path(tmp)
        indir = args.input
        if indir is None:
            indir = base / "in"
            indir.mkdir(parents=True, exist_ok=True)
            make_inputs(indir, args.packets)
            print(f"{args.packets} x 64-byte IPv4/UDP frames on 4 ports")
        inputs = find_inputs([str(indir)])
        for lookup in args.lookup:
            for pipeline in args.pipeline:
                for jobs in args.jobs:
                    def measure() -> dict:
                        os.sync()
                        return run(RunOptions(inputs=inputs, outdir=base / f"{lookup}-{pipeline}-{jobs}",
                                              lookup=lookup, pipeline=pipeline, jobs=jobs))
                    measure()
                    runs = sorted((measure() for _ in range(args.repeat)), key=lambda stats: stats["mpps"])
                    median = runs[len(runs) // 2]
                    stages = ", ".join(f"{k} {v:.0f}" for k, v in median["stages_ns_per_packet"].items())
                    print(f"  --lookup {lookup:3} --pipeline {pipeline:6} --jobs {jobs}: {median['mpps']:6.2f} Mpps "
                          f"({runs[0]['mpps']:.2f}-{runs[-1]['mpps']:.2f}; ns/packet: {stages})", flush=True)


if __name__ == "__main__":
    main()
