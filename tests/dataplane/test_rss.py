"""RSS: the Toeplitz hash against Microsoft's published verification vectors (the ones
DPDK's test_thash.c uses) and against a bit-by-bit implementation written from the
definition; the fields each kind of packet is hashed on; the RETA placement."""
from __future__ import annotations

import ipaddress

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Dot1Q, Ether

from l3fwd_sim.dataplane.rss import DEFAULT_KEY, rss_queues, toeplitz, toeplitz_tables

# (destination, source, destination port, source port, hash of the addresses, hash with the ports)
VECTORS = [
    ("161.142.100.80", "66.9.149.187", 1766, 2794, 0x323e8fc2, 0x51ccc178),
    ("65.69.140.83", "199.92.111.2", 4739, 14230, 0xd718262a, 0xc626b0ea),
    ("12.22.207.184", "24.19.198.95", 38024, 12898, 0xd2d0a5de, 0x5c2b394a),
    ("209.142.163.6", "38.27.205.30", 2217, 48228, 0x82989176, 0xafc7327f),
    ("202.188.127.2", "153.39.163.191", 1303, 44251, 0x5d1809c5, 0x10e828a2),
    ("3ffe:2501:200:3::1", "3ffe:2501:200:1fff::7", 1766, 2794, 0x2cc18cd5, 0x40207d3d),
    ("ff02::1", "3ffe:501:8::260:97ff:fe40:efab", 4739, 14230, 0x0f0c461c, 0xdde51bbf),
    ("fe80::200:f8ff:fe21:67cf", "3ffe:1900:4545:3:200:f8ff:fe21:67cf", 38024, 44251, 0x4b61e985, 0x02d1feef),
]


def bitwise_toeplitz(data: bytes, key: bytes) -> int:
    """The definition: for every set bit i of the input (most significant first), XOR the
    32 key bits starting at bit i."""
    key_bits = "".join(f"{b:08b}" for b in key)
    result = 0
    for i, bit in enumerate("".join(f"{b:08b}" for b in data)):
        if bit == "1":
            result ^= int(key_bits[i:i + 32], 2)
    return result


def hash_of(data: bytes, key: bytes = DEFAULT_KEY) -> int:
    stream = np.frombuffer(data, np.uint8)[None]
    return int(toeplitz(stream, toeplitz_tables(key, len(data)))[0])


@pytest.mark.parametrize("dst,src,dport,sport,l3,l4", VECTORS)
def test_published_vectors(dst, src, dport, sport, l3, l4):
    addresses = ipaddress.ip_address(src).packed + ipaddress.ip_address(dst).packed
    assert hash_of(addresses) == l3
    assert hash_of(addresses + sport.to_bytes(2, "big") + dport.to_bytes(2, "big")) == l4


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=1, max_size=36), st.binary(min_size=40, max_size=52))
def test_equals_the_bitwise_definition(data, key):
    assert hash_of(data, key) == bitwise_toeplitz(data, key)


def frames_and_streams():
    """(frame, the bytes a NIC hashes under RTE_ETH_RSS_IP, those with ACL mode's L4 too)."""
    v4 = IP(src="10.1.2.3", dst="198.18.1.7")
    v6 = IPv6(src="2001:db8::1", dst="2001:200:0:1::9")
    a4 = ipaddress.ip_address("10.1.2.3").packed + ipaddress.ip_address("198.18.1.7").packed
    a6 = ipaddress.ip_address("2001:db8::1").packed + ipaddress.ip_address("2001:200:0:1::9").packed
    ports = (1234).to_bytes(2, "big") + (80).to_bytes(2, "big")
    return [
        (Ether() / v4 / UDP(sport=1234, dport=80), a4, a4 + ports),
        (Ether() / IP(src="10.1.2.3", dst="198.18.1.7", options=b"\x01" * 4) / TCP(sport=1234, dport=80), a4,
         a4 + ports),                                                          # ports after the real IHL
        (Ether() / IP(src="10.1.2.3", dst="198.18.1.7", flags="MF") / UDP(sport=1234, dport=80), a4, a4),
        (Ether() / IP(src="10.1.2.3", dst="198.18.1.7", frag=100) / UDP(sport=1234, dport=80), a4, a4),
        (Ether() / v6 / TCP(sport=1234, dport=80), a6, a6 + ports),
        (Ether() / v6 / IPv6ExtHdrHopByHop() / UDP(sport=1234, dport=80), a6, a6),
        (Ether() / ARP(), None, None),
        (Ether() / Dot1Q(vlan=5) / v4 / UDP(sport=1234, dport=80), None, None),
    ]


@pytest.mark.parametrize("queues,reta_size", [(2, 128), (3, 128), (4, 64), (7, 512)])
def test_fields_and_reta_placement(queues, reta_size):
    cases = frames_and_streams()
    heads = np.zeros((len(cases), 64), np.uint8)
    caplen = np.zeros(len(cases), np.int64)
    for i, (frame, _, _) in enumerate(cases):
        raw = bytes(frame).ljust(60, b"\0")
        heads[i, :min(64, len(raw))] = np.frombuffer(raw[:64], np.uint8)
        caplen[i] = len(raw)
    for l4 in (False, True):
        got = rss_queues(heads, caplen, queues, l4, DEFAULT_KEY, reta_size).tolist()
        want = [0 if stream is None else (bitwise_toeplitz(stream, DEFAULT_KEY) % reta_size) % queues
                for _, l3, l3l4 in cases for stream in [l3l4 if l4 else l3]]
        assert got == want
