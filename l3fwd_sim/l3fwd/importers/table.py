"""Routes read from a table dump, as columns: what every reader produces and the import
(:mod:`~l3fwd_sim.l3fwd.importers`) resolves into l3fwd rule lines.

One row per route and next hop: the next hops of a multipath route (ECMP) are rows
sharing the route's ``group``. Addresses are kept as two big-endian 64-bit halves (an
IPv4 address in the low 32 bits of ``lo``); next hops, interfaces and BGP peers as codes
into the table's ``strings``.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass, field

import numpy as np

from ...errors import SimError
from ...numbers import brief

# What a route does with a packet: ``unicast`` forwards it, the others do not (ip route's
# types, BIRD's dests, FRR's blackhole next hops).
KINDS = ("unicast", "blackhole", "unreachable", "prohibit", "throw", "local", "broadcast", "multicast",
         "anycast", "nat", "xresolve")
KIND = {name: code for code, name in enumerate(KINDS)}
UNICAST = 0

# Why a reader left a row out before the import compares routes (each a finding of its own)
SKIPS = ("", "other-table", "tos", "source-specific")
SKIP = {name: code for code, name in enumerate(SKIPS)}

_ZERO12 = bytes(12)


def parse_prefix(text: str, where: str, family: int | None = None) -> tuple[int, bytes, int]:
    """``(family, 16-byte address, depth)`` of ``ADDR/LEN``, a bare address (a host
    route: /32, /128) or ``default`` (``family`` says which; IPv4 when not known)."""
    addr, slash, length = text.partition("/")
    if addr == "default" and not slash:
        return (family or 4), bytes(16), 0
    if ":" in addr:
        fam, bits = 6, 128
        try:
            key = socket.inet_pton(socket.AF_INET6, addr)
        except (OSError, ValueError):
            raise SimError(f"{where}: bad IPv6 prefix {brief(text)}") from None
    else:
        fam, bits = 4, 32
        try:
            key = _ZERO12 + socket.inet_pton(socket.AF_INET, addr)
        except (OSError, ValueError):
            raise SimError(f"{where}: bad IPv4 prefix {brief(text)}") from None
    if not slash:
        return fam, key, bits
    if not (length.isascii() and length.isdigit()) or len(length) > 3 or int(length) > bits:
        raise SimError(f"{where}: bad prefix length in {brief(text)} (expected 0..{bits})")
    return fam, key, int(length)


def address_text(family: int, key: bytes) -> str:
    """An address as ``inet_ntop`` writes it (as ip, BIRD and FRR print them)."""
    return socket.inet_ntop(socket.AF_INET, key[12:]) if family == 4 else socket.inet_ntop(socket.AF_INET6, key)


def canonical_address(text: str) -> str | None:
    """``text`` as :func:`address_text` writes it when it is an IPv4 or IPv6 address, else None."""
    for af in (socket.AF_INET, socket.AF_INET6):
        try:
            return socket.inet_ntop(af, socket.inet_pton(af, text))
        except (OSError, ValueError):
            continue
    return None


@dataclass
class Routes:
    """The rows of one source (or of several, :meth:`concat`)."""
    family: np.ndarray          # int8: 4 or 6
    hi: np.ndarray              # uint64: address bits 127..64 (0 for IPv4)
    lo: np.ndarray              # uint64: address bits 63..0 (IPv4: bits 31..0)
    depth: np.ndarray           # int16
    kind: np.ndarray            # int8: index in KINDS
    via: np.ndarray             # int32: the next hop's address, a code in strings (-1: none)
    dev: np.ndarray             # int32: the interface (-1: none)
    peer: np.ndarray            # int32: the BGP peer's address (MRT; -1: none)
    metric: np.ndarray          # int64: lower wins among routes to the same prefix (ip route); else 0
    group: np.ndarray           # int64: the route of the row; rows of a group are its next hops, in order
    pos: np.ndarray             # int64: where the route is: its line (text), route number (JSON), record (MRT)
    skip: np.ndarray            # int8: index in SKIPS, a reason the reader gave to leave the route out
    source: np.ndarray          # int32: index of the source file
    strings: list[str]
    paths: np.ndarray | None = None   # int32 per row: the route's paths in the dump (MRT; None: one)
    labels: dict = field(default_factory=dict)   # code -> how a report shows it (a peer with its AS)
    not_selected: int = 0       # alternatives the router does not use (not BIRD's primary, not FRR's selected)

    def __len__(self) -> int:
        return len(self.depth)

    def select(self, rows: np.ndarray) -> "Routes":
        return Routes(self.family[rows], self.hi[rows], self.lo[rows], self.depth[rows], self.kind[rows],
                      self.via[rows], self.dev[rows], self.peer[rows], self.metric[rows], self.group[rows],
                      self.pos[rows], self.skip[rows], self.source[rows], self.strings,
                      None if self.paths is None else self.paths[rows], self.labels, self.not_selected)

    @staticmethod
    def concat(parts: list["Routes"]) -> "Routes":
        """One table of several sources' rows, in order: codes and groups renumbered."""
        index: dict[str, int] = {}
        labels: dict[int, str] = {}
        columns: dict[str, list[np.ndarray]] = {name: [] for name in _COLUMNS}
        paths, groups = [], 0
        for part in parts:
            remap = np.array([index.setdefault(s, len(index)) for s in part.strings] + [-1], np.int32)
            labels.update({int(remap[code]): text for code, text in part.labels.items()})
            for name in _COLUMNS:
                column = getattr(part, name)
                if name in ("via", "dev", "peer"):
                    column = remap[column]               # -1 indexes the appended -1
                elif name == "group":
                    column = column + groups
                columns[name].append(column)
            groups += int(part.group.max()) + 1 if len(part) else 0
            paths.append(np.ones(len(part), np.int32) if part.paths is None else part.paths)
        joined = {name: np.concatenate(arrays) if arrays else np.zeros(0, _DTYPES[name])
                  for name, arrays in columns.items()}
        return Routes(**joined, strings=list(index), paths=np.concatenate(paths) if paths else np.zeros(0, np.int32),
                      labels=labels, not_selected=sum(part.not_selected for part in parts))


