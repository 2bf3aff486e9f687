"""``l3fwd-sim dpdk-testpmd``: real dpdk-testpmd v26.07 command lines, verbatim, over
net_pcap ports. The golden runs replayed as the command lines that made them; the RX
flush real testpmd does without ``--no-flush-rx``; several queues per port against the
one-queue model run queue by queue; the refusals."""
from __future__ import annotations

import json

import pytest
from dpdk_lines import invoke, pmd_line
from forwarding import GOLDEN, run_cli
from frames import assert_same_records, read_pcap_frames, read_pcap_records, write_pcap
from refusals import assert_refused

GOLDEN_TESTPMD = GOLDEN / "testpmd"
MODES = sorted(p.name.removeprefix("expected-") for p in GOLDEN_TESTPMD.glob("expected-*"))


@pytest.mark.parametrize("mode", MODES)
def test_golden_command_line(tmp_path, mode):
    argv, outputs = pmd_line(GOLDEN_TESTPMD / "in", mode, tmp_path)
    result = invoke("dpdk-testpmd", *argv)
    assert result.exit_code == 0, result.output
    assert f"Set {mode} packet forwarding mode" in result.stdout
    for want_file in sorted((GOLDEN_TESTPMD / f"expected-{mode}").glob("port*.pcap")):
        assert_same_records(want_file, outputs[want_file.name], f"{mode}/{want_file.name}")


def test_without_no_flush_rx_nothing_is_forwarded(tmp_path):
    """testpmd drains every RX queue before forwarding (flush_fwd_rx_queues): over
    net_pcap the whole capture, so every tx file stays an empty pcap."""
    argv, outputs = pmd_line(GOLDEN_TESTPMD / "in", "io", tmp_path)
    argv.remove("--no-flush-rx")
    result = invoke("dpdk-testpmd", *argv, env={"L3FWD_SIM_STATS": str(tmp_path / "stats.json")})
    assert result.exit_code == 0 and "add --no-flush-rx" in result.stderr
    assert all(read_pcap_frames(path) == [] for path in outputs.values())
    stats = json.loads((tmp_path / "stats.json").read_text())
    received = sum(len(read_pcap_frames(p)) for p in (GOLDEN_TESTPMD / "in").glob("port*.pcap"))
    assert stats["totals"]["rx"] == stats["drops"]["rx_flushed"] == received


def _queue_line(tmp_path, queues: dict[int, list], tx: int, app: str, lcores: str = "0,1") -> tuple[list, dict]:
    """Two ports, each RX queue its own file (frames given), ``tx`` tx_pcap per port."""
    argv = ["-l", lcores, "--no-huge", "--no-pci"]
    for port, per_queue in queues.items():
        rx = []
        for q, frames in enumerate(per_queue):
            write_pcap(tmp_path / f"in{port}.{q}.pcap", frames)
            rx.append(f"rx_pcap={tmp_path / f'in{port}.{q}.pcap'}")
        txs = [f"tx_pcap={tmp_path / f'out{port}.{k}.pcap'}" for k in range(tx)]
        argv += ["--vdev", ",".join([f"net_pcap{port}", *rx, *txs])]
    return argv + ["--", "--no-flush-rx", *app.split()], {(p, k): tmp_path / f"out{p}.{k}.pcap"
                                                          for p in queues for k in range(tx)}


QUEUES = [(2, 2, 1), (2, 2, 2), (2, 1, 1), (1, 2, 1), (3, 3, 2)]


@pytest.mark.parametrize("mode,rxq,txq,cores", [(mode, *q) for mode in ("io", "macswap", "icmpecho") for q in QUEUES
                                                if mode != "icmpecho" or q[1] >= q[0]])
def test_queues_against_the_one_queue_model(tmp_path, mode, rxq, txq, cores):
    """--rxq/--txq: each TX queue q carries what the one-queue model makes of RX queue q
    of its peer port (both counts above 1: every queue up to the smaller; otherwise queue
    0 only; icmpecho: every RX queue, on its own port). --nb-cores changes nothing."""
    frames = {p: read_pcap_frames(GOLDEN_TESTPMD / "in" / f"port{p}.pcap") for p in (0, 1)}
    queues = {p: [f[q::3] for q in range(3)] for p, f in frames.items()}
    argv, outputs = _queue_line(tmp_path, queues, max(txq, 3), f"--forward-mode={mode} --rxq={rxq} --txq={txq} "
                                f"--nb-cores={cores}", "0-2")
    result = invoke("dpdk-testpmd", *argv, env={"L3FWD_SIM_STATS": str(tmp_path / "stats.json")})
    assert result.exit_code == 0, result.output
    forwarded = range(rxq) if mode == "icmpecho" else range(min(rxq, txq)) if rxq > 1 and txq > 1 else [0]
    for q in range(max(txq, 3)):
        model = tmp_path / f"model{q}"
        if q in forwarded:
            assert run_cli("testpmd", f"0={tmp_path / f'in0.{q}.pcap'}", f"1={tmp_path / f'in1.{q}.pcap'}",
                           "-o", model, "--forward-mode", mode, "--quiet").exit_code == 0
        for port in (0, 1):
            want = read_pcap_frames(model / f"port{port}.pcap") if q in forwarded else []
            assert read_pcap_frames(outputs[port, q]) == want, (port, q)
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["totals"]["rx"] == sum(len(queues[p][q]) for p in (0, 1) for q in forwarded)


