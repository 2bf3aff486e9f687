"""l3fwd_sim.capture.pcap: the numpy pcap reader and writer, checked against scapy.

The oracle is always independent of the package: files are written with scapy
(``wrpcap`` / ``RawPcapWriter``) or by hand with ``struct``, and read back with scapy's
``RawPcapReader``; the expected frames are the bytes the test itself generated.
"""
from __future__ import annotations

import itertools

import os
import random
import stat
import struct
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, RawPcapWriter, wrpcap

from l3fwd_sim.errors import SimError
from l3fwd_sim.capture.offline import open_offline
from l3fwd_sim.capture.pcap import PcapReader, PcapWriter
from l3fwd_sim.capture.records import HEAD_BYTES, MAX_CAPLEN, RecordBatch

HUGE = 10**9
BATCH_SIZES = (1, 7, 64, 1000, HUGE)
MAGIC_US = 0xA1B2C3D4
MAGIC_NS = 0xA1B23C4D



# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def batch_records(batch: RecordBatch) -> list[tuple[bytes, int, int, int]]:
    """(frame, caplen, wirelen, ts_ns) of every row, rebuilt from heads + block tails.

    Must be called before the reader's next ``read`` (the block is reused). Also checks
    the per-batch invariants: shapes, dtypes, zero padding past caplen, heads == block."""
    n = len(batch)
    assert batch.heads.shape == (n, HEAD_BYTES)
    assert batch.heads.dtype == np.uint8
    for arr in (batch.caplen, batch.wirelen, batch.ts_ns, batch.offsets):
        assert arr.shape == (n,)
        assert arr.dtype == np.int64
    out = []
    block = batch.block
    for i in range(n):
        cap = int(batch.caplen[i])
        off = int(batch.offsets[i])
        head = batch.heads[i]
        k = min(cap, HEAD_BYTES)
        assert not head[k:].any(), f"row {i}: heads not zero past caplen {cap}"
        assert bytes(block[off:off + k]) == bytes(head[:k]), f"row {i}: heads differ from block"
        frame = bytes(head[:k]) + (bytes(block[off + HEAD_BYTES:off + cap]) if cap > HEAD_BYTES else b"")
        out.append((frame, cap, int(batch.wirelen[i]), int(batch.ts_ns[i])))
    return out


def batches(reader: PcapReader, sizes):
    """The reader's batches, asking for ``sizes`` in turn, up to the first short one:
    the end of the file, after which further reads return nothing."""
    for i, want in enumerate(itertools.cycle(sizes)):
        assert i < 10_000_000
        batch = reader.read(want)
        assert len(batch) <= want
        yield batch
        if len(batch) < want:
            assert len(reader.read(want)) == 0
            return


def read_with(path, sizes) -> tuple[list[tuple[bytes, int, int, int]], PcapReader]:
    """Read the whole file with PcapReader, cycling through the batch ``sizes``."""
    reader = open_offline(path)
    records = []
    try:
        for batch in batches(reader, sizes):
            records += batch_records(batch)
    finally:
        reader.close()
    return records, reader


def scapy_records(path) -> list[tuple[bytes, int, int, int]]:
    """(frame, caplen, wirelen, ts_ns) as scapy's RawPcapReader sees the file."""
    out = []
    with RawPcapReader(str(path)) as reader:
        unit = 1 if reader.nano else 1000
        for data, meta in reader:
            out.append((bytes(data), meta.caplen, meta.wirelen, meta.sec * 1_000_000_000 + meta.usec * unit))
    return out


def pcap_header(order="<", nano=False, linktype=1, snaplen=MAX_CAPLEN) -> bytes:
    return struct.pack(order + "IHHiIII", MAGIC_NS if nano else MAGIC_US, 2, 4, 0, 0, snaplen, linktype)


def pcap_record(frame: bytes, ts_ns: int, nano: bool, wirelen: int | None = None, order="<",
                caplen: int | None = None) -> bytes:
    sec, frac = divmod(ts_ns, 1_000_000_000)
    if not nano:
        frac //= 1000
    cap = len(frame) if caplen is None else caplen
    return struct.pack(order + "IIII", sec, frac, cap, len(frame) if wirelen is None else wirelen) + frame