_DTYPES = {"family": np.int8, "hi": np.uint64, "lo": np.uint64, "depth": np.int16, "kind": np.int8,
           "via": np.int32, "dev": np.int32, "peer": np.int32, "metric": np.int64, "group": np.int64,
           "pos": np.int64, "skip": np.int8, "source": np.int32}
_COLUMNS = tuple(_DTYPES)


_V4_TEXT = str.maketrans("./\n", "   ")


def _leading_zero(text: str) -> bool:
    """Whether a number in ``text`` starts with 0 and goes on (``010``: inet_pton refuses it)."""
    chars = np.frombuffer(b" " + text.encode() + b" ", np.uint8)
    digit = (chars >= 0x30) & (chars <= 0x39)
    return bool((~digit[:-2] & (chars[1:-1] == 0x30) & digit[2:]).any())


def v4_prefixes(texts: list[str], wheres) -> tuple[np.ndarray, np.ndarray]:
    """(address, depth) of IPv4 prefixes ``a.b.c.d[/len]``, in a few numpy passes;
    anything unusual goes through :func:`parse_prefix` for its precise error
    (``wheres()``: where each text is, for that message)."""
    joined = "\n".join(t if "/" in t else t + "/32" for t in texts)
    try:
        values = np.fromstring(joined.translate(_V4_TEXT), dtype=np.int64, sep=" ") if texts else np.zeros(0, np.int64)
    except ValueError:                                   # not all numbers: parse_prefix names the culprit
        values = np.zeros(0, np.int64)
    if values.size == 5 * len(texts) and not _leading_zero(joined):
        values = values.reshape(-1, 5)
        if not ((values[:, :4] > 255).any() or (values[:, 4] > 32).any() or (values < 0).any()):
            address = values[:, 0] << 24 | values[:, 1] << 16 | values[:, 2] << 8 | values[:, 3]
            return address.astype(np.uint64), values[:, 4]
    out = [parse_prefix(t, where) for t, where in zip(texts, wheres())]     # raises on the culprit
    return (np.array([int.from_bytes(k[12:], "big") for _, k, _ in out], np.uint64),
            np.array([d for _, _, d in out], np.int64))


