"""``l3fwd-sim compare --write DIR``: every differing packet into DIR/a.pcapng and
DIR/b.pcapng, each with the difference as its comment.

The files are read back by two readers that are not ours: Wireshark's (``tshark``, for
the comments and interface names as a user sees them; skipped where it is not
installed) and scapy's pcapng reader (for bytes, wire lengths, time stamps); the section
and interface blocks by a direct walk of the blocks. What must be in the files follows
from the edits made to known frames (which index was deleted, inserted, changed, and
to what), and the bytes and stamps are checked against the inputs as scapy's classic
reader reads them.
"""
from __future__ import annotations

import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapNgReader, RawPcapReader
from forwarding import run_cli
from frames import mixed_frames, well_formed_frames, write_pcap
from tshark import TSHARK, fields

from l3fwd_sim.text import printable
from l3fwd_sim.diff.compare import CompareOptions
from l3fwd_sim.diff import write
from l3fwd_sim.diff.write import write_differences

CLI = Path(sys.executable).with_name("l3fwd-sim")
B_START = 1_800_000_000.0             # B's stamps differ from A's: each file must keep its own


# ---------------------------------------------------------------------------------------
# helpers: inputs
# ---------------------------------------------------------------------------------------
def write_dir(path: Path, ports: dict[int, list[bytes]], start_ts: float = 1_700_000_000.0) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for port, frames in ports.items():
        write_pcap(path / f"port{port}.pcap", frames, start_ts)
    return path


def flip(frame: bytes, offset: int, bits: int = 0x01) -> bytes:
    return frame[:offset] + bytes([frame[offset] ^ bits]) + frame[offset + 1:]


def first_ipv4(frames: list[bytes], start: int = 0) -> int:
    return next(k for k in range(start, len(frames)) if IP in Ether(frames[k]))


@pytest.fixture
def base():
    return {0: well_formed_frames(7, 0, 60), 1: mixed_frames(7, 1, 80)}


def originals(path: Path) -> list[tuple[bytes, int, int]]:
    """(frame, wire length, ns stamp) of every record of a classic pcap, by scapy."""
    with RawPcapReader(str(path)) as reader:
        return [(bytes(pkt), meta.wirelen, (meta.sec * 10**6 + meta.usec) * 1000) for pkt, meta in reader]


def compare(a: Path, b: Path, *args) -> int:
    """``l3fwd-sim compare`` in-process; its exit status."""
    return run_cli("compare", a, b, *args).exit_code


def cli(*args) -> subprocess.CompletedProcess:
    """``l3fwd-sim`` in a process of its own: its stderr as the user sees it."""
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)


# ---------------------------------------------------------------------------------------
# helpers: reading what was written
# ---------------------------------------------------------------------------------------
def records(path: Path) -> list[tuple[str, str, bytes, int, int]]:
    """(interface name, comment, frame, wire length, ns stamp) of every packet, by scapy."""
    out = []
    for pkt, meta in RawPcapNgReader(str(path)):
        ticks = (meta.tshigh << 32) | meta.tslow
        assert meta.tsresol == 10**9
        (comment,) = meta.comments
        out.append((meta.ifname.decode(), comment.decode(), bytes(pkt), meta.wirelen, ticks))
    return out


def blocks(path: Path) -> list[tuple[int, bytes]]:
    """(type, body) of every block of a little-endian pcapng, trailers checked."""
    data, out, pos = path.read_bytes(), [], 0
    while pos < len(data):
        btype, length = struct.unpack_from("<II", data, pos)
        assert length % 4 == 0 and struct.unpack_from("<I", data, pos + length - 4)[0] == length
        out.append((btype, data[pos + 8:pos + length - 4]))
        pos += length
    return out


def options(body: bytes) -> dict[int, bytes]:
    out, pos = {}, 0
    while pos < len(body):
        code, length = struct.unpack_from("<HH", body, pos)
        if code == 0:
            break
        out[code] = body[pos + 4:pos + 4 + length]
        pos += 4 + length + (-length % 4)
    return out


def interfaces(path: Path) -> list[tuple[str, int]]:
    """(if_name, link type) of every Interface Description Block, in file order."""
    return [(options(body[8:])[2].decode(), struct.unpack_from("<H", body)[0])
            for btype, body in blocks(path) if btype == 1]


def section_comment(path: Path) -> str:
    btype, body = blocks(path)[0]
    assert btype == 0x0A0D0D0A
    return options(body[16:])[1].decode()


