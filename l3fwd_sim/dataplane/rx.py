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
"""
from __future__ import annotations

import numpy as np

from ..errors import SimError

MBUF_DATA_ROOM = 2048


def rx_queue_setup(max_rx_pkt_len: int) -> None:
    """net_pcap's check of the frame size a port is configured for."""
    if max_rx_pkt_len > MBUF_DATA_ROOM:
        raise SimError(f"--max-pkt-len {max_rx_pkt_len}: RX queue setup fails (l3fwd's mbufs hold {MBUF_DATA_ROOM} "
                       f"bytes, no RX scatter): Rx scatter is disabled and RxQ mbuf pool object size is too small "
                       f"(buf_size={MBUF_DATA_ROOM}, max_rx_pkt_len={max_rx_pkt_len})")


def oversize(caplen: np.ndarray) -> np.ndarray:
    """The records ``eth_pcap_rx`` drops: longer than one mbuf."""
    return caplen > MBUF_DATA_ROOM


def set_pkt_len(rows: np.ndarray) -> None:
    """What ``eth_pcap_rx`` makes of each record's lengths: ``pkt_len = caplen``. The
    record headers of ``rows`` (received packets, whose TX records are laid out from
    them) get their wire length replaced by the captured length, in place; ``polling.c``
    does the same as it lays each row out."""
    lengths = rows[:, 8:16].view("<u4")          # (caplen, wire length) per row
    lengths[:, 1] = lengths[:, 0]
