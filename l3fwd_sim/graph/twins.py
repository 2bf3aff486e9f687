"""The graph's compiled twin as the Python side calls it (``twins.h``): ``walks.c`` runs every walk of
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

import functools

import numpy as np

from ..capture.twins import Packets as PacketsStruct
from ..compiled import Array, binding, need, take
from ..dataplane import rx
from ..dataplane.ports import MAX_PORTS
from ..tables import twins as tables
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


def walk_burst_compiled(graph: Graph, batch, queues: int, places: list, oversize_code: int) -> np.ndarray:
    """:func:`~.run.walk_burst` by ``graph_walks``: the walks of the super-burst
    ``batch``; returns the packets sent, in the order the ethdev_tx nodes sent them."""
    _check_numbering()
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
    routes = state.tables
    tx_port = np.array([int(name.rpartition("-")[2]) for name in tx_nodes(graph)], np.int64)
    n = len(batch)
    pk = graph.packets = Packets(batch.heads, batch.caplen, np.empty(n, np.uint8))
    sent = np.empty(n, np.int64)
    walks = int(batch.burst[-1]) // queues - int(batch.burst[0]) // queues + 1 if n else 0
    tx_calls = np.empty(walks * len(tx_port), np.int64)
    n_sent, n_calls, n_new = graph_walks(
        batch.arrays(), (np.ascontiguousarray(batch.burst, np.int64), queues,
                         np.array([-1 if place is None else place for place in places], np.int64),
                         oversize_code, rx.MBUF_DATA_ROOM),
        (routes.lpm4.walk_arrays(), routes.lpm6.walk_arrays(), routes.port[4], routes.port[6],
         routes.eth_header.reshape(-1), tx_port),
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


@functools.cache
def _check_numbering() -> None:
    """twins.h's enums name the nodes and drop reasons that nodes.py and FIXED_NODES
    name, in their order (checked once)."""
    _, lib = binding()
    if [getattr(lib, f"NODE_{node.upper()}") for node in FIXED_NODES] != list(range(len(FIXED_NODES))) \
            or [getattr(lib, f"GRAPH_{reason.upper()}") for reason in DROP_REASONS] != \
            list(range(1, len(DROP_REASONS) + 1)):
        raise AssertionError("walks.c and the graph's Python number nodes or drop reasons differently")


_WALKS = (Array("burst", "int64_t"), Array("places", "int64_t"), Array("route_port4", "int64_t"),
          Array("route_port6", "int64_t"), Array("eth_header", "uint8_t", at_least=MAX_PORTS * 12),
          Array("tx_port", "int64_t"), Array("counters", "int64_t", True, matrix=True),
          Array("edges", "int64_t", True, matrix=True), Array("state", "int64_t", True, 5),
          Array("new_edges", "int64_t", True), *(Array(name, ctype, True) for name, ctype in (
              ("ptype", "uint8_t"), ("reason", "uint8_t"), ("next_hop", "int64_t"), ("dest", "int64_t"),
              ("sent", "int64_t"), ("tx_calls", "int64_t"))))


def graph_walks(packets: tuple, walks: tuple, routes: tuple, graph: tuple, out: tuple) -> tuple[int, int, int]:
    """``walks.c`` over one super-burst. packets: PacketBatch.arrays() (heads edited in
    place); walks: (burst, queues, places, oversize drop code, mbuf data room); routes:
    (lpm4, lpm6 as StrideTable.walk_arrays(), route_port4, route_port6, eth_header,
    tx_port); graph: (counters (nodes, 4), edges (nodes, nodes), state (struct
    graph_state), new_edges (room for nodes x nodes pairs)); out: (ptype, reason,
    next_hop, dest, sent, tx_calls). Returns (sent, tx calls, new edges)."""
    ffi, lib = binding()
    p = PacketsStruct(packets, writable=True)
    burst_o, queues, places_o, oversize, room = walks
    lpm4, lpm6, *route_arrays = routes
    views = take(_WALKS, burst_o, places_o, *route_arrays, *graph, *out)
    burst, places, port4, port6, eth, tx_port, counters, edges, state, new_edges = views[:10]
    ptype, reason, next_hop, dest, sent, tx_calls = views[10:]
    t4, t6 = tables.lpm(lpm4, 4), tables.lpm(lpm6, 16)
    nodes = len(FIXED_NODES) + tx_port.len + places.len
    need(counters.len == nodes and counters.cols == 4 and counters.stride == 4 * 8 and edges.len == nodes
         and edges.cols == nodes and edges.stride == nodes * 8 and new_edges.len >= 2 * nodes * nodes,
         "graph_walks: counters (nodes, 4) and edges (nodes, nodes), contiguous")
    n = p.n
    need(min(burst.len, ptype.len, reason.len, next_hop.len, dest.len, sent.len) >= n,
         "graph_walks: burst, ptype, reason, next_hop, dest and sent: one for each packet")
    b = burst.array[:n]
    specs = state.array[:3]
    need(queues >= 1 and (not n or (int(b[0]) >= 0 and bool((np.diff(b) >= 0).all())))
         and bool(((places.array >= -1) & (places.array < queues)).all())
         and bool(((tx_port.array >= 0) & (tx_port.array < MAX_PORTS)).all())
         and bool(((specs >= 0) & (specs < len(FIXED_NODES) + tx_port.len)).all()),
         "graph_walks: burst ids not ascending, or a place, TX port or speculated node out of range")
    walks_n = int(b[-1]) // queues - int(b[0]) // queues + 1 if n else 0
    need(tx_calls.len >= walks_n * tx_port.len,
         f"tx_calls: {tx_calls.len} items, at least {walks_n * tx_port.len} needed")
    g = ffi.new("struct graph_walks *", {
        "rows": p.rows.ptr, "stride": p.rows.stride, "n": n, "caplen": p.c.caplen, "burst": burst.ptr,
        "queues": queues, "sources": places.len, "places": places.ptr, "oversize": oversize, "mbuf_data_room": room,
        "lpm": [t4.init, t6.init], "route_port": [port4.ptr, port6.ptr], "routes": [port4.len, port6.len],
        "eth_header": eth.ptr, "tx_port": tx_port.ptr, "tx_nodes": tx_port.len,
        "node": ffi.cast("struct graph_node_counters *", counters.ptr), "edges": edges.ptr,
        "new_edges": new_edges.ptr, "state": ffi.cast("struct graph_state *", state.ptr), "ptype": ptype.ptr,
        "reason": reason.ptr, "next_hop": next_hop.ptr, "dest": dest.ptr, "sent": sent.ptr, "tx_calls": tx_calls.ptr})
    rc = lib.graph_walks(g)
    if rc == -2:
        raise MemoryError("graph_walks")
    need(rc >= 0, "graph_walks: a route to a port without an ethdev_tx node")
    return g.sent_count, g.tx_call_count, g.new_edge_count
