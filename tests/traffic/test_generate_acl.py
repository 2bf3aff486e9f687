"""`l3fwd-sim generate` with dpdk-l3fwd's ACL rule files (acl.md).

Independent of l3fwd_sim's classifier and rule parser: rule files are read by the test
oracle's parser (tests/support/oracle.py), packets are taken apart with struct, the first
matching line of a packet is found by a brute-force loop over the rules written from
acl.md ("Field semantics", "Priority: file order decides"), and which lines a packet of
the protocol can reach at all is decided exhaustively over the grid of every rule
boundary (each field cut at every rule's low end and high end + 1: a cell of that grid
lies wholly inside or wholly outside every rule, so one point per cell tells all).
`l3fwd-sim run --lookup acl` then has to forward, deny and miss the packets as aimed.
"""
from __future__ import annotations

import ipaddress
import json
import re
import struct
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from forwarding import GOLDEN, run_cli
from frames import read_pcap_frames
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import parse_rule_file_acl

from l3fwd_sim import RunOptions, SimError, run
from l3fwd_sim.traffic.generate import GenerateOptions, generate

ACL4, ACL6 = GOLDEN / "acl" / "acl_v4.cfg", GOLDEN / "acl" / "acl_v6.cfg"
PROTO = {"udp": 17, "tcp": 6}
BITS = {4: 32, 6: 128}
MISS_BLOCKS = {4: ["203.0.113.0/24", "192.0.2.0/24", "198.51.100.0/24"],
               6: ["2001:db8::/120", "100::/120", "2001:db8:ffff::/120"]}


# --------------------------------------------------------------------------------------
# an ACL classifier written from acl.md, on the oracle's parse of the rule file
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rule:
    line: int
    kind: str                 # "R" or "@"
    port: int | None
    src: tuple[int, int]      # inclusive intervals
    dst: tuple[int, int]
    sport: tuple[int, int]
    dport: tuple[int, int]
    proto: int
    mask: int

    def admits(self, proto: int) -> bool:
        return proto & self.mask == self.proto & self.mask

    def fields(self):
        return self.src, self.dst, self.sport, self.dport


def _bounds(net: str) -> tuple[int, int]:
    net = ipaddress.ip_network(net, strict=False)
    return int(net.network_address), int(net.broadcast_address)


def load_rules(path, family) -> list[Rule]:
    """The rule lines in file order, with their line numbers."""
    parsed = parse_rule_file_acl(path, family)
    lines = [n for n, text in enumerate(Path(path).read_text().split("\n"), 1) if text[:1] in ("R", "@")]
    assert len(lines) == len(parsed)
    return [Rule(line, kind, port, _bounds(src), _bounds(dst), sport, dport, pm[0], pm[1])
            for line, (kind, src, dst, sport, dport, pm, port) in zip(lines, parsed)]


def first_match(rules: list[Rule], proto, src, dst, sport, dport) -> Rule | None:
    key = (src, dst, sport, dport)
    for rule in rules:
        if rule.admits(proto) and all(lo <= k <= hi for k, (lo, hi) in zip(key, rule.fields())):
            return rule
    return None


def reachable(rules: list[Rule], proto: int, family: int) -> tuple[set[int], bool]:
    """Lines that some packet of ``proto`` first-matches, and whether some packet
    matches no line: first match of one point per cell of the boundary grid."""
    limits = (1 << BITS[family], 1 << BITS[family], 1 << 16, 1 << 16)
    starts = [sorted({0} | {r.fields()[f][0] for r in rules} |
                     {r.fields()[f][1] + 1 for r in rules if r.fields()[f][1] + 1 < limits[f]})
              for f in range(4)]
    first = np.full([len(s) for s in starts], -1)
    for k, rule in enumerate(rules):
        if not rule.admits(proto):
            continue
        inside = [np.array([lo <= s <= hi for s in starts[f]]) for f, (lo, hi) in enumerate(rule.fields())]
        box = inside[0][:, None, None, None] & inside[1][None, :, None, None] \
            & inside[2][None, None, :, None] & inside[3][None, None, None, :]
        first[(first < 0) & box] = k
    return {rules[k].line for k in np.unique(first) if k >= 0}, bool((first < 0).any())


