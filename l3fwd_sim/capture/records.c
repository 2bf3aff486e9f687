/*
 * The compiled twins of capture/kernels.py (the byte loops of the pcap I/O) and of
 * capture/writers.py's grouping of a super-burst by TX port. They model no DPDK
 * behaviour: they find records and move bytes.
 */
#include <string.h>

#include "../compiled.h"
#include "records.h"

static int64_t caplen_at(const uint8_t *header, int big_endian)
{
    const uint8_t *b = header + 8;
    return big_endian ? (int64_t)b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
                      : (int64_t)b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0];
}

/* The record at `pos`: 1 when it lies whole before `end` (its captured length in *cap),
 * 0 when it runs past `end`, -1 when its captured length exceeds max_caplen (damage). */
static inline int whole_record(const uint8_t *buf, int64_t pos, int64_t end, int big_endian, int64_t max_caplen,
                               int64_t *cap)
{
    if (end - pos < 16)
        return 0;
    *cap = caplen_at(buf + pos, big_endian);
    if (*cap > max_caplen)
        return -1;
    return end - pos - 16 >= *cap;
}

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

/* The bytes (record headers included) and packets each TX port gets from a super-burst
 * (dest[i] < 0: dropped). Returns the bytes of all of them. */
int64_t port_bytes(const struct packets *p, const int64_t *dest, int64_t ports, int64_t *bytes, int64_t *packets)
{
    int64_t total = 0;
    memset(bytes, 0, (size_t)ports * sizeof *bytes);
    memset(packets, 0, (size_t)ports * sizeof *packets);
    for (int64_t i = 0; i < p->n; i++) {
        int64_t port = dest[i];
        if (port < 0)
            continue;
        bytes[port] += 16 + p->caplen[i];
        packets[port]++;
        total += 16 + p->caplen[i];
    }
    return total;
}

/* writers.PortOutputs.write: each sent record into its port's part of `out`, in
 * processing order: its row cut to the frame (record header and edited head), then the
 * rest of a longer frame from its read buffer. Port k's part starts at start[k] (set
 * here): the parts follow one another, port_bytes' sizes apart with ROW_SLACK bytes of
 * room after each. */
void scatter_records(const struct packets *p, const int64_t *dest, int64_t ports, const int64_t *bytes,
                     int64_t *start, uint8_t *out)
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
        lay_out_record(at[port], p->rows + i * p->stride, cap, frame);
        at[port] += 16 + cap;
    }
}

/* writers.merge_by_time: the order of k files' records (times[bounds[f]:bounds[f + 1]]
 * are file f's time stamps, in file order) by time stamp, ties in file order — one
 * pass of a k-way merge, each file being a run already in time order. Returns 0 when
 * a file's records are not in time order (the caller sorts instead). `next` is k
 * items of scratch. */
int merge_by_time(const uint64_t *times, const int64_t *bounds, int64_t k, int64_t *next, int64_t *order)
{
    for (int64_t f = 0; f < k; f++) {
        for (int64_t i = bounds[f] + 1; i < bounds[f + 1]; i++)
            if (times[i] < times[i - 1])
                return 0;
        next[f] = bounds[f];
    }
    int64_t total = bounds[k];
    for (int64_t p = 0; p < total; p++) {
        int64_t best = -1;
        for (int64_t f = 0; f < k; f++)      /* strictly earlier wins: a tie keeps the earlier file */
            if (next[f] < bounds[f + 1] && (best < 0 || times[next[f]] < times[next[best]]))
                best = f;
        order[p] = next[best]++;
    }
    return 1;
}
