"""``run``: pcap files → packet batches → pipeline → TX model → per-port pcaps + stats.

This is the library entry point behind ``l3fwd-sim run``::

    from l3fwd_sim import RunOptions, run, find_inputs
    stats = run(RunOptions(inputs=find_inputs(["pcaps"]), outdir="out"))
"""
from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np

from .. import compiled
from ..dataplane.inputs import PortInputs
from ..dataplane.lcore import Lcore, forward_all
from ..capture.location import as_location, identity
from ..capture.offline import OpenCaptures
from ..capture.outdir import OutputDir
from ..capture.merge import merge_tx_queues
from ..capture.writers import output_format
from ..dataplane.ports import PortConfig, ports_of, run_portmask
from ..dataplane.queues import Lcores, default_config, lcores_of, parse_config
from ..dataplane.rss import DEFAULT_KEY, RETA_SIZES, RssShare, rss_shares
from ..dataplane.rx import configure_max_pkt_len, rx_queue_setup
from ..dataplane.hits import RuleHits
from ..dataplane.stats import RunStats, write_json_atomic
from ..dataplane.tx import TxModel, account_multi, account_simple
from ..eal.net_pcap import PcapVdev, check_ptype
from ..errors import SimError
from . import multi, simple, twins
from .acl import account_acl, ipv4_first
from .pipelines import DROP_REASONS, REASON_CODE
from .keys import TABLE_NAMES
from .routing import (Forwarding, capacity_warning, check_route_devices, load_routes, not_installed_warning,
                      rule_hit_list, rule_hit_sizes)

LOOKUPS = ("lpm", "em", "fib", "acl")
PIPELINES = {"simple": simple.forward, "multi": multi.forward}
ACL_ALGS = ("scalar", "sse", "avx2", "neon", "altivec", "avx512x16", "avx512x32", "rvv")
MIN_PKT_LEN, MAX_JUMBO_PKT_LEN = 64, 9600     # RTE_ETHER_MIN_LEN, l3fwd's MAX_JUMBO_PKT_LEN


@dataclass
class RunOptions(PortInputs):
    """Options of one run, named as dpdk-l3fwd names them."""
    portmask: int | None = None          # default: the ports that have an input
    lookup: str = "lpm"
    pipeline: str = "multi"
    rule_ipv4: Path | None = None
    rule_ipv6: Path | None = None
    ipv6: bool = False                   # l3fwd's --ipv6: EM populates the IPv6 flows only
    max_pkt_len: int | None = None       # l3fwd's --max-pkt-len: at most 2048 over net_pcap (rx.py)
    config: str | None = None            # l3fwd's --config "(port,queue,lcore),...": the lcores (queues.py)
    queue_inputs: dict[tuple[int, int], Path] = field(default_factory=dict)   # (port, RX queue) -> capture
    rss_key: bytes = DEFAULT_KEY         # a port with one capture and several RX queues: RSS (rss.py)
    reta_size: int = 128
    alg: str | None = None               # l3fwd's --alg: rte_acl's classify method, same results
    eth_dest: dict[int, bytes] = field(default_factory=dict)
    port_mac: dict[int, bytes] = field(default_factory=dict)
    rx_burst: int = 32
    tx_burst: int = 32
    chunk_packets: int = 65536           # super-burst size: a speed knob, never changes output
    jobs: int = 1                        # processes: a speed knob, never changes output
    merge: bool = True                   # several lcores: port<N>.pcap, the port's TX queues merged (merge.py)
    per_queue: bool = False              # several lcores: also port<N>.q<K>.pcap, each TX queue's own file
    cluster: str | None = None           # Dask scheduler address or local:N (cluster.py): never changes output
    tls_ca_file: Path | None = None      # a tls:// cluster: its CA's certificate (PEM),
    tls_cert: Path | None = None         # this client's certificate
    tls_key: Path | None = None          # and that certificate's private key
    trace: int | str | None = None       # trace the first N packets (per lcore), "all", or None: OUTDIR/trace.jsonl
    annotate: bool = False               # pcapng outputs, each packet's decision in its opt_comment (annotations.py)
    drops: bool = False                  # OUTDIR/drops.pcapng: every dropped packet as received, with its reason
    progress: Callable[[int, int], None] | None = None   # called with (bytes read, total bytes)
    announce: Callable[[str], None] | None = None        # one-line notices while running (the Dask dashboard)
    output_format: str = "auto"          # pcap, pcapng, or auto: pcapng when every input is pcapng
    nanosecond: bool | None = None       # time stamps of pcap outputs: None = nanoseconds when an input has them
    disable_rss: bool = False            # l3fwd's --disable-rss: a port's whole capture goes to its RX queue 0
    parse_ptype: bool = False            # l3fwd's --parse-ptype, --relax-rx-offload: what net_pcap vdevs need
    relax_rx_offload: bool = False       # (run's own ports report packet types and take any offload)
    lcore_mask: list[int] | None = None  # the EAL's lcores (-l/--lcores/-c), each with a TX queue; None: --config's
    vdevs: list[PcapVdev] | None = None  # ports from a verbatim command line: configured and started as l3fwd does


