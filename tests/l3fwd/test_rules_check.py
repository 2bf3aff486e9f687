"""``l3fwd-sim rules check`` (l3fwd_sim.l3fwd.rules_check): planted findings of every
kind, the command line (text, --json, exit statuses, refusals), and properties against
oracles written here: a brute-force first-match scan (ACL) and longest-prefix scan
(lpm/fib, a later duplicate winning) over the rule tuples the test generated — never the
project's tables. On grids (every rule bound on a coarse grid, so one point per cell
stands for all of it) the oracle sees every packet: a line is reported shadowed iff no
point is decided by it. Off the grid, random points inside every reported shadowed line
are decided by earlier lines, among them its ``by`` lines."""
from __future__ import annotations

import ipaddress
import json
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refusals import assert_refused

from forwarding import run_cli

from l3fwd_sim.l3fwd import rules_check
from l3fwd_sim.l3fwd.rules_check import CheckOptions, check

PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BITS = {4: 32, 6: 128}
ANY6 = "0:0:0:0:0:0:0:0/0"


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def rules_cli(*args):
    return run_cli("rules", "check", *args)


def findings(result) -> list[tuple[str, int, str, list[int]]]:
    """(file, line, kind, by lines) of each finding of a --json run."""
    return [(f["file"], f["line"], f["kind"], [b["line"] for b in f["by"]])
            for f in json.loads(result.stdout)["findings"]]


# ---------------------------------------------------------------------------------------
# ACL rules as tuples, their lines, and the first-match oracle
# ---------------------------------------------------------------------------------------
def acl_net(family: int, address: int, length: int) -> str:
    if family == 4:
        return f"{ipaddress.IPv4Address(address)}/{length}"
    return f"{ipaddress.IPv6Address(address).exploded}/{length}"      # l3fwd's eight groups, no '::'


def acl_line(family: int, rule: tuple) -> str:
    """``rule``: (src, src_len, dst, dst_len, (sport_lo, sport_hi), (dport_lo, dport_hi),
    (proto, mask), port or None for a deny line)."""
    src, src_len, dst, dst_len, (slo, shi), (dlo, dhi), (proto, mask), port = rule
    fields = (f"{acl_net(family, src, src_len)} {acl_net(family, dst, dst_len)} {slo} : {shi} {dlo} : {dhi} "
              f"{proto}/{mask:#x}")
    return f"@{fields}" if port is None else f"R{fields} {port}"


def acl_matches(rule: tuple, family: int, points: dict) -> np.ndarray:
    """Which of ``points`` (arrays: proto, src, dst, sport, dport) ``rule`` matches."""
    src, src_len, dst, dst_len, (slo, shi), (dlo, dhi), (proto, mask), _ = rule
    host = BITS[family]
    hit = (points["proto"] & mask) == (proto & mask)
    for address, length, key in ((src, src_len, "src"), (dst, dst_len, "dst")):
        hit &= (points[key] >> (host - length)) == (address >> (host - length))
    hit &= (points["sport"] >= slo) & (points["sport"] <= shi) & (points["dport"] >= dlo) & (points["dport"] <= dhi)
    return hit


def with_a_route(rules: list[tuple]) -> list[tuple]:
    """l3fwd refuses an ACL file without an R line: the last line routes when none does."""
    if all(rule[-1] is None for rule in rules):
        rules[-1] = (*rules[-1][:-1], 0)
    return rules


def first_match(rules: list[tuple], family: int, points: dict) -> np.ndarray:
    """Index of the first rule matching each point, -1 where none does."""
    decided = np.full(len(points["proto"]), -1)
    for index, rule in enumerate(rules):
        decided[(decided < 0) & acl_matches(rule, family, points)] = index
    return decided


def check_acl(tmp: Path, family: int, rules: list[tuple], comment_first: bool = True) -> dict[int, list[int]]:
    """Run the check on ``rules`` (the other family's file a single catch-all); the
    reported shadowed lines of ``rules`` as rule index -> by rule indexes."""
    lines = (["# generated"] if comment_first else []) + [acl_line(family, r) for r in rules]
    other = {4: "R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0 0", 6: f"R{ANY6} {ANY6} 0 : 65535 0 : 65535 0/0 0"}
    paths = {family: write(tmp / f"acl{family}.cfg", lines), 10 - family: write(tmp / f"acl{10 - family}.cfg",
                                                                                 [other[10 - family]])}
    report = check(CheckOptions(lookup="acl", rule_ipv4=paths[4], rule_ipv6=paths[6]))
    offset = 1 + comment_first                          # rule index -> line
    found = {}
    for finding in report.findings:
        assert finding.kind == "shadowed"
        if finding.file == str(paths[family]):
            found[finding.line - offset] = [line - offset for line in finding.by]
        else:
            raise AssertionError(f"a lone catch-all is never shadowed: {finding}")
    return found


