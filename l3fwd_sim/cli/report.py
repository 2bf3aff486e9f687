"""``l3fwd-sim report``, and the ``--report`` flag of ``run`` and ``testpmd``.

The report package (and Bokeh with it) is imported only when a report is written."""
from __future__ import annotations

from pathlib import Path

import click

from ..errors import SimError
from ..text import printable

report_flag = click.option("--report", "report", is_flag=True,
                           help="Also write OUTDIR/report.html: the stats as tables and charts, one offline page.")


def check_report_dir(outdir) -> None:
    """``--report`` writes a local file beside stats.json: refused before the run for an
    output URL, so that the run does not succeed and then fail."""
    if not isinstance(outdir, Path):
        raise SimError(f"--report: {outdir}: the report is written into a local output directory, not to a URL")


def write_run_report(outdir: Path) -> Path:
    from ..report import write_report
    return write_report(outdir)


@click.command("report", short_help="A run's stats.json as one offline HTML page.")
@click.argument("outdir", type=click.Path(path_type=Path), metavar="OUTDIR|STATS_FILE")
def command(outdir):
    """Write OUTDIR/report.html from OUTDIR/stats.json (of `run`, `testpmd`, or a stats
    file L3FWD_SIM_STATS wrote: the page goes beside it): a page of tables and charts
    that opens offline; prints its path."""
    click.echo(printable(write_run_report(outdir)))
