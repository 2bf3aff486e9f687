/*
 * The compiled twin of dataplane/lcore.py's main loop over one super-burst, for a path
 * with a compiled twin (l3fwd's multi and simple paths): the queues' records go through
 * the stages a sub-burst of whole polling rounds at a time, small enough that a packet's
 * bytes stay in the caches from one stage to the next — as DPDK's own loop goes burst by
 * burst: received in polling order (polling.c), RX drops of the 2048-byte mbuf
 * (rx.py), the application's forward, the TX calls (tx.py / acl.account_acl), the
 * counters (stats.c) and each sent record laid out in its TX port's output
 * (records.c).
 */
#include <string.h>

#include "../capture/records.h"
#include "twins.h"

/* trace.BurstTracer.take: the receive side of the sub-burst's first packets still to
 * trace, and their header bytes before any stage edits them; returns how many. */
static int64_t trace_received(struct lcore_step *s, int64_t n)
{
    struct lcore_trace *t = &s->trace;
    struct trace_columns *r = &t->r;
    struct merged *m = &s->sub;
    int64_t take = t->limit - t->filled < n ? t->limit - t->filled : n;
    for (int64_t i = 0, at = t->filled; i < take; i++, at++) {
        int64_t source = m->source_id[i], row = m->source_row[i];
        r->rx_port[at] = (int16_t)m->in_port[i];
        r->rx_queue[at] = (int16_t)t->rx_queue[m->burst[i] % s->places];
        r->lcore[at] = (int16_t)t->lcore;
        r->tx_port[at] = -1;
        r->index[at] = t->numbers[source] ? t->numbers[source][row] : t->first_index[source] + row;
        r->burst[at] = m->burst[i] + t->first_burst;
        r->tx_index[at] = r->rule[at] = r->next_hop[at] = -1;     /* no lookup (yet) */
        r->caplen[at] = (int32_t)m->caplen[i];
        r->table[at] = r->reason[at] = 0;
        memcpy(r->head + at * TRACE_HEAD, m->rows + i * m->width + 16 + TRACE_FROM, TRACE_HEAD);
    }
    return take;
}

/* trace.BurstTracer.record: where each traced packet the path got went, and what its
 * lookup answered; every sent packet counts for the next ones' tx_index. */
static void trace_decided(struct lcore_step *s, int64_t n, int64_t taken)
{
    struct lcore_trace *t = &s->trace;
    struct trace_columns *r = &t->r;
    for (int64_t j = 0; j < n; j++) {
        int64_t i = t->received_at[j], port = s->dest[j], rank = -1;
        if (port >= 0 && port < t->sent_ports)
            rank = t->sent[port]++;
        if (i >= taken)
            continue;
        int64_t at = t->filled + i;
        r->reason[at] = s->reason[j];
        r->tx_port[at] = (int16_t)port;
        r->tx_index[at] = rank;
        r->table[at] = t->table[j];
        r->rule[at] = t->rule[j];
        r->next_hop[at] = t->next_hop[j];
    }
}

/* rx.oversize: records longer than one mbuf are dropped on receive (counted, never
 * forwarded); returns the packets kept, moved up in order. A traced one (of the first
 * `taken`) is noted as dropped so. */
static int64_t drop_oversize(struct lcore_step *s, int64_t n, int64_t taken)
{
    struct merged *m = &s->sub;
    int64_t kept = 0;
    for (int64_t i = 0; i < n; i++) {
        if (m->caplen[i] > s->mbuf_data_room) {
            s->counts.rx[m->in_port[i]]++;
            s->counts.drops[m->in_port[i] * s->counts.reasons + s->oversize]++;
            s->counts.flows[m->in_port[i] * s->counts.flow_width]++;
            if (i < taken)
                s->trace.r.reason[s->trace.filled + i] = (uint8_t)s->oversize;
            continue;
        }
        if (s->trace.r.index)
            s->trace.received_at[kept] = i;
        if (kept != i) {
            memcpy(m->rows + kept * m->width, m->rows + i * m->width, (size_t)m->width);
            m->caplen[kept] = m->caplen[i];
            m->in_port[kept] = m->in_port[i];
            m->burst[kept] = m->burst[i];
            m->source_id[kept] = m->source_id[i];
            m->source_row[kept] = m->source_row[i];
        }
        kept++;
    }
    return kept;
}

/* tx.account_multi (same_port_runs), acl.account_acl and tx.account_simple: per rx
 * burst, one run per maximal stretch of one destination, each a send_packetsx4 — or,
 * when the burst holds a reason of step_drops (in ACL mode a drop of the classification
 * step; on the simple path any), sent packet by packet. */
