"""``l3fwd-sim rules``: commands about l3fwd rule files."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..dataplane.ports import parse_portmask
from . import tell
from .options import lookup_method, table_options
from .rules_hits import hits


@click.group("rules", short_help="Rule files: checks without traffic, a run's hits.")
def command():
    """What the lines of l3fwd rule files do: checks without traffic, a run's hits."""


@command.command("check")
@table_options("Hex mask of enabled ports (default 0xffffffff: all 32).", legacy_flags=False)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON on stdout.")
def check(portmask, lookup, rule_ipv4, rule_ipv6, as_json):
    """Lines of the rule files that no packet is ever decided by (shadowed), that repeat a
    prefix or flow and are not in effect (duplicate), or that route to a port outside the
    portmask (not_installed): one per line, FILE:LINE: TEXT  — KIND by FILE:LINE, ...

    Exit status 0 when there is no finding, 1 when there are, 2 on error."""
    from ..l3fwd.rules_check import CheckOptions, check as check_rules
    report = check_rules(CheckOptions(lookup=lookup_method(lookup), portmask=None if portmask is None else parse_portmask(portmask),
                                      rule_ipv4=rule_ipv4, rule_ipv6=rule_ipv6))
    if not as_json:
        for warning in report.warnings:
            tell(f"warning: {warning}")
    for chunk in report.json_chunks() if as_json else report.text_chunks():
        click.echo(chunk, nl=False)
    sys.exit(1 if report.findings else 0)


command.add_command(hits)

SOURCE_FORMATS = ("ip-route", "ip-route-json", "frr-json", "bird", "mrt")    # l3fwd.importers.FORMATS


@command.command("import")
@click.argument("sources", nargs=-1, required=True, metavar="SOURCE...")
@click.option("-o", "--output", "prefix", metavar="PREFIX", help="Write PREFIX_v4.cfg and PREFIX_v6.cfg.")
@click.option("--rule_ipv4", "--rule-ipv4", "rule_ipv4", type=click.Path(path_type=Path), metavar="FILE",
              help="The IPv4 rule file to write (with --rule_ipv6, instead of -o).")
@click.option("--rule_ipv6", "--rule-ipv6", "rule_ipv6", type=click.Path(path_type=Path), metavar="FILE",
              help="The IPv6 rule file to write.")
@click.option("--from", "source_format", type=click.Choice(SOURCE_FORMATS), metavar="|".join(SOURCE_FORMATS),
              help="The sources' format (default: told by each one's content).")
@click.option("--port", "ports", multiple=True, metavar="NAME=N[,NAME=N...]",
              help="The port of an interface, next hop or BGP peer (default: ports 0, 1, 2, ... in order of "
                   "first appearance). Routes to anything else are left out.")
@click.option("--lookup", type=click.Choice(("lpm", "fib")), default="lpm", metavar="lpm|fib",
              help="The lookup the rules are for (default lpm); fib also writes default routes.")
@click.option("--json", "as_json", is_flag=True, help="Print the findings and the summary as JSON on stdout.")
def import_(sources, prefix, rule_ipv4, rule_ipv6, source_format, ports, lookup, as_json):
    """Turn routing tables (SOURCE: a file, or - for standard input) into l3fwd LPM rule
    files: `ip route` / `ip -6 route` text or `ip -j` JSON, FRR's `show ip route json`,
    BIRD's `show route`, MRT RIB dumps (RouteViews, RIPE RIS; gzip/bzip2/xz too).

    Prints one line per route left out or changed (FILE:LINE: ROUTE  — WHY), then a
    summary with the ports given to interfaces, next hops or peers. Exit status 0, or 2
    on error (nothing written)."""
    from ..l3fwd.importers import ImportOptions, import_routes, parse_ports
    report = import_routes(ImportOptions(list(sources), prefix, rule_ipv4, rule_ipv6, source_format,
                                         parse_ports(ports) if ports else None, lookup))
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
        return
    for chunk in report.text_chunks():
        click.echo(chunk, nl=False)
    sys.stdout.flush()
    for warning in report.warnings:              # after the findings, where they are seen
        tell(f"warning: {warning}")
