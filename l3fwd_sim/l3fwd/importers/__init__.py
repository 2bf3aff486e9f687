"""``rules import``: real routing tables into dpdk-l3fwd LPM rule files::

    from l3fwd_sim.l3fwd.importers import ImportOptions, import_routes
    report = import_routes(ImportOptions(sources=[Path("iproute.txt")], prefix="mytable"))
    report.outputs          # {4: Path("mytable_v4.cfg"), 6: Path("mytable_v6.cfg")}
    report.ports            # {"eth0": 0, "eth1": 1}: interface, next hop or peer -> port
    report.counts           # {"default": 1, "duplicate": 2, ...}: findings by kind
    report.text_chunks()    # what the command prints; report.to_dict(): what --json prints

Sources (each detected by its content, or as ``source_format`` says): ``ip route`` /
``ip -6 route`` text (``ip-route``), ``ip -j route`` JSON (``ip-route-json``), FRR's
``show ip route json`` (``frr-json``), BIRD's ``show route`` (``bird``) and MRT RIB dumps
(``mrt``), any of them gzip-, bzip2- or xz-compressed. Every route of every source
becomes at most one rule line; a route l3fwd cannot hold is a *finding*, one per route,
``WHERE: ROUTE  — WHAT``, and so is a route that is changed to fit (multipath):

* read before routes are compared: ``other-table`` (``ip route show table all``: only the
  main table is imported), ``tos``, ``source-specific`` (``from``);
* ``duplicate``: a second route to the same prefix (address masked to its length). The
  import writes each prefix once, the route the source itself uses: the lowest metric
  (``ip route``), else the first. (l3fwd would take the *last* of two lines: rte_lpm_add
  of a present prefix replaces its next hop.)
* ``blackhole``, ``unreachable``, ``prohibit``, ``throw``, ``local``, ``broadcast``,
  ``multicast``, ``anycast``, ``nat``, ``xresolve``: routes that do not forward (l3fwd
  has no route that drops: the prefix's addresses then follow a shorter prefix, or miss);
* ``default``: depth 0, refused by rte_lpm (l3fwd exits); written with ``lookup="fib"``,
  where it is rte_fib's default route;
* ``link-local``, ``loopback``, ``multicast``: prefixes inside fe80::/10, 169.254.0.0/16,
  127.0.0.0/8, ::1, 224.0.0.0/4, ff00::/8 — never forwarded;
* ``no-next-hop``: a route with neither next hop, interface nor peer;
* ``no-port``: ``ports`` given, and none for the route's next hops;
* ``port-range``: ports by first appearance ran past 31 (l3fwd's portmask has 32 bits);
* ``multipath`` (written): ECMP next hops, of which l3fwd's LPM holds one: the first (with
  ``ports``: the first that has a port) is kept.

Alternatives the router does not use are counted, not listed: BIRD's routes without
``*``, FRR's entries without ``selected``, and the other paths of an MRT prefix (every
peer's path is in the dump; the first is kept — with ``ports``, the first whose peer, or
else next hop, has a port).

A route's port: with ``ports`` (``{"eth0": 0, "192.0.2.1": 2}``), the port of its BGP
peer (MRT), else of its next hop, else of its interface; without, each interface (MRT:
each peer) gets the next port in order of first appearance among the routes written.
Outputs are written whole or not at all (temporary files renamed into place); inputs are
only read.
"""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import re
import socket
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...capture.atomic import AtomicFile
from ...capture.outdir import publish_files
from ...capture.pcap import paused_gc
from ...dataplane.ports import MAX_PORTS
from ...errors import SimError
from ...numbers import brief
from ...text import printable
from . import bird, frr, iproute, mrt
from .table import KINDS, SKIPS, UNICAST, Routes, canonical_address

FORMATS = ("ip-route", "ip-route-json", "frr-json", "bird", "mrt")
LOOKUPS = ("lpm", "fib")

# findings, in the order a route is checked (the first that applies is its finding)
FINDINGS = ("other-table", "tos", "source-specific", "duplicate", *KINDS[1:], "default", "link-local",
            "loopback", "multicast", "no-next-hop", "no-port", "port-range", "multipath")
