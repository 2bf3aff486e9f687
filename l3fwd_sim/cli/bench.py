"""``l3fwd-sim bench``."""
from __future__ import annotations

import json
from pathlib import Path

import click

from ..l3fwd.routing import MAX_ACL_RULE_NUM
from ..text import printable
from ..traffic.streams import MAX_COUNT
from .options import OUTPUT_DIR
from .values import Int


@click.command("bench", short_help="The 2014 experiment; the simulator against C.")
@click.option("--count", type=Int(0, MAX_COUNT), default=1_000_000, show_default=True,
              help="Packets per pattern (4 ports; at least 4).")
@click.option("--lookup", "lookups", multiple=True, type=click.Choice(["lpm", "em", "fib"]),
              help="Lookup methods to measure (repeatable; default lpm and em).")
@click.option("-o", "--output", "outdir", type=OUTPUT_DIR, default=Path("bench-out"),
              show_default=True, help="Keeps the traffic, outputs, bench.json and bench.png.")
@click.option("--jobs", type=Int(1, 64), default=1, show_default=True, help="Processes per run.")
@click.option("--no-testpmd", is_flag=True, help="Skip the testpmd io/macswap comparison.")
@click.option("--no-end-to-end", is_flag=True, help="Skip the imix and --jobs 2 runs.")
@click.option("--acl-rules", type=Int(0, MAX_ACL_RULE_NUM), multiple=True, metavar="N",
              help="ACL rule-set sizes to measure (repeatable; default 1000 and 10000; 0 skips ACL).")
@click.option("--acl-build", type=Int(0, MAX_ACL_RULE_NUM), default=100_000, show_default=True,
              help="Rules per family of the ACL build measured for time and peak RSS (0 skips it).")
@click.option("--no-trace", is_flag=True, help="Skip the run --trace all row of the C reference matrix.")
@click.option("--no-reference", is_flag=True, help="Skip the C reference forwarder (4x --count 64-byte packets, "
              "--count IMIX packets; built with the system compiler).")
@click.option("--json", "as_json", is_flag=True, help="Print bench.json on stdout.")
def command(count, lookups, outdir, jobs, no_testpmd, no_end_to_end, acl_rules, acl_build, no_trace,
                  no_reference, as_json):
    """Re-run the 2014 l3fwd experiment: five traffic patterns, both pipelines."""
    from ..bench import HEADER, BenchOptions, bench, check_options, format_table, plot
    options = BenchOptions(count=count, lookups=tuple(lookups) or ("lpm", "em"), outdir=outdir, jobs=jobs,
                           testpmd=not no_testpmd, end_to_end=not no_end_to_end,
                           acl=tuple(n for n in acl_rules if n) if acl_rules else (1_000, 10_000),
                           acl_build=acl_build, trace=not no_trace, reference=not no_reference,
                           progress=None if as_json else click.echo)
    check_options(options)                    # before the header: a bad option prints nothing else
    if not as_json:
        click.echo(HEADER)
    result = bench(options)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo("\n".join(format_table(result).splitlines()[2 + len(result["rows"]):]))
    if plot(result, outdir / "bench.png"):
        click.echo(f"chart: {printable(outdir / 'bench.png')}")
    click.echo(f"results: {printable(outdir / 'bench.json')}")


