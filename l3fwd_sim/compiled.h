/*
 * The compiled twins (the extension module l3fwd_sim._compiled), as plain C over the
 * arrays the Python side already holds: nothing here allocates a table or copies one.
 * Each .c file lives beside the Python module whose stages it twins and names its
 * functions after them; compiled.c turns Python buffers into the structs below.
 * Nothing is bounds-checked beyond what the Python side guarantees: the differential
 * tests (tests/test_compiled.py and the twins' own tests) guard every function.
 */
#ifndef L3FWD_SIM_COMPILED_H
#define L3FWD_SIM_COMPILED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The twins read and write little-endian record headers with plain loads and stores. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the compiled twins need a little-endian host (the numpy stages run elsewhere)"
#endif

/* ------------------------------------------------------------ capture/records.c */

/* A super-burst's packets as capture/batch.py's PacketBatch holds them: row i is the
 * 16-byte pcap record header followed by the frame's first `head` bytes (zero past its
 * end); the rest of a longer frame is in its source's read buffer. */
struct packets {
    uint8_t *rows;
    int64_t stride;                 /* bytes from one row to the next */
    int64_t head;                   /* frame bytes in a row (HEAD_BYTES) */
    const int64_t *caplen;
    const int64_t *in_port;
    int64_t n;
    const uint8_t *const *blocks;   /* per source: its read buffer */
    const int64_t *const *offsets;  /* per source: where each of its frames starts there */
    const int64_t *row_units;       /* per source: its rows' time-stamp fractions, in ticks a second */
    const int64_t *source_id, *source_row;
};

int64_t scan_records(const uint8_t *buf, int64_t pos, int64_t end, int64_t limit, int big_endian,
                     int64_t max_caplen, int64_t *out, uint8_t *headers, int64_t header_stride,
                     int64_t *pos_after, int *bad);
int64_t walk_rows(const uint8_t *buf, int64_t pos, int64_t end, int64_t limit, int big_endian, int64_t max_caplen,
                  int64_t snap, int64_t *out, uint8_t *rows, int64_t row_stride, int64_t *pos_after, int *bad,
                  int64_t *frame_bytes);
int64_t scan_blocks(const uint8_t *buf, int64_t pos, int64_t end, int64_t *out);
void gather_windows(const uint8_t *buf, const int64_t *starts, const int64_t *widths, int64_t n,
                    uint8_t *out, int64_t out_stride, int64_t width);
void concat_ranges(const uint8_t *buf, const int64_t *starts, const int64_t *lengths, int64_t n, uint8_t *out);
void pack_rows(const uint8_t *rows, int64_t stride, const int64_t *widths, int64_t n, uint8_t *out);
/* How an output lays its records out (capture/writers.py): classic pcap records
 * (pcap.PcapWriter) or pcapng Enhanced Packet Blocks of interface 0
 * (pcapng_writer.PcapngWriter), time stamps in the output's ticks (records.h). */
struct record_format {
    int pcapng;
    int64_t units;                  /* the output's ticks per second: 10^9 (ns) or 10^6 (µs) */
};

int64_t port_bytes(const struct packets *p, const int64_t *dest, int64_t ports, const struct record_format *f,
                   int64_t *bytes, int64_t *packets);
void scatter_records(const struct packets *p, const int64_t *dest, int64_t ports, const struct record_format *f,
                     const int64_t *bytes, int64_t *start, uint8_t *out);
#define MAX_TX_QUEUES 255            /* merge_queues: a record's queue is one byte */
struct queue_file {                 /* what is left of one TX queue's records: data[pos, size) */
    const uint8_t *data;
    int64_t size, pos;
    uint64_t carry;                 /* the latest time stamp taken from it so far */
    uint64_t floor;                 /* the earliest time stamp its lcore may still send */
    int open;                       /* its lcore may still send: empty, the merge waits for it */
};
int64_t merge_queues(struct queue_file *q, int64_t k, int pcapng, uint8_t *out, int64_t capacity,
                     uint8_t *source, int64_t room, int64_t *used, int64_t *bad);
