"""``l3fwd-sim`` command line: parse options, call the library, print."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .errors import SimError
from .ports import parse_port_mac, parse_portmask
from .simulator import LOOKUPS, PIPELINES, RunOptions, find_inputs, run
from .stats import format_table


class _Group(click.Group):
    """Bad usage and library errors end in one line on stderr and exit status 2."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.ClickException as err:
            click.echo(f"l3fwd-sim: {err.format_message()}", err=True)
            sys.exit(2)
        except SimError as err:
            click.echo(f"l3fwd-sim: {err}", err=True)
            sys.exit(2)
        except (KeyboardInterrupt, click.exceptions.Abort):
            click.echo("l3fwd-sim: interrupted; no partial output was left", err=True)
            sys.exit(130)
        except OSError as err:
            click.echo(f"l3fwd-sim: {err.filename or ''}: {err.strerror}", err=True)
            sys.exit(2)


@click.group(cls=_Group)
@click.version_option(package_name="l3fwd-sim")
def main():
    """Simulate DPDK's dpdk-l3fwd on pcap files, byte for byte."""


def _progress_printer(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    state = {"shown": -1}

    def show(done: int, total: int):
        percent = 100 * done // max(total, 1)
        if percent != state["shown"]:
            state["shown"] = percent
            bar = "#" * (percent // 4)
            click.echo(f"\r[{bar:<25}] {percent:3d}%", err=True, nl=percent >= 100)
    return show


@main.command("run")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", "outdir", required=True, type=click.Path(path_type=Path),
              help="Output directory: port<N>.pcap per enabled port, stats.json.")
@click.option("-p", "--portmask", help="Hex mask of enabled ports (default: ports with an input).")
@click.option("--lookup", type=click.Choice(LOOKUPS), help="Lookup method (default lpm).")
@click.option("-L", "lpm_flag", is_flag=True, help="Same as --lookup lpm (legacy l3fwd flag).")
@click.option("-E", "em_flag", is_flag=True, help="Same as --lookup em (legacy l3fwd flag).")
@click.option("--ipv6", is_flag=True, help="l3fwd's --ipv6: EM installs the IPv6 flows instead of the IPv4 ones.")
@click.option("--pipeline", type=click.Choice(PIPELINES), default="multi", show_default=True,
              help="simple = DPDK's per-packet path; multi = x86 multi-buffer path.")
@click.option("--rule_ipv4", "--rule-ipv4", "rule_ipv4", type=click.Path(path_type=Path),
              help="IPv4 rule file (used only with --rule_ipv6, as in l3fwd).")
@click.option("--rule_ipv6", "--rule-ipv6", "rule_ipv6", type=click.Path(path_type=Path),
              help="IPv6 rule file (used only with --rule_ipv4, as in l3fwd).")
@click.option("--eth-dest", "eth_dest", multiple=True, metavar="PORT,MAC",
              help="Destination MAC for packets sent out of PORT (default 02:00:00:00:00:PORT).")
@click.option("--port-mac", "port_mac", multiple=True, metavar="PORT,MAC",
              help="MAC address of PORT, written as source MAC (default 02:70:63:61:70:PORT).")
@click.option("--rx-burst", type=int, default=32, show_default=True, help="Packets per rx burst (1..512).")
@click.option("--tx-burst", type=int, default=32, show_default=True, help="Direct-send threshold (1..512).")
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as JSON on stdout.")
def run_command(inputs, outdir, portmask, lookup, lpm_flag, em_flag, ipv6, pipeline, rule_ipv4, rule_ipv6,
                eth_dest, port_mac, rx_burst, tx_burst, quiet, as_json):
    """Forward INPUT pcaps (a directory of port<N>.pcap, or N=FILE) as dpdk-l3fwd would."""
    flags = [mode for mode, flag in (("lpm", lpm_flag), ("em", em_flag)) if flag]
    if len(flags) + (lookup is not None) > 1 and len(set(flags + [lookup] if lookup else flags)) > 1:
        raise SimError("-L, -E and --lookup select one lookup method each; give only one (as in l3fwd)")
    lookup = lookup or (flags[0] if flags else "lpm")
    options = RunOptions(
        inputs=find_inputs(list(inputs)),
        outdir=outdir,
        portmask=parse_portmask(portmask) if portmask else None,
        lookup=lookup,
        ipv6=ipv6,
        pipeline=pipeline,
        rule_ipv4=rule_ipv4,
        rule_ipv6=rule_ipv6,
        eth_dest=dict(parse_port_mac(x, "--eth-dest") for x in eth_dest),
        port_mac=dict(parse_port_mac(x, "--port-mac") for x in port_mac),
        rx_burst=rx_burst,
        tx_burst=tx_burst,
        progress=_progress_printer(quiet or as_json),
    )
    stats = run(options)
    if as_json:
        click.echo(json.dumps(stats, indent=2))
    elif not quiet:
        for warning in stats["warnings"]:
            click.echo(f"l3fwd-sim: warning: {warning}", err=True)
        click.echo(format_table({**stats, "warnings": []}))