def write_by_hand(path, records, nano=False, order="<", linktype=1) -> None:
    """records: (frame, wirelen, ts_ns)."""
    with open(path, "wb") as f:
        f.write(pcap_header(order, nano, linktype))
        for frame, wire, ts in records:
            f.write(pcap_record(frame, ts, nano, wire, order))


def expected(records) -> list[tuple[bytes, int, int, int]]:
    return [(frame, len(frame), wire, ts) for frame, wire, ts in records]


def random_records(rng: random.Random, sizes, nano: bool, t0=1_700_000_000 * 10**9):
    """(frame, wirelen, ts_ns) with random bytes; timestamps representable in the file."""
    out = []
    ts = t0
    for size in sizes:
        ts += rng.randrange(0, 3 * 10**9) * (1 if nano else 1000)
        out.append((rng.randbytes(size), size, ts))
    return out


def write_with_scapy(path, records, nano: bool, endianness="") -> None:
    w = RawPcapWriter(str(path), linktype=1, nano=nano, endianness=endianness, snaplen=MAX_CAPLEN)
    try:
        w.write_header(None)
        for frame, wire, ts in records:
            sec, frac = divmod(ts, 1_000_000_000)
            w.write_packet(frame, sec=sec, usec=frac if nano else frac // 1000,
                           caplen=len(frame), wirelen=wire)
    finally:
        w.close()


def assert_same_records(got, want) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"record {i}: got caplen {g[1]} wire {g[2]} ts {g[3]}, want caplen {w[1]} wire {w[2]} ts {w[3]}"


# ---------------------------------------------------------------------------------------
# round trips against scapy
# ---------------------------------------------------------------------------------------
frame_sizes = st.lists(
    st.one_of(st.integers(0, 1600), st.sampled_from([0, 1, 13, 14, 59, 60, 63, 64, 65, 128, 1514, 1600])),
    max_size=80)
batch_plans = st.lists(st.one_of(st.sampled_from(BATCH_SIZES), st.integers(1, 40)), min_size=1, max_size=6)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=frame_sizes, nano=st.booleans(), plan=batch_plans, seed=st.integers(0, 2**32))
def test_rawpcapwriter_round_trip(sizes, nano, plan, seed):
    rng = random.Random(seed)
    recs = random_records(rng, sizes, nano)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.pcap"
        write_with_scapy(path, recs, nano)
        want = expected(recs)
        assert scapy_records(path) == want  # the oracle agrees with what we wrote
        got, reader = read_with(path, plan)
        assert reader.nanosecond == nano
        assert reader.truncated_at is None
        assert_same_records(got, want)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=frame_sizes, nano=st.booleans(), plan=batch_plans, seed=st.integers(0, 2**32))
def test_equal_size_runs_round_trip(sizes, nano, plan, seed):
    """Runs of >= 16 equal-size records (the strided fast path) interleaved with others."""
    rng = random.Random(seed)
    mixed = []
    for size in sizes:
        mixed += [size] * (rng.choice([1, 15, 16, 17, 40]) if rng.random() < 0.5 else 1)
    recs = random_records(rng, mixed, nano)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.pcap"
        write_with_scapy(path, recs, nano)
        got, _ = read_with(path, plan)
        assert_same_records(got, scapy_records(path))
        assert_same_records(got, expected(recs))


@pytest.mark.parametrize("nano", [False, True])
@pytest.mark.parametrize("batch", BATCH_SIZES)
def test_wrpcap_round_trip(tmp_path, nano, batch):
    """Packets written by scapy's high-level wrpcap (times from Packet.time)."""
    rng = random.Random(f"wrpcap/{nano}/{batch}")
    pkts = []
    for i, size in enumerate([0, 1, 14, 60, 64, 65, 100, 1514, 1600] + [rng.randint(0, 1600) for _ in range(120)]):
        p = Ether(rng.randbytes(size)) if size >= 14 else Raw(rng.randbytes(size))
        p.time = 1_700_000_000 + i * 0.001 + rng.randrange(1000) * 1e-6
        pkts.append(p)
    path = tmp_path / "w.pcap"
    wrpcap(str(path), pkts, linktype=1, nano=nano)
    want = scapy_records(path)
    assert [w[0] for w in want] == [bytes(p) for p in pkts]
    got, reader = read_with(path, [batch])
    assert reader.nanosecond == nano
    assert_same_records(got, want)


