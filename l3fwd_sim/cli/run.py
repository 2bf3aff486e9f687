"""``l3fwd-sim run``."""
from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from ..dataplane.inputs import find_rx_queues
from ..dataplane.ports import parse_port_mac, parse_portmask
from ..dataplane.rss import parse_rss_key
from ..errors import SimError
from ..l3fwd.run import PIPELINES, RunOptions, run
from ..l3fwd.args import DEFAULT_PKT_BURST, parse_pkt_burst, refuse_unknown
from ..releases import OPTION_ROWS, release
from . import tell
from .options import (INPUTS_AUTO, warn_now, OUTPUT_DIR, check_app_options, dpdk_option, given_options, l3fwd_app_options,
                      end_progress, lookup_method, output_format_option, print_stats, progress_printer, table_options)
from .report import check_report_dir, report_flag, write_run_report
from .values import Int


def trace_count(text: str | None) -> int | str | None:
    """``--trace N|all``."""
    if text is None or text == "all":
        return text
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise SimError(f"--trace {text!r}: give a number of packets or 'all'")
    return int(text)


# what `run --app graph` takes besides its inputs and -o: the options that mean the same for dpdk-l3fwd-graph
GRAPH_OPTIONS = ("app_name", "inputs", "outdir", "portmask", "config", "eth_dest", "port_mac", "max_pkt_len", "no_merge",
                 "per_queue", "output_format", "quiet", "as_json", "report")


@click.command("run", short_help="Forward captures as dpdk-l3fwd or dpdk-l3fwd-graph.")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--app", "app_name", type=click.Choice(("l3fwd", "graph")), default="l3fwd", show_default=True,
              help="The forwarder: dpdk-l3fwd, or dpdk-l3fwd-graph (built-in routes, graph nodes; docs/graph.md).")
@click.option("-o", "--output", "outdir", required=True, type=OUTPUT_DIR,
              help="Output directory: port<N>.pcap per enabled port, stats.json.")
@table_options("Hex mask of enabled ports (default: ports with an input).")
@click.option("--pipeline", type=click.Choice(PIPELINES), default="multi", show_default=True,
              help="simple = DPDK's per-packet path; multi = x86 multi-buffer path.")
@click.option("--eth-dest", "eth_dest", multiple=True, metavar="PORT,MAC",
              help="Destination MAC for packets sent out of PORT (default 02:00:00:00:00:PORT).")
@click.option("--port-mac", "port_mac", multiple=True, metavar="PORT,MAC",
              help="MAC address of PORT, written as source MAC (default 02:70:63:61:70:PORT).")
@click.option("--rx-burst", default="32", show_default=True, metavar="N",
              help="Packets per rx burst (1..512; 0 or more than 512 keep 32, as l3fwd does).")
@click.option("--tx-burst", default="32", show_default=True, metavar="N",
              help="Direct-send threshold (1..512; 0 or more than 512 keep 32, as l3fwd does).")
@click.option("--max-pkt-len", type=Int(0, 1 << 32), help="l3fwd's --max-pkt-len (64..9600); above 2048 l3fwd cannot start "
              "over net_pcap. Frames over 2048 bytes are dropped on receive either way.")
@click.option("--alg", metavar="NAME", help="l3fwd's --alg: rte_acl's classify method (no effect on results).")
@click.option("--config", "config", metavar='"(PORT,QUEUE,LCORE),..."',
              help="l3fwd's --config: which lcore polls which RX queue, in order (default: one lcore, "
                   "queue 0 of every port with input). Inputs port<N>.q<Q>.pcap (or N.Q=FILE) feed RX queue Q.")
@click.option("--rss-key", metavar="HEX", help="Toeplitz key for spreading a port's capture over its RX "
              "queues (default the common 40-byte 6d5a56da...beac01fa).")
@click.option("--reta-size", type=Int(0, 1 << 32), default=128, show_default=True, help="RSS redirection table entries.")
@click.option("--jobs", type=Int(0, 1 << 32), default=1, show_default=True,
              help="Processes for one run (output identical to --jobs 1).")
@click.option("--per-queue", "per_queue", is_flag=True,
              help="Several lcores: also write each TX queue's file port<N>.q<K>.pcap (what dpdk-l3fwd's tx_pcap "
                   "files hold) beside their merge port<N>.pcap.")
@click.option("--no-merge", "no_merge", is_flag=True,
              help="Several lcores: write only the per-TX-queue files port<N>.q<K>.pcap (as dpdk-l3fwd does), "
                   "not their merge port<N>.pcap.")
@click.option("--cluster", metavar="ADDRESS|local:N",
              help="Run the chunks as Dask tasks: on the scheduler at ADDRESS (tls://host:8786 with the three "
                   "--tls- files, or tcp://host:8786: whoever reaches it runs code as its workers), or on a "
                   "LocalCluster of N worker processes on loopback (needs the [cluster] extra; output identical).")
@click.option("--tls-ca-file", type=click.Path(path_type=Path), metavar="FILE",
              help="--cluster tls://...: the cluster's CA certificate (PEM), which signed the scheduler's.")
@click.option("--tls-cert", type=click.Path(path_type=Path), metavar="FILE",
              help="--cluster tls://...: this client's certificate (PEM), signed by the cluster's CA.")
@click.option("--tls-key", type=click.Path(path_type=Path), metavar="FILE",
              help="--cluster tls://...: the private key of --tls-cert (PEM, no pass phrase).")
