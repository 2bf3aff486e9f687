"""The shared helpers (support/: frames, the oracle, forwarding) are importable from
every test folder; ``cli`` runs ``l3fwd-sim`` in-process. No property test races the
machine: hypothesis's per-example deadline and its too-slow health check (both timed)
are off for the whole suite; machines here differ by 2x in speed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

from forwarding import run_cli  # noqa: E402

settings.register_profile("untimed", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("untimed")


@pytest.fixture
def cli():
    return run_cli