@pytest.mark.parametrize("nano", [False, True])
def test_snaplen_truncated_records_keep_wirelen(tmp_path, nano):
    """caplen < wirelen (a snaplen-limited capture): wirelen and timestamps are kept."""
    rng = random.Random(7)
    recs = []
    ts = 1_600_000_000 * 10**9 + 123_456_789 // (1 if nano else 1000) * (1 if nano else 1000)
    for i in range(300):
        wire = rng.choice([60, 64, 128, 1500, 9000, 65535])
        cap = min(wire, rng.choice([0, 10, 64, 96, 128]))
        recs.append((rng.randbytes(cap), wire, ts + i * (1 if nano else 1000) * 7))
    path = tmp_path / "snap.pcap"
    with open(path, "wb") as f:
        f.write(pcap_header("<", nano, snaplen=128))
        for frame, wire, t in recs:
            f.write(pcap_record(frame, t, nano, wire))
    want = expected(recs)
    assert scapy_records(path) == want
    for plan in ([1], [7], [64], [HUGE]):
        got, _ = read_with(path, plan)
        assert_same_records(got, want)
        assert all(g[2] >= g[1] for g in got) and any(g[2] > g[1] for g in got)


# ---------------------------------------------------------------------------------------
# byte order
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("nano", [False, True])
def test_big_endian_reads_identically(tmp_path, nano):
    rng = random.Random(f"be/{nano}")
    sizes = [rng.randint(0, 1600) for _ in range(200)] + [100] * 40 + [0] * 20 + [64] * 17 + [rng.randint(0, 200) for _ in range(50)]
    recs = random_records(rng, sizes, nano)
    little, big, big_scapy = tmp_path / "le.pcap", tmp_path / "be.pcap", tmp_path / "be2.pcap"
    write_by_hand(little, recs, nano, "<")
    write_by_hand(big, recs, nano, ">")
    write_with_scapy(big_scapy, recs, nano, endianness=">")
    assert big.read_bytes()[:4] == struct.pack(">I", MAGIC_NS if nano else MAGIC_US)
    want = expected(recs)
    assert scapy_records(big) == want
    for plan in ([1], [7, 64], [1000], [HUGE]):
        got_le, _ = read_with(little, plan)
        got_be, reader = read_with(big, plan)
        got_be2, _ = read_with(big_scapy, plan)
        assert reader.nanosecond == nano
        assert_same_records(got_le, want)
        assert_same_records(got_be, want)
        assert_same_records(got_be2, want)


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("nano", [False, True])
def test_equal_size_run_at_start_in_both_byte_orders(tmp_path, order, nano):
    """A file that starts with long runs of equal-size records (the strided path), among
    them zero-length records, whose caplen reads the same in either byte order."""
    rng = random.Random(f"run-start/{order}/{nano}")
    sizes = [0] * 40 + [100] * 300 + [rng.randint(0, 300) for _ in range(30)] + [0] * 20 + [1] * 20
    recs = random_records(rng, sizes, nano)
    recs = [(f, w + rng.randrange(3), t) for f, w, t in recs]
    path = tmp_path / "runs.pcap"
    write_by_hand(path, recs, nano, order)
    want = expected(recs)
    assert scapy_records(path) == want
    for plan in ([HUGE], [1000], [40, 300], [17]):
        got, _ = read_with(path, plan)
        assert_same_records(got, want)


@pytest.mark.parametrize("order", ["<", ">"])
def test_timestamps_use_full_unsigned_range(tmp_path, order):
    """Seconds >= 2**31 (after 2038) and the largest fractions are read as unsigned."""
    recs = [(b"\xaa" * 60, 60, (2**32 - 1) * 10**9 + 999_999_999), (b"\xbb" * 70, 70, 2**31 * 10**9),
            (b"", 0, 0)] * 20
    path = tmp_path / "t.pcap"
    write_by_hand(path, recs, nano=True, order=order)
    for plan in ([1], [HUGE]):
        got, _ = read_with(path, plan)
        assert_same_records(got, expected(recs))


