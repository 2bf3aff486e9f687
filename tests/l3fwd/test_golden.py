"""Every run real dpdk-l3fwd v26.07 made over net_pcap ports (tests/data/golden) is
reproduced byte for byte, per port and in order, by the matching pipeline — with the
compiled twins and with the numpy stages; where it refused to start (``error.txt``),
l3fwd-sim exits 2 with one line and writes nothing."""
from __future__ import annotations

import json
import shlex

import pytest
from forwarding import GOLDEN, golden_runs, run_cli
from frames import assert_same_records, read_pcap_frames
from twins import KERNELS

from l3fwd_sim import compiled



@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("scenario,expected,options", golden_runs())
def test_golden_run(tmp_path, scenario, expected, options, kernels):
    scenario_dir = GOLDEN / scenario
    args = shlex.split(options.replace("{d}", str(scenario_dir)))
    expected_files = sorted((scenario_dir / expected).glob("port*.pcap"))
    per_queue = any(".q" in p.name for p in expected_files)         # several lcores: one file per TX queue
    with compiled.using(kernels):
        result = run_cli("run", scenario_dir / "in", "-o", tmp_path, "--quiet", *args, *["--per-queue"] * per_queue)
    if (scenario_dir / expected / "error.txt").is_file():        # dpdk-l3fwd refused to start
        assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
        assert list(tmp_path.iterdir()) == []
        return
    assert result.exit_code == 0, result.output
    written = sorted(p.name for p in tmp_path.glob("port*.q*.pcap" if per_queue else "port*.pcap"))
    assert written == [p.name for p in expected_files]
    for exp in expected_files:
        assert_same_records(exp, tmp_path / exp.name, exp.name)
    if per_queue:        # without --per-queue: the same port<N>.pcap, merged in memory, and no queue file
        with compiled.using(kernels):
            assert run_cli("run", scenario_dir / "in", "-o", tmp_path / "merged", "--quiet", *args).exit_code == 0
        merged = sorted((tmp_path / "merged").glob("port*"))
        assert [p.name for p in merged] == sorted(p.name for p in tmp_path.glob("port*") if ".q" not in p.name)
        for path in merged:
            assert path.read_bytes() == (tmp_path / path.name).read_bytes(), path.name
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["totals"]["tx"] == sum(len(read_pcap_frames(p)) for p in expected_files)
