"""Stamp per-packet values into a stream's template and fix lengths and checksums, in numpy.

This is the hot path of ``generate`` (TRex's field engine, done for thousands of packets
per numpy call): copy the template into an ``(n, W)`` array, write the field variables,
set the IPv4 total length / IPv6 payload length / UDP length from each frame's size, then
recompute the IPv4 header checksum (RFC 791) and the UDP/TCP/ICMP checksum (RFC 768, 793,
792; ICMPv6 RFC 4443, IPv6 pseudo-header RFC 8200 §8.1) of every packet in full. A stream's
payload is fixed for a given frame size, so its part of the L4 sum comes from a prefix-sum
table over the payload instead of from per-packet bytes.

Only the first ``W = max(64, header length)`` bytes of a packet can differ between packets
of one stream. When the headers end within the first 64 bytes (``pcap.HEAD_BYTES``), the
rest of every frame of a given size is the same bytes, so the writer gets one shared
memoryview per size instead of a copy per packet.
"""
from __future__ import annotations

import numpy as np

from ..capture.records import HEAD_BYTES
from ..errors import SimError
from .templates import PROTO_ICMP, PROTO_ICMPV6, PROTO_TCP, PROTO_UDP, Slot, Template

_CHECKSUM_AT = {PROTO_UDP: 6, PROTO_TCP: 16, PROTO_ICMP: 2, PROTO_ICMPV6: 2}   # offset in the L4 header


def _sum16(rows: np.ndarray, start: int, end: int) -> np.ndarray:
    """Sum of the big-endian 16-bit words of ``rows[:, start:end]`` (end - start even)."""
    if end <= start:
        return np.zeros(len(rows), np.uint64)
    return rows[:, start:end].view(">u2").sum(axis=1, dtype=np.uint64)


def _checksum(total: np.ndarray) -> np.ndarray:
    """Internet checksum (RFC 1071) from a sum of 16-bit words: fold the carries, invert."""
    for _ in range(3):
        total = (total & np.uint64(0xFFFF)) + (total >> np.uint64(16))
    return ~total & np.uint64(0xFFFF)


def _put16(rows: np.ndarray, at: int, values: np.ndarray) -> None:
    rows[:, at:at + 2] = values.astype(">u2").view(np.uint8).reshape(-1, 2)


