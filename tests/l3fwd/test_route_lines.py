"""The rule-file line that ``load_routes`` tables name for a lookup (what per-packet
traces print) against brute force over the file's own lines:

* lpm / fib: the longest prefix among the installed lines (output port in the portmask),
  ties to the later line; fib's /0 lines are the default route, the last installed one
  wins; lpm never answers with a line whose port is outside the portmask;
* em: the last installed line of the key;
* acl: the first matching line (deny and route lines counted together).

Rule files are written by hypothesis with comments, blank lines, CRLF ends, hex ports
and trailing comments mixed in, so line numbers differ from rule indices and both of
the IPv4 parser's paths (fast decimal, general) are used. The oracle reads the test's
own list of what it wrote (ACL: the independent parser in tests/support/oracle.py).
"""
from __future__ import annotations

import ipaddress
import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import parse_rule_file_acl

from l3fwd_sim.dataplane.ports import PortConfig
from l3fwd_sim.l3fwd.acl import DENY, MISS
from l3fwd_sim.l3fwd.routing import load_routes
from l3fwd_sim.tables.lpm import Fib

BITS = {4: 32, 6: 128}
PROPS = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                        HealthCheck.data_too_large])


def address(bits: int):
    """Addresses near a few bases (prefixes nest and overlap), and random ones."""
    top = 2**bits - 1
    bases = st.sampled_from([0, top, 0x0A000000 << (bits - 32), 0xC6120000 << (bits - 32),
                             0xC6120100 << (bits - 32)])
    keep = st.sampled_from([8, 16, 24, 28] if bits == 32 else [16, 32, 48, 64, 120])
    near = st.builds(lambda b, k, r: (b >> (bits - k) << (bits - k)) | (r & (top >> k)),
                     bases, keep, st.integers(0, top))
    return st.one_of(near, near, st.integers(0, top))


def text_of(addr: int, family: int, exploded: bool = False) -> str:
    a = ipaddress.ip_address(addr) if family == 4 else ipaddress.IPv6Address(addr)
    return a.exploded if exploded else str(a)


FILLER = st.sampled_from(["# a comment", "#R10.0.0.0/8 1", "", "   ", "\t", "# ports: 0x3"])
PORTMASK = st.one_of(st.sampled_from([0x1, 0x3, 0xF, 0x5, 0x80000001, 0xFFFFFFFF]), st.integers(1, 2**32 - 1))


@st.composite
def lpm_file(draw, family: int, allow_default: bool):
    """(lines of text, [(line number, prefix, depth, port)]) with duplicates (same
    prefix, other port; also written with other host bits) and overlaps."""
    bits = BITS[family]
    depth = st.one_of(st.sampled_from([1, 8, 16, 24, 25, 32] + ([48, 64, 65, 128] if bits == 128 else [])),
                      st.integers(1, bits), *([st.just(0)] if allow_default else []))
    port = st.one_of(st.integers(0, 7), st.integers(0, 40), st.just(255))
    rules = draw(st.lists(st.tuples(address(bits), depth, port), max_size=25))
    for _ in range(draw(st.integers(0, 6))):                # duplicates and re-spellings of earlier rules
        if rules:
            prefix, d, _ = rules[draw(st.integers(0, len(rules) - 1))]
            noise = draw(st.integers(0, 2**bits - 1)) & ((1 << (bits - d)) - 1)
            rules.insert(draw(st.integers(0, len(rules))), (prefix ^ noise, d, draw(port)))
    general = draw(st.booleans())      # 0x ports, trailing comments: IPv4 files take the general parser
    lines, table = [], []
    for prefix, d, p in rules:
        lines.extend(draw(st.lists(FILLER, max_size=2)))
        spelled = f"{p:#x}" if general and draw(st.booleans()) else str(p)
        sep = draw(st.sampled_from([" ", "\t", "  "]))
        tail = draw(st.sampled_from(["", " # trailing comment"])) if general else ""
        lines.append(f"R{text_of(prefix, family, draw(st.booleans()))}/{d}{sep}{spelled}{tail}")
        table.append((len(lines), prefix, d, p))
    lines.extend(draw(st.lists(FILLER, max_size=2)))
    return lines, table


