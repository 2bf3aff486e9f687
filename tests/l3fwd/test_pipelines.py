"""Both pipelines against the independent per-packet oracle (tests/oracle.py, itself
checked against real dpdk-l3fwd in test_oracle_golden.py), on mixed traffic with short
frames, several input ports, odd bursts, portmask gaps, output-only ports and rules."""
from __future__ import annotations

import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from forwarding import CONFIGS, simulate
from oracle import l3fwd_oracle
from frames import mixed_frames, well_formed_frames
from rule_files import random_routes, write_rules
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from twins import KERNELS

from l3fwd_sim import SimError, compiled
from l3fwd_sim.dataplane import twins as dataplane_twins
from l3fwd_sim.l3fwd import run as simulator


def oracle(inputs, *, portmask, pipeline, rx_burst=32, eth_dest=None, port_mac=None, routes=None):
    return l3fwd_oracle(inputs, portmask=portmask, lookup="lpm", pipeline=pipeline, rx_burst=rx_burst,
                        eth_dest=eth_dest, port_mac=port_mac,
                        routes_v4=routes[0] if routes else None, routes_v6=routes[1] if routes else None)


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("config", range(len(CONFIGS)))
def test_pipeline_matches_oracle(tmp_path, pipeline, config):
    cfg = CONFIGS[config]
    inputs = {p: mixed_frames(seed=config, in_port=p, n=300) for p in cfg["ports"]}
    macs = {name: {p: bytes.fromhex(m.replace(":", "")) for p, m in cfg.get(name, {}).items()}
            for name in ("eth_dest", "port_mac")}
    routes = None
    options = {}
    if cfg.get("rules"):
        routes = random_routes(random.Random(config))
        options = dict(rule_ipv4=write_rules(tmp_path / "v4.cfg", routes[0]),
                       rule_ipv6=write_rules(tmp_path / "v6.cfg", routes[1]))
    got, stats = simulate(tmp_path, inputs, portmask=cfg["portmask"], pipeline=pipeline,
                          rx_burst=cfg.get("rx_burst", 32), tx_burst=cfg.get("tx_burst", 32),
                          eth_dest=macs["eth_dest"], port_mac=macs["port_mac"], **options)
    want, drops = oracle(inputs, portmask=cfg["portmask"], pipeline=pipeline, rx_burst=cfg.get("rx_burst", 32),
                         eth_dest=cfg.get("eth_dest"), port_mac=cfg.get("port_mac"), routes=routes)
    assert got.keys() == want.keys()
    for port in want:
        assert got[port] == want[port], f"port {port}"
    assert {k: v for k, v in stats["drops"].items() if v} == {k: v for k, v in drops.items() if v}
    assert stats["totals"]["rx"] == stats["totals"]["tx"] + stats["totals"]["dropped"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), nports=st.integers(1, 4), rx_burst=st.integers(1, 40),
       tx_burst=st.integers(1, 40), chunk=st.sampled_from([1, 3, 64, 65536]))
def test_pipelines_agree_on_well_formed_traffic(tmp_path_factory, seed, nports, rx_burst, tx_burst, chunk):
    """Where DPDK's two paths agree (valid Ethernet-II IPv4/IPv6), l3fwd-sim's agree,
    whatever the burst sizes and super-burst size."""
    inputs = {p: well_formed_frames(seed, p, n=60) for p in range(nports)}
    outputs = [simulate(tmp_path_factory.mktemp(pipeline), inputs, pipeline=pipeline, rx_burst=rx_burst,
                        tx_burst=tx_burst, chunk_packets=chunk)
               for pipeline in ("simple", "multi")]
    (simple_out, simple_stats), (multi_out, multi_stats) = outputs
    assert simple_out == multi_out
    assert simple_stats["totals"] == multi_stats["totals"]
    assert simple_stats["totals"]["dropped"] == 0


