"""A port's TX-queue files as one capture (``port<N>.pcap`` of a run with several
lcores), for tools that read one file per port.

Each lcore has a TX queue of its own on every port (``dpdk/lcores_and_queues.md``), and
a queue's records are in the order its lcore sent them — not time order when the lcore
polls several ports. A TX queue is a FIFO: on a real port its packets leave in queue
order, interleaved with the other queues'. So the merge takes, packet by packet, the
queue *head* with the earliest time stamp, equal time stamps the lower queue first;
every queue's records keep their order, and the merge is one pass. The per-queue files
are left as they are (they are what real dpdk-l3fwd writes, and what the golden runs
compare).

The definition over whole arrays: the head merge of k sequences is the stable sort by
(each record's running maximum of its queue's time stamps, queue, place) — a record
that is earlier than one before it in its queue waits for it. Its compiled twin
(``records.c``'s ``merge_queues``) walks the memory-mapped queue files once, gathering
records into a reused buffer written as it fills.
"""
from __future__ import annotations

import mmap
import os
import struct
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from .. import compiled
from ..errors import SimError
from . import kernels
from .atomic import AtomicFile
from .pcapng_writer import EPB, SHB

_GATHER = 4 << 20                    # bytes gathered before each write (any record of ours fits)


def merge_tx_queues(paths: list[Path], target: Path, positions: bool = False) -> list[np.ndarray] | None:
    """Write ``target``: the records of the TX-queue files ``paths`` (queue k at
    ``paths[k]``; files this package wrote — classic little-endian pcaps of one
    time-stamp resolution, or pcapngs of one interface), merged as the module says, after
    the first file's header. Written atomically. With ``positions``, returns per path
    the place in ``target`` of each of its records (what a trace line or an annotation
    of a queue's packet points to)."""
    sizes = [os.path.getsize(path) for path in paths]
    with open(paths[0], "rb") as first:
        pcapng = sizes[0] >= 4 and struct.unpack("<I", first.read(4))[0] == SHB
    if (k := compiled.native()) is not None:
        queue = _merge_compiled(k, paths, sizes, pcapng, target)
    else:
        queue = _merge_definition(paths, sizes, pcapng, target)
    return [np.flatnonzero(queue == f) for f in range(len(paths))] if positions else None


def _merge_definition(paths: list[Path], sizes: list[int], pcapng: bool, target: Path) -> np.ndarray:
    """:func:`merge_tx_queues` over whole arrays (the files read into one buffer); returns
    the queue of each record of ``target``, in order."""
    data = np.empty(sum(sizes), np.uint8)
    bounds = np.cumsum([0, *sizes])
    for path, base, size in zip(paths, bounds.tolist(), sizes):
        with open(path, "rb") as file:
            file.readinto(memoryview(data)[base:base + size])
    scans = [(_pcapng_records if pcapng else _pcap_records)(data, base, size)
             for base, size in zip(bounds.tolist(), sizes)]
    keys = [np.maximum.accumulate(time[:, 0].astype(np.uint64) << np.uint64(32) | time[:, 1])
            for _, time, _, _ in scans]
    queue = np.concatenate([np.full(len(key), f, np.int64) for f, key in enumerate(keys)])
    place = np.concatenate([np.arange(len(key)) for key in keys])
    order = np.lexsort((place, queue, np.concatenate(keys)))
    starts = np.concatenate([where for where, _, _, _ in scans])[order]
    lengths = np.concatenate([length for _, _, length, _ in scans])[order]
    with AtomicFile(target) as out:
        out.file.write(scans[0][3])
        out.file.write(kernels.concat_ranges(data, starts, lengths))
    return queue[order]


def _merge_compiled(k, paths: list[Path], sizes: list[int], pcapng: bool, target: Path) -> np.ndarray:
    """:func:`merge_tx_queues` by ``records.c``'s ``merge_queues``: the queue files
    memory-mapped, records gathered into one reused buffer, written each time it fills."""
    out_buf = np.empty(_GATHER, np.uint8)
    source = np.empty(_GATHER // 16, np.uint8)
    queues = []
    with ExitStack() as stack:
        files = [stack.enter_context(open(path, "rb")) for path in paths]
        maps = [stack.enter_context(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)) if size else b""
                for f, size in zip(files, sizes)]
        positions = np.array([_first_record(m, pcapng) for m in maps], np.int64)
        with AtomicFile(target) as out:
            out.file.write(maps[0][:positions[0]])
            while True:
                n, used, bad = k.merge_queues(maps, positions, pcapng, out_buf, source)
                if bad >= 0:
                    raise SimError(f"{paths[bad]}: offset {positions[bad]}: a damaged record")
                if not n:
                    break
                out.file.write(out_buf[:used])
                queues.append(source[:n].copy())
        # the views of the maps are gone (the C call released them): they close cleanly
    return np.concatenate(queues) if queues else np.zeros(0, np.uint8)


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


def _pcap_records(data: np.ndarray, base: int, size: int):
    """A classic pcap at ``data[base:base + size]``: each record's start and length,
    its time stamp as (seconds, fraction) columns, and the file header."""
    limit = max(0, (size - 24) // 16)
    frames, headers = np.empty(limit, np.int64), np.empty((limit, 16), np.uint8)
    n, _, _ = kernels.scan_records(data, base + 24, base + size, limit, False, size, frames, headers)
    fields = headers[:n].view("<u4")
    return frames[:n] - 16, fields[:, :2], 16 + fields[:, 2].astype(np.int64), data[base:base + 24].tobytes()


def _pcapng_records(data: np.ndarray, base: int, size: int):
    """A pcapng at ``data[base:base + size]``: each Enhanced Packet Block's start and
    length, its time stamp as (high, low) columns, and the blocks before the first one
    (Section Header and Interface Description)."""
    blocks = np.empty(max(0, size // 12), np.int64)
    blocks = blocks[:kernels.scan_blocks(data, base, base + size, blocks)]
    fields = np.lib.stride_tricks.sliding_window_view(data, 20)[blocks].view("<u4")    # type, length, if, high, low
    packets = fields[:, 0] == EPB
    first = int(blocks[packets][0]) if packets.any() else base + size
    return blocks[packets], fields[packets][:, 3:5], fields[packets][:, 1].astype(np.int64), \
        data[base:first].tobytes()
