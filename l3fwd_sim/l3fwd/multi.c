/*
 * The compiled twin of l3fwd/multi.py: DPDK's multi-buffer path over a super-burst, one
 * packet at a time, each step a function named as the numpy stage it twins. The numpy
 * stages are the definition (and run with L3FWD_SIM_KERNELS=numpy); the tests prove
 * this file gives the same bytes, verdicts and trace notes.
 *
 * Per packet: the packet type and the bytes the path reads (ptype.py), the lookup in
 * the run's table (miss: back out of the input port), the MAC rewrite of a packet not
 * dropped (dataplane/ports.py), then rfc1812_process for IPv4 (rfc1812.py).
 */
#include <string.h>

#include "../compiled.h"
#include "../tables/hash.h"
#include "../tables/lpm.h"

/* ptype.py: lpm_parse_ptype's classes, and em_parse_ptype's */
enum { UNKNOWN, IPV4, IPV6 };
enum { EM_UNKNOWN, EM_IPV4, EM_IPV4_EXT, EM_IPV6, EM_IPV6_EXT };

/* ptype.LPM_NEED, FIB_NEED, ACL_NEED and EM_NEED: the frame bytes each path reads */
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

/* multi.classify_lpm (and classify_fib): returns the reason, sets *dest; *ipv4 when
 * rfc1812_process applies */
static inline int classify_lpm(const uint8_t *frame, int64_t caplen, int64_t in_port, const struct routes *r,
                               struct verdicts *v, int64_t i, int64_t *dest, int *ipv4, int fib)
{
    int kind = lpm_ptype(frame);
    *ipv4 = 0;
    if (caplen < (fib ? FIB_NEED : LPM_NEED)[kind])
        return TRUNCATED;
    if (kind == IPV4 || kind == IPV6 || fib) {   /* FIB: every packet without the IPv4 type as IPv6 (D10) */
        int family = kind == IPV4 ? 0 : 1;
        int64_t rule = -1;
        *dest = lpm_lookup(&r->lpm[family], frame + (family ? 38 : 30), in_port, v->table ? &rule : NULL);
        note(v, i, r->table_code[family], rule, *dest);
        *ipv4 = kind == IPV4;
    }
    return FORWARDED;
}

/* multi.classify_em */
static inline int classify_em(const uint8_t *frame, int64_t caplen, int64_t in_port, const struct routes *r,
                              struct verdicts *v, int64_t i, int64_t *dest, int *ipv4)
{
    int tcp_udp, kind = em_ptype(frame, &tcp_udp);
    static const int LPM_CLASS[5] = {UNKNOWN, IPV4, IPV4, IPV6, IPV6};
    *ipv4 = 0;
    if (caplen < EM_NEED[LPM_CLASS[kind]][tcp_udp])
        return TRUNCATED;
    if (tcp_udp && (kind == EM_IPV4 || kind == EM_IPV6)) {
        int family = kind == EM_IPV4 ? 0 : 1;
        uint64_t key[5];
        int64_t rule = -1;
        if (family) {
            em_key(frame, 6, key);
            *dest = em_lookup(&r->em[1], key, 5, in_port, v->table ? &rule : NULL);
        } else {
            em_key(frame, 4, key);
            *dest = em_lookup(&r->em[0], key, 2, in_port, v->table ? &rule : NULL);
        }
        note(v, i, r->table_code[family], rule, *dest);
    }
    *ipv4 = kind == EM_IPV4 || kind == EM_IPV4_EXT;
    return FORWARDED;
}

/* multi.classify_acl (acl.classify_burst): the first matching line routes or denies;
 * a miss and anything not IP are dropped */
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

/* rfc1812.rfc1812_process: TTL - 1 and the checksum incremented as a little-endian
 * uint16; true when the header is to be dropped */
static inline int rfc1812_process(uint8_t *frame)
{
    frame[22]--;
    uint16_t checksum = (uint16_t)(frame[24] | frame[25] << 8) + 1;
    frame[24] = (uint8_t)checksum;
    frame[25] = (uint8_t)(checksum >> 8);
    return (uint8_t)(frame[14] - 0x45) > 10 || (frame[16] << 8 | frame[17]) < 20;
}

/* multi.forward, for one lookup: the compiler makes a loop of each */
static inline void forward_each(const struct packets *p, const struct routes *r, struct verdicts *v,
                                const enum lookup lookup)
{
    for (int64_t i = 0; i < p->n; i++) {
        uint8_t *frame = p->rows + i * p->stride + 16;
        int64_t caplen = p->caplen[i], dest = p->in_port[i];
        int ipv4, reason;
        if (lookup == LOOKUP_EM)
            reason = classify_em(frame, caplen, dest, r, v, i, &dest, &ipv4);
        else if (lookup == LOOKUP_ACL)
            reason = classify_acl(frame, caplen, r, v, i, &dest, &ipv4);
        else
            reason = classify_lpm(frame, caplen, dest, r, v, i, &dest, &ipv4, lookup == LOOKUP_FIB);
        if (reason == FORWARDED) {
            rewrite(frame, r->eth_header, dest);
            if (ipv4 && rfc1812_process(frame))
                reason = RFC1812_INVALID;
        }
        v->dest[i] = reason == FORWARDED ? dest : -1;
        v->reason[i] = (uint8_t)reason;
    }
}

/* multi.forward */
void forward_multi(const struct packets *p, const struct routes *r, struct verdicts *v)
{
    switch (r->lookup) {
    case LOOKUP_EM:
        forward_each(p, r, v, LOOKUP_EM);
        break;
    case LOOKUP_ACL:
        forward_each(p, r, v, LOOKUP_ACL);
        break;
    case LOOKUP_FIB:
        forward_each(p, r, v, LOOKUP_FIB);
        break;
    default:
        forward_each(p, r, v, LOOKUP_LPM);
    }
}
