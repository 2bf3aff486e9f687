/*
 * The compiled twins of capture/kernels.py (the byte loops of the pcap I/O) and of
 * capture/writers.py's grouping of a super-burst by TX port. They model no DPDK
 * behaviour: they find records and move bytes.
 */
#include <string.h>

#include "records.h"

/* kernels.scan_records: up to `limit` complete classic pcap records from `pos`. */
int64_t scan_records(const uint8_t *buf, int64_t pos, int64_t end, int64_t limit, int big_endian,
                     int64_t max_caplen, int64_t *out, uint8_t *headers, int64_t header_stride,
                     int64_t *pos_after, int *bad)
{
    int64_t n = 0, cap;
    int found = 1;
    while (n < limit && (found = whole_record(buf, pos, end, big_endian, max_caplen, &cap)) > 0) {
        out[n] = pos + 16;
        if (headers)
            memcpy(headers + n * header_stride, buf + pos, 16);
        n++;
        pos += 16 + cap;
    }
    *bad = found < 0;
    *pos_after = pos;
    return n;
}

static inline uint32_t swap32(uint32_t v)
{
    return v >> 24 | (v >> 8 & 0xFF00) | (v << 8 & 0xFF0000) | v << 24;
}

/* kernels.walk_rows: scan_records, each record laid out as its row in the same pass: the
 * record header (little-endian, the captured length cut to `snap`), then the frame's
 * first ROW_BYTES - 16 bytes, zero past it. *frame_bytes: the frames' bytes so cut. */
int64_t walk_rows(const uint8_t *buf, int64_t pos, int64_t end, int64_t limit, int big_endian, int64_t max_caplen,
                  int64_t snap, int64_t *out, uint8_t *rows, int64_t row_stride, int64_t *pos_after, int *bad,
                  int64_t *frame_bytes)
{
    int64_t n = 0, bytes = 0, cap;
    int found = 1;
    while (n < limit && (found = whole_record(buf, pos, end, big_endian, max_caplen, &cap)) > 0) {
        uint8_t *row = rows + n * row_stride;
        uint32_t header[4];
        memcpy(header, buf + pos, 16);
        if (big_endian)
            for (int f = 0; f < 4; f++)
                header[f] = swap32(header[f]);
        int64_t kept = cap < snap ? cap : snap;
        header[2] = (uint32_t)kept;
        memcpy(row, header, 16);
        int64_t head = kept < ROW_BYTES - 16 ? kept : ROW_BYTES - 16;
        memset(row + 16, 0, ROW_BYTES - 16);
        memcpy(row + 16, buf + pos + 16, (size_t)head);
        out[n++] = pos + 16;
        bytes += kept;
        pos += 16 + cap;
    }
    *bad = found < 0;
    *pos_after = pos;
    *frame_bytes = bytes;
    return n;
}

/* kernels.scan_blocks: the offsets of the whole pcapng blocks from `pos`. */
int64_t scan_blocks(const uint8_t *buf, int64_t pos, int64_t end, int64_t *out)
{
    int64_t n = 0;
    while (end - pos >= 12) {
        const uint8_t *b = buf + pos + 4;
        int64_t length = (int64_t)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
        if (length < 12 || end - pos < length)
            break;
        out[n++] = pos;
        pos += length;
    }
    return n;
}

/* kernels.gather_windows: row i = the first widths[i] bytes at starts[i], zero after. */
void gather_windows(const uint8_t *buf, const int64_t *starts, const int64_t *widths, int64_t n,
                    uint8_t *out, int64_t out_stride, int64_t width)
{
    for (int64_t i = 0; i < n; i++) {
        uint8_t *row = out + i * out_stride;
        int64_t w = widths[i] < width ? widths[i] : width;
        memcpy(row, buf + starts[i], (size_t)w);
        memset(row + w, 0, (size_t)(width - w));
    }
}

/* kernels.concat_ranges */
void concat_ranges(const uint8_t *buf, const int64_t *starts, const int64_t *lengths, int64_t n, uint8_t *out)
{
    for (int64_t i = 0; i < n; i++) {
        memcpy(out, buf + starts[i], (size_t)lengths[i]);
        out += lengths[i];
    }
}

