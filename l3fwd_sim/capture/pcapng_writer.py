"""pcapng output (draft-ietf-opsawg-pcapng, "PCAP Now Generic"), beside the classic
:class:`~l3fwd_sim.capture.pcap.PcapWriter` and with its interface.

A file is little-endian and holds one section of one interface:

* a Section Header Block (§4.1): byte-order magic, version 1.0, section length -1
  (unknown), no options;
* one Interface Description Block (§4.2): ``LINKTYPE_ETHERNET``, the classic writer's
  snaplen, ``if_name`` the port ("port0"), ``if_tsresol`` 9 (ns) or 6 (µs) — written
  even for µs, pcapng's default, so that every reader sees the resolution;
* an Enhanced Packet Block per packet (§4.3): interface 0, the 64-bit time stamp in
  ticks of that resolution (high word first), captured and original length, the frame
  padded to 32 bits, no options.

The 64-bit time stamp is what a classic pcap lacks: seconds past 2106-02-07 are kept.

Files of other shapes (``compare --write``: an interface per port, every packet with a
comment) are built from the blocks one by one: :func:`section_header`,
:func:`interface_block`, :func:`packet_block`. ``--annotate``'s blocks carry an
``opt_comment`` each (§3.5, code 1): :func:`write_commented` gives a run of blocks their
comments, as the writer appends them (:attr:`PcapngWriter.comments`) or to a whole file
afterwards.
"""
from __future__ import annotations

import os
import struct
from typing import Callable

import numpy as np

from .. import compiled
from . import kernels, twins
from .linktypes import ETHERNET as LINKTYPE_ETHERNET
from .pcap import CaptureWriter, paused_gc
from .records import HEAD_BYTES, MAX_CAPLEN

SHB, IDB, EPB = 0x0A0D0D0A, 1, 6
BYTE_ORDER_MAGIC = 0x1A2B3C4D
_OPT_END, _OPT_COMMENT, _IF_NAME, _IF_TSRESOL = 0, 1, 2, 9
EPB_FIXED = 32                # an EPB without data: type, length, interface, ts high, ts low, two lengths, trailer
_HEAD_END = 28 + HEAD_BYTES   # in a block row: the fields, then the frame's head; a long frame's tail follows
_ROW = _HEAD_END + 8          # ... and room for a long frame's padding and trailing length after the head


def _option(code: int, value: bytes) -> bytes:
    return struct.pack("<HH", code, len(value)) + value + bytes(-len(value) % 4)


def _block(btype: int, body: bytes) -> bytes:
    length = 12 + len(body)
    return struct.pack("<II", btype, length) + body + struct.pack("<I", length)


_END_OF_OPTIONS = _option(_OPT_END, b"")
_OPTION_HEAD = struct.Struct("<HH")        # option code, value length
_EPB_FIELDS = struct.Struct("<IIIIIII")   # type, length, interface, ts high, ts low, captured, wire length
_TRAILER = struct.Struct("<I")
_PADDING = [bytes(n) for n in range(4)]
_OPTION_MAX = 0xFFFF                       # an option's length is 16 bits
_CUT = "…".encode()
COMMENT_PIECE = 4 << 20                    # bytes of commented blocks laid out before each write


def _comment_options(comment: str) -> bytes:
    """The options of a block that has a comment only: ``opt_comment`` (UTF-8), then
    ``opt_endofopt``. An option holds at most 65535 bytes: a longer comment is cut to
    fit, at a character boundary, and ends in "…"."""
    text = comment.encode()
    if len(text) > _OPTION_MAX:
        text = text[:_OPTION_MAX - len(_CUT)].decode(errors="ignore").encode() + _CUT
    return b"".join((_OPTION_HEAD.pack(_OPT_COMMENT, len(text)), text, _PADDING[-len(text) % 4], _END_OF_OPTIONS))


