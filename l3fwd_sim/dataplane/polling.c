/*
 * The compiled twin of dataplane/polling.py's _merge: the lcore's RX queues' records
 * laid out in processing order (rounds of rx_burst packets per queue, queues in
 * polling order), each as a full row, with the per-packet columns of the batch, and the
 * row's wire length made its captured length (rx.set_pkt_len: net_pcap's pkt_len).
 */
#include <string.h>

#include "../capture/records.h"
#include "twins.h"

static inline int64_t le32(const uint8_t *b)
{
    return (int64_t)b[0] | (int64_t)b[1] << 8 | (int64_t)b[2] << 16 | (int64_t)b[3] << 24;
}

/* A record (header and up to ROW_BYTES - 16 bytes of frame, `width` bytes) as a row,
 * zero past it, with fixed-size copies the compiler does itself where it can: a record
 * of more than 64 bytes is its first 64, zeros, then its last 16 laid over them. */
static inline void copy_row(uint8_t *restrict row, const uint8_t *restrict record, int64_t width)
{
    if (width == ROW_BYTES) {
        memcpy(row, record, ROW_BYTES);
    } else if (width > 64) {
        memcpy(row, record, 64);
        memset(row + 64, 0, ROW_BYTES - 64);
        memcpy(row + width - 16, record + width - 16, 16);
    } else {
        memset(row, 0, ROW_BYTES);
        memcpy(row, record, (size_t)width);
    }
}

/* polling._merge over polling rounds [round_from, round_to) of the queues' records
 * (counted from the first round they hold); returns the packets laid out. */
int64_t merge_rounds(const struct queue_records *q, int64_t sources, int64_t rx_burst, int64_t queues,
                     int64_t first_round, int64_t round_from, int64_t round_to, struct merged *out)
{
    uint8_t *restrict rows = out->rows;
    int64_t *restrict caplen = out->caplen, *restrict in_port = out->in_port, *restrict burst = out->burst;
    int64_t *restrict source_id = out->source_id, *restrict source_row = out->source_row;
    int64_t i = 0;
    for (int64_t round = round_from; round < round_to; round++) {
        for (int64_t s = 0; s < sources; s++) {
            const uint8_t *records = q[s].records;
            const int64_t stride = q[s].stride, width = q[s].width, port = q[s].port, count = q[s].count;
            const int64_t from = round * rx_burst, to = from + rx_burst < count ? from + rx_burst : count;
            const int64_t id = (first_round + round) * queues + q[s].place;
            for (int64_t j = from; j < to; j++, i++) {
                uint8_t *row = rows + i * ROW_BYTES;
                /* the queue's next round: read ahead, so that it is in the caches by then */
                __builtin_prefetch(records + (j + rx_burst) * stride);
                __builtin_prefetch(records + (j + rx_burst) * stride + 64);
                copy_row(row, records + j * stride, width);
                memcpy(row + 12, row + 8, 4);           /* rx.set_pkt_len */
                caplen[i] = le32(row + 8);
                in_port[i] = port;
                burst[i] = id;
                source_id[i] = s;
                source_row[i] = j;
            }
        }
    }
    return i;
}

/* The polling rounds the queues' records span. */
int64_t rounds_of(const struct queue_records *q, int64_t sources, int64_t rx_burst)
{
    int64_t rounds = 0;
    for (int64_t s = 0; s < sources; s++) {
        int64_t r = (q[s].count + rx_burst - 1) / rx_burst;
        rounds = r > rounds ? r : rounds;
    }
    return rounds;
}
