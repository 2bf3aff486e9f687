"""The reports every test of tests/report looks at, made once per session (report_runs.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
from report_runs import make_runs


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    return make_runs(tmp_path_factory.mktemp("reports"))
