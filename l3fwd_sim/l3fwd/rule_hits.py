"""``rules hits``: which rule lines decided a run's packets, and which never did.

dpdk-l3fwd counts nothing per rule (``rte_lpm_lookup``, ``rte_fib_lookup_bulk``,
``rte_hash_lookup`` and ``rte_acl_classify`` return a next hop or a rule's userdata and
keep no statistics), so a rule that no packet ever reaches is invisible there. ``run``
counts, for every rule line of the rule files in effect, the packets it decided and
their bytes, into ``OUT/stats.json``::

    "rules": [{"file", "line", "table", "installed", "packets", "bytes"}, ...],
    "rules_never_hit": N

one entry per rule line, IPv4 file first, each in file order. This module joins each
entry with its line's text as the rule file reads now, and sorts, selects and sums them::

    from l3fwd_sim.l3fwd.rule_hits import rule_hits, format_hits
    report = rule_hits(Path("out"), top=10)
    print(format_hits(report))

A rule file is read from where the run named it (a relative path from the current
directory, as ``run`` read it), ``routes/<name>`` from l3fwd's built-in tables. A file
that is gone keeps its counters, with the text :data:`NOT_FOUND`; a counted line that
is no longer a rule line (the file was edited after the run and its lines moved) keeps
them too, with the text :data:`CHANGED`; a file modified after the run gets a warning,
since an edited rule line cannot be told from the original.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from ..dataplane.stats import rules_summary
from ..errors import SimError
from .keys import TABLES
from .routing import DEFAULT_ROUTES

TABLE_NAMES = {name for pair in TABLES.values() for name in pair}      # lpm4, lpm6, ..., acl6
FIELDS = {"file": str, "line": int, "table": str, "installed": bool, "packets": int, "bytes": int}
NOT_FOUND = "(file not found)"
CHANGED = "(file changed: not a rule line now)"


def stats_file(out: Path) -> Path:
    """``OUT/stats.json``, or ``out`` itself when it names the file."""
    out = Path(out)
    path = out / "stats.json" if out.is_dir() else out
    if not path.is_file():
        raise SimError(f"{out}: no stats.json there (give the output directory of an l3fwd-sim run)")
    return path


def load_rule_counters(out: Path) -> tuple[Path, list[dict], int | None]:
    """(the stats file, its ``"rules"`` entries, checked, the run's portmask if it says)."""
    path = stats_file(out)
    try:
        stats = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise SimError(f"{path}: not a readable stats.json ({err})") from None
    if isinstance(stats, dict) and isinstance(stats.get("options"), dict) and stats["options"].get("app") == "l3fwd-graph":
        raise SimError(f"{path}: no rule counters: a dpdk-l3fwd-graph run has built-in routes, no rule files; its "
                       "node counters are stats.json's \"graph\" part (l3fwd-sim report draws them)")
    if not isinstance(stats, dict) or "rules" not in stats:
        raise SimError(f"{path}: no rule counters: the stats are from a run without them "
                       "(l3fwd-sim testpmd, or an l3fwd-sim that did not count rule hits yet)")
    entries = stats["rules"]
    for i, entry in enumerate(entries if isinstance(entries, list) else [None]):
        if not (isinstance(entry, dict) and all(type(entry.get(k)) is t for k, t in FIELDS.items())
                and entry["table"] in TABLE_NAMES):
            raise SimError(f"{path}: rules[{i}] is not a rule counter "
                           "({\"file\", \"line\", \"table\", \"installed\", \"packets\", \"bytes\"})")
    options = stats.get("options")
    mask = options.get("portmask") if isinstance(options, dict) else None
    portmask = int(mask, 16) if isinstance(mask, str) and re.fullmatch(r"0x[0-9a-f]{1,8}", mask) else None
    return path, entries, portmask


def rule_file(label: str) -> Path:
    """Where to read the rule file a stats entry (or a trace) names: ``routes/<name>``
    of l3fwd's built-in tables is the shipped copy (``routing.file_label``), any other
    name the path as given."""
    path = Path(label)
    builtin = DEFAULT_ROUTES / path.name
    return builtin if path.parent == Path("routes") and builtin.is_file() else path


def _is_rule_line(text: str, table: str) -> bool:
    """Lines the tables count start with ``R``, or ``@`` for an ACL deny line
    (``rules.py``: the column-0 lead of l3fwd's parsers)."""
    return text[:1] == "R" or (table.startswith("acl") and text[:1] == "@")


def rule_texts(entries: list[dict], stats: Path, warnings: list[str]) -> list[str]:
    """Each entry's line as its file reads now (line end and trailing blanks dropped),
    each file read once; what cannot match the counters is said in ``warnings``."""
    files: dict[str, list[str] | None] = {}
    changed: dict[str, list[int]] = {}
    texts = []
    for entry in entries:
        label = entry["file"]
        if label not in files:
            files[label] = _read_lines(label, stats, warnings)
        lines = files[label]
        if lines is None:
            texts.append(NOT_FOUND)
            continue
        text = lines[entry["line"] - 1].rstrip() if 0 < entry["line"] <= len(lines) else ""
        if not _is_rule_line(text, entry["table"]):
            changed.setdefault(label, []).append(entry["line"])
            text = CHANGED
        texts.append(text)
    for label, numbers in changed.items():
        warnings.append(f"{label}: changed since the run: {len(numbers)} counted line(s) are not rule lines now "
                        f"(first: line {numbers[0]}), shown as {CHANGED}")
    return texts


def _read_lines(label: str, stats: Path, warnings: list[str]) -> list[str] | None:
    """The lines of the rule file ``label`` (as ``rules.py`` splits them: at ``\\n``), or
    None when it cannot be read; a file modified after the run is warned about."""
    path = rule_file(label)
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")
    except OSError as err:
        why = "not found" if isinstance(err, FileNotFoundError) else f"cannot read it ({err.strerror})"
        warnings.append(f"{label}: {why}: its lines are shown as {NOT_FOUND}")
        return None
    if path.stat().st_mtime > stats.stat().st_mtime:
        warnings.append(f"{label}: modified after the run ({stats}): the texts shown are the file's lines now")
    return text.split("\n")


def _share(packets: int, total: int) -> float:
    """Percentage of the table's counted packets (0.0 when the table counted none)."""
    return 100.0 * packets / total if total else 0.0


def summarize(entries: list[dict]) -> dict:
    """The installed lines, and those never hit, overall and per table (tables in file
    order); lines not installed (a route to a port outside the portmask, EM's other
    family) are counted apart: no packet can hit them."""
    tables: dict[str, dict] = {}
    for entry in entries:
        table = tables.setdefault(entry["table"], {"installed": 0, "never_hit": 0, "packets": 0, "bytes": 0})
        table["installed"] += entry["installed"]
        table["never_hit"] += entry["installed"] and not entry["packets"]
        table["packets"] += entry["packets"]
        table["bytes"] += entry["bytes"]
    installed = sum(t["installed"] for t in tables.values())
    never_hit = sum(t["never_hit"] for t in tables.values())
    summary = {"installed": installed, "never_hit": never_hit, "not_installed": len(entries) - installed,
               "tables": tables}
    return {**summary, "text": rules_summary(entries)}


def rule_hits(out: Path, top: int | None = None, never_hit: bool = False) -> dict:
    """``{"stats", "warnings", "rules": [entry + {"text", "share"}, ...], "summary"}``:
    the run's rule lines by packets, most first (ties in file order), or with
    ``never_hit`` the installed lines no packet hit, in file order; ``top`` keeps the
    first ``top`` of them. The summary is the whole run's."""
    path, entries, _ = load_rule_counters(out)
    warnings: list[str] = []
    summary = summarize(entries)
    texts = rule_texts(entries, path, warnings)
    rows = [{**entry, "text": text, "share": _share(entry["packets"], summary["tables"][entry["table"]]["packets"])}
            for entry, text in zip(entries, texts)]
    if never_hit:
        rows = [row for row in rows if row["installed"] and not row["packets"]]
    else:
        rows.sort(key=lambda row: -row["packets"])          # stable: ties stay in file order
    return {"stats": str(path), "warnings": warnings, "rules": rows[:top], "summary": summary}


def counters_by_rule(out: Path) -> tuple[Path, dict, int | None]:
    """(the stats file, ``{(rule file resolved, line, table): {"packets", "bytes"}}``,
    the run's portmask) for ``lookup --hits``: a rule file is matched by where it lies,
    so ``v4.cfg`` and ``./v4.cfg`` are one file."""
    path, entries, portmask = load_rule_counters(out)
    return path, {(rule_file(e["file"]).resolve(), e["line"], e["table"]): {"packets": e["packets"],
                                                                           "bytes": e["bytes"]}
                  for e in entries}, portmask


def _share_text(row: dict) -> str:
    """One decimal; a share that rounds to 0.0 but is not zero is ``<0.1%``."""
    return "<0.1%" if row["packets"] and row["share"] < 0.05 else f"{row['share']:.1f}%"


def format_hits(report: dict) -> str:
    """A table ``file:line  table  packets  bytes  share  installed  rule`` (the rule's
    text last, its blanks collapsed as ``lookup`` shows it), then the summary line."""
    header = ("file:line", "table", "packets", "bytes", "share", "installed", "rule")
    rows = [(f"{r['file']}:{r['line']}", r["table"], f"{r['packets']:,}", f"{r['bytes']:,}", _share_text(r),
             "yes" if r["installed"] else "no", " ".join(r["text"].split())) for r in report["rules"]]
    lines = []
    if rows:
        widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header) - 1)]
        right = {2, 3, 4}                                   # the numbers
        for row in [header, *rows]:
            cells = [cell.rjust(w) if i in right else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))]
            lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join([*lines, report["summary"]["text"]])
