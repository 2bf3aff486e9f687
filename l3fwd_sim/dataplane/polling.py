"""The lcore's polling order (l3fwd ``*_main_loop``).

One lcore polls its RX queues in ``--config`` order (``queues.py``), taking up to
``rx_burst`` packets from each per poll, round after round until every input is drained;
a drained queue simply stops appearing. So packet ``i`` of the ``k``-th queue is received
in round ``i // rx_burst``, and the processing order is the sort by ``(round, k, i)``
(design-notes §2). Bursts are modelled, not executed:
many rounds are gathered into one super-burst, each packet's position computed, not
sorted for. Each row's wire length becomes its captured length as it is received
(``rx.set_pkt_len``). ``polling.c`` twins :func:`_merge`: one pass laying each record
out in its place, with the batch's columns.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np

from .. import compiled
from ..capture.batch import PacketBatch
from ..capture.pcap import PcapReader
from ..capture.records import CAPLEN, RECORD_ROW, RecordBatch, header_field
from . import rx, twins

SUPER_BURST_BYTES = 6 << 20     # 64K records of 64-byte frames


@dataclass
class Received:
    """One super-burst as the lcore's RX queues handed it over, before it is put in
    processing order: ``sources`` are (place in the polling order, port, records) of the
    queues that had packets; their rounds start at polling round ``first_round``."""
    sources: list[tuple[int, int, RecordBatch]]
    first_round: int
    rx_burst: int
    queues: int

    @property
    def packets(self) -> int:
        return sum(len(records) for _, _, records in self.sources)

    @property
    def record_bytes(self) -> int:
        return sum(records.record_bytes for _, _, records in self.sources)

    @property
    def queue_rx(self) -> np.ndarray:
        """Packets received per RX queue, by place in the polling order."""
        counts = np.zeros(self.queues, np.int64)
        for place, _, records in self.sources:
            counts[place] = len(records)
        return counts

    def merge(self) -> PacketBatch:
        """The packets in processing order (:func:`_merge`)."""
        return _merge(self.sources, self.first_round, self.rx_burst, self.queues)


def receive(readers: list[tuple[int, PcapReader]], rx_burst: int, chunk_packets: int = 65536,
            rounds: tuple[int, int | None] = (0, None)) -> Iterator[Received]:
    """Yield the received packets of polling rounds ``rounds[0]`` up to (not including)
    ``rounds[1]`` (None: to the end) as super-bursts: at most ``chunk_packets`` packets,
    and about ``SUPER_BURST_BYTES`` of records. ``readers`` are the lcore's RX queues in
    polling order, each as (port, reader).

    Each super-burst is only valid until the next one is requested (it refers to the
    readers' buffers)."""
    first_round, last_round = rounds
    queues = len(readers)
    active = [k for k, (_, reader) in enumerate(readers) if skip_records(reader, first_round * rx_burst)]
    packets = chunk_packets
    while active and (last_round is None or first_round < last_round):
        n_rounds = max(1, packets // (rx_burst * len(active)))
        if last_round is not None:
            n_rounds = min(n_rounds, last_round - first_round)
        sources = []
        for k in list(active):
            port, reader = readers[k]
            records = reader.read(n_rounds * rx_burst)
            if len(records) < n_rounds * rx_burst:
                active.remove(k)
            if len(records):
                sources.append((k, port, records))
        if not sources:
            return
        received = Received(sources, first_round, rx_burst, queues)
        # Big frames: fewer packets per super-burst, so that its bytes stay in cache
        # between the stages that touch them (IMIX measured 1.1 -> 1.6 Mpps).
        packets = min(chunk_packets, max(1, SUPER_BURST_BYTES * received.packets // received.record_bytes))
        yield received
        first_round += n_rounds


def skip_records(reader: PcapReader, records: int) -> bool:
    """Read past ``records`` records (rounds polled by someone else); False if the
    capture ends before."""
    return reader.skip(records) == records


def _merge(sources, first_round: int, rx_burst: int, queues: int) -> PacketBatch:
    """Interleave the queues' records in processing order. Packet ``j`` of the ``i``-th
    source lands at (packets of all earlier rounds) + (packets of sources before ``i``
    in its round) + ``j % rx_burst`` — computed, then scattered; no sort. A packet's
    burst id is (its round) × ``queues`` + (its queue's place in the polling order)."""
    counts = np.array([len(rec) for _, _, rec in sources])
    if compiled.enabled():
        return _merge_compiled(sources, first_round, rx_burst, queues, int(counts.sum()))
    rounds = -(-counts.max() // rx_burst)
    total = int(counts.sum())
    first = sources[0][2]
    if len(sources) == 1:
        j = np.arange(total, dtype=np.int64)
        k, port = sources[0][:2]
        return _batch(first.rows, np.full(total, port, np.int64), (first_round + j // rx_burst) * queues + k,
                      [first], np.zeros(total, np.int64), j)
    if (counts == rounds * rx_burst).all():
        return _interleave_full_rounds(sources, first_round, rx_burst, rounds, queues)
    per_round = np.clip(counts[None, :] - rx_burst * np.arange(rounds)[:, None], 0, rx_burst)
    round_start = (np.cumsum(per_round.ravel()) - per_round.ravel()).reshape(per_round.shape)
    rows = np.empty((total, RECORD_ROW), np.uint8)
    in_port, burst, source_id, source_row = (np.empty(total, np.int64) for _ in range(4))
    for i, (k, port, rec) in enumerate(sources):
        j = np.arange(len(rec), dtype=np.int64)
        rx_round = j // rx_burst
        pos = round_start[rx_round, i] + j % rx_burst
        rows[pos] = rec.rows
        in_port[pos] = port
        burst[pos] = (first_round + rx_round) * queues + k
        source_id[pos] = i
        source_row[pos] = j
    return _batch(rows, in_port, burst, [rec for _, _, rec in sources], source_id, source_row)


def _interleave_full_rounds(sources, first_round: int, rx_burst: int, rounds: int, queues: int) -> PacketBatch:
    """Every source has ``rounds`` full bursts: processing order is a transpose of
    (source, round, packet) to (round, source, packet), copied one source at a time."""
    ports = np.array([port for _, port, _ in sources], np.int64)
    places = np.array([k for k, _, _ in sources], np.int64)
    shape = (rounds, len(sources), rx_burst)
    rx_round = np.arange(rounds, dtype=np.int64)[:, None, None]
    rows = np.empty((rounds, len(sources), rx_burst, RECORD_ROW), np.uint8)
    for i, (_, _, rec) in enumerate(sources):
        rec.copy_rows(rows[:, i])            # short frames are padded right here: no copy of their own
    return _batch(rows.reshape(-1, RECORD_ROW),
                  np.broadcast_to(ports[None, :, None], shape).ravel(),
                  ((first_round + rx_round) * queues + places[None, :, None] + np.zeros(shape, np.int64)).ravel(),
                  [rec for _, _, rec in sources],
                  np.broadcast_to(np.arange(len(sources))[None, :, None], shape).ravel(),
                  (rx_round * rx_burst + np.arange(rx_burst)[None, None, :] + np.zeros(shape, np.int64)).ravel())


def _merge_compiled(sources, first_round: int, rx_burst: int, queues: int, total: int) -> PacketBatch:
    """:func:`_merge` by ``merge_rounds``."""
    rows = np.empty((total, RECORD_ROW), np.uint8)
    caplen, in_port, burst, source_id, source_row = np.empty((5, total), np.int64)
    twins.merge_rounds([(rec.records, port, place) for place, port, rec in sources], rx_burst, queues, first_round,
                   (rows, caplen, in_port, burst, source_id, source_row))
    return PacketBatch(rows, caplen, in_port, burst, [rec for _, _, rec in sources], source_id, source_row)


def _batch(rows, in_port, burst, sources, source_id, source_row) -> PacketBatch:
    rx.set_pkt_len(rows)
    return PacketBatch(rows, header_field(rows, CAPLEN), in_port, burst, sources, source_id, source_row)