def _validate(opt: RunOptions) -> tuple[int, dict[int, Path], list[str]]:
    """The portmask, the inputs the lcore polls and warnings; SimError where l3fwd would not start."""
    if opt.lookup not in LOOKUPS:
        raise SimError(f"--lookup {opt.lookup}: not supported (choose from {', '.join(LOOKUPS)})")
    if opt.pipeline not in PIPELINES:
        raise SimError(f"--pipeline {opt.pipeline}: choose simple or multi")
    if opt.max_pkt_len is not None:
        if not MIN_PKT_LEN <= opt.max_pkt_len <= MAX_JUMBO_PKT_LEN:     # config_port_max_pkt_len
            raise SimError(f"--max-pkt-len {opt.max_pkt_len}: Invalid max packet length (dpdk-l3fwd takes "
                           f"{MIN_PKT_LEN}..{MAX_JUMBO_PKT_LEN})")
    if opt.reta_size not in RETA_SIZES:
        raise SimError(f"--reta-size {opt.reta_size}: choose one of {', '.join(map(str, RETA_SIZES))}")
    if opt.alg is not None and opt.alg not in ACL_ALGS:
        opt.alg = None                     # as l3fwd: an unknown name means the default method
    if not 1 <= opt.jobs <= 64:
        raise SimError(f"--jobs {opt.jobs}: must be in 1..64")
    if opt.cluster is not None:
        if opt.jobs > 1:
            raise SimError("--jobs and --cluster: give one (--jobs for this machine, --cluster for Dask)")
    elif (opt.tls_ca_file, opt.tls_cert, opt.tls_key) != (None, None, None):
        raise SimError("--tls-ca-file, --tls-cert, --tls-key: only with --cluster tls://HOST:PORT")

    if opt.trace is not None and opt.trace != "all" and not (isinstance(opt.trace, int) and opt.trace >= 0):
        raise SimError(f"--trace {opt.trace}: give a number of packets (0 or more) or 'all'")
    if opt.annotate and not opt.merge:
        raise SimError("--annotate with --no-merge: the annotated outputs include port<N>.pcapng, the merge of "
                       "the port's TX queues; leave out one of them")
    if opt.annotate or opt.drops:
        from ..dataplane.annotations import check_annotations
        check_annotations(opt.annotate, opt.drops, opt.trace, opt.output_format,
                          [*opt.inputs.values(), *opt.queue_inputs.values()])
    for name in ("rx_burst", "tx_burst"):
        value = getattr(opt, name)
        if not 1 <= value <= 512:
            raise SimError(f"--{name.replace('_', '-')} {value}: must be in 1..512")
    # l3fwd's --config names enabled ports only: a capture of a disabled port is not received
    enabled = {p for p in {*opt.inputs, *(p for p, _ in opt.queue_inputs)}
               if opt.portmask is None or opt.portmask >> p & 1}
    inputs = {p: f for p, f in opt.inputs.items() if p in enabled}
    notes = [f"{f}: port {p} is not in portmask 0x{opt.portmask:x}, so nothing is received from it"
             for p, f in sorted(opt.inputs.items()) if p not in enabled]
    if not enabled and opt.vdevs is None:       # a verbatim command line may have tx_pcap ports only
        raise SimError("no input given" if opt.portmask is None else f"no input on a port of portmask 0x{opt.portmask:x}")
    return run_portmask(opt.portmask, dict.fromkeys(enabled)), inputs, notes


