/*
 * What both l3fwd paths' twins do to one packet (multi.c twins multi.py, simple.c
 * twins simple.py): the packet type and the bytes a path reads (ptype.py), the lookup
 * keys (em.py, acl.py), the ACL classification (acl.classify_burst), the trace notes,
 * the MAC rewrite (dataplane/ports.py) and the IPv4 header update (rfc1812.py).
 */
#ifndef L3FWD_SIM_L3FWD_PATH_H
#define L3FWD_SIM_L3FWD_PATH_H

#include <string.h>

#include "twins.h"
#include "../tables/hash.h"
#include "../tables/lpm.h"

/* ptype.py: lpm_parse_ptype's classes, and em_parse_ptype's */
enum { UNKNOWN, IPV4, IPV6 };
enum { EM_UNKNOWN, EM_IPV4, EM_IPV4_EXT, EM_IPV6, EM_IPV6_EXT };

/* ptype.MIN_ETHER, LPM_NEED, FIB_NEED, ACL_NEED and EM_NEED: the frame bytes each path reads */
#define MIN_ETHER 14
static const int64_t LPM_NEED[3] = {14, 34, 54};
static const int64_t FIB_NEED[3] = {54, 34, 54};
static const int64_t ACL_NEED[3] = {14, 38, 58};
static const int64_t EM_NEED[3][2] = {{14, 14}, {34, 38}, {21, 58}};

/* ptype.lpm_ptype_bulk: the EtherType alone */
static inline int lpm_ptype(const uint8_t *frame)
{
    int ether_type = frame[12] << 8 | frame[13];
    return ether_type == 0x0800 ? IPV4 : ether_type == 0x86DD ? IPV6 : UNKNOWN;
}

static inline int is_tcp_udp(uint8_t protocol)
{
    return protocol == 6 || protocol == 17;
}

/* ptype.em_ptype_bulk: the class, and whether it is TCP/UDP without options or
 * extension headers (read from the zero-padded head, as the numpy twin does) */
static inline int em_ptype(const uint8_t *frame, int *tcp_udp)
{
    int kind = lpm_ptype(frame);
    if (kind == IPV4) {
        int no_options = (frame[14] & 0x0F) == 5;
        *tcp_udp = no_options && is_tcp_udp(frame[23]);
        return no_options ? EM_IPV4 : EM_IPV4_EXT;
    }
    if (kind == IPV6) {
        *tcp_udp = is_tcp_udp(frame[20]);
        return *tcp_udp ? EM_IPV6 : EM_IPV6_EXT;
    }
    *tcp_udp = 0;
    return EM_UNKNOWN;
}

static inline uint64_t be64(const uint8_t *b)
{
    uint64_t v;
    memcpy(&v, b, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static inline uint64_t be32(const uint8_t *b)
{
    uint32_t v;
    memcpy(&v, b, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    v = __builtin_bswap32(v);
#endif
    return v;
}

/* em.keys_of: the masked 5-tuple as 64-bit words; returns the word count */
static inline int em_key(const uint8_t *frame, int family, uint64_t *key)
{
    if (family == 4) {
        key[0] = be64(frame + 26);
        key[1] = (uint64_t)frame[23] << 32 | be32(frame + 34);
        return 2;
    }
    for (int w = 0; w < 4; w++)
        key[w] = be64(frame + 22 + 8 * w);
    key[4] = (uint64_t)frame[20] << 32 | be32(frame + 54);
    return 5;
}

/* acl.acl_keys: protocol, addresses as 32-bit words, "ports", at fixed offsets */
static inline void acl_key(const uint8_t *frame, int family, int64_t *key)
{
    int words = family == 4 ? 1 : 4, src = family == 4 ? 26 : 22, dst = family == 4 ? 30 : 38;
    int ports = family == 4 ? 34 : 54;
    key[0] = frame[family == 4 ? 23 : 20];
    for (int w = 0; w < words; w++) {
        key[1 + w] = (int64_t)be32(frame + src + 4 * w);
        key[1 + words + w] = (int64_t)be32(frame + dst + 4 * w);
    }
    key[1 + 2 * words] = frame[ports] << 8 | frame[ports + 1];
    key[2 + 2 * words] = frame[ports + 2] << 8 | frame[ports + 3];
}

/* trace.Decisions.lookup: what the lookup answered, when tracing (`rule` is only set
 * then) */
static inline void note(struct verdicts *v, int64_t i, uint8_t table, int64_t rule, int64_t next_hop)
{
    if (v->table) {
        v->table[i] = table;
        v->rule[i] = rule;
        v->next_hop[i] = rule >= 0 ? next_hop : -1;
    }
}

/* acl.classify_burst, for one packet (rte_acl classifies each packet alone): the first
 * matching line routes or denies; a miss and anything not IP are dropped. Returns the
 * reason, sets *dest; *ipv4 when rfc1812_process applies. */
static inline int classify_acl(const uint8_t *frame, int64_t caplen, const struct routes *r,
                               struct verdicts *v, int64_t i, int64_t *dest, int *ipv4)
{
    int kind = lpm_ptype(frame);
    *ipv4 = 0;
    if (caplen < ACL_NEED[kind])
        return TRUNCATED;
    if (kind == UNKNOWN)
        return UNKNOWN_PTYPE;
    int family = kind == IPV4 ? 0 : 1;
    int64_t key[11];
    acl_key(frame, family ? 6 : 4, key);
    int64_t rule = acl_classify(&r->acl[family], key);
    int64_t action = rule >= 0 ? r->acl_action[family][rule] : -1;
    note(v, i, r->table_code[family], rule >= 0 ? r->acl_line[family][rule] : -1, action >= 0 ? action : -1);
    if (rule < 0)
        return ACL_MISS;
    if (action == ACL_DENY_ACTION)
        return ACL_DENY;
    *dest = action;
    *ipv4 = kind == IPV4;
    return FORWARDED;
}

/* ports.PortConfig.rewrite_bulk */
static inline void rewrite(uint8_t *frame, const uint8_t *eth_header, int64_t port)
{
    memcpy(frame, eth_header + 12 * port, 12);
}

/* rfc1812.update_ttl_checksum: TTL - 1 and the checksum incremented as a little-endian
 * uint16 */
static inline void update_ttl_checksum(uint8_t *frame)
{
    frame[22]--;
    uint16_t checksum = (uint16_t)(frame[24] | frame[25] << 8) + 1;
    frame[24] = (uint8_t)checksum;
    frame[25] = (uint8_t)(checksum >> 8);
}

/* rfc1812.rfc1812_process: the update, then true when the header is to be dropped */
static inline int rfc1812_process(uint8_t *frame)
{
    update_ttl_checksum(frame);
    return (uint8_t)(frame[14] - 0x45) > 10 || (frame[16] << 8 | frame[17]) < 20;
}

#endif