/* kernels.pack_rows: the first widths[i] bytes of each row, one after another. */
void pack_rows(const uint8_t *rows, int64_t stride, const int64_t *widths, int64_t n, uint8_t *out)
{
    for (int64_t i = 0; i < n; i++) {
        memcpy(out, rows + i * stride, (size_t)widths[i]);
        out += widths[i];
    }
}

/* The bytes (in the output's format) and packets each TX port gets from a super-burst
 * (dest[i] < 0: dropped). Returns the bytes of all of them. */
int64_t port_bytes(const struct packets *p, const int64_t *dest, int64_t ports, const struct record_format *f,
                   int64_t *bytes, int64_t *packets)
{
    int64_t total = 0;
    memset(bytes, 0, (size_t)ports * sizeof *bytes);
    memset(packets, 0, (size_t)ports * sizeof *packets);
    for (int64_t i = 0; i < p->n; i++) {
        int64_t port = dest[i];
        if (port < 0)
            continue;
        int64_t size = record_size(f, p->caplen[i]);
        bytes[port] += size;
        packets[port]++;
        total += size;
    }
    return total;
}

/* writers.PortOutputs.write: each sent record into its port's part of `out`, in
 * processing order, in the output's format (lay_out_record). Port k's part starts at
 * start[k] (set here): the parts follow one another, port_bytes' sizes apart with
 * ROW_SLACK bytes of room after each. */
void scatter_records(const struct packets *p, const int64_t *dest, int64_t ports, const struct record_format *f,
                     const int64_t *bytes, int64_t *start, uint8_t *out)
{
    uint8_t *at[ports > 0 ? ports : 1];
    for (int64_t k = 0, offset = 0; k < ports; k++) {
        start[k] = offset;
        at[k] = out + offset;
        offset += bytes[k] + ROW_SLACK;
    }
    for (int64_t i = 0; i < p->n; i++) {
        int64_t port = dest[i], cap = p->caplen[i];
        if (port < 0)
            continue;
        const uint8_t *frame = cap <= p->head ? NULL : p->blocks[p->source_id[i]] + p->offsets[p->source_id[i]][p->source_row[i]];
        lay_out_record(at[port], p->rows + i * p->stride, cap, frame, f, p->row_units[p->source_id[i]]);
        at[port] += record_size(f, cap);
    }
}

/* The record at q->pos: its length (0 when none is left, -1 when it runs past the end
 * of its file or, in a pcapng, is not an Enhanced Packet Block) and its time stamp as
 * one number — (seconds, fraction) or (high, low) 32-bit words, little-endian as this
 * package writes them — that orders the records of one resolution. */
static inline int64_t head_record(const struct queue_file *q, int pcapng, uint64_t *ts)
{
    int64_t left = q->size - q->pos, length;     /* this package writes little-endian */
    const uint8_t *r = q->data + q->pos;
    if (left == 0)
        return 0;
    if (pcapng) {
        if (left < 28 || field32(r, 0) != 6 || (length = field32(r + 4, 0)) < 28 || length > left)
            return -1;
        *ts = (uint64_t)field32(r + 12, 0) << 32 | field32(r + 16, 0);
    } else {
        if (left < 16 || (length = 16 + (int64_t)field32(r + 8, 0)) > left)
            return -1;
        *ts = (uint64_t)field32(r, 0) << 32 | field32(r + 4, 0);
    }
    return length;
}

/* merge_queues: queue f, when open and empty (`length` 0), as the lowest (bound, queue)
 * the merge must wait for so far */
static inline void wait_for(const struct queue_file *q, int64_t f, int64_t length, int64_t *low, uint64_t *low_bound)
{
    uint64_t bound = q[f].floor > q[f].carry ? q[f].floor : q[f].carry;
    if (length == 0 && q[f].open && (*low < 0 || bound < *low_bound || (bound == *low_bound && f < *low))) {
        *low = f;
        *low_bound = bound;
    }
}

/* merge.TxQueueMerge: the k TX queues of one port as one capture — each step takes
 * the queue head with the earliest time stamp, ties to the lower queue, so each queue's
 * records keep their order (a TX queue is a FIFO). A head's key is the latest time
 * stamp of its queue so far (q[f].carry, moved on): the merge's definition, the stable
 * sort by each record's running maximum, which a record earlier than one before it in
 * its queue waits for. From each q[f].pos (moved on as records are taken), records are
 * copied to `out` until the next does not fit its `capacity`, `room` records were taken,
 * every queue is empty, or an open queue is empty whose next record may come first (its
 * key can be as low as its carry or its floor: the earliest time stamp its lcore may
 * still send). source[i] is the queue of the i-th record taken. Without `out`, the
 * records are only counted. Returns the records taken (their bytes in *used), or -1
 * when queue *bad holds a damaged record at its pos. */
