"""``l3fwd-sim lookup`` against independent oracles — brute force over the rule file's
own lines (longest prefix, a later duplicate line winning, fib's /0 default, routes to
ports outside the portmask absent; EM's later duplicate; ACL's first match) on
generated rule files — against what ``l3fwd-sim run`` does with packets carrying the
keys (both pipelines), and the command line: text, --json, errors, warnings, the docs'
console examples."""
from __future__ import annotations

import ipaddress
import json
import re
import shlex
import shutil
import struct
import tempfile
from pathlib import Path

import pytest
from forwarding import GOLDEN, REPO, simulate
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw

from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd.keys import key_text, parse_key
from l3fwd_sim.l3fwd.lookup import ACL_MISS, FORWARD, MISS, NOT_TCP_UDP, LookupOptions, lookup

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BITS = {4: 32, 6: 128}
ADDRESS = {4: ipaddress.IPv4Address, 6: ipaddress.IPv6Address}
NAME = {6: "tcp", 17: "udp"}


# ---------------------------------------------------------------------------------------
# the oracles: the rule file's lines, read here with ipaddress, searched by brute force
# ---------------------------------------------------------------------------------------
def rule_lines(path: Path) -> list[tuple[int, list[str]]]:
    """(line number, tokens after the lead character) of every rule line, lead kept as tokens[0]."""
    found = []
    for number, line in enumerate(path.read_text().split("\n"), 1):
        if line[:1] in ("R", "@"):
            found.append((number, [line[0], *line[1:].split("#")[0].split()]))
    return found


def enabled(port: int, portmask: int) -> bool:
    return port < 32 and bool(portmask >> port & 1)


def lpm_oracle(path: Path, address: int, portmask: int, fib: bool) -> tuple[int, int] | None:
    """(line, port) of the longest enabled prefix holding ``address`` (a later line of
    the same prefix wins; /0 only for fib), or None."""
    best = None
    for number, (_, prefix, port) in rule_lines(path):
        network = ipaddress.ip_network(prefix, strict=False)
        if not enabled(int(port), portmask) or not (network.prefixlen or fib):
            continue
        if ADDRESS[network.version](address) in network and (best is None or network.prefixlen >= best[0]):
            best = (network.prefixlen, number, int(port))
    return best and best[1:]


def em_oracle(path: Path, family: int, flow: tuple, portmask: int, installed: bool) -> tuple[int, int] | None:
    """(line, port) of the last enabled line of exactly this (dst, src, dport, sport,
    proto), or None; ``installed``: whether l3fwd installs this family at all."""
    found = None
    for number, (_, dst, src, dport, sport, proto, port) in rule_lines(path):
        line_flow = (int(ADDRESS[family](dst)), int(ADDRESS[family](src)), int(dport, 0), int(sport, 0),
                     int(proto, 0))
        if installed and line_flow == flow and enabled(int(port, 0), portmask):
            found = (number, int(port, 0))
    return found


def acl_oracle(path: Path, proto: int, src: int, dst: int, sport: int, dport: int) -> tuple[int, int | None] | None:
    """(line, port or None for a deny) of the first line matching, or None."""
    for number, (lead, src_net, dst_net, slo, _, shi, dlo, _, dhi, proto_mask, *port) in rule_lines(path):
        value, mask = (int(x, 0) for x in proto_mask.split("/"))
        nets = [ipaddress.ip_network(n, strict=False) for n in (src_net, dst_net)]
        if (ADDRESS[nets[0].version](src) in nets[0] and ADDRESS[nets[1].version](dst) in nets[1]
                and int(slo, 0) <= sport <= int(shi, 0) and int(dlo, 0) <= dport <= int(dhi, 0)
                and proto & mask == value & mask):
            return number, (int(port[0], 0) if lead == "R" else None)
    return None


