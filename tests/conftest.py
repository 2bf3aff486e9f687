"""Shared test helpers: make tests/ importable (oracle.py, traffic.py) and run the CLI
in-process."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))

GOLDEN = TESTS.parents[1] / "shared" / "golden"


def run_cli(*args: str):
    """Invoke ``l3fwd-sim`` in-process; returns click's Result (exit_code, stdout, stderr)."""
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def cli():
    return run_cli


def forward_frames(tmp_path, inputs: dict[int, list[bytes]], runner) -> tuple[dict[int, list[bytes]], dict]:
    """Write each port's frames as ``in/port<N>.pcap``, call ``runner(paths, outdir)``
    (a ``run`` or ``testpmd_run``) and read back every port's output pcap."""
    from traffic import read_pcap_frames, write_pcap
    indir, outdir = tmp_path / "in", tmp_path / "out"
    indir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for port, frames in inputs.items():
        paths[port] = indir / f"port{port}.pcap"
        write_pcap(paths[port], frames)
    stats = runner(paths, outdir)
    return {int(p): read_pcap_frames(outdir / f"port{p}.pcap") for p in stats["ports"]}, stats
