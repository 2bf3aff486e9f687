"""The page every report is: one self-contained HTML file, escaping, tables, numbers.

Nothing of a report is fetched: Bokeh's JavaScript is inlined (its core bundle only),
the styles are inline and the fonts the system's; a Content-Security-Policy forbids any
load besides. Every string that comes from an input (a file name, a rule line, a
warning, a trace) is data, never markup: :func:`text` escapes it for HTML and shows its
control characters as ``\\x1b``-style escapes; chart labels go through ``text.printable``
(Bokeh draws them on a canvas and escapes the JSON it embeds in the page's script).

Numbers are shown as stats.json holds them: integers with thousands separators in the
text, every cell carrying the raw value in ``data-value`` (and what it is in
``data-key`` and the like) for a reader or a test to take back exactly.
"""
from __future__ import annotations

import html
from pathlib import Path

from ..capture.atomic import AtomicFile
from ..text import printable

STYLE = """
:root { color-scheme: light; --ink: #1d2329; --muted: #5b6670; --rule: #d5dbe1; --band: #f3f5f7; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans",
       "Liberation Sans", sans-serif; color: var(--ink); margin: 0 auto; padding: 1.5rem 2rem 3rem;
       max-width: 1100px; line-height: 1.45; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; padding-bottom: .2rem; border-bottom: 1px solid var(--rule); }
.summary { color: var(--muted); margin: 0 0 .5rem; }
.summary span + span::before { content: " · "; }
.verdict { font-weight: 600; font-size: 1.05rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
th, td { padding: .25rem .6rem; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; border-top: 2px solid var(--rule); }
code, pre, .path { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono", Menlo, Consolas, monospace;
                   font-size: .85rem; }
pre { background: var(--band); padding: .5rem; overflow-x: auto; }
.chart { margin: .5rem 0 1rem; }
.note { color: var(--muted); font-size: .9rem; }
"""

# Inline scripts and styles, images as data: URLs (Bokeh's icons); nothing else may load.
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


def text(value) -> str:
    """An input's string as HTML text: ``text.printable``, then HTML-escaped."""
    return html.escape(printable(value))


def preformatted(value: str) -> str:
    """Lines of input text as a ``<pre>``: each line as :func:`text`, the breaks kept."""
    return "<pre>" + "\n".join(text(line) for line in value.split("\n")) + "</pre>"


def count(value: int) -> str:
    """An integer as the page shows it: ``1,024``."""
    return f"{value:,}"


def _attributes(data: dict) -> str:
    return "".join(f' data-{key.replace("_", "-")}="{html.escape(printable(value))}"' for key, value in data.items())


def cell(shown: str, **data) -> str:
    """A table cell of text (escaped here), with ``data-*`` attributes."""
    return f"<td{_attributes(data)}>{text(shown)}</td>"


def number_cell(value, shown: str | None = None, **data) -> str:
    """A numeric cell: ``shown`` (default: the integer with separators) as its text, the
    raw ``value`` in ``data-value`` (a bool as ``true``/``false``, as JSON writes it)."""
    raw = "true" if value is True else "false" if value is False else value
    return f'<td class="num"{_attributes({**data, "value": raw})}>{text(count(value) if shown is None else shown)}</td>'


def table(head: list[str], rows: list[list[str]], numeric: set[int] = frozenset(), name: str = "",
          total: list[str] | None = None) -> str:
    """A table: ``head`` (plain text), ``rows`` of cells made by :func:`cell` and
    :func:`number_cell`, an optional ``total`` row; ``numeric``: the columns whose
    headings align right; ``name`` goes into ``data-table``."""
    right = ' class="num"'
    heads = "".join(f'<th{right if i in numeric else ""}>{text(h)}</th>' for i, h in enumerate(head))
    body = "".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    if total is not None:
        body += f'<tr class="total">{"".join(total)}</tr>'
    return (f'<div class="scroll"><table data-table="{html.escape(name)}"><thead><tr>{heads}</tr></thead>'
            f"<tbody>{body}</tbody></table></div>")


def items(lines: list[str], name: str) -> str:
    """A list of input strings (warnings, notes), each escaped."""
    return f'<ul data-list="{html.escape(name)}">' + "".join(f"<li>{text(line)}</li>" for line in lines) + "</ul>"


def fact(label: str, value, shown: str, key: str) -> str:
    """A fact of the summary line: ``<span data-key=.. data-value=..>label shown</span>``
    (``label`` may be empty)."""
    return f'<span{_attributes({"key": key, "value": value})}>{text(" ".join(filter(None, (label, shown))))}</span>'


class Page:
    """A report being built: HTML parts and Bokeh figures in reading order. The
    figures are embedded by :meth:`render` as one Bokeh document; ``data-figures`` on
    the body says how many there are."""

    def __init__(self, title: str):
        self.title = title
        self._parts: list = []        # HTML text, or (name, figure): a chart where it stands

    def add(self, *parts: str) -> None:
        self._parts.extend(parts)

    def section(self, heading: str, name: str) -> None:
        self.add(f'<h2 id="{html.escape(name)}">{text(heading)}</h2>')

    def chart(self, name: str, figure) -> None:
        self._parts.append((name, figure))

    def render(self) -> str:
        from bokeh.document import Document
        from bokeh.embed import components
        from bokeh.resources import Resources

        figures = [part[1] for part in self._parts if isinstance(part, tuple)]
        document = Document()
        with document.models.freeze():    # the models collected once for all figures, not once per figure
            for figure in figures:
                document.add_root(figure)
        script, divs = components(figures) if figures else ("", [])
        placed = iter(divs)
        body = "\n".join(part if isinstance(part, str) else f'<div class="chart" data-chart="{html.escape(part[0])}">'
                         f"{next(placed)}</div>" for part in self._parts)
        bokeh_js = Resources(mode="inline", components=["bokeh"], log_level="warn").render_js() if figures else ""
        return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
                f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
                f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
                f"<title>{text(self.title)}</title>\n<style>{STYLE}</style>\n{bokeh_js}\n</head>\n"
                f'<body data-figures="{len(figures)}">\n{body}\n{script}\n</body>\n</html>\n')


def write_page(page: Page, path: Path) -> Path:
    """Write the page to ``path`` atomically (a complete file or none); returns ``path``."""
    data = page.render().encode()
    with AtomicFile(path) as out:
        out.file.write(data)
    return path
