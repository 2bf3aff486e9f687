"""BIRD's ``show route`` (``birdc show route [all]``), as ``nest/rt-show.c`` prints it.

BIRD 2 (and 3): a route line ``NET  DEST [PROTO TIME[ from ADDR]][ *][ (PREF[/METRIC]) ...]``
(``%-20s %s [%s %s%s]%s%s``) with DEST ``unicast``, ``blackhole``, ``unreachable``,
``prohibited`` (or empty, or ``recursive``), followed by its next hops on tab-indented
lines ``via ADDR on IF [mpls ...][ onlink][ weight N]`` or ``dev IF``; the other routes
of the same net follow with the net left blank. ``*`` (``!``: with a sync error) marks
the primary route, the one BIRD exports to the kernel: the others are alternatives.
BIRD 1.x printed the next hop on the route line (``NET via ADDR on IF [...]``, ``NET dev
IF [...]``, ``NET multipath [...]`` with ``via ... on ... weight N`` lines): read too.
``Table NAME:`` headers, the ``BIRD x.y ready.`` banner and the attribute lines of ``show
route all`` (tab-indented ``Type: ...``, ``BGP.as_path: ...``) are passed over.
"""
from __future__ import annotations

import re

from ...errors import SimError
from ...numbers import brief
from .table import KIND, RouteBuilder, Routes

_ROUTE = re.compile(
    r"(?P<net>\S*)\s+(?:(?P<dest>unicast|blackhole|unreachable|prohibited|recursive|multipath)"
    r"|via (?P<via>\S+) on (?P<iface>\S+)|dev (?P<dev>\S+))?\s*\[(?P<proto>\S+)[^\]]*\](?P<primary> [*!])?")
_HOP = re.compile(r"\t(?:via (?P<via>\S+) on (?P<iface>\S+)|dev (?P<dev>\S+))")
_BANNER = re.compile(r"BIRD \S+ ready\.|Table \S+:|Network not found")
_DEST = {None: "unicast", "unicast": "unicast", "recursive": "unicast", "multipath": "unicast",
         "blackhole": "blackhole", "unreachable": "unreachable", "prohibited": "prohibit"}

LOOKS_LIKE = re.compile(r"(?m)^\S*\s+(?:\S+ )*?\[\S+[^\]\n]*\](?: [*!])?(?: \S+)? \(\d+")


def read_text(text: str, name: str, source: int) -> Routes:
    """The primary routes of ``birdc show route`` output; the others are counted
    (``not_selected`` of the reader), as BIRD does not use them."""
    out = RouteBuilder(source, name)
    net = None                  # the net being read, as written
    routes: list[list] = []     # its routes: [line, kind, primary, hops]

    def flush_net():
        if net is None or not routes:
            return
        chosen = [r for r in routes if r[2]] or routes[:1]      # no '*' at all: the first one
        out.not_selected += len(routes) - len(chosen)
        for line, kind, _, hops in chosen:
            out.add(line, net, kind, hops)

    route_match, hop_match = _ROUTE.match, _HOP.match
    for lineno, line in enumerate(text.split("\n"), 1):
        if line[:1] == "\t":
            hop = hop_match(line)
            if hop and routes:
                routes[-1][3].append((hop["via"], hop["iface"] or hop["dev"]))
            continue                                             # attributes of `show route all`
        match = route_match(line)
        if match is None:
            if not line.strip() or _BANNER.fullmatch(line.strip()):
                continue
            raise SimError(f"{name}:{lineno}: not a line of BIRD's `show route`: {brief(line.strip(), 60)}")
        if match["net"]:
            flush_net()
            routes = []
            net = match["net"]
        elif net is None:
            raise SimError(f"{name}:{lineno}: a route without a net before it: {brief(line.strip(), 60)}")
        hops = []
        if match["via"] or match["dev"]:                         # BIRD 1.x: the next hop on the line
            hops.append((match["via"], match["iface"] or match["dev"]))
        routes.append([lineno, KIND[_DEST[match["dest"]]], match["primary"] is not None, hops])
    flush_net()
    return out.routes()