# ---------------------------------------------------------------------------------------
# generated rule files: overlaps, duplicates, comments, ports outside the portmask
# ---------------------------------------------------------------------------------------
def bases(family: int) -> list[int]:
    return [0x0A000000, 0x0A010000, 0xC6120000] if family == 4 else \
        [0x20010DB8 << 96, 0x20010DB8_00010000 << 64, 0xFD << 120]


@st.composite
def lpm_files(draw, family: int, fib: bool, max_port: int = 39):
    """(text, [(prefix, depth)]) of an LPM/FIB rule file with overlapping prefixes,
    routing to ports 0..max_port."""
    bits = BITS[family]
    depths = st.sampled_from([0, 1, 8, 16, 24, 25, 32] if family == 4 else [0, 1, 32, 48, 64, 65, 128])
    rules = draw(st.lists(st.tuples(st.sampled_from(bases(family)), depths, st.integers(0, 2**bits - 1),
                                    st.integers(0, max_port)), max_size=25))
    lines, kept = [f"# generated IPv{family} rules"], []
    for base, depth, noise, port in rules:
        if depth == 0 and not fib:
            continue
        prefix = base | noise >> depth if depth else noise       # host bits set: rte_lpm masks them
        lines.append(f"R{ADDRESS[family](prefix)}/{depth} {port}")
        kept.append((prefix, depth))
        if draw(st.booleans()):
            lines.append(draw(st.sampled_from(["", "# comment", "   "])))
        if kept and draw(st.integers(0, 4)) == 0:                # a duplicate prefix, another port
            again = draw(st.sampled_from(kept))
            lines.append(f"R{ADDRESS[family](again[0])}/{again[1]} {draw(st.integers(0, max_port))}")
    return "\n".join(lines) + "\n", kept


def addresses_near(draw, family: int, kept: list) -> list[int]:
    bits = BITS[family]
    picked = [draw(st.integers(0, 2**bits - 1)) for _ in range(3)]
    for prefix, depth in kept[:12]:
        picked.append(prefix)
        picked.append(prefix ^ draw(st.integers(0, 2**bits - 1)) >> max(depth, 1))
    return picked


def write(root: Path, name: str, text: str) -> Path:
    (root / name).write_text(text)
    return root / name


@PROPS
@given(data=st.data(), fib=st.booleans(), portmask=st.sampled_from([None, 0x1, 0xF, 0xA5, 0xFFFF, 0xFFFFFFFF]),
       port=st.sampled_from([None, 0]))
def test_lpm_and_fib_against_brute_force(data, fib, portmask, port):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files, keys = {}, []
        for family in (4, 6):
            text, kept = data.draw(lpm_files(family, fib))
            files[family] = write(root, f"v{family}.cfg", text)
            keys += [str(ADDRESS[family](a)) for a in addresses_near(data.draw, family, kept)]
        report = lookup(LookupOptions(keys=keys, lookup="fib" if fib else "lpm", portmask=portmask,
                                      rule_ipv4=files[4], rule_ipv6=files[6], port=port))
        mask = 0xFFFFFFFF if portmask is None else portmask
        assert report["portmask"] == f"0x{mask:x}"
        for text, result in zip(keys, report["results"]):
            family = 4 if "." in text else 6
            expected = lpm_oracle(files[family], int(ADDRESS[family](text)), mask, fib)
            assert (result["key"], result["table"]) == (text, f"{'fib' if fib else 'lpm'}{family}")
            if expected is None:
                assert (result["rule"], result["next_hop"], result["action"]) == (None, None, MISS)
                assert result["tx_port"] == port
            else:
                line, hop = expected
                assert result["rule"] == {"file": str(files[family]), "line": line,
                                          "text": files[family].read_text().split("\n")[line - 1]}
                assert (result["next_hop"], result["tx_port"], result["action"]) == (hop, hop, FORWARD)


