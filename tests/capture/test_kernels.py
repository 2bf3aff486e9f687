"""The compiled byte loops (``records.c``, through ``kernels.py``) against their
numpy/Python definitions, and whole runs under each: the same records found, the same
bytes copied, the same outputs; and when a run loads the compiled twins."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from l3fwd_sim import RunOptions, compiled, run
from l3fwd_sim.capture import kernels
from forwarding import REPO
from frames import mixed_frames, read_pcap_frames, write_pcap
from twins import KERNELS, both, needs_twins

pytestmark = needs_twins


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
                                              262144, np.zeros(limit, np.int64), np.zeros((limit, 16), np.uint8))
    assert compiled == twin
    n = compiled[0]
    for c, t in zip(c_args[-2:], t_args[-2:]):             # offsets and record headers
        assert np.array_equal(c[:n], t[:n])
    assert [bytes(h) for h in c_args[-1][:n]] == [bytes(buf[o - 16:o]) for o in c_args[-2][:n]]


@settings(max_examples=200, deadline=None)
@given(caplens=st.lists(st.integers(0, 300), max_size=40), big_endian=st.booleans(), limit=st.integers(0, 50),
       snap=st.sampled_from([0, 30, 64, 100, 262144]), cut=st.integers(0, 40), seed=st.integers(0, 99))
def test_walk_rows_lays_out_what_scan_records_finds(caplens, big_endian, limit, snap, cut, seed):
    """Each record found becomes its row: the header in little-endian with the captured
    length cut to the snaplen, the frame's first 64 bytes (as cut), zero after them."""
    data = records(caplens, big_endian, seed)[: max(0, sum(16 + c for c in caplens) - cut)]
    buf = np.frombuffer(data + bytes(64), np.uint8).copy()
    (walked, (*_, out_c, rows_c)), (twin, (*_, out_t, rows_t)) = both(
        kernels.walk_rows, buf, 0, len(data), limit, big_endian, 262144, snap, np.zeros(limit, np.int64),
        np.full((limit, 80), 7, np.uint8))
    assert walked == twin
    n = walked[0]
    assert np.array_equal(out_c[:n], out_t[:n]) and np.array_equal(rows_c[:n], rows_t[:n])
    order = ">" if big_endian else "<"
    for row, offset in zip(rows_c[:n], out_c[:n]):
        sec, frac, cap, wire = struct.unpack(order + "IIII", bytes(buf[offset - 16:offset]))
        kept = min(cap, snap)
        assert bytes(row[:16]) == struct.pack("<IIII", sec, frac, kept, wire)
        head = min(kept, 64)
        assert bytes(row[16:]) == bytes(buf[offset:offset + head]) + bytes(64 - head)
    assert walked[3] == sum(min(c, snap) for c in caplens[:n])


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



@settings(max_examples=200, deadline=None)
@given(caplens=st.lists(st.integers(0, 150), max_size=30), data=st.data())
def test_restore_records(caplens, data):
    """Records whose header bytes equal the row's get the row's head written back
    (only their own bytes); the others are left alone. (The numpy writer's; the
    compiled writer lays records out instead.)"""
    buf = np.frombuffer(records(caplens, False, len(caplens)) + bytes(64), np.uint8).copy()
    offsets = np.cumsum([0] + [16 + c for c in caplens])[:-1].astype(np.int64) + 16
    caplen = np.array(caplens, np.int64)
    rows = np.random.default_rng(len(caplens)).integers(0, 256, (len(caplens), 80), dtype=np.uint8)
    same = np.array(data.draw(st.lists(st.booleans(), min_size=len(caplens), max_size=len(caplens))), bool)
    for r in np.flatnonzero(same):
        rows[r, :16] = buf[offsets[r] - 16:offsets[r]]
    which = np.array(sorted(data.draw(st.sets(st.integers(0, max(0, len(caplens) - 1)), max_size=len(caplens)))
                            if caplens else []), np.int64)
    want = buf.copy()
    buf_c = buf.copy()
    got_c = kernels.restore_records(buf_c, offsets, caplen, rows, which)
    for r in which[same[which]]:
        w = min(caplen[r], 64)
        want[offsets[r]:offsets[r] + w] = rows[r, 16:16 + w]
    assert np.array_equal(got_c, which[same[which]]) and np.array_equal(buf_c, want)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), chunk=st.sampled_from([5, 64, 65536]))
