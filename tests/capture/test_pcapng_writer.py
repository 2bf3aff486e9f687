"""The pcapng writer (``capture/pcapng_writer.py``) read back by scapy (an independent
pcapng reader) and by our own reader; offsets reserved for ``--jobs``; time stamps past
2106 through the reader; PortOutputs' abort and the ``--output-format`` choice."""
from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from scapy.utils import RawPcapNgReader

from l3fwd_sim import compiled
from l3fwd_sim.capture import kernels
from l3fwd_sim.capture.offline import open_offline
from l3fwd_sim.capture.pcapng_writer import PcapngWriter
from l3fwd_sim.capture.records import HEAD_BYTES, RECORD_ROW, record_headers
from l3fwd_sim.capture.writers import PortOutputs, output_format
from l3fwd_sim.errors import SimError
from twins import KERNELS

T2106 = (1 << 32) * 10**9          # the first nanosecond a classic pcap cannot hold


def packets(seed: int, n: int, late: bool = False):
    """(frames, wire lengths, ns time stamps): sizes around HEAD_BYTES and the 4-byte
    padding, stamps rising (past 2106 when ``late``)."""
    rng = random.Random(seed)
    frames = [rng.randbytes(rng.choice([0, 1, 3, 14, 60, 63, 64, 65, 66, 67, 300, 1514])) for _ in range(n)]
    wire = [len(f) + rng.choice([0, 4]) for f in frames]
    start = T2106 - 5 * 10**9 if late else 1_700_000_000 * 10**9
    stamps = np.cumsum([rng.randrange(0, 3 * 10**9) for _ in range(n)]) + start
    return frames, np.array(wire, np.int64), stamps.astype(np.int64)


def tails_of(frames) -> list[bytes]:
    return [f[HEAD_BYTES:] for f in frames if len(f) > HEAD_BYTES]


def heads_and_tails(frames):
    heads = np.zeros((len(frames), HEAD_BYTES), np.uint8)
    for i, f in enumerate(frames):
        heads[i, :min(len(f), HEAD_BYTES)] = np.frombuffer(f[:HEAD_BYTES], np.uint8)
    return heads, np.array([len(f) for f in frames], np.int64), tails_of(frames)


def blocks(data: bytes) -> list[tuple[int, bytes]]:
    """(type, body) of every block of a little-endian pcapng, checking each trailer."""
    out, pos = [], 0
    while pos < len(data):
        btype, length = struct.unpack_from("<II", data, pos)
        assert length % 4 == 0 and struct.unpack_from("<I", data, pos + length - 4)[0] == length
        out.append((btype, data[pos + 8:pos + length - 4]))
        pos += length
    assert pos == len(data)
    return out


def options(body: bytes) -> dict[int, bytes]:
    found, pos = {}, 0
    while pos + 4 <= len(body):
        code, length = struct.unpack_from("<HH", body, pos)
        if code == 0:
            break
        found[code] = body[pos + 4:pos + 4 + length]
        pos += 4 + length + (-length % 4)
    return found


def scapy_read(path):
    """(frame, wire length, ticks, if_name, ticks per second) per packet, by scapy."""
    with RawPcapNgReader(str(path)) as reader:
        return [(bytes(data), meta.wirelen, meta.tshigh << 32 | meta.tslow, meta.ifname, meta.tsresol)
                for data, meta in reader]


def our_read(path):
    reader = open_offline(path)
    try:
        got = []
        while len(batch := reader.read(7)):
            got += [(bytes(batch.block[o:o + c]), int(w), int(t)) for o, c, w, t in
                    zip(batch.offsets, batch.caplen, batch.wirelen, batch.ts_ns)]
        return got
    finally:
        reader.close()