# ---------------------------------------------------------------------------------------
# planted ACL findings
# ---------------------------------------------------------------------------------------
def test_acl_line_shadowed_by_one_earlier_line(tmp_path):
    a4 = write(tmp_path / "a4.cfg", ["R10.0.0.0/8 20.0.0.0/8 0 : 65535 0 : 65535 6/0xff 1",
                                     "R10.1.0.0/16 20.1.2.0/24 100 : 200 53 : 53 6/0xff 2",
                                     "@10.1.0.0/16 20.1.2.0/24 100 : 200 53 : 53 17/0xff"])
    a6 = write(tmp_path / "a6.cfg", [f"R{ANY6} {ANY6} 0 : 65535 0 : 65535 0/0 0"])
    result = rules_cli("--lookup", "acl", "--rule_ipv4", a4, "--rule_ipv6", a6)
    assert result.exit_code == 1
    assert result.stdout == (f"{a4}:2: R10.1.0.0/16 20.1.2.0/24 100 : 200 53 : 53 6/0xff 2  — shadowed by {a4}:1\n")


COVER = ["R10.0.0.0/9 0.0.0.0/0 0 : 65535 0 : 65535 0/0 1",          # line 1: the lower half of 10/8
         "R10.128.0.0/9 0.0.0.0/0 0 : 65535 0 : 999 0/0 2",           # line 2: the upper half, low dports
         "@10.128.0.0/9 0.0.0.0/0 0 : 65535 1000 : 65535 0/0",        # line 3: the upper half, the others
         "R10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0/0 3"]           # line 4: all of it


def test_acl_line_shadowed_only_by_a_union(tmp_path):
    a6 = write(tmp_path / "a6.cfg", [f"R{ANY6} {ANY6} 0 : 65535 0 : 65535 0/0 0"])
    a4 = write(tmp_path / "a4.cfg", COVER)
    result = rules_cli("--lookup", "acl", "--rule_ipv4", a4, "--rule_ipv6", a6, "--json")
    assert result.exit_code == 1
    assert findings(result) == [(str(a4), 4, "shadowed", [1, 2, 3])]
    for single in range(3):                            # no one line covers it alone
        alone = write(tmp_path / f"alone{single}.cfg", [COVER[single], COVER[3]])
        assert rules_cli("--lookup", "acl", "--rule_ipv4", alone, "--rule_ipv6", a6).exit_code == 0


PROTO_COVER = ["R10.0.0.0/9 0.0.0.0/0 0 : 65535 0 : 65535 0/0x80 1",    # protos 0..127
               "R10.0.0.0/9 0.0.0.0/0 0 : 65535 0 : 65535 0x80/0x80 1",  # 128..255
               "R10.128.0.0/9 0.0.0.0/0 0 : 65535 0 : 65535 0/0 1",
               "R10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0/0 3"]


@pytest.mark.parametrize("lines, shadowed", [
    (COVER, True),
    ([*COVER[:2], COVER[2].replace("1000 : 65535", "1001 : 65535"), COVER[3]], False),   # dport 1000 left
    (PROTO_COVER, True),
    ([PROTO_COVER[0], PROTO_COVER[1].replace("0x80/0x80", "0x81/0x81"), *PROTO_COVER[2:]], False),  # 128, 130, ...
    ([PROTO_COVER[0], PROTO_COVER[1].replace("10.0.0.0/9", "10.0.0.0/10"), *PROTO_COVER[2:]], False),
])
def test_acl_line_partly_covered_is_not_reported(tmp_path, lines, shadowed):
    a6 = write(tmp_path / "a6.cfg", [f"R{ANY6} {ANY6} 0 : 65535 0 : 65535 0/0 0"])
    a4 = write(tmp_path / "a4.cfg", lines)
    result = rules_cli("--lookup", "acl", "--rule_ipv4", a4, "--rule_ipv6", a6, "--json")
    assert findings(result) == ([(str(a4), 4, "shadowed", [1, 2, 3])] if shadowed else [])
    assert result.exit_code == (1 if shadowed else 0)


