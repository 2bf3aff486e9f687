/*
 * The tables as the compiled twins read them (lpm.h, hash.h and acl.c walk them): views
 * of the arrays the Python tables hold, never a copy. tables/twins.py binds them.
 */
#ifndef L3FWD_SIM_TABLES_TWINS_H
#define L3FWD_SIM_TABLES_TWINS_H

#include <stdint.h>

/* tables/lpm.py's StrideTable (rte_lpm DIR-24-8, rte_lpm6), and rte_fib's default. */
struct lpm_table {
    const uint32_t *tbl24, *tbl24_rule, *tbl8, *tbl8_rule;
    uint32_t payload_mask;
    int key_bytes;                  /* 4 or 16 */
    int64_t default_hop;            /* rte_fib's /0 route: the answer of a miss; -1: none */
    int64_t default_rule;
};

/* tables/hash.py's ExactMatchTable: open addressing, linear probing. */
struct em_table {
    const uint64_t *keys;           /* slots x words */
    const int64_t *ports, *rules;   /* port -1: empty slot */
    uint64_t mask;
    int words;
};

/* tables/acl.py's AclTable, flattened (AclTable._flatten). */
struct acl_table {
    int64_t rules, chunk_size, chunks;
    const int64_t *chunk_tables, *table_field, *starts, *starts_at, *index_at, *shift, *words_at, *rows_at;
    const int32_t *index;
    const uint64_t *words, *summary;
    int fields;
};

int64_t acl_classify(const struct acl_table *t, const int64_t *key);
void acl_classify_columns(const struct acl_table *t, const int64_t *columns, int64_t n, int64_t *out);

#endif
