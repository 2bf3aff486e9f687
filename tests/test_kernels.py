"""The compiled byte loops (``kernels.py``) against their numpy/Python twins, and whole
runs under each: the same records found, the same bytes copied, the same outputs."""
from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from l3fwd_sim import RunOptions, kernels, run
from traffic import mixed_frames, read_pcap_frames, write_pcap

pytestmark = pytest.mark.skipif(kernels.load() is None, reason="numba not installed")


def both(function, *args):
    """``function(*args)`` with the compiled kernels, then with the twins (fresh copies
    of the array arguments each time)."""
    results = []
    for numpy_twins in (False, True):
        kernels.use_numpy(numpy_twins)
        try:
            copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            results.append((function(*copies), copies))
        finally:
            kernels.use_numpy(False)
    return results


def records(caplens: list[int], big_endian: bool, seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    order = ">" if big_endian else "<"
    return b"".join(struct.pack(order + "IIII", 1, 2, cap, cap + 4) + rng.bytes(cap) for cap in caplens)


@settings(max_examples=200, deadline=None)
@given(caplens=st.lists(st.integers(0, 300), max_size=40), big_endian=st.booleans(), limit=st.integers(0, 50),
       cut=st.integers(0, 40), bad_at=st.integers(-1, 39), seed=st.integers(0, 99))
def test_scan_records_matches_the_python_walk(caplens, big_endian, limit, cut, bad_at, seed):
    if 0 <= bad_at < len(caplens):
        caplens[bad_at] = 262145                       # above the limit: where the walk must stop
    data = records(caplens, big_endian, seed)[: max(0, sum(16 + min(c, 300) for c in caplens) - cut)]
    buf = np.frombuffer(data + bytes(64), np.uint8).copy()
    (compiled, c_args), (twin, t_args) = both(kernels.scan_records, buf, 0, len(data), limit, big_endian,
                                              262144, np.zeros(limit, np.int64))
    assert compiled == twin
    n = compiled[0]
    assert np.array_equal(c_args[-1][:n], t_args[-1][:n])


@settings(max_examples=200, deadline=None)
@given(size=st.integers(1, 400), data=st.data(), width=st.sampled_from([16, 64]))
def test_gather_and_scatter_match_numpy(size, data, width):
    buf = np.random.default_rng(size).integers(0, 256, size + width, dtype=np.uint8)
    starts = np.array(sorted(data.draw(st.lists(st.integers(0, size - 1), max_size=30))), np.int64)
    widths = np.array(data.draw(st.lists(st.integers(0, 2 * width), min_size=len(starts), max_size=len(starts))),
                      np.int64)
    (_, (_, _, _, out_c)), (_, (_, _, _, out_t)) = both(kernels.gather_windows, buf, starts, widths,
                                                        np.full((len(starts), width), 7, np.uint8))
    assert np.array_equal(out_c, out_t)
    for i, (s, w) in enumerate(zip(starts, widths)):            # and against the definition
        w = min(w, width)
        assert bytes(out_c[i]) == bytes(buf[s:s + w]) + bytes(width - w)

    rows = np.random.default_rng(size + 1).integers(0, 256, (len(starts), width), dtype=np.uint8)
    gaps = np.diff(starts, append=size)                         # non-overlapping windows
    fit = np.minimum(np.minimum(widths, width), gaps)
    (_, (buf_c, *_)), (_, (buf_t, *_)) = both(kernels.scatter_windows, buf, starts, fit, rows)
    assert np.array_equal(buf_c, buf_t)
    (eq_c, _), (eq_t, _) = both(kernels.windows_equal, buf_c, starts, rows[:, :4])
    assert np.array_equal(eq_c, eq_t)
    assert np.array_equal(eq_c, np.array([bytes(buf_c[s:s + 4]) == bytes(r[:4]) for s, r in zip(starts, rows)],
                                         bool))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), chunk=st.sampled_from([5, 64, 65536]))
def test_runs_are_identical_with_either(tmp_path_factory, seed, chunk):
    """Mixed traffic of every size (short frames, IPv6, big frames): each pipeline's
    outputs and counters are the same whether the kernels or their twins ran."""
    tmp = tmp_path_factory.mktemp("k")
    paths = {}
    for port in range(3):
        paths[port] = tmp / f"in{port}.pcap"
        write_pcap(paths[port], mixed_frames(seed, port, 150))
    for pipeline in ("multi", "simple"):
        got = []
        for numpy_twins in (False, True):
            kernels.use_numpy(numpy_twins)
            try:
                out = tmp / f"{pipeline}{numpy_twins}"
                stats = run(RunOptions(inputs=paths, outdir=out, pipeline=pipeline, rx_burst=7, chunk_packets=chunk))
            finally:
                kernels.use_numpy(False)
            got.append(({p: read_pcap_frames(out / f"port{p}.pcap") for p in stats["ports"]}, stats["totals"]))
        assert got[0] == got[1]
