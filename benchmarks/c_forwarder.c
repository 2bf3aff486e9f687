/*
 * The physical reference for l3fwd-sim's speed: a plain C program that reads one
 * classic pcap per RX port, does dpdk-l3fwd's per-packet work of the multi-buffer
 * path with its default LPM routes, and writes one pcap per TX port.
 *
 *   c_forwarder OUTDIR RX0.pcap [RX1.pcap ...]      (port N reads the N-th file)
 *
 * Per packet, as l3fwd-sim's `run --lookup lpm --pipeline multi` with the ports of the
 * inputs enabled (its outputs are byte-identical on well-formed traffic; the bench
 * checks the packet counts):
 *   - polling: rounds of RX_BURST (32) packets per port, ascending ports;
 *   - EtherType 0x0800: DIR-24-8 lookup of the destination in l3fwd's default table
 *     (198.18.N.0/24 -> N, installed for enabled N), RFC 1812 check after the lookup,
 *     TTL - 1 and the checksum incremented as a little-endian uint16;
 *   - EtherType 0x86DD: longest match over l3fwd's default IPv6 table (2001:200:0:N::/64);
 *   - anything else: back out of the input port (the multi path, D1);
 *   - a miss: back out of the input port; frames too short to read: dropped;
 *   - MAC rewrite: destination 02:00:00:00:00:<port>, source 02:70:63:61:70:<port>;
 *   - each TX port's records in processing order, through a 4 MB buffer, after the
 *     input's file header with snaplen 262144, as l3fwd-sim writes it.
 * Prints "<packets received> <packets sent>" on stdout.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RX_BURST 32
#define MAX_PORTS 32
#define READ_BLOCK (8u << 20)
#define WRITE_BLOCK (4u << 20)

static uint16_t tbl24[1u << 24];             /* next hop + 1; 0: miss (no route is deeper than /24) */

struct reader {
    FILE *file;
    unsigned char *buf;
    size_t start, end;
    int eof;
};

struct writer {
    FILE *file;
    unsigned char *buf;
    size_t used;
};

static void die(const char *what, const char *path)
{
    fprintf(stderr, "c_forwarder: %s: %s\n", path, what);
    exit(2);
}

static void writer_put(struct writer *w, const unsigned char *data, size_t n)
{
    if (w->used + n > WRITE_BLOCK) {
        fwrite(w->buf, 1, w->used, w->file);
        w->used = 0;
    }
    memcpy(w->buf + w->used, data, n);
    w->used += n;
}

/* The next record (16-byte header + frame) or NULL at the end of the file. */
static unsigned char *next_record(struct reader *r, uint32_t *caplen)
{
    for (;;) {
        size_t have = r->end - r->start;
        if (have >= 16) {
            uint32_t cap;
            memcpy(&cap, r->buf + r->start + 8, 4);
            if (have >= 16 + (size_t)cap) {
                unsigned char *rec = r->buf + r->start;
                r->start += 16 + cap;
                *caplen = cap;
                return rec;
            }
            if (16 + (size_t)cap > READ_BLOCK)
                die("record larger than the read buffer", "input");
        }
        if (r->eof)
            return NULL;
        memmove(r->buf, r->buf + r->start, have);
        r->start = 0;
        r->end = have;
        size_t got = fread(r->buf + r->end, 1, READ_BLOCK - r->end, r->file);
        r->end += got;
        if (got == 0)
            r->eof = 1;
    }
}

static int lookup_v6(const unsigned char *dst, int enabled_ports)
{
    static const unsigned char prefix[6] = {0x20, 0x01, 0x02, 0x00, 0x00, 0x00};
    if (memcmp(dst, prefix, 6) != 0 || dst[6] != 0 || dst[7] >= 16 || dst[7] >= enabled_ports)
        return -1;
    return dst[7];
}

