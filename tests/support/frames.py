"""Deterministic test traffic for l3fwd-sim, built with scapy.

* ``mixed_frames(seed, in_port, n=400)``   -- a broad mix like the golden inputs, including
  everything on which DPDK's simple and multi paths disagree (non-IP, IPv4 options,
  RFC 1812-invalid IPv4, EM non-TCP/UDP, ...) and a few truncated frames (< 60 bytes).
* ``well_formed_frames(seed, in_port, n)`` -- only valid Ethernet-II IPv4 (version 4, IHL 5,
  valid checksum, TTL >= 2, total length consistent) TCP/UDP and IPv6 TCP/UDP (no extension
  headers), routed or missed: the traffic on which DPDK's two paths agree.
* ``write_pcap(path, frames, start_ts=1_700_000_000.0)`` / ``read_pcap_frames(path)``.

Every field scapy would otherwise fill from the host (MACs, source IPs) is set explicitly,
so the output depends only on (seed, in_port, n).
"""

from __future__ import annotations

import ipaddress
import random

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import RawPcapReader, RawPcapWriter

from l3fwd_sim.capture.offline import open_offline
from l3fwd_sim.capture.records import HEAD_BYTES, MAX_CAPLEN

__all__ = ["mixed_frames", "well_formed_frames", "write_pcap", "read_pcap_frames"]

DLT_EN10MB = 1


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def _macs(rng: random.Random, in_port: int) -> tuple[str, str]:
    """(dst, src): dst is the receiving port's MAC, src a 'traffic generator' MAC."""
    dst = "02:70:63:61:70:%02x" % in_port if rng.random() < 0.8 else \
        "00:1b:21:%02x:%02x:%02x" % (rng.randrange(256), rng.randrange(256), rng.randrange(256))
    src = "00:1b:21:%02x:%02x:%02x" % (in_port, rng.randrange(256), rng.randrange(256))
    return dst, src


def _size(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.35:
        return rng.choice([60, 64, 60, 128, 256, 512, 1024, 1280, 1500, 1514])
    if r < 0.65:
        return rng.randint(60, 200)
    return rng.randint(60, 1514)


def _fill(rng: random.Random, pkt, size: int, pad_only: bool = False) -> bytes:
    """Return ``pkt`` as bytes grown to ``size``: as L4 payload (IP lengths consistent) or,
    with ``pad_only``, as trailing Ethernet padding (IP total length smaller than frame)."""
    base = bytes(pkt)
    need = size - len(base)
    if need <= 0:
        return base
    if pad_only:
        return base + rng.randbytes(need)
    return bytes(pkt / Raw(rng.randbytes(need)))


def _port_bias(rng: random.Random, in_port: int) -> int:
    """Destination 'port number' N of a routed 198.18.N.x / 2001:200:0:N:: address."""
    r = rng.random()
    if r < 0.70:
        return rng.randrange(4)
    if r < 0.80:
        return in_port % 16
    return rng.randrange(4, 16)


def _routed_v4(rng, in_port) -> str:
    return f"198.18.{_port_bias(rng, in_port)}.{rng.randrange(256)}"


def _missed_v4(rng) -> str:
    return rng.choice([
        lambda: f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(256)}",
        lambda: f"203.0.113.{rng.randrange(256)}",
        lambda: f"192.0.2.{rng.randrange(256)}",
        lambda: f"198.19.{rng.randrange(256)}.{rng.randrange(256)}",
        lambda: f"198.18.{rng.randrange(16, 256)}.{rng.randrange(256)}",
        lambda: ".".join(str(rng.randrange(1, 224)) for _ in range(4)),
    ])()


def _routed_v6(rng, in_port) -> str:
    return f"2001:200:0:{_port_bias(rng, in_port):x}::{rng.randrange(1, 0x10000):x}"


def _missed_v6(rng) -> str:
    return rng.choice([
        lambda: f"2001:db8:{rng.randrange(0x10000):x}::{rng.randrange(1, 0x10000):x}",
        lambda: f"fd00:{rng.randrange(0x10000):x}::{rng.randrange(1, 0x10000):x}",
        lambda: f"2001:200:0:{rng.randrange(16, 0x10000):x}::1",
        lambda: f"2001:201::{rng.randrange(1, 0x10000):x}",
    ])()


