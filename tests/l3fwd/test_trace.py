"""``run --trace``: every received packet traced once, each traced rule the one a brute
force over the rule file says decides, each tx_port/tx_index the output record that
came from that input record, the same trace whatever --jobs, drops with their reason
and detail; the key texts and drop details of the compiled twins (l3fwd/trace.c,
dataplane/jsonlines.c) those of the numpy definitions; a failed trace write reported."""
from __future__ import annotations

import ipaddress
import json
import random
from pathlib import Path

import numpy as np
import pytest
from frames import mixed_frames, read_pcap_frames, write_pcap
from hypothesis import example, given, settings
from hypothesis import strategies as st
from oracle import l3fwd_oracle
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from scapy.packet import Raw
from twins import KERNELS, needs_twins

from l3fwd_sim import RunOptions, compiled, run
from l3fwd_sim.dataplane.stats import RunStats
from l3fwd_sim.dataplane.trace import SNAPSHOT_FROM, SNAPSHOT_TO, TRACE_FILE, TraceFile, TraceRecord
from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd import ptype
from l3fwd_sim.l3fwd.keys import key_text
from l3fwd_sim.l3fwd.pipelines import DROP_REASONS
from l3fwd_sim.l3fwd.trace import MISS_DETAIL, TABLES, _detail, _sent_detail, describe, details, key_block

PORTMASK = 0x7                       # port 3 exists in the rule files but is not enabled


def _ETH():
    return Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02")     # explicit: scapy resolves nothing


def _traced(tmp_path: Path, inputs: dict[int, list[bytes]], name: str = "out", **options):
    """Run with ``--trace all`` (unless ``trace`` is given); (trace lines, stats, outputs per port, indir)."""
    indir = tmp_path / "in"
    indir.mkdir(exist_ok=True)
    paths = {}
    for port, frames in inputs.items():
        paths[port] = indir / f"port{port}.pcap"
        if not paths[port].exists():
            write_pcap(paths[port], frames)
    outdir = tmp_path / name
    options.setdefault("trace", "all")
    options.setdefault("portmask", PORTMASK)
    stats = run(RunOptions(inputs=paths, outdir=outdir, **options))
    lines = [json.loads(line) for line in (outdir / "trace.jsonl").read_text().splitlines()]
    outputs = {int(p): read_pcap_frames(outdir / f"port{p}.pcap") for p in stats["ports"]}
    return lines, stats, outputs, outdir


# ------------------------------------------------------------------ random rule files
def _lpm_rules(rng: random.Random, family: int, fib: bool) -> list[tuple[str, int, int]]:
    """Overlapping prefixes around a few bases, duplicates with other ports, /0 for fib."""
    bases = (["10.1.2.3", "10.200.0.0", "192.0.2.77"] if family == 4
             else ["2001:db8:1:2::3", "2001:db8:ff00::", "fd00::1:0:0:9"])
    bits = 32 if family == 4 else 128
    rules = []
    for _ in range(rng.randint(5, 30)):
        depth = rng.choice([rng.randint(1, bits), rng.randint(8, 24), rng.randint(25, bits)])
        network = ipaddress.ip_network(f"{rng.choice(bases)}/{depth}", strict=False)
        rules.append((str(network.network_address), depth, rng.randint(0, 3)))
        if rng.random() < 0.25:                       # a later duplicate of an earlier prefix
            addr, depth, _ = rng.choice(rules)
            rules.append((addr, depth, rng.randint(0, 3)))
    if fib and rng.random() < 0.7:
        rules.insert(rng.randrange(len(rules)), ("0.0.0.0" if family == 4 else "::", 0, rng.randint(0, 3)))
    return rules


def _write_rules(path: Path, lines: list[str], rng: random.Random) -> list[int]:
    """Write rule ``lines`` with comments and blank lines between; their line numbers."""
    text, numbers = [], []
    for line in lines:
        while rng.random() < 0.3:
            text.append(rng.choice(["# a comment", ""]))
        text.append(line)
        numbers.append(len(text))
    path.write_text("\n".join(text) + "\n")
    return numbers


def _lpm_oracle(rules, numbers, address: str):
    """(line, port) of the longest enabled prefix holding ``address`` (ties: the later line)."""
    best = None
    ip = ipaddress.ip_address(address)
    for (addr, depth, port), line in zip(rules, numbers):
        if PORTMASK >> port & 1 and ip in ipaddress.ip_network(f"{addr}/{depth}"):
            if best is None or depth >= best[0]:
                best = (depth, line, port)
    return None if best is None else best[1:]