class StreamRenderer:
    """Everything about one stream's frames that does not depend on the packet."""

    def __init__(self, template: Template, max_frame: int):
        self.t = template
        self.header_len = len(template.header)
        self.width = max(HEAD_BYTES, self.header_len)
        self.frame = np.frombuffer(template.payload(max(max_frame, self.width)), np.uint8)
        self._frame_view = memoryview(self.frame)
        self._tail_cache: dict[int, memoryview] = {}
        t = template
        if t.fix and t.l4 is not None:
            if (self.header_len - t.l4) % 2:
                raise SimError(f"{t.summary}: L4 header of odd length is not supported")
            payload = self.frame[self.header_len:]
            padded = np.zeros(len(payload) + len(payload) % 2, np.uint8)
            padded[:len(payload)] = payload
            self._payload = padded
            self._payload_prefix = np.concatenate(
                [np.zeros(1, np.uint64), np.cumsum(padded.view(">u2"), dtype=np.uint64)])

    def _payload_sum(self, frame_len: np.ndarray) -> np.ndarray:
        n = frame_len - self.header_len
        total = self._payload_prefix[n >> 1]
        odd = (n & 1).astype(bool)
        if odd.any():
            total = total + np.where(odd, self._payload[np.maximum(n - 1, 0)].astype(np.uint64) << np.uint64(8), 0)
        return total

    def render(self, frame_len: np.ndarray, fields: dict[Slot, tuple[int, np.ndarray]],
               raw: dict[Slot, np.ndarray] | None = None) -> np.ndarray:
        """Rows of ``max(width, longest frame if the headers pass 64 bytes)`` bytes, one per
        packet. ``fields`` maps a slot to (minimum, uint64 offsets from it); ``raw`` a
        whole-byte slot to its bytes in each row ((n, width) uint8, network order)."""
        t = self.t
        n = len(frame_len)
        width = self.width
        if self.header_len > HEAD_BYTES and n:
            width = max(width, int(frame_len.max()))
        rows = np.empty((n, width), np.uint8)
        rows[:] = self.frame[:width]
        for slot, (base, offsets) in fields.items():
            _write_field(rows, slot, base, offsets)
        for slot, values in (raw or {}).items():
            rows[:, slot.offset:slot.offset + slot.width] = values
        length = frame_len.astype(np.uint64)
        if t.fix and t.family == 4:
            _put16(rows, t.l3 + 2, length - np.uint64(t.l3))
        elif t.fix and t.family == 6:
            _put16(rows, t.l3 + 4, length - np.uint64(t.l3 + 40))
        if t.fix and t.l4_proto == PROTO_UDP:
            _put16(rows, t.l4 + 4, length - np.uint64(t.l4))
        for at, data in t.overrides:
            rows[:, at:at + len(data)] = np.frombuffer(data, np.uint8)
        if t.fix and t.family == 4:
            rows[:, t.l3 + 10:t.l3 + 12] = 0
            check = _checksum(_sum16(rows, t.l3, t.l3 + t.ihl_bytes))
            _put16(rows, t.l3 + 10, check ^ np.uint64(0x5A5A) if t.bad_ipv4_checksum else check)
        if t.fix and t.l4 is not None:
            self._l4_checksum(rows, length)
        return rows

    def _l4_checksum(self, rows: np.ndarray, length: np.ndarray) -> None:
        t = self.t
        at = t.l4 + _CHECKSUM_AT[t.l4_proto]
        rows[:, at:at + 2] = 0
        total = _sum16(rows, t.l4, self.header_len) + self._payload_sum(length.astype(np.int64))
        if t.l4_proto != PROTO_ICMP:      # ICMPv4 has no pseudo-header; UDP, TCP, ICMPv6 do
            addresses = (t.l3 + 12, t.l3 + 20) if t.family == 4 else (t.l3 + 8, t.l3 + 40)
            total += _sum16(rows, *addresses) + np.uint64(t.l4_proto) + (length - np.uint64(t.l4))
        check = _checksum(total)
        if t.l4_proto == PROTO_UDP:
            check[check == 0] = 0xFFFF    # RFC 768: a computed zero is sent as all ones
        _put16(rows, at, check)

    def tail(self, frame_len: int) -> memoryview:
        """Bytes 64.. of a frame of this length when they are the same for every packet."""
        view = self._tail_cache.get(frame_len)
        if view is None:
            view = self._tail_cache[frame_len] = self._frame_view[HEAD_BYTES:frame_len]
        return view

    def tails(self, rows: np.ndarray, frame_len: np.ndarray) -> list[memoryview]:
        """Bytes 64.. of every frame longer than 64 bytes, in row order."""
        long_rows = np.flatnonzero(frame_len > HEAD_BYTES)
        if not len(long_rows):
            return []
        if self.header_len <= HEAD_BYTES:
            sizes, which = np.unique(frame_len[long_rows], return_inverse=True)
            views = [self.tail(size) for size in sizes.tolist()]
            return [views[i] for i in which.tolist()]
        lengths = frame_len[long_rows].tolist()
        width = rows.shape[1]
        flat = memoryview(np.ascontiguousarray(rows).reshape(-1))
        return [flat[r * width + HEAD_BYTES: r * width + length] for r, length in zip(long_rows.tolist(), lengths)]


def _write_field(rows: np.ndarray, slot: Slot, base: int, offsets: np.ndarray) -> None:
    """Write ``base + offsets`` big-endian into ``slot`` of every row."""
    at, width = slot.offset, slot.width
    if width == 16:      # IPv6 address: 128-bit add of a < 2**63 offset, with carry
        base_hi, base_lo = np.uint64(base >> 64), np.uint64(base & (2**64 - 1))
        with np.errstate(over="ignore"):
            low = base_lo + offsets
        high = base_hi + (low < base_lo).astype(np.uint64)
        rows[:, at:at + 8] = high.astype(">u8").view(np.uint8).reshape(-1, 8)
        rows[:, at + 8:at + 16] = low.astype(">u8").view(np.uint8).reshape(-1, 8)
        return
    values = offsets + np.uint64(base)
    if slot.bits is not None:
        mask = np.uint64(((1 << slot.bits) - 1) << slot.shift)
        current = rows[:, at:at + width].view(f">u{width}")[:, 0].astype(np.uint64)
        values = (current & ~mask) | ((values << np.uint64(slot.shift)) & mask)
    rows[:, at:at + width] = values.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - width:]
