"""``l3fwd-sim rules hits``: a subcommand of the ``rules`` group."""
from __future__ import annotations

import json
from pathlib import Path

import click

from . import tell
from .values import Int


@click.command("hits")
@click.argument("out", type=click.Path(path_type=Path), metavar="OUT")
@click.option("--top", type=Int(1, 2**63 - 1), metavar="N", help="Keep the first N lines only.")
@click.option("--never-hit", is_flag=True, help="Only the installed lines no packet hit, in file order.")
@click.option("--json", "as_json", is_flag=True, help="Print the lines and the summary as JSON on stdout.")
def hits(out, top, never_hit, as_json):
    """Which rule lines decided the packets of the run whose output directory is OUT
    (its stats.json's per-rule counters): most packets first, with each line's text."""
    from ..l3fwd.rule_hits import format_hits, rule_hits
    report = rule_hits(out, top=top, never_hit=never_hit)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    for warning in report["warnings"]:
        tell(f"warning: {warning}")
    click.echo(format_hits(report))
