"""``--lookup acl`` end to end: both pipelines against the oracle's brute-force first
match (tests/support/oracle.py) on random rule files — overlaps, deny lines above and
below routes, /0 and full-length prefixes, port ranges, protocol masks — and traffic with
the fixed-offset oddities (IPv4 options, IPv6 extension headers, ICMP, fragments, short
and oversize frames); ACL's TX accounting; its errors."""
from __future__ import annotations

import random

import numpy as np
import pytest
from forwarding import simulate
from frames import mixed_frames
from oracle import l3fwd_oracle, parse_rule_file_acl
from rule_files import write_acl_rules

from l3fwd_sim import SimError
from l3fwd_sim.dataplane.tx import TxModel
from l3fwd_sim.l3fwd import acl, routing
from l3fwd_sim.l3fwd.pipelines import REASON_CODE

def _oversize(frames: list[bytes], rng: random.Random) -> list[bytes]:
    """Some frames grown past the 2048-byte mbuf (and one of exactly 2048)."""
    out = list(frames)
    for i in rng.sample(range(len(out)), 6):
        out[i] = out[i] + bytes(rng.choice([2048, 2049, 3000, 9000]) - len(out[i]))
    return out


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("seed,rules,rx_burst,portmask", [(1, 30, 32, 0xF), (2, 200, 7, 0xF), (3, 5, 1, 0xF),
                                                         (4, 60, 5, 0xB)])
def test_both_pipelines_match_the_oracle(tmp_path, pipeline, seed, rules, rx_burst, portmask):
    rng = random.Random(seed)
    ports = [p for p in range(4) if portmask >> p & 1]
    v4 = write_acl_rules(tmp_path / "acl4.cfg", 4, rng, rules, ports)
    v6 = write_acl_rules(tmp_path / "acl6.cfg", 6, rng, rules, ports)
    inputs = {p: _oversize(mixed_frames(seed * 10 + p, p, 250), rng) for p in ports}
    got, stats = simulate(tmp_path, inputs, portmask=portmask, lookup="acl", pipeline=pipeline, rx_burst=rx_burst,
                          rule_ipv4=v4, rule_ipv6=v6)
    want, drops = l3fwd_oracle(inputs, portmask=portmask, lookup="acl", pipeline=pipeline, rx_burst=rx_burst,
                               acl_v4=parse_rule_file_acl(v4, 4), acl_v6=parse_rule_file_acl(v6, 6))
    assert got == want
    assert {k: v for k, v in stats["drops"].items() if v} == {k: v for k, v in drops.items() if v}
    oversize = sum(len(f) > 2048 for frames in inputs.values() for f in frames)
    assert stats["drops"]["oversize"] == oversize > 0 and stats["drops"]["acl_deny"] and stats["drops"]["acl_miss"]


def test_acl_tx_accounting_follows_acl_send_packets():
    """A burst the ACL step dropped nothing of is sent in same-port runs, any other
    packet by packet, bursts in order."""
    burst = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    dest = np.array([1, 1, 2, -1, 1, 1, 1, 1])
    reason = np.zeros(8, np.uint8)
    reason[3] = REASON_CODE["acl_deny"]
    model = TxModel([1, 2], rx_burst=4, tx_burst=2)
    acl.account_acl(model, burst, dest, reason)
    # burst 0: runs (1 x2, 2 x1); burst 1: two single sends to port 1; burst 2: one run of 2
    assert model.runs == {1: 2, 2: 1}
    assert model.buffered[1] + model.direct[1] == 6 and model.direct[1] == 2   # only burst 0's run went out directly
    rfc_only = reason.copy()
    rfc_only[3] = REASON_CODE["rfc1812_invalid"]                  # not an ACL-step drop: runs again
    model = TxModel([1, 2], rx_burst=4, tx_burst=2)
    acl.account_acl(model, burst, dest, rfc_only)
    assert model.runs == {1: 3, 2: 1} and model.direct[1] == 6          # every run finds the buffer empty


def test_errors_name_the_rule_and_leave_no_output(tmp_path, monkeypatch):
    rng = random.Random(9)
    v4 = write_acl_rules(tmp_path / "acl4.cfg", 4, rng, 10, ports=(0,))
    v4.write_text(v4.read_text() + "R10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0/0 5\n")
    v6 = write_acl_rules(tmp_path / "acl6.cfg", 6, rng, 10, ports=(0,))
    inputs = {0: mixed_frames(1, 0, 20)}
    with pytest.raises(SimError, match="acl4.cfg:13: routes to port 5, which the portmask does not enable"):
        simulate(tmp_path / "a", inputs, portmask=0x1, lookup="acl", rule_ipv4=v4, rule_ipv6=v6)
    with pytest.raises(SimError, match="needs both --rule_ipv4 and --rule_ipv6"):
        simulate(tmp_path / "b", inputs, portmask=0x21, lookup="acl", rule_ipv4=v4)
    monkeypatch.setattr(routing, "MAX_ACL_RULE_NUM", 5)
    with pytest.raises(SimError, match="at most 5 .MAX_ACL_RULE_NUM"):
        simulate(tmp_path / "c", inputs, portmask=0x21, lookup="acl", rule_ipv4=v4, rule_ipv6=v6)
    assert not any((tmp_path / d / "out").exists() and any((tmp_path / d / "out").iterdir()) for d in "abc")
