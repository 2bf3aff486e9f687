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
from functools import partial
from typing import Callable, NamedTuple

import numpy as np

from .. import compiled
from ..capture.location import Location
from ..dataplane.inputs import PortInputs
from ..capture.offline import OpenCaptures
from ..capture.outdir import OutputDir
from ..capture.writers import output_format
from ..dataplane.lcore import Lcore, forward_all
from ..dataplane.ports import MAX_PORTS, PortConfig, mac_text, ports_of, run_portmask
from ..dataplane.stats import RunStats, write_json_atomic
from ..errors import SimError
from .engines import CODE, DROP_REASONS, io_forward, mac_forward, mac_swap, rx_only
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
    "rxonly": Engine(rx_only, True),
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
    queue_inputs: dict[tuple[int, int], Location] = field(default_factory=dict)   # (port, RX queue) -> capture
    rxq: int = 1                         # --rxq, --txq: queues per port (with queue_inputs)
    txq: int = 1
    flush_rx: bool = False               # testpmd's default: every RX queue drained before forwarding
    nanosecond: bool | None = None       # time stamps of pcap outputs: None = nanoseconds when an input has them
    drops: bool = False                  # OUTDIR/drops.pcapng: every dropped packet as received, with its reason


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
    if opt.forward_mode == "icmpecho" and opt.txq < opt.rxq:
        raise SimError(f"--rxq {opt.rxq} --txq {opt.txq}: icmpecho replies on the RX queue's own TX queue "
                       "(icmp_echo_config_setup), so it needs --txq >= --rxq")
    if opt.queue_inputs:
        return run_portmask(opt.portmask, {port: path for (port, _), path in opt.queue_inputs.items()})
    return run_portmask(opt.portmask, opt.inputs)


def stream_queues(opt: TestpmdOptions, engine: Engine) -> list[int]:
    """The RX queues the streams poll, each sending on the TX queue of the same number
    (config.c): ``rss_fwd_config_setup`` when both --rxq and --txq exceed 1 (queues up to
    the smaller count), icmpecho every RX queue, otherwise queue 0 (``simple_fwd_config_setup``)."""
    if not engine.follows_topology:
        return list(range(opt.rxq))
    return list(range(min(opt.rxq, opt.txq))) if opt.rxq > 1 and opt.txq > 1 else [0]


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
    stats = RunStats(sorted({*opt.inputs, *(p for p, _ in opt.queue_inputs)}), fwd_ports, DROP_REASONS)
    if topology == "paired" and len(fwd_ports) % 2:
        stats.warnings.append("port-topology=paired and odd forward ports number, "
                              f"the last port ({fwd_ports[-1]}) will pair with itself (as testpmd warns)")


    def forward(batch, timer, decisions=None):       # (no lookup to note in decisions)
        with timer("forward"):
            dest = route[batch.in_port]
            reason = engine.forward(batch, dest, ports)
            dest[reason != 0] = -1
        return dest, reason

    def flushed(batch, timer, decisions=None):
        return np.full(len(batch), -1, np.int64), np.full(len(batch), CODE["rx_flushed"], np.uint8)

    # per TX queue number, the captures its streams read (their RX queue's), its files' names and the queue
    if opt.queue_inputs:
        polled = range(opt.rxq) if opt.flush_rx else stream_queues(opt, engine)
        levels = [({p: f for (p, q), f in opt.queue_inputs.items() if q == queue and portmask >> p & 1},
                   f"port{{port}}.q{queue}", queue) for queue in polled]
    else:
        levels = [(opt.inputs, "port{port}", 0)]
    inputs = [path for level, _, _ in levels for path in level.values()]
    drops = _Drops(stats, opt, inputs) if opt.drops else None
    captures = OpenCaptures(inputs, reading=opt.reading)
    try:
        with compiled.for_inputs(captures.input_bytes), OutputDir(opt.outdir, inputs) as out:
            fmt = output_format(opt.output_format, captures.file_formats)
            nanosecond = captures.nanosecond if opt.nanosecond is None else opt.nanosecond
            for level, name, queue in levels:
                lcore = Lcore(sorted(level.items()), opt.burst, flushed if opt.flush_rx else forward, fwd_ports,
                              nanosecond, chunk_packets=opt.chunk_packets, progress=opt.progress,
                              captures=captures, output_name=f"{name}.{fmt}", output_format=fmt,
                              tracing=drops and drops.tracing(queue, len(level)), release=opt.dpdk)
                forward_all(lcore, out.stage, stats)
            if drops:
                drops.finish(out.stage, nanosecond)
            stats.note_conveniences(captures.conveniences())
            result = _finish(opt, stats, started, portmask, streams, fmt)
            write_json_atomic(out.stage / "stats.json", result)
            out.publish()
    finally:
        captures.close()
    return result


class _Drops:
    """``--drops``: each stream's packets traced (no lookup to describe, no detail beyond
    the reason) into :class:`~l3fwd_sim.dataplane.annotations.Annotations`."""

    def __init__(self, stats: RunStats, opt: TestpmdOptions, inputs: list):
        from ..dataplane.annotations import Annotations, check_annotations
        from ..dataplane.trace import Describe, RecordSink
        check_annotations(False, True, None, opt.output_format, inputs)
        self.describe = Describe(lambda records, lines: None, lambda records: ([], np.zeros(len(records), np.intp)),
                                 stats.reasons, ())
        self.annotations = Annotations(self.describe, False, True, bool(opt.queue_inputs))
        self.open_sink = partial(RecordSink, describe=self.describe, trace_file=False, keep=self.annotations.keep)
        self.stats, self.opt = stats, opt

    def tracing(self, queue: int, inputs: int):
        """The tracing of the streams that poll RX queue ``queue`` of ``inputs`` ports."""
        from ..dataplane.trace import Tracing
        return Tracing(None, 0, [queue] * inputs, self.describe, open_sink=self.open_sink)

    def finish(self, outdir, nanosecond: bool) -> None:
        from ..dataplane.annotations import DROPS_FILE
        opt = self.opt
        self.annotations.finish({}, self.stats.rx_ports, lambda port, queue: opt.queue_inputs[port, queue]
                                if opt.queue_inputs else opt.inputs[port], nanosecond, outdir / DROPS_FILE)


def _finish(opt: TestpmdOptions, stats: RunStats, started: float, portmask: int, streams: dict[int, int],
            fmt: str) -> dict:
    stats.elapsed = time.perf_counter() - started
    stats.options = {"dpdk": opt.dpdk.name, "forward_mode": opt.forward_mode, "port_topology": opt.port_topology,
                     "burst": opt.burst, "portmask": f"0x{portmask:x}", "output_format": fmt,
                     "streams": {str(rx): tx for rx, tx in streams.items()},
                     "eth_peer": {str(p): mac_text(m).lower() for p, m in sorted(opt.eth_peer.items())},
                     "port_mac": {str(p): mac_text(m).lower() for p, m in sorted(opt.port_mac.items())},
                     "inputs": {str(p): str(path) for p, path in sorted(opt.inputs.items())}}
    return stats.to_dict()