@pytest.mark.parametrize("nanosecond", [True, False])
@pytest.mark.parametrize("late", [False, True])
def test_scapy_reads_what_the_writer_wrote(tmp_path, nanosecond, late):
    frames, wire, stamps = packets(1, 300, late)
    path = tmp_path / "port3.pcapng"
    writer = PcapngWriter(path, nanosecond, "port3")
    heads, caplen, _ = heads_and_tails(frames)
    for a, b in ((0, 100), (100, 300)):
        writer.write(heads[a:b], caplen[a:b], wire[a:b], stamps[a:b], tails_of(frames[a:b]))
    writer.commit()
    data = path.read_bytes()
    kinds = [btype for btype, _ in blocks(data)]
    assert kinds == [0x0A0D0D0A, 1] + [6] * len(frames)          # one SHB, one IDB, an EPB per packet
    idb = blocks(data)[1][1]
    assert struct.unpack_from("<HHI", idb) == (1, 0, 262144)
    assert options(idb[8:]) == {2: b"port3", 9: bytes([9 if nanosecond else 6])}
    assert writer.header_bytes == len(data) - PcapngWriter.record_bytes(caplen)
    scale = 1 if nanosecond else 1000
    got = scapy_read(path)
    assert [g[:3] for g in got] == [(f, w, t // scale) for f, w, t in zip(frames, wire.tolist(), stamps.tolist())]
    assert {(g[3], g[4]) for g in got} == {(b"port3", 10**9 if nanosecond else 10**6)}
    # our reader takes the stamps past 2106 back whole
    assert our_read(path) == [(f, w, t // scale * scale) for f, w, t in zip(frames, wire.tolist(), stamps.tolist())]


def rows_of(frames, wire, stamps, nanosecond):
    heads, caplen, tails = heads_and_tails(frames)
    rows = np.zeros((len(frames), RECORD_ROW), np.uint8)
    rows[:, 16:] = heads
    record_headers(rows, caplen, wire, stamps, nanosecond)
    return rows, caplen, tails, stamps // 10**9 >> 32


def test_rows_at_reserved_offsets_equal_appends(tmp_path):
    """What ``--jobs`` does: chunks written at offsets reserved by their byte sizes, last
    chunk first, give the file that appending them in order gives."""
    frames, wire, stamps = packets(2, 240, late=True)
    rows, caplen, _, high = rows_of(frames, wire, stamps, True)
    chunks = [(0, 17), (17, 18), (18, 100), (100, 240)]

    def write(path, reserved: bool) -> bytes:
        writer = PcapngWriter(path, True, "port0")
        writer.flush()
        at, offsets = writer.header_bytes, []
        for a, b in chunks:
            offsets.append(at)
            at += writer.record_bytes(caplen[a:b])
        for k in (reversed(range(len(chunks))) if reserved else range(len(chunks))):
            a, b = chunks[k]
            writer.write_rows(rows[a:b], caplen[a:b], offsets[k] if reserved else None, high[a:b],
                              tails_of(frames[a:b]) or None)
        writer.commit()
        assert path.stat().st_size == at
        return path.read_bytes()

    assert write(tmp_path / "reserved.pcapng", True) == write(tmp_path / "appended.pcapng", False)
    assert [g[:3] for g in scapy_read(tmp_path / "reserved.pcapng")] == list(zip(frames, wire.tolist(),
                                                                                  stamps.tolist()))


def test_fixed_size_rows_narrower_than_a_row(tmp_path):
    """Short fixed-size frames come as their records (16 + caplen wide), as PortOutputs
    hands them over."""
    frames = [bytes([i]) * 61 for i in range(50)]
    wire = np.full(50, 65, np.int64)
    stamps = 1_700_000_000 * 10**9 + np.arange(50, dtype=np.int64) * 1000
    rows, caplen, _, _ = rows_of(frames, wire, stamps, False)
    path = tmp_path / "fixed.pcapng"
    writer = PcapngWriter(path, False, "port1")
    writer.write_rows(np.ascontiguousarray(rows[:, :16 + 61]), caplen)
    writer.commit()
    assert [g[:3] for g in scapy_read(path)] == list(zip(frames, wire.tolist(), (stamps // 1000).tolist()))


def test_scan_blocks_twins_agree(tmp_path):
    frames, wire, stamps = packets(4, 500)
    path = tmp_path / "walk.pcapng"
    writer = PcapngWriter(path, True)
    heads, caplen, tails = heads_and_tails(frames)
    writer.write(heads, caplen, wire, stamps, tails)
    writer.commit()
    data = np.fromfile(path, np.uint8)
    found = []
    for choice in KERNELS:
        with compiled.using(choice):
            out = np.zeros(len(data) // 12, np.int64)
            n = kernels.scan_blocks(data, 0, len(data) - 5, out)     # the last block cut: not counted
            found.append(out[:n].tolist())
    assert found[0] == found[1] and len(found[0]) == 2 + len(frames) - 1


def test_reader_keeps_seconds_past_2106_only_where_needed(tmp_path):
    """Batches of a capture before 2106 carry no high seconds; past it, the rows keep
    the low 32 bits and ``seconds_high`` the rest."""
    frames, wire, _ = packets(5, 200)
    stamps = T2106 - 100 * 10**9 + np.arange(200, dtype=np.int64) * 10**9 + 7     # 2106 at packet 100
    path = tmp_path / "late.pcapng"
    writer = PcapngWriter(path, True)
    heads, caplen, tails = heads_and_tails(frames)
    writer.write(heads, caplen, wire, stamps, tails)
    writer.commit()
    reader = open_offline(path)
    try:
        batches = []
        while len(batch := reader.read(16)):
            batches.append((batch.seconds_high, batch.ts_ns.copy()))
    finally:
        reader.close()
    assert np.concatenate([ts for _, ts in batches]).tolist() == stamps.tolist()
    early = [high for high, ts in batches if ts.max() < T2106]
    assert early and all(high is None for high in early)
    assert all(high is not None and (high == ts // 10**9 >> 32).all() for high, ts in batches if ts.max() >= T2106)


def test_port_outputs_abort_every_writer(tmp_path):
    outputs = PortOutputs(tmp_path, [0, 1, 2], False, "port{port}.pcapng", "pcapng")
    aborted = []

    def failing(writer):
        def abort():
            aborted.append(writer.path.name)
            original()
            raise OSError("disk gone")
        original = writer.abort
        return abort
    outputs.writers[0].abort = failing(outputs.writers[0])
    outputs.writers[1].abort = failing(outputs.writers[1])
    with pytest.raises(OSError, match="disk gone"):
        outputs.abort()
    assert aborted == ["port0.pcapng", "port1.pcapng"]
    assert list(tmp_path.iterdir()) == []                   # port2's temporary file went too


def test_output_format_choice():
    assert output_format("auto", ["pcapng", "pcapng"]) == "pcapng"
    assert output_format("auto", ["pcapng", "pcap"]) == "pcap"
    assert output_format("auto", []) == "pcap"
    assert output_format("pcap", ["pcapng"]) == "pcap"
    assert output_format("pcapng", ["pcap"]) == "pcapng"
    with pytest.raises(SimError, match="--output-format"):
        output_format("pcapng2", [])
