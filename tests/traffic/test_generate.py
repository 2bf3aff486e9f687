"""`l3fwd-sim generate`: patterns, stream files, sizes, timestamps, checksums, errors.

Oracles are independent of the generator: the pattern definitions written out here
(performance_and_traffic_patterns.md §1), `run` + the per-packet model in tests/oracle.py
for where packets go, scapy rebuilding every packet for lengths and checksums, a
struct-based pcap reader, and brute-force loops for TRex-style field variables.
"""
from __future__ import annotations

import ipaddress
import struct
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import l3fwd_oracle
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Dot1Q, Ether

from l3fwd_sim import RunOptions, SimError, run
from l3fwd_sim.traffic.field_engine import FieldVar
from l3fwd_sim.traffic.generate import START_NS, GenerateOptions, generate
from l3fwd_sim.traffic.interleave import stream_chunks

ALL_PORTS = 0xFFFF


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------
def read_pcap(path) -> tuple[bool, list[tuple[int, int, bytes]]]:
    """(nanosecond?, [(timestamp ns, wire length, frame)]) with a plain struct reader."""
    data = Path(path).read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), hex(magic)
    nano = magic == 0xA1B23C4D
    assert struct.unpack("<I", data[20:24])[0] == 1          # LINKTYPE_ETHERNET
    out, pos = [], 24
    while pos < len(data):
        sec, frac, cap, wire = struct.unpack("<IIII", data[pos:pos + 16])
        out.append((sec * 10**9 + frac * (1 if nano else 1000), wire, data[pos + 16:pos + 16 + cap]))
        pos += 16 + cap
    assert pos == len(data)
    return nano, out


def frames(path) -> list[bytes]:
    return [f for _, _, f in read_pcap(path)[1]]


def gen(tmp_path, pattern=None, name="gen", **options):
    outdir = tmp_path / name
    summary = generate(GenerateOptions(outdir=outdir, pattern=pattern, **options))
    return outdir, summary


