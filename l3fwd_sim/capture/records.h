/*
 * capture/records.py's layout of an output record, shared by the compiled writers.
 */
#ifndef L3FWD_SIM_CAPTURE_RECORDS_H
#define L3FWD_SIM_CAPTURE_RECORDS_H

#include <string.h>

#include "twins.h"

#define ROW_SLACK ROW_BYTES      /* bytes an output must have beyond its last record (lay_out_record) */

/* A capture's 32-bit (16-bit) field at `b`, in the byte order of its file or section. */
static inline uint32_t field32(const uint8_t *b, int big_endian)
{
    uint32_t v;
    memcpy(&v, b, 4);
    return big_endian ? __builtin_bswap32(v) : v;
}

static inline uint32_t field16(const uint8_t *b, int big_endian)
{
    uint16_t v;
    memcpy(&v, b, 2);
    return big_endian ? __builtin_bswap16(v) : v;
}

/* The classic pcap record at `pos`: 1 when it lies whole before `end` (its captured
 * length in *cap), 0 when it runs past `end`, -1 when its captured length exceeds
 * max_caplen (damage). */
static inline int whole_record(const uint8_t *buf, int64_t pos, int64_t end, int big_endian, int64_t max_caplen,
                               int64_t *cap)
{
    if (end - pos < 16)
        return 0;
    *cap = field32(buf + pos + 8, big_endian);
    if (*cap > max_caplen)
        return -1;
    return end - pos - 16 >= *cap;
}

/* The bytes a record of a `caplen`-byte frame takes in the output. */
static inline int64_t record_size(const struct record_format *f, int64_t caplen)
{
    return f->pcapng ? 32 + ((caplen + 3) & ~(int64_t)3) : 16 + caplen;
}

/* One record as it goes to the output at `at`, from its row (record header, fraction in
 * `row_units` ticks a second, and the frame's first ROW_BYTES - 16 bytes, edited) and
 * the rest of a longer frame at `frame`, where the reader left it. The row's head is
 * copied whole — one fixed-size copy, the compiler's own moves — so `at` must have
 * ROW_SLACK bytes of room past the record. */
static inline void lay_out_record(uint8_t *at, const uint8_t *row, int64_t caplen, const uint8_t *frame,
                                  const struct record_format *f, int64_t row_units)
{
    const int64_t head = ROW_BYTES - 16;
    uint32_t header[4];
    memcpy(header, row, 16);
    if (row_units != f->units)       /* writers.PortOutputs._to_output_resolution */
        header[1] = row_units > f->units ? header[1] / (uint32_t)(row_units / f->units)
                                         : header[1] * (uint32_t)(f->units / row_units);
    if (!f->pcapng) {
        memcpy(at, row, ROW_BYTES);
        memcpy(at, header, 16);
        if (caplen > head)
            memcpy(at + ROW_BYTES, frame + head, (size_t)(caplen - head));
        return;
    }
    uint64_t ticks = (uint64_t)header[0] * (uint64_t)f->units + header[1];
    uint32_t length = (uint32_t)record_size(f, caplen);
    uint32_t fields[7] = {6, length, 0, (uint32_t)(ticks >> 32), (uint32_t)ticks, (uint32_t)caplen, header[3]};
    memcpy(at, fields, 28);
    memcpy(at + 28, row + 16, (size_t)head);
    if (caplen > head)
        memcpy(at + 28 + head, frame + head, (size_t)(caplen - head));
    memset(at + 28 + caplen, 0, 4);  /* the padding to 32 bits; the trailing length after it */
    memcpy(at + length - 4, &length, 4);
}

#endif
