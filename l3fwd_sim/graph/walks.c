/*
 * The compiled twin of graph/walk.py's Graph.walk and graph/nodes.py's node functions
 * (lib/graph's rte_graph_walk_rtc; lib/node's pkt_cls, ip4/ip6_lookup, ip4/ip6_rewrite,
 * ethdev_tx, pkt_drop), over a super-burst as graph/run.py's walk_burst walks it: one
 * walk per polling round. The Python is the definition (and runs with
 * L3FWD_SIM_KERNELS=numpy or --pcap-enable); tests/graph/test_twin.py proves this file
 * gives the same bytes, verdicts, send order, node counters and edges.
 *
 * Nodes are numbers (twins.h's enum graph_node): the six fixed nodes, one ethdev_tx
 * per enabled port, then the sources in walk order; graph/twins.py maps them to names.
 * As in lib/graph, a node's pending packets are its stream, and a stream moved to an
 * idle node is handed over whole (the two nodes swap streams and stream sizes).
 */
#include <stdlib.h>
#include <string.h>

#include "twins.h"
#include "../tables/lpm.h"

#define BURST_SIZE 256              /* walk.BURST_SIZE: RTE_GRAPH_BURST_SIZE */
#define MAX_STREAM 0xFFFF           /* walk.MAX_STREAM: a stream's size is a uint16_t */
#define MAX_PORTS 32

/* nodes.py: the packet types ethdev_rx's callback sets, and the frame bytes each node reads */
enum { PTYPE_UNKNOWN, PTYPE_IPV4, PTYPE_IPV6 };
enum { ETHER_END = 14, IP4_DST_END = 34, IP6_DST_END = 54 };

/* What one call works with besides the graph: every node's stream, the pending ring. */
struct walk {
    struct graph_walks *g;
    int64_t nodes;
    int64_t **stream;               /* per node: its pending packets (rte_node->objs) */
    int64_t *idx;                   /* per node: how many (rte_node->idx) */
    int64_t *objs;                  /* a free stream: what a source received, or the node being processed had */
    int64_t *nexts, *held;          /* per packet of that call: its next node; those held for the speculated one */
    int64_t *ring, head, pending;   /* the graph's circular pending ring (cir_start): each node at most once */
    int64_t port_node[MAX_PORTS];   /* per port: its ethdev_tx node, -1 none */
};

/* A packet's frame: its row past the 16-byte record header (capture/batch.py's heads). */
static uint8_t *frame_of(const struct graph_walks *g, int64_t p)
{
    return g->rows + p * g->stride + 16;
}

/* walk.py's Node.grow: __rte_node_stream_alloc_size, room for twice what is asked */
static void grow(struct graph_node_counters *node, int64_t needed)
{
    int64_t size = needed * 2 > BURST_SIZE ? needed * 2 : BURST_SIZE;
    node->size = size < MAX_STREAM ? size : MAX_STREAM;
    node->realloc_count++;
}

/* walk.py's _join: an idle node joins the pending ring (__rte_node_enqueue_tail_update) */
static void join(struct walk *w, int64_t dst)
{
    if (w->idx[dst] == 0)
        w->ring[(w->head + w->pending++) % w->nodes] = dst;
}

/* walk.py's _count; an edge counted for the first time is noted, for the edges' order */
static void count(struct walk *w, int64_t src, int64_t dst, int64_t packets)
{
    struct graph_walks *g = w->g;
    int64_t *edge = &g->edges[src * w->nodes + dst];
    if (*edge == 0) {
        g->new_edges[2 * g->new_edge_count] = src;
        g->new_edges[2 * g->new_edge_count++ + 1] = dst;
    }
    *edge += packets;
}

/* __rte_node_enqueue_prologue: an idle node joins the ring; room for n more */
static void prologue(struct walk *w, int64_t dst, int64_t n)
{
    struct graph_node_counters *node = &w->g->node[dst];
    join(w, dst);
    if (node->size < w->idx[dst] + n)
        grow(node, node->size + n);
}

/* walk.py's _append: rte_node_enqueue */
static void append(struct walk *w, int64_t dst, const int64_t *objs, int64_t n)
{
    prologue(w, dst, n);
    memcpy(w->stream[dst] + w->idx[dst], objs, (size_t)n * sizeof *objs);
    w->idx[dst] += n;
}

/* rte_node_enqueue_x1 */
static void enqueue_x1(struct walk *w, int64_t src, int64_t dst, int64_t obj)
{
    prologue(w, dst, 1);
    w->stream[dst][w->idx[dst]++] = obj;
    count(w, src, dst, 1);
}

