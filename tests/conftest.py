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
