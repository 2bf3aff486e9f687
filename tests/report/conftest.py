"""The reports every test of tests/report looks at, made once per session (report_runs.py),
and the reports of l3fwd-graph runs."""
from __future__ import annotations

from pathlib import Path

import pytest
from forwarding import run_cli
from report_runs import PCAPS, make_runs

GRAPH_WORKERS = "(0,0,1),(1,0,1),(2,0,2),(3,0,2)"


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    return make_runs(tmp_path_factory.mktemp("reports"))


@pytest.fixture(scope="session")
def graph_runs(tmp_path_factory) -> dict[str, Path]:
    """``run --app graph --report`` over the shipped pcaps: one worker graph (``graph``),
    two (``graph2``); name -> the report file."""
    root = tmp_path_factory.mktemp("graph_reports")
    for name, config in (("graph", ()), ("graph2", ("--config", GRAPH_WORKERS))):
        done = run_cli("run", "--app", "graph", PCAPS, "-o", root / name, *config, "--quiet", "--report")
        assert done.exit_code == 0, done.output
    return {name: root / name / "report.html" for name in ("graph", "graph2")}


@pytest.fixture(scope="session")
def reports(runs, graph_runs) -> dict[str, Path]:
    """Every report above: name -> its file."""
    return runs | graph_runs
