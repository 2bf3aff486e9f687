"""dpdk-l3fwd-graph as real v26.07 ran it (tests/data/golden/l3fwd_graph; its README says
what each run shows): every forwarding run's ``tx_pcap`` files record for record the
same as the real program's, both kernels; every refusal its decisive line.

The node counters are checked against what the real TX files and the inputs say,
counted apart (scapy-free: the bytes themselves): ethdev_tx-P's objects are the packets
in port P's files, pkt_cls's the packets received, ip4_lookup's the IPv4 EtherTypes
among them."""
from __future__ import annotations

import itertools
import json

import pytest
from dpdk_lines import invoke
from forwarding import GOLDEN
from frames import assert_same_records, read_pcap_frames
from refusals import assert_refused
from twins import KERNELS

from l3fwd_sim import compiled

GRAPH = GOLDEN / "l3fwd_graph"
RUNS = json.loads((GRAPH / "runs.json").read_text())
FORWARDING = sorted(key for key, run in RUNS.items() if "error" not in run)
REFUSED = sorted(key for key, run in RUNS.items() if "error" in run)


def argv_of(expected: str, out) -> list[str]:
    return [word.replace("{in}", str(GRAPH / "in")).replace("{out}", str(out)) for word in RUNS[expected]["argv"][1:]]


def run_golden(expected: str, out, kernels: str = "numpy", stats_file=None):
    env = {"L3FWD_SIM_STATS": str(stats_file)} if stats_file else None
    with compiled.using(kernels):
        return invoke("dpdk-l3fwd-graph", *argv_of(expected, out), env=env)


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("expected", FORWARDING, ids=lambda e: f"{e}-{RUNS[e]['id']}")
def test_forwarding_as_real_l3fwd_graph(tmp_path, expected, kernels):
    result = run_golden(expected, tmp_path, kernels)
    assert result.exit_code == 0, result.output
    want = sorted(p.name for p in (GRAPH / expected).glob("port*.pcap"))
    assert sorted(p.name for p in tmp_path.glob("port*.pcap")) == want
    for name in want:
        assert_same_records(GRAPH / expected / name, tmp_path / name, name)


@pytest.mark.parametrize("expected", REFUSED, ids=lambda e: f"{e}-{RUNS[e]['id']}")
def test_refusals_as_real_l3fwd_graph(tmp_path, expected):
    assert_refused(run_golden(expected, tmp_path), RUNS[expected]["error"])
    assert list(tmp_path.iterdir()) == []


def _ethertypes(path) -> list[int]:
    return [int.from_bytes(frame[12:14], "big") for frame in read_pcap_frames(path)]


@pytest.mark.parametrize("expected", ["expected-08", "expected-09", "expected-13", "expected-14"])
def test_node_counters_agree_with_the_real_outputs(tmp_path, expected):
    stats_file = tmp_path / "stats.json"
    (tmp_path / "out").mkdir()
    assert run_golden(expected, tmp_path / "out", stats_file=stats_file).exit_code == 0
    stats = json.loads(stats_file.read_text())
    nodes = stats["graph"]["nodes"]
    for port in range(4 if "mix4" in RUNS[expected]["id"] else 2):
        sent = sum(len(read_pcap_frames(f)) for f in (GRAPH / expected).glob(f"port{port}.q*.pcap"))
        assert nodes[f"ethdev_tx-{port}"]["objs"] == sent == stats["ports"][str(port)]["out"]
    inputs = [p for word in RUNS[expected]["argv"] if word.startswith("net_pcap")
              for p in (kv.partition("=")[2] for kv in word.split(",")) if "{in}" in p]
    frames = [f for p in inputs for f in read_pcap_frames(p.replace("{in}", str(GRAPH / "in")))]
    received = [f for f in frames if len(f) <= 2048]
    assert nodes["pkt_cls"]["objs"] == len(received) == sum(n["objs"] for name, n in nodes.items()
                                                            if name.startswith("ethdev_rx-"))
    assert nodes["ip4_lookup"]["objs"] == sum(f[12:14] == b"\x08\x00" for f in received)
    assert nodes["ip6_lookup"]["objs"] == sum(f[12:14] == b"\x86\xdd" for f in received)
    drops = stats["drops"]
    assert nodes["ip4_lookup"]["xstats"]["ip4_lookup_error"] == drops["ip4_lookup_miss"]
    assert drops["oversize"] == len(frames) - len(received)
    assert nodes["pkt_drop"]["objs"] == stats["totals"]["dropped"] - drops["oversize"]
    assert stats["totals"]["rx"] == stats["totals"]["tx"] + stats["totals"]["dropped"] == len(frames)
    # every edge's packets: what leaves a node is what it was given
    edges = stats["graph"]["edges"]
    for name in ("pkt_cls", "ip4_lookup", "ip6_lookup", "ip4_rewrite", "ip6_rewrite"):
        assert sum(n for edge, n in edges.items() if edge.startswith(f"{name} -> ")) == nodes[name]["objs"]


