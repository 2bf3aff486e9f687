"""`l3fwd-sim bench` re-runs the seed's five patterns: the TX-model counters it reports
follow from each pattern's definition and l3fwd's send_packetsx4 rules."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from forwarding import REPO
from frames import read_pcap_frames
from twins import KERNELS, needs_twins

from l3fwd_sim import RunOptions, compiled, find_inputs, run
from l3fwd_sim.bench import SEED_GAIN_PERCENT, BenchOptions, bench, c_reference, experiment, format_table


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    return bench(BenchOptions(count=4096, lookups=("lpm",), outdir=tmp_path_factory.mktemp("bench"),
                              acl=(300,), acl_build=2000, reference_rounds=1))


def test_every_pattern_measured_with_both_pipelines(result):
    assert [row["pattern"] for row in result["rows"]] == list(SEED_GAIN_PERCENT)
    for row in result["rows"]:
        for pipeline in ("simple", "multi"):
            assert row[pipeline]["packets"] == 4096 and row[pipeline]["mpps"] > 0


def test_tx_counters_follow_the_patterns(result):
    rows = {row["pattern"]: row for row in result["rows"]}
    # CONT-BURST: each rx burst of 32 goes to one port: one direct tx_burst per burst
    cont = rows["IPV4-CONT-BURST"]["multi"]
    assert cont["mean_run_length"] == 32 and cont["direct_share"] == 1
    assert cont["tx_burst_calls_per_packet"] == pytest.approx(1 / 32)
    # 4STREAMSX8 / X1: runs of 8 / 1 packets, all through the 512-packet buffer
    for pattern, run in (("IPV4-4STREAMSX8", 8), ("IPV4-4STREAMSX1", 1)):
        multi = rows[pattern]["multi"]
        assert multi["mean_run_length"] == run and multi["direct_share"] == 0
        assert multi["tx_burst_calls_per_packet"] == pytest.approx(1 / 512, rel=0.5)
    # the simple path flushes every rx_burst (32) packets per port, whatever the pattern
    for row in result["rows"]:
        assert row["simple"]["tx_burst_calls_per_packet"] == pytest.approx(1 / 32, rel=0.05)


def test_bench_json_and_table(result, tmp_path_factory):
    out = tmp_path_factory.getbasetemp()
    # the fixture's own directory (mktemp("bench")): a docs example may have written another bench.json
    written = [json.loads(p.read_text()) for p in out.glob("bench*/bench.json")]
    assert written and written[0]["rows"] == result["rows"]
    table = format_table(result)
    assert all(pattern in table for pattern in SEED_GAIN_PERCENT)
    assert "testpmd --forward-mode io" in table


def test_end_to_end_runs_imix_and_two_jobs(result):
    """imix traffic and --jobs 2 forward every packet of the pattern (4096 here)."""
    cases = {(e["traffic"], e["jobs"]) for e in result["end_to_end"]}
    assert cases == {("--size imix", 1), ("--size 64, --jobs 1", 1), ("--size 64, --jobs 2", 2)}
    assert all(e["packets"] == 4096 and e["mpps"] > 0 for e in result["end_to_end"])
    assert "--size imix" in format_table(result)


def test_acl_runs_and_build(result):
    """The ACL rule set's traffic is forwarded in full (denied and missed packets count as
    received), and the build probe reports its time and peak RSS."""
    (entry,) = result["acl"]["runs"]
    assert entry["rules"] == 300 and entry["packets"] == 4096 and entry["mpps"] > 0
    build = result["acl"]["build"]
    assert build["rules"] == 2000 and build["seconds"] > 0 and build["peak_rss_mb"] > 10
    assert "acl build, 2,000 rules" in format_table(result)


@needs_twins
def test_the_acl_rows_run_on_either_kernels(tmp_path):
    """The ACL rows keep the run's stage times as it reports them: the numpy stages'
    classify+lookup, or the compiled twin's one forward stage (a 1M-packet bench runs the
    twin: it once failed looking for classify+lookup)."""
    for choice in KERNELS:
        with compiled.using(choice):
            (entry,) = experiment._acl(tmp_path / choice, BenchOptions(count=1024, acl=(50,), acl_build=0))["runs"]
        assert entry["packets"] == 1024
        assert ("forward" in entry["stages_ns_per_packet"]) == (choice == "compiled")
        assert ("classify+lookup" in entry["stages_ns_per_packet"]) == (choice == "numpy")


needs_cc = pytest.mark.skipif(c_reference.build(Path(tempfile.mkdtemp()))[0] is None, reason="no C compiler")


@needs_cc
def test_c_reference_measured_side_by_side(result):
    """Each workload: C and the simulator's variants in every round, as commands of their
    own, the simulator's net of its start-up; ratios of their rates."""
    reference = result["reference"]
    assert [w["workload"] for w in reference["workloads"]] == [label for label, *_ in c_reference.WORKLOADS]
    for workload in reference["workloads"]:
        assert workload["packets"] == (4 * 4096 if workload["workload"].startswith("64 B") else 4096)
        features = list(c_reference.FEATURES) if workload["workload"] == c_reference.FEATURE_WORKLOAD else []
        assert [v["variant"] for v in workload["variants"]] == ["lpm --jobs 1", "em --jobs 1", "fib --jobs 1",
                                                                 "lpm --jobs 2", *features]
        for variant in workload["variants"]:
            for ratio in ("ratio_to_c", "ratio_to_versus"):
                assert variant[ratio]["min"] <= variant[ratio]["median"] <= variant[ratio]["max"]
            assert variant["startup_seconds"] > 0 and variant["ns_per_byte"]["median"] > 0
            assert variant["versus"] == (c_reference.PCAPNG if variant["variant"] == "--annotate" else
                                         c_reference.ONE_LCORE)
        one = workload["variants"][0]
        assert one["variant"] == c_reference.ONE_LCORE and one["ratio_to_versus"]["median"] == 1
    table = format_table(result)
    assert "C reference, 64 B CONT-BURST" in table
    # every variant but the one-lcore run as its share of the run it is measured against
    assert "run lpm --jobs 2" in table and table.count("x the throughput of one lcore") == \
        sum(len(w["variants"]) - 1 for w in reference["workloads"]) - 1
    assert "run --annotate" in table and "x the throughput of pcapng inputs" in table
    # issue 48's goals, beside their rows, judged on the median ratio
    goals = {(w["workload"], v["variant"]): v for w in reference["workloads"] for v in w["variants"] if "goal" in v}
    assert set(goals) == set(c_reference.GOALS)
    for key, variant in goals.items():
        ratio, bound = c_reference.GOALS[key]
        assert variant["goal"] == {"ratio": ratio, "at_least": bound, "met": variant[ratio]["median"] >= bound}
    assert table.count("; goal >= ") == len(c_reference.GOALS)


