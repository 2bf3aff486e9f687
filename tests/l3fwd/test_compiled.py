"""The compiled multi path against the numpy stages it twins (l3fwd/multi.c, run whole
by dataplane/lcore.c, or stage by stage when a trace or a pcapng output asks for it):
byte-identical outputs, stats.json and trace.jsonl on random traffic — every class
``generate random`` and ``malformed`` make, scapy-built mixes (EM flows and near misses,
IPv4 options, IPv6 extension headers, VLAN, ARP, short frames), big and oversize frames —
with random rule files of every lookup and family, odd bursts, portmask gaps, several
lcores and ``--jobs``."""
from __future__ import annotations

import functools
import json
import random
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from frames import mixed_frames, read_pcap_frames, write_pcap
from rule_files import random_flows, random_routes, write_acl_rules, write_em_rules, write_rules
from twins import KERNELS, needs_twins

from l3fwd_sim import GenerateOptions, RunOptions, compiled, generate, run

pytestmark = needs_twins
TIMING = ("elapsed_seconds", "mpps", "stages_ms", "stages_ns_per_packet", "setup_ms")
POOL_SEEDS = 3


@functools.cache
def traffic_pool(seed: int) -> dict[int, list[bytes]]:
    """Per port 0..3, frames of every class: generate's random and malformed patterns,
    scapy's mixes, IMIX-sized and oversize frames (the tails past a row's 64 bytes)."""
    rng = random.Random(seed)
    frames = {port: [] for port in range(4)}
    with tempfile.TemporaryDirectory() as tmp:
        for pattern, count in (("random", 300), ("malformed", 120)):
            generate(GenerateOptions(outdir=Path(tmp) / pattern, pattern=pattern, ports=4, count=count, seed=seed + 1))
            for port in range(4):
                frames[port] += read_pcap_frames(Path(tmp) / pattern / f"port{port}.pcap")
    for port in range(4):
        mixed = mixed_frames(seed, port, 200)
        frames[port] += mixed
        for frame in rng.sample(mixed, 12):                  # long frames: their bytes past the head
            frames[port].append(frame + rng.randbytes(rng.choice([1, 500, 1400, 1984 - len(frame) % 64, 2100, 9000])))
        rng.shuffle(frames[port])
    return frames