def stream_file(tmp_path, text: str, name="s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def output_sequence(tmp_path, indir, in_port, **run_options) -> list[int]:
    """Output port of each packet of input ``in_port``, in input order: run with that one
    input, then order everything sent by its (unique, increasing) input timestamps."""
    outdir = tmp_path / f"out-{in_port}"
    run(RunOptions(inputs={in_port: indir / f"port{in_port}.pcap"}, outdir=outdir,
                   portmask=run_options.pop("portmask", ALL_PORTS), **run_options))
    seen = []
    for path in outdir.glob("port*.pcap"):
        port = int(path.stem[4:])
        seen += [(ts, port) for ts, _, _ in read_pcap(path)[1]]
    return [port for _, port in sorted(seen)]


def assert_well_formed(frame: bytes) -> None:
    """scapy parses the frame, and rebuilding it with every length and checksum left to
    scapy gives the same bytes."""
    pkt = Ether(frame)
    clone = Ether(frame)
    for cls, names in ((IP, ("len", "chksum")), (IPv6, ("plen",)), (UDP, ("len", "chksum")),
                       (TCP, ("chksum",)), (ICMP, ("chksum",)), (ICMPv6EchoRequest, ("cksum",))):
        if clone.haslayer(cls):
            for name in names:
                delattr(clone[cls], name)
    assert bytes(clone) == frame, pkt.summary()
    assert any(pkt.haslayer(c) for c in (UDP, TCP, ICMP, ICMPv6EchoRequest)), pkt.summary()


# --------------------------------------------------------------------------------------
# patterns: the sequence of output ports after run matches the definition
# --------------------------------------------------------------------------------------
def cont_burst(family):
    def expect(i, p, lookup_family):
        return p ^ 1 if lookup_family in (None, family) else p
    return expect


def mixed(i, p, lookup_family):
    family = 4 if i % 2 == 0 else 6                 # IPV4, IPV6, IPV4, ... (interleave 1)
    return p ^ 1 if lookup_family in (None, family) else p


def k_streams(family, k, g):
    def expect(i, p, lookup_family):
        return (i // g) % k if lookup_family in (None, family) else p
    return expect


PATTERNS = [
    ("IPV4-CONT-BURST", cont_burst(4)),
    ("ipv6-cont-burst", cont_burst(6)),
    ("IPV4/IPV6-CONT-BURST", mixed),
    ("ipv4-ipv6-cont-burst", mixed),
    ("IPV4-4STREAMSX1", k_streams(4, 4, 1)),        # P0, P1, P2, P3, P0, ...
    ("IPV4-4STREAMSX8", k_streams(4, 4, 8)),        # P0 x8, P1 x8, P2 x8, P3 x8, P0 x8, ...
    ("IPV6-3STREAMSX2", k_streams(6, 3, 2)),
    ("IPV4-16STREAMSX3", k_streams(4, 16, 3)),
]
# (lookup, pipeline, ipv6): em installs one family's flows; the other family misses
RUNS = [("lpm", "multi", False), ("lpm", "simple", False), ("fib", "multi", False),
        ("em", "multi", False), ("em", "simple", True)]


@pytest.mark.parametrize("pattern,expect", PATTERNS, ids=[p for p, _ in PATTERNS])
def test_pattern_output_ports(tmp_path, pattern, expect):
    count = 103                                       # not a multiple of any group or burst
    indir, summary = gen(tmp_path, pattern, count=count)
    assert sorted(summary["ports"]) == ["0", "1", "2", "3"]
    for lookup, pipeline, ipv6 in RUNS:
        lookup_family = (6 if ipv6 else 4) if lookup == "em" else None
        for p in range(4):
            got = output_sequence(tmp_path / f"{lookup}-{pipeline}", indir, p, lookup=lookup,
                                  pipeline=pipeline, ipv6=ipv6)
            assert got == [expect(i, p, lookup_family) for i in range(count)], (lookup, pipeline, p)


def test_cont_burst_map(tmp_path):
    indir, _ = gen(tmp_path, "IPV4-CONT-BURST", count=40, port_map="0:2,2:0")
    wanted = {0: 2, 1: 0, 2: 0, 3: 2}                 # unmapped ports keep p -> p^1
    for p, q in wanted.items():
        assert output_sequence(tmp_path, indir, p) == [q] * 40
    indir, _ = gen(tmp_path, "IPV6-CONT-BURST", name="list", count=8, port_map="3,2,1,0")
    for p in range(4):
        assert output_sequence(tmp_path / "list", indir, p, lookup="em", ipv6=True) == [3 - p] * 8


def test_cont_burst_default_portmask_round_trip(tmp_path):
    """`run DIR` with its default portmask (the input ports) forwards p -> p^1."""
    indir, _ = gen(tmp_path, "IPV4-CONT-BURST", count=50)
    stats = run(RunOptions(inputs={p: indir / f"port{p}.pcap" for p in range(4)}, outdir=tmp_path / "out"))
    assert stats["totals"]["rx"] == stats["totals"]["tx"] == 200
    for p in range(4):
        assert stats["ports"][str(p)]["out"] == 50
        for frame in frames(tmp_path / "out" / f"port{p}.pcap"):
            assert Ether(frame)[IP].dst == f"198.18.{p}.0"


def test_tcp_patterns_route_under_lpm_and_fib(tmp_path):
    indir, summary = gen(tmp_path, "IPV4-4STREAMSX8", count=64, proto="tcp")
    assert any("misses under --lookup em" in w for w in summary["warnings"])
    for lookup in ("lpm", "fib"):
        assert output_sequence(tmp_path / lookup, indir, 2, lookup=lookup) == [(i // 8) % 4 for i in range(64)]
    for frame in frames(indir / "port2.pcap"):
        assert Ether(frame).haslayer(TCP)
        assert_well_formed(frame)


# --------------------------------------------------------------------------------------
# random and malformed against the independent oracle
# --------------------------------------------------------------------------------------
def _oracle_outputs(indir, ports, **kw):
    inputs = {p: frames(indir / f"port{p}.pcap") for p in range(ports)}
    return l3fwd_oracle(inputs, portmask=(1 << ports) - 1, **kw)


def _run_outputs(tmp_path, indir, ports, **kw):
    stats = run(RunOptions(inputs={p: indir / f"port{p}.pcap" for p in range(ports)}, outdir=tmp_path, **kw))
    return {p: frames(tmp_path / f"port{p}.pcap") for p in range(ports)}, stats


def test_random_pattern(tmp_path):
    indir, _ = gen(tmp_path, "random", count=300, size="64-1518", seed=5)
    dsts = Counter()
    for p in range(4):
        for frame in frames(indir / f"port{p}.pcap"):
            assert_well_formed(frame)
            pkt = Ether(frame)
            dsts[str((pkt[IP] if pkt.haslayer(IP) else pkt[IPv6]).dst)] += 1
    routed = {f"198.18.{n}.0" for n in range(4)} | {str(ipaddress.ip_address(f"2001:200:0:{n}::")) for n in range(4)}
    assert routed <= set(dsts), "every installed route of both families is used"
    misses = {d: c for d, c in dsts.items() if d not in routed}
    assert misses and all(ipaddress.ip_address(d) in ipaddress.ip_network("203.0.113.0/24") or
                          ipaddress.ip_address(d) in ipaddress.ip_network("2001:db8::/120") for d in misses)
    assert 0.05 < sum(misses.values()) / 1200 < 0.2                      # 1/8 are misses
    for lookup, pipeline in (("lpm", "multi"), ("lpm", "simple"), ("fib", "multi"), ("em", "multi")):
        got, stats = _run_outputs(tmp_path / f"{lookup}-{pipeline}", indir, 4, lookup=lookup, pipeline=pipeline)
        want, _ = _oracle_outputs(indir, 4, lookup=lookup, pipeline=pipeline)
        assert got == want, (lookup, pipeline)
        assert stats["totals"]["rx"] == stats["totals"]["tx"] == 1200


def _category(frame: bytes) -> str:
    pkt = Ether(frame)
    if pkt.type == 0x0806 and pkt.haslayer(ARP):
        return "arp"
    if pkt.type == 0x88B5:
        return "unknown_ethertype"
    if pkt.type == 0x88A8:
        return "qinq"
    if pkt.type == 0x8100 and pkt.haslayer(Dot1Q):
        return "vlan"
    if pkt.type == 0x86DD:
        return "ipv6_ext" if pkt.haslayer(IPv6ExtHdrHopByHop) else "ipv6"
    version, ihl = frame[14] >> 4, frame[14] & 15
    if version != 4:
        return "bad_version"
    if ihl < 5:
        return "bad_ihl"
    if ihl > 5:
        return "ipv4_options"
    if int.from_bytes(frame[16:18], "big") < 20:
        return "bad_total_length"
    if frame[22] in (0, 1):
        return f"ttl{frame[22]}"
    clone = Ether(frame)
    del clone[IP].chksum
    return "bad_checksum" if bytes(clone) != frame else "valid"


def test_malformed(tmp_path):
    from l3fwd_sim.traffic.patterns import MALFORMED
    count = 5 * len(MALFORMED)
    indir, _ = gen(tmp_path, "malformed", ports=2, count=count, size="imix")
    for p in range(2):
        cats = [_category(f) for f in frames(indir / f"port{p}.pcap")]
        assert cats == list(MALFORMED) * 5               # each category, one of each in turn
    for lookup, pipeline in (("lpm", "multi"), ("lpm", "simple"), ("em", "multi"), ("em", "simple"),
                             ("fib", "multi")):
        got, stats = _run_outputs(tmp_path / f"{lookup}-{pipeline}", indir, 2, lookup=lookup, pipeline=pipeline)
        want, _ = _oracle_outputs(indir, 2, lookup=lookup, pipeline=pipeline)
        assert got == want, (lookup, pipeline)
        totals = stats["totals"]
        assert totals["rx"] == 2 * count == totals["tx"] + totals["dropped"]
        assert totals["dropped"] > 0
        for p in ("0", "1"):
            port = stats["ports"][p]
            assert port["rx"] == port["tx"] + port["dropped"] == count


# --------------------------------------------------------------------------------------
# well-formed packets, sizes, timestamps, seeds
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("pattern,proto", [("IPV4/IPV6-CONT-BURST", "udp"), ("IPV4/IPV6-CONT-BURST", "tcp"),
                                           ("IPV6-4STREAMSX8", "tcp")])
def test_every_packet_valid(tmp_path, pattern, proto):
    indir, _ = gen(tmp_path, pattern, ports=2, count=60, size="64-1518", proto=proto)
    for p in range(2):
        for ts_wire_frame in read_pcap(indir / f"port{p}.pcap")[1]:
            _, wire, frame = ts_wire_frame
            assert wire == len(frame)
            assert_well_formed(frame)


def test_sizes_fixed_64(tmp_path):
    indir, summary = gen(tmp_path, "IPV4/IPV6-CONT-BURST", ports=1, count=20)
    lengths = [(Ether(f).haslayer(IPv6), len(f)) for f in frames(indir / "port0.pcap")]
    assert {n for v6, n in lengths if not v6} == {60}              # 64 on the wire minus the FCS
    assert {n for v6, n in lengths if v6} == {62}                  # IPv6/UDP headers need 62
    assert any("raised to 66" in w for w in summary["warnings"])


def test_sizes_range(tmp_path):
    indir, _ = gen(tmp_path, "IPV4-CONT-BURST", ports=1, count=3000, size="64-1518")
    lengths = [len(f) for f in frames(indir / "port0.pcap")]
    assert min(lengths) >= 60 and max(lengths) <= 1514
    assert min(lengths) < 70 and max(lengths) > 1500 and len(set(lengths)) > 1000


def test_sizes_imix(tmp_path):
    indir, _ = gen(tmp_path, "IPV4-4STREAMSX8", ports=2, count=240, size="imix")
    for p in range(2):
        lengths = [len(f) for f in frames(indir / f"port{p}.pcap")]
        assert Counter(lengths) == {60: 140, 566: 80, 1514: 20}    # 7:4:1 of 64/570/1518 on the wire
        for start in range(0, 240, 12):
            assert Counter(lengths[start:start + 12]) == {60: 7, 566: 4, 1514: 1}
        for frame in frames(indir / f"port{p}.pcap"):
            assert_well_formed(frame)


@pytest.mark.parametrize("rate,nano", [(1000, False), (1_000_000, False), (2_000_000, True),
                                       (14_880_952, True), (3.5, True)])
def test_rate_spacing(tmp_path, rate, nano):
    indir, summary = gen(tmp_path, "IPV4-CONT-BURST", ports=2, count=50, rate=rate)
    assert summary["nanosecond_timestamps"] is nano
    for p in range(2):
        is_nano, records = read_pcap(indir / f"port{p}.pcap")
        assert is_nano is nano
        want = [START_NS + round(i * 1e9 / rate) for i in range(50)]
        if not nano:
            want = [t // 1000 * 1000 for t in want]
        assert [ts for ts, _, _ in records] == want


def test_default_rate_is_one_microsecond(tmp_path):
    indir, _ = gen(tmp_path, "IPV4-CONT-BURST", ports=1, count=5)
    assert [ts for ts, _, _ in read_pcap(indir / "port0.pcap")[1]] == [START_NS + 1000 * i for i in range(5)]


def _bytes_of(directory):
    return {p.name: p.read_bytes() for p in sorted(Path(directory).glob("port*.pcap"))}


@pytest.mark.parametrize("options", [dict(pattern="random"), dict(pattern="IPV4-CONT-BURST", size="64-1518"),
                                     dict(pattern="IPV4-4STREAMSX8", size="imix"),
                                     dict(pattern="malformed", size="64-1518")],
                         ids=["random", "size-range", "imix", "malformed"])
def test_seed_reproducibility(tmp_path, options):
    a, _ = gen(tmp_path, name="a", count=200, seed=7, **options)
    b, _ = gen(tmp_path, name="b", count=200, seed=7, **options)
    c, _ = gen(tmp_path, name="c", count=200, seed=8, **options)
    assert _bytes_of(a) == _bytes_of(b)
    if options["pattern"] == "random" or options.get("size") == "64-1518":
        assert _bytes_of(a) != _bytes_of(c)
    else:
        assert _bytes_of(a) == _bytes_of(c)         # nothing random: the seed changes nothing


def test_chunking_does_not_change_output(tmp_path):
    text = _ORDER_FILE.replace("ORDER", "random")
    path = stream_file(tmp_path, text)
    a = tmp_path / "a"
    b = tmp_path / "b"
    generate(GenerateOptions(outdir=a, streams=path))
    generate(GenerateOptions(outdir=b, streams=path, chunk_packets=3))
    assert _bytes_of(a) == _bytes_of(b)


def test_progress_reports_every_packet(tmp_path):
    seen = []
    generate(GenerateOptions(outdir=tmp_path / "g", pattern="IPV4-CONT-BURST", count=100, chunk_packets=32,
                             progress=lambda done, total: seen.append((done, total))))
    assert seen[-1] == (400, 400) and all(a[0] < b[0] for a, b in zip(seen, seen[1:]))


# --------------------------------------------------------------------------------------
# stream files: values, orders, errors
# --------------------------------------------------------------------------------------
def brute_var(op, lo, hi, step=1, init=None, n=50):
    """TRex STLVmFlowVar inc/dec as a plain loop (wrap to min / max, not modular)."""
    value = init if init is not None else (lo if op == "inc" else hi)
    out = []
    for _ in range(n):
        out.append(value)
        if op == "inc":
            value = value + step if value + step <= hi else lo
        else:
            value = value - step if value - step >= lo else hi
    return out


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["inc", "dec"]), st.integers(0, 2**40), st.integers(0, 60), st.integers(1, 13),
       st.data())
def test_field_var_matches_loop(op, lo, span, step, data):
    init = data.draw(st.none() | st.integers(lo, lo + span))
    n = data.draw(st.integers(0, 80))
    assert FieldVar(op, lo, lo + span, step, init).values(n).tolist() == brute_var(op, lo, lo + span, step, init, n)


_VALUES_FILE = """\
seed = 11
[[stream]]
name = "v"
count = 40
size = {op = "inc", min = 64, max = 100, step = 7}
eth = { src = "00:1b:21:00:00:fe" }
vlan = { vlan = 5 }
ipv4 = { src = "198.18.1.1", dst = "198.18.1.0" }
udp = { sport = 9, dport = 9 }
[[stream.vary]]
field = "ipv4.dst"
op = "inc"
min = "198.18.1.0"
max = "198.18.1.9"
step = 3
init = "198.18.1.4"
[[stream.vary]]
field = "udp.sport"
op = "dec"
min = 100
max = 110
step = 4
[[stream.vary]]
field = "ipv4.ttl"
op = "random"
min = 5
max = 9
step = 2
[[stream.vary]]
field = "eth.src"
min = "00:1b:21:00:00:fe"
max = "00:1b:21:00:01:01"
[[stream.vary]]
field = "vlan.vlan"
op = "dec"
min = 4093
max = 4095
[[stream.vary]]
field = "vlan.prio"
min = 0
max = 7

[[stream]]
name = "w"
port = 1
count = 30
ipv6 = { src = "2001:200:0:1::1", dst = "2001:200:0:1::" }
tcp = { flags = "A" }
[[stream.vary]]
field = "ipv6.src"
min = "2001:200:0:1:ffff:ffff:ffff:fff8"
max = "2001:200:0:2::10"
step = 5
[[stream.vary]]
field = "ipv6.fl"
op = "dec"
min = 0
max = 1048575
step = 99999
[[stream.vary]]
field = "ipv6.tc"
min = 250
max = 255
[[stream.vary]]
field = "tcp.flags"
op = "random"
min = 0
max = 511
"""


def test_stream_file_values(tmp_path):
    path = stream_file(tmp_path, _VALUES_FILE)
    generate(GenerateOptions(outdir=tmp_path / "g", streams=path))
    v = [Ether(f) for f in frames(tmp_path / "g" / "port0.pcap")]
    assert [int(ipaddress.ip_address(p[IP].dst)) & 0xFF for p in v] == brute_var("inc", 0, 9, 3, 4, 40)
    assert [p[UDP].sport for p in v] == brute_var("dec", 100, 110, 4, None, 40)
    assert [len(bytes(p)) + 4 for p in v] == brute_var("inc", 64, 100, 7, None, 40)
    assert [int(p.src.replace(":", ""), 16) - 0x001B210000FE for p in v] == brute_var("inc", 0, 3, 1, None, 40)
    assert [p[Dot1Q].vlan for p in v] == brute_var("dec", 4093, 4095, 1, None, 40)
    assert [p[Dot1Q].prio for p in v] == brute_var("inc", 0, 7, 1, None, 40)
    ttls = [p[IP].ttl for p in v]
    assert set(ttls) == {5, 7, 9}                                  # random on the step grid
    w = [Ether(f) for f in frames(tmp_path / "g" / "port1.pcap")]
    base = int(ipaddress.ip_address("2001:200:0:1:ffff:ffff:ffff:fff8"))
    top = int(ipaddress.ip_address("2001:200:0:2::10"))
    assert [int(ipaddress.ip_address(p[IPv6].src)) for p in w] == brute_var("inc", base, top, 5, None, 30)
    assert [p[IPv6].fl for p in w] == brute_var("dec", 0, 1048575, 99999, None, 30)
    assert [p[IPv6].tc for p in w] == brute_var("inc", 250, 255, 1, None, 30)
    flags = [int(p[TCP].flags) for p in w]
    assert all(0 <= f <= 511 for f in flags) and len(set(flags)) > 20
    for frame in frames(tmp_path / "g" / "port0.pcap") + frames(tmp_path / "g" / "port1.pcap"):
        assert_well_formed(frame)
    again = tmp_path / "again"
    generate(GenerateOptions(outdir=again, streams=path))
    other = tmp_path / "other"
    generate(GenerateOptions(outdir=other, streams=path, seed=12))
    assert _bytes_of(again) == _bytes_of(tmp_path / "g") != _bytes_of(other)


_ORDER_FILE = """\
order = "ORDER"
group = 3
[[stream]]
name = "a"
count = 7
ipv4 = {}
udp = { dport = 1 }
[[stream]]
name = "b"
count = 2
ipv4 = {}
udp = { dport = 2 }
[[stream]]
name = "c"
count = 5
ipv4 = {}
icmp = { id = 3 }
"""


def _stream_ids(path) -> list[int]:
    return [p[UDP].dport if p.haslayer(UDP) else p[ICMP].id for p in map(Ether, frames(path))]


@pytest.mark.parametrize("order", ["sequence", "round-robin", "random"])
def test_stream_file_orders(tmp_path, order):
    path = stream_file(tmp_path, _ORDER_FILE.replace("ORDER", order))
    generate(GenerateOptions(outdir=tmp_path / "g", streams=path))
    got = _stream_ids(tmp_path / "g" / "port0.pcap")
    if order == "sequence":
        assert got == [1] * 7 + [2] * 2 + [3] * 5
    elif order == "round-robin":                   # 3 of each in turn; b runs out first
        assert got == [1, 1, 1, 2, 2, 3, 3, 3, 1, 1, 1, 3, 3, 1]
    else:
        assert Counter(got) == {1: 7, 2: 2, 3: 5}
        generate(GenerateOptions(outdir=tmp_path / "h", streams=path, seed=99))
        assert _stream_ids(tmp_path / "h" / "port0.pcap") != got
    for frame in frames(tmp_path / "g" / "port0.pcap"):
        assert_well_formed(frame)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=5).filter(any), st.integers(1, 4), st.integers(1, 40))
def test_round_robin_interleave_matches_loop(counts, group, chunk):
    pieces = list(stream_chunks(counts, "round-robin", group, chunk))
    left, want = list(counts), []
    while any(left):
        for s in range(len(counts)):
            take = min(group, left[s])
            want += [s] * take
            left[s] -= take
    assert [s for piece in pieces for s in piece.tolist()] == want
    assert all(1 <= len(piece) <= chunk for piece in pieces)


# each case: file text, the line the error must name, a phrase it must contain
BAD_FILES = [
    ("count = 3\n[[stream]]\ncount = \n", 3, "Invalid value"),
    ("seed = 1\nspeed = 3\n", 2, "unknown key 'speed'"),
    ("rate = -5\n", 1, "rate -5 is not a packet rate"),
    ("order = \"zigzag\"\n[[stream]]\ncount = 1\nipv4 = {}\n", 1, "order 'zigzag'"),
    ("# nothing\n", None, "no [[stream]] tables"),
    ("[[stream]]\nname = \"s\"\nipv4 = {}\n", 1, "count is required"),
    ("[[stream]]\ncount = 1\nudp = {}\n", 1, "needs an ipv4 or ipv6"),
    ("[[stream]]\ncount = 1\nipv4 = { dst = \"300.1.1.1\" }\n", 3, "bad IPv4 address"),
    ("[[stream]]\ncount = 1\n[stream.ipv4]\nsrc = \"198.18.0.1\"\nttl = 300\n", 5, "ipv4.ttl (8-bit field) 300 out of range 0..255"),
    ("[[stream]]\ncount = 1\nipv4 = {}\nudp = { sport = 9, foo = 1 }\n", 4, "unknown field 'foo'"),
    ("[[stream]]\ncount = 1\nipv4 = {}\nudp = { len = 9 }\n", 4, "udp.len is computed"),
    ("[[stream]]\ncount = 1\nsize = \"huge\"\nipv4 = {}\n", 3, "size must be"),
    ("[[stream]]\ncount = 1\nsize = 20\nipv4 = {}\n", 3, "size 20 out of range 64..9600"),
    ("[[stream]]\ncount = 1\nports = [0, 40]\nipv4 = {}\n", 3, "ports must be port numbers"),
    ("[[stream]]\ncount = 1\npayload_hex = \"xyz\"\nipv4 = {}\n", 3, "payload_hex must be hex"),
    ("[[stream]]\ncount = 1\nipv4 = {}\nudp = {}\n[[stream.vary]]\nfield = \"ipv4.foo\"\nmin = 1\nmax = 2\n",
     6, "field 'ipv4.foo' cannot be varied"),
    ("[[stream]]\ncount = 1\nipv4 = {}\nudp = {}\n[[stream.vary]]\nfield = \"tcp.seq\"\nmin = 1\nmax = 2\n",
     6, "not in this stream's headers"),
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = \"ipv4.ttl\"\nmin = 9\nmax = 2\n",
     7, "min 9 is greater than max 2"),
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = \"ipv4.ttl\"\nmin = 1\nmax = 256\n",
     7, "max 256 out of range 0..255"),
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = \"ipv4.ttl\"\nop = \"jump\"\nmin = 1\nmax = 2\n",
     6, "op 'jump'"),
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = \"ipv4.ttl\"\nmax = 2\n", 4, "min is required"),
    # a value of another TOML type where a name is expected (issue 28: TypeError: unhashable type)
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = [31]\nmin = 1\nmax = 2\n", 5,
     "field [31] cannot be varied"),
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = {}\nmin = 1\nmax = 2\n", 5,
     "field {} cannot be varied"),
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = \"ipv4.ttl\"\nop = {}\nmin = 1\nmax = 2\n", 6,
     "op {} is not one of"),
    ("[[stream]]\ncount = 1\nipv4 = {}\n[[stream.vary]]\nfield = \"ipv4.dst\"\nmin = \"1.2.3.4\"\n"
     "max = \"1.2.3.9\"\ninit = \"1.2.3.99\"\n", 8, "init"),
    # streams that are no tables (AttributeError: 'int' object has no attribute 'get')
    ("order = \"random\"\nstream = [1, \"a\"]\n", 2, "stream #0: each [[stream]] must be a table, not int"),
    ("stream = [{ count = 1, ipv4 = {} }, []]\n", 1, "stream #1: each [[stream]] must be a table, not list"),
    ("[[stream]]\nname = \"ok\"\ncount = 1\nipv4 = {}\n\n[[stream]]\nname = \"second\"\ncount = 1\n"
     "ipv6 = {}\n[[stream.vary]]\nfield = \"ipv6.src\"\nmin = \"::\"\nmax = \"ffff::\"\n", 13, "stream 'second'"),
]


