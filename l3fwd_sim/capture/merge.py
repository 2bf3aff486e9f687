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
from . import kernels, twins
from .atomic import AtomicFile
from .pcapng_writer import EPB, SHB
from .time_floor import NONE_LEFT

_GATHER = 4 << 20                    # bytes gathered before each write of a complete file's merge


class LcoreQueues:
    """An lcore's TX queues, one per port, in one buffer with a part per port — the
    layout ``lcore.c`` lays a super-burst out in, so its records are laid out where they
    wait for the merge, never copied there. Each part holds ``headroom`` free bytes (for
    records sent before, arriving later: ``--jobs``' hand-over), the records not merged
    yet, then room. The buffer is reused: what waits is moved to its part's front before
    the buffer grows, so its pages are touched once (a fresh page costs more than the
    bytes put in it)."""

    def __init__(self, parts: int, headroom: int = 0):
        self.headroom, self.stride = headroom, headroom
        self.data = np.empty(parts * headroom, np.uint8)
        self.queues = [QueueRecords(self, k) for k in range(parts)]

    def make_room(self, room: int) -> None:
        """Every part with ``room`` free bytes after its records."""
        need = self.headroom + max(q.waiting for q in self.queues) + room
        if need > self.stride:
            stride = max(need, 2 * self.stride)
            data = np.empty(len(self.queues) * stride, np.uint8)
            for k, q in enumerate(self.queues):
                left = q.waiting
                data[k * stride + self.headroom:k * stride + self.headroom + left] = q.data[q.start:q.end]
                q.start, q.end = self.headroom, self.headroom + left
            self.data, self.stride = data, stride
            return
        for q in self.queues:
            if q.end + room > self.stride:
                q.data[self.headroom:self.headroom + q.waiting] = q.data[q.start:q.end]
                q.start, q.end = self.headroom, self.headroom + q.waiting

    def layout(self, room: int) -> tuple[np.ndarray, int, np.ndarray]:
        """The buffer with ``room`` free bytes in every part, the parts' stride, and where
        in its part each queue's next record goes."""
        self.make_room(room)
        return self.data, self.stride, np.array([q.end for q in self.queues], np.int64)

    def laid_out(self, ends: np.ndarray) -> None:
        """The records were laid out: each part's records now end at ``ends[k]``."""
        for q, end in zip(self.queues, ends.tolist()):
            q.end = end