@st.composite
def em_files(draw, family: int, max_port: int = 39):
    """(text, flows) of an EM rule file: flows from a small pool, so lines repeat;
    ports 0..max_port."""
    bits = BITS[family]
    pool = draw(st.lists(st.tuples(st.integers(0, 2**bits - 1), st.integers(0, 2**bits - 1),
                                   st.integers(0, 65535), st.integers(0, 65535), st.sampled_from([6, 17, 6, 17, 1])),
                         min_size=1, max_size=6))
    lines = ["# R<dst_ip> <src_ip> <dst_port> <src_port> <proto> <out_port>"]
    for _ in range(draw(st.integers(0, 15))):
        dst, src, dport, sport, proto = draw(st.sampled_from(pool))
        lines.append(f"R{ADDRESS[family](dst)} {ADDRESS[family](src)} {dport} {sport} {hex(proto)} "
                     f"{draw(st.integers(0, max_port))}")
    return "\n".join(lines) + "\n", pool


def five_tuple(family: int, flow: tuple) -> str:
    dst, src, dport, sport, proto = flow
    endpoint = "{}:{}" if family == 4 else "[{}]:{}"
    return (f"{NAME.get(proto, proto)} {endpoint.format(ADDRESS[family](src), sport)} > "
            f"{endpoint.format(ADDRESS[family](dst), dport)}")


@PROPS
@given(data=st.data(), ipv6=st.booleans(), portmask=st.sampled_from([None, 0x3, 0xF0F2]))
def test_em_against_brute_force(data, ipv6, portmask):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files, keys = {}, []
        for family in (4, 6):
            text, pool = data.draw(em_files(family))
            files[family] = write(root, f"em{family}.cfg", text)
            keys += [(family, flow) for flow in pool]
            keys.append((family, (pool[0][0], pool[0][1] ^ 1, *pool[0][2:])))         # a near miss
        report = lookup(LookupOptions(keys=[five_tuple(f, flow) for f, flow in keys], lookup="em",
                                      portmask=portmask, rule_ipv4=files[4], rule_ipv6=files[6], ipv6=ipv6, port=1))
        mask = 0xFFFFFFFF if portmask is None else portmask
        for (family, flow), result in zip(keys, report["results"]):
            assert result["table"] == f"em{family}"
            if flow[4] not in (6, 17):
                assert (result["rule"], result["tx_port"], result["action"]) == (None, None, NOT_TCP_UDP)
                continue
            expected = em_oracle(files[family], family, flow, mask, installed=(family == 6) == ipv6)
            if expected is None:
                assert (result["rule"], result["next_hop"], result["tx_port"], result["action"]) == (
                None, None, 1, MISS)
            else:
                assert (result["rule"]["line"], result["next_hop"], result["tx_port"]) == (expected[0], expected[1],
                                                                                            expected[1])
        other = 4 if ipv6 else 6
        assert any(f"every IPv{other} key misses" in w for w in report["warnings"])


@st.composite
def acl_files(draw, family: int, route_ports=(0, 1, 2, 3)):
    """An ACL rule file (IPv6 written as eight groups) of overlapping route and deny
    lines, routing to ``route_ports``."""
    bits = BITS[family]

    def net():
        length = draw(st.sampled_from([0, 8, 16, 24, 32] if family == 4 else [0, 32, 48, 64, 128]))
        address = draw(st.sampled_from(bases(family))) | draw(st.integers(0, 2**bits - 1)) >> max(length, 1)
        text = ADDRESS[family](address).exploded if family == 6 else str(ADDRESS[family](address))
        return f"{text}/{length}"

    def ports():
        low = draw(st.sampled_from([0, 9, 53, 1024, 65535]))
        return f"{low} : {draw(st.sampled_from([h for h in (0, 9, 53, 1023, 65535) if h >= low]))}"

    lines = ["# generated"]
    for i in range(draw(st.integers(1, 15))):
        proto = draw(st.sampled_from(["17/0xff", "6/0xfe", "0/0", "1/255"]))
        deny = i and draw(st.booleans())
        lines.append(f"{'@' if deny else 'R'}{net()} {net()} {ports()} {ports()} {proto}"
                     + ("" if deny else f" {draw(st.sampled_from(route_ports))}"))
    return "\n".join(lines) + "\n"