def test_runs_are_identical_with_either(tmp_path_factory, seed, chunk):
    """Mixed traffic of every size (short frames, IPv6, big frames): each pipeline's
    outputs and counters are the same whether the compiled twins or the numpy stages ran."""
    tmp = tmp_path_factory.mktemp("k")
    paths = {}
    for port in range(3):
        paths[port] = tmp / f"in{port}.pcap"
        write_pcap(paths[port], mixed_frames(seed, port, 150))
    for pipeline in ("multi", "simple"):
        got = []
        for choice in KERNELS:
            with compiled.using(choice):
                out = tmp / f"{pipeline}{choice}"
                stats = run(RunOptions(inputs=paths, outdir=out, pipeline=pipeline, rx_burst=7, chunk_packets=chunk))
            got.append(({p: read_pcap_frames(out / f"port{p}.pcap") for p in stats["ports"]}, stats["totals"]))
        assert got[0] == got[1]


LOADED = "import sys; print('l3fwd_sim._compiled' in sys.modules)"


@pytest.mark.parametrize("size,loaded", [(1000, "False"), (compiled.MIN_INPUT_BYTES, "True")])
def test_the_choice_is_made_from_the_input_sizes(tmp_path, size, loaded):
    """Unless L3FWD_SIM_KERNELS says otherwise, a run whose inputs hold less than
    MIN_INPUT_BYTES (stat, before anything is read) never loads the compiled twins; a
    larger one does. (A fresh process: this one has loaded them.)"""
    frame = bytes(60)
    write_pcap(tmp_path / "port0.pcap", [frame] * max(1, (size - 24) // 76 + 1))
    code = (f"from l3fwd_sim import run, RunOptions, find_inputs; "
            f"run(RunOptions(inputs=find_inputs([{str(tmp_path)!r}]), outdir={str(tmp_path / 'o')!r})); "
            + LOADED)
    env = {k: v for k, v in os.environ.items() if k != "L3FWD_SIM_KERNELS"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [loaded]


def test_the_compiled_twins_are_built_where_a_compiler_is():
    """``make`` / ``pip install`` build the extension (setup.py) on a machine with a C
    compiler; a fresh process then loads it as built, compiling nothing."""
    code = "import l3fwd_sim._compiled as k, l3fwd_sim; print(k.__file__); print(l3fwd_sim.__file__)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    extension, package = map(Path, done.stdout.split())
    assert extension.parent == package.parent and extension.suffix == ".so" and extension.stat().st_size > 0



def test_without_a_c_compiler_the_build_goes_on(tmp_path):
    """setup.py's extension is optional: where the compiler fails, the build (as pip's
    install runs it) still succeeds and leaves no extension — the numpy stages run."""
    shutil.copytree(REPO / "l3fwd_sim", tmp_path / "l3fwd_sim", ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(REPO / name, tmp_path / name)
    env = dict(os.environ, CC="false")
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "building extension \"l3fwd_sim._compiled\" failed" in done.stderr
    assert not list((tmp_path / "l3fwd_sim").glob("_compiled*"))

@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 200), st.integers(0, 40)), max_size=60), st.integers(0, 2**32 - 1))
def test_concat_ranges_equals_twin(ranges, seed):
    buf = np.random.default_rng(seed).integers(0, 256, 260, dtype=np.uint8)
    starts = np.array([s for s, _ in ranges], np.int64)
    lengths = np.array([n for _, n in ranges], np.int64)
    (compiled_out, _), (twin_out, _) = both(kernels.concat_ranges, buf, starts, lengths)
    want = b"".join(bytes(buf[s:s + n]) for s, n in ranges)
    assert compiled_out.tobytes() == twin_out.tobytes() == want


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 80), max_size=60), st.integers(0, 2**32 - 1))
def test_pack_rows_equals_twin(widths, seed):
    rows = np.random.default_rng(seed).integers(0, 256, (len(widths), 80), dtype=np.uint8)
    widths = np.array(widths, np.int64)
    (compiled_out, _), (twin_out, _) = both(kernels.pack_rows, rows, widths)
    assert compiled_out.tobytes() == twin_out.tobytes() == b"".join(bytes(r[:w]) for r, w in zip(rows, widths))
