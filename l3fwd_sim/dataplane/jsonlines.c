/*
 * The compiled twins of dataplane/jsonlines.py: Lines.render (the pieces of n lines
 * joined, line by line, into one buffer: texts copied, numbers written, the NUL padding
 * of a block's cells dropped) and distinct (a matrix's distinct rows in order of first
 * occurrence, by hashing).
 */
#include <string.h>

#include "twins.h"

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* Eight bytes of a cell without their NULs: stored whole, `out` moved past the text. */
static inline uint8_t *put_word(uint8_t *out, uint64_t word)
{
    memcpy(out, &word, 8);
    uint64_t nul = (word - ONES) & ~word & HIGHS;     /* its lowest set bit marks the first NUL exactly */
    if (nul == 0)
        return out + 8;
    int first = __builtin_ctzll(nul) >> 3;
    if (word >> (8 * first) == 0)
        return out + first;                         /* text, then padding (or only padding) */
    for (int b = 0; b < 8; b++) {                   /* NULs inside the text: byte by byte */
        uint8_t c = (uint8_t)(word >> (8 * b));
        *out = c;
        out += c != 0;
    }
    return out;
}

/* A NUL-padded cell without its NULs (Lines.render's translate), a word at a time; its
 * last bytes as a word padded with NULs (the cell's last eight shifted down). A word is
 * stored whole where its text starts: up to 7 bytes past the cell's width (LINE_SLACK). */
static inline uint8_t *put_cell(uint8_t *out, const uint8_t *cell, int64_t width)
{
    uint64_t word;
    int64_t k = 0;
    for (; k + 8 <= width; k += 8) {
        memcpy(&word, cell + k, 8);
        out = put_word(out, word);
    }
    if (k == width)
        return out;
    if (width >= 8) {
        memcpy(&word, cell + width - 8, 8);
        return put_word(out, word >> (8 * (8 - (width - k))));
    }
    for (; k < width; k++) {                        /* a cell shorter than a word */
        *out = cell[k];
        out += cell[k] != 0;
    }
    return out;
}

/* `len` bytes, copied as words, the last one overlapping the one before: no byte loop,
 * nothing read or written past them. */
static inline uint8_t *put_bytes(uint8_t *out, const uint8_t *text, int64_t len)
{
    if (len >= 8) {
        for (int64_t k = 0; k + 8 < len; k += 8)
            memcpy(out + k, text + k, 8);
        memcpy(out + len - 8, text + len - 8, 8);
    } else if (len >= 4) {
        uint32_t head, tail;
        memcpy(&head, text, 4);
        memcpy(&tail, text + len - 4, 4);
        memcpy(out, &head, 4);
        memcpy(out + len - 4, &tail, 4);
    } else if (len > 0) {
        out[0] = text[0];
        out[len / 2] = text[len / 2];
        out[len - 1] = text[len - 1];
    }
    return out + len;
}

static const char PAIRS[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                            "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                            "8081828384858687888990919293949596979899";

static const uint64_t POWERS[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
    10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull,
    1000000000000000ull, 10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
    10000000000000000000ull};

/* A number in decimal (jsonlines._decimal), `null` when negative: its digits counted
 * first (log10 from its bit length: 1233 / 4096 ~ log10(2)), then written two at a time
 * from the last (no copy of a variable length). */
static inline uint8_t *put_number(uint8_t *out, int64_t value)
{
    if (value < 0) {
        memcpy(out, "null", 4);
        return out + 4;
    }
    if (value < 10) {                               /* ports, queues, lcores, next hops */
        *out = (uint8_t)('0' + value);
        return out + 1;
    }
    uint64_t v = (uint64_t)value, odd = v | 1;     /* no power of ten but 1 is odd */
    int guess = ((64 - __builtin_clzll(odd)) * 1233) >> 12;
    int digits = guess + 1 - (odd < POWERS[guess]);
    uint8_t *at = out + digits;
    while (v >= 100) {
        at -= 2;
        memcpy(at, PAIRS + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(at - 2, PAIRS + 2 * v, 2);
    else
        at[-1] = (uint8_t)('0' + v);
    return out + digits;
}

/* Value i of a column, as numpy's cast to int64 gives it (a uint64 past 2^63 wraps). */
static inline int64_t int_at(const struct int_column *c, int64_t i)
{
    const uint8_t *at = c->data + i * c->stride;
    switch (c->size) {
    case 1:
        return c->is_signed ? *(const int8_t *)at : *at;
    case 2: {
        uint16_t v;
        memcpy(&v, at, 2);
        return c->is_signed ? (int16_t)v : v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, at, 4);
        return c->is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
        int64_t v;
        memcpy(&v, at, 8);
        return v;
    }
    }
}

int64_t line_bytes(const struct line_piece *pieces, int64_t count)
{
    int64_t bytes = 0;
    for (int64_t p = 0; p < count; p++)
        bytes += pieces[p].kind == PIECE_NUMBER ? LINE_NUMBER_BYTES : pieces[p].width;
    return bytes;
}

int64_t render_lines(const struct line_piece *pieces, int64_t count, int64_t n, uint8_t *out, int64_t *ends)
{
    uint8_t *at = out;
    for (int64_t i = 0; i < n; i++) {
        if (ends && i)
            ends[i - 1] = at - out - 1;             /* the line before ends in its newline */
        for (int64_t p = 0; p < count; p++) {
            const struct line_piece *piece = &pieces[p];
            switch (piece->kind) {
            case PIECE_TEXT:
                at = put_bytes(at, piece->bytes, piece->width);
                break;
            case PIECE_CHOICE: {
                int64_t code = int_at(&piece->values, i);
                if (code < 0 || code >= piece->texts)
                    return -1;
                at = put_bytes(at, piece->bytes + piece->offsets[code], piece->offsets[code + 1] - piece->offsets[code]);
                break;
            }
            case PIECE_NUMBER:
                at = put_number(at, int_at(&piece->values, i));
                break;
            default:
                at = put_cell(at, piece->bytes + i * piece->stride, piece->width);
            }
        }
    }
    if (ends && n)
        ends[n - 1] = at - out - 1;
    return at - out;
}

static uint64_t row_hash(const uint8_t *row, int64_t width)
{
    uint64_t h = (uint64_t)width * 0x9E3779B97F4A7C15ull;
    int64_t k = 0;
    for (; k + 8 <= width; k += 8) {
        uint64_t word;
        memcpy(&word, row + k, 8);
        h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    if (k < width) {
        uint64_t word = 0;
        memcpy(&word, row + k, (size_t)(width - k));
        h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    return h ^ h >> 29;
}

int64_t distinct_rows(const uint8_t *rows, int64_t stride, int64_t width, int64_t n, int64_t *first,
                      int64_t *inverse, int64_t *slots, int64_t slot_mask)
{
    for (int64_t s = 0; s <= slot_mask; s++)
        slots[s] = -1;
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *row = rows + i * stride;
        int64_t s = (int64_t)(row_hash(row, width) & (uint64_t)slot_mask);
        while (slots[s] >= 0 && memcmp(rows + first[slots[s]] * stride, row, (size_t)width) != 0)
            s = (s + 1) & slot_mask;                /* linear probing; a slot holds a distinct row's number */
        if (slots[s] < 0) {
            slots[s] = distinct;
            first[distinct++] = i;
        }
        inverse[i] = slots[s];
    }
    return distinct;
}