@PROPS
@given(data=st.data())
def test_acl_against_first_match(data):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {family: write(root, f"acl{family}.cfg", data.draw(acl_files(family))) for family in (4, 6)}
        keys = []
        for family in (4, 6):
            for _ in range(12):
                src, dst = (draw_near(data, family) for _ in range(2))
                keys.append((family, (dst, src, data.draw(st.sampled_from([0, 9, 53, 80, 1024, 65535])),
                                      data.draw(st.sampled_from([0, 9, 53, 2000])),
                                      data.draw(st.sampled_from([6, 7, 17, 1, 0, 255])))))
        report = lookup(LookupOptions(keys=[five_tuple(f, flow) for f, flow in keys], lookup="acl",
                                      rule_ipv4=files[4], rule_ipv6=files[6], port=2))
        for (family, (dst, src, dport, sport, proto)), result in zip(keys, report["results"]):
            expected = acl_oracle(files[family], proto, src, dst, sport, dport)
            if expected is None:
                assert (result["rule"], result["tx_port"], result["action"]) == (None, None, ACL_MISS)
            elif expected[1] is None:
                assert (result["rule"]["line"], result["tx_port"]) == (expected[0], None)
                assert result["action"] == f"drop: ACL deny (line {expected[0]})"
            else:
                assert (result["rule"]["line"], result["next_hop"], result["tx_port"], result["action"]) == (
                    expected[0], expected[1], expected[1], FORWARD)


def draw_near(data, family: int) -> int:
    return data.draw(st.sampled_from(bases(family))) | data.draw(st.integers(0, 2**BITS[family] - 1)) >> 20


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from([4, 6]), data=st.data())
def test_golden_acl_files_against_first_match(family, data):
    path = GOLDEN / "acl" / f"acl_v{family}.cfg"
    flow = (draw_near(data, family), draw_near(data, family), data.draw(st.sampled_from([0, 53, 80, 1500, 65535])),
            data.draw(st.sampled_from([0, 443, 1000, 1500, 65535])), data.draw(st.sampled_from([0, 1, 6, 17, 132])))
    (result,) = lookup(LookupOptions(keys=[five_tuple(family, flow)], lookup="acl", rule_ipv4=GOLDEN / "acl" /
                                     "acl_v4.cfg", rule_ipv6=GOLDEN / "acl" / "acl_v6.cfg"))["results"]
    dst, src, dport, sport, proto = flow
    expected = acl_oracle(path, proto, src, dst, sport, dport)
    assert (result["rule"] and result["rule"]["line"], result["tx_port"]) == (
        expected and expected[0], expected and expected[1])


# ---------------------------------------------------------------------------------------
# lookup agrees with run: a packet per key, both pipelines
# ---------------------------------------------------------------------------------------
def packet(key: str, lookup_method: str, index: int) -> bytes:
    """A well-formed packet carrying ``key`` (TTL 64), its index in the payload."""
    frame = parse_key(key, lookup_method).frame
    family = 4 if frame[12:14] == b"\x08\x00" else 6
    proto, src, dst, ports = (frame[23], frame[26:30], frame[30:34], frame[34:38]) if family == 4 else \
        (frame[20], frame[22:38], frame[38:54], frame[54:58])
    payload = Raw(ports + struct.pack(">I", index) + b"x" * 24)
    l3 = IP(src=str(ADDRESS[4](src)), dst=str(ADDRESS[4](dst)), proto=proto, ttl=64) if family == 4 else \
        IPv6(src=str(ADDRESS[6](src)), dst=str(ADDRESS[6](dst)), nh=proto)
    return bytes(Ether(src="00:00:00:00:00:01", dst="02:70:63:61:70:00") / l3 / payload)


