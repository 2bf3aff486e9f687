"""l3fwd_sim.l3fwd.rules.parse_acl_rules: dpdk-l3fwd's ACL rule files (``--lookup acl``),
against ../shared/reference/dpdk/acl.md and ``examples/l3fwd/l3fwd_acl.c``.

The oracles are independent of the code under test: Python's ``ipaddress`` for
addresses, a few lines of this file for C ``strtoul`` numbers, and, in the property
tests, the values the test itself generated before writing them in some spelling."""
from __future__ import annotations

import ipaddress
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spellings import c_number

from forwarding import GOLDEN

from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd.rules import AclRules, parse_acl_rules

BITS = {4: 32, 6: 128}
WIDTH = {4: 1, 6: 4}
ACL = GOLDEN / "acl"


def write(tmp_path, text: str | bytes, name="acl.cfg") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def error_of(path, family) -> str:
    with pytest.raises(SimError) as info:
        parse_acl_rules(path, family)
    msg = str(info.value)
    assert "\n" not in msg and "\r" not in msg, msg
    return msg


def strtoul0(token: str) -> int:
    """C ``strtoul(token, NULL, 0)`` for the well-formed tokens of the golden files."""
    if token[:2].lower() == "0x":
        return int(token[2:], 16)
    if token.startswith("0") and len(token) > 1:
        return int(token[1:], 8)
    return int(token)


def words(value: int, family: int) -> list[int]:
    """An address as 32-bit words, most significant first."""
    return [(value >> (32 * i)) & 0xFFFFFFFF for i in reversed(range(WIDTH[family]))]


def rows(rules: AclRules) -> list[tuple]:
    """Each rule as (proto, mask, src words, src_len, dst words, dst_len, sport, dport, port)."""
    return [(int(rules.proto[i]), int(rules.proto_mask[i]), [int(w) for w in rules.src[i]], int(rules.src_len[i]),
             [int(w) for w in rules.dst[i]], int(rules.dst_len[i]), tuple(int(p) for p in rules.sport[i]),
             tuple(int(p) for p in rules.dport[i]), int(rules.port[i])) for i in range(len(rules))]


# ---------------------------------------------------------------------------------------
# the golden rule files, which the real dpdk-l3fwd accepted
# ---------------------------------------------------------------------------------------
def oracle_read(path: Path, family: int) -> tuple[list[tuple], list[int]]:
    """An independent reading of a well-formed ACL file: ``ipaddress`` for addresses."""
    addr = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    out, lines = [], []
    for lineno, line in enumerate(path.read_text().split("\n"), 1):
        if line[:1] not in ("@", "R"):
            assert line.startswith("#") or not line.strip(), line      # the golden files are clean
            continue
        t = line[1:].split()
        src, src_len = t[0].split("/")
        dst, dst_len = t[1].split("/")
        proto, mask = t[8].split("/")
        assert t[3] == t[6] == ":"
        out.append((strtoul0(proto), strtoul0(mask), words(int(addr(src)), family), strtoul0(src_len),
                    words(int(addr(dst)), family), strtoul0(dst_len), (strtoul0(t[2]), strtoul0(t[4])),
                    (strtoul0(t[5]), strtoul0(t[7])), strtoul0(t[9]) if line[0] == "R" else -1))
        lines.append(lineno)
    return out, lines


@pytest.mark.parametrize("name,family", [("acl_v4.cfg", 4), ("acl_v6.cfg", 6)])
def test_golden_files_parse_like_an_independent_reading(name, family):
    path = ACL / name
    rules = parse_acl_rules(path, family)
    text_lines = path.read_text().split("\n")
    n_deny = sum(line.startswith("@") for line in text_lines)
    n_route = sum(line.startswith("R") for line in text_lines)
    assert n_deny > 0 and n_route > 0
    assert len(rules) == n_deny + n_route
    assert int((rules.port == -1).sum()) == n_deny and int((rules.port >= 0).sum()) == n_route
    assert rules.family == family
    n = len(rules)
    for column, shape in [("proto", (n,)), ("proto_mask", (n,)), ("src", (n, WIDTH[family])), ("src_len", (n,)),
                          ("dst", (n, WIDTH[family])), ("dst_len", (n,)), ("sport", (n, 2)), ("dport", (n, 2)),
                          ("port", (n,))]:
        array = getattr(rules, column)
        assert array.shape == shape and array.dtype == np.int64, column
    expect, lines = oracle_read(path, family)
    assert rows(rules) == expect
    assert rules.where == [f"{path}:{k}" for k in lines]