def test_acl_ipv6_and_proto_classes(tmp_path):
    a4 = write(tmp_path / "a4.cfg", ["R0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0/0 0"])
    a6 = write(tmp_path / "a6.cfg", [
        "R2001:db8:0:0:0:0:0:0/32 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 6/0xfe 1",      # protos 6 and 7
        "R2001:db8:1:0:0:0:0:0/48 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 7/0xff 1",      # 7 only: shadowed
        "R2001:db8:1:0:0:0:0:0/48 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 4/0xfc 1",      # 4..7: not
        "R2001:db8:0:0:0:0:0:0/33 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 4/0xfd 1",      # 4 and 6: not (4)
        "R2001:db8:1:0:0:0:0:1/48 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 65535 5/0xff 1"])     # 5: by line 3
    result = rules_cli("--lookup", "acl", "--rule_ipv4", a4, "--rule_ipv6", a6, "--json")
    assert findings(result) == [(str(a6), 2, "shadowed", [1]), (str(a6), 5, "shadowed", [3])]


# ---------------------------------------------------------------------------------------
# planted lpm, fib and em findings
# ---------------------------------------------------------------------------------------
V6 = ["R2001:db8::/32 1"]


def test_lpm_prefix_under_both_halves_is_shadowed_under_one_is_not(tmp_path):
    v4 = write(tmp_path / "v4.cfg", ["# two /23s", "R10.0.0.0/23 1", "R10.0.0.0/24 2", "R10.0.1.0/24 3",
                                     "R10.2.0.0/23 1", "R10.2.1.0/24 2", "R10.4.0.0/22 4", "R10.4.0.0/23 5",
                                     "R10.4.2.0/24 6", "R10.4.3.0/25 7", "R10.4.3.128/25 7"])
    result = rules_cli("--rule_ipv4", v4, "--rule-ipv6", write(tmp_path / "v6.cfg", V6))
    assert result.exit_code == 1
    assert result.stdout == (f"{v4}:2: R10.0.0.0/23 1  — shadowed by {v4}:3, {v4}:4\n"
                             f"{v4}:7: R10.4.0.0/22 4  — shadowed by {v4}:8, {v4}:9, {v4}:10, {v4}:11\n")


def test_lpm_duplicates_the_last_is_in_effect_and_not_also_shadowed(tmp_path):
    v4 = write(tmp_path / "v4.cfg", ["R10.0.0.0/23 1", "R10.0.0.0/24 2", "R10.0.1.0/24 3", "R10.0.0.0/23 4",
                                     "R10.9.9.9/16 1", "R10.9.0.0/16 2", "R10.9.0.0/17 2"])
    v6 = write(tmp_path / "v6.cfg", ["R2001:db8::/32 1", "R2001:db8::1/32 2", "R2001:db8::/48 3"])
    result = rules_cli("--rule_ipv4", v4, "--rule_ipv6", v6, "--json")
    assert findings(result) == [(str(v4), 1, "duplicate", [4]), (str(v4), 4, "shadowed", [2, 3]),
                                (str(v4), 5, "duplicate", [6]), (str(v6), 1, "duplicate", [2])]


def test_fib_default_route_duplicate_and_shadowed_lpm_refuses_it(tmp_path):
    v4 = write(tmp_path / "v4.cfg", ["R0.0.0.0/0 1", "R0.0.0.0/1 2", "R128.0.0.0/1 3", "R0.0.0.0/0 4"])
    v6 = write(tmp_path / "v6.cfg", ["R::/0 1", "R::/1 1"])
    result = rules_cli("--lookup", "fib", "--rule_ipv4", v4, "--rule_ipv6", v6, "--json")
    assert findings(result) == [(str(v4), 1, "duplicate", [4]), (str(v4), 4, "shadowed", [2, 3])]
    assert_refused(rules_cli("--lookup", "lpm", "--rule_ipv4", v4, "--rule_ipv6", v6),
                   f"{v4}:1: depth 0 is rejected by rte_lpm")