def _src_v4(rng) -> str:
    return f"172.16.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def _src_v6(rng) -> str:
    return f"2001:db8:ffff::{rng.randrange(1, 0x10000):x}"


def _l4(rng, proto: str | None = None):
    proto = proto or rng.choice(["udp", "udp", "tcp", "tcp", "icmp"])
    sport, dport = rng.randrange(1, 65536), rng.randrange(1, 65536)
    if proto == "udp":
        return UDP(sport=sport, dport=dport)
    if proto == "tcp":
        return TCP(sport=sport, dport=dport, flags="S", seq=rng.randrange(2**32))
    return ICMP(type=8, id=rng.randrange(65536), seq=rng.randrange(65536))


def _l4_v6(rng, proto: str | None = None):
    proto = proto or rng.choice(["udp", "udp", "tcp", "tcp", "icmp"])
    if proto == "icmp":
        return ICMPv6EchoRequest(id=rng.randrange(65536), seq=rng.randrange(65536))
    return _l4(rng, proto)


def _ipv4(rng, dst, **kw):
    kw.setdefault("src", _src_v4(rng))
    kw.setdefault("ttl", rng.randint(2, 255))
    kw.setdefault("id", rng.randrange(65536))
    return IP(dst=dst, **kw)


def _ipv6(rng, dst, **kw):
    kw.setdefault("src", _src_v6(rng))
    kw.setdefault("hlim", rng.randint(1, 255))
    return IPv6(dst=dst, **kw)


# ---------------------------------------------------------------------------------------
# categories of the mixed traffic; each returns one frame (bytes)
# ---------------------------------------------------------------------------------------
def _c_v4_routed(rng, in_port):
    d, s = _macs(rng, in_port)
    e = Ether(dst=d, src=s)
    return _fill(rng, e / _ipv4(rng, _routed_v4(rng, in_port)) / _l4(rng), _size(rng),
                 pad_only=rng.random() < 0.2)


def _c_v4_missed(rng, in_port):
    d, s = _macs(rng, in_port)
    e = Ether(dst=d, src=s)
    return _fill(rng, e / _ipv4(rng, _missed_v4(rng)) / _l4(rng), _size(rng),
                 pad_only=rng.random() < 0.2)


def _em_flow_v4(rng, in_port):
    n = _port_bias(rng, in_port)
    return f"198.18.{n}.0", f"198.18.{n}.1"


def _em_flow_v6(rng, in_port):
    n = _port_bias(rng, in_port)
    return f"2001:200:0:{n:x}::", f"2001:200:0:{n:x}::1"


def _c_em_v4(rng, in_port):
    """dpdk-l3fwd default IPv4 EM flow exactly: 198.18.N.1 -> 198.18.N.0 UDP 9 -> 9."""
    dst, src = _em_flow_v4(rng, in_port)
    d, s = _macs(rng, in_port)
    return _fill(rng, Ether(dst=d, src=s) / _ipv4(rng, dst, src=src) / UDP(sport=9, dport=9),
                 _size(rng))


def _c_em_v6(rng, in_port):
    dst, src = _em_flow_v6(rng, in_port)
    d, s = _macs(rng, in_port)
    return _fill(rng, Ether(dst=d, src=s) / _ipv6(rng, dst, src=src) / UDP(sport=9, dport=9),
                 _size(rng))


def _near_miss_fields(rng):
    """One of the five key fields off by a little."""
    return rng.choice(["src", "dst", "sport", "dport", "proto"])