def test_golden_v4_spot_checks():
    rules = parse_acl_rules(ACL / "acl_v4.cfg", 4)
    # line 2: R10.1.0.0/16<TAB>198.18.0.0/16<TAB>0 : 65535<TAB>0 : 0<TAB>0x84/0xff<TAB>1
    assert rows(rules)[0] == (0x84, 0xFF, [int(ipaddress.IPv4Address("10.1.0.0"))], 16,
                              [int(ipaddress.IPv4Address("198.18.0.0"))], 16, (0, 65535), (0, 0), 1)
    # line 4: @10.1.2.0/24 0.0.0.0/0 0 : 65535 0 : 65535 0/0x80
    assert rows(rules)[2] == (0, 0x80, [int(ipaddress.IPv4Address("10.1.2.0"))], 24, [0], 0,
                              (0, 65535), (0, 65535), -1)
    assert rules.where[2].endswith("acl_v4.cfg:4")


def test_golden_v6_spot_checks():
    rules = parse_acl_rules(ACL / "acl_v6.cfg", 6)
    # line 2: R2001:db8:0001:0002:0:0000:0000:0000/64 2001:200:0:1:0000:0000:0000:5/128 0 : 0 1000 : 2000 0/0x0 3
    src = int(ipaddress.IPv6Address("2001:db8:1:2::"))
    dst = int(ipaddress.IPv6Address("2001:200:0:1::5"))
    assert rows(rules)[0] == (0, 0, words(src, 6), 64, words(dst, 6), 128, (0, 0), (1000, 2000), 3)
    assert [int(w) for w in rules.src[0]] == [0x20010DB8, 0x00010002, 0, 0]
    # a /65 (a prefix ending inside the third 32-bit word) is taken as written
    line = next(i for i, w in enumerate(rules.where) if w.endswith(":7"))
    assert int(rules.dst_len[line]) == 65
    assert [int(w) for w in rules.dst[line]] == words(int(ipaddress.IPv6Address("2001:200:0:2:8000::")), 6)


# ---------------------------------------------------------------------------------------
# accepted spellings, each against a known value
# ---------------------------------------------------------------------------------------
V4_ANY = "0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0"
V6_ZERO = "0:0:0:0:0:0:0:0"
V6_ANY = f"{V6_ZERO}/0 {V6_ZERO}/0 0 : 65535 0 : 65535 0/0"


