"""Classic pcap reading and writing for the data path (numpy, no scapy).

Reading streams a file through one reused buffer, so memory stays bounded whatever
the file size. Records are parsed in two ways: runs of records that all have the same
captured length (the usual case for generated traffic) are taken with one strided
numpy view; anything else is walked with a tight ``struct.unpack_from`` loop
(design-notes §4). A batch hands out the first ``HEAD_BYTES`` bytes of every packet
as an owned ``(n, HEAD_BYTES)`` array (every byte any l3fwd path reads or writes lies
there) plus where the rest of each packet lies in the read buffer.

Writing goes to a temporary file in the output directory that is renamed into place
by ``commit()``, so an interrupted run never leaves a half-written pcap.
"""
from __future__ import annotations

import gc
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .atomic import AtomicFile
from .errors import SimError

HEAD_BYTES = 64          # covers the IPv6 EM key (frame bytes 18..57)
MAX_CAPLEN = 262144      # libpcap's MAXIMUM_SNAPLEN: a larger record is damage, not data
LINKTYPE_ETHERNET = 1
_BLOCK = 8 << 20
_MAGIC = {0xA1B2C3D4: False, 0xA1B23C4D: True}   # magic -> nanosecond timestamps
_PCAPNG = 0x0A0D0D0A
_LINKTYPE_NAMES = {0: "BSD loopback", 101: "raw IP", 105: "802.11", 113: "Linux cooked (SLL)",
                   127: "802.11 radiotap", 228: "raw IPv4", 229: "raw IPv6", 276: "Linux cooked v2 (SLL2)"}


@dataclass
class RecordBatch:
    """Consecutive records of one capture. ``block`` (the reader's buffer) is only
    valid until the reader's next ``read``; ``offsets`` index packet data in it.
    ``heads`` may be a view into ``block`` (editing it in place is allowed: the bytes
    are the batch's own), so it shares that lifetime."""
    heads: np.ndarray     # (n, HEAD_BYTES) uint8, zero past each packet's end
    caplen: np.ndarray    # int64
    wirelen: np.ndarray   # int64
    ts_ns: np.ndarray     # int64 nanoseconds since the epoch
    block: np.ndarray     # uint8 buffer holding the packet bytes
    offsets: np.ndarray   # int64 start of each packet in ``block``

    def __len__(self) -> int:
        return len(self.caplen)