def five_tuple(frame: bytes) -> tuple[int, int, int, int, int, int]:
    """(family, proto, src, dst, sport, dport) of an Ether/IPv4/L4 or Ether/IPv6/L4
    frame, reading the L4 header where the IP header says it is."""
    ethertype = struct.unpack("!H", frame[12:14])[0]
    if ethertype == 0x0800:
        assert frame[14] >> 4 == 4
        l4 = 14 + 4 * (frame[14] & 15)
        family, proto, src, dst = 4, frame[23], frame[26:30], frame[30:34]
    else:
        assert ethertype == 0x86DD and frame[14] >> 4 == 6
        family, proto, src, dst, l4 = 6, frame[20], frame[22:38], frame[38:54], 54
    sport, dport = struct.unpack("!HH", frame[l4:l4 + 4])
    return family, proto, int.from_bytes(src, "big"), int.from_bytes(dst, "big"), sport, dport


# --------------------------------------------------------------------------------------
# generate, classify every packet, run
# --------------------------------------------------------------------------------------
_AIM = re.compile(r"ipv([46])-line(\d+)-(?:p(\d+)|(deny))")


def check_random(tmp: Path, v4: Path, v6: Path, proto="udp", ports=4, count=1000, seed=1, complete=True) -> dict:
    """Generate ``random`` under the ACL files and check (a) every packet aimed at a line
    is first-matched by that line, every line any packet can reach is aimed at, with
    about even shares, (b) every miss matches no line, (c) run --lookup acl forwards,
    denies and misses them so. ``complete=False``: lines the generator says it found no
    flow for may be reachable. Returns the generate summary."""
    summary = generate(GenerateOptions(outdir=tmp / "gen", pattern="random", ports=ports, count=count,
                                       proto=proto, rule_ipv4=v4, rule_ipv6=v6, seed=seed))
    rules = {4: load_rules(v4, 4), 6: load_rules(v6, 6)}
    by_line = {family: {r.line: r for r in rules[family]} for family in rules}
    aimed, misses = Counter(), 0
    streams, aimed_on = set(), {}
    for port, info in summary["ports"].items():
        aimed_on[int(port)] = Counter()
        for name, packets in info["streams"].items():
            if (m := _AIM.fullmatch(name)) is None:
                assert re.fullmatch(r"ipv[46]-miss", name), name
                misses += packets
                continue
            family, line = int(m[1]), int(m[2])
            rule = by_line[family][line]
            assert (rule.kind, rule.port) == (("@", None) if m[4] else ("R", int(m[3]))), name
            aimed[family, line] += packets
            aimed_on[int(port)][family, line] += packets
            streams.add((family, line))
    got, got_misses = Counter(), 0
    for p in range(ports):
        got_on = Counter()
        for frame in read_pcap_frames(tmp / "gen" / f"port{p}.pcap"):
            # today's format at the default 64 bytes: IPv4 60, IPv6/UDP 62, IPv6/TCP 74 bytes
            assert len(frame) == (60 if frame[12:14] == b"\x08\x00" else 62 if proto == "udp" else 74)
            family, number, *key = five_tuple(frame)
            assert number == PROTO[proto]
            rule = first_match(rules[family], number, *key)
            if rule is None:
                got_misses += 1
            else:
                got_on[family, rule.line] += 1
        assert got_on == +aimed_on[p], f"port {p}: packets per first-matching line"
        got += got_on
    # (a) each line's packets (per input port) are exactly the packets aimed at it
    assert got == +aimed
    for family in (4, 6):
        lines, can_miss = reachable(rules[family], PROTO[proto], family)
        aimed_lines = {line for f, line in streams if f == family}
        if complete:
            assert aimed_lines == lines, f"IPv{family}: lines aimed at"
        else:
            assert aimed_lines <= lines
            given_up = {int(n) for w in summary["warnings"] if "packet they match first gave up" in w
                        and f"rules of {v4 if family == 4 else v6} " in w
                        for n in re.search(r"\(lines? ([\d, ]+)\)$", w)[1].split(", ")}
            assert lines - aimed_lines <= given_up and not given_up & aimed_lines     # may be shadowed too
        no_miss = f"no IPv{family} misses" in " ".join(summary["warnings"])
        if not can_miss:
            assert no_miss
        if no_miss:                      # every test block from each port's usual source hits a line
            for p in range(ports):
                src = int(ipaddress.ip_address(f"198.18.{p}.1" if family == 4 else f"2001:200:0:{p:x}::1"))
                for block in MISS_BLOCKS[family]:
                    net = ipaddress.ip_network(block)
                    first = int(net.network_address)
                    assert any(first_match(rules[family], PROTO[proto], src, first + k, 9, 9)
                               for k in range(net.num_addresses)), (p, block)
    # (b) misses match nothing, and are about 1/8
    assert got_misses == misses
    total = ports * count
    miss_share = (1 / 8 if streams else 1) if misses else 0      # no line reachable: all misses
    if misses:
        assert abs(misses - total * miss_share) < 5 * (total * miss_share) ** 0.5 + 2
    if streams:
        each = total * (1 - miss_share) / len(streams)
        for key in streams:
            assert abs(aimed[key] - each) < 5 * each ** 0.5 + 3, (key, aimed[key], each)
    # (c) l3fwd-sim run --lookup acl
    result = run_cli("run", tmp / "gen", "-o", tmp / "out", "--lookup", "acl", "--rule_ipv4", v4, "--rule_ipv6", v6,
                     "-p", "0xf", "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    denied = sum(n for (f, line), n in aimed.items() if by_line[f][line].kind == "@")
    assert stats["drops"]["acl_deny"] == denied
    assert stats["drops"]["acl_miss"] == misses
    assert stats["totals"]["dropped"] == denied + misses
    out = Counter()
    for (f, line), n in aimed.items():
        if by_line[f][line].kind == "R":
            out[by_line[f][line].port] += n
    assert {int(p): s["out"] for p, s in stats["ports"].items() if s["out"]} == +out
    return summary


# --------------------------------------------------------------------------------------
# golden rule files
# --------------------------------------------------------------------------------------
def test_random_golden_udp(tmp_path):
    summary = check_random(tmp_path, ACL4, ACL6, "udp")
    warnings = summary["warnings"]
    # both files end in a UDP catch-all: no misses, said once per family
    assert sum("no IPv4 misses" in w for w in warnings) == sum("no IPv6 misses" in w for w in warnings) == 1
    rules4 = load_rules(ACL4, 4)
    not_udp = [r.line for r in rules4 if not r.admits(17)]
    note = next(w for w in warnings if "rules of " + str(ACL4) in w and "admits no UDP" in w)
    assert note.startswith(f"random: {len(not_udp)} of the {len(rules4)} rules")
    assert ", ".join(map(str, not_udp[:12])) in note


def test_random_golden_tcp_has_misses(tmp_path):
    summary = check_random(tmp_path, ACL4, ACL6, "tcp", ports=4, count=800, seed=3)
    streams = summary["ports"]["0"]["streams"]
    assert streams["ipv4-miss"] and streams["ipv6-miss"]
    assert not any("misses" in w for w in summary["warnings"])


# --------------------------------------------------------------------------------------
# hand-made files: shadowing, thin regions, protocol masks, /0, /32, /128
# --------------------------------------------------------------------------------------
def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


V4_SHADOWS = """\
# line 2 takes 10.0.0.0/8 from line 4; line 3 takes destination port 9 from it
@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0/0
@0.0.0.0/0 198.18.1.0/24 0 : 65535 9 : 9 17/0xff
R10.0.0.0/7 198.18.1.0/24 0 : 65535 0 : 65535 17/0xff 1
R10.1.2.3/32 198.18.1.5/32 0 : 65535 0 : 65535 0/0 2
R0.0.0.0/1 0.0.0.0/0 0 : 65535 0 : 65535 1/0xff 0
R198.18.0.0/15 198.18.1.0/24 1024 : 65535 1000 : 2000 16/0xf0 3
@198.18.0.0/15 198.18.1.0/24 1024 : 65535 1500 : 1500 0x11/0xfb
R0.0.0.0/0 198.18.1.0/24 0 : 65535 0 : 65535 0x11/0xff 0
"""
V6_SHADOWS = """\
R2001:db8:1:2:0:0:0:3/128 2001:200:0:1:0:0:0:5/128 80 : 80 53 : 53 17/0xff 3
@2001:db8:1:2:0:0:0:0/64 2001:200:0:1:0:0:0:0/64 0 : 65535 0 : 65535 0/0
R2001:db8:1:2:0:0:0:0/63 2001:200:0:1:0:0:0:0/64 0 : 65535 0 : 65535 17/0xff 2
R2001:db8:1:2:8000:0:0:0/65 2001:200:0:1:0:0:0:0/64 0 : 65535 0 : 65535 17/0xff 1
R0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 58/0xff 0
"""


def test_random_shadowed_and_thin_rules(tmp_path):
    v4, v6 = _write(tmp_path / "v4.cfg", V4_SHADOWS), _write(tmp_path / "v6.cfg", V6_SHADOWS)
    summary = check_random(tmp_path, v4, v6, "udp", count=1200)
    warnings = summary["warnings"]
    assert f"random: 1 of the 8 rules of {v4} get no traffic: their proto/mask admits no UDP (17) (line 6)" in warnings
    # line 5 lies in line 2's deny, line 8 in line 7's route
    assert any(w.startswith(f"random: 2 of the 8 rules of {v4} get no traffic: earlier lines") and
               w.endswith("(lines 5, 8)") for w in warnings), warnings
    # line 4 of v6 (a /65 of the deny /64 of line 2) is shadowed; line 3's /63 keeps its other /64
    assert any(f"random: 1 of the 5 rules of {v6} get no traffic: earlier lines" in w and w.endswith("(line 4)")
               for w in warnings)
    frame_of = {}
    for frame in read_pcap_frames(tmp_path / "gen" / "port0.pcap"):
        family, _, src, dst, sport, dport = five_tuple(frame)
        rule = first_match(load_rules(v4 if family == 4 else v6, family), 17, src, dst, sport, dport)
        frame_of[family, rule.line if rule else None] = (src, dst, sport, dport)
    src, _, _, dport = frame_of[4, 4]                  # only 11.0.0.0/8, destination port not 9
    assert src >> 24 == 11 and dport != 9
    src, *_ = frame_of[6, 3]                            # only 2001:db8:1:3::/64
    assert src >> 64 == 0x20010DB800010003


def test_random_search_gives_up(tmp_path, monkeypatch):
    """With a search of one box per shadowed rule, the reachable part may be missed: such
    lines are named in a warning, and every flow kept is still first-matched by its line."""
    from l3fwd_sim.traffic import patterns
    monkeypatch.setattr(patterns, "_ACL_SEARCH", 1)
    v4, v6 = _write(tmp_path / "v4.cfg", V4_SHADOWS), _write(tmp_path / "v6.cfg", V6_SHADOWS)
    summary = check_random(tmp_path, v4, v6, "udp", count=400, complete=False)
    assert any("the search for a UDP packet they match first gave up" in w for w in summary["warnings"])


def test_random_catch_all_first_line(tmp_path):
    """A catch-all first line: every later line is shadowed, nothing misses."""
    v4 = _write(tmp_path / "v4.cfg", "R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0 1\n"
                                     "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 17/0xff\n")
    v6 = _write(tmp_path / "v6.cfg", "@0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0\n"
                                     "R0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 0/0 2\n")
    summary = check_random(tmp_path, v4, v6, "tcp", ports=2, count=300)
    assert set(summary["ports"]["1"]["streams"]) == {"ipv4-line1-p1", "ipv6-line1-deny"}
    assert any("no IPv4 misses" in w for w in summary["warnings"])


_V4_NETS = ["0.0.0.0/0", "10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "10.1.2.3/32", "10.1.2.128/25",
            "198.18.0.0/15", "198.18.1.0/24", "198.18.1.5/32", "198.18.0.1/32", "203.0.113.0/24", "203.0.113.7/32"]
_V6_NETS = ["::/0", "2001:db8::/32", "2001:db8:1::/48", "2001:db8:1:2::/64", "2001:db8:1:2::3/128",
            "2001:db8:1:2:8000::/65", "2001:200::/48", "2001:200:0:1::/64", "2001:200:0:1::5/128",
            "2001:200::1/128", "2001:db8::/120", "2001:db8::42/128"]
_RANGES = [(0, 65535), (0, 0), (9, 9), (0, 1023), (1024, 65535), (53, 53), (80, 80), (1000, 2000),
           (1500, 1600), (65535, 65535), (0, 8), (10, 65535)]
_PROTOS = [(17, 0xFF), (6, 0xFF), (0, 0), (6, 0xFE), (16, 0xF0), (0, 0x80), (1, 0xFF), (0x11, 0xFB),
           (132, 0xFF), (0x80, 0x80), (58, 0xFF)]


def _acl_net(net: str) -> str:
    net = ipaddress.ip_network(net)
    addr = net.network_address.exploded if net.version == 6 else str(net.network_address)
    return f"{addr}/{net.prefixlen}"      # eight groups for IPv6: l3fwd takes no '::'


def _rule_line(nets, draw) -> str:
    kind = draw(st.sampled_from("R@"))
    src, dst = (_acl_net(draw(st.sampled_from(nets))) for _ in range(2))
    (slo, shi), (dlo, dhi) = draw(st.sampled_from(_RANGES)), draw(st.sampled_from(_RANGES))
    proto, mask = draw(st.sampled_from(_PROTOS))
    sep = draw(st.sampled_from([" ", "\t"]))
    line = f"{kind}{src}{sep}{dst}{sep}{slo} : {shi}{sep}{dlo} : {dhi}{sep}{proto:#x}/{mask:#x}"
    return line + (f" {draw(st.integers(0, 3))}" if kind == "R" else "")


@st.composite
def rule_files(draw):
    files = []
    for nets in (_V4_NETS, _V6_NETS):
        lines = [_rule_line(nets, draw) for _ in range(draw(st.integers(1, 10)))]
        if not any(line.startswith("R") for line in lines):
            lines.append(f"R{_acl_net(nets[0])} {_acl_net(nets[0])} 0 : 65535 0 : 65535 0/0 {draw(st.integers(0, 3))}")
        files.append("# generated\n" + "\n".join(lines) + "\n")
    return files


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=rule_files(), proto=st.sampled_from(["udp", "tcp"]), seed=st.integers(0, 99))
def test_random_rule_files(tmp_path, files, proto, seed):
    tmp = Path(tempfile.mkdtemp(dir=tmp_path))
    v4, v6 = _write(tmp / "v4.cfg", files[0]), _write(tmp / "v6.cfg", files[1])
    check_random(tmp, v4, v6, proto, ports=4, count=400, seed=seed)


