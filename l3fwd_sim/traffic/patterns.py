"""The traffic patterns of the 2014 l3fwd optimisation (commit 96ff445371, see
``performance_and_traffic_patterns.md`` §1) and two more, as per-port streams.

=====================================  ==================================================
pattern (case-insensitive)             on each input port p
=====================================  ==================================================
``IPV4-CONT-BURST``                    IPv4, every packet to output ``map(p)`` (default p^1)
``IPV6-CONT-BURST``                    the same with IPv6
``IPV4/IPV6-CONT-BURST``               the two interleaved 1:1 (IPv4, IPv6, IPv4, ...);
(``ipv4-ipv6-cont-burst``)             alias without the slash
``IPV4-<K>STREAMSX<G>``                K streams to output ports 0..K-1, G packets of
``IPV6-<K>STREAMSX<G>``                each in turn (``4STREAMSX8``: P0x8, P1x8, P2x8, P3x8, ...)
``random``                             per packet a seeded random choice: 7/8 spread
                                       evenly over the installed routes of both families to
                                       ports 0..ports-1, 1/8 to addresses no route covers
``malformed``                          the categories of ``MALFORMED``, one of each in turn
=====================================  ==================================================

Destinations follow dpdk-l3fwd's default EM flows (198.18.N.1 -> 198.18.N.0 and
2001:200:0:N::1 -> 2001:200:0:N::, port 9 -> 9), which the default LPM/FIB routes send
to port N as well, so the traffic routes identically under lpm, em and fib. With
``--rule_ipv4``/``--rule_ipv6`` the destinations are chosen, and checked with the same
tables ``run`` builds, to route to the intended port under those files.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..dataplane.ports import MAX_PORTS, PortConfig
from ..errors import SimError
from ..l3fwd.em import em_table, rule_key
from ..l3fwd.routing import DEFAULT_ROUTES, installed
from ..l3fwd.rules import EmRule, parse_em_rules, parse_lpm_rules
from ..tables.lpm import Lpm4, Lpm6
from .field_engine import FieldVar, parse_size
from .streams import PortTraffic, Stream, Traffic
from .templates import build_stack, default_eth, template_from_scapy

_K_STREAMS = re.compile(r"ipv([46])-(\d+)streamsx(\d+)")
NAMED_PATTERNS = ("ipv4-cont-burst", "ipv6-cont-burst", "ipv4/ipv6-cont-burst", "random", "malformed")
ALIASES = {"ipv4-ipv6-cont-burst": "ipv4/ipv6-cont-burst"}
PROTOS = {"udp": 17, "tcp": 6}
MISS_SHARE = 1 / 8
# Blocks reserved for documentation (RFC 5737, RFC 3849) and discard (RFC 6666): checked
# against the tables before use, the first one no route covers gives the misses.
_MISS_BLOCKS = {4: ["203.0.113.0/24", "192.0.2.0/24", "198.51.100.0/24"],
                6: ["2001:db8::/120", "100::/120", "2001:db8:ffff::/120"]}
# The malformed mix, one packet of each in turn (what dpdk-l3fwd does with each: README).
MALFORMED = ("ttl0", "ttl1", "bad_checksum", "bad_version", "bad_ihl", "bad_total_length",
             "ipv4_options", "ipv6_ext", "arp", "vlan", "qinq", "unknown_ethertype")
UNKNOWN_ETHERTYPE = 0x88B5   # IEEE 802 local experimental EtherType 1


@dataclass(frozen=True)
class Flow:
    family: int
    src: str
    dst: str
    proto: str = "udp"
    sport: int = 9
    dport: int = 9

    def layers(self, in_port: int, **ip_fields) -> dict:
        ip = "ipv4" if self.family == 4 else "ipv6"
        return {"eth": default_eth(in_port), ip: {"src": self.src, "dst": self.dst, **ip_fields},
                self.proto: {"sport": self.sport, "dport": self.dport}}


def canonical_pattern(name: str) -> str:
    """The pattern's canonical lower-case name, or SimError."""
    key = ALIASES.get(name.lower(), name.lower())
    if key in NAMED_PATTERNS:
        return key
    match = _K_STREAMS.fullmatch(key)
    if match and int(match.group(2)) >= 1 and int(match.group(3)) >= 1:
        return key
    raise SimError(f"unknown pattern {name!r} (choose from IPV4-CONT-BURST, IPV6-CONT-BURST, "
                   "IPV4/IPV6-CONT-BURST, IPV4-<K>STREAMSX<G>, IPV6-<K>STREAMSX<G>, random, malformed)")


