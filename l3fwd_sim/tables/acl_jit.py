"""The compiled twin of :meth:`l3fwd_sim.tables.acl.AclTable.classify` (numba, cached on
disk), imported through :mod:`l3fwd_sim.compiled`. It walks the same tables the numpy
twin walks, one key at a time: per chunk, each field's interval (from its index, then a
binary search between two index points where the index is coarser than the field), the AND of the fields' summary words, then only the words they point at.
Nothing is bounds-checked; the twin's tests (tests/tables/test_acl_table.py) guard it."""
import numpy as np
from numba import njit

# The lowest set bit's index by de Bruijn multiplication: (x & -x) * B >> 58 is unique per bit.
_B = 0x03F79D71B4CB0A89
_DEBRUIJN = np.uint64(_B)
_DEBRUIJN_INDEX = np.zeros(64, np.int64)
for _i in range(64):
    _DEBRUIJN_INDEX[((1 << _i) * _B & (1 << 64) - 1) >> 58] = _i


@njit(cache=True, nogil=True, inline="always")
def _lowest_bit(x):
    return _DEBRUIJN_INDEX[((x & (~x + np.uint64(1))) * _DEBRUIJN) >> np.uint64(58)]


@njit(cache=True, nogil=True)
def classify(columns, rules, chunk_size, chunk_tables, table_field, starts, starts_at, index, index_at, shift,
             words, words_at, summary, rows_at, out):
    n = columns.shape[1]
    chunks = len(chunk_tables) - 1
    at = np.empty(max(1, columns.shape[0]), np.int64)
    full = ~np.uint64(0)
    for k in range(n):
        out[k] = -1
        for c in range(chunks):
            t0, t1 = chunk_tables[c], chunk_tables[c + 1]
            left = rules - c * chunk_size
            valid_words = min(chunk_size // 64, (left + 63) // 64)        # also the width of a row of words
            summ = full if valid_words == 64 else (np.uint64(1) << np.uint64(valid_words)) - np.uint64(1)
            for t in range(t0, t1):
                key = columns[table_field[t], k]
                if shift[t] < 0:                        # the index holds every key's interval
                    i = index[index_at[t] + key]
                else:                                   # the last start <= key, between two index points
                    block = index_at[t] + (key >> shift[t])
                    i = index[block]
                    n_left = index[block + 1] - i + 1
                    first = starts_at[t] + i
                    while n_left > 1:                   # branch-free: the step is a select
                        half = n_left >> 1
                        i += half if starts[first + half] <= key else 0
                        first = starts_at[t] + i
                        n_left -= half
                at[t - t0] = words_at[t] + i * valid_words
                summ &= summary[rows_at[t] + i]
                if not summ:                            # no rule of this chunk can match
                    break
            while summ:
                w = _lowest_bit(summ)
                bits = full
                for t in range(t0, t1):
                    bits &= words[at[t - t0] + w]
                    if not bits:
                        break
                if t0 == t1:                            # no field restricts: every rule of the chunk matches
                    rest = left - w * 64
                    if rest < 64:
                        bits = (np.uint64(1) << np.uint64(rest)) - np.uint64(1)
                if bits:
                    out[k] = c * chunk_size + w * 64 + _lowest_bit(bits)
                    break
                summ &= summ - np.uint64(1)
            if out[k] >= 0:
                break


def _warm_up() -> None:
    # One call on tiny arrays of the types AclTable passes: machine code is loaded from
    # the cache (or compiled) now, not inside the first run.
    none64, none32, one = np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64)
    classify(np.zeros((1, 0), np.int64), 0, 4096, one, none64, none64, one, none32, one, none64,
             np.zeros(0, np.uint64), one, np.zeros(0, np.uint64), none64, none64)


_warm_up()
