"""Link-layer header types of capture files, and the few that are turned into Ethernet.

l3fwd forwards Ethernet frames. A capture of another link type is refused with its
LINKTYPE_ number and name (https://www.tcpdump.org/linktypes.html), except where the
packet is plain IPv4/IPv6 behind a header that says which of the two it is, so that an
Ethernet frame carrying the same IP packet is the obvious equivalent:

=====================  ======  ============================================  ==========
link type              value   EtherType of the synthesised header           header
=====================  ======  ============================================  ==========
raw IP                 101     from the IP version nibble (4, 6; else 0)      none
raw IPv4 / raw IPv6    228/229 0x0800 / 0x86DD                               none
Linux cooked (SLL)     113     SLL protocol field (bytes 14..15)             16 bytes
Linux cooked v2 (SLL2) 276     SLL2 protocol field (bytes 0..1)              20 bytes
BSD / OpenBSD loopback 0/108   address family 2 → 0x0800; 24/28/30 → 0x86DD  4 bytes
PPP                    9       protocol 0x0021 → 0x0800, 0x0057 → 0x86DD     1-4 bytes
PPP in HDLC framing    50      after FF: as PPP; after 0F/8F: as Cisco HDLC  4 bytes
Cisco HDLC             104     protocol (an EtherType) 0x0800 / 0x86DD kept   4 bytes
=====================  ======  ============================================  ==========

The serial link types are parsed as tcpdump dissects them (``print-ppp.c``,
``print-chdlc.c``); any protocol other than IPv4/IPv6 (LCP, IPCP, CHAP, SLARP, ...)
gives EtherType 0, a non-IP frame:

* PPP (``ppp_if_print``, ``ppp_print``): the address/control bytes FF 03 (or pppd's
  direction byte 00/01 and 03) may precede the protocol, which is one byte when its first
  byte is odd (RFC 1661 protocol-field compression: 21 is IPv4) and two bytes otherwise;
  0x0800 and 0x86DD count as IPv4/IPv6 too (``handle_ppp``: old Linux captures). A record
  of fewer than 4 bytes (``PPP_HDRLEN``) is short. Two frames tcpdump prints as IP stay
  non-IP, as their bytes are no IP packet: a protocol 0x7Exx (an RFC 1662 byte-stuffed
  frame, which ``handle_ppp`` un-escapes first) and Van Jacobson "uncompressed" TCP
  (0x002F, whose IP protocol byte holds a slot number).
* PPP in HDLC framing (``ppp_hdlc_if_print``): first byte FF, a 2-byte PPP protocol at
  bytes 2..3; first byte 0F or 8F, Cisco HDLC; any other first byte is an unknown
  address (tcpdump takes 2 header bytes and reads no protocol): non-IP. Short: < 4 bytes.
* Cisco HDLC (``chdlc_if_print``): address, control, then an EtherType at bytes 2..3,
  whatever the address byte. Short: < 4 bytes.

The link-layer header is replaced by a 14-byte Ethernet header: destination and source
MAC 00:00:00:00:00:00, then the EtherType above. (l3fwd overwrites both MACs of every
frame it transmits, so they never reach an output.) Captured and wire lengths change by
the difference of the header sizes; a record too short to hold its link-layer header
comes out shorter than an Ethernet header and is dropped as ``truncated``.

The conversion is done in place in the reader's buffer: the Ethernet header is written
over the end of the old link-layer header or, when that is shorter (raw IP, PPP), over
the record header just before the packet, which has been parsed already. A frame's
bytes then stay ``block[offset:offset + caplen]`` as for any other record.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

ETHERNET = 1
ETHER_HEADER = 14
ETH_P_IP, ETH_P_IPV6 = 0x0800, 0x86DD

NAMES = {
    0: "BSD loopback", 1: "Ethernet", 3: "AX.25", 6: "Token Ring", 7: "ARCNET", 8: "SLIP", 9: "PPP",
    10: "FDDI", 50: "PPP in HDLC framing", 51: "PPPoE", 100: "ATM RFC 1483", 101: "raw IP",
    104: "Cisco HDLC", 105: "802.11", 107: "Frame Relay", 108: "OpenBSD loopback",
    113: "Linux cooked (SLL)", 114: "LocalTalk", 117: "OpenBSD pflog", 119: "802.11 Prism",
    122: "IP over Fibre Channel", 123: "SunATM", 127: "802.11 radiotap", 129: "ARCNET (Linux)",
    137: "Juniper ATM1", 138: "IP over IEEE 1394", 139: "MTP2 with pseudo-header", 140: "MTP2",
    141: "MTP3", 142: "SCCP", 143: "DOCSIS", 144: "IrDA (Linux)",
    **{147 + i: f"user-defined {i}" for i in range(16)},
    163: "802.11 AVS", 166: "PPP (pppd)", 169: "GPRS LLC", 177: "LAPD (Linux)", 178: "Juniper Ethernet",
    182: "multi-link Frame Relay", 187: "Bluetooth HCI H4", 189: "USB (Linux)", 192: "PPI",
    195: "802.15.4 with FCS", 201: "Bluetooth HCI H4 with pseudo-header", 220: "USB (Linux, mmapped)",
    227: "SocketCAN", 228: "raw IPv4", 229: "raw IPv6", 230: "802.15.4 without FCS", 239: "NFLOG",
    240: "netANALYZER", 242: "IP over InfiniBand", 247: "InfiniBand", 248: "SCTP", 249: "USBPcap",
    251: "Bluetooth LE LL", 253: "Netlink", 254: "Bluetooth Linux monitor", 256: "Bluetooth LE LL with pseudo-header",
    258: "Apple PKTAP", 266: "USB (Darwin)", 270: "LoRaTap", 271: "vsock", 272: "Nordic BLE",
    274: "Ethernet mPackets", 276: "Linux cooked v2 (SLL2)", 281: "Broadcom DSA tag",
    282: "Broadcom DSA tag (prepended)", 283: "802.15.4 TAP", 284: "Marvell DSA tag", 285: "Marvell EDSA tag",
}


def link_name(linktype: int) -> str:
    return NAMES.get(linktype, "unknown")


def _u16be(buf: np.ndarray, at: np.ndarray) -> np.ndarray:
    return buf[at].astype(np.int64) << 8 | buf[at + 1]


def _by_version(buf, offsets, caplen):
    version = np.where(caplen >= 1, buf[offsets] >> 4, 0)
    return np.select([version == 4, version == 6], [ETH_P_IP, ETH_P_IPV6], 0)


def _by_family(buf, offsets, caplen):
    # BSD loopback stores the family in the capturing host's byte order: accept either.
    little = (buf[offsets].astype(np.int64) | buf[offsets + 1].astype(np.int64) << 8 |
              buf[offsets + 2].astype(np.int64) << 16 | buf[offsets + 3].astype(np.int64) << 24)
    big = (buf[offsets].astype(np.int64) << 24 | buf[offsets + 1].astype(np.int64) << 16 |
           buf[offsets + 2].astype(np.int64) << 8 | buf[offsets + 3])
    v6 = np.isin(little, (24, 28, 30)) | np.isin(big, (24, 28, 30))
    return np.select([(little == 2) | (big == 2), v6], [ETH_P_IP, ETH_P_IPV6], 0)


def _ip_kind(proto: np.ndarray, ipv4: tuple, ipv6: tuple) -> np.ndarray:
    """0x0800 where ``proto`` is one of the ``ipv4`` codes, 0x86DD for ``ipv6``, else 0."""
    return np.select([np.isin(proto, ipv4), np.isin(proto, ipv6)], [ETH_P_IP, ETH_P_IPV6], 0)


# handle_ppp's IP codes: PPP_IP / PPP_IPV6, and the EtherTypes old Linux captures carry
_PPP_IPV4, _PPP_IPV6 = (0x0021, ETH_P_IP), (0x0057, ETH_P_IPV6)
_CHDLC_IPV4, _CHDLC_IPV6 = (ETH_P_IP,), (ETH_P_IPV6,)
_PPP_ADDRESS, _CHDLC_ADDRESSES = 0xFF, (0x0F, 0x8F)


def _ppp(buf, offsets, caplen):
    """tcpdump's ``ppp_print``: address/control FF 03 (or pppd's direction byte 00/01
    and 03) skipped when present, then a 1-byte protocol if its byte is odd (RFC 1661
    protocol-field compression), else a 2-byte one."""
    framed = np.isin(buf[offsets], (0x00, 0x01, _PPP_ADDRESS)) & (buf[offsets + 1] == 0x03)
    at = offsets + 2 * framed
    compressed = (buf[at] & 1).astype(np.int64)
    proto = np.where(compressed == 1, buf[at], _u16be(buf, at))
    return _ip_kind(proto, _PPP_IPV4, _PPP_IPV6), 2 * framed + 2 - compressed


def _chdlc(buf, offsets, caplen):
    """tcpdump's ``chdlc_print``: the EtherType at bytes 2..3, whatever the address."""
    return _ip_kind(_u16be(buf, offsets + 2), _CHDLC_IPV4, _CHDLC_IPV6)