int64_t comment_blocks(const uint8_t *data, int64_t size, const uint8_t *text, const int64_t *starts,
                       const int64_t *ends, int64_t n, uint8_t *out, int64_t capacity, int64_t *pos, int64_t *k);

/* ------------------------------------------------------------ capture/pcapng.c */

struct pcapng_interfaces {          /* capture/pcapng.py's Interfaces: one column per field, by interface */
    const int64_t *section;         /* the current section's interface ids -> their index in the columns */
    int64_t section_size;
    const int64_t *snap;            /* libpcap_snaplen of the IDB's snaplen */
    const uint64_t *units;          /* time-stamp ticks per second (if_tsresol) */
    const int64_t *scale;           /* nanoseconds per tick where that is a whole number, else 0 */
    const int64_t *tsoffset;        /* seconds added (if_tsoffset) */
};

enum walk_stop {                    /* why walk_blocks stopped, at `pos` */
    WALK_LIMIT,                     /* the next block is a packet, and `limit` were taken */
    WALK_MORE,                      /* the next block is not wholly buffered */
    WALK_PYTHON,                    /* the next block is for the Python walk */
};

struct pcapng_walk {                /* PcapngReader._walk over buf[pos:end] */
    const uint8_t *buf;
    int64_t pos, end, limit;
    int big_endian;                 /* the section's byte order */
    int libpcap;                    /* Reading.LIBPCAP: a packet captured beyond its interface's snaplen is a read
                                       error, for the Python walk (else it is cut to the snaplen) */
    struct pcapng_interfaces interfaces;
    int64_t *offsets, *owner;       /* out: per packet, where its frame starts in buf, its interface */
    uint8_t *rows;                  /* out: per packet, its row */
    int64_t row_stride;
    int64_t n, frame_bytes;         /* out: packets taken, and their frames' bytes */
    int64_t skipped_from;           /* out: where the blocks skipped since the last packet start; -1: none */
    enum walk_stop stop;
};

void walk_blocks(struct pcapng_walk *w);    /* pos: after what was walked */

/* ------------------------------------------------------------ tables/ */

/* tables/lpm.py's StrideTable (rte_lpm DIR-24-8, rte_lpm6), and rte_fib's default. */
struct lpm_table {
    const uint32_t *tbl24, *tbl24_rule, *tbl8, *tbl8_rule;
    uint32_t payload_mask;
    int key_bytes;                  /* 4 or 16 */
    int64_t default_hop;            /* rte_fib's /0 route: the answer of a miss; -1: none */
    int64_t default_rule;
};

/* tables/hash.py's ExactMatchTable: open addressing, linear probing. */
struct em_table {
    const uint64_t *keys;           /* slots x words */
    const int64_t *ports, *rules;   /* port -1: empty slot */
    uint64_t mask;
    int words;
};

/* tables/acl.py's AclTable, flattened (AclTable._flatten). */
struct acl_table {
    int64_t rules, chunk_size, chunks;
    const int64_t *chunk_tables, *table_field, *starts, *starts_at, *index_at, *shift, *words_at, *rows_at;
    const int32_t *index;
    const uint64_t *words, *summary;
    int fields;
};

int64_t acl_classify(const struct acl_table *t, const int64_t *key);
void acl_classify_columns(const struct acl_table *t, const int64_t *columns, int64_t n, int64_t *out);

/* ------------------------------------------------------------ l3fwd/multi.c, l3fwd/simple.c */

enum lookup { LOOKUP_LPM, LOOKUP_FIB, LOOKUP_EM, LOOKUP_ACL };

/* Drop reasons, as l3fwd/pipelines.py's DROP_REASONS numbers them (checked at import). */
enum reason { FORWARDED, RFC1812_INVALID, UNKNOWN_PTYPE, NOT_TCP_UDP, TRUNCATED, ACL_DENY, ACL_MISS };
#define DROP_REASON_NAMES "rfc1812_invalid", "unknown_ptype", "not_tcp_udp", "truncated", "acl_deny", "acl_miss"