@pytest.mark.parametrize("text,line,phrase", BAD_FILES, ids=[str(i) for i in range(len(BAD_FILES))])
def test_bad_stream_files(tmp_path, text, line, phrase):
    path = stream_file(tmp_path, text)
    with pytest.raises(SimError) as err:
        generate(GenerateOptions(outdir=tmp_path / "g", streams=path))
    message = str(err.value)
    assert message.startswith(f"{path}:{line}:" if line else f"{path}:"), message
    assert phrase in message and "\n" not in message, message
    assert not (tmp_path / "g").exists() or not list((tmp_path / "g").iterdir())


def test_missing_stream_file(tmp_path):
    with pytest.raises(SimError, match="cannot read stream file"):
        generate(GenerateOptions(outdir=tmp_path / "g", streams=tmp_path / "nope.toml"))


# --------------------------------------------------------------------------------------
# rule files
# --------------------------------------------------------------------------------------
def test_lpm_rule_file_destinations(tmp_path):
    v4 = stream_file(tmp_path, "R198.18.1.0/24 1\nR198.18.1.0/25 3\nR198.18.3.0/24 3\n"
                               "R10.0.0.0/8 0\nR10.2.0.0/16 2\n", "v4.cfg")
    v6 = stream_file(tmp_path, "R2001:db8::/32 0\nR2001:db8:1::/48 1\nR2001:db8:2::/48 2\n"
                               "R2001:db8:3::/48 3\n", "v6.cfg")
    indir, _ = gen(tmp_path, "IPV4-4STREAMSX1", count=12, rule_ipv4=v4, rule_ipv6=v6)
    for p in (0, 3):
        got = output_sequence(tmp_path / "v4", indir, p, rule_ipv4=v4, rule_ipv6=v6)
        assert got == [i % 4 for i in range(12)]
    to_port1 = {Ether(f)[IP].dst for f in frames(indir / "port0.pcap")[1::4]}
    assert to_port1 == {"198.18.1.255"}        # 198.18.1.0 and .1 are taken by the /25 to port 3
    indir, _ = gen(tmp_path, "IPV6-CONT-BURST", name="v6", count=6, rule_ipv4=v4, rule_ipv6=v6)
    assert output_sequence(tmp_path / "v6", indir, 2, rule_ipv4=v4, rule_ipv6=v6) == [3] * 6


