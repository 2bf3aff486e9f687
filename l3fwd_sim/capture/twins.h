/*
 * capture's compiled twins (records.c, pcapng.c), as plain C over the arrays the Python
 * side already holds: what capture/twins.py binds (cffi reads this header as it is;
 * only integer #defines, nothing else of the preprocessor). Nothing here is
 * bounds-checked beyond what twins.py checks: the differential tests guard every function.
 */
#ifndef L3FWD_SIM_CAPTURE_TWINS_H
#define L3FWD_SIM_CAPTURE_TWINS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The twins read and write little-endian record headers with plain loads and stores. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the compiled twins need a little-endian host (the numpy stages run elsewhere)"
#endif

#define ROW_BYTES 80                /* records.RECORD_ROW: a record header and HEAD_BYTES of frame */

/* ------------------------------------------------------------ records.c */

/* A super-burst's packets as capture/batch.py's PacketBatch holds them: row i is the
 * 16-byte pcap record header followed by the frame's first `head` bytes (zero past its
 * end); the rest of a longer frame is in its source's read buffer. */
struct packets {
    uint8_t *rows;
    int64_t stride;                 /* bytes from one row to the next */
    int64_t head;                   /* frame bytes in a row (HEAD_BYTES) */
    const int64_t *caplen;
    const int64_t *in_port;
    int64_t n;
    const uint8_t *const *blocks;   /* per source: its read buffer */
    const int64_t *const *offsets;  /* per source: where each of its frames starts there */
    const int64_t *row_units;       /* per source: its rows' time-stamp fractions, in ticks a second */
    const int64_t *source_id, *source_row;
};

int64_t scan_records(const uint8_t *buf, int64_t pos, int64_t end, int64_t limit, int big_endian,
                     int64_t max_caplen, int64_t *out, uint8_t *headers, int64_t header_stride,
                     int64_t *pos_after, int *bad);
int64_t walk_rows(const uint8_t *buf, int64_t pos, int64_t end, int64_t limit, int big_endian, int64_t max_caplen,
                  int64_t snap, int64_t *out, uint8_t *rows, int64_t row_stride, int64_t *pos_after, int *bad,
                  int64_t *frame_bytes);
int64_t scan_blocks(const uint8_t *buf, int64_t pos, int64_t end, int64_t *out);
void gather_windows(const uint8_t *buf, const int64_t *starts, const int64_t *widths, int64_t n,
                    uint8_t *out, int64_t out_stride, int64_t width);
void concat_ranges(const uint8_t *buf, const int64_t *starts, const int64_t *lengths, int64_t n, uint8_t *out);
void pack_rows(const uint8_t *rows, int64_t stride, const int64_t *widths, int64_t n, uint8_t *out);
/* How an output lays its records out (capture/writers.py): classic pcap records
 * (pcap.PcapWriter) or pcapng Enhanced Packet Blocks of interface 0
 * (pcapng_writer.PcapngWriter), time stamps in the output's ticks (records.h). */
struct record_format {
    int pcapng;
    int64_t units;                  /* the output's ticks per second: 10^9 (ns) or 10^6 (µs) */
};

int64_t port_bytes(const struct packets *p, const int64_t *dest, int64_t ports, const struct record_format *f,
                   int64_t *bytes, int64_t *packets);
void scatter_records(const struct packets *p, const int64_t *dest, int64_t ports, const struct record_format *f,
                     const int64_t *bytes, int64_t *start, uint8_t *out);
#define MAX_TX_QUEUES 255            /* merge_queues: a record's queue is one byte */
struct queue_file {                 /* what is left of one TX queue's records: data[pos, size) */
    const uint8_t *data;
    int64_t size, pos;
    uint64_t carry;                 /* the latest time stamp taken from it so far */
    uint64_t floor;                 /* the earliest time stamp its lcore may still send */
    int open;                       /* its lcore may still send: empty, the merge waits for it */
};
int64_t merge_queues(struct queue_file *q, int64_t k, int pcapng, uint8_t *out, int64_t capacity,
                     uint8_t *source, int64_t room, int64_t *used, int64_t *bad);
int64_t comment_blocks(const uint8_t *data, int64_t size, const uint8_t *text, const int64_t *starts,
                       const int64_t *ends, int64_t n, uint8_t *out, int64_t capacity, int64_t *pos, int64_t *k);

/* ------------------------------------------------------------ pcapng.c */

struct pcapng_interfaces {          /* capture/pcapng.py's Interfaces: one column per field, by interface */
    const int64_t *section;         /* the current section's interface ids -> their index in the columns */
    int64_t section_size;
    const int64_t *snap;            /* libpcap_snaplen of the IDB's snaplen */
    const uint64_t *units;          /* time-stamp ticks per second (if_tsresol) */
    const int64_t *scale;           /* nanoseconds per tick where that is a whole number, else 0 */
    const int64_t *tsoffset;        /* seconds added (if_tsoffset) */
};

enum walk_stop {                    /* why walk_blocks stopped, at `pos` */
    WALK_LIMIT,                     /* the next block is a packet, and `limit` were taken */
    WALK_MORE,                      /* the next block is not wholly buffered */
    WALK_PYTHON,                    /* the next block is for the Python walk */
};

struct pcapng_walk {                /* PcapngReader._walk over buf[pos:end] */
    const uint8_t *buf;
    int64_t pos, end, limit;
    int big_endian;                 /* the section's byte order */
    int libpcap;                    /* Reading.LIBPCAP: a packet captured beyond its interface's snaplen is a read
                                       error, for the Python walk (else it is cut to the snaplen) */
    struct pcapng_interfaces interfaces;
    int64_t *offsets, *owner;       /* out: per packet, where its frame starts in buf, its interface */
    uint8_t *rows;                  /* out: per packet, its row */
    int64_t row_stride;
    int64_t n, frame_bytes;         /* out: packets taken, and their frames' bytes */
    int64_t skipped_from;           /* out: where the blocks skipped since the last packet start; -1: none */
    enum walk_stop stop;
};

void walk_blocks(struct pcapng_walk *w);    /* pos: after what was walked */

#endif