@needs_cc
def test_c_reference_features_forward_as_one_lcore(result, tmp_path_factory):
    """The feature rows forward the same traffic: several lcores and --jobs write the same
    port files as one lcore; the trace run writes a line per packet."""
    base = next(tmp_path_factory.getbasetemp().rglob("reference/random-64"))
    for port in range(4):
        one = (base / "out-lpm-jobs-1" / f"port{port}.pcap").read_bytes()
        assert (base / "out-4-lcores-jobs-2" / f"port{port}.pcap").read_bytes() == \
            (base / "out-4-lcores-x-2-rss-queues" / f"port{port}.pcap").read_bytes()
        assert (base / "out-trace-all" / f"port{port}.pcap").read_bytes() == one
    lines = (base / "out-trace-all" / "trace.jsonl").read_bytes().count(b"\n")
    assert lines == 4096
    # the pcapng rows read the same traffic as pcapng and forward the same frames
    for port in range(4):
        assert (base / "in-pcapng" / f"port{port}.pcapng").stat().st_size > 0
        frames = [read_pcap_frames(base / out / f"port{port}.{ext}") for out, ext in
                  (("out-lpm-jobs-1", "pcap"), ("out-pcapng-inputs", "pcapng"), ("out-annotate", "pcapng"))]
        assert frames[0] == frames[1] == frames[2] and frames[0]
    # their start-up runs read the interface blocks and no packet
    assert json.loads((base / "out-pcapng-inputs-start-up" / "stats.json").read_text())["totals"]["rx"] == 0


@needs_cc
@pytest.mark.parametrize("workload", ["ipv4-cont-burst-64", "ipv4-4streamsx8-64", "random-64", "ipv4-cont-burst-imix"])
def test_c_reference_forwards_as_run_does(result, tmp_path_factory, workload):
    """The C forwarder does l3fwd's work: its outputs are byte for byte run's (lpm, multi)."""
    base = next(tmp_path_factory.getbasetemp().rglob(f"reference/{workload}"))
    for port in range(4):
        assert (base / "out-c" / f"port{port}.pcap").read_bytes() == \
            (base / "out-lpm-jobs-1" / f"port{port}.pcap").read_bytes()


@needs_cc
def test_c_reference_on_the_shipped_mixed_pcaps(tmp_path):
    """Bad headers, short frames, VLAN, IPv6, ARP: the same bytes as run (lpm, multi)."""
    binary, _ = c_reference.build(tmp_path)
    pcaps = REPO / "pcaps"
    (tmp_path / "c").mkdir()
    subprocess.run([str(binary), str(tmp_path / "c"), *[str(pcaps / f"port{p}.pcap") for p in range(4)]], check=True,
                   capture_output=True)
    run(RunOptions(inputs=find_inputs([str(pcaps)]), outdir=tmp_path / "sim"))
    for port in range(4):
        assert (tmp_path / "c" / f"port{port}.pcap").read_bytes() == (tmp_path / "sim" / f"port{port}.pcap").read_bytes()


def test_c_reference_skipped_with_a_note_without_a_compiler(tmp_path, monkeypatch):
    monkeypatch.setattr(c_reference, "COMPILERS", ("no-such-compiler",))
    skipped = c_reference.measure(tmp_path, 64, rounds=1)
    assert skipped == {"skipped": "no C compiler (cc, gcc or clang) on PATH"}
    assert "C reference skipped: no C compiler" in format_table({"rows": [], "reference": skipped})
