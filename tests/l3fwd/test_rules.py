"""l3fwd_sim.l3fwd.rules: LPM and EM rule files against the grammar of
../shared/reference/dpdk/l3fwd_options_and_rule_files.md §3.

The oracle is Python's ``ipaddress`` (address -> int) and the test's own knowledge of
the numbers it wrote (decimal, 0x hex, 0-octal)."""
from __future__ import annotations

import ipaddress
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spellings import c_number

from forwarding import REPO

from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd.rules import parse_em_rules, parse_lpm_rules

BITS = {4: 32, 6: 128}
ADDR = {4: ipaddress.IPv4Address, 6: ipaddress.IPv6Address}


def write(tmp_path, text: str | bytes, name="rules.cfg") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def lpm(path, family):
    return [(r.prefix, r.depth, r.port) for r in parse_lpm_rules(path, family)]


def em(path, family):
    return [(r.dst, r.src, r.dst_port, r.src_port, r.proto, r.port) for r in parse_em_rules(path, family)]


def error_of(func, path, family) -> str:
    with pytest.raises(SimError) as info:
        func(path, family)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def v4(text):
    return int(ipaddress.IPv4Address(text))


def v6(text):
    return int(ipaddress.IPv6Address(text))


# ---------------------------------------------------------------------------------------
# valid files
# ---------------------------------------------------------------------------------------
def test_dpdk_default_lpm_files(tmp_path):
    path4 = write(tmp_path, "# default\nR198.18.0.0/24 0\nR198.18.1.0/24 1\n", "v4.cfg")
    assert lpm(path4, 4) == [(v4("198.18.0.0"), 24, 0), (v4("198.18.1.0"), 24, 1)]
    path6 = write(tmp_path, "R2001:0200:0000:0001:0000:0000:0000:0000/64 1\n", "v6.cfg")
    assert lpm(path6, 6) == [(v6("2001:200:0:1::"), 64, 1)]


def test_dpdk_default_em_files(tmp_path):
    path4 = write(tmp_path, "R198.18.0.0 198.18.0.1 9 9 0x11 0\n", "v4.cfg")
    assert em(path4, 4) == [(v4("198.18.0.0"), v4("198.18.0.1"), 9, 9, 17, 0)]
    path6 = write(tmp_path, "R2001:0200:0000:0000:0000:0000:0000:0000 "
                            "2001:0200:0000:0000:0000:0000:0000:0001 9 9 0x11 0\n", "v6.cfg")
    assert em(path6, 6) == [(v6("2001:200::"), v6("2001:200::1"), 9, 9, 17, 0)]


def test_shipped_default_route_files_parse():
    root = REPO / "l3fwd_sim" / "l3fwd" / "routes"
    assert lpm(root / "lpm_default_v4.cfg", 4) == [(v4(f"198.18.{n}.0"), 24, n) for n in range(16)]
    assert lpm(root / "lpm_default_v6.cfg", 6) == [(v6(f"2001:200:0:{n:x}::"), 64, n) for n in range(16)]
    assert em(root / "em_default_v4.cfg", 4) == [
        (v4(f"198.18.{n}.0"), v4(f"198.18.{n}.1"), 9, 9, 17, n) for n in range(16)]
    assert em(root / "em_default_v6.cfg", 6) == [
        (v6(f"2001:200:0:{n:x}::"), v6(f"2001:200:0:{n:x}::1"), 9, 9, 17, n) for n in range(16)]


@pytest.mark.parametrize("token,value", [
    ("0", 0), ("00", 0), ("8", 8), ("010", 8), ("0x1f", 31), ("0X1F", 31), ("0377", 255),
    ("0xff", 255), ("255", 255), ("0x00ff", 255), ("000000017", 15),
])
def test_c_numbers_for_port(tmp_path, token, value):
    path = write(tmp_path, f"R10.0.0.0/8 {token}\n")
    assert lpm(path, 4) == [(v4("10.0.0.0"), 8, value)]


