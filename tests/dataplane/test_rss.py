"""RSS: the Toeplitz hash against Microsoft's published verification vectors (the ones
DPDK's test_thash.c uses) and against a bit-by-bit implementation written from the
definition; the fields each kind of packet is hashed on; the RETA placement."""
from __future__ import annotations

import gzip
import ipaddress

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Dot1Q, Ether

from l3fwd_sim import compiled
from l3fwd_sim.capture.records import RECORD_ROW
from l3fwd_sim.capture.offline import OpenCaptures
from l3fwd_sim.dataplane.rss import DEFAULT_KEY, rss_queues, rss_shares, toeplitz, toeplitz_tables

from frames import write_pcap
from twins import KERNELS, both, needs_twins

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


def records_of(frames: list[bytes], width: int = RECORD_ROW) -> np.ndarray:
    """Rows as a reader hands them over: a record header (caplen at bytes 8..11) and the
    frame's first ``width - 16`` bytes, zero past its end."""
    rows = np.zeros((len(frames), width), np.uint8)
    for i, raw in enumerate(frames):
        rows[i, 8:12] = np.frombuffer(len(raw).to_bytes(4, "little"), np.uint8)
        head = raw[:width - 16]
        rows[i, 16:16 + len(head)] = np.frombuffer(head, np.uint8)
    return rows


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("queues,reta_size", [(2, 128), (3, 128), (4, 64), (7, 512)])
def test_fields_and_reta_placement(queues, reta_size, kernels):
    cases = frames_and_streams()
    records = records_of([bytes(frame).ljust(60, b"\0") for frame, _, _ in cases])
    for l4 in (False, True):
        with compiled.using(kernels):
            got = rss_queues(records, queues, l4, DEFAULT_KEY, reta_size).tolist()
        want = [0 if stream is None else (bitwise_toeplitz(stream, DEFAULT_KEY) % reta_size) % queues
                for _, l3, l3l4 in cases for stream in [l3l4 if l4 else l3]]
        assert got == want


# frames whose first bytes make every case likely: IPv4 with any IHL, fragments, IPv6,
# other EtherTypes, L4 protocols, every length around the fields' ends
_ETHER_TYPES = st.sampled_from([b"\x08\x00", b"\x86\xdd", b"\x81\x00", b"\x08\x06"])
_FRAMES = st.builds(lambda mac, ether, version_ihl, body, proto, length: (
    mac + ether + bytes([version_ihl]) + body[:8] + bytes([proto]) + body[8:])[:length],
    st.binary(min_size=12, max_size=12), _ETHER_TYPES, st.integers(0, 255), st.binary(min_size=60, max_size=90),
    st.sampled_from([6, 17, 132, 1, 0]), st.integers(0, 110))


@needs_twins
@settings(max_examples=80, deadline=None)
@given(st.lists(_FRAMES, min_size=1, max_size=40), st.integers(1, 9), st.sampled_from([64, 128, 256, 512]),
       st.booleans(), st.binary(min_size=40, max_size=52), st.sampled_from([RECORD_ROW, 16 + 60, 16 + 20]))
def test_compiled_twin_places_every_record_alike(frames, queues, reta_size, l4, key, width):
    """rss.c against the numpy definition, on rows of full and narrow widths."""
    (got, _), (want, _) = both(rss_queues, records_of(frames, width), queues, l4, key, reta_size)
    assert got.tolist() == want.tolist()


@pytest.fixture(scope="module")
def capture_frames():
    """The cases above, then flows of many sizes; the last frame's row runs past the end
    of the file."""
    frames = [bytes(frame) for frame, _, _ in frames_and_streams()] * 50
    template = bytes(Ether() / IP(dst="10.0.0.0") / UDP(sport=0, dport=53))
    for i in range(3000):                         # destination and source port vary: many hashes
        frame = bytearray(template + b"x" * (i % 900))
        frame[32:34], frame[34:36] = i.to_bytes(2, "big"), i.to_bytes(2, "big")
        frames.append(bytes(frame))
    return frames + [frames[-1][:30]]


