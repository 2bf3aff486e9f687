"""``l3fwd-sim compare``: exit status, per-port counts, which packet and which field.

Edits are made to known frames (a byte flipped at a known offset, a packet inserted,
deleted or moved), so the expected report follows from the edit, not from compare's
own code; field names are checked against frames built with scapy. The fixed-offset
field masks are checked against scapy's dissection, the alignment against a brute-force
longest common subsequence.
"""
from __future__ import annotations

import json
import random
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from forwarding import GOLDEN, run_cli
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Dot1Q, Ether
from frames import mixed_frames, well_formed_frames, write_pcap

from l3fwd_sim.diff import fields
from l3fwd_sim.diff.align import align
from l3fwd_sim.diff.compare import CompareOptions, compare_files, compare_paths
from l3fwd_sim.errors import SimError

CLI = Path(sys.executable).with_name("l3fwd-sim")


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def udp4(k: int, ttl: int = 64) -> bytes:
    """A distinct IPv4/UDP frame (k in the source port) with a valid checksum."""
    return bytes(Ether(dst="02:00:00:00:00:01", src="02:70:63:61:70:00") /
                 IP(src="198.18.0.1", dst="198.18.1.0", ttl=ttl) / UDP(sport=1000 + k, dport=9) /
                 (b"\x00" * 18))


def flip(frame: bytes, offset: int, bits: int = 0x01) -> bytes:
    return frame[:offset] + bytes([frame[offset] ^ bits]) + frame[offset + 1:]


def write_dir(path: Path, ports: dict[int, list[bytes]], start_ts: float = 1_700_000_000.0) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for port, frames in ports.items():
        write_pcap(path / f"port{port}.pcap", frames, start_ts)
    return path


@pytest.fixture
def base():
    """Two ports of distinct traffic: port 0 well-formed IPv4/IPv6 TCP/UDP, port 1 the
    broad mix (ARP, VLAN, IPv4 options, short frames, ...)."""
    return {0: well_formed_frames(5, 0, 120), 1: mixed_frames(5, 1, 150)}


def compare(a: Path, b: Path, *args: str):
    """Run the CLI in-process; returns (exit code, stdout)."""
    result = run_cli("compare", a, b, *args)
    return result.exit_code, result.output


def report_json(a: Path, b: Path, *args: str) -> tuple[int, dict]:
    code, out = compare(a, b, "--json", *args)
    return code, json.loads(out)


def port_row(report: dict, port) -> dict:
    return next(p for p in report["ports"] if p["port"] == port)


def first_ipv4_udp(frames: list[bytes]) -> int:
    for k, f in enumerate(frames):
        if len(f) < 60:
            continue
        p = Ether(f)
        if UDP in p and IP in p and p[IP].ihl == 5 and Dot1Q not in p and p[IP].frag == 0:
            return k
    raise AssertionError("no IPv4/UDP frame")


# ---------------------------------------------------------------------------------------
# equal, modified, missing, extra, reordered
# ---------------------------------------------------------------------------------------
def test_identical_inputs_are_equal(tmp_path, base):
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", base)
    code, out = compare(a, b)
    assert code == 0, out
    assert out.rstrip().splitlines()[-1] == "equal: 2 ports, 270 packets match"
    code, report = report_json(a, b)
    assert code == 0 and report["equal"] and report["differences"] == []
    assert [(p["packets_a"], p["matched"]) for p in report["ports"]] == [(120, 120), (150, 150)]


def test_two_files(tmp_path, base):
    write_pcap(tmp_path / "a.pcap", base[1])
    frames = list(base[1])
    k = first_ipv4_udp(frames)
    frames[k] = flip(frames[k], 22)
    write_pcap(tmp_path / "b.pcap", frames)
    assert compare(tmp_path / "a.pcap", tmp_path / "a.pcap")[0] == 0
    code, report = report_json(tmp_path / "a.pcap", tmp_path / "b.pcap")
    assert code == 1
    assert report["ports"][0]["port"] is None and report["ports"][0]["modified"] == 1
    assert report["differences"][0]["index_a"] == k


