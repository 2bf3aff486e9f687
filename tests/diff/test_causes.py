"""``compare --explain``'s differences by cause: what each run decided for a difference's
input packet, and which of DPDK's path differences (D1–D10) makes the simple and the
multi path decide it differently.

The unit tests build trace lines by hand; the end-to-end tests replay the issue — the
shipped pcaps forwarded by both pipelines with ``--trace all`` — and check the groups
against the runs' own stats.json and against an independent reading of the inputs (scapy
says what each packet is: non-IP, IPv4 with options, IPv6 with an extension header...).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from forwarding import REPO, run_cli
from scapy.utils import RawPcapNgReader, RawPcapReader

from l3fwd_sim.diff import causes
from l3fwd_sim.diff.causes import IPV6_EXTENSION_HEADERS, PATH_DIFFERENCES, Decision, cause, decision, path_difference

PCAPS = REPO / "pcaps"


def line(**fields) -> dict:
    """A trace line: input packet 0/0/7, sent back out of port 0 unless told."""
    base = {"rx_port": 0, "rx_queue": 0, "index": 7, "lcore": 0, "burst": 0, "ptype": "ipv4", "table": "lpm4",
            "key": "198.18.1.1", "rule": None, "next_hop": None, "tx_port": 0, "tx_index": 3, "drop": None,
            "detail": None}
    return {**base, **fields}


def dropped(reason: str, **fields) -> dict:
    return line(tx_port=None, tx_index=None, drop=reason, **fields)


def hit(file: str, number: int, port: int, **fields) -> dict:
    return line(rule={"file": file, "line": number}, next_hop=port, tx_port=port, **fields)


RUNS = {"a": {"pipeline": "simple", "lookup": "lpm"}, "b": {"pipeline": "multi", "lookup": "lpm"}}
EM_RUNS = {"a": {"pipeline": "multi", "lookup": "em"}, "b": {"pipeline": "simple", "lookup": "em"}}


# ---------------------------------------------------------------------------------------
# one line, two lines
# ---------------------------------------------------------------------------------------
def test_a_decision_names_the_drop_the_rule_the_miss_or_no_lookup():
    assert decision(dropped("unknown_ptype", ptype="unknown", table=None)).text() == "dropped: unknown_ptype"
    assert decision(hit("v4.cfg", 5, 2)).text() == "lpm4 v4.cfg:5 → port 2"
    assert decision(line()).text() == "lpm4 miss: sent back out of the input port"
    assert decision(line(table=None, ptype="unknown")).text() == "no lookup: sent back out of the input port"
    assert decision(None).text() == "not traced"
    assert decision(line(detail="next header 43 is not TCP or UDP: sent back")).next_header == 43
    assert decision(hit("v4.cfg", 5, 2)).to_dict() == {"decision": "lpm4 v4.cfg:5 → port 2", "traced": True,
                                                      "drop": None, "table": "lpm4", "rule": "v4.cfg:5", "sent": 2}
    assert decision(line()).to_dict()["sent"] == "input port"
    assert decision(dropped("truncated")) == Decision(drop="truncated", table="lpm4", ptype="ipv4")


@pytest.mark.parametrize("a, b, headline", [
    (hit("v4.cfg", 5, 2), dropped("rfc1812_invalid"), "rfc1812_invalid in B"),
    (dropped("truncated"), hit("v4.cfg", 5, 2), "truncated in A"),
    (hit("v4.cfg", 5, 2), line(), "lpm4 miss in B"),
    (line(), hit("v4.cfg", 5, 2), "lpm4 miss in A"),
    (hit("v4.cfg", 5, 2), hit("v4.cfg", 6, 3), "lpm4: another rule"),
    (hit("v4.cfg", 5, 2), hit("v4.cfg", 5, 2), "the same decision"),
    (line(table=None), hit("v4.cfg", 5, 2), "no lookup in A"),
    (hit("v4.cfg", 5, 2), hit("v6.cfg", 5, 2, table="lpm6"), "lpm4 in A, lpm6 in B"),
    (None, line(), "not traced in A"),
    (line(), None, "not traced in B"),
])
def test_headline_says_what_differs(a, b, headline):
    assert causes.headline(decision(a), decision(b)) == headline


NON_IP = dict(ptype="unknown", table=None, key=None)


@pytest.mark.parametrize("runs, a, b, expected", [
    # lpm, A simple, B multi: the non-IP frame the simple path drops, the multi path sends back
    (RUNS, dropped("unknown_ptype", **NON_IP), line(**NON_IP), "D1"),
    # the same with A and B the other way round
    ({"a": RUNS["b"], "b": RUNS["a"]}, line(**NON_IP), dropped("unknown_ptype", **NON_IP), "D1"),
    # em: not TCP/UDP (ICMP; ICMPv6), IPv4 options, IPv6 extension headers
    (EM_RUNS, line(table=None), dropped("not_tcp_udp", detail="protocol 1 is not TCP or UDP"), "D2"),
    (EM_RUNS, line(table=None, ptype="ipv6_ext"),
     dropped("not_tcp_udp", ptype="ipv6_ext", detail="next header 58 is not TCP or UDP"), "D2"),
    (EM_RUNS, line(table=None, ptype="ipv4_ext"), dropped("not_tcp_udp", ptype="ipv4_ext"), "D3"),
    (EM_RUNS, line(table=None, ptype="ipv6_ext"),
     dropped("not_tcp_udp", ptype="ipv6_ext", detail="next header 0 is not TCP or UDP"), "D4"),
    (EM_RUNS, line(table=None, ptype="ipv6_ext", detail="next header 60 is not TCP or UDP: sent back"),
     dropped("not_tcp_udp", ptype="ipv6_ext"), "D4"),        # the multi path's detail names it
    # not a path difference: the same pipeline twice, other lookup modes, no stats.json, the
    # multi path dropping, the simple path sending
    ({"a": RUNS["a"], "b": RUNS["a"]}, dropped("unknown_ptype", **NON_IP), line(**NON_IP), None),
    ({"a": RUNS["a"], "b": {**RUNS["b"], "lookup": "em"}}, dropped("unknown_ptype", **NON_IP), line(**NON_IP), None),
    ({"a": None, "b": RUNS["b"]}, dropped("unknown_ptype", **NON_IP), line(**NON_IP), None),
    (RUNS, line(**NON_IP), dropped("unknown_ptype", **NON_IP), None),
    (RUNS, dropped("rfc1812_invalid"), hit("v4.cfg", 5, 2), None),
    ({"a": {"pipeline": "simple", "lookup": "fib"}, "b": {"pipeline": "multi", "lookup": "fib"}},
     dropped("unknown_ptype", **NON_IP), line(**NON_IP), None),
])
def test_path_difference_of_two_decisions(runs, a, b, expected):
    assert path_difference(runs, decision(a), decision(b)) == expected
    found = cause(decision(a), decision(b), runs)
    assert found.path_difference == expected
    assert found.title().endswith(f" ({expected})") == (expected is not None)


def test_extension_headers_are_ianas():
    assert {0, 43, 44, 60} <= IPV6_EXTENSION_HEADERS and not {6, 17, 58, 59} & IPV6_EXTENSION_HEADERS


def test_run_of_reads_the_stats_beside_the_trace(tmp_path):
    assert causes.run_of(tmp_path / "trace.jsonl") is None
    (tmp_path / "stats.json").write_text(json.dumps({"options": {"pipeline": "simple", "lookup": "em"}}))
    assert causes.run_of(tmp_path / "trace.jsonl") == {"stats": str(tmp_path / "stats.json"),
                                                      "pipeline": "simple", "lookup": "em"}
    (tmp_path / "stats.json").write_text("[]")
    assert causes.run_of(tmp_path / "trace.jsonl") is None


# ---------------------------------------------------------------------------------------
# the table's one home
# ---------------------------------------------------------------------------------------
def test_the_faithfulness_page_shows_the_table_of_causes_py():
    """docs/faithfulness.md's rows are PATH_DIFFERENCES', cell by cell, in order."""
    page = (REPO / "docs" / "faithfulness.md").read_text()
    rows = re.findall(r"^\| (D[0-9]+) \| (.*) \| (.*) \| (.*) \|$", page, re.M)
    assert rows == [(d.id, d.input, d.simple, d.multi) for d in PATH_DIFFERENCES.values()]
    assert "l3fwd_sim/diff/causes.py" in page


# ---------------------------------------------------------------------------------------
# end to end: the shipped pcaps, both pipelines
# ---------------------------------------------------------------------------------------
def _run(out: Path, *options) -> dict:
    result = run_cli("run", PCAPS, "-o", out, "--trace", "all", "--quiet", *options)
    assert result.exit_code == 0, result.output
    return json.loads((out / "stats.json").read_text())


def _by_id(path: Path) -> dict:
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    return {(r["rx_port"], r["rx_queue"], r["index"]): r for r in lines}


def test_the_issue_lpm_multi_against_simple(tmp_path):
    """``run pcaps -o a --trace all``, ``run pcaps -o b --pipeline simple --trace all``,
    ``compare a b --explain``: every difference is a non-IP frame that B (simple) dropped
    as unknown_ptype and A (multi) sent back — as many as b/stats.json's drops say — D1."""
    a, b = tmp_path / "a", tmp_path / "b"
    _run(a)
    stats_b = _run(b, "--pipeline", "simple")
    n = stats_b["drops"]["unknown_ptype"]
    assert n > 50
    text = run_cli("compare", a, b, "--explain", "--max-diffs", "1").output
    assert (f"  {n} × unknown_ptype in B (D1)  A: no lookup: sent back out of the input port  "
            "B: dropped: unknown_ptype") in text.splitlines()
    assert f"differences by cause (all {n}): " in text
    assert "runs: A --lookup lpm --pipeline multi, B --lookup lpm --pipeline simple" in text
    assert "  D1: non-IP frame (ARP, VLAN-tagged, LLDP, …), lpm or em: simple dropped (unknown_ptype); " \
           "multi sent back out of the input port, MACs rewritten" in text
    assert "  cause: unknown_ptype in B (D1) — A: no lookup: sent back out of the input port; " \
           "B: dropped: unknown_ptype" in text
    result = run_cli("compare", a, b, "--explain", "--json", "--max-diffs", "0")
    found = json.loads(result.output)["causes"]
    (group,) = found["groups"]
    assert (group["differences"], group["packets"], group["cause"], group["path_difference"]) == \
        (n, n, "unknown_ptype in B", "D1")
    assert group["b"]["drop"] == "unknown_ptype" and group["a"]["sent"] == "input port"
    assert found["differences"] == n == json.loads(result.output)["totals"]["missing"]
    # independently: the packets of those differences are the ones b's trace drops as unknown_ptype
    trace_a, trace_b = _by_id(a / "trace.jsonl"), _by_id(b / "trace.jsonl")
    assert sum(r["drop"] == "unknown_ptype" and trace_a[k]["tx_port"] == k[0] for k, r in trace_b.items()) == n


