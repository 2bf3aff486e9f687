"""The nodes of l3fwd-graph's worker graphs (``lib/node``, v26.07; l3fwd_graph.md §4–6),
each one function over the vector of packets the node is called with — the readable
definition that ``walks.c`` twins.

A node function takes the walk's :class:`Packets` and ``objs`` (the packets' indexes,
in the order the node holds them) and returns its enqueue operations, in the order it
makes them (:func:`speculate`): which next node gets which packets, and when — what
decides the order nodes run in within a walk (``walk.py``). The per-packet effects (a
rewritten header, a next hop, a drop reason) go straight into ``Packets``' arrays.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# What a node may read of a frame: the bytes past its end are whatever an earlier packet
# left in the mbuf (undefined); such a frame is dropped as "truncated" instead (choice,
# docs/graph.md): the EtherType, the IPv4 destination, the IPv6 destination.
ETHER_END, IP4_DST_END, IP6_DST_END = 14, 34, 54
UNKNOWN, IPV4, IPV6 = 0, 1, 2              # ethdev_rx's ptype callback: RTE_PTYPE_L3_*_EXT_UNKNOWN or 0
ETHERTYPE = {0x0800: IPV4, 0x86DD: IPV6}
DROP_REASONS = (
    "unknown_ptype",     # pkt_cls: neither the IPv4 nor the IPv6 EtherType at bytes 12-13 (tags included)
    "ip4_lookup_miss",   # ip4_lookup: no route (xstat ip4_lookup_error)
    "ip6_lookup_miss",   # ip6_lookup: no route
    "truncated",         # shorter than the bytes its node reads (14, 34 or 54): undefined in C
)
REASON_CODE = {name: i + 1 for i, name in enumerate(DROP_REASONS)}
PKT_DROP = "pkt_drop"
NEXT_OF_TYPE = {UNKNOWN: PKT_DROP, IPV4: "ip4_lookup", IPV6: "ip6_lookup"}   # pkt_cls's p_nxt[]


def tx_node(port: int) -> str:
    return f"ethdev_tx-{port}"


@dataclass
class Packets:
    """What the nodes of one lcore's graph read and write, for a super-burst of walks:
    the frames' heads (edited in place) and lengths, and per packet what the nodes
    decided."""
    heads: np.ndarray                 # (n, HEAD_BYTES) uint8
    caplen: np.ndarray                # int64
    ptype: np.ndarray                 # uint8: UNKNOWN, IPV4, IPV6 (set on receive)
    next_hop: np.ndarray = None       # int64: the route index a lookup found
    dest: np.ndarray = None           # int64: the TX port, -1 dropped
    reason: np.ndarray = None         # uint8: drop reason code, 0 sent
    sent: list = field(default_factory=list)      # (port, objs) of each ethdev_tx call, in order

    def __post_init__(self):
        n = len(self.caplen)
        self.next_hop = np.full(n, -1, np.int64)
        self.dest = np.full(n, -1, np.int64)
        self.reason = np.zeros(n, np.uint8)


def ptype_of(heads: np.ndarray, caplen: np.ndarray) -> np.ndarray:
    """``eth_pkt_parse_cb``: the EtherType at bytes 12-13 only (a VLAN tag is "unknown")."""
    ethertype = heads[:, 12].astype(np.uint16) << 8 | heads[:, 13]
    ptype = np.where(ethertype == 0x0800, IPV4, np.where(ethertype == 0x86DD, IPV6, UNKNOWN)).astype(np.uint8)
    ptype[caplen < ETHER_END] = UNKNOWN
    return ptype


def speculate(nexts: list, spec, respeculate: bool) -> tuple[list, object]:
    """The enqueue pattern every forwarding node shares (``pkt_cls_node_process``,
    ``ip4_lookup_node_process_vec``, ``ip6_lookup_node_process_scalar``,
    ``ip4_rewrite_node_process``, ``ip6_rewrite_node_process``): packets go to the
    speculated next node ``spec`` unless theirs differs, four at a time then one at a
    time; a packet for another node is enqueued at once (``rte_node_enqueue_x1``), the
    ones for ``spec`` are held and handed over in one piece (``rte_node_next_stream_put``),
    or — when every packet went to ``spec`` — the whole stream is moved
    (``rte_node_next_stream_move``). With ``respeculate`` (pkt_cls, the rewrites), a
    group of four whose last two agree on another node makes that node ``spec``.

    ``nexts``: each packet's next node. Returns the operations — ("get", node, n),
    ("x1", node, i), ("put", node, [i...]), ("move", node, None) with i the packet's place
    in the call — and ``spec`` as it ends (the node's saved speculation)."""
    n = len(nexts)
    ops: list = [("get", spec, n)]
    if all(each == spec for each in nexts):            # home run
        return ops + [("move", spec, None)], spec
    held: list[int] = []
    full = n - n % 4
    for start in range(0, full, 4):
        group = nexts[start:start + 4]
        if all(each == spec for each in group):
            held.extend(range(start, start + 4))
            continue
        for i, each in enumerate(group, start):
            if each == spec:
                held.append(i)
            else:
                ops.append(("x1", each, i))
        if respeculate and group[3] != spec and group[2] == group[3]:
            ops.append(("put", spec, held))
            held, spec = [], group[3]
            ops.append(("get", spec, n))
    for i in range(full, n):
        if nexts[i] == spec:
            held.append(i)
        else:
            ops.append(("x1", nexts[i], i))
    return ops + [("put", spec, held)], spec


class Tables:
    """The routes as the lookup and rewrite nodes hold them: the LPM tables (next hop =
    route index), and per route index its TX port and the 12 bytes written in front
    (``rte_node_ip4_rewrite_add``, ``rte_node_ip6_rewrite_add``)."""

    def __init__(self, lpm4, lpm6, port4: np.ndarray, port6: np.ndarray, eth_header: np.ndarray):
        self.lpm4, self.lpm6 = lpm4, lpm6
        self.port = {4: port4, 6: port6}
        self.eth_header = eth_header


class Nodes:
    """One graph's node functions and the state they keep between walks: pkt_cls's last
    packet type and each rewrite node's last next node (``node->ctx``)."""

    def __init__(self, tables: Tables):
        self.tables = tables
        self.cls_spec = NEXT_OF_TYPE[UNKNOWN]         # ctx->l2l3_type starts at 0
        self.rewrite_spec = {4: PKT_DROP, 6: PKT_DROP}  # IP4_REWRITE_NODE_LAST_NEXT starts at edge 0
        self.lookup_errors = 0                        # ip4_lookup's xstat ip4_lookup_error

    def process(self, name: str, pk: Packets, objs: np.ndarray) -> list:
        """Run node ``name`` over ``objs``; its enqueue operations."""
        if name == "pkt_cls":
            return self.pkt_cls(pk, objs)
        if name in ("ip4_lookup", "ip6_lookup"):
            return self.lookup(4 if name == "ip4_lookup" else 6, pk, objs)
        if name in ("ip4_rewrite", "ip6_rewrite"):
            return self.rewrite(4 if name == "ip4_rewrite" else 6, pk, objs)
        if name.startswith("ethdev_tx-"):
            port = int(name.rpartition("-")[2])
            pk.dest[objs] = port                      # net_pcap's tx_burst sends every packet
            pk.sent.append((port, objs))
        return []                                     # ethdev_tx, pkt_drop: no next node

    def pkt_cls(self, pk: Packets, objs: np.ndarray) -> list:
        """Classify by the packet type ethdev_rx set: IPv4 and IPv6 to their lookup,
        anything else to pkt_drop."""
        nexts = [NEXT_OF_TYPE[t] for t in pk.ptype[objs].tolist()]
        dropped = objs[pk.ptype[objs] == UNKNOWN]
        pk.reason[dropped] = np.where(pk.caplen[dropped] < ETHER_END, REASON_CODE["truncated"],
                                      REASON_CODE["unknown_ptype"])
        ops, self.cls_spec = speculate(nexts, self.cls_spec, respeculate=True)
        return ops

    def lookup(self, family: int, pk: Packets, objs: np.ndarray) -> list:
        """ip4_lookup / ip6_lookup: LPM over the destination at frame bytes 30-33 /
        38-53, whatever the headers say; a hit goes to the rewrite node with the
        route's index as next hop, a miss to pkt_drop. Nothing is validated."""
        end, table = (IP4_DST_END, self.tables.lpm4) if family == 4 else (IP6_DST_END, self.tables.lpm6)
        heads = pk.heads[objs]
        if family == 4:
            keys = heads[:, 30:34].copy().view(">u4")[:, 0].astype(np.uint32)
        else:
            keys = np.ascontiguousarray(heads[:, 38:54])
        hop = table.lookup_bulk(keys, -1).astype(np.int64)
        short = pk.caplen[objs] < end
        miss = (hop < 0) & ~short
        hop[short] = -1
        if family == 4:
            self.lookup_errors += int(miss.sum())
        pk.next_hop[objs] = hop
        pk.reason[objs[miss]] = REASON_CODE[f"ip{family}_lookup_miss"]
        pk.reason[objs[short]] = REASON_CODE["truncated"]
        nexts = [f"ip{family}_rewrite" if h >= 0 else PKT_DROP for h in hop.tolist()]
        ops, _ = speculate(nexts, f"ip{family}_rewrite", respeculate=False)
        return ops

    def rewrite(self, family: int, pk: Packets, objs: np.ndarray) -> list:
        """ip4_rewrite / ip6_rewrite: the route's 12 MAC bytes in front; IPv4: TTL − 1
        (mod 256) and the checksum + 1, on the node's two paths (:func:`ip4_checksum`);
        IPv6: hop limit − 1 (mod 256). On to the route's ethdev_tx."""
        port = self.tables.port[family][pk.next_hop[objs]]
        heads = pk.heads
        heads[objs, :12] = self.tables.eth_header[port]
        if family == 4:
            heads[objs, 22] -= 1                      # uint8: 0 becomes 255
            checksum = heads[objs, 24].astype(np.int64) | heads[objs, 25].astype(np.int64) << 8
            checksum = ip4_checksum(checksum, four_at_a_time=np.arange(len(objs)) < len(objs) - len(objs) % 4)
            heads[objs, 24] = checksum & 0xFF
            heads[objs, 25] = checksum >> 8
        else:
            heads[objs, 21] -= 1
        nexts = [tx_node(p) for p in port.tolist()]
        ops, self.rewrite_spec[family] = speculate(nexts, self.rewrite_spec[family], respeculate=True)
        return ops


def ip4_checksum(value: np.ndarray, four_at_a_time: np.ndarray) -> np.ndarray:
    """The IPv4 checksum after ip4_rewrite, ``value`` being its two bytes read as a
    little-endian number (+1 is the header's +0x0100 for TTL − 1). The 4-at-a-time path
    adds in 32 bits and folds the carry back (0xFFFF → 0x0001); the one-at-a-time path
    adds in 16 bits and turns 0xFFFF into 0 (0xFFFE → 0x0000)."""
    folded = value + 1
    folded = np.where(folded > 0xFFFF, folded - 0xFFFF, folded)
    single = (value + 1) & 0xFFFF
    single = np.where(single == 0xFFFF, 0, single)
    return np.where(four_at_a_time, folded, single)