def _c_em_near_v4(rng, in_port):
    dst, src = _em_flow_v4(rng, in_port)
    sport = dport = 9
    l4 = "udp"
    f = _near_miss_fields(rng)
    if f == "src":
        src = src[:-1] + "2"
    elif f == "dst":
        dst = dst[:-1] + rng.choice("12")
    elif f == "sport":
        sport = rng.choice([8, 10, 7, 9 + 256])
    elif f == "dport":
        dport = rng.choice([8, 10, 7, 9 + 256])
    else:
        l4 = "tcp"
    d, s = _macs(rng, in_port)
    L4 = UDP(sport=sport, dport=dport) if l4 == "udp" else TCP(sport=sport, dport=dport)
    return _fill(rng, Ether(dst=d, src=s) / _ipv4(rng, dst, src=src) / L4, _size(rng))


def _c_em_near_v6(rng, in_port):
    dst, src = _em_flow_v6(rng, in_port)
    sport = dport = 9
    l4 = "udp"
    f = _near_miss_fields(rng)
    if f == "src":
        src = src[:-1] + "2"
    elif f == "dst":
        dst = dst + "1"
    elif f == "sport":
        sport = rng.choice([8, 10, 9 + 256])
    elif f == "dport":
        dport = rng.choice([8, 10, 9 + 256])
    else:
        l4 = "tcp"
    d, s = _macs(rng, in_port)
    L4 = UDP(sport=sport, dport=dport) if l4 == "udp" else TCP(sport=sport, dport=dport)
    return _fill(rng, Ether(dst=d, src=s) / _ipv6(rng, dst, src=src) / L4, _size(rng))


def _c_v4_options(rng, in_port):
    """IPv4 with options, IHL 6..15 (NOP options); sometimes the EM flow's 5-tuple."""
    ihl = rng.randint(6, 15)
    opts = IPOption(b"\x01" * (4 * (ihl - 5)))
    d, s = _macs(rng, in_port)
    if rng.random() < 0.3:
        dst, src = _em_flow_v4(rng, in_port)
        pkt = Ether(dst=d, src=s) / _ipv4(rng, dst, src=src, options=opts) / UDP(sport=9, dport=9)
    else:
        dst = _routed_v4(rng, in_port) if rng.random() < 0.6 else _missed_v4(rng)
        pkt = Ether(dst=d, src=s) / _ipv4(rng, dst, options=opts) / _l4(rng)
    return _fill(rng, pkt, _size(rng))


def _c_v4_invalid(rng, in_port):
    """RFC 1812-invalid IPv4: version != 4, IHL < 5 or total length < 20."""
    kind = rng.choice(["version", "ihl", "len"])
    kw = {}
    if kind == "version":
        kw["version"] = rng.choice([0, 1, 5, 6, 7, 15])
    elif kind == "ihl":
        kw["ihl"] = rng.randint(0, 4)
    else:
        kw["len"] = rng.randint(0, 19)
    if rng.random() < 0.5:
        dst, src = _em_flow_v4(rng, in_port)
        kw["src"] = src
        l4 = UDP(sport=9, dport=9)
    else:
        dst = _routed_v4(rng, in_port)
        l4 = _l4(rng, rng.choice(["udp", "tcp"]))
    d, s = _macs(rng, in_port)
    return _fill(rng, Ether(dst=d, src=s) / _ipv4(rng, dst, **kw) / l4, _size(rng),
                 pad_only=True)


def _c_v4_badck(rng, in_port):
    """Bad or edge-case header checksums (incl. 0xFEFF, 0xFFFF, 0x00FF: carry cases)."""
    d, s = _macs(rng, in_port)
    pkt = Ether(dst=d, src=s) / _ipv4(rng, _routed_v4(rng, in_port)) / _l4(rng)
    ck = rng.choice([0xFEFF, 0xFFFF, 0x00FF, 0x0000, 0xFFFE, 0x01FF, rng.randrange(65536)])
    pkt[IP].chksum = ck
    return _fill(rng, pkt, _size(rng))


def _c_v4_ttl(rng, in_port):
    d, s = _macs(rng, in_port)
    dst = _routed_v4(rng, in_port) if rng.random() < 0.7 else _missed_v4(rng)
    ttl = rng.choice([0, 1])
    if rng.random() < 0.3:
        dst, src = _em_flow_v4(rng, in_port)
        pkt = Ether(dst=d, src=s) / _ipv4(rng, dst, src=src, ttl=ttl) / UDP(sport=9, dport=9)
    else:
        pkt = Ether(dst=d, src=s) / _ipv4(rng, dst, ttl=ttl) / _l4(rng)
    return _fill(rng, pkt, _size(rng))


