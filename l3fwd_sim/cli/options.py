"""What several commands share: option types, the --output-format option, printing
the stats and a progress bar."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..capture.location import as_location
from ..capture.writers import OUTPUT_FORMATS
from ..dataplane.stats import format_table
from ..errors import SimError
from ..numbers import parse_int


class OutputDirType(click.ParamType):
    """``-o DIR``: a path or an fsspec URL (kept whole: ``Path`` would fold its ``//``);
    an empty string is an error, not the current directory."""
    name = "directory"

    def convert(self, value, param, ctx):
        if isinstance(value, Path):
            return value
        if not value:
            self.fail("an empty string; name a directory", param, ctx)
        return as_location(value)


OUTPUT_DIR = OutputDirType()


class Int(click.ParamType):
    """An integer option bounded where it is parsed: out of range, or too long for Python
    to convert, it ends as one line naming the option."""
    name = "integer"

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value                      # a default
        return parse_int(value.strip(), max(param.opts, key=len), self.low, self.high)


def print_stats(stats: dict, quiet: bool, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(stats, indent=2))
    elif not quiet:
        for warning in stats["warnings"]:
            click.echo(f"l3fwd-sim: warning: {warning}", err=True)
        click.echo(format_table({**stats, "warnings": []}))


def progress_printer(quiet: bool):
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


def lookup_method(lookup: str | None, lpm_flag: bool, em_flag: bool) -> str:
    """``--lookup``, ``-L`` or ``-E`` (default lpm); naming two methods is an error."""
    chosen = {mode for mode, given in (("lpm", lpm_flag), ("em", em_flag), (lookup, lookup)) if given}
    if len(chosen) > 1:
        raise SimError("-L, -E and --lookup select one lookup method each; give only one (as in l3fwd)")
    return chosen.pop() if chosen else "lpm"


def output_format_option(auto: str):
    """``--output-format`` of a command whose ``auto`` means ``auto``."""
    return click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="auto", show_default=True,
                        help=f"Output files: classic pcap (port<N>.pcap) or pcapng (port<N>.pcapng, 64-bit time "
                             f"stamps: past 2106 too); auto = {auto}.")


INPUTS_AUTO = "pcapng when every input is pcapng, else pcap"
