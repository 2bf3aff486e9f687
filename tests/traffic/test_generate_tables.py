"""`generate` with large rule tables: the destinations are chosen over the whole table in
numpy (``Aims``), and a family's aims go out as one stream of variants (``Variants``).

Oracles: the choice written as a plain loop over the rule lines with a brute-force
longest-prefix match (the rule the generator has always followed: per route the first
of its prefix, next, last and middle address that the table gives the route's port;
the source is the prefix's next address; one aim per destination, the first in file
order); K separate streams, for the variants; the line-by-line grammar test, for the
one that searches the text whole; and digests of outputs written before the rewrite.
"""
from __future__ import annotations

import hashlib
import ipaddress
import random
import re
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from l3fwd_sim.traffic.field_engine import FieldVar, parse_size
from l3fwd_sim.traffic.generate import GenerateOptions, generate, write_traffic
from l3fwd_sim.traffic.patterns import _NAMED_AIMS, Destinations, _rule_grammar
from l3fwd_sim.traffic.streams import PortTraffic, Stream, Traffic, Variants
from l3fwd_sim.traffic.templates import build_stack, default_eth, template_from_scapy

BITS = {4: 32, 6: 128}


def _text(family: int, value: int) -> str:
    return str(ipaddress.IPv4Address(value) if family == 4 else ipaddress.IPv6Address(value))


def brute_lpm(rules: list[tuple[int, int, int]], family: int):
    """lookup(address) -> port of the longest installed prefix (a later duplicate wins), or None."""
    bits = BITS[family]
    table = {}
    for prefix, depth, port in rules:
        if depth and port < 32:                     # installed with every port enabled; /0 picks nothing
            table[depth, prefix >> (bits - depth)] = port

    def lookup(address: int):
        for depth in range(bits, 0, -1):
            port = table.get((depth, address >> (bits - depth)))
            if port is not None:
                return port
        return None
    return lookup