_F = {name: code + 1 for code, name in enumerate(dict.fromkeys(FINDINGS))}     # 0: written as it is
_NAMES = {code: name for name, code in _F.items()}
_WHAT = {
    "other-table": "not in the main table: only the main table is imported (dump another one alone: "
                   "ip route show table N)",
    "tos": "a TOS-specific route: l3fwd's LPM does not look at the TOS",
    "source-specific": "a source-specific route (from ...): l3fwd's LPM looks at the destination only",
    "default": "default route: rte_lpm refuses depth 0 (l3fwd exits); --lookup fib writes it (rte_fib's "
               "default next hop)",
    "link-local": "link-local prefix: never forwarded",
    "loopback": "loopback prefix: never forwarded",
    "no-next-hop": "no next hop, interface or peer",
    "local": "local route (the router's own address): l3fwd does not deliver locally",
}
_DROPS = "l3fwd has no route that drops: its addresses follow a shorter prefix, or miss"
DPDK_LPM_MAX_RULES = 1024           # l3fwd_lpm.c: IPV4_L3FWD_LPM_MAX_RULES, IPV6_L3FWD_LPM_MAX_RULES
DPDK_LPM_TBL8S = 256                # l3fwd_lpm.c: IPV4_L3FWD_LPM_NUMBER_TBL8S
DPDK_FIB_MAX_ROUTES = {4: 1 << 16, 6: (1 << 16) - 1}     # l3fwd_fib.c: max_routes


@dataclass
class ImportOptions:
    """What to import and where to write it. ``sources``: paths (``"-"``: standard
    input); ``prefix`` names the outputs ``<prefix>_v4.cfg`` and ``<prefix>_v6.cfg``, or
    ``rule_ipv4`` and ``rule_ipv6`` name them; ``source_format``: one of :data:`FORMATS`
    for every source (None: detected); ``ports``: interface / next hop / peer address ->
    port 0..31 (None: by first appearance); ``lookup``: ``"fib"`` writes default routes."""
    sources: list
    prefix: str | Path | None = None
    rule_ipv4: Path | None = None
    rule_ipv6: Path | None = None
    source_format: str | None = None
    ports: dict | None = None
    lookup: str = "lpm"


@dataclass
class Source:
    """A source as read: its name in messages (``<stdin>`` for ``-``), its format, its routes."""
    name: str
    format: str
    routes: int = 0


@dataclass
class ImportReport:
    """What an import read and wrote: per family the file and its routes (``outputs``,
    ``written``), the ports (``ports_given``: from ``ports``, else by first appearance),
    the findings by kind (``counts``), the alternatives not read (``not_selected``: BIRD,
    FRR; ``several_paths``: MRT prefixes with more than one path), the MRT records left out
    by what they are (``ignored``), and ``warnings`` (an empty family, dpdk-l3fwd's limits)."""
    sources: list[Source]
    outputs: dict[int, Path]
    written: dict[int, int]
    ports: dict[str, int]
    ports_given: bool
    counts: dict[str, int]
    not_selected: int
    several_paths: int
    ignored: dict[str, int]
    warnings: list[str]
    _table: "_Resolved" = field(repr=False, default=None)

    @property
    def findings(self) -> int:
        return sum(self.counts.values())

    def finding_lines(self):
        """Each finding as ``WHERE: ROUTE  — WHAT``, in source and line order."""
        yield from self._table.lines()

    def text_chunks(self):
        """What ``rules import`` prints: the findings, then the summary."""
        batch = []
        for line in self.finding_lines():
            batch.append(line + "\n")
            if len(batch) >= 4096:
                yield "".join(batch)
                batch = []
        yield "".join(batch) + "".join(line + "\n" for line in self.summary())

    def summary(self) -> list[str]:
        read = ", ".join(f"{s.name} ({s.format}, {_routes(s.routes)})" for s in self.sources)
        lines = [f"read {read}"]
        lines.append("wrote " + ", ".join(f"{self.outputs[f]}: {_routes(self.written[f], f'IPv{f} ')}" for f in (4, 6)))
        if self.ports:
            mapping = " ".join(f"{printable(k)}={p}" for k, p in self.ports.items())
            how = "as given" if self.ports_given else \
                f"in order of first appearance; to fix them: --port {','.join(f'{printable(k)}={p}' for k, p in self.ports.items())}"
            mask = sum(1 << p for p in set(self.ports.values()))
            lines.append(f"ports: {mapping} ({how}); portmask {mask:#x}")
        skipped = {k: n for k, n in self.counts.items() if k != "multipath"}
        if skipped:
            lines.append(f"left out: {_routes(sum(skipped.values()))} — "
                         + ", ".join(f"{n:,} {k}" for k, n in skipped.items()))
        if self.counts.get("multipath"):
            lines.append(f"multipath: {_routes(self.counts['multipath'])} kept one next hop of several")
        if self.not_selected:
            lines.append(f"not read: {self.not_selected:,} alternative route{'s' * (self.not_selected != 1)} "
                         "the router does not use "
                         "(BIRD's without '*', FRR's not selected)")
        if self.several_paths:
            lines.append(f"MRT: {self.several_paths:,} prefix{'es' * (self.several_paths != 1)} with several "
                         "paths (one per peer): "
                         "the first" + (" whose peer has a port" if self.ports_given else "") + " was kept")
        for what, n in self.ignored.items():
            lines.append(f"MRT: {n:,} {what} ignored")
        return lines

    def to_dict(self) -> dict:
        """What ``rules import --json`` prints."""
        return {"sources": [{"file": s.name, "format": s.format, "routes": s.routes} for s in self.sources],
                "outputs": {f"ipv{f}": {"file": str(self.outputs[f]), "routes": self.written[f]} for f in (4, 6)},
                "ports": self.ports, "ports_given": self.ports_given, "counts": self.counts,
                "not_selected": self.not_selected, "several_paths": self.several_paths, "ignored": self.ignored,
                "warnings": self.warnings, "findings": list(self._table.dicts())}


