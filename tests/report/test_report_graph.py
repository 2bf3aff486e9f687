"""The report of an l3fwd-graph run: the nodes' counters (all graphs, and each graph when
there are several) and the edges read back from the HTML equal stats.json's ``graph``;
the node graph's drawing, as the page embeds it for Bokeh, labels every edge with its
count, in the layered layout, with no edge through a node; a bad ``graph`` section ends
in one line."""
from __future__ import annotations

import html
import json
import re

import pytest
from report_pages import check_graph_values, check_run_values, parse_page

from l3fwd_sim.report import write_report

COLUMNS = {"ethdev_rx": 0, "pkt_cls": 1, "ip4_lookup": 2, "ip6_lookup": 2, "ip4_rewrite": 3, "ip6_rewrite": 3,
           "ethdev_tx": 4, "pkt_drop": 4}


def _stats(report) -> dict:
    return json.loads((report.parent / "stats.json").read_text())


def drawn(page_text: str, renderer: str) -> dict[str, list]:
    """The data of a renderer of the page's Bokeh document (charts.node_graph names its
    own), as the page embeds it: the JSON in the script's string, each object once in
    full and then by id."""
    literal = re.search(r"const docs_json = '(.*?)';", page_text)[1]
    docs = json.loads(html.unescape(literal.replace("\\\\", "\\")))     # embed.elements' escaping undone
    objects = {}

    def collect(value):
        if isinstance(value, dict):
            if value.get("type") == "object" and "attributes" in value:
                objects[value["id"]] = value
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(docs)
    found = next(o for o in objects.values() if o["attributes"].get("name") == renderer)
    source = objects[found["attributes"]["data_source"]["id"]]
    return dict(source["attributes"]["data"]["entries"])


def _column(node: str) -> int:
    return COLUMNS[node.rsplit("-", 2)[0] if node.startswith("ethdev_") else node]


@pytest.mark.parametrize("name", ("graph", "graph2"))
def test_the_graph_page_holds_stats_json(graph_runs, name):
    stats = _stats(graph_runs[name])
    page = parse_page(graph_runs[name].read_text())
    check_run_values(page.values, stats)
    check_graph_values(page.values, stats["graph"])
    facts = {v["key"]: v["value"] for v in page.values if v.get("key") in ("kind", "graphs")}     # the summary's
    assert facts["kind"] == "l3fwd-graph run" and int(facts["graphs"]) == len(stats["graph"]["graphs"])
    sections = [attrs["id"] for tag, attrs in page.tags if tag == "h2"]
    assert sections == ["ports", "destinations", "drops", "graph_nodes", "node_graph", "stages", "warnings"]


def test_two_graphs_split_the_ports(graph_runs):
    """The run the page shows is the one asked for: worker_1 polled ports 0 and 1, worker_2
    ports 2 and 3, and the cluster is their sum."""
    graph = _stats(graph_runs["graph2"])["graph"]
    assert {name: sorted(n for n in g["nodes"] if n.startswith("ethdev_rx")) for name, g in graph["graphs"].items()} \
        == {"worker_1": ["ethdev_rx-0-0", "ethdev_rx-1-0"], "worker_2": ["ethdev_rx-2-0", "ethdev_rx-3-0"]}
    assert graph["nodes"]["pkt_cls"]["objs"] == sum(g["nodes"]["pkt_cls"]["objs"] for g in graph["graphs"].values())


@pytest.mark.parametrize("name", ("graph", "graph2"))
def test_every_edge_is_drawn_with_its_count(graph_runs, name):
    graph = _stats(graph_runs[name])["graph"]
    labels = drawn(graph_runs[name].read_text(), "edge_labels")
    assert sorted(zip(labels["from"], labels["to"], labels["shown"])) == \
        sorted((*edge.split(" -> "), f"{n:,}") for edge, n in graph["edges"].items())
    assert len(graph["edges"]) >= 10


def test_the_drawing_is_layered_and_no_edge_runs_through_a_node(graph_runs):
    """Each node in its column (RX, pkt_cls, lookups, rewrites, TX and pkt_drop), pkt_drop
    at the bottom of its; every point of every edge outside every node's box; the wider
    edges carry more packets."""
    text = graph_runs["graph"].read_text()
    stats = _stats(graph_runs["graph"])
    nodes, edges = drawn(text, "nodes"), drawn(text, "edges")
    assert sorted(nodes["name"]) == sorted(stats["graph"]["nodes"])
    place = dict(zip(nodes["name"], zip(nodes["x"], nodes["y"])))
    assert {node: x for node, (x, _) in place.items()} == {node: _column(node) for node in place}
    assert place["pkt_drop"][1] == min(y for x, y in place.values() if x == 4)
    width, height = 0.6, 0.5                                    # charts._BOX
    for xs, ys in zip(edges["xs"], edges["ys"]):
        for x, y in zip(xs, ys):
            inside = [n for n, (cx, cy) in place.items() if abs(x - cx) < width / 2 - 1e-9 and abs(y - cy) < height / 2]
            assert inside == [], (x, y)
    by_packets = sorted(zip(edges["packets"], edges["width"]))
    assert [w for _, w in by_packets] == sorted(w for _, w in by_packets) and by_packets[0][1] < by_packets[-1][1]


def test_a_node_the_report_does_not_know_is_drawn_last(graph_runs, tmp_path):
    """A node of a later l3fwd-graph (not one this report names) makes no traceback: its
    counters in the table, it in the last column, its edges drawn."""
    stats = _stats(graph_runs["graph"])
    stats["graph"]["nodes"]["ip4_local"] = {"calls": 1, "objs": 3, "realloc_count": 1}
    stats["graph"]["edges"]["ip4_lookup -> ip4_local"] = 3
    (tmp_path / "stats.json").write_text(json.dumps(stats))
    text = write_report(tmp_path).read_text()
    check_graph_values(parse_page(text).values, stats["graph"])
    nodes = drawn(text, "nodes")
    assert nodes["x"][nodes["name"].index("ip4_local")] == 4
    assert "3" in drawn(text, "edge_labels")["shown"]


@pytest.mark.parametrize("change,said", [
    (lambda g: g["edges"].update({"pkt_cls => pkt_drop": 1}), "graph.edges.pkt_cls => pkt_drop: not two nodes"),
    (lambda g: g["edges"].update({"pkt_cls -> nowhere": 1}), "graph.edges.pkt_cls -> nowhere: not two nodes"),
    (lambda g: g["nodes"]["pkt_cls"].update(objs=-1), "graph.nodes.pkt_cls.objs: -1 is not a number >= 0"),
    (lambda g: g["graphs"]["worker_1"]["nodes"]["ip4_lookup"]["xstats"].update(ip4_lookup_error="7"),
     "graph.graphs.worker_1.nodes.ip4_lookup.xstats.ip4_lookup_error: not int"),
    (lambda g: g.pop("edges"), "graph.edges: missing"),
], ids=["arrow", "unknown-node", "negative", "xstat", "no-edges"])
def test_a_bad_graph_section_is_one_line(graph_runs, tmp_path, cli, change, said):
    stats = _stats(graph_runs["graph"])
    change(stats["graph"])
    (tmp_path / "stats.json").write_text(json.dumps(stats))
    done = cli("report", tmp_path)
    assert done.exit_code == 2 and said in done.stderr and len(done.stderr.splitlines()) == 1
    assert not (tmp_path / "report.html").exists()
