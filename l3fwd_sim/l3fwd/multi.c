/*
 * The compiled twin of l3fwd/multi.py: DPDK's multi-buffer path over a super-burst, one
 * packet at a time, each step a function named as the numpy stage it twins. The numpy
 * stages are the definition (and run with L3FWD_SIM_KERNELS=numpy); the tests prove
 * this file gives the same bytes, verdicts and trace notes.
 *
 * Per packet: the packet type and the bytes the path reads (ptype.py), the lookup in
 * the run's table (miss: back out of the input port), the MAC rewrite of a packet not
 * dropped (dataplane/ports.py), then rfc1812_process for IPv4 (rfc1812.py); the steps
 * simple.c takes too are in path.h.
 */
#include "path.h"

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

void lcore_forward_multi(const struct packets *p, const void *app, struct verdicts *v)
{
    forward_multi(p, app, v);
}