def _routes(count: int, what: str = "") -> str:
    return f"{count:,} {what}route{'s' * (count != 1)}"


# ---------------------------------------------------------------------------------------
# reading the sources
# ---------------------------------------------------------------------------------------
def _read_bytes(source) -> tuple[str, bytes]:
    if str(source) == "-":
        return "<stdin>", sys.stdin.buffer.read()
    path = Path(source)
    try:
        return str(path), path.read_bytes()
    except IsADirectoryError:
        raise SimError(f"{path}: is a directory (give a routing table file)") from None
    except OSError as err:
        raise SimError(f"{path}: cannot read: {err.strerror}") from None


def _decompress(name: str, data: bytes) -> bytes:
    """gzip, bzip2 and xz data decompressed (by their magic numbers); other data as it is."""
    for magic, module, errors, what in ((b"\x1f\x8b", gzip, (OSError, EOFError, zlib.error), "gzip"),
                                        (b"BZh", bz2, (OSError, EOFError, ValueError), "bzip2"),
                                        (b"\xfd7zXZ\x00", lzma, (lzma.LZMAError, EOFError), "xz")):
        if data.startswith(magic):
            try:
                return module.decompress(data)
            except errors as err:
                raise SimError(f"{name}: damaged {what} data: {err}") from None
    return data


_IP_ROUTE_LINE = re.compile(r"(?:(?:unicast|local|broadcast|multicast|anycast|blackhole|unreachable|prohibit|"
                            r"throw|nat|xresolve)\s+)?(?:default|[0-9a-fA-F:.]+(?:/\d+)?)(?:\s|$)")
_BIRD_HEAD = re.compile(r"(?m)^(?:BIRD \S+ ready\.|Table \S+:)\s*$")


def detect(data: bytes, name: str) -> str | None:
    """The format of a source by its content (None: nothing in it)."""
    if mrt.looks_like_mrt(data):
        return "mrt"
    head = data[:1 << 16].lstrip()
    if not head:
        return None
    if head[:1] == b"[":
        return "ip-route-json"
    if head[:1] == b"{":
        return "frr-json"
    text = head.decode("utf-8", "replace")
    if _BIRD_HEAD.search(text) or bird.LOOKS_LIKE.search(text):
        return "bird"
    first = next((line for line in text.split("\n") if line.strip() and not line.startswith("#")), "")
    if _IP_ROUTE_LINE.match(first):
        return "ip-route"
    raise SimError(f"{name}: cannot tell what table this is (first line {brief(first.strip(), 40)}): "
                   f"give --from {'|'.join(FORMATS)}")


def _load_json(name: str, text: str, kind: type):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise SimError(f"{name}:{err.lineno}: not valid JSON ({err.msg})") from None
    if not isinstance(value, kind):
        raise SimError(f"{name}: expected a JSON {'array' if kind is list else 'object'}")
    return value


