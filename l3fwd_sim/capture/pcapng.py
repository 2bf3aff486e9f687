"""pcapng reading (draft-ietf-opsawg-pcapng), as libpcap's ``sf-pcapng.c`` reads it.

``open_offline(path)`` hands back a :class:`PcapngReader` when the file starts with a
Section Header Block; it streams records exactly like the classic reader.

* **Sections**: every Section Header Block sets the byte order of its section (so one
  file may mix byte orders, which libpcap refuses but the format allows) and starts a
  fresh list of interfaces. Major version 1 only, as libpcap.
* **Interfaces** (IDB): link type, snaplen and the time-stamp options ``if_tsresol``
  (10^-n or 2^-n seconds; default 10^-6) and ``if_tsoffset`` (seconds added). Read as
  ``Reading.ETHERNET``, every interface must be Ethernet or a link type ``linktypes.py``
  converts, or the file is refused naming the interface (``AS_STORED`` and ``LIBPCAP``
  take every link type as stored). Interfaces may differ in link type and snaplen, each
  keeping its own — except as ``Reading.LIBPCAP``: libpcap rejects an interface whose
  link type (its DLT, ``linktypes.libpcap_dlt``) or adjusted snaplen differs from the
  file's first interface, and every packet naming an interface it has no description of
  is a read error (``rx_errors``), as is a packet captured beyond the first interface's
  snaplen (``sf-pcapng.c``: "invalid packet capture length").
  ``if_fcslen`` is ignored, as libpcap and Wireshark ignore it (whether it counts bits
  or bytes is an open question of the format).
* **Packets**: Enhanced Packet Blocks and the obsolete Packet Blocks carry interface,
  time stamp, captured and wire length. A Simple Packet Block belongs to the section's
  first interface and has no time stamp: as in libpcap it gets time stamp 0 (plus that
  interface's ``if_tsoffset``), and its captured length is min(wire length, snaplen).
  Time stamps become nanoseconds (rounded down, as libpcap scales them). A captured
  length above the interface's snaplen is cut to the snaplen, as libpcap's classic
  reader does (its pcapng reader refuses the file).
* **Other blocks** (name resolution, statistics, decryption secrets, custom, ...) are
  skipped.
* **Damage**: the file ending inside a block is a cut-short last record (every complete
  packet before it is read); a block whose length is not a multiple of 4, below 12,
  above 16 MiB (libpcap's limit) or different in its trailer, a packet whose captured
  length exceeds 256 KiB or its block, a packet of an undescribed interface, a time
  stamp no output can hold (before 1970, or from 2262 on: int64 nanoseconds): a
  SimError naming the offset.
* **Time stamps past 2106** (more seconds than a classic pcap's 32 bits) are read: the
  batch's rows keep the low 32 bits of the seconds, ``RecordBatch.seconds_high`` the
  rest, so that a pcapng output keeps them (a classic one refuses them, ``writers.py``).

Runs of Enhanced Packet Blocks of one Ethernet interface whose tick is a whole number
of nanoseconds (10^-n s, n <= 9: Wireshark's µs, dpdk-dumpcap's ns), all of one length,
are taken with one strided numpy view, as the classic reader takes runs of same-size
records; everything else is walked block by block.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import compiled
from . import kernels, twins
from .linktypes import FRONT_ROOM, Conversion, libpcap_dlt
from .pcap import PcapReader
from .reading import Reading
from .records import (CAPLEN, HEAD_BYTES, MAX_CAPLEN, PCAP_SECONDS, READ_BLOCK, RECORD_ROW, WIRELEN, libpcap_snaplen,
                      record_headers, utc_text)

PCAPNG_MAGIC = 0x0A0D0D0A      # a Section Header Block's type: the file's first four bytes
SHB, IDB, PB, SPB, EPB = PCAPNG_MAGIC, 1, 2, 3, 6
_PACKET_BLOCKS = (EPB, SPB, PB)
_BYTE_ORDER = {b"\x4d\x3c\x2b\x1a": "<", b"\x1a\x2b\x3c\x4d": ">"}
MAX_BLOCK = 16 << 20              # libpcap INITIAL_MAX_BLOCKSIZE
_TS_LIMIT = 1 << 63               # time stamps are int64 nanoseconds (to 2262-04-11)
_SKIP_LIMIT = 1 << 20             # skipped-block bytes kept in the buffer before they are dropped
_OPT_END, _IF_NAME, _IF_TSRESOL, _IF_TSOFFSET = 0, 2, 9, 14
WALK_LIMIT, WALK_MORE, WALK_PYTHON = range(3)   # why pcapng.c's walk_blocks stopped (twins.h)


@dataclass(frozen=True)
class Interface:
    """One IDB, as it affects the packets that name it."""
    index: int             # in its section
    name: str
    linktype: int
    snaplen: int           # as stored (0: no limit)
    units: int             # time-stamp ticks per second
    tsoffset: int          # seconds added to every time stamp
    link: Conversion | None

    def __post_init__(self):
        object.__setattr__(self, "snap", libpcap_snaplen(self.snaplen))
        # nanoseconds per tick when that is a whole number (10^-n, n <= 9), else 0
        object.__setattr__(self, "scale", 10**9 // self.units if 10**9 % self.units == 0 else 0)

    def ns(self, ticks: int) -> int:
        """``ticks`` as nanoseconds since the epoch, rounded down (libpcap's scaling)."""
        sec, frac = divmod(ticks, self.units)
        return (sec + self.tsoffset) * 10**9 + frac * 10**9 // self.units


class _Columns(NamedTuple):
    """The interfaces as numpy columns (by index into the file's interfaces), and the
    current section's ids -> those indices: what the vectorised steps and ``pcapng.c``
    look up."""
    snap: np.ndarray           # int64
    units: np.ndarray          # uint64 (2^-63 s ticks: 2^63 per second)
    scale: np.ndarray          # int64: Interface.scale
    tsoffset: np.ndarray       # int64
    section: np.ndarray        # int64
    converted: list            # (index, Conversion) of each interface that is not Ethernet


class PcapngReader(PcapReader):
    """Streaming pcapng reader; see the module docstring for what it accepts."""

    file_format = "pcapng"
    _MIN_RECORD = 12       # smallest block: type, length, trailer
    _rows_nanosecond = True  # interfaces differ (and a later section may add finer ones): rows keep ns
    _FRONT = FRONT_ROOM    # room before a Simple Packet Block's data for a raw-IP rewrite

    def _open(self) -> None:
        self._set_order("<")                    # replaced by every Section Header Block
        self._sections = 0
        self._section: list[int] = []           # this section's interfaces, as indices into _interfaces
        self._interfaces: list[Interface] = []  # every interface of the file
        self._columns: _Columns | None = None   # the interfaces as columns, built when needed
        self.snaplen = None
        self.linktype = None
        self._walk_blocks(0, [])               # the leading blocks, up to the first packet
        if not self._sections and self._end > self._start:
            self._fail("not a pcapng file (first block is not a complete Section Header Block)")
        self.nanosecond = any(i.units > 10**6 for i in self._interfaces)
        if self._interfaces:
            self.linktype, self.snaplen = self._interfaces[0].linktype, self._interfaces[0].snaplen

    def _set_order(self, order: str) -> None:
        self._order = order
        self._u32 = struct.Struct(order + "I").unpack_from
        self._u32x2 = struct.Struct(order + "II").unpack_from
        self._epb = struct.Struct(order + "IIIII").unpack_from
        self._pb = struct.Struct(order + "HHIIII").unpack_from
        self._u4 = np.dtype(order + "u4")

    # -----------------------------------------------------------------------------------
    # block by block
    # -----------------------------------------------------------------------------------
    def _walk(self, limit: int, parts: list) -> int:
        """Walk blocks until ``limit`` packets were taken (stopping before the next
        packet block) or the data ends; returns the number of packets."""
        if compiled.enabled():
            return self._walk_compiled(limit, parts)
        return self._walk_blocks(limit, parts)

    def _walk_blocks(self, limit: int, parts: list) -> int:
        """:meth:`_walk`, block by block: the definition."""
        offsets, caplen, wirelen, stamps, owner = [], [], [], [], []
        skipped_from = None                      # start of the current run of non-packet blocks
        while True:
            self._fill(12)
            if self._end - self._start < 12:
                break
            pos = self._start
            btype, length = self._u32x2(self._buf, pos)
            if btype == SHB:                     # palindromic: its own magic gives the order
                order = _BYTE_ORDER.get(bytes(self._buf[pos + 8:pos + 12]))
                if order is None:
                    self._fail("Section Header Block with a bad byte-order magic", self._offset(pos))
                self._set_order(order)
                length = self._u32(self._buf, pos + 4)[0]
            if length < 12 or length % 4 or length > MAX_BLOCK:
                self._fail(f"block of type 0x{btype:x} has an invalid length {length}", self._offset(pos))
            if btype in _PACKET_BLOCKS and len(offsets) >= limit:
                break
            self._fill(length)
            if self._end - self._start < length:
                break                            # cut short by the end of the file
            if self._u32(self._buf, pos + length - 4)[0] != length:
                self._fail(f"block of type 0x{btype:x}: length {length} in its header but "
                           f"{self._u32(self._buf, pos + length - 4)[0]} in its trailer", self._offset(pos))
            if btype == EPB or btype == PB:
                if length < 32:
                    self._fail(f"packet block of {length} bytes is too short", self._offset(pos))
                if btype == EPB:
                    ifid, hi, lo, cap, wire = self._epb(self._buf, pos + 8)
                else:
                    ifid, _drops, hi, lo, cap, wire = self._pb(self._buf, pos + 8)
                iface = self._packet_interface(ifid, pos)
                if iface is None or self._read_error(cap):
                    self._skip_packet(length)
                    continue
                if cap > MAX_CAPLEN:
                    self._fail(f"packet captured length {cap} exceeds {MAX_CAPLEN} (damaged file?)",
                               self._offset(pos))
                if 32 + cap > length:
                    self._fail(f"packet captured length {cap} does not fit in its {length}-byte block",
                               self._offset(pos))
                offsets.append(pos + 28)
                info = self._interfaces[iface]
                ns = ((hi << 32 | lo) * info.scale + info.tsoffset * 10**9 if info.scale
                      else info.ns(hi << 32 | lo))
            elif btype == SPB:
                if length < 16:
                    self._fail(f"Simple Packet Block of {length} bytes is too short", self._offset(pos))
                iface = self._packet_interface(0, pos)
                if iface is None:
                    self._skip_packet(length)
                    continue
                wire = self._u32(self._buf, pos + 8)[0]
                cap = min(wire, self._interfaces[iface].snap)
                if 16 + cap > length:
                    self._fail(f"Simple Packet Block of {length} bytes is too short for its "
                               f"{cap}-byte packet", self._offset(pos))
                offsets.append(pos + 12)
                ns = self._interfaces[iface].ns(0)
            else:
                if btype == SHB:
                    self._section_header(pos, length)
                elif btype == IDB:
                    self._interface(pos, length)
                self._advance(length)
                skipped_from = pos if skipped_from is None else skipped_from
                if self._start - skipped_from >= _SKIP_LIMIT:
                    self._drop_parsed(skipped_from)
                continue
            skipped_from = None
            if not 0 <= ns < _TS_LIMIT:
                self._fail(f"time stamp {utc_text(ns)} is outside what an output can hold (1970 to 2262)",
                           self._offset(pos))
            caplen.append(cap)
            wirelen.append(wire)
            stamps.append(ns)
            owner.append(iface)
            self._advance(length)
        if offsets:
            self._add_packets(parts, np.array(offsets, np.int64), np.array(caplen, np.int64),
                              np.array(wirelen, np.int64), np.array(stamps, np.int64), np.array(owner, np.int64))
        return len(offsets)

    def _read_error(self, cap: int) -> bool:
        """``Reading.LIBPCAP``: a packet captured beyond the snapshot length of the
        file's first interface fails to read."""
        return self.reading is Reading.LIBPCAP and cap > self._interfaces[0].snap

    def _skip_packet(self, length: int) -> None:
        """A packet block libpcap fails to read: counted, skipped (net_pcap counts an
        RX error and reads on at the next call)."""
        self.rx_errors += 1
        self._advance(length)

    def _drop_parsed(self, since: int) -> None:
        """Forget the parsed bytes ``[since, _start)`` (blocks that hold no packet) by
        moving the unparsed rest down over them: what was handed out before ``since``
        stays where it is, and a long run of skipped blocks cannot grow the buffer."""
        rest = self._end - self._start
        self._buf[since:since + rest] = self._buf[self._start:self._end]
        self._start, self._end = since, since + rest

    def _offset(self, pos: int) -> int:
        return self._file_pos + pos - self._start

    def _packet_interface(self, ifid: int, pos: int) -> int | None:
        """The file-wide index of the section's interface ``ifid``; None where libpcap
        fails to read the packet (``Reading.LIBPCAP``: no description of it)."""
        if ifid >= len(self._section):
            if self.reading is Reading.LIBPCAP:
                return None
            self._fail(f"packet of interface {ifid}, but its section describes "
                       f"{len(self._section)} interface(s)", self._offset(pos))
        return self._section[ifid]

    def _section_header(self, pos: int, length: int) -> None:
        if length < 28:
            self._fail(f"Section Header Block of {length} bytes is too short", self._offset(pos))
        major, minor = struct.unpack_from(self._order + "HH", self._buf, pos + 12)
        if major != 1:
            self._fail(f"pcapng version {major}.{minor} is not supported (only 1.x)", self._offset(pos))
        self._sections += 1
        self._section = []
        self._columns = None

    def _interface(self, pos: int, length: int) -> None:
        if length < 20:
            self._fail(f"Interface Description Block of {length} bytes is too short", self._offset(pos))
        if not self._sections:
            self._fail("Interface Description Block before any Section Header Block", self._offset(pos))
        linktype, snaplen = struct.unpack_from(self._order + "HxxI", self._buf, pos + 8)
        options = self._options(pos + 16, pos + length - 4)
        index = len(self._section)
        name = options.get(_IF_NAME, b"").split(b"\0")[0].decode("utf-8", "replace")
        where = f"interface {index}" + (f" ({name!r})" if name else "")
        units, tsoffset = 10**6, 0
        if _IF_TSRESOL in options:
            value = options[_IF_TSRESOL]
            if len(value) != 1:
                self._fail(f"{where}: if_tsresol option of {len(value)} bytes (must be 1)", self._offset(pos))
            exponent = value[0] & 0x7F
            if value[0] & 0x80:
                if exponent > 63:
                    self._fail(f"{where}: if_tsresol 2^-{exponent} is too fine (libpcap's limit is 2^-63)",
                               self._offset(pos))
                units = 1 << exponent
            else:
                if exponent > 19:
                    self._fail(f"{where}: if_tsresol 10^-{exponent} is too fine (libpcap's limit is 10^-19)",
                               self._offset(pos))
                units = 10**exponent
        if _IF_TSOFFSET in options:
            value = options[_IF_TSOFFSET]
            if len(value) != 8:
                self._fail(f"{where}: if_tsoffset option of {len(value)} bytes (must be 8)", self._offset(pos))
            tsoffset = struct.unpack(self._order + "q", value)[0]
        if self._interfaces and (rejected := self._libpcap_rejects(linktype, snaplen)):
            if self.reading is Reading.LIBPCAP:          # not described: its packets fail to read
                return
            if self.reading is Reading.ETHERNET:
                self.conveniences.append(f"{self.path}: pcapng {where} read here, though libpcap rejects it "
                                         f"({rejected}): real net_pcap counts every packet on it as an RX error")
        link = self._link_conversion(linktype, f"{where}: ", self._offset(pos))
        self._section.append(len(self._interfaces))
        self._interfaces.append(Interface(index, name, linktype, snaplen, units, tsoffset, link))
        self._columns = None

    def _libpcap_rejects(self, linktype: int, snaplen: int) -> str | None:
        """libpcap's message for an interface after the file's first one that it
        rejects (``sf-pcapng.c``), or None."""
        first = self._interfaces[0]
        if libpcap_dlt(first.linktype) != linktype:
            return f"an interface has a type {linktype} different from the type of the first interface"
        if libpcap_snaplen(snaplen) != first.snap:
            return f"an interface has a snapshot length {snaplen} different from the snapshot length of the first " \
                   "interface"
        return None

    def _options(self, start: int, end: int) -> dict[int, bytes]:
        """First value of each option code; a malformed tail of options is ignored (the
        options this reader uses are checked where they are used)."""
        options: dict[int, bytes] = {}
        while start + 4 <= end:
            code, length = struct.unpack_from(self._order + "HH", self._buf, start)
            if code == _OPT_END or start + 4 + length > end:
                break
            options.setdefault(code, bytes(self._buf[start + 4:start + 4 + length]))
            start += 4 + length + (-length % 4)
        return options

    def _interface_columns(self) -> _Columns:
        if self._columns is None:
            ifaces = self._interfaces
            self._columns = _Columns(np.array([i.snap for i in ifaces], np.int64),
                                     np.array([i.units for i in ifaces], np.uint64),
                                     np.array([i.scale for i in ifaces], np.int64),
                                     np.array([i.tsoffset for i in ifaces], np.int64),
                                     np.array(self._section, np.int64),
                                     [(k, i.link) for k, i in enumerate(ifaces) if i.link is not None])
        return self._columns

    def _conversions(self, owner: np.ndarray) -> list:
        """(Conversion, rows) of the packets whose interface (``owner``) is not Ethernet."""
        conversions = []
        for k, link in self._interface_columns().converted:
            rows = np.flatnonzero(owner == k)
            if len(rows):
                conversions.append((link, rows))
        return conversions

    def _add_packets(self, parts, offsets, caplen, wirelen, ts_ns, owner) -> None:
        rows = np.empty((len(offsets), RECORD_ROW), np.uint8)
        record_headers(rows, caplen, wirelen, ts_ns, True)       # the lengths as handed over come next
        self._add_walked(parts, offsets, caplen, wirelen, rows, self._interface_columns().snap[owner], 0,
                         self._conversions(owner))
        high = ts_ns // 10**9 >> 32
        if high.any():                        # past 2106: the part carries the seconds' high bits
            parts[-1] = (*parts[-1], high)

    def _walk_compiled(self, limit: int, parts: list) -> int:
        """:meth:`_walk` with the packet blocks walked by ``pcapng.c`` (``walk_blocks``),
        the rows laid out as it goes; whatever it leaves — a Section Header or Interface
        Description Block, a damaged block, a time stamp past 2106, a packet libpcap
        fails to read (``Reading.LIBPCAP``) — the block-by-block walk takes, with the
        blocks after it up to the next packet."""
        offsets, owner = np.empty((2, limit), np.int64)
        rows = np.empty((limit, RECORD_ROW), np.uint8)
        count = 0                                    # packets taken
        while True:
            self._fill(min(READ_BLOCK, 16 + MAX_CAPLEN))
            columns = self._interface_columns()
            n, pos, frames, skipped_from, stop = twins.walk_blocks(
                self._buf, self._start, self._end, limit - count, self._order == ">", self.reading is Reading.LIBPCAP,
                (columns.section, columns.snap, columns.units, columns.scale, columns.tsoffset),
                offsets[count:], owner[count:], rows[count:])
            self._advance(pos - self._start)
            self._add_compiled(parts, offsets[count:count + n], rows[count:count + n], owner[count:count + n],
                               frames)
            count += n
            if stop == WALK_LIMIT:
                return count
            if stop == WALK_MORE:
                if skipped_from >= 0 and self._start - skipped_from >= _SKIP_LIMIT:
                    self._drop_parsed(skipped_from)
                need = self._u32x2(self._buf, self._start)[1] if self._end - self._start >= 12 else 12
                self._fill(need)
                if self._end - self._start >= need:
                    continue                         # the block is buffered now: back to the compiled walk
                return count                         # the end of the data (or a block cut short by it)
            before = self._file_pos                  # the block-by-block walk takes the next block
            count += self._walk_blocks(min(1, limit - count), parts)
            if self._file_pos == before:             # the end of the data (or a block cut short by it)
                return count

    def _add_compiled(self, parts: list, offsets: np.ndarray, rows: np.ndarray, owner: np.ndarray,
                      frame_bytes: int) -> None:
        """The part of rows ``walk_blocks`` laid out, as :meth:`_add_packets` hands them
        over: the packets of other link types than Ethernet converted, their rows again."""
        if not len(rows):
            return
        if conversions := self._conversions(owner):
            header = rows[:, :16].view("<u4")
            caplen, wirelen = header[:, CAPLEN].astype(np.int64), header[:, WIRELEN].astype(np.int64)
            self._convert(offsets, caplen, wirelen, conversions)
            which = np.concatenate([each for _, each in conversions])
            header[which, CAPLEN], header[which, WIRELEN] = caplen[which], wirelen[which]
            heads = rows[which, 16:]
            kernels.gather_windows(self._buf, offsets[which], caplen[which], heads)
            rows[which, 16:] = heads
            frame_bytes = int(caplen.sum())
        parts.append((offsets, rows, 16 * len(rows) + frame_bytes))

    def _batch(self, parts: list):
        batch = super()._batch([part[:3] for part in parts])
        if any(len(part) > 3 for part in parts):
            batch.seconds_high = np.concatenate([part[3] if len(part) > 3 else np.zeros(len(part[0]), np.int64)
                                                 for part in parts])
        return batch

    # -----------------------------------------------------------------------------------
    # runs of same-size Enhanced Packet Blocks
    # -----------------------------------------------------------------------------------
    def _take_fixed_run(self, limit: int, parts: list) -> int:
        """Take the longest run of EPBs like the first one (same block length, interface
        and captured length) from a plain Ethernet interface with a whole number of
        nanoseconds per tick: one strided view gives their fields and frame heads."""
        pos = self._start
        if self._end - pos < 32:
            return 0
        btype, length, ifid, _hi, _lo, cap = struct.unpack_from(self._order + "6I", self._buf, pos)
        if btype != EPB or ifid >= len(self._section) or not 32 + cap <= length <= MAX_BLOCK or length % 4:
            return 0
        iface = self._interfaces[self._section[ifid]]
        if iface.link is not None or not iface.scale or cap > iface.snap:
            return 0
        self._fill(min(limit * length, READ_BLOCK))
        n = min(limit, (self._end - pos) // length)
        if n < 16:
            return 0
        fields = np.ndarray((n, 8), self._u4, self._buf, pos, (length, 4))   # type, len, if, hi, lo, cap, wire, -
        if (fields[:16, 1] != length).any():      # varying sizes: not worth a look at all n
            return 0
        trailer = np.ndarray((n,), self._u4, self._buf, pos + length - 4, (length,))
        bad = np.flatnonzero((fields[:, 0] != EPB) | (fields[:, 1] != length) | (fields[:, 2] != ifid) |
                             (fields[:, 5] != cap) | (trailer != length))
        n = int(bad[0]) if len(bad) else n
        if n < 16:
            return 0
        fields = fields[:n]
        ticks = fields[:, 3].astype(np.uint64) << np.uint64(32) | fields[:, 4]
        # 32-bit seconds only (the walk takes later ones); checked in floats before the exact product
        if ticks.max() * float(iface.scale) + iface.tsoffset * 1e9 >= PCAP_SECONDS * 1e9 * 0.999 or \
                ticks.min() * float(iface.scale) + iface.tsoffset * 1e9 < 1e9:
            return 0                                 # near a limit: the walk checks each record
        ts_ns = ticks.astype(np.int64) * iface.scale + iface.tsoffset * 10**9
        width = min(cap, HEAD_BYTES)
        rows = np.zeros((n, RECORD_ROW), np.uint8)
        record_headers(rows, fields[:, 5], fields[:, 6], ts_ns, True)
        rows[:, 16:16 + width] = np.ndarray((n, width), np.uint8, self._buf, pos + 28, (length, 1))
        parts.append((pos + 28 + length * np.arange(n, dtype=np.int64), rows, n * (16 + cap)))
        self._advance(length * n)
        return n
