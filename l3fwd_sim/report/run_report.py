"""A run's report: ``OUT/stats.json`` of ``run`` or ``testpmd`` as ``OUT/report.html``.

Sections, each a table (every number with its raw value in ``data-value``) and a chart:
the ports' counters; where each RX port's packets went (TX port or drop reason); drops
by reason; the graph's nodes and the node graph drawn (l3fwd-graph only); the lcores
and RSS queues (several lcores only); the rule lines that decided most packets (l3fwd's
``run`` only); the time per stage; the warnings. Every number is one that
stats.json holds, shown as it is (integers exactly; durations and shares rounded in the
text only).
"""
from __future__ import annotations

from pathlib import Path

from ..dataplane.stats import SETUP_NAMES, format_duration
from ..l3fwd.rule_hits import rule_texts
from . import charts
from .page import Page, cell, count, fact, items, number_cell, table, text, write_page
from .schema import EDGE, load_stats

STATS_FILE = "stats.json"
REPORT_FILE = "report.html"
PORT_KEYS = ("rx", "tx", "dropped", "out")
LCORE_KEYS = ("rx", "tx", "dropped")
TOP_RULES = 10
ANY_PORT = "tx (any port)"          # the destination column of a stats.json without per-port "to" (older runs)
GRAPH_APP = "l3fwd-graph"           # options.app of run --app graph and dpdk-l3fwd-graph
NODE_KEYS = ("calls", "objs", "realloc_count")
GRAPH_KEYS = ("lcore", "graph_id", "tx_queue", "walks")
DROP_NODE = "pkt_drop"
# the node graph's columns by the nodes' names (graph/nodes.py); the TX nodes, pkt_drop and
# any node not named here make the last
NODE_COLUMNS = (("ethdev_rx-",), ("pkt_cls",), ("ip4_lookup", "ip6_lookup"), ("ip4_rewrite", "ip6_rewrite"))


def write_report(outdir: str | Path) -> Path:
    """Write ``outdir/report.html`` from ``outdir/stats.json`` (atomically); returns its
    path. ``outdir`` may name the stats file itself (``L3FWD_SIM_STATS=FILE`` of a
    verbatim command): the page goes beside it, ``report.html`` for a ``stats.json``,
    else the file's name with ``.html``. A missing or malformed stats file is a SimError
    naming it."""
    given = Path(outdir)
    if given.is_dir() or (not given.exists() and given.suffix != ".json"):
        stats_path, report_path = given / STATS_FILE, given / REPORT_FILE
    else:
        stats_path = given
        report_path = given.parent / (REPORT_FILE if given.name == STATS_FILE else f"{given.stem}.html")
    stats = load_stats(stats_path)
    return write_page(run_page(stats, stats_path), report_path)


def run_page(stats: dict, stats_path: Path) -> Page:
    """The page of one run's stats (``stats_path``: where they were read, named on the
    page and used to find the rule files' lines)."""
    graph_run = stats["options"].get("app") == GRAPH_APP
    kind = "testpmd" if "forward_mode" in stats["options"] else "l3fwd-graph run" if graph_run else "l3fwd run"
    page = Page(f"l3fwd-sim report: {kind} ({stats_path})")
    page.add(f"<h1>l3fwd-sim report: {text(kind)}</h1>", _summary(stats, kind),
             f'<p class="note">from <span class="path">{text(stats_path)}</span></p>')
    _inputs(page, stats["options"], "RX queue (port.queue)" if graph_run else "RX port")
    _ports(page, stats)
    _destinations(page, stats)
    _drops(page, stats)
    if "graph" in stats:
        _graph_nodes(page, stats["graph"])
        _node_graph(page, stats["graph"])
    if "lcores" in stats:
        _lcores(page, stats["lcores"])
    if "rules" in stats:
        _rules(page, stats, stats_path)
    _stages(page, stats)
    page.section("Warnings", "warnings")
    page.add(items(stats["warnings"], "warnings") if stats["warnings"] else '<p class="note">none</p>')
    return page


