"""capture's compiled twins as Python calls them: ``records.c`` (the record walks,
gathers and output layouts of :mod:`.kernels`, :mod:`.writers` and :mod:`.merge`) and
``pcapng.c`` (:class:`~.pcapng.PcapngReader`'s packet blocks), declared in ``twins.h``.
Each function checks what the C takes on trust — item sizes, shapes, lengths, ranges
(one table of :class:`~l3fwd_sim.compiled.Array` rows each) — then calls it; the
numpy code they twin is the definition (:mod:`l3fwd_sim.compiled`)."""
from __future__ import annotations

import numpy as np

from ..compiled import Array, View, binding, need, pointers, take, take_each
from .records import RECORD_ROW

UNITS = (10**9, 10**6)          # time-stamp ticks a second of a row or an output: ns or µs


_SCAN = (Array("buf", "uint8_t"), Array("out", "int64_t", True))


def scan_records(buf, pos: int, end: int, limit: int, big_endian: bool, max_caplen: int, out, headers):
    """kernels.scan_records -> (records, position after them, bad)"""
    ffi, lib = binding()
    b, o = take(_SCAN, buf, out)
    if headers is None:             # the records are only counted (a skip)
        h_ptr, rows, stride = ffi.NULL, limit, 0
    else:
        h, = take(_HEADERS, headers)
        need(h.cols >= 16, "headers' rows: at least 16 bytes")
        h_ptr, rows, stride = h.ptr, h.len, h.stride
    need(pos >= 0 and end <= b.len and limit <= o.len and limit <= rows, "scan_records: a range outside its arrays")
    after, bad = ffi.new("int64_t *"), ffi.new("int *")
    n = lib.scan_records(b.ptr, pos, end, limit, big_endian, max_caplen, o.ptr, h_ptr, stride, after, bad)
    return n, after[0], bool(bad[0])


_HEADERS = (Array("headers", "uint8_t", True, matrix=True),)
_WALK = (*_SCAN, Array("rows", "uint8_t", True, matrix=True))


def walk_rows(buf, pos: int, end: int, limit: int, big_endian: bool, max_caplen: int, snap: int, out, rows):
    """kernels.walk_rows -> (records, position after them, bad, bytes of their frames)"""
    ffi, lib = binding()
    b, o, r = take(_WALK, buf, out, rows)
    need(r.cols == RECORD_ROW and pos >= 0 and end <= b.len and limit <= o.len and limit <= r.len and snap >= 0,
         "walk_rows: rows of 80 bytes, and a range inside the arrays")
    after, bad, frame_bytes = ffi.new("int64_t *"), ffi.new("int *"), ffi.new("int64_t *")
    n = lib.walk_rows(b.ptr, pos, end, limit, big_endian, max_caplen, snap, o.ptr, r.ptr, r.stride, after, bad,
                      frame_bytes)
    return n, after[0], bool(bad[0]), frame_bytes[0]


