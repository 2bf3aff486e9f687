"""Helpers every forwarding test shares: the shipped data sets, the CLI run
in-process, frames written as inputs, forwarded, and read back."""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from frames import read_pcap_frames, write_pcap
from shipped import expanded

from l3fwd_sim import RunOptions, run

REPO = Path(__file__).resolve().parents[2]
GOLDEN = expanded("golden")           # what real dpdk-l3fwd/dpdk-testpmd v26.07 received and sent
CORPUS = expanded("tcpdump")          # tcpdump's test captures

def golden_runs() -> list:
    """``pytest.param(scenario, expected, options)`` for every run in golden/runs.json."""
    runs = json.loads((GOLDEN / "runs.json").read_text())
    return [pytest.param(scenario, expected, options, id=f"{scenario}/{expected}")
            for scenario in sorted(runs) for expected, options in sorted(runs[scenario].items())]


def run_cli(*args: str):
    """Invoke ``l3fwd-sim`` in-process; returns click's Result (exit_code, stdout, stderr)."""
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def forward_frames(tmp_path, inputs: dict[int, list[bytes]], runner) -> tuple[dict[int, list[bytes]], dict]:
    """Write each port's frames as ``in/port<N>.pcap``, call ``runner(paths, outdir)``
    (a ``run`` or ``testpmd_run``) and read back every port's output pcap."""
    indir, outdir = tmp_path / "in", tmp_path / "out"
    indir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for port, frames in inputs.items():
        paths[port] = indir / f"port{port}.pcap"
        write_pcap(paths[port], frames)
    stats = runner(paths, outdir)
    return {int(p): read_pcap_frames(outdir / f"port{p}.pcap") for p in stats["ports"]}, stats


def simulate(tmp_path, inputs: dict[int, list[bytes]], **options) -> tuple[dict[int, list[bytes]], dict]:
    return forward_frames(tmp_path, inputs, lambda paths, outdir: run(RunOptions(inputs=paths, outdir=outdir,
                                                                                 **options)))


IN_PORT = 2


def both(tmp_path, frames, **options):
    """Run both pipelines on ``frames`` received on IN_PORT; return per pipeline
    (output frames per port, stats)."""
    return {pipeline: simulate(Path(tempfile.mkdtemp(dir=tmp_path)), {IN_PORT: frames}, portmask=0xF,
                               pipeline=pipeline, **options)
            for pipeline in ("simple", "multi")}


# Port sets, portmasks, bursts and MACs every pipeline-vs-oracle test runs over.
CONFIGS = [
    dict(ports=[0, 1, 2, 3], portmask=0xF),
    dict(ports=[0, 2], portmask=0x5, rx_burst=5, tx_burst=3),
    dict(ports=[1, 3], portmask=0xFF, rx_burst=7),
    dict(ports=[0], portmask=0xF, eth_dest={1: "aa:bb:cc:00:11:22"}, port_mac={2: "0e:00:00:00:00:42"}),
    dict(ports=[0, 1, 2], portmask=0x7, rx_burst=1, tx_burst=1),
    dict(ports=[0, 1, 2, 3], portmask=0xF, rx_burst=512, tx_burst=512, rules=True),
]