def wireshark_view(path: Path, display_filter: str | None = None) -> list[tuple[str, str]]:
    """(interface name, comment) of every packet, by tshark. The comment's field is
    ``frame.comment``: in tshark 4.0 ``pkt_comment`` names only the protocol (``-e
    pkt_comment`` prints nothing). Skips the rest of the test without tshark: what scapy
    checked before stands."""
    if TSHARK is None:
        pytest.skip("tshark not installed: apt-get install tshark")
    return [tuple(row) for row in fields(path, "frame.interface_name", "frame.comment", display_filter=display_filter)]


def check_frames(written, side: str, inputs: dict[str, list]) -> None:
    """Each written packet is the input packet its comment names on this side (``inputs``:
    interface name -> that side's records), bytes, wire length and stamp."""
    for name, comment, frame, wirelen, ticks in written:
        index = int(re.search(rf"\b{side}\[(\d+)\]", comment).group(1))
        assert (frame, wirelen, ticks) == inputs[name][index], comment


# ---------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------
def test_equal_dirs_give_two_files_without_packets(tmp_path, base):
    a, b = write_dir(tmp_path / "a", base), write_dir(tmp_path / "b", base)
    assert compare(a, b, "--write", tmp_path / "out" / "deeper") == 0
    for side in ("a", "b"):
        path = tmp_path / "out" / "deeper" / f"{side}.pcapng"
        assert records(path) == []
        assert [t for t, _ in blocks(path)] == [0x0A0D0D0A, 1, 1]          # SHB, one IDB per port
        assert interfaces(path) == [("port0", 1), ("port1", 1)]
        assert wireshark_view(path) == []


def test_changed_ttl_is_in_both_files_with_one_comment(tmp_path, base):
    frames = list(base[1])
    k = first_ipv4(frames, 20)
    frames[k] = flip(frames[k], 22, 0x03)          # IPv4 TTL; the checksum is left as it was
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: base[0], 1: frames}, B_START)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    assert compare(a, b, "--write", tmp_path / "out", "--max-diffs", "0") == 1
    ttl_a, ttl_b = Ether(base[1][k])[IP].ttl, Ether(frames[k])[IP].ttl
    want = f"port 1, packet A[{k}] modified in B[{k}]: IP.ttl {ttl_a}→{ttl_b}"
    written_a, written_b = records(tmp_path / "out" / "a.pcapng"), records(tmp_path / "out" / "b.pcapng")
    assert [(n, c) for n, c, *_ in written_a] == [(n, c) for n, c, *_ in written_b] == [("port1", want)]
    check_frames(written_a, "A", {"port1": originals(a / "port1.pcap")})
    check_frames(written_b, "B", {"port1": originals(b / "port1.pcap")})
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.pcapng", "b.pcapng", "notes.txt"]
    assert wireshark_view(tmp_path / "out" / "b.pcapng") == [("port1", want)]
    assert wireshark_view(tmp_path / "out" / "b.pcapng", 'frame.comment contains "ttl"') == [("port1", want)]
    assert wireshark_view(tmp_path / "out" / "a.pcapng", 'frame.comment contains "missing"') == []


def test_missing_and_extra_go_to_their_side_only(tmp_path, base):
    ports_b = {0: list(base[0]), 1: list(base[1])}
    del ports_b[0][17]
    ports_b[1].insert(33, flip(base[1][5], 0, 0x80))
    a = write_dir(tmp_path / "a", {**base, 2: base[0][:3]})            # port 2 in A only: all missing
    b = write_dir(tmp_path / "b", ports_b, B_START)
    assert compare(a, b, "--write", tmp_path / "out") == 1
    written_a, written_b = records(tmp_path / "out" / "a.pcapng"), records(tmp_path / "out" / "b.pcapng")
    assert [(n, c) for n, c, *_ in written_a] == [
        ("port0", "port 0, packet A[17] missing from B"),
        *[("port2", f"port 2, packet A[{k}] missing from B") for k in range(3)]]
    assert [(n, c) for n, c, *_ in written_b] == [("port1", "port 1, packet B[33] extra (not in A)")]
    check_frames(written_a, "A", {f"port{p}": originals(a / f"port{p}.pcap") for p in (0, 2)})
    check_frames(written_b, "B", {"port1": originals(b / "port1.pcap")})
    # interface k is the same port in both files, port 2 included where B has no file
    for side in ("a", "b"):
        assert interfaces(tmp_path / "out" / f"{side}.pcapng") == [("port0", 1), ("port1", 1), ("port2", 1)]
    assert wireshark_view(tmp_path / "out" / "a.pcapng") == [(n, c) for n, c, *_ in written_a]