def test_em_duplicate_flows_the_last_installed_is_in_effect(tmp_path):
    flows = ["R198.18.0.1 198.18.1.1 9 9 0x11 0", "R198.18.0.1 198.18.1.1 9 9 17 1", "R198.18.0.1 198.18.1.1 9 9 6 1",
             "R198.18.0.1 198.18.1.1 0x9 011 0x11 2", "R198.18.0.1 198.18.1.1 9 9 0x11 7"]
    e4 = write(tmp_path / "e4.cfg", flows)
    e6 = write(tmp_path / "e6.cfg", ["R2001:db8::1 2001:db8::2 1 2 6 0", "R2001:db8::1 2001:db8::2 1 2 6 1"])
    result = rules_cli("--lookup", "em", "--rule_ipv4", e4, "--rule_ipv6", e6, "--json")
    assert findings(result) == [(str(e4), 1, "duplicate", [5]), (str(e4), 2, "duplicate", [5]),
                                (str(e4), 4, "duplicate", [5]), (str(e6), 1, "duplicate", [2])]
    result = rules_cli("--lookup", "em", "--rule_ipv4", e4, "--rule_ipv6", e6, "-p", "0x7", "--json")
    assert findings(result) == [(str(e4), 1, "duplicate", [4]), (str(e4), 2, "duplicate", [4]),
                                (str(e4), 5, "not_installed", []), (str(e6), 1, "duplicate", [2])]


def test_not_installed_routes_and_the_duplicates_they_leave(tmp_path):
    v4 = write(tmp_path / "v4.cfg", ["R10.0.0.0/8 1", "R10.0.0.0/8 5", "R10.0.0.0/9 2", "R10.128.0.0/9 40"])
    result = rules_cli("--rule_ipv4", v4, "--rule_ipv6", write(tmp_path / "v6.cfg", V6), "-p", "0x3", "--json")
    assert findings(result) == [(str(v4), 2, "not_installed", []), (str(v4), 3, "not_installed", []),
                                (str(v4), 4, "not_installed", [])]
    assert rules_cli("--rule_ipv4", v4, "--rule_ipv6", tmp_path / "v6.cfg", "-p", "0x7").stdout == (
        f"{v4}:2: R10.0.0.0/8 5  — not_installed\n{v4}:4: R10.128.0.0/9 40  — not_installed\n")


def test_the_builtin_tables_are_named_as_traces_name_them():
    assert (rules_cli().exit_code, rules_cli().stdout) == (0, "")
    for lookup in ("fib", "em"):
        assert rules_cli("--lookup", lookup).exit_code == 0
    result = rules_cli("-p", "0xfffe")                 # port 0 off: line 3 of each default table
    assert result.exit_code == 1
    assert result.stdout == (
        "routes/lpm_default_v4.cfg:3: R198.18.0.0/24 0  — not_installed\n"
        "routes/lpm_default_v6.cfg:3: R2001:0200:0000:0000:0000:0000:0000:0000/64 0  — not_installed\n")


def test_one_rule_file_warns_and_checks_the_defaults(tmp_path):
    v4 = write(tmp_path / "v4.cfg", ["R10.0.0.0/8 1", "R10.0.0.0/8 2"])
    result = rules_cli("--rule_ipv4", v4)
    assert (result.exit_code, result.stdout) == (0, "")
    assert "Missing 1 or more rule files, using default instead" in result.stderr


# ---------------------------------------------------------------------------------------
# the command line: --json, exit statuses, refusals
# ---------------------------------------------------------------------------------------
def test_json_shape(tmp_path):
    v4 = write(tmp_path / "v4.cfg", ["R10.0.0.0/23 1", "R10.0.0.0/24 2", "R10.0.1.0/24 3", "R10.0.1.0/24 9"])
    v6 = write(tmp_path / "v6.cfg", V6)
    result = rules_cli("--rule_ipv4", v4, "--rule_ipv6", v6, "-p", "0xf", "--json")
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report == {
        "lookup": "lpm", "portmask": "0xf", "warnings": [],
        "counts": {"shadowed": 1, "duplicate": 0, "not_installed": 1},
        "tables": {"ipv4": {"file": str(v4), "rules": 4, "shadowed": 1, "duplicate": 0, "not_installed": 1},
                   "ipv6": {"file": str(v6), "rules": 1, "shadowed": 0, "duplicate": 0, "not_installed": 0}},
        "findings": [{"file": str(v4), "line": 1, "kind": "shadowed", "text": "R10.0.0.0/23 1",
                      "by": [{"file": str(v4), "line": 2}, {"file": str(v4), "line": 3}]},
                     {"file": str(v4), "line": 4, "kind": "not_installed", "text": "R10.0.1.0/24 9", "by": []}]}
    text = rules_cli("--rule_ipv4", v4, "--rule_ipv6", v6, "-p", "0xf").stdout.splitlines()
    assert len(text) == len(report["findings"])
    clean = json.loads(rules_cli("--json").stdout)
    assert clean["findings"] == [] and clean["counts"] == {"shadowed": 0, "duplicate": 0, "not_installed": 0}


