"""Input formats and damaged inputs (issue 7): pcapng, gzip, the FCS bits, converted
link types, libpcap's snaplen rule, damaged files through ``run``, Ctrl-C, and property
tests through both pipelines and every lookup.

Oracles are independent of the package: files are written by scapy or by hand with
``struct`` (the expected records are what the test put in them), timestamps are
converted with plain integer arithmetic, and pcapng files are compared with classic
pcap files holding the same frames.
"""
from __future__ import annotations

import functools
import gzip
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapNgWriter, RawPcapNgReader, RawPcapReader
from frames import HUGE, mixed_frames, read_all, read_pcap_frames, well_formed_frames, write_pcap
from handmade import EDITS, UNITS, Ng, classic, damage, pcapng_files, to_ns, valid_capture

from forwarding import REPO

from l3fwd_sim import RunOptions, hold, run
from l3fwd_sim.errors import SimError
from l3fwd_sim.capture.offline import open_offline
from l3fwd_sim.capture.records import HEAD_BYTES, MAX_CAPLEN
from l3fwd_sim.capture.pcapng import PcapngReader

PLANS = ([HUGE], [1], [7, 64], [1000, 3])
T0 = 1_700_000_000 * 10**9
CONSOLE = Path(sys.executable).parent / "l3fwd-sim"
def quick(max_examples: int):
    return settings(max_examples=max_examples, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


# ---------------------------------------------------------------------------------------
# reading helpers
# ---------------------------------------------------------------------------------------
def one_line_error(path, func=None) -> str:
    with pytest.raises(SimError) as info:
        (func or read_all)(path)
    msg = str(info.value)
    assert "\n" not in msg and str(path) in msg
    return msg


# ---------------------------------------------------------------------------------------
# pcapng written by scapy reads like the same frames in classic pcap
# ---------------------------------------------------------------------------------------
@quick(40)
@given(packets=st.lists(st.tuples(st.binary(max_size=300), st.integers(0, 3), st.integers(0, 10**12 - 1),
                                  st.sampled_from([None, b"eth1", b"eth2"])), max_size=60),
       plan=st.sampled_from(PLANS))
def test_scapy_pcapng_reads_like_classic_pcap(packets, plan):
    with tempfile.TemporaryDirectory() as d:
        ng, cl = Path(d) / "a.pcapng", Path(d) / "a.pcap"
        w = PcapNgWriter(str(ng))
        w.write_header(Ether())                              # linktype 1; IDBs follow per interface name
        for data, extra, us, ifname in packets:
            pkt = Raw(load=data)
            pkt.sniffed_on = ifname                          # a new ifname: scapy writes another IDB
            pkt.comments = [b"hello"] if extra == 3 else None
            w.write_packet(pkt, sec=Decimal(1_600_000_000) + Decimal(us) / 10**6, wirelen=len(data) + extra)
        w.close()
        # the EPBs' tick values as scapy wrote them (µs, scapy's default resolution)
        with RawPcapNgReader(str(ng)) as r:
            theirs = [(bytes(p), m.wirelen, (m.tshigh << 32 | m.tslow) * 1000) for p, m in r]
        assert [t[0] for t in theirs] == [p[0] for p in packets]
        Path(cl).write_bytes(classic(theirs))
        got_ng, reader = read_all(ng, plan)
        got_cl, _ = read_all(cl, plan)
        assert got_ng == got_cl == theirs
        assert isinstance(reader, PcapngReader) and not reader.nanosecond


# ---------------------------------------------------------------------------------------
# hand-made pcapng: sections in both byte orders, several interfaces, if_tsresol,
# if_tsoffset, EPB / PB / SPB, skipped blocks
# ---------------------------------------------------------------------------------------
@quick(150)
@given(case=pcapng_files(), plan=st.sampled_from(PLANS))
def test_handmade_pcapng_reads_like_classic_pcap(case, plan):
    data, want = case
    with tempfile.TemporaryDirectory() as d:
        ng, cl = Path(d) / "b.pcapng", Path(d) / "b.pcap"
        ng.write_bytes(data)
        cl.write_bytes(classic(want))
        got, reader = read_all(ng, plan)
        assert got == want
        assert read_all(cl, plan)[0] == want
        assert reader.truncated_at is None and reader.cut_short() is None


def test_scapy_counts_handmade_pcapng(tmp_path):
    """scapy's pcapng reader agrees on the packet count and bytes of a multi-interface,
    single-section file (scapy keeps interfaces across sections, so one section)."""
    ng = Ng("<")
    rng = random.Random(3)
    frames = [rng.randbytes(rng.randrange(0, 300)) for _ in range(200)]
    blocks = [ng.shb(), ng.idb(tsresol=9), ng.idb(tsresol=0x80 | 20), ng.block(4, bytes(8))]
    for i, f in enumerate(frames):
        blocks.append(ng.epb(i % 2, T0 // 1000 + i, f) if i % 7 else ng.block(5, bytes(20)) + ng.epb(0, i, f))
    path = tmp_path / "c.pcapng"
    path.write_bytes(b"".join(blocks))
    with RawPcapNgReader(str(path)) as r:
        theirs = [bytes(p) for p, _ in r]
    assert [g[0] for g in read_all(path)[0]] == theirs == frames


def test_pcapng_nanosecond_resolution_gives_nanosecond_outputs(tmp_path):
    ng = Ng()
    path = tmp_path / "port0.pcapng"
    frames = well_formed_frames(1, 0, 20)
    path.write_bytes(ng.shb() + ng.idb(tsresol=9) +
                     b"".join(ng.epb(0, T0 + 7 * i, f) for i, f in enumerate(frames)))
    reader = open_offline(path)
    assert reader.nanosecond and reader.format == "pcapng"
    reader.close()
    run(RunOptions(inputs={0: path}, outdir=tmp_path / "out", portmask=0x3, output_format="pcap"))
    with RawPcapReader(str(tmp_path / "out" / "port1.pcap")) as r:
        assert r.nano
        stamps = [m.sec * 10**9 + m.usec for _, m in r]
    assert stamps and set(stamps) <= {T0 + 7 * i for i in range(20)}


def test_same_size_epb_runs_are_taken_in_bulk_and_read_right(tmp_path, monkeypatch):
    """Long runs of equal EPBs go through the strided fast path; runs broken by another
    interface, a block type, a size, a time-stamp resolution needing the walk, or time
    stamps near the limits read exactly as the walk reads them."""
    taken = []
    original = PcapngReader._take_fixed_run

    def spy(self, limit, parts):
        n = original(self, limit, parts)
        taken.append(n)
        return n
    monkeypatch.setattr(PcapngReader, "_take_fixed_run", spy)
    rng = random.Random(11)
    ng = Ng(">")
    blocks = [ng.shb(), ng.idb(tsresol=9), ng.idb(tsresol=0x80 | 20), ng.idb(tsresol=3, tsoffset=3)]
    want = []
    ticks = T0
    for run_no in range(40):
        size = rng.choice([60, 64, 65, 100, 1514])
        ifid = rng.choice([0, 0, 1, 2])
        units = [10**9, 2**20, 10**3][ifid]
        off = 3 if ifid == 2 else 0
        for _ in range(rng.choice([1, 5, 16, 17, 300])):
            ticks += rng.randrange(1, 10**6)
            t = ticks if ifid == 0 else ticks // 10**9 * units + ticks % units
            data = rng.randbytes(size)
            blocks.append(ng.epb(ifid, t, data, wire=size + 4))
            want.append((data, size + 4, to_ns(t, units, off)))
        if rng.random() < 0.2:
            blocks.append(ng.block(5, bytes(16)))
    for t in (0, 10**9 - 1, (1 << 32) * 10**9 - 1):     # near the limits: the walk checks them
        blocks += [ng.epb(0, t, b"\x01" * 60)] * 20
        want += [(b"\x01" * 60, 60, t)] * 20
    path = tmp_path / "runs.pcapng"
    path.write_bytes(b"".join(blocks))
    for plan in PLANS:
        assert read_all(path, plan)[0] == want
    assert max(taken) >= 16, "the strided path was never used"


# ---------------------------------------------------------------------------------------
# pcapng errors: one line naming the file (and offset, interface, link type)
# ---------------------------------------------------------------------------------------
def _ng_cases():
    le, be = Ng("<"), Ng(">")
    head = le.shb() + le.idb()
    epb = le.epb(0, 1, b"x" * 60)
    bad_trailer = epb[:-4] + struct.pack("<I", len(epb) + 4)
    return {
        "radiotap-interface": (le.shb() + le.idb() + le.idb(linktype=127, name="wlan0") + epb,
                               ["interface 1", "'wlan0'", "link type 127", "radiotap"]),
        "packet-before-idb": (le.shb() + epb, ["interface 0", "describes 0"]),
        "interface-out-of-range": (head + le.epb(3, 1, b"y" * 60), ["interface 3"]),
        "spb-without-idb": (le.shb() + le.spb(b"z" * 60), ["interface 0"]),
        "new-section-forgets-interfaces": (head + epb + be.shb() + be.epb(0, 1, b"y" * 60), ["interface 0"]),
        "bad-byte-order-magic": (head + epb + struct.pack("<III", 0x0A0D0D0A, 28, 0x11223344) + bytes(16),
                                 ["byte-order"]),
        "length-not-multiple-of-4": (head + struct.pack("<II", 6, 33) + bytes(25), ["length 33"]),
        "length-below-12": (head + struct.pack("<III", 6, 8, 8), ["length 8"]),
        "trailer-mismatch": (head + bad_trailer, ["trailer"]),
        "caplen-absurd": (head + epb + le.epb(0, 2, b"q" * 60, cap=MAX_CAPLEN + 1),
                          [f"offset {len(head) + len(epb)}", str(MAX_CAPLEN + 1)]),
        "caplen-beyond-block": (head + le.epb(0, 2, b"q" * 60, cap=200), ["does not fit"]),
        "version-2": (le.shb(major=2), ["version 2"]),
        "tsresol-too-fine": (le.shb() + le.idb(tsresol=20) + epb, ["10^-20"]),
        "tsresol-2-too-fine": (le.shb() + le.idb(tsresol=0x80 | 64) + epb, ["2^-64"]),
        "time-after-2262": (le.shb() + le.idb(tsresol=0) + le.epb(0, 1 << 34, b"t" * 60), ["time stamp", "2262"]),
        "time-before-1970": (le.shb() + le.idb(tsoffset=-10) + le.epb(0, 10**6, b"t" * 60), ["time stamp"]),
        "first-block-incomplete": (le.shb()[:20], ["Section Header Block"]),
    }


@pytest.mark.parametrize("name", list(_ng_cases()))
def test_pcapng_errors(tmp_path, name):
    data, needles = _ng_cases()[name]
    path = tmp_path / f"{name}.pcapng"
    path.write_bytes(data)
    msg = one_line_error(path)
    for needle in needles:
        assert needle in msg, msg


@pytest.mark.parametrize("order", "<>")
@pytest.mark.parametrize("cut", [1, 4, 11, 12, 30, 60])
def test_pcapng_cut_short_inside_a_block(tmp_path, order, cut):
    ng = Ng(order)
    frames = [bytes([i]) * (60 + i % 3) for i in range(40)]
    good = ng.shb() + ng.idb() + b"".join(ng.epb(0, i, f) for i, f in enumerate(frames))
    last = ng.epb(0, 99, b"\xee" * 64)
    path = tmp_path / "cut.pcapng"
    path.write_bytes(good + last[:cut])
    got, reader = read_all(path, [7])
    assert [g[0] for g in got] == frames
    assert reader.truncated_at == len(good)
    assert str(len(good)) in reader.cut_short() and str(path) in reader.cut_short()


def test_megabytes_of_skipped_blocks_between_packets(tmp_path):
    """Skipped blocks are dropped from the read buffer as the reader goes (it stays at
    its usual size); packets around them and byte offsets after them stay right."""
    ng = Ng()
    frames = [bytes([i]) * 60 for i in range(41)]
    good = (ng.shb() + ng.idb() + ng.epb(0, 1, frames[0]) + ng.block(5, bytes(20)) * 300_000 +
            b"".join(ng.epb(0, 2 + i, f) for i, f in enumerate(frames[1:])) + ng.block(0xBAD, bytes(100)) * 20_000)
    path = tmp_path / "skips.pcapng"
    path.write_bytes(good + ng.epb(0, 9, b"x" * 60)[:30])
    assert len(good) > 8 << 20                     # more than the read buffer
    for plan in ([1000], [1]):
        got, reader = read_all(path, plan)
        assert [g[0] for g in got] == frames and reader.truncated_at == len(good)
        assert len(reader._buf) <= (8 << 20) + HEAD_BYTES, "the read buffer grew"
    path.write_bytes(good + ng.epb(0, 9, b"x" * 60, cap=MAX_CAPLEN + 1))
    assert f"offset {len(good)}:" in one_line_error(path)


# ---------------------------------------------------------------------------------------
# gzip
# ---------------------------------------------------------------------------------------
def test_gzip_inputs_are_recognised_by_their_magic(tmp_path):
    rng = random.Random(5)
    recs = [(rng.randbytes(rng.randrange(0, 200)), 300, T0 + i) for i in range(3000)]
    recs += [(b"\x42" * 64, 64, T0 + 10**6 + i) for i in range(500)]       # a fixed-size run
    ng = Ng()
    plain = {"pcap": classic(recs), "pcapng": ng.shb() + ng.idb(tsresol=9) +
             b"".join(ng.epb(0, ts, f, wire=w) for f, w, ts in recs)}
    for fmt, data in plain.items():
        for name in (f"x.{fmt}.gz", f"x.{fmt}"):          # the name does not matter
            path = tmp_path / name
            path.write_bytes(gzip.compress(data, mtime=0))
            got, reader = read_all(path, [1000, 7])
            assert got == recs
            assert reader.format == f"{fmt} (gzip)"
        path = tmp_path / f"plain.{fmt}.gz"                # nor does a .gz name on plain data
        path.write_bytes(data)
        assert read_all(path)[0] == recs
        # several gzip members (concatenated .gz files) and zero padding, as gzip -d reads them
        third = len(data) // 3
        path.write_bytes(b"".join(gzip.compress(data[a:b], mtime=0) for a, b in
                                  ((0, third), (third, 2 * third), (2 * third, None))) + bytes(700))
        got, reader = read_all(path)
        assert got == recs and reader.cut_short() is None


def test_gzip_cut_short_keeps_every_complete_record(tmp_path):
    recs = [(bytes([i % 256]) * 100, 100, T0 + i) for i in range(2000)]
    packed = gzip.compress(classic(recs), mtime=0)
    path = tmp_path / "cut.pcap.gz"
    for keep in (len(packed) // 2, len(packed) - 8, len(packed) - 1):
        path.write_bytes(packed[:keep])
        got, reader = read_all(path)
        assert got == recs[:len(got)]
        assert reader.truncated_at == 24 + 116 * len(got) and "uncompressed" in reader.cut_short()


def test_damaged_gzip_is_a_sim_error(tmp_path):
    packed = bytearray(gzip.compress(classic([(b"\x01" * 60, 60, T0)] * 500), mtime=0))
    for i in range(30, len(packed) - 8, 7):
        packed[i] ^= 0x5A
    path = tmp_path / "bad.pcap.gz"
    path.write_bytes(bytes(packed))
    one_line_error(path)
    path.write_bytes(b"\x1f\x8b" + bytes(30))         # gzip magic, nonsense header
    one_line_error(path)


def test_run_on_gzip_input(tmp_path):
    frames = _mixed(2, 0, 300)
    write_pcap(tmp_path / "a.pcap", frames)
    (tmp_path / "a.pcap.gz").write_bytes(gzip.compress((tmp_path / "a.pcap").read_bytes()))
    outs = []
    for name in ("a.pcap", "a.pcap.gz"):
        run(RunOptions(inputs={0: tmp_path / name}, outdir=tmp_path / name.replace(".", "-"), portmask=0xF))
        outs.append([read_pcap_frames(tmp_path / name.replace(".", "-") / f"port{p}.pcap") for p in range(4)])
    assert outs[0] == outs[1] and sum(map(len, outs[0])) > 0


# ---------------------------------------------------------------------------------------
# FCS bits of the classic header; libpcap's snaplen rule
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("order", "<>")
def test_fcs_present_bits_strip_the_fcs(tmp_path, order):
    """Link-type field 0x24000001: P bit set, FCS length 2 x 16 bits = 4 bytes."""
    rng = random.Random(9)
    cases = [(rng.randbytes(n), wire) for n, wire in
             [(64, 64), (68, 68), (1518, 1518), (100, 1518), (1516, 1518), (1515, 1518), (3, 3), (0, 2), (60, 70)]]
    recs = [(data, wire, T0 + i) for i, (data, wire) in enumerate(cases)]
    path = tmp_path / "fcs.pcap"
    path.write_bytes(classic(recs, order, linktype=0x24000001))
    want = []
    for data, wire, ts in recs:
        body_end = max(len(data), wire) - 4           # where the FCS starts
        want.append((data[:max(0, min(len(data), body_end))], max(0, wire - 4), ts))
    for plan in PLANS:
        assert read_all(path, plan)[0] == want
    # FCS-length bits without the P bit: the length is unknown, nothing is stripped
    path.write_bytes(classic(recs, order, linktype=0x20000001))
    assert read_all(path)[0] == recs


def test_fcs_capture_forwards_like_the_same_frames_without_fcs(tmp_path):
    frames = well_formed_frames(4, 0, 200)
    with_fcs = [(f + b"\xde\xad\xbe\xef", len(f) + 4, T0 + i) for i, f in enumerate(frames)]
    without = [(f, len(f), T0 + i) for i, f in enumerate(frames)]
    (tmp_path / "fcs.pcap").write_bytes(classic(with_fcs, linktype=0x24000001))
    (tmp_path / "plain.pcap").write_bytes(classic(without))
    results = []
    for name in ("fcs", "plain"):
        stats = run(RunOptions(inputs={0: tmp_path / f"{name}.pcap"}, outdir=tmp_path / name, portmask=0xF))
        with RawPcapReader(str(tmp_path / name / "port1.pcap")) as r:
            results.append(([bytes(p) for p, _ in r], stats["totals"]))
    assert results[0] == results[1] and results[0][1]["tx"] > 0


@pytest.mark.parametrize("order", "<>")
def test_caplen_above_snaplen_is_cut_to_the_snaplen(tmp_path, order):
    """libpcap (sf-pcap.c) hands net_pcap at most snaplen bytes and keeps the wire length."""
    rng = random.Random(2)
    recs = [(rng.randbytes(n), n + 10, T0 + i) for i, n in enumerate([10, 96, 97, 200, 1500] * 10)]
    path = tmp_path / "snap.pcap"
    path.write_bytes(classic(recs, order, snaplen=96))
    for plan in PLANS:
        assert read_all(path, plan)[0] == [(d[:96], w, t) for d, w, t in recs]
    ng = Ng(order)
    path = tmp_path / "snap.pcapng"
    path.write_bytes(ng.shb() + ng.idb(snaplen=96, tsresol=9) + b"".join(ng.epb(0, t, d, w) for d, w, t in recs))
    assert read_all(path)[0] == [(d[:96], w, t) for d, w, t in recs]


# ---------------------------------------------------------------------------------------
# link types converted to Ethernet
# ---------------------------------------------------------------------------------------
def _ip_packets(seed: int, n: int) -> list[bytes]:
    return [f[14:] for f in well_formed_frames(seed, 0, n)]


def _link_header(linktype: int, ip: bytes, rng: random.Random) -> bytes:
    proto = 0x86DD if ip and ip[0] >> 4 == 6 else 0x0800
    if linktype in (101, 228, 229):
        return b""
    if linktype == 113:     # packet type, ARPHRD_ETHER, address length, address (8), protocol
        return struct.pack(">HHH8sH", rng.randrange(5), 1, 6, rng.randbytes(6) + bytes(2), proto)
    if linktype == 276:     # protocol, reserved, ifindex, ARPHRD, packet type, address length, address
        return struct.pack(">HHIHBB8s", proto, 0, rng.randrange(9), 1, 0, 6, rng.randbytes(6) + bytes(2))
    family = 2 if proto == 0x0800 else rng.choice([24, 28, 30])
    return struct.pack(">I" if linktype == 108 or rng.random() < 0.5 else "<I", family)


@pytest.mark.parametrize("linktype", [101, 228, 229, 113, 276, 0, 108])
@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
def test_converted_link_types_forward_like_ethernet(tmp_path, linktype, fmt):
    """The converted capture yields zero MACs + the EtherType + the IP packet, and
    l3fwd-sim forwards it exactly as the Ethernet capture of those frames."""
    rng = random.Random(linktype)
    ips = _ip_packets(linktype, 150)
    if linktype == 228:
        ips = [p for p in ips if p[0] >> 4 == 4]
    elif linktype == 229:
        ips = [p for p in ips if p[0] >> 4 == 6]
    recs = [(_link_header(linktype, p, rng) + p, 0, T0 + i) for i, p in enumerate(ips)]
    recs = [(d, len(d) + extra, t) for (d, _, t), extra in zip(recs, [0, 0, 0, 5] * len(recs))]
    ethers = []
    for p, (d, w, t) in zip(ips, recs):
        ethers.append((bytes(12) + (b"\x86\xdd" if p[0] >> 4 == 6 else b"\x08\x00") + p, w - len(d) + 14 + len(p), t))
    conv = tmp_path / f"conv.{fmt}"
    if fmt == "pcap":
        conv.write_bytes(classic(recs, linktype=linktype))
    else:
        ng = Ng()
        conv.write_bytes(ng.shb() + ng.idb(linktype=linktype, tsresol=9) +
                         b"".join(ng.epb(0, t, d, w) for d, w, t in recs))
    for plan in ([HUGE], [7]):
        assert read_all(conv, plan)[0] == ethers
    (tmp_path / "eth.pcap").write_bytes(classic(ethers))
    got = []
    for name in (conv.name, "eth.pcap"):
        for pipeline in ("multi", "simple"):
            out = tmp_path / f"out-{name}-{pipeline}"
            stats = run(RunOptions(inputs={0: tmp_path / name}, outdir=out, portmask=0xF, pipeline=pipeline,
                                   output_format="pcap"))
            got.append(([read_pcap_frames(out / f"port{p}.pcap") for p in range(4)], stats["totals"]))
    assert got[0] == got[2] and got[1] == got[3]
    assert got[0][1]["tx"] > 0


@pytest.mark.parametrize("linktype,header", [(113, 16), (276, 20), (0, 4)])
def test_records_shorter_than_their_link_header_are_dropped_as_truncated(tmp_path, linktype, header):
    recs = [(bytes(range(n)), n, T0 + n) for n in range(header)]
    path = tmp_path / "short.pcap"
    path.write_bytes(classic(recs, linktype=linktype))
    got, _ = read_all(path)
    assert [len(g[0]) for g in got] == [max(0, n + 14 - header) for n in range(header)]
    for pipeline in ("multi", "simple"):
        stats = run(RunOptions(inputs={0: path}, outdir=tmp_path / pipeline, pipeline=pipeline))
        assert stats["totals"]["rx"] == header and stats["drops"]["truncated"] == header


# ---------------------------------------------------------------------------------------
# damaged inputs through run(): no partial outputs, warnings counted, empty inputs
# ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def _mixed(seed: int, port: int, n: int) -> list[bytes]:
    return mixed_frames(seed, port, n)


def _out_files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


@pytest.mark.parametrize("fmt", ["pcap", "pcapng"])
@pytest.mark.parametrize("pipeline,jobs", [("multi", 1), ("simple", 1), ("multi", 2)])
def test_absurd_caplen_leaves_no_output(tmp_path, fmt, pipeline, jobs):
    """The damage lies far into the file (super-bursts were already written): the run
    ends with a SimError naming the offset and every output is removed."""
    good = [(f, len(f), T0 + i) for i, f in enumerate(_mixed(5, 0, 1000) * 3)]
    ng = Ng()
    if fmt == "pcap":
        data = classic(good, nano=False)
        damaged = data + struct.pack("<IIII", 2, 0, MAX_CAPLEN + 1, 70) + bytes(70)
    else:
        data = ng.shb() + ng.idb() + b"".join(ng.epb(0, t // 1000, f) for f, _, t in good)
        damaged = data + ng.epb(0, 5, bytes(70), cap=MAX_CAPLEN + 1)
    (tmp_path / "bad").write_bytes(damaged + classic(good)[24:])
    write_pcap(tmp_path / "good.pcap", _mixed(5, 1, 500))
    out = tmp_path / "out"
    with pytest.raises(SimError) as info:
        run(RunOptions(inputs={0: tmp_path / "bad", 2: tmp_path / "good.pcap"}, outdir=out, portmask=0xF,
                       pipeline=pipeline, chunk_packets=256, jobs=jobs))
    assert f"offset {len(data)}" in str(info.value) and "bad" in str(info.value)
    assert _out_files(out) == []


def test_cut_short_input_warns_once_and_is_counted(tmp_path):
    frames = _mixed(6, 0, 400)
    write_pcap(tmp_path / "full.pcap", frames)
    data = (tmp_path / "full.pcap").read_bytes()
    (tmp_path / "cut.pcap").write_bytes(data[:-10])
    for jobs in (1, 3):
        out = tmp_path / f"out{jobs}"
        stats = run(RunOptions(inputs={0: tmp_path / "cut.pcap", 1: tmp_path / "full.pcap"}, outdir=out, jobs=jobs))
        assert stats["records_cut_short"] == {"0": 1}
        assert stats["ports"]["0"]["rx"] == 399 and stats["ports"]["1"]["rx"] == 400
        warnings = [w for w in stats["warnings"] if "cut.pcap" in w]
        assert len(warnings) == 1 and f"offset {len(data) - 16 - len(frames[-1])}" in warnings[0]
        assert json.loads((out / "stats.json").read_text())["records_cut_short"] == {"0": 1}
    stats = run(RunOptions(inputs={0: tmp_path / "full.pcap"}, outdir=tmp_path / "clean"))
    assert stats["records_cut_short"] == {}


@pytest.mark.parametrize("content", ["pcap-us", "pcap-ns-be", "pcapng", "pcapng-no-idb", "pcap-gz"])
def test_empty_inputs_give_empty_outputs(tmp_path, content):
    ng = Ng(">")
    data = {"pcap-us": classic([], nano=False), "pcap-ns-be": classic([], ">"),
            "pcapng": ng.shb() + ng.idb(), "pcapng-no-idb": ng.shb(),
            "pcap-gz": gzip.compress(classic([]))}[content]
    (tmp_path / "empty").write_bytes(data)
    for pipeline in ("multi", "simple"):
        out = tmp_path / pipeline
        stats = run(RunOptions(inputs={0: tmp_path / "empty"}, outdir=out, portmask=0x3, pipeline=pipeline))
        assert stats["totals"] == {"rx": 0, "tx": 0, "dropped": 0}
        suffix = "pcapng" if content.startswith("pcapng") else "pcap"      # --output-format auto
        assert _out_files(out) == [f"port0.{suffix}", f"port1.{suffix}", "stats.json"]
        for port in (0, 1):
            with RawPcapReader(str(out / f"port{port}.{suffix}")) as r:      # scapy reads either format
                assert list(r) == []
                assert (r.interfaces[0][0] if suffix == "pcapng" else r.linktype) == 1


def test_snaplen_cut_frames_leave_with_wire_length_equal_to_captured_length(tmp_path):
    """net_pcap sets pkt_len to the captured length and writes len = pkt_len (capture_edges
    00): a 54-of-1514 record leaves as 54/54."""
    frames = well_formed_frames(8, 0, 100)
    recs = [(f[:min(len(f), 54 + i % 30)], len(f), T0 + i * 1000) for i, f in enumerate(frames)]
    (tmp_path / "cut.pcap").write_bytes(classic(recs, nano=False, snaplen=65535))
    for pipeline in ("multi", "simple"):
        out = tmp_path / pipeline
        stats = run(RunOptions(inputs={0: tmp_path / "cut.pcap"}, outdir=out, portmask=0xF, pipeline=pipeline))
        got = []
        for port in range(4):
            with RawPcapReader(str(out / f"port{port}.pcap")) as r:
                got += [(len(p), m.wirelen) for p, m in r]
        assert stats["ports"]["0"]["tx"] == len(got) > 50
        assert set(got) <= {(len(d), len(d)) for d, _, _ in recs}
    assert any(len(d) < w for d, w, _ in recs)                  # the input's records were cut


# ---------------------------------------------------------------------------------------
# Ctrl-C
# ---------------------------------------------------------------------------------------
def test_ctrl_c_exits_130_and_leaves_no_output(tmp_path):
    sys.path.insert(0, str(REPO / "benchmarks"))
    from bench_run import make_inputs
    indir, out = tmp_path / "in", tmp_path / "out"
    indir.mkdir()
    make_inputs(indir, 300_000, ports=2)       # several super-bursts: held after the first, it is half-way
    held = tmp_path / "held"
    proc = subprocess.Popen([str(CONSOLE), "run", str(indir), "-o", str(out), "--pipeline", "simple"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, hold.ENV: str(held)})
    deadline = time.monotonic() + 60            # a bound on a hang, not on the machine's speed
    while not held.exists():                    # l3fwd_sim.hold: records written into the staged outputs
        assert proc.poll() is None, f"the run ended before its hold point: {proc.communicate()}"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    assert any(name.startswith(".") for name in _out_files(out))      # the outputs' staging directory
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr.splitlines() == ["l3fwd-sim: interrupted; no partial output was left"]
    assert not out.exists()                # the run created it, and removed it again


# ---------------------------------------------------------------------------------------
# damaged files never crash the reader
# ---------------------------------------------------------------------------------------
@quick(300)
@given(kind=st.sampled_from(["pcap", "pcapng"]), seed=st.integers(0, 2**32), edits=EDITS,
       compress=st.booleans(), plan=st.sampled_from(PLANS))
def test_damaged_files_never_crash_the_reader(kind, seed, edits, compress, plan):
    data = damage(valid_capture(kind, random.Random(seed)), edits, seed)
    if compress:
        data = gzip.compress(data)[:len(data) if random.Random(seed).random() < 0.3 else None]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "damaged"
        path.write_bytes(data)
        try:
            read_all(path, plan)
        except SimError as err:
            assert "\n" not in str(err) and str(path) in str(err)


# ---------------------------------------------------------------------------------------
# random frames and headers through both pipelines and every lookup
# ---------------------------------------------------------------------------------------
LOOKUPS = [dict(lookup="lpm"), dict(lookup="em"), dict(lookup="em", ipv6=True), dict(lookup="fib")]


@st.composite
def random_frames(draw):
    """Frames with random headers: any length 0..90, an IPv4/IPv6/VLAN/ARP/other
    EtherType, random version/IHL/lengths/TTL/protocol, sometimes 198.18.x.y / 2001:200::."""
    frames = []
    for _ in range(draw(st.integers(0, 40))):
        rng = random.Random(draw(st.integers(0, 2**32)))
        et = rng.choice([0x0800, 0x0800, 0x86DD, 0x86DD, 0x8100, 0x0806, rng.randrange(65536)])
        body = bytearray(rng.randbytes(80))
        if et == 0x0800:
            body[0] = rng.choice([0x45, 0x45, 0x46, 0x4F, 0x44, 0x55, rng.randrange(256)])
            body[8] = rng.choice([0, 1, 2, 64])
            body[9] = rng.choice([6, 17, 1, rng.randrange(256)])
            body[2:4] = struct.pack(">H", rng.choice([20, 19, 46, rng.randrange(65536)]))
            body[16:18] = rng.choice([b"\xc6\x12", bytes(body[16:18])])
        elif et == 0x86DD:
            body[0] = rng.choice([0x60, rng.randrange(256)])
            body[6] = rng.choice([6, 17, 0, 43, rng.randrange(256)])
            body[24:28] = rng.choice([b"\x20\x01\x02\x00", bytes(body[24:28])])
        frames.append((rng.randbytes(12) + struct.pack(">H", et) + bytes(body))[:rng.randrange(0, 95)])
    return frames


@quick(30)
@given(frames=st.tuples(random_frames(), random_frames()), rx_burst=st.integers(1, 40))
def test_random_frames_through_every_pipeline_and_lookup(frames, rx_burst):
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        for port, fr in enumerate(frames):
            write_pcap(d / f"port{port}.pcap", fr)
        for options in LOOKUPS:
            for pipeline in ("multi", "simple"):
                stats = run(RunOptions(inputs={0: d / "port0.pcap", 1: d / "port1.pcap"}, outdir=d / "out",
                                       portmask=0x7, pipeline=pipeline, rx_burst=rx_burst, **options))
                for port in (0, 1):
                    p = stats["ports"][str(port)]
                    assert p["rx"] == len(frames[port]) == p["tx"] + p["dropped"]
                assert stats["totals"]["tx"] == sum(len(read_pcap_frames(d / "out" / f"port{p}.pcap"))
                                                    for p in range(3))


@quick(15)
@given(seed=st.integers(0, 10_000), options=st.sampled_from(LOOKUPS), rx_burst=st.integers(1, 40))
def test_pipelines_agree_on_well_formed_traffic_in_every_lookup(seed, options, rx_burst):
    """Valid TCP/UDP over IPv4 (no options) and IPv6 (no extension headers): DPDK's two
    paths agree for lpm, em (either family) and fib, so l3fwd-sim's must."""
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        for port in range(3):
            write_pcap(d / f"port{port}.pcap", well_formed_frames(seed, port, 80))
        results = []
        for pipeline in ("multi", "simple"):
            stats = run(RunOptions(inputs={p: d / f"port{p}.pcap" for p in range(3)}, outdir=d / pipeline,
                                   portmask=0xF, pipeline=pipeline, rx_burst=rx_burst, **options))
            counters = {port: {k: c[k] for k in ("rx", "tx", "dropped", "out", "drops")}   # not tx_model
                        for port, c in stats["ports"].items()}
            results.append(([read_pcap_frames(d / pipeline / f"port{p}.pcap") for p in range(4)],
                            counters, stats["totals"]))
        assert results[0] == results[1]
        assert results[0][2]["rx"] == 240 and results[0][2]["dropped"] == 0


@pytest.mark.parametrize("pipeline", ["multi", "simple"])
def test_mixed_time_stamp_resolutions_keep_every_time_stamp(tmp_path, pipeline):
    """A µs classic pcap, a big-endian ns one and a µs pcapng feed one run, whose outputs
    are then ns: every packet keeps its own time stamp, and leaves with wire length =
    captured length as net_pcap writes it (runs of equal sizes and single records alike;
    frames longer than a head, too)."""
    rng = random.Random(f"resolutions/{pipeline}")
    inputs, want = {}, {}
    for port in range(3):
        frames = well_formed_frames(7 + port, port, 150)
        frames[40:80] = [frames[40]] * 40                  # a run of equal sizes: the strided path
        stamps = [T0 + port * 10**9 + i * 1000 * rng.randint(1, 5000) + (rng.randrange(1000) if port == 1 else 0)
                  for i in range(len(frames))]
        records = [(f, len(f) + 4, ts) for f, ts in zip(frames, stamps)]
        if port == 0:
            data = classic(records, nano=False)
        elif port == 1:
            data = classic(records, ">", nano=True)
        else:
            ng = Ng()
            data = ng.shb() + ng.idb() + b"".join(ng.epb(0, ts // 1000, f, wire=w) for f, w, ts in records)
        (tmp_path / f"in{port}").write_bytes(data)
        inputs[port] = tmp_path / f"in{port}"
        want.update({ts: len(f) for f, _, ts in records})          # the wire length said 4 bytes more
    stats = run(RunOptions(inputs=inputs, outdir=tmp_path / "out", pipeline=pipeline, rx_burst=9))
    assert stats["totals"]["dropped"] == 0
    got = {}
    for port in range(3):
        with RawPcapReader(str(tmp_path / "out" / f"port{port}.pcap")) as reader:
            assert reader.nano
            for _data, meta in reader:
                got[meta.sec * 10**9 + meta.usec] = meta.wirelen      # usec: the fraction, ns here
    assert got == want
