"""The graph's compiled twin (graph/walks.c, graph/twins.py) against the Python walk it
twins (walk.py, nodes.py): on random traffic and configurations, run_graph gives the same
bytes in every output file and the same stats.json (node counters, edges and their
order, drops), and after every super-burst the graph and its packets are left in the
same state — stream sizes, speculations, per-packet verdicts, each ethdev_tx call.

The traffic comes in runs of one kind, so that pkt_cls's and the rewrites' speculation
changes: IPv4 and IPv6 routed and missed, TTL / hop limit 0 and 1, the checksums the
two rewrite paths treat differently, ARP, VLAN, unknown EtherTypes, frames too short for
the EtherType or a destination, and frames over the 2048-byte mbuf room."""
from __future__ import annotations

import json
import random
from contextlib import nullcontext
from unittest import mock

from frames import write_pcap
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import KERNELS, needs_twins

from l3fwd_sim import compiled
from l3fwd_sim.dataplane.queues import RxQueue
from l3fwd_sim.graph import run as graph_run
from l3fwd_sim.graph.run import GraphOptions, run_graph
from l3fwd_sim.graph.walk import Graph

pytestmark = needs_twins
TIMING = ("elapsed_seconds", "mpps", "stages_ms", "stages_ns_per_packet", "setup_ms")
KINDS = ("ip4_routed", "ip4_missed", "ip6_routed", "ip6_missed", "arp", "vlan", "unknown", "short", "oversize")
CHECKSUMS = (b"\xff\xff", b"\xfe\xff", b"\x00\x00", b"\xff\xfe", None)      # None: random


def ethernet(rng: random.Random, ether_type: int) -> bytes:
    return rng.randbytes(12) + ether_type.to_bytes(2, "big")


def ipv4(rng: random.Random, routed: bool) -> bytes:
    """An IPv4 frame to 198.18.0.0/21 (the routes of ports 0..7) or outside it; any
    TTL and checksum; sometimes too short for the destination."""
    dst = bytes([198, 18, rng.randrange(8), rng.randrange(256)]) if routed else \
        rng.choice([bytes([198, 18, rng.randrange(8, 256), 1]), rng.randbytes(4)])
    checksum = rng.choice(CHECKSUMS) or rng.randbytes(2)
    header = (bytes([0x45, 0]) + rng.randbytes(6) + bytes([rng.choice([0, 1, 2, 64, 255]), rng.choice([6, 17, 1])])
              + checksum + rng.randbytes(4) + dst)
    frame = ethernet(rng, 0x0800) + header + rng.randbytes(rng.choice([0, 6, 26, 60, 200]))
    return frame[:rng.randrange(14, 34)] if rng.random() < 0.05 else frame


def ipv6(rng: random.Random, routed: bool) -> bytes:
    """An IPv6 frame to 2001:db08:1234::/48 (every port's route) or outside it; any hop
    limit; sometimes too short for the destination."""
    prefix = bytes.fromhex("2001db081234") if routed else rng.choice([bytes.fromhex("2001db081235"), rng.randbytes(6)])
    header = (bytes([0x60]) + rng.randbytes(5) + bytes([rng.choice([6, 17, 58]), rng.choice([0, 1, 2, 64, 255])])
              + rng.randbytes(16) + prefix + rng.randbytes(10))
    frame = ethernet(rng, 0x86DD) + header + rng.randbytes(rng.choice([0, 8, 20, 100]))
    return frame[:rng.randrange(14, 54)] if rng.random() < 0.05 else frame


def frame_of(kind: str, rng: random.Random) -> bytes:
    if kind.startswith("ip"):
        return (ipv4 if kind.startswith("ip4") else ipv6)(rng, kind.endswith("routed"))
    if kind == "arp":
        return ethernet(rng, 0x0806) + rng.randbytes(28)
    if kind == "vlan":                     # an IPv4 frame behind a tag: unknown to eth_pkt_parse_cb
        inner = ipv4(rng, True)
        return inner[:12] + b"\x81\x00" + rng.randbytes(2) + inner[12:]
    if kind == "unknown":
        return ethernet(rng, rng.choice([0x88CC, 0x0000, 0x86DE, 0x0801, rng.randrange(1 << 16)])) + rng.randbytes(50)
    if kind == "short":                    # shorter than the EtherType
        return rng.randbytes(rng.randrange(1, 14))
    return ipv4(rng, True)[:34] + rng.randbytes(rng.choice([2048, 2100, 4000]) - 34)   # over the mbuf room or at it


def traffic(runs: list[tuple[str, int]], seed: int) -> list[bytes]:
    rng = random.Random(seed)
    return [frame_of(kind, rng) for kind, count in runs for _ in range(count)]


