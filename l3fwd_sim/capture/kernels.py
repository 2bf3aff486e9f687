"""Byte-walking loops of the pcap I/O, with compiled twins (``records.c``).

Variable-size records cannot be found without reading each one's captured length — a
chain of dependent loads that neither numpy nor a Python loop does fast (600 ns per
record in Python; speed-limits.md §2) — and copying a few bytes at each of a million
offsets costs numpy a fancy index per byte. ``records.c`` does both as plain C loops.
They model no DPDK behaviour. Each function here calls its compiled twin when the run
uses them (:mod:`l3fwd_sim.compiled`), or runs the numpy (or Python) code below, which
is the definition; the tests run both.
"""
from __future__ import annotations

import struct

import numpy as np

from .. import compiled
from . import twins

_LE, _BE = struct.Struct("<I"), struct.Struct(">I")


def scan_records(buf: np.ndarray, pos: int, end: int, limit: int, big_endian: bool, max_caplen: int,
                 out: np.ndarray, headers: np.ndarray) -> tuple[int, int, bool]:
    """Walk classic pcap records in ``buf[pos:end]``: put the frame offset of up to
    ``limit`` complete records in ``out`` and their 16-byte record headers in
    ``headers`` (None: not copied); stop before a record that runs past ``end``, or at
    one whose captured length exceeds ``max_caplen`` (then ``bad``).
    Returns ``(records, position after them, bad)``."""
    if compiled.enabled():
        return twins.scan_records(buf, pos, end, limit, big_endian, max_caplen, out, headers)
    caplen_at = (_BE if big_endian else _LE).unpack_from
    n = 0
    bad = False
    while n < limit and end - pos >= 16:
        cap = caplen_at(buf, pos + 8)[0]
        if cap > max_caplen:
            bad = True
            break
        if end - pos - 16 < cap:
            break
        out[n] = pos + 16
        n += 1
        pos += 16 + cap
    if headers is not None:
        headers[:n] = np.lib.stride_tricks.sliding_window_view(buf, 16)[out[:n] - 16]
    return n, pos, bad


def walk_rows(buf: np.ndarray, pos: int, end: int, limit: int, big_endian: bool, max_caplen: int, snap: int,
              out: np.ndarray, rows: np.ndarray) -> tuple[int, int, bool, int]:
    """:func:`scan_records`, each record laid out as its row (``records.RECORD_ROW``
    bytes) in ``rows``: the record header in little-endian with the captured length cut
    to ``snap``, then the frame's head, zero past it — records handed over as stored but
    for libpcap's snaplen. Returns ``(records, position after them, bad, bytes of their
    frames as cut)``."""
    if compiled.enabled():
        return twins.walk_rows(buf, pos, end, limit, big_endian, max_caplen, snap, out, rows)
    n, pos, bad = scan_records(buf, pos, end, limit, big_endian, max_caplen, out, rows[:, :16])
    header = rows[:n, :16].view("<u4")
    if big_endian:
        header[:] = header.byteswap()
    caplen = np.minimum(header[:, 2], snap).astype(np.int64)
    header[:, 2] = caplen
    gather_windows(buf, out[:n], caplen, rows[:n, 16:])
    return n, pos, bad, int(caplen.sum())


def scan_blocks(buf: np.ndarray, pos: int, end: int, out: np.ndarray) -> int:
    """Walk the blocks of a little-endian pcapng in ``buf[pos:end]`` (one this package
    wrote: a block's length is its second 32-bit word): put the offset of each block
    that lies wholly there in ``out`` (room for every block), stop at a malformed
    length. Returns how many."""
    if compiled.enabled():
        return twins.scan_blocks(buf, pos, end, out)
    length_at = _LE.unpack_from
    n = 0
    while end - pos >= 12:
        length = length_at(buf, pos + 4)[0]
        if length < 12 or end - pos < length:
            break
        out[n] = pos
        n += 1
        pos += length
    return n


def gather_windows(buf: np.ndarray, starts: np.ndarray, widths: np.ndarray, out: np.ndarray) -> None:
    """``out[i]`` = the first ``widths[i]`` bytes at ``buf[starts[i]:]``, zero after them
    (``widths[i]`` at most ``out.shape[1]``; ``buf`` holds them)."""
    if compiled.enabled():
        return twins.gather_windows(buf, starts, widths, out)
    width = out.shape[1]
    if not len(starts):
        return
    near_end = starts > len(buf) - width            # windows that would run past buf: from a padded copy of its end
    if not near_end.any():
        out[:] = np.lib.stride_tricks.sliding_window_view(buf, width)[starts]
    else:
        if (inside := ~near_end).any():
            out[inside] = np.lib.stride_tricks.sliding_window_view(buf, width)[starts[inside]]
        tail_from = max(0, len(buf) - width)
        end = np.zeros(2 * width, np.uint8)
        end[:len(buf) - tail_from] = buf[tail_from:]
        out[near_end] = np.lib.stride_tricks.sliding_window_view(end, width)[starts[near_end] - tail_from]
    short = widths < width
    if short.any():
        out[short] *= np.arange(width) < widths[short, None]


def restore_records(buf: np.ndarray, offsets: np.ndarray, caplen: np.ndarray, rows: np.ndarray,
                    which: np.ndarray) -> np.ndarray:
    """For each row ``r`` of ``which`` (a frame at ``buf[offsets[r]:]`` whose record header
    ``rows[r, :16]`` and head ``rows[r, 16:]`` are laid out as ``pcap.record_headers``
    says): if the 16 bytes before the frame already are that record header, put the head
    back into the frame (its first ``min(caplen[r], head width)`` bytes) — the buffer
    then holds the whole output record. Returns the rows so restored, in order. Frames
    must not overlap."""
    which = which[offsets[which] >= 16]
    headers = np.lib.stride_tricks.sliding_window_view(buf, 16)[offsets[which] - 16]
    which = which[(headers == rows[which, :16]).all(axis=1)]
    widths = np.minimum(caplen[which], rows.shape[1] - 16)
    for size in np.unique(widths).tolist():
        same = which[widths == size]
        np.lib.stride_tricks.sliding_window_view(buf, size, writeable=True)[offsets[same]] = rows[same, 16:16 + size]
    return which


def concat_ranges(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                  out: np.ndarray | None = None) -> np.ndarray:
    """``buf[starts[i]:starts[i] + lengths[i]]`` for every i, one after another (into
    ``out`` if given: exactly that many bytes)."""
    out = np.empty(int(lengths.sum()), np.uint8) if out is None else out
    if compiled.enabled():
        twins.concat_ranges(buf, starts, lengths, out)
        return out
    if len(starts):
        out[:] = np.concatenate([buf[s:s + n] for s, n in zip(starts.tolist(), lengths.tolist())])
    return out


def pack_rows(rows: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """The first ``widths[i]`` bytes of each row ``i``, one after another (records of
    several sizes, laid out as they go to the file)."""
    if compiled.enabled():
        out = np.empty(int(widths.sum()), np.uint8)
        twins.pack_rows(rows, widths, out)
        return out
    return rows[np.arange(rows.shape[1]) < widths[:, None]]
