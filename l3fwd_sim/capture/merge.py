"""A port's TX queues as one capture (``port<N>.pcap`` of a run with several lcores),
for tools that read one file per port.

Each lcore has a TX queue of its own on every port (``dpdk/lcores_and_queues.md``), and
a queue's records are in the order its lcore sent them — not time order when the lcore
polls several ports. A TX queue is a FIFO: on a real port its packets leave in queue
order, interleaved with the other queues'. So the merge takes, packet by packet, the
queue *head* with the earliest time stamp, equal time stamps the lower queue first;
every queue's records keep their order, and the merge is one pass.

The merge runs as the lcores send (:class:`TxQueueMerge`): each queue's records wait in
memory (:class:`QueueRecords`) and every step takes heads while it can — until every
queue is empty, or one whose lcore may still send is (what it sends next may come
first). So ``port<N>.pcap`` is written once, straight from the lcores' outputs, and
only what waits for a slower queue is held. :func:`merge_tx_queues` merges queue files
that are complete (``--per-queue``, ``--cluster``) with the same steps.

The definition over whole arrays: the head merge of k sequences is the stable sort by
(each record's running maximum of its queue's time stamps, queue, place) — a record
that is earlier than one before it in its queue waits for it. Its compiled twin
(``records.c``'s ``merge_queues``) walks the queues' heads once, gathering records into
a reused buffer.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from .. import compiled
from ..errors import SimError
from . import kernels
from .atomic import AtomicFile
from .pcapng_writer import EPB, SHB

_GATHER = 4 << 20                    # bytes gathered before each write of a complete file's merge


class QueueRecords:
    """One TX queue's records not merged yet, in memory: what the queue's writer
    appends (the bytes its file would hold after the header), taken from the front by
    the merge. The buffer is reused: what is left is moved to its front before it grows,
    so its pages are touched once (a fresh page costs more than the bytes put in it)."""

    def __init__(self) -> None:
        self.data = np.empty(0, np.uint8)
        self.start = self.end = 0            # data[start:end]: the records not merged yet

    def write(self, data) -> None:
        view = memoryview(data)
        if view.ndim != 1 or view.format != "B":
            view = view.cast("B")
        n = view.nbytes
        if self.end + n > len(self.data):
            self._make_room(n)
        self.data[self.end:self.end + n] = np.frombuffer(view, np.uint8)
        self.end += n

    def writelines(self, parts) -> None:
        for part in parts:
            self.write(part)

    def _make_room(self, n: int) -> None:
        left = self.end - self.start
        if left + n > len(self.data):
            grown = np.empty(max(left + n, 2 * len(self.data)), np.uint8)
            grown[:left] = self.data[self.start:self.end]
            self.data = grown
        else:
            self.data[:left] = self.data[self.start:self.end]
        self.start, self.end = 0, left

    @property
    def waiting(self) -> int:
        """Bytes not merged yet."""
        return self.end - self.start

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def discard(self) -> None:
        pass


class TxQueueMerge:
    """Port N's TX queues merged as their lcores send: each step writes the records
    whose place in the merge is certain, with ``write(data, records)``. With
    ``placed``, keeps each record's queue (:meth:`places`)."""

    def __init__(self, queues: int, pcapng: bool, placed: bool = False):
        if queues > MAX_QUEUES:
            raise SimError(f"{queues} lcores: the merge of a port's TX queues takes at most {MAX_QUEUES}")
        self.queues = [QueueRecords() for _ in range(queues)]
        self.open = np.ones(queues, np.uint8)        # the queue's lcore may still send
        self._pcapng = pcapng
        self._carry = np.zeros(queues, np.uint64)    # the definition's running maximum, across steps
        self._sources: list[np.ndarray] | None = [] if placed else None
        self._out = np.empty(0, np.uint8)

    def close(self, queue: int) -> None:
        """Queue ``queue``'s lcore sends no more."""
        self.open[queue] = 0

    def step(self) -> tuple[np.ndarray, int]:
        """Take every record whose place is certain: their bytes (valid until the next
        step) and how many."""
        total = sum(q.waiting for q in self.queues)
        if len(self._out) < total:
            self._out = np.empty(max(total, 2 * len(self._out)), np.uint8)
        datas = [q.data[:q.end] for q in self.queues]
        positions = np.array([q.start for q in self.queues], np.int64)
        n, used, source = merge_queues(datas, positions, self.open, self._pcapng, self._carry, self._out)
        for q, position in zip(self.queues, positions.tolist()):
            q.start = position
        if self._sources is not None and n:
            self._sources.append(source)
        return self._out[:used], n

    def places(self) -> list[np.ndarray]:
        """Per queue, the place in the merge of each of its records so far."""
        merged = np.concatenate(self._sources) if self._sources else np.zeros(0, np.uint8)
        return [np.flatnonzero(merged == f) for f in range(len(self.queues))]


MAX_QUEUES = 124                     # records.c's merge_queues: the queues' buffers and its own four arguments