def write(path, lines, crlf: bool):
    path.write_bytes((("\r\n" if crlf else "\n").join(lines) + ("\r\n" if crlf else "\n")).encode())
    return path


def enabled(port: int, portmask: int) -> bool:
    return 0 <= port < 32 and portmask >> port & 1 == 1


def lpm_oracle(table, ip: int, bits: int, portmask: int, fib: bool) -> tuple[int | None, int | None]:
    """(port, line) of the longest installed prefix, ties to the later line; fib: else the
    last installed /0 line; else (None, None)."""
    best = None
    for line, prefix, d, port in table:
        if d and enabled(port, portmask) and ip >> (bits - d) == prefix >> (bits - d):
            if best is None or (d, line) > best[:2]:
                best = (d, line, port)
    if best is not None:
        return best[2], best[1]
    if fib:
        defaults = [(port, line) for line, _, d, port in table if d == 0 and enabled(port, portmask)]
        if defaults:
            return defaults[-1]
    return None, None


def probes_of(table, bits: int, rng: random.Random) -> list[int]:
    top = 2**bits - 1
    out = {0, top}
    for _, prefix, d, _ in table:
        first = prefix >> (bits - d) << (bits - d)
        last = first | (top >> d if d else top)
        out.update({first, last, (first - 1) & top, (last + 1) & top, first | rng.getrandbits(bits) & (top >> d)})
    out.update(rng.getrandbits(bits) for _ in range(30))
    return sorted(out)


def as_keys(family: int, ips):
    if family == 4:
        return np.array(ips, np.uint32)
    return np.frombuffer(b"".join(ip.to_bytes(16, "big") for ip in ips), np.uint8).reshape(-1, 16)


def check_lpm_lines(tmp_path, lookup, file4, file6, portmask, crlf, seed):
    fib = lookup == "fib"
    p4, p6 = write(tmp_path / "v4.cfg", file4[0], crlf), write(tmp_path / "v6.cfg", file6[0], crlf)
    routes = load_routes(lookup, PortConfig(portmask, {}, {}), p4, p6)
    assert routes.files == {4: str(p4), 6: str(p6)}
    rng = random.Random(seed)
    for family, (_, table), lpm in ((4, file4, routes.v4), (6, file6, routes.v6)):
        bits = BITS[family]
        assert isinstance(lpm, Fib) == fib
        probes = probes_of(table, bits, rng)
        want = [lpm_oracle(table, ip, bits, portmask, fib) for ip in probes]
        got = [lpm.lookup_rule(ip) for ip in probes]
        bad = [(hex(ip), w, g) for ip, w, g in zip(probes, want, got) if w != g]
        assert not bad, f"IPv{family} {lookup} (probe, want (port, line), got): {bad[:5]}"
        nhs, lines = lpm.lookup_bulk(as_keys(family, probes), -1, rules=True)
        bulk = [(n, i) if i >= 0 else (None, None) for n, i in zip(nhs.tolist(), lines.tolist())]
        assert bulk == want