# --------------------------------------------------------------------------------------
# flow(family, port): CONT-BURST and STREAMS patterns route through R lines
# --------------------------------------------------------------------------------------
def test_cont_burst_map_under_acl(tmp_path):
    """Golden files route to ports 0, 1 and 3 (ACL lines above may deny or take part of
    each route line): every packet goes to map(p)."""
    summary = generate(GenerateOptions(outdir=tmp_path / "gen", pattern="ipv4/ipv6-cont-burst", ports=4, count=10,
                                       port_map="1,3,0,1", proto="tcp", rule_ipv4=ACL4, rule_ipv6=ACL6))
    assert [w for w in summary["warnings"] if not w.startswith("Ether/IPv6/TCP: sizes below")] == []
    rules = {4: load_rules(ACL4, 4), 6: load_rules(ACL6, 6)}
    for p, out in enumerate((1, 3, 0, 1)):
        for frame in read_pcap_frames(tmp_path / "gen" / f"port{p}.pcap"):
            family, proto, *key = five_tuple(frame)
            rule = first_match(rules[family], proto, *key)
            assert rule is not None and (rule.kind, rule.port) == ("R", out)
    stats = run(RunOptions(inputs={p: tmp_path / "gen" / f"port{p}.pcap" for p in range(4)}, outdir=tmp_path / "out",
                           lookup="acl", rule_ipv4=ACL4, rule_ipv6=ACL6, pipeline="simple"))
    assert stats["totals"]["dropped"] == 0
    assert {p: s["out"] for p, s in stats["ports"].items()} == {"0": 10, "1": 20, "2": 0, "3": 10}


