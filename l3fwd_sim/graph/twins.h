/*
 * The graph's compiled twin (walks.c): every walk of a super-burst in one call, over
 * the lookups' tables as the tables hold them; graph/twins.py binds it.
 */
#ifndef L3FWD_SIM_GRAPH_TWINS_H
#define L3FWD_SIM_GRAPH_TWINS_H

#include "../capture/twins.h"
#include "../tables/twins.h"

/* The graph's nodes by number: these six, then one ethdev_tx per enabled port, then the
 * sources in walk order (graph/twins.py names them). */
enum graph_node { NODE_PKT_DROP, NODE_PKT_CLS, NODE_IP4_LOOKUP, NODE_IP6_LOOKUP, NODE_IP4_REWRITE, NODE_IP6_REWRITE,
                  NODE_FIRST_TX };
/* Drop reasons, as graph/nodes.py's DROP_REASONS numbers them (twins.py checks). */
enum graph_reason { GRAPH_SENT, GRAPH_UNKNOWN_PTYPE, GRAPH_IP4_LOOKUP_MISS, GRAPH_IP6_LOOKUP_MISS, GRAPH_TRUNCATED };

struct graph_node_counters {        /* graph/walk.py's Node: its stream's size and its counters */
    int64_t size, calls, objs, realloc_count;
};

struct graph_state {                /* what the graph keeps between walks besides its nodes' counters */
    int64_t cls_spec;               /* pkt_cls's speculated next node (nodes.py's Nodes) */
    int64_t rewrite_spec[2];        /* ip4_rewrite's and ip6_rewrite's */
    int64_t lookup_errors;          /* ip4_lookup's xstat ip4_lookup_error */
    int64_t walks;
};

struct graph_walks {                /* graph/run.py's walk_burst over one super-burst */
    uint8_t *rows;                  /* its packets (capture/batch.py's rows): heads edited in place */
    int64_t stride, n;
    const int64_t *caplen, *burst;  /* burst: walk x queues + reader place, ascending */
    int64_t queues, sources;
    const int64_t *places;          /* per source node: its reader's place, -1: none (it receives nothing) */
    int64_t oversize, mbuf_data_room;   /* rx.py: a frame over the room is dropped on receive, with this code */
    struct lpm_table lpm[2];        /* ip4_lookup's and ip6_lookup's: next hop = route index */
    const int64_t *route_port[2];   /* per route index: its TX port */
    int64_t routes[2];
    const uint8_t *eth_header;      /* per port (32): the 12 bytes the rewrites write */
    const int64_t *tx_port;         /* per ethdev_tx node: its port (0..31) */
    int64_t tx_nodes;
    struct graph_node_counters *node;   /* in and out: per node */
    int64_t *edges;                 /* in and out: packets along each edge, nodes x nodes */
    int64_t *new_edges, new_edge_count; /* out: (src, dst) of each edge counted for the first time, in order */
    struct graph_state *state;      /* in and out */
    uint8_t *ptype, *reason;        /* out, per packet: also its next hop (-1: none) and TX port (-1: dropped) */
    int64_t *next_hop, *dest;
    int64_t *sent, sent_count;      /* out: the packets in the order the ethdev_tx nodes sent them */
    int64_t *tx_calls, tx_call_count;   /* out: each ethdev_tx call's packets, in order */
};

int graph_walks(struct graph_walks *g);     /* 0; -1: a route to a port without an ethdev_tx node; -2: no memory */

#endif
