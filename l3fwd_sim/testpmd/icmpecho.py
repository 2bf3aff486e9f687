"""testpmd's ``icmpecho`` engine (app/test-pmd/icmpecho.c ``reply_to_icmp_echo_rqsts``)
over a super-burst. Replies leave on the port the request came in on, whatever the port
topology (icmp_echo_config_setup: tx_port = rx_port).

Per packet, as icmpecho.c does it:

* step over at most one VLAN tag (0x8100 only; a QinQ 0x88A8 frame is "not ARP or IPv4");
* ARP (0x0806): unless hardware type 1, protocol 0x0800, hlen 6 and plen 4, free it; if
  the opcode is not request (1), free it; else turn it into the reply in place:
  Ethernet dst := Ethernet src, Ethernet src := the port's MAC, opcode := 2,
  target HW := sender HW, sender HW := the port's MAC, sender IP <-> target IP;
* IPv4 (0x0800): the ICMP header is read 20 bytes past the IPv4 header start whatever
  the IHL (options are not skipped); unless protocol 1, type 8 and code 0, free it; else
  swap the MACs, and either swap the IP addresses (IP checksum kept) or — destination
  224.x.x.x exactly (``is_multicast_ipv4_addr`` tests the first byte == 0xE0) — send
  from the request's source with its two low bits set to 2 if they were 1, else to 1,
  to the request's source, with the 20-byte header checksum recomputed
  (``ipv4_hdr_cksum``: 0 is sent as 0xFFFF); type := 0 and the ICMP checksum adjusted
  incrementally in host (little-endian) order, exactly as the C expression computes it;
* anything else: free it.

Each read only happens when the previous test let the C code get there; a frame that
ends before a byte the decision or the reply uses is dropped as ``truncated``.
"""
from __future__ import annotations

import numpy as np

from ..capture.batch import PacketBatch
from ..dataplane.ports import PortConfig
from .engines import CODE, ETHER_HDR, be16, swap_macs

ETHER_TYPE_VLAN, ETHER_TYPE_ARP, ETHER_TYPE_IPV4 = 0x8100, 0x0806, 0x0800
L3_BYTES = 28            # the ARP header + Ethernet/IPv4 ARP body; covers IPv4 + ICMP header too
ARP_REPLY = np.array([0, 2], np.uint8)


def _fold(total: np.ndarray) -> np.ndarray:
    total = (total & 0xFFFF) + (total >> 16)
    return (total & 0xFFFF) + (total >> 16)


def _le16(l3: np.ndarray, pos: int) -> np.ndarray:
    """A 16-bit field as an x86 ``uint16_t`` load sees it (host order)."""
    return l3[:, pos].astype(np.int64) | l3[:, pos + 1].astype(np.int64) << 8


def _store_le16(l3: np.ndarray, pos: int, value: np.ndarray) -> None:
    l3[:, pos] = value & 0xFF
    l3[:, pos + 1] = value >> 8


