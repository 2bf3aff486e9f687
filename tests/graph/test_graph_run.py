"""``run --app graph``: the golden runs' forwarding from a directory of captures, the
options it refuses, the frames too short for what a node reads (a documented choice),
and a property test against an oracle written from l3fwd_graph.md alone (``ipaddress``
for the routes, the walk of 256 records, the rewrite's two checksum paths)."""
from __future__ import annotations

import ipaddress
import json
import struct

from frames import assert_same_records, read_pcap_frames, write_pcap
from hypothesis import given, settings
from hypothesis import strategies as st
from refusals import assert_refused
from forwarding import GOLDEN

from l3fwd_sim.graph.run import GraphOptions, run_graph

GRAPH = GOLDEN / "l3fwd_graph"


def test_run_app_graph_forwards_as_the_real_program(cli, tmp_path):
    """Golden run 00 (one worker) and 02 (two workers: per-queue files and their merge)."""
    result = cli("run", "--app", "graph", str(GRAPH / "in" / "mix2"), "-o", str(tmp_path / "one"), "--quiet")
    assert result.exit_code == 0, result.output
    for port in (0, 1):
        assert_same_records(GRAPH / "expected-00" / f"port{port}.q0.pcap", tmp_path / "one" / f"port{port}.pcap")
    result = cli("run", "--app", "graph", str(GRAPH / "in" / "mix2"), "-o", str(tmp_path / "two"), "--quiet",
                 "--config", "(0,0,1),(1,0,2)", "--per-queue")
    assert result.exit_code == 0, result.output
    result = cli("run", "--app", "graph", str(GRAPH / "in" / "mix2"), "-o", str(tmp_path / "merged"), "--quiet",
                 "--config", "(0,0,1),(1,0,2)")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "merged").iterdir()) == ["port0.pcap", "port1.pcap", "stats.json"]
    for port in (0, 1):
        queues = [read_pcap_frames(GRAPH / "expected-02" / f"port{port}.q{q}.pcap") for q in (0, 1)]
        for q in (0, 1):
            assert_same_records(GRAPH / "expected-02" / f"port{port}.q{q}.pcap", tmp_path / "two" / f"port{port}.q{q}.pcap")
        merged = read_pcap_frames(tmp_path / "two" / f"port{port}.pcap")
        assert sorted(merged) == sorted(queues[0] + queues[1])
        assert (tmp_path / "merged" / f"port{port}.pcap").read_bytes() == (tmp_path / "two" / f"port{port}.pcap").read_bytes()
    stats = json.loads((tmp_path / "two" / "stats.json").read_text())
    assert sorted(stats["graph"]["graphs"]) == ["worker_1", "worker_2"]
    assert [g["tx_queue"] for g in stats["graph"]["graphs"].values()] == [0, 1]


def test_options_without_meaning_for_the_graph_are_refused(cli, tmp_path):
    for option in (["--lookup", "em"], ["--pipeline", "simple"], ["--rule_ipv4", "x.cfg"], ["--trace", "all"]):
        result = cli("run", "--app", "graph", str(GRAPH / "in" / "mix2"), "-o", str(tmp_path / "o"), *option)
        assert_refused(result, f"--app graph: {option[0]}", "no meaning for dpdk-l3fwd-graph")
    assert not (tmp_path / "o").exists()


def test_other_releases_and_rule_counters_are_refused_saying_why(cli, tmp_path):
    """Only v26.07's l3fwd-graph is modelled (--dpdk or L3FWD_SIM_DPDK naming another is
    refused, not guessed); a graph run has no rule counters to show, and says where its
    node counters are."""
    line = ["-l", "0,1", "--vdev", f"net_pcap0,rx_pcap={GRAPH / 'in' / 'csum' / 'port0.pcap'},tx_pcap={tmp_path / 'a'},"
            f"tx_pcap={tmp_path / 'b'}", "--", "-p", "0x1", "--config", "(0,0,1)"]
    assert_refused(cli("dpdk-l3fwd-graph", "--dpdk", "22.11", *line), "DPDK 22.11 is not modelled for l3fwd-graph")
    assert cli("dpdk-l3fwd-graph", "--dpdk", "26.07", *line).exit_code == 0
    out = tmp_path / "out"
    assert cli("run", "--app", "graph", str(GRAPH / "in" / "csum"), "-o", str(out), "--quiet").exit_code == 0
    assert json.loads((out / "stats.json").read_text())["options"]["dpdk"] == "26.07"
    assert_refused(cli("rules", "hits", str(out)), "a dpdk-l3fwd-graph run has built-in routes")


def _ipv4(dst: str, ttl: int = 64, checksum: int = 0x1234, size: int = 60) -> bytes:
    header = struct.pack(">BBHHHBBH4s4s", 0x45, 0, size - 14, 0, 0, ttl, 17, checksum,
                         bytes([10, 0, 0, 1]), ipaddress.IPv4Address(dst).packed)
    return (bytes(12) + b"\x08\x00" + header).ljust(size, b"\x00")


def _ipv6(dst: str, hop_limit: int = 64, size: int = 78) -> bytes:
    header = struct.pack(">IHBB16s16s", 6 << 28, size - 54, 17, hop_limit, bytes(16), ipaddress.IPv6Address(dst).packed)
    return (bytes(12) + b"\x86\xdd" + header).ljust(size, b"\x00")