struct routes {                    /* one table per family, of the run's --lookup */
    enum lookup lookup;
    struct lpm_table lpm[2];
    struct em_table em[2];
    struct acl_table acl[2];
    const int64_t *acl_action[2];  /* per ACL rule: its port, or ACL_DENY_ACTION */
    const int64_t *acl_line[2];
    const uint8_t *eth_header;     /* per TX port: destination and source MAC (12 bytes) */
    uint8_t table_code[2];         /* the trace's code of the family's table */
    uint32_t enabled;              /* the portmask: the simple path re-checks a next hop against it */
};
#define ACL_DENY_ACTION (-2)

struct verdicts {
    int64_t *dest;
    uint8_t *reason;
    uint8_t *table;                 /* NULL unless tracing: then table, rule and next_hop */
    int64_t *rule, *next_hop;
};

void forward_multi(const struct packets *p, const struct routes *r, struct verdicts *v);
void forward_simple(const struct packets *p, const struct routes *r, struct verdicts *v);

/* ------------------------------------------------------------ dataplane/polling.c */

struct queue_records {              /* one RX queue's records of a super-burst (capture/records.py) */
    const uint8_t *records;         /* row j at records + j * stride: record header, then the head */
    int64_t stride, width, count;
    int64_t port, place;            /* its port, and its place in the lcore's polling order */
};

struct merged {                     /* capture/batch.py's PacketBatch columns */
    uint8_t *rows;
    int64_t width;                  /* RECORD_ROW */
    int64_t *caplen, *in_port, *burst, *source_id, *source_row;
};

int64_t merge_rounds(const struct queue_records *q, int64_t sources, int64_t rx_burst, int64_t queues,
                     int64_t first_round, int64_t round_from, int64_t round_to, struct merged *out);
int64_t rounds_of(const struct queue_records *q, int64_t sources, int64_t rx_burst);

/* ------------------------------------------------------------ dataplane/rss.c */

struct rss {                        /* a port's RSS: the Toeplitz tables of its key, per stream byte */
    const uint32_t *tables;         /* 36 x 256 */
    const int64_t *reta;            /* the redirection table: reta_size queue numbers */
    int64_t reta_size;              /* a power of 2 */
    int l4;                         /* the L4 ports are hashed too */
};

void rss_queues(const struct rss *r, const uint8_t *records, int64_t stride, int64_t width, int64_t n, int64_t *out);
int64_t rss_index(const struct rss *r, const uint8_t *buf, int64_t pos, int64_t end, int64_t limit,
                  int64_t max_caplen, int64_t snap, int64_t *offsets, uint32_t *caplen, uint8_t *queue,
                  uint64_t *ts, int64_t *pos_after, int *stop);

/* ------------------------------------------------------------ dataplane/stats.c */

void count_packets(const int64_t *in_port, const uint8_t *reason, const int64_t *dest, int64_t n, int64_t reasons,
                   int64_t *rx, int64_t *drops, int64_t *flows, int64_t flow_width);

/* ------------------------------------------------------------ dataplane/tx.c */

struct tx_counters {                /* dataplane/tx.py's TxModel, per port */
    int64_t *len, *tx_bursts, *direct, *buffered, *runs;
    int64_t rx_burst, tx_burst;
};

int64_t same_port_runs(const int64_t *dest, const int64_t *burst, int64_t n, int64_t *run_ports, int64_t *run_lens);
void send_runs(struct tx_counters *tx, const int64_t *run_ports, const int64_t *run_lens, const uint8_t *single,
               int64_t n);

/* ------------------------------------------------------------ dataplane/lcore.c */

typedef void forward_fn(const struct packets *p, const void *app, struct verdicts *v);