def _input_kind(frame: bytes) -> str:
    """Which path difference an input frame falls under, by its bytes (not by the trace):
    its EtherType, IHL, IPv6 next header."""
    ether_type = int.from_bytes(frame[12:14], "big")
    if ether_type == 0x0800:
        return "D3" if frame[14] & 0x0F != 5 else "D2"
    if ether_type == 0x86DD:
        return "D4" if frame[20] in IPV6_EXTENSION_HEADERS else "D2"
    return "D1"


def test_em_simple_against_multi_names_d1_to_d4(tmp_path):
    """em: the simple path drops non-IP frames (D1), non-TCP/UDP (D2), IPv4 options (D3)
    and IPv6 extension headers (D4) that the multi path sends back: each group as many as
    scapy's reading of the inputs says, and they add up to the simple run's drops of
    those reasons but for the packets the multi path drops too."""
    a, b = tmp_path / "simple", tmp_path / "multi"
    stats_a = _run(a, "--lookup", "em", "--pipeline", "simple")
    _run(b, "--lookup", "em")
    found = json.loads(run_cli("compare", a, b, "--explain", "--json", "--max-diffs", "0").output)["causes"]
    got = Counter({g["path_difference"]: g["differences"] for g in found["groups"]})
    assert all(g["cause"] in ("unknown_ptype in A", "not_tcp_udp in A") and g["differences"] == g["packets"]
               for g in found["groups"])
    frames = {port: [bytes(pkt) for pkt, _ in RawPcapReader(str(PCAPS / f"port{port}.pcap"))] for port in range(4)}
    trace_a, trace_b = _by_id(a / "trace.jsonl"), _by_id(b / "trace.jsonl")
    want = Counter(_input_kind(frames[k[0]][k[2]]) for k, r in trace_a.items()
                   if r["drop"] in ("unknown_ptype", "not_tcp_udp") and trace_b[k]["drop"] is None)
    assert got == want and set(want) == {"D1", "D2", "D3", "D4"}
    both = sum(r["drop"] in ("unknown_ptype", "not_tcp_udp") and trace_b[k]["drop"] is not None
               for k, r in trace_a.items())
    assert sum(got.values()) + both == stats_a["drops"]["unknown_ptype"] + stats_a["drops"]["not_tcp_udp"]
    assert set(found["path_differences"]) == {"D1", "D2", "D3", "D4"}


