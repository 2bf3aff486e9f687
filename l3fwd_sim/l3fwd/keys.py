"""How a lookup key is written as text, and read back: the one spelling that traces and
``l3fwd-sim lookup`` share.

Each table reads its key at fixed frame offsets (L3 at 14), as l3fwd does:

* ``lpm4``/``fib4``: the IPv4 destination, bytes 30..33 — ``198.18.1.7``;
* ``lpm6``/``fib6``: the IPv6 destination, bytes 38..53 — ``2001:200:0:1::9``
  (the canonical compressed form, as Python's :mod:`ipaddress` writes it);
* ``em4``/``acl4``: protocol 23, source 26..29, destination 30..33, L4 ports 34..37
  (``em_mask_key``; acl's ``ipv4_defs``) — ``udp 198.18.0.1:9 > 198.18.0.0:9``;
* ``em6``/``acl6``: next header 20, source 22..37, destination 38..53, ports 54..57 —
  ``udp [2001:db8::1]:9 > [2001:db8::2]:53``.

The protocol is written ``tcp`` (6), ``udp`` (17) or as its decimal number.
"""
from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass

from ..errors import SimError

FRAME_BYTES = 64                 # a parsed key's frame: a minimum Ethernet frame, zero padded
KEY_BYTES = 58                   # the last key byte of any table (IPv6 ports 54..57) + 1
TABLES = {"lpm": ("lpm4", "lpm6"), "fib": ("fib4", "fib6"), "em": ("em4", "em6"), "acl": ("acl4", "acl6")}
TABLE_NAMES = tuple(name for pair in TABLES.values() for name in pair)   # a table's code: 1 + its index here
ETHER_TYPE = {4: b"\x08\x00", 6: b"\x86\xdd"}
VERSION_IHL = {4: 0x45, 6: 0x60}  # byte 14: IPv4 without options (em_parse_ptype's L4 case); IPv6
DESTINATION_AT = {4: 30, 6: 38}
FIVE_TUPLE_AT = {4: (23, 26, 30, 34), 6: (20, 22, 38, 54)}     # protocol, source, destination, ports
ADDRESS_BYTES = {4: 4, 6: 16}
PROTOCOL_NAMES = {6: "tcp", 17: "udp"}
PROTOCOL_NUMBERS = {name: number for number, name in PROTOCOL_NAMES.items()}
MAX_PORT, MAX_PROTOCOL = 0xFFFF, 0xFF
FIVE_TUPLE_EXAMPLE = '"udp 198.18.0.1:9 > 198.18.0.0:9"'
_FIVE_TUPLE = re.compile(r"\s*(\S+)\s+(\S+)\s*>\s*(\S+)\s*", re.ASCII)
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class ParsedKey:
    """A key read from text: its family (4 or 6), the table that looks it up (``lpm4``,
    ``em6``, ...) and a 64-byte Ethernet frame carrying it at the table's offsets, which
    the ordinary pipeline functions can look up."""
    family: int
    table: str
    frame: bytes


def _family(table: str) -> int:
    for names in TABLES.values():
        if table in names:
            return 4 if table == names[0] else 6
    raise ValueError(f"unknown table {table!r} (one of {', '.join(n for p in TABLES.values() for n in p)})")


def _address_text(raw: bytes) -> str:
    return socket.inet_ntoa(raw) if len(raw) == 4 else str(ipaddress.IPv6Address(raw))


def _endpoint_text(raw: bytes, port: bytes) -> str:
    address = _address_text(raw)
    return f"{address}:{int.from_bytes(port, 'big')}" if len(raw) == 4 else f"[{address}]:{int.from_bytes(port, 'big')}"


def key_text(table: str, frame: bytes) -> str:
    """The key ``table`` reads from ``frame`` (an Ethernet frame's first bytes, at
    least ``KEY_BYTES`` of them, zero padded), as text."""
    family = _family(table)
    frame = bytes(frame[:KEY_BYTES])
    size = ADDRESS_BYTES[family]
    if table.startswith(("lpm", "fib")):
        at = DESTINATION_AT[family]
        return _address_text(frame[at:at + size])
    proto_at, src_at, dst_at, ports_at = FIVE_TUPLE_AT[family]
    proto = frame[proto_at]
    return (f"{PROTOCOL_NAMES.get(proto, proto)} "
            f"{_endpoint_text(frame[src_at:src_at + size], frame[ports_at:ports_at + 2])} > "
            f"{_endpoint_text(frame[dst_at:dst_at + size], frame[ports_at + 2:ports_at + 4])}")


