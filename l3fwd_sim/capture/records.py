"""The record layout shared by every capture reader and writer: a batch of records is
``(n, RECORD_ROW)`` rows, each a 16-byte pcap record header (little-endian) followed by
the first ``HEAD_BYTES`` bytes of the frame — the bytes an output record starts with.
libpcap's limits (snaplen, ``MAXIMUM_SNAPLEN``) and FCS stripping live here too, as
both the classic pcap and the pcapng reader apply them."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path

import numpy as np

HEAD_BYTES = 64          # covers the IPv6 EM key (frame bytes 18..57)
MAX_CAPLEN = 262144      # libpcap's MAXIMUM_SNAPLEN: a larger record is damage, not data
READ_BLOCK = 8 << 20     # a reader's buffer: records are parsed a block at a time
RECORD_ROW = 16 + HEAD_BYTES   # a record header followed by a frame's head
PCAP_SECONDS = 1 << 32   # a classic pcap record holds 32-bit seconds: up to 2106-02-07 06:28:15 UTC


@dataclass
class RecordBatch:
    """Consecutive records of one capture, as libpcap hands them over.

    ``rows[i]`` is record i laid out as a pcap record starts: its 16-byte record header
    (little-endian, in the reader's timestamp resolution, with the captured length of
    the frame as handed over) followed by the frame's first HEAD_BYTES bytes, zero past
    its end — the bytes an output record starts with: the seconds are their low 32 bits;
    ``seconds_high`` holds the rest (seconds >> 32) per record only when a batch has a
    time stamp past 2106 (pcapng). ``block`` (the reader's buffer)
    holds the whole frames at ``offsets``. Both are only valid until the reader's next
    ``read``: ``rows`` may be a view into ``block`` (editing it in place is allowed: the
    bytes are the batch's own).

    Short frames of one size may come as ``records``, the records themselves (n rows of
    ``16 + caplen`` bytes, in ``block``): the zero padding to full rows is then done
    only where the rows are laid out (:meth:`copy_rows`), not by the reader — one copy
    of each record less on the common 64-byte case."""
    records: np.ndarray   # (n, RECORD_ROW) uint8, or (n, 16 + caplen) when caplen < HEAD_BYTES
    block: np.ndarray     # uint8 buffer holding the packet bytes
    offsets: np.ndarray   # int64 start of each packet in ``block``
    nanosecond: bool      # the record headers' fractions are nanoseconds (else µs)
    first: int = 0        # the capture's record number of rows[0] (0-based)
    path: Path | None = None               # the capture, for messages
    seconds_high: np.ndarray | None = None  # int64 seconds >> 32 per record; None when all are 0
    known_bytes: int | None = None         # record_bytes, when the reader knew it without a pass
    numbers: np.ndarray | None = None      # int64 record number in the capture per record, where they
                                           # are not first, first + 1, ... (an RSS queue's records)

    def __len__(self) -> int:
        return len(self.records)

    @property
    def record_bytes(self) -> int:
        """The bytes these records take in a classic pcap: 16 per record header plus
        the frames as handed over."""
        return self.known_bytes if self.known_bytes is not None else 16 * len(self) + int(self.caplen.sum())

    def compiled_source(self) -> tuple:
        """The batch as a source of records the compiled twins lay out: its read buffer,
        where each frame starts there, and the ticks a second of its rows' fractions."""
        return self.block, np.ascontiguousarray(self.offsets, np.int64), 10**9 if self.nanosecond else 10**6

    @cached_property
    def rows(self) -> np.ndarray:
        """(n, RECORD_ROW): each record header and frame head, zero past the frame."""
        return padded(self.records)

    def copy_rows(self, out: np.ndarray) -> None:
        """Lay the rows out in ``out`` (shape (..., RECORD_ROW) holding n rows, e.g. every
        ``k``-th burst of a larger array)."""
        copy_padded(self.records, out)

    @property
    def heads(self) -> np.ndarray:
        return self.rows[:, 16:]

    @property
    def caplen(self) -> np.ndarray:
        return header_field(self.records, CAPLEN)

    @property
    def wirelen(self) -> np.ndarray:
        return header_field(self.records, WIRELEN)

    @property
    def ts_ns(self) -> np.ndarray:
        """int64 nanoseconds since the epoch."""
        seconds = header_field(self.records, SECONDS)
        if self.seconds_high is not None:
            seconds += self.seconds_high << 32
        return seconds * 1_000_000_000 + header_field(self.records, FRACTION) * (1 if self.nanosecond else 1000)


SECONDS, FRACTION, CAPLEN, WIRELEN = range(4)     # the record header's fields


def as_items(rows: np.ndarray) -> np.ndarray:
    """An (..., w) byte array whose rows are contiguous as items of w bytes (a view).
    numpy copies and gathers one w-byte item per row about twice as fast as a row of w
    one-byte elements (measured: 10.2 -> 5.1 ns per 76-byte row copied, 10.6 -> 6.5 ns
    per row gathered)."""
    return rows.view(f"V{rows.shape[-1]}")[..., 0]


def copy_padded(records: np.ndarray, out: np.ndarray) -> None:
    """``out`` (..., RECORD_ROW), n rows in all = ``records`` (n, w <= RECORD_ROW), zero
    past ``w``: one item copy per row."""
    width = records.shape[1]
    as_items(out[..., :width])[...] = as_items(records).reshape(out.shape[:-1])
    out[..., width:] = 0


def padded(records: np.ndarray) -> np.ndarray:
    """``records`` as (n, RECORD_ROW) rows: itself when already that wide, else a
    zero-padded copy."""
    if records.shape[1] == RECORD_ROW:
        return records
    rows = np.empty((len(records), RECORD_ROW), np.uint8)
    copy_padded(records, rows)
    return rows


def header_field(rows: np.ndarray, field: int) -> np.ndarray:
    """One field of each row's (little-endian) record header, as int64."""
    return rows[:, 4 * field:4 * field + 4].view("<u4")[:, 0].astype(np.int64)


def headers_to_little_endian(rows: np.ndarray) -> None:
    """Byte-swap the record headers of rows copied from a big-endian file, in place."""
    header = rows[:, :16].view("<u4")
    header[:] = header.byteswap()


def strip_fcs(caplen: np.ndarray, wirelen: np.ndarray, fcs) -> tuple[np.ndarray, np.ndarray]:
    """Remove a trailing FCS of ``fcs`` bytes (scalar or per record). The FCS is the last
    ``fcs`` bytes of the frame on the wire: the wire length loses them; a frame captured
    whole (caplen >= wirelen) loses its last ``fcs`` captured bytes; a snaplen-cut frame
    keeps what it has before the FCS. Lengths never go below 0."""
    frame_end = np.maximum(caplen, wirelen) - fcs
    return np.clip(np.minimum(caplen, frame_end), 0, None), np.clip(wirelen - fcs, 0, None)


def libpcap_snaplen(snaplen: int) -> int:
    """``pcapint_adjust_snapshot``: 0 or anything above the maximum means the maximum."""
    return snaplen if 0 < snaplen <= MAX_CAPLEN else MAX_CAPLEN


def record_headers(rows: np.ndarray, caplen: np.ndarray, wirelen: np.ndarray, ts_ns: np.ndarray,
                   nanosecond: bool) -> None:
    """Write pcap record headers into the first 16 bytes of ``rows`` (n, RECORD_ROW),
    whose other bytes hold each frame's head: a frame of at most HEAD_BYTES bytes is
    then its row cut at ``16 + caplen``."""
    hdr = rows[:, :16].view("<u4")
    sec, frac = np.divmod(ts_ns, 1_000_000_000)
    hdr[:, 0] = sec & (PCAP_SECONDS - 1)          # the low 32 bits (RecordBatch.seconds_high: the rest)
    hdr[:, 1] = frac if nanosecond else frac // 1000
    hdr[:, 2] = caplen
    hdr[:, 3] = wirelen


def utc_text(ns: int) -> str:
    """A time stamp (ns since the epoch) for messages."""
    try:
        return datetime.fromtimestamp(ns // 10**9, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return f"{ns} ns"