@pytest.mark.parametrize("offset,field", [
    (0, "Ether.dst"), (11, "Ether.src"), (22, "IP.ttl"), (24, "IP.chksum"), (29, "IP.src"),
    (36, "UDP.dport"), (41, "UDP.chksum"), (50, "Raw.load"),
])
def test_flipped_byte_names_port_index_and_field(tmp_path, base, offset, field):
    frames = list(base[1])
    k = first_ipv4_udp(frames[40:]) + 40
    frames[k] = flip(frames[k], offset)
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: base[0], 1: frames})
    code, report = report_json(a, b)
    assert code == 1
    assert port_row(report, 0)["matched"] == 120
    row = port_row(report, 1)
    assert (row["matched"], row["modified"], row["missing"], row["extra"]) == (149, 1, 0, 0)
    (diff,) = report["differences"]
    assert (diff["port"], diff["kind"], diff["index_a"], diff["index_b"]) == (1, "modified", k, k)
    assert diff["offsets"] == [offset]
    named = [f["field"] for f in diff["fields"]]
    assert named == [field], diff["fields"]
    # the values shown are scapy's for each side
    layer, name = field.split(".")
    want_a = Ether(base[1][k])[layer].getfieldval(name)
    want_b = Ether(frames[k])[layer].getfieldval(name)
    got = diff["fields"][0]
    if field == "IP.ttl":
        assert (got["a"], got["b"]) == (str(want_a), str(want_b))
    assert want_a != want_b
    # text form: the field line, and the flipped byte marked under its column
    code, text = compare(a, b)
    assert f"port 1, packet A[{k}] modified in B[{k}]" in text
    assert any(line.split()[:1] == [field] for line in text.splitlines())
    marker = next(line for line in text.splitlines() if "^^" in line)
    row_b = text.splitlines()[text.splitlines().index(marker) - 1]
    col = marker.index("^^")
    assert row_b[col:col + 2] == f"{frames[k][offset]:02x}"


def test_ipv6_hop_limit_is_named(tmp_path, base):
    frames = list(base[0])
    k = next(i for i, f in enumerate(frames) if f[12:14] == b"\x86\xdd")
    frames[k] = flip(frames[k], 21)
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: frames, 1: base[1]})
    code, report = report_json(a, b)
    assert code == 1
    assert [f["field"] for f in report["differences"][0]["fields"]] == ["IPv6.hlim"]


@pytest.mark.parametrize("where", [0, 57, 149])
def test_missing_packet_keeps_later_packets_matched(tmp_path, base, where):
    frames = list(base[1])
    del frames[where]
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: base[0], 1: frames})
    code, report = report_json(a, b)
    assert code == 1
    row = port_row(report, 1)
    assert (row["packets_b"], row["matched"], row["missing"], row["modified"], row["extra"]) == (149, 149, 1, 0, 0)
    (diff,) = report["differences"]
    assert (diff["kind"], diff["index_a"], diff["index_b"]) == ("missing", where, None)


@pytest.mark.parametrize("where", [0, 80, 150])
def test_extra_packet_keeps_later_packets_matched(tmp_path, base, where):
    frames = list(base[1])
    frames.insert(where, udp4(7777))
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: base[0], 1: frames})
    code, report = report_json(a, b)
    assert code == 1
    row = port_row(report, 1)
    assert (row["matched"], row["extra"], row["missing"], row["modified"]) == (150, 1, 0, 0)
    (diff,) = report["differences"]
    assert (diff["kind"], diff["index_a"], diff["index_b"]) == ("extra", None, where)
    assert "UDP" in diff["summary_b"]


def test_reordering_detected_and_accepted_unordered(tmp_path, base):
    frames = list(base[0])
    frames[10], frames[90] = frames[90], frames[10]
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: frames, 1: base[1]})
    code, report = report_json(a, b)
    assert code == 1
    row = port_row(report, 0)
    assert (row["matched"], row["reordered"], row["modified"], row["missing"], row["extra"]) == (118, 2, 0, 0, 0)
    assert {(d["index_a"], d["index_b"]) for d in report["differences"]} == {(10, 90), (90, 10)}
    assert compare(a, b, "--unordered")[0] == 0
    # unordered still sees a real change
    frames[5] = flip(frames[5], 30)
    write_dir(tmp_path / "b", {0: frames})
    code, report = report_json(a, b, "--unordered")
    assert code == 1 and port_row(report, 0)["modified"] == 1