# ---------------------------------------------------------------------------------------
# fixed-size fast path vs variable walk, buffer refills
# ---------------------------------------------------------------------------------------
def _fixed_then_mixed(rng, fixed_first: bool):
    fixed = [100] * 5000
    mixed = [rng.randint(0, 1600) for _ in range(700)]
    return fixed + mixed if fixed_first else mixed + fixed


@pytest.mark.parametrize("fixed_first", [True, False])
@pytest.mark.parametrize("plan", [[4999], [1], [3333], [5001, 1], [HUGE], [64, 1000, 7]])
def test_fixed_run_and_walk_boundary(tmp_path, fixed_first, plan):
    rng = random.Random(f"boundary/{fixed_first}")
    recs = random_records(rng, _fixed_then_mixed(rng, fixed_first), nano=False)
    path = tmp_path / "fm.pcap"
    write_by_hand(path, recs)
    got, _ = read_with(path, plan)
    assert_same_records(got, expected(recs))


def _bulk_file(path, caps: np.ndarray, seed: int, nano: bool = False, order: str = "<"):
    """Write records of the given caplens quickly with numpy; return (data, starts, ts, wire)
    where frame i is data[starts[i]:starts[i]+caps[i]]."""
    rng = np.random.default_rng(seed)
    n = len(caps)
    data = rng.integers(0, 256, int(caps.sum()), dtype=np.uint8)
    starts = np.concatenate([[0], np.cumsum(caps)[:-1]]).astype(np.int64)
    sec = 1_700_000_000 + np.arange(n, dtype=np.int64) // 1000
    frac = rng.integers(0, 10**9 if nano else 10**6, n)
    wire = caps + rng.integers(0, 3, n)
    hdr = np.stack([sec, frac, caps, wire], axis=1).astype(order + "u4")
    rec_start = starts + 16 * np.arange(n) + 24
    out = np.empty(24 + 16 * n + int(caps.sum()), np.uint8)
    out[:24] = np.frombuffer(pcap_header(order, nano), np.uint8)
    hdr_bytes = hdr.view(np.uint8).reshape(n, 16)
    out[(rec_start[:, None] + np.arange(16)).ravel()] = hdr_bytes.ravel()
    body_pos = np.repeat(rec_start + 16 - starts, caps) + np.arange(int(caps.sum()))
    out[body_pos] = data
    out.tofile(path)
    ts = sec * 10**9 + frac * (1 if nano else 1000)
    return data, starts, ts, wire


def _check_bulk(path, caps, data, starts, ts, wire, plan):
    """Every frame of a large file, compared vectorised."""
    reader = open_offline(path)
    row = 0
    try:
        for b in batches(reader, plan):
            n = len(b)
            sl = slice(row, row + n)
            assert np.array_equal(b.caplen, caps[sl])
            assert np.array_equal(b.wirelen, wire[sl])
            assert np.array_equal(b.ts_ns, ts[sl])
            idx = np.arange(HEAD_BYTES)
            in_frame = idx < caps[sl, None]
            src = np.where(in_frame, starts[sl, None] + idx, 0)
            expect_heads = np.where(in_frame, data[src] if len(data) else 0, 0)
            assert np.array_equal(b.heads, expect_heads), f"heads differ in rows {row}..{row + n}"
            # every byte of every frame, through the block/offsets
            tot = int(caps[sl].sum())
            if tot:
                rel = np.arange(tot) - np.repeat(np.cumsum(caps[sl]) - caps[sl], caps[sl])
                got_bytes = b.block[np.repeat(b.offsets, caps[sl]) + rel]
                want_bytes = data[np.repeat(starts[sl], caps[sl]) + rel]
                assert np.array_equal(got_bytes, want_bytes), f"frame bytes differ in rows {row}..{row + n}"
            row += n
    finally:
        reader.close()
    assert row == len(caps)
    assert reader.truncated_at is None


def test_file_larger_than_read_block_fixed_size(tmp_path):
    caps = np.full(150_000, 100, np.int64)   # 17.4 MB > the 8 MiB read block
    path = tmp_path / "big.pcap"
    data, starts, ts, wire = _bulk_file(path, caps, 1)
    assert path.stat().st_size > 2 * (8 << 20)
    for plan in ([65536], [100_003, 7], [HUGE], [32768, 1]):
        _check_bulk(path, caps, data, starts, ts, wire, plan)


