"""``l3fwd-sim verify [OPTIONS] -- PROGRAM [EAL options] -- [app options]``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import SimError
from ..releases import RELEASES
from ..verify.verify import VerifyOptions, verify
from . import tell
from .values import Int


@click.command("verify", context_settings={"ignore_unknown_options": True},
               short_help="Hold a real DPDK build against the simulator.")
@click.option("--binary", type=click.Path(path_type=Path), help="The real program to run (default: PROGRAM on PATH).")
@click.option("--dpdk", type=click.Choice(("auto", *RELEASES)), default="auto", show_default=True,
              help="Release profile of the simulator; auto: the binary's own release (its EAL's version string).")
@click.option("--pipeline", type=click.Choice(("multi", "simple")), default="multi", show_default=True,
              help="The binary's build: x86 multi-buffer path (multi) or the per-packet one.")
@click.option("--keep", type=click.Path(path_type=Path), help="Keep both sides' files here (real/, sim/).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--fuzz", "rounds", type=Int(1, 1 << 20), help="No command line: N rounds of generated traffic, rule "
              "files and layouts against --binary, stopping at the first difference (its reproducer in --keep).")
@click.option("--seed", type=Int(0, 1 << 62), default=1, show_default=True, help="--fuzz: the first round's seed.")
@click.argument("line", nargs=-1, type=click.UNPROCESSED, metavar="-- PROGRAM [EAL] -- [APP]")
def command(binary, dpdk, pipeline, keep, as_json, rounds, seed, line):
    """Run a real dpdk-l3fwd, dpdk-l3fwd-graph or dpdk-testpmd (yours, patched or not) and
    the simulator on the same command line, and say whether and where their transmitted
    files differ.
    Exit 0: identical; 1: they differ; 2: bad input."""
    line = list(line)
    if rounds is not None:
        _fuzz(binary, dpdk, pipeline, keep, as_json, rounds, seed, line)
        return
    if not line:
        raise SimError("verify: give -- PROGRAM [EAL options] -- [app options], or --fuzz N with --binary")
    result = verify(VerifyOptions(line[0], line[1:], binary, dpdk, keep, pipeline))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        build = f", {result['pipeline']} build" if result["program"] == "dpdk-l3fwd" else ""
        click.echo(f"{result['program']} ({result['binary']}) against l3fwd-sim as DPDK {result['dpdk']}{build}")
        if "refusal" in result["real"] or result["simulator"]["refused"]:
            click.echo(f"  real: {result['real'].get('refusal', 'forwarded')}")
            click.echo(f"  simulator: {result['simulator']['refused'] or 'forwarded'}")
        for entry in result["files"]:
            click.echo(f"  {entry['file']}: {'identical' if entry['equal'] else entry['verdict']}")
            if "report" in entry:
                click.echo("\n".join("    " + text for text in entry["report"].splitlines()))
                for line in entry["simulator_trace"]:
                    click.echo(f"    simulator's trace of B[{line['tx_index']}]: {json.dumps(line)}")
        click.echo("identical" if result["equal"] else "DIFFER")
    sys.exit(0 if result["equal"] else 1)


def _fuzz(binary, dpdk, pipeline, keep, as_json, rounds, seed, line) -> None:
    if line or binary is None:
        raise SimError("verify --fuzz: give --binary PATH (dpdk-l3fwd or dpdk-testpmd) and no command line")
    program = "dpdk-testpmd" if "testpmd" in binary.name else "dpdk-l3fwd"
    from ..verify.fuzz import fuzz
    result = fuzz(program, binary, rounds, seed, keep, dpdk, pipeline,
                  None if as_json else lambda number, each: tell(f"round {number}: "
                                                                   f"{'identical' if each['equal'] else 'DIFFER'}"))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(f"{result['rounds']} rounds: " + ("no difference" if result["equal"] else
                                                     f"a difference, reproducer in {result['reproducer']}"))
    sys.exit(0 if result["equal"] else 1)
