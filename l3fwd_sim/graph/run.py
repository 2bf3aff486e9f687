"""l3fwd-graph over captures: RX queue captures → each worker's graph walks → TX queue
files + stats (the library entry behind ``dpdk-l3fwd-graph`` verbatim and
``run --app graph``)::

    from l3fwd_sim.graph.run import GraphOptions, run_graph
    stats = run_graph(GraphOptions(inputs={0: "pcaps/port0.pcap"}, outdir="out"))

Set-up runs in main()'s order with its refusals (l3fwd_graph.md §2): the ``--config``
checks, then per enabled port its RX queue count, ``--max-pkt-len`` and
``rte_eth_dev_configure``, then the RX queues (net_pcap refuses a frame size over its
2048-byte mbufs), then the routes. Every worker lcore with RX queues gets a graph,
numbered in ascending lcore id; graph K sends on TX queue K of every port.
"""
from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from .. import compiled
from ..capture.location import as_location
from ..capture.merge import merge_tx_queues
from ..capture.offline import OpenCaptures
from ..capture.outdir import OutputDir
from ..capture.writers import PortOutputs, output_format
from ..dataplane.inputs import PortInputs
from ..dataplane.lcore import open_readers, report_inputs
from ..dataplane.polling import receive
from ..dataplane.ports import PortConfig, ports_of
from ..dataplane.queues import RxQueue, parse_config
from ..dataplane.rss import DEFAULT_KEY, rss_shares
from ..dataplane import rx
from ..dataplane.stats import RunStats, write_json_atomic
from ..eal.net_pcap import PcapVdev
from ..errors import SimError
from ..releases import Release
from . import routes
from .args import check_config, rx_queue_count
from .nodes import DROP_REASONS, Nodes, Packets, ptype_of
from .stats import graph_stats
from .twins import walk_burst_compiled
from .walk import BURST_SIZE, Graph

MIN_PKT_LEN, MAX_JUMBO_PKT_LEN = 64, 9600      # RTE_ETHER_MIN_LEN, main.c's MAX_JUMBO_PKT_LEN
GRAPH_RELEASE = "26.07"                         # the one release whose l3fwd-graph is modelled (its goldens)


def check_release(dpdk: Release) -> None:
    """Only v26.07's l3fwd-graph is modelled: another release is refused, not guessed."""
    if dpdk.name != GRAPH_RELEASE:
        raise SimError(f"dpdk-l3fwd-graph: DPDK {dpdk.name} is not modelled for l3fwd-graph, only v{GRAPH_RELEASE} "
                       f"(--dpdk or L3FWD_SIM_DPDK; --dpdk {GRAPH_RELEASE} compares with it; docs/graph.md)")


@dataclass
class GraphOptions(PortInputs):
    """A run of l3fwd-graph. ``inputs``: a port's capture (its RX queue 0, or spread over
    its queues by RSS); ``queue_inputs``: one capture per (port, RX queue), as net_pcap's
    ``rx_pcap`` files."""
    queue_inputs: dict[tuple[int, int], Path] = field(default_factory=dict)
    portmask: int | None = None          # default: the ports that have an input
    config: list[RxQueue] | str | None = None    # default: worker lcore 1 polls queue 0 of every input port
    lcores: list[int] | None = None      # the EAL's lcores; default: the main lcore and --config's
    main_lcore: int | None = None        # default: the lowest lcore id --config does not name
    vdevs: list[PcapVdev] | None = None  # a verbatim command line's ports: configured as l3fwd-graph does
    eth_dest: dict[int, bytes] = field(default_factory=dict)
    port_mac: dict[int, bytes] = field(default_factory=dict)     # run's --port-mac (net_pcap: 02:70:63:61:70:0P)
    max_pkt_len: int | None = None
    output_format: str = "auto"
    nanosecond: bool | None = None
    per_queue: bool = False              # every graph's port<N>.q<K> files are outputs (what net_pcap's tx_pcap are)
    merge: bool = True                   # several graphs: port<N>.pcap, the port's TX queues merged
    pcap_trace: tuple[int, str] | None = None    # --pcap-enable: (packets per graph, file name prefix)
    chunk_packets: int = 65536
    progress: Callable[[int, int], None] | None = None   # called with (bytes read, total bytes)
    console: list[str] = field(default_factory=list)   # filled: what the set-up printed


