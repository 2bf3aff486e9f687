"""Exact-match and FIB lookups: the flow table against a dict oracle, both pipelines
against the independent per-packet oracle, and the path_differences rows of EM (D2–D4,
D9) and FIB (D10)."""
from __future__ import annotations

import ipaddress
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import l3fwd_oracle
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Ether
from forwarding import CONFIGS, both, simulate
from frames import mixed_frames
from rule_files import near_misses, random_flows, write_em_rules

from l3fwd_sim.l3fwd.em import em_table, key_of, keys_of
from l3fwd_sim.capture.records import HEAD_BYTES
from l3fwd_sim.l3fwd.rules import EmRule

def frame_of(flow: tuple, family: int, ttl: int = 64) -> bytes:
    dst, src, dport, sport, proto, _ = flow
    l4 = (TCP if proto == 6 else UDP)(sport=sport, dport=dport)
    if family == 4:
        l3 = IP(src=str(ipaddress.IPv4Address(src)), dst=str(ipaddress.IPv4Address(dst)), ttl=ttl)
    else:
        l3 = IPv6(src=str(ipaddress.IPv6Address(src)), dst=str(ipaddress.IPv6Address(dst)))
    return bytes(Ether(src="00:00:00:00:00:01", dst="00:00:00:00:00:02") / l3 / l4 / (b"p" * 20))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), family=st.sampled_from([4, 6]), n=st.integers(0, 300))