def config_of(queues: dict[int, int], lcores: list[int], rng: random.Random) -> list[RxQueue]:
    """--config: each port's queues 0, 1, ... in order (get_port_n_rx_queues), the ports'
    entries interleaved at random, each queue on one of ``lcores``."""
    pending = {port: list(range(count)) for port, count in queues.items()}
    config = []
    while any(pending.values()):
        port = rng.choice([p for p, left in pending.items() if left])
        config.append(RxQueue(port, pending[port].pop(0), rng.choice(lcores)))
    return config


def snapshot(graph: Graph, sent) -> tuple:
    """All that walk_burst leaves: the graph's nodes and state, the packets' verdicts,
    bytes and each ethdev_tx call."""
    pk, nodes = graph.packets, graph.nodes
    return (sent.tolist(), pk.heads.tobytes(), pk.ptype.tolist(), pk.next_hop.tolist(), pk.dest.tolist(),
            pk.reason.tolist(), [(port, objs.tolist()) for port, objs in pk.sent],
            [(name, n.size, n.calls, n.objs, n.realloc_count, n.idx, len(n.pending)) for name, n in graph.node.items()],
            list(graph.edges.items()), graph.walks, nodes.cls_spec, dict(nodes.rewrite_spec), nodes.lookup_errors)


def run_kernels(tmp, options: GraphOptions) -> list[tuple[dict, list]]:
    """The run with the compiled twin (Graph.walk, the Python walk, refused), then with
    the Python walk: (every file written, stats.json without its timings, as text) and
    the state after each super-burst."""
    results = []
    for choice in KERNELS:
        outdir = tmp / f"out-{choice}"
        states = []

        def walk_burst(graph, batch, *args, walk=graph_run.walk_burst):
            sent = walk(graph, batch, *args)
            states.append(snapshot(graph, sent))
            return sent

        refused = mock.patch.object(Graph, "walk", side_effect=AssertionError("the Python walk ran with the twin"))
        with compiled.using(choice), mock.patch.object(graph_run, "walk_burst", walk_burst), \
                refused if choice == "compiled" else nullcontext():
            run_graph(GraphOptions(**{**options.__dict__, "outdir": outdir, "console": []}))
        files = {p.name: p.read_bytes() for p in sorted(outdir.iterdir())}
        stats = json.loads(files.pop("stats.json"))
        for key in TIMING:
            stats.pop(key, None)
        files["stats.json"] = json.dumps(stats)             # key order too (the edges' order)
        results.append((files, states))
    return results


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(ports=st.sets(st.integers(0, 2), min_size=1), queue_counts=st.lists(st.integers(1, 2), min_size=3, max_size=3),
       split=st.booleans(), rss=st.booleans(), extra=st.sets(st.sampled_from([3, 5, 9])), unread=st.booleans(),
       runs=st.lists(st.lists(st.tuples(st.sampled_from(KINDS), st.integers(1, 60)), max_size=25), min_size=6,
                     max_size=6),
       chunk=st.sampled_from([100, 700, 65536]), seed=st.integers(0, 2**32 - 1))
def test_compiled_walks_equal_python_walks(tmp_path_factory, ports, queue_counts, split, rss, extra, unread, runs,
                                            chunk, seed):
    tmp = tmp_path_factory.mktemp("graph-twin")
    rng = random.Random(seed)
    queues = {port: queue_counts[port] for port in sorted(ports)}
    config = config_of(queues, [1, 2] if split else [1], rng)
    inputs, queue_inputs = {}, {}
    for port, count in queues.items():
        if rss:                            # the port's capture spread over its queues by RSS
            inputs[port] = tmp / f"in{port}.pcap"
            write_pcap(inputs[port], traffic(runs[2 * port] + runs[2 * port + 1], seed + port))
            continue
        for queue in range(count):
            queue_inputs[port, queue] = tmp / f"in{port}.{queue}.pcap"
            write_pcap(queue_inputs[port, queue], traffic(runs[2 * port + queue], seed + 2 * port + queue))
    if unread:                             # a capture of a port not in the portmask
        inputs[4] = tmp / "in4.pcap"
        write_pcap(inputs[4], traffic([("ip4_routed", 10)], seed))
    portmask = sum(1 << port for port in (*ports, *extra))
    options = GraphOptions(inputs=inputs, queue_inputs=queue_inputs, outdir=tmp, portmask=portmask, config=config,
                           chunk_packets=chunk)
    (compiled_files, compiled_states), (python_files, python_states) = run_kernels(tmp, options)
    assert compiled_files.keys() == python_files.keys()
    for name in python_files:
        assert compiled_files[name] == python_files[name], name
    assert len(compiled_states) == len(python_states)
    for k, (twin, definition) in enumerate(zip(compiled_states, python_states)):
        assert twin == definition, f"super-burst {k}"