def merge_queues(datas: list, positions: np.ndarray, open_: np.ndarray, pcapng: bool, carry: np.ndarray,
                 out: np.ndarray, names: list | None = None) -> tuple[int, int, np.ndarray]:
    """One step of the head merge over the queues' records ``datas[f][positions[f]:]``
    (``open_[f]``: queue f may still grow; ``carry[f]``: the latest time stamp taken
    from it so far), into ``out`` (as many as fit): how many records, their bytes, each
    one's queue. ``positions`` and ``carry`` are moved on. A damaged record is an error
    naming its queue (``names[f]``, or its number)."""
    if (k := compiled.native()) is not None:
        source = np.empty(max(1, len(out) // 16), np.uint8)
        n, used, bad = k.merge_queues(datas, positions, open_, pcapng, out, source)
        if bad >= 0:
            raise SimError(f"{names[bad] if names else f'TX queue {bad}'}: offset {positions[bad]}: a damaged record")
        return n, used, source[:n].copy()
    return _merge_definition(datas, positions, open_, pcapng, carry, out)


def _merge_definition(datas: list, positions: np.ndarray, open_: np.ndarray, pcapng: bool, carry: np.ndarray,
                      out: np.ndarray) -> tuple[int, int, np.ndarray]:
    """:func:`merge_queues` over whole arrays: the stable sort by running maximum, cut
    where the first open queue runs out."""
    scans = [(_pcapng_blocks if pcapng else _pcap_records)(np.asarray(d), p, len(d))
             for d, p in zip(datas, positions.tolist())]
    keys = [np.maximum.accumulate(np.maximum(time, c)) if len(time) else time
            for (_, time, _), c in zip(scans, carry.tolist())]
    queue = np.concatenate([np.full(len(key), f, np.int64) for f, key in enumerate(keys)])
    place = np.concatenate([np.arange(len(key)) for key in keys])
    order = np.lexsort((place, queue, np.concatenate(keys)))
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    cut, last = len(order), np.cumsum([len(key) for key in keys]) - 1
    for f in np.flatnonzero(open_).tolist():      # an open queue's last record: what it sends next may follow
        cut = min(cut, int(rank[last[f]]) + 1 if len(keys[f]) else 0)
    taken = order[:cut]
    source = queue[taken]
    bases = np.cumsum([0, *(len(d) for d in datas)])
    starts = np.concatenate([start + base for (start, _, _), base in zip(scans, bases.tolist())])[taken]
    lengths = np.concatenate([length for _, _, length in scans])[taken]
    used = int(lengths.sum())
    if used:
        kernels.concat_ranges(np.concatenate([np.asarray(d) for d in datas]), starts, lengths, out[:used])
    for f in range(len(datas)):
        mine = lengths[source == f]
        positions[f] += int(mine.sum())
        if len(mine):
            carry[f] = keys[f][len(mine) - 1]
    return len(taken), used, source.astype(np.uint8)


def merge_tx_queues(paths: list[Path], target: Path, positions: bool = False) -> list[np.ndarray] | None:
    """Write ``target``: the records of the complete TX-queue files ``paths`` (queue k at
    ``paths[k]``; files this package wrote — classic little-endian pcaps of one
    time-stamp resolution, or pcapngs of one interface), merged as the module says, after
    the first file's header. Written atomically. With ``positions``, returns per path
    the place in ``target`` of each of its records (what a trace line or an annotation
    of a queue's packet points to)."""
    sizes = [os.path.getsize(path) for path in paths]
    with open(paths[0], "rb") as first:
        pcapng = sizes[0] >= 4 and struct.unpack("<I", first.read(4))[0] == SHB
    out = np.empty(_GATHER if compiled.native() is not None else sum(sizes), np.uint8)
    closed, carry, sources = np.zeros(len(paths), np.uint8), np.zeros(len(paths), np.uint64), []
    datas = [np.memmap(path, np.uint8, mode="r") if size else np.zeros(0, np.uint8) for path, size in zip(paths, sizes)]
    at = np.array([_first_record(data, pcapng) for data in datas], np.int64)
    with AtomicFile(target) as written:
        written.file.write(datas[0][:at[0]])
        while True:
            n, used, source = merge_queues(datas, at, closed, pcapng, carry, out, paths)
            if not n:
                break
            written.file.write(out[:used])
            sources.append(source)
    if not positions:
        return None
    merged = np.concatenate(sources) if sources else np.zeros(0, np.uint8)
    return [np.flatnonzero(merged == f) for f in range(len(paths))]


def _first_record(data, pcapng: bool) -> int:
    """Where the records start: after the pcap file header, or the pcapng blocks before
    the first Enhanced Packet Block (Section Header, Interface Description)."""
    if not pcapng:
        return min(24, len(data))
    pos = 0
    while len(data) - pos >= 12:
        btype, length = struct.unpack_from("<II", data, pos)
        if btype == EPB or length < 12:
            break
        pos += length
    return min(pos, len(data))


def _pcap_records(data: np.ndarray, pos: int, end: int):
    """The classic pcap records in ``data[pos:end]``: each one's start, its time stamp
    as one number ((seconds, fraction) words) and its length."""
    limit = max(0, (end - pos) // 16)
    if not limit:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64), np.zeros(0, np.int64)
    frames, headers = np.empty(limit, np.int64), np.empty((limit, 16), np.uint8)
    n, _, _ = kernels.scan_records(data, pos, end, limit, False, end - pos, frames, headers)
    fields = headers[:n].view("<u4")
    return frames[:n] - 16, _time(fields[:, 0], fields[:, 1]), 16 + fields[:, 2].astype(np.int64)


def _pcapng_blocks(data: np.ndarray, pos: int, end: int):
    """The Enhanced Packet Blocks in ``data[pos:end]``: each one's start, its time stamp
    as one number ((high, low) words) and its length."""
    blocks = np.empty(max(0, (end - pos) // 12), np.int64)
    blocks = blocks[:kernels.scan_blocks(data, pos, end, blocks)]
    if not len(blocks):
        return blocks, np.zeros(0, np.uint64), np.zeros(0, np.int64)
    fields = np.lib.stride_tricks.sliding_window_view(data, 20)[blocks].view("<u4")    # type, length, if, high, low
    packets = fields[:, 0] == EPB
    return blocks[packets], _time(fields[packets][:, 3], fields[packets][:, 4]), fields[packets][:, 1].astype(np.int64)


def _time(high: np.ndarray, low: np.ndarray) -> np.ndarray:
    return high.astype(np.uint64) << np.uint64(32) | low.astype(np.uint64)