def _summary(stats: dict, kind: str) -> str:
    """The title line: what ran, how, on how many ports and packets, in how long."""
    options, facts = stats["options"], [fact("", kind, kind, "kind")]
    for key, label in (("dpdk", "DPDK"), ("lookup", "lookup"), ("pipeline", "pipeline"), ("forward_mode", "forward mode"),
                       ("port_topology", "topology")):
        if key in options:
            facts.append(fact(label, options[key], str(options[key]), key))
    ports = len(stats["ports"])
    facts.append(fact("ports", ports, count(ports), "ports"))
    if "lcores" in stats:
        lcores = len(stats["lcores"]["per_lcore"])
        facts.append(fact("lcores", lcores, count(lcores), "lcores"))
    if "graph" in stats:
        graphs = len(stats["graph"]["graphs"])
        facts.append(fact("graphs", graphs, count(graphs), "graphs"))
    facts.append(fact("packets", stats["totals"]["rx"], count(stats["totals"]["rx"]), "packets"))
    facts.append(fact("elapsed", stats["elapsed_seconds"], format_duration(stats["elapsed_seconds"]), "elapsed"))
    if stats.get("trace"):
        trace = stats["trace"]
        facts.append(fact(f"traced into {trace['file']}:", trace["packets"], count(trace["packets"]), "traced"))
    return f'<p class="summary">{"".join(facts)}</p>'


def _inputs(page: Page, options: dict, reader: str) -> None:
    """Which capture each RX port (l3fwd-graph: RX queue) read (options.inputs), as the
    run named it."""
    inputs = options.get("inputs", {})
    if inputs:
        page.add(table([reader, "capture"], [[cell(port, port=port), cell(path, port=port, key="input")]
                                                for port, path in inputs.items()], name="inputs"))


def _ports(page: Page, stats: dict) -> None:
    """Per port rx, tx, dropped, out (and TX bursts where l3fwd's TX model ran), then the
    totals; grouped bars of the same."""
    ports = stats["ports"]
    bursts = any("tx_model" in p for p in ports.values())
    head = ["port", *PORT_KEYS, *(["tx bursts"] if bursts else [])]
    rows = []
    for port, entry in ports.items():
        row = [cell(port), *(number_cell(entry[key], port=port, key=key) for key in PORT_KEYS)]
        if bursts:
            calls = entry.get("tx_model", {}).get("tx_burst_calls")
            row.append(cell("") if calls is None else number_cell(calls, port=port, key="tx_burst_calls"))
        rows.append(row)
    totals = stats["totals"]
    # like the terminal table: the packets out of all ports are the packets transmitted
    total = [cell("all"), *(number_cell(totals[key], port="all", key=key) for key in ("rx", "tx", "dropped")),
             number_cell(totals["tx"], port="all", key="out"), *([cell("")] if bursts else [])]
    page.section("Ports", "ports")
    page.add(table(head, rows, numeric=set(range(1, len(head))), name="ports", total=total))
    page.chart("ports", charts.grouped_bars("packets per port", [f"port {p}" for p in ports], list(PORT_KEYS),
                                            [[e[key] for key in PORT_KEYS] for e in ports.values()], "packets"))


