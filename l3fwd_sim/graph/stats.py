"""What the graph's statistics say (``rte_graph_cluster_stats``, graph_stats.c; l3fwd_graph.md
§9): per node of the graphs named ``worker_*`` its calls, objects, ``realloc_count`` and
objects per call, summed over the graphs (a "cluster") in the order the graphs list
their nodes, each graph's own counters beside them, and the packets along each edge.

The real program prints the table every second on the main lcore; ``objs/sec`` and
``cycles/call`` depend on the machine and the time, and are shown as ``-``. Its source
nodes are polled until Ctrl-C, so their calls grow with time; here they are the walks
until every RX queue had seen the end of its capture.
"""
from __future__ import annotations

BORDER = ("+-------------------------------+---------------+---------------+---------------+---------------+"
          "---------------+-----------+")
XSTATS = ("ip4_lookup_error",)


def graph_stats(graphs) -> dict:
    """``stats.json``'s ``graph`` part from the run's :class:`~.walk.Graph` objects."""
    per_graph = {}
    cluster: dict[str, dict] = {}
    edges: dict[str, int] = {}
    for graph in graphs:
        nodes = graph.counters()
        per_graph[graph.name] = {"lcore": graph.lcore, "graph_id": graph.graph_id, "tx_queue": graph.graph_id,
                                 "walks": graph.walks, "nodes": nodes}
        for name, counters in nodes.items():
            total = cluster.setdefault(name, {"calls": 0, "objs": 0, "realloc_count": 0})
            for key in ("calls", "objs", "realloc_count"):
                total[key] += counters[key]
            for key, value in counters.get("xstats", {}).items():
                total.setdefault("xstats", {}).setdefault(key, 0)
                total["xstats"][key] += value
        for (src, dst), packets in graph.edges.items():
            edges[f"{src} -> {dst}"] = edges.get(f"{src} -> {dst}", 0) + packets
    return {"graphs": per_graph, "nodes": cluster, "edges": edges}


def format_cluster_table(nodes: dict) -> list[str]:
    """The table ``rte_graph_cluster_stats_get`` prints, for the nodes that had objects."""
    lines = [BORDER, f"{'|Node':<32}{'|calls':<16}{'|objs':<16}{'|realloc_count':<16}{'|objs/call':<16}"
                     f"{'|objs/sec(10E6)':<16}{'|cycles/call|':<16}", BORDER]
    for name, n in nodes.items():
        if not n["objs"]:
            continue
        per_call = n["objs"] // n["calls"] if n["calls"] else 0
        lines.append(f"|{name:<31}|{n['calls']:<15}|{n['objs']:<15}|{n['realloc_count']:<15}|{per_call:<15.3f}"
                     f"|{'-':<15}|{'-':<11}|")
        for xstat, count in n.get("xstats", {}).items():
            lines.append(f"|\t{xstat:<24}|{'':>15}|{count:<15}|{'':>15}|{'':>15}|{'':>15}|{'':>11}|")
    lines.append(BORDER)
    return lines
