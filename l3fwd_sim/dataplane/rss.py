"""RSS: which RX queue of a port a packet lands in, as a NIC would place it
(lcores_and_queues.md, "RSS"). net_pcap itself has no RSS (each queue reads its own
file); this predicts what a real NIC does with the port's traffic.

* Hash: Toeplitz over source address, destination address and, where the fields
  include L4 (l3fwd's ACL mode adds ``RTE_ETH_RSS_UDP | TCP | SCTP`` to ``RTE_ETH_RSS_IP``),
  source port, destination port — all in network byte order, the byte stream DPDK's
  ``rte_softrss`` hashes. Fragments and packets without TCP/UDP/SCTP right after the IP
  header hash the addresses only; anything that is not IPv4 or IPv6 by its EtherType
  (ARP, VLAN-tagged, …), or too short for its fields, goes to queue 0.
* Queue: ``reta[hash % reta_size]``, the redirection table filled round-robin over the
  queues (``reta[i] = i % queues``), as PMDs program it by default.

Nothing is written for the split. The port's capture is mapped into memory and walked
there once, every record hashed (:class:`CaptureIndex`); each RX queue reads its records
by index from that one mapping (:class:`IndexedQueue`). A capture whose records cannot
be found again in the mapping (gzip, pcapng, converted, cut to the snaplen) is read by
each of its queues, which keep the records the hash gives them (:class:`RssQueue`).
``rss.c`` twins :func:`rss_queues` and the walk of :func:`index_capture`.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .. import compiled
from ..capture import kernels
from ..capture.offline import OpenCaptures, open_offline
from ..capture.pcap import PcapReader
from ..capture.time_floor import TimeFloor, time_words
from ..capture.records import (CAPLEN, MAX_CAPLEN, RECORD_ROW, RecordBatch, copy_padded, header_field,
                               libpcap_snaplen, padded)
from ..errors import SimError
from . import twins

DEFAULT_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")
RETA_SIZES = (64, 128, 256, 512)
_L4 = np.zeros(256, bool)
_L4[[6, 17, 132]] = True                          # TCP, UDP, SCTP
HASHED_BYTES = 36                                 # the longest stream: two IPv6 addresses and the ports
PIECE = 65536                                     # records laid out (and hashed) at a time


def parse_rss_key(text: str) -> bytes:
    """``--rss-key``: hex digits (an optional 0x, colons allowed), 40 bytes or more."""
    digits = text.removeprefix("0x").replace(":", "")
    try:
        key = bytes.fromhex(digits)
    except ValueError:
        raise SimError(f"--rss-key {text!r}: not hex") from None
    if len(key) < 40:
        raise SimError(f"--rss-key: {len(key)} bytes; the Toeplitz hash of IPv6 addresses and ports needs 40")
    return key


@functools.lru_cache(maxsize=16)
def toeplitz_tables(key: bytes, length: int) -> np.ndarray:
    """(length, 256) uint32: the hash contribution of byte value v at stream position j
    (the XOR of the key's 32-bit windows at the set bits of v)."""
    if len(key) < length + 4:
        raise SimError(f"--rss-key: {len(key)} bytes; hashing {length} bytes needs at least {length + 4}")
    key_int, key_bits = int.from_bytes(key, "big"), 8 * len(key)
    windows = [(key_int >> (key_bits - 32 - i)) & 0xFFFFFFFF for i in range(8 * length)]
    tables = np.zeros((length, 256), np.uint32)
    values = np.arange(256)
    for j in range(length):
        for k in range(8):                        # bit 7 of a byte comes first in the stream
            tables[j, (values >> (7 - k)) & 1 == 1] ^= np.uint32(windows[8 * j + k])
    tables.flags.writeable = False           # cached: shared by every call with this key and length
    return tables


def toeplitz(stream: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """The Toeplitz hash of each row of ``stream`` ((n, length) bytes)."""
    result = np.zeros(len(stream), np.uint32)
    for j in range(stream.shape[1]):
        result ^= tables[j, stream[:, j]]
    return result


@functools.lru_cache(maxsize=16)
def reta_of(reta_size: int, queues: int) -> np.ndarray:
    """The redirection table as PMDs program it by default: round-robin over the queues."""
    reta = np.arange(reta_size, dtype=np.int64) % queues
    reta.flags.writeable = False
    return reta


def _compiled_rss(l4: bool, key: bytes, reta_size: int, queues: int) -> tuple:
    """A port's RSS as ``rss.c`` takes it."""
    return l4, toeplitz_tables(key, HASHED_BYTES).reshape(-1), reta_of(reta_size, queues)


def rss_queues(records: np.ndarray, queues: int, l4: bool, key: bytes, reta_size: int = 128) -> np.ndarray:
    """The RX queue of each record (``records``: rows of a record header and the frame's
    first bytes, as :class:`~l3fwd_sim.capture.records.RecordBatch` holds them)."""
    if compiled.enabled():
        queue = np.empty(len(records), np.int64)
        twins.rss_queues(_compiled_rss(l4, key, reta_size, queues), records, queue)
        return queue
    heads, caplen = padded(records)[:, 16:], header_field(records, CAPLEN)
    queue = np.zeros(len(heads), np.int64)
    ether = heads[:, 12:14].view(">u2")[:, 0]
    reta = reta_of(reta_size, queues)
    for ether_type, addresses, l3, proto_at in ((0x0800, slice(26, 34), 14, 23), (0x86DD, slice(22, 54), 14, 20)):
        family = ether == ether_type
        if ether_type == 0x0800:
            ihl = (heads[:, l3] & 0x0F).astype(np.int64) * 4
            fragment = (heads[:, l3 + 6:l3 + 8].view(">u2")[:, 0] & 0x3FFF) != 0     # MF or an offset
            ports_at = l3 + ihl
            with_l4 = ~fragment & (ihl >= 20)
        else:
            ports_at = np.full(len(heads), 54)
            with_l4 = np.ones(len(heads), bool)
        with_l4 &= _L4[heads[:, proto_at]] & l4        # l3fwd hashes the L4 ports in ACL mode only
        with_l4 &= ports_at + 4 <= np.minimum(caplen, heads.shape[1])
        family &= caplen >= addresses.stop
        for use_l4 in (False, True):
            rows = np.flatnonzero(family & (with_l4 == use_l4))
            if not len(rows):
                continue
            stream = heads[rows, addresses]
            if use_l4:
                at = ports_at[rows, None] + np.arange(4)
                stream = np.concatenate([stream, np.take_along_axis(heads[rows], at, axis=1)], axis=1)
            hashes = toeplitz(stream, toeplitz_tables(key, stream.shape[1]))
            queue[rows] = reta[hashes % reta_size]
    return queue


@dataclass(frozen=True)
class CaptureIndex:
    """The one read of a capture that RSS spreads over several RX queues: the file
    mapped into memory, each record's frame as an offset into it, its length, and its
    queue. The queues then read their records by index (:class:`IndexedQueue`)."""
    data: np.ndarray          # the file, mapped copy-on-write: shared by the queues (disjoint records)
    offsets: np.ndarray       # int64
    caplen: np.ndarray        # uint32
    queue: np.ndarray         # uint8
    nanosecond: bool
    cut_short: str | None     # the reader's warning when the file ends inside a record
    floor: TimeFloor          # the earliest time stamp from each record on (what a queue may still hand over)


def index_capture(reader: PcapReader, queues: int, l4: bool, key: bytes, reta_size: int) -> CaptureIndex | None:
    """Walk the capture once in the file mapped into memory, placing every record (no
    copy of the file is read). None (the reader closed either way) when its records
    cannot be found again in the mapping — compressed, pcapng, converted — or are not
    what the reader hands over as stored: one cut to the snaplen, a damaged length (the
    queues' readers say where). Each queue then reads the capture itself
    (:class:`RssQueue`)."""
    try:
        if not reader.mappable:
            return None
        # copy-on-write: the writers may put edited heads back into a batch's block, never into the file
        data = np.memmap(reader.path, np.uint8, mode="c")
        pos, end = reader.position, len(data)
        room = (end - pos) // 16                     # the most records the file can hold: only those found are touched
        # narrow columns: fresh memory costs more than the walk (queues: at most MAX_RX_QUEUE_PER_PORT)
        offsets, caplen, queue = np.empty(room, np.int64), np.empty(room, np.uint32), np.empty(room, np.uint8)
        ts = np.empty(room, np.uint64)
        walk = _walk_compiled if compiled.enabled() else _walk_definition
        n, pos = walk(data, pos, libpcap_snaplen(reader.snaplen), (queues, l4, key, reta_size), offsets, caplen, queue,
                      ts)
        if n is None:
            return None
        return CaptureIndex(data, offsets[:n], caplen[:n], queue[:n], reader.nanosecond,
                            reader.cut_at(pos) if pos < end else None, TimeFloor(ts[:n], reader.nanosecond))
    finally:
        reader.close()


def _walk_definition(data: np.ndarray, pos: int, snap: int, rss: tuple, offsets: np.ndarray, caplen: np.ndarray,
                     queue: np.ndarray, ts: np.ndarray) -> tuple[int | None, int]:
    """:func:`index_capture`'s walk: the records laid out as rows a piece at a time, as a
    reader lays them out, and hashed (:func:`rss_queues`). Returns how many records (None
    at one the reader would not hand over as stored) and where the walk stopped."""
    rows = np.empty((PIECE, RECORD_ROW), np.uint8)           # reused: only the hash reads them
    n = 0
    while True:
        got, after, bad, frames = kernels.walk_rows(data, pos, len(data), min(PIECE, len(offsets) - n), False,
                                                    MAX_CAPLEN, snap, offsets[n:], rows)
        if bad or after - pos != 16 * got + frames:          # damage, or a record the reader cuts to the snaplen
            return None, pos
        if not got:
            return n, pos
        caplen[n:n + got] = header_field(rows[:got], CAPLEN)
        words = rows[:got, :8].view("<u4")
        ts[n:n + got] = time_words(words[:, 0], words[:, 1])
        queue[n:n + got] = rss_queues(rows[:got], *rss)
        n, pos = n + got, after


def _walk_compiled(data: np.ndarray, pos: int, snap: int, rss: tuple, offsets: np.ndarray, caplen: np.ndarray,
                   queue: np.ndarray, ts: np.ndarray) -> tuple[int | None, int]:
    """:func:`_walk_definition` by ``rss.c``'s ``rss_index``: the records placed where
    they lie in the mapping, no row laid out."""
    queues, l4, key, reta_size = rss
    n, pos, stop = twins.rss_index(_compiled_rss(l4, key, reta_size, queues), data, pos, len(data),
                                                MAX_CAPLEN, snap, offsets, caplen, queue, ts)
    return (None if stop else n), pos


def gather_rows(data: np.ndarray, offsets: np.ndarray, caplen: np.ndarray, rows: np.ndarray) -> None:
    """``rows``: the records whose frames are at ``offsets`` of the mapped classic pcap
    ``data`` (each record header just before its frame), as a reader lays them out."""
    kernels.gather_windows(data, offsets - 16, 16 + np.minimum(caplen, RECORD_ROW - 16), rows)


@dataclass(frozen=True)
class RssShare:
    """RX queue ``queue`` of a port whose one capture, ``path``, the NIC spreads over
    ``queues`` RX queues by RSS (``l4``: the hash includes the L4 ports); ``index``:
    the capture's one read, where it could be indexed."""
    path: Path
    queue: int
    queues: int
    l4: bool
    key: bytes
    reta_size: int
    index: CaptureIndex | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.path} (RSS, queue {self.queue} of {self.queues})"

    def open(self, captures: OpenCaptures | None = None) -> "IndexedQueue | RssQueue":
        if self.index is not None:
            return IndexedQueue(self)
        reader = captures.take(self.path) if captures else open_offline(self.path)
        return RssQueue(reader, self)


def rss_shares(path: Path, queues: int, l4: bool, key: bytes, reta_size: int,
               captures: OpenCaptures) -> list[RssShare]:
    """The RX queues of a port whose capture ``path`` RSS spreads over ``queues``."""
    index = index_capture(captures.take(path), queues, l4, key, reta_size)
    return [RssShare(path, q, queues, l4, key, reta_size, index) for q in range(queues)]


class IndexedQueue:
    """An RSS queue read by index from its capture's one read (:class:`CaptureIndex`):
    each batch's rows gathered from the file mapped into memory, the frames left where
    they are. Reads like a :class:`PcapReader`."""

    def __init__(self, share: RssShare):
        self._share, self._index = share, share.index
        self._mine = np.flatnonzero(self._index.queue == share.queue)    # its records' numbers in the capture
        self._next = 0
        self._file = self._index.data
        self._rows = np.empty((0, RECORD_ROW), np.uint8)     # a batch's rows: reused, valid until the next read
        self.path, self.nanosecond, self.file_format = share.path, self._index.nanosecond, "pcap"

    def read(self, max_records: int) -> RecordBatch:
        """Up to ``max_records`` further records of this queue (fewer only at the end)."""
        mine = self._mine[self._next:self._next + max_records]
        self._next += len(mine)
        offsets, caplen = self._index.offsets[mine], self._index.caplen[mine].astype(np.int64)
        if len(self._rows) < len(mine):               # grown once: fresh pages cost more than the gather
            self._rows = np.empty((len(mine), RECORD_ROW), np.uint8)
        rows = self._rows[:len(mine)]
        gather_rows(self._file, offsets, caplen, rows)
        return RecordBatch(rows, self._file, offsets, self.nanosecond, int(mine[0]) if len(mine) else 0, self.path,
                           known_bytes=16 * len(mine) + int(caplen.sum()), numbers=mine)

    def skip(self, records: int) -> int:
        """Read past up to ``records`` further records of this queue; how many there were."""
        skipped = min(records, len(self._mine) - self._next)
        self._next += skipped
        return skipped

    def cut_short(self) -> str | None:
        """The capture's warning, told once for all its queues."""
        return self._index.cut_short if self._share.queue == 0 else None

    rx_errors = 0            # a mapped capture is a classic pcap: every record reads

    def time_floor(self) -> int:
        """No record this queue has not handed over yet is earlier (ns) than the earliest
        of the capture's from its next one on (``capture/time_floor.py``)."""
        following = int(self._mine[self._next]) if self._next < len(self._mine) else len(self._index.queue)
        return self._index.floor.at(following)

    def close(self) -> None:
        self._file = None


class RssQueue:
    """A reader of one RSS queue's records (:class:`RssShare`): it reads the port's
    capture a piece at a time and keeps the records the hash gives its queue — their
    rows, and their bytes copied out of the reader's buffer into its own, so that they
    outlive the reader's next read — then hands them over in capture order, each with
    its record number in the capture (``RecordBatch.numbers``). Reads like a
    :class:`PcapReader`: a batch is valid until the next ``read``."""

    def __init__(self, reader: PcapReader, share: RssShare):
        self._reader, self._share = reader, share
        self._rows = np.empty((0, RECORD_ROW), np.uint8)     # kept records, the first _n in use
        self._block = np.empty(0, np.uint8)                  # their bytes (_used of them)
        self._begin = np.empty(0, np.int64)                  # where each record's bytes begin there
        self._offsets = np.empty(0, np.int64)                # where each frame begins there
        self._numbers = np.empty(0, np.int64)
        self._high: np.ndarray | None = None                 # seconds >> 32, once a record needs it
        self._n = self._used = self._handed = 0
        self._ended = False
        self.path, self.nanosecond, self.file_format = reader.path, reader.nanosecond, reader.file_format
        self._rows_nanosecond = reader.nanosecond     # the batches' record headers' resolution (pcapng: ns)

    def read(self, max_records: int) -> RecordBatch:
        """Up to ``max_records`` further records of this queue (fewer only at the end)."""
        self._forget_handed()
        while self._n < max_records and not self._ended:
            piece = max(4096, 5 * (max_records - self._n) * self._share.queues // 4)   # about what is missing
            batch = self._reader.read(piece)
            self._ended = len(batch) < piece
            self._rows_nanosecond = batch.nanosecond
            self._keep(batch)
        n = self._handed = min(max_records, self._n)
        return RecordBatch(self._rows[:n], self._block, self._offsets[:n], self._rows_nanosecond,
                           int(self._numbers[0]) if n else self._reader.records_read, self.path,
                           None if self._high is None else self._high[:n], numbers=self._numbers[:n])

    def skip(self, records: int) -> int:
        """Read past up to ``records`` further records of this queue; how many there were."""
        return len(self.read(records))

    def cut_short(self) -> str | None:
        """The capture's warning, told once for all its queues."""
        return self._reader.cut_short() if self._share.queue == 0 else None

    @property
    def rx_errors(self) -> int:
        """The capture's read errors, told once for all its queues."""
        return self._reader.rx_errors if self._share.queue == 0 else 0

    def time_floor(self) -> None:
        """Not known: the queue's records are found as the capture is read."""
        return None

    def close(self) -> None:
        self._reader.close()

    def _forget_handed(self) -> None:
        """Move the records not handed over yet (and their bytes) to the front."""
        h, n = self._handed, self._n
        if h:
            base = int(self._begin[h]) if h < n else self._used
            for column in (self._rows, self._begin, self._offsets, self._numbers, self._high):
                if column is not None:
                    column[:n - h] = column[h:n]
            self._block[:self._used - base] = self._block[base:self._used]
            self._begin[:n - h] -= base
            self._offsets[:n - h] -= base
            self._n, self._used, self._handed = n - h, self._used - base, 0

    def _keep(self, batch: RecordBatch) -> None:
        """Append the records of ``batch`` that RSS gives this queue: rows, and each frame
        with the 16 bytes before it in the reader's buffer (its record header when it was
        read whole from a classic pcap: the writers can then write it from here as it
        is)."""
        share = self._share
        mine = np.flatnonzero(rss_queues(batch.records, share.queues, share.l4, share.key, share.reta_size)
                              == share.queue)
        n, k = self._n, len(mine)
        self._grow(n + k, 0)
        copy_padded(batch.records[mine], self._rows[n:n + k])
        offsets = batch.offsets[mine]
        before = np.minimum(offsets, 16)
        lengths = before + header_field(self._rows[n:n + k], CAPLEN)
        size = int(lengths.sum())
        self._grow(n + k, self._used + size)
        kernels.concat_ranges(batch.block, offsets - before, lengths, self._block[self._used:self._used + size])
        self._begin[n:n + k] = self._used + np.cumsum(lengths) - lengths
        self._offsets[n:n + k] = self._begin[n:n + k] + before
        self._numbers[n:n + k] = batch.numbers[mine] if batch.numbers is not None else batch.first + mine
        if batch.seconds_high is not None and self._high is None:
            self._high = np.zeros(len(self._rows), np.int64)
        if self._high is not None:
            self._high[n:n + k] = 0 if batch.seconds_high is None else batch.seconds_high[mine]
        self._n, self._used = n + k, self._used + size

    def _grow(self, records: int, size: int) -> None:
        """Room for ``records`` records and ``size`` bytes (doubling: amortised copies)."""
        if records > len(self._rows):
            grown = max(records, 2 * len(self._rows))
            for name in ("_rows", "_begin", "_offsets", "_numbers", "_high"):
                column = getattr(self, name)
                if column is not None:
                    wider = np.empty((grown, *column.shape[1:]), column.dtype)
                    wider[:self._n] = column[:self._n]
                    setattr(self, name, wider)
        if size > len(self._block):
            block = np.empty(max(size, 2 * len(self._block)), np.uint8)
            block[:self._used] = self._block[:self._used]
            self._block = block