def section_header(comment: str | None = None) -> bytes:
    """A Section Header Block (§4.1): byte-order magic, version 1.0, section length -1
    (unknown); ``comment``: its ``opt_comment`` (one line of text: ``text.printable``),
    what Wireshark shows as the capture file's comment."""
    options = _comment_options(comment) if comment is not None else b""
    return _block(SHB, struct.pack("<IHHq", BYTE_ORDER_MAGIC, 1, 0, -1) + options)


def interface_block(name: str, nanosecond: bool, linktype: int = LINKTYPE_ETHERNET,
                    snaplen: int = MAX_CAPLEN) -> bytes:
    """An Interface Description Block (§4.2): ``linktype``, ``snaplen``, ``if_name``
    ``name`` and ``if_tsresol`` 9 (ns) or 6 (µs) — written even for µs, pcapng's default,
    so that every reader sees the resolution. Interfaces are numbered from 0 in the order
    their blocks appear in the section; a packet may only name one described before it."""
    options = (_option(_IF_NAME, name.encode()) + _option(_IF_TSRESOL, bytes([9 if nanosecond else 6]))
               + _END_OF_OPTIONS)
    return _block(IDB, struct.pack("<HHI", linktype, 0, snaplen) + options)


def packet_block(interface: int, ticks: int, wirelen: int, frame: bytes, comment: str | None = None) -> bytes:
    """An Enhanced Packet Block (§4.3) of ``frame`` (its captured length is its length),
    on interface number ``interface``, stamped ``ticks`` of that interface's resolution,
    ``wirelen`` bytes long on the wire; ``comment``: its ``opt_comment`` (one line of
    text: ``text.printable``), Wireshark's packet comment (``frame.comment``). For
    files built a packet at a time: about 2 µs a block with a comment, 1 µs without."""
    caplen = len(frame)
    pad = -caplen % 4
    options = _comment_options(comment) if comment is not None else b""
    length = EPB_FIXED + caplen + pad + len(options)
    fields = _EPB_FIELDS.pack(EPB, length, interface, ticks >> 32, ticks & 0xFFFFFFFF, caplen, wirelen)
    return b"".join((fields, frame, _PADDING[pad], options, _TRAILER.pack(length)))


def file_header(interface: str, nanosecond: bool) -> bytes:
    """The Section Header Block and the Interface Description Block of an output."""
    return section_header() + interface_block(interface, nanosecond)


def _padded(caplen: np.ndarray) -> np.ndarray:
    return (caplen + 3) & ~3