def spec_aims(rules, family: int, ports: int) -> list[tuple[int, int, int]]:
    """(port, source, destination) per aimed route, in file order, as a plain loop."""
    lookup, bits = brute_lpm(rules, family), BITS[family]
    aims, seen = [], set()
    for prefix, depth, port in rules:
        if not depth or port >= min(ports, 32):
            continue
        host = bits - depth
        mask = (1 << host) - 1
        for add in (0, 1, (1 << host) - 1, (1 << host) // 2):
            dst = prefix | (add & mask)
            if lookup(dst) == port:
                if dst not in seen:
                    seen.add(dst)
                    aims.append((port, prefix | (1 & mask), dst))
                break
    return aims


def write_rules(path: Path, family: int, rules) -> Path:
    path.write_text("".join(f"R{_text(family, prefix)}/{depth} {port}\n" for prefix, depth, port in rules))
    return path


def aims_as_tuples(aims) -> list[tuple[int, int, int]]:
    return [(port, int.from_bytes(bytes(src), "big"), int.from_bytes(bytes(dst), "big"))
            for port, src, dst in zip(aims.port.tolist(), aims.src, aims.dst)]


def _rules(family: int):
    """Routes crowded under one /8 (so that they overlap, shadow and repeat each other),
    prefixes often not masked to their depth, depth 0 (never installed in rte_lpm) and
    a port beyond l3fwd's 32 among them."""
    bits = BITS[family]
    base = (10 if family == 4 else 0x20) << (bits - 8)
    net = st.integers(0, 15).map(lambda v: v << (bits - 12))
    host = st.one_of(st.just(0), st.integers(0, (1 << (bits - 12)) - 1))
    depth = st.one_of(st.integers(0, bits), st.sampled_from([8, 12, 13, bits - 1, bits] +
                                                            ([63, 64, 65, 66] if family == 6 else [])))
    rule = st.tuples(net, host, depth, st.sampled_from([0, 1, 2, 3, 40]))
    return st.lists(rule.map(lambda r: (base | r[0] | r[1], r[2], r[3])), min_size=1, max_size=25)


@settings(max_examples=60)
@given(family=st.sampled_from([4, 6]), data=st.data())
def test_lpm_aims_are_the_loops_choice(tmp_path_factory, family, data):
    rules = data.draw(_rules(family))
    ports = data.draw(st.integers(1, 4))
    path = write_rules(tmp_path_factory.mktemp("r") / "r.cfg", family, rules)
    dest = Destinations("udp", path if family == 4 else None, path if family == 6 else None, [])
    assert aims_as_tuples(dest.targets(family, ports)) == spec_aims(rules, family, ports)
    for port in range(4):                        # CONT-BURST and <K>STREAMS: the first aim of the port
        want = [aim for aim in spec_aims(rules, family, 32) if aim[0] == port]
        if want:
            flow = dest.flow(family, port)
            assert (int(ipaddress.ip_address(flow.src)), int(ipaddress.ip_address(flow.dst))) == want[0][1:]


def test_em_flows_to_two_ports_share_a_destination(tmp_path):
    """One aim per destination, chosen after the ports are: a destination whose first
    flow goes to port 1 still gives port 0 its own flow."""
    v4 = tmp_path / "em4.cfg"
    v4.write_text("R10.0.0.1 10.0.0.2 80 1234 17 1\nR10.0.0.1 10.0.0.9 81 1234 17 0\n"
                  "R203.0.113.5 10.0.0.3 9 9 6 2\n")
    dest = Destinations("udp", v4, None, [])
    assert (dest.flow(4, 1).src, dest.flow(4, 0).src, dest.flow(4, 0).dport) == ("10.0.0.2", "10.0.0.9", 81)
    assert len(dest.targets(4, 2)) == 1 and len(dest.targets(4, 1)) == 1
    assert dest.miss_block(4) == (int(ipaddress.ip_address("192.0.2.0")), 256)   # a TCP flow covers 203.0.113.5


# --------------------------------------------------------------------------------------
# variants render as the streams they stand for
# --------------------------------------------------------------------------------------
def _port_files(outdir: Path, ports) -> bytes:
    return b"".join((outdir / f"port{p}.pcap").read_bytes() for p in ports)


@pytest.mark.parametrize("order,group", [("random", 1), ("round-robin", 3), ("sequence", 1)])
def test_variants_are_streams_of_their_own(tmp_path, order, group):
    rng = random.Random(order)
    k = 7
    flows = [(f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}",
              f"198.18.{rng.randrange(256)}.{rng.randrange(256)}", rng.randrange(65536), rng.randrange(65536))
             for _ in range(k)]
    counts = [rng.randrange(0, 40) for _ in range(k)]
    size = parse_size("64-200", "--size")

    def template(port, src, dst, sport, dport):
        return template_from_scapy(build_stack({"eth": default_eth(port), "ipv4": {"src": src, "dst": dst},
                                                "tcp": {"sport": sport, "dport": dport}}))

    def tail(port):          # a stream after them, with a random field: its numbers must not move
        stream = Stream("after", template(port, "1.1.1.1", "2.2.2.2", 9, 9), 25, size)
        stream.fields.append(("ipv4.dst", FieldVar("random", 0, 1 << 20)))
        return stream

    separate = {p: PortTraffic([Stream(f"s{i}", template(p, *flow), c, size) for i, (flow, c) in
                                enumerate(zip(flows, counts))] + [tail(p)], order, group, size=size) for p in (0, 1)}
    values = {"ipv4.src": [ipaddress.IPv4Address(f[0]).packed for f in flows],
              "ipv4.dst": [ipaddress.IPv4Address(f[1]).packed for f in flows],
              "tcp.sport": [struct.pack(">H", f[2]) for f in flows], "tcp.dport": [struct.pack(">H", f[3]) for f in flows]}
    values = {name: np.frombuffer(b"".join(v), np.uint8).reshape(k, -1) for name, v in values.items()}
    joined = {}
    for p in (0, 1):
        stream = Stream("all", template(p, *flows[0]), sum(counts), size,
                        variants=Variants(np.array(counts, np.int64), values, [f"s{i}" for i in range(k)]))
        joined[p] = PortTraffic([stream, tail(p)], order, group, size=size)
    a = write_traffic(Traffic(separate, seed=5), tmp_path / "a", chunk_packets=16)
    b = write_traffic(Traffic(joined, seed=5), tmp_path / "b", chunk_packets=9)
    assert _port_files(tmp_path / "a", (0, 1)) == _port_files(tmp_path / "b", (0, 1))
    assert a["ports"]["0"]["streams"] == b["ports"]["0"]["streams"]


# --------------------------------------------------------------------------------------
# the outputs written before the rewrite, and a table of thousands of routes
# --------------------------------------------------------------------------------------
V4 = ("R198.18.1.0/24 1\nR198.18.1.0/25 3\nR198.18.3.0/24 3\nR10.0.0.0/8 0\nR10.2.0.0/16 2\nR10.1.2.3/8 1\n"
      "R10.0.0.0/16 0\nR192.168.0.0/31 2\nR192.168.0.0/32 2\nR5.5.5.5/32 0\n")
V6 = ("R2001:db8::/32 0\nR2001:db8:1::/48 1\nR2001:db8:2::/48 2\nR2001:db8:3::/48 3\nR2001:db8:2::/64 2\n"
      "R::/1 1\nR8000::/1 0\nR2001:db8:4::1/128 3\nR2001:db8:4::/127 3\nR2400::/63 2\nR2400::/65 1\n")
