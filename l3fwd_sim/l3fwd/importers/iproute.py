"""Linux routing tables as ``ip route`` / ``ip -6 route`` print them (iproute2's
``print_route``), as text and as JSON (``ip -j route``).

Text: one route per line, ``[TYPE] PREFIX [nhid N] [via [inet|inet6] ADDR] [dev IF]
[table T] [proto P] [scope S] [src ADDR] [metric N] [flags...] ...``; a multipath route
continues on indented lines ``nexthop via ADDR dev IF weight N [dead] ...``. TYPE is
left out for unicast routes; PREFIX is ``default``, ``ADDR/LEN`` or, for a host route,
a bare address. JSON: an array of objects with the same names (``dst``, ``type``,
``gateway`` or ``via: {family, host}``, ``dev``, ``metric``, ``table``, ``nexthops``,
``flags``).
"""
from __future__ import annotations

import re

import numpy as np

from ...errors import SimError
from ...numbers import brief
from .table import KIND, SKIP, RouteBuilder, Routes, codes_of, parse_prefix, v4_prefixes

TYPES = frozenset(("unicast", "local", "broadcast", "multicast", "anycast", "blackhole", "unreachable",
                   "prohibit", "throw", "nat", "xresolve"))
_MAIN = ("main", "254")
_PREFIX = re.compile(r"[0-9a-fA-F:.]+(?:/[0-9]+)?")
_OTHER_TABLE, _TOS, _FROM = SKIP["other-table"], SKIP["tos"], SKIP["source-specific"]


def _metric(value: str, where: str) -> int:
    if not (value.isascii() and value.isdigit()) or len(value) > 10:
        raise SimError(f"{where}: bad metric {brief(value)}")
    return int(value)


def _after(toks: list[str], word: str) -> str | None:
    """The token after ``word`` (None when there is none)."""
    if word in toks:
        i = toks.index(word) + 1
        if i < len(toks):
            return toks[i]
    return None


def _hop(toks: list[str]) -> tuple[str | None, str | None, bool]:
    """(next hop, interface, dead) of a route or nexthop line's tokens."""
    via = _after(toks, "via")
    if via in ("inet", "inet6"):                 # via inet6 fe80::1: a next hop of the other family
        via = toks[toks.index("via") + 2] if toks.index("via") + 2 < len(toks) else None
    return via, _after(toks, "dev"), "dead" in toks


def _default_family(toks: list[str], via: str | None) -> int | None:
    """The family of a default route: its next hop's, unless written `via inet6` / `via inet`
    (a next hop of the other family), else unknown."""
    marker = _after(toks, "via")
    if marker in ("inet", "inet6"):
        return 6 if marker == "inet" else 4
    return None if via is None else 6 if ":" in via else 4


def _usable(hops: list) -> list[tuple[str | None, str | None]]:
    """The next hops the kernel forwards by: dead ones are left out, unless all are."""
    alive = [(via, dev) for via, dev, dead in hops if not dead]
    return alive or [(via, dev) for via, dev, _ in hops]


def _route_line(toks: list[str], where: str, line: str):
    """(family or None, key, depth, kind, hop, metric, skip) of a route line's tokens."""
    kind = 0
    first = toks[0]
    if first in TYPES:
        kind = KIND[first]
        if len(toks) < 2:
            raise SimError(f"{where}: {first} route without a prefix")
        first = toks[1]
    elif first != "default" and not _PREFIX.fullmatch(first):
        raise SimError(f"{where}: not an `ip route` line: {brief(line.strip(), 60)}")
    hop = _hop(toks)
    if first == "default":
        family = _default_family(toks, hop[0])
        key, depth = bytes(16), 0
    else:
        family, key, depth = parse_prefix(first, where)
    metric = _after(toks, "metric")
    metric = _metric(metric, where) if metric is not None else 0
    skip = 0
    if "table" in toks and _after(toks, "table") not in _MAIN:
        skip = _OTHER_TABLE
    elif "tos" in toks or "dsfield" in toks:
        skip = _TOS
    elif "from" in toks:
        skip = _FROM
    return family, key, depth, kind, hop, metric, skip


