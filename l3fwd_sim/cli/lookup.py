"""``l3fwd-sim lookup``."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..dataplane.ports import MAX_PORTS, parse_portmask
from . import tell
from .options import lookup_method, table_options
from .values import Int


@click.command("lookup", short_help="The rule that decides a key (ip route get).")
@click.argument("keys", nargs=-1, required=True, metavar="KEY...")
@table_options("Hex mask of enabled ports (default 0xffffffff: all 32, no route left out).")
@click.option("--port", type=Int(0, MAX_PORTS - 1), metavar="N", help="Input port: where a miss is sent back (default: not resolved).")
@click.option("--hits", type=click.Path(path_type=Path), metavar="OUT",
              help="Also give each deciding rule's counters (packets, bytes) in the run OUT's stats.json.")
@click.option("--json", "as_json", is_flag=True, help="Print the answers as JSON on stdout.")
def command(keys, portmask, lookup, lpm_flag, em_flag, ipv6, rule_ipv4, rule_ipv6, port, hits, as_json):
    """What `run` does with a packet carrying each KEY, and which rule line decides it:
    a destination address (lpm, fib) or a 5-tuple "udp 198.18.0.1:9 > 198.18.0.0:9" (em, acl)."""
    from ..l3fwd.lookup import LookupOptions, format_lookup, lookup as lookup_keys
    report = lookup_keys(LookupOptions(
        keys=list(keys), lookup=lookup_method(lookup, lpm_flag, em_flag),
        portmask=None if portmask is None else parse_portmask(portmask),
        rule_ipv4=rule_ipv4, rule_ipv6=rule_ipv6, ipv6=ipv6, port=port, hits=hits))
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    for warning in report["warnings"]:
        tell(f"warning: {warning}")
    click.echo(format_lookup(report))