def run_graph(opt: GraphOptions) -> dict:
    """Forward the inputs as dpdk-l3fwd-graph would; write each TX queue's (or port's)
    capture and ``stats.json`` into ``opt.outdir``; return the stats."""
    started = time.perf_counter()
    check_release(opt.dpdk)
    queue_inputs = {(int(p), int(q)): as_location(f) for (p, q), f in opt.queue_inputs.items()}
    with_input = sorted({*opt.inputs, *(p for p, _ in queue_inputs)})
    if opt.portmask is None and not with_input:
        raise SimError("no input given")
    portmask = opt.portmask if opt.portmask is not None else sum(1 << p for p in with_input)
    config = parse_config(opt.config) if isinstance(opt.config, str) else opt.config or _default_config(opt)
    main_lcore = opt.main_lcore if opt.main_lcore is not None else \
        min(set(range(len(config) + 1)) - {q.lcore for q in config})
    lcores = opt.lcores or sorted({main_lcore, *(q.lcore for q in config)})
    n_ports = len(opt.vdevs) if opt.vdevs is not None else max(ports_of(portmask)) + 1
    workers = check_config(config, portmask, lcores, main_lcore, n_ports)
    enabled = [port for port in ports_of(portmask) if port < n_ports]          # RTE_ETH_FOREACH_DEV
    rx_queues = _setup_ports(opt, config, enabled, len(lcores), workers)
    notes = _unread_inputs(opt.inputs, queue_inputs, portmask, rx_queues)
    port_config = PortConfig(portmask, opt.eth_dest, opt.port_mac)
    tables, route_lines = routes.install(portmask, n_ports, port_config.eth_header)
    opt.console.extend(route_lines)
    stats = RunStats(sorted({q.port for queues in workers.values() for q in queues}), enabled, DROP_REASONS)
    stats.warnings.extend(notes)
    graphs = [Graph(lcore, k, [f"ethdev_rx-{q.port}-{q.queue}" for q in queues], enabled, Nodes(tables))
              for k, (lcore, queues) in enumerate(sorted(workers.items()))]
    with ExitStack() as stack:
        captures = stack.enter_context(_Captures(opt, workers, queue_inputs, rx_queues))
        stack.enter_context(compiled.for_inputs(captures.open.input_bytes))
        out = stack.enter_context(OutputDir(opt.outdir, [*opt.inputs.values(), *queue_inputs.values()]))
        nanosecond = captures.open.nanosecond if opt.nanosecond is None else opt.nanosecond
        fmt = output_format(opt.output_format, captures.open.file_formats)
        several = len(graphs) > 1 or opt.per_queue
        # the TX-queue files: outputs, or only what the merge reads (hidden: not published)
        queue_dir = out.stage / ".queues" if len(graphs) > 1 and opt.merge and not opt.per_queue else out.stage
        queue_dir.mkdir(exist_ok=True)
        trace = None
        if opt.pcap_trace:
            from .pcap_trace import PcapTrace          # only with --pcap-enable
            trace = PcapTrace(*opt.pcap_trace, n_ports, opt.console)
        progress = _progress(opt.progress, captures.open.input_bytes)
        for graph in graphs:
            graph.trace = trace
            name = f"port{{port}}.q{graph.graph_id}.{fmt}" if several else f"port{{port}}.{fmt}"
            _graph_loop(graph, [(q.port, captures.sources.get((q.port, q.queue))) for q in workers[graph.lcore]],
                        PortOutputs(queue_dir, enabled, nanosecond, name, fmt), stats, captures.open, opt, progress)
        if trace:
            trace.close()
        if len(graphs) > 1 and opt.merge:
            for port in enabled:
                merge_tx_queues([queue_dir / f"port{port}.q{g.graph_id}.{fmt}" for g in graphs],
                                out.stage / f"port{port}.{fmt}")
        stats.note_conveniences(captures.open.conveniences())
        stats.elapsed = time.perf_counter() - started
        stats.options = {"app": "l3fwd-graph", "dpdk": opt.dpdk.name, "portmask": f"0x{portmask:x}", "output_format": fmt,
                         "config": ",".join(f"({q.port},{q.queue},{q.lcore})" for q in config),
                         "max_pkt_len": opt.max_pkt_len, "main_lcore": main_lcore,
                         "inputs": {f"{p}.{q}": str(s) for (p, q), s in captures.sources.items()}}
        result = {**stats.to_dict(), "graph": graph_stats(graphs)}
        write_json_atomic(out.stage / "stats.json", result)
        out.publish()
    return result


