"""``run``: pcap files → packet batches → pipeline → TX model → per-port pcaps + stats.

This is the library entry point behind ``l3fwd-sim run``::

    from l3fwd_sim import RunOptions, run, find_inputs
    stats = run(RunOptions(inputs=find_inputs(["pcaps"]), outdir="out"))
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..dataplane.inputs import PortInputs
from ..dataplane.jobs import run_jobs
from ..dataplane.lcore import Lcore, forward_all, prepare_outdir
from ..dataplane.ports import PortConfig, ports_of, run_portmask
from ..dataplane.rx import rx_queue_setup
from ..dataplane.stats import RunStats, write_json_atomic
from ..dataplane.tx import TxModel, account_multi, account_simple
from ..errors import SimError
from . import multi, simple
from .acl import account_acl
from .pipelines import DROP_REASONS
from .routing import AclRoutes, EmRoutes, LpmRoutes, load_routes

LOOKUPS = ("lpm", "em", "fib", "acl")
PIPELINES = {"simple": simple.forward, "multi": multi.forward}
ACL_ALGS = ("scalar", "sse", "avx2", "neon", "altivec", "avx512x16", "avx512x32", "rvv")
MIN_PKT_LEN, MAX_JUMBO_PKT_LEN = 64, 9600     # RTE_ETHER_MIN_LEN, l3fwd's MAX_JUMBO_PKT_LEN


@dataclass
class Forwarding:
    """What a pipeline needs besides the packets: ports and route tables."""
    ports: PortConfig
    lookup: str
    routes: LpmRoutes | EmRoutes | AclRoutes


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
    alg: str | None = None               # l3fwd's --alg: rte_acl's classify method, same results
    eth_dest: dict[int, bytes] = field(default_factory=dict)
    port_mac: dict[int, bytes] = field(default_factory=dict)
    rx_burst: int = 32
    tx_burst: int = 32
    chunk_packets: int = 65536           # super-burst size: a speed knob, never changes output
    jobs: int = 1                        # processes: a speed knob, never changes output
    progress: Callable[[int, int], None] | None = None   # called with (bytes read, total bytes)


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
        rx_queue_setup(opt.max_pkt_len)
    if opt.alg is not None and opt.alg not in ACL_ALGS:
        opt.alg = None                     # as l3fwd: an unknown name means the default method
    if not 1 <= opt.jobs <= 64:
        raise SimError(f"--jobs {opt.jobs}: must be in 1..64")
    for name in ("rx_burst", "tx_burst"):
        value = getattr(opt, name)
        if not 1 <= value <= 512:
            raise SimError(f"--{name.replace('_', '-')} {value}: must be in 1..512")
    # l3fwd's --config names enabled ports only: a capture of a disabled port is not received
    inputs = {p: f for p, f in opt.inputs.items() if opt.portmask is None or opt.portmask >> p & 1}
    notes = [f"{f}: port {p} is not in portmask 0x{opt.portmask:x}, so nothing is received from it"
             for p, f in sorted(opt.inputs.items()) if p not in inputs]
    if not inputs:
        raise SimError(f"no input on a port of portmask 0x{opt.portmask:x}")
    return run_portmask(opt.portmask, inputs), inputs, notes


def pipeline(name: str):
    """The ``forward(batch, setup, timer)`` function of pipeline ``name``."""
    return PIPELINES[name]


def _account(lookup: str, pipeline_name: str):
    """How the path's transmissions reach the TX model: per packet on the simple path;
    on the multi path per same-port run, except for ACL bursts with drops (``account_acl``)."""
    if pipeline_name == "simple":
        return account_simple
    return account_acl if lookup == "acl" else account_multi


def run(opt: RunOptions) -> dict:
    """Forward the inputs as dpdk-l3fwd would; write ``port<N>.pcap`` for every enabled
    port and ``stats.json`` into ``opt.outdir``; return the stats as a dict."""
    started = time.perf_counter()
    portmask, inputs, notes = _validate(opt)
    ports = PortConfig(portmask, opt.eth_dest, opt.port_mac)
    tx_ports = ports_of(portmask)
    stats = RunStats(sorted(inputs), tx_ports, DROP_REASONS)
    stats.warnings.extend(notes)
    tables_started = time.perf_counter()
    routes = load_routes(opt.lookup, ports, opt.rule_ipv4, opt.rule_ipv6, opt.ipv6, stats.warnings)
    stats.add_setup_time("tables", time.perf_counter() - tables_started)
    setup = Forwarding(ports, opt.lookup, routes)
    forward = pipeline(opt.pipeline)
    lcore = Lcore(inputs, opt.rx_burst, lambda batch, timer: forward(batch, setup, timer), tx_ports,
                  prepare_outdir(inputs, opt.outdir, tx_ports), _account(opt.lookup, opt.pipeline),
                  opt.chunk_packets, opt.progress)
    tx_model = TxModel(tx_ports, opt.rx_burst, opt.tx_burst)
    if opt.jobs > 1:
        run_jobs(lcore, opt.jobs, opt.outdir, stats, tx_model)
    else:
        forward_all(lcore, opt.outdir, stats, tx_model)
    tx_model.drain()
    stats.tx_model = tx_model
    stats.elapsed = time.perf_counter() - started
    stats.options = {"portmask": f"0x{portmask:x}", "lookup": opt.lookup, "ipv6": opt.ipv6,
                     "max_pkt_len": opt.max_pkt_len, "alg": opt.alg,
                     "pipeline": opt.pipeline,
                     "rx_burst": opt.rx_burst, "tx_burst": opt.tx_burst,
                     "routes_installed": routes.installed,
                     "inputs": {str(p): str(path) for p, path in sorted(inputs.items())}}
    result = stats.to_dict()
    write_json_atomic(opt.outdir / "stats.json", result)
    return result