def test_memory_stays_bounded_for_large_files(tmp_path):
    """Reading a file several times the read block in modest batches must not buffer
    the whole file (the read buffer is reused: pcap.py module docstring)."""
    caps = np.full(300_000, 100, np.int64)    # 34.8 MB
    path = tmp_path / "huge.pcap"
    _bulk_file(path, caps, 4)
    size = path.stat().st_size
    reader = open_offline(path)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        total = 0
        while True:
            b = reader.read(20_000)
            total += len(b)
            if len(b) < 20_000:
                break
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        reader.close()
    assert total == len(caps)
    assert peak < size / 2, f"peak {peak} bytes while reading a {size}-byte file in batches of 20000"


@pytest.mark.parametrize("order", ["<", ">"])
def test_file_larger_than_read_block_mixed_sizes(tmp_path, order):
    rng = np.random.default_rng(2)
    caps = rng.integers(0, 400, 60_000).astype(np.int64)
    caps[10_000:30_000] = 64            # a long equal-size run in the middle
    caps[40_000:40_010] = 262_144        # a few maximum-size records (crossing refills)
    path = tmp_path / "bigmixed.pcap"
    data, starts, ts, wire = _bulk_file(path, caps, 3, nano=True, order=order)
    assert path.stat().st_size > (8 << 20)
    for plan in ([65536], [HUGE], [4097, 13]):
        _check_bulk(path, caps, data, starts, ts, wire, plan)


# ---------------------------------------------------------------------------------------
# PcapWriter -> scapy
# ---------------------------------------------------------------------------------------
def _write_frames(path, frames, wires, ts, nano, chunks, junk_rng=None):
    """Write frames with PcapWriter in the given chunk sizes; heads rows carry junk past
    caplen when ``junk_rng`` is given (the writer must not write it)."""
    w = PcapWriter(path, nanosecond=nano)
    pos = 0
    ci = 0
    while pos < len(frames) or ci == 0:
        k = chunks[ci % len(chunks)]
        ci += 1
        part = frames[pos:pos + k]
        heads = np.zeros((len(part), HEAD_BYTES), np.uint8)
        if junk_rng is not None and len(part):
            heads[:] = np.frombuffer(junk_rng.randbytes(heads.size), np.uint8).reshape(heads.shape)
        for i, f in enumerate(part):
            heads[i, :min(len(f), HEAD_BYTES)] = np.frombuffer(f[:HEAD_BYTES], np.uint8)
        caplen = np.array([len(f) for f in part], np.int64)
        tails = [memoryview(f)[HEAD_BYTES:] for f in part if len(f) > HEAD_BYTES]
        w.write(heads, caplen, np.array(wires[pos:pos + k], np.int64),
                np.array(ts[pos:pos + k], np.int64), tails or None)
        pos += k
    return w


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sizes=frame_sizes, nano=st.booleans(), chunks=st.lists(st.integers(1, 50), min_size=1, max_size=4),
       seed=st.integers(0, 2**32), junk=st.booleans())
def test_writer_read_by_scapy(sizes, nano, chunks, seed, junk):
    rng = random.Random(seed)
    recs = random_records(rng, sizes, nano)
    frames = [r[0] for r in recs]
    wires = [len(f) + rng.choice([0, 0, 4, 1000]) for f in frames]
    ts = [r[2] for r in recs]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "port0.pcap"
        w = _write_frames(path, frames, wires, ts, nano, chunks, rng if junk else None)
        assert w.packets == len(frames)
        w.commit()
        with RawPcapReader(str(path)) as r:
            assert r.linktype == 1
            assert bool(r.nano) == nano
        want = [(f, len(f), wi, t) for f, wi, t in zip(frames, wires, ts)]
        assert scapy_records(path) == want
        # and the reader reads back what the writer wrote
        got, _ = read_with(path, [HUGE])
        assert got == want


