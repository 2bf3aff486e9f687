"""What ``dpdk-l3fwd`` and ``dpdk-testpmd`` share: a command whose arguments are a real
DPDK command line, word for word, and how its results are printed."""
from __future__ import annotations

import click

from ..dataplane.stats import format_table
from ..releases import Release, release
from . import tell


class VerbatimCommand(click.Command):
    """Takes every word as given: click would otherwise eat the ``--`` between the EAL
    and application options, and read ``-p``, ``-l`` or ``--help`` itself. Only a lone
    ``--help`` asks for this command's help."""

    def parse_args(self, ctx, args):
        if args == ["--help"]:
            click.echo(ctx.get_help())
            ctx.exit()
        ctx.params["argv"] = list(args)
        return []


def split_release(argv: list[str]) -> tuple[Release, list[str]]:
    """``[--dpdk VERSION] [EAL options] -- [app options]``: the release profile (before
    the EAL part, else ``L3FWD_SIM_DPDK``, else the default) and the real command line."""
    if argv[:1] == ["--dpdk"] and len(argv) > 1:
        return release(argv[1]), argv[2:]
    if argv[:1] and argv[0].startswith("--dpdk="):
        return release(argv[0].partition("=")[2]), argv[1:]
    return release(), argv


def print_launch(console: list[str], stats: dict, hidden: tuple[str, ...] = ()) -> None:
    """The application's console lines, the warnings on stderr (but ``hidden``: those the
    console already says), then the summary table."""
    for line in console:
        click.echo(line)
    for warning in stats["warnings"]:
        if warning not in hidden:
            tell(f"warning: {warning}")
    click.echo(format_table({**stats, "warnings": []}))
