/*
 * The compiled twin of tables/hash.py's ExactMatchTable.lookup_bulk: the same hash,
 * the same slots, linear probing to the key or an empty slot.
 */
#ifndef L3FWD_SIM_TABLES_HASH_H
#define L3FWD_SIM_TABLES_HASH_H

#include "twins.h"

static const uint64_t EM_MIX[5] = {0x9E3779B97F4A7C15u, 0xC2B2AE3D27D4EB4Fu, 0x165667B19E3779F9u,
                                   0xD6E8FEB86659FD93u, 0xFF51AFD7ED558CCDu};

/* ExactMatchTable._hash of one key. */
static inline uint64_t em_hash(const uint64_t *key, int words)
{
    uint64_t h = 0;
    for (int i = 0; i < words; i++) {
        h ^= key[i] * EM_MIX[i];
        h ^= h >> 29;
        h *= EM_MIX[(i + 1) % 5];
    }
    return h ^ h >> 32;
}

/* The port stored for `key` (`words` words: the table's, given as a constant where the
 * caller can, so that the loops unroll) and its rule id in *rule unless rule is NULL;
 * `miss` and rule -1 if absent. */
static inline int64_t em_lookup(const struct em_table *t, const uint64_t *key, const int words, int64_t miss,
                                int64_t *rule)
{
    for (uint64_t slot = em_hash(key, words) & t->mask;; slot = (slot + 1) & t->mask) {
        if (t->ports[slot] < 0) {
            if (rule)
                *rule = -1;
            return miss;
        }
        const uint64_t *stored = t->keys + slot * (uint64_t)words;
        int same = 1;
        for (int w = 0; w < words; w++)
            same &= stored[w] == key[w];
        if (same) {
            if (rule)
                *rule = t->rules[slot];
            return t->ports[slot];
        }
    }
}

#endif