BEFORE = {"default": ({}, "79258a6325e3ca37f484f463d2c0e2136997cd9a24850e1e5ec1b6f67bdf75d1"),
          "rules": ({"rules": True}, "761785b70920aed45d1f3544cd86d17b7f18af1842f77ed7c3b74e9e95e4ed06"),
          "rules-tcp": ({"rules": True, "proto": "tcp", "size": "imix"},
                        "e3b17e118df20c8b78d1af72202a26abab8483f712d4539a4223fd7086543cba")}


@pytest.mark.parametrize("case", BEFORE)
def test_random_writes_what_it_wrote_before_the_rewrite(tmp_path, case):
    options, digest = BEFORE[case]
    options = dict(options)
    if options.pop("rules", False):
        (tmp_path / "v4.cfg").write_text(V4)
        (tmp_path / "v6.cfg").write_text(V6)
        options.update(rule_ipv4=tmp_path / "v4.cfg", rule_ipv6=tmp_path / "v6.cfg")
    generate(GenerateOptions(outdir=tmp_path / "g", pattern="random", ports=4, count=250, seed=11, **options))
    assert hashlib.sha256(_port_files(tmp_path / "g", range(4))).hexdigest() == digest


def _destinations(path: Path) -> list[int]:
    data, out, pos = path.read_bytes(), [], 24
    while pos < len(data):
        cap = struct.unpack_from("<I", data, pos + 8)[0]
        frame = data[pos + 16:pos + 16 + cap]
        if frame[12:14] == b"\x08\x00":
            out.append(int.from_bytes(frame[30:34], "big"))
        pos += 16 + cap
    return out


def test_thousands_of_routes(tmp_path):
    """More aims than the summary names: one ``ipv4-routes`` entry; every IPv4 packet
    either goes to a route's aim (its LPM port below --ports) or is a miss."""
    rng = np.random.default_rng(3)
    n = 3 * _NAMED_AIMS
    depth = rng.integers(8, 33, n)
    prefix = rng.integers(0, 1 << 32, n, dtype=np.uint64) & ~((np.uint64(1) << (32 - depth).astype(np.uint64)) - np.uint64(1))
    rules = list(zip(prefix.astype(np.int64).tolist(), depth.tolist(), rng.integers(0, 4, n).tolist()))
    path = write_rules(tmp_path / "big.cfg", 4, rules)
    summary = generate(GenerateOptions(outdir=tmp_path / "g", pattern="random", ports=2, count=3000, rule_ipv4=path))
    streams = summary["ports"]["1"]["streams"]
    assert "ipv4-routes" in streams and not any(re.fullmatch(r"ipv4-[0-9.]+", s) for s in streams)
    aims = {dst: port for port, _, dst in spec_aims(rules, 4, 2)}
    assert len(aims) > _NAMED_AIMS
    lookup = brute_lpm(rules, 4)
    for p in (0, 1):
        dsts = _destinations(tmp_path / "g" / f"port{p}.pcap")
        aimed = [d for d in dsts if lookup(d) is not None]           # the rest are misses: no route has them
        assert len(aimed) == summary["ports"][str(p)]["streams"]["ipv4-routes"] > 2000
        assert all(d in aims and lookup(d) == aims[d] for d in aimed)
        assert len(set(aimed)) > len(aimed) // 2                     # spread over the routes


# --------------------------------------------------------------------------------------
# the rule file's grammar, found without splitting it into lines
# --------------------------------------------------------------------------------------
def grammar_by_lines(text: str) -> str:
    """The definition: a ``@`` line makes it ACL, else the first R line decides."""
    lines = text.splitlines()
    if any(line.startswith("@") for line in lines):
        return "acl"
    for line in lines:
        if line.startswith("R"):
            fields = line[1:].split("#")[0].split()
            if ":" in fields or len(fields) >= 9 or (len(fields) >= 2 and "/" in fields[0] and "/" in fields[1]):
                return "acl"
            return "em" if len(fields) == 6 else "lpm"
    return "lpm"


_PIECES = ["R", "@", "#", " ", ":", "/", "1.2.3.4/8", "10.0.0.1", "0 : 65535", "6/0xff", "x", "\n", "\r\n", "\r",
           "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "é"]


@settings(max_examples=300)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_rule_grammar_is_the_line_by_line_one(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("g") / "rules.cfg"
    path.write_text(text, newline="")
    assert _rule_grammar(path) == grammar_by_lines(path.read_text(errors="replace"))