def test_the_trace_holds_what_each_node_was_given(tmp_path):
    """--pcap-enable: run 07's 200 packets are the first walk's pkt_cls call (256
    packets); with 1024, the pcapng's ethdev_tx-P packets are the first packets of port
    P's real TX file, in order, and ip4_lookup is not in it. The TX files are as without."""
    from scapy.utils import PcapNgReader

    def traced(out):
        (trace,) = out.glob("trace_??????.pcapng")
        packets = list(PcapNgReader(str(trace)))
        return packets, [p.comments[0].decode() for p in packets]

    assert run_golden("expected-07", tmp_path).exit_code == 0
    packets, comments = traced(tmp_path)
    assert len(packets) == 200 and set(comments) == {"worker_1: pkt_cls"}
    out = tmp_path / "1024"
    out.mkdir()
    argv = argv_of("expected-02", out) + ["--pcap-enable", "--pcap-file-name", str(out / "trace")]
    assert invoke("dpdk-l3fwd-graph", *argv).exit_code == 0
    packets, comments = traced(out)
    assert len(packets) == 2048 and {c.partition(": ")[0] for c in comments} == {"worker_1", "worker_2"}
    nodes = {c.partition(": ")[2] for c in comments}
    assert "ip4_lookup" not in nodes and {"pkt_cls", "ip4_rewrite", "ethdev_tx-0", "ip6_lookup"} <= nodes
    for port, (graph, queue) in itertools.product((0, 1), (("worker_1", 0), ("worker_2", 1))):
        name = f"port{port}.q{queue}.pcap"
        assert_same_records(GRAPH / "expected-02" / name, out / name)
        sent = [bytes(p) for p, c in zip(packets, comments) if c == f"{graph}: ethdev_tx-{port}"]
        real = read_pcap_frames(GRAPH / "expected-02" / name)
        assert sent and sent == real[:len(sent)]


def test_two_rx_queues_and_a_full_trace_is_the_real_crash(tmp_path):
    """Two RX queues on one lcore with --pcap-enable's default 1024: the real program
    copies more than 256 packets into its 256-entry stack array and crashes; refused,
    saying so, nothing written. 256 is safe."""
    argv = argv_of("expected-13", tmp_path) + ["--pcap-enable", "--pcap-file-name", str(tmp_path / "t")]
    assert_refused(invoke("dpdk-l3fwd-graph", *argv), "crashes here (SIGSEGV)", "--pcap-num-cap 256")
    assert list(tmp_path.iterdir()) == []
    assert invoke("dpdk-l3fwd-graph", *argv, "--pcap-num-cap", "256").exit_code == 0
    assert_same_records(GRAPH / "expected-13" / "port0.q0.pcap", tmp_path / "port0.q0.pcap")
