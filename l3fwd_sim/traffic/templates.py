"""Packet templates for ``generate``: scapy builds each stream's headers once (as TRex's
``STLPktBuilder`` does), and this module records where every field lies so that numpy can
stamp per-packet values and fix lengths and checksums (``stamp.py``).

scapy is imported lazily: only ``generate`` needs it, and only off the hot path.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import SimError
from .field_values import FieldError, build_layer

ETHER_IPV4, ETHER_IPV6 = 0x0800, 0x86DD
PROTO_ICMP, PROTO_TCP, PROTO_UDP, PROTO_ICMPV6 = 1, 6, 17, 58
TRANSPORTS = ("udp", "tcp", "icmp")    # ICMP is ICMPv4 or ICMPv6 by the IP layer
LAYERS = ("eth", "vlan", "ipv4", "ipv6", "udp", "tcp", "icmp")

# What a traffic generator sends to l3fwd port p by default: from the peer whose MAC
# l3fwd uses as destination for port p (02:00:00:00:00:p), to port p's own MAC
# (net_pcap's 02:70:63:61:70:p), so even a destination-MAC check would pass.
def default_eth(port: int) -> dict:
    return {"dst": f"02:70:63:61:70:{port:02x}", "src": f"02:00:00:00:00:{port:02x}"}


# dpdk-l3fwd's default EM flow 0 (default_routes.md A.3/A.4): routed to port 0 by lpm, em, fib.
DEFAULT_ADDRESSES = {"ipv4": {"src": "198.18.0.1", "dst": "198.18.0.0"},
                     "ipv6": {"src": "2001:200::1", "dst": "2001:200::"}}

# Header fields that are computed per packet and so cannot be set in a template.
COMPUTED = {"eth": {"type"}, "vlan": {"type"}, "ipv4": {"version", "ihl", "len", "chksum", "options"},
            "ipv6": {"version", "plen"}, "udp": {"len", "chksum"}, "tcp": {"dataofs", "chksum", "options"},
            "icmp": {"chksum", "cksum"}}
# Fields a stream file may vary: layer.field (scapy's field names) -> (byte offset in the
# layer, width in bytes, bit shift, bit count or None for whole bytes, value kind).
VARIABLE_FIELDS = {
    "eth.dst": (0, 6, 0, None, "mac"), "eth.src": (6, 6, 0, None, "mac"),
    "vlan.prio": (0, 2, 13, 3, "int"), "vlan.dei": (0, 2, 12, 1, "int"), "vlan.vlan": (0, 2, 0, 12, "int"),
    "ipv4.tos": (1, 1, 0, None, "int"), "ipv4.id": (4, 2, 0, None, "int"), "ipv4.ttl": (8, 1, 0, None, "int"),
    "ipv4.src": (12, 4, 0, None, "ipv4"), "ipv4.dst": (16, 4, 0, None, "ipv4"),
    "ipv6.tc": (0, 4, 20, 8, "int"), "ipv6.fl": (0, 4, 0, 20, "int"), "ipv6.hlim": (7, 1, 0, None, "int"),
    "ipv6.src": (8, 16, 0, None, "ipv6"), "ipv6.dst": (24, 16, 0, None, "ipv6"),
    "udp.sport": (0, 2, 0, None, "int"), "udp.dport": (2, 2, 0, None, "int"),
    "tcp.sport": (0, 2, 0, None, "int"), "tcp.dport": (2, 2, 0, None, "int"),
    "tcp.seq": (4, 4, 0, None, "int"), "tcp.ack": (8, 4, 0, None, "int"),
    "tcp.flags": (12, 2, 0, 9, "int"), "tcp.window": (14, 2, 0, None, "int"),
    "tcp.urgptr": (18, 2, 0, None, "int"),
    "icmp.type": (0, 1, 0, None, "int"), "icmp.code": (1, 1, 0, None, "int"),
    "icmp.id": (4, 2, 0, None, "int"), "icmp.seq": (6, 2, 0, None, "int"),
}


@dataclass(frozen=True)
class Slot:
    """Where a variable field lies in the frame."""
    offset: int
    width: int          # bytes: 1, 2, 4, 6 or 16
    shift: int = 0
    bits: int | None = None
    kind: str = "int"

    @property
    def limit(self) -> int:
        return (1 << (self.bits if self.bits is not None else 8 * self.width)) - 1


@dataclass(frozen=True)
class Template:
    """The headers of one stream and what must be recomputed for every packet.

    ``header`` runs from the Ethernet header to the end of the last header (L4, or the
    L3 header or ARP body when there is none); the rest of a frame is ``fill`` repeated.
    With ``fix`` the IPv4 total length / IPv6 payload length / UDP length follow each
    frame's size and the IPv4 header and L4 checksums are recomputed; ``overrides`` are
    bytes forced after the lengths and before the checksums (``malformed`` categories);
    ``bad_ipv4_checksum`` inverts the computed IPv4 header checksum.
    """
    header: bytes
    fill: bytes = b"x"
    l3: int | None = None
    family: int | None = None
    ihl_bytes: int = 0
    l4: int | None = None
    l4_proto: int | None = None
    fix: bool = True
    overrides: tuple = ()
    bad_ipv4_checksum: bool = False
    slots: dict = field(default_factory=dict)
    summary: str = ""
    layer_names: str = ""

    def payload(self, frame_len: int) -> bytes:
        """The frame of ``frame_len`` bytes before any per-packet change."""
        need = max(0, frame_len - len(self.header))
        reps = -(-need // len(self.fill)) if need else 0
        return self.header + (self.fill * reps)[:need]


def _scapy():
    try:
        from scapy.layers import inet, inet6, l2
    except ImportError:   # pragma: no cover - scapy is installed with the package's extras
        raise SimError("l3fwd-sim generate needs scapy (pip install scapy)") from None
    return l2, inet, inet6


def _layer(cls, layer: str, values: dict):
    fields = {f.name: f for f in cls.fields_desc}
    for key, value in values.items():
        if key not in fields:
            choices = ", ".join(sorted(set(fields) - COMPUTED.get(layer, set())))
            raise FieldError((layer, key), f"{layer}: unknown field {key!r} (scapy {cls.__name__} has: {choices})")
        if key in COMPUTED.get(layer, set()):
            raise FieldError((layer, key), f"{layer}.{key} is computed for every packet and cannot be set")
    return build_layer(cls, layer, values)


def build_stack(layers: dict[str, dict]):
    """A scapy packet from ``{"eth": {...}, "vlan": {...}, "ipv4"|"ipv6": {...},
    "udp"|"tcp"|"icmp": {...}}`` (keys are scapy field names; missing layers: none)."""
    l2, inet, inet6 = _scapy()
    unknown = [name for name in layers if name not in LAYERS]
    if unknown:
        raise FieldError((unknown[0],), f"unknown layer {unknown[0]!r} (expected {', '.join(LAYERS)})")
    families = [name for name in ("ipv4", "ipv6") if name in layers]
    transports = [name for name in TRANSPORTS if name in layers]
    if len(families) > 1:
        raise FieldError((families[1],), "a stream has one IP layer: ipv4 or ipv6, not both")
    if len(transports) > 1:
        raise FieldError((transports[1],), f"a stream has one transport layer, not {' and '.join(transports)}")
    if transports and not families:
        raise FieldError((transports[0],), f"{transports[0]} needs an ipv4 or ipv6 layer")
    pkt = _layer(l2.Ether, "eth", {**default_eth(0), **layers.get("eth", {})})
    if "vlan" in layers:
        pkt = pkt / _layer(l2.Dot1Q, "vlan", layers["vlan"])
    if families:
        family = families[0]
        # explicit addresses: scapy would otherwise ask the host's routing table
        ip_values = {**DEFAULT_ADDRESSES[family], **layers[family]}
        if transports:
            own = "proto" if family == "ipv4" else "nh"
            if own in ip_values:
                raise FieldError((family, own), f"{family}.{own} is set by the {transports[0]} layer")
        pkt = pkt / _layer(inet.IP if family == "ipv4" else inet6.IPv6, family, ip_values)
    if transports:
        name = transports[0]
        defaults = {"udp": {"sport": 9, "dport": 9}, "tcp": {"sport": 9, "dport": 9}, "icmp": {}}[name]
        values = {**defaults, **layers[name]}
        if name == "icmp":
            cls = inet.ICMP if families[0] == "ipv4" else inet6.ICMPv6EchoRequest
        else:
            cls = inet.UDP if name == "udp" else inet.TCP
        pkt = pkt / _layer(cls, name, values)
    return pkt


def template_from_scapy(pkt, fill: bytes = b"x", fix: bool = True, overrides: tuple = (),
                        bad_ipv4_checksum: bool = False) -> Template:
    """Record the layout of a scapy packet (headers only, no payload)."""
    l2, inet, inet6 = _scapy()
    raw = bytes(pkt)

    def offset_of(cls):
        return len(raw) - len(bytes(pkt[cls])) if pkt.haslayer(cls) else None

    bases = {"eth": 0, "vlan": offset_of(l2.Dot1Q), "ipv4": offset_of(inet.IP), "ipv6": offset_of(inet6.IPv6)}
    l3 = bases["ipv4"] if bases["ipv4"] is not None else bases["ipv6"]
    family = 4 if bases["ipv4"] is not None else 6 if bases["ipv6"] is not None else None
    l4 = l4_proto = None
    for cls, proto, name in ((inet.UDP, PROTO_UDP, "udp"), (inet.TCP, PROTO_TCP, "tcp"),
                             (inet.ICMP, PROTO_ICMP, "icmp"), (inet6.ICMPv6EchoRequest, PROTO_ICMPV6, "icmp")):
        if pkt.haslayer(cls):
            l4, l4_proto = offset_of(cls), proto
            bases[name] = l4
            break
    slots = {}
    for name, (offset, width, shift, bits, kind) in VARIABLE_FIELDS.items():
        base = bases.get(name.split(".")[0])
        if base is not None:
            slots[name] = Slot(base + offset, width, shift, bits, kind)
    ihl_bytes = (raw[l3] & 0x0F) * 4 if family == 4 else 0
    return Template(header=raw, fill=fill or b"\0", l3=l3, family=family, ihl_bytes=ihl_bytes, l4=l4,
                    l4_proto=l4_proto, fix=fix, overrides=tuple(overrides),
                    bad_ipv4_checksum=bad_ipv4_checksum, slots=slots, summary=pkt.summary(),
                    layer_names="/".join(layer.__name__ for layer in pkt.layers()))