def parse_port_map(text: str | None, ports: int) -> dict[int, int]:
    """``--map``: ``IN:OUT,...`` pairs or a plain list of outputs ``OUT0,OUT1,...``.
    Ports not mentioned keep the default p -> p^1 (l3fwd's usual port pairs)."""
    mapping = {p: p ^ 1 for p in range(ports)}
    if not text:
        return mapping
    items = [item.strip() for item in text.split(",")]
    pairs = [item.partition(":") for item in items]
    try:
        if all(colon for _, colon, _ in pairs):
            given = {int(a): int(b) for a, _, b in pairs}
        elif not any(colon for _, colon, _ in pairs):
            given = {i: int(b) for i, b in enumerate(items)}
        else:
            raise ValueError
    except ValueError:
        raise SimError(f"--map {text!r}: expected IN:OUT pairs (0:1,1:0) or a list of outputs (1,0,3,2)") from None
    for a, b in given.items():
        if not 0 <= a < ports:
            raise SimError(f"--map {text!r}: input port {a} is not among the {ports} generated ports")
        if not 0 <= b < MAX_PORTS:
            raise SimError(f"--map {text!r}: output port {b} is out of range 0..{MAX_PORTS - 1}")
    mapping.update(given)
    return mapping


def _rule_grammar(path: Path) -> str:
    """``lpm`` (R<prefix>/<depth> <port>) or ``em`` (6 fields), from the first rule line."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError as err:
        raise SimError(f"{path}: cannot read rule file: {err.strerror}") from None
    for line in lines:
        if line.startswith("R"):
            fields = line[1:].split("#")[0].split()
            return "em" if len(fields) == 6 else "lpm"
    return "lpm"


class _Table:
    """One family's routes as run builds them (every port enabled): LPM and/or EM."""

    def __init__(self, family: int, rule_file: Path | None):
        self.family = family
        self.source = str(rule_file) if rule_file else "the default tables"
        all_ports = PortConfig((1 << MAX_PORTS) - 1)
        kind = _rule_grammar(rule_file) if rule_file else None
        self.lpm = self.em = None
        self.lpm_rules: list = []
        self.em_rules: list[EmRule] = []
        if kind != "em":
            path = rule_file or DEFAULT_ROUTES / f"lpm_default_v{family}.cfg"
            # depth 0 is an rte_fib default route: it never picks a destination
            self.lpm_rules = [r for r in installed(parse_lpm_rules(path, family), all_ports) if r.depth]
            self.lpm = (Lpm4 if family == 4 else Lpm6).from_rules((r.prefix, r.depth, r.port) for r in self.lpm_rules)
        if kind != "lpm":
            path = rule_file or DEFAULT_ROUTES / f"em_default_v{family}.cfg"
            flows = {rule_key(r, family): r for r in installed(parse_em_rules(path, family), all_ports)}
            self.em_rules = list(flows.values())           # a later duplicate overrides
            self.em = em_table(self.em_rules, family)

    def route_of(self, flow: Flow) -> set:
        """The output ports the tables give the flow (None: a miss). The default tables
        hold both LPM routes and EM flows; EM flows are UDP, so a TCP flow is checked
        against the LPM routes only (and a warning says that em mode misses it)."""
        ports = set()
        if self.lpm is not None:
            ports.add(self.lpm.lookup(int(ipaddress.ip_address(flow.dst))))
        if self.em is not None and (self.lpm is None or flow.proto == "udp"):
            rule = EmRule(int(ipaddress.ip_address(flow.dst)), int(ipaddress.ip_address(flow.src)),
                          flow.dport, flow.sport, PROTOS[flow.proto], 0, "")
            ports.add(self.em.lookup(rule_key(rule, self.family)))
        return ports


