"""An independent model of how tcpdump dissects the serial link types l3fwd-sim turns
into Ethernet, one frame at a time in plain Python (the simulator parses whole batches
with numpy): what the converted frame must be.

* PPP (LINKTYPE_PPP, 9) -- ``ppp_if_print``/``ppp_print``: shorter than 4 bytes is
  truncated; FF 03, 00 03 or 01 03 in front are skipped; an odd byte is a 1-byte protocol
  (RFC 1661 protocol-field compression), else the protocol has 2 bytes.
* PPP in HDLC framing (50) -- ``ppp_hdlc_if_print``: shorter than 4 is truncated; FF:
  protocol at bytes 2..3; 0F/8F: Cisco HDLC; anything else: 2 header bytes, no protocol.
* Cisco HDLC (104) -- ``chdlc_if_print``: shorter than 4 is truncated; EtherType at 2..3.

``handle_ppp`` prints 0x0021/0x0800 as IPv4, 0x0057/0x86DD as IPv6.
"""
from __future__ import annotations

import struct

PPP, PPP_HDLC, C_HDLC = 9, 50, 104
ETHERTYPE = {"IPv4": b"\x08\x00", "IPv6": b"\x86\xdd", None: b"\x00\x00"}


def _ppp_protocol(proto: int) -> str | None:
    if proto in (0x0021, 0x0800):
        return "IPv4"
    if proto in (0x0057, 0x86DD):
        return "IPv6"
    return None


def _chdlc(frame: bytes) -> tuple[int, str | None]:
    proto = struct.unpack(">H", frame[2:4])[0]
    return 4, {0x0800: "IPv4", 0x86DD: "IPv6"}.get(proto)


def dissect(linktype: int, frame: bytes) -> tuple[int, str | None] | None:
    """(link-layer header bytes, "IPv4" / "IPv6" / None for non-IP), or None when tcpdump
    calls the frame truncated."""
    if len(frame) < 4:
        return None
    if linktype == C_HDLC:
        return _chdlc(frame)
    if linktype == PPP_HDLC:
        if frame[0] == 0xFF:
            return 4, _ppp_protocol(struct.unpack(">H", frame[2:4])[0])
        if frame[0] in (0x0F, 0x8F):
            return _chdlc(frame)
        return 2, None
    assert linktype == PPP
    skip = 2 if frame[1] == 0x03 and frame[0] in (0xFF, 0x00, 0x01) else 0
    if frame[skip] & 1:
        return skip + 1, _ppp_protocol(frame[skip])
    return skip + 2, _ppp_protocol(struct.unpack(">H", frame[skip:skip + 2])[0])


def as_ethernet(linktype: int, frame: bytes, wirelen: int) -> tuple[bytes | None, int, int]:
    """(converted frame, its captured length, its wire length). A truncated record comes
    out 4 bytes shorter at its front plus 14 (shorter than an Ethernet header): its bytes
    are left unspecified (None)."""
    parsed = dissect(linktype, frame)
    if parsed is None:
        return None, len(frame) + 10, max(wirelen + 10, 0)
    header, kind = parsed
    return bytes(12) + ETHERTYPE[kind] + frame[header:], len(frame) + 14 - header, max(wirelen + 14 - header, 0)


def classic_pcap(records, linktype: int, snaplen: int = 262144) -> bytes:
    """A little-endian µs classic pcap of ``records``: (frame, wirelen) pairs."""
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)]
    for k, (frame, wire) in enumerate(records):
        out.append(struct.pack("<IIII", 1_700_000_000 + k, k, len(frame), wire) + frame)
    return b"".join(out)