@pytest.mark.parametrize("text,value", [
    ("2001:db8:0:0:0:0:0:1", "2001:db8::1"),
    ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
    ("0x2001:0xdb8:0X0:0:0:0:0:0x1", "2001:db8::1"),
    ("00002001:000db8:0:0:0:0:0:001", "2001:db8::1"),          # strtoul: any number of leading zeros
    ("2001:db8::0:0:0:0:1", "2001:db8::1"),                     # 7 colons: the empty group reads as 0
    ("::1:2:3:4:5:6", "0:0:1:2:3:4:5:6"),
    ("1:2:3:4:5:6::", "1:2:3:4:5:6:0:0"),
    ("1::3:4:5:6::8", "1:0:3:4:5:6:0:8"),                       # two empty groups, as DPDK reads it
    (":1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7"),
    (":::::::", "::"),
    ("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
])
def test_ipv6_group_spellings(tmp_path, text, value):
    path = write(tmp_path, f"R{text}/64 {V6_ZERO}/0 0 : 65535 0 : 65535 0/0 1\n")
    rules = parse_acl_rules(path, 6)
    assert [int(w) for w in rules.src[0]] == words(int(ipaddress.IPv6Address(value)), 6)
    assert int(rules.src_len[0]) == 64


def test_numbers_are_c_strtoul_base_0(tmp_path):
    path = write(tmp_path, "R10.0.0.0/010 0.0.0.0/0x20 0x50 : 0120 0 : 0xFFFF 0x11/0377 0X1f\n"
                           "R10.0.0.0/0 0.0.0.0/00 00 : 0 65535 : 65535 255/255 4294967295\n")
    assert rows(parse_acl_rules(path, 4)) == [
        (17, 255, [10 << 24], 8, [0], 32, (80, 80), (0, 65535), 31),
        (255, 255, [10 << 24], 0, [0], 0, (0, 0), (65535, 65535), 2**32 - 1)]
    path = write(tmp_path, f"R{V6_ZERO}/0x80 {V6_ZERO}/0200 0 : 0 0 : 0 6/0xfe 1\n")
    rules = parse_acl_rules(path, 6)
    assert (int(rules.src_len[0]), int(rules.dst_len[0])) == (128, 128)


def test_comments_blanks_order_and_lines(tmp_path):
    text = ("# header\n"
            "\n"
            " \t \n"
            "#R1.0.0.0/8 0.0.0.0/0 0 : 0 0 : 0 0/0 1\n"
            f"@10.1.2.3/8 {V4_ANY.split(' ', 1)[1]}\n"                   # bits after the prefix kept
            f"R\t{V4_ANY}\t7\t# trailing comment\n"
            f"R {V4_ANY} 40 #\n"                                         # port >= 32 still parses
            f"@{V4_ANY}\t#deny all\n"
            f"R{V4_ANY} 0   \n")
    path = write(tmp_path, text)
    rules = parse_acl_rules(path, 4)
    assert [int(p) for p in rules.port] == [-1, 7, 40, -1, 0]
    assert rules.where == [f"{path}:{k}" for k in (5, 6, 7, 8, 9)]
    assert [int(w) for w in rules.src[0]] == [int(ipaddress.IPv4Address("10.1.2.3"))]
    assert int(rules.src_len[0]) == 8


def test_crlf_and_no_final_newline(tmp_path):
    path = write(tmp_path, f"# c\r\nR{V4_ANY} 1\r\n@{V4_ANY}")
    rules = parse_acl_rules(path, 4)
    assert [int(p) for p in rules.port] == [1, -1]


def test_only_route_lines_and_one_route_line_are_enough(tmp_path):
    path = write(tmp_path, "".join(f"@{V6_ANY}\n" for _ in range(5)) + f"R{V6_ANY} 2\n")
    rules = parse_acl_rules(path, 6)
    assert len(rules) == 6 and [int(p) for p in rules.port] == [-1] * 5 + [2]
    assert rules.src.shape == (6, 4)


# ---------------------------------------------------------------------------------------
# property tests: random valid files in random spellings parse back to what was written
# ---------------------------------------------------------------------------------------


def v6_group(draw, value: int) -> str:
    """One group as strtoul(..., 16) reads it; 0 may be written as nothing at all."""
    style = draw(st.sampled_from(["x", "X", "pad", "0x", "0X", "empty"]))
    if style == "empty" and value == 0:
        return ""
    if style in ("0x", "0X"):
        return style + format(value, "x")
    if style == "pad":
        return "0" * draw(st.integers(0, 4)) + format(value, "x")
    return format(value, style if style in ("x", "X") else "x")


def addr_text(draw, family: int, value: int) -> str:
    if family == 4:
        return str(ipaddress.IPv4Address(value))
    return ":".join(v6_group(draw, (value >> (16 * i)) & 0xFFFF) for i in reversed(range(8)))


sep = st.sampled_from([" ", "\t", "  ", " \t ", "\t\t"])
noise = st.sampled_from(["", "#", "# a comment", "#R10.0.0.0/8 0.0.0.0/0 0 : 0 0 : 0 0/0 1", "#@ x", "   ",
                         "\t", " \t\x0b\x0c "])
port_number = st.one_of(st.integers(0, 31), st.integers(0, 2**32 - 1))


@st.composite
def acl_files(draw):
    family = draw(st.sampled_from([4, 6]))
    bits = BITS[family]
    rule = st.tuples(st.sampled_from("@R"), st.integers(0, 2**bits - 1), st.integers(0, bits),
                     st.integers(0, 2**bits - 1), st.integers(0, bits),
                     st.lists(st.integers(0, 0xFFFF), min_size=2, max_size=2).map(sorted),
                     st.lists(st.integers(0, 0xFFFF), min_size=2, max_size=2).map(sorted),
                     st.integers(0, 255), st.integers(0, 255), port_number)
    rules = draw(st.lists(rule, min_size=1, max_size=25))
    if all(r[0] == "@" for r in rules):
        rules[draw(st.integers(0, len(rules) - 1))] = ("R",) + rules[0][1:]
    lines, expect = [], []
    for lead, src, src_len, dst, dst_len, sport, dport, proto, mask, port in rules:
        lines += draw(st.lists(noise, max_size=2))
        fields = [f"{addr_text(draw, family, src)}/{c_number(draw, src_len)}",
                  f"{addr_text(draw, family, dst)}/{c_number(draw, dst_len)}",
                  c_number(draw, sport[0]), ":", c_number(draw, sport[1]),
                  c_number(draw, dport[0]), ":", c_number(draw, dport[1]),
                  f"{c_number(draw, proto)}/{c_number(draw, mask)}"]
        if lead == "R":
            fields.append(c_number(draw, port))
        line = lead + draw(st.sampled_from(["", "", " ", "\t"])) + "".join(f + draw(sep) for f in fields[:-1])
        line += fields[-1] + draw(st.sampled_from(["", "", " ", "\t", f"{draw(sep)}# c", f"{draw(sep)}#"]))
        lines.append(line)
        expect.append(((proto, mask, words(src, family), src_len, words(dst, family), dst_len,
                        tuple(sport), tuple(dport), port if lead == "R" else -1), len(lines)))
    lines += draw(st.lists(noise, max_size=2))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return family, newline.join(lines) + (newline if draw(st.booleans()) else ""), expect


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(acl_files())
def test_property_round_trip(case):
    family, text, expect = case
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "acl.cfg"
        path.write_text(text, newline="")
        rules = parse_acl_rules(path, family)
        assert rows(rules) == [e for e, _ in expect]
        assert rules.where == [f"{path}:{n}" for _, n in expect]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**128 - 1), st.data())