def pipeline(name: str):
    """The ``forward(batch, setup, timer)`` function of pipeline ``name``."""
    return PIPELINES[name]


class _Forward:
    """``forward(batch, timer[, decisions])`` of a run: its pipeline with its tables.
    Pickled (a ``--cluster`` task) as what builds the tables, not as the tables: those
    are hundreds of MB (DIR-24-8's tbl24 alone is 2^24 entries), building them takes
    milliseconds."""

    def __init__(self, opt: RunOptions, portmask: int, setup: Forwarding | None = None):
        self._opt, self.portmask = opt, portmask
        if setup is None:
            ports = PortConfig(portmask, opt.eth_dest, opt.port_mac)
            setup = Forwarding(ports, opt.lookup, load_routes(opt.lookup, ports, opt.rule_ipv4, opt.rule_ipv6,
                                                              opt.ipv6, []))
        self._setup, self._forward = setup, pipeline(opt.pipeline)
        self.routes = setup.routes

    def compiled(self, trace_tables: tuple[str, ...] | None = None) -> twins.LcorePath:
        """The pipeline's compiled twin as ``lcore.c`` runs it; when tracing, with the
        codes ``trace_tables`` (the trace's table names, code = index + 1) give its tables."""
        codes = (0, 0) if trace_tables is None else \
            tuple(trace_tables.index(f"{self._opt.lookup}{family}") + 1 for family in (4, 6))
        return twins.lcore_path(self._setup, self._opt.pipeline, codes)

    def __call__(self, batch, timer, *trace):
        return self._forward(batch, self._setup, timer, *trace)

    def __reduce__(self):
        return _Forward, (replace(self._opt, progress=None, announce=None), self.portmask)


def _account(lookup: str, pipeline_name: str):
    """How the path's transmissions reach the TX model: per packet on the simple path;
    on the multi path per same-port run, except for ACL bursts with drops (``account_acl``)."""
    if pipeline_name == "simple":
        return account_simple
    return account_acl if lookup == "acl" else account_multi


def run(opt: RunOptions) -> dict:
    """Forward the inputs as dpdk-l3fwd would; write ``port<N>.pcap`` (``.pcapng``: see
    ``output_format``) for every enabled port and ``stats.json`` into ``opt.outdir``
    (with several lcores also ``port<N>.q<K>.pcap`` per TX queue); return the stats as a
    dict."""
    started = time.perf_counter()
    portmask, inputs, notes = _validate(opt)
    queue_inputs = {(int(p), int(q)): as_location(f) for (p, q), f in opt.queue_inputs.items() if portmask >> int(p) & 1}
    ports = PortConfig(portmask, opt.eth_dest, opt.port_mac)
    warnings: list[str] = []
    tables_started = time.perf_counter()          # l3fwd reads its rule files first of all (read_config_files)
    routes = load_routes(opt.lookup, ports, opt.rule_ipv4, opt.rule_ipv6, opt.ipv6, warnings)
    warnings += not_installed_warning(routes, ports, opt.rule_ipv4, opt.rule_ipv6) + capacity_warning(opt.lookup, routes)
    tables_time = time.perf_counter() - tables_started
    config = parse_config(opt.config) if opt.config else default_config(sorted({*inputs, *(p for p, _ in queue_inputs)}))
    lcores = lcores_of(config, portmask, opt.lcore_mask, None if opt.vdevs is None else len(opt.vdevs))
    _setup_ports(opt, lcores, portmask, routes)
    if opt.cluster is not None and not opt.disable_rss and any(lcores.queues.get(port, 0) > 1 for port in inputs):
        raise SimError("--cluster: a port's capture spread over several RX queues by RSS cannot be cut into chunks "
                       "(where a queue's k-th record is takes hashing every record before it); give each RX queue "
                       "its capture (N.Q=FILE)")
    with _rx_sources(lcores, inputs, queue_inputs, notes, opt) as (sources, labels, captures):
        with compiled.for_inputs(captures.input_bytes), \
                OutputDir(opt.outdir, [*inputs.values(), *queue_inputs.values()]) as out:
            forward = _Forward(opt, portmask, Forwarding(ports, opt.lookup, routes))
            result = _run_lcores(opt, out, started, forward, lcores, sources, labels, [*warnings, *notes],
                                 captures, tables_time)
            out.publish()
    return result


