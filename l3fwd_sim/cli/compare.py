"""``l3fwd-sim compare``."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from .values import Int


@click.command("compare", short_help="Whether and where two sets of outputs differ, and why.")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--max-diffs", type=Int(0, 1 << 32), default=5, show_default=True,
              help="Differences to describe in detail (fields, hexdump), over all ports.")
@click.option("--timestamps", is_flag=True, help="Compare record timestamps too (ignored by default).")
@click.option("--ts-tolerance", type=float, metavar="SECONDS",
              help="Timestamps this close are equal (implies --timestamps; default 0).")
@click.option("--ignore", multiple=True, metavar="FIELD",
              help="Mask a field before comparing: scapy's name (IP.ttl, Ether.src, UDP.dport) or "
                   "frame.len / frame.time. Repeatable.")
@click.option("--unordered", is_flag=True, help="Compare each port as a multiset of packets.")
@click.option("--by-layers", is_flag=True,
              help="Also count the differing packets by kind and layer stack (Ether/Dot1Q/IP/UDP).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option("--explain", is_flag=True, help="Count the differences by cause, what each run decided for their input "
              "packet (drop reason, miss, rule line, path difference D1-D10), and print each described one's trace "
              "lines (run --trace): A/trace.jsonl and B/trace.jsonl, or --traces.")
@click.option("--traces", nargs=2, type=click.Path(path_type=Path), metavar="TRACE_A TRACE_B",
              help="The two runs' trace files (implies --explain).")
@click.option("--write", type=click.Path(path_type=Path), metavar="DIR",
              help="Also write every differing packet into DIR/a.pcapng and DIR/b.pcapng, "
                   "each with the difference (and with --explain its cause) as its comment (for Wireshark).")
@click.option("--report", "report_file", type=click.Path(path_type=Path), metavar="FILE.html",
              help="Also write the comparison as a page of tables and a chart that opens offline.")
def command(a, b, max_diffs, timestamps, ts_tolerance, ignore, unordered, by_layers, as_json, explain,
                    traces, write, report_file):
    """Compare two pcap files, or two directories of port<N>.pcap (A is the reference).

    Exit status 0 when equal, 1 when they differ, 2 on error."""
    from ..diff.compare import CompareOptions, compare_paths
    options = CompareOptions(
        timestamps=timestamps or ts_tolerance is not None,
        ts_tolerance=ts_tolerance or 0.0,
        ignore=tuple(ignore),
        unordered=unordered,
        max_diffs=max_diffs,
        by_layers=by_layers,
    )
    if explain or traces:
        from ..diff.explain import explain_report
        report = explain_report(compare_paths(a, b, options), *(traces or ()))
        if write is not None:           # compared again, each packet's comment with its cause
            from ..diff.write import write_differences
            write_differences(a, b, write, options, explained=report)
    elif write is not None:
        from ..diff.write import write_differences
        report = write_differences(a, b, write, options)
    else:
        report = compare_paths(a, b, options)
    if report_file:
        from ..report import write_compare_report
        write_compare_report(report.to_dict(), report_file)
    click.echo(json.dumps(report.to_dict(), indent=2) if as_json else report.format_text())
    sys.exit(0 if report.equal else 1)


