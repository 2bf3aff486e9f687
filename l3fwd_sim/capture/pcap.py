"""Capture reading and writing for the data path (numpy, no scapy).

Reading accepts what libpcap (and so DPDK's net_pcap) reads: classic pcap in either
byte order with µs or ns timestamps, and pcapng (``pcapng.py``), either of them
gzip-compressed (recognised by its magic bytes, whatever the file is called). Records
are handed out as libpcap hands them to net_pcap: a captured length above the file's
snaplen is cut to the snaplen (``sf-pcap.c`` reads the whole record, then reports the
snapshot length as the captured length), the wire length is kept. Frames are Ethernet; an Ethernet file
whose link-type field says an FCS of N bytes is present (libpcap's
``LT_FCS_LENGTH_PRESENT``) has the FCS removed (:func:`strip_fcs`); a few other link
types are turned into Ethernet (``linktypes.py``); any other is refused.

A file is streamed through one reused buffer, so memory stays bounded whatever the
file size. Records are parsed in two ways: runs of records that all have the same
captured length (the usual case for generated traffic) are taken with one strided
numpy view; anything else is walked with a tight ``struct.unpack_from`` loop
(design-notes §4). A batch hands out the first ``HEAD_BYTES`` bytes of every packet
as an owned ``(n, HEAD_BYTES)`` array (every byte any l3fwd path reads or writes lies
there) plus where each packet lies in the read buffer: its bytes are always
``block[offset:offset + caplen]``.

Damage: a file that ends inside a record yields every complete record and remembers
where the cut one starts (``truncated_at``, reported by :meth:`PcapReader.cut_short`);
a captured length above libpcap's 256 KiB limit, or any other inconsistency that makes
the rest of the file unreadable, is a :class:`SimError` naming the file and the offset.

Writing goes to a temporary file in the output directory that is renamed into place
by ``commit()``, so an interrupted run never leaves a half-written pcap.
"""
from __future__ import annotations

import gc
import os
import shutil
import struct
import zlib
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import SimError
from . import kernels
from .atomic import AtomicFile, Committable, naming
from .linktypes import ETHERNET as LINKTYPE_ETHERNET
from .linktypes import Conversion, conversion, link_name
from .records import (CAPLEN, HEAD_BYTES, MAX_CAPLEN, PCAP_SECONDS, READ_BLOCK, RECORD_ROW, WIRELEN, RecordBatch,
                      header_field, headers_to_little_endian, libpcap_snaplen, padded, record_headers, strip_fcs,
                      utc_text)
from .location import as_location, is_url, open_binary
from .reading import Reading
from .source import Source
from .time_floor import scan_floor

_MAGIC = {0xA1B2C3D4: False, 0xA1B23C4D: True}   # magic -> nanosecond timestamps
_OTHER_FORMATS = {b"\x28\xb5\x2f\xfd": "zstd-compressed", b"BZh": "bzip2-compressed",
                  b"\xfd7zXZ\x00": "xz-compressed", b"\x04\x22\x4d\x18": "lz4-compressed",
                  b"\xa1\xb2\xcd\x34": "a modified (Kuznetzov) pcap", b"\x34\xcd\xb2\xa1": "a modified (Kuznetzov) pcap"}
WALK_RECORDS = 65536          # records walked at a time (as many as a super-burst holds: one walk a read)
_LT_FCS_PRESENT = 0x04000000  # libpcap pcap-common.h: FCS length in the top 4 bits, in 16-bit words