def test_json_chunks_are_the_report(tmp_path, monkeypatch):
    v4 = write(tmp_path / "v4.cfg", [f"R10.{i}.0.0/16 {i % 3}" for i in range(7)] * 3)
    report = check(CheckOptions(rule_ipv4=v4, rule_ipv6=write(tmp_path / "v6.cfg", V6)))
    for chunk in (1, 2, 5, 1000):
        monkeypatch.setattr(rules_check, "OUTPUT_CHUNK", chunk)
        assert json.loads("".join(report.json_chunks())) == report.to_dict()
        assert "".join(report.text_chunks()) == "".join(f"{finding}\n" for finding in report.findings)


def test_long_by_lists_are_cut_in_text_only(tmp_path):
    v4 = write(tmp_path / "v4.cfg", ["R10.0.0.0/20 1"] + [f"R10.0.{i}.0/24 2" for i in range(16)])
    report = check(CheckOptions(rule_ipv4=v4, rule_ipv6=write(tmp_path / "v6.cfg", V6)))
    (finding,) = report.findings
    assert finding.by == tuple(range(2, 18))
    assert str(finding).endswith(f"by {', '.join(f'{v4}:{i}' for i in range(2, 12))}, … (6 more)")


@pytest.mark.parametrize("args, needles", [
    (["--lookup", "acl", "--rule_ipv4", "{a4}"], ["--lookup acl needs both", "IPv6 rule file not specified"]),
    (["--lookup", "acl", "--rule_ipv4", "{a4}", "--rule_ipv6", "{a6}", "-p", "0x1"],
     ["a4.cfg:1: routes to port 1", "fwd number illegal"]),
    (["--rule_ipv4", "{bad}", "--rule_ipv6", "{a6}"], ["bad.cfg:2:"]),
    (["--lookup", "acl", "--rule_ipv4", "{bad}", "--rule_ipv6", "{a6}"], ["bad.cfg:2:"]),
    (["-p", "0x0"], ["invalid portmask"]),
    (["-p", "zz"], ["invalid portmask"]),
    (["--lookup", "bogus"], ["bogus"]),
    (["--rule_ipv4", "{missing}", "--rule_ipv6", "{a6}"], ["missing.cfg", "cannot read"]),
])
def test_bad_input_is_one_line_exit_2(tmp_path, args, needles):
    files = {"a4": write(tmp_path / "a4.cfg", ["R10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0/0 1"]),
             "a6": write(tmp_path / "a6.cfg", [f"R{ANY6} {ANY6} 0 : 65535 0 : 65535 0/0 0"]),
             "bad": write(tmp_path / "bad.cfg", ["# x", "R10.0.0.0/33 1"]), "missing": tmp_path / "missing.cfg"}
    assert_refused(rules_cli(*[a.format(**files) for a in args]), *needles)


# ---------------------------------------------------------------------------------------
# ACL properties: complete and sound on grids, sound off them, both candidate searches
# ---------------------------------------------------------------------------------------
# Grid rules: addresses are prefixes of at most 2 bits, port bounds multiples of 2^14,
# protos (value 0..3, mask of the low two bits or 0xff): every cell of the product of
# 4 x 4 address cells, 4 x 4 port cells and 8 proto values is one point below.
GRID_MASKS = [0, 1, 2, 3, 0xFF]
GRID_PORTS = [(lo << 14, (hi << 14) - 1) for lo in range(4) for hi in range(lo + 1, 5)]


def split(draw, rule: tuple, family: int, grid: bool) -> list[tuple] | None:
    """``rule`` cut in two along a field drawn (None when it cannot be cut there): an
    address prefix into its halves, a port range at a point inside, a proto into the
    values with a bit the mask leaves free clear and set."""
    field = draw(st.integers(0, 4))
    rule = list(rule)
    if field < 2:
        address, length = rule[2 * field], rule[2 * field + 1]
        if length >= (2 if grid else BITS[family]):
            return None
        half = 1 << (BITS[family] - length - 1)
        cut = [(address & ~half, length + 1), (address | half, length + 1)]
        return [tuple(rule[:2 * field] + list(part) + rule[2 * field + 2:]) for part in cut]
    if field < 4:
        lo, hi = rule[field + 2]
        step = 1 << 14 if grid else 1
        if hi - lo < step:
            return None
        at = draw(st.sampled_from(range(lo + step, hi + 1, step)))
        return [tuple(rule[:field + 2] + [part] + rule[field + 3:]) for part in ((lo, at - 1), (at, hi))]
    proto, mask = rule[6]
    free = [bit for bit in ((1, 2) if grid else (1 << b for b in range(8))) if not mask & bit]
    if not free:
        return None
    bit = draw(st.sampled_from(free))
    return [tuple(rule[:6] + [part] + rule[7:]) for part in ((proto & ~bit, mask | bit), (proto | bit, mask | bit))]