def _progress(show, total: int):
    """``show(done, total)`` as the graphs read their captures' bytes, or None (no
    progress asked for, or an input whose size is unknown: a pipe)."""
    if show is None or total >= 1 << 62:
        return None
    done = [0]

    def advance(record_bytes: int) -> None:
        done[0] = min(done[0] + record_bytes, total)
        show(done[0], total)
    return advance


def _default_config(opt: GraphOptions) -> list[RxQueue]:
    """Without ``--config``: worker lcore 1 polls every RX queue that has a capture (a
    port's whole capture: its queue 0), ports ascending (lcore 0 is the main lcore)."""
    queues = {(port, 0) for port in opt.inputs} | set(opt.queue_inputs)
    return [RxQueue(port, queue, 1) for port, queue in sorted(queues)]


def _setup_ports(opt: GraphOptions, config: list[RxQueue], enabled: list[int], nb_txq: int,
                 workers: dict[int, list[RxQueue]]) -> dict[int, int]:
    """main()'s port loop, then its RX queue set-up: per port its number of RX queues."""
    rx_queues = {}
    for port in enabled:
        rx_queues[port] = rx_queue_count(config, port)
        if opt.max_pkt_len is not None and not MIN_PKT_LEN <= opt.max_pkt_len <= MAX_JUMBO_PKT_LEN:
            raise SimError(f"Invalid max packet length: {opt.max_pkt_len} (port {port}) (l3fwd-graph takes "
                           f"{MIN_PKT_LEN}..{MAX_JUMBO_PKT_LEN})")
        if opt.vdevs is not None:
            opt.vdevs[port].configure(port, rx_queues[port], nb_txq, relax_rx_offload=True)
    if opt.max_pkt_len is not None and opt.max_pkt_len > rx.MBUF_DATA_ROOM and any(workers.values()):
        port = next(queues[0].port for _, queues in sorted(workers.items()) if queues)
        raise SimError(f"rte_eth_rx_queue_setup: err=-22, port={port} (--max-pkt-len {opt.max_pkt_len}: Rx scatter "
                       f"is disabled and RxQ mbuf pool object size is too small (buf_size={rx.MBUF_DATA_ROOM}); "
                       "l3fwd-graph never asks for RX scatter)")
    return rx_queues


def _unread_inputs(inputs: dict, queue_inputs: dict, portmask: int, rx_queues: dict[int, int]) -> list[str]:
    """A warning per capture no RX queue reads."""
    notes = [f"{path}: port {port} is not in portmask 0x{portmask:x}, so nothing is received from it"
             for port, path in sorted(inputs.items()) if not portmask >> port & 1]
    notes += [f"{path}: RX queue {queue} of port {port} is not in --config, so nothing is received from it"
              for (port, queue), path in sorted(queue_inputs.items())
              if portmask >> port & 1 and queue >= rx_queues.get(port, 0)]
    return notes