def read_source(name: str, data: bytes, fmt: str, index: int, ports: dict | None) -> tuple[Routes, dict]:
    """The routes of one source in format ``fmt``, and the MRT records it ignored."""
    if fmt == "mrt":
        if not mrt.looks_like_mrt(data):
            raise SimError(f"{name}: not an MRT dump (no MRT record header at its start)")
        return mrt.read(data, name, index, ports)
    text = data.decode("utf-8", "replace")
    if fmt == "ip-route":
        return iproute.read_text(text, name, index), {}
    if fmt == "bird":
        return bird.read_text(text, name, index), {}
    if fmt == "ip-route-json":
        return iproute.read_json(_load_json(name, text, list) if text.strip() else [], name, index), {}
    return frr.read_json(_load_json(name, text, dict) if text.strip() else {}, name, index), {}


def parse_ports(items) -> dict[str, int]:
    """``--port`` values, ``KEY=N[,KEY=N...]`` each, as one mapping: interface names as
    given, addresses as inet_ntop writes them, ports 0..31."""
    ports: dict[str, int] = {}
    for item in items:
        for pair in str(item).split(","):
            key, eq, value = pair.strip().partition("=")
            if not eq or not key or not value:
                raise SimError(f"--port {brief(pair)}: expected NAME=PORT (an interface, next hop or peer "
                               f"address, e.g. eth0=0 or 192.0.2.1=2)")
            if not (value.isascii() and value.isdigit()) or len(value) > 3 or int(value) >= MAX_PORTS:
                raise SimError(f"--port {brief(pair)}: port {brief(value)} is not one of l3fwd's ports 0..{MAX_PORTS - 1}")
            key = canonical_address(key) or key
            if key in ports:
                raise SimError(f"--port: {brief(key)} is given twice")
            ports[key] = int(value)
    return ports


# ---------------------------------------------------------------------------------------
# one rule per prefix
# ---------------------------------------------------------------------------------------
def _masked(routes: Routes) -> tuple[np.ndarray, np.ndarray]:
    """The addresses with the bits past each prefix length cleared."""
    depth = routes.depth.astype(np.int64)
    bits = np.where(routes.family == 4, 32, 128)
    host = bits - depth                                   # host bits: 0..128
    ones = np.uint64(0xFFFFFFFFFFFFFFFF)
    lo_clear = np.minimum(host, 64).astype(np.uint64)
    hi_clear = np.clip(host - 64, 0, 64).astype(np.uint64)
    lo_mask = np.where(lo_clear >= 64, np.uint64(0), ones << np.minimum(lo_clear, np.uint64(63)))
    lo_mask = np.where(lo_clear == 0, ones, lo_mask)
    hi_mask = np.where(hi_clear >= 64, np.uint64(0), ones << np.minimum(hi_clear, np.uint64(63)))
    hi_mask = np.where(hi_clear == 0, ones, hi_mask)
    return routes.hi & hi_mask, routes.lo & lo_mask


def _inside(family, hi, lo, depth, fam: int, net_hi: int, net_lo: int, length: int) -> np.ndarray:
    """Which prefixes lie inside ``net/length`` (of family ``fam``)."""
    if fam == 4:
        shift = np.uint64(32 - length)
        return (family == 4) & (depth >= length) & ((lo >> shift) == np.uint64(net_lo >> (32 - length)))
    if length <= 64:
        shift = np.uint64(64 - length)
        return (family == 6) & (depth >= length) & ((hi >> shift) == np.uint64(net_hi >> (64 - length)))
    return (family == 6) & (depth >= length) & (hi == np.uint64(net_hi)) & \
        ((lo >> np.uint64(128 - length)) == np.uint64(net_lo >> (128 - length)))


_SPECIAL = (("link-local", 4, 0, 0xA9FE0000, 16), ("link-local", 6, 0xFE80 << 48, 0, 10),
            ("loopback", 4, 0, 0x7F000000, 8), ("loopback", 6, 0, 1, 128),
            ("multicast", 4, 0, 0xE0000000, 4), ("multicast", 6, 0xFF << 56, 0, 8))