class PcapngWriter(CaptureWriter):
    """Writes one pcapng file (Ethernet, interface ``interface``) atomically. With
    ``comments`` (``--annotate`` where the decisions are known as the packets are
    forwarded), ``comments(n)`` gives the next ``n`` packets' comments (text, starts,
    ends: :func:`write_commented`) and every block is appended with its own."""

    comments: Callable[[int], tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None

    def __init__(self, path: str | os.PathLike, nanosecond: bool = False, interface: str = "port0", sink=None):
        super().__init__(path, file_header(interface, nanosecond), sink)
        self._units = 10**9 if nanosecond else 10**6
        self._piece = np.zeros(0, np.uint8)

    def write_parts(self, parts: list, packets: int, at: int | None = None) -> None:
        if self.comments is None:
            return super().write_parts(parts, packets, at)
        if at is not None:
            raise AssertionError(f"{self.path}: commented blocks are appended, never written at an offset")
        blocks = np.frombuffer(parts[0], np.uint8) if len(parts) == 1 else \
            np.concatenate([np.frombuffer(part, np.uint8) for part in parts])
        if len(self._piece) < COMMENT_PIECE:          # one piece per file, reused: no fresh pages per call
            self._piece = np.empty(COMMENT_PIECE, np.uint8)
        write_commented(self._file.write, blocks, *self.comments(packets), self.path, self._piece)
        self.packets += packets

    @staticmethod
    def record_bytes(caplen: np.ndarray) -> int:
        """Bytes that the blocks of packets of these captured lengths take in the file."""
        return EPB_FIXED * len(caplen) + int(_padded(caplen).sum())

    def write(self, heads: np.ndarray, caplen: np.ndarray, wirelen: np.ndarray,
              ts_ns: np.ndarray, tails: list | None = None) -> None:
        """Append packets, as :meth:`PcapWriter.write <l3fwd_sim.capture.pcap.PcapWriter.write>`."""
        if len(caplen):
            self._write_blocks(heads, caplen, wirelen, ts_ns // (10**9 // self._units), tails, None)

    def write_rows(self, rows: np.ndarray, caplen: np.ndarray, at: int | None = None,
                   seconds_high: np.ndarray | None = None, tails: list | None = None) -> None:
        """Append packets given as pcap rows (``records.record_headers``: the record
        header, fraction in this file's resolution, then the frame's head), or write them
        at file offset ``at``. ``seconds_high``: per row the seconds above the header's
        32 bits (``RecordBatch.seconds_high``); ``tails``: the bytes past HEAD_BYTES of
        each longer frame, in row order."""
        if not len(rows):
            return
        header = rows[:, :16].view("<u4")
        seconds = header[:, 0].astype(np.uint64)
        if seconds_high is not None:
            seconds += seconds_high.astype(np.uint64) << np.uint64(32)
        ticks = seconds * np.uint64(self._units) + header[:, 1]
        self._write_blocks(rows[:, 16:], caplen, header[:, 3], ticks, tails, at)

    def _write_blocks(self, heads, caplen, wirelen, ticks, tails, at) -> None:
        """One Enhanced Packet Block per packet, laid out as rows: the fields, the head,
        padding, the trailing length — a short frame's block is its row cut to the block
        length; a long frame's is its row's first _HEAD_END bytes, the tail, then its
        padding and trailing length kept after the head."""
        caplen = np.asarray(caplen, np.int64)
        n, first = len(caplen), int(caplen[0])
        padded = _padded(caplen)
        length = EPB_FIXED + padded
        fixed = first <= HEAD_BYTES and bool((caplen == first).all())
        width = int(length[0]) if fixed else _ROW
        out = np.empty((n, width), np.uint8)
        fields = out[:, :28].view("<u4")
        fields[:, 0], fields[:, 1], fields[:, 2] = EPB, length, 0
        fields[:, 3], fields[:, 4] = ticks >> 32, ticks & 0xFFFFFFFF
        fields[:, 5], fields[:, 6] = caplen, wirelen
        if fixed:
            out[:, 28:28 + first] = heads[:, :first]
            out[:, 28 + first:width - 4] = 0
            out[:, width - 4:].view("<u4")[:, 0] = length
        else:
            head = min(heads.shape[1], HEAD_BYTES)
            out[:, 28:28 + head] = heads[:, :head]
            _pad_and_trail(out, 28 + np.minimum(caplen, HEAD_BYTES), padded - caplen, length)
        if fixed or caplen.max() <= HEAD_BYTES:
            self.write_parts([out if fixed else kernels.pack_rows(out, length)], n, at)
            return
        with paused_gc():
            self.write_parts(_block_parts(out, caplen, length, iter(tails)), n, at)


def write_commented(write: Callable, blocks: np.ndarray, text: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                    what, piece: np.ndarray) -> None:
    """``write`` the Enhanced Packet Blocks ``blocks`` — as :class:`PcapngWriter` writes
    them: no options — again, the k-th with ``text[starts[k]:ends[k]]`` as its
    ``opt_comment``. Each new block is six byte ranges laid end to end: its type and new
    length, the old body, the option's code and length, the comment, its padding and
    ``opt_endofopt``, the new length again. The compiled twin (``records.c``'s
    ``comment_blocks``) walks the blocks and lays them out a ``piece`` at a time; the
    definition finds them (``kernels.scan_blocks``) and gathers the ranges with
    ``kernels.concat_ranges`` at once. ``what`` names the file in a failure."""
    if not compiled.enabled():
        write(_commented_blocks(blocks, *_packet_blocks(blocks, len(starts), what), text, starts, ends))
        return
    at = comment = 0
    while comment < len(starts) or at < len(blocks):
        used, at, comment = twins.comment_blocks(blocks, text, starts, ends, piece, at, comment)
        if used < 0:
            raise AssertionError(f"{what}: not one Enhanced Packet Block per comment")
        if not used:                          # a block of ours is far smaller than a piece
            raise AssertionError(f"{what}: a block larger than {len(piece)} bytes")
        write(piece[:used])


def _packet_blocks(blocks: np.ndarray, comments: int, what) -> tuple[np.ndarray, np.ndarray]:
    """The offset and length of each block of ``blocks``, checked to be one Enhanced
    Packet Block per comment, ending where ``blocks`` does."""
    offsets = np.empty(len(blocks) // 12 + 1, np.int64)      # a block is at least 12 bytes
    packets = offsets[:kernels.scan_blocks(blocks, 0, len(blocks), offsets)]
    lengths = np.diff(np.append(packets, len(blocks)))
    words = blocks[:len(blocks) // 4 * 4].view("<u4")          # every block starts 32-bit aligned
    if len(packets) != comments or (len(packets) and (packets[-1] + words[packets[-1] // 4 + 1] != len(blocks)
                                                      or (words[packets // 4] != EPB).any())):
        raise AssertionError(f"{what}: not one Enhanced Packet Block per comment")
    return packets, lengths


def _commented_blocks(data: np.ndarray, packets: np.ndarray, lengths: np.ndarray, text: np.ndarray,
                      starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """:func:`write_commented`'s new blocks over whole arrays: the definition."""
    n = len(packets)
    size = ends - starts
    pad = -size % 4
    new_length = lengths + 8 + size + pad                     # the option's 4-byte header and opt_endofopt
    fields = np.empty((n, 4), "<u4")
    fields[:, 0], fields[:, 1], fields[:, 3] = EPB, new_length, new_length
    fields[:, 2] = _OPT_COMMENT | size << 16                  # option code, then its length (16 bits each)
    at_text = len(data)
    at_fields = at_text + len(text)
    at_zeros = at_fields + fields.nbytes
    buf = np.concatenate([data, text, fields.view(np.uint8).reshape(-1), np.zeros(8, np.uint8)])
    field_at = at_fields + 16 * np.arange(n)
    ranges = np.column_stack([field_at, packets + 8, field_at + 8, at_text + starts, np.full(n, at_zeros),
                              field_at + 12]).reshape(-1)
    widths = np.column_stack([np.full(n, 8), lengths - 12, np.full(n, 4), size, pad + 4,
                              np.full(n, 4)]).reshape(-1)
    return kernels.concat_ranges(buf, ranges.astype(np.int64), widths.astype(np.int64))


def _pad_and_trail(out: np.ndarray, at: np.ndarray, pad: np.ndarray, length: np.ndarray) -> None:
    """Row ``r`` of ``out`` gets ``pad[r]`` zero bytes at ``at[r]``, then the trailing
    block length."""
    rows = np.arange(len(out))
    for k in range(3):
        some = pad > k
        out[rows[some], at[some] + k] = 0
    trailer = length.astype("<u4").view(np.uint8).reshape(-1, 4)
    for k in range(4):
        out[rows, at + pad + k] = trailer[:, k]


def _block_parts(out: np.ndarray, caplen: np.ndarray, length: np.ndarray, tails) -> list[memoryview]:
    """Each block as byte ranges: a short frame's row cut to its length; a long frame's
    row head, its tail (the next of ``tails``), then its padding and trailing length."""
    flat = memoryview(out.reshape(-1))
    width = out.shape[1]
    parts = []
    for row, (cap, size) in enumerate(zip(caplen.tolist(), length.tolist())):
        start = row * width
        if cap > HEAD_BYTES:
            parts.append(flat[start:start + _HEAD_END])
            parts.append(next(tails))
            parts.append(flat[start + _HEAD_END:start + size - cap + HEAD_BYTES])
        else:
            parts.append(flat[start:start + size])
    return parts