def _destinations(page: Page, stats: dict) -> None:
    """RX port → TX port (``ports[p]["to"]``) or drop reason (``ports[p]["drops"]``), as
    a table and a matrix. Without ``to`` (stats of an l3fwd-sim that does not count it)
    one column holds each port's ``tx``, on any port."""
    ports = {p: e for p, e in stats["ports"].items() if e["rx"]}
    if not ports:
        return
    by_port = all("to" in e for e in ports.values())
    if by_port:
        targets = [t for t in _in_order(list(stats["ports"]), (e["to"] for e in ports.values()))
                   if any(t in e["to"] for e in ports.values())]
        sent = [(t, f"port {t}") for t in targets]           # (key in "to", column label)
    else:
        sent = [("tx", ANY_PORT)]
    reasons = [r for r in _in_order(list(stats["drops"]), (e["drops"] for e in stats["ports"].values()))
               if any(r in e["drops"] for e in ports.values())]
    columns = [*sent, *((f"drop:{r}", f"drop: {r}") for r in reasons)]

    def packets(entry: dict, key: str) -> int | None:
        if key.startswith("drop:"):
            return entry["drops"].get(key[5:])
        return entry["to"].get(key) if by_port else entry["tx"] or None

    rows, cells = [], []
    for i, (port, entry) in enumerate(ports.items()):
        row = [cell(port)]
        for j, (key, _) in enumerate(columns):
            n = packets(entry, key)
            row.append(cell("", rx_port=port, to=key) if n is None else number_cell(n, rx_port=port, to=key))
            if n:
                cells.append((i, j, n, key.startswith("drop:")))
        rows.append(row)
    page.section("Where each RX port's packets went", "destinations")
    if not by_port:
        page.add('<p class="note">this stats.json does not say which TX port: one column counts the packets '
                 "sent out of any port</p>")
    page.add(table(["RX port", *(label for _, label in columns)], rows, numeric=set(range(1, len(columns) + 1)),
                   name="destinations"))
    page.chart("destinations", charts.matrix("RX port → TX port or drop reason", [f"port {p}" for p in ports],
                                             [label for _, label in columns], cells))


def _in_order(order: list[str], maps) -> list[str]:
    """``order`` (stats.json's: the ports, or ``drops``' reasons), then the keys of
    ``maps`` it does not hold, as they come."""
    order = list(order)
    for keys in maps:
        order.extend(k for k in keys if k not in order)
    return order


def _drops(page: Page, stats: dict) -> None:
    """Every reason of stats.json's ``drops`` in the table, zeros included; the chart
    draws the reasons that dropped something."""
    drops = stats["drops"]
    page.section("Drops by reason", "drops")
    page.add(table(["reason", "packets"], [[cell(reason), number_cell(n, reason=reason, key="drops")]
                                           for reason, n in drops.items()], numeric={1}, name="drops"))
    hit = {reason: n for reason, n in drops.items() if n}
    if hit:
        page.chart("drops", charts.bars("drops by reason", list(hit), list(hit.values()),
                                        "packets", color=charts.PALETTE[3]))
    else:
        page.add('<p class="note">no packet was dropped</p>')


def _graph_nodes(page: Page, graph: dict) -> None:
    """The nodes' counters summed over the graphs (the cluster ``rte_graph_cluster_stats``
    prints), bars of their objects; each graph's lcore, TX queue and walks, and with
    several graphs each one's nodes."""
    nodes, graphs = graph["nodes"], graph["graphs"]
    head, numeric = ["node", *NODE_KEYS, "objs/call"], {1, 2, 3, 4}
    page.section("Graph nodes", "graph_nodes")
    page.add(table(head, _node_rows(nodes), numeric=numeric, name="graph_nodes"))
    page.chart("graph_nodes", charts.bars("objects per node (all graphs)", list(nodes),
                                          [n["objs"] for n in nodes.values()], "objects", color=charts.PALETTE[2],
                                          details={"calls": [count(n["calls"]) for n in nodes.values()]}))
    page.add(table(["graph", "lcore", "graph id", "TX queue", "walks"],
                   [[cell(name), *(number_cell(g[key], graph=name, key=key) for key in GRAPH_KEYS)]
                    for name, g in graphs.items()], numeric=numeric, name="graphs"))
    if len(graphs) > 1:
        for name, g in graphs.items():
            page.add(f"<h3>{text(name)}</h3>", table(head, _node_rows(g["nodes"], graph=name), numeric=numeric,
                                                     name="graph_nodes_per_graph"))