def run_ports(root: Path, keys: list[str], in_port: int, pipeline: str, **options) -> list[int | None]:
    """The TX port of each key's packet in ``run`` (None: dropped)."""
    frames = [packet(key, options["lookup"], i) for i, key in enumerate(keys)]
    outputs, _ = simulate(root, {in_port: frames}, pipeline=pipeline, **options)
    where = [None] * len(keys)
    for port, sent in outputs.items():
        for frame in sent:
            at = 38 if frame[12:14] == b"\x08\x00" else 58
            where[struct.unpack_from(">I", frame, at)[0]] = port
    return where


def expected_tx(result: dict, pipeline: str, in_port: int) -> int | None:
    if result["action"] == NOT_TCP_UDP:
        return None if pipeline == "simple" else in_port
    return result["tx_port"]


@pytest.mark.parametrize("method", ["lpm", "fib", "em", "acl"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), portmask=st.sampled_from([0x3, 0xF, 0x35]))
def test_lookup_agrees_with_run(method, data, portmask):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if method == "acl":
            enabled_ports = [p for p in range(4) if portmask >> p & 1]
            files = [write(root, f"acl{f}.cfg", data.draw(acl_files(f, enabled_ports))) for f in (4, 6)]
            some_port = st.sampled_from([0, 9, 53, 1023, 65535])
            keys = [five_tuple(f, (draw_near(data, f), draw_near(data, f), data.draw(some_port), data.draw(some_port),
                                   data.draw(st.sampled_from([6, 17, 1]))))
                    for f in (4, 6) for _ in range(8)]
        elif method == "em":
            drawn = [data.draw(em_files(f, max_port=5)) for f in (4, 6)]
            files = [write(root, f"em{f}.cfg", text) for f, (text, _) in zip((4, 6), drawn)]
            keys = [five_tuple(f, flow) for f, (_, pool) in zip((4, 6), drawn) for flow in pool]
        else:
            drawn = [data.draw(lpm_files(f, method == "fib", max_port=5)) for f in (4, 6)]
            files = [write(root, f"v{f}.cfg", text) for f, (text, _) in zip((4, 6), drawn)]
            keys = [str(ADDRESS[f](a)) for f, (_, kept) in zip((4, 6), drawn)
                    for a in addresses_near(data.draw, f, kept)]
        ipv6 = method == "em" and data.draw(st.booleans())
        in_port = 0
        options = dict(lookup=method, portmask=portmask, rule_ipv4=files[0], rule_ipv6=files[1], ipv6=ipv6)
        report = lookup(LookupOptions(keys=keys, port=in_port, **options))
        for pipeline in ("simple", "multi"):
            sent = run_ports(Path(tempfile.mkdtemp(dir=root)), keys, in_port, pipeline, **options)
            assert sent == [expected_tx(r, pipeline, in_port) for r in report["results"]], pipeline


def test_a_route_outside_the_portmask_is_absent_and_noted(tmp_path):
    v4 = write(tmp_path, "v4.cfg", "R10.0.0.0/8 1\nR10.1.0.0/16 5\nR10.1.0.0/16 0\nR10.2.0.0/16 6\n")
    v6 = write(tmp_path, "v6.cfg", "R::/1 7\n")
    report = lookup(LookupOptions(keys=["10.1.2.3", "10.2.0.1", "11.0.0.1", "::1", "10.3.0.0"], portmask=0x3,
                                  rule_ipv4=v4, rule_ipv6=v6))
    lines = [(r["rule"] and r["rule"]["line"], r["tx_port"], r["note"]) for r in report["results"]]
    assert lines[0][:2] == (3, 0) and lines[0][2] is None          # line 3 is a later duplicate of line 2
    assert lines[1][:2] == (1, 1) and lines[1][2] == (
        "line 4 routes to port 6, outside portmask 0x3, so dpdk-l3fwd does not install it (its next-hop re-check "
        "never applies): line 1 decides instead")
    assert lines[2] == (None, None, None)
    assert lines[3][:2] == (None, None) and lines[3][2].endswith(": the key misses")
    assert lines[4] == (1, 1, None)
    reversed_dup = write(tmp_path, "dup.cfg", "R10.1.0.0/16 0\nR10.1.0.0/16 5\n")
    (result,) = lookup(LookupOptions(keys=["10.1.0.1"], portmask=0x3, rule_ipv4=reversed_dup, rule_ipv6=v6))["results"]
    assert (result["rule"]["line"], result["tx_port"]) == (1, 0)
    assert result["note"].startswith("line 2 routes to port 5")


