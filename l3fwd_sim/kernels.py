"""Byte-walking loops of the pcap I/O, compiled with numba when it is installed.

Variable-size records cannot be found without reading each one's captured length — a
chain of dependent loads that neither numpy nor a Python loop does fast (600 ns per
record in Python; speed-limits.md §2) — and copying a few bytes at each of a million
offsets costs numpy a fancy index per byte. These kernels do both as plain loops. They
model no DPDK behaviour: each has a numpy (or Python) twin right below it that gives the
same result, used when numba is missing or ``L3FWD_SIM_KERNELS=numpy`` is set; the
tests run both.

numba is imported on first use (or by :func:`load`, which ``run`` calls before it starts
its clock), and compiled code is cached on disk, so only the first run on a machine
pays for compilation.
"""
from __future__ import annotations

import os
import struct

import numpy as np

_jit = None             # the compiled kernels once loaded; False: numba unavailable or disabled
_use_jit = True
_LE, _BE = struct.Struct("<I"), struct.Struct(">I")


def load():
    """The compiled kernels, or None when the numpy twins are in use."""
    global _jit
    if _jit is None:
        _jit = False
        if os.environ.get("L3FWD_SIM_KERNELS", "numba") != "numpy":
            try:
                _jit = _compile()
            except ImportError:
                pass
    return _jit if _jit and _use_jit else None


def use_numpy(enabled: bool = True) -> None:
    """Switch to the numpy twins (or back to the compiled kernels, if available)."""
    global _use_jit
    _use_jit = not enabled


def _compile():
    from numba import njit

    jit = njit(cache=True, nogil=True)

    @jit
    def scan_records(buf, pos, end, limit, big_endian, max_caplen, out):
        n = 0
        while n < limit and end - pos >= 16:
            b0, b1, b2, b3 = np.int64(buf[pos + 8]), np.int64(buf[pos + 9]), np.int64(buf[pos + 10]), np.int64(buf[pos + 11])
            cap = (b0 << 24 | b1 << 16 | b2 << 8 | b3) if big_endian else (b3 << 24 | b2 << 16 | b1 << 8 | b0)
            if cap > max_caplen:
                return n, pos, True
            if end - pos - 16 < cap:
                break
            out[n] = pos + 16
            n += 1
            pos += 16 + cap
        return n, pos, False

    @jit
    def gather_windows(buf, starts, widths, out):
        width = out.shape[1]
        for i in range(len(starts)):
            s, w = starts[i], min(widths[i], width)
            for k in range(w):
                out[i, k] = buf[s + k]
            for k in range(w, width):
                out[i, k] = 0

    @jit
    def scatter_windows(buf, starts, widths, rows):
        for i in range(len(starts)):
            s = starts[i]
            for k in range(widths[i]):
                buf[s + k] = rows[i, k]

    @jit
    def windows_equal(buf, starts, rows):
        width = rows.shape[1]
        same = np.ones(len(starts), np.bool_)
        for i in range(len(starts)):
            s = starts[i]
            for k in range(width):
                if buf[s + k] != rows[i, k]:
                    same[i] = False
                    break
        return same

    return type("Kernels", (), {f.__name__: staticmethod(f) for f in
                                (scan_records, gather_windows, scatter_windows, windows_equal)})


def scan_records(buf: np.ndarray, pos: int, end: int, limit: int, big_endian: bool, max_caplen: int,
                 out: np.ndarray) -> tuple[int, int, bool]:
    """Walk classic pcap records in ``buf[pos:end]``: put the frame offset of up to
    ``limit`` complete records in ``out``; stop before a record that runs past ``end``,
    or at one whose captured length exceeds ``max_caplen`` (then ``bad``).
    Returns ``(records, position after them, bad)``."""
    if (k := load()) is not None:
        n, pos, bad = k.scan_records(buf, pos, end, limit, big_endian, max_caplen, out)
        return int(n), int(pos), bool(bad)
    caplen_at = (_BE if big_endian else _LE).unpack_from
    n = 0
    while n < limit and end - pos >= 16:
        cap = caplen_at(buf, pos + 8)[0]
        if cap > max_caplen:
            return n, pos, True
        if end - pos - 16 < cap:
            break
        out[n] = pos + 16
        n += 1
        pos += 16 + cap
    return n, pos, False


def gather_windows(buf: np.ndarray, starts: np.ndarray, widths: np.ndarray, out: np.ndarray) -> None:
    """``out[i]`` = the first ``widths[i]`` bytes at ``buf[starts[i]:]``, zero after them.
    ``buf`` must hold ``out.shape[1]`` bytes past every start."""
    if (k := load()) is not None:
        return k.gather_windows(buf, starts, widths, out)
    width = out.shape[1]
    out[:] = np.lib.stride_tricks.sliding_window_view(buf, width)[starts]
    short = widths < width
    if short.any():
        out[short] *= np.arange(width) < widths[short, None]


def scatter_windows(buf: np.ndarray, starts: np.ndarray, widths: np.ndarray, rows: np.ndarray) -> None:
    """``buf[starts[i]:starts[i] + widths[i]] = rows[i, :widths[i]]``; windows must not overlap."""
    if (k := load()) is not None:
        return k.scatter_windows(buf, starts, widths, rows)
    for size in np.unique(widths).tolist():
        same = widths == size
        np.lib.stride_tricks.sliding_window_view(buf, size, writeable=True)[starts[same]] = rows[same, :size]


def windows_equal(buf: np.ndarray, starts: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Whether ``buf[starts[i]:starts[i] + w]`` equals ``rows[i]`` (w = its width), per row."""
    if (k := load()) is not None:
        return k.windows_equal(buf, starts, rows)
    return (np.lib.stride_tricks.sliding_window_view(buf, rows.shape[1])[starts] == rows).all(axis=1)

