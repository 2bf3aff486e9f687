"""The report's charts, as Bokeh figures: grouped bars, plain bars, a matrix, a node graph.

Each takes the numbers as stats.json holds them and labels as they come: :func:`factors`
makes them printable (``text.printable``) and distinct. Bokeh draws every label on a
canvas, and its hover tooltips show field values as text (never ``{safe}`` here), so no
label can become markup. Figures have no toolbar and only a hover tool: the page is read,
not edited.
"""
from __future__ import annotations

import math

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


_BOX = 0.6, 0.5             # a node's width and height in a node graph; its columns are 1 apart, its rows 1
_LANE = 0.3                 # the space between two edges that run below the columns they skip


def node_graph(title: str, columns: list[list[str]], edges: list[tuple[str, str, int]], dropped: str = "",
               details: dict[str, dict[str, int]] | None = None) -> object:
    """A graph of nodes in layers: ``columns`` left to right, each its nodes top to
    bottom, centred; an arrow per edge ``(from, to, packets)``, wider for more packets,
    labelled with its count. The edges into ``dropped``, and it, are red. An edge to the
    next column is an S-curve; one that skips columns goes down to a lane of its own below
    their nodes and along it, so that it crosses no node. The hover of a node shows its
    ``details`` (a name -> per node a count). The renderers are named ``nodes``, ``edges``
    and ``edge_labels``, for a reader of the page's document to find."""
    details = details or {}
    place = {node: (x, (len(column) - 1) / 2 - y) for x, column in enumerate(columns) for y, node in enumerate(column)}
    width, height = _BOX
    skipping = sorted((e for e in edges if place[e[1]][0] - place[e[0]][0] > 1),
                      key=lambda e: (-place[e[0]][0], -place[e[0]][1]))    # lanes: the later, higher sources on top
    below = min((y for x, y in place.values() if any(place[a][0] < x < place[b][0] for a, b, _ in skipping)),
                default=0) - 0.6
    lane = {(a, b): below - _LANE * i for i, (a, b, _) in enumerate(skipping)}
    widest = max((n for _, _, n in edges), default=0) or 1
    xs, ys, label_x, label_y = [], [], [], []
    for a, b, _ in edges:
        (x0, y0), (x1, y1) = place[a], place[b]
        x0, x1 = x0 + width / 2, x1 - width / 2
        if (a, b) in lane:          # down in the first gap, along the lane, up (or down) in the last
            out, back = _curve(x0, y0, x0 + 1 - width, lane[a, b]), _curve(x1 - 1 + width, lane[a, b], x1, y1)
            xs.append(out[0] + back[0]), ys.append(out[1] + back[1])
            label_x.append((x0 + x1) / 2), label_y.append(lane[a, b])
        else:
            x, y = _curve(x0, y0, x1, y1)
            xs.append(x), ys.append(y)
            label_x.append((x0 + x1) / 2), label_y.append((y0 + y1) / 2)
    red, blue = PALETTE[3], PALETTE[0]
    lines = ColumnDataSource({"xs": xs, "ys": ys, "from": [printable(a) for a, _, _ in edges],
                              "to": [printable(b) for _, b, _ in edges], "packets": [n for _, _, n in edges],
                              "width": [1.5 + 8 * n / widest for _, _, n in edges],
                              "color": [red if b == dropped else blue for _, b, _ in edges],
                              "end_x": [x[-1] - 0.03 for x in xs], "end_y": [y[-1] for y in ys],
                              "label_x": label_x, "label_y": label_y, "shown": [f"{n:,}" for _, _, n in edges]})
    nodes = list(place)
    boxes = ColumnDataSource({"x": [place[n][0] for n in nodes], "y": [place[n][1] for n in nodes],
                              "name": [printable(n) for n in nodes],
                              "color": ["#fbe0e0" if n == dropped else "#e8eef5" for n in nodes],
                              **{key: [values.get(n, 0) for n in nodes] for key, values in details.items()}})
    low = min([y for _, y in place.values()] + list(lane.values()), default=0)
    high = max((y for _, y in place.values()), default=0)
    plot = _figure(title, 80 + int(56 * (high - low + 1)), x_range=(-0.5, len(columns) - 0.5),
                   y_range=(low - 0.6, high + 0.6))
    paths = plot.multi_line(xs="xs", ys="ys", line_width="width", line_color="color", line_alpha=0.55, source=lines,
                           name="edges")
    plot.scatter(x="end_x", y="end_y", marker="triangle", angle=-math.pi / 2, size=9, color="color", source=lines)
    squares = plot.rect(x="x", y="y", width=width, height=height, source=boxes, fill_color="color",
                        line_color="#5b6670", name="nodes")
    plot.text(x="x", y="y", text="name", source=boxes, text_align="center", text_baseline="middle",
              text_font_size="11px")
    plot.text(x="label_x", y="label_y", text="shown", source=lines, text_align="center", text_baseline="middle",
              text_font_size="11px", background_fill_color="white", background_fill_alpha=0.85,
              name="edge_labels")
    plot.add_tools(HoverTool(renderers=[paths], tooltips=[("", "@from → @to"), ("packets", f"@packets{INTEGER}")]),
                   HoverTool(renderers=[squares], tooltips=[("", "@name"), *((key, f"@{{{key}}}{INTEGER}")
                                                                              for key in details)]))
    plot.axis.visible = False
    plot.grid.grid_line_color = None
    return plot


def _curve(x0: float, y0: float, x1: float, y1: float, points: int = 16) -> tuple[list[float], list[float]]:
    """An S-curve from (x0, y0) to (x1, y1), level at both ends (so the arrow head at its
    end points along it): y follows smoothstep over x."""
    steps = [i / (points - 1) for i in range(points)]
    return [x0 + (x1 - x0) * t for t in steps], [y0 + (y1 - y0) * t * t * (3 - 2 * t) for t in steps]
