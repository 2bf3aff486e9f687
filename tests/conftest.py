"""The shared helpers (support/: frames, the oracle, forwarding) are importable from
every test folder; ``cli`` runs ``l3fwd-sim`` in-process."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

from forwarding import run_cli  # noqa: E402


@pytest.fixture
def cli():
    return run_cli
