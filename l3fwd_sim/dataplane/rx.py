"""The RX queue as dpdk-l3fwd and dpdk-testpmd get it over net_pcap: mbufs of
``RTE_MBUF_DEFAULT_DATAROOM`` (2048) data bytes and no RX scatter (lcores_and_queues.md,
"Jumbo frames").

* ``eth_rx_queue_setup`` refuses a port whose largest frame (MTU + 14, net_pcap's
  overhead) one mbuf cannot hold: :func:`rx_queue_setup`.
* ``eth_pcap_rx`` drops a record longer than the data room without handing it over;
  it still took one of the ``rx_burst`` slots of that call: :func:`oversize`.
* ``eth_pcap_rx`` sets the mbuf's ``pkt_len`` to the record's captured length, and the
  TX side writes ``len = pkt_len``: a record cut by the capture's snaplen (96 of 1514
  bytes) leaves with wire length = captured length (96/96): :func:`set_pkt_len`.
* Before v26.07 (``releases.py``: ``jumbo_dropped_on_rx``) net_pcap chains a longer frame
  into several mbufs whatever the offloads say, so it is received and forwarded; its TX
  side then writes at most 16128 bytes of a chained frame, the record keeping the full
  length (:func:`cut_chained`). Such a release refuses ``--max-pkt-len`` above 1518 at
  configure instead (:func:`configure_max_pkt_len`).
"""
from __future__ import annotations

import numpy as np

from ..errors import SimError
from ..releases import CHAINED_TX_CAPLEN, MULTI_SEG_MAX_PKT_LEN, Release

MBUF_DATA_ROOM = 2048
NO_LIMIT = 1 << 32              # a data room no record exceeds: every frame is received


def rx_queue_setup(max_rx_pkt_len: int) -> None:
    """net_pcap's check of the frame size a port is configured for."""
    if max_rx_pkt_len > MBUF_DATA_ROOM:
        raise SimError(f"--max-pkt-len {max_rx_pkt_len}: RX queue setup fails (l3fwd's mbufs hold {MBUF_DATA_ROOM} "
                       f"bytes, no RX scatter): Rx scatter is disabled and RxQ mbuf pool object size is too small "
                       f"(buf_size={MBUF_DATA_ROOM}, max_rx_pkt_len={max_rx_pkt_len})")


def configure_max_pkt_len(max_pkt_len: int | None, release: Release, port: int) -> None:
    """``rte_eth_dev_configure`` before v26.07: ``--max-pkt-len`` above 1518 makes l3fwd
    ask for the Tx offload MULTI_SEGS, which net_pcap did not offer."""
    if max_pkt_len is not None and max_pkt_len > MULTI_SEG_MAX_PKT_LEN and not release.has("max_pkt_len_2048"):
        raise SimError(f"--max-pkt-len {max_pkt_len}: Cannot configure device: err=-22, port={port} (above "
                       f"{MULTI_SEG_MAX_PKT_LEN} l3fwd asks for the Tx offload MULTI_SEGS, which net_pcap of "
                       f"{release.label} lacks)")


def data_room(release: Release) -> int:
    """The longest frame ``eth_pcap_rx`` hands over: one mbuf's, or (chained) any."""
    return MBUF_DATA_ROOM if release.has("jumbo_dropped_on_rx") else NO_LIMIT


def oversize(caplen: np.ndarray, room: int = MBUF_DATA_ROOM) -> np.ndarray:
    """The records ``eth_pcap_rx`` drops: longer than the data room."""
    return caplen > room


def cut_chained(rows: np.ndarray) -> np.ndarray:
    """What net_pcap before v26.07 writes of a chained frame: at most 16128 captured
    bytes, the wire length kept. Applied as the frame is received (no l3fwd path reads
    that far into a frame), to the record headers of ``rows`` in place; returns the rows
    it cut."""
    lengths = rows[:, 8:16].view("<u4")
    cut = np.flatnonzero(lengths[:, 0] > CHAINED_TX_CAPLEN)
    lengths[cut, 0] = CHAINED_TX_CAPLEN
    return cut


def set_pkt_len(rows: np.ndarray) -> None:
    """What ``eth_pcap_rx`` makes of each record's lengths: ``pkt_len = caplen``. The
    record headers of ``rows`` (received packets, whose TX records are laid out from
    them) get their wire length replaced by the captured length, in place; ``polling.c``
    does the same as it lays each row out."""
    lengths = rows[:, 8:16].view("<u4")          # (caplen, wire length) per row
    lengths[:, 1] = lengths[:, 0]