def _probe_addresses(rng: random.Random, rules, family: int, n: int) -> list[str]:
    """Addresses inside, at the edges of and next to the rules' prefixes."""
    out = []
    for _ in range(n):
        addr, depth, _ = rng.choice(rules)
        network = ipaddress.ip_network(f"{addr}/{depth}")
        pick = rng.choice([network.network_address, network.broadcast_address,
                           network.network_address + rng.randrange(network.num_addresses)])
        kind = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
        out.append(str(kind((int(pick) + rng.choice([0, 0, 1, -1])) % (1 << (32 if family == 4 else 128)))))
    return out


@pytest.mark.parametrize("lookup", ["lpm", "fib"])
@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("seed", range(4))
def test_traced_lpm_rule_is_the_longest_prefix_by_brute_force(tmp_path, seed, pipeline, lookup):
    rng = random.Random(f"trace-lpm/{seed}")
    rules = {family: _lpm_rules(rng, family, lookup == "fib") for family in (4, 6)}
    numbers = {family: _write_rules(tmp_path / f"v{family}.cfg",
                                    [f"R{a}/{d} {p}" for a, d, p in rules[family]], rng) for family in (4, 6)}
    frames = []
    for family, layer in ((4, IP), (6, IPv6)):
        for address in _probe_addresses(rng, rules[family], family, 60):
            frames.append(bytes(_ETH() / layer(dst=address) / UDP(sport=1, dport=2) / Raw(bytes(8))))
    rng.shuffle(frames)
    lines, _, _, _ = _traced(tmp_path, {1: frames}, lookup=lookup, pipeline=pipeline,
                             rule_ipv4=tmp_path / "v4.cfg", rule_ipv6=tmp_path / "v6.cfg")
    assert len(lines) == len(frames)
    for line in lines:
        family = 4 if line["table"].endswith("4") else 6
        assert line["table"] == f"{lookup}{family}"
        expected = _lpm_oracle(rules[family], numbers[family], line["key"])
        if expected is None:
            assert line["rule"] is None and line["next_hop"] is None and line["tx_port"] == 1, line
        else:
            assert line["rule"] == {"file": str(tmp_path / f"v{family}.cfg"), "line": expected[0]}, line
            assert line["next_hop"] == expected[1] and line["tx_port"] == expected[1], line


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("ipv6", [False, True])
def test_traced_em_rule_is_the_later_duplicate(tmp_path, pipeline, ipv6):
    rng = random.Random(f"trace-em/{ipv6}")
    family = 6 if ipv6 else 4
    hosts = ["10.0.0.1", "10.0.0.2", "10.9.9.9"] if family == 4 else ["2001:db8::1", "2001:db8::2", "fd00::9"]
    flows = [(rng.choice(hosts), rng.choice(hosts), rng.choice([9, 53, 80]), rng.choice([9, 1000]),
              rng.choice([6, 17]), rng.randint(0, 3)) for _ in range(25)]
    numbers = _write_rules(tmp_path / f"em{family}.cfg", [f"R{d} {s} {dp} {sp} {pr} {p}" for d, s, dp, sp, pr, p in flows],
                           rng)
    (tmp_path / f"em{10 - family}.cfg").write_text("")
    expected = {}
    for (dst, src, dport, sport, proto, port), line in zip(flows, numbers):
        if PORTMASK >> port & 1:
            expected[(proto, src, sport, dst, dport)] = (line, port)
    layer = IP if family == 4 else IPv6
    frames = []
    for _ in range(150):
        proto, l4 = rng.choice([(6, TCP), (17, UDP)])
        dst, src = rng.choice(hosts), rng.choice(hosts)
        sport, dport = rng.choice([9, 1000]), rng.choice([9, 53, 80])
        frames.append(bytes(_ETH() / layer(src=src, dst=dst) / l4(sport=sport, dport=dport) / Raw(bytes(4))))
    lines, _, _, _ = _traced(tmp_path, {2: frames}, lookup="em", pipeline=pipeline, ipv6=ipv6,
                             rule_ipv4=tmp_path / "em4.cfg", rule_ipv6=tmp_path / "em6.cfg")
    assert len(lines) == len(frames)
    for line, frame in zip(lines, frames):
        packet = Ether(frame)
        ip = packet[layer]
        l4 = packet[TCP] if TCP in packet else packet[UDP]
        want = expected.get((6 if TCP in packet else 17, ip.src, l4.sport, ip.dst, l4.dport))
        assert line["table"] == f"em{family}"
        name = "tcp" if TCP in packet else "udp"
        endpoint = "{}:{}" if family == 4 else "[{}]:{}"
        assert line["key"] == f"{name} {endpoint.format(ip.src, l4.sport)} > {endpoint.format(ip.dst, l4.dport)}"
        if want is None:
            assert line["rule"] is None and line["next_hop"] is None and line["tx_port"] == 2, line
        else:
            assert line["rule"]["line"] == want[0] and line["next_hop"] == want[1] == line["tx_port"], line