class PcapReader:
    """Streaming reader of a classic pcap file (either byte order, µs or ns stamps)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            self._file = open(self.path, "rb")
        except OSError as err:
            raise SimError(f"{self.path}: cannot open: {err.strerror}") from None
        header = self._file.read(24)
        if len(header) >= 4 and int.from_bytes(header[:4], "little") == _PCAPNG:
            self._fail("pcapng is not supported yet; convert with 'editcap -F pcap IN OUT'")
        if len(header) < 24:
            self._fail("not a pcap file (shorter than the 24-byte file header)")
        for order in "<>":
            magic = struct.unpack(order + "I", header[:4])[0]
            if magic in _MAGIC:
                break
        else:
            self._fail(f"not a pcap file (magic 0x{header[:4].hex()})")
        self.nanosecond = _MAGIC[magic]
        self._order = order
        self.snaplen, network = struct.unpack(order + "II", header[16:24])
        self.linktype = network & 0x0FFFFFFF
        if self.linktype != LINKTYPE_ETHERNET:
            name = _LINKTYPE_NAMES.get(self.linktype, "unknown")
            self._fail(f"link type {self.linktype} ({name}) is not supported; only Ethernet (1) is")
        self._unpack = struct.Struct(order + "IIII").unpack_from
        self._u4 = np.dtype(order + "u4")
        self._buf = np.zeros(_BLOCK + HEAD_BYTES, np.uint8)  # slack keeps head views in bounds
        self._start = self._end = 0       # unparsed bytes are _buf[_start:_end]
        self._file_pos = 24               # file offset of _buf[_start]
        self._eof = False
        self.truncated_at: int | None = None  # file offset of a record cut short by EOF

    def _fail(self, what: str, offset: int | None = None):
        self._file.close()
        where = f"{self.path}" if offset is None else f"{self.path}: offset {offset}"
        raise SimError(f"{where}: {what}")

    def close(self) -> None:
        self._file.close()

    def _compact(self) -> None:
        """Drop parsed bytes (the previous batch is dead) by moving the rest to the front."""
        remaining = self._end - self._start
        self._buf[:remaining] = self._buf[self._start:self._end]
        self._start, self._end = 0, remaining

    def _fill(self, need: int) -> None:
        """Make at least ``need`` unparsed bytes available unless the file ends first.
        Bytes already in the buffer keep their positions (offsets handed out stay valid)."""
        want = self._start + need
        if self._end >= want or self._eof:
            return
        if want > len(self._buf) - HEAD_BYTES:
            grown = np.zeros(max(want, 2 * len(self._buf)) + HEAD_BYTES, np.uint8)
            grown[: self._end] = self._buf[: self._end]
            self._buf = grown
        # read what is wanted, in 1 MiB steps: a full buffer would only be moved again by _compact
        limit = min(len(self._buf) - HEAD_BYTES, max(want, self._end + (1 << 20)))
        view = memoryview(self._buf)[:limit]
        while self._end < want and not self._eof:
            got = self._file.readinto(view[self._end:])
            if not got:
                self._eof = True
            self._end += got

    def read(self, max_records: int) -> RecordBatch:
        """Return up to ``max_records`` further records (fewer only at end of file)."""
        parts: list[tuple] = []      # (offsets, caplen, wirelen, sec, frac, heads) per run of records
        count = 0
        self._compact()
        self._fill(min(_BLOCK, max_records * 96))
        while count < max_records:
            self._fill(16)
            if self._end - self._start < 16:
                break
            taken = self._take_fixed_run(max_records - count, parts)
            if taken < 16:
                taken += self._walk(min(4096, max_records - count - taken), parts)
            if not taken:
                break
            count += taken
        if self._eof and self._start < self._end and count < max_records and self.truncated_at is None:
            self.truncated_at = self._file_pos
        return self._batch(parts)

    def _record_header(self, pos: int):
        sec, frac, cap, wire = self._unpack(self._buf, pos)
        if cap > MAX_CAPLEN:
            self._fail(f"record captured length {cap} exceeds {MAX_CAPLEN} (damaged file?)",
                       self._file_pos + pos - self._start)
        return sec, frac, cap, wire

    def _take_fixed_run(self, limit: int, parts: list) -> int:
        """Take the longest run of records with the first one's captured length: one
        strided view gives all their record headers and frame heads."""
        cap = self._record_header(self._start)[2]
        stride = 16 + cap
        self._fill(min(limit * stride, _BLOCK))
        n = min(limit, (self._end - self._start) // stride)
        if n < 16:
            return 0
        hdr = np.ndarray((n, 4), self._u4, self._buf, self._start, (stride, 4))
        bad = np.flatnonzero(hdr[:, 2] != cap)
        n = int(bad[0]) if len(bad) else n
        if n < 16:
            return 0
        width = min(cap, HEAD_BYTES)
        heads = np.ndarray((n, width), np.uint8, self._buf, self._start + 16, (stride, 1))
        if width < HEAD_BYTES:                 # short frames: a zero-padded copy
            heads = np.pad(heads, ((0, 0), (0, HEAD_BYTES - width)))
        hdr = hdr[:n].astype(np.int64)
        parts.append((self._start + 16 + stride * np.arange(n, dtype=np.int64),
                      hdr[:, 2], hdr[:, 3], hdr[:, 0], hdr[:, 1], heads))
        self._advance(stride * n)
        return n

    def _walk(self, limit: int, parts: list) -> int:
        """Record-by-record walk for captures of varying sizes."""
        s, c, w, t, f = [], [], [], [], []
        while len(s) < limit:
            self._fill(16)
            if self._end - self._start < 16:
                break
            sec, frac, cap, wire = self._record_header(self._start)
            self._fill(16 + cap)
            if self._end - self._start < 16 + cap:
                break
            s.append(self._start + 16)
            c.append(cap)
            w.append(wire)
            t.append(sec)
            f.append(frac)
            self._advance(16 + cap)
        if s:
            offsets, caplen = np.array(s, np.int64), np.array(c, np.int64)
            heads = np.lib.stride_tricks.sliding_window_view(self._buf, HEAD_BYTES)[offsets]
            short = caplen < HEAD_BYTES
            if short.any():
                heads[short] *= (np.arange(HEAD_BYTES) < caplen[short, None])
            parts.append((offsets, caplen, np.array(w, np.int64), np.array(t, np.int64), np.array(f, np.int64),
                          heads))
        return len(s)

    def _advance(self, nbytes: int) -> None:
        self._start += nbytes
        self._file_pos += nbytes

    def _batch(self, parts: list) -> RecordBatch:
        if not parts:
            empty = np.zeros(0, np.int64)
            return RecordBatch(np.zeros((0, HEAD_BYTES), np.uint8), empty, empty, empty, self._buf, empty)
        offsets, caplen, wirelen, sec, frac, heads = (
            parts[0] if len(parts) == 1 else [np.concatenate(column) for column in zip(*parts)])
        ts_ns = sec * 1_000_000_000 + frac * (1 if self.nanosecond else 1000)
        return RecordBatch(heads, caplen, wirelen, ts_ns, self._buf, offsets)


RECORD_ROW = 16 + HEAD_BYTES   # a record header followed by a frame's head


def record_headers(rows: np.ndarray, caplen: np.ndarray, wirelen: np.ndarray, ts_ns: np.ndarray,
                   nanosecond: bool) -> None:
    """Write pcap record headers into the first 16 bytes of ``rows`` (n, RECORD_ROW),
    whose other bytes hold each frame's head: a frame of at most HEAD_BYTES bytes is
    then its row cut at ``16 + caplen``."""
    hdr = rows[:, :16].view("<u4")
    sec, frac = np.divmod(ts_ns, 1_000_000_000)
    hdr[:, 0] = sec
    hdr[:, 1] = frac if nanosecond else frac // 1000
    hdr[:, 2] = caplen
    hdr[:, 3] = wirelen


def _tail(batch: RecordBatch, row: int) -> memoryview:
    off = int(batch.offsets[row])
    return memoryview(batch.block)[off + HEAD_BYTES: off + int(batch.caplen[row])]


class PcapWriter:
    """Writes one classic pcap (Ethernet) atomically: temp file, then rename on commit."""

    def __init__(self, path: str | os.PathLike, nanosecond: bool = False):
        self.path = Path(path)
        self._out = AtomicFile(path)
        self._file = self._out.file
        self._nanosecond = nanosecond
        magic = 0xA1B23C4D if nanosecond else 0xA1B2C3D4
        self._file.write(struct.pack("<IHHiIII", magic, 2, 4, 0, 0, MAX_CAPLEN, LINKTYPE_ETHERNET))
        self.packets = 0

    def write(self, heads: np.ndarray, caplen: np.ndarray, wirelen: np.ndarray,
              ts_ns: np.ndarray, tails: list | None = None) -> None:
        """Append records. ``heads`` holds each packet's first ``HEAD_BYTES`` bytes;
        ``tails`` the remaining bytes of each packet longer than that, in row order."""
        rows = np.empty((len(caplen), RECORD_ROW), np.uint8)
        rows[:, 16:] = heads
        record_headers(rows, caplen, wirelen, ts_ns, self._nanosecond)
        self.write_rows(rows, caplen, tails)

    def write_rows(self, rows: np.ndarray, caplen: np.ndarray, tails: list | None = None) -> None:
        """Append records laid out as :func:`record_headers` describes."""
        if not len(rows):
            return
        if tails:
            self._write_with_tails(rows, caplen, tails)
        elif (caplen == HEAD_BYTES).all():
            self._file.write(rows)
        else:
            self._file.write(rows[np.arange(RECORD_ROW) < 16 + caplen[:, None]])
        self.packets += len(rows)

    def _write_with_tails(self, rec, caplen, tails) -> None:
        flat = memoryview(rec.reshape(-1))
        width = rec.shape[1]
        long_rows = caplen > HEAD_BYTES
        parts = []
        tail_iter = iter(tails)
        gc_was_enabled = gc.isenabled()
        gc.disable()  # millions of small objects: the collector would dominate (speed-limits §5)
        try:
            for row, (cap, is_long) in enumerate(zip(caplen.tolist(), long_rows.tolist())):
                start = row * width
                if is_long:
                    parts.append(flat[start:start + width])
                    parts.append(next(tail_iter))
                else:
                    parts.append(flat[start:start + 16 + cap])
            self._file.writelines(parts)
        finally:
            if gc_was_enabled:
                gc.enable()

    def commit(self) -> None:
        self._out.commit()

    def abort(self) -> None:
        self._out.abort()


def tails_of(batch_blocks: list[RecordBatch], block_id: np.ndarray, rows: np.ndarray,
             caplen: np.ndarray) -> list[memoryview]:
    """Tail bytes of the selected packets that are longer than ``HEAD_BYTES``, in order.
    ``block_id``/``rows`` say which batch and row each selected packet came from."""
    long = np.flatnonzero(caplen > HEAD_BYTES)
    return [_tail(batch_blocks[b], r) for b, r in zip(block_id[long].tolist(), rows[long].tolist())]
