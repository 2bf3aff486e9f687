"""``compare`` on captures of any link type: frames are compared as stored (a PPP, Cisco
HDLC or 802.11 capture is neither refused nor converted to Ethernet), so identical
captures are equal and any changed byte -- link-layer header included -- differs.

Edits are made to known frames built with scapy or by hand, so the expected report
follows from the edit, not from compare's code.
"""
from __future__ import annotations

import shutil

import pytest
from forwarding import CORPUS, run_cli
from scapy.layers.inet import IP, UDP
from scapy.layers.ppp import HDLC, PPP, PPP_IPCP, PPP_LCP
from serial_links import C_HDLC, PPP_HDLC, classic_pcap

from l3fwd_sim.diff.compare import CompareOptions, compare_files

PPP_LINK, RADIOTAP = 9, 127


def ppp_frames(n: int = 20, ttl: int = 64) -> list[bytes]:
    """PPP frames as stored: IPv4/UDP in three framings, and LCP / IPCP."""
    out = []
    for k in range(n):
        ip = IP(src="198.18.0.1", dst="198.18.1.0", ttl=ttl) / UDP(sport=1000 + k, dport=9) / (b"x" * 10)
        out.append(bytes([PPP() / ip, HDLC() / PPP() / ip, PPP() / PPP_LCP(code=9, data=b"abcd"),
                          PPP() / PPP_IPCP(code=1)][k % 4]))
    return out


def write(path, frames, linktype=PPP_LINK):
    path.write_bytes(classic_pcap([(f, len(f)) for f in frames], linktype))
    return path


def compare_cli(a, b, *args):
    result = run_cli("compare", a, b, *args)
    assert "Traceback" not in result.output
    return result


def test_identical_ppp_captures_are_equal(tmp_path):
    frames = ppp_frames()
    a, b = write(tmp_path / "a.pcap", frames), write(tmp_path / "b.pcap", frames)
    result = compare_cli(a, b)
    assert result.exit_code == 0, result.output
    assert "equal: 1 port, 20 packets match" in result.output


@pytest.mark.parametrize("offset,what", [(1, "HDLC.control"), (3, "PPP.proto")])
def test_a_changed_link_layer_byte_is_a_difference(tmp_path, offset, what):
    """Frame 1 (FF 03 00 21 ...) changed in its HDLC control or PPP protocol byte: the
    IP packet is the same, the frame is not."""
    frames = ppp_frames()
    changed = list(frames)
    changed[1] = frames[1][:offset] + bytes([frames[1][offset] ^ 0x02]) + frames[1][offset + 1:]
    a, b = write(tmp_path / "a.pcap", frames), write(tmp_path / "b.pcap", changed)
    result = compare_cli(a, b)
    assert result.exit_code == 1 and "DIFFER" in result.output
    report = compare_files(a, b)
    assert (report.ports[0].matched, report.ports[0].modified) == (19, 1)
    diff = report.differences[0]
    assert (diff.index_a, diff.index_b, diff.offsets) == (1, 1, [offset])
    assert what in [f.field for f in diff.fields]


def test_control_frames_of_other_protocols_differ(tmp_path):
    """LCP and IPCP frames with the same payload: the same non-IP frame after a
    conversion to Ethernet, but different frames as stored."""
    lcp = bytes(PPP() / PPP_LCP(code=1, id=7))
    ipcp = bytes(PPP() / PPP_IPCP(code=1, id=7))
    assert lcp[2:] == ipcp[2:] and lcp != ipcp
    a, b = write(tmp_path / "a.pcap", [lcp]), write(tmp_path / "b.pcap", [ipcp])
    assert compare_cli(a, b).exit_code == 1


def test_ignored_fields_are_found_by_dissecting_the_link_type(tmp_path):
    """IP.ttl and IP.chksum ignored in a PPP capture: scapy finds them after the PPP header; the
    Ethernet fixed offsets are not applied (Ether.dst would otherwise mask bytes 0..5)."""
    a = write(tmp_path / "a.pcap", ppp_frames(ttl=64))
    b = write(tmp_path / "b.pcap", ppp_frames(ttl=9))
    assert compare_cli(a, b).exit_code == 1
    assert compare_cli(a, b, "--ignore", "IP.ttl").exit_code == 1          # the checksum differs too
    assert compare_cli(a, b, "--ignore", "IP.ttl", "--ignore", "IP.chksum").exit_code == 0
    frames = ppp_frames()
    changed = [bytes([f[0] ^ 0x10]) + f[1:] for f in frames]
    c, d = write(tmp_path / "c.pcap", frames), write(tmp_path / "d.pcap", changed)
    result = compare_cli(c, d, "--ignore", "Ether.dst")
    assert result.exit_code == 1 and compare_files(c, d, CompareOptions(ignore=("Ether.dst",))).totals()[
        "modified"] == len(frames)


@pytest.mark.parametrize("linktype", [PPP_HDLC, C_HDLC, RADIOTAP])
def test_captures_of_other_link_types_compare_by_their_bytes(tmp_path, linktype):
    """Cisco HDLC (no scapy layer) and 802.11 radiotap (which run refuses) alike."""
    frames = [bytes([0x0F, 0x00, 0x08, 0x00]) + bytes(IP(dst=f"10.0.0.{k}") / UDP()) for k in range(5)]
    a, b = write(tmp_path / "a.pcap", frames, linktype), write(tmp_path / "b.pcap", frames, linktype)
    assert compare_cli(a, b).exit_code == 0
    c = write(tmp_path / "c.pcap", frames[:2] + frames[3:], linktype)
    result = compare_cli(a, c, "--json")
    assert result.exit_code == 1
    assert compare_files(a, c).totals()["missing"] == 1


def test_same_bytes_of_different_link_types_differ(tmp_path):
    frames = ppp_frames(4)
    a, b = write(tmp_path / "a.pcap", frames), write(tmp_path / "b.pcap", frames, PPP_HDLC)
    result = compare_cli(a, b)
    assert result.exit_code == 1
    assert "link types differ: A PPP (9), B PPP in HDLC framing (50)" in result.output
    report = compare_files(a, b)
    assert report.totals()["modified"] == 4
    assert report.differences[0].fields[0].field == "linktype"


@pytest.mark.parametrize("name", ["chdlc-slarp.pcap", "HDLC.pcap", "ppp_error_hexdump.pcap",
                                  "heapoverflow-ppp_hdlc_if_print.pcap", "ppp-invalid-lengths.pcap"])
def test_corpus_serial_captures_compare_equal_to_a_copy(tmp_path, name):
    path = CORPUS / name
    copy = tmp_path / name
    shutil.copyfile(path, copy)
    result = compare_cli(path, copy)
    assert result.exit_code == 0 and "equal" in result.output, result.output
