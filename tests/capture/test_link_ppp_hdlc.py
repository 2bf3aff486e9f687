"""PPP (9), PPP in HDLC framing (50) and Cisco HDLC (104) captures become Ethernet.

Oracles are independent of the package: captures are built with scapy (PPP, HDLC) or by
hand (Cisco HDLC, odd framings), the IP packet a frame carries is what scapy dissects
out of it, and ``serial_links`` models tcpdump's dissection one frame at a time in plain
Python; forwarding is checked against the same IP packets captured as Ethernet.
"""
from __future__ import annotations

import random
import struct

import pytest
from frames import HUGE, read_all, read_pcap_frames, well_formed_frames
from handmade import Ng
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.layers.ppp import HDLC, PPP, PPP_IPCP, PPP_LCP
from serial_links import C_HDLC, PPP_HDLC, as_ethernet, classic_pcap

from forwarding import CORPUS

from l3fwd_sim import RunOptions, run
from l3fwd_sim.errors import SimError

PPP_LINK = 9


def converted(path, plan=(HUGE,)) -> list[tuple[bytes, int]]:
    """(frame, wirelen) of every record as l3fwd-sim hands them over, in batches of
    ``plan`` sizes (with ``read_all``'s checks of each batch)."""
    return [(frame, wirelen) for frame, wirelen, _ in read_all(path, plan)[0]]


def pcapng(records, linktype: int, simple: bool = False) -> bytes:
    """One section, one interface of ``linktype``; Enhanced (or Simple) Packet Blocks."""
    ng = Ng("<")
    return ng.shb() + ng.idb(linktype) + b"".join(ng.spb(frame) if simple else ng.epb(0, k, frame, wire)
                                                  for k, (frame, wire) in enumerate(records))


def ip_packets(seed: int, n: int) -> list[bytes]:
    return [f[14:] for f in well_formed_frames(seed, 0, n)]


def chdlc(ip: bytes, address: int = 0x0F) -> bytes:
    """Cisco HDLC by hand (scapy has no layer for it): address, control 0, EtherType."""
    return bytes([address, 0]) + (b"\x86\xdd" if ip[0] >> 4 == 6 else b"\x08\x00") + ip


def framings(ip: bytes, rng: random.Random) -> tuple[int, bytes]:
    """(link type, frame) carrying ``ip`` in one of the framings tcpdump accepts."""
    v6 = ip[0] >> 4 == 6
    choice = rng.randrange(7)
    if choice == 0:
        return PPP_LINK, bytes(PPP(proto=0x57 if v6 else 0x21) / ip)                   # protocol only
    if choice == 1:
        return PPP_LINK, bytes(HDLC() / PPP(proto=0x57 if v6 else 0x21) / ip)          # FF 03 first
    if choice == 2:
        return PPP_LINK, (b"\x57" if v6 else b"\x21") + ip                             # compressed protocol
    if choice == 3:
        return PPP_LINK, (b"\x86\xdd" if v6 else b"\x08\x00") + ip                     # old Linux: an EtherType
    if choice == 4:
        return PPP_HDLC, bytes(HDLC() / PPP(proto=0x57 if v6 else 0x21) / ip)
    if choice == 5:
        return PPP_HDLC, chdlc(ip, rng.choice([0x0F, 0x8F]))
    return C_HDLC, chdlc(ip, rng.choice([0x0F, 0x8F]))


# ---------------------------------------------------------------------------------------
# the converted frames
# ---------------------------------------------------------------------------------------
def serial_frames(linktype: int, ips: list[bytes], rng: random.Random) -> list[bytes]:
    """Each IP packet in a framing of ``linktype``."""
    frames = []
    for ip in ips:
        kind, frame = framings(ip, rng)
        while kind != linktype:
            kind, frame = framings(ip, rng)
        frames.append(frame)
    return frames


def test_the_framings_carry_their_ip_packet_as_scapy_dissects_them():
    """The test's own framings, checked against scapy where scapy dissects them."""
    rng = random.Random(1)
    checked = 0
    for ip in ip_packets(1, 200):
        kind, frame = framings(ip, rng)
        assert frame.endswith(ip)
        if kind in (PPP_LINK, PPP_HDLC) and frame[0] != 0x0F and frame[0] != 0x8F and frame[:2] not in (
                b"\x08\x00", b"\x86\xdd"):
            layer = IPv6 if ip[0] >> 4 == 6 else IP
            assert bytes(PPP(frame)[layer]) == ip
            checked += 1
    assert checked > 50


