"""Every capture of the real-world corpus (``tests/data/tcpdump``: tcpdump's test
captures, many of them fuzzed or truncated on purpose) is either forwarded by both
pipelines or refused with one line naming the file — never a traceback.

For every file scapy can read, the packets l3fwd-sim received are the records scapy
reads: the same count and the same bytes (cut to the snaplen, as libpcap cuts them; for a
converted link type, the packet after its link-layer header, whose size ``serial_links``
models for PPP and Cisco HDLC). Skipped without the corpus.
"""
from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest
from scapy.utils import RawPcapNgReader, RawPcapReader

from forwarding import CORPUS
from serial_links import ETHERTYPE
from serial_links import dissect as serial_dissect

from l3fwd_sim import RunOptions, run
from l3fwd_sim.errors import SimError
from l3fwd_sim.capture.offline import open_offline

from l3fwd_sim.capture.records import MAX_CAPLEN

CAPTURES = sorted(p for p in CORPUS.iterdir() if p.suffix != ".md")
CONSOLE = Path(sys.executable).parent / "l3fwd-sim"
LINK_HEADER = {1: 0, 101: 0, 228: 0, 229: 0, 113: 16, 276: 20, 0: 4, 108: 4}
SERIAL = (9, 50, 104)                  # PPP, PPP in HDLC framing, Cisco HDLC: a header size per record


def link_header(linktype: int, data: bytes) -> int | None:
    """The link-layer header size of a record (None: too short to hold it)."""
    if linktype in SERIAL:
        parsed = serial_dissect(linktype, data)
        return None if parsed is None else parsed[0]
    return LINK_HEADER[linktype] if len(data) >= LINK_HEADER[linktype] else None


def scapy_records(path: Path):
    """[(bytes, wirelen)] as scapy reads the file, or None if scapy cannot."""
    logging.getLogger("scapy").setLevel(logging.CRITICAL)
    try:
        with open(path, "rb") as f:
            ng = f.read(4) == b"\x0a\x0d\x0d\x0a"
        reader = (RawPcapNgReader if ng else RawPcapReader)(str(path))
    except Exception:
        return None
    records = []
    with reader:
        while True:
            try:
                data, meta = reader._read_packet(size=MAX_CAPLEN)   # scapy's default cuts at 65535
            except EOFError:
                return records
            except Exception:
                return None
            records.append((bytes(data), meta.wirelen))


def received(path: Path):
    """(reader, [(frame, wirelen)]) as l3fwd-sim reads the file."""
    reader = open_offline(path)
    out = []
    try:
        while len(batch := reader.read(4096)):
            out += [(bytes(batch.block[o:o + c]), w) for o, c, w in
                    zip(batch.offsets.tolist(), batch.caplen.tolist(), batch.wirelen.tolist())]
    finally:
        reader.close()
    return reader, out


@pytest.mark.parametrize("path", CAPTURES, ids=[p.name for p in CAPTURES])
def test_capture_is_forwarded_or_refused_in_one_line(path, tmp_path):
    results = {}
    for pipeline in ("multi", "simple"):
        try:
            results[pipeline] = run(RunOptions(inputs={0: path}, outdir=tmp_path / pipeline, portmask=0xF,
                                               pipeline=pipeline))
        except SimError as err:
            results[pipeline] = str(err)
    multi, simple = results["multi"], results["simple"]
    if isinstance(multi, str):
        assert simple == multi
        assert "\n" not in multi and multi.startswith(f"{path}:")
        assert not (tmp_path / "multi" / "port0.pcap").exists()
        return
    assert not isinstance(simple, str), simple
    for stats in (multi, simple):
        for p in stats["ports"].values():
            assert p["rx"] == p["tx"] + p["dropped"]
        assert stats["totals"]["rx"] == stats["totals"]["tx"] + stats["totals"]["dropped"]
    assert multi["totals"]["rx"] == simple["totals"]["rx"]

    reader, ours = received(path)
    assert len(ours) == multi["totals"]["rx"]
    theirs = scapy_records(path)
    if theirs is None:
        return
    assert len(ours) == len(theirs), "packet count differs from scapy's"
    for i, ((frame, wire), (data, their_wire)) in enumerate(zip(ours, theirs)):
        header = link_header(reader.linktype, data)
        if reader.linktype == 1:
            assert frame == data[:len(frame)] and len(frame) in (len(data), reader.snaplen), f"record {i}"
            assert wire == their_wire, f"record {i}"
        elif header is not None:                         # converted: zero MACs, EtherType, the packet
            assert frame[:12] == bytes(12) and frame[14:] == data[header:header + len(frame) - 14], f"record {i}"
            assert wire == max(0, their_wire - header + 14), f"record {i}"
            if reader.linktype in SERIAL:                # IP as tcpdump dissects it; anything else non-IP
                assert frame[12:14] == ETHERTYPE[serial_dissect(reader.linktype, data)[1]], f"record {i}"


def test_corpus_summary():
    """The corpus exercises what it is meant to: most captures forwarded (pcap and
    pcapng, converted link types among them), the rest refused for a named reason."""
    forwarded, refused = {}, {}
    for path in CAPTURES:
        try:
            reader, records = received(path)
            forwarded[path.name] = (reader.format, reader.linktype)
        except SimError as err:
            refused[path.name] = str(err)
    formats = {f for f, _ in forwarded.values()}
    linktypes = {lt for _, lt in forwarded.values()}
    assert {"pcap", "pcapng"} <= formats
    assert {1, 113, 0, 101, 229, *SERIAL} <= linktypes
    assert len(forwarded) > len(refused)
    assert all("link type" in msg or "not a pcap" in msg or "time stamp" in msg for msg in refused.values()), \
        [m for m in refused.values() if "link type" not in m]


@pytest.mark.parametrize("name", ["pptp.pcap", "tcp-handshake-nano.pcap", "bgp-role.pcapng",
                                  "802_15_4-data.pcap", "time_2107.pcapng"])
def test_console_script_on_corpus_files(name, tmp_path):
    """Through the real console script: exit 0, or exit 2 with one line and no traceback."""
    path = CORPUS / name
    res = subprocess.run([str(CONSOLE), "run", f"0={path}", "-o", str(tmp_path / "out"), "--quiet"],
                         capture_output=True, text=True, timeout=120)
    assert "Traceback" not in res.stderr
    if res.returncode:
        assert res.returncode == 2 and len(res.stderr.splitlines()) == 1 and name in res.stderr
    else:
        assert res.stderr == "" and (tmp_path / "out" / "stats.json").exists()
