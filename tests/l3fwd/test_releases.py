"""The DPDK LTS releases (tests/data/golden/versions: real dpdk-l3fwd and dpdk-testpmd of
22.11.11, 23.11.7, 24.11.6, 25.11.2 over net_pcap, on the public golden inputs): every run
replayed verbatim with ``--dpdk VERSION``, both kernels, record by record per port or TX
queue; a refusal as exit 2 with the release's decisive message. Then each row of
``releases.CHANGES`` from its rule, where the goldens do not reach it."""
from __future__ import annotations

import json
import re

import pytest
from dpdk_lines import invoke
from forwarding import GOLDEN, run_cli
from frames import assert_same_records, read_pcap_records, write_pcap
from refusals import assert_refused
from twins import KERNELS

from l3fwd_sim import compiled
from l3fwd_sim.releases import CHAINED_TX_CAPLEN, CHANGES, RELEASES, release

VERSIONS = GOLDEN / "versions"


def version_runs() -> list:
    return [pytest.param(version, scenario, expected, id=f"{version}/{scenario}/{expected}")
            for version in sorted(p.name for p in VERSIONS.iterdir() if p.is_dir())
            for scenario, runs in sorted(json.loads((VERSIONS / version / "runs.json").read_text()).items())
            for expected in sorted(runs)]


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("version,scenario,expected", version_runs())
def test_release_as_real_dpdk(tmp_path, version, scenario, expected, kernels):
    run = json.loads((VERSIONS / version / "runs.json").read_text())[scenario][expected]
    scenario_dir = GOLDEN / scenario
    argv = [word.replace("{in}", str(scenario_dir / "in")).replace("{d}", str(scenario_dir)).replace("{out}", str(tmp_path))
            for word in run["argv"]]
    with compiled.using(kernels):
        result = invoke(argv[0], "--dpdk", version, *argv[1:])
    golden = VERSIONS / version / scenario / expected
    if (golden / "error.txt").is_file():
        decisive = re.match(r"dpdk-l3fwd exits 1: (.*)", (golden / "error.txt").read_text()).group(1)
        assert_refused(result, decisive)
        assert list(tmp_path.iterdir()) == []
        return
    assert result.exit_code == 0, result.output
    for want in sorted(golden.glob("port*.pcap")):
        assert_same_records(want, tmp_path / want.name, f"{version}: {want.name}")


def test_every_release_is_measured_and_every_row_names_its_commit():
    assert sorted(p.name for p in VERSIONS.iterdir() if p.is_dir()) == list(RELEASES[:-1])
    assert all(re.match(r"[0-9a-f]{10}", change.commit.split()[-3 if "net/pcap" in change.commit else 0])
               or change.commit for change in CHANGES.values())
    assert all(change.since in RELEASES for change in CHANGES.values())


def test_profile_from_environment_and_refused_names(tmp_path):
    outputs = {}
    for env, flag in (({"L3FWD_SIM_DPDK": "22.11"}, []), ({}, ["--dpdk", "22.11"])):
        out = tmp_path / f"out{len(outputs)}"
        from click.testing import CliRunner
        from l3fwd_sim.cli import main
        result = CliRunner().invoke(main, ["run", "pcaps", "-o", str(out), "--quiet", *flag], env=env)
        assert result.exit_code == 0, result.output
        outputs[len(outputs)] = json.loads((out / "stats.json").read_text())["options"]["dpdk"]
    assert list(outputs.values()) == ["22.11", "22.11"]
    assert_refused(run_cli("run", "pcaps", "-o", tmp_path / "x", "--dpdk", "21.11"), "--dpdk")


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("version", RELEASES)
def test_chained_frames_longer_than_16128_bytes(tmp_path, version, kernels):
    """jumbo_dropped_on_rx, from its rule: before v26.07 a 20000-byte frame is received
    (chained), routed, and written as its first 16128 bytes with its full length; a
    3000-byte one whole; v26.07 drops both on receive."""
    frames = []
    for size in (3000, 20000):
        ip = bytes.fromhex("4500") + (size - 14).to_bytes(2, "big") + bytes(4) + bytes([64, 17]) + bytes(2) + \
            bytes([10, 0, 0, 1, 198, 18, 1, 7])
        frames.append(bytes(12) + b"\x08\x00" + ip + bytes(size - 34))
    write_pcap(tmp_path / "in.pcap", frames)
    with compiled.using(kernels):
        result = run_cli("run", f"0={tmp_path / 'in.pcap'}", "-p", "0x3", "-o", tmp_path / "out", "--quiet",
                         "--dpdk", version)
    assert result.exit_code == 0, result.output
    got = [(cap, wire) for cap, wire, _ in read_pcap_records(tmp_path / "out" / "port1.pcap")]
    assert got == ([] if release(version).has("jumbo_dropped_on_rx") else [(3000, 3000), (CHAINED_TX_CAPLEN, 20000)])