@dataclass
class _Resolved:
    """The rows read (one per route and next hop), what became of each route, and the
    sources' names and formats, for the findings' text."""
    rows: Routes
    chosen: np.ndarray          # row of each route (its selected next hop / path)
    finding: np.ndarray         # per route: 0, or the code of its finding
    by: np.ndarray              # per route: the route kept instead (duplicate), else -1
    port: np.ndarray            # per route: its port (-1: none)
    sources: list[Source]
    group_start: np.ndarray     # per route: its first row
    group_end: np.ndarray
    given: dict | None

    def where(self, route: int) -> str:
        row = self.chosen[route]
        source = self.sources[int(self.rows.source[row])]
        pos = int(self.rows.pos[row])
        if source.format in ("ip-route", "bird"):
            return f"{source.name}:{pos}"
        return f"{source.name}: {'record' if source.format == 'mrt' else 'route'} {pos}"

    def hop_text(self, row: int) -> str:
        rows = self.rows
        parts = []
        if rows.peer[row] >= 0:
            code = int(rows.peer[row])
            parts.append(f"peer {rows.labels.get(code, rows.strings[code])}")
        if rows.via[row] >= 0:
            parts.append(f"via {rows.strings[rows.via[row]]}")
        if rows.dev[row] >= 0:
            parts.append(f"dev {rows.strings[rows.dev[row]]}")
        return " ".join(parts)

    def route_text(self, route: int) -> str:
        rows, row = self.rows, int(self.chosen[route])
        family = int(rows.family[row])
        key = int(rows.hi[row]).to_bytes(8, "big") + int(rows.lo[row]).to_bytes(8, "big")
        address = socket.inet_ntop(socket.AF_INET, key[12:]) if family == 4 else socket.inet_ntop(socket.AF_INET6, key)
        text = f"{address}/{int(rows.depth[row])}"
        if rows.kind[row] != UNICAST:
            text = f"{KINDS[rows.kind[row]]} {text}"
        hop = self.hop_text(row)
        return printable(f"{text} {hop}" if hop else text)

    def what(self, route: int) -> str:
        name = _NAMES[int(self.finding[route])]
        if name == "duplicate":
            other = int(self.by[route])
            mine, kept = self.rows.metric[self.chosen[route]], self.rows.metric[self.chosen[other]]
            why = f"lower metric: {kept} < {mine}" if kept < mine else "the first of equal routes"
            return f"duplicate of {self.where(other)}, which takes precedence ({why})"
        if name in ("blackhole", "unreachable", "prohibit", "throw"):
            return f"{name} route: {_DROPS}"
        if name in ("broadcast", "anycast", "nat", "xresolve") or (name == "multicast" and
                                                                   self.rows.kind[self.chosen[route]] != UNICAST):
            return f"{name} route: not a unicast route"
        if name == "multicast":
            return "multicast prefix: l3fwd's LPM routes unicast"
        if name == "no-port":
            start, end = int(self.group_start[route]), int(self.group_end[route])
            row = int(self.chosen[route])
            paths = int(self.rows.paths[row]) if self.rows.paths is not None else 1
            hops = "; ".join(dict.fromkeys(self.hop_text(r) for r in range(start, end))) or "none"
            more = f" (and {paths - 1} other paths)" if paths > 1 and self.rows.peer[row] >= 0 else ""
            return printable(f"no port for {hops}{more}: --port gives {', '.join(self.given) or 'none'}")
        if name == "port-range":
            return (f"would be port {int(self.port[route])}: l3fwd has {MAX_PORTS} ports (0..{MAX_PORTS - 1}); "
                    f"choose the ports with --port")
        if name == "multipath":
            start, end = int(self.group_start[route]), int(self.group_end[route])
            others = [self.hop_text(r) for r in range(start, end) if r != self.chosen[route]]
            first = "the first" if self.given is None else "the first with a port"
            return printable(f"multipath: kept {first} of {end - start} next hops (left out: {'; '.join(others)}); "
                             f"l3fwd's LPM holds one next hop per prefix")
        return _WHAT.get(name, f"{name} route")

    def _listed(self) -> np.ndarray:
        routes = np.flatnonzero(self.finding)
        rows = self.chosen[routes]
        return routes[np.lexsort((rows, self.rows.pos[rows], self.rows.source[rows]))]

    def lines(self):
        for route in self._listed().tolist():
            yield f"{self.where(route)}: {self.route_text(route)}  — {self.what(route)}"

    def dicts(self):
        for route in self._listed().tolist():
            row = int(self.chosen[route])
            source = self.sources[int(self.rows.source[row])]
            at = {"ip-route": "line", "bird": "line", "mrt": "record"}.get(source.format, "route")
            yield {"file": source.name, at: int(self.rows.pos[row]), "kind": _NAMES[int(self.finding[route])],
                   "text": self.route_text(route), "message": self.what(route)}


