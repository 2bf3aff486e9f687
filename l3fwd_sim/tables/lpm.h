/*
 * The compiled twin of tables/lpm.py's StrideTable.lookup_bulk (rte_lpm_lookupx4,
 * rte_lpm6_lookup, rte_fib*_lookup_bulk), one key at a time over the very tbl24/tbl8
 * arrays (and their rule ids) the table holds.
 */
#ifndef L3FWD_SIM_TABLES_LPM_H
#define L3FWD_SIM_TABLES_LPM_H

#include "twins.h"

#define LPM_VALID 0x80000000u
#define LPM_EXT_VALID 0xC0000000u       /* an entry >= this points to a tbl8 group */

/* The next hop of the longest prefix matching `key` (key_bytes bytes in network order),
 * and its rule id in *rule unless rule is NULL (the rule arrays are then not read: on
 * traffic spread over the address space each is a cache miss of its own); on a miss
 * rte_fib's default route if there is one, else `miss` with rule -1. */
static inline int64_t lpm_lookup(const struct lpm_table *t, const uint8_t *key, int64_t miss, int64_t *rule)
{
    uint32_t cell = (uint32_t)key[0] << 16 | (uint32_t)key[1] << 8 | key[2];
    uint32_t e = t->tbl24[cell];
    const uint32_t *rules = t->tbl24_rule;
    for (int level = 3; e >= LPM_EXT_VALID && level < t->key_bytes; level++) {
        cell = (e & t->payload_mask) << 8 | key[level];
        e = t->tbl8[cell];
        rules = t->tbl8_rule;
    }
    if (e < LPM_VALID) {
        if (t->default_hop >= 0) {
            if (rule)
                *rule = t->default_rule;
            return t->default_hop;
        }
        if (rule)
            *rule = -1;
        return miss;
    }
    if (rule)
        *rule = rules[cell];
    return e & t->payload_mask;
}

#endif