@click.option("--trace", metavar="N|all", help="Write OUTDIR/trace.jsonl: what happened to each of the first N "
              "received packets (per lcore), or to every packet.")
@click.option("--annotate", is_flag=True, help="pcapng outputs whose every packet carries its decision as a comment "
              "(rx port and record, table, rule FILE:LINE, next hop): Wireshark's frame.comment.")
@click.option("--drops", is_flag=True, help="Write OUTDIR/drops.pcapng: every dropped packet as received, one "
              "interface per RX port, each with its drop reason as a comment.")
@output_format_option(INPUTS_AUTO)
@click.option("--quiet", is_flag=True, help="Print nothing but errors, and warnings that input was lost or left out.")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as JSON on stdout.")
@report_flag
@dpdk_option
@l3fwd_app_options
def command(app_name, inputs, outdir, portmask, lookup, lpm_flag, em_flag, ipv6, rule_ipv4, rule_ipv6, pipeline,
                eth_dest, port_mac, rx_burst, tx_burst, max_pkt_len, alg, config, rss_key, reta_size, jobs, per_queue, no_merge, cluster,
                tls_ca_file, tls_cert, tls_key, trace, annotate, drops, output_format, quiet, as_json, report, dpdk,
                **app):
    """Forward INPUT pcaps (a directory of port<N>.pcap, N=FILE, or one capture: port 0's)
    as dpdk-l3fwd would."""
    if report:
        check_report_dir(outdir)
    if app_name == "graph":
        stats = run_graph_app(inputs, outdir, portmask, config, eth_dest, port_mac, max_pkt_len, per_queue,
                              no_merge, output_format, bar := progress_printer(quiet or as_json))
        end_progress(bar)
        if report:
            write_run_report(outdir)
        print_stats(stats, quiet, as_json)
        return
    dpdk = release(dpdk)
    refuse_unknown(given_options(OPTION_ROWS), dpdk)
    lookup = lookup_method(lookup, lpm_flag, em_flag)
    notes = check_app_options(app, config is not None)
    rx_burst, rx_note = parse_pkt_burst(rx_burst, True, DEFAULT_PKT_BURST)
    tx_burst, tx_note = parse_pkt_burst(tx_burst, False, DEFAULT_PKT_BURST)
    rx_queues = find_rx_queues(list(inputs), unread := [])
    warn_now(unread)
    options = RunOptions(
        inputs={port: path for (port, queue), path in rx_queues.items() if queue is None},
        queue_inputs={key: path for key, path in rx_queues.items() if key[1] is not None},
        config=config,
        **({"rss_key": parse_rss_key(rss_key)} if rss_key else {}),
        reta_size=reta_size,
        outdir=outdir,
        portmask=None if portmask is None else parse_portmask(portmask),
        lookup=lookup,
        ipv6=ipv6,
        pipeline=pipeline,
        rule_ipv4=rule_ipv4,
        rule_ipv6=rule_ipv6,
        eth_dest=dict(parse_port_mac(x, "--eth-dest") for x in eth_dest),
        port_mac=dict(parse_port_mac(x, "--port-mac") for x in port_mac),
        rx_burst=rx_burst,
        tx_burst=tx_burst,
        max_pkt_len=max_pkt_len,
        alg=alg,
        jobs=jobs,
        merge=not no_merge,
        per_queue=per_queue,
        cluster=cluster,
        tls_ca_file=tls_ca_file,
        tls_cert=tls_cert,
        tls_key=tls_key,
        trace=trace_count(trace),
        annotate=annotate,
        drops=drops,
        output_format=output_format,
        disable_rss=app["disable_rss"],
        parse_ptype=app["parse_ptype"],
        relax_rx_offload=app["relax_rx_offload"],
        progress=progress_printer(quiet or as_json),
        announce=None if quiet or as_json else tell,
        dpdk=dpdk,
    )
    stats = run(options)
    end_progress(options.progress)
    for note in (*notes, rx_note, tx_note):      # after the run: a refused one says one line only
        if note and not (quiet or as_json):
            tell(note)
    if report:
        write_run_report(outdir)
    print_stats(stats, quiet, as_json)




def run_graph_app(inputs, outdir, portmask, config, eth_dest, port_mac, max_pkt_len, per_queue, no_merge,
                  output_format, progress) -> dict:
    """``run --app graph``: the inputs through dpdk-l3fwd-graph (``graph/run.py``); an
    option that means nothing there is refused, naming it."""
    from ..graph.run import GraphOptions, run_graph
    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name not in GRAPH_OPTIONS and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE:
            raise SimError(f"--app graph: {param.opts[0]} has no meaning for dpdk-l3fwd-graph (built-in routes, "
                           "no lookup or path to choose; docs/graph.md lists what it takes)")
    rx_queues = find_rx_queues(list(inputs), unread := [])
    warn_now(unread)
    return run_graph(GraphOptions(
        inputs={port: path for (port, queue), path in rx_queues.items() if queue is None},
        queue_inputs={key: path for key, path in rx_queues.items() if key[1] is not None},
        outdir=outdir, portmask=None if portmask is None else parse_portmask(portmask), config=config,
        eth_dest=dict(parse_port_mac(x, "--eth-dest") for x in eth_dest),
        port_mac=dict(parse_port_mac(x, "--port-mac") for x in port_mac),
        max_pkt_len=max_pkt_len, per_queue=per_queue, merge=not no_merge, output_format=output_format,
        progress=progress))
