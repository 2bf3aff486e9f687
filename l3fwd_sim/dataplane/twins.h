/*
 * The dataplane's compiled twins (polling.c, rss.c, stats.c, tx.c, lcore.c, jsonlines.c),
 * as plain C over the arrays the Python side holds; dataplane/twins.py binds them. An
 * application's path reaches lcore.c as a forward_fn and its tables as `app`: the
 * dataplane knows no application.
 */
#ifndef L3FWD_SIM_DATAPLANE_TWINS_H
#define L3FWD_SIM_DATAPLANE_TWINS_H

#include "../capture/twins.h"

/* ------------------------------------------------------------ polling.c */

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

/* ------------------------------------------------------------ rss.c */

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

/* ------------------------------------------------------------ stats.c */

void count_packets(const int64_t *in_port, const uint8_t *reason, const int64_t *dest, int64_t n, int64_t reasons,
                   int64_t *rx, int64_t *drops, int64_t *flows, int64_t flow_width);

/* ------------------------------------------------------------ tx.c */

struct tx_counters {                /* dataplane/tx.py's TxModel, per port */
    int64_t *len, *tx_bursts, *direct, *buffered, *runs;
    int64_t rx_burst, tx_burst;
};

int64_t same_port_runs(const int64_t *dest, const int64_t *burst, int64_t n, int64_t *run_ports, int64_t *run_lens);
void send_runs(struct tx_counters *tx, const int64_t *run_ports, const int64_t *run_lens, const uint8_t *single,
               int64_t n);

/* ------------------------------------------------------------ lcore.c */

struct verdicts {                   /* what an application's path decides per packet */
    int64_t *dest;
    uint8_t *reason;
    uint8_t *table;                 /* NULL unless tracing: then table, rule and next_hop */
    int64_t *rule, *next_hop;
};

/* The application's path over a sub-burst (l3fwd/multi.c or simple.c), `app` its tables. */
typedef void (*forward_fn)(const struct packets *p, const void *app, struct verdicts *v);

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
    forward_fn forward;             /* the application's path (l3fwd/multi.c or simple.c) and its tables */
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

/* ------------------------------------------------------------ jsonlines.c */

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

#endif
