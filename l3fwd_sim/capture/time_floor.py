"""The earliest time stamp a capture may still hand over, from any record not read yet:
what the merge of several lcores' TX queues may go up to while an lcore's queue is
empty (``capture/merge.py``: nothing that lcore sends later can be earlier)."""
from __future__ import annotations

import numpy as np

from . import kernels

NONE_LEFT = (1 << 64) - 1          # every record is read: the capture hands over nothing more


class TimeFloor:
    """Per record of a capture, the earliest time stamp (ns) from it to the end."""

    def __init__(self, ts_ns: np.ndarray):
        self._suffix = np.minimum.accumulate(ts_ns[::-1])[::-1] if len(ts_ns) else ts_ns

    def at(self, record: int) -> int:
        """The floor once ``record`` records were read."""
        return int(self._suffix[record]) if record < len(self._suffix) else NONE_LEFT


def record_times(data: np.ndarray, frames: np.ndarray, nanosecond: bool) -> np.ndarray:
    """The time stamps (ns) of the classic little-endian pcap records whose frames are at
    ``frames`` of ``data`` (each record header just before its frame)."""
    if not len(frames):
        return np.zeros(0, np.uint64)
    fields = np.empty((len(frames), 8), np.uint8)
    kernels.gather_windows(data, frames - 16, np.full(len(frames), 8), fields)
    words = fields.view("<u4").astype(np.uint64)
    return words[:, 0] * np.uint64(10**9) + words[:, 1] * np.uint64(1 if nanosecond else 1000)


def scan_floor(data: np.ndarray, first: int, nanosecond: bool) -> TimeFloor | None:
    """The floor of a classic little-endian pcap mapped as ``data`` whose records start at
    ``first``; None where its records cannot all be found (a damaged length)."""
    limit = max(0, (len(data) - first) // 16)
    frames = np.empty(limit, np.int64)
    n, _, bad = kernels.scan_records(data, first, len(data), limit, False, len(data), frames, None)
    return None if bad else TimeFloor(record_times(data, frames[:n], nanosecond))