int64_t merge_queues(struct queue_file *q, int64_t k, int pcapng, uint8_t *out, int64_t capacity,
                     uint8_t *source, int64_t room, int64_t *used, int64_t *bad)
{
    uint64_t ts[MAX_TX_QUEUES];
    int64_t length[MAX_TX_QUEUES], n = 0, at = 0;
    for (int64_t f = 0; f < k; f++)
        if ((length[f] = head_record(&q[f], pcapng, &ts[f])) < 0) {
            *bad = f;
            return -1;
        }
    /* the open queues that are empty: the lowest (bound, queue) of what they may still send */
    int64_t low = -1;
    uint64_t low_bound = 0;
    for (int64_t f = 0; f < k; f++)
        wait_for(q, f, length[f], &low, &low_bound);
    while (n < room) {
        int64_t best = -1;
        uint64_t key = 0;
        for (int64_t f = 0; f < k; f++) {      /* strictly earlier wins: a tie keeps the lower queue */
            uint64_t head = ts[f] > q[f].carry ? ts[f] : q[f].carry;
            if (length[f] > 0 && (best < 0 || head < key)) {
                best = f;
                key = head;
            }
        }
        int waiting = low >= 0 && best >= 0 && (low_bound < key || (low_bound == key && low < best));
        if (best < 0 || waiting || at + length[best] > capacity)
            break;
        if (out)                            /* none: the step only counted */
            memcpy(out + at, q[best].data + q[best].pos, (size_t)length[best]);
        at += length[best];
        q[best].pos += length[best];
        q[best].carry = key;
        source[n++] = (uint8_t)best;
        if ((length[best] = head_record(&q[best], pcapng, &ts[best])) < 0)
            break;                          /* the records before it first: the next call reports it */
        wait_for(q, best, length[best], &low, &low_bound);
    }
    *used = at;
    return n;
}

/* pcapng_writer.write_commented: the Enhanced Packet Blocks laid end to end in data[0,
 * size) (as pcapng_writer writes them: no options) again, each with text[starts[k],
 * ends[k]) as its opt_comment — type and new length, the old body, the option's code and
 * length, the comment, its padding and opt_endofopt, the new length — from the block at
 * *pos, comment *k, on, into `out` until the next block does not fit its `capacity`.
 * Returns the bytes laid out, *pos and *k moved on; -1 where data is not one EPB per
 * comment (another block type, a length below an EPB's 32 bytes or past the data,
 * blocks too few or left over). */
int64_t comment_blocks(const uint8_t *data, int64_t size, const uint8_t *text, const int64_t *starts,
                       const int64_t *ends, int64_t n, uint8_t *out, int64_t capacity, int64_t *pos, int64_t *k)
{
    static const uint8_t zeros[8] = {0};
    int64_t at = 0, i = *k, p = *pos;
    for (; i < n; i++) {
        if (size - p < 32 || field32(data + p, 0) != 6u)
            return -1;
        int64_t old = field32(data + p + 4, 0), comment = ends[i] - starts[i], pad = -comment & 3;
        if (old < 32 || old % 4 || old > size - p)
            return -1;
        uint32_t length = (uint32_t)(old + 8 + comment + pad), option = 1u | (uint32_t)comment << 16;
        uint32_t head[2] = {6u, length};
        if (at + (int64_t)length > capacity)
            break;
        memcpy(out + at, head, 8);
        memcpy(out + at + 8, data + p + 8, (size_t)(old - 12));
        at += old - 4;
        memcpy(out + at, &option, 4);
        memcpy(out + at + 4, text + starts[i], (size_t)comment);
        memcpy(out + at + 4 + comment, zeros, (size_t)(pad + 4));
        at += 8 + comment + pad;
        memcpy(out + at, &length, 4);
        at += 4;
        p += old;
    }
    if (i == n && p != size)
        return -1;
    *k = i;
    *pos = p;
    return at;
}
