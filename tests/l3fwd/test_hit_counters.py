"""Per-rule hit counters (``stats.json``'s ``rules``) against an independent brute-force
oracle (tests/support/oracle.py: longest prefix by scan, exact 5-tuple, first ACL match
by scan), on random rule files with overlaps, duplicates, deny lines and routes outside
the portmask, and traffic with misses, non-IP, truncated and RFC 1812-invalid frames
(which count for no line). Every lookup, both pipelines, both kernels, ``--jobs 2`` and
several lcores give the same counters."""
from __future__ import annotations

import ipaddress
import json
import random

import pytest
from forwarding import run_cli
from frames import mixed_frames, write_pcap
from oracle import l3fwd_oracle, parse_rule_file_acl
from rule_files import random_flows, random_routes, write_acl_rules, write_em_rules, write_rules
from twins import KERNELS

from l3fwd_sim import compiled

PORTMASK = 0x7                   # routes to ports 3..7 are not installed


def _files(tmp_path, lookup: str, seed: int):
    """Random rule files (every line a rule, so a rule's ordinal is its line - 1), and the
    oracle's keyword arguments for them."""
    rng = random.Random(f"hits/{lookup}/{seed}")
    v4, v6 = tmp_path / "v4.cfg", tmp_path / "v6.cfg"
    if lookup in ("lpm", "fib"):
        routes4, routes6 = random_routes(rng, 120, 60)
        routes4 += rng.sample(routes4, 10) + [("198.18.0.0", 16, 1), ("198.18.1.0", 24, 2)]   # duplicates, overlaps
        routes6 += rng.sample(routes6, 5)
        if lookup == "fib":
            routes4.append(("0.0.0.0", 0, 2))
        write_rules(v4, routes4), write_rules(v6, routes6)
        return v4, v6, dict(routes_v4=routes4, routes_v6=routes6), None
    if lookup == "em":
        flows4, flows6 = random_flows(rng, 4, 40), random_flows(rng, 6, 40)
        # l3fwd's default flows (the traffic's EM frames aim at them), once more as duplicates
        flows4 += [(0xC6120000 + (n << 8), 0xC6120001 + (n << 8), 9, 9, 17, n % 8) for n in range(16)] * 2
        write_em_rules(v4, flows4, 4), write_em_rules(v6, flows6, 6)
        as_text = lambda flows, family: [(str(ipaddress.ip_address(d)), str(ipaddress.ip_address(s)), dp, sp, pr, p)
                                         for d, s, dp, sp, pr, p in flows]
        return v4, v6, dict(em_v4=as_text(flows4, 4), em_v6=as_text(flows6, 6)), None
    write_acl_rules(v4, 4, rng, 60, ports=(0, 1, 2)), write_acl_rules(v6, 6, rng, 40, ports=(0, 1, 2))
    return v4, v6, dict(acl_v4=parse_rule_file_acl(v4, 4), acl_v6=parse_rule_file_acl(v6, 6)), 1   # "# random rules"


def _counters(stats: dict) -> dict:
    """(table, ordinal in its file) -> [packets, bytes], for the lines that counted any."""
    ordinal, out = {}, {}
    for rule in stats["rules"]:
        i = ordinal[rule["table"]] = ordinal.get(rule["table"], -1) + 1
        if rule["packets"]:
            out[rule["table"], i] = [rule["packets"], rule["bytes"]]
    return out


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("lookup", ["lpm", "fib", "em", "acl"])
def test_counters_against_brute_force(tmp_path, lookup, pipeline, kernels):
    v4, v6, rules, _ = _files(tmp_path, lookup, seed=1)
    frames = {port: mixed_frames(7, port, 300) for port in (0, 1, 2)}
    indir = tmp_path / "in"
    indir.mkdir()
    for port, port_frames in frames.items():
        write_pcap(indir / f"port{port}.pcap", port_frames)
    want: dict = {}
    l3fwd_oracle(frames, portmask=PORTMASK, lookup=lookup, pipeline=pipeline, hits=want, **rules)
    runs = {}
    for name, extra in (("plain", []), ("jobs", ["--jobs", "2", "--rx-burst", "7"]),
                        ("lcores", ["--config", "(0,0,0),(1,0,1),(2,0,1)"])):
        with compiled.using(kernels):
            result = run_cli("run", indir, "-o", tmp_path / name, "-p", hex(PORTMASK), "--lookup", lookup,
                             "--pipeline", pipeline, "--rule_ipv4", v4, "--rule_ipv6", v6, "--json", *extra)
        assert result.exit_code == 0, result.output
        runs[name] = json.loads(result.stdout)
    stats = runs["plain"]
    assert _counters(stats) == want
    assert want, "the traffic hits some rule"
    for name in ("jobs", "lcores"):
        assert runs[name]["rules"] == stats["rules"], name
    lines = [r for r in stats["rules"] if r["table"] == f"{lookup}4"]
    assert [r["line"] for r in lines] == sorted(r["line"] for r in lines)     # file order
    assert stats["rules_never_hit"] == sum(r["installed"] and not r["packets"] for r in stats["rules"])
    if lookup != "acl":                        # routes to ports outside the portmask are listed, not installed
        assert any(not r["installed"] for r in stats["rules"]) and all(
            not r["packets"] for r in stats["rules"] if not r["installed"])


def test_default_tables_named_as_traces_name_them(tmp_path):
    result = run_cli("run", "pcaps", "-o", tmp_path, "--json")
    stats = json.loads(result.stdout)
    files = {r["file"] for r in stats["rules"]}
    assert files == {"routes/lpm_default_v4.cfg", "routes/lpm_default_v6.cfg"}
    counted = sum(r["packets"] for r in stats["rules"])
    assert 0 < counted <= stats["totals"]["tx"]
    table = run_cli("run", "pcaps", "-o", tmp_path / "t").stdout
    never = stats["rules_never_hit"]
    installed = sum(r["installed"] for r in stats["rules"])
    assert f"rules: {never:,} of {installed:,} installed lines never hit (lpm4 " in table
