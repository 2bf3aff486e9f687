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
@pytest.mark.parametrize("command", [("run", "--pipeline", "multi"), ("run", "--pipeline", "simple"),
                                     ("testpmd", "--forward-mode", "io")])
@pytest.mark.parametrize("version", RELEASES)
def test_chained_frames_longer_than_16128_bytes(tmp_path, version, command, kernels):
    """jumbo_dropped_on_rx, from its rule (both paths, and testpmd: it is the driver's):
    before v26.07 a 20000-byte frame is received (chained), routed, and written as its
    first 16128 bytes with its full length; a 3000-byte one whole; v26.07 drops both on
    receive."""
    frames = []
    for size in (3000, 20000):
        ip = bytes.fromhex("4500") + (size - 14).to_bytes(2, "big") + bytes(4) + bytes([64, 17]) + bytes(2) + \
            bytes([10, 0, 0, 1, 198, 18, 1, 7])
        frames.append(bytes(12) + b"\x08\x00" + ip + bytes(size - 34))
    write_pcap(tmp_path / "in.pcap", frames)
    with compiled.using(kernels):
        result = run_cli(command[0], f"0={tmp_path / 'in.pcap'}", "-p", "0x3", "-o", tmp_path / "out", "--quiet",
                         "--dpdk", version, *command[1:])
    assert result.exit_code == 0, result.output
    got = [(cap, wire) for cap, wire, _ in read_pcap_records(tmp_path / "out" / "port1.pcap")]
    assert got == ([] if release(version).has("jumbo_dropped_on_rx") else [(3000, 3000), (CHAINED_TX_CAPLEN, 20000)])


ACL = GOLDEN / "acl"
ACL_FILES = ["--lookup", "acl", "--rule_ipv4", ACL / "acl_v4.cfg", "--rule_ipv6", ACL / "acl_v6.cfg", "-p", "0xf"]


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("pipeline", ["simple", "multi"])
def test_acl_sends_ipv4_first_before_24_11(tmp_path, pipeline, kernels):
    """acl_arrival_order, from its rule: each port's output under 22.11 and 23.11 is
    v26.07's, each RX burst's IPv4 packets moved before its IPv6 ones (bursts read from
    v26.07's trace); 24.11 and later send as v26.07 does. The trace's tx_index follows
    the sending order."""
    def forwarded(version: str):
        out = tmp_path / version
        with compiled.using(kernels):
            result = run_cli("run", ACL / "in", "-o", out, "--quiet", "--pipeline", pipeline, "--trace", "all", *ACL_FILES, *(["--dpdk", version] if version != "26.07" else []))
        assert result.exit_code == 0, result.output
        trace = [json.loads(line) for line in (out / "trace.jsonl").read_text().splitlines()]
        return {port: read_pcap_records(out / f"port{port}.pcap") for port in range(4)}, trace

    now, trace = forwarded("26.07")
    burst = {(t["tx_port"], t["tx_index"]): t["burst"] for t in trace if t["tx_port"] is not None}
    for version in ("22.11", "23.11", "24.11"):
        got, got_trace = forwarded(version)
        for port in range(4):
            records = now[port]
            if not release(version).has("acl_arrival_order"):
                records = [records[i] for i in sorted(range(len(records)), key=lambda i: (
                    burst[port, i], records[i][2][12:14] != b"\x08\x00"))]
            assert got[port] == records, (version, port)
            sent = sorted((t["tx_index"], t["index"], t["rx_port"]) for t in got_trace if t["tx_port"] == port)
            assert [i for i, _, _ in sent] == list(range(len(records)))          # tx_index: the sending order
    assert any(now[p] != forwarded("22.11")[0][p] for p in range(4))          # the rule does reorder here


@pytest.mark.parametrize("version", RELEASES)
def test_max_pkt_len_by_release(tmp_path, version):
    """max_pkt_len_2048: 1518 starts everywhere; 2048 only on v26.07; above 2048 no release
    starts (before v26.07 at configure, v26.07 at Rx queue setup)."""
    def run(length: int):
        return run_cli("run", "pcaps", "-o", tmp_path / str(length), "--quiet", "--dpdk", version,
                       "--max-pkt-len", length)
    assert run(1518).exit_code == 0
    if release(version).has("max_pkt_len_2048"):
        assert run(2048).exit_code == 0
        assert_refused(run(9600), "Rx scatter is disabled")
    else:
        for length in (1519, 2048, 9600):
            assert_refused(run(length), "Cannot configure device: err=-22, port=0", "MULTI_SEGS")


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("option", ["--relax-rx-offload", "--disable-rss", "--rx-burst 16", "--tx-burst 16",
                                    "--mbcache 64", "--eth-link-speed 1000"])
def test_options_a_release_lacks(tmp_path, version, option):
    """Every option row: refused as that release's getopt_long refuses it (run and the
    verbatim line alike), accepted from the release that added it on."""
    name = option.split()[0][2:]
    known = release(version).knows(name)
    result = run_cli("run", "pcaps", "-o", tmp_path / "run", "--quiet", "--dpdk", version, *option.split())
    line = ["--dpdk", version, "-l", "0", "--vdev", f"net_pcap0,rx_pcap={GOLDEN / 'mix_default' / 'in' / 'port0.pcap'},"
            f"tx_pcap={tmp_path / 'port0.pcap'}", "--", "-p", "0x1", "--config", "(0,0,0)", "--parse-ptype",
            *(["--relax-rx-offload"] if release(version).knows("relax-rx-offload") else []), *option.split()]
    verbatim = invoke("dpdk-l3fwd", *line)
    for outcome in (result, verbatim):
        if known:
            assert outcome.exit_code == 0, outcome.output
        else:
            assert_refused(outcome, f"unrecognized option '--{name}'", f"DPDK {version}")


def test_22_11_forwards_without_relax_rx_offload_and_its_console(tmp_path):
    """22.11 was measured patched to relax its Rx offloads always (as on a NIC that has
    them): its line forwards without the option v26.07 needs; only 24.11+ print the
    burst line."""
    def line(version: str, *extra: str):
        out = tmp_path / version
        out.mkdir()
        return invoke("dpdk-l3fwd", "--dpdk", version, "-l", "0", "--vdev",
                      f"net_pcap0,rx_pcap={GOLDEN / 'mix_default' / 'in' / 'port0.pcap'},tx_pcap={out / 'port0.pcap'}",
                      "--", "-p", "0x1", "--config", "(0,0,0)", "--parse-ptype", *extra)
    assert line("22.11").exit_code == 0
    assert_refused(line("26.07"), "Cannot configure device: err=-22, port=0")
    assert read_pcap_records(tmp_path / "22.11" / "port0.pcap")
    for version, burst_line in (("23.11", False), ("24.11", True)):
        result = line(version, "--relax-rx-offload")
        assert ("L3FWD: Using Rx burst 32 Tx burst 32" in result.stdout) == burst_line, version


def test_compare_and_report_name_the_profile(tmp_path):
    for version in ("22.11", "26.07"):
        assert run_cli("run", "pcaps", "-o", tmp_path / version, "--quiet", "--dpdk", version, "--report").exit_code == 0
        assert f"DPDK" in (tmp_path / version / "report.html").read_text()
    result = run_cli("compare", tmp_path / "22.11", tmp_path / "26.07")
    assert "(made as DPDK 22.11)" in result.stdout and "(made as DPDK 26.07)" in result.stdout
    same = run_cli("compare", tmp_path / "26.07", tmp_path / "26.07")
    assert "made as" not in same.stdout
