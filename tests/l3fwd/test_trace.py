"""``run --trace``: every received packet traced once, each traced rule the one a brute
force over the rule file says decides, each tx_port/tx_index the output record that
came from that input record, the same trace whatever --jobs, drops with their reason
and detail."""
from __future__ import annotations

import ipaddress
import json
import random
from pathlib import Path

import pytest
from frames import mixed_frames, read_pcap_frames, write_pcap
from oracle import l3fwd_oracle
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

from l3fwd_sim import RunOptions, run

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
    assert stats["trace"] == {"file": "trace.jsonl", "limit": "all", "packets": len(received)}
    referenced = set()
    for line in lines:
        frame = inputs[line["rx_port"]][line["index"]]
        if line["drop"] is None:
            sent = outputs[line["tx_port"]][line["tx_index"]]
            assert _same_packet(sent, frame), line
            referenced.add((line["tx_port"], line["tx_index"]))
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
    assert first[1]["trace"] == {"file": "trace.jsonl", "limit": 77, "packets": 77}


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
    return bytes(_ETH() / IP(dst="198.18.1.1", **fields) / UDP() / Raw(bytes(10)))


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