def test_unordered_writes_only_what_differs_as_a_multiset(tmp_path, base):
    frames = list(base[0])
    frames[10], frames[50] = frames[50], frames[10]
    k = first_ipv4(frames, 30)
    frames[k] = flip(frames[k], 22)
    a = write_dir(tmp_path / "a", {0: base[0]})
    b = write_dir(tmp_path / "b", {0: frames})
    assert compare(a, b, "--write", tmp_path / "ordered") == 1
    comments = [c for _, c, *_ in records(tmp_path / "ordered" / "a.pcapng")]
    assert "port 0, packet A[10] reordered: it is B[50]" in comments
    assert "port 0, packet A[50] reordered: it is B[10]" in comments
    assert compare(a, b, "--write", tmp_path / "unordered", "--unordered") == 1
    for side in ("a", "b"):
        written = records(tmp_path / "unordered" / f"{side}.pcapng")
        assert [c for _, c, *_ in written] == [f"port 0, packet A[{k}] modified in B[{k}]: IP.ttl "
                                               f"{Ether(base[0][k])[IP].ttl}→{Ether(frames[k])[IP].ttl}"]
        check_frames(written, side.upper(), {"port0": originals((a if side == "a" else b) / "port0.pcap")})


def test_two_files_name_the_interface_after_each_file(tmp_path, base):
    frames = list(base[0])
    del frames[4]
    write_pcap(tmp_path / "before.pcap", base[0])
    write_pcap(tmp_path / "after.pcap", frames)
    assert compare(tmp_path / "before.pcap", tmp_path / "after.pcap", "--write", tmp_path / "out") == 1
    assert [(n, c) for n, c, *_ in records(tmp_path / "out" / "a.pcapng")] == [
        ("before", "file, packet A[4] missing from B")]
    assert interfaces(tmp_path / "out" / "b.pcapng") == [("after", 1)]
    assert records(tmp_path / "out" / "b.pcapng") == []
    comment = section_comment(tmp_path / "out" / "a.pcapng")
    assert comment.startswith("l3fwd-sim compare --write: the packets of A that differ from B")
    assert str(tmp_path / "before.pcap") in comment and str(tmp_path / "after.pcap") in comment
    assert wireshark_view(tmp_path / "out" / "a.pcapng") == [("before", "file, packet A[4] missing from B")]


def test_field_values_are_escaped_in_packet_comments(tmp_path, base, monkeypatch):
    """Field values come from the packets: a value with a newline (none of scapy's
    dissectors is known to give one) still makes a one-line comment."""
    monkeypatch.setattr(write, "field_differences", lambda *args, **kw: [("Raw.load", "a\nb", "c\x00d")])
    frames = list(base[0])
    frames[3] = flip(frames[3], 40)
    write_pcap(tmp_path / "a.pcap", base[0])
    write_pcap(tmp_path / "b.pcap", frames)
    write_differences(tmp_path / "a.pcap", tmp_path / "b.pcap", tmp_path / "out", CompareOptions(max_diffs=0))
    want = "file, packet A[3] modified in B[3]: Raw.load a\\nb→c\\x00d"
    assert [c for _, c, *_ in records(tmp_path / "out" / "b.pcapng")] == [want]
    assert wireshark_view(tmp_path / "out" / "b.pcapng") == [("b", want)]


def test_control_characters_of_a_file_name_are_escaped(tmp_path, base):
    odd = "we\nird\x1b[31m\u202e"
    write_pcap(tmp_path / f"{odd}.pcap", base[0])
    write_pcap(tmp_path / "plain.pcap", base[0][1:])
    report = write_differences(tmp_path / f"{odd}.pcap", tmp_path / "plain.pcap", tmp_path / "out")
    assert not report.equal
    escaped = "we\\nird\\x1b[31m\\u202e"
    comment = section_comment(tmp_path / "out" / "a.pcapng")
    assert f"{escaped}.pcap" in comment and comment.isprintable()
    assert interfaces(tmp_path / "out" / "a.pcapng") == [(escaped, 1)]
    assert wireshark_view(tmp_path / "out" / "a.pcapng") == [(escaped, "file, packet A[0] missing from B")]


def test_fields_by_scapy_up_to_the_limit_then_by_byte_range(tmp_path, monkeypatch):
    """Past NAMED_PAIRS distinct pairs, byte ranges in hex; a pair seen before keeps its names."""
    monkeypatch.setattr(write, "NAMED_PAIRS", 2)
    x, y, z = (bytes(Ether() / IP(src="198.18.0.1", dst="198.18.1.0", ttl=64) / UDP(sport=k)) for k in (1, 2, 3))
    write_pcap(tmp_path / "a.pcap", [x, y, z, x])
    write_pcap(tmp_path / "b.pcap", [flip(f, 22) for f in (x, y, z, x)])
    write_differences(tmp_path / "a.pcap", tmp_path / "b.pcap", tmp_path / "out", CompareOptions(max_diffs=0))
    assert [c.partition(": ")[2] for _, c, *_ in records(tmp_path / "out" / "a.pcapng")] == [
        "IP.ttl 64→65", "IP.ttl 64→65", "bytes[22:23] 40→41", "IP.ttl 64→65"]