def _address(family: int, value: int) -> str:
    return str(ipaddress.IPv4Address(value) if family == 4 else ipaddress.IPv6Address(value))


class Destinations:
    """Flows that the generator's route tables send to a given output port."""

    def __init__(self, proto: str, rule_ipv4: Path | None, rule_ipv6: Path | None, warnings: list[str]):
        if proto not in PROTOS:
            raise SimError(f"--proto {proto}: choose udp or tcp")
        self.proto = proto
        self.warnings = warnings
        self._rule_files = {4: rule_ipv4, 6: rule_ipv6}
        self._tables: dict[int, _Table] = {}
        self._flows: dict[tuple[int, int], Flow] = {}

    def table(self, family: int) -> _Table:
        """Built on first use: an LPM table costs a 64 MB tbl24."""
        if family not in self._tables:
            self._tables[family] = _Table(family, self._rule_files[family])
        return self._tables[family]

    def _flows_from_em(self, table: _Table, port_ok) -> list[tuple[int, Flow]]:
        wanted = PROTOS[self.proto]
        flows = []
        for rule in table.em_rules:
            if not port_ok(rule.port):
                continue
            if rule.proto != wanted and table.lpm is None:
                continue                 # an EM-only table: the protocol is part of the key
            flows.append((rule.port, Flow(table.family, _address(table.family, rule.src),
                                          _address(table.family, rule.dst), self.proto,
                                          rule.src_port, rule.dst_port)))
        return flows

    def _flows_from_lpm(self, table: _Table, port_ok) -> list[tuple[int, Flow]]:
        flows = []
        bits = 32 if table.family == 4 else 128
        for rule in table.lpm_rules:
            if not port_ok(rule.port):
                continue
            host_bits = bits - rule.depth
            # the prefix itself, its next and last address: a more specific route may take some
            for host in (0, 1, (1 << host_bits) - 1, (1 << host_bits) // 2):
                dst = rule.prefix | (host & ((1 << host_bits) - 1))
                src = _address(table.family, rule.prefix | (1 & ((1 << host_bits) - 1)))
                flow = Flow(table.family, src, _address(table.family, dst), self.proto)
                if table.route_of(flow) == {rule.port}:
                    flows.append((rule.port, flow))
                    break
        return flows

    def _candidates(self, family: int, port_ok) -> list[tuple[int, Flow]]:
        table = self.table(family)
        found = self._flows_from_em(table, port_ok) if table.em is not None else self._flows_from_lpm(table, port_ok)
        verified, seen = [], set()
        for port, flow in found:
            if table.route_of(flow) == {port} and flow.dst not in seen:
                seen.add(flow.dst)
                verified.append((port, flow))
        return verified

    def flow(self, family: int, port: int) -> Flow:
        """A flow routed to ``port``; under the defaults l3fwd's EM flow ``port``."""
        if (family, port) not in self._flows:
            flows = self._candidates(family, lambda p: p == port)
            if not flows:
                source = self.table(family).source
                hint = " (they cover ports 0..15)" if source == "the default tables" else ""
                raise SimError(f"no IPv{family} {self.proto.upper()} destination routes to port {port} under "
                               f"{source}{hint}; give --rule_ipv{family}")
            self._note_em_protocol(family)
            self._flows[family, port] = flows[0][1]
        return self._flows[family, port]

    def routes(self, family: int, ports: int) -> list[Flow]:
        """One flow per route (or EM flow) to the ports 0..ports-1."""
        self._note_em_protocol(family)
        return [flow for _, flow in self._candidates(family, lambda p: p < ports)]

    def _note_em_protocol(self, family: int) -> None:
        table = self.table(family)
        if table.em is not None and table.lpm is not None and self.proto != "udp":
            note = (f"IPv{family}: dpdk-l3fwd's default EM flows are UDP, so {self.proto.upper()} traffic "
                    "misses under --lookup em (lpm and fib route it as intended)")
            if note not in self.warnings:
                self.warnings.append(note)

    def miss_block(self, family: int) -> tuple[int, int] | None:
        """(first address, size) of a block no route or flow covers, or None."""
        table = self.table(family)
        for block in _MISS_BLOCKS[family]:
            net = ipaddress.ip_network(block)
            first = int(net.network_address)
            if table.lpm is not None:
                if family == 4:
                    keys = np.arange(first, first + net.num_addresses, dtype=np.uint64).astype(np.uint32)
                else:
                    keys = np.frombuffer(b"".join((first + i).to_bytes(16, "big")
                                                  for i in range(net.num_addresses)), np.uint8).reshape(-1, 16)
                if (table.lpm.lookup_bulk(keys, -1) >= 0).any():
                    continue
            if any(r.dst in range(first, first + net.num_addresses) for r in table.em_rules):
                continue
            return first, net.num_addresses
        return None


@dataclass
class PatternOptions:
    pattern: str
    ports: int = 4
    count: int = 1000
    size: str = "64"
    proto: str = "udp"
    port_map: str | None = None
    rule_ipv4: Path | None = None
    rule_ipv6: Path | None = None


def _split(count: int, streams: int, group: int) -> list[int]:
    """Packets of each of ``streams`` streams in the first ``count`` packets of the endless
    round-robin in groups of ``group``."""
    full, rest = divmod(count, streams * group)
    return [full * group + min(max(rest - k * group, 0), group) for k in range(streams)]


def _stream(name: str, layers: dict, count: int, size, fill: bytes = b"x", **template_options) -> Stream:
    return Stream(name, template_from_scapy(build_stack(layers), fill, **template_options), count, size)


def pattern_traffic(opt: PatternOptions, seed: int, rate: float) -> Traffic:
    """The per-port streams of a named pattern."""
    name = canonical_pattern(opt.pattern)
    if not 1 <= opt.ports <= MAX_PORTS:
        raise SimError(f"--ports {opt.ports}: must be in 1..{MAX_PORTS}")
    if opt.count < 0:
        raise SimError(f"--count {opt.count}: must be >= 0")
    size = parse_size(opt.size, "--size")
    warnings: list[str] = []
    dest = Destinations(opt.proto, opt.rule_ipv4, opt.rule_ipv6, warnings)
    port_map = parse_port_map(opt.port_map, opt.ports)
    traffic = Traffic({}, seed, rate, warnings)
    for p in range(opt.ports):
        out = port_map[p]
        if name in ("ipv4-cont-burst", "ipv6-cont-burst"):
            family = 4 if name.startswith("ipv4") else 6
            streams = [_stream(f"ipv{family}-to-p{out}", dest.flow(family, out).layers(p), opt.count, size)]
            order, group = "sequence", 1
        elif name == "ipv4/ipv6-cont-burst":
            counts = _split(opt.count, 2, 1)
            streams = [_stream(f"ipv{f}-to-p{out}", dest.flow(f, out).layers(p), c, size)
                       for f, c in zip((4, 6), counts)]
            order, group = "round-robin", 1
        elif name == "random":
            streams = _random_streams(dest, p, opt, size, np.random.default_rng([seed, p, 7]))
            order, group = "random", 1
        elif name == "malformed":
            streams = _malformed_streams(dest, p, out, opt, size)
            order, group = "round-robin", 1
        else:
            family, k, g = (int(x) for x in _K_STREAMS.fullmatch(name).groups())
            streams = [_stream(f"ipv{family}-to-p{q}", dest.flow(family, q).layers(p), c, size)
                       for q, c in zip(range(k), _split(opt.count, k, g))]
            order, group = "round-robin", g
        traffic.ports[p] = PortTraffic(streams, order, group, size=size)
    return traffic


def _random_streams(dest: Destinations, p: int, opt: PatternOptions, size, rng) -> list[Stream]:
    routed = [flow for family in (4, 6) for flow in dest.routes(family, opt.ports)]
    misses = []
    for family in (4, 6):
        block = dest.miss_block(family)
        if block is None:
            note = (f"random: every IPv{family} test block is routed under {dest.table(family).source}; "
                    f"no IPv{family} misses")
            if note not in dest.warnings:
                dest.warnings.append(note)
            continue
        first, span = block
        src = f"198.18.{p}.1" if family == 4 else f"2001:200:0:{p:x}::1"
        flow = Flow(family, src, _address(family, first), opt.proto)
        misses.append((flow, FieldVar("random", first, first + span - 1)))
    if not routed and not misses:
        raise SimError("random: no route to ports 0..%d and no unrouted block" % (opt.ports - 1))
    weights = [(1 - MISS_SHARE) / len(routed) if misses else 1 / len(routed)] * len(routed) if routed else []
    weights += [(MISS_SHARE if routed else 1.0) / len(misses)] * len(misses)
    counts = rng.multinomial(opt.count, weights)
    streams = [_stream(f"ipv{f.family}-{f.dst}", f.layers(p), int(c), size) for f, c in zip(routed, counts)]
    for (flow, var), count in zip(misses, counts[len(routed):]):
        stream = _stream(f"ipv{flow.family}-miss", flow.layers(p), int(count), size)
        stream.fields.append((f"ipv{flow.family}.dst", var))
        streams.append(stream)
    return streams


def _malformed_streams(dest: Destinations, p: int, out: int, opt: PatternOptions, size) -> list[Stream]:
    from scapy.layers.inet import IP, TCP, UDP, IPOption_EOL, IPOption_NOP
    from scapy.layers.inet6 import IPv6, IPv6ExtHdrHopByHop
    from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether

    v4, v6 = dest.flow(4, out), dest.flow(6, out)
    eth = default_eth(p)
    l4 = (UDP if opt.proto == "udp" else TCP)(sport=v4.sport, dport=v4.dport)
    l4_6 = (UDP if opt.proto == "udp" else TCP)(sport=v6.sport, dport=v6.dport)

    def ip(**kw):
        return IP(src=v4.src, dst=v4.dst, **kw)

    l3 = 14
    packets = {
        "ttl0": (Ether(**eth) / ip(ttl=0) / l4, {}),
        "ttl1": (Ether(**eth) / ip(ttl=1) / l4, {}),
        "bad_checksum": (Ether(**eth) / ip() / l4, {"bad_ipv4_checksum": True}),
        "bad_version": (Ether(**eth) / ip() / l4, {"overrides": ((l3, b"\x55"),)}),
        "bad_ihl": (Ether(**eth) / ip() / l4, {"overrides": ((l3, b"\x44"),)}),
        "bad_total_length": (Ether(**eth) / ip() / l4, {"overrides": ((l3 + 2, b"\x00\x13"),)}),
        "ipv4_options": (Ether(**eth) / ip(options=[IPOption_NOP(), IPOption_NOP(), IPOption_NOP(),
                                                    IPOption_EOL()]) / l4, {}),
        "ipv6_ext": (Ether(**eth) / IPv6(src=v6.src, dst=v6.dst) / IPv6ExtHdrHopByHop() / l4_6, {}),
        "arp": (Ether(dst="ff:ff:ff:ff:ff:ff", src=eth["src"]) /
                ARP(op=1, hwsrc=eth["src"], psrc=v4.src, hwdst="00:00:00:00:00:00", pdst=v4.dst),
                {"fix": False, "fill": b"\0"}),
        "vlan": (Ether(**eth) / Dot1Q(vlan=100) / ip() / l4, {}),
        "qinq": (Ether(**eth) / Dot1AD(vlan=200) / Dot1Q(vlan=100) / ip() / l4, {}),
        "unknown_ethertype": (Ether(type=UNKNOWN_ETHERTYPE, **eth), {"fix": False, "fill": b"\0"}),
    }
    counts = _split(opt.count, len(MALFORMED), 1)
    streams = []
    for name, count in zip(MALFORMED, counts):
        pkt, options = packets[name]
        fill = options.pop("fill", b"x")
        streams.append(Stream(name, template_from_scapy(pkt, fill, **options), count, size))
    return streams