def test_em_rule_to_a_port_outside_the_portmask_never_reaches_the_recheck(tmp_path):
    """l3fwd_em.h sends a next hop outside the portmask back to the input port; l3fwd
    never installs such a flow, so the key misses (back out of the input port too)."""
    em4 = write(tmp_path, "em4.cfg", "R198.18.0.0 198.18.0.1 9 9 0x11 0\nR198.18.0.0 198.18.0.1 9 9 0x11 9\n")
    em6 = write(tmp_path, "em6.cfg", (REPO / "routes" / "em_default_v6.cfg").read_text())
    key = "udp 198.18.0.1:9 > 198.18.0.0:9"
    (inside,) = lookup(LookupOptions(keys=[key], lookup="em", rule_ipv4=em4, rule_ipv6=em6))["results"]
    assert (inside["rule"]["line"], inside["tx_port"], inside["note"]) == (2, 9, None)
    (outside,) = lookup(LookupOptions(keys=[key], lookup="em", portmask=0x3, rule_ipv4=em4, rule_ipv6=em6,
                                      port=1))["results"]
    assert (outside["rule"]["line"], outside["tx_port"], outside["action"]) == (1, 0, FORWARD)
    assert outside["note"].startswith("line 2 routes to port 9, outside portmask 0x3")
    only = write(tmp_path, "only.cfg", "R198.18.0.0 198.18.0.1 9 9 0x11 9\n")
    (missed,) = lookup(LookupOptions(keys=[key], lookup="em", portmask=0x3, rule_ipv4=only, rule_ipv6=em6,
                                     port=1))["results"]
    assert (missed["rule"], missed["tx_port"], missed["action"]) == (None, 1, MISS)


def test_fib_default_route_is_a_rule(tmp_path):
    v4 = write(tmp_path, "v4.cfg", "R0.0.0.0/0 2\nR10.0.0.0/8 1\nR0.0.0.0/0 3\n")
    v6 = write(tmp_path, "v6.cfg", "R2001:db8::/32 1\n")
    results = lookup(LookupOptions(keys=["10.9.9.9", "11.0.0.1", "2001:db9::1"], lookup="fib", rule_ipv4=v4,
                                   rule_ipv6=v6))["results"]
    assert [(r["rule"] and r["rule"]["text"], r["tx_port"]) for r in results] == [
        ("R10.0.0.0/8 1", 1), ("R0.0.0.0/0 3", 3), (None, None)]
    with pytest.raises(SimError, match="depth 0 is rejected by rte_lpm"):
        lookup(LookupOptions(keys=["10.9.9.9"], rule_ipv4=v4, rule_ipv6=v6))


