"""Packet fields by name for ``compare``: which bits of a frame ``IP.ttl`` or ``Ether.src`` is.

Names are scapy's, ``<layer class>.<field>`` (``Ether.dst``, ``IP.ttl``, ``IP.chksum``,
``IPv6.hlim``, ``UDP.dport``, ``TCP.flags``, ``Dot1Q.vlan``, ``ARP.pdst``, ...), and mean
the field of the *first* layer of that class, as ``pkt[IP].ttl`` reads it (later layers
of the same class are named ``IP:2.ttl``, as ``pkt[IP:2]``). A name covers exactly the
field's bits: ``IP.flags`` is the top 3 bits of IPv4 header byte 6, not ``IP.frag``.
Three names describe the pcap record rather than the frame, as Wireshark names them:
``frame.len`` (length on the wire), ``frame.cap_len`` (bytes captured), ``frame.time``.

Two ways to find a field, with the same answer (tests/diff/test_compare.py checks one
against the other on mixed traffic):

* ``fixed_field_masks`` -- vectorised, for the fields of Ethernet II, option-less IPv4,
  IPv6 and option-less TCP / UDP at fixed offsets (the traffic l3fwd forwards): one
  numpy pass over all packets finds those whose layout is unambiguous and masks them;
* ``field_spans`` -- scapy dissection of one frame (Ether, or Raw when that fails, as
  scapy's pcap reader does), for everything else and for naming the fields of reported
  differences. scapy is imported only here, only when needed.

A capture of another link type (PPP, Cisco HDLC, 802.11, ...) is compared as stored:
its frames are dissected from the layer scapy's pcap reader would start with
(``conf.l2types``: PPP for 9, HDLC for 50, ...; Raw where scapy has none, as for Cisco
HDLC), and the fixed offsets above, which are Ethernet's, are never used for it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..capture.linktypes import ETHERNET
from ..errors import SimError

RECORD_FIELDS = ("frame.len", "frame.cap_len", "frame.time")


def _bytes(first: int, last: int) -> tuple[tuple[int, int], ...]:
    return tuple((k, 0xFF) for k in range(first, last + 1))


# (offset from the layer's start, AND-mask of the field's bits in that byte)
_ETHER = {"dst": _bytes(0, 5), "src": _bytes(6, 11), "type": _bytes(12, 13)}
_IP = {"version": ((0, 0xF0),), "ihl": ((0, 0x0F),), "tos": _bytes(1, 1), "len": _bytes(2, 3),
       "id": _bytes(4, 5), "flags": ((6, 0xE0),), "frag": ((6, 0x1F), (7, 0xFF)), "ttl": _bytes(8, 8),
       "proto": _bytes(9, 9), "chksum": _bytes(10, 11), "src": _bytes(12, 15), "dst": _bytes(16, 19)}
_IPV6 = {"version": ((0, 0xF0),), "tc": ((0, 0x0F), (1, 0xF0)), "fl": ((1, 0x0F), (2, 0xFF), (3, 0xFF)),
         "plen": _bytes(4, 5), "nh": _bytes(6, 6), "hlim": _bytes(7, 7), "src": _bytes(8, 23),
         "dst": _bytes(24, 39)}
_UDP = {"sport": _bytes(0, 1), "dport": _bytes(2, 3), "len": _bytes(4, 5), "chksum": _bytes(6, 7)}
_TCP = {"sport": _bytes(0, 1), "dport": _bytes(2, 3), "seq": _bytes(4, 7), "ack": _bytes(8, 11),
        "dataofs": ((12, 0xF0),), "reserved": ((12, 0x0E),), "flags": ((12, 0x01), (13, 0xFF)),
        "window": _bytes(14, 15), "chksum": _bytes(16, 17), "urgptr": _bytes(18, 19)}
# layer -> (its fields, [(layout, layer start in the frame)])
_FIXED_LAYERS = {
    "Ether": (_ETHER, [("ether", 0)]),
    "IP": (_IP, [("ipv4", 14)]),
    "IPv6": (_IPV6, [("ipv6", 14)]),
    "UDP": (_UDP, [("udp4", 34), ("udp6", 54)]),
    "TCP": (_TCP, [("tcp4", 34), ("tcp6", 54)]),
}
FIXED_FIELDS = frozenset(f"{layer}.{name}" for layer, (fields, _) in _FIXED_LAYERS.items() for name in fields)


def _layouts(data: np.ndarray, starts: np.ndarray, caplen: np.ndarray) -> dict[str, np.ndarray]:
    """Packets whose scapy dissection is certain to have the fixed layout: Ethernet II
    (scapy reads a type <= 1500 as an 802.3 length: Dot3), IPv4 with IHL 5 (scapy binds
    UDP/TCP only to fragment offset 0 and cuts the payload at the total length), IPv6
    (payload cut at plen), UDP/TCP with all their bytes present, TCP without options."""
    def at(k: int) -> np.ndarray:
        if not len(data):
            return np.zeros(len(starts), np.int64)
        return np.where(caplen > k, data[np.minimum(starts + k, len(data) - 1)], 0).astype(np.int64)

    def be16(k: int) -> np.ndarray:
        return at(k) << 8 | at(k + 1)

    ether = (caplen >= 14) & (be16(12) > 1500)
    ipv4 = ether & (be16(12) == 0x0800) & (caplen >= 34) & (at(14) & 0x0F == 5)
    ip_len = be16(16)
    avail4 = np.where(ip_len < 20, caplen - 34, np.minimum(caplen - 34, ip_len - 20))
    l4_v4 = ipv4 & (be16(20) & 0x1FFF == 0)
    ipv6 = ether & (be16(12) == 0x86DD) & (caplen >= 54)
    avail6 = np.minimum(caplen - 54, be16(18))
    return {
        "ether": ether, "ipv4": ipv4, "ipv6": ipv6,
        "udp4": l4_v4 & (at(23) == 17) & (avail4 >= 8),
        "tcp4": l4_v4 & (at(23) == 6) & (avail4 >= 20) & (at(46) >> 4 == 5),
        "udp6": ipv6 & (at(20) == 17) & (avail6 >= 8),
        "tcp6": ipv6 & (at(20) == 6) & (avail6 >= 20) & (at(66) >> 4 == 5),
    }


def fixed_field_masks(data: np.ndarray, starts: np.ndarray, caplen: np.ndarray,
                      names: list[str]) -> dict[str, np.ndarray]:
    """Clear, in place in ``data``, the bits of each fixed-offset field in ``names`` in
    every packet whose layout makes its position certain. Returns, per name, which
    packets were handled this way (the others need ``field_spans``)."""
    wanted = [n for n in names if n in FIXED_FIELDS]
    if not wanted:
        return {}
    layouts = _layouts(data, starts, caplen)
    covered = {}
    for name in wanted:
        layer, field = name.split(".")
        fields, placements = _FIXED_LAYERS[layer]
        done = np.zeros(len(starts), bool)
        for layout, base in placements:
            rows = np.flatnonzero(layouts[layout])
            for offset, keep_out in fields[field]:
                data[starts[rows] + base + offset] &= np.uint8(~keep_out & 0xFF)
            done |= layouts[layout]
        covered[name] = done
    return covered


# ---------------------------------------------------------------------------------------
# scapy dissection (imported lazily: only reported or unusual packets get here)
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Span:
    """One field of one dissected frame: bits [start, start + bits) of the frame."""
    name: str          # "IP.ttl", "IP:2.ttl", "Raw.load"
    start: int         # in bits from the frame's first bit
    bits: int
    value: str         # scapy's repr of the value (i2repr)


def _scapy():
    try:
        import scapy.layers.inet  # noqa: F401  (binds IP/TCP/UDP/ICMP to Ether)
        import scapy.layers.inet6  # noqa: F401
        from scapy.config import conf
        from scapy.layers.l2 import Ether
        from scapy.packet import Raw
    except ImportError:
        return None
    return Ether, Raw, conf


def check_field_name(name: str) -> None:
    """Refuse (SimError) a name that is neither a record field, a fixed-offset field, nor
    ``Layer.field`` of a layer class scapy knows."""
    if name in RECORD_FIELDS or name in FIXED_FIELDS:
        return
    layer, dot, field = name.partition(".")
    layer = layer.split(":")[0]
    hint = "scapy names such as IP.ttl, Ether.src, IPv6.hlim, UDP.dport, or frame.len"
    if not dot or not layer or not field:
        raise SimError(f"--ignore {name}: not a field name (want Layer.field: {hint})")
    loaded = _scapy()
    if loaded is None:
        raise SimError(f"--ignore {name}: this field needs scapy to be located (pip install scapy); "
                       f"without it only {', '.join(sorted(FIXED_FIELDS))} and frame.* work")
    conf = loaded[2]
    classes = [cls for cls in conf.layers if cls.__name__ == layer]
    if not classes:
        raise SimError(f"--ignore {name}: unknown layer '{layer}' ({hint})")
    if not any(field in [f.name for f in cls.fields_desc] for cls in classes):
        known = ", ".join(f.name for f in classes[0].fields_desc)
        raise SimError(f"--ignore {name}: layer {layer} has no field '{field}' (it has: {known})")


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def _layer_spans(layer, base_bit: int, label: str, values: bool = True) -> list[Span]:
    """Replay scapy's ``do_dissect`` field by field over the layer's own header bytes,
    recording where each field started and ended (bit-exact for BitFields)."""
    raw = layer.raw_packet_cache or b""
    total = len(raw)
    state = raw

    def position(s) -> int:
        if isinstance(s, tuple):
            rest, bits_done = s
            return (total - len(rest)) * 8 + bits_done
        return (total - len(s)) * 8

    spans = []
    for fld in layer.fields_desc:
        before = position(state)
        try:
            state, value = fld.getfield(layer, state)
        except Exception:   # a field scapy's own dissection stopped at: rest is the layer's
            spans.append(Span(label, base_bit + before, total * 8 - before, "?"))
            return spans
        if fld.isconditional and value is None:
            continue
        after = position(state)
        shown = ""
        if values:
            try:
                shown = _short(str(fld.i2repr(layer, layer.getfieldval(fld.name))))
            except Exception:
                shown = _short(repr(value))
        spans.append(Span(f"{label}.{fld.name}", base_bit + before, after - before, shown))
        if not state:
            break
    return spans


def _first_layer(linktype: int, ether, raw, conf):
    """The class scapy's pcap reader dissects a frame of ``linktype`` with (Raw if none)."""
    if linktype == ETHERNET:
        return ether
    if linktype not in conf.l2types:
        try:                        # the serial link layers, then every other scapy knows
            import scapy.layers.ppp  # noqa: F401
            if linktype not in conf.l2types:
                import scapy.layers.all  # noqa: F401
        except Exception:
            return raw
    return conf.l2types.get(linktype) or raw