@pytest.mark.parametrize("compressed", [False, True])     # indexed in the mapped file, or each queue reads it
@pytest.mark.parametrize("kernels", KERNELS)
def test_queues_read_their_records_of_the_one_capture(tmp_path, kernels, compressed, capture_frames):
    """Each RSS queue reads, in capture order, exactly the records the hash gives it,
    numbered as in the capture; reads of any size, the queues together read it all."""
    frames = capture_frames
    path = tmp_path / "port0.pcap"
    write_pcap(path, frames)
    if compressed:
        path = tmp_path / "port0.pcap.gz"
        path.write_bytes(gzip.compress((tmp_path / "port0.pcap").read_bytes()))
    want = rss_queues(records_of(frames), 3, False, DEFAULT_KEY, 128)
    with compiled.using(kernels):
        shares = rss_shares(path, 3, False, DEFAULT_KEY, 128, OpenCaptures([path]))
        assert (shares[0].index is None) == compressed
        for queue, share in enumerate(shares):
            reader = share.open()
            numbers, got = [], []
            for size in [1, 7, 500, 31, 4000, 2, 10000]:
                batch = reader.read(size)
                assert len(batch) == size or reader.read(1).records.shape[0] == 0
                numbers += batch.numbers.tolist()
                long = batch.caplen > 64
                got += [bytes(batch.block[o:o + c]) for o, c in zip(batch.offsets.tolist(), batch.caplen.tolist())]
                assert not long.any() or (batch.rows[long, 16:] == batch.block[batch.offsets[long, None]
                                                                               + np.arange(64)]).all()
            reader.close()
            assert numbers == np.flatnonzero(want == queue).tolist()
            assert got == [frames[i] for i in numbers]


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("frames", [[], [bytes(Ether() / IP(dst="10.0.0.1"))[:30]]])
def test_queues_of_captures_shorter_than_a_row(tmp_path, kernels, frames):
    """A header-only capture, and one whose only record ends before a row's 80 bytes."""
    path = tmp_path / "port0.pcap"
    write_pcap(path, frames)
    with compiled.using(kernels):
        shares = rss_shares(path, 2, False, DEFAULT_KEY, 128, OpenCaptures([path]))
        got = []
        for share in shares:
            batch = share.open().read(10)
            got += [bytes(batch.rows[i, 16:16 + c]) for i, c in enumerate(batch.caplen.tolist())]
    assert got == frames


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("damage", ["cut", "snaplen"])
def test_captures_the_mapped_walk_leaves_to_the_reader(tmp_path, kernels, damage, capture_frames):
    """A capture whose last record is cut short is indexed as the reader reads it (its
    warning told once, by queue 0); one whose records exceed its snaplen (the reader cuts
    them) is read by each queue itself. Either way the queues get the reader's records."""
    path = tmp_path / "port0.pcap"
    frames = capture_frames[:500]
    write_pcap(path, frames)
    raw = bytearray(path.read_bytes())
    if damage == "cut":
        path.write_bytes(raw[:-10])
        frames = frames[:-1]
    else:
        raw[16:20] = (100).to_bytes(4, "little")           # snaplen 100: longer frames are cut to it
        path.write_bytes(raw)
        frames = [frame[:100] for frame in frames]
    with compiled.using(kernels):
        shares = rss_shares(path, 2, False, DEFAULT_KEY, 128, OpenCaptures([path]))
        assert (shares[0].index is None) == (damage == "snaplen")
        got, warnings = {}, []
        for share in shares:
            reader = share.open()
            batch = reader.read(1000)
            got.update({number: bytes(batch.rows[i, 16:16 + min(cap, 64)])
                        for i, (number, cap) in enumerate(zip(batch.numbers.tolist(), batch.caplen.tolist()))})
            reader.read(1)
            warnings.append(reader.cut_short())
            reader.close()
    assert [got[i] for i in range(len(frames))] == [frame[:64] for frame in frames]
    assert (warnings[0] is not None, warnings[1]) == (damage == "cut", None)


def _frame(kind: int, length: int, seed: int) -> bytes:
    """An Ethernet header of EtherType IPv4, IPv6 or other, then ``length`` random bytes;
    mostly a plain IPv4 header's first bytes (no options, not a fragment), so that the
    L4 ports are reached too."""
    rng = np.random.default_rng(seed)
    body = bytearray(rng.bytes(length))
    if kind == 0 and length >= 8 and seed % 4:
        body[0], body[6:8] = 0x45, b"\0\0"
    return bytes(12) + (b"\x08\x00", b"\x86\xdd", b"\x08\x06")[kind] + bytes(body)


@needs_twins
@settings(max_examples=120, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 120), st.integers(0, 2**32)), max_size=60),
       st.sampled_from([0, 40, 70, 65535]), st.integers(0, 20), st.booleans(), st.integers(1, 8), st.booleans())
def test_the_compiled_index_walk_places_every_record_as_the_definition(tmp_path_factory, records, snaplen, cut,
                                                                       damaged, queues, l4):
    """``rss.c``'s ``rss_index`` against the walk over rows and ``rss_queues``: random
    frames of every length (bytes past a short frame's end are the next record's, or
    the end of the file), snaplens that cut them, a last record cut short, a damaged
    length."""
    frames = [_frame(*record) for record in records]
    path = tmp_path_factory.mktemp("index") / "port0.pcap"
    write_pcap(path, frames)
    raw = bytearray(path.read_bytes())
    raw[16:20] = snaplen.to_bytes(4, "little")
    if damaged and frames:
        raw[24 + 8:24 + 12] = (1 << 20).to_bytes(4, "little")      # the first record's captured length: damage
    path.write_bytes(raw[:len(raw) - cut] if cut < len(raw) - 24 else raw)
    got = []
    for kernels in KERNELS:
        with compiled.using(kernels):
            index = rss_shares(path, queues, l4, DEFAULT_KEY, 128, OpenCaptures([path]))[0].index
            got.append(index and (index.offsets.tolist(), index.caplen.tolist(), index.queue.tolist(),
                                  index.cut_short))
    assert got[0] == got[1]
