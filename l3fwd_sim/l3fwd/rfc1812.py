"""RFC 1812 handling of IPv4 packets as dpdk-l3fwd does it (``DO_RFC_1812_CHECKS``).

Two checks exist in DPDK and both live here:

* simple path, before the lookup: ``is_valid_ipv4_pkt`` (``l3fwd.h``): drop when the
  frame's pkt_len < 20 (the whole frame, Ethernet header included), version != 4,
  IHL < 5 or total length < 20. The software checksum check only runs when the PMD
  flags the checksum as "none"; net_pcap sets no flags, so checksums are never checked.
* multi path, after lookup and MAC rewrite: ``rfc1812_process`` (``l3fwd_common.h``):
  drop when ``(uint8)(version_ihl - 0x45) > 10`` or total length < 20.

Both update the header the same way: ``TTL - 1`` wrapping (TTL 1 leaves as 0, TTL 0 as
255; nothing expires) and the checksum incremented as a little-endian 16-bit integer
laid over the big-endian field (``N' = bswap16(bswap16(N) + 1)``).
"""
from __future__ import annotations

import struct

import numpy as np

# Offsets in the frame (Ethernet header of 14 bytes, IPv4 header right after it).
VERSION_IHL, TOTAL_LENGTH, TTL, CHECKSUM = 14, 16, 22, 24
_LE16 = struct.Struct("<H")       # the checksum, read as DPDK's little-endian uint16 does


def is_valid_ipv4_pkt(frame: bytes | bytearray, pkt_len: int) -> bool:
    """The simple path's check (``pkt_len`` is the whole frame's length; it is checked
    first, so the header fields read next are inside the frame)."""
    if pkt_len < 20:
        return False
    version_ihl = frame[VERSION_IHL]
    total_length = frame[TOTAL_LENGTH] << 8 | frame[TOTAL_LENGTH + 1]
    return version_ihl >> 4 == 4 and version_ihl & 0x0F >= 5 and total_length >= 20


def explain(version_ihl: int, total_length: int, pkt_len: int) -> str:
    """Which of the checks above an invalid header fails, in words (for traces)."""
    if pkt_len < 20:
        return f"frame {pkt_len} < 20 bytes"
    if version_ihl >> 4 != 4:
        return f"version {version_ihl >> 4} != 4"
    if version_ihl & 0x0F < 5:
        return f"IHL {version_ihl & 0x0F} < 5"
    return f"total length {total_length} < 20"


def update_ttl_checksum(frame: memoryview | bytearray) -> None:
    """``--ttl; ++hdr_checksum`` on one frame, in place."""
    frame[TTL] = (frame[TTL] - 1) & 0xFF
    _LE16.pack_into(frame, CHECKSUM, (_LE16.unpack_from(frame, CHECKSUM)[0] + 1) & 0xFFFF)


def rfc1812_process_one(frame: memoryview | bytearray) -> bool:
    """``rfc1812_process`` on one frame: update TTL and checksum; True if to be dropped."""
    update_ttl_checksum(frame)
    return (frame[VERSION_IHL] - 0x45) & 0xFF > 10 or (frame[TOTAL_LENGTH] == 0 and frame[TOTAL_LENGTH + 1] < 20)


def rfc1812_process(heads: np.ndarray, rows: np.ndarray | slice) -> np.ndarray:
    """The multi path's ``rfc1812_process`` on ``heads[rows]``, updating TTL and checksum
    in place; returns the boolean mask (over ``rows``) of packets to drop. ``rows`` may
    be a slice (every packet IPv4: in-place column views, no copies)."""
    version_ihl = heads[rows, VERSION_IHL]
    invalid = (version_ihl - np.uint8(0x45)) > 10                     # uint8 wrap, as in C
    invalid |= heads[rows, TOTAL_LENGTH:TOTAL_LENGTH + 2].view(">u2")[:, 0] < 20
    heads[rows, TTL] -= np.uint8(1)
    if isinstance(rows, slice):
        heads[rows, CHECKSUM:CHECKSUM + 2].view("<u2")[...] += np.uint16(1)
    else:
        checksum = heads[rows, CHECKSUM:CHECKSUM + 2].copy().view("<u2")
        checksum += np.uint16(1)
        heads[rows, CHECKSUM:CHECKSUM + 2] = checksum.view(np.uint8).reshape(-1, 2)
    return invalid