def test_defaults_warnings_and_errors(tmp_path):
    report = lookup(LookupOptions(keys=["198.18.1.7", "2001:200:0:3::1"]))
    assert [r["rule"] for r in report["results"]] == [
        {"file": "routes/lpm_default_v4.cfg", "line": 4, "text": "R198.18.1.0/24 1"},
        {"file": "routes/lpm_default_v6.cfg", "line": 6, "text": "R2001:0200:0000:0003:0000:0000:0000:0000/64 3"}]
    assert report["warnings"] == [] and report["input_port"] is None
    v4 = write(tmp_path, "v4.cfg", "R10.0.0.0/8 1\n")
    one = lookup(LookupOptions(keys=["10.0.0.1"], rule_ipv4=v4))
    assert one["results"][0]["rule"] is None and one["warnings"][0].startswith("Missing 1 or more rule files")
    with pytest.raises(SimError, match="--lookup acl needs both --rule_ipv4 and --rule_ipv6"):
        lookup(LookupOptions(keys=["udp 1.1.1.1:1 > 2.2.2.2:2"], lookup="acl", rule_ipv4=v4))
    with pytest.raises(SimError, match=r"--port 2 is not in portmask 0x3"):
        lookup(LookupOptions(keys=["10.0.0.1"], portmask=0x3, port=2))
    with pytest.raises(SimError, match=r"--port 32: not a port"):
        lookup(LookupOptions(keys=["10.0.0.1"], port=32))


# ---------------------------------------------------------------------------------------
# the command line
# ---------------------------------------------------------------------------------------
def test_cli_text(cli):
    res = cli("lookup", "198.18.1.7", "203.0.113.5", "--port", "2")
    assert res.exit_code == 0 and res.stderr == ""
    assert res.stdout.splitlines() == [
        "198.18.1.7  lpm4  routes/lpm_default_v4.cfg:4: R198.18.1.0/24 1  → next hop 1 → port 1",
        "203.0.113.5  lpm4  no matching rule → miss: sent back out of the input port → port 2"]
    res = cli("lookup", "-E", "udp 198.18.0.1:9 > 198.18.0.0:9", "udp [2001:200::1]:9 > [2001:200::]:9")
    assert res.stdout.splitlines() == [
        "udp 198.18.0.1:9 > 198.18.0.0:9  em4  routes/em_default_v4.cfg:3: R198.18.0.0 198.18.0.1 9 9 0x11 0  "
        "→ next hop 0 → port 0",
        "udp [2001:200::1]:9 > [2001:200::]:9  em6  no matching rule → miss: sent back out of the input port"]
    assert res.stderr == ("l3fwd-sim: warning: without --ipv6, --lookup em installs only the IPv4 flows (as "
                          "dpdk-l3fwd does): every IPv6 key misses\n")


def test_cli_json(cli, tmp_path):
    v4 = write(tmp_path, "v4.cfg", "R10.0.0.0/8 1\nR0.0.0.0/0 3\n")
    v6 = write(tmp_path, "v6.cfg", "R2001:db8::/32 1\n")
    res = cli("lookup", "--lookup", "fib", "--rule_ipv4", v4, "--rule-ipv6", v6, "10.1.2.3", "11.1.1.1", "--json",
              "-p", "0x3")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout) == {
        "lookup": "fib", "portmask": "0x3", "input_port": None, "warnings": [], "results": [
            {"key": "10.1.2.3", "table": "fib4", "rule": {"file": str(v4), "line": 1, "text": "R10.0.0.0/8 1"},
             "next_hop": 1, "tx_port": 1, "action": "forward", "note": None},
            {"key": "11.1.1.1", "table": "fib4", "rule": None, "next_hop": None, "tx_port": None,
             "action": "miss: sent back out of the input port",
             "note": "line 2 routes to port 3, outside portmask 0x3, so dpdk-l3fwd does not install it (its "
                     "next-hop re-check never applies): the key misses"}]}


