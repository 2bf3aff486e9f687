"""The checks between Python and the compiled twins (``compiled.take`` and each package's
``twins.py``): what the C takes on trust — item sizes, dimensions, contiguity,
writability, lengths, ranges — is refused in Python with one line naming the argument,
before any C runs; what is right goes through, strided views included."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from twins import needs_twins

from l3fwd_sim import compiled
from l3fwd_sim.capture import twins as capture
from l3fwd_sim.compiled import ITEM_BYTES, Array, take
from l3fwd_sim.dataplane import twins as dataplane

pytestmark = needs_twins

DTYPES = [np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64]


def verdict(spec: Array, a: np.ndarray, earlier: int) -> str | None:
    """What ``take`` must say of ``a`` for ``spec``, written out from the rules: the
    error's kind, or None."""
    ndim = 2 if spec.matrix else 1
    if a.itemsize != ITEM_BYTES[spec.ctype] or a.ndim != ndim:
        return "TypeError"
    if a.size and a.shape[-1] > 1 and a.strides[-1] != a.itemsize:
        return "TypeError"
    if spec.writable and not a.flags.writeable:
        return "TypeError"
    want = earlier if isinstance(spec.at_least, str) else spec.at_least
    return "ValueError" if a.shape[0] < want else None


@st.composite
def arrays(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from([(draw(st.integers(0, 6)),), (draw(st.integers(0, 4)), draw(st.integers(0, 5)))]))
    a = np.arange(int(np.prod(shape)) * 2, dtype=dtype).reshape(*shape[:-1], shape[-1] * 2)
    a = a[..., ::2] if draw(st.booleans()) else a[..., :shape[-1]]       # every other item, or a contiguous view
    if draw(st.booleans()):
        a.flags.writeable = False
    return a


@settings(max_examples=300, deadline=None)
@given(arrays(), st.sampled_from(list(ITEM_BYTES)), st.booleans(), st.booleans(),
       st.one_of(st.integers(0, 7), st.just("first")), st.integers(0, 7))
def test_take_refuses_exactly_what_the_rules_refuse(a, ctype, matrix, writable, at_least, first_len):
    """Against the rules written out: every refusal one line naming the argument, and
    an accepted array's pointer is its first item."""
    spec = Array("second", ctype, writable, at_least, matrix)
    first = np.zeros(first_len, np.uint8)
    want = verdict(spec, a, first_len)
    if want:
        with pytest.raises((TypeError, ValueError)) as refused:
            take((Array("first", "uint8_t"), spec), first, a)
        assert type(refused.value).__name__ == want
        assert str(refused.value).startswith("second: ") and "\n" not in str(refused.value)
        return
    _, got = take((Array("first", "uint8_t"), spec), first, a)
    assert got.len == a.shape[0] and got.array is a
    ffi = compiled.extension().ffi
    assert int(ffi.cast("uintptr_t", got.ptr)) == a.__array_interface__["data"][0]
    if matrix:
        assert (got.cols, got.stride) == (a.shape[1], a.strides[0])


def test_a_strided_view_of_rows_is_read_where_it_lies():
    """Rows that lie apart in a larger buffer (a column slice) are read in place."""
    big = np.random.default_rng(1).integers(0, 256, (9, 100), dtype=np.uint8)
    rows = big[:, 10:90]
    widths = np.arange(9, dtype=np.int64) * 9
    out = np.empty(int(widths.sum()), np.uint8)
    capture.pack_rows(rows, widths, out)
    assert out.tobytes() == b"".join(bytes(rows[i, :w]) for i, w in enumerate(widths))


BUF = np.arange(64, dtype=np.uint8)
I64 = np.zeros(4, np.int64)


@pytest.mark.parametrize("call,error,words", [
    (lambda: capture.concat_ranges(BUF, np.zeros(2, np.int32), I64, np.empty(8, np.uint8)),
     TypeError, "starts: expected 1-d items of 8 bytes, got 1-d items of 4"),
    (lambda: capture.concat_ranges(BUF, np.array([60], np.int64), np.array([8], np.int64), np.empty(8, np.uint8)),
     ValueError, "concat_ranges: a range past the buffer"),
    (lambda: capture.concat_ranges(BUF, np.array([0], np.int64), np.array([8], np.int64), np.empty(4, np.uint8)),
     ValueError, "out: 4 items, at least 8 needed"),
    (lambda: capture.concat_ranges(BUF, I64, np.zeros(2, np.int64), np.empty(8, np.uint8)),
     ValueError, "lengths: 2 items, at least 4 needed"),
    (lambda: capture.gather_windows(BUF, np.array([60], np.int64), np.array([8], np.int64), np.empty((1, 8), np.uint8)),
     ValueError, "gather_windows: a window past the buffer"),
    (lambda: capture.walk_rows(BUF, 0, 64, 1, False, 100, 100, I64, np.empty((1, 64), np.uint8)),
     ValueError, "walk_rows: rows of 80 bytes"),
    (lambda: capture.scan_records(BUF, 0, 65, 1, False, 100, I64, None),
     ValueError, "scan_records: a range outside its arrays"),
    (lambda: capture.merge_queues([BUF], np.array([65], np.int64), np.zeros(1, np.uint64), np.zeros(1, np.uint64),
                                  np.zeros(1, np.uint8), False, None, np.empty(8, np.uint8)),
     ValueError, "merge_queues: a position outside its file"),
    (lambda: dataplane.count_packets(np.array([40], np.int64), np.zeros(1, np.uint8), np.zeros(1, np.int64),
                                     np.zeros(32, np.int64), np.zeros((32, 8), np.int64), np.zeros((32, 33), np.int64)),
     ValueError, "count_packets: a port or reason outside the counters"),
    (lambda: dataplane.send_runs((*np.zeros((5, 32), np.int64), 32, 32), np.array([32], np.int64),
                                 np.ones(1, np.int64), None),
     ValueError, "send_runs: a run of a port outside"),
    (lambda: dataplane.rss_queues((False, np.zeros(36 * 256, np.uint32), np.zeros(3, np.int64)),
                                  np.zeros((1, 80), np.uint8), np.zeros(1, np.int64)),
     ValueError, "rss: the redirection table's size is not a power of 2"),
    (lambda: dataplane.same_port_runs(I64, I64, I64, np.zeros(4, np.int64)[::2]),
     TypeError, "run_lens: its last axis is not contiguous"),
    (lambda: dataplane.merge_rounds([], 32, 1, 0, (np.zeros((4, 80), np.uint8)[:, :64], *np.zeros((5, 4), np.int64))),
     ValueError, "merge_rounds: rows must be contiguous rows of 80 bytes"),
])
def test_each_face_refuses_in_one_line_naming_what(call, error, words):
    with pytest.raises(error) as refused:
        call()
    assert words in str(refused.value) and "\n" not in str(refused.value)


def test_a_read_only_output_is_refused():
    out = np.empty(8, np.uint8)
    out.flags.writeable = False
    with pytest.raises(TypeError, match="^out: a read-only array, but the twin writes it$"):
        capture.concat_ranges(BUF, np.zeros(0, np.int64), np.zeros(0, np.int64), out)
