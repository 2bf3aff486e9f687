"""The compiled paths against the Python definitions they twin — l3fwd/multi.c against
multi.py's numpy stages, l3fwd/simple.c against simple.py's per-packet Python — run
whole by dataplane/lcore.c, or a super-burst at a time when a trace or a pcapng output
asks for it: byte-identical outputs, stats.json and trace.jsonl on random traffic — every class
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
from contextlib import ExitStack, nullcontext
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from frames import mixed_frames, read_pcap_frames, write_pcap
from handmade import Ng, classic
from rule_files import random_flows, random_routes, write_acl_rules, write_em_rules, write_rules
from twins import KERNELS, needs_twins

from l3fwd_sim import GenerateOptions, RunOptions, compiled, generate, run
from l3fwd_sim.capture.batch import PacketBatch
from l3fwd_sim.capture.records import RECORD_ROW
from l3fwd_sim.dataplane.ports import PortConfig
from l3fwd_sim.dataplane.twins import LcorePath, lcore_step
from l3fwd_sim.l3fwd import multi, simple
from l3fwd_sim.l3fwd import twins as l3fwd_twins
from l3fwd_sim.l3fwd.routing import Forwarding, load_routes

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


def rule_files(lookup: str, directory: Path, rng: random.Random, frames: list[bytes], enabled: list[int],
               fib_default: bool | None = None) -> dict:
    """Rule files of ``lookup`` for both families (ACL routes only to ``enabled`` ports,
    as l3fwd requires; FIB routes with a default route if ``fib_default``, None: drawn)."""
    if lookup in ("lpm", "fib"):
        v4, v6 = random_routes(rng, 120, 60)
        if lookup == "fib" and (rng.random() < 0.5 if fib_default is None else fib_default):
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


def definition_refused(pipeline: str):
    """The pipeline's Python definition (multi.py's classify stages, simple.py's
    per-packet functions) made to fail if called: the compiled run must not use it, in
    this process or a --jobs one (forked, it inherits the patch)."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"the {pipeline} path's Python definition ran with the compiled twins")
    stack = ExitStack()
    if pipeline == "multi":
        stack.enter_context(mock.patch.dict(multi.CLASSIFY, dict.fromkeys(multi.CLASSIFY, refuse)))
    else:
        stack.enter_context(mock.patch.dict(simple.FORWARD, dict.fromkeys(simple.FORWARD, refuse)))
        stack.enter_context(mock.patch.object(simple, "acl_forward", refuse))
    return stack


def both_kernels(directory: Path, options: RunOptions) -> list[dict]:
    """The run's outputs with the compiled twins, then with the Python definitions."""
    results = []
    for choice in KERNELS:
        outdir = directory / f"out-{choice}"
        shutil.rmtree(outdir, ignore_errors=True)
        with compiled.using(choice), definition_refused(options.pipeline) if choice == "compiled" else nullcontext():
            run(RunOptions(**{**options.__dict__, "outdir": outdir}))
        files, stages = outputs(outdir)
        if options.pipeline == "multi" and files["stats.json"]["totals"]["rx"]:
            assert ("classify+lookup" in stages) == (choice == "numpy"), stages     # the numpy stages ran
        results.append(files)
    return results