def _c_v4_frag(rng, in_port):
    d, s = _macs(rng, in_port)
    dst = _routed_v4(rng, in_port) if rng.random() < 0.7 else _missed_v4(rng)
    if rng.random() < 0.5:   # first fragment, with the L4 header
        ip = _ipv4(rng, dst, flags="MF", frag=0)
        pkt = Ether(dst=d, src=s) / ip / _l4(rng, rng.choice(["udp", "tcp"]))
    else:                    # later fragment: proto says UDP/TCP but no L4 header
        ip = _ipv4(rng, dst, flags=rng.choice(["MF", 0]), frag=rng.randint(1, 8000),
                   proto=rng.choice([6, 17]))
        pkt = Ether(dst=d, src=s) / ip / Raw(rng.randbytes(8))
    return _fill(rng, pkt, _size(rng))


def _c_v6_routed(rng, in_port):
    d, s = _macs(rng, in_port)
    return _fill(rng, Ether(dst=d, src=s) / _ipv6(rng, _routed_v6(rng, in_port)) / _l4_v6(rng),
                 _size(rng))


def _c_v6_missed(rng, in_port):
    d, s = _macs(rng, in_port)
    return _fill(rng, Ether(dst=d, src=s) / _ipv6(rng, _missed_v6(rng)) / _l4_v6(rng),
                 _size(rng))


def _c_v6_hbh(rng, in_port):
    d, s = _macs(rng, in_port)
    if rng.random() < 0.3:
        dst, src = _em_flow_v6(rng, in_port)
        pkt = _ipv6(rng, dst, src=src) / IPv6ExtHdrHopByHop() / UDP(sport=9, dport=9)
    else:
        dst = _routed_v6(rng, in_port) if rng.random() < 0.6 else _missed_v6(rng)
        pkt = _ipv6(rng, dst) / IPv6ExtHdrHopByHop() / _l4_v6(rng, rng.choice(["udp", "tcp"]))
    return _fill(rng, Ether(dst=d, src=s) / pkt, _size(rng))


def _c_arp(rng, in_port):
    d, s = _macs(rng, in_port)
    arp = ARP(op=rng.choice([1, 2]), hwsrc=s, psrc=_src_v4(rng),
              hwdst="00:00:00:00:00:00", pdst=_routed_v4(rng, in_port))
    return _fill(rng, Ether(dst="ff:ff:ff:ff:ff:ff", src=s) / arp, 60, pad_only=True)


def _c_vlan(rng, in_port):
    d, s = _macs(rng, in_port)
    inner = _ipv4(rng, _routed_v4(rng, in_port)) / _l4(rng)
    if rng.random() < 0.6:
        pkt = Ether(dst=d, src=s) / Dot1Q(vlan=rng.randint(1, 4094)) / inner
    else:  # QinQ
        pkt = (Ether(dst=d, src=s, type=0x88A8) / Dot1AD(vlan=rng.randint(1, 4094))
               / Dot1Q(vlan=rng.randint(1, 4094)) / inner)
    return _fill(rng, pkt, _size(rng))


def _c_vlan_v6(rng, in_port):
    d, s = _macs(rng, in_port)
    inner = _ipv6(rng, _routed_v6(rng, in_port)) / _l4_v6(rng)
    return _fill(rng, Ether(dst=d, src=s) / Dot1Q(vlan=rng.randint(1, 4094)) / inner, _size(rng))


def _c_lldp(rng, in_port):
    d, s = _macs(rng, in_port)
    # chassis id TLV, port id TLV, TTL TLV, end TLV (raw)
    tlvs = (b"\x02\x07\x04" + bytes.fromhex(s.replace(":", "")) + b"\x04\x03\x07p" +
            bytes([in_port]) + b"\x06\x02\x00\x78" + b"\x00\x00")
    return _fill(rng, Ether(dst="01:80:c2:00:00:0e", src=s, type=0x88CC) / Raw(tlvs), 60,
                 pad_only=True)