class QueueRecords:
    """One TX queue's records not merged yet, in its part of its lcore's buffer
    (:class:`LcoreQueues`): what the queue's writer appends (the bytes its file would
    hold after the header), taken from the front by the merge."""

    def __init__(self, lcore: LcoreQueues, part: int) -> None:
        self._lcore, self._part = lcore, part
        self.start = self.end = lcore.headroom     # data[start:end]: the records not merged yet

    @property
    def data(self) -> np.ndarray:
        """The queue's part of the buffer."""
        stride = self._lcore.stride
        return self._lcore.data[self._part * stride:(self._part + 1) * stride]

    def write(self, data) -> None:
        view = memoryview(data)
        if view.ndim != 1 or view.format != "B":
            view = view.cast("B")
        n = view.nbytes
        if self.end + n > self._lcore.stride:
            self._lcore.make_room(n)
        self.data[self.end:self.end + n] = np.frombuffer(view, np.uint8)
        self.end += n

    def writelines(self, parts) -> None:
        for part in parts:
            self.write(part)

    def prepend(self, data: bytes) -> None:
        """Put records sent before those waiting in front of them."""
        n = len(data)
        if self.start >= n:
            self.start -= n
            self.data[self.start:self.start + n] = np.frombuffer(data, np.uint8)
        elif n:
            mine = self.data[self.start:self.end].copy()
            self.clear()
            self.write(data)
            self.write(mine)

    def clear(self) -> None:
        self.start = self.end = self._lcore.headroom

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
    """Port N's TX queues merged as their lcores send (queue k: ``queues[k]``, what its
    writer appends): each step takes the records whose place in the merge is certain.
    With ``--jobs`` a step is first planned, so that the process of the next chunk can
    take over what will wait before this one's records are copied."""

    def __init__(self, queues: list[QueueRecords], pcapng: bool):
        if len(queues) > MAX_QUEUES:
            raise SimError(f"{len(queues)} lcores: the merge of a port's TX queues takes at most {MAX_QUEUES}")
        self.queues = queues
        self.open = np.ones(len(queues), np.uint8)       # the queue's lcore may still send
        self.floor = np.zeros(len(queues), np.uint64)    # and then no earlier time stamp than this (records' units)
        self._pcapng = pcapng
        self._carry = np.zeros(len(queues), np.uint64)   # the latest time stamp taken from each queue
        self._out = np.empty(0, np.uint8)

    def close(self, queue: int) -> None:
        """Queue ``queue``'s lcore sends no more."""
        self.open[queue] = 0

    def step(self) -> tuple[np.ndarray, int, np.ndarray]:
        """Take every record whose place is certain: their bytes (valid until the next
        step), how many, and the queue of each."""
        total = sum(q.waiting for q in self.queues)
        if len(self._out) < total:
            self._out = np.empty(max(total, 2 * len(self._out)), np.uint8)
        positions = self._positions()
        n, used, source = merge_queues(self._datas(), positions, self._carry, self.floor, self.open, self._pcapng,
                                       self._out)
        for q, position in zip(self.queues, positions.tolist()):
            q.start = position
        return self._out[:used], n, source

    def plan(self) -> tuple[int, tuple]:
        """The next step counted, not taken: its bytes, and what the merge holds after it
        — the records waiting, which queues are open, the latest time stamps — for
        ``take_over`` in the process of the next chunk; then ``step`` and ``clear``."""
        positions, carry = self._positions(), self._carry.copy()
        _, used, _ = merge_queues(self._datas(), positions, carry, self.floor, self.open, self._pcapng, None)
        waiting = [q.data[p:q.end].tobytes() for q, p in zip(self.queues, positions.tolist())]
        return used, (waiting, self.open.copy(), carry)

    def clear(self) -> None:
        """Forget what waits (``plan`` handed it over)."""
        for queue in self.queues:
            queue.clear()

    def take_over(self, state: tuple) -> None:
        """Continue from ``plan``'s ``state``: its records before those waiting here."""
        waiting, open_, carry = state
        for queue, records in zip(self.queues, waiting):
            queue.prepend(records)
        self.open &= open_
        self._carry = carry

    def _positions(self) -> np.ndarray:
        return np.array([q.start for q in self.queues], np.int64)

    def _datas(self) -> list[np.ndarray]:
        return [q.data[:q.end] for q in self.queues]


