"""``l3fwd-sim generate``."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..dataplane.ports import MAX_PORTS
from ..dataplane.stats import format_duration, format_rate
from ..errors import SimError
from ..text import printable
from ..traffic.streams import MAX_COUNT, MAX_SEED
from . import tell
from .options import OUTPUT_DIR, end_progress, output_format_option, progress_printer
from .values import Int

_PATTERN_ONLY = ("ports", "count", "size", "proto", "port_map", "rule_ipv4", "rule_ipv6")



@click.command("generate", short_help="Write test traffic: the 2014 patterns, random, streams.")
@click.argument("pattern", required=False)
@click.option("-o", "--output", "outdir", required=True, type=OUTPUT_DIR,
              help="Output directory: port<N>.pcap per input port (ready for 'l3fwd-sim run DIR').")
@click.option("--streams", type=click.Path(path_type=Path), help="TOML stream file, instead of a PATTERN.")
@click.option("--ports", type=Int(1, MAX_PORTS), default=4, show_default=True, help="Input ports to generate.")
@click.option("--count", type=Int(0, MAX_COUNT), default=1000, show_default=True, help="Packets per port.")
@click.option("--size", metavar="N|A-B|imix", default="64", show_default=True,
              help="Size on the wire (FCS included): N, A-B (uniform random) or imix (64/570/1518 at 7:4:1).")
@click.option("--rate", type=float, help="Packets per second per port; timestamps 1/rate apart [default: 1000000].")
@click.option("--seed", type=Int(0, MAX_SEED), help="Seed of random patterns, sizes, fields and orders [default: 1].")
@click.option("--proto", type=click.Choice(["udp", "tcp"]), default="udp", show_default=True,
              help="L4 protocol of the patterns.")
@click.option("--map", "port_map", metavar="MAP",
              help="Output port of each input port: 0:1,1:0,... or 1,0,3,2 [default: p -> p^1].")
@click.option("--rule_ipv4", "--rule-ipv4", "rule_ipv4", type=click.Path(path_type=Path),
              help="Choose IPv4 destinations that route as intended under this l3fwd rule file (LPM, EM or ACL).")
@click.option("--rule_ipv6", "--rule-ipv6", "rule_ipv6", type=click.Path(path_type=Path),
              help="The same for IPv6.")
@click.option("--progress/--no-progress", default=True, show_default=True,
              help="Draw a progress bar on stderr when it is a terminal (never with --quiet or --json).")
@output_format_option("pcap")
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.pass_context
def command(ctx, pattern, outdir, streams, ports, count, size, rate, seed, proto, port_map,
                     rule_ipv4, rule_ipv6, progress, output_format, quiet, as_json):
    """Write test traffic: PATTERN (IPV4-CONT-BURST, IPV6-CONT-BURST, IPV4/IPV6-CONT-BURST,
    IPV4-<K>STREAMSX<G>, IPV6-<K>STREAMSX<G>, random, malformed) or --streams FILE."""
    from ..traffic.generate import GenerateOptions, generate  # scapy and numpy set-up only for this command

    if streams is not None:
        given = [name for name in _PATTERN_ONLY
                 if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
        if pattern is not None or given:
            what = f"PATTERN {pattern!r}" if pattern is not None else f"--{given[0].replace('_', '-')}"
            raise SimError(f"--streams takes everything from the stream file; {what} does not apply")
    elif pattern is None:
        raise SimError("generate needs a PATTERN or --streams FILE")
    bar = progress_printer(quiet=not progress or quiet or as_json)
    summary = generate(GenerateOptions(
        outdir=outdir, pattern=pattern, streams=streams, ports=ports, count=count, size=size, proto=proto,
        port_map=port_map, rule_ipv4=rule_ipv4, rule_ipv6=rule_ipv6, rate=rate, seed=seed,
        output_format=output_format, progress=bar))
    end_progress(bar)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    if quiet:
        return
    for warning in summary["warnings"]:
        tell(f"warning: {warning}")
    for port, info in summary["ports"].items():
        click.echo(f"{printable(info['file'])}: {info['packets']} packets, {info['bytes']} bytes")
    click.echo(f"{summary['packets']} packets in {format_duration(summary['elapsed_seconds'])} "
               f"({format_rate(summary['packets'], summary['elapsed_seconds'])})")