def test_route_change_groups_by_rule_line_and_miss(tmp_path):
    """Before/after a rule file change (198.18.1.0/24 to port 2, 198.18.2.0/24 gone): the
    packets of line 4 go elsewhere (a missing and an extra record each, or a modified
    pair), those of line 5 miss; no path difference."""
    routes = REPO / "routes"
    v4 = tmp_path / "v4.cfg"
    v4.write_text((routes / "lpm_default_v4.cfg").read_text().replace("R198.18.1.0/24 1", "R198.18.1.0/24 2")
                  .replace("R198.18.2.0/24 2", "#"))
    before, after = tmp_path / "before", tmp_path / "after"
    _run(before)
    _run(after, "--rule_ipv4", v4, "--rule_ipv6", routes / "lpm_default_v6.cfg")
    report = json.loads(run_cli("compare", before, after, "--explain", "--json", "--max-diffs", "0",
                                "--ignore", "Ether.src", "--ignore", "Ether.dst").output)
    groups = {g["cause"]: g for g in report["causes"]["groups"]}
    assert set(groups) == {"lpm4: another rule", "lpm4 miss in B"}
    trace = _by_id(before / "trace.jsonl")
    rule = lambda r, n: r["rule"] == {"file": "routes/lpm_default_v4.cfg", "line": n}   # noqa: E731
    assert groups["lpm4: another rule"]["packets"] == sum(rule(r, 4) and r["drop"] is None for r in trace.values())
    # line 5 sent to port 2: a miss sends a packet of port 2 back to port 2, as before
    assert groups["lpm4 miss in B"]["packets"] == sum(rule(r, 5) and r["drop"] is None and r["rx_port"] != 2
                                                      for r in trace.values())
    assert groups["lpm4 miss in B"]["a"]["decision"] == "lpm4 routes/lpm_default_v4.cfg:5 → port 2"
    assert groups["lpm4 miss in B"]["b"] == {"decision": "lpm4 miss: sent back out of the input port",
                                             "traced": True, "drop": None, "table": "lpm4", "rule": None,
                                             "sent": "input port"}
    totals = report["totals"]
    assert sum(g["differences"] for g in groups.values()) == \
        totals["modified"] + totals["missing"] + totals["extra"] + totals["reordered"]
    assert all(g["path_difference"] is None for g in groups.values()) and report["causes"]["path_differences"] == {}