def test_property_ipv6_spellings_agree_with_ipaddress(value, data):
    """Whatever spelling is drawn (seven colons, groups maybe empty, padded or 0x-prefixed),
    the words are those of the value drawn, and of ``ipaddress``'s reading of the spelling
    wherever ``ipaddress`` can read it."""
    text = addr_text(data.draw, 6, value)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "acl.cfg"
        path.write_text(f"R{text}/128 {V6_ZERO}/0 0 : 65535 0 : 65535 0/0 1\n")
        got = [int(w) for w in parse_acl_rules(path, 6).src[0]]
    assert got == words(value, 6)
    try:
        standard = int(ipaddress.IPv6Address(text))
    except ValueError:
        return
    assert got == words(standard, 6)


# ---------------------------------------------------------------------------------------
# errors: one line, "path:line: ..." (or "path: ..." for the whole file)
# ---------------------------------------------------------------------------------------
A4 = "10.0.0.0/8 0.0.0.0/0"
A6 = f"{V6_ZERO}/0 {V6_ZERO}/0"
BAD_V4 = [
    # lead character
    " R" + V4_ANY + " 1", "\tR" + V4_ANY + " 1", "r" + V4_ANY + " 1", "X" + V4_ANY + " 1", "+", "  # indented comment",
    "R", "@", "R#" + V4_ANY + " 1",
    # port ranges and the ':' token
    f"R{A4} 0:65535 0 : 65535 6/0xff 1", f"R{A4} 0 : 65535 0: 65535 6/0xff 1", f"R{A4} 0 :65535 0 : 65535 6/0xff 1",
    f"R{A4} 0 - 65535 0 : 65535 6/0xff 1", f"R{A4} 0 :: 65535 0 : 65535 6/0xff 1", f"R{A4} 0 65535 0 : 65535 6/0xff 1",
    f"R{A4} 80 : 70 0 : 65535 6/0xff 1", f"R{A4} 0 : 65535 80 : 70 6/0xff 1", f"@{A4} 0x51 : 0x50 0 : 65535 6/0xff",
    f"R{A4} 0 : 65536 0 : 65535 6/0xff 1", f"R{A4} 0 : 65535 0x10000 : 0x10000 6/0xff 1",
    f"R{A4} 0 : 0200000 0 : 65535 6/0xff 1", f"R{A4} 08 : 9 0 : 65535 6/0xff 1", f"R{A4} 0x : 9 0 : 65535 6/0xff 1",
    f"R{A4} -0 : 9 0 : 65535 6/0xff 1", f"R{A4} +1 : 9 0 : 65535 6/0xff 1", f"R{A4} a : b 0 : 65535 6/0xff 1",
    # proto/mask
    f"R{A4} 0 : 65535 0 : 65535 6 1", f"R{A4} 0 : 65535 0 : 65535 6/ 1", f"R{A4} 0 : 65535 0 : 65535 /0xff 1",
    f"R{A4} 0 : 65535 0 : 65535 256/0xff 1", f"R{A4} 0 : 65535 0 : 65535 6/256 1",
    f"R{A4} 0 : 65535 0 : 65535 6/0x100 1", f"R{A4} 0 : 65535 0 : 65535 6/0xff/1 1",
    f"R{A4} 0 : 65535 0 : 65535 tcp/0xff 1", f"@{A4} 0 : 65535 0 : 65535 6",
    # the route port
    f"R{A4} 0 : 65535 0 : 65535 6/0xff", f"R{A4} 0 : 65535 0 : 65535 6/0xff 4294967296",
    f"R{A4} 0 : 65535 0 : 65535 6/0xff -1", f"R{A4} 0 : 65535 0 : 65535 6/0xff one",
    # missing fields, extra fields, garbage
    f"R{A4} 0 : 65535 0 : 65535", f"R{A4}", "R10.0.0.0/8", f"R{A4} 0 : 65535 0 : 65535 6/0xff 1 2",
    f"R{A4} 0 : 65535 0 : 65535 6/0xff 1 extra # comment", f"@{A4} 0 : 65535 0 : 65535 6/0xff 1",
    f"R{A4} 0 : 65535 0 : 65535 6/0xff 1#c", f"R{A4} 0 : 65535 0 : 65535 6/0xff # 1",
    f"R{A4} 0 : 65535\x0b0 : 65535 6/0xff 1", f"R{A4} 0 : 65535 0 : 65535 6/0xff\x0c1",
    # addresses and prefix lengths
    "R10.0.0.0/33 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "R10.0.0.0/041 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
    "R10.0.0.0/-1 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "R10.0.0.0/ 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
    "R10.0.0.0//8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "R10.0.0.0/8/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
    "R10.0.0.0 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "R/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
    "R10.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "R010.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
    "R10.0.0.256/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "R1.2.3.4.5/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
    "R10.0.0.0/8 0.0.0.0/33 0 : 65535 0 : 65535 6/0xff 1", "R10.0.0.0/8 ::/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{V6_ZERO}/0 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
]
BAD_V6 = [
    f"R2001:db8::1/64 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",             # '::' shorthand
    f"R::/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{V6_ZERO}/0 ::1/128 0 : 65535 0 : 65535 6/0xff 1",
    f"R::ffff:1.2.3.4/96 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R1:2:3:4:5:6:7/64 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",           # seven groups
    f"R1:2:3:4:5:6:7:8:9/64 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",       # nine groups
    f"R1:2:3:4:5:6:7::/64 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{V6_ZERO}/129 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{V6_ZERO}/0x81 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{V6_ZERO}/ {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{V6_ZERO} {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{V6_ZERO}/0/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R0:0:0:0:0:0:0:10000/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R0:0:0:0:0:0:0:0x10000/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R0:0:0:0:0:0:0:0x/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R0:0:0:0:0:0:0:g/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R0:0:0:0:0:0:0:+1/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R0:0:0:0:0:0:0:-0/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R0:0:0:0:0:0:0:0x0x1/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1",
    "R10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1",
    f"R{A6} 0:65535 0 : 65535 6/0xff 1", f"R{A6} 0 : 65535 65535 : 0 6/0xff 1",
    f"R{A6} 0 : 65535 0 : 65535 17 1", f"R{A6} 0 : 65535 0 : 65535 17/0xff", f"@{A6} 0 : 65535 0 : 65535 17/0xff 1",
]
CASES = [(4, line) for line in BAD_V4] + [(6, line) for line in BAD_V6]