def routes_order(routes: Routes) -> np.ndarray:
    """Each route's rank in the sources' order (source, then position)."""
    order = np.lexsort((routes.pos, routes.source))
    rank = np.empty(len(order), np.int64)
    rank[order] = np.arange(len(order))
    return rank


def resolve(rows: Routes, sources: list[Source], given: dict | None, fib: bool) -> tuple[_Resolved, dict]:
    """What becomes of each route: its row, its finding, its port; and the ports."""
    n = len(rows)
    starts = np.flatnonzero(np.diff(rows.group, prepend=-1) != 0) if n else np.zeros(0, np.int64)
    ends = np.append(starts[1:], n).astype(np.int64)
    # the port of every row, when ports are given: its peer's, else its next hop's, else its interface's
    if given is not None:
        table = np.array([given.get(canonical_address(s) or s, -1) for s in rows.strings] + [-1], np.int64)
        row_port = table[rows.peer]
        row_port = np.where(row_port >= 0, row_port, table[rows.via])
        row_port = np.where(row_port >= 0, row_port, table[rows.dev])
        has = np.where(row_port >= 0, np.arange(n), n)
        first = np.minimum.reduceat(has, starts) if n else np.zeros(0, np.int64)
        chosen = np.where(first < ends, first, starts)
    else:
        row_port = np.full(n, -1, np.int64)
        chosen = starts.copy()
    routes = rows.select(chosen)
    m = len(routes)
    finding = np.zeros(m, np.int16)
    by = np.full(m, -1, np.int64)

    # read-time reasons, then duplicates among the rest
    for code in range(1, len(SKIPS)):
        finding[routes.skip == code] = _F[SKIPS[code]]
    hi, lo = _masked(routes)
    live = np.flatnonzero(finding == 0)
    order = live[np.lexsort((live, routes.metric[live], routes.depth[live], lo[live], hi[live], routes.family[live]))]
    if len(order) > 1:
        same = (routes.family[order[1:]] == routes.family[order[:-1]]) & (hi[order[1:]] == hi[order[:-1]]) & \
               (lo[order[1:]] == lo[order[:-1]]) & (routes.depth[order[1:]] == routes.depth[order[:-1]])
        run_start = np.flatnonzero(np.concatenate([[True], ~same]))
        winner = order[run_start][np.cumsum(np.concatenate([[True], ~same])) - 1]
        loser = winner != order
        finding[order[loser]] = _F["duplicate"]
        by[order[loser]] = winner[loser]

    def mark(mask: np.ndarray, name: str) -> None:
        finding[mask & (finding == 0)] = _F[name]

    for code in range(1, len(KINDS)):
        mark(routes.kind == code, KINDS[code])
    if not fib:
        mark(routes.depth == 0, "default")
    for name, fam, net_hi, net_lo, length in _SPECIAL:
        mark(_inside(routes.family, hi, lo, routes.depth, fam, net_hi, net_lo, length), name)
    mark((routes.via < 0) & (routes.dev < 0) & (routes.peer < 0), "no-next-hop")

    port = np.full(m, -1, np.int64)
    if given is not None:
        port = row_port[chosen]
        mark(port < 0, "no-port")
        ports = {k: p for k, p in given.items()}
    else:
        # the keys of the routes written, numbered in order of their first appearance in the sources
        key = np.where(routes.peer >= 0, routes.peer, np.where(routes.dev >= 0, routes.dev, routes.via))
        kept = np.flatnonzero(finding == 0)
        seen = np.flatnonzero(key >= 0)
        first = np.full(len(rows.strings) + 1, m, np.int64)
        np.minimum.at(first, key[seen], routes_order(routes)[seen])
        used = np.zeros(len(first), bool)
        used[key[kept]] = True
        numbered = np.flatnonzero(used)
        numbered = numbered[np.argsort(first[numbered], kind="stable")]
        rank = np.full(len(first), -1, np.int64)
        rank[numbered] = np.arange(len(numbered))
        port[kept] = rank[key[kept]]
        mark(port >= MAX_PORTS, "port-range")
        ports = {rows.strings[int(code)]: int(rank[code]) for code in numbered if rank[code] < MAX_PORTS}
    sizes = ends - starts
    multipath = (sizes > 1) & (finding == 0)
    if rows.paths is not None:                    # an MRT prefix's paths are alternatives, not ECMP
        multipath &= routes.peer < 0
    finding[multipath] = _F["multipath"]
    return _Resolved(rows, chosen, finding, by, port, sources, starts, ends, given), ports