@pytest.mark.parametrize("token,value", [("0", 0), ("040", 32), ("0x20", 32), ("32", 32), ("010", 8)])
def test_c_numbers_for_depth(tmp_path, token, value):
    path = write(tmp_path, f"R10.0.0.0/{token} 1\n")
    assert lpm(path, 4) == [(v4("10.0.0.0"), value, 1)]


def test_depth_limits_per_family(tmp_path):
    assert lpm(write(tmp_path, "R::/128 1\nR::/0x80 2\nR::/0200 3\n"), 6) == [(0, 128, 1), (0, 128, 2), (0, 128, 3)]
    assert lpm(write(tmp_path, "R0.0.0.0/32 1\n"), 4) == [(0, 32, 1)]


def test_comments_blank_lines_and_trailing_comment(tmp_path):
    text = ("# comment\n"
            "\n"
            "   \t  \n"
            "#R1.2.3.0/24 5\n"
            "R1.2.3.0/24 1 # trailing comment\n"
            "R1.2.4.0/24 2 #\n"
            "R1.2.5.0/24 3\t#no space after hash\n"
            "R\t1.2.6.0/24\t4\t\n"
            "R1.2.7.0/24   5   \n")
    path = write(tmp_path, text)
    assert lpm(path, 4) == [(v4("1.2.3.0"), 24, 1), (v4("1.2.4.0"), 24, 2), (v4("1.2.5.0"), 24, 3),
                            (v4("1.2.6.0"), 24, 4), (v4("1.2.7.0"), 24, 5)]
    rules = parse_lpm_rules(path, 4)
    assert [r.where for r in rules] == [f"{path}:{n}" for n in (5, 6, 7, 8, 9)]


def test_crlf_and_no_final_newline(tmp_path):
    path = write(tmp_path, "# c\r\nR1.2.3.0/24 1\r\nR1.2.4.0/24 2")
    assert lpm(path, 4) == [(v4("1.2.3.0"), 24, 1), (v4("1.2.4.0"), 24, 2)]


def test_address_is_not_masked_and_order_is_kept(tmp_path):
    path = write(tmp_path, "R10.1.2.3/8 1\nR10.0.0.0/8 2\nR10.1.2.3/8 1\n")
    assert lpm(path, 4) == [(v4("10.1.2.3"), 8, 1), (v4("10.0.0.0"), 8, 2), (v4("10.1.2.3"), 8, 1)]


def test_ipv4_mapped_ipv6_address(tmp_path):
    path = write(tmp_path, "R::ffff:1.2.3.4/96 7\n")
    assert lpm(path, 6) == [(v6("::ffff:1.2.3.4"), 96, 7)]


def test_empty_file_parses_to_nothing(tmp_path):
    assert lpm(write(tmp_path, ""), 4) == []
    assert em(write(tmp_path, "# only a comment\n\n"), 6) == []


def test_missing_rule_file(tmp_path):
    path = tmp_path / "absent.cfg"
    assert str(path) in error_of(parse_lpm_rules, path, 4)
    assert str(path) in error_of(parse_em_rules, path, 4)


