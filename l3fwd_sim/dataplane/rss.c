/*
 * The compiled twin of dataplane/rss.py's rss_queues: per record, the RX queue a NIC's
 * RSS puts it in — the Toeplitz hash of its addresses (and L4 ports, when the hash
 * fields include them) by per-byte tables, then reta[hash % reta_size] with the
 * redirection table filled round-robin.
 */
#include <string.h>

#include "../compiled.h"

#define HEAD 64                 /* records.HEAD_BYTES: the frame bytes rss_queues sees */

static inline int is_l4(uint8_t protocol)
{
    return protocol == 6 || protocol == 17 || protocol == 132;      /* TCP, UDP, SCTP */
}

/* The queue of one record (its row: record header, then the frame's first bytes). */
static inline int64_t queue_of(const uint8_t *record, int64_t have, uint8_t *padded, int l4, const uint32_t *tables,
                               const int64_t *reta, int64_t reta_size)
{
    const uint8_t *f = record + 16;
    if (have < HEAD)
        f = memcpy(padded, f, (size_t)have);
    int64_t caplen = (int64_t)record[8] | (int64_t)record[9] << 8 | (int64_t)record[10] << 16
                     | (int64_t)record[11] << 24;
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
    uint32_t hash = 0;
    int j = 0;
    for (int b = from; b < to; b++, j++)
        hash ^= tables[j * 256 + f[b]];
    for (int b = 0; with_l4 && b < 4; b++, j++)
        hash ^= tables[j * 256 + f[ports_at + b]];
    return reta[hash & (uint32_t)(reta_size - 1)];      /* reta_size: a power of 2 */
}

void rss_queues(const struct rss *r, const uint8_t *records, int64_t stride, int64_t width, int64_t n, int64_t *out)
{
    int64_t have = width - 16 < HEAD ? width - 16 : HEAD;
    uint8_t padded[HEAD] = {0};                 /* a narrow row's head, zero past it (as rss.py's heads) */
    for (int64_t i = 0; i < n; i++)
        out[i] = queue_of(records + i * stride, have, padded, r->l4, r->tables, r->reta, r->reta_size);
}