def _node_rows(nodes: dict, **where) -> list[list[str]]:
    """Per node its counters and objects per call (the integer quotient, as
    ``rte_graph_cluster_stats`` prints it), then a row per xstat, its count under objs as
    there too; ``where``: more data attributes of the numbers (the graph)."""
    rows = []
    for node, n in nodes.items():
        per_call = n["objs"] // n["calls"] if n["calls"] else 0
        rows.append([cell(node), *(number_cell(n[key], node=node, key=key, **where) for key in NODE_KEYS),
                     number_cell(per_call, node=node, key="objs_per_call", **where)])
        rows += [[cell(f"↳ {xstat}"), cell(""), number_cell(value, node=node, key="xstat", xstat=xstat, **where),
                  cell(""), cell("")] for xstat, value in n.get("xstats", {}).items()]
    return rows


def _node_graph(page: Page, graph: dict) -> None:
    """The nodes of ``graph.nodes`` in columns (RX nodes, pkt_cls, the lookups, the
    rewrites, then the TX nodes and pkt_drop), an arrow per edge of ``graph.edges`` as
    wide as its packets and labelled with them (an edge that carried nothing is not in
    stats.json, so not drawn); then the edges as a table."""
    columns: list[list[str]] = [[] for _ in range(len(NODE_COLUMNS) + 1)]
    for node in sorted(graph["nodes"], key=lambda node: node == DROP_NODE):      # pkt_drop below the TX nodes
        columns[next((i for i, names in enumerate(NODE_COLUMNS) if node.startswith(names)), -1)].append(node)
    edges = [(*key.split(EDGE), n) for key, n in graph["edges"].items()]
    page.section("Node graph", "node_graph")
    page.chart("node_graph", charts.node_graph(
        "packets along each edge (all graphs)", [column for column in columns if column], edges, DROP_NODE,
        details={key: {node: n[key] for node, n in graph["nodes"].items()} for key in NODE_KEYS}))
    page.add(table(["from", "to", "packets"], [[cell(a), cell(b), number_cell(n, edge=f"{a}{EDGE}{b}", key="packets")]
                                               for a, b, n in edges], numeric={2}, name="edges"))


def _lcores(page: Page, lcores: dict) -> None:
    """Per lcore its packets, share and queues; the imbalance; the packets of each RX
    queue (how RSS spread a port's capture)."""
    per_lcore = lcores["per_lcore"]
    page.section("Lcores", "lcores")
    imbalance = lcores["imbalance"]
    label = "imbalance (the busiest lcore’s rx over the mean):"
    page.add(f'<p>{fact(label, imbalance, f"{imbalance:.2f}", "imbalance")}</p>')
    rows = [[cell(lcore), *(number_cell(e[key], lcore=lcore, key=key) for key in LCORE_KEYS),
             number_cell(e["share"], f"{e['share']:.1%}", lcore=lcore, key="share"),
             number_cell(e["tx_queue"], lcore=lcore, key="tx_queue"),
             cell(" ".join(".".join(map(str, queue)) for queue in e["rx_queues"]), lcore=lcore, key="rx_queues")]
            for lcore, e in per_lcore.items()]
    page.add(table(["lcore", *LCORE_KEYS, "share", "TX queue", "RX queues (port.queue)"], rows,
                   numeric={1, 2, 3, 4, 5}, name="lcores"))
    labels = [f"lcore {lcore}" for lcore in per_lcore]
    page.chart("lcores", charts.grouped_bars("packets per lcore", labels, list(LCORE_KEYS),
                                             [[e[key] for key in LCORE_KEYS] for e in per_lcore.values()], "packets"))
    queues = [(lcore, queue, n) for lcore, e in per_lcore.items() for queue, n in e["rx_per_queue"].items()]
    page.add(table(["lcore", "RX queue (port.queue)", "rx"],
                   [[cell(lcore), cell(queue), number_cell(n, lcore=lcore, queue=queue, key="rx")]
                    for lcore, queue, n in queues], numeric={2}, name="rx_per_queue"))
    page.chart("rx_per_queue", charts.bars("packets per RX queue (RSS)",
                                           [f"lcore {l}: queue {q}" for l, q, _ in queues],
                                           [n for _, _, n in queues], "packets", color=charts.PALETTE[2]))


