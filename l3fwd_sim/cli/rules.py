"""``l3fwd-sim rules``: commands about l3fwd rule files."""
from __future__ import annotations

import sys

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
