"""One worker's graph and its walks (``lib/graph``: ``rte_graph_walk_rtc``,
``rte_graph_worker_common.h``; l3fwd_graph.md §5).

A walk polls every RX queue of the lcore once — its source nodes, in reverse
``--config`` order — then runs each node that has packets pending, once, in the order
the nodes first got packets in this walk (the graph's circular pending ring); a node
sent packets again after its turn (only pkt_drop) runs again. Each node's stream has a
size, grown (``realloc_count``) when an enqueue needs more room, and ``stream_move``
swaps whole streams between nodes — modelled, as ``rte_graph_cluster_stats`` reports it.

Counters per node are the ones its stats print that do not depend on time: calls,
objects (what ``process`` returned), ``realloc_count``; ip4_lookup's xstat
``ip4_lookup_error``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .nodes import PKT_DROP, Nodes, Packets, tx_node

BURST_SIZE = 256                  # RTE_GRAPH_BURST_SIZE
MAX_STREAM = 0xFFFF               # a stream's size is a uint16_t


@dataclass
class Node:
    """A node of one graph: its name, its stream (packets pending, their number ``idx``,
    the room ``size``) and its counters."""
    name: str
    size: int = BURST_SIZE
    realloc_count: int = 1        # graph_fp_mem_populate allocates every stream once
    calls: int = 0
    objs: int = 0

    def __post_init__(self):
        self.pending: list[np.ndarray] = []
        self.idx = 0

    def grow(self, needed: int) -> None:
        """``__rte_node_stream_alloc_size``: room for twice what is asked."""
        self.size = min(MAX_STREAM, max(BURST_SIZE, needed * 2))
        self.realloc_count += 1


def node_list(rx_nodes: list[str], tx_ports: list[int]) -> list[str]:
    """The graph's nodes in ``rte_graph_create``'s order, which is the order its stats
    print them: the patterns ``ip4*``, ``ethdev_tx-*``, ``pkt_drop``, the lcore's RX
    nodes, then the nodes their edges reach (pkt_cls, ip6_lookup, ip6_rewrite). Read from
    the source (graph.c, main.c), not measured: the real table's rows depend on them."""
    return ["ip4_lookup", "ip4_rewrite", *(tx_node(p) for p in tx_ports), PKT_DROP, *rx_nodes,
            "pkt_cls", "ip6_lookup", "ip6_rewrite"]


class Graph:
    """``worker_<lcore>``: its nodes and the walks it made."""

    def __init__(self, lcore: int, graph_id: int, rx_nodes: list[str], tx_ports: list[int], nodes: Nodes):
        self.lcore, self.graph_id, self.name = lcore, graph_id, f"worker_{lcore}"
        self.node = {name: Node(name) for name in node_list(rx_nodes, tx_ports)}
        self.sources = [self.node[name] for name in reversed(rx_nodes)]      # cir_start[-1], [-2], ...: walked last first
        for source in self.sources:
            source.grow(source.size)             # graph_src_nodes_offset_populate allocates sources again
        self.nodes = nodes
        self.walks = 0
        self.trace = None                        # --pcap-enable: called with (graph, node name, packets) per call
        self.packets: Packets | None = None      # the super-burst being walked
        self.edges: dict[tuple[str, str], int] = {}   # packets sent along each edge
        self._ring: list[Node] = []

    def idle_walks(self, walks: int) -> None:
        """Walks in which no source received anything: each source is still polled."""
        self.walks += walks
        for source in self.sources:
            source.calls += walks

    def walk(self, pk: Packets, received: list[np.ndarray]) -> None:
        """One ``rte_graph_walk``: ``received[k]`` is what the k-th source's
        ``rte_eth_rx_burst`` returned (packet indexes into ``pk``)."""
        self.walks += 1
        for source, objs in zip(self.sources, received):
            source.calls += 1
            source.objs += len(objs)
            if len(objs):
                source.idx, source.pending = len(objs), [objs]
                self._move(source, self.node["pkt_cls"])
        while self._ring:
            node = self._ring.pop(0)
            objs = np.concatenate(node.pending) if len(node.pending) > 1 else node.pending[0]
            node.pending, node.idx = [], 0
            if self.trace:
                self.trace(self, node.name, objs)
            ops = self.nodes.process(node.name, pk, objs)
            node.calls += 1
            node.objs += len(objs)               # every node here returns what it was given
            self._enqueue(node, objs, ops)

    def _enqueue(self, src: Node, objs: np.ndarray, ops: list) -> None:
        """Carry out a node's enqueue operations on its next nodes' streams, in order."""
        for op, name, what in ops:
            dst = self.node[name]
            if op == "get":                      # rte_node_next_stream_get: room for what
                if dst.size - dst.idx < what:
                    dst.grow(dst.size + what)
            elif op == "x1":                     # rte_node_enqueue_x1
                self._append(dst, objs[what:what + 1])
                self._count(src, dst, 1)
            elif op == "put":                    # rte_node_next_stream_put
                if what:
                    self._join(dst)
                    dst.pending.append(objs[what])
                    dst.idx += len(what)
                    self._count(src, dst, len(what))
            else:                                # rte_node_next_stream_move: all of them
                src.pending, src.idx = [objs], len(objs)
                self._move(src, dst)

    def _count(self, src: Node, dst: Node, packets: int) -> None:
        key = (src.name, dst.name)
        self.edges[key] = self.edges.get(key, 0) + packets

    def _move(self, src: Node, dst: Node) -> None:
        """``rte_node_next_stream_move``: an idle next node takes the stream itself (the
        two swap streams); a busy one gets the packets appended."""
        self._count(src, dst, src.idx)
        if dst.idx == 0:
            dst.size, src.size = src.size, dst.size
            dst.pending, dst.idx = src.pending, src.idx
            self._ring.append(dst)
        else:
            self._append(dst, np.concatenate(src.pending))
        src.pending, src.idx = [], 0

    def _append(self, dst: Node, objs: np.ndarray) -> None:
        """``rte_node_enqueue``'s prologue and copy: an idle node joins the ring."""
        self._join(dst)
        if dst.size < dst.idx + len(objs):
            dst.grow(dst.size + len(objs))
        dst.pending.append(objs)
        dst.idx += len(objs)

    def _join(self, dst: Node) -> None:
        if dst.idx == 0:
            self._ring.append(dst)

    def counters(self) -> dict:
        """Per node (in the graph's order) its counters; ip4_lookup with its xstat."""
        table = {}
        for name, node in self.node.items():
            entry = {"calls": node.calls, "objs": node.objs, "realloc_count": node.realloc_count}
            if name == "ip4_lookup":
                entry["xstats"] = {"ip4_lookup_error": self.nodes.lookup_errors}
            table[name] = entry
        return table
