/*
 * The compiled twin of l3fwd/simple.py: DPDK's per-packet path (l3fwd_lpm_simple_forward,
 * l3fwd_em_simple_forward, the per-packet FIB path, acl_process_pkts with
 * send_packets_single), each function named as the Python one it twins. simple.py is
 * the definition (and runs with L3FWD_SIM_KERNELS=numpy); the tests prove this file
 * gives the same bytes, verdicts and trace notes. Each function returns the packet's
 * drop reason (FORWARDED: sent) and sets *dest; the steps multi.c takes too are in
 * path.h.
 */
#include "path.h"

/* ptype.em_ptype's reads, by EM class: the IHL at 14, then the protocol at 23 (IPv4
 * without options) or the next header at 20; a shorter frame is EM_TRUNCATED */
static const int64_t EM_PARSE_NEED[5] = {14, 24, 15, 21, 21};

/* rfc1812.is_valid_ipv4_pkt: the simple path's check before the lookup (pkt_len is the
 * whole frame's, checked first so that the header bytes read are inside it) */
static inline int is_valid_ipv4_pkt(const uint8_t *frame, int64_t pkt_len)
{
    return pkt_len >= 20 && frame[14] >> 4 == 4 && (frame[14] & 0x0F) >= 5 && (frame[16] << 8 | frame[17]) >= 20;
}

/* simple._send: a miss goes back to the input port, so does a port outside the portmask
 * (l3fwd's re-check), then --ttl; ++cksum for IPv4 and the MAC rewrite */
static inline int simple_send(uint8_t *frame, int64_t next_hop, int64_t portid, int ipv4, const struct routes *r,
                              int64_t *dest)
{
    *dest = next_hop >= 0 && next_hop < 32 && (r->enabled >> next_hop & 1) ? next_hop : portid;
    if (ipv4)
        update_ttl_checksum(frame);
    rewrite(frame, r->eth_header, *dest);
    return FORWARDED;
}

/* simple.lpm_simple_forward: is_valid_ipv4_pkt before the lookup, non-IP freed (D1) */
static inline int lpm_simple_forward(uint8_t *frame, int64_t pkt_len, int64_t portid, const struct routes *r,
                                     struct verdicts *v, int64_t i, int64_t *dest)
{
    if (pkt_len < MIN_ETHER)
        return TRUNCATED;
    int kind = lpm_ptype(frame);
    if (kind == UNKNOWN)
        return UNKNOWN_PTYPE;
    if (kind == IPV4 && !is_valid_ipv4_pkt(frame, pkt_len))
        return RFC1812_INVALID;
    if (pkt_len < LPM_NEED[kind])
        return TRUNCATED;
    int family = kind == IPV6;
    int64_t rule = -1;
    int64_t next_hop = lpm_lookup(&r->lpm[family], frame + (family ? 38 : 30), -1, v->table ? &rule : NULL);
    note(v, i, r->table_code[family], rule, next_hop);
    return simple_send(frame, next_hop, portid, kind == IPV4, r, dest);
}

/* simple.em_simple_forward: only IPv4/IPv6 TCP/UDP are looked up, the rest is freed
 * (D1-D4); an RFC 1812-invalid packet is dropped (D9) */
static inline int em_simple_forward(uint8_t *frame, int64_t pkt_len, int64_t portid, const struct routes *r,
                                    struct verdicts *v, int64_t i, int64_t *dest)
{
    if (pkt_len < MIN_ETHER)
        return TRUNCATED;
    int tcp_udp, kind = em_ptype(frame, &tcp_udp);
    if (pkt_len < EM_PARSE_NEED[kind])
        return TRUNCATED;
    if (!tcp_udp)                           /* tcp_udp: EM_IPV4 or EM_IPV6 */
        return kind == EM_UNKNOWN ? UNKNOWN_PTYPE : NOT_TCP_UDP;
    int family = kind == EM_IPV6;
    if (!family && !is_valid_ipv4_pkt(frame, pkt_len))
        return RFC1812_INVALID;
    if (pkt_len < EM_NEED[family ? IPV6 : IPV4][1])      /* the 5-tuple: MIN_TUPLE_IPV4 / MIN_TUPLE_IPV6 */
        return TRUNCATED;
    uint64_t key[5];
    int64_t rule = -1, next_hop;
    if (family) {
        em_key(frame, 6, key);
        next_hop = em_lookup(&r->em[1], key, 5, -1, v->table ? &rule : NULL);
    } else {
        em_key(frame, 4, key);
        next_hop = em_lookup(&r->em[0], key, 2, -1, v->table ? &rule : NULL);
    }
    note(v, i, r->table_code[family], rule, next_hop);
    return simple_send(frame, next_hop, portid, !family, r, dest);
}

/* simple.fib_forward: every packet without the IPv4 type is looked up as IPv6 (D10), a
 * miss (no default route) goes back to the input port, no portmask re-check, then the
 * MAC rewrite and rfc1812_process for IPv4 */
static inline int fib_forward(uint8_t *frame, int64_t pkt_len, int64_t portid, const struct routes *r,
                              struct verdicts *v, int64_t i, int64_t *dest)
{
    if (pkt_len < MIN_ETHER)
        return TRUNCATED;
    int kind = lpm_ptype(frame), family = kind != IPV4;
    if (pkt_len < FIB_NEED[kind])
        return TRUNCATED;
    int64_t rule = -1;
    int64_t next_hop = lpm_lookup(&r->lpm[family], frame + (family ? 38 : 30), -1, v->table ? &rule : NULL);
    note(v, i, r->table_code[family], rule, next_hop);
    *dest = next_hop >= 0 ? next_hop : portid;
    rewrite(frame, r->eth_header, *dest);
    return !family && rfc1812_process(frame) ? RFC1812_INVALID : FORWARDED;
}

/* simple.acl_forward: the classification's verdict, then send_packets_single:
 * rfc1812_process for IPv4, and the MAC rewrite of a packet it keeps */
static inline int acl_forward(uint8_t *frame, int64_t pkt_len, const struct routes *r, struct verdicts *v, int64_t i,
                              int64_t *dest)
{
    int ipv4, reason = classify_acl(frame, pkt_len, r, v, i, dest, &ipv4);
    if (reason != FORWARDED)
        return reason;
    if (ipv4 && rfc1812_process(frame))
        return RFC1812_INVALID;
    rewrite(frame, r->eth_header, *dest);
    return FORWARDED;
}

/* simple.forward: packet after packet (the lookup's branch is taken alike for all) */
void forward_simple(const struct packets *p, const struct routes *r, struct verdicts *v)
{
    for (int64_t i = 0; i < p->n; i++) {
        uint8_t *frame = p->rows + i * p->stride + 16;
        int64_t pkt_len = p->caplen[i], portid = p->in_port[i], dest = -1;
        int reason;
        switch (r->lookup) {
        case LOOKUP_EM:
            reason = em_simple_forward(frame, pkt_len, portid, r, v, i, &dest);
            break;
        case LOOKUP_FIB:
            reason = fib_forward(frame, pkt_len, portid, r, v, i, &dest);
            break;
        case LOOKUP_ACL:
            reason = acl_forward(frame, pkt_len, r, v, i, &dest);
            break;
        default:
            reason = lpm_simple_forward(frame, pkt_len, portid, r, v, i, &dest);
        }
        v->dest[i] = reason == FORWARDED ? dest : -1;
        v->reason[i] = (uint8_t)reason;
    }
}

void lcore_forward_simple(const struct packets *p, const void *app, struct verdicts *v)
{
    forward_simple(p, app, v);
}
