/*
 * The compiled twin of tables/acl.py's AclTable.classify (rte_acl's first match), one
 * key at a time over the tables the numpy walk uses: per chunk of rules, each field's
 * interval (from its index, then a binary search between two index points where the
 * index is coarser than the field), the AND of the fields' summary words, then only
 * the words they point at.
 */
#include "twins.h"

static inline int lowest_bit(uint64_t x)
{
    return __builtin_ctzll(x);
}

/* The interval of table t that holds `key`. */
static inline int64_t interval(const struct acl_table *a, int64_t t, int64_t key)
{
    if (a->shift[t] < 0)                        /* the index holds every key's interval */
        return a->index[a->index_at[t] + key];
    int64_t block = a->index_at[t] + (key >> a->shift[t]);
    int64_t i = a->index[block], left = a->index[block + 1] - i + 1;
    const int64_t *starts = a->starts + a->starts_at[t];
    while (left > 1) {                          /* the last start <= key */
        int64_t half = left >> 1;
        i += starts[i + half] <= key ? half : 0;
        left -= half;
    }
    return i;
}

/* The index of the first rule whose every field matches `key` (one value per field),
 * or -1. */
int64_t acl_classify(const struct acl_table *a, const int64_t *key)
{
    const uint64_t full = ~(uint64_t)0;
    int64_t at[64];
    for (int64_t c = 0; c < a->chunks; c++) {
        int64_t t0 = a->chunk_tables[c], t1 = a->chunk_tables[c + 1];
        int64_t left = a->rules - c * a->chunk_size;
        int64_t valid_words = (left + 63) / 64 < a->chunk_size / 64 ? (left + 63) / 64 : a->chunk_size / 64;
        uint64_t summary = valid_words == 64 ? full : ((uint64_t)1 << valid_words) - 1;
        for (int64_t t = t0; t < t1 && summary; t++) {
            int64_t i = interval(a, t, key[a->table_field[t]]);
            at[t - t0] = a->words_at[t] + i * valid_words;
            summary &= a->summary[a->rows_at[t] + i];
        }
        while (summary) {
            int64_t w = lowest_bit(summary);
            uint64_t bits = full;
            for (int64_t t = t0; t < t1 && bits; t++)
                bits &= a->words[at[t - t0] + w];
            if (t0 == t1) {                     /* no field restricts: every rule of the chunk matches */
                int64_t rest = left - w * 64;
                if (rest < 64)
                    bits = ((uint64_t)1 << rest) - 1;
            }
            if (bits)
                return c * a->chunk_size + w * 64 + lowest_bit(bits);
            summary &= summary - 1;
        }
    }
    return -1;
}

/* AclTable.classify: columns[f * n + k] is field f of key k. */
void acl_classify_columns(const struct acl_table *a, const int64_t *columns, int64_t n, int64_t *out)
{
    int64_t key[64];
    for (int64_t k = 0; k < n; k++) {
        for (int f = 0; f < a->fields; f++)
            key[f] = columns[f * n + k];
        out[k] = acl_classify(a, key);
    }
}
