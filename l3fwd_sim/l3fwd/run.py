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
from ..dataplane.stats import RunStats, write_json_atomic
from ..dataplane.tx import TxModel, account_multi, account_simple
from ..errors import SimError
from .pipelines import Forwarding, pipeline
from .routing import load_routes

LOOKUPS = ("lpm", "em", "fib")
PIPELINES = ("simple", "multi")


@dataclass
class RunOptions(PortInputs):
    """Options of one run, named as dpdk-l3fwd names them."""
    portmask: int | None = None          # default: the ports that have an input
    lookup: str = "lpm"
    pipeline: str = "multi"
    rule_ipv4: Path | None = None
    rule_ipv6: Path | None = None
    ipv6: bool = False                   # l3fwd's --ipv6: EM populates the IPv6 flows only
    eth_dest: dict[int, bytes] = field(default_factory=dict)
    port_mac: dict[int, bytes] = field(default_factory=dict)
    rx_burst: int = 32
    tx_burst: int = 32
    chunk_packets: int = 65536           # super-burst size: a speed knob, never changes output
    jobs: int = 1                        # processes: a speed knob, never changes output
    progress: Callable[[int, int], None] | None = None   # called with (bytes read, total bytes)


def _validate(opt: RunOptions) -> int:
    if opt.lookup not in LOOKUPS:
        raise SimError(f"--lookup {opt.lookup}: not supported (choose from {', '.join(LOOKUPS)})")
    if opt.pipeline not in PIPELINES:
        raise SimError(f"--pipeline {opt.pipeline}: choose simple or multi")
    if not 1 <= opt.jobs <= 64:
        raise SimError(f"--jobs {opt.jobs}: must be in 1..64")
    for name in ("rx_burst", "tx_burst"):
        value = getattr(opt, name)
        if not 1 <= value <= 512:
            raise SimError(f"--{name.replace('_', '-')} {value}: must be in 1..512")
    return run_portmask(opt.portmask, opt.inputs)


def run(opt: RunOptions) -> dict:
    """Forward the inputs as dpdk-l3fwd would; write ``port<N>.pcap`` for every enabled
    port and ``stats.json`` into ``opt.outdir``; return the stats as a dict."""
    started = time.perf_counter()
    portmask = _validate(opt)
    ports = PortConfig(portmask, opt.eth_dest, opt.port_mac)
    tx_ports = ports_of(portmask)
    stats = RunStats(sorted(opt.inputs), tx_ports)
    tables_started = time.perf_counter()
    routes = load_routes(opt.lookup, ports, opt.rule_ipv4, opt.rule_ipv6, opt.ipv6, stats.warnings)
    stats.add_setup_time("tables", time.perf_counter() - tables_started)
    setup = Forwarding(ports, opt.lookup, routes)
    forward = pipeline(opt.pipeline)
    lcore = Lcore(opt.inputs, opt.rx_burst, lambda batch, timer: forward(batch, setup, timer), tx_ports,
                  prepare_outdir(opt.inputs, opt.outdir, tx_ports),
                  account_multi if opt.pipeline == "multi" else account_simple, opt.chunk_packets, opt.progress)
    tx_model = TxModel(tx_ports, opt.rx_burst, opt.tx_burst)
    if opt.jobs > 1:
        run_jobs(lcore, opt.jobs, opt.outdir, stats, tx_model)
    else:
        forward_all(lcore, opt.outdir, stats, tx_model)
    tx_model.drain()
    stats.tx_model = tx_model
    stats.elapsed = time.perf_counter() - started
    stats.options = {"portmask": f"0x{portmask:x}", "lookup": opt.lookup, "ipv6": opt.ipv6,
                     "pipeline": opt.pipeline,
                     "rx_burst": opt.rx_burst, "tx_burst": opt.tx_burst,
                     "routes_installed": routes.installed,
                     "inputs": {str(p): str(path) for p, path in sorted(opt.inputs.items())}}
    result = stats.to_dict()
    write_json_atomic(opt.outdir / "stats.json", result)
    return result