class _Captures:
    """What each configured RX queue reads — its own capture, its port's (one queue), or
    its RSS share of its port's (several) — every capture opened once, first of all."""

    def __init__(self, opt: GraphOptions, workers: dict, queue_inputs: dict, rx_queues: dict[int, int]):
        wanted = {(q.port, q.queue) for queues in workers.values() for q in queues}
        whole = {port: path for port, path in opt.inputs.items() if rx_queues.get(port)}
        own = {key: path for key, path in queue_inputs.items() if key in wanted}
        self.open = OpenCaptures([*whole.values(), *own.values()], None, opt.reading)
        self.sources: dict[tuple[int, int], object] = {}
        try:
            for port, path in whole.items():
                if rx_queues[port] > 1:              # rss_hf = RTE_ETH_RSS_IP: addresses only
                    shares = rss_shares(path, rx_queues[port], False, DEFAULT_KEY, 128, self.open)
                    self.sources.update({(port, share.queue): share for share in shares})
                else:
                    self.sources[port, 0] = path
            self.sources.update(own)
        except BaseException:
            self.open.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.open.close()


def _graph_loop(graph: Graph, queues: list, outputs: PortOutputs, stats: RunStats, captures: OpenCaptures,
                opt: GraphOptions, progress=None) -> None:
    """``graph_main_loop``: walk after walk until every RX queue of the lcore has
    reached the end of its capture, into ``outputs``; stage times into ``stats``,
    ``progress(bytes)`` after each super-burst. A queue without a capture receives
    nothing."""
    in_walk_order = list(reversed(queues))
    polled = [(port, source) for port, source in in_walk_order if source is not None]
    places = np.cumsum([source is not None for _, source in in_walk_order]) - 1     # graph source -> reader
    places = [int(place) if source is not None else None for place, (_, source) in zip(places, in_walk_order)]
    clock = time.perf_counter
    try:
        with open_readers(polled, captures) as readers:
            received_per_queue = np.zeros(len(readers), np.int64)
            bursts = receive(readers, BURST_SIZE, opt.chunk_packets)
            while True:
                started = clock()
                if (received := next(bursts, None)) is None:
                    break
                received_per_queue += received.queue_rx
                batch = received.merge()
                if graph.trace:
                    graph.trace.batch = batch
                walked = clock()
                sent = walk_burst(graph, batch, received.queues, places, stats.code("oversize"))
                written = clock()
                stats.count(batch.in_port, graph.packets.reason, graph.packets.dest)
                outputs.write(batch.select(sent), graph.packets.dest[sent])
                for stage, seconds in (("read", walked - started), ("walk", written - walked),
                                       ("write", clock() - written)):
                    stats.add_stage_time(stage, seconds)
                if progress:
                    progress(received.record_bytes)
            report_inputs(readers, stats)
        # the real loop polls on; these are the walks until every queue had seen its capture's end
        graph.idle_walks(int((received_per_queue // BURST_SIZE + 1).max(initial=1)) - graph.walks)
        outputs.commit()
    except BaseException:
        outputs.abort()
        raise


def walk_burst(graph: Graph, batch, queues: int, places: list, oversize_code: int) -> np.ndarray:
    """Walk ``graph`` over a super-burst: ``batch`` holds its polling rounds in order
    (``polling._merge``: packet burst id = walk × queues + reader place), one round per
    walk; ``places``: per graph source its reader's place (None: it has no capture).
    Frames over the mbuf room are dropped on receive, their slots used. Returns the
    packets sent, in the order the ethdev_tx nodes sent them. Its compiled twin
    (``twin.py``, ``walks.c``) runs unless ``--pcap-enable`` traces the nodes' calls."""
    if graph.trace is None and compiled.enabled():
        return walk_burst_compiled(graph, batch, queues, places, oversize_code)
    pk = graph.packets = Packets(batch.heads, batch.caplen, ptype_of(batch.heads, batch.caplen))
    dropped = rx.oversize(batch.caplen)
    pk.reason[dropped] = oversize_code
    kept = np.flatnonzero(~dropped)
    first, last = int(batch.burst[0]) // queues, int(batch.burst[-1]) // queues
    bounds = np.searchsorted(batch.burst[kept], np.arange(first * queues, (last + 1) * queues + 1))
    for walk in range(last - first + 1):
        base = walk * queues
        graph.walk(pk, [kept[bounds[base + k]:bounds[base + k + 1]] if k is not None else kept[:0] for k in places])
    return np.concatenate([objs for _, objs in pk.sent]) if pk.sent else np.zeros(0, np.int64)