@pytest.mark.parametrize("linktype", [PPP_LINK, PPP_HDLC, C_HDLC])
@pytest.mark.parametrize("fmt", ["pcap", "pcapng", "pcapng-spb"])
def test_ip_frames_become_ethernet_carrying_the_same_ip_packet(tmp_path, linktype, fmt):
    """Zero MACs, 0x0800/0x86DD, then exactly the IP packet the frame carries; wire
    lengths change by the header sizes."""
    ips = ip_packets(linktype, 120)
    frames = serial_frames(linktype, ips, random.Random(linktype))
    extra = [0, 0, 3]
    records = [(f, len(f) + (0 if fmt == "pcapng-spb" else extra[k % 3])) for k, f in enumerate(frames)]
    path = tmp_path / f"in.{fmt}"
    path.write_bytes(classic_pcap(records, linktype) if fmt == "pcap" else
                     pcapng(records, linktype, simple=fmt == "pcapng-spb"))
    for plan in ([HUGE], [1], [7, 64]):
        got = converted(path, plan)
        assert len(got) == len(records)
        for ip, (frame, wire), (conv, conv_wire) in zip(ips, records, got):
            layer = IPv6 if ip[0] >> 4 == 6 else IP
            eth = Ether(conv)
            assert conv[:12] == bytes(12) and conv[14:] == ip
            assert eth.type == (0x86DD if layer is IPv6 else 0x0800) and bytes(eth[layer]) == ip
            assert conv_wire == wire - (len(frame) - len(ip)) + 14


PREFIXES = [b"", b"\xff\x03", b"\x00\x03", b"\x01\x03", b"\x0f\x00", b"\x8f\x00", b"\xff\x60", b"\x7e\xff"]
PROTOCOLS = [b"\x21", b"\x57", b"\x00\x21", b"\x00\x57", b"\x08\x00", b"\x86\xdd", b"\xc0\x21", b"\x80\x21",
             b"\x80\x35", b"\x00\x2f", b"\x7e\x80", b""]
frame_strategy = st.one_of(
    st.tuples(st.sampled_from(PREFIXES), st.sampled_from(PROTOCOLS), st.binary(max_size=40)).map(b"".join),
    st.binary(max_size=6))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(linktype=st.sampled_from([PPP_LINK, PPP_HDLC, C_HDLC]),
       records=st.lists(st.tuples(frame_strategy, st.integers(-3, 3)), max_size=25),
       fmt=st.sampled_from(["pcap", "pcapng"]), plan=st.sampled_from([[HUGE], [1], [3, 16]]))
def test_any_frame_is_converted_as_tcpdump_dissects_it(tmp_path, linktype, records, fmt, plan):
    """Every record comes out: a frame tcpdump dissects as its IP/non-IP Ethernet
    equivalent, a truncated one shorter than an Ethernet header (dropped as truncated)."""
    records = [(f, max(len(f) + d, 0)) for f, d in records]
    path = tmp_path / f"prop.{fmt}"
    path.write_bytes(classic_pcap(records, linktype) if fmt == "pcap" else pcapng(records, linktype))
    got = converted(path, plan)
    assert len(got) == len(records)
    for (frame, wire), (conv, conv_wire) in zip(records, got):
        expect, caplen, wirelen = as_ethernet(linktype, frame, wire)
        assert len(conv) == caplen and conv_wire == wirelen
        if expect is None:
            assert len(conv) < 14
        else:
            assert conv == expect


@pytest.mark.parametrize("linktype", [PPP_LINK, PPP_HDLC, C_HDLC])
def test_records_shorter_than_the_link_header_are_dropped_as_truncated(tmp_path, linktype):
    records = [(bytes([0xFF, 0x03, 0x00])[:n], n) for n in range(4)]
    path = tmp_path / "short.pcap"
    path.write_bytes(classic_pcap(records, linktype))
    assert [len(f) for f, _ in converted(path)] == [n + 10 for n in range(4)]
    for pipeline in ("multi", "simple"):
        stats = run(RunOptions(inputs={0: path}, outdir=tmp_path / pipeline, pipeline=pipeline))
        assert stats["totals"]["rx"] == 4 and stats["drops"]["truncated"] == 4


