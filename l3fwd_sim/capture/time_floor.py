"""The earliest time stamp a capture may still hand over, from any record not read yet:
what the merge of several lcores' TX queues may go up to while an lcore's queue is
empty (``capture/merge.py``: nothing that lcore sends later can be earlier)."""
from __future__ import annotations

import numpy as np

from . import kernels

NONE_LEFT = (1 << 64) - 1          # every record is read: the capture hands over nothing more


class TimeFloor:
    """Per record of a classic pcap, the earliest time stamp from it to the end. Kept as
    the records' own (seconds, fraction) words — one number that orders the records of
    one resolution — and told in ns, one at a time."""

    def __init__(self, words: np.ndarray, nanosecond: bool):
        self._suffix = np.minimum.accumulate(words[::-1])[::-1] if len(words) else words
        self._unit = 1 if nanosecond else 1000

    def at(self, record: int) -> int:
        """The floor (ns) once ``record`` records were read."""
        if record >= len(self._suffix):
            return NONE_LEFT
        word = int(self._suffix[record])
        return (word >> 32) * 10**9 + (word & 0xFFFFFFFF) * self._unit


def time_words(seconds: np.ndarray, fractions: np.ndarray) -> np.ndarray:
    """Records' (seconds, fraction) as one uint64 each."""
    return seconds.astype(np.uint64) << np.uint64(32) | fractions.astype(np.uint64)


def scan_floor(data: np.ndarray, first: int, nanosecond: bool) -> TimeFloor | None:
    """The floor of a classic little-endian pcap mapped as ``data`` whose records start at
    ``first``; None where its records cannot all be found (a damaged length)."""
    limit = max(0, (len(data) - first) // 16)
    frames, headers = np.empty(limit, np.int64), np.empty((limit, 16), np.uint8)
    n, _, bad = kernels.scan_records(data, first, len(data), limit, False, len(data), frames, headers)
    if bad:
        return None
    fields = headers[:n].view("<u4")
    return TimeFloor(time_words(fields[:, 0], fields[:, 1]), nanosecond)