# ---------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------
def _digits(count: int, width: int) -> np.ndarray:
    """Row i: the decimal digits of i, left-aligned, NUL-padded to ``width`` bytes."""
    table = np.zeros((count, width), np.uint8)
    for i in range(count):
        digits = str(i).encode()
        table[i, :len(digits)] = np.frombuffer(digits, np.uint8)
    return table


_DIGITS3 = _digits(256, 3)


def _rule_lines(family: int, hi: np.ndarray, lo: np.ndarray, depth: np.ndarray, port: np.ndarray) -> bytes:
    """``R<prefix>/<depth> <port>`` lines. IPv4 lines are laid out in fixed-width rows,
    the digits looked up in a table, the padding dropped at the end: no Python per line."""
    if not len(depth):
        return b""
    if family == 4:
        out = np.zeros((len(depth), 24), np.uint8)
        out[:, [0, 4, 8, 12, 16, 19, 23]] = np.frombuffer(b"R..../ \n", np.uint8)[[0, 1, 2, 3, 5, 6, 7]]
        address = lo.astype(np.int64)
        for column, shift in ((1, 24), (5, 16), (9, 8), (13, 0)):
            out[:, column:column + 3] = _DIGITS3[(address >> shift) & 255]
        out[:, 17:19] = _DIGITS3[depth.astype(np.int64), :2]
        out[:, 20:23] = _DIGITS3[port.astype(np.int64)]
        return out.tobytes().translate(None, b"\0")
    raw = np.column_stack([hi, lo]).astype(">u8").tobytes()
    ntop, af = socket.inet_ntop, socket.AF_INET6
    return "".join([f"R{ntop(af, raw[16 * i:16 * i + 16])}/{n} {p}\n"
                    for i, (n, p) in enumerate(zip(depth.tolist(), port.tolist()))]).encode()


def _outputs(options: ImportOptions) -> dict[int, Path]:
    if options.prefix is not None and (options.rule_ipv4 or options.rule_ipv6):
        raise SimError("give either -o PREFIX or --rule_ipv4 FILE --rule_ipv6 FILE, not both")
    if options.prefix is not None:
        prefix = str(options.prefix)
        if not prefix or prefix.endswith(os.sep) or Path(prefix).is_dir():
            raise SimError(f"-o {brief(prefix)}: a directory; -o takes a prefix of the files' names "
                           f"(e.g. {os.path.join(prefix, 'table')} writes table_v4.cfg and table_v6.cfg there)")
        return {4: Path(f"{prefix}_v4.cfg"), 6: Path(f"{prefix}_v6.cfg")}
    if not (options.rule_ipv4 and options.rule_ipv6):
        raise SimError("no output: give -o PREFIX (writes PREFIX_v4.cfg and PREFIX_v6.cfg) or both "
                       "--rule_ipv4 FILE and --rule_ipv6 FILE")
    outputs = {4: Path(options.rule_ipv4), 6: Path(options.rule_ipv6)}
    if _same(outputs[4], outputs[6]):
        raise SimError(f"{outputs[4]}: given as both the IPv4 and the IPv6 rule file")
    return outputs


