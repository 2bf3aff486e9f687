"""``l3fwd-sim testpmd``."""
from __future__ import annotations

import click

from ..dataplane.inputs import find_inputs
from ..dataplane.ports import parse_port_mac, parse_portmask
from ..testpmd.run import FORWARD_MODES, TOPOLOGIES, TestpmdOptions, testpmd_run
from ..releases import release
from .options import (INPUTS_AUTO, OUTPUT_DIR, warn_now, dpdk_option, end_progress, output_format_option, print_stats,
                      progress_printer)
from .values import Int
from .report import check_report_dir, report_flag, write_run_report


@click.command("testpmd", short_help="Forward captures as dpdk-testpmd's engines.")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", "outdir", required=True, type=OUTPUT_DIR,
              help="Output directory: port<N>.pcap per enabled port, stats.json.")
@click.option("--forward-mode", type=click.Choice(FORWARD_MODES), default="io", show_default=True,
              help="testpmd's forwarding engine.")
@click.option("--port-topology", type=click.Choice(TOPOLOGIES), default="paired", show_default=True,
              help="Which port each port's stream transmits on (icmpecho always replies on the RX port).")
@click.option("--burst", type=Int(0, 1 << 32), default=32, show_default=True, help="Packets per rx burst (1..512).")
@click.option("--eth-peer", "eth_peer", multiple=True, metavar="PORT,MAC",
              help="Peer MAC of PORT, the destination mac mode writes (default 02:00:00:00:00:PORT).")
@click.option("--port-mac", "port_mac", multiple=True, metavar="PORT,MAC",
              help="MAC address of PORT (default 02:70:63:61:70:PORT, as net_pcap reports).")
@click.option("-p", "--portmask", metavar="PORTMASK", help="Hex mask of forwarding ports (default: ports with an input).")
@click.option("--drops", is_flag=True, help="Write OUTDIR/drops.pcapng: every dropped packet as received, one "
              "interface per RX port, each with its drop reason as a comment.")
@output_format_option(INPUTS_AUTO)
@click.option("--quiet", is_flag=True, help="Print nothing but errors, and warnings that input was lost or left out.")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as JSON on stdout.")
@report_flag
@dpdk_option
def command(inputs, outdir, forward_mode, port_topology, burst, eth_peer, port_mac, portmask,
                    drops, output_format, quiet, as_json, report, dpdk):
    """Forward INPUT pcaps (a directory of port<N>.pcap, N=FILE, or one capture: port 0's) as dpdk-testpmd's
    io, mac, macswap, 5tswap or icmpecho engine would."""
    if report:
        check_report_dir(outdir)
    found = find_inputs(list(inputs), unread := [])
    warn_now(unread)
    stats = testpmd_run(TestpmdOptions(
        inputs=found,
        outdir=outdir,
        forward_mode=forward_mode,
        port_topology=port_topology,
        burst=burst,
        portmask=None if portmask is None else parse_portmask(portmask),
        eth_peer=dict(parse_port_mac(x, "--eth-peer") for x in eth_peer),
        port_mac=dict(parse_port_mac(x, "--port-mac") for x in port_mac),
        output_format=output_format,
        drops=drops,
        progress=(bar := progress_printer(quiet or as_json)),
        dpdk=release(dpdk),
    ))
    end_progress(bar)
    if report:
        write_run_report(outdir)
    print_stats(stats, quiet, as_json)


