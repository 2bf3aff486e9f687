/*
 * The compiled twin of capture/pcapng.py's block walk (PcapngReader._walk) over the
 * blocks that carry packets: Enhanced, Simple and obsolete Packet Blocks are taken,
 * each laid out as its row as records.py describes it (the record header, time stamp
 * in nanoseconds, the captured length cut to the interface's snaplen; then the frame's
 * head, zero past it), and every other block type but a Section Header or an Interface
 * Description Block is skipped. What it does not take — those two, a damaged block, a
 * time stamp a row's 32-bit seconds cannot hold — it leaves to the Python walk, which
 * parses it (or says what is wrong) and hands back.
 */
#include <string.h>

#include "records.h"

#define SHB 0x0A0D0D0Au
#define IDB 1u
#define PB 2u
#define SPB 3u
#define EPB 6u
#define MAX_BLOCK (16u << 20)            /* pcapng.MAX_BLOCK: libpcap's INITIAL_MAX_BLOCKSIZE */
#define MAX_CAPLEN 262144                /* records.MAX_CAPLEN */
#define NS 1000000000

/* Interface.ns: `ticks` of interface i as nanoseconds since the epoch, rounded down;
 * 0 when that is before 1970 or has more seconds than a row's 32 bits hold. A tick of
 * a whole number of nanoseconds (Wireshark's µs, dpdk-dumpcap's ns) is one product;
 * any other resolution takes 128-bit arithmetic. */
static inline int stamp(const struct pcapng_interfaces *f, int64_t i, uint64_t ticks, int64_t *ns)
{
    __int128 t;
    if (f->scale[i]) {
        t = (__int128)ticks * f->scale[i] + (__int128)f->tsoffset[i] * NS;
    } else {
        uint64_t units = f->units[i];
        t = ((__int128)(ticks / units) + f->tsoffset[i]) * NS + (__int128)((unsigned __int128)(ticks % units) * NS / units);
    }
    if (t < 0 || t >= (__int128)NS << 32)
        return 0;
    *ns = (int64_t)t;
    return 1;
}

/* The packet of the block at `b` (`length` bytes, wholly buffered): where its frame is,
 * its interface, captured (as stored) and wire length, time stamp. 0: the Python walk
 * takes the block (it is damaged, or its time stamp needs the Python walk). */
static inline int packet_of(const struct pcapng_walk *w, const uint8_t *b, uint32_t type, uint32_t length,
                            int64_t *frame, int64_t *iface, int64_t *cap, int64_t *wire, int64_t *ns)
{
    const struct pcapng_interfaces *f = &w->interfaces;
    int big = w->big_endian;
    if (type == SPB) {
        if (length < 16 || f->section_size < 1)
            return 0;
        *iface = f->section[0];
        *wire = field32(b + 8, big);
        *cap = *wire < f->snap[*iface] ? *wire : f->snap[*iface];
        *frame = 12;
        return 16 + *cap <= length && stamp(f, *iface, 0, ns);
    }
    if (length < 32)
        return 0;
    uint32_t ifid = type == EPB ? field32(b + 8, big) : field16(b + 8, big);
    if (ifid >= f->section_size)
        return 0;
    *iface = f->section[ifid];
    uint64_t ticks = (uint64_t)field32(b + 12, big) << 32 | field32(b + 16, big);
    *cap = field32(b + 20, big);
    *wire = field32(b + 24, big);
    *frame = 28;
    return *cap <= MAX_CAPLEN && 32 + *cap <= length && stamp(f, *iface, ticks, ns);
}

void walk_blocks(struct pcapng_walk *w)
{
    const uint8_t *buf = w->buf;
    int big = w->big_endian;
    int64_t pos = w->pos, n = 0, bytes = 0, skipped_from = -1;
    enum walk_stop stop;
    for (;;) {
        if (w->end - pos < 12) {
            stop = WALK_MORE;
            break;
        }
        uint32_t type = field32(buf + pos, big), length = field32(buf + pos + 4, big);
        if (type == SHB || type == IDB || length < 12 || length % 4 || length > MAX_BLOCK) {
            stop = WALK_PYTHON;
            break;
        }
        int packet = type == EPB || type == SPB || type == PB;
        if (packet && n >= w->limit) {
            stop = WALK_LIMIT;
            break;
        }
        if (w->end - pos < length) {
            stop = WALK_MORE;
            break;
        }
        if (field32(buf + pos + length - 4, big) != length) {
            stop = WALK_PYTHON;
            break;
        }
        if (!packet) {
            skipped_from = skipped_from < 0 ? pos : skipped_from;
            pos += length;
            continue;
        }
        int64_t frame, iface, cap, wire, ns;
        if (!packet_of(w, buf + pos, type, length, &frame, &iface, &cap, &wire, &ns)) {
            stop = WALK_PYTHON;
            break;
        }
        if (w->libpcap && cap > w->interfaces.snap[iface]) {
            stop = WALK_PYTHON;
            break;
        }
        int64_t kept = cap < w->interfaces.snap[iface] ? cap : w->interfaces.snap[iface];
        uint32_t header[4] = {(uint32_t)(ns / NS), (uint32_t)(ns % NS), (uint32_t)kept, (uint32_t)wire};
        uint8_t *row = w->rows + n * w->row_stride;
        memcpy(row, header, 16);
        memset(row + 16, 0, ROW_BYTES - 16);
        memcpy(row + 16, buf + pos + frame, (size_t)(kept < ROW_BYTES - 16 ? kept : ROW_BYTES - 16));
        w->offsets[n] = pos + frame;
        w->owner[n++] = iface;
        bytes += kept;
        skipped_from = -1;
        pos += length;
    }
    w->n = n;
    w->pos = pos;
    w->frame_bytes = bytes;
    w->skipped_from = skipped_from;
    w->stop = stop;
}