# ---------------------------------------------------------------------------------------
# errors: every message starts with "path:lineno:"
# ---------------------------------------------------------------------------------------
PREFIX = "# header comment\n\nR10.0.0.0/8 1\n"   # the bad line is line 4
BAD_LPM = [
    (4, "  # indented comment"),
    (4, " R10.0.0.0/8 1"),
    (4, "\tR10.0.0.0/8 1"),
    (4, "r10.0.0.0/8 1"),
    (4, "10.0.0.0/8 1"),
    (4, "@10.0.0.0/8 10.0.0.0/8 0 : 65535 0 : 65535 0/0"),
    (4, "R10.0.0.0/8 256"),
    (4, "R10.0.0.0/8 0400"),
    (4, "R10.0.0.0/8 0x100"),
    (4, "R10.0.0.0/8 -1"),
    (4, "R10.0.0.0/8 +1"),
    (4, "R10.0.0.0/8 08"),
    (4, "R10.0.0.0/8 0x"),
    (4, "R10.0.0.0/8 1x"),
    (4, "R10.0.0.0/8 1#c"),
    (4, "R10.0.0.0/8 one"),
    (4, "R10.0.0.0/33 1"),
    (4, "R10.0.0.0/041 1"),
    (4, "R10.0.0.0/-1 1"),
    (4, "R10.0.0.0/ 1"),
    (4, "R10.0.0.0/8/8 1"),
    (4, "R10.0.0.0 1"),
    (4, "R10.0.0.0/8"),
    (4, "R"),
    (4, "R10.0.0.0/8 1 2"),
    (4, "R10.0.0.0/8 1 extra # comment"),
    (4, "R1.2.3/8 1"),
    (4, "R01.2.3.4/8 1"),
    (4, "R1.2.3.256/8 1"),
    (4, "R1.2.3.4.5/8 1"),
    (4, "R::1/8 1"),
    (4, "R/8 1"),
    (4, "R 10.0.0.0 /8 1"),
    (6, "R::g/64 1"),
    (6, "R2001:db8::1::1/64 1"),
    (6, "R1.2.3.4/24 1"),
    (6, "R::/129 1"),
    (6, "R::/0x81 1"),
    (6, "R::/64 256"),
    (6, "R::/64"),
    (6, "R::64 1"),
]


@pytest.mark.parametrize("family,line", [(f, l) for f, l in BAD_LPM], ids=[repr(l) for _, l in BAD_LPM])
def test_lpm_errors_name_file_and_line(tmp_path, family, line):
    prefix = PREFIX if family == 4 else "# header comment\n\nR::/8 1\n"
    path = write(tmp_path, prefix + line + "\nR10.0.0.0/8 2\n")
    msg = error_of(parse_lpm_rules, path, family)
    assert msg.startswith(f"{path}:4:"), msg


BAD_EM = [
    (4, "R1.1.1.1 2.2.2.2 9 9 17"),
    (4, "R1.1.1.1 2.2.2.2 9 9 17 0 1"),
    (4, "R1.1.1.1 2.2.2.2 65536 9 17 0"),
    (4, "R1.1.1.1 2.2.2.2 9 0x10000 17 0"),
    (4, "R1.1.1.1 2.2.2.2 9 9 256 0"),
    (4, "R1.1.1.1 2.2.2.2 9 9 0x100 0"),
    (4, "R1.1.1.1 2.2.2.2 9 9 17 256"),
    (4, "R1.1.1.1/32 2.2.2.2 9 9 17 0"),
    (4, "R1.1.1 2.2.2.2 9 9 17 0"),
    (4, "R1.1.1.1 02.2.2.2 9 9 17 0"),
    (4, "R1.1.1.1 2.2.2.2 09 9 17 0"),
    (4, "R1.1.1.1 2.2.2.2 9 9 UDP 0"),
    (4, " R1.1.1.1 2.2.2.2 9 9 17 0"),
    (4, "  # not column 0"),
    (6, "R::g ::1 9 9 17 0"),
    (6, "R::1 1.1.1.1 9 9 17 0"),
    (6, "R::1 ::2 9 9 17"),
    (6, "R::1 ::2 9 9 17 0 junk"),
]


@pytest.mark.parametrize("family,line", BAD_EM, ids=[repr(l) for _, l in BAD_EM])
def test_em_errors_name_file_and_line(tmp_path, family, line):
    good = "R1.1.1.1 2.2.2.2 9 9 17 0" if family == 4 else "R::1 ::2 9 9 17 0"
    path = write(tmp_path, f"# c\n\n{good}\n{line}\n{good}\n")
    msg = error_of(parse_em_rules, path, family)
    assert msg.startswith(f"{path}:4:"), msg


