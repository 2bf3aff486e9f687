"""``testpmd``: dpdk-testpmd's forwarding engines on pcap files.

Models ``dpdk-testpmd -l 0,1 --vdev net_pcap0,rx_pcap=…,tx_pcap=… -- --no-flush-rx
--auto-start --forward-mode=MODE --port-topology=… --burst=N`` (one forwarding lcore, one
RX/TX queue per port), byte for byte per TX port (testpmd_fwd_modes.md)::

    from l3fwd_sim.testpmd.run import TestpmdOptions, testpmd_run
    stats = testpmd_run(TestpmdOptions(inputs=find_inputs(["pcaps"]), outdir="out", forward_mode="macswap"))

Streams (config.c ``simple_fwd_config_setup``): the forwarding ports are the portmask's
ports in ascending order; stream i receives on port i and transmits on
``fwd_topology_tx_port_get(i)`` — an index into that list, so a portmask with gaps pairs
its i-th and (i+1)-th ports. icmpecho sets up its own streams (``icmp_echo_config_setup``):
each replies on the port it received on.

The lcore runs its streams round after round, one ``rte_eth_rx_burst`` of up to
``--burst`` packets each (``run_pkt_fwd_on_lcore``), which is ``polling.poll``'s order.
Every topology maps RX ports one-to-one onto TX ports, so each TX port is fed by a single
stream and its output is that stream's input order: ``--burst`` changes no output byte.
net_pcap's TX takes every packet, so nothing is lost at TX (no ``fwd_dropped``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

import numpy as np

from .. import compiled
from ..dataplane.inputs import PortInputs
from ..capture.offline import OpenCaptures
from ..capture.outdir import OutputDir
from ..capture.writers import output_format
from ..dataplane.lcore import Lcore, forward_all
from ..dataplane.ports import MAX_PORTS, PortConfig, ports_of, run_portmask
from ..dataplane.stats import RunStats, write_json_atomic
from ..errors import SimError
from .engines import DROP_REASONS, io_forward, mac_forward, mac_swap
from .five_tuple_swap import five_tuple_swap
from .icmpecho import icmp_echo

MAX_PKT_BURST = 512       # testpmd.h; DEF_PKT_BURST = 32
TOPOLOGIES = ("paired", "chained", "loop")


class Engine(NamedTuple):
    forward: Callable            # (batch, dest, ports) -> reason codes; edits batch.heads in place
    follows_topology: bool       # False: replies go out of the RX port (icmpecho)


ENGINES = {
    "io": Engine(io_forward, True),
    "mac": Engine(mac_forward, True),
    "macswap": Engine(mac_swap, True),
    "5tswap": Engine(five_tuple_swap, True),
    "icmpecho": Engine(icmp_echo, False),
}
FORWARD_MODES = tuple(ENGINES)


@dataclass
class TestpmdOptions(PortInputs):
    """Options of one run, named as dpdk-testpmd names them."""
    forward_mode: str = "io"
    port_topology: str = "paired"
    burst: int = 32
    portmask: int | None = None          # default: the ports that have an input
    eth_peer: dict[int, bytes] = field(default_factory=dict)    # --eth-peer; default 02:00:00:00:00:<port>
    port_mac: dict[int, bytes] = field(default_factory=dict)    # default 02:70:63:61:70:<port> (net_pcap)
    chunk_packets: int = 65536           # super-burst size: a speed knob, never changes output
    progress: Callable[[int, int], None] | None = None
    output_format: str = "auto"          # pcap, pcapng, or auto: pcapng when every input is pcapng


def stream_tx_ports(fwd_ports: list[int], topology: str) -> dict[int, int]:
    """RX port → TX port of each stream, as config.c's ``fwd_topology_tx_port_get``:
    paired (i ↔ i+1 for even i; with an odd count the last port pairs with itself),
    chained (i → i+1, the last back to the first), loop (i → i)."""
    count = len(fwd_ports)

    def tx_index(i: int) -> int:
        if topology == "chained":
            return (i + 1) % count
        if topology == "loop":
            return i
        if i % 2:
            return i - 1
        return i + 1 if i + 1 < count else i
    return {fwd_ports[i]: fwd_ports[tx_index(i)] for i in range(count)}


def _validate(opt: TestpmdOptions) -> int:
    if opt.forward_mode not in ENGINES:
        raise SimError(f"--forward-mode {opt.forward_mode}: not supported (choose from {', '.join(ENGINES)})")
    if opt.port_topology not in TOPOLOGIES:
        raise SimError(f"--port-topology {opt.port_topology}: choose from {', '.join(TOPOLOGIES)}")
    if not 1 <= opt.burst <= MAX_PKT_BURST:
        raise SimError(f"--burst {opt.burst}: must be in 1..{MAX_PKT_BURST}")
    return run_portmask(opt.portmask, opt.inputs)


def _mac_text(mac: bytes) -> str:
    return ":".join(f"{b:02x}" for b in mac)


def testpmd_run(opt: TestpmdOptions) -> dict:
    """Forward the inputs as dpdk-testpmd's ``--forward-mode`` engine would; write
    ``port<N>.pcap`` for every enabled port and ``stats.json`` into ``opt.outdir``;
    return the stats as a dict."""
    started = time.perf_counter()
    portmask = _validate(opt)
    fwd_ports = ports_of(portmask)
    engine = ENGINES[opt.forward_mode]
    topology = opt.port_topology if engine.follows_topology else "loop"
    streams = stream_tx_ports(fwd_ports, topology)
    route = np.full(MAX_PORTS, -1, np.int64)
    route[list(streams)] = list(streams.values())
    ports = PortConfig(portmask, opt.eth_peer, opt.port_mac)
    stats = RunStats(sorted(opt.inputs), fwd_ports, DROP_REASONS)
    if topology == "paired" and len(fwd_ports) % 2:
        stats.warnings.append("port-topology=paired and odd forward ports number, "
                              f"the last port ({fwd_ports[-1]}) will pair with itself (as testpmd warns)")


    def forward(batch, timer):
        with timer("forward"):
            dest = route[batch.in_port]
            reason = engine.forward(batch, dest, ports)
            dest[reason != 0] = -1
        return dest, reason

    captures = OpenCaptures(opt.inputs.values())
    try:
        with compiled.for_inputs(captures.input_bytes), OutputDir(opt.outdir, opt.inputs.values()) as out:
            fmt = output_format(opt.output_format, captures.file_formats)
            lcore = Lcore(sorted(opt.inputs.items()), opt.burst, forward, fwd_ports, captures.nanosecond,
                          chunk_packets=opt.chunk_packets, progress=opt.progress, captures=captures,
                          output_name=f"port{{port}}.{fmt}", output_format=fmt)
            forward_all(lcore, out.stage, stats)
            result = _finish(opt, stats, started, portmask, streams, fmt)
            write_json_atomic(out.stage / "stats.json", result)
            out.publish()
    finally:
        captures.close()
    return result


def _finish(opt: TestpmdOptions, stats: RunStats, started: float, portmask: int, streams: dict[int, int],
            fmt: str) -> dict:
    stats.elapsed = time.perf_counter() - started
    stats.options = {"forward_mode": opt.forward_mode, "port_topology": opt.port_topology,
                     "burst": opt.burst, "portmask": f"0x{portmask:x}", "output_format": fmt,
                     "streams": {str(rx): tx for rx, tx in streams.items()},
                     "eth_peer": {str(p): _mac_text(m) for p, m in sorted(opt.eth_peer.items())},
                     "port_mac": {str(p): _mac_text(m) for p, m in sorted(opt.port_mac.items())},
                     "inputs": {str(p): str(path) for p, path in sorted(opt.inputs.items())}}
    return stats.to_dict()