def _same(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _header(family: int, count: int, sources: list[Source], ports: dict, lookup: str) -> str:
    names = ", ".join(f"{printable(s.name)} ({s.format})" for s in sources)
    mapping = " ".join(f"{printable(k)}={p}" for k, p in ports.items()) or "none"
    return (f"# dpdk-l3fwd {lookup} rules, IPv{family}: {count} routes imported by l3fwd-sim rules import\n"
            f"# from {names}\n# ports: {mapping}\n")


def _limits(family: int, hi, lo, depth, lookup: str, path: Path) -> list[str]:
    """What the real dpdk-l3fwd cannot hold (l3fwd-sim's tables have no such limits)."""
    notes = []
    count = len(depth)
    if lookup == "lpm" and count > DPDK_LPM_MAX_RULES:
        notes.append(f"{path}: {count:,} routes, but dpdk-l3fwd's LPM holds {DPDK_LPM_MAX_RULES} per family "
                     f"(IPV{family}_L3FWD_LPM_MAX_RULES in l3fwd_lpm.c: it exits with 'Unable to add entry'); "
                     "raise it and rebuild dpdk-l3fwd to load this table (l3fwd-sim has no such limit)")
    if lookup == "lpm" and family == 4:
        groups = len(np.unique(lo[depth > 24] >> np.uint64(8)))
        if groups > DPDK_LPM_TBL8S:
            notes.append(f"{path}: prefixes longer than /24 in {groups:,} different /24s, but dpdk-l3fwd's "
                         f"rte_lpm has {DPDK_LPM_TBL8S} tbl8 groups (IPV4_L3FWD_LPM_NUMBER_TBL8S); "
                         "l3fwd-sim has no such limit")
    if lookup == "fib" and count > DPDK_FIB_MAX_ROUTES[family]:
        notes.append(f"{path}: {count:,} routes, but dpdk-l3fwd's rte_fib holds {DPDK_FIB_MAX_ROUTES[family]:,} "
                     "(max_routes in l3fwd_fib.c); l3fwd-sim has no such limit")
    return notes


def import_routes(options: ImportOptions) -> ImportReport:
    """Read ``options.sources``, write the two LPM rule files, report what was left out."""
    with paused_gc():                 # millions of small objects: the cyclic collector would double the time
        return _import(options)


def _import(options: ImportOptions) -> ImportReport:
    if options.source_format is not None and options.source_format not in FORMATS:
        raise SimError(f"unknown table format {brief(str(options.source_format))} (one of {', '.join(FORMATS)})")
    if options.lookup not in LOOKUPS:
        raise SimError(f"--lookup {brief(str(options.lookup))}: rules import writes LPM rules, for lpm or fib")
    if not options.sources:
        raise SimError("no source: give one or more routing tables (a file, or - for standard input)")
    outputs = _outputs(options)
    given = None
    if options.ports is not None:                 # as parse_ports gives them: addresses as inet_ntop writes them
        given = {canonical_address(str(key)) or str(key): port for key, port in options.ports.items()}
        bad = [port for port in given.values() if type(port) is not int or not 0 <= port < MAX_PORTS]
        if bad or len(given) != len(options.ports):
            raise SimError(f"ports: {brief(str(options.ports), 60)}: each key once, each port 0..{MAX_PORTS - 1}")
    loaded = [_read_bytes(source) for source in options.sources]
    for name, _ in loaded:
        for path in outputs.values():
            if name != "<stdin>" and _same(Path(name), path):
                raise SimError(f"{path}: is also a source: the import never writes over its inputs")
    parts, sources, ignored = [], [], {}
    for index, (name, data) in enumerate(loaded):
        data = _decompress(name, data)
        fmt = options.source_format or detect(data, name) or "ip-route"
        routes, skipped = read_source(name, data, fmt, index, given)
        parts.append(routes)
        sources.append(Source(name, fmt, int(routes.group.max()) + 1 if len(routes) else 0))
        for what, n in skipped.items():
            ignored[what] = ignored.get(what, 0) + n
    rows = Routes.concat(parts)
    resolved, ports = resolve(rows, sources, given, options.lookup == "fib")
    routes = rows.select(resolved.chosen)
    hi, lo = _masked(routes)
    keep = resolved.finding == 0
    keep |= resolved.finding == _F["multipath"]
    written, texts, warnings = {}, {}, []
    for family in (4, 6):
        sel = np.flatnonzero(keep & (routes.family == family))
        written[family] = len(sel)
        texts[family] = _header(family, len(sel), sources, ports, options.lookup).encode() + \
            _rule_lines(family, hi[sel], lo[sel], routes.depth[sel], resolved.port[sel])
        if not len(sel):
            warnings.append(f"{outputs[family]}: no IPv{family} route: dpdk-l3fwd refuses a rule file without one "
                            f"(import an IPv{family} table too, e.g. `ip {'-6 ' if family == 6 else ''}route`)")
        warnings += _limits(family, hi[sel], lo[sel], routes.depth[sel], options.lookup, outputs[family])
    staged = {}
    try:
        for family, path in outputs.items():
            out = AtomicFile(path)
            staged[path] = out
            out.file.write(texts[family])
        publish_files({out.finish(): path for path, out in staged.items()})
    except BaseException:
        for out in staged.values():
            out.abort()
        raise
    tally = np.bincount(resolved.finding, minlength=len(_NAMES) + 1)
    counts = {_NAMES[code]: int(tally[code]) for code in sorted(_NAMES) if tally[code]}
    several = int((rows.paths[resolved.chosen] > 1).sum()) if rows.paths is not None else 0
    return ImportReport(sources, outputs, written, ports, given is not None, counts, rows.not_selected, several,
                        ignored, warnings, resolved)