def test_em_trailing_comment_and_numbers(tmp_path):
    path = write(tmp_path, "R1.1.1.1 2.2.2.2 0x50 010 0x6 0377 # http-ish\n")
    assert em(path, 4) == [(v4("1.1.1.1"), v4("2.2.2.2"), 80, 8, 6, 255)]
    path = write(tmp_path, "R1.1.1.1 2.2.2.2 65535 0xffff 255 255\n")
    assert em(path, 4) == [(v4("1.1.1.1"), v4("2.2.2.2"), 65535, 65535, 255, 255)]


def test_error_line_numbers_count_physical_lines(tmp_path):
    """Line numbers are those of the file, counting comments and blank lines."""
    path = write(tmp_path, "#1\n\n\n#4\nR1.0.0.0/8 1\n \nR1.0.0.0/8 x\n")
    assert error_of(parse_lpm_rules, path, 4).startswith(f"{path}:7:")


def test_form_feed_does_not_shift_line_numbers(tmp_path):
    path = write(tmp_path, "# section 1\x0c\nR1.0.0.0/8 1\nR1.0.0.0/8 999\n")
    assert error_of(parse_lpm_rules, path, 4).startswith(f"{path}:3:")


def test_carriage_return_inside_comment_stays_a_comment(tmp_path):
    path = write(tmp_path, "# disabled:\rR9.9.9.0/24 1\nR1.0.0.0/8 2\n")
    assert lpm(path, 4) == [(v4("1.0.0.0"), 8, 2)]


@pytest.mark.parametrize("func,family,line", [
    (parse_lpm_rules, 4, "R1.2.3.0\x00/24 1"),
    (parse_lpm_rules, 6, "R2001:db8::\x00/32 1"),
    (parse_em_rules, 4, "R1.2.3.4\x00 5.6.7.8 1 2 6 1"),
])
def test_nul_byte_in_address_is_a_sim_error(tmp_path, func, family, line):
    path = write(tmp_path, "# c\n" + line + "\n")
    assert error_of(func, path, family).startswith(f"{path}:2:")


@pytest.mark.parametrize("line", ["R1.2.3.0/24 \x00", "R1.2.3.0/2\x004 1", "R1.2.3.0/24 1\xff\xfe",
                                  "R\xff1.2.3.0/24 1", "\xffR1.2.3.0/24 1"])
def test_binary_garbage_is_a_sim_error(tmp_path, line):
    path = write(tmp_path, ("# c\n" + line + "\n").encode("latin-1"))
    assert error_of(parse_lpm_rules, path, 4).startswith(f"{path}:2:")


# ---------------------------------------------------------------------------------------
# property tests: random valid files parse back to what was written
# ---------------------------------------------------------------------------------------


def addr_text(draw, family: int, value: int) -> str:
    ip = ADDR[family](value)
    if family == 4:
        return str(ip)
    style = draw(st.sampled_from(["compressed", "exploded", "upper"]))
    return {"compressed": ip.compressed, "exploded": ip.exploded, "upper": ip.exploded.upper()}[style]


sep = st.sampled_from([" ", "\t", "  ", " \t "])
noise = st.sampled_from(["", "#", "# a comment", "#R10.0.0.0/8 1 commented out", "   ", "\t", "#\tx y z"])