@st.composite
def covered_boxes(draw, rule: st.SearchStrategy, family: int, grid: bool, max_rules: int) -> list[tuple]:
    """Rules drawn from ``rule``, amid which boxes, each after the pieces it was cut into
    (one piece now and then left out): lines shadowed by a union, or nearly."""
    rules = draw(st.lists(rule, max_size=max_rules))
    for _ in range(draw(st.integers(0 if rules else 1, 2))):
        box = draw(rule)
        pieces = [box]
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(pieces) - 1))
            pieces[at:at + 1] = split(draw, pieces[at], family, grid) or pieces[at:at + 1]
        if len(pieces) > 1 and draw(st.integers(0, 3)) == 0:
            del pieces[draw(st.integers(0, len(pieces) - 1))]
        at = draw(st.integers(0, len(rules)))
        rules[at:at] = pieces + [box]
    return with_a_route(rules)


def grid_rules(family: int, max_rules: int = 6) -> st.SearchStrategy:
    host = BITS[family]
    net = st.integers(0, 2).flatmap(lambda length: st.tuples(
        st.integers(0, (1 << length) - 1).map(lambda top: top << (host - length) if length else 0), st.just(length)))
    rule = st.tuples(net, net, st.sampled_from(GRID_PORTS), st.sampled_from(GRID_PORTS),
                     st.tuples(st.integers(0, 3), st.sampled_from(GRID_MASKS)), st.one_of(st.none(), st.integers(0, 3)))
    return covered_boxes(rule.map(lambda r: (*r[0], *r[1], *r[2:])), family, True, max_rules)


def grid_points(family: int) -> dict:
    host = BITS[family]
    quarter = [q << (host - 2) for q in range(4)]
    ports = [p << 14 for p in range(4)]
    proto, src, dst, sport, dport = (a.ravel() for a in np.meshgrid(np.arange(8), quarter, quarter, ports, ports,
                                                                   indexing="ij"))
    kind = np.int64 if family == 4 else object
    return {"proto": proto, "src": src.astype(kind), "dst": dst.astype(kind), "sport": sport, "dport": dport}


def assert_exact(rules: list[tuple], family: int, points: dict, found: dict[int, list[int]]) -> None:
    """Reported shadowed iff no point is decided by the line; ``by``: earlier lines that
    between them match every point the line matches."""
    decided = first_match(rules, family, points)
    deciding = set(decided[decided >= 0].tolist())
    assert set(found) == set(range(len(rules))) - deciding
    for line, by in found.items():
        assert by and all(b < line for b in by)
        mine = acl_matches(rules[line], family, points)
        covered = np.zeros_like(mine)
        for b in by:
            covered |= acl_matches(rules[b], family, points)
        assert not (mine & ~covered).any()


@pytest.mark.parametrize("search", ["join", "bitset"])
@PROPS
@given(family=st.sampled_from([4, 6]), data=st.data())
def test_acl_grid_shadowed_iff_no_point_is_decided(search, family, data):
    rules = data.draw(grid_rules(family))
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(rules_check, "JOIN_COST", 0 if search == "join" else 1 << 62)
        found = check_acl(Path(tmp), family, rules)
    assert_exact(rules, family, grid_points(family), found)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(search=st.sampled_from(["join", "bitset"]), seed=st.integers(0, 2**32 - 1))
def test_acl_grid_many_rules_across_blocks_and_chunks(search, seed):
    """Hundreds of rules, with blocks of 64 rules and chunks of 128 lines: holders in
    later blocks, candidates across chunks, the diagonal block."""
    rng = random.Random(seed)
    family = 4
    rules = [(rng.randrange(4) << 30, 2, rng.randrange(4) << 30, 2, rng.choice(GRID_PORTS), rng.choice(GRID_PORTS),
              (rng.randrange(4), rng.choice(GRID_MASKS)), rng.choice([None, 1])) for _ in range(300)]
    rules[::37] = [(0, 1, 0, 0, (0, 65535), (0, 65535), (0, 0), 0)] * len(rules[::37])    # wide ones
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr(rules_check, "JOIN_COST", 0 if search == "join" else 1 << 62)
        patch.setattr(rules_check, "ACL_BLOCK", 64)
        patch.setattr(rules_check, "WORDS", 1)
        patch.setattr(rules_check, "ACL_QUERIES", 128)
        patch.setattr(rules_check, "CELLS", 50)
        found = check_acl(Path(tmp), family, rules)
    assert_exact(rules, family, grid_points(family), found)