@pytest.mark.parametrize("nano", [False, True])
def test_writer_all_64_byte_frames_and_long_frames(tmp_path, nano):
    """The writer's shortcuts: every frame exactly HEAD_BYTES long; every frame longer."""
    rng = random.Random(f"w64/{nano}")
    unit = 1 if nano else 1000
    for name, sizes in (("eq", [64] * 50), ("long", [rng.randint(65, 1600) for _ in range(50)]),
                        ("short", [rng.randint(0, 63) for _ in range(50)])):
        frames = [rng.randbytes(s) for s in sizes]
        ts = [(1_700_000_000 * 10**9 + i * 12_345 * unit) for i in range(len(frames))]
        wires = [len(f) for f in frames]
        path = tmp_path / f"{name}.pcap"
        _write_frames(path, frames, wires, ts, nano, [50], rng).commit()
        assert scapy_records(path) == [(f, len(f), len(f), t) for f, t in zip(frames, ts)]


def test_writer_microsecond_file_truncates_nanoseconds(tmp_path):
    frames = [b"\x01" * 60, b"\x02" * 70]
    ts = [1_700_000_000_123_456_789, 5_999]
    _write_frames(tmp_path / "us.pcap", frames, [60, 70], ts, False, [2]).commit()
    got = scapy_records(tmp_path / "us.pcap")
    assert [g[3] for g in got] == [1_700_000_000_123_456_000, 5_000]


def test_writer_commit_is_atomic_and_abort_leaves_nothing(tmp_path):
    target = tmp_path / "port3.pcap"
    frames = [bytes(range(60)), bytes(200)]
    w = _write_frames(target, frames, [60, 200], [10**9, 2 * 10**9], False, [2])
    assert not target.exists()
    temps = [p for p in tmp_path.iterdir()]
    assert len(temps) == 1 and temps[0] != target
    w.commit()
    assert target.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["port3.pcap"]
    assert [r[0] for r in scapy_records(target)] == frames

    # commit replaces an existing file in one step
    w = _write_frames(target, frames[:1], [60], [10**9], True, [1])
    assert [r[0] for r in scapy_records(target)] == frames   # old content until commit
    w.commit()
    assert [r[0] for r in scapy_records(target)] == frames[:1]

    # abort: no output, no temp file
    other = tmp_path / "port4.pcap"
    w = _write_frames(other, frames, [60, 200], [10**9, 2 * 10**9], False, [1])
    w.abort()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["port3.pcap"]


def test_writer_empty_capture_is_valid(tmp_path):
    target = tmp_path / "port1.pcap"
    w = PcapWriter(target, nanosecond=True)
    w.write(np.zeros((0, HEAD_BYTES), np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64),
            np.zeros(0, np.int64), None)
    w.commit()
    assert target.stat().st_size == 24
    assert scapy_records(target) == []
    with RawPcapReader(str(target)) as r:
        assert r.linktype == 1
    got, _ = read_with(target, [HUGE])
    assert got == []


def test_writer_output_honours_umask(tmp_path):
    old = os.umask(0o022)
    try:
        w = PcapWriter(tmp_path / "port0.pcap")
        w.commit()
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "port0.pcap").stat().st_mode) == 0o644


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------
def _open_error(path) -> str:
    with pytest.raises(SimError) as info:
        r = open_offline(path)
        try:   # some damage shows only when records are read
            while len(r.read(1000)):
                pass
        finally:
            r.close()
    msg = str(info.value)
    assert "\n" not in msg
    assert str(path) in msg
    return msg


def test_error_random_bytes(tmp_path):
    rng = random.Random(5)
    for i in range(20):
        data = rng.randbytes(rng.randint(24, 500))
        if int.from_bytes(data[:4], "little") in (MAGIC_US, MAGIC_NS, 0x0A0D0D0A) or \
                int.from_bytes(data[:4], "big") in (MAGIC_US, MAGIC_NS):
            continue
        path = tmp_path / f"junk{i}.pcap"
        path.write_bytes(data)
        msg = _open_error(path)
        assert "not a pcap" in msg


def test_error_text_file(tmp_path):
    path = tmp_path / "port0.pcap"
    path.write_text("this is not a capture file, just some text\n" * 3)
    assert "not a pcap" in _open_error(path)


