"""The lcore's polling order (l3fwd ``*_main_loop``).

One lcore polls its RX queues in ``--config`` order — here the enabled input ports in
ascending order — taking up to ``rx_burst`` packets from each per poll, round after
round until every input is drained; a drained port simply stops appearing. So packet
``i`` of port ``p`` is received in round ``i // rx_burst``, and the processing order is
the sort by ``(round, port, i)`` (design-notes §2). Bursts are modelled, not executed:
many rounds are gathered into one super-burst with one stable argsort.
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from .batch import PacketBatch
from .pcap import PcapReader
from .ports import MAX_PORTS


def poll(readers: dict[int, PcapReader], rx_burst: int, chunk_packets: int = 65536) -> Iterator[PacketBatch]:
    """Yield the received packets as super-bursts in processing order.

    Each yielded batch is only valid until the next one is requested (it refers to the
    readers' buffers)."""
    active = sorted(readers)
    first_round = 0
    while active:
        rounds = max(1, chunk_packets // (rx_burst * len(active)))
        sources, keys = [], []
        for port in list(active):
            records = readers[port].read(rounds * rx_burst)
            if len(records) < rounds * rx_burst:
                active.remove(port)
            if not len(records):
                continue
            rx_round = first_round + np.arange(len(records), dtype=np.int64) // rx_burst
            sources.append((port, records))
            keys.append(rx_round * MAX_PORTS + port)
        first_round += rounds
        if not sources:
            return
        yield _merge(sources, keys)


def _merge(sources, keys) -> PacketBatch:
    burst = np.concatenate(keys)
    if len(sources) == 1:
        order = slice(None)
    else:
        order = np.argsort(burst, kind="stable")
    def cat(field):
        return np.concatenate([getattr(rec, field) for _, rec in sources])[order]
    in_port = np.concatenate([np.full(len(rec), port, np.int64) for port, rec in sources])[order]
    source_id = np.concatenate([np.full(len(rec), i, np.int64) for i, (_, rec) in enumerate(sources)])[order]
    source_row = np.concatenate([np.arange(len(rec), dtype=np.int64) for _, rec in sources])[order]
    heads = sources[0][1].heads if len(sources) == 1 else np.concatenate([rec.heads for _, rec in sources])[order]
    return PacketBatch(heads, cat("caplen"), cat("wirelen"), cat("ts_ns"), in_port, burst[order],
                       [rec for _, rec in sources], source_id, source_row)