def _rules(page: Page, stats: dict, stats_path: Path) -> None:
    """The rule files, the lines never hit, and the lines that decided most packets
    with their text as the files read now."""
    rules = stats["rules"]
    page.section("Rules", "rules")
    facts = [fact("rule lines:", len(rules), count(len(rules)), "rule_lines")]
    if "rules_never_hit" in stats:
        facts.append(fact("installed lines never hit:", stats["rules_never_hit"], count(stats["rules_never_hit"]),
                          "rules_never_hit"))
    left_out = stats.get("rules_not_installed", {})
    if left_out:                  # lines to ports outside the portmask: l3fwd installs none of them
        total = sum(left_out.values())
        facts.append(fact("lines not installed (port outside the portmask):", total, count(total),
                          "rules_not_installed"))
    page.add(f'<p class="summary">{"".join(facts)}</p>')
    if left_out:
        page.add(table(["port", "rule lines not installed"],
                       [[cell(port), number_cell(n, port=port, key="rules_not_installed")]
                        for port, n in left_out.items()], numeric={1}, name="rules_not_installed"))
    files = list(dict.fromkeys((r["table"], r["file"]) for r in rules))
    page.add(table(["table", "rule file"], [[cell(t), cell(f, table=t, key="rule_file")] for t, f in files],
                   name="rule_files"))
    top = sorted((r for r in rules if r["packets"]), key=lambda r: -r["packets"])[:TOP_RULES]   # ties: file order
    if not top:
        page.add('<p class="note">no rule line decided a packet</p>')
        return
    notes: list[str] = []
    lines = rule_texts(top, stats_path, notes)
    rows = []
    for r, line in zip(top, lines):
        where = f"{r['file']}:{r['line']}"
        rows.append([cell(where, key="rule"), cell(r["table"]), cell("yes" if r["installed"] else "no"),
                     number_cell(r["packets"], rule=where, key="packets"),
                     number_cell(r["bytes"], rule=where, key="bytes"), f"<td><code>{text(line)}</code></td>"])
    page.add(f"<h3>The {len(top)} rule lines that decided most packets</h3>",
             table(["file:line", "table", "installed", "packets", "bytes", "rule"], rows, numeric={3, 4},
                   name="top_rules"))
    if notes:
        page.add(items(notes, "rule_notes"))
    # the table names a line's file whole, the chart by its name only: with the line and
    # the table (each table has one file) that tells the lines apart
    page.chart("top_rules", charts.bars(
        "rule lines by packets decided", [f"{Path(r['file']).name}:{r['line']} ({r['table']})" for r in top],
        [r["packets"] for r in top], "packets", color=charts.PALETTE[4],
        details={"bytes": [count(r["bytes"]) for r in top]}))


def _stages(page: Page, stats: dict) -> None:
    """Each stage's total time and time per packet; the one-time costs apart."""
    stages, per_packet, setup = stats["stages_ms"], stats["stages_ns_per_packet"], stats["setup_ms"]
    page.section("Time per stage", "stages")
    rows = [[cell(stage), number_cell(ms, format_duration(ms / 1e3), stage=stage, key="ms"),
             number_cell(per_packet[stage], format_duration(per_packet[stage] / 1e9), stage=stage,
                         key="ns_per_packet") if stage in per_packet else cell("")]
            for stage, ms in stages.items()]
    once = {what: f"{SETUP_NAMES.get(what, what)} (one-time)" for what in setup}
    rows += [[cell(once[what]), number_cell(ms, format_duration(ms / 1e3), setup=what, key="ms"), cell("")]
             for what, ms in setup.items()]
    if not rows:
        page.add('<p class="note">no stage was timed</p>')
        return
    page.add(table(["stage", "total", "per packet"], rows, numeric={1, 2}, name="stages"))
    shown = [*(format_duration(per_packet[s] / 1e9) if s in per_packet else "" for s in stages),
             *(["one-time"] * len(setup))]
    page.chart("stages", charts.bars("time per stage (ms)", [*stages, *once.values()],
                                     [*stages.values(), *setup.values()], "ms", charts.MILLISECONDS,
                                     color=charts.PALETTE[1], details={"per packet": shown}))