def test_no_route_line_to_port(tmp_path):
    with pytest.raises(SimError, match=r"^no IPv4 UDP flow routes to port 2 under .*acl_v4.cfg: no R line to port 2"):
        generate(GenerateOptions(outdir=tmp_path / "g", pattern="IPV4-4STREAMSX1", count=4,
                                 rule_ipv4=ACL4, rule_ipv6=ACL6))


def test_route_ports_beyond_inputs_and_one_family(tmp_path):
    summary = generate(GenerateOptions(outdir=tmp_path / "g", pattern="random", ports=2, count=50,
                                       rule_ipv4=ACL4, rule_ipv6=ACL6))
    assert f"{ACL4} routes to port 3, beyond the 2 generated ports: run it with -p 0xb (dpdk-l3fwd refuses " \
           "ACL rules to ports it does not enable)" in summary["warnings"]
    summary = generate(GenerateOptions(outdir=tmp_path / "h", pattern="random", ports=4, count=50, rule_ipv4=ACL4))
    assert any(w.startswith("IPv6 flows follow the default LPM/EM tables") for w in summary["warnings"])


# --------------------------------------------------------------------------------------
# errors: one line each
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("text,phrase", [
    ("R10.0.0.0/8 198.18.0.0/16 0 : 65535 0 : 65535 17/0xff\n", r"v4.cfg:1: missing fields \(9 of 10\)"),
    ("# x\nR10.0.0.0/8 198.18.0.0/16 0:65535 0:65535 17/0xff 1\n", r"v4.cfg:2: port range '0:65535' must be written"),
    ("@10.0.0.0/8 198.18.0.0/16 0 : 65535 0 : 65535 17/0xff\n", r"v4.cfg: no route \('R'\) line"),
    ("R10.0.0.0/8 198.18.0.0/16 0 : 65535 0 : 65535 17/0xff 1\nX\n", r"v4.cfg:2: ACL rule lines must start"),
    ("R10.0.0.0/33 198.18.0.0/16 0 : 65535 0 : 65535 17/0xff 1\n", r"v4.cfg:1: .*prefix length"),
    ("R10.0.0.0/8 198.18.0.0/16 9 : 8 0 : 65535 17/0xff 1\n", r"v4.cfg:1: bad source port range"),
])
def test_malformed_acl_files(tmp_path, text, phrase):
    v4 = _write(tmp_path / "v4.cfg", text)
    with pytest.raises(SimError, match=phrase) as err:
        generate(GenerateOptions(outdir=tmp_path / "g", pattern="random", rule_ipv4=v4, rule_ipv6=ACL6))
    assert "\n" not in str(err.value)


def test_cli_error_is_one_line(tmp_path):
    from click.testing import CliRunner

    from l3fwd_sim.cli import main
    v6 = _write(tmp_path / "v6.cfg", "R2001:db8::/32 2001:200::/48 0 : 65535 0 : 65535 17/0xff 1\n")
    result = CliRunner().invoke(main, ["generate", "IPV6-CONT-BURST", "-o", str(tmp_path / "g"),
                                       "--rule_ipv4", str(ACL4), "--rule_ipv6", str(v6)])
    assert result.exit_code != 0
    assert result.output.startswith("l3fwd-sim: ") and "v6.cfg:1: bad IPv6 source address" in result.output
    assert len(result.output.strip().splitlines()) == 1
