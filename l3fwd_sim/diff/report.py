"""Text form of a ``compare`` report: per-port table, the first differences (fields by
name, hexdump with the differing bytes marked, as TRex's ``compare_caps`` and
pcap_diff print them), and a one-line verdict at the end."""
from __future__ import annotations

from ..text import printable

ROW = 16
_HEAD_ROWS = 4          # always shown: the first 64 bytes hold every l3fwd header
_MAX_DIFF_ROWS = 8      # differing rows shown per packet (a cut-short frame differs to its end)


def verdict(report) -> str:
    t = report.totals()
    ports = len(report.ports)
    if report.equal:
        return f"equal: {ports} port{'s' * (ports != 1)}, {t['matched']} packets match"
    differing = [p for p in report.ports if not p.equal]
    kinds = ", ".join(f"{t[k]} {k}" for k in ("modified", "missing", "extra", "reordered") if t[k])
    only = [p for p in differing if p.file_a is None or p.file_b is None]
    kinds = kinds or "port files differ"
    if only:
        kinds += f"; {len(only)} port file{'s' * (len(only) != 1)} on one side only"
    where = ", ".join(_port_name(p.port) for p in differing)
    return f"DIFFER: {len(differing)} of {ports} port{'s' * (ports != 1)} ({where}): {kinds}"


def _port_name(port) -> str:
    return "file" if port is None else f"port {port}"


def format_report(report) -> str:
    opt = report.options
    mode = "unordered (multiset)" if opt.unordered else "in order"
    stamps = (f"timestamps within {opt.ts_tolerance:g} s" if opt.timestamps else "timestamps ignored")
    made = {side: f" (made as DPDK {printable(name)})" for side, name in report.profiles.items()} \
        if len(set(report.profiles.values())) > 1 else {}
    lines = [f"A: {printable(report.a)}{made.get('a', '')}", f"B: {printable(report.b)}{made.get('b', '')}",
             f"packets compared {mode}, {stamps}"
             + (f", ignoring {', '.join(opt.ignore)}" if opt.ignore else "")
             + "; packet indexes count from 0", ""]
    header = ("port", "A", "B", "matched", "modified", "missing", "extra", "reordered", "")
    rows = [header]
    for p in report.ports:
        state = "equal" if p.equal else "DIFFER"
        if p.notes:
            state += " (" + "; ".join(p.notes) + ")"
        rows.append((_port_name(p.port).replace("port ", ""), p.packets_a if p.file_a else "-",
                     p.packets_b if p.file_b else "-", p.matched, p.modified, p.missing, p.extra,
                     p.reordered, state))
    if len(report.ports) > 1:
        t = report.totals()
        rows.append(("total", t["packets_a"], t["packets_b"], t["matched"], t["modified"], t["missing"],
                     t["extra"], t["reordered"], ""))
    widths = [max(len(str(r[c])) for r in rows) for c in range(len(header) - 1)]
    for r in rows:
        cells = [str(r[0]).ljust(widths[0])] + [str(v).rjust(w) for v, w in zip(r[1:-1], widths[1:])]
        lines.append("  ".join(cells + [str(r[-1])]).rstrip())

    total = sum(p.modified + p.missing + p.extra + p.reordered for p in report.ports)
    if opt.by_layers and report.by_layers:
        scope = "all" if report.by_layers_examined == total else f"the first {report.by_layers_examined}"
        lines += ["", f"differing packets by kind and layers ({scope} of {total}):"]
        width = max(len(g["layers"]) for g in report.by_layers)
        lines += [f"  {g['kind']:<9}  {g['layers']:<{width}}  {g['packets']:>7}" for g in report.by_layers]
    if report.causes is not None and report.causes["groups"]:
        from .explain import format_causes
        lines += ["", *format_causes(report.causes)]
    shown = report.differences
    for n, d in enumerate(shown, 1):
        lines.append("")
        lines.append(f"difference {n} of {total}: {title(d)}")
        if d.kind == "modified":
            width = max([len(f.field) for f in d.fields] + [5])
            for f in d.fields:
                lines.append(f"  {f.field.ljust(width)}  A: {_value(f.a)}   B: {_value(f.b)}")
        for label, text in (("A", d.summary_a), ("B", d.summary_b)):
            if text is not None:
                lines.append(f"  {label}: {text}")
        lines.extend("  " + line for line in hexdump(d))
        if d.trace is not None:
            from .explain import format_trace
            lines.extend(format_trace(d.trace, report.traces))
    if total > len(shown):
        lines.append("")
        lines.append(f"... {total - len(shown)} more difference{'s' * (total - len(shown) != 1)} "
                     f"not shown (--max-diffs {opt.max_diffs})")
    lines.append("")
    lines.append(verdict(report))
    return "\n".join(lines)


