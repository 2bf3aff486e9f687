"""Validate the independent oracle (tests/oracle.py) against real dpdk-l3fwd v26.07 output.

Every scenario/run of tests/data/golden/runs.json is replayed through the oracle and
the per-port frame lists must equal the expected pcaps exactly (bytes and order).  Where
dpdk-l3fwd refused to start (``expected-NN/error.txt``), the oracle's start-up check must
refuse the options too, with the same message.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from scapy.utils import RawPcapReader

from forwarding import GOLDEN, golden_runs
from frames import read_pcap_records
from oracle import (l3fwd_oracle, l3fwd_start_error, parse_rule_file_acl,
                    parse_rule_file_em, parse_rule_file_lpm)



def _read(path: Path) -> list[bytes]:
    with RawPcapReader(str(path)) as reader:
        return [bytes(pkt) for pkt, _meta in reader]


_INPUT_CACHE: dict[str, dict] = {}


def _by_name(directory: Path) -> dict:
    """``port<N>.pcap`` -> N, ``port<N>.q<Q>.pcap`` -> (N, Q); the frames of each."""
    found = {}
    for path in sorted(directory.glob("port*.pcap")):
        port, _, queue = path.stem[4:].partition(".q")
        found[(int(port), int(queue)) if queue else int(port)] = _read(path)
    return found


def _inputs(scenario: str) -> dict:
    if scenario not in _INPUT_CACHE:
        _INPUT_CACHE[scenario] = _by_name(GOLDEN / scenario / "in")
    return _INPUT_CACHE[scenario]


def parse_options(opts: str, scenario_dir: Path) -> dict:
    """Tiny parser of the options used in runs.json -> keyword arguments of l3fwd_oracle."""
    toks = shlex.split(opts.replace("{d}", str(scenario_dir)))
    kw = {"portmask": None, "lookup": "lpm", "pipeline": "multi", "ipv6": False,
          "rx_burst": 32, "eth_dest": {}}
    rule4 = rule6 = None
    i = 0
    while i < len(toks):
        t = toks[i]
        val = toks[i + 1] if i + 1 < len(toks) else None
        if t == "-p":
            kw["portmask"] = int(val, 16); i += 2
        elif t == "--lookup":
            kw["lookup"] = val; i += 2
        elif t == "--pipeline":
            kw["pipeline"] = val; i += 2
        elif t == "--ipv6":
            kw["ipv6"] = True; i += 1
        elif t == "--config":
            kw["config"] = [tuple(int(x) for x in m) for m in re.findall(r"\((\d+),(\d+),(\d+)\)", val)]; i += 2
        elif t == "--rule_ipv4":
            rule4 = val; i += 2
        elif t == "--rule_ipv6":
            rule6 = val; i += 2
        elif t == "--rx-burst":
            kw["rx_burst"] = int(val); i += 2
        elif t == "--tx-burst":
            i += 2  # TX batching never changes per-port output (design notes §1)
        elif t == "--eth-dest":
            port, mac = val.split(",", 1)
            kw["eth_dest"][int(port)] = mac; i += 2
        elif t == "--max-pkt-len":
            kw["max_pkt_len"] = int(val); i += 2
        else:
            raise ValueError(f"unknown option {t!r} in {opts!r}")
    if kw["lookup"] == "acl":
        # ACL grammar; both files are required (a missing one is refused by
        # l3fwd_start_error, there are no default ACL rules).
        kw["acl_v4"] = None if rule4 is None else parse_rule_file_acl(rule4, 4)
        kw["acl_v6"] = None if rule6 is None else parse_rule_file_acl(rule6, 6)
    # Rule files are used only when both --rule_ipv4 and --rule_ipv6 are given.
    elif rule4 is not None and rule6 is not None:
        if kw["lookup"] == "em":
            kw["em_v4"] = parse_rule_file_em(rule4)
            kw["em_v6"] = parse_rule_file_em(rule6)
        else:
            kw["routes_v4"] = parse_rule_file_lpm(rule4)
            kw["routes_v6"] = parse_rule_file_lpm(rule6)
    assert kw["portmask"] is not None, opts
    return kw


@pytest.mark.parametrize("scenario,expected,options", golden_runs())
def test_oracle_matches_golden(scenario: str, expected: str, options: str) -> None:
    sdir = GOLDEN / scenario
    kw = parse_options(options, sdir)
    exp_dir = sdir / expected
    refused = l3fwd_start_error(**kw)
    if (exp_dir / "error.txt").is_file():
        # dpdk-l3fwd exited before forwarding: no pcaps, only its message
        message = (exp_dir / "error.txt").read_text()
        assert refused is not None, f"oracle would start, dpdk-l3fwd did not: {message}"
        assert refused in message, f"oracle: {refused!r}; dpdk-l3fwd: {message!r}"
        return
    assert refused is None, f"oracle refuses a run dpdk-l3fwd made: {refused}"
    inputs = _inputs(scenario)
    if "config" in kw:                           # several lcores: per RX queue in, per TX queue out
        inputs = {(key, 0) if isinstance(key, int) else key: frames for key, frames in inputs.items()}
    got, _drops = l3fwd_oracle(inputs, **kw)

    want = _by_name(exp_dir)
    assert sorted(got) == sorted(want), "set of output ports differs"
    for path in sorted(exp_dir.glob("port*.pcap")):      # the oracle's frames leave as len = pkt_len = caplen
        assert all(cap == wire for cap, wire, _ in read_pcap_records(path)), f"{path.name}: a wire length differs"
    for port in sorted(want):
        g, w = got[port], want[port]
        if g != w:
            first = next((i for i, (a, b) in enumerate(zip(g, w)) if a != b), min(len(g), len(w)))
            pytest.fail(f"port {port}: oracle {len(g)} frames, DPDK {len(w)} frames; "
                        f"first difference at index {first}:\n"
                        f"  oracle: {g[first].hex() if first < len(g) else None}\n"
                        f"  dpdk:   {w[first].hex() if first < len(w) else None}")