def _c_unknown(rng, in_port):
    d, s = _macs(rng, in_port)
    et = rng.choice([0x9000, 0x88B5, 0x0842, 0x8847, 0x88E5, 0x22F0, 0x0600, 0x05DC])
    return _fill(rng, Ether(dst=d, src=s, type=et) / Raw(rng.randbytes(46)), _size(rng),
                 pad_only=True)


def _c_fib_bait(rng, in_port):
    """Non-IP frame whose bytes 38..53 are a routed IPv6 address: --lookup fib looks
    every non-IPv4 frame up as IPv6 (path_differences.md D10)."""
    d, s = _macs(rng, in_port)
    addr = ipaddress.IPv6Address(_routed_v6(rng, in_port)).packed
    et = rng.choice([0x88B5, 0x0806, 0x8100, 0x9000])
    body = rng.randbytes(38 - 14) + addr
    return _fill(rng, Ether(dst=d, src=s, type=et) / Raw(body), _size(rng), pad_only=True)


def _c_short(rng, in_port):
    """Very short frames (< 60 bytes) with an IPv4 or IPv6 EtherType, as raw bytes."""
    size = rng.choice([10, 13, 14, 16, 19, 20, 24, 30, 33, 34, 37, 38, 40, 53, 54, 57, 58])
    d, s = _macs(rng, in_port)
    et = rng.choice([0x0800, 0x86DD])
    if et == 0x0800:
        dst, src = _em_flow_v4(rng, in_port)
        full = bytes(Ether(dst=d, src=s) / _ipv4(rng, dst, src=src) / UDP(sport=9, dport=9)
                     / Raw(bytes(20)))
    else:
        dst, src = _em_flow_v6(rng, in_port)
        full = bytes(Ether(dst=d, src=s) / _ipv6(rng, dst, src=src) / UDP(sport=9, dport=9)
                     / Raw(bytes(20)))
    return full[:size]


_CATEGORIES = [
    (_c_v4_routed, 22), (_c_v4_missed, 8), (_c_em_v4, 6), (_c_em_near_v4, 4),
    (_c_em_v6, 4), (_c_em_near_v6, 3), (_c_v4_options, 4), (_c_v4_invalid, 4),
    (_c_v4_badck, 3), (_c_v4_ttl, 3), (_c_v4_frag, 3), (_c_v6_routed, 12),
    (_c_v6_missed, 5), (_c_v6_hbh, 3), (_c_arp, 2), (_c_vlan, 3), (_c_vlan_v6, 1),
    (_c_lldp, 1), (_c_unknown, 2), (_c_fib_bait, 1), (_c_short, 2),
]


def mixed_frames(seed: int, in_port: int, n: int = 400) -> list[bytes]:
    """A broad deterministic mix of n frames as received on ``in_port``."""
    rng = random.Random(f"mixed/{seed}/{in_port}")
    funcs = [f for f, _ in _CATEGORIES]
    weights = [w for _, w in _CATEGORIES]
    out = []
    # make sure every category occurs at least once when n allows it
    order = list(funcs) if n >= len(funcs) else []
    order += rng.choices(funcs, weights, k=n - len(order))
    rng.shuffle(order)
    for f in order:
        out.append(f(rng, in_port))
    return out