/* rte_node_next_stream_get: room for n more */
static void stream_get(struct walk *w, int64_t dst, int64_t n)
{
    struct graph_node_counters *node = &w->g->node[dst];
    if (node->size - w->idx[dst] < n)
        grow(node, node->size + n);
}

/* rte_node_next_stream_put: the held packets handed over, without a size check (the
 * get made room); none held, nothing happens */
static void stream_put(struct walk *w, int64_t src, int64_t dst, const int64_t *held, int64_t n)
{
    if (n == 0)
        return;
    join(w, dst);
    memcpy(w->stream[dst] + w->idx[dst], held, (size_t)n * sizeof *held);
    w->idx[dst] += n;
    count(w, src, dst, n);
}

/* rte_node_next_stream_move (walk.py's _move): src's whole stream, its n packets in
 * w->objs, to dst. An idle dst takes the stream itself, the two swapping stream sizes;
 * a busy one gets the packets appended. w->objs is then another free stream. */
static void stream_move(struct walk *w, int64_t src, int64_t dst, int64_t n)
{
    struct graph_node_counters *node = w->g->node;
    count(w, src, dst, n);
    if (w->idx[dst] == 0) {
        int64_t size = node[dst].size, *stream = w->stream[dst];
        node[dst].size = node[src].size;
        node[src].size = size;
        join(w, dst);
        w->stream[dst] = w->objs;
        w->objs = stream;
        w->idx[dst] = n;
    } else {
        append(w, dst, w->objs, n);
    }
}

/* nodes.py's speculate, its operations carried out as walk.py's _enqueue does: the n
 * packets `objs` of node src, packet i to w->nexts[i], go to the speculated node `spec`
 * (held, then put in one piece) unless theirs differs (enqueued at once); all of them
 * to spec moves the whole stream. With `respeculate` (pkt_cls, the rewrites), a group
 * of four whose last two agree on another node makes that node spec. Returns spec as
 * it ends. */
static int64_t speculate(struct walk *w, int64_t src, const int64_t *objs, int64_t n, int64_t spec, int respeculate)
{
    const int64_t *nexts = w->nexts;
    int64_t i = 0, held = 0;
    stream_get(w, spec, n);
    while (i < n && nexts[i] == spec)
        i++;
    if (i == n) {                                   /* home run */
        stream_move(w, src, spec, n);
        return spec;
    }
    for (i = 0; i < n; i++) {
        if (nexts[i] == spec)
            w->held[held++] = objs[i];
        else
            enqueue_x1(w, src, nexts[i], objs[i]);
        /* the end of a group of four (only whole groups: the last n % 4 go one at a time) */
        if (respeculate && i % 4 == 3 && nexts[i] != spec && nexts[i - 1] == nexts[i]) {
            stream_put(w, src, spec, w->held, held);
            held = 0;
            spec = nexts[i];
            stream_get(w, spec, n);
        }
    }
    stream_put(w, src, spec, w->held, held);
    return spec;
}

/* nodes.py's Nodes.pkt_cls (pkt_cls_node_process): by the packet type, p_nxt[] */
static void pkt_cls(struct walk *w, const int64_t *objs, int64_t n)
{
    static const int64_t NEXT_OF_TYPE[3] = {NODE_PKT_DROP, NODE_IP4_LOOKUP, NODE_IP6_LOOKUP};
    struct graph_walks *g = w->g;
    for (int64_t i = 0; i < n; i++) {
        int64_t p = objs[i];
        w->nexts[i] = NEXT_OF_TYPE[g->ptype[p]];
        if (g->ptype[p] == PTYPE_UNKNOWN)
            g->reason[p] = g->caplen[p] < ETHER_END ? GRAPH_TRUNCATED : GRAPH_UNKNOWN_PTYPE;
    }
    g->state->cls_spec = speculate(w, NODE_PKT_CLS, objs, n, g->state->cls_spec, 1);
}

/* nodes.py's Nodes.lookup (ip4_lookup_node_process_vec, ip6_lookup_node_process_scalar):
 * the LPM over the destination, nothing validated; a frame too short for it is dropped
 * as truncated (its bytes there are undefined in C) */
