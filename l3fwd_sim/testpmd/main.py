"""``dpdk-testpmd [EAL options] -- [testpmd options]``, verbatim, non-interactive, over
net_pcap ports (real_command_lines.md, testpmd_fwd_modes.md).

* Ports and queues come from the ``--vdev`` lines (``eal/``); every port is configured
  with ``--rxq`` RX and ``--txq`` TX queues, each a ``rx_pcap``/``tx_pcap`` file.
* Streams (config.c): RX queue q of a forwarding port sends on TX queue q of its
  topology peer — queue 0 only, unless both ``--rxq`` and ``--txq`` exceed 1
  (``rss_fwd_config_setup``); icmpecho answers on each RX queue's own port and queue.
  Each TX queue is fed by one stream, so ``--nb-cores`` changes no output byte.
* The rx_pcap files are read as libpcap reads them (``capture/reading.py``); a vdev whose
  file libpcap cannot open fails to probe and is no port (``eal/net_pcap.py``).
* Without ``--no-flush-rx``, testpmd drains every RX queue before forwarding starts
  (``flush_fwd_rx_queues``): over net_pcap that reads the whole capture, so every
  tx_pcap stays empty. Modelled as such (each packet dropped as ``rx_flushed``). The real
  drain stops after one second: a capture too large to be read in a second would be
  forwarded in part; l3fwd-sim drains it whole.
"""
from __future__ import annotations

from ..capture.location import as_location
from ..capture.reading import Reading
from ..dataplane.ports import PortConfig, mac_text, ports_of
from ..eal.args import parse_eal, split_argv
from ..eal.net_pcap import TxFiles
from ..errors import SimError
from ..releases import Release, release
from .args import TestpmdArgs, parse_args
from .run import TestpmdOptions, stream_queues, stream_tx_ports, ENGINES, testpmd_run

FLUSHED = ("every RX queue was drained before forwarding started (testpmd's flush_fwd_rx_queues), so nothing "
           "was forwarded: add --no-flush-rx")


def dpdk_testpmd(argv: list[str], stats_file: str | None = None, dpdk: Release | None = None):
    """Run a dpdk-testpmd command line (without the program name) as release ``dpdk``
    runs it (default: v26.07, or ``L3FWD_SIM_DPDK``); the stats and the console lines."""
    dpdk = dpdk or release()
    eal_argv, app_argv = split_argv(argv)
    eal = parse_eal(eal_argv)
    ports = len(eal.vdevs)
    if not ports:
        raise SimError(f"dpdk-testpmd: no --vdev net_pcapN,...: no port to forward on{eal.probe_note()}")
    forwarding_lcores = len(eal.lcores) - 1                     # the main lcore only runs the console
    args = parse_args(app_argv, ports, min(v.rx_queues for v in eal.vdevs), min(v.tx_queues for v in eal.vdevs),
                      forwarding_lcores)
    if forwarding_lcores == 0:
        raise SimError("No cores defined for forwarding (testpmd needs a second lcore: e.g. -l 0,1)")
    fwd_ports = [p for p in ports_of(args.portmask if args.portmask is not None else (1 << ports) - 1) if p < ports]
    fwd_ports = fwd_ports[:args.nb_ports or len(fwd_ports)]
    if not fwd_ports:
        raise SimError("dpdk-testpmd: --portmask selects no existing port")
    tx_files = TxFiles(eal.vdevs, {"stats.json": stats_file})
    with tx_files.scratch() as scratch:
        out = scratch / "out"
        stats = testpmd_run(TestpmdOptions(
            inputs={}, outdir=out, forward_mode=args.forward_mode, port_topology=args.port_topology,
            burst=args.burst, portmask=sum(1 << p for p in fwd_ports), eth_peer=args.eth_peer,
            queue_inputs={(port, queue): as_location(path) for port in fwd_ports
                          for queue, path in enumerate(eal.vdevs[port].rx_pcap) if queue < args.rxq},
            rxq=args.rxq, txq=args.txq, flush_rx=args.flush_rx, output_format="pcap", reading=Reading.LIBPCAP,
            dpdk=dpdk))
        stats["warnings"][:0] = eal.warnings
        if args.flush_rx:
            stats["warnings"].append(FLUSHED)
        tx_files.publish(lambda port, queue: out / f"port{port}.q{queue}.pcap", out, scratch)
    return stats, [*eal.console, *_console(args, fwd_ports)]


def _console(args: TestpmdArgs, fwd_ports: list[int]) -> list[str]:
    """testpmd's option notes and its forwarding configuration (``pkt_fwd_config_display``)."""
    engine = ENGINES[args.forward_mode]
    topology = stream_tx_ports(fwd_ports, args.port_topology if engine.follows_topology else "loop")
    queues = stream_queues(args, engine)
    streams = [(port, queue) for queue in queues for port in fwd_ports]
    cores = min(args.nb_cores, len(streams))
    lines = [*args.console, f"{args.forward_mode} packet forwarding - ports={len(fwd_ports)} - cores={cores} - "
                            f"streams={len(streams)}"]
    peers = PortConfig(0, args.eth_peer)
    share, extra = divmod(len(streams), cores)
    first = 0
    for core in range(cores):
        count = share + (core >= cores - extra)          # setup_fwd_config_of_each_lcore: the last ones take more
        lines.append(f"Logical Core {core + 1} forwards packets on {count} streams:")
        for port, queue in streams[first:first + count]:
            lines.append(f"  RX P={port}/Q={queue} -> TX P={topology[port]}/Q={queue} "
                         f"peer={mac_text(peers.macs(topology[port])[0])}")
        first += count
    return lines
