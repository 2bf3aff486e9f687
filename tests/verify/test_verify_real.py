"""``l3fwd-sim verify`` against a live real DPDK (Debian 12's 22.11, support/real_dpdk.py):
dpdk-l3fwd (lpm, em, fib, acl; one lcore and two) and dpdk-testpmd (every engine the
simulator has) on traffic ``generate`` makes from fixed seeds — random and malformed mixes,
frames of 64 to 3000 bytes — each verified identical; and a deliberately broken l3fwd (TTL
not decremented) reported, with the cause. Skipped, naming the package, where DPDK is
not installed."""
from __future__ import annotations

import json
import shutil

import pytest
from forwarding import GOLDEN, run_cli
from real_dpdk import build_l3fwd, require

EAL = ["--no-huge", "-m", "1024", "--no-pci", "--no-telemetry"]


@pytest.fixture(scope="module")
def traffic(tmp_path_factory):
    """Four ports of generated traffic: a random mix with frames of 64 to 3000 bytes (22.11
    forwards the long ones: net_pcap chains them), and a malformed mix."""
    root = tmp_path_factory.mktemp("traffic")
    for name, args in (("random", ["random", "--size", "64-3000", "--seed", "7"]), ("malformed", ["malformed", "--seed", "8"])):
        result = run_cli("generate", *args, "--ports", "4", "--count", "150", "-o", root / name)
        assert result.exit_code == 0, result.output
    return root


def l3fwd_line(indir, outdir, lcores: int, app: list[str]) -> list[str]:
    """dpdk-l3fwd over four net_pcap ports, one tx_pcap per lcore (its TX queues)."""
    argv = ["dpdk-l3fwd", "-l", f"0-{lcores - 1}", *EAL]
    for port in range(4):
        tx = ",".join(f"tx_pcap={outdir}/port{port}.q{q}.pcap" for q in range(lcores))
        argv += ["--vdev", f"net_pcap{port},rx_pcap={indir}/port{port}.pcap,{tx}"]
    config = ",".join(f"({port},0,{port % lcores})" for port in range(4))
    return [*argv, "--", "-p", "0xf", "--config", config, "--parse-ptype", *app]


def verified(binary, line: list[str], *extra: str) -> dict:
    result = run_cli("verify", "--binary", binary, "--json", *extra, "--", *line)
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


ACL = ["--lookup=acl", f"--rule_ipv4={GOLDEN / 'acl' / 'acl_v4.cfg'}", f"--rule_ipv6={GOLDEN / 'acl' / 'acl_v6.cfg'}"]


@pytest.mark.parametrize("lookup,lcores", [([], 1), (["--lookup=em"], 1), (["--lookup=fib"], 1), (ACL, 1),
                                           ([], 2), (ACL, 2)], ids=["lpm", "em", "fib", "acl", "lpm-2", "acl-2"])
@pytest.mark.parametrize("mix", ["random", "malformed"])
def test_real_l3fwd_is_the_simulator(tmp_path, traffic, mix, lookup, lcores):
    result = verified(build_l3fwd(), l3fwd_line(traffic / mix, tmp_path, lcores, lookup))
    assert result["dpdk"] == "22.11" and result["real"]["forwarded"]
    assert result["equal"], json.dumps(result, indent=1)[:4000]
    assert len(result["files"]) == 4 * lcores


@pytest.mark.parametrize("mode", ["io", "mac", "macswap", "5tswap", "icmpecho", "rxonly"])
def test_real_testpmd_is_the_simulator(tmp_path, traffic, mode):
    require()
    line = ["dpdk-testpmd", "-l", "0-1", *EAL]
    for port in range(4):
        line += ["--vdev", f"net_pcap{port},rx_pcap={traffic / 'random'}/port{port}.pcap,tx_pcap={tmp_path}/port{port}.pcap"]
    line += ["--", "--no-flush-rx", "--port-topology=paired", f"--forward-mode={mode}"]
    result = verified(shutil.which("dpdk-testpmd"), line)
    assert result["equal"], json.dumps(result, indent=1)[:4000]


def test_a_refusal_is_compared_as_a_refusal(tmp_path, traffic):
    """No --parse-ptype: both refuse, for the same reason (22.11's rte_exit cause is
    "ptype check fails", after the port's "cannot parse packet type" line)."""
    line = l3fwd_line(traffic / "random", tmp_path, 1, [])
    line.remove("--parse-ptype")
    result = verified(build_l3fwd(), line)
    assert result["equal"] and not result["real"]["forwarded"] and result["real"]["status"] == 1
    assert result["real"]["refusal"] == "ptype check fails"
    assert any("cannot parse packet type" in text for text in result["real"]["console_tail"])
    assert "cannot parse packet type" in result["simulator"]["refused"]


def _no_ttl_decrement(sources):
    common = sources / "l3fwd" / "l3fwd_common.h"
    text = common.read_text()
    assert "ipv4_hdr->time_to_live--;" in text
    common.write_text(text.replace("ipv4_hdr->time_to_live--;", "(void)ipv4_hdr->time_to_live;"))


def test_a_broken_build_is_caught(tmp_path, traffic):
    """One small edit (the TTL is no longer decremented): verify reports every port that
    forwards IPv4, and the cause: the IPv4 header's TTL and checksum."""
    broken = build_l3fwd("no-ttl-decrement", _no_ttl_decrement)
    result = verified(broken, l3fwd_line(traffic / "random", tmp_path, 1, []))
    assert not result["equal"]
    differing = [entry for entry in result["files"] if not entry["equal"]]
    assert differing and all("modified" in entry["verdict"] for entry in differing)
    assert any("IP.ttl" in entry["report"] for entry in differing), differing[0]["report"]
    # with each differing packet, the simulator's own decision for it (table, rule, next hop)
    traced = [line for entry in differing for line in entry["simulator_trace"]]
    assert traced and all(line["ptype"] == "ipv4" and line["table"] == "lpm4" for line in traced)
    exit_code = run_cli("verify", "--binary", broken, "--", *l3fwd_line(traffic / "random", tmp_path, 1, [])).exit_code
    assert exit_code == 1


@pytest.mark.parametrize("program", ["l3fwd", "testpmd"])
def test_fuzz_rounds_find_no_difference(tmp_path, program):
    require()
    """A few rounds of verify --fuzz (fixed seeds: layouts, lookups, rule files, traffic)
    against the real 22.11; make test-dpdk runs 200."""
    binary = build_l3fwd() if program == "l3fwd" else shutil.which("dpdk-testpmd")
    result = run_cli("verify", "--binary", binary, "--fuzz", "3", "--seed", "11", "--json", "--keep", tmp_path)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"rounds": 3, "equal": True}
