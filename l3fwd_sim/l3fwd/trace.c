/*
 * The compiled twin of l3fwd/trace.py's key_block: each traced packet's lookup key as a
 * JSON string, spelled as l3fwd/keys.py's key_text spells it, read at the offsets its
 * table reads (keys.py: DESTINATION_AT, FIVE_TUPLE_AT), or `null` without a lookup.
 */
#include <string.h>

#include "twins.h"

/* A port, an octet or a protocol number (below 65536) in decimal. */
static uint8_t *put_decimal(uint8_t *out, unsigned value)
{
    int digits = 1 + (value >= 10) + (value >= 100) + (value >= 1000) + (value >= 10000);
    for (int at = digits - 1; at >= 0; at--) {
        out[at] = (uint8_t)('0' + value % 10);
        value /= 10;
    }
    return out + digits;
}

static uint8_t *put_ipv4(uint8_t *out, const uint8_t *address)
{
    for (int i = 0; i < 4; i++) {
        out = put_decimal(out, address[i]);
        if (i < 3)
            *out++ = '.';
    }
    return out;
}

/* As Python's ipaddress.IPv6Address writes it (_compress_hextets): lowercase hextets
 * without leading zeros, the first longest run of two or more zero hextets as "::".
 * (Python 3.11's; later releases write an IPv4-mapped address's last 32 bits dotted,
 * CPython PR 135080: the twin test, against the running Python, would say so.) */
static uint8_t *put_ipv6(uint8_t *out, const uint8_t *address)
{
    static const char HEX[] = "0123456789abcdef";
    unsigned hextet[8];
    int best = -1, best_len = 1, run = 0;
    for (int i = 0; i < 8; i++) {
        hextet[i] = (unsigned)address[2 * i] << 8 | address[2 * i + 1];
        run = hextet[i] ? 0 : run + 1;
        if (run > best_len) {
            best_len = run;
            best = i - run + 1;
        }
    }
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            *out++ = ':';
            *out++ = ':';
            i += best_len - 1;
            continue;
        }
        if (i > 0 && i != best + best_len)
            *out++ = ':';
        int digits = (35 - __builtin_clz(hextet[i] | 1)) >> 2;     /* hex digits of its bit length */
        for (int d = digits - 1; d >= 0; d--)
            *out++ = (uint8_t)HEX[hextet[i] >> (4 * d) & 0xF];
    }
    return out;
}

static uint8_t *put_endpoint(uint8_t *out, const uint8_t *address, const uint8_t *port, int ipv6)
{
    if (ipv6) {
        *out++ = '[';
        out = put_ipv6(out, address);
        *out++ = ']';
    } else {
        out = put_ipv4(out, address);
    }
    *out++ = ':';
    return put_decimal(out, (unsigned)port[0] << 8 | port[1]);
}

/* keys.key_text of a 5-tuple: "udp 198.18.0.1:9 > 198.18.0.0:9", "tcp [::1]:3 > [::2]:4", "1 ..." */
static uint8_t *put_five_tuple(uint8_t *out, const uint8_t *frame, int ipv6)
{
    int proto_at = ipv6 ? 20 : 23, source_at = ipv6 ? 22 : 26, size = ipv6 ? 16 : 4;
    int ports_at = source_at + 2 * size;
    uint8_t proto = frame[proto_at];
    if (proto == 6 || proto == 17) {
        memcpy(out, proto == 6 ? "tcp" : "udp", 3);
        out += 3;
    } else {
        out = put_decimal(out, proto);
    }
    *out++ = ' ';
    out = put_endpoint(out, frame + source_at, frame + ports_at, ipv6);
    memcpy(out, " > ", 3);
    out += 3;
    return put_endpoint(out, frame + source_at + size, frame + ports_at + 2, ipv6);
}

const int64_t key_text_bytes[5] = {4, 17, 41, 51, 103};

int64_t key_texts(const uint8_t *table, const uint8_t *heads, int64_t stride, int64_t n, const uint8_t *kinds,
                  uint8_t *out, int64_t out_stride)
{
    int64_t longest = 0;
    memset(out, 0, (size_t)(n * out_stride));      /* the padding: one pass, not one call per row */
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *frame = heads + i * stride;
        uint8_t *row = out + i * out_stride, *at = row;
        enum key_kind kind = kinds[table[i]];
        if (kind == KEY_NONE) {
            memcpy(at, "null", 4);
            at += 4;
        } else {
            *at++ = '"';
            if (kind == KEY_DESTINATION4)
                at = put_ipv4(at, frame + 30);
            else if (kind == KEY_DESTINATION6)
                at = put_ipv6(at, frame + 38);
            else
                at = put_five_tuple(at, frame, kind == KEY_FIVE_TUPLE6);
            *at++ = '"';
        }
        longest = at - row > longest ? at - row : longest;
    }
    return longest;
}