def test_em_rule_file_destinations(tmp_path):
    v4 = stream_file(tmp_path, "R10.0.0.1 10.0.0.2 80 1234 6 1\nR10.0.0.3 10.0.0.4 80 1234 6 0\n"
                               "R10.0.0.5 10.0.0.6 53 53 17 1\n", "em4.cfg")
    v6 = stream_file(tmp_path, "R2001:db8::1 2001:db8::2 80 1234 6 0\n", "em6.cfg")
    indir, _ = gen(tmp_path, "IPV4-CONT-BURST", ports=2, count=5, proto="tcp", rule_ipv4=v4, rule_ipv6=v6)
    pkt = Ether(frames(indir / "port0.pcap")[0])
    assert (pkt[IP].src, pkt[IP].dst, pkt[TCP].sport, pkt[TCP].dport) == ("10.0.0.2", "10.0.0.1", 1234, 80)
    for p in range(2):
        assert output_sequence(tmp_path, indir, p, lookup="em", rule_ipv4=v4, rule_ipv6=v6) == [p ^ 1] * 5
    with pytest.raises(SimError, match="no IPv4 UDP destination routes to port 0 under .*em4.cfg"):
        gen(tmp_path, "IPV4-CONT-BURST", name="udp", ports=2, count=5, rule_ipv4=v4)


