"""testpmd's L2 forwarding engines (app/test-pmd iofwd.c, macfwd.c, macswap.c +
macswap_sse.h) as numpy stages over a whole super-burst, and the drop reasons shared by
all of testpmd's engines.

An engine takes the batch (edited in place, as testpmd edits the mbufs), the TX port of
every packet and the port configuration, and returns a reason code per packet: 0 =
transmitted, otherwise ``DROP_REASONS[code - 1]``. testpmd itself never drops in io, mac,
macswap or 5tswap: l3fwd-sim drops a frame as ``truncated`` where the engine would read
or write past its end (stale mbuf bytes in C), i.e. when the frame ends before a byte its
result depends on or the engine changes.
"""
from __future__ import annotations

import numpy as np

from ..capture.batch import PacketBatch
from ..dataplane.ports import PortConfig

DROP_REASONS = (
    "truncated",              # the frame ends before a byte the engine's result depends on
    "not_arp_or_ipv4",        # icmpecho: EtherType (after at most one VLAN tag) neither ARP nor IPv4
    "arp_unsupported",        # icmpecho: ARP that is not Ethernet/IPv4 (hrd 1, pro 0x0800, hln 6, pln 4)
    "arp_not_request",        # icmpecho: Ethernet/IPv4 ARP with an opcode other than request (1)
    "not_icmp_echo_request",  # icmpecho: IPv4 that is not ICMP type 8 code 0
    "rxonly",                 # rxonly: received and freed, as that engine does with every packet
    "rx_flushed",             # drained by flush_fwd_rx_queues before forwarding started (no --no-flush-rx)
)
CODE = {name: i + 1 for i, name in enumerate(DROP_REASONS)}

ETHER_ADDRS = 12          # dst MAC + src MAC: what mac and macswap change
ETHER_HDR = 14
# macswap_sse.h's shuffle, _mm_set_epi8(15, 14, 13, 12, 5, 4, 3, 2, 1, 0, 11, 10, 9, 8, 7, 6),
# read from byte 0 up: new[i] = old[MACSWAP_SHUFFLE[i]] over the 16-byte load. It moves
# bytes 0..5 and 6..11 only; swap_macs does exactly that (3x faster than a numpy gather).
MACSWAP_SHUFFLE = np.array([6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15])


def be16(frames: np.ndarray, rows, pos) -> np.ndarray:
    """Big-endian 16-bit field at byte ``pos`` (scalar or per row) of ``frames[rows]``."""
    return frames[rows, pos].astype(np.int64) << 8 | frames[rows, pos + 1]


def swap_halves(frames: np.ndarray, rows, start: int, half: int) -> None:
    """Exchange bytes ``start .. start+half`` and the ``half`` bytes after them in
    ``frames[rows]`` (two MACs, two addresses, two ports)."""
    both = frames[rows, start:start + 2 * half]
    frames[rows, start:start + 2 * half] = np.concatenate((both[:, half:], both[:, :half]), axis=1)


def swap_macs(frames: np.ndarray, rows=slice(None)) -> None:
    """Destination MAC <-> source MAC of ``frames[rows]``."""
    swap_halves(frames, rows, 0, ETHER_ADDRS // 2)


def truncated_below(caplen: np.ndarray, length: int) -> np.ndarray:
    return np.where(caplen < length, CODE["truncated"], 0).astype(np.uint8)


def rx_only(batch: PacketBatch, dest: np.ndarray, ports: PortConfig) -> np.ndarray:
    """rxonly.c ``pkt_burst_receive``: every packet is freed (``rte_pktmbuf_free_bulk``)."""
    return np.full(len(batch), CODE["rxonly"], np.uint8)


def io_forward(batch: PacketBatch, dest: np.ndarray, ports: PortConfig) -> np.ndarray:
    """iofwd.c ``pkt_burst_io_forward``: the packets go out as they came in; never
    touches packet data, so nothing is ever too short."""
    return np.zeros(len(batch), np.uint8)


def mac_forward(batch: PacketBatch, dest: np.ndarray, ports: PortConfig) -> np.ndarray:
    """macfwd.c ``pkt_burst_mac_forward``: dst MAC := ``peer_eth_addrs[fs->peer_addr]``
    (``peer_addr`` is the stream's TX port, simple_fwd_config_setup), src MAC := the TX
    port's MAC; no other byte changes (the VLAN/offload fields it sets are mbuf metadata,
    which net_pcap ignores). ``ports.eth_header[D]`` holds exactly peer(D) || MAC(D)."""
    ports.rewrite_bulk(batch.heads, slice(None), dest)
    return truncated_below(batch.caplen, ETHER_ADDRS)


def mac_swap(batch: PacketBatch, dest: np.ndarray, ports: PortConfig) -> np.ndarray:
    """macswap_sse.h ``do_macswap`` (the seed patch, 2018): a 16-byte load of the frame
    start, ``_mm_shuffle_epi8`` with the mask above, a 16-byte store — MACs swapped,
    bytes 12..15 stored back unchanged. The store of bytes past a 12..15-byte frame's end
    never reaches the wire, so such a frame is swapped like any other; only a frame
    under 12 bytes (whose MACs are not all there) is ``truncated``."""
    swap_macs(batch.heads)
    return truncated_below(batch.caplen, ETHER_ADDRS)