@st.composite
def lpm_files(draw):
    family = draw(st.sampled_from([4, 6]))
    bits = BITS[family]
    rules = draw(st.lists(st.tuples(st.integers(0, 2**bits - 1), st.integers(0, bits), st.integers(0, 255)),
                          max_size=30))
    lines, expect = [], []
    for prefix, depth, port in rules:
        lines += draw(st.lists(noise, max_size=2))
        lead = draw(st.sampled_from(["", "", " ", "\t"]))
        tail = draw(st.sampled_from(["", "", " ", f"{draw(sep)}# trailing"]))
        lines.append(f"R{lead}{addr_text(draw, family, prefix)}/{c_number(draw, depth)}"
                     f"{draw(sep)}{c_number(draw, port)}{tail}")
        expect.append(((prefix, depth, port), len(lines)))
    lines += draw(st.lists(noise, max_size=2))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    final = draw(st.booleans())
    return family, newline.join(lines) + (newline if final and lines else ""), expect


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lpm_files())
def test_lpm_property_round_trip(case):
    family, text, expect = case
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.cfg"
        path.write_text(text, newline="")
        rules = parse_lpm_rules(path, family)
        assert [(r.prefix, r.depth, r.port) for r in rules] == [e for e, _ in expect]
        assert [r.where for r in rules] == [f"{path}:{n}" for _, n in expect]


@st.composite
def em_files(draw):
    family = draw(st.sampled_from([4, 6]))
    bits = BITS[family]
    rules = draw(st.lists(st.tuples(st.integers(0, 2**bits - 1), st.integers(0, 2**bits - 1),
                                    st.integers(0, 0xFFFF), st.integers(0, 0xFFFF),
                                    st.integers(0, 0xFF), st.integers(0, 255)), max_size=20))
    lines = []
    for dst, src, dport, sport, proto, port in rules:
        lines += draw(st.lists(noise, max_size=2))
        fields = [addr_text(draw, family, dst), addr_text(draw, family, src),
                  c_number(draw, dport), c_number(draw, sport), c_number(draw, proto), c_number(draw, port)]
        line = "R" + draw(st.sampled_from(["", " "])) + "".join(f + draw(sep) for f in fields[:-1]) + fields[-1]
        lines.append(line + draw(st.sampled_from(["", " # c", "\t#"])))
    return family, "\n".join(lines) + "\n", rules


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(em_files())
def test_em_property_round_trip(case):
    family, text, expect = case
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.cfg"
        path.write_text(text, newline="")
        assert em(path, family) == [tuple(r) for r in expect]


C_SPACE = " \t\n\v\f\r"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(line=st.text(st.characters(codec="utf-8", exclude_characters="\n\r\x00"), max_size=60),
       family=st.sampled_from([4, 6]), kind=st.sampled_from(["lpm", "em"]))
def test_arbitrary_line_parses_or_raises_sim_error_naming_line(line, family, kind):
    """Any single line after a good one either parses or fails with 'path:2:'. Blank is
    C's isspace (l3fwd's is_bypass_line): a line of U+00A0 or \\v is no blank line."""
    func = parse_lpm_rules if kind == "lpm" else parse_em_rules
    good = {("lpm", 4): "R1.0.0.0/8 1", ("lpm", 6): "R::/8 1",
            ("em", 4): "R1.1.1.1 2.2.2.2 9 9 17 0", ("em", 6): "R::1 ::2 9 9 17 0"}[kind, family]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "r.cfg"
        path.write_text(good + "\n" + line + "\n", encoding="utf-8", newline="")
        try:
            rules = func(path, family)
        except SimError as err:
            assert str(err).startswith(f"{path}:2:"), str(err)
            assert "\n" not in str(err)
            assert line.startswith("R") or (line.strip(C_SPACE) and not line.startswith("#"))
            return
        # accepted: a comment/blank line, or a well-formed rule line
        if line.startswith("#") or not line.strip(C_SPACE):
            assert len(rules) == 1
        else:
            assert re.match(r"R", line) and len(rules) == 2


