"""``dpdk-l3fwd [EAL options] -- [l3fwd options]``, verbatim: l3fwd's ``main()`` over
net_pcap ports (real_command_lines.md).

The EAL part gives the lcores and the ports (``eal/``), ``parse_args`` the rest
(``l3fwd/args.py``); the run itself is :func:`~l3fwd_sim.l3fwd.run.run`, told the vdevs so
that it configures and starts the ports as l3fwd does (queue counts, ``--relax-rx-offload``,
``--parse-ptype``). Its outputs are exactly the ``tx_pcap`` files (pcaps; see
``eal/net_pcap.py`` for their time stamps), put in place as one all-or-nothing set. Two differences from the
real thing, both deliberate: the run ends at the end of the inputs (l3fwd waits for
Ctrl-C), and a refused start leaves every file as it was (net_pcap has already created
empty tx files by then).

The build variant, a compile-time choice in DPDK, comes from ``L3FWD_SIM_PIPELINE``
(``multi``, the x86 build, or ``simple``); ``L3FWD_SIM_STATS=FILE`` adds the stats JSON.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..capture.location import as_location
from ..capture.reading import Reading
from ..dataplane.ports import PortConfig, mac_text
from ..dataplane.queues import L3FWD_DEFAULT_CONFIG, lcores_of, parse_config
from ..eal.args import Eal, parse_eal, split_argv
from ..dataplane.trace import TRACE_FILE
from ..dataplane.stats import write_json_atomic
from ..eal.net_pcap import TxFiles, tx_without_device
from ..errors import SimError
from ..numbers import brief
from ..releases import Release, release
from .args import L3fwdArgs, parse_args
from .event import event_mode_setup
from .routing import MISSING_RULE_FILES
from .run import PIPELINES, RunOptions, run


@dataclass
class Launch:
    """A finished ``dpdk-l3fwd`` run: its stats and the console lines l3fwd would print."""
    stats: dict
    console: list[str]


def dpdk_l3fwd(argv: list[str], pipeline: str = "multi", stats_file: str | None = None,
               dpdk: Release | None = None, trace_file: str | None = None) -> Launch:
    """Run a dpdk-l3fwd command line (without the program name) as release ``dpdk``
    runs it (default: v26.07, or ``L3FWD_SIM_DPDK``); ``trace_file``: also every packet's
    trace line there (``run --trace all``)."""
    dpdk = dpdk or release()
    if pipeline not in PIPELINES:
        raise SimError(f"L3FWD_SIM_PIPELINE={brief(pipeline)}: choose simple or multi (DPDK's per-packet "
                       "build or its x86 multi-buffer build)")
    eal_argv, app_argv = split_argv(argv)
    eal = parse_eal(eal_argv)
    args = parse_args(app_argv, dpdk)
    if args.event_mode:
        event_mode_setup(args, eal)              # refuses, as real l3fwd over net_pcap does
    tx_files = TxFiles(eal.vdevs, {"stats.json": stats_file, TRACE_FILE: trace_file})
    several = len(eal.lcores) > 1          # one TX queue per lcore: the run's files are per TX queue

    def sent(port: int, queue: int) -> Path:
        return out / (f"port{port}.q{queue}.pcap" if several else f"port{port}.pcap" if queue == 0 else "none")

    with tx_files.scratch() as scratch, eal.explaining_ports():
        out = scratch / "out"
        stats = run(RunOptions(
            inputs={}, outdir=out, pipeline=pipeline, output_format="pcap", reading=Reading.LIBPCAP, dpdk=dpdk,
            queue_inputs={(port, queue): as_location(path) for port, vdev in enumerate(eal.vdevs)
                          for queue, path in enumerate(vdev.rx_pcap)},
            lcore_mask=eal.lcores, vdevs=eal.vdevs, merge=False,       # real l3fwd writes no merged file
            trace="all" if trace_file else None,
            **{**args.run_options(), "config": args.config or L3FWD_DEFAULT_CONFIG}))
        tx_without_device(stats, len(eal.vdevs))
        stats["warnings"][:0] = eal.warnings
        if stats_file:                              # the stats file as corrected
            write_json_atomic(out / "stats.json", stats)
        tx_files.publish(sent, out, scratch)
    return Launch(stats, _console(args, eal, stats))


def _console(args: L3fwdArgs, eal: Eal, stats: dict) -> list[str]:
    """The lines of l3fwd's console that carry information: option notes, the rule-file
    note, how each port and lcore was set up."""
    lines = [*eal.console, *args.console]
    if MISSING_RULE_FILES in stats["warnings"]:
        lines.append(f"L3FWD: {MISSING_RULE_FILES}")
    ports = PortConfig(args.portmask, args.eth_dest)
    lcores = lcores_of(parse_config(args.config or L3FWD_DEFAULT_CONFIG), args.portmask, eal.lcores, len(eal.vdevs))
    for port in range(len(eal.vdevs)):
        if not ports.is_enabled(port):
            lines.append(f"Skipping disabled port {port}")
            continue
        dest, address = ports.macs(port)
        txq = " ".join(f"txq={lcore},{queue},0" for queue, lcore in enumerate(lcores.ids))
        lines.append(f"Initializing port {port} ... Creating queues: nb_rxq={lcores.queues.get(port, 0)} "
                     f"nb_txq={len(lcores.ids)}...  Address:{mac_text(address)}, Destination:{mac_text(dest)}, {txq}")
    for lcore in lcores.ids:
        queues = " ".join(f"rxq={q.port},{q.queue},0" for q in lcores.rx[lcore])
        lines.append(f"Initializing rx queues on lcore {lcore} ... {queues}".rstrip())
    for lcore in lcores.ids:
        if not lcores.rx[lcore]:
            lines.append(f"L3FWD: lcore {lcore} has nothing to do")
    return lines