static void lookup(struct walk *w, int family, const int64_t *objs, int64_t n)
{
    struct graph_walks *g = w->g;
    const int64_t end = family ? IP6_DST_END : IP4_DST_END, key = family ? 38 : 30;
    const int64_t rewrite = family ? NODE_IP6_REWRITE : NODE_IP4_REWRITE;
    for (int64_t i = 0; i < n; i++) {
        int64_t p = objs[i], hop = -1;
        if (g->caplen[p] < end) {
            g->reason[p] = GRAPH_TRUNCATED;
        } else if ((hop = lpm_lookup(&g->lpm[family], frame_of(g, p) + key, -1, NULL)) < 0) {
            g->reason[p] = family ? GRAPH_IP6_LOOKUP_MISS : GRAPH_IP4_LOOKUP_MISS;
            g->state->lookup_errors += !family;     /* ip4_lookup's xstat ip4_lookup_error */
        }
        g->next_hop[p] = hop;
        w->nexts[i] = hop >= 0 ? rewrite : NODE_PKT_DROP;
    }
    speculate(w, family ? NODE_IP6_LOOKUP : NODE_IP4_LOOKUP, objs, n, rewrite, 0);
}

/* nodes.py's ip4_checksum: v is the checksum's two bytes read little-endian. The
 * 4-at-a-time path folds the carry back (0xFFFF -> 0x0001), the one-at-a-time path
 * turns 0xFFFF into 0 (0xFFFE -> 0x0000). */
static int64_t ip4_checksum(int64_t v, int four_at_a_time)
{
    if (four_at_a_time)
        return v + 1 > 0xFFFF ? v + 1 - 0xFFFF : v + 1;
    int64_t single = (v + 1) & 0xFFFF;
    return single == 0xFFFF ? 0 : single;
}

/* nodes.py's Nodes.rewrite (ip4_rewrite_node_process, ip6_rewrite_node_process): the
 * route's 12 MAC bytes in front, TTL / hop limit - 1 (mod 256), IPv4's checksum on the
 * node's two paths; on to the route's ethdev_tx. -1: a route to a port without one. */
static int rewrite(struct walk *w, int family, const int64_t *objs, int64_t n)
{
    struct graph_walks *g = w->g;
    const int64_t four = n - n % 4;                 /* these take the 4-at-a-time path */
    for (int64_t i = 0; i < n; i++) {
        int64_t p = objs[i], hop = g->next_hop[p];
        int64_t port = hop >= 0 && hop < g->routes[family] ? g->route_port[family][hop] : -1;
        if (port < 0 || port >= MAX_PORTS || w->port_node[port] < 0)
            return -1;
        uint8_t *frame = frame_of(g, p);
        memcpy(frame, g->eth_header + port * 12, 12);
        if (family) {
            frame[21]--;
        } else {
            frame[22]--;
            int64_t checksum = ip4_checksum(frame[24] | frame[25] << 8, i < four);
            frame[24] = (uint8_t)checksum;
            frame[25] = (uint8_t)(checksum >> 8);
        }
        w->nexts[i] = w->port_node[port];
    }
    int64_t *spec = &g->state->rewrite_spec[family];
    *spec = speculate(w, family ? NODE_IP6_REWRITE : NODE_IP4_REWRITE, objs, n, *spec, 1);
    return 0;
}

/* nodes.py's Nodes.process for ethdev_tx-P: net_pcap's tx_burst sends every packet */
static void ethdev_tx(struct walk *w, int64_t node, const int64_t *objs, int64_t n)
{
    struct graph_walks *g = w->g;
    int64_t port = g->tx_port[node - NODE_FIRST_TX];
    for (int64_t i = 0; i < n; i++) {
        g->dest[objs[i]] = port;
        g->sent[g->sent_count++] = objs[i];
    }
    g->tx_calls[g->tx_call_count++] = n;
}

/* walk.py's Graph.walk, the ring part: run `node` over its stream (__rte_node_process) */
static int process(struct walk *w, int64_t node)
{
    int64_t n = w->idx[node], *objs = w->stream[node];
    w->stream[node] = w->objs;                      /* the node's stream is now the spare one */
    w->objs = objs;
    w->idx[node] = 0;
    switch (node) {
    case NODE_PKT_DROP:
        break;
    case NODE_PKT_CLS:
        pkt_cls(w, objs, n);
        break;
    case NODE_IP4_LOOKUP:
    case NODE_IP6_LOOKUP:
        lookup(w, node == NODE_IP6_LOOKUP, objs, n);
        break;
    case NODE_IP4_REWRITE:
    case NODE_IP6_REWRITE:
        if (rewrite(w, node == NODE_IP6_REWRITE, objs, n) < 0)
            return -1;
        break;
    default:
        ethdev_tx(w, node, objs, n);
    }
    w->g->node[node].calls++;
    w->g->node[node].objs += n;                     /* every node here returns what it was given */
    return 0;
}

