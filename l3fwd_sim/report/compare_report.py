"""A comparison's report: the dict ``compare --json`` prints (``Report.to_dict()``) as a page.

The verdict; per port the packets of A and B and how they paired (matched, reordered,
modified, missing, extra), as a table and a chart; with ``--explain`` the differences
by cause (what each run decided for their input packet, and the path difference D1–D10
where DPDK's two paths are compared); the differences described (index, kind, fields,
summaries, hexdump, and with ``--explain`` the trace lines and the cause); with
``--by-layers`` the differing packets by layer stack.
"""
from __future__ import annotations

import json
from pathlib import Path

from . import charts
from ..diff.causes import one_line
from .page import Page, cell, count, fact, items, number_cell, preformatted, table, text, write_page

COUNT_KEYS = ("packets_a", "packets_b", "matched", "reordered", "modified", "missing", "extra")
PAIRING_KEYS = ("matched", "reordered", "modified", "missing", "extra")


def write_compare_report(report: dict, path: str | Path) -> Path:
    """Write the page of ``report`` (``compare()``'s dict) to ``path`` atomically;
    returns the path."""
    return write_page(compare_page(report), Path(path))


def compare_page(report: dict) -> Page:
    """The page of a comparison (``compare()``'s dict)."""
    page = Page(f"l3fwd-sim report: compare {report['a']} {report['b']}")
    equal = "true" if report["equal"] else "false"
    page.add("<h1>l3fwd-sim report: compare</h1>",
             f'<p class="verdict" data-key="equal" data-value="{equal}">{text(report["verdict"])}</p>',
             f'<p class="summary">{fact("A (the reference):", report["a"], report["a"], "a")}'
             f'{fact("B:", report["b"], report["b"], "b")}</p>', _options(report["options"]))
    _ports(page, report)
    if report.get("causes"):
        _causes(page, report["causes"])
    _differences(page, report)
    if "by_layers" in report:
        _by_layers(page, report)
    return page


def _options(options: dict) -> str:
    """What was compared: the options that change it."""
    shown = [f"ignoring {', '.join(options['ignore'])}" if options["ignore"] else "",
             "unordered" if options["unordered"] else "",
             f"time stamps (tolerance {options['ts_tolerance']} s)" if options["timestamps"] else "",
             f"at most {options['max_diffs']} differences described"]
    return f'<p class="note">{text("; ".join(s for s in shown if s))}</p>'


def _port_name(port) -> str:
    """A port as the page names it: its number, or ``file`` when two files were compared."""
    return "file" if port is None else str(port)


def _ports(page: Page, report: dict) -> None:
    """Per port the files, the packets of A and B and how they paired, and the totals;
    grouped bars of the pairings."""
    ports = report["ports"]
    rows = []
    for p in ports:
        name = _port_name(p["port"])
        rows.append([cell(name), cell(p["file_a"] or "(none)", port=name, key="file_a"),
                     cell(p["file_b"] or "(none)", port=name, key="file_b"),
                     *(number_cell(p[key], port=name, key=key) for key in COUNT_KEYS),
                     number_cell(p["equal"], "yes" if p["equal"] else "no", port=name, key="equal"),
                     cell("; ".join(p["notes"]), port=name, key="notes")])
    totals = report["totals"]
    total = [cell("all"), cell(""), cell(""), *(number_cell(totals[key], port="all", key=key) for key in COUNT_KEYS),
             number_cell(report["equal"], "yes" if report["equal"] else "no", port="all", key="equal"), cell("")]
    page.section("Ports", "ports")
    page.add(table(["port", "file A", "file B", "packets A", "packets B", *PAIRING_KEYS, "equal", "notes"], rows,
                   numeric=set(range(3, 3 + len(COUNT_KEYS) + 1)), name="ports", total=total))
    labels = [f"port {_port_name(p['port'])}" for p in ports]
    page.chart("ports", charts.grouped_bars("how each port's packets paired", labels, list(PAIRING_KEYS),
                                            [[p[key] for key in PAIRING_KEYS] for p in ports], "packets"))


def _differences(page: Page, report: dict) -> None:
    """The differences described: one row each, then each one's hexdump (and trace lines)."""
    differences = report["differences"]
    page.section("Differences described", "differences")
    if not differences:
        page.add('<p class="note">none</p>')
        return
    rows = []
    for i, d in enumerate(differences):
        fields = "; ".join(f"{f['field']}: {_side(f['a'])} → {_side(f['b'])}" for f in d["fields"])
        rows.append([number_cell(i + 1, difference=i), cell(_port_name(d["port"]), difference=i, key="port"),
                     cell(d["kind"], difference=i, key="kind"),
                     *(cell("", difference=i, key=key) if d[key] is None else number_cell(d[key], difference=i, key=key)
                       for key in ("index_a", "index_b")),
                     cell(fields, difference=i, key="fields"),
                     *(cell(d[key] or "", difference=i, key=key) for key in ("summary_a", "summary_b"))])
    page.add(table(["#", "port", "kind", "index A", "index B", "fields (A → B)", "A", "B"], rows, numeric={0, 3, 4},
                   name="differences"))
    for i, d in enumerate(differences):
        shown = "\n".join(d["hexdump"])
        if "trace" in d:
            if "cause" in d["trace"]:
                shown += "\n\ncause: " + one_line(d["trace"]["cause"])
            shown += "\n\ntrace lines:\n" + json.dumps(d["trace"], indent=1, ensure_ascii=False)
        if shown:
            page.add(f"<details><summary>#{i + 1}: port {text(_port_name(d['port']))}, {text(d['kind'])}</summary>"
                     f"{preformatted(shown)}</details>")


def _causes(page: Page, found: dict) -> None:
    """``--explain``: the differences counted by cause — what each run decided for their
    input packet — then the path differences named (docs/faithfulness.md)."""
    page.section("Differences by cause", "causes")
    runs = "; ".join(f"{side.upper()}: " + (f"--lookup {run['lookup']} --pipeline {run['pipeline']}" if run else
                                             "no stats.json beside its trace")
                     for side, run in found["runs"].items())
    rows = [[number_cell(g["differences"], cause=i, key="differences"),
             number_cell(g["packets"], cause=i, key="packets"),
             cell(g["cause"], cause=i, key="cause"), cell(g["path_difference"] or "", cause=i, key="path_difference"),
             cell(g["a"]["decision"], cause=i, key="a"), cell(g["b"]["decision"], cause=i, key="b")]
            for i, g in enumerate(found["groups"])]
    page.add(f'<p class="note">{text(count(found["differences"]))} differences, what each run did with '
             f'their input packet, from the traces ({text(runs)})</p>',
             table(["differences", "input packets", "cause", "path difference", "A", "B"], rows, numeric={0, 1},
                   name="causes"))
    if found["path_differences"]:
        page.add(items([f"{name}: {row['input']}: simple {row['simple']}; multi {row['multi']}"
                        for name, row in found["path_differences"].items()], "path_differences"))


def _side(value) -> str:
    """A field's value on one side (None: the field is not in that packet)."""
    return "(absent)" if value is None else str(value)


def _by_layers(page: Page, report: dict) -> None:
    """``--by-layers``: the differing packets by kind and layer stack."""
    page.section("Differing packets by layers", "by_layers")
    page.add(f'<p class="note">{text(count(report["by_layers_examined"]))} differing packets dissected</p>',
             table(["kind", "layers", "packets"],
                   [[cell(g["kind"]), cell(g["layers"]), number_cell(g["packets"], kind=g["kind"], layers=g["layers"])]
                    for g in report["by_layers"]], numeric={2}, name="by_layers"))