def parse_prefixes(texts: list[str], where) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(family, hi, lo, depth) of prefixes as :func:`parse_prefix` reads them (family 0
    for ``default``); ``where(i)`` names the i-th for an error."""
    n = len(texts)
    family = np.zeros(n, np.int8)
    hi = np.zeros(n, np.uint64)
    lo = np.zeros(n, np.uint64)
    depth = np.zeros(n, np.int64)
    six = [i for i, t in enumerate(texts) if ":" in t]
    four = np.ones(n, bool)
    four[six] = False
    four[[i for i, t in enumerate(texts) if t == "default"]] = False
    rows = np.flatnonzero(four)
    address, length = v4_prefixes([texts[i] for i in rows.tolist()], lambda: (where(i) for i in rows.tolist()))
    family[rows], lo[rows], depth[rows] = 4, address, length
    for i in six:
        _, key, depth[i] = parse_prefix(texts[i], where(i))
        family[i], hi[i], lo[i] = 6, int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big")
    return family, hi, lo, depth


def codes_of(texts, codes: dict) -> np.ndarray:
    """The code of each text in ``codes`` (new texts added; None is -1)."""
    for text in dict.fromkeys(texts):
        if text not in codes:
            codes[text] = len(codes) - 1
    return np.fromiter(map(codes.__getitem__, texts), np.int32, len(texts))


class RouteBuilder:
    """Routes added one at a time (BIRD, the JSON formats), turned into columns at the end."""

    def __init__(self, source: int, name: str, where: str = "line"):
        self.source, self.name, self.where = source, name, where
        self.items: list[tuple] = []
        self.not_selected = 0        # alternatives the router does not use (BIRD, FRR): counted, not read

    def add(self, pos: int, prefix: str, kind: int, hops: list, metric: int = 0, skip: int = 0,
            family: int | None = None) -> None:
        """One route: ``prefix`` as written (``default``: of ``family``, None when not known);
        ``hops`` its next hops, (next hop address, interface) each, in order."""
        self.items.append((pos, prefix, kind, hops, metric, skip, family))

    def routes(self) -> Routes:
        items = self.items
        count = len(items)
        if not count:
            return Routes(*(np.zeros(0, _DTYPES[name]) for name in _COLUMNS), strings=[])
        pos, prefixes, kinds, hops, metrics, skips, families = zip(*items)
        at = (lambda i: f"{self.name}:{pos[i]}") if self.where == "line" else \
            (lambda i: f"{self.name}: {self.where} {pos[i]}")
        family, hi, lo, depth = parse_prefixes(prefixes, at)
        default = np.flatnonzero(family == 0)
        if len(default):                     # `default dev wg0`: the family of the file's other routes
            known = family[family > 0]
            guess = 6 if (known == 6).sum() > (known == 4).sum() else 4
            family[default] = [families[i] or guess for i in default.tolist()]
        widths = np.array([len(h) or 1 for h in hops], np.int64)
        rows = np.repeat(np.arange(count), widths)
        flat = [hop for h in hops for hop in (h or ((None, None),))]
        codes: dict = {None: -1}
        via, dev = codes_of([v for v, _ in flat], codes), codes_of([d for _, d in flat], codes)
        strings = [t for t, c in sorted(codes.items(), key=lambda item: item[1]) if c >= 0]
        n = len(rows)
        return Routes(family[rows], hi[rows], lo[rows], depth[rows].astype(np.int16),
                      np.array(kinds, np.int8)[rows], via, dev, np.full(n, -1, np.int32),
                      np.array(metrics, np.int64)[rows], rows.astype(np.int64), np.array(pos, np.int64)[rows],
                      np.array(skips, np.int8)[rows], np.full(n, self.source, np.int32), strings,
                      not_selected=self.not_selected)