@PROPS
@given(file4=lpm_file(4, False), file6=lpm_file(6, False), portmask=PORTMASK, crlf=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_lpm_lines_are_longest_installed_prefix(tmp_path, file4, file6, portmask, crlf, seed):
    check_lpm_lines(tmp_path, "lpm", file4, file6, portmask, crlf, seed)


@PROPS
@given(file4=lpm_file(4, True), file6=lpm_file(6, True), portmask=PORTMASK, crlf=st.booleans(),
       seed=st.integers(0, 2**32 - 1))
def test_fib_lines_with_default_route(tmp_path, file4, file6, portmask, crlf, seed):
    check_lpm_lines(tmp_path, "fib", file4, file6, portmask, crlf, seed)


def test_lpm_and_fib_lines_by_hand(tmp_path):
    """The properties above on a small file that hits every case at known lines."""
    v4 = ["# routes", "R10.0.0.0/8 1", "", "R10.1.0.0/16 9", "R10.1.2.0/24 2", "R0.0.0.0/0 3", "#",
          "R10.1.2.7/24 5", "R10.1.2.0/24 40", "R0.0.0.0/0 1", "R0.0.0.0/0 7", "R10.1.2.9/32 0x2"]
    v6 = ["R2001:db8::/32 1", "R::/0 3", "", "R2001:db8::1/128 2", "R::/0 2"]
    p4, p6 = write(tmp_path / "v4.cfg", v4, False), write(tmp_path / "v6.cfg", v6, True)
    fib = load_routes("fib", PortConfig(0x2F, {}, {}), p4, p6)
    ip = int(ipaddress.IPv4Address("10.1.2.3"))
    assert fib.v4.lookup_rule(ip) == (5, 8)                       # line 9 routes to port 40: not installed
    assert fib.v4.lookup_rule(ip + 6) == (2, 12)
    assert fib.v4.lookup_rule(int(ipaddress.IPv4Address("10.1.3.3"))) == (1, 2)   # line 4's port 9 is off
    assert fib.v4.lookup_rule(int(ipaddress.IPv4Address("11.0.0.0"))) == (1, 10)   # /0: line 11's port 7 is off
    assert fib.v4.lpm.lookup_rule(int(ipaddress.IPv4Address("11.0.0.0"))) == (None, None)
    assert (fib.v6.default, fib.v6.default_rule) == (2, 5)
    assert fib.v6.lookup_rule(int(ipaddress.IPv6Address("2001:db8::1"))) == (2, 4)
    assert fib.v6.lookup_rule(int(ipaddress.IPv6Address("2001:db8::2"))) == (1, 1)
    v4 = [line for line in v4 if "/0 " not in line]
    p4 = write(tmp_path / "v4.cfg", v4, False)
    p6 = write(tmp_path / "v6.cfg", [line for line in v6 if "/0 " not in line], False)
    lpm = load_routes("lpm", PortConfig(0x2F, {}, {}), p4, p6)
    assert lpm.v4.lookup_rule(ip) == (5, 7) and lpm.v4.lookup_rule(ip + 6) == (2, 9)
    assert lpm.v6.lookup_rule(int(ipaddress.IPv6Address("2001:db8::1"))) == (2, 3)


# --------------------------------------------------------------------------- em


@st.composite
def em_file(draw, family: int):
    bits = BITS[family]
    addr = st.sampled_from([0, 1, 2**bits - 1, 0xC6120001 << (bits - 32), 0xC6120002 << (bits - 32)])
    flow = st.tuples(addr, addr, st.sampled_from([0, 9, 65535]), st.sampled_from([9, 1024]),
                     st.sampled_from([6, 17]), st.one_of(st.integers(0, 7), st.integers(0, 40)))
    lines, table = [], []
    for dst, src, dport, sport, proto, port in draw(st.lists(flow, max_size=30)):
        lines.extend(draw(st.lists(FILLER, max_size=2)))
        proto_text = draw(st.sampled_from([str(proto), hex(proto)]))
        lines.append(f"R{text_of(dst, family)} {text_of(src, family)} {dport} {sport} {proto_text} {port}")
        table.append((len(lines), (dst, src, dport, sport, proto), port))
    return lines, table


def em_key(family: int, dst: int, src: int, dport: int, sport: int, proto: int) -> tuple[int, ...]:
    """l3fwd's masked key as the table's 64-bit words (em.py's layout, written out here)."""
    tail = proto << 32 | sport << 16 | dport
    if family == 4:
        return (src << 32 | dst, tail)
    m = 2**64 - 1
    return (src >> 64, src & m, dst >> 64, dst & m, tail)


@PROPS
@given(ipv6=st.booleans(), file4=em_file(4), file6=em_file(6), portmask=PORTMASK)
def test_em_lines_are_last_installed_line(tmp_path, ipv6, file4, file6, portmask):
    p4, p6 = write(tmp_path / "v4.cfg", file4[0], False), write(tmp_path / "v6.cfg", file6[0], False)
    routes = load_routes("em", PortConfig(portmask, {}, {}), p4, p6, ipv6=ipv6)
    assert routes.files == {4: str(p4), 6: str(p6)}
    family = 6 if ipv6 else 4
    table, other = (routes.v6, routes.v4) if ipv6 else (routes.v4, routes.v6)
    assert len(other) == 0
    written = (file6 if ipv6 else file4)[1]
    want = {}
    for line, flow, port in written:                       # a later installed line wins
        if enabled(port, portmask):
            want[flow] = (port, line)
    queries = [flow for _, flow, _ in written] + [(1, 1, 9, 9, 17), (0, 0, 0, 0, 0)]
    keys = [em_key(family, *q) for q in queries]
    expect = [want.get(q, (None, None)) for q in queries]
    assert [table.lookup_rule(k) for k in keys] == expect
    ports, lines = table.lookup_bulk(np.array(keys, np.uint64).reshape(len(keys), -1), np.full(len(keys), -3),
                                     rules=True)
    assert list(zip(ports.tolist(), lines.tolist())) == [(-3, -1) if e[0] is None else e for e in expect]


# --------------------------------------------------------------------------- acl


@st.composite
def acl_file(draw, family: int):
    bits = BITS[family]
    length = st.one_of(st.sampled_from([0, 1, 8, 16, 24, 31, 32] + ([33, 48, 64, 96, 127, 128] if bits == 128 else [])),
                       st.integers(0, bits))
    net = st.tuples(address(bits), length)
    bound = st.sampled_from([0, 1, 9, 53, 80, 443, 1023, 1024, 65534, 65535])
    port_range = st.builds(lambda a, b: (min(a, b), max(a, b)), bound, bound)
    proto = st.tuples(st.one_of(st.sampled_from([0, 1, 6, 17, 255]), st.integers(0, 255)),
                      st.one_of(st.sampled_from([0, 0xFF, 0xFE, 0xF0, 0x80]), st.integers(0, 255)))
    rule = st.tuples(st.sampled_from("@RR"), net, net, port_range, port_range, proto, st.integers(0, 3))
    rules = draw(st.lists(rule, min_size=1, max_size=25))
    if not any(r[0] == "R" for r in rules):
        rules[-1] = ("R",) + rules[-1][1:]
    for _ in range(draw(st.integers(0, 4))):                  # the same match again, other verdict
        r = rules[draw(st.integers(0, len(rules) - 1))]
        again = (draw(st.sampled_from("@R")),) + r[1:6] + (draw(st.integers(0, 3)),)
        rules.insert(draw(st.integers(0, len(rules))), again)

    def spell(n):
        addr, length = n
        return f"{text_of(addr, family, exploded=family == 6)}/{length}"

    lines = []
    for kind, src, dst, (slo, shi), (dlo, dhi), (p, m), port in rules:
        lines.extend(draw(st.lists(FILLER, max_size=2)))
        text = f"{kind}{spell(src)} {spell(dst)} {slo} : {shi} {dlo} : {dhi} {p}/{m:#x}"
        lines.append(text + (f" {port}" if kind == "R" else ""))
    return lines, rules


def acl_lines(path) -> list[int]:
    return [n for n, line in enumerate(path.read_text().split("\n"), 1) if line[:1] in ("@", "R")]


def acl_oracle(parsed, lines, proto, src, dst, sport, dport):
    """(action, line) of the first matching line: brute force over the oracle parser's rules."""
    for (kind, snet, dnet, (slo, shi), (dlo, dhi), (p, m), port), line in zip(parsed, lines):
        if (src in ipaddress.ip_network(snet, strict=False) and dst in ipaddress.ip_network(dnet, strict=False)
                and slo <= sport <= shi and dlo <= dport <= dhi and proto & m == p & m):
            return (port if kind == "R" else DENY), line
    return MISS, -1


def packets(rules, family: int, rng: random.Random):
    """Packets that match each rule (random host bits, range bounds), its near misses
    (one field just outside), and random ones: (proto, src, dst, sport, dport)."""
    bits = BITS[family]
    top = 2**bits - 1
    out = []
    for _, (sa, sl), (da, dl), (slo, shi), (dlo, dhi), (p, m), _ in rules:
        s_first, d_first = sa >> (bits - sl) << (bits - sl), da >> (bits - dl) << (bits - dl)
        src = s_first | rng.getrandbits(bits) & (top >> sl)
        dst = d_first | rng.getrandbits(bits) & (top >> dl)
        out += [(p, src, dst, slo, dhi), (p, s_first, d_first | (top >> dl), shi, dlo),
                (p ^ rng.choice([1, 0x80, 0xFF]), src, dst, slo, dlo), (p, (s_first - 1) & top, dst, slo, dlo),
                (p, src, (d_first | (top >> dl)) + 1 & top, slo, dlo), (p, src, dst, (slo - 1) & 0xFFFF, dlo),
                (p, src, dst, slo, (dhi + 1) & 0xFFFF)]
    out += [(rng.getrandbits(8), rng.getrandbits(bits), rng.getrandbits(bits), rng.getrandbits(16),
             rng.getrandbits(16)) for _ in range(20)]
    return out


def heads_of(pkts, family: int) -> np.ndarray:
    """Frame heads with the ACL key at l3fwd's fixed offsets (nothing else is read)."""
    heads = np.zeros((len(pkts), 64), np.uint8)
    for i, (proto, src, dst, sport, dport) in enumerate(pkts):
        if family == 4:
            heads[i, 23] = proto
            heads[i, 26:38] = np.frombuffer(src.to_bytes(4, "big") + dst.to_bytes(4, "big")
                                            + sport.to_bytes(2, "big") + dport.to_bytes(2, "big"), np.uint8)
        else:
            heads[i, 20] = proto
            heads[i, 22:58] = np.frombuffer(src.to_bytes(16, "big") + dst.to_bytes(16, "big")
                                            + sport.to_bytes(2, "big") + dport.to_bytes(2, "big"), np.uint8)
    return heads


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large])
@given(file4=acl_file(4), file6=acl_file(6), crlf=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_acl_lines_are_first_matching_line(tmp_path, file4, file6, crlf, seed):
    p4, p6 = write(tmp_path / "v4.acl", file4[0], crlf), write(tmp_path / "v6.acl", file6[0], crlf)
    routes = load_routes("acl", PortConfig(0xF, {}, {}), p4, p6)
    assert routes.files == {4: str(p4), 6: str(p6)}
    rng = random.Random(seed)
    for family, path, (_, rules) in ((4, p4, file4), (6, p6, file6)):
        parsed, lines = parse_rule_file_acl(path, family), acl_lines(path)
        assert len(parsed) == len(lines) == len(rules)
        pkts = packets(rules, family, rng)
        make = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
        want = [acl_oracle(parsed, lines, proto, make(src), make(dst), sport, dport)
                for proto, src, dst, sport, dport in pkts]
        heads = heads_of(pkts, family)
        rows = np.arange(len(pkts))
        action, line = routes.actions(heads, rows, family, rules=True)
        got = list(zip(action.tolist(), line.tolist()))
        bad = [(p, w, g) for p, w, g in zip(pkts, want, got) if w != g]
        assert not bad, f"IPv{family} (packet, want (action, line), got): {bad[:3]}"
        assert routes.actions(heads, rows, family).tolist() == [w[0] for w in want]
        odd = rows[1::2]                                       # a subset of rows: lines follow their rows
        action, line = routes.actions(heads, odd, family, rules=True)
        assert list(zip(action.tolist(), line.tolist())) == [want[i] for i in odd.tolist()]