static void account(struct lcore_step *s, const int64_t *burst, int64_t n)
{
    for (int64_t start = 0; start < n;) {
        int64_t end = start + 1;
        while (end < n && burst[end] == burst[start])
            end++;
        int single = 0;
        for (int64_t i = start; s->step_drops && i < end && !single; i++)
            single = s->step_drops[s->reason[i]];
        for (int64_t i = start; i < end;) {
            int64_t j = i + 1;
            while (j < end && s->dest[j] == s->dest[i])
                j++;
            if (s->dest[i] >= 0) {
                s->runs.port[s->runs.n] = s->dest[i];
                s->runs.len[s->runs.n] = j - i;
                s->runs.single[s->runs.n++] = (uint8_t)single;
            }
            i = j;
        }
        start = end;
    }
}

/* writers.PortOutputs.write: each sent record after its port's records so far; 0 when
 * one does not fit its port's part, or its frame lies outside its block */
static int lay_out(struct lcore_step *s, int64_t n)
{
    struct merged *m = &s->sub;
    int64_t head = m->width - 16;
    for (int64_t i = 0; i < n; i++) {
        int64_t port = s->dest[i], cap = m->caplen[i], size = record_size(&s->out.format, cap);
        if (port < 0)
            continue;
        if (port >= s->out.ports || s->out.bytes[port] + size + ROW_SLACK > s->out.capacity)
            return 0;
        const uint8_t *frame = NULL;
        if (cap > head) {
            int64_t at = s->offsets[m->source_id[i]][m->source_row[i]];
            if (at < 0 || at + cap > s->block_bytes[m->source_id[i]])
                return 0;
            frame = s->blocks[m->source_id[i]] + at;
        }
        lay_out_record(s->out.data + port * s->out.capacity + s->out.bytes[port], m->rows + i * m->width, cap, frame,
                       &s->out.format, s->row_units[m->source_id[i]]);
        s->out.bytes[port] += size;
        s->out.packets[port]++;
    }
    return 1;
}

/* hits.RuleHits.count: each packet whose final verdict counts, for the rule its lookup
 * noted */
static void count_hits(struct rule_hits *h, const struct verdicts *v, const int64_t *caplen, int64_t n)
{
    for (int64_t j = 0; j < n; j++) {
        int64_t table = v->table[j];
        if (table == 0 || table >= h->tables || !h->counted[v->reason[j]])
            continue;
        int64_t rule = v->rule[j];
        if (rule < 0)
            continue;
        int64_t at = h->base[table] + rule;
        if (at < h->size) {
            h->packets[at]++;
            h->bytes[at] += caplen[j];
        }
    }
}

/* Returns the packets received. */
int64_t lcore_step(struct lcore_step *s)
{
    int64_t rounds = rounds_of(s->q, s->sources, s->rx_burst), received = 0;
    int64_t per_round = s->rx_burst * s->sources;
    int64_t step = s->sub_packets / per_round > 0 ? s->sub_packets / per_round : 1;
    for (int64_t round = 0; round < rounds; round += step) {
        int64_t last = round + step < rounds ? round + step : rounds;
        int64_t n = merge_rounds(s->q, s->sources, s->rx_burst, s->places, s->first_round, round, last, &s->sub);
        received += n;
        struct lcore_trace *t = &s->trace;
        int64_t taken = t->r.index ? trace_received(s, n) : 0;
        n = drop_oversize(s, n, taken);
        struct packets p = {.rows = s->sub.rows, .stride = s->sub.width, .head = s->sub.width - 16,
                            .caplen = s->sub.caplen, .in_port = s->sub.in_port, .n = n};
        struct verdicts v = {.dest = s->dest, .reason = s->reason};
        if (t->r.index || s->hits.packets) {   /* hits.Decisions: no lookup until the path notes one */
            v.table = t->r.index ? t->table : s->hits.table;
            v.rule = t->r.index ? t->rule : s->hits.rule;
            v.next_hop = t->r.index ? t->next_hop : s->hits.next_hop;
            memset(v.table, 0, (size_t)n);
            for (int64_t j = 0; t->r.index && j < n; j++)   /* the counters read a rule only where a table is noted */
                v.rule[j] = v.next_hop[j] = -1;
        }
        s->forward(&p, s->app, &v);
        account(s, s->sub.burst, n);
        count_packets(s->sub.in_port, s->reason, s->dest, n, s->counts.reasons, s->counts.rx, s->counts.drops,
                      s->counts.flows, s->counts.flow_width);
        if (s->hits.packets)
            count_hits(&s->hits, &v, s->sub.caplen, n);
        if (t->r.index) {
            trace_decided(s, n, taken);
            t->filled += taken;
        }
        if (!lay_out(s, n))
            return -1;
    }
    return received;
}