def _setup_ports(opt: RunOptions, lcores: Lcores, portmask: int, routes) -> None:
    """l3fwd's port set-up and start (``l3fwd_poll_resource_setup``, ``prepare_ptype_parser``),
    in its order: with vdevs, each enabled port is configured with its RX queues and one TX
    queue per lcore, and right after the first one ``init_mem`` sets the lookup up, which
    asks for the device of every route's port; then the RX queues are set up
    (``--max-pkt-len`` over net_pcap); then each polled port must parse packet types."""
    # 22.11 has no --relax-rx-offload: its l3fwd was measured patched to relax always (releases.py)
    relaxed = opt.relax_rx_offload or not opt.dpdk.has("relax_rx_offload_option")
    configured = [port for port in ports_of(portmask) if opt.vdevs is None or port < len(opt.vdevs)]   # FOREACH_DEV
    if configured:
        configure_max_pkt_len(opt.max_pkt_len, opt.dpdk, configured[0])
    if opt.vdevs is not None:
        for port in configured:
            opt.vdevs[port].configure(port, lcores.queues.get(port, 0), len(lcores.ids), relaxed)
            if port == configured[0]:
                check_route_devices(opt.lookup, routes, opt.vdevs)
    if opt.max_pkt_len is not None and lcores.queues:
        rx_queue_setup(opt.max_pkt_len)
    if opt.vdevs is not None:
        for lcore in lcores.ids:
            for q in lcores.rx[lcore]:
                check_ptype(q.port, opt.parse_ptype)