def write_input(path: Path, frames: list[bytes], input_format: str) -> None:
    """Classic pcap in µs (scapy) or ns, or pcapng of two interfaces (µs and ns ticks)
    taking turns, a skipped block now and then."""
    if input_format == "pcap-us":
        return write_pcap(path, frames)
    t0 = 1_700_000_000 * 10**9
    if input_format == "pcap-ns":
        return path.write_bytes(classic([(f, len(f), t0 + 1001 * k) for k, f in enumerate(frames)]))
    ng = Ng("<")
    path.write_bytes(ng.shb() + ng.idb() + ng.idb(tsresol=9) + b"".join(
        ng.epb(k % 2, (t0 + 1001 * k) // (1000 if k % 2 == 0 else 1), f) + (ng.block(5, bytes(8)) if k % 97 == 0 else b"")
        for k, f in enumerate(frames)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(seed=st.integers(0, POOL_SEEDS - 1), rule_seed=st.integers(0, 2**32 - 1),
       pipeline=st.sampled_from(["multi", "simple"]), lookup=st.sampled_from(["lpm", "fib", "em", "acl"]),
       rules=st.booleans(), ipv6=st.booleans(),
       ports=st.sets(st.integers(0, 3), min_size=1), gap=st.booleans(),
       counts=st.lists(st.integers(0, 700), min_size=4, max_size=4),
       rx_burst=st.sampled_from([1, 3, 7, 32, 64, 512]), tx_burst=st.sampled_from([1, 4, 32, 512]),
       chunk=st.sampled_from([5, 100, 4096, 65536]), trace=st.sampled_from([None, None, "all", 9]),
       input_format=st.sampled_from(["pcap-us", "pcap-us", "pcap-ns", "pcapng"]),
       output_format=st.sampled_from(["pcap", "pcap", "pcapng"]))
def test_compiled_paths_equal_python_definitions(tmp_path_factory, seed, rule_seed, pipeline, lookup, rules, ipv6,
                                                 ports, gap, counts, rx_burst, tx_burst, chunk, trace, input_format,
                                                 output_format):
    tmp = tmp_path_factory.mktemp("twins")
    pool = traffic_pool(seed)
    inputs = {}
    for port in sorted(ports):
        inputs[port] = tmp / f"in{port}.pcap"
        write_input(inputs[port], pool[port][:counts[port]], input_format)
    portmask = sum(1 << p for p in ports) | (0x30 if gap else 0)       # ports 4, 5: outputs without input
    rng = random.Random(rule_seed)
    enabled = [p for p in range(6) if portmask >> p & 1]
    files = rule_files(lookup, tmp, rng, [f for p in ports for f in pool[p]], enabled) if rules or lookup == "acl" \
        else {}
    options = RunOptions(inputs=inputs, outdir=tmp, portmask=portmask, lookup=lookup, pipeline=pipeline,
                         ipv6=ipv6 and lookup == "em", rx_burst=rx_burst, tx_burst=tx_burst, chunk_packets=chunk,
                         trace=trace, output_format=output_format, **files)
    compiled_run, numpy_run = both_kernels(tmp, options)
    assert compiled_run.keys() == numpy_run.keys()
    for name in compiled_run:
        assert compiled_run[name] == numpy_run[name], name


def edge_frames(frames: list[bytes]) -> list[bytes]:
    """Frames at the edges of the paths' checks, from the first IPv4 and IPv6 frame of
    each L4 protocol in ``frames``: each cut at every length up to 64 bytes (every byte a
    check reads), and IPv4 headers whose version, IHL, total length, TTL and checksum lie
    at and beside their limits."""
    first = {}
    for f in frames:
        if len(f) >= 64 and f[12:14] in (b"\x08\x00", b"\x86\xdd"):
            first.setdefault((f[12:14], f[23] if f[12:14] == b"\x08\x00" else f[20]), f)
    edges = [f[:n] for f in first.values() for n in range(65)]
    for (ether_type, _), f in first.items():
        if ether_type == b"\x08\x00":
            edges += [f[:14] + bytes([version_ihl]) + f[15:16] + total_length.to_bytes(2, "big") + f[18:]
                      for version_ihl in (0x45, 0x44, 0x46, 0x35, 0x55, 0x4F) for total_length in (0, 19, 20, 21, 1500)]
            edges += [f[:22] + bytes([ttl]) + f[23:24] + checksum + f[26:]
                      for ttl in (0, 1) for checksum in (b"\xff\xff", b"\xfe\xff", b"\xff\x00")]
    return edges


@pytest.mark.parametrize("lookup,fib_default", [("lpm", None), ("fib", False), ("fib", True), ("em", None),
                                                ("acl", None)])
@pytest.mark.parametrize("pipeline", ["multi", "simple"])
def test_edge_frames_equal_python_definitions(tmp_path, pipeline, lookup, fib_default):
    """Every frame traced, at the edges of the checks, through rules that route part of
    them: the same bytes, stats and trace."""
    frames = edge_frames(mixed_frames(7, 0, 400))
    inputs = {}
    for port in (0, 1):
        inputs[port] = tmp_path / f"in{port}.pcap"
        write_pcap(inputs[port], frames[port::2] + frames[1 - port::2])
    files = rule_files(lookup, tmp_path, random.Random(3), frames, [0, 1, 2, 3], fib_default)
    options = RunOptions(inputs=inputs, outdir=tmp_path, portmask=0xF, lookup=lookup, pipeline=pipeline, trace="all",
                         rx_burst=7, **files)
    compiled_run, numpy_run = both_kernels(tmp_path, options)
    assert compiled_run == numpy_run


@pytest.mark.parametrize("lookup", ["lpm", "em"])
def test_simple_path_rechecks_the_portmask(lookup):
    """``_send``: a route to a port outside the portmask sends the packet back out of
    its input port (l3fwd's re-check; a rule file's such routes are never installed, so
    here the tables are built for ports 0-3 and the packets forwarded with 0-1 enabled)."""
    setup = Forwarding(PortConfig(0x3), lookup, load_routes(lookup, PortConfig(0xF)))
    # l3fwd's default route 198.18.<port>.0/24 and flow 198.18.<port>.1 -> .0 UDP 9 -> 9, to port <port>
    frames = [np.frombuffer(bytes(Ether() / IP(src=f"198.18.{port}.1", dst=f"198.18.{port}.0") / UDP(sport=9, dport=9)),
                            np.uint8) for port in range(4)]
    results = []
    for choice in KERNELS:
        rows = np.zeros((len(frames), RECORD_ROW), np.uint8)
        for row, frame in zip(rows, frames):
            row[16:16 + len(frame)] = frame
        n = len(frames)
        batch = PacketBatch(rows, np.array([len(f) for f in frames], np.int64), np.full(n, 1, np.int64),
                            np.zeros(n, np.int64), [], np.zeros(n, np.int64), np.zeros(n, np.int64))
        with compiled.using(choice):
            dest, reason = simple.forward(batch, setup, lambda stage: nullcontext())
        results.append((dest.tolist(), reason.tolist(), rows.tobytes()))
    assert results[0] == results[1]
    assert results[0][:2] == ([0, 1, 1, 1], [0, 0, 0, 0])       # ports 2 and 3: back out of port 1


@pytest.mark.parametrize("lookup,jobs,config", [
    ("lpm", 2, None), ("acl", 2, None), ("em", 1, "(0,0,0),(1,0,1),(2,0,0),(3,0,1)"),
    ("fib", 2, "(0,0,0),(0,1,1),(1,0,2),(1,1,3),(2,0,0),(2,1,1),(3,0,2),(3,1,3)"),
    ("lpm", 1, "(0,0,0),(0,1,0),(1,0,1),(2,0,1),(2,1,0),(3,0,0)")])       # an lcore polling queues 0 and 1
@pytest.mark.parametrize("trace", [None, "all"])
@pytest.mark.parametrize("pipeline", ["multi", "simple"])
def test_jobs_and_lcores_equal_python_definitions(tmp_path, pipeline, lookup, jobs, config, trace):
    """--jobs processes, and several lcores with RSS-split ports: the same bytes."""
    inputs = {}
    for port in range(4):
        inputs[port] = tmp_path / f"in{port}.pcap"
        write_pcap(inputs[port], traffic_pool(port % POOL_SEEDS)[port][:600])
    files = rule_files(lookup, tmp_path, random.Random(5), traffic_pool(0)[0], [0, 1, 2, 3]) if lookup == "acl" else {}
    options = RunOptions(inputs=inputs, outdir=tmp_path, lookup=lookup, pipeline=pipeline, jobs=jobs, config=config,
                         chunk_packets=256, rx_burst=16, trace=trace, **files)
    compiled_run, numpy_run = both_kernels(tmp_path, options)
    assert compiled_run == numpy_run


@pytest.mark.parametrize("pipeline", ["multi", "simple"])
def test_every_lcore_c_bound_is_checked(pipeline):
    """A record that does not fit its port's part of the output buffer is refused with
    an error, never written past it (lcore.c's own check)."""
    rows = np.zeros((4, 80), np.uint8)
    rows[:, 8] = 60                                            # four 60-byte frames
    rows[:, 16 + 12:16 + 14] = 0x86, 0xDD                       # IPv6, no route: sent back out of port 0
    table = (np.zeros(1 << 24, np.uint32),) * 2 + (np.zeros(0, np.uint32),) * 2 + (0xFFFFFF, 4, -1, -1)
    table6 = table[:5] + (16, -1, -1)
    routes = l3fwd_twins.Routes("lpm", table, table6, np.zeros(32 * 12, np.uint8), (0, 0), None, 0xF)
    path = LcorePath(compiled.extension().ffi.addressof(compiled.extension().lib, f"lcore_forward_{pipeline}"), routes.c,
                routes, None)
    counters = np.zeros(32, np.int64), np.zeros((32, 8), np.int64), np.zeros((32, 33), np.int64)
    runs = np.zeros(4, np.int64), np.zeros(4, np.int64), np.zeros(4, np.uint8)
    sub = (np.zeros((1024, 80), np.uint8), *np.zeros((6, 1024), np.int64), np.zeros(1024, np.uint8))
    small = np.zeros(2 * 100, np.uint8)                         # 100 bytes a port: not even two records
    with pytest.raises(ValueError, match="does not fit|past its port"):
        lcore_step([(rows, 0, 0)], [(np.zeros(1, np.uint8), np.zeros(4, np.int64), 10**9)], (32, 1, 0), path,
                   (7, 2048), counters, runs, (small, 100, *np.zeros((2, 32), np.int64), (0, 10**9)), sub)
