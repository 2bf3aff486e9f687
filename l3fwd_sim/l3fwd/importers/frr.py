"""FRRouting's ``show ip route json`` / ``show ipv6 route json`` (zebra's
``vty_show_ip_route``): an object whose keys are prefixes, each an array of route
entries (one per protocol that has a route to it) with ``protocol``, ``selected`` (the
one zebra chose: the others are alternatives it does not use) and ``nexthops``. A next
hop has ``ip`` and/or ``interfaceName`` (``directlyConnected`` when it has only the
interface), ``fib`` when installed, ``active``, ``duplicate``, ``recursive`` (then the
next hops resolving it follow, with ``resolver``), or ``unreachable`` with ``blackhole``,
``reject`` or ``adminProhibited`` for a route that drops. FRR 9's ``local`` routes (the
router's own addresses) are local routes.
"""
from __future__ import annotations

from ...errors import SimError
from ...numbers import brief
from .table import KIND, RouteBuilder, Routes


def _hops(nexthops: list) -> tuple[int, list[tuple[str | None, str | None]]]:
    """(kind, next hops) of an entry: the installed ones (``fib``), else the active ones."""
    hops = [nh for nh in nexthops if isinstance(nh, dict) and not nh.get("duplicate")]
    for nh in hops:
        if nh.get("unreachable"):
            kind = "unreachable" if nh.get("reject") else "prohibit" if nh.get("adminProhibited") else "blackhole"
            return KIND[kind], []
    used = [nh for nh in hops if nh.get("fib")] or [nh for nh in hops if nh.get("active")] or hops
    if any(nh.get("resolver") for nh in used):
        used = [nh for nh in used if not nh.get("recursive")]
    return KIND["unicast"], [(_text(nh.get("ip")), _text(nh.get("interfaceName"))) for nh in used]


def _text(value) -> str | None:
    return None if value is None else str(value)


def read_json(table: dict, name: str, source: int) -> Routes:
    """The selected routes of an FRR ``show ip[v6] route json`` object."""
    out = RouteBuilder(source, name, "route")
    number = 0
    unicast, local = KIND["unicast"], KIND["local"]
    for prefix, entries in table.items():
        if type(entries) is list and len(entries) == 1 and type(entries[0]) is dict:
            entry = entries[0]                                   # the usual prefix: one route, selected
            number += 1
            nexthops = entry.get("nexthops")
            if entry.get("selected") and type(nexthops) is list and len(nexthops) == 1 \
                    and type(nexthops[0]) is dict and nexthops[0].get("fib") and not nexthops[0].get("unreachable") \
                    and not nexthops[0].get("duplicate") and entry.get("protocol") != "local":
                hop = nexthops[0]
                out.add(number, str(prefix), unicast, [(_text(hop.get("ip")), _text(hop.get("interfaceName")))])
                continue
            number -= 1
        if isinstance(entries, dict):
            raise SimError(f"{name}: FRR routes of several VRFs (`vrf all`): give one VRF's routes "
                           f"(show ip route vrf NAME json)")
        if not isinstance(entries, list):
            raise SimError(f"{name}: {brief(str(prefix))}: not an array of routes")
        chosen = None
        for entry in entries:
            number += 1
            if not isinstance(entry, dict):
                raise SimError(f"{name}: route {number}: not a route object")
            if entry.get("selected") and chosen is None:
                chosen = number, entry
        if chosen is None:
            out.not_selected += len(entries)
            continue
        out.not_selected += len(entries) - 1
        number_of, entry = chosen
        kind, hops = _hops(entry.get("nexthops") or [])
        out.add(number_of, str(prefix), local if entry.get("protocol") == "local" else kind, hops)
    return out.routes()
