/*
 * l3fwd's compiled twins (multi.c, simple.c, trace.c) over the run's tables as the
 * tables hold them; l3fwd/twins.py binds them and hands lcore.c a path.
 */
#ifndef L3FWD_SIM_L3FWD_TWINS_H
#define L3FWD_SIM_L3FWD_TWINS_H

#include "../dataplane/twins.h"
#include "../tables/twins.h"

/* ------------------------------------------------------------ multi.c, simple.c */

enum lookup { LOOKUP_LPM, LOOKUP_FIB, LOOKUP_EM, LOOKUP_ACL };

/* Drop reasons, as l3fwd/pipelines.py's DROP_REASONS names and numbers them (twins.py checks). */
enum reason { FORWARDED, RFC1812_INVALID, UNKNOWN_PTYPE, NOT_TCP_UDP, TRUNCATED, ACL_DENY, ACL_MISS };

struct routes {                    /* one table per family, of the run's --lookup */
    enum lookup lookup;
    struct lpm_table lpm[2];
    struct em_table em[2];
    struct acl_table acl[2];
    const int64_t *acl_action[2];  /* per ACL rule: its port, or ACL_DENY_ACTION */
    const int64_t *acl_line[2];
    const uint8_t *eth_header;     /* per TX port: destination and source MAC (12 bytes) */
    uint8_t table_code[2];         /* the trace's code of the family's table */
    uint32_t enabled;              /* the portmask: the simple path re-checks a next hop against it */
};
enum { ACL_DENY_ACTION = -2 };

void forward_multi(const struct packets *p, const struct routes *r, struct verdicts *v);
void forward_simple(const struct packets *p, const struct routes *r, struct verdicts *v);
/* The same as lcore.c calls them (forward_fn): `app` is the struct routes */
void lcore_forward_multi(const struct packets *p, const void *app, struct verdicts *v);
void lcore_forward_simple(const struct packets *p, const void *app, struct verdicts *v);

/* ------------------------------------------------------------ trace.c */

enum key_kind { KEY_NONE, KEY_DESTINATION4, KEY_DESTINATION6, KEY_FIVE_TUPLE4, KEY_FIVE_TUPLE6 };   /* trace.py's */
/* The longest text of each kind: null, "255.255.255.255", an IPv6 address (39 characters) quoted,
 * "255 255.255.255.255:65535 > 255.255.255.255:65535", "255 [39]:65535 > [39]:65535" */
extern const int64_t key_text_bytes[5];
#define KEY_FRAME_BYTES 58          /* the frame bytes a key is read from (keys.py's KEY_BYTES) */

int64_t key_texts(const uint8_t *table, const uint8_t *heads, int64_t stride, int64_t n, const uint8_t *kinds,
                  uint8_t *out, int64_t out_stride);     /* the longest text written */

#endif