def icmp_echo(batch: PacketBatch, dest: np.ndarray, ports: PortConfig) -> np.ndarray:
    heads, caplen = batch.heads, batch.caplen
    n = len(batch)
    ether_type = be16(heads, slice(None), 12)
    vlan = ether_type == ETHER_TYPE_VLAN
    l2_len = np.where(vlan, ETHER_HDR + 4, ETHER_HDR)
    ether_type = np.where(vlan, be16(heads, slice(None), 16), ether_type)
    need = l2_len.copy()
    cols = l2_len[:, None] + np.arange(L3_BYTES)
    l3 = heads[np.arange(n)[:, None], cols]              # (n, 28) copy of the bytes after L2

    arp = ether_type == ETHER_TYPE_ARP
    need[arp] = l2_len[arp] + 8                           # hrd, pro, hln, pln, op
    arp_ok = arp & (be16(l3, slice(None), 0) == 1) & (be16(l3, slice(None), 2) == ETHER_TYPE_IPV4) \
        & (l3[:, 4] == 6) & (l3[:, 5] == 4)
    arp_request = arp_ok & (be16(l3, slice(None), 6) == 1)
    need[arp_request] = l2_len[arp_request] + L3_BYTES

    ipv4 = ether_type == ETHER_TYPE_IPV4
    need[ipv4] = l2_len[ipv4] + 10                        # next_proto_id
    icmp = ipv4 & (l3[:, 9] == 1)
    need[icmp] = l2_len[icmp] + 21                        # icmp_type
    type8 = icmp & (l3[:, 20] == 8)
    need[type8] = l2_len[type8] + 22                      # icmp_code
    echo = type8 & (l3[:, 21] == 0)
    need[echo] = l2_len[echo] + 24                        # icmp_cksum

    reason = np.zeros(n, np.uint8)
    reason[~arp & ~ipv4] = CODE["not_arp_or_ipv4"]
    reason[arp & ~arp_ok] = CODE["arp_unsupported"]
    reason[arp_ok & ~arp_request] = CODE["arp_not_request"]
    reason[ipv4 & ~echo] = CODE["not_icmp_echo_request"]
    short = caplen < need
    reason[short] = CODE["truncated"]

    rows = np.flatnonzero(arp_request & ~short)
    if len(rows):
        _arp_reply(heads, l3, rows, ports.eth_header[dest[rows], 6:12])
    rows = np.flatnonzero(echo & ~short)
    if len(rows):
        _echo_reply(heads, l3, rows)
    replied = np.flatnonzero(reason == 0)
    heads[replied[:, None], cols[replied]] = l3[replied]
    return reason


def _arp_reply(heads: np.ndarray, l3: np.ndarray, rows: np.ndarray, port_mac: np.ndarray) -> None:
    heads[rows, 0:6] = heads[rows, 6:12]
    heads[rows, 6:12] = port_mac
    arp = l3[rows]
    sender_hw, sender_ip, target_ip = arp[:, 8:14].copy(), arp[:, 14:18].copy(), arp[:, 24:28].copy()
    arp[:, 6:8] = ARP_REPLY
    arp[:, 18:24] = sender_hw
    arp[:, 8:14] = port_mac
    arp[:, 14:18] = target_ip
    arp[:, 24:28] = sender_ip
    l3[rows] = arp


def _echo_reply(heads: np.ndarray, l3: np.ndarray, rows: np.ndarray) -> None:
    swap_macs(heads, rows)
    ip = l3[rows]
    src, dst = ip[:, 12:16].copy(), ip[:, 16:20].copy()
    multicast = dst[:, 0] == 0xE0
    ip[:, 12:16] = dst
    ip[:, 16:20] = src
    if multicast.any():
        ip[multicast, 12:16] = _reply_source(src[multicast])
        _store_le16(ip, 10, np.where(multicast, _ipv4_hdr_cksum(ip), _le16(ip, 10)))
    ip[:, 20] = 0                                        # RTE_ICMP_TYPE_ECHO_REPLY
    cksum = (~_le16(ip, 22) & 0xFFFF) + (~0x0008 & 0xFFFF)   # ~htons(ECHO_REQUEST << 8); + htons(0)
    _store_le16(ip, 22, ~_fold(cksum) & 0xFFFF)
    l3[rows] = ip


def _reply_source(src: np.ndarray) -> np.ndarray:
    """A source different from the request's: low two bits := 2 if they were 1, else 1."""
    addr = src.astype(np.uint32) << np.array([24, 16, 8, 0], np.uint32)
    addr = np.bitwise_or.reduce(addr, axis=1)
    addr = (addr & 0xFFFFFFFC) | np.where((addr & 3) == 1, 2, 1).astype(np.uint32)
    return (addr[:, None] >> np.array([24, 16, 8, 0], np.uint32)).astype(np.uint8)


def _ipv4_hdr_cksum(ip: np.ndarray) -> np.ndarray:
    """icmpecho.c ``ipv4_hdr_cksum``: the 20-byte header only, words 0..9 but 5 summed
    as host-order loads, folded twice, complemented; 0 becomes 0xFFFF."""
    total = sum(_le16(ip, 2 * word) for word in (0, 1, 2, 3, 4, 6, 7, 8, 9))
    cksum = ~_fold(total) & 0xFFFF
    return np.where(cksum == 0, 0xFFFF, cksum)