/* The TX port of one frame, edited in place; -1: dropped. */
static int forward(unsigned char *frame, uint32_t len, int port, int ports)
{
    if (len < 14)
        return -1;
    uint16_t ether_type = (uint16_t)(frame[12] << 8 | frame[13]);
    int dst = port;
    if (ether_type == 0x0800) {
        if (len < 34)
            return -1;
        uint32_t addr = (uint32_t)frame[30] << 24 | frame[31] << 16 | frame[32] << 8 | frame[33];
        uint16_t hop = tbl24[addr >> 8];
        if (hop)
            dst = hop - 1;
        if ((uint8_t)(frame[14] - 0x45) > 10 || (frame[16] << 8 | frame[17]) < 20)
            return -1;                                      /* rfc1812_process, after the lookup */
        frame[22] -= 1;
        uint16_t sum = (uint16_t)(frame[24] | frame[25] << 8);
        sum += 1;
        frame[24] = (unsigned char)sum;
        frame[25] = (unsigned char)(sum >> 8);
    } else if (ether_type == 0x86DD) {
        if (len < 54)
            return -1;
        int hop = lookup_v6(frame + 38, ports);
        if (hop >= 0)
            dst = hop;
    }
    static const unsigned char src_mac[5] = {0x02, 0x70, 0x63, 0x61, 0x70};
    memset(frame, 0, 6);
    frame[0] = 0x02;
    frame[5] = (unsigned char)dst;
    memcpy(frame + 6, src_mac, 5);
    frame[11] = (unsigned char)dst;
    return dst;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc - 2 > MAX_PORTS) {
        fprintf(stderr, "usage: c_forwarder OUTDIR RX0.pcap [RX1.pcap ...] (at most %d)\n", MAX_PORTS);
        return 2;
    }
    int ports = argc - 2;
    for (uint32_t n = 0; n < 16 && n < (uint32_t)ports; n++)          /* 198.18.n.0/24 -> n */
        tbl24[(198u << 16 | 18u << 8 | n)] = (uint16_t)(n + 1);
    struct reader rx[MAX_PORTS];
    struct writer tx[MAX_PORTS];
    unsigned char header[24];
    char path[4096];
    for (int p = 0; p < ports; p++) {
        rx[p].file = fopen(argv[2 + p], "rb");
        if (!rx[p].file || fread(header, 1, 24, rx[p].file) != 24)
            die("cannot read a pcap file header", argv[2 + p]);
        uint32_t magic;
        memcpy(&magic, header, 4);
        if (magic != 0xa1b2c3d4u && magic != 0xa1b23c4du)
            die("not a little-endian classic pcap", argv[2 + p]);
        rx[p].buf = malloc(READ_BLOCK);
        rx[p].start = rx[p].end = 0;
        rx[p].eof = 0;
        snprintf(path, sizeof path, "%s/port%d.pcap", argv[1], p);
        tx[p].file = fopen(path, "wb");
        if (!tx[p].file)
            die("cannot create", path);
        tx[p].buf = malloc(WRITE_BLOCK);
        tx[p].used = 0;
        uint32_t snaplen = 262144;                          /* as l3fwd-sim writes: libpcap's MAXIMUM_SNAPLEN */
        memcpy(header + 16, &snaplen, 4);
        writer_put(&tx[p], header, 24);
    }
    unsigned long received = 0, sent = 0;
    int active = ports;
    int done[MAX_PORTS] = {0};
    while (active) {
        for (int p = 0; p < ports; p++) {
            for (int k = 0; k < RX_BURST && !done[p]; k++) {
                uint32_t caplen;
                unsigned char *rec = next_record(&rx[p], &caplen);
                if (!rec) {
                    done[p] = 1;
                    active--;
                    break;
                }
                received++;
                int dst = forward(rec + 16, caplen, p, ports);
                if (dst >= 0) {
                    writer_put(&tx[dst], rec, 16 + caplen);
                    sent++;
                }
            }
        }
    }
    for (int p = 0; p < ports; p++) {
        fwrite(tx[p].buf, 1, tx[p].used, tx[p].file);
        if (fclose(tx[p].file) != 0)
            die("cannot write", argv[1]);
        fclose(rx[p].file);
    }
    printf("%lu %lu\n", received, sent);
    return 0;
}