class PcapReader:
    """Streaming reader of a classic pcap file; :class:`~l3fwd_sim.capture.pcapng.PcapngReader`
    reads pcapng on the same machinery. :func:`~l3fwd_sim.capture.offline.open_offline`
    picks the one a file needs. ``reading`` (``reading.py``) says what is done beyond
    libpcap: ``conveniences`` lists each such thing this file needed, ``rx_errors``
    counts the records libpcap would fail to read (``Reading.LIBPCAP``: those are
    skipped)."""

    file_format = "pcap"  # what a run's ``--output-format auto`` sees
    _MIN_RECORD = 16     # smallest record: a classic record header
    _FRONT = 0           # free bytes kept before the unparsed data when compacting

    def __init__(self, path: str | os.PathLike, source: Source | None = None, reading: Reading = Reading.ETHERNET):
        self.path = as_location(path)
        self.reading = reading
        self.conveniences: list[str] = []     # what Reading.ETHERNET did beyond libpcap, one line each
        self.rx_errors = 0                    # packets libpcap fails to read (skipped: Reading.LIBPCAP)
        self._source = source or Source(self.path)   # opened once: the input may be a pipe
        self._file = self._source.file
        self.gzip = self._source.gzip
        if self.gzip and reading is Reading.ETHERNET:
            self.conveniences.append(f"{self.path}: gzip-compressed, read here; real net_pcap cannot open it (libpcap: "
                                     "unknown file format): the port fails to probe and EAL renumbers the others")
        self._buf = np.empty(READ_BLOCK + HEAD_BYTES, np.uint8)  # slack keeps head views in bounds (never zeroed: 0.7 ms)
        self._start = self._end = 0       # unparsed bytes are _buf[_start:_end]
        self._file_pos = 0                # file offset (of the decompressed data) of _buf[_start]
        self._eof = False
        self._stream_cut = False          # gzip data ended before its end-of-stream marker
        self.truncated_at: int | None = None  # file offset of a record cut short by EOF
        self.nanosecond = False
        self.records_read = 0             # records handed out so far
        self._floor = None                # time_floor's, once asked (False: none)
        self._open()

    @property
    def format(self) -> str:
        return self.file_format + (" (gzip)" if self.gzip else "")

    def _open(self) -> None:
        """Parse the classic pcap file header."""
        self._fill(24)
        header = bytes(self._buf[:min(self._end, 24)])
        if len(header) < 24:
            self._fail("not a pcap file (shorter than the 24-byte file header)")
        for order in "<>":
            magic = struct.unpack(order + "I", header[:4])[0]
            if magic in _MAGIC:
                break
        else:
            what = next((name for m, name in _OTHER_FORMATS.items() if header.startswith(m)), None)
            self._fail(f"{what} file: not supported" if what else
                       f"not a pcap or pcapng file (magic 0x{header[:4].hex()})")
        self.nanosecond = _MAGIC[magic]
        self._order = order
        self.snaplen, network = struct.unpack(order + "II", header[16:24])
        self._snap = libpcap_snaplen(self.snaplen)
        self.linktype = network & 0xFFFF                                   # libpcap LT_LINKTYPE
        self._fcs = 2 * (network >> 28) if network & _LT_FCS_PRESENT else 0
        if self.linktype != LINKTYPE_ETHERNET or not self.reading.strips_fcs:
            self._fcs = 0
        if self._fcs and self.reading is Reading.ETHERNET:
            self.conveniences.append(f"{self.path}: each frame's {self._fcs}-byte FCS removed here; real net_pcap "
                                     "keeps it (libpcap hands the frame over as stored)")
        self._link = self._link_conversion(self.linktype)
        # The strided fast path takes records exactly as stored; anything to adjust goes
        # through the walk.
        self._plain = self._link is None and not self._fcs
        self._unpack = struct.Struct(order + "IIII").unpack_from
        self._u4 = np.dtype(order + "u4")
        self._advance(24)

    def _link_conversion(self, linktype: int, where: str = "", offset: int | None = None) -> Conversion | None:
        """How frames of ``linktype`` become Ethernet (None: as stored), as ``reading``
        wants; ``where``/``offset``: the interface that has it, in a refusal."""
        if not self.reading.converts:
            return None
        try:
            link = conversion(linktype)
        except ValueError as err:
            self._fail(f"{where}{err}", offset)
        if link is not None:
            self.conveniences.append(
                f"{self.path}: {where}link type {linktype} ({link_name(linktype)}) converted to Ethernet here; real "
                "net_pcap takes each record as an Ethernet frame (most go back out of their input port with their "
                "first 12 bytes overwritten)")
        return link

    def _fail(self, what: str, offset: int | None = None):
        self.close()
        where = f"{self.path}" if offset is None else \
            f"{self.path}: offset {offset}{' of the uncompressed data' if self.gzip else ''}"
        raise SimError(f"{where}: {what}")

    def close(self) -> None:
        self._source.close()

    @property
    def seekable(self) -> bool:
        """Records can be found again by file offset: an uncompressed classic pcap file."""
        return self.file_format == "pcap" and not self.gzip and self._source.raw.seekable()

    @property
    def mappable(self) -> bool:
        """Its records are handed over exactly as the file stores them — a little-endian
        classic pcap of Ethernet frames without FCS, uncompressed, on a local disk — so a
        record read once can be found again in the file mapped into memory (where a
        record is cut to the snaplen, its bytes read differ: see ``position``)."""
        return self.seekable and self._plain and self._order == "<" and not is_url(self.path)

    def time_floor(self) -> int | None:
        """The earliest time stamp (ns) of a record not handed over yet (``time_floor.py``):
        known for a mappable file (its record headers walked once, when first asked);
        None otherwise."""
        if self._floor is None:
            self._floor = (self.mappable and scan_floor(np.memmap(self.path, np.uint8, mode="r"), 24,
                                                        self.nanosecond)) or False
        return self._floor.at(self.records_read) if self._floor else None

    @property
    def position(self) -> int:
        """The file offset of the next record (after a ``read``)."""
        return self._file_pos

    def seek_record(self, offset: int, number: int) -> None:
        """Go on from the record at file ``offset`` — a ``position`` seen before, in this
        or another process — as record ``number``, without reading the ones before it."""
        self._file.seek(offset)
        self._start = self._end = 0
        self._file_pos, self.records_read, self._eof = offset, number, False

    def cut_short(self) -> str | None:
        """A one-line warning if the file ends inside a record, else ``None``."""
        return None if self.truncated_at is None else self.cut_at(self.truncated_at)

    def cut_at(self, offset: int) -> str:
        """The warning of a file that ends inside the record at ``offset``."""
        where = f"offset {offset}{' of the uncompressed data' if self.gzip else ''}"
        what = "the gzip data ends early" if self._stream_cut else "the last record is cut short"
        return f"{self.path}: {what} at {where}; every complete record before it was read"

    def _compact(self) -> None:
        """Drop parsed bytes (the previous batch is dead) by moving the rest to the front."""
        remaining = self._end - self._start
        self._buf[self._FRONT:self._FRONT + remaining] = self._buf[self._start:self._end]
        self._start, self._end = self._FRONT, self._FRONT + remaining

    def _fill(self, need: int) -> None:
        """Make at least ``need`` unparsed bytes available unless the file ends first.
        Bytes already in the buffer keep their positions (offsets handed out stay valid)."""
        want = self._start + need
        if self._end >= want or self._eof:
            return
        if want > len(self._buf) - HEAD_BYTES:
            grown = np.empty(max(want, 2 * len(self._buf)) + HEAD_BYTES, np.uint8)
            grown[: self._end] = self._buf[: self._end]
            self._buf = grown
        # read what is wanted, a little more (a full buffer would only be moved again by
        # _compact): 64 KiB at first (opening a file to check it touches little), 1 MiB once reading
        step = 1 << 20 if self._file_pos else 1 << 16
        limit = min(len(self._buf) - HEAD_BYTES, max(want, self._end + step))
        view = memoryview(self._buf)[:limit]
        while self._end < want and not self._eof:
            try:
                got = self._file.readinto(view[self._end:])
            except (OSError, zlib.error) as err:     # I/O error, damaged gzip data
                self._fail(f"cannot read: {getattr(err, 'strerror', None) or err}",
                           self._file_pos + self._end - self._start)
            if not got:
                self._eof = True
                self._stream_cut = self._source.cut
            self._end += got

    def read(self, max_records: int) -> RecordBatch:
        """Return up to ``max_records`` further records (fewer only at end of file)."""
        parts: list[tuple] = []      # (offsets, rows, record bytes) per run of records
        count = 0
        self._compact()
        self._fill(min(len(self._buf) - HEAD_BYTES - self._start, max_records * 96))
        while count < max_records:
            self._fill(self._MIN_RECORD)
            if self._end - self._start < self._MIN_RECORD:
                break
            taken = self._take_fixed_run(max_records - count, parts)
            if taken < 16:
                taken += self._walk(min(WALK_RECORDS, max_records - count - taken), parts)
            if not taken:
                break
            count += taken
        self._note_cut(count < max_records)
        return self._batch(parts)

    def skip(self, records: int) -> int:
        """Read past up to ``records`` further records without handing them over (those
        another process forwards): their lengths are walked, nothing is copied. Returns
        how many there were; the end of the file is noted as :meth:`read` notes it."""
        if self.file_format != "pcap":             # pcapng's blocks: walked as read() walks them
            return len(self.read(records))
        offsets = np.empty(min(records, 65536), np.int64)
        skipped = 0
        while skipped < records:
            self._compact()                         # the walked bytes are dead
            self._fill(min(len(self._buf) - HEAD_BYTES, max(16 + MAX_CAPLEN, (records - skipped) * 96)))
            got, pos, bad = kernels.scan_records(self._buf, self._start, self._end, min(records - skipped, len(offsets)),
                                                 self._order == ">", MAX_CAPLEN, offsets, None)
            self._advance(pos - self._start)
            if bad:
                self._record_header(pos)               # raises, naming the offset
            skipped += got
            if not got:                                 # no whole record left: the end of the file
                break
        self._note_cut(skipped < records)
        self.records_read += skipped
        return skipped

    def _note_cut(self, short: bool) -> None:
        """After a read that got fewer records than asked: a file that ends inside a
        record (or gzip data cut short) is noted for :meth:`cut_short`."""
        if self._eof and short and self.truncated_at is None and (self._start < self._end or self._stream_cut):
            self.truncated_at = self._file_pos

    def _record_header(self, pos: int):
        sec, frac, cap, wire = self._unpack(self._buf, pos)
        if cap > MAX_CAPLEN:
            self._fail(f"record captured length {cap} exceeds {MAX_CAPLEN} (damaged file?)",
                       self._file_pos + pos - self._start)
        return sec, frac, cap, wire

    def _take_fixed_run(self, limit: int, parts: list) -> int:
        """Take the longest run of records with the first one's captured length: one
        strided view gives all their record headers and frame heads (as the batch's
        rows when the frames are at least HEAD_BYTES long and the file little-endian)."""
        if not self._plain:
            return 0
        cap = self._record_header(self._start)[2]
        if cap > self._snap:
            return 0
        stride = 16 + cap
        self._fill(min(limit * stride, READ_BLOCK))
        n = min(limit, (self._end - self._start) // stride)
        if n < 16:
            return 0
        hdr = np.ndarray((n, 4), self._u4, self._buf, self._start, (stride, 4))
        if (hdr[:16, 2] != cap).any():         # varying sizes: not worth a look at all n
            return 0
        bad = np.flatnonzero(hdr[:, 2] != cap)
        n = int(bad[0]) if len(bad) else n
        if n < 16:
            return 0
        width = 16 + min(cap, HEAD_BYTES)
        rows = np.ndarray((n, width), np.uint8, self._buf, self._start, (stride, 1))    # the records themselves
        if self._order == ">":                 # headers swapped into padded rows of our own
            rows = padded(rows)
            headers_to_little_endian(rows)
        parts.append((self._start + 16 + stride * np.arange(n, dtype=np.int64), rows, stride * n))
        self._advance(stride * n)
        return n

    def _walk(self, limit: int, parts: list) -> int:
        """Record-by-record walk for captures of varying sizes over the bytes already
        buffered, reading each captured length and copying each record header into
        its row (a refill only when a record runs past the buffered bytes)."""
        offsets = np.empty(limit, np.int64)
        rows = np.empty((limit, RECORD_ROW), np.uint8)
        count = 0
        if self._plain:                               # as stored: walked and laid out in one pass
            return self._walk_plain(offsets, rows, parts)
        while count < limit:
            self._fill(min(READ_BLOCK, 16 + MAX_CAPLEN))
            got, pos, bad = kernels.scan_records(self._buf, self._start, self._end, limit - count, self._order == ">",
                                                 MAX_CAPLEN, offsets[count:], rows[count:, :16])
            self._advance(pos - self._start)
            if bad:
                self._record_header(pos)               # raises, naming the offset
            count += got
            if not got:                               # nothing more fits: end of file (or a cut record)
                break
        if count:
            rows = rows[:count]
            if self._order == ">":
                headers_to_little_endian(rows)
            self._add_walked(parts, offsets[:count], header_field(rows, CAPLEN), header_field(rows, WIRELEN),
                             rows, self._snap, self._fcs, [(self._link, slice(None))] if self._link else [])
        return count

    def _walk_plain(self, offsets: np.ndarray, rows: np.ndarray, parts: list) -> int:
        """:meth:`_walk` of records that need nothing but libpcap's snaplen cut."""
        count = frame_bytes = 0
        while count < len(rows):
            self._fill(min(READ_BLOCK, 16 + MAX_CAPLEN))
            got, pos, bad, frames = kernels.walk_rows(self._buf, self._start, self._end, len(rows) - count,
                                                      self._order == ">", MAX_CAPLEN, self._snap, offsets[count:],
                                                      rows[count:])
            self._advance(pos - self._start)
            if bad:
                self._record_header(pos)               # raises, naming the offset
            count += got
            frame_bytes += frames
            if not got:                               # nothing more fits: end of file (or a cut record)
                break
        if count:
            parts.append((offsets[:count], rows[:count], 16 * count + frame_bytes))
        return count

    def _add_walked(self, parts: list, offsets, caplen, wirelen, rows, snap, fcs, conversions) -> None:
        """Records as libpcap hands them over, as Ethernet: the snaplen cut, the FCS
        removed, other link types converted (``conversions``: (Conversion, rows) pairs);
        then their rows (whose timestamps, in the rows' resolution, are already there).
        ``snap`` and ``fcs`` are scalars or per-record arrays."""
        caplen = np.minimum(caplen, snap)
        if np.any(fcs):
            caplen, wirelen = strip_fcs(caplen, wirelen, fcs)
        self._convert(offsets, caplen, wirelen, conversions)
        header = rows[:, :16].view("<u4")
        header[:, CAPLEN], header[:, WIRELEN] = caplen, wirelen
        kernels.gather_windows(self._buf, offsets, caplen, rows[:, 16:])
        parts.append((offsets, rows, 16 * len(rows) + int(caplen.sum())))

    def _convert(self, offsets, caplen, wirelen, conversions) -> None:
        """Turn the records of other link types into Ethernet in the buffer, in place
        (``conversions``: (Conversion, rows) pairs), their offsets and lengths with them."""
        for link, which in conversions:
            offsets[which], caplen[which], wirelen[which] = link.to_ethernet(
                self._buf, offsets[which], caplen[which], wirelen[which])

    def _advance(self, nbytes: int) -> None:
        self._start += nbytes
        self._file_pos += nbytes

    @property
    def _rows_nanosecond(self) -> bool:
        """The resolution of the record headers in the batches: the file's."""
        return self.nanosecond

    def _batch(self, parts: list) -> RecordBatch:
        first = self.records_read
        if not parts:
            return RecordBatch(np.zeros((0, RECORD_ROW), np.uint8), self._buf, np.zeros(0, np.int64),
                               self._rows_nanosecond, first, self.path)
        if len(parts) == 1:
            offsets, rows, _ = parts[0]
        else:
            offsets, rows = np.concatenate([o for o, _, _ in parts]), np.concatenate([padded(r) for _, r, _ in parts])
        self.records_read += len(rows)
        return RecordBatch(rows, self._buf, offsets, self._rows_nanosecond, first, self.path,
                           known_bytes=sum(part[2] for part in parts))


@contextmanager
def paused_gc():
    """Around loops that create a slice object per packet: the cyclic collector would
    otherwise dominate them (speed-limits §5)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _row_parts(rows: np.ndarray, caplen: np.ndarray, tails) -> list[memoryview]:
    """Each record as its row (header and head) cut to its frame, followed by its tail
    (the next of ``tails``) when the frame is longer than HEAD_BYTES."""
    flat = memoryview(rows.reshape(-1))
    width = rows.shape[1]
    parts = []
    for row, cap in enumerate(caplen.tolist()):
        start = row * width
        if cap > HEAD_BYTES:
            parts.append(flat[start:start + width])
            parts.append(next(tails))
        else:
            parts.append(flat[start:start + 16 + cap])
    return parts


_IOV_MAX = 1024                   # iovecs per writev call (Linux)


def _write_at(fd: int, parts: list, at: int) -> None:
    """Write every byte of ``parts`` (contiguous buffers) at file offset ``at``: pwritev
    of up to _IOV_MAX of them a call; a short write resumes where it stopped."""
    views = [memoryview(part).cast("B") for part in parts]
    i = 0
    while i < len(views):
        written = os.pwritev(fd, views[i:i + _IOV_MAX], at)
        at += written
        while i < len(views) and written >= len(views[i]):
            written -= len(views[i])
            i += 1
        if written:
            views[i] = views[i][written:]


class CaptureWriter(Committable):
    """What every output writer shares: one file written atomically (temp file, renamed
    on commit) that starts with ``header`` (``header_bytes`` long), records appended
    or written at reserved offsets (``--jobs``), and the count of ``packets``. With a
    ``sink`` (a TX queue's records waiting for the merge, ``merge.QueueRecords``), the
    records are appended there instead and no file is made."""

    def __init__(self, path: str | os.PathLike, header: bytes, sink=None):
        self.path = Path(path)
        if sink is None:
            self._out = AtomicFile(path)
            self._file = self._out.file
            self._file.write(header)
        else:
            self._out, self._file = None, sink
        self.header_bytes = len(header)
        self.packets = 0

    def write_parts(self, parts: list, packets: int, at: int | None = None) -> None:
        """Append ``packets`` records given as consecutive byte ranges (or write them at
        file offset ``at``)."""
        if at is None:
            self._file.writelines(parts)
        else:
            with naming(self.path):
                _write_at(self._file.fileno(), parts, at)
        self.packets += packets

    def append_file(self, path, skip: int) -> None:
        """Append the bytes of the file ``path`` past its first ``skip`` (another
        writer's records behind its own file header: a ``--cluster`` chunk's), copied
        by the kernel; a URL's streamed through here."""
        self._file.flush()
        with open_binary(path) as source, naming(self.path):
            if is_url(path):                          # object storage: streamed through here
                source.seek(skip)
                shutil.copyfileobj(source, self._file, 1 << 20)
                return
            offset, size = skip, os.fstat(source.fileno()).st_size
            while offset < size:
                offset += os.sendfile(self._file.fileno(), source.fileno(), offset, size - offset)

    def flush(self) -> None:
        """Hand everything written so far to the file (a ``--jobs`` process, before
        the next process appends to the same file)."""
        self._file.flush()

    def commit(self) -> None:
        if self._out is not None:
            self._out.commit()

    def abort(self) -> None:
        if self._out is not None:
            self._out.abort()


class PcapWriter(CaptureWriter):
    """Writes one classic pcap (Ethernet) atomically: temp file, then rename on commit."""

    def __init__(self, path: str | os.PathLike, nanosecond: bool = False, sink=None):
        magic = 0xA1B23C4D if nanosecond else 0xA1B2C3D4
        super().__init__(path, struct.pack("<IHHiIII", magic, 2, 4, 0, 0, MAX_CAPLEN, LINKTYPE_ETHERNET), sink)
        self._nanosecond = nanosecond

    @staticmethod
    def record_bytes(caplen: np.ndarray) -> int:
        """Bytes that records of these captured lengths take in the file."""
        return 16 * len(caplen) + int(caplen.sum())

    def write(self, heads: np.ndarray, caplen: np.ndarray, wirelen: np.ndarray,
              ts_ns: np.ndarray, tails: list | None = None) -> None:
        """Append records. ``heads`` holds each packet's first ``HEAD_BYTES`` bytes;
        ``tails`` the remaining bytes of each packet longer than that, in row order."""
        if len(ts_ns) and not 0 <= ts_ns.min() <= ts_ns.max() < PCAP_SECONDS * 10**9:
            late = int(ts_ns[(ts_ns < 0) | (ts_ns >= PCAP_SECONDS * 10**9)][0])
            raise SimError(f"{self.path}: time stamp {utc_text(late)} does not fit a classic pcap "
                           "(1970..2106); use --output-format pcapng")
        rows = np.empty((len(caplen), RECORD_ROW), np.uint8)
        rows[:, 16:] = heads
        record_headers(rows, caplen, wirelen, ts_ns, self._nanosecond)
        if tails:
            with paused_gc():
                self.write_parts(_row_parts(rows, caplen, iter(tails)), len(rows))
        else:
            self.write_rows(rows, caplen)

    def write_rows(self, rows: np.ndarray, caplen: np.ndarray, at: int | None = None) -> None:
        """Append records of at most HEAD_BYTES bytes laid out as :func:`record_headers`
        describes (or write them at file offset ``at``)."""
        if not len(rows):
            return
        first = int(caplen[0])
        if (caplen == first).all():          # fixed-size frames: rows cut to one width
            data = rows if first == HEAD_BYTES else np.ascontiguousarray(rows[:, :16 + first])
        else:
            data = kernels.pack_rows(rows, 16 + caplen)
        if at is None:
            self._file.write(data)
        else:
            with naming(self.path):
                _write_at(self._file.fileno(), [data], at)
        self.packets += len(rows)