/* What every packet starts as (nodes.py's Packets, ptype_of): the EtherType alone
 * (eth_pkt_parse_cb); a frame over the mbuf room is dropped on receive. */
static void receive(struct graph_walks *g, int64_t p)
{
    const uint8_t *frame = frame_of(g, p);
    int ether_type = frame[12] << 8 | frame[13];
    g->ptype[p] = g->caplen[p] < ETHER_END ? PTYPE_UNKNOWN
                  : ether_type == 0x0800  ? PTYPE_IPV4
                  : ether_type == 0x86DD  ? PTYPE_IPV6
                                          : PTYPE_UNKNOWN;
    g->reason[p] = g->caplen[p] > g->mbuf_data_room ? (uint8_t)g->oversize : 0;
    g->next_hop[p] = g->dest[p] = -1;
}

/* walk.py's Graph.walk: every source polled once, in walk order (its received packets:
 * packet indexes [from[k], from[k + 1]) for reader place k, the oversize ones left out,
 * their slots used), then each pending node once, in ring order. The walk's packets are
 * set up first, walk by walk: their rows are then in the caches for every node. */
static int walk(struct walk *w, const int64_t *from)
{
    struct graph_walks *g = w->g;
    for (int64_t p = from[0]; p < from[g->queues]; p++)
        receive(g, p);
    g->state->walks++;
    for (int64_t s = 0; s < g->sources; s++) {
        int64_t node = NODE_FIRST_TX + g->tx_nodes + s, k = g->places[s], n = 0;
        if (k >= 0)
            for (int64_t p = from[k]; p < from[k + 1]; p++)
                if (g->caplen[p] <= g->mbuf_data_room)
                    w->objs[n++] = p;
        g->node[node].calls++;
        g->node[node].objs += n;
        if (n)
            stream_move(w, node, NODE_PKT_CLS, n);
    }
    while (w->pending) {
        int64_t node = w->ring[w->head];
        w->head = (w->head + 1) % w->nodes;
        w->pending--;
        if (process(w, node) < 0)
            return -1;
    }
    return 0;
}

/* graph/run.py's walk_burst: the super-burst's walks, one per polling round (burst ids
 * walk x queues .. walk x queues + queues - 1), each node's stream room for one walk */
int graph_walks(struct graph_walks *g)
{
    if (g->n == 0)
        return 0;
    const int64_t first = g->burst[0] / g->queues, ids = (g->burst[g->n - 1] / g->queues - first + 1) * g->queues;
    const int64_t nodes = NODE_FIRST_TX + g->tx_nodes + g->sources;
    /* from[b]: the first packet of burst id first * queues + b (searchsorted) */
    int64_t *from = malloc((size_t)(ids + 1) * sizeof *from);
    if (from == NULL)
        return -2;
    int64_t room = 1;                               /* the most packets one walk has */
    for (int64_t b = 0, p = 0; b <= ids; b++) {
        while (p < g->n && g->burst[p] < first * g->queues + b)
            p++;
        from[b] = p;
        if (b % g->queues == 0 && b > 0 && from[b] - from[b - g->queues] > room)
            room = from[b] - from[b - g->queues];
    }
    struct walk w = {.g = g, .nodes = nodes};
    int64_t *memory = malloc((size_t)((nodes + 3) * room + 2 * nodes) * sizeof *memory);
    w.stream = malloc((size_t)nodes * sizeof *w.stream);
    if (memory == NULL || w.stream == NULL) {
        free(from);
        free(memory);
        free(w.stream);
        return -2;
    }
    for (int64_t k = 0; k < nodes; k++)
        w.stream[k] = memory + k * room;
    w.objs = memory + nodes * room;
    w.nexts = w.objs + room;
    w.held = w.nexts + room;
    w.idx = w.held + room;
    w.ring = w.idx + nodes;
    memset(w.idx, 0, (size_t)nodes * sizeof *w.idx);
    for (int64_t port = 0; port < MAX_PORTS; port++)
        w.port_node[port] = -1;
    for (int64_t t = 0; t < g->tx_nodes; t++)
        w.port_node[g->tx_port[t]] = NODE_FIRST_TX + t;
    int rc = 0;
    for (int64_t b = 0; b < ids && rc == 0; b += g->queues)
        rc = walk(&w, from + b);
    free(from);
    free(memory);
    free(w.stream);
    return rc;
}
