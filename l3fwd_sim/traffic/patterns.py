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
                                       (ACL rule files: over every rule line the protocol
                                       can hit, deny lines too; 1/8 to flows no line matches)
``malformed``                          the categories of ``MALFORMED``, one of each in turn
=====================================  ==================================================

Destinations follow dpdk-l3fwd's default EM flows (198.18.N.1 -> 198.18.N.0 and
2001:200:0:N::1 -> 2001:200:0:N::, port 9 -> 9), which the default LPM/FIB routes send
to port N as well, so the traffic routes identically under lpm, em and fib. With
``--rule_ipv4``/``--rule_ipv6`` the destinations are chosen, and checked with the same
tables ``run`` builds, to route to the intended port under those files.

An ACL rule file (``--lookup acl``, acl.md) is recognised by its grammar. Each of its
lines gets a flow inside its prefixes, port ranges and protocol mask that the classifier
``run`` builds (fed the key ``run`` reads from these packets' headers) first-matches on
that very line: an earlier overlapping line may shadow part or all of it, so the search
walks the elementary intervals the earlier lines cut the rule's box into.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..capture.records import HEAD_BYTES
from ..dataplane.ports import MAX_PORTS, PortConfig
from ..errors import SimError
from ..numbers import brief, check_range, parse_int
from ..l3fwd.acl import KEY_AT, acl_keys, acl_table
from ..l3fwd.em import em_table, rule_key
from ..l3fwd.routing import DEFAULT_ROUTES, installed
from ..l3fwd.rules import AclRules, EmRule, LpmRuleArrays, lpm_rule_arrays, parse_acl_rules, parse_em_rules
from ..tables.lpm import Lpm4, Lpm6
from .field_engine import FieldVar, parse_size
from .streams import MAX_COUNT, PortTraffic, Stream, Traffic, Variants
from .templates import build_stack, default_eth, template_from_scapy

_K_STREAMS = re.compile(r"ipv([46])-([0-9]+)streamsx([0-9]+)")
_PORT = re.compile(r"[0-9]+")
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
    if _K_STREAMS.fullmatch(key):
        k_streams(name)                  # in range, or say which number is not
        return key
    raise SimError(f"unknown pattern {name!r} (choose from IPV4-CONT-BURST, IPV6-CONT-BURST, "
                   "IPV4/IPV6-CONT-BURST, IPV4-<K>STREAMSX<G>, IPV6-<K>STREAMSX<G>, random, malformed)")


def k_streams(name: str) -> tuple[int, int, int]:
    """(family, K, G) of ``IPV4-<K>STREAMSX<G>``: K streams go to ports 0..K-1, so K is at
    most the port count of l3fwd (RTE_MAX_ETHPORTS); G (packets of a stream per turn) is
    at most a port's packet count."""
    family, k, g = _K_STREAMS.fullmatch(name.lower()).groups()
    return (int(family), parse_int(k, f"pattern {brief(name)}: K", 1, MAX_PORTS),
            parse_int(g, f"pattern {brief(name)}: G", 1, MAX_COUNT))


def parse_port_map(text: str | None, ports: int) -> dict[int, int]:
    """``--map``: ``IN:OUT,...`` pairs or a plain list of outputs ``OUT0,OUT1,...``.
    Ports not mentioned keep the default p -> p^1 (l3fwd's usual port pairs)."""
    mapping = {p: p ^ 1 for p in range(ports)}
    if not text:
        return mapping
    items = [item.strip() for item in text.split(",")]
    pairs = [item.partition(":") for item in items]
    if all(colon for _, colon, _ in pairs):
        given = [(a.strip(), b.strip()) for a, _, b in pairs]
    elif not any(colon for _, colon, _ in pairs):
        given = [(str(i), b) for i, b in enumerate(items)]
    else:
        given = []
    if not given or not all(_PORT.fullmatch(a) and _PORT.fullmatch(b) for a, b in given):
        raise SimError(f"--map {brief(text)}: expected IN:OUT pairs (0:1,1:0) or a list of outputs (1,0,3,2)")
    what = f"--map {brief(text)}:"
    mapping.update({parse_int(a, f"{what} input port", 0, ports - 1):
                    parse_int(b, f"{what} output port", 0, MAX_PORTS - 1) for a, b in given})
    return mapping


# where str.splitlines starts a line: the text's start, or after any of its line boundaries
_LINE_START = "(?:^|(?<=[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]))"
_DENY_LINE = re.compile(_LINE_START + "@")
_FIRST_R_LINE = re.compile(_LINE_START + "R([^\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]*)")


def _rule_grammar(path: Path) -> str:
    """``lpm`` (R<prefix>/<depth> <port>), ``em`` (R + 6 fields) or ``acl`` (acl.md: ``@``
    deny lines, or R lines of ``<src>/<len> <dst>/<len> <lo> : <hi> <lo> : <hi> <proto>/<mask>
    <port>``). A ``@`` line anywhere makes it ACL; otherwise the first R line decides: ACL
    when it has a lone ``:`` token, nine or more fields, or two ``/`` prefixes before
    anything else (so an ACL line with ``0:65535`` gets the ACL parser's message). The
    text is searched whole (a million-line file in milliseconds), not line by line."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError as err:
        raise SimError(f"{path}: cannot read rule file: {err.strerror}") from None
    if "@" in text and _DENY_LINE.search(text):
        return "acl"
    first = _FIRST_R_LINE.search(text)
    if first is None:
        return "lpm"
    fields = first.group(1).split("#")[0].split()
    if ":" in fields or len(fields) >= 9 or (len(fields) >= 2 and "/" in fields[0] and "/" in fields[1]):
        return "acl"
    return "em" if len(fields) == 6 else "lpm"


class _Table:
    """One family's routes as run builds them (every port enabled): LPM and/or EM, or
    an ACL rule file."""

    def __init__(self, family: int, rule_file: Path | None, kind: str | None = None):
        """``kind``: the file's grammar (``_rule_grammar``), when already known."""
        self.family = family
        self.source = str(rule_file) if rule_file else "the default tables"
        kind = kind or (_rule_grammar(rule_file) if rule_file else None)
        self.lpm = self.em = self.acl = None
        self.lpm_rules: LpmRuleArrays | None = None
        self.em_rules: list[EmRule] = []
        self._aims: dict[str, Aims] = {}
        self._em_arrays: Aims | None = None
        if kind == "acl":
            self.acl = _AclRuleFile(family, Path(rule_file))
            return
        if kind != "em":
            path = rule_file or DEFAULT_ROUTES / f"lpm_default_v{family}.cfg"
            rules = lpm_rule_arrays(path, family)         # a million IPv4 routes in a few numpy passes, as run's
            # installed with every port enabled; depth 0 is an rte_fib default route: it never picks a destination
            self.lpm_rules = rules.select(_ALL_PORTS.enabled[rules.port] & (rules.depth > 0))
            self.prefix_words = _address_words(family, self.lpm_rules.prefix)
            self.lpm = Lpm4() if family == 4 else Lpm6()
            self.lpm.build(self.lpm_rules.prefix if family == 4 else _address_bytes(family, *self.prefix_words),
                           self.lpm_rules.depth, self.lpm_rules.port)
        if kind != "lpm":
            path = rule_file or DEFAULT_ROUTES / f"em_default_v{family}.cfg"
            flows = {rule_key(r, family): r for r in installed(parse_em_rules(path, family), _ALL_PORTS)}
            self.em_rules = list(flows.values())           # a later duplicate overrides
            self.em = em_table(self.em_rules, family)

    def aims(self, proto: str) -> Aims:
        """Every flow ``proto`` packets can be aimed with, in rule order, each checked to
        route to its port (ACL: to be first-matched by its line): per LPM route one
        destination inside it (the first of its prefix, next, last and middle address
        that no more specific route takes), per EM flow the flow itself (TCP only with the
        LPM routes beside it: an EM-only table matches the protocol too), per ACL line
        the flow its search found (deny lines too)."""
        if proto not in self._aims:
            if self.acl is not None:
                self._aims[proto] = self.acl.aims(proto)
            else:
                aims = self._em_aims(proto) if self.em is not None else self._lpm_aims()
                self._aims[proto] = aims.select(self.routes_to(aims, proto))
        return self._aims[proto]

    def _lpm_aims(self) -> Aims:
        """Per route, the first of its prefix, next, last and middle address (the prefix
        as written, not masked, ORed with the host part) that the table routes to the
        route's port; the source is the prefix's next address. Routes whose four all go
        elsewhere (more specific routes take them) are left out."""
        rules, family = self.lpm_rules, self.family
        hi, lo = self.prefix_words
        host = (32 if family == 4 else 128) - rules.depth.astype(np.int64)        # host bits, 0..127
        one, zero = np.uint64(1), np.zeros(len(host), np.uint64)
        last_lo = np.where(host >= 64, np.uint64(2**64 - 1), (one << np.minimum(host, 63).astype(np.uint64)) - one)
        last_hi = np.where(host > 64, (one << np.clip(host - 64, 0, 63).astype(np.uint64)) - one, zero)
        half_lo = np.where((host >= 1) & (host <= 64), one << np.clip(host - 1, 0, 63).astype(np.uint64), zero)
        half_hi = np.where(host >= 65, one << np.clip(host - 65, 0, 63).astype(np.uint64), zero)
        next_lo = (host >= 1).astype(np.uint64)
        dst_hi, dst_lo = hi.copy(), lo.copy()
        found = np.zeros(len(host), bool)
        pending = np.arange(len(host))
        for add_hi, add_lo in ((zero, zero), (zero, next_lo), (last_hi, last_lo), (half_hi, half_lo)):
            c_hi, c_lo = hi[pending] | add_hi[pending], lo[pending] | add_lo[pending]
            keys = c_lo.astype(np.uint32) if family == 4 else _address_bytes(family, c_hi, c_lo)
            hit = self.lpm.lookup_bulk(keys, -1) == rules.port[pending]
            at = pending[hit]
            dst_hi[at], dst_lo[at], found[at] = c_hi[hit], c_lo[hit], True
            pending = pending[~hit]
        keep = np.flatnonzero(found)
        nine = np.full(len(keep), 9, np.int64)                  # UDP/TCP ports 9 -> 9, as l3fwd's EM flows
        src = _address_bytes(family, hi[keep], lo[keep] | next_lo[keep])           # the prefix's next address
        return Aims(family, rules.port[keep].astype(np.int64), src, _address_bytes(family, dst_hi[keep], dst_lo[keep]),
                    nine, nine.copy())

    def em_flows(self) -> Aims:
        """Every EM flow of the table, in rule order (its ``proto`` array their own protocols)."""
        if self._em_arrays is None:
            rules, family = self.em_rules, self.family
            n = len(rules)

            def column(name):
                return np.fromiter((getattr(r, name) for r in rules), np.int64, n)

            def addresses(name):
                return _address_bytes(family, *_address_words(family, [getattr(r, name) for r in rules]))
            self._em_arrays = Aims(family, column("port"), addresses("src"), addresses("dst"), column("src_port"),
                                   column("dst_port"), proto=column("proto"))
        return self._em_arrays

    def _em_aims(self, proto: str) -> Aims:
        """The EM flows as flows of ``proto``: all of them beside LPM routes (the default
        tables), else only those of that protocol."""
        flows = self.em_flows()
        return flows if self.lpm is not None else flows.select(flows.proto == PROTOS[proto])

    def routes_to(self, aims: Aims, proto: str) -> np.ndarray:
        """Whether each aim's flow, sent as ``proto``, gets its port from every table
        there is. The default tables hold both LPM routes and EM flows; EM flows are UDP,
        so a TCP flow is checked against the LPM routes only (and a warning says that em
        mode misses it)."""
        ok = np.ones(len(aims), bool)
        if self.lpm is not None:
            keys = aims.dst_words()[1].astype(np.uint32) if self.family == 4 else aims.dst
            ok &= self.lpm.lookup_bulk(keys, -1) == aims.port
        if self.em is not None and (self.lpm is None or proto == "udp"):
            ok &= self.em.lookup_bulk(aims.em_keys(PROTOS[proto]), -1) == aims.port
        return ok


_ALL_PORTS = PortConfig((1 << MAX_PORTS) - 1)
_NAMED_AIMS = 4096         # a family with more aims is counted as one stream in the summary (names cost per aim)


def _address(family: int, value: int) -> str:
    return str(ipaddress.IPv4Address(value) if family == 4 else ipaddress.IPv6Address(value))


def _address_words(family: int, values) -> tuple[np.ndarray, np.ndarray]:
    """Addresses (a uint32 array, or any sequence of ints) as (high, low) uint64 words;
    the high words of IPv4 addresses are 0."""
    if family == 4:
        lo = np.asarray(values, np.uint64) if isinstance(values, np.ndarray) else \
            np.fromiter(values, np.uint64, len(values))
        return np.zeros(len(lo), np.uint64), lo
    raw = b"".join(int(v).to_bytes(16, "big") for v in values)            # IPv6: Python ints, as the parser gives
    words = np.frombuffer(raw, ">u8").reshape(-1, 2).astype(np.uint64)
    return words[:, 0].copy(), words[:, 1].copy()


def _address_bytes(family: int, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """(n, 4) or (n, 16) uint8 addresses in network order, from their (high, low) words."""
    if family == 4:
        return np.ascontiguousarray(lo.astype(">u4").view(np.uint8).reshape(-1, 4))
    out = np.empty((len(lo), 2), ">u8")
    out[:, 0], out[:, 1] = hi, lo
    return out.view(np.uint8).reshape(-1, 16)


@dataclass
class Aims:
    """Flows of one family as arrays, in rule order: aim k is ``src[k] -> dst[k]``,
    L4 ports ``sport[k] -> dport[k]``, meant for output ``port[k]`` (-1: an ACL deny
    line). ``line``: ACL aims' rule lines; ``proto``: EM flows' own protocol."""
    family: int
    port: np.ndarray                  # int64
    src: np.ndarray                   # (n, 4 | 16) uint8, network order
    dst: np.ndarray
    sport: np.ndarray                 # int64
    dport: np.ndarray
    line: np.ndarray | None = None
    proto: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.port)

    def select(self, keep: np.ndarray) -> Aims:
        return Aims(self.family, self.port[keep], self.src[keep], self.dst[keep], self.sport[keep], self.dport[keep],
                    None if self.line is None else self.line[keep], None if self.proto is None else self.proto[keep])

    def first_per_destination(self) -> Aims:
        """The first aim of each destination address, in rule order."""
        hi, lo = self.dst_words()
        order = np.lexsort((lo, hi))                   # stable: equal addresses stay in rule order
        first = np.ones(len(order), bool)
        first[1:] = (hi[order[1:]] != hi[order[:-1]]) | (lo[order[1:]] != lo[order[:-1]])
        return self.select(np.sort(order[first]))

    @staticmethod
    def _words(addresses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if addresses.shape[1] == 4:
            return np.zeros(len(addresses), np.uint64), addresses.view(">u4")[:, 0].astype(np.uint64)
        words = addresses.view(">u8").astype(np.uint64)
        return words[:, 0], words[:, 1]

    def dst_words(self) -> tuple[np.ndarray, np.ndarray]:
        return self._words(self.dst)

    def em_keys(self, proto: int) -> np.ndarray:
        """l3fwd's EM key of each aim's flow sent as ``proto`` (``em.rule_key``)."""
        (src_hi, src_lo), (dst_hi, dst_lo) = self._words(self.src), self._words(self.dst)
        tail = np.uint64(proto) << np.uint64(32) | self.sport.astype(np.uint64) << np.uint64(16) \
            | self.dport.astype(np.uint64)
        if self.family == 4:
            return np.stack([src_lo << np.uint64(32) | dst_lo, tail], axis=1)
        return np.stack([src_hi, src_lo, dst_hi, dst_lo, tail], axis=1)

    def flow(self, k: int, proto: str) -> Flow:
        src, dst = (int.from_bytes(a[k].tobytes(), "big") for a in (self.src, self.dst))
        return Flow(self.family, _address(self.family, src), _address(self.family, dst), proto,
                    int(self.sport[k]), int(self.dport[k]))

    def names(self) -> list[str]:
        """Each aim's stream name: ``ipv4-<destination>``, ACL ``ipv4-line<N>-p<port>`` or
        ``ipv4-line<N>-deny``."""
        if self.line is not None:
            return [f"ipv{self.family}-line{line}-" + (f"p{port}" if port >= 0 else "deny")
                    for line, port in zip(self.line.tolist(), self.port.tolist())]
        return [f"ipv{self.family}-{_address(self.family, int.from_bytes(row, 'big'))}"
                for row in map(bytes, self.dst)]

    def values(self, proto: str) -> dict[str, np.ndarray]:
        """The header fields that differ between aims, per aim, as a stream's variants
        write them."""
        ports = {name: np.ascontiguousarray(values.astype(">u2").view(np.uint8).reshape(-1, 2))
                 for name, values in (("sport", self.sport), ("dport", self.dport))}
        return {f"ipv{self.family}.src": self.src, f"ipv{self.family}.dst": self.dst,
                f"{proto}.sport": ports["sport"], f"{proto}.dport": ports["dport"]}


_ACL_SEARCH = 2000         # boxes looked at per rule that earlier lines overlap, at most


@dataclass(frozen=True)
class AclTarget:
    """An ACL rule line and the flow aimed at it, or why there is none."""
    index: int                 # rule number in file order (its priority rank)
    where: str                 # file:line
    port: int                  # output port, or -1 for a deny (@) line
    flow: Flow | None
    why: str = ""              # no flow: "proto" (the protocol cannot match), "shadowed" (earlier lines
                               # take every packet), "not found" (none in _ACL_SEARCH boxes)

    @property
    def line(self) -> str:
        return self.where.rpartition(":")[2]


def _ints(words: np.ndarray) -> list[int]:
    """Addresses given as 32-bit words, most significant first, as Python ints."""
    out = []
    for row in words.tolist():
        value = 0
        for word in row:
            value = value << 32 | word
        out.append(value)
    return out


def _header_bytes(family: int, proto: int, src, dst, sport, dport) -> np.ndarray:
    """The first HEAD_BYTES of Ether/IPv4 (IHL 5) or Ether/IPv6 frames with an L4 header
    carrying these addresses and ports (what ``generate`` writes), as ``run`` holds them."""
    n = len(src)
    heads = np.zeros((n, HEAD_BYTES), np.uint8)
    width = 4 if family == 4 else 16
    heads[:, 12:15] = (0x08, 0x00, 0x45) if family == 4 else (0x86, 0xDD, 0x60)
    proto_at, src_at, dst_at, l4_at = KEY_AT[family]     # where run's ACL key reads them
    heads[:, proto_at] = proto
    for at, values in ((src_at, src), (dst_at, dst)):
        raw = b"".join(int(v).to_bytes(width, "big") for v in values)
        heads[:, at:at + width] = np.frombuffer(raw, np.uint8).reshape(n, width)
    for at, values in ((l4_at, sport), (l4_at + 2, dport)):
        values = np.asarray(values, np.int64)
        heads[:, at], heads[:, at + 1] = values >> 8, values & 0xFF
    return heads


def _box_flow(lo: list[int], hi: list[int]) -> tuple:
    """A flow in the box (source, destination, source port, destination port): addresses
    at the start + 1 (the start itself for a single address), port 9 where the range
    has it, else its low end."""
    addresses = [a + 1 if b > a else a for a, b in zip(lo[:2], hi[:2])]
    ports = [9 if a <= 9 <= b else a for a, b in zip(lo[2:], hi[2:])]
    return (*addresses, *ports)


class _AclRuleFile:
    """One family's ACL rule file as ``run --lookup acl`` builds it, and the flows that
    its lines first-match.

    A rule is a box: an interval per field (source, destination, source port,
    destination port) and a protocol mask. For each rule the protocol admits, a flow
    with addresses at the prefix start + 1 (source and destination) and port 9 where the
    range has it (else its low end) is tried first. If an earlier line takes it, the
    boxes of the earlier lines the protocol admits are subtracted from the rule's box,
    depth first, until a piece that none of them touches is left (its flow is taken) or
    none is (the rule is shadowed), looking at ``_ACL_SEARCH`` pieces at most. Every flow
    kept is checked: the classifier first-matches it on its rule."""

    def __init__(self, family: int, path: Path):
        self.family = family
        self.path = path
        self.rules: AclRules = parse_acl_rules(path, family)
        self.table = acl_table(self.rules)
        bits = 32 if family == 4 else 128
        rules = self.rules
        fields = []
        for words, length in ((rules.src, rules.src_len), (rules.dst, rules.dst_len)):
            host = [bits - n for n in length.tolist()]
            lo = [(v >> h) << h for v, h in zip(_ints(words), host)]
            fields.append((lo, [v | ((1 << h) - 1) for v, h in zip(lo, host)]))
        fields += [(r[:, 0].tolist(), r[:, 1].tolist()) for r in (rules.sport, rules.dport)]
        dtype = np.int64 if family == 4 else object        # 128-bit bounds stay Python ints
        self.lo = np.array([lo for lo, _ in fields], dtype).T.reshape(len(rules), 4)
        self.hi = np.array([hi for _, hi in fields], dtype).T.reshape(len(rules), 4)
        # a box is compared with many lines' bounds at once, every field in one numpy call:
        # IPv4's int64 bounds as they are, IPv6's 128-bit ones as (high, low) uint64 words,
        # (n, 4) each (numpy would compare the Python ints of the object arrays one by one)
        self._words = None
        if family == 6:
            words = [[_address_words(6, side) for side in pair] for pair in fields]      # [field][side] -> (hi, lo)
            self._words = [tuple(np.stack([words[f][side][half] for f in range(4)], axis=1) for half in (0, 1))
                           for side in (0, 1)]
        self._targets: dict[str, list[AclTarget]] = {}

    def _touch_cover(self, rows, box_lo: list[int], box_hi: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Which of the lines ``rows`` (indexes, or a slice) share a point of every field
        with the box, and which contain it whole: every field compared at once."""
        if self._words is None:
            e_lo, e_hi = self.lo[rows], self.hi[rows]
            b_lo, b_hi = np.array(box_lo, np.int64), np.array(box_hi, np.int64)
            return ((e_lo <= b_hi) & (e_hi >= b_lo)).all(axis=1), ((e_lo <= b_lo) & (e_hi >= b_hi)).all(axis=1)
        e_lo, e_hi = ((high[rows], low[rows]) for high, low in self._words)
        b_lo, b_hi = ((np.array([v >> 64 for v in box], np.uint64), np.array([v & (2**64 - 1) for v in box], np.uint64))
                      for box in (box_lo, box_hi))

        def at_most(a, b):            # a <= b, each a (high words, low words) pair
            return (a[0] < b[0]) | ((a[0] == b[0]) & (a[1] <= b[1]))
        return ((at_most(e_lo, b_hi) & at_most(b_lo, e_hi)).all(axis=1),
                (at_most(e_lo, b_lo) & at_most(b_hi, e_hi)).all(axis=1))

    def classify(self, proto: int, flows: list[tuple]) -> np.ndarray:
        """First matching rule (or -1) of each (src, dst, sport, dport) flow of ``proto``,
        from the key ``run`` reads out of the packets' headers."""
        if not flows:
            return np.zeros(0, np.int64)
        src, dst, sport, dport = zip(*flows)
        heads = _header_bytes(self.family, proto, src, dst, sport, dport)
        return self.table.classify(acl_keys(heads, np.arange(len(heads)), self.family))

    def _flow(self, proto: str, cell: tuple) -> Flow:
        src, dst, sport, dport = cell
        return Flow(self.family, _address(self.family, int(src)), _address(self.family, int(dst)), proto,
                    int(sport), int(dport))

    def targets(self, proto: str) -> list[AclTarget]:
        """Per rule line, in file order, the flow aimed at it (or why there is none)."""
        if proto in self._targets:
            return self._targets[proto]
        number = PROTOS[proto]
        rules = self.rules
        admits = (number & rules.proto_mask) == (rules.proto & rules.proto_mask)
        candidates = np.flatnonzero(admits).tolist()
        first_try = [self._natural(i) for i in candidates]
        hits = self.classify(number, first_try).tolist()
        cells = {i: cell for i, cell, hit in zip(candidates, first_try, hits) if hit == i}
        why = {i: "proto" for i in np.flatnonzero(~admits).tolist()}
        for i in candidates:
            if i not in cells:
                cell, exhaustive = self._search(i, number, admits)
                if cell is not None:
                    cells[i] = cell
                else:
                    why[i] = "shadowed" if exhaustive else "not found"
        kept = sorted(cells)
        if (self.classify(number, [cells[i] for i in kept]) != kept).any():       # the flows as generated
            raise AssertionError(f"{self.path}: a flow is not first-matched by the line it was chosen for")
        self._targets[proto] = [
            AclTarget(i, rules.where[i], int(rules.port[i]),
                      self._flow(proto, cells[i]) if i in cells else None, why.get(i, ""))
            for i in range(len(rules))]
        return self._targets[proto]

    def aims(self, proto: str) -> Aims:
        """The flows of :meth:`targets` as arrays, in line order (lines without one left out)."""
        kept = [t for t in self.targets(proto) if t.flow is not None]
        family = self.family

        def addresses(name: str) -> np.ndarray:
            values = [int(ipaddress.ip_address(getattr(t.flow, name))) for t in kept]
            return _address_bytes(family, *_address_words(family, values))
        return Aims(family, np.array([t.port for t in kept], np.int64), addresses("src"), addresses("dst"),
                    np.array([t.flow.sport for t in kept], np.int64), np.array([t.flow.dport for t in kept], np.int64),
                    line=np.array([int(t.line) for t in kept], np.int64))

    def _natural(self, i: int) -> tuple:
        """The first flow tried for rule i: prefix start + 1, port 9 (or the range's low end)."""
        return _box_flow(self.lo[i].tolist(), self.hi[i].tolist())

    def _search(self, i: int, proto: int, admits: np.ndarray) -> tuple[tuple | None, bool]:
        """A flow in rule i's box that no earlier line admitting ``proto`` matches, and
        whether the search was complete (None and complete: the rule is shadowed)."""
        lo, hi = self.lo, self.hi
        earlier = np.flatnonzero(admits[:i] & self._touch_cover(slice(0, i), lo[i].tolist(), hi[i].tolist())[0])
        stack = [(lo[i].tolist(), hi[i].tolist(), earlier)]
        for _ in range(_ACL_SEARCH):
            if not stack:
                return None, True
            box_lo, box_hi, others = stack.pop()
            touch, cover = self._touch_cover(others, box_lo, box_hi)
            if cover.any():
                continue                                   # an earlier line takes this whole piece
            others = others[touch]
            if not len(others):
                return _box_flow(box_lo, box_hi), True
            # the piece minus the first line touching it: up to two slabs per field
            e_lo, e_hi = lo[others[0]].tolist(), hi[others[0]].tolist()
            rest = others[1:]
            cut_lo, cut_hi = list(box_lo), list(box_hi)
            pieces = []
            for f in range(4):
                if cut_lo[f] < e_lo[f]:
                    pieces.append((cut_lo[:f] + [cut_lo[f]] + cut_lo[f + 1:],
                                   cut_hi[:f] + [e_lo[f] - 1] + cut_hi[f + 1:], rest))
                    cut_lo[f] = e_lo[f]
                if cut_hi[f] > e_hi[f]:
                    pieces.append((cut_lo[:f] + [e_hi[f] + 1] + cut_lo[f + 1:],
                                   cut_hi[:f] + [cut_hi[f]] + cut_hi[f + 1:], rest))
                    cut_hi[f] = e_hi[f]
            stack.extend(reversed(pieces))
        return None, not stack

    def miss(self, proto: str, sources: list[int], blocks: list[str]) -> tuple[int, int, int] | None:
        """(source, first address, size) of a test block that, sent from that source with
        ports 9 -> 9, matches no line; None when every block matches something."""
        for block in blocks:
            net = ipaddress.ip_network(block)
            first = int(net.network_address)
            for src in sources:
                flows = [(src, first + k, 9, 9) for k in range(net.num_addresses)]
                if (self.classify(PROTOS[proto], flows) < 0).all():
                    return src, first, net.num_addresses
        return None


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
        self._miss_blocks: dict[int, tuple[int, int] | None] = {}
        self._grammars: dict[int, str | None] = {}
        self._targets: dict[tuple[int, int], Aims] = {}

    def table(self, family: int) -> _Table:
        """Built on first use: an LPM table costs a 64 MB tbl24."""
        if family not in self._tables:
            self._tables[family] = _Table(family, self._rule_files[family], self._grammar(family))
            other = 10 - family
            if self._rule_files[family] is None and self._rule_files[other] is not None \
                    and self._grammar(other) == "acl":
                self.warn(f"IPv{family} flows follow the default LPM/EM tables: no --rule_ipv{family} was given, "
                           f"and --lookup acl needs an ACL rule file for both families")
        return self._tables[family]

    def _grammar(self, family: int) -> str | None:
        """The grammar of the family's rule file (read once), or None without one."""
        if family not in self._grammars:
            path = self._rule_files[family]
            self._grammars[family] = _rule_grammar(path) if path is not None else None
        return self._grammars[family]

    def warn(self, note: str) -> None:
        if note not in self.warnings:
            self.warnings.append(note)

    def flow(self, family: int, port: int) -> Flow:
        """A flow routed to ``port``; under the defaults l3fwd's EM flow ``port``."""
        if (family, port) not in self._flows:
            aims = self.table(family).aims(self.proto)
            at = np.flatnonzero(aims.port == port)
            if not len(at):
                source = self.table(family).source
                if self.table(family).acl is not None:
                    raise SimError(f"no IPv{family} {self.proto.upper()} flow routes to port {port} under {source}: "
                                   f"no R line to port {port} is the first match of any {self.proto.upper()} packet")
                hint = " (they cover ports 0..15)" if source == "the default tables" else ""
                raise SimError(f"no IPv{family} {self.proto.upper()} destination routes to port {port} under "
                               f"{source}{hint}; give --rule_ipv{family}")
            self._note_em_protocol(family)
            self._flows[family, port] = aims.flow(int(at[0]), self.proto)
        return self._flows[family, port]

    def targets(self, family: int, ports: int) -> Aims:
        """The ``random`` pattern's aims: one flow per route (or EM flow) to the ports
        0..ports-1, one per destination; under an ACL rule file one per rule line, route
        and deny lines alike, that the protocol can hit (the others are warned about)."""
        table = self.table(family)
        if table.acl is None:
            self._note_em_protocol(family)
            if (family, ports) not in self._targets:
                aims = table.aims(self.proto)
                self._targets[family, ports] = aims.select(np.flatnonzero(aims.port < ports)).first_per_destination()
            return self._targets[family, ports]
        found = table.acl.targets(self.proto)           # each flow checked against run's classifier
        proto = self.proto.upper()
        for why, text in (("proto", f"their proto/mask admits no {proto} ({PROTOS[self.proto]})"),
                          ("shadowed", f"earlier lines match every {proto} packet they match"),
                          ("not found", f"the search for a {proto} packet they match first gave up")):
            lines = [t.line for t in found if t.why == why]
            if lines:
                shown = ", ".join(lines[:12]) + (", ..." if len(lines) > 12 else "")
                self.warn(f"random: {len(lines)} of the {len(found)} rules of {table.source} get no traffic: "
                           f"{text} (line{'s' if len(lines) > 1 else ''} {shown})")
        return table.aims(self.proto)

    def miss(self, family: int, in_port: int) -> tuple[Flow, FieldVar] | None:
        """A stream of destinations nothing routes (ACL: that no line matches), from a
        source of input port ``in_port``, or None."""
        src = f"198.18.{in_port}.1" if family == 4 else f"2001:200:0:{in_port:x}::1"
        table = self.table(family)
        if table.acl is not None:
            # the source is part of the key: the port's usual source, else one from a test block
            sources = [int(ipaddress.ip_address(src))] + [int(ipaddress.ip_network(b).network_address) + 1
                                                          for b in _MISS_BLOCKS[family]]
            found = table.acl.miss(self.proto, sources, _MISS_BLOCKS[family])
            if found is None:
                return None
            source, first, span = found
            src = _address(family, source)
        else:
            block = self.miss_block(family)
            if block is None:
                return None
            first, span = block
        return Flow(family, src, _address(family, first), self.proto), FieldVar("random", first, first + span - 1)

    def note_acl_ports(self, ports: int) -> None:
        """Warn when a built ACL table routes to ports beyond the generated inputs:
        ``run``'s default portmask is the inputs, and dpdk-l3fwd refuses an ACL rule
        file routing to a port it does not enable."""
        for family, table in sorted(self._tables.items()):
            if table.acl is None:
                continue
            routed = sorted(set(table.acl.rules.port[table.acl.rules.port >= 0].tolist()))
            beyond = [p for p in routed if p >= ports]
            if not beyond:
                continue
            if beyond[-1] >= MAX_PORTS:
                self.warn(f"{table.source} routes to port {beyond[-1]}: dpdk-l3fwd has ports 0..{MAX_PORTS - 1} "
                           "and refuses this rule file under any portmask")
            else:
                mask = (1 << ports) - 1
                for p in beyond:
                    mask |= 1 << p
                self.warn(f"{table.source} routes to port{'s' if len(beyond) > 1 else ''} "
                           f"{', '.join(map(str, beyond))}, beyond the {ports} generated ports: run it with "
                           f"-p 0x{mask:x} (dpdk-l3fwd refuses ACL rules to ports it does not enable)")

    def _note_em_protocol(self, family: int) -> None:
        table = self.table(family)
        if table.em is not None and table.lpm is not None and self.proto != "udp":
            note = (f"IPv{family}: dpdk-l3fwd's default EM flows are UDP, so {self.proto.upper()} traffic "
                    "misses under --lookup em (lpm and fib route it as intended)")
            if note not in self.warnings:
                self.warnings.append(note)

    def miss_block(self, family: int) -> tuple[int, int] | None:
        """(first address, size) of a block no route or flow covers, or None."""
        if family not in self._miss_blocks:
            self._miss_blocks[family] = self._find_miss_block(family)
        return self._miss_blocks[family]

    def _find_miss_block(self, family: int) -> tuple[int, int] | None:
        table = self.table(family)
        flows = table.em_flows() if table.em is not None else None
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
            if flows is not None:
                hi, lo = (np.uint64(first >> 64), np.uint64(first & (2**64 - 1)))
                dst_hi, dst_lo = flows.dst_words()          # a block is aligned: its low words do not wrap
                if ((dst_hi == hi) & (dst_lo >= lo) & (dst_lo - lo < np.uint64(net.num_addresses))).any():
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
    check_range(opt.count, "--count", 0, MAX_COUNT)
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
            family, k, g = k_streams(name)
            streams = [_stream(f"ipv{family}-to-p{q}", dest.flow(family, q).layers(p), c, size)
                       for q, c in zip(range(k), _split(opt.count, k, g))]
            order, group = "round-robin", g
        traffic.ports[p] = PortTraffic(streams, order, group, size=size)
    dest.note_acl_ports(opt.ports)
    return traffic


def _random_streams(dest: Destinations, p: int, opt: PatternOptions, size, rng) -> list[Stream]:
    """Per family, one stream whose variants are its aims (``Variants``: one template,
    per aim its addresses and ports), then the misses. The packets are spread as they
    would be over a stream per aim: the same multinomial draw over every aim in turn."""
    routed = [aims for aims in (dest.targets(family, opt.ports) for family in (4, 6)) if len(aims)]
    aimed = sum(map(len, routed))
    misses = []
    for family in (4, 6):
        miss = dest.miss(family, p)
        if miss is None:
            table = dest.table(family)
            what = "matches a rule (route or deny line) of" if table.acl is not None else "is routed under"
            dest.warn(f"random: every IPv{family} test block {what} {table.source}; no IPv{family} misses")
            continue
        misses.append(miss)
    if not aimed and not misses:
        raise SimError("random: no route to ports 0..%d and no unrouted block" % (opt.ports - 1))
    weights = [np.full(aimed, (1 - MISS_SHARE) / aimed if misses else 1 / aimed)] if aimed else []
    weights += [np.full(len(misses), (MISS_SHARE if aimed else 1.0) / len(misses))] if misses else []
    counts = rng.multinomial(opt.count, np.concatenate(weights))
    streams, at = [], 0
    for aims in routed:
        flow = aims.flow(0, dest.proto)
        names = aims.names() if len(aims) <= _NAMED_AIMS else None
        variants = Variants(counts[at:at + len(aims)].astype(np.int64), aims.values(dest.proto), names)
        stream = _stream(f"ipv{flow.family}-" + ("lines" if aims.line is not None else "routes"), flow.layers(p),
                         int(variants.counts.sum()), size)
        stream.variants = variants
        streams.append(stream)
        at += len(aims)
    for (flow, var), count in zip(misses, counts[at:]):
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