def test_no_route_to_port(tmp_path):
    with pytest.raises(SimError, match="routes to port 16 under the default tables"):
        gen(tmp_path, "IPV4-17STREAMSX1", count=5)


# --------------------------------------------------------------------------------------
# options and CLI
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("options,phrase", [
    (dict(pattern="IPV4-CONT"), "unknown pattern 'IPV4-CONT'"),
    (dict(pattern="IPV4-0STREAMSX8"), "K '0' out of range 1..32"),
    (dict(pattern="random", size="63"), "size '63' out of range 64..9600"),
    (dict(pattern="random", size="1518-64"), "runs backwards"),
    (dict(pattern="random", ports=0), "--ports 0"),
    (dict(pattern="random", rate=0), "--rate 0"),
    (dict(pattern="IPV4-CONT-BURST", port_map="0:1,x"), "--map"),
    (dict(pattern="IPV4-CONT-BURST", port_map="7:1"), "input port '7' out of range 0..3"),
    (dict(pattern="IPV4-CONT-BURST", proto="sctp"), "--proto sctp"),
])
def test_bad_options(tmp_path, options, phrase):
    with pytest.raises(SimError, match=phrase.replace("(", r"\(")):
        generate(GenerateOptions(outdir=tmp_path / "g", **options))


def test_a_new_set_replaces_the_stale_port_files(tmp_path):
    """4 ports, then 2 into the same directory: port2/3.pcap of the first would be read as
    inputs by a later run, so they go with the old set; the user's files stay."""
    gen(tmp_path, "IPV4-CONT-BURST", count=2, ports=4)
    (tmp_path / "gen" / "notes.txt").write_text("mine")
    gen(tmp_path, "IPV4-CONT-BURST", count=2, ports=2)
    assert sorted(p.name for p in (tmp_path / "gen").iterdir()) == ["notes.txt", "port0.pcap", "port1.pcap"]