def test_traced_acl_rule_is_the_first_match(tmp_path):
    rng = random.Random("trace-acl")
    rules4 = []
    for _ in range(20):
        src = f"10.0.{rng.randint(0, 3)}.0/{rng.choice([0, 16, 24])}"
        dst = f"192.0.2.{rng.choice([0, 128])}/{rng.choice([0, 24, 25])}"
        lo = rng.randint(0, 60)
        rules4.append((rng.choice("R@RR"), src, dst, (lo, lo + rng.randint(0, 40)), rng.choice([6, 17])))
    lines4 = [f"{kind}{src} {dst} 0 : 65535 {lo} : {hi} {proto}/0xff" + (f" {rng.randint(0, 2)}" if kind == "R" else "")
              for kind, src, dst, (lo, hi), proto in rules4]
    lines4.append("R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0 1")
    numbers = _write_rules(tmp_path / "acl4.cfg", lines4, rng)
    (tmp_path / "acl6.cfg").write_text("R0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0 0\n")
    frames, expected = [], []
    for _ in range(200):
        src, dst = f"10.0.{rng.randint(0, 4)}.{rng.randint(0, 255)}", f"192.0.2.{rng.randint(0, 255)}"
        proto, l4 = rng.choice([(6, TCP), (17, UDP)])
        dport = rng.randint(0, 110)
        frames.append(bytes(_ETH() / IP(src=src, dst=dst) / l4(sport=7, dport=dport) / Raw(bytes(4))))
        first = next(i for i, (kind, s, d, (lo, hi), p) in enumerate(rules4 + [("R", "0.0.0.0/0", "0.0.0.0/0", (0, 65535), None)])
                     if ipaddress.ip_address(src) in ipaddress.ip_network(s, strict=False)
                     and ipaddress.ip_address(dst) in ipaddress.ip_network(d, strict=False)
                     and lo <= dport <= hi and p in (None, proto))
        expected.append(numbers[first])
    lines, _, _, _ = _traced(tmp_path, {0: frames}, lookup="acl", rule_ipv4=tmp_path / "acl4.cfg",
                             rule_ipv6=tmp_path / "acl6.cfg")
    assert [line["rule"]["line"] for line in lines] == expected
    for line in lines:
        deny = lines4[numbers.index(line["rule"]["line"])].startswith("@")
        assert (line["drop"], line["next_hop"] is None) == (("acl_deny", True) if deny else (None, False)), line


# ------------------------------------------------------------------ where each packet went
def _same_packet(sent: bytes, received: bytes) -> bool:
    """``sent`` is ``received`` forwarded: all bytes equal but the MACs and, for IPv4,
    TTL and checksum."""
    keep = [i for i in range(12, len(received))
            if not (received[12:14] == b"\x08\x00" and i in (22, 24, 25))]
    return len(sent) == len(received) and all(sent[i] == received[i] for i in keep)