def test_frames_too_short_for_what_a_node_reads_are_dropped_as_truncated(tmp_path):
    """IPv4 under 34 bytes, IPv6 under 54, anything under 14: the real nodes read stale
    mbuf bytes there (undefined); dropped as ``truncated``, still counted by the node
    that read them, not as a lookup miss; the packets around them forwarded as usual."""
    frames = [_ipv4("198.18.1.1"), _ipv4("198.18.1.1")[:33], _ipv6("2001:db08:1234::1")[:53],
              _ipv4("198.18.0.9")[:13], _ipv6("2001:db08:1234::7"), _ipv4("10.0.0.1")]
    write_pcap(tmp_path / "in.pcap", frames)
    stats = run_graph(GraphOptions(inputs={0: tmp_path / "in.pcap"}, outdir=tmp_path / "out", portmask=0x3))
    assert stats["drops"]["truncated"] == 3 and stats["drops"]["ip4_lookup_miss"] == 1
    nodes = stats["graph"]["nodes"]
    assert nodes["ip4_lookup"]["objs"] == 3 and nodes["ip4_lookup"]["xstats"]["ip4_lookup_error"] == 1
    assert nodes["ip6_lookup"]["objs"] == 2 and nodes["pkt_cls"]["objs"] == 6
    assert len(read_pcap_frames(tmp_path / "out" / "port1.pcap")) == 2        # 198.18.1.1 and the /48 (port 1)
    assert read_pcap_frames(tmp_path / "out" / "port0.pcap") == []


# ---- the oracle ---------------------------------------------------------------------------
def _oracle(frames: list[bytes], portmask: int) -> dict[int, list[bytes]]:
    """What each TX port sends of one port's capture polled by one worker, from
    l3fwd_graph.md: walks of 256 records; routes 198.18.K.0/24 -> K (K < 8 in -p) and
    2001:db08:1234::/48 -> the highest enabled port below 8; MACs, TTL - 1, the IPv4
    checksum on its two paths, hop limit - 1. Per port, each family keeps arrival order
    (which family's block comes first per walk is pkt_cls's speculation: not modelled
    here, so each family is compared on its own)."""
    enabled = [p for p in range(8) if portmask >> p & 1]
    sent: dict[int, list[tuple[int, bytes]]] = {}
    for start in range(0, len(frames), 256):
        walk = frames[start:start + 256]
        routed4 = []
        for frame in walk:
            if len(frame) >= 34 and frame[12:14] == b"\x08\x00":
                dst = ipaddress.IPv4Address(frame[30:34])
                if dst in ipaddress.IPv4Network("198.18.0.0/21") and dst.packed[2] in enabled:
                    routed4.append(frame)
        full = len(routed4) - len(routed4) % 4
        for i, frame in enumerate(routed4):
            port = frame[32]
            out = bytearray(frame)
            out[:12] = bytes([2, 0, 0, 0, 0, port]) + b"\x02pcap" + bytes([port])
            out[22] = (out[22] - 1) % 256
            value = out[24] | out[25] << 8
            value = (value + 1 - 0xFFFF if value + 1 > 0xFFFF else value + 1) if i < full else \
                (0 if (value + 1) % 0x10000 == 0xFFFF else (value + 1) % 0x10000)
            out[24:26] = bytes([value & 0xFF, value >> 8])
            sent.setdefault(port, []).append((4, bytes(out)))
        for frame in walk:
            if len(frame) >= 54 and frame[12:14] == b"\x86\xdd" and enabled and \
                    ipaddress.IPv6Address(frame[38:54]) in ipaddress.IPv6Network("2001:db08:1234::/48"):
                port = enabled[-1]
                out = bytearray(frame)
                out[:12] = bytes([2, 0, 0, 0, 0, port]) + b"\x02pcap" + bytes([port])
                out[21] = (out[21] - 1) % 256
                sent.setdefault(port, []).append((6, bytes(out)))
    return sent


def _family(frame: bytes) -> int:
    return 4 if frame[12:14] == b"\x08\x00" else 6


_V4 = st.builds(_ipv4, st.sampled_from(["198.18.0.5", "198.18.1.7", "198.18.2.1", "198.18.3.200", "198.18.9.1",
                                        "10.1.1.1"]), st.integers(0, 255),
                st.sampled_from([0xFFFF, 0xFEFF, 0x0000, 0xFFFE, 0x1234]), st.sampled_from([60, 64, 100]))
_V6 = st.builds(_ipv6, st.sampled_from(["2001:db08:1234::1", "2001:db08:1234:ffff::9", "2001:db08:1235::1", "::1"]),
                st.integers(0, 255), st.sampled_from([78, 90]))
_OTHER = st.sampled_from([bytes(12) + b"\x08\x06" + bytes(46), bytes(12) + b"\x81\x00" + bytes(46),
                          _ipv4("198.18.1.1")[:30], _ipv6("2001:db08:1234::1")[:50]])


@settings(max_examples=40)
@given(frames=st.lists(st.one_of(_V4, _V4, _V6, _OTHER), min_size=1, max_size=700),
       portmask=st.sampled_from([0x1, 0x3, 0x5, 0xF, 0x6]))
def test_every_packet_as_the_reference_says(tmp_path_factory, frames, portmask):
    tmp = tmp_path_factory.mktemp("graph")
    write_pcap(tmp / "in.pcap", frames)
    receiving = min(p for p in range(4) if portmask >> p & 1)
    run_graph(GraphOptions(inputs={receiving: tmp / "in.pcap"}, outdir=tmp / "out", portmask=portmask))
    want = _oracle(frames, portmask)
    for port in range(4):
        if not portmask >> port & 1:
            continue
        got = read_pcap_frames(tmp / "out" / f"port{port}.pcap")
        for family in (4, 6):
            assert [f for f in got if _family(f) == family] == [f for fam, f in want.get(port, []) if fam == family]