def time_key(ns: int | None, pcapng: bool, nanosecond: bool) -> int:
    """A time (ns; None: not known) as the merge compares an output's records — a classic
    pcap's (seconds, fraction) words, a pcapng's ticks — rounded down, as the writers
    round a record's."""
    if ns is None:
        return 0
    if ns == NONE_LEFT:
        return NONE_LEFT
    if pcapng:
        return ns if nanosecond else ns // 1000
    seconds, fraction = divmod(ns, 10**9)
    return min(seconds, (1 << 32) - 1) << 32 | (fraction if nanosecond else fraction // 1000)


def places(sources: list[np.ndarray], queues: int) -> list[np.ndarray]:
    """Per queue, the place in a merge of each of its records, from the queue of each
    record the merge's steps took (in order)."""
    merged = np.concatenate(sources) if sources else np.zeros(0, np.uint8)
    return [np.flatnonzero(merged == f) for f in range(queues)]


MAX_QUEUES = 122                     # records.c's merge_queues: the queues' buffers and its own six arguments


def merge_queues(datas: list, positions: np.ndarray, carry: np.ndarray, floor: np.ndarray, open_: np.ndarray,
                 pcapng: bool, out: np.ndarray | None, names: list | None = None) -> tuple[int, int, np.ndarray]:
    """One step of the head merge over the queues' records ``datas[f][positions[f]:]``
    into ``out`` (as many as fit; None: counted only): how many records, their bytes,
    each one's queue.
    ``carry[f]``: the latest time stamp taken from queue f so far (a head's key is the
    later of its own and that); ``open_[f]``: queue f may still grow, with keys from
    ``floor[f]`` on — the step stops before a record that such a queue's next one could
    precede. ``positions`` and ``carry`` are moved on. Time stamps are the records' own
    (``records.c``'s ``head_record``). A damaged record is an error naming its queue
    (``names[f]``, or its number)."""
    if compiled.enabled():
        room = len(out) if out is not None else sum(len(d) - p for d, p in zip(datas, positions.tolist()))
        source = np.empty(max(1, room // 16), np.uint8)
        n, used, bad = twins.merge_queues(datas, positions, carry, floor, open_, pcapng, out, source)
        if bad >= 0:
            raise SimError(f"{names[bad] if names else f'TX queue {bad}'}: offset {positions[bad]}: a damaged record")
        return n, used, source[:n].copy()
    return _merge_definition(datas, positions, carry, floor, open_, pcapng, out)


def _merge_definition(datas: list, positions: np.ndarray, carry: np.ndarray, floor: np.ndarray, open_: np.ndarray,
                      pcapng: bool, out: np.ndarray | None) -> tuple[int, int, np.ndarray]:
    """:func:`merge_queues` over whole arrays: the stable sort by running maximum, cut
    before the first record that an open queue's next one could precede."""
    scans = [(_pcapng_blocks if pcapng else _pcap_records)(np.asarray(d), p, len(d))
             for d, p in zip(datas, positions.tolist())]
    keys = [np.maximum.accumulate(np.maximum(time, c)) if len(time) else time
            for (_, time, _), c in zip(scans, carry.tolist())]
    queue = np.concatenate([np.full(len(key), f, np.int64) for f, key in enumerate(keys)])
    place = np.concatenate([np.arange(len(key)) for key in keys])
    key = np.concatenate(keys)
    order = np.lexsort((place, queue, key))
    # an open queue's next record: key at least its bound, after its own records
    bounds = sorted((max(int(floor[f]), int(carry[f]), int(keys[f][-1]) if len(keys[f]) else 0), f)
                    for f in np.flatnonzero(open_).tolist())
    allowed = np.ones(len(order), bool)
    if bounds:
        first, second = bounds[0], bounds[1] if len(bounds) > 1 else (None, None)
        k, q = key[order], queue[order]
        mine = q == first[1]               # a queue's own next record comes after all of its records
        for (bound, f), rows in ((first, ~mine), (second, mine)):
            if bound is not None:
                allowed[rows] = (k[rows] < np.uint64(bound)) | ((k[rows] == np.uint64(bound)) & (q[rows] < f))
    cut = int(np.argmin(allowed)) if not allowed.all() else len(order)
    taken = order[:cut]
    source = queue[taken]
    bases = np.cumsum([0, *(len(d) for d in datas)])
    starts = np.concatenate([start + base for (start, _, _), base in zip(scans, bases.tolist())])[taken]
    lengths = np.concatenate([length for _, _, length in scans])[taken]
    used = int(lengths.sum())
    if used and out is not None:
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
    out = np.empty(_GATHER if compiled.enabled() else sum(sizes), np.uint8)
    closed, carry, sources = np.zeros(len(paths), np.uint8), np.zeros(len(paths), np.uint64), []
    floor = np.zeros(len(paths), np.uint64)
    datas = [np.memmap(path, np.uint8, mode="r") if size else np.zeros(0, np.uint8) for path, size in zip(paths, sizes)]
    at = np.array([_first_record(data, pcapng) for data in datas], np.int64)
    with AtomicFile(target) as written:
        written.file.write(datas[0][:at[0]])
        while True:
            n, used, source = merge_queues(datas, at, carry, floor, closed, pcapng, out, paths)
            if not n:
                break
            written.file.write(out[:used])
            sources.append(source)
    return places(sources, len(paths)) if positions else None


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