SCENARIOS = {
    "lpm": dict(lookup="lpm"),
    "em": dict(lookup="em"),
    "fib": dict(lookup="fib"),
    "lcores": dict(config="(0,0,0),(1,0,1),(2,0,1),(2,1,0)"),
    "rss": dict(config="(0,0,0),(0,1,0),(1,0,0),(2,0,0)"),
}


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_every_packet_traced_once_and_tx_index_points_at_its_output(tmp_path, scenario, pipeline):
    inputs = {port: mixed_frames(7, port, 300) for port in (0, 1, 2)}
    inputs[1].append(bytes(_ETH() / IP(dst="198.18.1.1") / UDP() / Raw(bytes(2100))))     # oversize: dropped on receive
    lines, stats, outputs, _ = _traced(tmp_path, inputs, pipeline=pipeline, rx_burst=7, chunk_packets=100,
                                       **SCENARIOS[scenario])
    received = sorted((port, i) for port, frames in inputs.items() for i in range(len(frames)))
    assert sorted((line["rx_port"], line["index"]) for line in lines) == received
    assert stats["trace"] == {"file": "trace.jsonl", "limit": "all", "packets": len(received), "dpdk": "26.07"}
    referenced = set()
    for line in lines:
        frame = inputs[line["rx_port"]][line["index"]]
        if line["drop"] is None:
            sent = outputs[line["tx_port"]][line["tx_index"]]
            assert _same_packet(sent, frame), line
            referenced.add((line["tx_port"], line["tx_index"]))
            # without a next hop (a miss, no lookup) sent back, and the detail says why; else none
            if line["next_hop"] is None:
                assert line["tx_port"] == line["rx_port"] and line["detail"].endswith(": sent back out of the "
                                                                                      "input port"), line
            else:
                assert line["detail"] is None, line
        else:
            assert line["tx_port"] is None and line["tx_index"] is None and line["detail"], line
    assert referenced == {(port, i) for port, frames in outputs.items() for i in range(len(frames))}
    drops = {}
    for line in lines:
        if line["drop"]:
            drops[line["drop"]] = drops.get(line["drop"], 0) + 1
    assert drops == {k: v for k, v in stats["drops"].items() if v}


@pytest.mark.parametrize("lookup", ["lpm", "em", "fib"])
@pytest.mark.parametrize("pipeline", ["simple", "multi"])
def test_drops_and_destinations_agree_with_the_oracle(tmp_path, lookup, pipeline):
    """Per packet, an independent model says where it goes or why it is dropped."""
    frames = mixed_frames(3, 1, 200)
    lines, _, _, _ = _traced(tmp_path, {1: frames}, lookup=lookup, pipeline=pipeline)
    for line, frame in zip(lines, frames):
        out, drops = l3fwd_oracle({1: [frame]}, portmask=PORTMASK, lookup=lookup, pipeline=pipeline)
        if drops:
            assert line["drop"] == next(iter(drops)), (line, drops)
        else:
            assert line["tx_port"] == next(p for p, sent in out.items() if sent), line


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("scenario", ["lpm", "em", "fib", "acl", "lcores", "rss"])
def test_jobs_and_super_bursts_give_the_same_trace(tmp_path, scenario, pipeline):
    inputs = {port: mixed_frames(11, port, 500) for port in (0, 1, 2)}
    options = dict(SCENARIOS.get(scenario, {}))
    if scenario == "acl":
        for family, rule in ((4, "R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 17/0xff 2"),
                             (6, "R0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 17/0xff 1")):
            (tmp_path / f"acl{family}.cfg").write_text(f"@0.0.0.0/0 198.18.0.0/16 0 : 65535 0 : 65535 0/0\n{rule}\n"
                                                       if family == 4 else rule + "\n")
        options.update(lookup="acl", rule_ipv4=tmp_path / "acl4.cfg", rule_ipv6=tmp_path / "acl6.cfg")
    reference = _traced(tmp_path, inputs, "one", pipeline=pipeline, **options)[3] / "trace.jsonl"
    for name, extra in (("jobs", dict(jobs=2, chunk_packets=64)), ("small", dict(chunk_packets=50))):
        other = _traced(tmp_path, inputs, name, pipeline=pipeline, **options, **extra)[3] / "trace.jsonl"
        assert other.read_bytes() == reference.read_bytes(), name


@pytest.mark.parametrize("jobs", [1, 2])
def test_trace_n_is_the_first_n_packets(tmp_path, jobs):
    inputs = {port: mixed_frames(5, port, 200) for port in (0, 1)}
    full = _traced(tmp_path, inputs, "all")[0]
    first = _traced(tmp_path, inputs, f"first{jobs}", trace=77, jobs=jobs, chunk_packets=40)
    assert first[0] == full[:77]
    assert first[1]["trace"] == {"file": "trace.jsonl", "limit": 77, "packets": 77, "dpdk": "26.07"}