def test_modified_in_a_stream_of_identical_frames(tmp_path):
    """Many LCS exist when frames repeat; two changed frames and a deleted one between them
    must come out as two modified (at the changed indexes) and one missing."""
    frames = [udp4(1)] * 600
    changed = list(frames)
    changed[10] = flip(changed[10], 22)
    changed[500] = flip(changed[500], 37)
    del changed[300]
    write_pcap(tmp_path / "a.pcap", frames)
    write_pcap(tmp_path / "b.pcap", changed)
    report = compare_files(tmp_path / "a.pcap", tmp_path / "b.pcap")
    (row,) = report.ports
    assert (row.matched, row.modified, row.missing, row.extra, row.reordered) == (597, 2, 1, 0, 0)
    modified = [(d.index_b, d.fields[0].field) for d in report.differences if d.kind == "modified"]
    assert modified == [(10, "IP.ttl"), (499, "UDP.dport")]   # A[499] and A[500] are the same frame


def test_port_file_on_one_side_only_is_a_difference(tmp_path, base):
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: base[0]})
    code, report = report_json(a, b, "--max-diffs", "2")
    assert code == 1
    row = port_row(report, 1)
    assert (row["file_b"], row["missing"], row["notes"]) == (None, 150, ["port file only in A"])
    assert [d["index_a"] for d in report["differences"]] == [0, 1]
    code, report = report_json(b, a)
    assert code == 1 and port_row(report, 1)["extra"] == 150
    # an empty port file present on one side only still differs: the port sets differ
    write_dir(tmp_path / "c", {0: base[0], 1: []})
    assert compare(b, tmp_path / "c")[0] == 1


def test_max_diffs_limits_details_not_counts(tmp_path, base):
    frames = [flip(f, 0) for f in base[0]]
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: frames, 1: base[1]})
    code, report = report_json(a, b, "--max-diffs", "3")
    assert code == 1 and len(report["differences"]) == 3
    assert port_row(report, 0)["modified"] == 120
    code, text = compare(a, b, "--max-diffs", "0")
    assert "120 more differences not shown" in text
    assert text.rstrip().splitlines()[-1].startswith("DIFFER: 1 of 2 ports (port 0): 120 modified")


def test_by_layers_counts_differing_packets_by_kind(tmp_path):
    arp = bytes.fromhex("ffffffffffff021b21000001" "0806") + bytes(46)
    tagged = bytes(Ether() / Dot1Q(vlan=5) / IP(dst="198.18.0.1") / UDP())
    frames = [udp4(k) for k in range(30)]
    with_more = list(frames)
    for k in (3, 9, 20):
        with_more.insert(k, arp)
    with_more.insert(25, tagged)
    with_more[0] = flip(with_more[0], 22)
    write_pcap(tmp_path / "a.pcap", with_more)
    write_pcap(tmp_path / "b.pcap", frames)
    code, report = report_json(tmp_path / "a.pcap", tmp_path / "b.pcap", "--by-layers")
    assert code == 1
    assert report["by_layers"] == [
        {"kind": "missing", "layers": "Ether/ARP", "packets": 3},
        {"kind": "missing", "layers": "Ether/Dot1Q/IP/UDP", "packets": 1},
        {"kind": "modified", "layers": "Ether/IP/UDP", "packets": 1},
    ]
    assert report["by_layers_examined"] == 5
    assert "by_layers" not in report_json(tmp_path / "a.pcap", tmp_path / "b.pcap")[1]


# ---------------------------------------------------------------------------------------
# --ignore
# ---------------------------------------------------------------------------------------
def test_ignore_masks_the_named_field_only(tmp_path, base):
    frames = list(base[1])
    k = first_ipv4_udp(frames)
    j = first_ipv4_udp(frames[k + 1:]) + k + 1
    frames[k] = flip(frames[k], 22)                  # IP.ttl
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", {0: base[0], 1: frames})
    assert compare(a, b)[0] == 1
    assert compare(a, b, "--ignore", "IP.ttl")[0] == 0
    assert compare(a, b, "--ignore", "IP.proto")[0] == 1          # the next byte
    assert compare(a, b, "--ignore", "IPv6.hlim")[0] == 1         # same name, other layer
    frames[j] = flip(frames[j], 37)                  # UDP.dport, low byte
    write_dir(tmp_path / "b", {1: frames})
    code, report = report_json(a, b, "--ignore", "IP.ttl")
    assert code == 1 and port_row(report, 1)["modified"] == 1
    (diff,) = report["differences"]
    assert diff["index_a"] == j and [f["field"] for f in diff["fields"]] == ["UDP.dport"]
    assert compare(a, b, "--ignore", "IP.ttl", "--ignore", "UDP.dport")[0] == 0