REASONS = [
    (parse_lpm_rules, 4, "R10.0.0.256/8 1", "bad IPv4 address '10.0.0.256'"),
    (parse_lpm_rules, 6, "R2001:db8::g/64 1", "bad IPv6 address '2001:db8::g'"),
    (parse_lpm_rules, 4, "R10.0.0.0/33 1", "depth '33' out of range 0..32"),
    (parse_lpm_rules, 6, "R::/129 1", "depth '129' out of range 0..128"),
    (parse_lpm_rules, 4, "R10.0.0.0/8 256", "port '256' out of range 0..255"),
    (parse_lpm_rules, 4, "R10.0.0.0/8", "missing fields"),
    (parse_lpm_rules, 4, "R10.0.0.0 1", "missing '/<depth>'"),
    (parse_lpm_rules, 4, "R10.0.0.0/8 1 extra", "trailing garbage 'extra'"),
    (parse_em_rules, 4, "R1.1.1.1 2.2.2.2 65536 9 17 0", "dst_port '65536' out of range 0..65535"),
    (parse_em_rules, 4, "R1.1.1.1 2.2.2.2 9 9 256 0", "proto '256' out of range 0..255"),
    (parse_em_rules, 6, "R::1 ::2 9 9 17", "missing fields"),
    (parse_em_rules, 6, "R::1 ::2 9 9 17 0 junk", "trailing garbage 'junk'"),
]


@pytest.mark.parametrize("func,family,line,reason", REASONS, ids=[r[2] for r in REASONS])
def test_errors_say_what_is_wrong(tmp_path, func, family, line, reason):
    """``file:line: reason``: the reason names the field and what is wrong with it."""
    path = write(tmp_path, "# c\n" + line + "\n")
    assert error_of(func, path, family).startswith(f"{path}:2: {reason}")


# ---------------------------------------------------------------------------------------
# lpm_rule_arrays: the vectorised IPv4 parse equals the line-by-line one, or defers to it
# ---------------------------------------------------------------------------------------
from l3fwd_sim.l3fwd import rules as rules_module  # noqa: E402
from l3fwd_sim.l3fwd.rules import lpm_rule_arrays  # noqa: E402

_LINE = st.one_of(
    st.builds(lambda a, d, p, ws, cr: f"R{ipaddress.IPv4Address(a)}/{d}{ws}{p}{cr}",
              st.integers(0, 2**32 - 1), st.integers(0, 32), st.integers(0, 255),
              st.sampled_from([" ", "\t", "  "]), st.sampled_from(["", "\r", " "])),
    st.sampled_from(["# comment", "", "   ", "R10.0.0.0/8 0x1f", "R10.0.0.0/8 010", "R10.0.0.0/33 1",
                     "R10.0.0/8 1", "R10.0.0.0/8 1 2", "R 10.0.0.0/8 1", "X10.0.0.0/8 1", "R10.0.0.0/8 256",
                     "R300.0.0.0/8 1", "R10.0.0.0/8 1 # note"]),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_LINE, max_size=40))
def test_rule_arrays_equal_the_line_parser(tmp_path, lines):
    path = write(tmp_path, "\n".join(lines) + "\n")
    try:
        slow = [(r.prefix, r.depth, r.port, int(r.where.rsplit(":", 1)[1])) for r in parse_lpm_rules(path, 4)]
    except SimError as err:
        with pytest.raises(SimError) as fast_err:
            lpm_rule_arrays(path, 4)
        assert str(fast_err.value) == str(err)
        return
    arrays = lpm_rule_arrays(path, 4)
    fast = list(zip(arrays.prefix.tolist(), arrays.depth.tolist(), arrays.port.tolist(), arrays.line.tolist()))
    assert fast == slow


def test_plain_ipv4_files_take_the_vectorised_path(tmp_path, monkeypatch):
    path = write(tmp_path, "# routes\nR198.18.0.0/24 0\r\nR10.0.0.0/8\t3 \n\nR0.0.0.0/0 1\n")
    monkeypatch.setattr(rules_module, "parse_lpm_rules", lambda *a: pytest.fail("slow path used"))
    arrays = lpm_rule_arrays(path, 4)
    assert arrays.prefix.tolist() == [0xC6120000, 0x0A000000, 0]
    assert arrays.depth.tolist() == [24, 8, 0] and arrays.port.tolist() == [0, 3, 1]
    assert arrays.line.tolist() == [2, 3, 5]