def test_an_untraced_run_removes_an_earlier_trace(tmp_path):
    inputs = {0: mixed_frames(4, 0, 50)}
    _, _, _, outdir = _traced(tmp_path, inputs)
    stats = run(RunOptions(inputs={0: tmp_path / "in" / "port0.pcap"}, outdir=outdir, portmask=PORTMASK))
    assert stats["trace"] is None and not (outdir / "trace.jsonl").exists()


def test_tracing_changes_no_output(tmp_path):
    inputs = {port: mixed_frames(2, port, 300) for port in (0, 1)}
    _, traced_stats, traced, _ = _traced(tmp_path, inputs, "traced")
    plain_stats = run(RunOptions(inputs={p: tmp_path / "in" / f"port{p}.pcap" for p in inputs},
                                 outdir=tmp_path / "plain", portmask=PORTMASK))
    assert traced == {int(p): read_pcap_frames(tmp_path / "plain" / f"port{p}.pcap") for p in plain_stats["ports"]}
    assert traced_stats["ports"] == plain_stats["ports"] and plain_stats["trace"] is None
    assert not (tmp_path / "plain" / "trace.jsonl").exists()
    assert not list((tmp_path / "traced").glob(".*"))            # no spool or temporary file left


def _ipv4(**fields) -> bytes:
    return bytes(_ETH() / IP(**{"dst": "198.18.1.1", **fields}) / UDP() / Raw(bytes(10)))


DETAILS = [
    ("lpm", "simple", _ipv4(ihl=4), "rfc1812_invalid", "IHL 4 < 5"),
    ("lpm", "multi", _ipv4(ihl=4), "rfc1812_invalid", "IHL 4 < 5"),
    ("lpm", "multi", _ipv4(len=12), "rfc1812_invalid", "total length 12 < 20"),
    ("lpm", "simple", _ipv4(version=6), "rfc1812_invalid", "version 6 != 4"),
    ("lpm", "multi", _ipv4()[:30], "truncated", "frame 30 < 34 bytes"),
    ("em", "multi", _ipv4()[:36], "truncated", "frame 36 < 38 bytes"),
    ("lpm", "simple", bytes(_ETH() / ARP()), "unknown_ptype", "EtherType 0x0806 is neither IPv4 nor IPv6"),
    ("em", "simple", bytes(_ETH() / IP(dst="198.18.1.1", proto=1) / Raw(bytes(20))), "not_tcp_udp",
     "protocol 1 is not TCP or UDP"),
    ("em", "simple", bytes(_ETH() / IP(dst="198.18.1.1", options=b"\x01\x01\x01\x00") / UDP()), "not_tcp_udp",
     "IPv4 options (IHL 6)"),
    ("lpm", "multi", bytes(_ETH() / IP(dst="198.18.1.1") / UDP() / Raw(bytes(2100))), "oversize",
     "frame 2142 > 2048 bytes (one mbuf, no RX scatter)"),
]


@pytest.mark.parametrize("lookup, pipeline, frame, reason, detail", DETAILS)
def test_drop_detail_says_what_failed(tmp_path, lookup, pipeline, frame, reason, detail):
    ok = _ipv4()
    (line_before, line, line_after), _, _, _ = _traced(tmp_path, {0: [ok, frame, ok]}, lookup=lookup, pipeline=pipeline)
    assert (line["drop"], line["detail"], line["tx_port"], line["tx_index"]) == (reason, detail, None, None)
    assert line_before["drop"] is line_after["drop"] is None
    assert line_after["tx_index"] == line_before["tx_index"] + 1