def _ppp_hdlc(buf, offsets, caplen):
    """tcpdump's ``ppp_hdlc_if_print``: after address FF a 2-byte PPP protocol at
    bytes 2..3; after 0F/8F Cisco HDLC; any other address is unknown, 2 header bytes
    and no protocol (non-IP)."""
    first, proto = buf[offsets], _u16be(buf, offsets + 2)
    ppp, cisco = first == _PPP_ADDRESS, np.isin(first, _CHDLC_ADDRESSES)
    kind = np.select([ppp, cisco], [_ip_kind(proto, _PPP_IPV4, _PPP_IPV6),
                                    _ip_kind(proto, _CHDLC_IPV4, _CHDLC_IPV6)], 0)
    return kind, np.where(ppp | cisco, 4, 2)


@dataclass(frozen=True)
class Conversion:
    """How one link type becomes Ethernet. ``header``: the bytes a record needs to be
    converted (the header's size, or the shortest record tcpdump dissects when the size
    varies); ``parse(buf, offsets, caplen)``: each record's EtherType and link-layer
    header size (read before the header is overwritten; meaningless for a short record)."""
    header: int
    parse: Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

    def to_ethernet(self, buf: np.ndarray, offsets: np.ndarray, caplen: np.ndarray,
                    wirelen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Rewrite the records at ``offsets`` in ``buf`` in place; return their new
        offsets, captured and wire lengths. A short record is left as it is and loses
        ``header`` bytes from its front: it comes out shorter than an Ethernet header."""
        complete = caplen >= self.header
        kinds, size = self.parse(buf, offsets, caplen)
        size = np.where(complete, size, self.header)
        start = offsets + size - ETHER_HEADER
        rows = start[complete, None] + np.arange(ETHER_HEADER)
        buf[rows[:, :12]] = 0
        buf[rows[:, 12]] = kinds[complete] >> 8
        buf[rows[:, 13]] = kinds[complete] & 0xFF
        delta = ETHER_HEADER - size
        return start, np.maximum(caplen + delta, 0), np.maximum(wirelen + delta, 0)


def _fixed(header: int, ethertype) -> Conversion:
    """The conversion of a link-layer header of one size; ``ethertype(buf, offsets,
    caplen)`` gives each record's EtherType."""
    return Conversion(header, lambda buf, off, cap: (ethertype(buf, off, cap), np.full(len(off), header)))


CONVERSIONS = {
    101: _fixed(0, _by_version),
    228: _fixed(0, lambda buf, off, cap: np.full(len(off), ETH_P_IP)),
    229: _fixed(0, lambda buf, off, cap: np.full(len(off), ETH_P_IPV6)),
    113: _fixed(16, lambda buf, off, cap: _u16be(buf, off + 14)),
    276: _fixed(20, lambda buf, off, cap: _u16be(buf, off)),
    0: _fixed(4, _by_family),
    108: _fixed(4, _by_family),
    9: Conversion(4, _ppp),            # 4: PPP_HDRLEN, the shortest record ppp_if_print dissects
    50: Conversion(4, _ppp_hdlc),
    104: _fixed(4, _chdlc),            # CHDLC_HDRLEN
}


# Bytes a reader must keep free before a record's data for the widest in-place rewrite.
FRONT_ROOM = ETHER_HEADER


# libpcap's linktype_to_dlt (pcap-common.c) on Linux: the LINKTYPE_ values whose DLT_ differs
_DLT_OF = {100: 11, 101: 12, 102: 15, 103: 16, 106: 19}


def libpcap_dlt(linktype: int) -> int:
    """The DLT_ value libpcap gives a file's LINKTYPE_ ``linktype`` (on Linux): what
    ``sf-pcapng.c`` compares every later interface's LINKTYPE_ with — so a pcapng file
    whose first interface is raw IP (101 → DLT_RAW 12) has every further interface
    rejected, raw IP or not."""
    return _DLT_OF.get(linktype, linktype)


def conversion(linktype: int) -> Conversion | None:
    """``None`` for Ethernet; the :class:`Conversion` of a convertible link type; else
    raise ``ValueError`` with a message naming the link type."""
    if linktype == ETHERNET:
        return None
    if linktype in CONVERSIONS:
        return CONVERSIONS[linktype]
    raise ValueError(f"link type {linktype} ({link_name(linktype)}) is not supported (Ethernet is; raw IP, "
                     f"Linux cooked, BSD loopback, PPP and Cisco HDLC captures are converted)")