def test_stats_json_counts(tmp_path):
    inputs = {0: mixed_frames(3, 0, 200), 2: mixed_frames(3, 2, 150)}
    got, stats = simulate(tmp_path, inputs, portmask=0xF, pipeline="multi")
    on_disk = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert on_disk["totals"] == stats["totals"]
    assert on_disk["ports"]["0"]["rx"] == 200 and on_disk["ports"]["2"]["rx"] == 150
    for port, frames in got.items():
        assert on_disk["ports"][str(port)]["out"] == len(frames)
    for p in on_disk["ports"].values():
        assert p["rx"] == p["tx"] + p["dropped"]
        assert p["dropped"] == sum(p["drops"].values())


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("config", [None, "(0,0,0),(1,0,1)"])
def test_a_failing_jobs_worker_ends_the_run_with_its_message(tmp_path, monkeypatch, config, kernels):
    """A worker's error reaches the user, the other processes stop waiting for their
    turn (one lcore, or several whose merge goes round with the token), and no output
    is left — whether the worker forwards by the Python path or by lcore.c."""
    parent = os.getpid()

    def failing_in_workers(function):
        def wrapped(*args):
            if os.getpid() != parent:
                raise SimError("boom in a worker")
            return function(*args)
        return wrapped

    real = simulator.pipeline
    monkeypatch.setattr(simulator, "pipeline", lambda name: failing_in_workers(real(name)))
    monkeypatch.setattr(dataplane_twins, "lcore_step", failing_in_workers(dataplane_twins.lcore_step))
    inputs = {0: mixed_frames(2, 0, 300), 1: mixed_frames(2, 1, 300)}
    with compiled.using(kernels), pytest.raises(SimError, match="boom in a worker"):
        simulate(tmp_path, inputs, rx_burst=7, chunk_packets=40, jobs=3, config=config)
    assert not (tmp_path / "out").exists()          # the run created it: nothing new is left


@pytest.mark.parametrize("pipeline,lookup", [("multi", "lpm"), ("simple", "em"), ("multi", "fib")])
def test_jobs_give_identical_output(tmp_path, pipeline, lookup):
    """--jobs N splits the polling rounds over processes: outputs, counters and TX
    counters are those of --jobs 1, whatever the split (uneven port lengths, odd bursts)."""
    inputs = {0: mixed_frames(11, 0, 300), 1: mixed_frames(11, 1, 170), 3: mixed_frames(11, 3, 45)}
    results = [simulate(tmp_path / f"jobs{jobs}", inputs, portmask=0xF, pipeline=pipeline, lookup=lookup,
                        rx_burst=7, tx_burst=5, chunk_packets=40, jobs=jobs)
               for jobs in (1, 2, 3, 5)]
    (out1, stats1), *others = results
    for out, stats in others:
        assert out == out1
        assert stats["ports"] == stats1["ports"] and stats["totals"] == stats1["totals"]


def test_captures_of_disabled_ports_are_not_received(tmp_path):
    """l3fwd's --config names enabled ports only: a capture of a port outside -p is not
    read (the golden acl runs with -p 0xb have a port2.pcap), and a warning says so."""
    inputs = {0: mixed_frames(5, 0, 50), 2: mixed_frames(6, 2, 70)}
    got, stats = simulate(tmp_path, inputs, portmask=0x3)
    want, drops = oracle({0: inputs[0]}, portmask=0x3, pipeline="multi")
    assert got == want and stats["totals"]["rx"] == 50 and sorted(stats["ports"]) == ["0", "1"]
    assert any("port 2 is not in portmask 0x3" in w for w in stats["warnings"])


@pytest.mark.parametrize("kernels_choice", KERNELS)
def test_jobs_go_on_past_a_chunk_whose_every_packet_is_dropped_on_receive(tmp_path, kernels_choice):
    """A chunk of frames longer than an mbuf (all dropped before TX) writes nothing; its
    process still passes its turn on and goes on with its next chunk."""
    long = [bytes(Ether() / IP(dst="198.18.1.1") / UDP() / (b"x" * 3000))] * 120
    frames = mixed_frames(6, 0, 100) + long + mixed_frames(7, 0, 100)
    with compiled.using(kernels_choice):
        one = simulate(tmp_path / "one", {0: frames}, rx_burst=8, chunk_packets=40)
        jobs = simulate(tmp_path / "jobs", {0: frames}, rx_burst=8, chunk_packets=40, jobs=2)
    assert jobs[0] == one[0] and jobs[1]["drops"] == one[1]["drops"]
    assert one[1]["totals"]["rx"] == 320 and one[1]["drops"]["oversize"] == 120