def test_flow_table_against_dict(seed, family, n):
    rng = random.Random(seed)
    flows = random_flows(rng, family, n)
    flows += [f[:5] + (rng.randrange(8),) for f in flows[: n // 4]]          # duplicates: later wins
    rules = [EmRule(d, s, dp, sp, pr, port, f"r:{i}") for i, (d, s, dp, sp, pr, port) in enumerate(flows)]
    table = em_table(rules, family)
    oracle = {(d, s, dp, sp, pr): port for d, s, dp, sp, pr, port in flows}
    queries = flows + [m for f in flows[:50] for m in near_misses(f, rng, family)] + random_flows(rng, family, 50)
    frames = [frame_of(q, family) for q in queries]
    heads = np.zeros((len(frames), HEAD_BYTES), np.uint8)
    for i, f in enumerate(frames):
        heads[i, :min(len(f), HEAD_BYTES)] = np.frombuffer(f[:HEAD_BYTES], np.uint8)
    want = [oracle.get(q[:5], -1) for q in queries]
    got = table.lookup_bulk(keys_of(heads, np.arange(len(frames)), family), np.full(len(frames), -1))
    assert got.tolist() == want
    assert [table.lookup(key_of(f, family)) for f in frames] == [None if w < 0 else w for w in want]


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("ipv6", [False, True])
def test_em_rule_files_hits_and_near_misses(tmp_path, pipeline, ipv6):
    """Each flow's packet leaves on the flow's port (if enabled), every near miss on
    its input port; only the family selected by --ipv6 is installed."""
    rng = random.Random(7)
    flows = {fam: random_flows(rng, fam, 40) for fam in (4, 6)}
    paths = {fam: write_em_rules(tmp_path / f"em{fam}.cfg", flows[fam], fam) for fam in (4, 6)}
    portmask = 0x3F                                   # ports 6 and 7 disabled: their flows not installed
    inputs = {}
    for in_port in (0, 1):
        frames = []
        for fam in (4, 6):
            for flow in flows[fam][in_port::2]:
                frames.append(frame_of(flow, fam))
                frames.extend(frame_of(m, fam) for m in near_misses(flow, rng, fam))
        inputs[in_port] = frames
    got, stats = simulate(tmp_path, inputs, portmask=portmask, pipeline=pipeline, lookup="em", ipv6=ipv6,
                          rule_ipv4=paths[4], rule_ipv6=paths[6])
    family = 6 if ipv6 else 4
    table = {f[:5]: f[5] for f in flows[family] if portmask >> f[5] & 1}
    expected_counts = {p: 0 for p in got}
    for in_port in (0, 1):
        for fam in (4, 6):
            for flow in flows[fam][in_port::2]:
                for q in [flow] + near_misses(flow, random.Random(0), fam):
                    hit = table.get(q[:5]) if fam == family else None
                    expected_counts[in_port if hit is None else hit] += 1
    assert {p: len(f) for p, f in got.items()} == expected_counts
    assert stats["totals"]["dropped"] == 0


@pytest.mark.parametrize("lookup,ipv6", [("em", False), ("em", True), ("fib", False)])
@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("config", [0, 1, 4])
def test_em_fib_match_oracle_on_mixed_traffic(tmp_path, lookup, ipv6, pipeline, config):
    cfg = CONFIGS[config]
    inputs = {p: mixed_frames(seed=100 + config, in_port=p, n=250) for p in cfg["ports"]}
    got, stats = simulate(tmp_path, inputs, portmask=cfg["portmask"], pipeline=pipeline, lookup=lookup,
                          ipv6=ipv6, rx_burst=cfg.get("rx_burst", 32), tx_burst=cfg.get("tx_burst", 32))
    want, drops = l3fwd_oracle(inputs, portmask=cfg["portmask"], lookup=lookup, pipeline=pipeline, ipv6=ipv6,
                               rx_burst=cfg.get("rx_burst", 32))
    assert got == want
    assert {k: v for k, v in stats["drops"].items() if v} == {k: v for k, v in drops.items() if v}


def _em_flow_frame(l4, **ip):
    return bytes(Ether() / IP(src="198.18.1.1", dst="198.18.1.0", **ip) / l4)


@pytest.mark.parametrize("frame,row", [
    (_em_flow_frame(ICMP()), "D2"),
    (bytes(Ether() / IP(src="198.18.1.1", dst="198.18.1.0", proto=61) / (b"x" * 20)), "D2"),
    (_em_flow_frame(UDP(sport=9, dport=9), options=b"\x01\x01\x01\x00"), "D3"),
])
def test_em_d2_d3_ipv4_not_looked_up(tmp_path, frame, row):
    """Simple path drops; multi path sends it back out of the input port with TTL−1."""
    result = both(tmp_path, [frame], lookup="em")
    assert result["simple"][1]["drops"]["not_tcp_udp"] == 1, row
    (sent,) = result["multi"][0][2]
    assert sent[22] == frame[22] - 1 and sent[12:22] == frame[12:22] and sent[26:] == frame[26:], row


def test_em_d4_ipv6_extension_header(tmp_path):
    frame = bytes(Ether() / IPv6(src="2001:200:0:1::1", dst="2001:200:0:1::") / IPv6ExtHdrHopByHop()
                  / UDP(sport=9, dport=9))
    result = both(tmp_path, [frame], lookup="em", ipv6=True)
    assert result["simple"][1]["drops"]["not_tcp_udp"] == 1
    assert result["multi"][0][2] == [bytes.fromhex("020000000002") + b"\x02pcap\x02" + frame[12:]]


def test_em_d1_non_ip(tmp_path):
    result = both(tmp_path, [bytes(Ether() / ARP())], lookup="em")
    assert result["simple"][1]["drops"]["unknown_ptype"] == 1
    assert len(result["multi"][0][2]) == 1


def test_em_d9_rfc1812_invalid_dropped_by_both(tmp_path):
    """DPDK's EM simple path frees then still enqueues it (use-after-free); l3fwd-sim drops."""
    result = both(tmp_path, [_em_flow_frame(UDP(sport=9, dport=9), version=6)], lookup="em")
    for pipeline in ("simple", "multi"):
        assert result[pipeline][1]["drops"]["rfc1812_invalid"] == 1


def test_em_default_flow_hits(tmp_path):
    result = both(tmp_path, [_em_flow_frame(UDP(sport=9, dport=9))], lookup="em")
    for pipeline in ("simple", "multi"):
        assert len(result[pipeline][0][1]) == 1, pipeline


def test_fib_d10_non_ip_looked_up_as_ipv6(tmp_path):
    """FIB looks up every packet without the IPv4 type in the IPv6 table using frame
    bytes 38..53, whatever the EtherType; a /0 route is the default next hop."""
    v6_dst = ipaddress.IPv6Address("2001:200:0:3::9").packed
    arp = bytearray(bytes(Ether() / ARP()).ljust(60, b"\0"))
    arp[38:54] = v6_dst
    result = both(tmp_path, [bytes(arp)], lookup="fib")
    for pipeline in ("simple", "multi"):
        assert len(result[pipeline][0][3]) == 1, pipeline
    v4, v6 = tmp_path / "v4.cfg", tmp_path / "v6.cfg"
    v4.write_text("R0.0.0.0/0 1\nR198.18.0.0/16 0\n")
    v6.write_text("R::/0 3\n")
    frames = [bytes(Ether() / IP(dst="10.1.2.3") / UDP()), bytes(Ether() / IP(dst="198.18.7.7") / UDP())]
    result = both(tmp_path, frames, lookup="fib", rule_ipv4=v4, rule_ipv6=v6)
    for pipeline in ("simple", "multi"):
        out = result[pipeline][0]
        assert (len(out[1]), len(out[0])) == (1, 1), pipeline


def test_lpm_rejects_depth_zero_but_fib_takes_it(tmp_path):
    from l3fwd_sim import SimError
    v4, v6 = tmp_path / "v4.cfg", tmp_path / "v6.cfg"
    v4.write_text("R0.0.0.0/0 1\n")
    v6.write_text("R::/0 1\n")
    frame = [bytes(Ether() / IP(dst="10.1.2.3") / UDP())]
    with pytest.raises(SimError, match=r"v4.cfg:1: depth 0"):
        both(tmp_path, frame, lookup="lpm", rule_ipv4=v4, rule_ipv6=v6)
    for pipeline, (out, _) in both(tmp_path, frame, lookup="fib", rule_ipv4=v4, rule_ipv6=v6).items():
        assert len(out[1]) == 1, pipeline