struct run_counts {                 /* dataplane/stats.py's RunStats counters */
    int64_t *rx, *drops, *flows;    /* drops: RX ports x reasons; flows: RX ports x (TX port + 1) */
    int64_t reasons, flow_width;
};

struct tx_runs {                    /* a super-burst's TX calls in order, as dataplane/tx.py's TxLog keeps them */
    int64_t *port, *len;
    uint8_t *single;                /* send_single_packet for each packet of the run; else send_packetsx4 */
    int64_t n;
};

struct port_outputs {               /* each TX port's records of a super-burst, laid out as written */
    uint8_t *data;                  /* port k's part starts at data + k * capacity */
    int64_t capacity, ports;        /* ports: how many parts data holds */
    int64_t *bytes, *packets;       /* per port (at least 32) */
    struct record_format format;
};

struct trace_columns {              /* dataplane/trace.py's TraceRecords: one array per TraceRecord field */
    int16_t *rx_port, *rx_queue, *lcore, *tx_port;
    int64_t *index, *burst, *tx_index, *rule, *next_hop;
    int32_t *caplen;
    uint8_t *table, *reason;
    uint8_t *head;                  /* TRACE_HEAD bytes per record: the frame's from SNAPSHOT_FROM, before any edit */
};
#define TRACE_HEAD 46               /* trace.SNAPSHOT_TO - SNAPSHOT_FROM */
#define TRACE_FROM 12               /* trace.SNAPSHOT_FROM */

struct lcore_trace {                /* dataplane/trace.py's BurstTracer over one super-burst */
    struct trace_columns r;         /* r.index NULL: not tracing */
    int64_t limit, filled;          /* the first `limit` packets received are traced; `filled` so far */
    const int64_t *rx_queue;        /* per polling place: its RX queue */
    const int64_t *first_index;     /* per source: the capture's record number of its row 0 ... */
    const int64_t *const *numbers;  /* ... or each row's (RSS queues), where non-NULL */
    int64_t lcore, first_burst;
    int64_t *sent, sent_ports;      /* per TX port: packets sent so far in the loop (tx_index) */
    int64_t *received_at;           /* scratch per sub-burst: a kept packet's place among those received */
    uint8_t *table;                 /* scratch per sub-burst: the lookups' notes (trace.Decisions) */
    int64_t *rule, *next_hop;
};

struct rule_hits {                  /* dataplane/hits.py's RuleHits; packets NULL: not counting */
    int64_t *packets, *bytes;       /* by base[table code] + rule id */
    const int64_t *base;
    int64_t size, tables;           /* counters; table codes below `tables` */
    const uint8_t *counted;         /* by reason code: 1 when a verdict counts for its rule */
    uint8_t *table;                 /* scratch per sub-burst: the lookups' notes (hits.Decisions) */
    int64_t *rule, *next_hop;
};

struct lcore_step {                 /* dataplane/lcore.py's main_loop over one super-burst */
    const struct queue_records *q;
    int64_t sources;
    const uint8_t *const *blocks;   /* per source: its read buffer, its size and where its frames start there */
    const ssize_t *block_bytes;
    const int64_t *const *offsets;
    const int64_t *row_units;       /* per source: its rows' time-stamp fractions, in ticks a second */
    int64_t rx_burst, places, first_round;
    forward_fn *forward;            /* the application's path (l3fwd/multi.c or simple.c) and its tables */
    const void *app;
    const uint8_t *step_drops;      /* by reason: a burst holding one is sent packet by packet (ACL mode's
                                     * classification drops; every reason on the simple path) */
    int64_t oversize, mbuf_data_room;   /* rx.py: the RX drop's code, and the mbuf's data room */
    struct run_counts counts;
    struct tx_runs runs;
    struct port_outputs out;
    struct merged sub;              /* a sub-burst: rows, columns and verdicts, small enough for the caches */
    int64_t *dest;
    uint8_t *reason;
    int64_t sub_packets;
    struct lcore_trace trace;
    struct rule_hits hits;
};