def scan_blocks(buf, pos: int, end: int, out) -> int:
    """kernels.scan_blocks"""
    _, lib = binding()
    b, o = take(_SCAN, buf, out)
    need(pos >= 0 and end <= b.len and o.len >= (end - pos) // 12, "scan_blocks: a range outside its arrays")
    return lib.scan_blocks(b.ptr, pos, end, o.ptr)


_WALK_BLOCKS = (Array("buf", "uint8_t"), Array("section", "int64_t"), Array("snap", "int64_t"),
                Array("units", "uint64_t"), Array("scale", "int64_t"), Array("tsoffset", "int64_t"),
                Array("offsets", "int64_t", True), Array("owner", "int64_t", True),
                Array("rows", "uint8_t", True, matrix=True))


def walk_blocks(buf, pos: int, end: int, limit: int, big_endian: bool, libpcap: bool, interfaces: tuple, offsets,
                owner, rows) -> tuple[int, int, int, int, int]:
    """PcapngReader._walk's packet blocks; ``interfaces``: (section, snap, units, scale,
    tsoffset) as struct pcapng_interfaces. -> (packets, pos, frame bytes, skipped_from, stop)"""
    ffi, lib = binding()
    b, section, snap, units, scale, tsoffset, o, w, r = take(_WALK_BLOCKS, buf, *interfaces, offsets, owner, rows)
    n = snap.len
    need(0 <= pos <= end <= b.len and 0 <= limit <= min(o.len, w.len, r.len) and r.cols == RECORD_ROW
         and units.len == scale.len == tsoffset.len == n
         and bool(((section.array >= 0) & (section.array < n)).all())
         and bool(((units.array > 0) & (snap.array >= 0) & (scale.array >= 0)
                   & ((scale.array == 0) | (scale.array * units.array == 10**9))).all()),
         "walk_blocks: rows of 80 bytes, a range inside the buffer, and interfaces of one size")
    walk = ffi.new("struct pcapng_walk *", {
        "buf": b.ptr, "pos": pos, "end": end, "limit": limit, "big_endian": big_endian, "libpcap": libpcap,
        "interfaces": {"section": section.ptr, "section_size": section.len, "snap": snap.ptr, "units": units.ptr,
                       "scale": scale.ptr, "tsoffset": tsoffset.ptr},
        "offsets": o.ptr, "owner": w.ptr, "rows": r.ptr, "row_stride": r.stride})
    lib.walk_blocks(walk)
    return walk.n, walk.pos, walk.frame_bytes, walk.skipped_from, walk.stop


_GATHER = (Array("buf", "uint8_t"), Array("starts", "int64_t"), Array("widths", "int64_t", at_least="starts"),
           Array("out", "uint8_t", True, "starts", matrix=True))


def gather_windows(buf, starts, widths, out) -> None:
    """kernels.gather_windows"""
    _, lib = binding()
    b, s, w, o = take(_GATHER, buf, starts, widths, out)
    s_, w_ = s.array, w.array[:s.len]
    need(not s.len or s_.min() >= 0 and w_.min() >= 0 and (s_ + np.minimum(w_, o.cols)).max() <= b.len,
         "gather_windows: a window past the buffer")
    lib.gather_windows(b.ptr, s.ptr, w.ptr, s.len, o.ptr, o.stride, o.cols)


_CONCAT = (Array("buf", "uint8_t"), Array("starts", "int64_t"), Array("lengths", "int64_t", at_least="starts"),
           Array("out", "uint8_t", True))


def concat_ranges(buf, starts, lengths, out) -> None:
    """kernels.concat_ranges"""
    _, lib = binding()
    b, s, n, o = take(_CONCAT, buf, starts, lengths, out)
    s_, n_ = s.array, n.array[:s.len]
    need(not s.len or s_.min() >= 0 and n_.min() >= 0 and (s_ + n_).max() <= b.len,
         "concat_ranges: a range past the buffer")
    need(o.len >= int(n_.sum()), f"out: {o.len} items, at least {int(n_.sum())} needed")
    lib.concat_ranges(b.ptr, s.ptr, n.ptr, s.len, o.ptr)


_PACK = (Array("rows", "uint8_t", matrix=True), Array("widths", "int64_t"), Array("out", "uint8_t", True))


def pack_rows(rows, widths, out) -> None:
    """kernels.pack_rows"""
    _, lib = binding()
    r, w, o = take(_PACK, rows, widths, out)
    need(r.len >= w.len, f"rows: {r.len} items, at least {w.len} needed")
    need(not w.len or w.array.min() >= 0 and w.array.max() <= r.cols, "pack_rows: a width past its row")
    need(o.len >= int(w.array.sum()), f"out: {o.len} items, at least {int(w.array.sum())} needed")
    lib.pack_rows(r.ptr, r.stride, w.ptr, w.len, o.ptr)


# ------------------------------------------------------------ a super-burst's packets

_PACKETS = (Array("rows", "uint8_t", matrix=True), Array("caplen", "int64_t"), Array("in_port", "int64_t"))
_PACKETS_WRITTEN = (Array("rows", "uint8_t", True, matrix=True), *_PACKETS[1:])
_SOURCE = (Array("block", "uint8_t"), Array("offsets", "int64_t"))
_SOURCE_ROWS = (Array("source_id", "int64_t"), Array("source_row", "int64_t"))


class Packets:
    """``struct packets`` over a batch's arrays (PacketBatch.arrays(): rows, caplen,
    in_port, sources, source_id, source_row; sources: (block, offsets, row units) per
    source, or None when no frame is longer than a row's head). ``.c`` is the struct;
    the object holds what it points to."""

    def __init__(self, arrays: tuple, writable: bool = False):
        rows, caplen, in_port, sources, source_id, source_row = arrays
        r, c, p = self._views = take(_PACKETS_WRITTEN if writable else _PACKETS, rows, caplen, in_port)
        n = c.len
        need(r.len >= n and p.len >= n and r.cols >= 16 + 64,
             "packets: a row for each packet, of at least 80 bytes, and an input port each")
        self.n, self.head = n, r.cols - 16
        self.sources = [] if sources is None else [(*take(_SOURCE, block, offsets), units)
                                                   for block, offsets, units in sources]   # (few: one per queue)
        need(all(units in UNITS for *_, units in self.sources), "time stamps in ns or µs only")
        ffi, _ = binding()
        self.blocks = pointers("uint8_t", (block for block, _, _ in self.sources))
        self.offsets = pointers("int64_t", (offsets for _, offsets, _ in self.sources))
        self.row_units = ffi.new("int64_t[]", [units for *_, units in self.sources])
        self.c = ffi.new("struct packets *", {"rows": r.ptr, "stride": r.stride, "head": self.head, "caplen": c.ptr,
                                              "in_port": p.ptr, "n": n, "blocks": self.blocks,
                                              "offsets": self.offsets, "row_units": self.row_units})
        self.caplen, self.in_port = c.array[:n], p.array[:n]
        if sources is not None:
            self._ids = i, k = take(_SOURCE_ROWS, source_id, source_row)
            need(i.len >= n and k.len >= n, "source_id, source_row: one for each packet")
            self.c.source_id, self.c.source_row = i.ptr, k.ptr
            self.source_id, self.source_row = i.array[:n], k.array[:n]

    @property
    def rows(self) -> View:
        """The rows as taken (their pointer, row stride and width)."""
        return self._views[0]

    def check_tails(self) -> None:
        """For a twin that reads whole frames: every frame longer than a row's head lies
        wholly in its source's block."""
        need(not self.n or int(self.caplen.min()) >= 0, "a negative captured length")
        long = np.flatnonzero(self.caplen > self.head)
        if not len(long):
            return
        need(bool(self.sources), "a frame outside its source's block")
        sid, row = self.source_id[long], self.source_row[long]
        need(bool(((sid >= 0) & (sid < len(self.sources))).all()), "a frame outside its source's block")
        for s, (block, offsets, _) in enumerate(self.sources):
            mine = sid == s
            rows_s = row[mine]
            need(bool(((rows_s >= 0) & (rows_s < offsets.len)).all()), "a frame outside its source's block")
            at = offsets.array[rows_s]
            need(bool(((at >= 0) & (at + self.caplen[long[mine]] <= block.len)).all()),
                 "a frame outside its source's block")


def record_format_init(format_: tuple) -> dict:
    """``struct record_format`` of an output's (pcapng, units), as cffi initialises it."""
    pcapng, units = format_
    need(units in UNITS, "time stamps in ns or µs only")
    return {"pcapng": bool(pcapng), "units": units}


_SCATTER = (Array("dest", "int64_t"), Array("out", "uint8_t", True), Array("bytes", "int64_t", True),
            Array("count", "int64_t", True, "bytes"), Array("start", "int64_t", True, "bytes"))


def scatter_records(packets: tuple, dest, format_: tuple, out, bytes_, count, start) -> int:
    """writers: a super-burst grouped by TX port -> bytes in all; per port its bytes,
    packets and where its records start in ``out``."""
    ffi, lib = binding()
    p = Packets(packets)
    p.check_tails()
    f = ffi.new("struct record_format *", record_format_init(format_))
    d, o, b, c, s = take(_SCATTER, dest, out, bytes_, count, start)
    need(d.len >= p.n, f"dest: {d.len} items, at least {p.n} needed")
    need(not p.n or d.array[:p.n].max() < b.len, "a destination past the ports given")
    total = lib.port_bytes(p.c, d.ptr, b.len, f, b.ptr, c.ptr)
    need(o.len >= total + b.len * RECORD_ROW and p.head == RECORD_ROW - 16 and p.sources,
         "scatter_records: 80-byte rows, and room for the records and a row more")
    lib.scatter_records(p.c, d.ptr, b.len, f, b.ptr, s.ptr, o.ptr)
    return total


# ------------------------------------------------------------ outputs

_MERGE = (Array("positions", "int64_t", True), Array("carry", "uint64_t", True), Array("floor", "uint64_t"),
          Array("open", "uint8_t"), Array("source", "uint8_t", True))
_FILE = Array("file", "uint8_t")
_OUT = (Array("out", "uint8_t", True),)


def merge_queues(files: list, positions, carry, floor, open_, pcapng: bool, out, source) -> tuple[int, int, int]:
    """merge.merge_queues' pass: positions[f] (moved on) is where what is left of
    files[f] starts; carry[f] (moved on), floor[f], open_[f] as struct queue_file; out
    None: records counted, not copied. -> (records, bytes, bad queue or -1)"""
    ffi, lib = binding()
    k = len(files)
    p, c, f, o, s = take(_MERGE, positions, carry, floor, open_, source)
    need(min(p.len, c.len, f.len, o.len) >= k, "merge_queues: positions, carry, floor and open for every queue")
    need(k <= lib.MAX_TX_QUEUES, "merge_queues: too many queues")
    if out is None:                 # the records only counted
        out_ptr, capacity = ffi.NULL, 2**63 - 1
    else:
        o_, = take(_OUT, out)
        out_ptr, capacity = o_.ptr, o_.len
    data = take_each(_FILE, files)
    pos = p.array[:k].tolist()
    need(all(0 <= at <= d.len for at, d in zip(pos, data)), "merge_queues: a position outside its file")
    queues = ffi.new("struct queue_file[]", [
        {"data": d.ptr, "size": d.len, "pos": at, "carry": cy, "floor": fl, "open": op != 0}
        for d, at, cy, fl, op in zip(data, pos, c.array[:k].tolist(), f.array[:k].tolist(), o.array[:k].tolist())])
    used, bad = ffi.new("int64_t *"), ffi.new("int64_t *", -1)
    n = lib.merge_queues(queues, k, pcapng, out_ptr, capacity, s.ptr, s.len, used, bad)
    p.array[:k] = [queue.pos for queue in queues]
    c.array[:k] = [queue.carry for queue in queues]
    return (0, used[0], bad[0]) if n < 0 else (n, used[0], -1)


_COMMENTS = (Array("blocks", "uint8_t"), Array("text", "uint8_t"), Array("starts", "int64_t"),
             Array("ends", "int64_t", at_least="starts"), Array("out", "uint8_t", True))


def comment_blocks(blocks, text, starts, ends, out, pos: int, k: int) -> tuple[int, int, int]:
    """pcapng_writer: EPBs with their comments -> (bytes, next pos, next k); bytes -1:
    blocks is not one EPB per comment."""
    ffi, lib = binding()
    b, t, s, e, o = take(_COMMENTS, blocks, text, starts, ends, out)
    s_, e_ = s.array, e.array[:s.len]
    need(0 <= k <= s.len and 0 <= pos <= b.len and (not s.len or s_.min() >= 0 and e_.max() <= t.len
                                                     and 0 <= (e_ - s_).min() and (e_ - s_).max() <= 0xFFFF),
         "comment_blocks: a comment outside its text")
    at, next_ = ffi.new("int64_t *", pos), ffi.new("int64_t *", k)
    used = lib.comment_blocks(b.ptr, b.len, t.ptr, s.ptr, e.ptr, s.len, o.ptr, o.len, at, next_)
    return used, at[0], next_[0]