def _run_lcores(opt: RunOptions, out: OutputDir, started: float, forward: "_Forward", lcores: Lcores,
                sources: dict, labels: dict, notes: list, captures: OpenCaptures, tables_time: float) -> dict:
    """The run proper, every output written into ``out.stage``."""
    outdir = out.stage
    portmask, routes = forward.portmask, forward.routes
    tx_ports = ports_of(portmask)
    stats = RunStats(sorted({port for port, _ in sources}), tx_ports, DROP_REASONS)
    stats.warnings.extend(notes)
    stats.add_setup_time("tables", tables_time)
    # the rule hit counters: what l3fwd sent, and ACL's deny lines, count for the rule that decided
    stats.hits = RuleHits(TABLE_NAMES, rule_hit_sizes(opt.lookup, routes), (0, REASON_CODE["acl_deny"]))
    nanosecond = captures.nanosecond if opt.nanosecond is None else opt.nanosecond
    fmt = "pcapng" if opt.annotate else output_format(opt.output_format, captures.file_formats)   # = files' suffix
    several = len(lcores.ids) > 1
    # each lcore's queues that have a capture, in its polling order
    polled = {lc: [q for q in lcores.rx[lc] if (q.port, q.queue) in sources] for lc in lcores.ids}
    limit = None if opt.trace in ("all", None) else opt.trace     # --annotate/--drops trace every packet
    # where a trace line's output position or input record number is only known at the end
    spool = several or opt.jobs > 1 or opt.cluster is not None
    trace_lines = annotations = open_sink = None
    if opt.trace is not None or opt.annotate or opt.drops:     # the trace machinery, imported only when tracing
        from ..dataplane.trace import TRACE_FILE, RecordSink, Tracing, render_spools
        from .trace import describe
        trace_lines = describe(opt.lookup, routes, stats.reasons)
        if opt.annotate or opt.drops:
            from ..dataplane.annotations import DROPS_FILE, Annotations
            # one lcore in one process: each record comes before its packet is written (no spool)
            annotations = Annotations(trace_lines, opt.annotate, opt.drops, any(n > 1 for n in lcores.queues.values()),
                                      inline=not spool)
        open_sink = partial(RecordSink, describe=trace_lines, trace_file=opt.trace is not None,
                            keep=annotations and annotations.keep)

    # several lcores: port<N> is the merge of the port's TX queues, written straight from memory
    # (merged.py) unless the per-queue files are asked for (written here) or --cluster needs them (hidden)
    in_memory = several and opt.merge and not opt.per_queue and opt.cluster is None
    queue_dir = outdir / ".queues" if several and opt.merge and not opt.per_queue and not in_memory else outdir
    queue_dir.mkdir(exist_ok=True)
    # lcores taking turns hold one super-burst between them, as one lcore does: fewer fresh pages (measured)
    chunk_packets = max(1, opt.chunk_packets // len(lcores.ids)) if in_memory else opt.chunk_packets

    def make_lcore(lcore_id: int, forked: bool = False) -> tuple[Lcore, RunStats, TxModel]:
        """One lcore's main loop over its queues, into its TX queue's files (``forked``: in
        a process of its own, which opens its inputs again: an open file's position is
        shared with the processes forked beside it), with its counters."""
        queues = [(q.port, sources[q.port, q.queue]) for q in polled[lcore_id]]
        name = f"port{{port}}.q{lcores.tx_queue(lcore_id)}.{fmt}" if several else f"port{{port}}.{fmt}"
        tracing = trace_lines and Tracing(limit, lcore_id, [q.queue for q in polled[lcore_id]], trace_lines, spool,
                                          open_sink)
        send_order = ipv4_first if opt.lookup == "acl" and not opt.dpdk.has("acl_arrival_order") else None
        lcore = Lcore(queues, opt.rx_burst, forward,
                      tx_ports, nanosecond, _account(opt.lookup, opt.pipeline), chunk_packets,
                      None if several else opt.progress, name, tracing, None if forked else captures, fmt,
                      None if send_order else forward.compiled,        # lcore.c sends in arrival order
                      annotations.comments if annotations and annotations.inline and opt.annotate else None,
                      opt.dpdk, send_order)
        lcore_stats = RunStats(sorted({port for port, _ in queues}), tx_ports, DROP_REASONS)
        lcore_stats.hits = stats.hits.empty_like()
        return lcore, lcore_stats, TxModel(tx_ports, opt.rx_burst, opt.tx_burst)

    def lcore_loop(lcore_id: int, jobs: int, forked: bool = False) -> tuple[RunStats, TxModel, list]:
        lcore, lcore_stats, tx_model = make_lcore(lcore_id, forked)
        if opt.cluster is not None and lcore.inputs:
            from ..dataplane.cluster import run_cluster     # Dask: imported only for --cluster
            spools = run_cluster(lcore, client, queue_dir, out.scratch, lcore_stats, tx_model,
                                 None if several else opt.progress)
        elif jobs > 1 and lcore.inputs:
            from ..dataplane.jobs import run_jobs
            spools, = run_jobs([lcore], jobs, queue_dir, [lcore_stats], [tx_model])
        else:
            spools = forward_all(lcore, queue_dir, lcore_stats, tx_model)
        tx_model.drain()
        return lcore_stats, tx_model, spools

    positions = {}                                # port -> per TX queue, its records' places in port<N>.pcap
    placed = bool(trace_lines or annotations)
    with _cluster(opt) as client:
        if in_memory:
            from ..dataplane.merged import HANDED_ON, MergedPorts, forward_merged
            made_lcores, lcore_stats, tx_models = map(list, zip(*(make_lcore(lc) for lc in lcores.ids)))
            ports = MergedPorts(outdir, tx_ports, len(lcores.ids), nanosecond, fmt, placed,
                                HANDED_ON if opt.jobs > 1 else 0)
            if opt.jobs > 1:                      # forked once: every process forwards a share of each lcore's rounds
                from ..dataplane.jobs import run_jobs
                spools = run_jobs(made_lcores, opt.jobs, outdir, lcore_stats, tx_models, ports)
            else:
                spools = forward_merged(made_lcores, ports, outdir, lcore_stats, tx_models)
            for tx_model in tx_models:
                tx_model.drain()
            per_lcore = list(zip(lcore_stats, tx_models, spools))
            positions = ports.places() if placed else {}
        elif several and opt.jobs > 1:            # lcores are independent: one process each
            from ..dataplane.jobs import in_processes
            per_lcore = in_processes([lambda lc=lc: lcore_loop(lc, 1, forked=True) for lc in lcores.ids], opt.jobs)
        else:                                     # with --cluster, each lcore's chunks in turn
            per_lcore = [lcore_loop(lc, opt.jobs) for lc in lcores.ids]
    tx_models = [tx_model for _, tx_model, _ in per_lcore]
    lcore_spools = [spools for _, _, spools in per_lcore]
    for lcore_id, (lcore_stats, _, _) in zip(lcores.ids, per_lcore):
        stats.merge(lcore_stats)
        received = {f"{q.port}.{q.queue}": n for q, n in zip(polled[lcore_id], lcore_stats.queue_rx)}
        stats.lcores[lcore_id] = {"rx_queues": [[q.port, q.queue] for q in lcores.rx[lcore_id]],
                                  "tx_queue": lcores.tx_queue(lcore_id), "rx_per_queue": received,
                                  **lcore_stats.to_dict()["totals"]}
    try:
        if several and opt.merge and not in_memory:   # each port's TX-queue files as one; with --jobs, in parallel
            queues = range(len(lcores.ids))
            merges = [lambda port=port: merge_tx_queues([queue_dir / f"port{port}.q{k}.{fmt}" for k in queues],
                                                        outdir / f"port{port}.{fmt}", placed) for port in tx_ports]
            if opt.jobs > 1:
                from ..dataplane.jobs import in_processes
                merged = in_processes(merges, opt.jobs)
            else:
                merged = [merge() for merge in merges]
            positions = dict(zip(tx_ports, merged))
        if trace_lines:
            traced = stats.traced
            if spool:
                traced = render_spools(lcore_spools, limit, outdir, open_sink,
                                       _tx_position(positions, lcores) if positions else None)
            if opt.trace is not None:
                stats.trace = {"file": TRACE_FILE, "limit": "all" if limit is None else limit, "packets": traced,
                               "dpdk": opt.dpdk.name}
        if annotations:
            tx_queues = range(len(lcores.ids)) if several and opt.per_queue else ()
            # the files to comment (--annotate, never with --no-merge): each port's, then its TX queues'
            annotated = {port: [(outdir / f"port{port}.{fmt}", None),
                                *((outdir / f"port{port}.q{k}.{fmt}", positions[port][k]) for k in tx_queues)]
                         for port in tx_ports} if opt.annotate and not annotations.inline else {}
            annotations.finish(annotated, stats.rx_ports, lambda port, queue: _capture_path(sources[port, queue]),
                               nanosecond, outdir / DROPS_FILE)
    finally:
        for spools in lcore_spools:
            for each in spools:
                each.remove()
    stats.tx_model = TxModel.total(tx_models)
    stats.rules = rule_hit_list(opt.lookup, routes, stats.hits)
    stats.rules_not_installed = getattr(routes, "not_installed", {})      # ACL refuses such lines instead
    stats.note_conveniences(captures.conveniences())
    stats.elapsed = time.perf_counter() - started
    stats.options = {"dpdk": opt.dpdk.name, "portmask": f"0x{portmask:x}", "lookup": opt.lookup, "ipv6": opt.ipv6,
                     "max_pkt_len": opt.max_pkt_len, "alg": opt.alg, "config": opt.config,
                     "pipeline": opt.pipeline, "output_format": fmt,
                     "rx_burst": opt.rx_burst, "tx_burst": opt.tx_burst, "disable_rss": opt.disable_rss,
                     "routes_installed": routes.installed,
                     "inputs": {f"{p}" if lcores.queues[p] == 1 else f"{p}.{q}": labels[p, q]
                                for p, q in sorted(sources)}}
    result = stats.to_dict()
    write_json_atomic(outdir / "stats.json", result)
    return result


def _capture_path(source) -> Path:
    """The capture an RX queue reads: its own, or its port's (an RSS share of it)."""
    return source.path if isinstance(source, RssShare) else source


def _cluster(opt: RunOptions):
    """A Dask client for ``--cluster`` (the cluster code and Dask are imported only then)."""
    if opt.cluster is None:
        return nullcontext()
    from ..dataplane.cluster import connected
    return connected(opt.cluster, opt.announce, (opt.tls_ca_file, opt.tls_cert, opt.tls_key))


def _tx_position(positions: dict, lcores: Lcores):
    """Several lcores: a record's place in its TX queue's file → its place in port<N>.pcap."""
    def position(lcore: int, port: np.ndarray, index: np.ndarray) -> np.ndarray:
        queue = lcores.tx_queue(lcores.ids[lcore])
        placed = np.empty_like(index)
        for each in np.unique(port).tolist():
            mine = port == each
            placed[mine] = positions[each][queue][index[mine]]
        return placed
    return position


@contextmanager
def _rx_sources(lcores: Lcores, inputs: dict[int, Path], queue_inputs: dict[tuple[int, int], Path],
                notes: list[str], opt: RunOptions):
    """What each configured RX queue reads: its own file; the port's whole capture when
    the port has one queue (with ``--disable-rss``: its queue 0); with several, its RSS share
    of the port's capture (:class:`~l3fwd_sim.dataplane.rss.RssShare`: each queue reads the capture itself). A
    queue without a capture receives nothing. Every capture read is opened once, first
    of all (``OpenCaptures``)."""
    whole: dict[int, Path] = {}                       # port -> its capture, read by its queue(s)
    own: dict[tuple[int, int], Path] = {}             # (port, RX queue) -> that queue's capture
    for port, path in sorted(inputs.items()):
        if lcores.queues.get(port, 0) == 0:
            notes.append(f"{path}: port {port} has no RX queue in --config, so nothing is received from it")
        else:
            whole[port] = path
    for (port, queue), path in queue_inputs.items():
        if queue >= lcores.queues.get(port, 0):
            notes.append(f"{path}: RX queue {queue} of port {port} is not in --config, so nothing is received from it")
        else:
            own[port, queue] = path
    spread = {port: path for port, path in whole.items() if lcores.queues[port] > 1 and not opt.disable_rss}
    for port, path in spread.items():
        if not identity(path)[1]:
            raise SimError(f"{path}: not a regular file (a pipe?); the {lcores.queues[port]} RX queues of port {port} "
                           "each read it (RSS): give a file")
    reopen = "--cluster" if opt.cluster is not None else "--jobs N" if opt.jobs > 1 else None
    captures = OpenCaptures([*whole.values(), *own.values()], reopen, opt.reading)
    sources: dict[tuple[int, int], Path | RssShare] = {}
    try:
        for port, path in whole.items():
            if port in spread:
                shares = rss_shares(path, lcores.queues[port], opt.lookup == "acl", opt.rss_key, opt.reta_size,
                                    captures)
                sources.update({(port, share.queue): share for share in shares})
            else:                                     # one queue, or RSS off (mq_mode NONE): queue 0 gets all
                sources[port, 0] = path
        sources.update(own)
        yield sources, {key: str(source) for key, source in sources.items()}, captures
    finally:
        captures.close()