int64_t lcore_step(struct lcore_step *s);      /* packets received; -1: a record does not fit */

/* ------------------------------------------------------------ dataplane/jsonlines.c */

enum piece_kind { PIECE_TEXT, PIECE_CHOICE, PIECE_NUMBER, PIECE_BLOCK };   /* jsonlines.py's codes, in its order */
#define LINE_NUMBER_BYTES 20        /* the longest int64 in decimal (19 digits), and room to spare */
#define LINE_SLACK 8                /* a cell's last word is stored whole: up to 7 bytes past the lines */

struct int_column {                 /* integers as numpy holds them: any stride (a record array's field) */
    const uint8_t *data;
    int64_t stride;
    int size, is_signed;            /* 1, 2, 4 or 8 bytes */
};

struct line_piece {                 /* jsonlines.py's Lines: one piece of every line */
    enum piece_kind kind;
    const uint8_t *bytes;           /* TEXT: its bytes; CHOICE: its texts, one after the other; BLOCK: line 0's cell */
    const int64_t *offsets;         /* CHOICE: where each text starts in bytes, and where the last ends */
    int64_t width, stride;          /* the most bytes one line takes (BLOCK: a NUL-padded cell); BLOCK: cell to cell */
    int64_t texts;                  /* CHOICE: how many texts */
    struct int_column values;       /* CHOICE: each line's text; NUMBER: each line's number */
};

int64_t line_bytes(const struct line_piece *pieces, int64_t count);   /* the most one line can take */
/* -1: a bad code; ends (or NULL): each line's end, the place of its newline */
int64_t render_lines(const struct line_piece *pieces, int64_t count, int64_t n, uint8_t *out, int64_t *ends);
int64_t distinct_rows(const uint8_t *rows, int64_t stride, int64_t width, int64_t n, int64_t *first,
                      int64_t *inverse, int64_t *slots, int64_t slot_mask);

/* ------------------------------------------------------------ graph/walks.c */

/* The graph's nodes by number: these six, then one ethdev_tx per enabled port, then the
 * sources in walk order (graph/twin.py names them). */
enum graph_node { NODE_PKT_DROP, NODE_PKT_CLS, NODE_IP4_LOOKUP, NODE_IP6_LOOKUP, NODE_IP4_REWRITE, NODE_IP6_REWRITE,
                  NODE_FIRST_TX };
#define GRAPH_NODE_NAMES "pkt_drop", "pkt_cls", "ip4_lookup", "ip6_lookup", "ip4_rewrite", "ip6_rewrite"
/* Drop reasons, as graph/nodes.py's DROP_REASONS numbers them (checked at import). */
enum graph_reason { GRAPH_SENT, GRAPH_UNKNOWN_PTYPE, GRAPH_IP4_LOOKUP_MISS, GRAPH_IP6_LOOKUP_MISS, GRAPH_TRUNCATED };
#define GRAPH_DROP_REASON_NAMES "unknown_ptype", "ip4_lookup_miss", "ip6_lookup_miss", "truncated"

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

/* ------------------------------------------------------------ l3fwd/trace.c */

enum key_kind { KEY_NONE, KEY_DESTINATION4, KEY_DESTINATION6, KEY_FIVE_TUPLE4, KEY_FIVE_TUPLE6 };   /* trace.py's */
/* The longest text of each kind: null, "255.255.255.255", an IPv6 address (39 characters) quoted,
 * "255 255.255.255.255:65535 > 255.255.255.255:65535", "255 [39]:65535 > [39]:65535" */
#define KEY_TEXT_BYTES {4, 17, 41, 51, 103}
#define KEY_FRAME_BYTES 58          /* the frame bytes a key is read from (keys.py's KEY_BYTES) */

int64_t key_texts(const uint8_t *table, const uint8_t *heads, int64_t stride, int64_t n, const uint8_t *kinds,
                  uint8_t *out, int64_t out_stride);     /* the longest text written */

#endif