# ---------------------------------------------------------------------------------------
# well-formed traffic: DPDK's simple and multi paths agree on it
# ---------------------------------------------------------------------------------------
def well_formed_frames(seed: int, in_port: int, n: int = 400) -> list[bytes]:
    """Valid Ethernet-II IPv4 (version 4, IHL 5, valid checksum, TTL >= 2) and IPv6
    (no extension header), TCP or UDP only, routed or missed, EM flows and near misses."""
    rng = random.Random(f"well/{seed}/{in_port}")
    out = []
    for _ in range(n):
        d, s = _macs(rng, in_port)
        eth = Ether(dst=d, src=s)
        r = rng.random()
        v6 = rng.random() < 0.35
        l4 = _l4(rng, rng.choice(["udp", "tcp"]))
        if v6:
            if r < 0.15:
                dst, src = _em_flow_v6(rng, in_port)
                pkt = eth / _ipv6(rng, dst, src=src) / UDP(sport=9, dport=9)
            else:
                dst = _routed_v6(rng, in_port) if r < 0.75 else _missed_v6(rng)
                pkt = eth / _ipv6(rng, dst) / l4
        else:
            if r < 0.15:
                dst, src = _em_flow_v4(rng, in_port)
                pkt = eth / _ipv4(rng, dst, src=src) / UDP(sport=9, dport=9)
            elif r < 0.2:
                dst, src = _em_flow_v4(rng, in_port)
                pkt = eth / _ipv4(rng, dst, src=src) / UDP(sport=9, dport=rng.choice([8, 10]))
            else:
                dst = _routed_v4(rng, in_port) if r < 0.75 else _missed_v4(rng)
                pkt = eth / _ipv4(rng, dst) / l4
        out.append(_fill(rng, pkt, _size(rng)))
    return out


# ---------------------------------------------------------------------------------------
# pcap I/O
# ---------------------------------------------------------------------------------------
def write_pcap(path, frames, start_ts: float = 1_700_000_000.0) -> None:
    """Classic pcap, linktype Ethernet, microsecond timestamps 1 µs apart."""
    base_us = round(start_ts * 1_000_000)
    w = RawPcapWriter(str(path), linktype=DLT_EN10MB, sync=False, nano=False)
    try:
        w.write_header(None)  # header even for an empty capture
        for i, f in enumerate(frames):
            us = base_us + i
            w.write_packet(bytes(f), sec=us // 1_000_000, usec=us % 1_000_000,
                           caplen=len(f), wirelen=len(f))
    finally:
        w.close()


def read_pcap_frames(path) -> list[bytes]:
    with RawPcapReader(str(path)) as reader:
        return [bytes(pkt) for pkt, _meta in reader]


def read_pcap_records(path) -> list[tuple[int, int, bytes]]:
    """(captured length, wire length, bytes) of every record, read by scapy: what a
    golden run's outputs are compared on (time stamps differ: net_pcap stamps at TX)."""
    with RawPcapReader(str(path)) as reader:
        return [(meta.caplen, meta.wirelen, bytes(pkt)) for pkt, meta in reader]


def assert_same_records(want_path, got_path, label: str = "") -> None:
    """The records of ``got_path`` are those of ``want_path``, in order: same captured
    length, wire length and bytes; the first that differs is named."""
    want, got = read_pcap_records(want_path), read_pcap_records(got_path)
    first = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), None)
    where = "" if first is None else \
        f"; record {first} differs: (caplen, wire length) {want[first][:2]} vs {got[first][:2]}"
    assert (len(got), first) == (len(want), None), f"{label or want_path}: {len(got)} vs {len(want)} records{where}"


HUGE = 10**9          # a batch size no capture reaches: read in one go


def read_all(path, plan=(HUGE,)) -> tuple[list[tuple[bytes, int, int]], object]:
    """(frame, wirelen, ts_ns) of every record, in batches of ``plan`` sizes; checks the
    batch invariants (heads = the frame's first bytes, zero padded; frame = block slice)."""
    reader = open_offline(path)
    out, i = [], 0
    try:
        while True:
            want = plan[i % len(plan)]
            i += 1
            b = reader.read(want)
            for row in range(len(b)):
                cap, off = int(b.caplen[row]), int(b.offsets[row])
                assert 0 <= cap <= MAX_CAPLEN and b.wirelen[row] >= 0 and b.ts_ns[row] >= 0
                frame = bytes(b.block[off:off + cap])
                k = min(cap, HEAD_BYTES)
                assert bytes(b.heads[row, :k]) == frame[:k] and not b.heads[row, k:].any()
                out.append((frame, int(b.wirelen[row]), int(b.ts_ns[row])))
            if len(b) < want:
                assert len(reader.read(want)) == 0
                return out, reader
    finally:
        reader.close()