@pytest.mark.parametrize("size", [0, 1, 4, 23])
def test_error_shorter_than_header(tmp_path, size):
    path = tmp_path / "short.pcap"
    path.write_bytes(pcap_header()[:size])
    assert "not a pcap" in _open_error(path)


def test_pcapng_section_header_alone_is_an_empty_capture(tmp_path):
    """A pcapng file (whatever its name) goes to the pcapng reader; a lone Section
    Header Block holds no packets. (pcapng itself: test_formats.py.)"""
    path = tmp_path / "ng.pcap"
    path.write_bytes(struct.pack("<IIIHHq", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1) + struct.pack("<I", 28))
    got, reader = read_with(path, [HUGE])
    assert got == [] and reader.truncated_at is None and reader.format == "pcapng"


@pytest.mark.parametrize("order", ["<", ">"])
# refused ones (8: SLIP); the converted ones are in test_formats.py and test_link_ppp_hdlc.py
@pytest.mark.parametrize("linktype", [8, 105, 127, 195, 242, 9999])
def test_error_linktype(tmp_path, linktype, order):
    path = tmp_path / "sll.pcap"
    path.write_bytes(pcap_header(order, linktype=linktype) + pcap_record(b"x" * 40, 10**9, False, order=order))
    msg = _open_error(path)
    assert f"link type {linktype}" in msg


def test_linktype_fcs_bits_ignored(tmp_path):
    """The upper 4 bits of the link-type field carry FCS info; Ethernet with them is Ethernet."""
    path = tmp_path / "fcs.pcap"
    path.write_bytes(pcap_header(linktype=0x10000001) + pcap_record(b"y" * 60, 10**9, False))
    got, _ = read_with(path, [HUGE])
    assert [g[0] for g in got] == [b"y" * 60]


@pytest.mark.parametrize("index", [0, 1, 20, 40])
@pytest.mark.parametrize("order", ["<", ">"])
def test_error_caplen_too_large_names_offset(tmp_path, index, order):
    frames = [bytes([i]) * (60 if i < 30 else 70) for i in range(45)]
    path = tmp_path / "damaged.pcap"
    offset = 24 + sum(16 + len(f) for f in frames[:index])
    with open(path, "wb") as f:
        f.write(pcap_header(order))
        for i, fr in enumerate(frames):
            f.write(pcap_record(fr, 10**9 + i, False, order=order,
                                caplen=MAX_CAPLEN + 1 if i == index else None))
    msg = _open_error(path)
    assert f"offset {offset}" in msg
    assert str(MAX_CAPLEN + 1) in msg


def test_caplen_max_is_accepted(tmp_path):
    frame = bytes(random.Random(1).randbytes(MAX_CAPLEN))
    path = tmp_path / "max.pcap"
    write_by_hand(path, [(frame, MAX_CAPLEN, 10**9), (b"z" * 60, 60, 2 * 10**9)])
    got, _ = read_with(path, [1])
    assert [g[0] for g in got] == [frame, b"z" * 60]


def test_error_missing_file(tmp_path):
    path = tmp_path / "nope" / "port0.pcap"
    msg = _open_error(path)
    assert "No such file" in msg or "cannot open" in msg


def test_error_directory(tmp_path):
    _open_error(tmp_path)


@pytest.mark.parametrize("cut", [1, 8, 15, 16, 17, 16 + 59])
@pytest.mark.parametrize("n_before,size", [(0, 60), (3, 60), (40, 100), (40, 0), (25, 1600)])
@pytest.mark.parametrize("plan", [[1], [7], [HUGE]])
def test_last_record_cut_short(tmp_path, cut, n_before, size, plan):
    rng = random.Random(f"cut/{cut}/{n_before}/{size}")
    recs = random_records(rng, [size] * n_before, nano=False)
    path = tmp_path / "cut.pcap"
    write_by_hand(path, recs)
    complete_size = path.stat().st_size
    last = pcap_record(b"\x5a" * 60, 5 * 10**9, False)
    with open(path, "ab") as f:
        f.write(last[:cut])
    got, reader = read_with(path, plan)
    assert_same_records(got, expected(recs))
    assert reader.truncated_at == complete_size


