"""Byte-walking loops of the pcap I/O, compiled with numba when it is installed.

Variable-size records cannot be found without reading each one's captured length — a
chain of dependent loads that neither numpy nor a Python loop does fast (600 ns per
record in Python; speed-limits.md §2) — and copying a few bytes at each of a million
offsets costs numpy a fancy index per byte. ``kernels_jit.py`` does both as plain
compiled loops. They model no DPDK behaviour. Each function here calls its compiled
kernel, or runs its numpy (or Python) twin when numba is missing or
``L3FWD_SIM_KERNELS=numpy`` is set; both give the same result, and the tests run both.

When they are compiled is :mod:`l3fwd_sim.compiled`'s rent-or-buy choice: walking a
record in Python costs 345 ns more than compiled (measured on the project VM over
200,000 records of 60..300 bytes), so a capture walks about a million records before
the kernels pay for their import; the gathers and the restore cost numpy little more
than compiled code and use the kernels only once something loaded them. A run over
fixed-size frames (read without a walk) never imports numba.
"""
from __future__ import annotations

import struct

import numpy as np

from .. import compiled

_LE, _BE = struct.Struct("<I"), struct.Struct(">I")
WALK_EXCESS_SECONDS = 345e-9     # Python's extra cost per record walked (measured)


def load():
    """The compiled kernels, imported now; None when the numpy twins are in use."""
    return compiled.load(__name__)


def use_numpy(enabled: bool = True) -> None:
    """Switch to the numpy twins (or back to the compiled kernels, if available)."""
    compiled.use_numpy(enabled)


def scan_records(buf: np.ndarray, pos: int, end: int, limit: int, big_endian: bool, max_caplen: int,
                 out: np.ndarray, headers: np.ndarray) -> tuple[int, int, bool]:
    """Walk classic pcap records in ``buf[pos:end]``: put the frame offset of up to
    ``limit`` complete records in ``out`` and their 16-byte record headers in
    ``headers``; stop before a record that runs past ``end``, or at one whose captured
    length exceeds ``max_caplen`` (then ``bad``).
    Returns ``(records, position after them, bad)``."""
    if (k := compiled.module(__name__)) is not None:
        n, pos, bad = k.scan_records(buf, pos, end, limit, big_endian, max_caplen, out, headers)
        return int(n), int(pos), bool(bad)
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
    headers[:n] = np.lib.stride_tricks.sliding_window_view(buf, 16)[out[:n] - 16]
    compiled.rent(n * WALK_EXCESS_SECONDS)
    return n, pos, bad


def scan_blocks(buf: np.ndarray, pos: int, end: int, out: np.ndarray) -> int:
    """Walk the blocks of a little-endian pcapng in ``buf[pos:end]`` (one this package
    wrote: a block's length is its second 32-bit word): put the offset of each block
    that lies wholly there in ``out`` (room for every block), stop at a malformed
    length. Returns how many."""
    if (k := compiled.module(__name__)) is not None:
        return int(k.scan_blocks(buf, pos, end, out))
    length_at = _LE.unpack_from
    n = 0
    while end - pos >= 12:
        length = length_at(buf, pos + 4)[0]
        if length < 12 or end - pos < length:
            break
        out[n] = pos
        n += 1
        pos += length
    compiled.rent(n * WALK_EXCESS_SECONDS)
    return n


def gather_windows(buf: np.ndarray, starts: np.ndarray, widths: np.ndarray, out: np.ndarray) -> None:
    """``out[i]`` = the first ``widths[i]`` bytes at ``buf[starts[i]:]``, zero after them.
    ``buf`` must hold ``out.shape[1]`` bytes past every start."""
    if (k := compiled.loaded(__name__)) is not None:
        return k.gather_windows(buf, starts, widths, out)
    width = out.shape[1]
    out[:] = np.lib.stride_tricks.sliding_window_view(buf, width)[starts]
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
    if (k := compiled.loaded(__name__)) is not None:
        restored = np.zeros(len(which), bool)
        k.restore_records(buf, offsets, caplen, rows, which, restored)
        return which[restored]
    which = which[offsets[which] >= 16]
    headers = np.lib.stride_tricks.sliding_window_view(buf, 16)[offsets[which] - 16]
    which = which[(headers == rows[which, :16]).all(axis=1)]
    widths = np.minimum(caplen[which], rows.shape[1] - 16)
    for size in np.unique(widths).tolist():
        same = which[widths == size]
        np.lib.stride_tricks.sliding_window_view(buf, size, writeable=True)[offsets[same]] = rows[same, 16:16 + size]
    return which


def concat_ranges(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """``buf[starts[i]:starts[i] + lengths[i]]`` for every i, one after another."""
    out = np.empty(int(lengths.sum()), np.uint8)
    if (k := compiled.loaded(__name__)) is not None:
        k.concat_ranges(buf, starts, lengths, out)
        return out
    if len(starts):
        out[:] = np.concatenate([buf[s:s + n] for s, n in zip(starts.tolist(), lengths.tolist())])
    return out


def pack_rows(rows: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """The first ``widths[i]`` bytes of each row ``i``, one after another (records of
    several sizes, laid out as they go to the file)."""
    if (k := compiled.loaded(__name__)) is not None:
        out = np.empty(int(widths.sum()), np.uint8)
        k.pack_rows(rows, widths, out)
        return out
    return rows[np.arange(rows.shape[1]) < widths[:, None]]