def test_rxonly_receives_and_frees(tmp_path):
    argv, outputs = pmd_line(GOLDEN_TESTPMD / "in", "rxonly", tmp_path)
    result = invoke("dpdk-testpmd", *argv, env={"L3FWD_SIM_STATS": str(tmp_path / "s.json")})
    assert result.exit_code == 0
    assert all(read_pcap_frames(p) == [] for p in outputs.values())
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["drops"]["rxonly"] == stats["totals"]["rx"] > 0


def test_unknown_mode_keeps_io(tmp_path):
    """set_pkt_forwarding_mode: an unknown name is reported and the mode stays io."""
    argv, outputs = pmd_line(GOLDEN_TESTPMD / "in", "bogus", tmp_path)
    result = invoke("dpdk-testpmd", *argv)
    assert result.exit_code == 0 and "Invalid bogus packet forwarding mode" in result.stdout
    for name, path in outputs.items():
        assert read_pcap_frames(path) == read_pcap_frames(GOLDEN_TESTPMD / "expected-io" / name)


TESTPMD_REFUSALS = [
    ("-i", "0,1", "interactive mode is not modelled"),
    ("--interactive", "0,1", "interactive mode is not modelled"),
    ("--forward-mode=txonly", "0,1", "not modelled"),
    ("--forward-mode=csum", "0,1", "not modelled"),
    ("--tx-first", "0,1", "not modelled"),
    ("--nb-cores=2", "0,1", "nb-cores should be > 0 and <= 1"),
    ("--rxq=2", "0,1", "rxq 2 invalid - must be >= 0 && <= 1"),
    ("--txq=3", "0,1", "txq 3 invalid - must be >= 0 && <= 1"),
    ("--burst=0", "0,1", "PMD does not recommend a burst size"),
    ("--burst=600", "0,1", "burst must be between1 and 512"),
    ("--port-topology=ring", "0,1", "port-topology 'ring' invalid"),
    ("--frobnicate", "0,1", "unrecognized option '--frobnicate'"),
    ("", "0", "No cores defined for forwarding"),
]


@pytest.mark.parametrize("app,lcores,needle", TESTPMD_REFUSALS, ids=[r[0] or r[2][:20] for r in TESTPMD_REFUSALS])
def test_refusals(tmp_path, app, lcores, needle):
    argv, outputs = pmd_line(GOLDEN_TESTPMD / "in", "io", tmp_path)
    argv[1] = lcores
    assert_refused(invoke("dpdk-testpmd", *argv, *app.split()), needle)
    assert list(tmp_path.iterdir()) == []


def test_icmpecho_needs_a_tx_queue_per_rx_queue(tmp_path):
    """icmp_echo_config_setup sends on TX queue q what RX queue q received; with fewer TX
    queues that queue does not exist (undefined in testpmd): refused in one line."""
    frames = read_pcap_frames(GOLDEN_TESTPMD / "in" / "port0.pcap")
    argv, _ = _queue_line(tmp_path, {0: [frames[::2], frames[1::2]]}, 1, "--forward-mode=icmpecho --rxq=2 --txq=1")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert_refused(invoke("dpdk-testpmd", *argv), "icmpecho replies on the RX queue's own TX queue")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_rx_pcap_read_as_libpcap_reads_it(tmp_path):
    """The io engine sends what net_pcap received: a Linux cooked capture's records as
    they are stored (libpcap never converts a link type), a snaplen-cut record as
    captured length = wire length; ``testpmd`` itself converts to Ethernet and says so."""
    edges = GOLDEN / "capture_edges" / "in"
    argv = ["-l", "0,1", "--no-pci", "--vdev", f"net_pcap0,rx_pcap={edges / 'sll113.pcap'},tx_pcap={tmp_path / 'a.pcap'}",
            "--vdev", f"net_pcap1,rx_pcap={edges / 'snap96.pcap'},tx_pcap={tmp_path / 'b.pcap'}",
            "--", "--no-flush-rx", "--forward-mode=io"]
    result = invoke("dpdk-testpmd", *argv)
    assert result.exit_code == 0, result.output
    assert "real net_pcap" not in result.stderr
    stored = {name: [(len(data), len(data), data) for data in read_pcap_frames(edges / name)]
              for name in ("sll113.pcap", "snap96.pcap")}
    assert read_pcap_records(tmp_path / "b.pcap") == stored["sll113.pcap"]      # paired: port 0's go out of port 1
    assert read_pcap_records(tmp_path / "a.pcap") == stored["snap96.pcap"]
    converted = run_cli("testpmd", f"0={edges / 'sll113.pcap'}", "-o", tmp_path / "run", "--forward-mode", "io")
    assert converted.exit_code == 0 and "link type 113 (Linux cooked (SLL)) converted" in converted.stderr
