"""``dpdk-l3fwd-graph [EAL options] -- [options]``, verbatim: l3fwd-graph's ``main()``
over net_pcap ports (l3fwd_graph.md).

The EAL part gives the lcores (the first, or ``--main-lcore``, is the main lcore: it
only prints statistics) and the ports; ``args.py`` reads the rest; the run is
:func:`~l3fwd_sim.graph.run.run_graph`. Its outputs are exactly the ``tx_pcap`` files —
TX queue K of a port is what worker graph K sent — put in place as one all-or-nothing
set. As with ``dpdk-l3fwd``: the run ends at the end of the inputs (the real program
waits for Ctrl-C), and a refused start leaves every file as it was.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..capture.location import as_location
from ..capture.reading import Reading
from ..dataplane.ports import PortConfig, mac_text, ports_of
from ..eal.args import Eal, parse_eal, split_argv
from ..eal.net_pcap import TxFiles
from .args import GraphArgs, parse_args
from ..releases import Release, release
from .run import GraphOptions, check_release, run_graph
from .stats import format_cluster_table

RSS_REQUESTED = 0xA38C          # RTE_ETH_RSS_IP, which net_pcap cannot hash: configured 0


@dataclass
class Launch:
    """A finished ``dpdk-l3fwd-graph`` run: its stats and the console lines it printed."""
    stats: dict
    console: list[str]


def dpdk_l3fwd_graph(argv: list[str], stats_file: str | None = None, dpdk: Release | None = None) -> Launch:
    """Run a dpdk-l3fwd-graph command line (without the program name); ``dpdk``: the
    release asked for (default ``L3FWD_SIM_DPDK``, else v26.07: the only one modelled)."""
    check_release(dpdk or release())
    eal_argv, app_argv = split_argv(argv)
    eal = parse_eal(eal_argv)
    args = parse_args(app_argv)
    tx_files = TxFiles(eal.vdevs, {"stats.json": stats_file})
    routes: list[str] = []
    with tx_files.scratch() as scratch, eal.explaining_ports():
        out = scratch / "out"
        stats = run_graph(GraphOptions(
            inputs={}, outdir=out, reading=Reading.LIBPCAP, dpdk=dpdk or release(), output_format="pcap", per_queue=True,
            merge=False,
            queue_inputs={(port, queue): as_location(path) for port, vdev in enumerate(eal.vdevs)
                          for queue, path in enumerate(vdev.rx_pcap)},
            portmask=args.portmask, config=args.config, lcores=eal.lcores, main_lcore=eal.main_lcore,
            vdevs=eal.vdevs, eth_dest=args.eth_dest, max_pkt_len=args.max_pkt_len, console=routes,
            pcap_trace=(args.pcap_num_cap, args.pcap_file_name) if args.pcap_enable else None))
        stats["warnings"][:0] = eal.warnings
        tx_files.publish(lambda port, queue: out / f"port{port}.q{queue}.pcap", out, scratch)
    return Launch(stats, _console(args, eal, stats, routes))


def _console(args: GraphArgs, eal: Eal, stats: dict, routes: list[str]) -> list[str]:
    """The lines of the real console that carry information, in its order: the option
    notes, how each port and lcore was set up, the routes, the graphs, the statistics
    table (as printed last), the exit."""
    lines = [*eal.console, *args.console]
    ports = PortConfig(args.portmask, args.eth_dest)
    graphs = {g["lcore"]: name for name, g in stats["graph"]["graphs"].items()}
    rx_queues = {}
    for q in args.config:
        rx_queues.setdefault(q.lcore, []).append(q)
    for port in range(len(eal.vdevs)):
        if not args.portmask >> port & 1:
            lines.append(f"Skipping disabled port {port}")
            continue
        dest, address = ports.macs(port)
        lines += [f"Initializing port {port} ... Creating queues: nb_rxq={sum(q.port == port for q in args.config)} "
                  f"nb_txq={len(eal.lcores)}... ",
                  f"Port {port} modified RSS hash function based on hardware support,requested:{RSS_REQUESTED:#x} "
                  "configured:0",
                  f" Address:{mac_text(address)}, Destination:{mac_text(dest)}, "
                  + " ".join(f"txq={lcore},{queue},0" for queue, lcore in enumerate(eal.lcores))]
    for lcore in eal.lcores:
        queues = " ".join(f"rxq={q.port},{q.queue},0" for q in rx_queues.get(lcore, []))
        lines.append(f"Initializing rx queues on lcore {lcore} ... {queues}".rstrip())
    lines.append("Checking link statusDone")
    lines += [f"Port {port} Link up at 10 Gbps FDX Fixed None" for port in ports_of(args.portmask)
              if port < len(eal.vdevs)]
    lines += routes
    for lcore in eal.lcores:
        if lcore == eal.main_lcore:
            continue
        lines.append(f"L3FWD_GRAPH: Entering main loop on lcore {lcore}, graph {graphs[lcore]}" if lcore in graphs
                     else f"L3FWD_GRAPH: Lcore {lcore} has nothing to do")
    lines += format_cluster_table(stats["graph"]["nodes"])
    lines += [f"Closing port {port}... Done" for port in ports_of(args.portmask) if port < len(eal.vdevs)]
    lines.append("Bye...")
    return lines
