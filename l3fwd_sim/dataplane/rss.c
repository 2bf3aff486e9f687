/*
 * The compiled twins of dataplane/rss.py's rss_queues — per record, the RX queue a NIC's
 * RSS puts it in: the Toeplitz hash of its addresses (and L4 ports, when the hash
 * fields include them) by per-byte tables, then reta[hash % reta_size] with the
 * redirection table filled round-robin — and of index_capture's walk, which places
 * every record of a mapped capture so.
 */
#include <string.h>

#include "../capture/records.h"
#include "twins.h"

#define HEAD 64                 /* records.HEAD_BYTES: the frame bytes rss_queues sees */

static inline int is_l4(uint8_t protocol)
{
    return protocol == 6 || protocol == 17 || protocol == 132;      /* TCP, UDP, SCTP */
}

/* The Toeplitz hash of `length` bytes (a multiple of 4) at `stream`, by the per-byte
 * tables from its first position on: four chains, so that the lookups overlap. */
static inline uint32_t toeplitz(const uint32_t *tables, const uint8_t *stream, int length)
{
    uint32_t h0 = 0, h1 = 0, h2 = 0, h3 = 0;
    for (int j = 0; j < length; j += 4, tables += 4 * 256) {
        h0 ^= tables[stream[j]];
        h1 ^= tables[256 + stream[j + 1]];
        h2 ^= tables[512 + stream[j + 2]];
        h3 ^= tables[768 + stream[j + 3]];
    }
    return h0 ^ h1 ^ h2 ^ h3;
}

/* The queue of one record (its record header, then `have` bytes of its frame, read as
 * a row reads it: zero past them, in `padded`). */
static inline int64_t queue_of(const uint8_t *record, int64_t have, uint8_t *padded, int l4, const uint32_t *tables,
                               const int64_t *reta, int64_t reta_size)
{
    const uint8_t *f = record + 16;
    if (have < HEAD) {
        memset(padded + have, 0, (size_t)(HEAD - have));
        f = memcpy(padded, f, (size_t)have);
    }
    int64_t caplen = field32(record + 8, 0);
    int ether_type = f[12] << 8 | f[13], from, to, ports_at, with_l4;
    uint8_t protocol;
    if (ether_type == 0x0800) {
        int ihl = (f[14] & 0x0F) * 4;
        from = 26, to = 34, ports_at = 14 + ihl, protocol = f[23];
        with_l4 = ((f[20] << 8 | f[21]) & 0x3FFF) == 0 && ihl >= 20;     /* not a fragment */
    } else if (ether_type == 0x86DD) {
        from = 22, to = 54, ports_at = 54, protocol = f[20], with_l4 = 1;
    } else {
        return 0;
    }
    if (caplen < to)
        return 0;
    int64_t room = caplen < HEAD ? caplen : HEAD;
    with_l4 = with_l4 && l4 && is_l4(protocol) && ports_at + 4 <= room;
    uint32_t hash = toeplitz(tables, f + from, to - from);
    if (with_l4)
        hash ^= toeplitz(tables + (to - from) * 256, f + ports_at, 4);
    return reta[hash & (uint32_t)(reta_size - 1)];      /* reta_size: a power of 2 */
}

void rss_queues(const struct rss *r, const uint8_t *records, int64_t stride, int64_t width, int64_t n, int64_t *out)
{
    int64_t have = width - 16 < HEAD ? width - 16 : HEAD;
    uint8_t padded[HEAD];                       /* a narrow row's head, zero past it (as rss.py's heads) */
    for (int64_t i = 0; i < n; i++)
        out[i] = queue_of(records + i * stride, have, padded, r->l4, r->tables, r->reta, r->reta_size);
}

/* rss.index_capture's walk: from `pos`, up to `limit` whole records of the little-endian
 * classic pcap in buf[0, end) — each frame's offset, captured length, RX queue and time
 * stamp ((seconds, fraction) as one number) — as
 * kernels.walk_rows and rss_queues find them. Stops (*stop = 1) at a record a reader
 * would not hand over as stored: a damaged length, or one above `snap` (cut). */
int64_t rss_index(const struct rss *r, const uint8_t *buf, int64_t pos, int64_t end, int64_t limit,
                  int64_t max_caplen, int64_t snap, int64_t *offsets, uint32_t *caplen, uint8_t *queue,
                  uint64_t *ts, int64_t *pos_after, int *stop)
{
    uint8_t padded[HEAD];
    int64_t n = 0, cap;
    int found = 1;
    while (n < limit && (found = whole_record(buf, pos, end, 0, max_caplen, &cap)) > 0 && cap <= snap) {
        offsets[n] = pos + 16;
        caplen[n] = (uint32_t)cap;
        uint32_t seconds, fraction;          /* little-endian, as whole_record reads the length */
        memcpy(&seconds, buf + pos, 4);
        memcpy(&fraction, buf + pos + 4, 4);
        ts[n] = (uint64_t)seconds << 32 | fraction;
        /* queue_of reads no byte past the captured length (it checks the length first): a
         * frame is read in place, with the bytes that follow it, unless the file ends sooner */
        int64_t have = end - pos - 16 >= HEAD ? HEAD : cap;
        queue[n++] = (uint8_t)queue_of(buf + pos, have, padded, r->l4, r->tables, r->reta, r->reta_size);
        pos += 16 + cap;
    }
    *stop = found < 0 || (found > 0 && n < limit);
    *pos_after = pos;
    return n;
}