@pytest.mark.parametrize("family,line", CASES, ids=[f"v{f}-{line!r}" for f, line in CASES])
def test_malformed_line_names_file_and_line(tmp_path, family, line):
    good = f"R{V4_ANY} 1" if family == 4 else f"R{V6_ANY} 1"
    path = write(tmp_path, f"# header\n\n{good}\n{line}\n{good}\n")     # the bad line is line 4
    msg = error_of(path, family)
    assert msg.startswith(f"{path}:4: "), msg


REASONS = [
    (4, f"R{A4} 0 : 65535 80 : 70 6/0xff 1", "bad destination port range '80 : 70' (low > high)"),
    (4, f"R{A4} 90 : 70 0 : 65535 6/0xff 1", "bad source port range '90 : 70' (low > high)"),
    (4, f"R{A4} 0:65535 0 : 65535 6/0xff 1", "'<lo> : <hi>'"),
    (4, f"R{A4} 0 : 65536 0 : 65535 6/0xff 1", "out of range 0..65535"),
    (4, f"R{A4} 0 : 65535 0 : 65535 6/256 1", "out of range 0..255"),
    (4, f"R{A4} 0 : 65535 0 : 65535 6/0xff 4294967296", "out of range 0..4294967295"),
    (4, f"R{A4} 0 : 65535 0 : 65535 6 1", "<proto>/<mask>"),
    (4, f"R{A4} 0 : 65535 0 : 65535 6/0xff", "<port>"),
    (4, f"@{A4} 0 : 65535 0 : 65535 6/0xff 1", "deny lines take no port"),
    (4, f"R{A4} 0 : 65535 0 : 65535 6/0xff 1 2", "trailing garbage '2'"),
    (4, "X" + V4_ANY, "'@'"),
    (4, "R10.0.0.0/33 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "out of range 0..32"),
    (4, "R10.0.0.256/8 0.0.0.0/0 0 : 65535 0 : 65535 6/0xff 1", "'10.0.0.256'"),
    (6, f"R2001:db8::1/64 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1", "'::' shorthand"),
    (6, f"R{V6_ZERO}/129 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1", "out of range 0..128"),
    (6, f"R0:0:0:0:0:0:0:10000/0 {V6_ZERO}/0 0 : 65535 0 : 65535 6/0xff 1", "0xffff"),
]


@pytest.mark.parametrize("family,line,reason", REASONS, ids=[r for _, _, r in REASONS])
def test_error_messages_say_what_is_expected(tmp_path, family, line, reason):
    good = f"R{V4_ANY} 1" if family == 4 else f"R{V6_ANY} 1"
    path = write(tmp_path, f"{good}\n{line}\n")
    msg = error_of(path, family)
    assert msg.startswith(f"{path}:2: ") and reason in msg, msg


@pytest.mark.parametrize("text", ["", "# nothing\n\n", f"@{V4_ANY}\n@{V4_ANY}\n", f"#R{V4_ANY} 1\n@{V4_ANY}\n",
                                  f" R{V4_ANY} 1\n", f"@{V4_ANY} junk\n"])
def test_file_without_route_line(tmp_path, text):
    """Like l3fwd ("Not find any route entries"), checked before any line is parsed."""
    path = write(tmp_path, text)
    msg = error_of(path, 4)
    assert msg.startswith(f"{path}: ") and "route" in msg, msg


def test_missing_file(tmp_path):
    path = tmp_path / "absent.cfg"
    assert error_of(path, 4).startswith(f"{path}: ")


@pytest.mark.parametrize("blank,is_blank", [(" \t", True), ("\x0b\x0c \t", True), ("\x1c", False),
                                            ("\u00a0", False), (" \u2003 ", False), ("\x85", False)])
def test_blank_means_c_isspace(tmp_path, blank, is_blank):
    """l3fwd skips a line of C isspace() characters only; anything else must start with @ or R."""
    path = write(tmp_path, f"R{V4_ANY} 1\n{blank}\n")
    if is_blank:
        assert len(parse_acl_rules(path, 4)) == 1
    else:
        assert error_of(path, 4).startswith(f"{path}:2: ")


def test_error_line_numbers_count_every_physical_line(tmp_path):
    path = write(tmp_path, f"#1\n\n\n#4\nR{V4_ANY} 1\n \n@{V4_ANY} 0x\n")
    assert error_of(path, 4).startswith(f"{path}:7: ")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.text(st.characters(codec="utf-8", exclude_characters="\n\r"), max_size=80),
       family=st.sampled_from([4, 6]))
def test_arbitrary_line_parses_or_names_its_line(line, family):
    good = f"R{V4_ANY} 1" if family == 4 else f"R{V6_ANY} 1"
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "acl.cfg"
        path.write_text(good + "\n" + line + "\n", encoding="utf-8", newline="")
        try:
            rules = parse_acl_rules(path, family)
        except SimError as err:
            assert str(err).startswith(f"{path}:2: ") and "\n" not in str(err), str(err)
            assert not line.startswith("#") and line.strip(" \t\x0b\x0c")
            return
        if line.startswith("#") or not line.strip(" \t\x0b\x0c"):
            assert len(rules) == 1
        else:
            assert line[0] in "@R" and len(rules) == 2
