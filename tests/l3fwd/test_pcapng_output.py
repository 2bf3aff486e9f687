"""``--output-format pcap|pcapng|auto`` end to end: scapy (an independent reader) finds
the same frames and time stamps in a run's pcapng outputs as in its classic ones; one
Interface Description Block per file, named after the port, in the run's resolution;
``auto`` follows the inputs; ``--jobs`` and several lcores give byte-identical pcapng;
time stamps past 2106 are forwarded into pcapng and refused, in one line, for pcap."""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from forwarding import CORPUS, run_cli
from frames import mixed_frames, well_formed_frames, write_pcap
from scapy.utils import RawPcapNgReader, RawPcapReader

from l3fwd_sim import RunOptions, run

T0 = 1_700_000_000 * 10**9
T2106 = (1 << 32) * 10**9          # 2106-02-07 06:28:16 UTC: the first second a classic pcap cannot hold


def pcapng_input(path: Path, frames: list[bytes], start_ns: int = T0, tsresol: int | None = 9) -> None:
    """A little-endian pcapng (one Ethernet interface, ``if_tsresol`` 10^-tsresol s or
    none: µs), packets 1 µs apart, written by hand (draft-ietf-opsawg-pcapng)."""
    def block(btype: int, body: bytes) -> bytes:
        body += bytes(-len(body) % 4)
        return struct.pack("<II", btype, 12 + len(body)) + body + struct.pack("<I", 12 + len(body))
    options = b"" if tsresol is None else struct.pack("<HHB3xHH", 9, 1, tsresol, 0, 0)
    scale = 10**9 // 10**(6 if tsresol is None else tsresol)
    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)),
           block(1, struct.pack("<HHI", 1, 0, 0) + options)]
    for i, frame in enumerate(frames):
        ticks = (start_ns + i * 1000) // scale
        out.append(block(6, struct.pack("<IIIII", 0, ticks >> 32, ticks & 0xFFFFFFFF, len(frame), len(frame) + 4)
                         + frame))
    path.write_bytes(b"".join(out))