def test_cli_generate_then_run(tmp_path, cli):
    result = cli("generate", "ipv4-4streamsx8", "-o", tmp_path / "g", "--count", 64, "--size", "imix")
    assert result.exit_code == 0, result.output
    assert "256 packets" in result.output
    result = cli("run", tmp_path / "g", "-o", tmp_path / "out", "--json")
    assert result.exit_code == 0, result.output
    path = stream_file(tmp_path, _ORDER_FILE.replace("ORDER", "sequence"))
    result = cli("generate", "--streams", path, "-o", tmp_path / "s", "--seed", 3, "--quiet")
    assert result.exit_code == 0 and result.output == ""


@pytest.mark.parametrize("args,phrase", [
    (("generate", "-o", "X"), "needs a PATTERN or --streams"),
    (("generate", "--streams", "S", "--count", "5", "-o", "X"), "--count does not apply"),
    (("generate", "random", "--streams", "S", "-o", "X"), "PATTERN 'random' does not apply"),
    (("generate", "nonsense", "-o", "X"), "unknown pattern 'nonsense'"),
])
def test_cli_errors(tmp_path, args, phrase):
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    args = [str(tmp_path / a) if a in ("X", "S") else a for a in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    assert result.output.startswith("l3fwd-sim: ") and phrase in result.output
    assert len(result.output.strip().splitlines()) == 1
