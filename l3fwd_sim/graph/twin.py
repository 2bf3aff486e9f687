"""The graph's compiled twin as the Python side calls it: ``walks.c`` runs every walk of
a super-burst in one call — ``rte_graph_walk`` (RTC) over the sources in reverse
``--config`` order, the pending ring, streams moved and grown, and the nodes
(pkt_cls, ip4/ip6 lookup and rewrite, ethdev_tx, pkt_drop) — and
:func:`walk_burst_compiled` leaves the graph, its nodes' counters and edges, and
``graph.packets`` exactly as :func:`~.run.walk_burst` does (``walk.py``, ``nodes.py``:
the definition). It runs when the run uses the compiled twins (:mod:`l3fwd_sim.compiled`)
and ``--pcap-enable`` is off.

``walks.c`` numbers the nodes: the six of :data:`FIXED_NODES`, one ethdev_tx per
enabled port, then the sources in walk order (:func:`node_names`).
"""
from __future__ import annotations

import numpy as np

from ..dataplane import rx
from .nodes import DROP_REASONS, Packets
from .walk import Graph

FIXED_NODES = ("pkt_drop", "pkt_cls", "ip4_lookup", "ip6_lookup", "ip4_rewrite", "ip6_rewrite")  # enum graph_node
COUNTERS = ("size", "calls", "objs", "realloc_count")    # struct graph_node_counters


def tx_nodes(graph: Graph) -> list[str]:
    """The graph's ethdev_tx nodes, one per enabled port, ascending."""
    return [name for name in graph.node if name.startswith("ethdev_tx-")]


def node_names(graph: Graph) -> list[str]:
    """The graph's nodes in ``walks.c``'s numbering."""
    return [*FIXED_NODES, *tx_nodes(graph), *(source.name for source in graph.sources)]


def walk_burst_compiled(k, graph: Graph, batch, queues: int, places: list, oversize_code: int) -> np.ndarray:
    """:func:`~.run.walk_burst` by ``graph_walks``: the walks of the super-burst
    ``batch``; returns the packets sent, in the order the ethdev_tx nodes sent them."""
    if k.GRAPH_NODES != FIXED_NODES or k.GRAPH_DROP_REASONS != DROP_REASONS:
        raise AssertionError("walks.c and the graph's Python number nodes or drop reasons differently")
    names = node_names(graph)
    number = {name: i for i, name in enumerate(names)}
    nodes = [graph.node[name] for name in names]
    counters = np.array([[getattr(node, field) for field in COUNTERS] for node in nodes], np.int64)
    edges = np.zeros((len(names), len(names)), np.int64)
    for (src, dst), packets in graph.edges.items():
        edges[number[src], number[dst]] = packets
    state = graph.nodes
    scalars = np.array([number[state.cls_spec], number[state.rewrite_spec[4]], number[state.rewrite_spec[6]],
                        state.lookup_errors, graph.walks], np.int64)          # struct graph_state
    new_edges = np.empty((len(names) ** 2, 2), np.int64)
    tables = state.tables
    tx_port = np.array([int(name.rpartition("-")[2]) for name in tx_nodes(graph)], np.int64)
    n = len(batch)
    pk = graph.packets = Packets(batch.heads, batch.caplen, np.empty(n, np.uint8))
    sent = np.empty(n, np.int64)
    walks = int(batch.burst[-1]) // queues - int(batch.burst[0]) // queues + 1 if n else 0
    tx_calls = np.empty(walks * len(tx_port), np.int64)
    n_sent, n_calls, n_new = k.graph_walks(
        batch.arrays(), (np.ascontiguousarray(batch.burst, np.int64), queues,
                         np.array([-1 if place is None else place for place in places], np.int64),
                         oversize_code, rx.MBUF_DATA_ROOM),
        (tables.lpm4.walk_arrays(), tables.lpm6.walk_arrays(), tables.port[4], tables.port[6],
         tables.eth_header.reshape(-1), tx_port),
        (counters, edges, scalars, new_edges.reshape(-1)),
        (pk.ptype, pk.reason, pk.next_hop, pk.dest, sent, tx_calls))
    for node, values in zip(nodes, counters.tolist()):
        for field, value in zip(COUNTERS, values):
            setattr(node, field, value)
    for src, dst in new_edges[:n_new].tolist():       # new edges in the order they were first used
        graph.edges[names[src], names[dst]] = 0
    for src, dst in np.argwhere(edges).tolist():
        graph.edges[names[src], names[dst]] = int(edges[src, dst])
    state.cls_spec, state.rewrite_spec[4], state.rewrite_spec[6] = (names[i] for i in scalars[:3].tolist())
    state.lookup_errors, graph.walks = int(scalars[3]), int(scalars[4])
    sent = sent[:n_sent]
    ends = np.cumsum(tx_calls[:n_calls])
    starts = ends - tx_calls[:n_calls]
    pk.sent = [(port, sent[start:end]) for port, start, end in
               zip(pk.dest[sent[starts]].tolist(), starts.tolist(), ends.tolist())]     # per ethdev_tx call
    return sent