def test_write_comments_carry_the_cause(tmp_path):
    """``--write DIR --explain``: each packet's comment is the difference and its cause."""
    a, b = tmp_path / "a", tmp_path / "b"
    _run(a)
    stats_b = _run(b, "--pipeline", "simple")
    assert run_cli("compare", b, a, "--explain", "--write", tmp_path / "diffs", "--max-diffs", "0").exit_code == 1
    comments = [meta.comments[0].decode() for _, meta in RawPcapNgReader(str(tmp_path / "diffs" / "b.pcapng"))]
    assert len(comments) == stats_b["drops"]["unknown_ptype"]
    tail = (" extra (not in A) · cause: unknown_ptype in A (D1) — A: dropped: unknown_ptype; "
            "B: no lookup: sent back out of the input port")
    assert all(re.fullmatch(r"port [0-3], packet B\[[0-9]+\]" + re.escape(tail), c) for c in comments), comments[:3]
    assert not list(RawPcapNgReader(str(tmp_path / "diffs" / "a.pcapng")))
    # without --explain: the difference only, as before
    assert run_cli("compare", b, a, "--write", tmp_path / "plain", "--max-diffs", "0").exit_code == 1
    plain = [meta.comments[0].decode() for _, meta in RawPcapNgReader(str(tmp_path / "plain" / "b.pcapng"))]
    assert plain == [c[:c.index(" · cause: ")] for c in comments]


def test_report_page_has_the_causes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _run(a)
    n = _run(b, "--pipeline", "simple")["drops"]["unknown_ptype"]
    assert run_cli("compare", a, b, "--explain", "--report", tmp_path / "page.html").exit_code == 1
    page = (tmp_path / "page.html").read_text()
    assert '<h2 id="causes">Differences by cause</h2>' in page
    assert f'data-cause="0" data-key="differences" data-value="{n}"' in page
    assert 'data-cause="0" data-key="path_difference">D1<' in page
    assert "cause: unknown_ptype in B (D1)" in page