def _quoted(key: str) -> str:
    """``key`` for an error message: quoted, on one line, at most ~60 characters."""
    return repr(key if len(key) <= 60 else key[:57] + "...")


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An IPv4 or IPv6 address, or None (an IPv6 zone such as ``%eth0`` is no part of a
    packet, so it is refused too)."""
    try:
        return ipaddress.ip_address(text) if "%" not in text else None
    except ValueError:
        return None


def _number(text: str, what: str, limit: int, key: str) -> int:
    """A decimal number 0..limit (its digits are counted before ``int()`` reads them)."""
    if not _DIGITS.fullmatch(text):
        raise SimError(f"lookup key {_quoted(key)}: {what} {_quoted(text)} is not a decimal number")
    digits = text.lstrip("0") or "0"
    if len(digits) > len(str(limit)) or int(digits) > limit:
        raise SimError(f"lookup key {_quoted(key)}: {what} {_quoted(text)} is not in 0..{limit}")
    return int(digits)


def _protocol(text: str, key: str) -> int:
    if text.lower() in PROTOCOL_NUMBERS:
        return PROTOCOL_NUMBERS[text.lower()]
    if not _DIGITS.fullmatch(text):
        raise SimError(f"lookup key {_quoted(key)}: protocol {_quoted(text)} is not tcp, udp or a number "
                       f"0..{MAX_PROTOCOL}")
    return _number(text, "protocol", MAX_PROTOCOL, key)


def _endpoint(text: str, side: str, key: str) -> tuple[ipaddress.IPv4Address | ipaddress.IPv6Address, int]:
    """``ADDRESS:PORT`` (IPv4) or ``[ADDRESS]:PORT`` (IPv6)."""
    address, colon, port = text.rpartition(":")
    bracketed = address.startswith("[") and address.endswith("]")
    if not colon or ":" in address and not bracketed:
        raise SimError(f"lookup key {_quoted(key)}: the {side} {_quoted(text)} is not ADDRESS:PORT "
                       "(an IPv6 address goes in brackets: [2001:db8::1]:9)")
    parsed = _address(address[1:-1] if bracketed else address)
    if parsed is None or bracketed and parsed.version != 6:
        raise SimError(f"lookup key {_quoted(key)}: the {side} address {_quoted(address)} is not "
                       f"{'an IPv6' if bracketed else 'an IPv4'} address")
    return parsed, _number(port, f"{side} port", MAX_PORT, key)


def _frame(family: int) -> bytearray:
    frame = bytearray(FRAME_BYTES)
    frame[12:14] = ETHER_TYPE[family]
    frame[14] = VERSION_IHL[family]
    return frame


def _destination_key(text: str, lookup: str) -> ParsedKey:
    address = _address(text.strip())
    if address is None:
        raise SimError(f"lookup key {_quoted(text)}: not an IPv4 or IPv6 address (--lookup {lookup} looks up a "
                       "destination address; 5-tuples are for --lookup em and acl)")
    family = address.version
    frame = _frame(family)
    at = DESTINATION_AT[family]
    frame[at:at + ADDRESS_BYTES[family]] = address.packed
    return ParsedKey(family, TABLES[lookup][family == 6], bytes(frame))


def _five_tuple_key(text: str, lookup: str) -> ParsedKey:
    shape = _FIVE_TUPLE.fullmatch(text)
    if not shape:
        raise SimError(f"lookup key {_quoted(text)}: --lookup {lookup} needs a 5-tuple like {FIVE_TUPLE_EXAMPLE} "
                       "(IPv6 addresses in brackets)")
    proto = _protocol(shape[1], text)
    (src, sport), (dst, dport) = _endpoint(shape[2], "source", text), _endpoint(shape[3], "destination", text)
    if src.version != dst.version:
        raise SimError(f"lookup key {_quoted(text)}: the source is IPv{src.version} but the destination "
                       f"IPv{dst.version}")
    family = src.version
    proto_at, src_at, dst_at, ports_at = FIVE_TUPLE_AT[family]
    size = ADDRESS_BYTES[family]
    frame = _frame(family)
    frame[proto_at] = proto
    frame[src_at:src_at + size] = src.packed
    frame[dst_at:dst_at + size] = dst.packed
    frame[ports_at:ports_at + 4] = sport.to_bytes(2, "big") + dport.to_bytes(2, "big")
    return ParsedKey(family, TABLES[lookup][family == 6], bytes(frame))


def parse_key(text: str, lookup: str) -> ParsedKey:
    """The key ``text`` for ``--lookup lookup``: a destination address for lpm and fib,
    a 5-tuple as :func:`key_text` writes it for em and acl (protocol ``tcp``, ``udp``
    or 0..255; ports 0..65535; IPv6 addresses in brackets). Bad text is a
    :class:`SimError` naming the key."""
    if lookup not in TABLES:
        raise SimError(f"--lookup {lookup}: not supported (choose from {', '.join(TABLES)})")
    return (_destination_key if lookup in ("lpm", "fib") else _five_tuple_key)(text, lookup)