def dissect(frame: bytes, linktype: int = ETHERNET):
    """scapy's view of a frame of ``linktype`` (Raw if it cannot be dissected), or None
    without scapy."""
    loaded = _scapy()
    if loaded is None:
        return None
    ether, raw, conf = loaded
    try:
        return _first_layer(linktype, ether, raw, conf)(frame)
    except Exception:
        return raw(frame)


def field_spans(frame: bytes, only: set | None = None, linktype: int = ETHERNET) -> tuple[list[Span], list[str]]:
    """All fields of the frame in byte order, and its layer names (["Ether", "IP", ...]).
    Layers follow each other in the frame: header bytes of layer after layer, and a
    layer's Padding after its payload, which is also scapy's payload order. With
    ``only`` (a set of names), just those fields, without their values (faster)."""
    pkt = dissect(frame, linktype)
    if pkt is None:
        return [], []
    spans, names, seen = [], [], {}
    offset = 0
    layer = pkt
    while layer is not None and layer.__class__.__name__ != "NoPayload":
        cls = layer.__class__.__name__
        seen[cls] = seen.get(cls, 0) + 1
        label = cls if seen[cls] == 1 else f"{cls}:{seen[cls]}"
        names.append(cls)
        if only is None:
            spans.extend(_layer_spans(layer, offset * 8, label))
        elif any(name.startswith(label + ".") for name in only):
            spans.extend(s for s in _layer_spans(layer, offset * 8, label, values=False) if s.name in only)
        offset += len(layer.raw_packet_cache or b"")
        layer = layer.payload
    return spans, names