def test_ignore_is_bit_exact_in_shared_bytes(tmp_path, base):
    """IP.flags and IP.frag share header bytes 6-7: ignoring one must not hide the other."""
    frames = list(base[0])
    k = first_ipv4_udp(frames)
    frames[k] = flip(frames[k], 20, 0x40)            # the DF flag
    a = write_dir(tmp_path / "a", {0: base[0]})
    b = write_dir(tmp_path / "b", {0: frames})
    assert compare(a, b, "--ignore", "IP.frag")[0] == 1
    assert compare(a, b, "--ignore", "IP.flags")[0] == 0


def test_ignore_located_by_dissection(tmp_path):
    """Fields beyond the fixed layouts (a VLAN-tagged IPv4 TTL, the VLAN id) are found by
    scapy, only in packets that differ."""
    tagged = [bytes(Ether(src="02:00:00:00:00:09") / Dot1Q(vlan=10 + k) / IP(dst="198.18.0.1", ttl=64) /
                    UDP(sport=k, dport=9)) for k in range(20)]
    changed = list(tagged)
    changed[5] = flip(changed[5], 26)               # TTL of the IP inside the tag
    changed[7] = flip(changed[7], 15)               # VLAN id low byte
    write_pcap(tmp_path / "a.pcap", tagged)
    write_pcap(tmp_path / "b.pcap", changed)
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    code, report = report_json(a, b)
    assert code == 1
    assert [[f["field"] for f in d["fields"]] for d in report["differences"]] == [["IP.ttl"], ["Dot1Q.vlan"]]
    assert report_json(a, b, "--ignore", "IP.ttl")[1]["ports"][0]["modified"] == 1
    assert compare(a, b, "--ignore", "IP.ttl", "--ignore", "Dot1Q.vlan")[0] == 0
    assert compare(a, b, "--ignore", "IP.ttl", "--ignore", "Dot1Q.prio")[0] == 1


def test_ignore_refuses_unknown_names(tmp_path, base):
    a = write_dir(tmp_path / "a", base)
    for bad, needle in [("ip.ttl", "unknown layer 'ip'"), ("IP.foo", "no field 'foo'"), ("ttl", "Layer.field"),
                        ("frame.cap_len", "different lengths")]:
        with pytest.raises(SimError, match=needle):
            compare_paths(a, a, CompareOptions(ignore=(bad,)))


@pytest.fixture(scope="module")
def dissected():
    """Mixed traffic (short frames, ARP, VLAN, 802.3 lengths, IPv4 options and fragments,
    bad IHL/versions, IPv6 extension headers, ...) with scapy's spans of every frame."""
    frames = [f for p in range(4) for f in mixed_frames(11, p, 120)] + well_formed_frames(11, 0, 120)
    return frames, [fields.field_spans(f)[0] for f in frames]


@pytest.mark.parametrize("name", sorted(fields.FIXED_FIELDS))
def test_fixed_field_masks_agree_with_scapy(name, dissected):
    """The vectorised masks clear exactly the bits scapy's dissection assigns to the field,
    in every packet they claim to cover; the rest are left to dissection."""
    frames, spans = dissected
    caplen = np.array([len(f) for f in frames], np.int64)
    starts = np.concatenate([[0], np.cumsum(caplen)[:-1]]).astype(np.int64)
    data = np.frombuffer(b"".join(frames), np.uint8).copy()
    covered = fields.fixed_field_masks(data, starts, caplen, [name])[name]
    assert covered.sum() >= 40, covered.sum()
    for k, frame in enumerate(frames):
        got = data[starts[k]:starts[k] + caplen[k]].tobytes()
        if covered[k]:
            want = np.frombuffer(frame, np.uint8) & fields.bit_mask(len(frame), spans[k], {name})
            assert got == want.tobytes(), (name, k, Ether(frame).summary())
        else:
            assert got == frame