def test_bad_directory_exits_2_with_one_line_and_writes_nothing(tmp_path, base):
    a, b = write_dir(tmp_path / "a", base), write_dir(tmp_path / "b", {0: base[0]})
    (tmp_path / "file").write_text("keep")
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "a.pcapng").write_bytes(b"old a")
    (tmp_path / "kept" / "b.pcapng").write_bytes(b"old b")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "port0.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + bytes(3))
    cases = [
        ((a, b, "--write", tmp_path / "file"), "is a file"),
        ((a, tmp_path / "bad", "--write", tmp_path / "kept"), "port0.pcap"),          # fails while comparing
        ((a, tmp_path / "bad", "--write", tmp_path / "new" / "dir"), "port0.pcap"),
        ((tmp_path / "kept" / "a.pcapng", a / "port0.pcap", "--write", tmp_path / "kept"), "--write would replace"),
    ]
    for args, needle in cases:
        done = cli("compare", *args)
        lines = done.stderr.splitlines()
        assert done.returncode == 2 and len(lines) == 1 and needle in lines[0], (args, done.stderr)
    assert (tmp_path / "file").read_text() == "keep"
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["a.pcapng", "b.pcapng"]
    assert (tmp_path / "kept" / "a.pcapng").read_bytes() == b"old a"
    assert not (tmp_path / "new").exists()                # the directory made for the files is gone


# ---------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------
@settings(max_examples=300, deadline=None)
@given(st.text())
def test_printable_is_one_printable_line(text):
    out = printable(text)
    assert out.isprintable() and "\n" not in out
    out.encode("utf-8")                                   # surrogates escaped too
    assert printable(out) == out
    if text.isprintable():
        assert out == text


frame_lists = st.lists(st.binary(min_size=14, max_size=80), min_size=1, max_size=25, unique=True)
edits = st.lists(st.tuples(st.sampled_from(["drop", "insert", "modify"]), st.integers(0, 10**6),
                           st.binary(min_size=14, max_size=80)), min_size=1, max_size=5)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=frame_lists, edits=edits, unordered=st.booleans())
def test_every_differing_packet_is_written(frames, edits, unordered):
    """Random drops, inserts and changes: the packets written for A are exactly the
    dropped and changed ones, those for B exactly the inserted and changed ones (frames
    are distinct and edits bring in no frame of A, so every other packet pairs), each
    the input's packet at the index its comment names; comments count compare's
    differences."""
    changed = [(k, f) for k, f in enumerate(frames)]          # (index in A or None, frame)
    for what, at, new in edits:
        assume(new not in frames)
        if what == "insert":
            changed.insert(at % (len(changed) + 1), (None, new))
        elif changed:
            k = at % len(changed)
            changed[k] = (changed[k][0], new) if what == "modify" else None
            changed = [c for c in changed if c is not None]
    after = [f for _, f in changed]
    kept = {k for k, f in changed if k is not None and f == frames[k]}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_pcap(tmp / "a.pcap", frames)
        write_pcap(tmp / "b.pcap", after, B_START)
        report = write_differences(tmp / "a.pcap", tmp / "b.pcap", tmp / "out",
                                   CompareOptions(unordered=unordered, max_diffs=1))
        written_a, written_b = records(tmp / "out" / "a.pcapng"), records(tmp / "out" / "b.pcapng")
        check_frames(written_a, "A", {"a": originals(tmp / "a.pcap")})
        check_frames(written_b, "B", {"b": originals(tmp / "b.pcap")})
    index_a = [int(re.search(r"A\[(\d+)\]", c).group(1)) for _, c, *_ in written_a]
    index_b = [int(re.search(r"B\[(\d+)\]", c).group(1)) for _, c, *_ in written_b]
    assert index_a == sorted(set(range(len(frames))) - kept)
    assert index_b == [j for j, (k, f) in enumerate(changed) if k not in kept]
    totals = report.totals()
    assert len(written_a) == totals["modified"] + totals["missing"] + totals["reordered"]
    assert len(written_b) == totals["modified"] + totals["extra"] + totals["reordered"]
    comments = {c for _, c, *_ in written_a + written_b}
    assert len(comments) == sum(totals[k] for k in ("modified", "missing", "extra", "reordered"))