class MaskCache:
    """``bit_mask`` of frames by their bytes: scapy needs ~0.2 ms to dissect a frame, and
    differing packets often repeat (streams of identical frames)."""

    def __init__(self, names, size: int = 65536, linktype: int = ETHERNET):
        self.names = set(names)
        self.linktype = linktype
        self.size = size
        self._masks: dict[bytes, np.ndarray] = {}

    def __call__(self, frame: bytes) -> np.ndarray:
        mask = self._masks.get(frame)
        if mask is None:
            if len(self._masks) >= self.size:
                self._masks.clear()
            mask = bit_mask(len(frame), field_spans(frame, self.names, self.linktype)[0], self.names)
            self._masks[frame] = mask
        return mask


def bit_mask(length: int, spans: list[Span], names) -> np.ndarray:
    """AND-mask (0xFF = compared) of a ``length``-byte frame with the named fields cleared."""
    mask = np.full(length, 0xFF, np.uint8)
    for span in spans:
        if span.name not in names:
            continue
        end = min(span.start + span.bits, length * 8)
        if span.start % 8 == 0 and end % 8 == 0:
            mask[span.start // 8:end // 8] = 0
            continue
        for bit in range(span.start, end):
            mask[bit // 8] &= ~(0x80 >> (bit % 8)) & 0xFF
    return mask


def _bits(frame: bytes, span: Span) -> int | None:
    if span.start + span.bits > len(frame) * 8 or not span.bits:
        return None
    first, last = span.start // 8, (span.start + span.bits - 1) // 8
    word = int.from_bytes(frame[first:last + 1], "big")
    return (word >> ((last + 1) * 8 - span.start - span.bits)) & ((1 << span.bits) - 1)


def field_differences(a: bytes, b: bytes, ignore=(), linktypes=(ETHERNET, ETHERNET),
                      dissect: bool = True) -> list[tuple[str, str | None, str | None]]:
    """(name, value in A, value in B) of every field that differs, in frame order; None
    where the field is absent on that side; ``linktypes``: those of A's and B's frames.
    Fields in ``ignore`` are left out. Bytes scapy assigns to no field are named
    ``bytes[i:j]``. Without scapy, or with ``dissect`` False (~2 ms a pair saved), every
    differing byte range is named so, values in hex, ``ignore`` not applied."""
    spans_a, layers_a = field_spans(a, linktype=linktypes[0]) if dissect else ([], [])
    spans_b, layers_b = field_spans(b, linktype=linktypes[1]) if dissect else ([], [])
    if not spans_a and not spans_b:      # no scapy: name differing byte ranges only
        return [(f"bytes[{i}:{j}]", a[i:j].hex() or None, b[i:j].hex() or None)
                for i, j in _runs(_differing_offsets(a, b))]
    by_name_b = {s.name: s for s in spans_b}
    out = []
    if layers_a != layers_b:
        out.append(("layers", "/".join(layers_a), "/".join(layers_b)))
    for span in spans_a:
        other = by_name_b.pop(span.name, None)
        if span.name in ignore:
            continue
        if other is None:
            out.append((span.name, span.value, None))
        elif (span.start, span.bits) == (other.start, other.bits):
            if _bits(a, span) != _bits(b, other):
                out.append((span.name, span.value, other.value))
        elif span.value != other.value or a[span.start // 8:(span.start + span.bits + 7) // 8] != \
                b[other.start // 8:(other.start + other.bits + 7) // 8]:
            out.append((span.name, span.value, other.value))
    out.extend((s.name, None, s.value) for s in by_name_b.values() if s.name not in ignore)
    covered = np.zeros(max(len(a), len(b)), bool)
    for span in spans_a + spans_b:
        covered[span.start // 8:(span.start + span.bits + 7) // 8] = True
    loose = [k for k in _differing_offsets(a, b) if not covered[k]]
    out.extend((f"bytes[{i}:{j}]", a[i:j].hex() or None, b[i:j].hex() or None) for i, j in _runs(loose))
    return out


def _differing_offsets(a: bytes, b: bytes) -> list[int]:
    short = min(len(a), len(b))
    va, vb = np.frombuffer(a, np.uint8, short), np.frombuffer(b, np.uint8, short)
    return np.flatnonzero(va != vb).tolist() + list(range(short, max(len(a), len(b))))


def _runs(offsets: list[int]) -> list[tuple[int, int]]:
    runs = []
    for k in offsets:
        if runs and runs[-1][1] == k:
            runs[-1] = (runs[-1][0], k + 1)
        else:
            runs.append((k, k + 1))
    return runs


def layer_stack(frame: bytes, linktype: int = ETHERNET) -> str:
    """The frame's layers as scapy dissects them, payload bytes left out, a layer with
    options marked: "Ether/Dot1Q/IP+options/UDP" ("?" without scapy)."""
    pkt = dissect(frame, linktype)
    if pkt is None:
        return "?"
    names = [layer.__class__.__name__ + ("+options" if layer.fields.get("options") else "")
             for layer in pkt.iterpayloads()]
    return "/".join(n for n in names if n not in ("Raw", "Padding")) or "Raw"


def summary(frame: bytes, linktype: int = ETHERNET) -> str:
    """scapy's one-line summary ("Ether / IP / UDP 198.18.0.1:9 > 198.18.0.0:9"), or the
    length without scapy."""
    pkt = dissect(frame, linktype)
    return f"{len(frame)} bytes" if pkt is None else f"{pkt.summary()} ({len(frame)} bytes)"
