"""Ports: the portmask, their MAC addresses and the Ethernet rewrite of l3fwd.

For a packet leaving port D, l3fwd writes bytes 0..5 := ``dest_eth_addr[D]``
(default ``02:00:00:00:00:D``, or ``--eth-dest``) and bytes 6..11 := the MAC of port D;
everything from byte 12 on is untouched (l3fwd_forwarding_semantics.md §5). DPDK's
``net_pcap`` ports report ``02:70:63:61:70:<port>`` ("\\x02pcap" + port id).
"""
from __future__ import annotations

import re

import numpy as np

from ..errors import SimError
from ..numbers import brief, parse_int

MAX_PORTS = 32  # RTE_MAX_ETHPORTS; l3fwd's enabled_port_mask is 32 bits
_HEX = re.compile(r"(0[xX])?[0-9a-fA-F]+")
_PORT = re.compile(r"[0-9]+")
_MAC = re.compile(r"[0-9a-fA-F]{1,2}(:[0-9a-fA-F]{1,2}){5}")


def parse_portmask(text: str) -> int:
    """``-p PORTMASK``: hex as ``strtoul(..., 16)`` takes it; 0 or garbage is an error."""
    if not _HEX.fullmatch(text):
        raise SimError(f"invalid portmask {brief(text)} (expected hex, e.g. 0x3)")
    mask = int(text, 16)                # Python limits the digits of decimal strings only
    if mask <= 0 or mask >> MAX_PORTS:
        raise SimError(f"invalid portmask {brief(text)} (must select ports among 0..{MAX_PORTS - 1})")
    return mask


def run_portmask(portmask: int | None, inputs: dict) -> int:
    """The portmask of a run: the one given, or the ports that have an input. An input
    on a port outside it is an error (l3fwd's ``check_port_config``)."""
    mask = portmask if portmask is not None else sum(1 << p for p in inputs)
    outside = [p for p in inputs if not mask >> p & 1]
    if outside:
        raise SimError(f"input for port {outside[0]} ({inputs[outside[0]]}) but port {outside[0]} "
                       f"is not in portmask 0x{mask:x}")
    return mask


def ports_of(mask: int) -> list[int]:
    return [p for p in range(MAX_PORTS) if mask >> p & 1]


def parse_mac(text: str, what: str) -> bytes:
    if not _MAC.fullmatch(text):
        raise SimError(f"{what}: bad MAC address {brief(text)} (expected XX:XX:XX:XX:XX:XX)")
    return bytes(int(x, 16) for x in text.split(":"))


def parse_port_mac(text: str, option: str) -> tuple[int, bytes]:
    """``PORT,MAC`` as ``--eth-dest`` takes it (l3fwd: PORT < RTE_MAX_ETHPORTS)."""
    port, comma, mac = text.partition(",")
    if not comma or not _PORT.fullmatch(port.strip()):
        raise SimError(f"{option} {brief(text)}: expected PORT,MAC with PORT in 0..{MAX_PORTS - 1}")
    return (parse_int(port.strip(), f"{option} {brief(text)}: PORT", 0, MAX_PORTS - 1),
            parse_mac(mac.strip(), f"{option} {brief(text)}"))


def mac_text(mac: bytes) -> str:
    """``02:70:63:61:70:00``, as DPDK prints an address (``RTE_ETHER_ADDR_PRT_FMT``)."""
    return ":".join(f"{b:02X}" for b in mac)


class PortConfig:
    """Enabled ports and the 12 bytes l3fwd writes in front of a packet per TX port."""

    def __init__(self, portmask: int, eth_dest: dict[int, bytes] | None = None,
                 port_mac: dict[int, bytes] | None = None):
        self.portmask = portmask
        self.enabled = np.zeros(256, bool)      # by port id; indexable by any rule-file port
        self.enabled[ports_of(portmask)] = True
        # Row D = dst MAC || src MAC for packets leaving port D (l3fwd's val_eth[D]).
        self.eth_header = np.zeros((MAX_PORTS, 12), np.uint8)
        for port in range(MAX_PORTS):
            dst = (eth_dest or {}).get(port, bytes([2, 0, 0, 0, 0, port]))
            src = (port_mac or {}).get(port, b"\x02pcap" + bytes([port]))
            self.eth_header[port] = np.frombuffer(dst + src, np.uint8)
        self._eth_header_bytes = [row.tobytes() for row in self.eth_header]
        self._eth_words = (self.eth_header[:, :8].copy().view("<u8")[:, 0], self.eth_header[:, 8:].copy().view("<u4")[:, 0])
        self._enabled_flags = self.enabled[:MAX_PORTS].tolist()

    def macs(self, port: int) -> tuple[bytes, bytes]:
        """(destination, source) MAC of packets leaving ``port``."""
        row = self._eth_header_bytes[port]
        return row[:6], row[6:]

    def is_enabled(self, port: int) -> bool:
        """l3fwd's re-check: ``port < RTE_MAX_ETHPORTS`` and set in the portmask."""
        return 0 <= port < MAX_PORTS and self._enabled_flags[port]

    def rewrite(self, frame: memoryview | bytearray, port: int) -> None:
        """MAC rewrite of one frame for TX port ``port``."""
        frame[0:12] = self._eth_header_bytes[port]

    def rewrite_bulk(self, heads: np.ndarray, rows: np.ndarray | slice, dest: np.ndarray) -> None:
        """MAC rewrite of ``heads[rows]`` for TX ports ``dest`` (same length as rows)."""
        if isinstance(rows, slice):               # in place, as an 8- and a 4-byte word per row
            first, last = self._eth_words
            heads[rows, :8].view("<u8")[:, 0] = first[dest]
            heads[rows, 8:12].view("<u4")[:, 0] = last[dest]
        else:
            heads[rows, :12] = self.eth_header[dest]