# ---------------------------------------------------------------------------------------
# arbitrary bytes after a valid header
# ---------------------------------------------------------------------------------------
def _structured_tail():
    """Records that are partly plausible: small caplens, occasionally huge or cut."""
    record = st.tuples(st.one_of(st.integers(0, 300), st.sampled_from([MAX_CAPLEN, MAX_CAPLEN + 1, 2**32 - 1])),
                       st.integers(0, 2**32 - 1), st.binary(max_size=300))

    def build(recs):
        out = b""
        for cap, wire, body in recs:
            n = min(cap, 600)   # a huge caplen gets a cut-short body (the file just ends)
            out += struct.pack("<IIII", 1, 2, cap, wire) + (body * (n // max(len(body), 1) + 1))[:n]
        return out
    return st.lists(record, max_size=40).map(build)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tail=st.one_of(st.binary(max_size=3000), _structured_tail(),
                      st.tuples(_structured_tail(), st.binary(max_size=40)).map(lambda t: t[0] + t[1])),
       order=st.sampled_from("<>"), plan=batch_plans)
def test_arbitrary_bytes_after_header(tail, order, plan):
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "fuzz.pcap"
        path.write_bytes(pcap_header(order) + tail)
        try:
            reader = open_offline(path)
        except SimError:
            raise AssertionError("a valid header was rejected")
        total = 0
        consumed = 24
        reads = 0
        try:
            i = 0
            while True:
                want = plan[i % len(plan)]
                i += 1
                b = reader.read(want)
                reads += 1
                assert reads <= len(tail) // 16 + 3, "reading does not terminate"
                for cap in b.caplen.tolist():
                    assert 0 <= cap <= MAX_CAPLEN
                    consumed += 16 + cap
                batch_records(b)
                total += len(b)
                if len(b) < want:
                    break
        except SimError as err:
            assert "\n" not in str(err) and str(path) in str(err)
            return
        finally:
            reader.close()
        # no error: the records tile the file, and any leftover is reported as truncated
        size = 24 + len(tail)
        assert consumed <= size
        if consumed < size:
            assert reader.truncated_at == consumed
        else:
            assert reader.truncated_at is None


def test_write_at_places_every_byte_of_many_parts(tmp_path):
    """--jobs writes a chunk's records at its offset: more parts than one pwritev takes,
    of mixed sizes, land exactly there and nowhere else."""
    import os
    import random

    from l3fwd_sim.capture.pcap import _write_at
    rng = random.Random(5)
    parts = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))) for _ in range(3000)]
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    with open(path, "r+b") as file:
        _write_at(file.fileno(), [np.frombuffer(p, np.uint8) if i % 2 else memoryview(p) for i, p in enumerate(parts)], 50)
        os.fsync(file.fileno())
    data = b"".join(parts)
    assert path.read_bytes() == b"x" * 50 + data


@settings(max_examples=30, deadline=None)
@given(size=st.integers(0, 100), rounds=st.integers(1, 4), burst=st.integers(16, 40), queues=st.integers(1, 3),
       seed=st.integers(0, 2**32))
def test_short_fixed_records_pad_where_laid_out(tmp_path_factory, size, rounds, burst, queues, seed):
    """A run of equal short frames comes as the records themselves; laid out into every
    ``queues``-th burst of a larger array (the polling interleave) they are the rows
    scapy's bytes give, zero-padded — the same as the batch's own ``rows``."""
    rng = random.Random(seed)
    n = rounds * burst
    recs = random_records(rng, [size] * n, False)
    path = tmp_path_factory.mktemp("pad") / "x.pcap"
    write_with_scapy(path, recs, False)
    reader = PcapReader(path)
    batch = reader.read(n)
    assert batch.records.shape == (n, 16 + min(size, HEAD_BYTES))      # not padded by the reader
    out = np.full((rounds, queues, burst, 16 + HEAD_BYTES), 0xEE, np.uint8)
    batch.copy_rows(out[:, queues - 1])
    assert np.array_equal(out[:, queues - 1].reshape(n, -1), batch.rows)
    assert (out[:, :queues - 1] == 0xEE).all()
    for row, (frame, *_rest) in zip(batch.rows, scapy_records(path)):
        assert bytes(row[16:16 + min(size, HEAD_BYTES)]) == frame[:HEAD_BYTES] and not row[16 + size:].any()
    reader.close()