def read_any(path: Path) -> list[tuple[bytes, int, int]]:
    """(frame, wire length, ns time stamp) of every packet, read by scapy."""
    if path.suffix == ".pcapng":
        with RawPcapNgReader(str(path)) as reader:
            return [(bytes(d), m.wirelen, (m.tshigh << 32 | m.tslow) * 10**9 // m.tsresol) for d, m in reader]
    with RawPcapReader(str(path)) as reader:
        scale = 1 if reader.nano else 1000
        return [(bytes(d), m.wirelen, m.sec * 10**9 + m.usec * scale) for d, m in reader]


def interfaces(path: Path) -> list[dict]:
    """Block types in order, and each Interface Description Block's options, by hand."""
    data, pos, kinds, idbs = path.read_bytes(), 0, [], []
    while pos < len(data):
        btype, length = struct.unpack_from("<II", data, pos)
        kinds.append(btype)
        if btype == 1:
            options, at = {}, pos + 16
            while at < pos + length - 4:
                code, size = struct.unpack_from("<HH", data, at)
                if code == 0:
                    break
                options[code] = data[at + 4:at + 4 + size]
                at += 4 + size + (-size % 4)
            idbs.append(options)
        pos += length
    assert kinds[:2] == [0x0A0D0D0A, 1] and set(kinds[2:]) <= {6}, kinds[:4]
    return idbs


def outputs(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != "stats.json") if directory.exists() else []


@pytest.mark.parametrize("tsresol", [9, 6, None])
def test_pcapng_outputs_hold_what_pcap_outputs_hold(tmp_path, tsresol):
    indir = tmp_path / "in"
    indir.mkdir()
    for port in (0, 1):
        pcapng_input(indir / f"port{port}.pcapng", mixed_frames(7, port, 300), T0 + port * 333, tsresol)
    assert run_cli("run", indir, "-o", tmp_path / "ng", "--quiet").exit_code == 0        # auto: pcapng
    assert run_cli("run", indir, "-o", tmp_path / "classic", "--quiet", "--output-format", "pcap").exit_code == 0
    assert outputs(tmp_path / "ng") == ["port0.pcapng", "port1.pcapng"]
    assert outputs(tmp_path / "classic") == ["port0.pcap", "port1.pcap"]
    sent = 0
    for port in (0, 1):
        got = read_any(tmp_path / "ng" / f"port{port}.pcapng")
        assert got == read_any(tmp_path / "classic" / f"port{port}.pcap")
        sent += len(got)
        assert interfaces(tmp_path / "ng" / f"port{port}.pcapng") == [{2: f"port{port}".encode(),
                                                                        9: bytes([9 if tsresol == 9 else 6])}]
    stats = json.loads((tmp_path / "ng" / "stats.json").read_text())
    assert stats["totals"]["tx"] == sent > 400 and stats["options"]["output_format"] == "pcapng"
    # the outputs are inputs again (run OUT1 -o OUT2) and compare reads them
    assert run_cli("run", tmp_path / "ng", "-o", tmp_path / "again", "--quiet").exit_code == 0
    assert outputs(tmp_path / "again") == ["port0.pcapng", "port1.pcapng"]
    assert run_cli("compare", tmp_path / "classic", tmp_path / "ng", "--timestamps").exit_code == 0


def test_auto_writes_pcapng_only_when_every_input_is_pcapng(tmp_path):
    pcapng_input(tmp_path / "a.pcapng", well_formed_frames(1, 0, 50))
    pcapng_input(tmp_path / "b.pcapng", well_formed_frames(1, 1, 50))
    write_pcap(tmp_path / "c.pcap", well_formed_frames(1, 1, 50))
    cases = [(["0=a.pcapng", "1=b.pcapng"], [], "pcapng"), (["0=a.pcapng", "1=c.pcap"], [], "pcap"),
             (["0=a.pcapng", "1=b.pcapng"], ["--output-format", "pcap"], "pcap"),
             (["0=c.pcap"], ["--output-format", "pcapng"], "pcapng"), (["0=c.pcap"], ["-p", "0x3"], "pcap")]
    for k, (inputs, options, suffix) in enumerate(cases):
        args = [part.replace("=", f"={tmp_path}/") for part in inputs]
        result = run_cli("run", *args, "-o", tmp_path / f"out{k}", "--quiet", "-p", "0x3", *options)
        assert result.exit_code == 0, result.output
        assert outputs(tmp_path / f"out{k}") == [f"port0.{suffix}", f"port1.{suffix}"], (inputs, options)
    # testpmd follows the same rule
    result = run_cli("testpmd", f"0={tmp_path}/a.pcapng", f"1={tmp_path}/b.pcapng", "-o", tmp_path / "pmd",
                     "--quiet", "--forward-mode", "macswap")
    assert result.exit_code == 0 and outputs(tmp_path / "pmd") == ["port0.pcapng", "port1.pcapng"]
    result = run_cli("testpmd", f"0={tmp_path}/a.pcapng", f"1={tmp_path}/b.pcapng", "-o", tmp_path / "pmd-pcap",
                     "--quiet", "--forward-mode", "macswap", "--output-format", "pcap")
    assert result.exit_code == 0
    for port in (0, 1):
        assert read_any(tmp_path / "pmd" / f"port{port}.pcapng") == read_any(tmp_path / "pmd-pcap" / f"port{port}.pcap")


def test_jobs_and_lcores_write_byte_identical_pcapng(tmp_path):
    """--jobs N reserves each chunk's place by its pcapng block sizes; several lcores
    write per-queue pcapng files that are merged by time stamp like classic ones."""
    inputs = {}
    for port in (0, 1):
        inputs[port] = tmp_path / f"in{port}.pcap"
        write_pcap(inputs[port], mixed_frames(3, port, 1500), 1_700_000_000.0 + port * 1e-4)
    two_lcores = "(0,0,0),(1,0,1)"
    runs = {}
    for name, options in {"one": dict(), "jobs": dict(jobs=3), "lcores": dict(config=two_lcores, per_queue=True),
                          "lcores-jobs": dict(config=two_lcores, jobs=2, per_queue=True),
                          "lcores-memory": dict(config=two_lcores)}.items():
        for fmt in ("pcapng", "pcap"):
            out = tmp_path / f"{name}-{fmt}"
            run(RunOptions(inputs=inputs, outdir=out, chunk_packets=256, output_format=fmt, **options))
            runs[name, fmt] = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "stats.json"}
    assert list(runs["one", "pcapng"]) == ["port0.pcapng", "port1.pcapng"]
    assert runs["jobs", "pcapng"] == runs["one", "pcapng"]
    assert list(runs["lcores", "pcapng"]) == ["port0.pcapng", "port0.q0.pcapng", "port0.q1.pcapng",
                                              "port1.pcapng", "port1.q0.pcapng", "port1.q1.pcapng"]
    assert runs["lcores-jobs", "pcapng"] == runs["lcores", "pcapng"]
    assert runs["lcores-memory", "pcapng"] == {name: data for name, data in runs["lcores", "pcapng"].items()
                                               if ".q" not in name}
    for name in ("lcores", "one"):
        for file in runs[name, "pcapng"]:
            classic = file.replace(".pcapng", ".pcap")
            assert read_any(tmp_path / f"{name}-pcapng" / file) == read_any(tmp_path / f"{name}-pcap" / classic)
            assert len(interfaces(tmp_path / f"{name}-pcapng" / file)) == 1


def time_2106_overflow(path: Path, frames: list[bytes]) -> None:
    """Built like tcpdump's tests/time_2106_overflow.pcapng: a Section Header Block, an
    Ethernet interface without ``if_tsresol`` (µs), then packets whose time stamp is
    2^32 s and later (2106-02-07 06:28:16 UTC on)."""
    pcapng_input(path, frames, T2106, None)


@pytest.mark.parametrize("options", [[], ["--jobs", "2"], ["--config", "(0,0,0),(0,1,1)"]])
def test_time_stamps_past_2106_are_forwarded_into_pcapng(tmp_path, options):
    frames = well_formed_frames(4, 0, 40)
    time_2106_overflow(tmp_path / "late.pcapng", frames)
    result = run_cli("run", f"0={tmp_path}/late.pcapng", "-o", tmp_path / "out", "--quiet", "-p", "0xf", *options)
    assert result.exit_code == 0, result.output
    got = sorted(ts for p in (tmp_path / "out").glob("port?.pcapng") for _, _, ts in read_any(p))
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert len(got) == stats["totals"]["tx"] > 0
    assert set(got) <= {T2106 + i * 1000 for i in range(len(frames))} and T2106 in got


@pytest.mark.parametrize("options", [[], ["--jobs", "2"]])
def test_time_stamps_past_2106_are_refused_for_pcap_in_one_line(tmp_path, options):
    frames = well_formed_frames(4, 0, 40)
    path = tmp_path / "late.pcapng"
    time_2106_overflow(path, frames)
    write_pcap(tmp_path / "early.pcap", well_formed_frames(4, 1, 40))
    result = run_cli("run", f"0={path}", f"1={tmp_path}/early.pcap", "-o", tmp_path / "out", "-p", "0xf", *options)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "packet 0 " in lines[0], lines
    assert "2106-02-07 06:28:16" in lines[0] and "--output-format pcapng" in lines[0]
    assert outputs(tmp_path / "out") == []


def test_corpus_time_2107_is_forwarded(tmp_path):
    path = CORPUS / "time_2107.pcapng"
    result = run_cli("run", f"0={path}", "-o", tmp_path / "out", "--quiet", "-p", "0x1")
    assert result.exit_code == 0, result.output
    assert [ts for _, _, ts in read_any(tmp_path / "out" / "port0.pcapng")] == [4323283200 * 10**9]   # 2107-01-01
    assert run_cli("run", f"0={path}", "-o", tmp_path / "pcap", "--output-format", "pcap").exit_code == 2


def test_generate_writes_pcapng(tmp_path):
    common = ["generate", "IPV4-8STREAMSX1", "--ports", "2", "--count", "300", "--size", "imix", "--rate", "3e6",
              "--quiet"]
    assert run_cli(*common, "-o", tmp_path / "classic").exit_code == 0                # auto: pcap
    assert run_cli(*common, "-o", tmp_path / "ng", "--output-format", "pcapng").exit_code == 0
    assert outputs(tmp_path / "classic") == ["port0.pcap", "port1.pcap"]
    assert outputs(tmp_path / "ng") == ["port0.pcapng", "port1.pcapng"]
    for port in (0, 1):
        assert read_any(tmp_path / "ng" / f"port{port}.pcapng") == read_any(tmp_path / "classic" / f"port{port}.pcap")
        assert interfaces(tmp_path / "ng" / f"port{port}.pcapng") == [{2: f"port{port}".encode(), 9: b"\x09"}]
    # generated pcapng is forwarded into pcapng
    assert run_cli("run", tmp_path / "ng", "-o", tmp_path / "out", "--quiet").exit_code == 0
    assert outputs(tmp_path / "out") == ["port0.pcapng", "port1.pcapng"]