def title(d) -> str:
    """What a difference is, where: "port 2, packet A[41] modified in B[41]"."""
    where = _port_name(d.port)
    if d.kind == "modified":
        return f"{where}, packet A[{d.index_a}] modified in B[{d.index_b}]"
    if d.kind == "missing":
        return f"{where}, packet A[{d.index_a}] missing from B"
    if d.kind == "extra":
        return f"{where}, packet B[{d.index_b}] extra (not in A)"
    return f"{where}, packet A[{d.index_a}] reordered: it is B[{d.index_b}]"


def _value(v) -> str:
    return "(absent)" if v is None else v


def one_line(d) -> str:
    """The difference on one line (``compare --write``'s packet comments): its title,
    then each field that changed, "port 2, packet A[41] modified in B[41]: IP.ttl 38→39,
    IP.chksum 0x3412→0x3312"."""
    changes = ", ".join(f"{f.field} {_value(f.a)}→{_value(f.b)}" for f in d.fields)
    return f"{title(d)}: {changes}" if changes else title(d)


def hexdump(d) -> list[str]:
    """Rows of 16 bytes. A modified packet: rows equal on both sides once, differing
    rows as an A line, a B line and a marker line (``^^`` differs, ``~~`` differs
    only in an ignored field); the first 64 bytes and the rows around each difference
    are shown. A missing/extra packet: its first 64 bytes."""
    if d.kind != "modified":
        frame = d.frame_a if d.frame_a is not None else d.frame_b
        if d.kind == "reordered" or frame is None:
            return []
        out = [_row(frame, r) for r in range(min(_HEAD_ROWS, -(-len(frame) // ROW)))]
        if len(frame) > _HEAD_ROWS * ROW:
            out.append(f"      ... {len(frame) - _HEAD_ROWS * ROW} more bytes")
        return out
    a, b = d.frame_a, d.frame_b
    differ, ignored = set(d.offsets), set(d.ignored_offsets)
    n_rows = -(-max(len(a), len(b)) // ROW)
    all_bad = sorted({k // ROW for k in differ | ignored})
    bad_rows = set(all_bad[:_MAX_DIFF_ROWS])
    show = set(range(min(_HEAD_ROWS, n_rows)))
    hidden = set(all_bad) - bad_rows
    for r in bad_rows:
        show.update(x for x in (r - 1, r, r + 1) if x not in hidden)
    out, last = [], -1
    for r in sorted(x for x in show if 0 <= x < n_rows):
        if r != last + 1:
            out.append("      ...")
        last = r
        if r not in bad_rows:
            out.append(_row(a, r))
            continue
        out.append(_row(a, r) + "  A")
        out.append(_row(b, r) + "  B")
        marks = []
        for k in range(r * ROW, r * ROW + ROW):
            marks.append("^^" if k in differ else "~~" if k in ignored else "  ")
        out.append("      " + " ".join(marks).rstrip())
    if len(all_bad) > len(bad_rows):
        out.append(f"      ... {len(all_bad) - len(bad_rows)} more rows differ")
    elif last < n_rows - 1:
        out.append("      ...")
    return out


def _row(frame: bytes, r: int) -> str:
    chunk = frame[r * ROW:r * ROW + ROW]
    cells = " ".join(f"{x:02x}" for x in chunk).ljust(ROW * 3 - 1)
    text = "".join(chr(x) if 32 <= x < 127 else "." for x in chunk).ljust(ROW)
    return f"{r * ROW:04x}  {cells}  {text}"