# ---------------------------------------------------------------------------------------
# timestamps
# ---------------------------------------------------------------------------------------
def test_timestamps_only_with_timestamps(tmp_path, base):
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", base, start_ts=1_700_000_000.000005)   # 5 µs later
    assert compare(a, b)[0] == 0
    code, report = report_json(a, b, "--timestamps")
    assert code == 1 and report["totals"]["modified"] == 270
    time_diff = report["differences"][0]["fields"]
    assert time_diff == [{"field": "frame.time", "a": "1700000000.000000000", "b": "1700000000.000005000"}]
    assert compare(a, b, "--ts-tolerance", "0.00001")[0] == 0
    assert compare(a, b, "--ts-tolerance", "0.000004")[0] == 1
    assert compare(a, b, "--timestamps", "--ignore", "frame.time")[0] == 0
    assert compare(a, a, "--timestamps")[0] == 0


# ---------------------------------------------------------------------------------------
# bad input: exit 2, one line, no traceback
# ---------------------------------------------------------------------------------------
def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_corrupt_inputs_exit_2_with_one_line(tmp_path, base):
    good = write_dir(tmp_path / "good", base)
    (tmp_path / "garbage.pcap").write_bytes(b"this is not a pcap file at all")
    write_pcap(tmp_path / "cut.pcap", base[0][:5])
    (tmp_path / "cut.pcap").write_bytes((tmp_path / "cut.pcap").read_bytes()[:-7])
    bad_dir = write_dir(tmp_path / "bad", base)
    (bad_dir / "port1.pcap").write_bytes(b"\xd4\xc3\xb2\xa1" + b"\x00" * 3)
    (tmp_path / "empty").mkdir()
    cases = [
        ((tmp_path / "garbage.pcap", good / "port0.pcap"), "not a pcap"),
        ((good / "port0.pcap", tmp_path / "cut.pcap"), "truncated"),
        ((good, bad_dir), "port1.pcap"),
        ((good, tmp_path / "nowhere"), "no such file or directory"),
        ((good, good / "port0.pcap"), "is a directory"),
        ((good, tmp_path / "empty"), "no port<N>.pcap"),
    ]
    for (a, b), needle in cases:
        res = _cli("compare", a, b)
        assert res.returncode == 2, (a, b, res.stdout[-500:], res.stderr[-500:])
        assert "Traceback" not in res.stderr
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("l3fwd-sim: ") and needle in lines[0], lines
    res = _cli("compare", good, good, "--max-diffs", "-1")
    assert res.returncode == 2 and "--max-diffs" in res.stderr


def test_equal_path_does_not_import_scapy(tmp_path, base):
    """scapy only dissects packets that are reported: equal inputs never load it."""
    a = write_dir(tmp_path / "a", base)
    b = write_dir(tmp_path / "b", base)
    code = ("import sys; from l3fwd_sim.diff.compare import compare_paths, CompareOptions; "
            f"r = compare_paths({str(a)!r}, {str(b)!r}, CompareOptions(ignore=('IP.ttl', 'Ether.src'))); "
            "print(r.equal, any(m.startswith('scapy') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False"]


def test_without_scapy_bytes_are_named_by_offset(tmp_path, base, monkeypatch):
    monkeypatch.setattr(fields, "_scapy", lambda: None)
    frames = list(base[0])
    k = first_ipv4_udp(frames)
    frames[k] = flip(frames[k], 22)
    write_pcap(tmp_path / "a.pcap", base[0])
    write_pcap(tmp_path / "b.pcap", frames)
    report = compare_files(tmp_path / "a.pcap", tmp_path / "b.pcap")
    assert [(f.field, f.a, f.b) for f in report.differences[0].fields] == \
        [("bytes[22:23]", f"{base[0][k][22]:02x}", f"{frames[k][22]:02x}")]
    assert compare_files(tmp_path / "a.pcap", tmp_path / "b.pcap", CompareOptions(ignore=("IP.ttl",))).equal
    with pytest.raises(SimError, match="needs scapy"):
        compare_files(tmp_path / "a.pcap", tmp_path / "b.pcap", CompareOptions(ignore=("Dot1Q.vlan",)))


