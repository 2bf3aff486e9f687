"""The pcapng blocks one at a time (``section_header``, ``interface_block``,
``packet_block`` of ``capture/pcapng_writer.py``), read back by scapy's pcapng reader:
several interfaces of their own link types, packets of every padding with and without
a comment, 64-bit time stamps; ``PcapngWriter``'s ``file_header``, byte for byte."""
from __future__ import annotations

import random
import struct

from scapy.utils import RawPcapNgReader

from l3fwd_sim.capture.pcapng_writer import file_header, interface_block, packet_block, section_header


def test_blocks_read_back_by_scapy(tmp_path):
    rng = random.Random(3)
    interfaces = [("port0", 1, True), ("port1", 1, True), ("ppp", 9, False)]
    packets = []
    for k in range(40):
        interface = rng.randrange(len(interfaces))
        frame = rng.randbytes(rng.choice([0, 1, 2, 3, 4, 5, 60, 61, 1514]))
        comment = rng.choice([None, "", "x", "port 2, packet A[17] modified in B[17]: IP.ttl 63→64", "é" * 301])
        packets.append((interface, rng.randrange(1 << 62), len(frame) + rng.choice([0, 4]), frame, comment))
    data = section_header("the capture's comment") + b"".join(
        interface_block(name, nanosecond, linktype) for name, linktype, nanosecond in interfaces)
    data += b"".join(packet_block(*p) for p in packets)
    (tmp_path / "f.pcapng").write_bytes(data)
    read = list(RawPcapNgReader(str(tmp_path / "f.pcapng")))
    assert len(read) == len(packets)
    for (pkt, meta), (interface, ticks, wirelen, frame, comment) in zip(read, packets):
        name, linktype, nanosecond = interfaces[interface]
        assert bytes(pkt) == frame and meta.wirelen == wirelen
        assert (meta.tshigh << 32 | meta.tslow) == ticks and meta.tsresol == (10**9 if nanosecond else 10**6)
        assert (meta.ifname.decode(), meta.linktype) == (name, linktype)
        assert meta.comments == (None if comment is None else [comment.encode()])


def test_a_comment_longer_than_an_option_is_cut_at_a_character():
    block = packet_block(0, 0, 4, b"abcd", "é" * 40_000)
    length, = struct.unpack_from("<I", block, 4)
    assert length == len(block) and struct.unpack_from("<I", block, len(block) - 4)[0] == length
    code, size = struct.unpack_from("<HH", block, 32)
    text = block[36:36 + size].decode()                # whole characters
    assert code == 1 and size <= 0xFFFF and text == "é" * (len(text) - 1) + "…"


def test_file_header_is_what_pcapng_writer_always_wrote():
    """An SHB without options, then the IDB: Ethernet, snaplen 262144, if_name, if_tsresol."""
    shb = struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28)
    options = struct.pack("<HH", 2, 5) + b"port3\0\0\0" + struct.pack("<HHB3x", 9, 1, 9) + bytes(4)
    idb = struct.pack("<IIHHI", 1, 20 + len(options), 1, 0, 262144) + options + struct.pack("<I", 20 + len(options))
    assert file_header("port3", True) == shb + idb