@pytest.mark.parametrize("args, message", [
    (["300.1.1.1"], "l3fwd-sim: lookup key '300.1.1.1': not an IPv4 or IPv6 address"),
    (["-E", "198.18.0.1"], "l3fwd-sim: lookup key '198.18.0.1': --lookup em needs a 5-tuple like"),
    (["-L", "-E", "1.1.1.1"], "l3fwd-sim: Only one lookup mode is allowed at a time! (-E, -L, --lookup)"),
    (["-E", "--lookup", "fib", "1.1.1.1"], "l3fwd-sim: Only one lookup mode is allowed at a time! (-E, -L, --lookup)"),
    (["--lookup", "acl", "udp 1.1.1.1:1 > 2.2.2.2:2"], "l3fwd-sim: --lookup acl needs both"),
    (["-p", "0x0", "1.1.1.1"], "l3fwd-sim: invalid portmask '0x0'"),
    (["-p", "0x3", "--port", "4", "1.1.1.1"], "l3fwd-sim: --port 4 is not in portmask 0x3"),
    (["--rule_ipv4", "missing.cfg", "--rule_ipv6", "missing6.cfg", "1.1.1.1"], "missing.cfg"),
    ([], "Missing argument 'KEY...'"),
])
def test_cli_errors_are_one_line_exit_2(cli, args, message):
    res = cli("lookup", *args)
    assert res.exit_code == 2
    assert len(res.stderr.splitlines()) == 1 and message in res.stderr, res.stderr
    assert res.stdout == ""


def test_cli_one_rule_file_warns_and_uses_the_defaults(cli, tmp_path):
    v4 = write(tmp_path, "v4.cfg", "R10.0.0.0/8 1\n")
    res = cli("lookup", "--rule_ipv4", v4, "198.18.2.1")
    assert res.exit_code == 0
    assert res.stderr.startswith("l3fwd-sim: warning: Missing 1 or more rule files, using default instead")
    assert "routes/lpm_default_v4.cfg:5: R198.18.2.0/24 2" in res.stdout


# ---------------------------------------------------------------------------------------
# the docs' console examples print what the command prints
# ---------------------------------------------------------------------------------------
def console_examples(text: str) -> list[tuple[str, str]]:
    """(command, output) of every ``$ l3fwd-sim lookup`` in the page's console blocks."""
    found = []
    for block in re.findall(r"^```console\n(.*?)^```", text, re.M | re.S):
        for command, output in re.findall(r"^\$ (l3fwd-sim lookup.*)\n((?:(?!\$ ).*\n)*)", block, re.M):
            found.append((command, output))
    return found


def test_docs_console_examples(cli, tmp_path, monkeypatch):
    page = (REPO / "docs" / "lookup.md").read_text()
    examples = console_examples(page)
    assert len(examples) >= 4
    for name, source in (("v4.cfg", "lpm_default_v4.cfg"), ("v6.cfg", "lpm_default_v6.cfg"),
                         ("em4.cfg", "em_default_v4.cfg"), ("em6.cfg", "em_default_v6.cfg")):
        shutil.copy(REPO / "routes" / source, tmp_path / name)
    for family in (4, 6):
        shutil.copy(GOLDEN / "acl" / f"acl_v{family}.cfg", tmp_path / f"acl{family}.cfg")
    monkeypatch.chdir(tmp_path)
    for command, output in examples:
        res = cli(*shlex.split(command)[1:])
        error = output.startswith("l3fwd-sim: ") and not output.startswith("l3fwd-sim: warning:")
        assert res.exit_code == (2 if error else 0), (command, res.stderr)
        assert res.output == output, command
    for block in re.findall(r"^```python\n(.*?)^```", page, re.M | re.S):
        exec(compile(block, "docs/lookup.md", "exec"), {})


def test_key_text_of_the_results_is_the_key_text_of_the_frame():
    """The key each result names is written by keys.key_text, the traces' spelling."""
    results = lookup(LookupOptions(keys=["2001:0200:0000:0001:0000:0000:0000:0009", " 198.18.1.7"]))["results"]
    assert [r["key"] for r in results] == ["2001:200:0:1::9", "198.18.1.7"]
    assert key_text("lpm6", parse_key(results[0]["key"], "lpm").frame) == results[0]["key"]
