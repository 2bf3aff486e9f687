"""The report's charts, as Bokeh figures: grouped bars, plain bars, a matrix.

Each takes the numbers as stats.json holds them and labels as they come: :func:`factors`
makes them printable (``text.printable``) and distinct. Bokeh draws every label on a
canvas, and its hover tooltips show field values as text (never ``{safe}`` here), so no
label can become markup. Figures have no toolbar and only a hover tool: the page is read,
not edited.
"""
from __future__ import annotations

from bokeh.models import ColumnDataSource, FactorRange, HoverTool, LinearColorMapper
from bokeh.palettes import Blues256, Category10_10, Reds256
from bokeh.plotting import figure
from bokeh.transform import factor_cmap

from ..text import printable

PALETTE = Category10_10
INTEGER = "{0,0}"           # Bokeh's number format: thousands separators, no decimals
MILLISECONDS = "{0,0.000}"
_ROW = 28                   # pixels per category of a horizontal bar chart or a matrix row


def factors(labels) -> list[str]:
    """Labels as a category axis takes them: printable, and distinct (an axis refuses a
    repeat, which only a doctored stats.json can bring: a repeat gets `` #2``)."""
    distinct: list[str] = []
    for label in map(printable, labels):
        name, n = label, 1
        while name in distinct:
            n += 1
            name = f"{label} #{n}"
        distinct.append(name)
    return distinct


def _figure(title: str, height: int, **options):
    plot = figure(title=title, height=height, sizing_mode="stretch_width", toolbar_location=None, tools="",
                  **options)
    plot.title.text_font_size = "13px"
    plot.outline_line_color = None
    return plot


def grouped_bars(title: str, groups: list[str], keys: list[str], values: list[list[int]], axis_label: str) -> object:
    """Vertical bars, one group per ``groups`` entry (a port, an lcore), one bar per key
    (rx, tx, ...) in each, coloured by key; ``values[group index][key index]``."""
    groups, keys = factors(groups), factors(keys)
    pairs = [(group, key) for group in groups for key in keys]
    source = ColumnDataSource({"x": pairs, "group": [g for g, _ in pairs], "key": [k for _, k in pairs],
                               "value": [n for row in values for n in row]})
    plot = _figure(title, 300, x_range=FactorRange(*pairs))
    plot.vbar(x="x", top="value", width=0.85, source=source, line_color="white",
              fill_color=factor_cmap("x", palette=PALETTE[:len(keys)], factors=keys, start=1, end=2))
    plot.add_tools(HoverTool(tooltips=[("", "@group"), ("", "@key"), ("packets", f"@value{INTEGER}")]))
    plot.y_range.start = 0
    plot.yaxis.axis_label = axis_label
    plot.xaxis.major_label_orientation = 0.9 if len(keys) > 4 else 0.0
    plot.xgrid.grid_line_color = None
    return plot


def bars(title: str, labels: list[str], values: list, axis_label: str, value_format: str = INTEGER,
         color: str = PALETTE[0], details: dict[str, list] | None = None) -> object:
    """Horizontal bars, one per label, top to bottom in the order given; the hover shows
    the value and ``details`` (more columns: name -> one value per label)."""
    details, labels = details or {}, factors(labels)
    source = ColumnDataSource({"label": labels, "value": values, **details})
    plot = _figure(title, 60 + _ROW * len(labels), y_range=FactorRange(*reversed(labels)))
    plot.hbar(y="label", right="value", height=0.7, source=source, color=color)
    plot.add_tools(HoverTool(tooltips=[("", "@label"), (axis_label, f"@value{value_format}"),
                                       *((name, f"@{{{name}}}") for name in details)]))
    plot.x_range.start = 0
    plot.xaxis.axis_label = axis_label
    plot.ygrid.grid_line_color = None
    return plot


def matrix(title: str, rows: list[str], columns: list[str], cells: list[tuple[int, int, int, bool]]) -> object:
    """A heatmap: ``rows`` top to bottom, ``columns`` left to right; each cell
    ``(row index, column index, packets, dropped)`` drawn in blue (sent) or red
    (dropped), darker for more (each colour scaled to its own largest cell: drops are
    usually few), with its count written on it. Cells not given are empty."""
    rows, columns = factors(rows), factors(columns)
    plot = _figure(title, 90 + _ROW * 2 * len(rows), x_range=FactorRange(*columns),
                   y_range=FactorRange(*reversed(rows)), x_axis_location="above")
    squares = []
    for dropped, palette in ((False, Blues256), (True, Reds256)):
        chosen = [c for c in cells if c[3] == dropped]
        source = ColumnDataSource({"row": [rows[c[0]] for c in chosen], "column": [columns[c[1]] for c in chosen],
                                   "packets": [c[2] for c in chosen],
                                   "shown": [f"{c[2]:,}" for c in chosen]})
        # the palettes run dark to light: the lightest part is left out, so that every cell
        # shows and its white count can be read
        mapper = LinearColorMapper(palette=palette[:150][::-1], low=0, high=max((c[2] for c in chosen), default=1))
        squares.append(plot.rect(x="column", y="row", width=0.96, height=0.92, source=source,
                                 fill_color={"field": "packets", "transform": mapper}, line_color=None))
        plot.text(x="column", y="row", text="shown", source=source, text_align="center",
                  text_baseline="middle", text_font_size="12px", text_color="white")
    plot.add_tools(HoverTool(renderers=squares,
                             tooltips=[("RX port", "@row"), ("to", "@column"), ("packets", f"@packets{INTEGER}")]))
    plot.grid.grid_line_color = None
    plot.axis.axis_line_color = None
    plot.axis.major_tick_line_color = None
    plot.xaxis.major_label_orientation = 0.6 if len(columns) > 6 else 0.0
    return plot