def five_tuple_flows(frames: list[bytes], rng: random.Random, family: int, n: int) -> list[tuple]:
    """EM rule flows taken from TCP/UDP frames of the traffic (hits), beside random ones."""
    flows = []
    for f in frames:
        if family == 4 and len(f) >= 38 and f[12:14] == b"\x08\x00" and f[23] in (6, 17):
            flows.append((int.from_bytes(f[30:34], "big"), int.from_bytes(f[26:30], "big"), int.from_bytes(f[36:38], "big"),
                          int.from_bytes(f[34:36], "big"), f[23], rng.randrange(4)))
        elif family == 6 and len(f) >= 58 and f[12:14] == b"\x86\xdd" and f[20] in (6, 17):
            flows.append((int.from_bytes(f[38:54], "big"), int.from_bytes(f[22:38], "big"), int.from_bytes(f[56:58], "big"),
                          int.from_bytes(f[54:56], "big"), f[20], rng.randrange(4)))
    return rng.sample(flows, min(n, len(flows))) + random_flows(rng, family, n // 4)


def rule_files(lookup: str, directory: Path, rng: random.Random, frames: list[bytes], enabled: list[int]) -> dict:
    """Rule files of ``lookup`` for both families (ACL routes only to ``enabled`` ports,
    as l3fwd requires)."""
    if lookup in ("lpm", "fib"):
        v4, v6 = random_routes(rng, 120, 60)
        if lookup == "fib" and rng.random() < 0.5:
            v4.append(("0.0.0.0", 0, rng.randrange(4)))          # rte_fib's default next hop
            v6.append(("::", 0, rng.randrange(4)))
        return dict(rule_ipv4=write_rules(directory / "v4.cfg", v4), rule_ipv6=write_rules(directory / "v6.cfg", v6))
    if lookup == "em":
        return {f"rule_ipv{f}": write_em_rules(directory / f"em{f}.cfg", five_tuple_flows(frames, rng, f, 80), f)
                for f in (4, 6)}
    return {f"rule_ipv{f}": write_acl_rules(directory / f"acl{f}.cfg", f, rng, rng.choice([3, 40, 300]),
                                            ports=enabled) for f in (4, 6)}


def outputs(outdir: Path) -> tuple[dict, set]:
    """Every file a run wrote, as bytes, stats.json without its timings; and the stages
    the run timed (which path ran)."""
    files = {p.name: p.read_bytes() for p in sorted(outdir.iterdir())}
    stats = json.loads(files.pop("stats.json"))
    stages = set(stats["stages_ms"])
    for key in TIMING:
        stats.pop(key, None)
    return {**files, "stats.json": stats}, stages


def both_kernels(directory: Path, options: RunOptions) -> list[dict]:
    """The run's outputs with the compiled twins, then with the numpy stages."""
    results = []
    for choice in KERNELS:
        outdir = directory / f"out-{choice}"
        shutil.rmtree(outdir, ignore_errors=True)
        with compiled.using(choice):
            run(RunOptions(**{**options.__dict__, "outdir": outdir}))
        files, stages = outputs(outdir)
        if files["stats.json"]["totals"]["rx"]:                 # which path forwarded: the compiled one,
            assert ("classify+lookup" in stages) == (choice == "numpy"), stages     # or the numpy stages
        results.append(files)
    return results


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(seed=st.integers(0, POOL_SEEDS - 1), rule_seed=st.integers(0, 2**32 - 1),
       lookup=st.sampled_from(["lpm", "fib", "em", "acl"]), rules=st.booleans(), ipv6=st.booleans(),
       ports=st.sets(st.integers(0, 3), min_size=1), gap=st.booleans(),
       counts=st.lists(st.integers(0, 700), min_size=4, max_size=4),
       rx_burst=st.sampled_from([1, 3, 7, 32, 64, 512]), tx_burst=st.sampled_from([1, 4, 32, 512]),
       chunk=st.sampled_from([5, 100, 4096, 65536]), trace=st.sampled_from([None, None, "all", 9]),
       output_format=st.sampled_from(["pcap", "pcap", "pcapng"]))
def test_compiled_multi_path_equals_numpy_stages(tmp_path_factory, seed, rule_seed, lookup, rules, ipv6, ports, gap,
                                                 counts, rx_burst, tx_burst, chunk, trace, output_format):
    tmp = tmp_path_factory.mktemp("twins")
    pool = traffic_pool(seed)
    inputs = {}
    for port in sorted(ports):
        inputs[port] = tmp / f"in{port}.pcap"
        write_pcap(inputs[port], pool[port][:counts[port]])
    portmask = sum(1 << p for p in ports) | (0x30 if gap else 0)       # ports 4, 5: outputs without input
    rng = random.Random(rule_seed)
    enabled = [p for p in range(6) if portmask >> p & 1]
    files = rule_files(lookup, tmp, rng, [f for p in ports for f in pool[p]], enabled) if rules or lookup == "acl" \
        else {}
    options = RunOptions(inputs=inputs, outdir=tmp, portmask=portmask, lookup=lookup, pipeline="multi",
                         ipv6=ipv6 and lookup == "em", rx_burst=rx_burst, tx_burst=tx_burst, chunk_packets=chunk,
                         trace=trace, output_format=output_format, **files)
    compiled_run, numpy_run = both_kernels(tmp, options)
    assert compiled_run.keys() == numpy_run.keys()
    for name in compiled_run:
        assert compiled_run[name] == numpy_run[name], name


@pytest.mark.parametrize("lookup,jobs,config", [
    ("lpm", 2, None), ("acl", 2, None), ("em", 1, "(0,0,0),(1,0,1),(2,0,0),(3,0,1)"),
    ("fib", 2, "(0,0,0),(0,1,1),(1,0,2),(1,1,3),(2,0,0),(2,1,1),(3,0,2),(3,1,3)")])
@pytest.mark.parametrize("trace", [None, "all"])
def test_jobs_and_lcores_equal_numpy_stages(tmp_path, lookup, jobs, config, trace):
    """--jobs processes, and several lcores with RSS-split ports: the same bytes."""
    inputs = {}
    for port in range(4):
        inputs[port] = tmp_path / f"in{port}.pcap"
        write_pcap(inputs[port], traffic_pool(port % POOL_SEEDS)[port][:600])
    files = rule_files(lookup, tmp_path, random.Random(5), traffic_pool(0)[0], [0, 1, 2, 3]) if lookup == "acl" else {}
    options = RunOptions(inputs=inputs, outdir=tmp_path, lookup=lookup, pipeline="multi", jobs=jobs, config=config,
                         chunk_packets=256, rx_burst=16, trace=trace, **files)
    compiled_run, numpy_run = both_kernels(tmp_path, options)
    assert compiled_run == numpy_run


def test_every_lcore_c_bound_is_checked():
    """A record that does not fit its port's part of the output buffer is refused with
    an error, never written past it (lcore.c's own check)."""
    k = compiled.extension()
    rows = np.zeros((4, 80), np.uint8)
    rows[:, 8] = 60                                            # four 60-byte frames
    rows[:, 12:14] = 0                                          # not IP: sent back out of port 0
    table = (np.zeros(1 << 24, np.uint32),) * 2 + (np.zeros(0, np.uint32),) * 2 + (0xFFFFFF, 4, -1, -1)
    table6 = table[:5] + (16, -1, -1)
    routes = (0, table, table6, np.zeros(32 * 12, np.uint8), (0, 0), None, None)
    counters = np.zeros(32, np.int64), np.zeros((32, 8), np.int64), np.zeros(33, np.int64)
    runs = np.zeros(4, np.int64), np.zeros(4, np.int64), np.zeros(4, np.uint8)
    sub = (np.zeros((1024, 80), np.uint8), *np.zeros((6, 1024), np.int64), np.zeros(1024, np.uint8))
    small = np.zeros(2 * 100, np.uint8)                         # 100 bytes a port: not even two records
    with pytest.raises(ValueError, match="does not fit|past its port"):
        k.lcore_step([(rows, 0, 0)], [(np.zeros(1, np.uint8), np.zeros(4, np.int64))], (32, 1, 0), routes, None,
                     (7, 2048), counters, runs, (small, 100, *np.zeros((2, 32), np.int64)), sub)