def test_control_protocols_become_non_ip_frames(tmp_path):
    """LCP, IPCP and SLARP keep their bytes behind EtherType 0, which l3fwd does not
    take for IP."""
    lcp = bytes(HDLC() / PPP() / PPP_LCP(code=9, data=b"\x01\x02\x03\x04"))
    ipcp = bytes(PPP() / PPP_IPCP(code=1))
    slarp = bytes([0x8F, 0x00, 0x80, 0x35]) + struct.pack(">III", 2, 5, 4) + b"\xff\xff"
    cases = [(PPP_LINK, lcp, 4), (PPP_LINK, ipcp, 2), (PPP_HDLC, lcp, 4), (PPP_HDLC, slarp, 4), (C_HDLC, slarp, 4)]
    for k, (linktype, frame, header) in enumerate(cases):
        path = tmp_path / f"ctl{k}.pcap"
        path.write_bytes(classic_pcap([(frame, len(frame))], linktype))
        [(conv, wire)] = converted(path)
        assert conv == bytes(14) + frame[header:] and wire == len(conv)


# ---------------------------------------------------------------------------------------
# forwarding
# ---------------------------------------------------------------------------------------
def _masked_ip(ip: bytes) -> bytes:
    """An IPv4 header without TTL and checksum (what l3fwd's forwarding rewrites)."""
    return ip[:8] + ip[9:10] + ip[12:]


@pytest.mark.parametrize("linktype", [PPP_LINK, PPP_HDLC, C_HDLC])
def test_run_forwards_like_the_same_packets_over_ethernet(tmp_path, linktype):
    """``run`` on a serial capture (IP and control frames mixed) forwards exactly what
    it forwards from the Ethernet capture of the oracle's frames; every packet is
    counted; forwarded IPv4 packets are the input packets with TTL and checksum updated."""
    ips = ip_packets(7 + linktype, 300)
    records = [(f, len(f)) for f in serial_frames(linktype, ips, random.Random(100 + linktype))]
    control = bytes(PPP() / PPP_LCP(code=9, data=b"abcd")) if linktype == PPP_LINK else \
        bytes([0x8F, 0x00, 0x80, 0x35]) + bytes(14)
    records[::25] = [(control, len(control))] * len(records[::25])
    (tmp_path / "serial.pcap").write_bytes(classic_pcap(records, linktype))
    ether = [as_ethernet(linktype, f, w) for f, w in records]
    (tmp_path / "eth.pcap").write_bytes(classic_pcap([(f, w) for f, _, w in ether], 1))
    outputs = {}
    for name in ("serial.pcap", "eth.pcap"):
        for pipeline in ("multi", "simple"):
            out = tmp_path / f"out-{name}-{pipeline}"
            stats = run(RunOptions(inputs={0: tmp_path / name}, outdir=out, portmask=0xF, pipeline=pipeline))
            totals = stats["totals"]
            assert totals["rx"] == len(records) == totals["tx"] + totals["dropped"]
            for port in stats["ports"].values():
                assert port["rx"] == port["tx"] + port["dropped"]
            outputs[name, pipeline] = ([read_pcap_frames(out / f"port{p}.pcap") for p in range(4)], totals)
    for pipeline in ("multi", "simple"):
        assert outputs["serial.pcap", pipeline] == outputs["eth.pcap", pipeline]
    sent = [f for port in outputs["serial.pcap", "multi"][0] for f in port]
    assert outputs["serial.pcap", "multi"][1]["tx"] > len(records) // 2
    inputs = {_masked_ip(ip): ip for ip in ips if ip[0] >> 4 == 4}
    forwarded4 = [f[14:] for f in sent if f[12:14] == b"\x08\x00"]
    assert forwarded4
    for ip in forwarded4:
        original = inputs[_masked_ip(ip)]
        assert ip[8] == original[8] - 1


# ---------------------------------------------------------------------------------------
# the tcpdump corpus
# ---------------------------------------------------------------------------------------
SERIAL_CAPTURES = ["chdlc-slarp.pcap", "HDLC.pcap", "ppp_error_hexdump.pcap",
                   "heapoverflow-ppp_hdlc_if_print.pcap", "ppp-invalid-lengths.pcap"]


@pytest.mark.parametrize("name", SERIAL_CAPTURES)
def test_corpus_serial_captures_are_read_and_forwarded(tmp_path, name):
    path = CORPUS / name
    got = converted(path)
    assert got
    for pipeline in ("multi", "simple"):
        try:
            stats = run(RunOptions(inputs={0: path}, outdir=tmp_path / pipeline, portmask=0xF, pipeline=pipeline))
        except SimError as err:          # never: these files are complete and of a supported link type
            pytest.fail(str(err))
        totals = stats["totals"]
        assert totals["rx"] == len(got) == totals["tx"] + totals["dropped"]