_BACK = ": sent back out of the input port"
SENT_DETAILS = [
    ("lpm", "multi", bytes(_ETH() / ARP()), "EtherType 0x0806 is neither IPv4 nor IPv6" + _BACK),
    ("lpm", "multi", bytes(_ETH() / Dot1Q(vlan=5) / IP(dst="198.18.1.1") / UDP()),
     "EtherType 0x8100 is neither IPv4 nor IPv6" + _BACK),
    ("em", "multi", bytes(_ETH() / ARP()), "EtherType 0x0806 is neither IPv4 nor IPv6" + _BACK),
    ("lpm", "multi", _ipv4(dst="192.0.2.1"), MISS_DETAIL),
    ("lpm", "simple", _ipv4(dst="192.0.2.1"), MISS_DETAIL),
    ("fib", "multi", bytes(_ETH() / IPv6(dst="2001:db8::1") / UDP() / Raw(bytes(10))), MISS_DETAIL),
    ("em", "simple", _ipv4(dst="192.0.2.1"), MISS_DETAIL),
    ("em", "multi", bytes(_ETH() / IP(dst="198.18.1.1", proto=1) / Raw(bytes(20))),
     "protocol 1 is not TCP or UDP" + _BACK),
    ("em", "multi", bytes(_ETH() / IP(dst="198.18.1.1", options=b"\x01\x01\x01\x00") / UDP()),
     "IPv4 options (IHL 6)" + _BACK),
    ("em", "multi", bytes(_ETH() / IPv6(dst="2001:db8::1", nh=0) / Raw(bytes(30))),
     "next header 0 is not TCP or UDP" + _BACK),
    ("lpm", "multi", _ipv4(), None),                           # routed: to its next hop, no detail
    ("lpm", "simple", _ipv4(), None),
]


@pytest.mark.parametrize("lookup, pipeline, frame, detail", SENT_DETAILS)
def test_sent_back_detail_says_why(tmp_path, lookup, pipeline, frame, detail):
    """A packet sent back out of its input port without a next hop — a miss, or a
    packet the path does not look up (the multi path's non-IP frames, em's non-TCP/UDP)
    — has a detail saying so; one sent to its next hop has none."""
    (line,), _, outputs, _ = _traced(tmp_path, {0: [frame]}, lookup=lookup, pipeline=pipeline)
    assert line["drop"] is None and line["detail"] == detail, line
    assert (line["tx_port"] == 0 and line["next_hop"] is None) == (detail is not None), line
    assert len(outputs[line["tx_port"]]) == 1


# ------------------------------------------------------------------ the compiled twins of the texts
REASONS = RunStats([0], [0], DROP_REASONS).reasons            # the application's, then the RX drops
HEXTETS = st.sampled_from([0, 0, 0, 1, 0xDB8, 0xFFFF]) | st.integers(0, 0xFFFF)


@st.composite
def ipv6_addresses(draw) -> bytes:
    """16 bytes with runs of zero hextets (none, one, several, tied, at either end), all
    zeros, IPv4-mapped and IPv4-compatible addresses."""
    kind = draw(st.sampled_from(["hextets", "hextets", "mapped", "compatible", "zero"]))
    if kind == "hextets":
        return b"".join(h.to_bytes(2, "big") for h in draw(st.lists(HEXTETS, min_size=8, max_size=8)))
    if kind == "zero":
        return bytes(16)
    return bytes(10) + (b"\xff\xff" if kind == "mapped" else bytes(2)) + draw(st.binary(min_size=4, max_size=4))


@st.composite
def keyed_heads(draw):
    """(table codes, frame heads): random bytes, IPv6 addresses at their offsets, protocols
    TCP, UDP or any, each row looked up in any table (or none)."""
    n = draw(st.integers(1, 30))
    heads = np.zeros((n, SNAPSHOT_TO), np.uint8)
    for head in heads:
        head[SNAPSHOT_FROM:] = np.frombuffer(draw(st.binary(min_size=SNAPSHOT_TO - SNAPSHOT_FROM,
                                                             max_size=SNAPSHOT_TO - SNAPSHOT_FROM)), np.uint8)
        head[22:38] = np.frombuffer(draw(ipv6_addresses()), np.uint8)
        head[38:54] = np.frombuffer(draw(ipv6_addresses()), np.uint8)
        head[20], head[23] = draw(st.lists(st.sampled_from([6, 17]) | st.integers(0, 255), min_size=2, max_size=2))
    return np.array(draw(st.lists(st.integers(0, len(TABLES)), min_size=n, max_size=n)), np.uint8), heads