# ---------------------------------------------------------------------------------------
# against real DPDK output
# ---------------------------------------------------------------------------------------
def test_run_output_equals_golden_dpdk_output(tmp_path):
    scenario = GOLDEN / "mix_default"
    runs = json.loads((GOLDEN / "runs.json").read_text())["mix_default"]
    for expected, pipeline in (("expected-01", "multi"), ("expected-00", "simple")):
        options = shlex.split(runs[expected].replace("{d}", str(scenario)))
        assert options[-2:] == ["--pipeline", pipeline]
        out = tmp_path / expected
        assert run_cli("run", scenario / "in", "-o", out, "--quiet", *options).exit_code == 0
        code, text = compare(out, scenario / expected)
        assert code == 0, text
    # the multi path's output is not the simple path's: DPDK's paths differ (non-IP frames)
    code, report = report_json(tmp_path / "expected-01", scenario / "expected-00")
    assert code == 1
    assert report["totals"]["missing"] > 0 and report["totals"]["modified"] == report["totals"]["extra"] == 0


# ---------------------------------------------------------------------------------------
# properties
# ---------------------------------------------------------------------------------------
frame_lists = st.lists(st.binary(min_size=1, max_size=90), min_size=1, max_size=30, unique=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=frame_lists, edit=st.sampled_from(["flip", "insert", "delete"]), data=st.data())
def test_single_edit_is_classified(frames, edit, data):
    changed = list(frames)
    i = data.draw(st.integers(0, len(frames) - (edit != "insert")), label="index")
    if edit == "flip":
        offset = data.draw(st.integers(0, len(frames[i]) - 1), label="offset")
        bits = data.draw(st.integers(1, 255), label="bits")
        changed[i] = flip(frames[i], offset, bits)
        assume(changed[i] not in frames)
    elif edit == "insert":
        new = data.draw(st.binary(min_size=1, max_size=90), label="new")
        assume(new not in frames)
        changed.insert(i, new)
    else:
        del changed[i]
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.pcap", Path(tmp) / "b.pcap"
        write_pcap(a, frames)
        write_pcap(b, changed)
        report = compare_files(a, b, CompareOptions(max_diffs=3))
    (row,) = report.ports
    counts = (row.matched, row.modified, row.missing, row.extra, row.reordered)
    n = len(frames)
    want = {"flip": (n - 1, 1, 0, 0, 0), "insert": (n, 0, 0, 1, 0), "delete": (n - 1, 0, 1, 0, 0)}[edit]
    assert counts == want
    (diff,) = report.differences
    if edit == "flip":
        assert (diff.kind, diff.index_a, diff.index_b, diff.offsets) == ("modified", i, i, [offset])
        assert diff.fields
    elif edit == "insert":
        assert (diff.kind, diff.index_a, diff.index_b) == ("extra", None, i)
    else:
        assert (diff.kind, diff.index_a, diff.index_b) == ("missing", i, None)


def _lcs_length(a: list, b: list) -> int:
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


tokens = st.lists(st.integers(0, 3), max_size=40)


@settings(max_examples=300, deadline=None)
@given(a=tokens, b=tokens, max_edits=st.sampled_from([1000, 3]))
def test_alignment_pairs_equal_tokens_in_order(a, b, max_edits):
    """Pairs are increasing on both sides and pair equal tokens; with room for the edits
    they form a longest common subsequence (checked by dynamic programming)."""
    result = align(np.array(a, np.int64), np.array(b, np.int64), max_edits=max_edits)
    pa, pb = result.pairs_a.tolist(), result.pairs_b.tolist()
    assert all(x < y for x, y in zip(pa, pa[1:])) and all(x < y for x, y in zip(pb, pb[1:]))
    assert all(a[i] == b[j] for i, j in zip(pa, pb))
    if result.method == "lcs":
        assert len(pa) == _lcs_length(a, b)


def test_alignment_of_random_streams_with_few_edits():
    """Round-robin streams (heavily repeated packets) with scattered edits: still an LCS."""
    rng = random.Random(7)
    a = [k % 5 for k in range(1200)]
    b = list(a)
    for _ in range(6):
        op = rng.choice("di")
        k = rng.randrange(len(b))
        if op == "d":
            del b[k]
        else:
            b.insert(k, 9)
    result = align(np.array(a), np.array(b))
    assert result.method == "lcs"
    assert len(result.pairs_a) == _lcs_length(a, b)