# Off the grid: values from small pools of nested and overlapping nets, ranges and protos,
# so that lines are shadowed often, by one line and by unions.
V4_NETS = [("10.0.0.0", 8), ("10.0.0.0", 9), ("10.128.0.0", 9), ("10.1.0.0", 16), ("10.1.2.3", 32), ("0.0.0.0", 0),
           ("10.0.0.0", 7), ("11.0.0.0", 8)]
V6_NETS = [("2001:db8::", 32), ("2001:db8::", 33), ("2001:db8:8000::", 33), ("2001:db8:1::", 48), ("::", 0),
           ("2001:db8:1::5", 128)]
PORT_POOL = [(0, 65535), (0, 1023), (1024, 65535), (80, 80), (0, 80), (81, 65535), (53, 53), (0, 52), (54, 65535)]
PROTO_POOL = [(0, 0), (6, 0xFF), (17, 0xFF), (6, 0xFE), (7, 0xFF), (0, 0x80), (0x80, 0x80), (17, 0xFB), (0, 1), (1, 1)]


@PROPS
@given(family=st.sampled_from([4, 6]), data=st.data())
def test_acl_points_inside_a_shadowed_line_are_decided_earlier(family, data):
    nets = [(int(ipaddress.ip_address(a)), n) for a, n in (V4_NETS if family == 4 else V6_NETS)]
    rule = st.tuples(st.sampled_from(nets), st.sampled_from(nets), st.sampled_from(PORT_POOL),
                     st.sampled_from(PORT_POOL), st.sampled_from(PROTO_POOL), st.one_of(st.none(), st.integers(0, 3)))
    rules = data.draw(covered_boxes(rule.map(lambda r: (*r[0], *r[1], *r[2:])), family, False, 10))
    with tempfile.TemporaryDirectory() as tmp:
        found = check_acl(Path(tmp), family, rules, comment_first=False)
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    host = BITS[family]
    for line, by in found.items():
        src, src_len, dst, dst_len, (slo, shi), (dlo, dhi), (proto, mask), _ = rules[line]
        count = 200

        def inside(address, length):
            span = (1 << (host - length)) - 1
            return [(address & ~span) | rng.getrandbits(host - length) if length < host else address
                    for _ in range(count)]
        kind = np.int64 if family == 4 else object
        points = {"src": np.array(inside(src, src_len), kind), "dst": np.array(inside(dst, dst_len), kind),
                  "sport": np.array([rng.randint(slo, shi) for _ in range(count)]),
                  "dport": np.array([rng.randint(dlo, dhi) for _ in range(count)]),
                  "proto": np.array([(proto & mask) | (rng.randrange(256) & ~mask) for _ in range(count)])}
        assert acl_matches(rules[line], family, points).all()
        decided = first_match(rules, family, points)
        assert ((decided >= 0) & (decided < line)).all()
        assert np.logical_or.reduce([acl_matches(rules[b], family, points) for b in by]).all()


# ---------------------------------------------------------------------------------------
# lpm/fib properties: the longest-prefix oracle
# ---------------------------------------------------------------------------------------
def lpm_oracle(routes: list[tuple], family: int, portmask: int, fib: bool, addresses: list[int]) -> dict:
    """Expected findings ``{line index: (kind, by indexes)}`` of ``routes`` ((address,
    depth, port) in file order), from a scan over ``addresses`` (one per cell of the
    longest depth used) for which line decides each, the later duplicate winning."""
    host = BITS[family]
    expected, in_effect = {}, {}
    for index, (address, depth, port) in enumerate(routes):
        if not (port < 32 and portmask >> port & 1):
            expected[index] = ("not_installed", [])
            continue
        key = (address >> (host - depth) if depth else 0, depth)
        if key in in_effect:
            expected[in_effect[key]] = ("duplicate", [index])
        in_effect[key] = index
    for earlier, (kind, by) in list(expected.items()):
        if kind == "duplicate":                        # by the last line of that prefix
            address, depth, _ = routes[earlier]
            expected[earlier] = (kind, [in_effect[(address >> (host - depth) if depth else 0, depth)]])
    deciding = set()
    for address in addresses:
        best = None
        for (prefix, depth), index in in_effect.items():
            if (depth or fib) and (address >> (host - depth) if depth else 0) == prefix and (
                    best is None or depth > routes[best][1]):
                best = index
        deciding.add(best)
    for index in set(in_effect.values()) - deciding:
        expected[index] = ("shadowed", None)           # by: checked on its own
    return expected