# Every line, as print_route writes a route: its first token, then (each when there) the
# next hop, interface, proto, scope, src and metric, then the rest (flags, pref, expires).
# Lines the columns cannot hold (a type, a table, a next hop elsewhere) are read by _route_line.
_LINE = re.compile(r"^([^ \t\n]*)(?: nhid [0-9]+)?(?: via (?:(inet6?) )?([^ \n]+))?(?: dev ([^ \n]+))?"
                   r"(?: proto [^ \n]+)?(?: scope [^ \n]+)?(?: src [^ \n]+)?(?: metric ([0-9]+))?([^\n]*)$", re.M)
_ODD = re.compile(r" (?:table|tos|dsfield|from|via|dev|nexthop|metric)(?: |$)", re.M)


def _lines_of(parts: list[str], pattern: re.Pattern) -> list[int]:
    """The indexes of the parts in which ``pattern`` matches (one search over them all)."""
    joined = "\n".join(parts)
    if not pattern.search(joined):
        return []
    ends = np.cumsum([len(part) + 1 for part in parts])
    return np.unique(np.searchsorted(ends, [m.start() for m in pattern.finditer(joined)], side="right")).tolist()


def read_text(text: str, name: str, source: int) -> Routes:
    """The routes of ``ip route`` / ``ip -6 route`` output (``name``: the file, for messages)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    found = _LINE.findall(text) if text else []
    first, other, via, dev, metric_text, rest = zip(*found) if found else ((),) * 6
    n = len(first)
    lines = text.split("\n") if ("\n " in text or "\n\t" in text or text[:1] in (" ", "\t")) else None
    # per line: 1 a route line read here, 2 a route line read by _route_line, 3 a nexthop line
    lead = np.array(first, dtype="U1") if n else np.zeros(0, "U1")
    role = (lead != "").astype(np.int8)
    letters = np.flatnonzero((lead != "") & ~((lead >= "0") & (lead <= "9")))
    odd = {i for i in letters.tolist() if first[i] != "default" and (first[i][0] == "#" or first[i] in TYPES
                                                                     or not _PREFIX.fullmatch(first[i]))}
    odd.update(i for i in _lines_of(rest, _ODD) if role[i])
    odd = sorted(odd)
    role[odd] = 2
    family = np.zeros(n, np.int8)
    hi = np.zeros(n, np.uint64)
    lo = np.zeros(n, np.uint64)
    depth = np.zeros(n, np.int64)
    kind = np.zeros(n, np.int8)
    skip = np.zeros(n, np.int8)
    dead = np.zeros(n, bool)
    codes: dict[str, int] = {"": -1}
    via_code, dev_code = codes_of(via, codes), codes_of(dev, codes)
    metric = np.zeros(n, np.int64)
    has_metric = np.array(metric_text, dtype="U1") != "" if n else np.zeros(0, bool)
    try:
        values = np.fromstring(" ".join(metric_text), dtype=np.int64, sep=" ") if has_metric.any() else metric[:0]
    except ValueError:
        values = metric[:0]
    if len(values) != has_metric.sum() or (values > 0xFFFFFFFF).any():
        for i, value in enumerate(metric_text):
            _metric(value or "0", f"{name}:{i + 1}")              # raises on the culprit
    metric[has_metric] = values

    # the plain route lines, as columns
    fast = np.flatnonzero(role == 1)
    texts = [first[i] for i in fast.tolist()]
    v6 = np.array([":" in t for t in texts], bool)
    default = np.array([t == "default" for t in texts], bool)
    v4 = ~v6 & ~default
    rows4 = fast[v4]
    address, length = v4_prefixes([texts[i] for i in np.flatnonzero(v4).tolist()],
                                   lambda: (f"{name}:{i + 1}" for i in rows4.tolist()))
    family[rows4], lo[rows4], depth[rows4] = 4, address, length
    for i in fast[v6].tolist():
        fam, key, d = parse_prefix(first[i], f"{name}:{i + 1}")
        family[i], depth[i] = fam, d
        hi[i], lo[i] = int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big")
    for i in fast[default].tolist():           # a next hop of the other family is written `via inet6 ADDR`
        family[i] = (4 if other[i] == "inet6" else 6 if other[i] == "inet" else 6 if ":" in via[i] else 4) \
            if via[i] else 0

    def code(text):
        return -1 if text is None else codes.setdefault(text, len(codes) - 1)

    # the others (blank, nexthop and unusual lines), a line at a time, in order
    for i in sorted({*np.flatnonzero(role == 0).tolist(), *odd}):
        if role[i] == 0 and not (via[i] or dev[i] or rest[i].strip()):
            continue                                          # a blank line
        lines = lines or text.split("\n")
        line = lines[i]
        toks = line.split()
        if role[i] == 0:
            if toks[0] != "nexthop":
                raise SimError(f"{name}:{i + 1}: not an `ip route` line: {brief(line.strip(), 60)}")
            hop_via, hop_dev, hop_dead = _hop(toks)
            role[i], dead[i], via_code[i], dev_code[i] = 3, hop_dead, code(hop_via), code(hop_dev)
        elif line.startswith("#"):
            role[i] = 0
        else:
            fam, key, d, k, (hop_via, hop_dev, _), m, sk = _route_line(toks, f"{name}:{i + 1}", line)
            family[i], depth[i], kind[i], metric[i], skip[i] = fam or 0, d, k, m, sk
            hi[i], lo[i] = int.from_bytes(key[:8], "big"), int.from_bytes(key[8:], "big")
            via_code[i], dev_code[i] = code(hop_via), code(hop_dev)
    strings = [t for t, c in sorted(codes.items(), key=lambda item: item[1]) if c >= 0]
    return _assemble(name, source, role, family, hi, lo, depth, kind, skip, metric, via_code, dev_code, dead,
                     strings)


def _assemble(name, source, role, family, hi, lo, depth, kind, skip, metric, via, dev, dead, strings) -> Routes:
    """One row per route line without nexthop lines, one per nexthop line of the others
    (the dead ones left out unless all are), in line order."""
    n = len(role)
    route = (role == 1) | (role == 2)
    hop = role == 3
    owner = np.maximum.accumulate(np.where(route, np.arange(n), -1)) if n else np.zeros(0, np.int64)
    if hop.any() and owner[np.argmax(hop)] < 0:
        raise SimError(f"{name}:{int(np.argmax(hop)) + 1}: a nexthop line before any route")
    hop_lines = np.flatnonzero(hop)
    hop_owner = owner[hop_lines]
    alive = ~dead[hop_lines]
    any_alive = np.zeros(n, bool)
    any_alive[hop_owner[alive]] = True
    hop_lines = hop_lines[alive | ~any_alive[hop_owner]]
    hop_owner = owner[hop_lines]
    has_hops = np.zeros(n, bool)
    has_hops[hop_owner] = True
    alone = np.flatnonzero(route & ~has_hops)
    route_of = np.concatenate([alone, hop_owner])          # the route line each row is of
    at = np.concatenate([alone, hop_lines])                # the line its next hop is on
    order = np.lexsort((at, route_of))
    route_of, at = route_of[order], at[order]
    fam = family[route_of]
    if (fam == 0).any():                                   # `default dev wg0`: the family of the other routes
        known = family[route & (family > 0)]
        fam = np.where(fam == 0, 6 if (known == 6).sum() > (known == 4).sum() else 4, fam)
    group = np.cumsum(np.diff(route_of, prepend=-1) != 0) - 1
    count = len(route_of)
    return Routes(fam.astype(np.int8), hi[route_of], lo[route_of], depth[route_of].astype(np.int16),
                  kind[route_of], via[at], dev[at], np.full(count, -1, np.int32), metric[route_of],
                  group.astype(np.int64), route_of + 1, skip[route_of], np.full(count, source, np.int32), strings)


def _json_family(route: dict, hops: list) -> int | None:
    """The family of a default route of ``ip -j``: its next hop's, unless given as
    ``via: {family: inet6}`` (a next hop of the other family)."""
    via = route.get("via") if "nexthops" not in route else (route["nexthops"][0].get("via") if hops else None)
    if isinstance(via, dict) and via.get("family") in ("inet", "inet6"):
        return 4 if via["family"] == "inet6" else 6
    return (6 if ":" in hops[0][0] else 4) if hops and hops[0][0] else None


def _json_hop(obj: dict) -> tuple[str | None, str | None, bool]:
    via = obj.get("gateway")
    if via is None and isinstance(obj.get("via"), dict):
        via = obj["via"].get("host")
    flags = obj.get("flags") or ()
    return (None if via is None else str(via), None if obj.get("dev") is None else str(obj.get("dev")),
            "dead" in flags)


_JSON_PLAIN = frozenset(("dst", "gateway", "dev", "protocol", "scope", "prefsrc", "metric", "flags", "pref",
                         "expires", "metrics", "nhid", "error", "rt_offload", "offload", "trap"))


def read_json(routes: list, name: str, source: int) -> Routes:
    """The routes of ``ip -j route`` / ``ip -6 -j route`` output (a parsed JSON array).
    The usual route (one next hop, unicast, main table) is read a column at a time; the
    others one by one."""
    out = RouteBuilder(source, name, "route")
    n = len(routes)
    usual = [False] * n
    if set(map(type, routes)) <= {dict}:
        dst = [r.get("dst") for r in routes]
        gateway = [r.get("gateway") for r in routes]
        dev = [r.get("dev") for r in routes]
        metric = [r.get("metric", 0) for r in routes]
        usual = [_JSON_PLAIN.issuperset(r) and "dead" not in (r.get("flags") or ()) for r in routes]
        if not (set(map(type, dst)) <= {str} and set(map(type, gateway)) <= {str, type(None)}
                and set(map(type, dev)) <= {str, type(None)} and set(map(type, metric)) <= {int}
                and min(metric, default=0) >= 0):
            usual = [u and type(d) is str and type(g) in (str, type(None)) and type(v) in (str, type(None))
                     and type(m) is int and m >= 0 for u, d, g, v, m in zip(usual, dst, gateway, dev, metric)]
        hops = [[(g, v)] if g is not None or v is not None else [] for g, v in zip(gateway, dev)]
        family = [None if d != "default" else (6 if ":" in g else 4) if g else None for d, g in zip(dst, gateway)]
        out.items = list(zip(range(1, n + 1), dst, [0] * n, hops, metric, [0] * n, family))
    for index in (i for i, u in enumerate(usual) if not u):
        route, number = routes[index], index + 1
        where = f"{name}: route {number}"
        if not isinstance(route, dict) or not isinstance(route.get("dst"), str):
            raise SimError(f"{where}: not a route of `ip -j route` (an object with \"dst\")")
        kind_name = route.get("type", "unicast")
        if kind_name not in KIND:
            raise SimError(f"{where}: unknown route type {brief(str(kind_name))}")
        if isinstance(route.get("nexthops"), list):
            hops = [_json_hop(hop) for hop in route["nexthops"] if isinstance(hop, dict)]
        else:
            hop = _json_hop(route)
            hops = [hop] if (hop[0] is not None or hop[1] is not None) else []
        metric = route.get("metric", 0)
        if type(metric) is not int or metric < 0:
            raise SimError(f"{where}: bad metric {brief(str(metric))}")
        skip = 0
        if str(route.get("table", "main")) not in _MAIN:
            skip = _OTHER_TABLE
        elif "tos" in route or "dsfield" in route:
            skip = _TOS
        elif "from" in route:
            skip = _FROM
        item = (number, route["dst"], KIND[kind_name], _usable(hops), metric, skip, _json_family(route, hops))
        if len(out.items) == n:
            out.items[index] = item
        else:                                    # not all objects: the error is raised before the end
            out.items.append(item)
    return out.routes()