@needs_twins
@settings(max_examples=300, deadline=None)
@given(keyed_heads())
@example((np.arange(len(TABLES) + 1, dtype=np.uint8), np.full((len(TABLES) + 1, SNAPSHOT_TO), 0xFF, np.uint8)))
def test_key_texts_are_key_text_of_each_table(keyed):
    """Each row of the key column is the key ``keys.key_text`` writes (an IPv6
    destination as ``ipaddress`` writes it), as a JSON string; ``null`` without a lookup.
    (The example: every table's longest key.)"""
    table, heads = keyed
    want = [None if code == 0 else key_text(TABLES[code - 1], bytes(head)) for code, head in zip(table.tolist(), heads)]
    for code, head, key in zip(table.tolist(), heads, want):
        if code and TABLES[code - 1] in ("lpm6", "fib6"):
            assert key == str(ipaddress.IPv6Address(bytes(head[38:54])))
    for choice in KERNELS:
        with compiled.using(choice):
            block = key_block(table, heads)
        assert [json.loads(bytes(row).replace(b"\0", b"")) for row in block] == want, choice


@st.composite
def dropped_records(draw):
    """Trace records of every reason (0: sent: to a next hop, after a miss, or without a
    lookup) with the fields a detail reads drawn from a few values each (so that cases
    repeat)."""
    n = draw(st.integers(1, 40))
    records = np.zeros(n, TraceRecord)
    few = lambda *values: st.sampled_from(values) | st.integers(0, 255)     # noqa: E731
    for record in records:
        record["reason"] = draw(st.integers(0, len(REASONS)))
        record["table"] = draw(st.integers(0, len(TABLES)))
        record["rule"] = draw(st.sampled_from([-1, 3, 12]))
        record["caplen"] = draw(st.sampled_from([14, 30, 60, 64, 2100]) | st.integers(0, 10000))
        head = np.zeros(SNAPSHOT_TO, np.uint8)
        head[12:14] = draw(st.sampled_from([(8, 0), (0x86, 0xDD), (8, 6)]) | st.tuples(st.integers(0, 255),
                                                                                        st.integers(0, 255)))
        head[14], head[16], head[17] = draw(few(0x45, 0x46, 0x44, 0x60)), draw(few(0)), draw(few(12, 20, 84))
        head[20], head[23] = draw(few(6, 17, 0)), draw(few(6, 17, 1))
        record["head"] = head[SNAPSHOT_FROM:]
    return records


@needs_twins
@settings(max_examples=200, deadline=None)
@given(dropped_records(), st.sampled_from(["lpm", "fib", "em", "acl"]))
def test_details_are_each_records_own(records, lookup):
    """Each record's detail (written once per distinct case) is the one ``_detail`` gives
    for that record alone, a drop's; a packet sent back without a next hop says why (a
    miss, or not looked up: ``_sent_detail``); none for a packet sent to its next hop."""
    want = []
    for record in records:
        head = np.zeros((1, SNAPSHOT_TO), np.uint8)
        head[0, SNAPSHOT_FROM:] = record["head"]
        h = head[0].tolist()
        fields = (h[12] << 8 | h[13], h[14], h[16] << 8 | h[17], h[23], h[20])
        if record["reason"]:
            want.append(_detail(REASONS[record["reason"] - 1], int(record["caplen"]),
                                int(ptype.needed_bytes(lookup, head)[0]), *fields))
        elif record["table"] == 0:
            want.append(_sent_detail(*fields))
        else:
            want.append(MISS_DETAIL if record["rule"] < 0 else None)
    for choice in KERNELS:
        with compiled.using(choice):
            texts, codes = details(records, lookup, REASONS)
        assert [None if code == 0 else texts[code - 1] for code in codes.tolist()] == want, choice
        assert sorted(set(codes.tolist()) - {0}) == list(range(1, len(texts) + 1)), choice    # each text used


def test_a_failed_trace_write_is_raised_and_leaves_no_file(tmp_path, monkeypatch):
    """The writer thread's failure (here: a full disk) is raised on the caller's next
    call, and aborting leaves neither the trace nor its temporary file."""
    records = np.zeros(3, TraceRecord)
    records["tx_port"] = records["tx_index"] = records["rule"] = records["next_hop"] = -1
    trace = TraceFile(tmp_path, describe("lpm", None, REASONS))

    def full(data):
        raise SimError(f"{tmp_path / TRACE_FILE}: cannot write: No space left on device")
    monkeypatch.setattr(trace.file.file, "write", full)
    with pytest.raises(SimError, match="No space left"):
        for _ in range(3):                 # two batches in flight at most: the third call waits for the first
            trace.write(records)
        trace.commit()
    trace.abort()
    assert list(tmp_path.iterdir()) == []