@PROPS
@given(family=st.sampled_from([4, 6]), fib=st.booleans(), portmask=st.sampled_from([0xF, 0x5, 0xFFFFFFFF]),
       data=st.data())
def test_lpm_grid_findings_are_the_oracle_findings(family, fib, portmask, data):
    """Depths 1..5 (fib: 0..5): every /5 cell's first address stands for its cell."""
    host = BITS[family]
    depth = st.integers(0 if fib else 1, 5)
    top = depth.flatmap(lambda d: st.tuples(st.integers(0, (1 << d) - 1).map(lambda t: t << (host - d) if d else 0),
                                            st.just(d)))
    route = st.tuples(top, st.sampled_from([0, 1, 2, 3, 40])).map(lambda r: (*r[0], r[1]))
    routes = data.draw(st.lists(route, min_size=1, max_size=14))
    routes = [(address | data.draw(st.integers(0, 255)), d, port) for address, d, port in routes]   # host bits set
    address = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    text = [f"R{address(a)}/{d} {port}" for a, d, port in routes]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {family: write(Path(tmp) / "mine.cfg", text),
                 10 - family: write(Path(tmp) / "other.cfg", ["R10.0.0.0/8 0" if family == 6 else "R2001:db8::/32 0"])}
        report = check(CheckOptions(lookup="fib" if fib else "lpm", portmask=portmask,
                                    rule_ipv4=paths[4], rule_ipv6=paths[6]))
    got = {f.line - 1: (f.kind, list(f.by)) for f in report.findings}
    masked = [((a >> (host - d)) << (host - d) if d else 0, d, p) for a, d, p in routes]
    expected = lpm_oracle(masked, family, portmask, fib, [c << (host - 5) for c in range(32)])
    assert {i: kind for i, (kind, _) in got.items()} == {i: kind for i, (kind, _) in expected.items()}
    for index, (kind, by) in got.items():
        if kind == "duplicate":
            assert [b - 1 for b in by] == expected[index][1]
        if kind == "shadowed":                          # by: the outermost longer prefixes inside it, tiling it
            address, depth, _ = masked[index]
            inner = [masked[b - 1] for b in by]
            assert all(d > depth and a >> (host - depth) == address >> (host - depth) for a, d, _ in inner)
            assert sum(1 << (host - d) for _, d, _ in inner) == 1 << (host - depth)


@PROPS
@given(data=st.data())
def test_lpm_addresses_inside_a_shadowed_prefix_go_to_longer_prefixes(data):
    """Off the grid: nested /8../32 prefixes; every random address of a shadowed prefix
    is decided by one of its by prefixes, the longest prefix holding it."""
    base = [(0x0A000000, 8)]
    for _ in range(data.draw(st.integers(1, 30))):
        address, depth = data.draw(st.sampled_from(base))
        if depth < 32:
            child = data.draw(st.integers(depth + 1, min(32, depth + 3)))
            base.append((address | data.draw(st.integers(0, (1 << (child - depth)) - 1)) << (32 - child), child))
    routes = data.draw(st.permutations(base))
    with tempfile.TemporaryDirectory() as tmp:
        v4 = write(Path(tmp) / "v4.cfg", [f"R{ipaddress.IPv4Address(a)}/{d} 1" for a, d in routes])
        report = check(CheckOptions(rule_ipv4=v4, rule_ipv6=write(Path(tmp) / "v6.cfg", V6)))
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1)))
    for finding in report.findings:
        assert finding.kind in ("shadowed", "duplicate")
        if finding.kind != "shadowed":
            continue
        address, depth = routes[finding.line - 1]
        for _ in range(50):
            probe = address | rng.getrandbits(32 - depth)
            holding = [(d, i) for i, (a, d) in enumerate(routes) if a >> (32 - d) == probe >> (32 - d)]
            longest = max(d for d, _ in holding)
            assert longest > depth
            assert any(routes[b - 1][0] >> (32 - routes[b - 1][1]) == probe >> (32 - routes[b - 1][1])
                       for b in finding.by)
