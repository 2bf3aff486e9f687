"""l3fwd-graph's built-in routes (``ipv4_l3fwd_lpm_route_array``,
``ipv6_l3fwd_lpm_route_array`` in main.c; l3fwd_graph.md §7). There are no rule files.

* IPv4: ``198.18.K.0/24`` → port K, K = 0..7.
* IPv6: eight entries ``2001:db08:1234::K/48`` → port K (entry 7 is written ``::2``);
  at /48 they are one prefix, so each add replaces the next hop and all of
  ``2001:db08:1234::/48`` goes to the highest enabled port among 0..7.

Routes are added for ports in ``-p`` only, in array order; the route's index is its
next-hop id, whose rewrite data names the port's ``ethdev_tx`` node — a port in ``-p``
that no vdev made has none ("Unable to add next hop").
"""
from __future__ import annotations

import ipaddress

import numpy as np

from ..errors import SimError
from ..tables.lpm import Lpm4, Lpm6
from .nodes import Tables

IPV4_ROUTES = [(int(ipaddress.IPv4Address(f"198.18.{k}.0")), 24, k) for k in range(8)]
IPV6_ROUTES = [(int(ipaddress.IPv6Address(f"2001:db08:1234::{k if k < 7 else 2}")), 48, k) for k in range(8)]


def _text(family: int, address: int) -> str:
    return str(ipaddress.IPv4Address(address) if family == 4 else ipaddress.IPv6Address(address))


def install(portmask: int, ports: int, eth_header: np.ndarray) -> tuple[Tables, list[str]]:
    """The lookup tables for ``portmask`` over ``ports`` probed ports, and the console
    lines of the routes added ("Added route 198.18.1.0 / 24 (1), next_hop 1")."""
    lines = []
    lpm4, lpm6 = Lpm4(), Lpm6()
    for family, routes, table in ((4, IPV4_ROUTES, lpm4), (6, IPV6_ROUTES, lpm6)):
        for index, (address, depth, port) in enumerate(routes):
            if not portmask >> port & 1:
                continue
            route = f"{_text(family, address)} / {depth} ({port})"
            if port >= ports:                       # rte_node_ip{4,6}_rewrite_add: no ethdev_tx node
                raise SimError(f"Unable to add next hop {index} for route {route} (port {port} is in -p 0x{portmask:x} "
                               f"but no --vdev made it: {ports} port{'s' if ports != 1 else ''})")
            table.add(address, depth, index)
            lines.append(f"L3FWD_GRAPH: Added route {route}, next_hop {index}")
    route_port = np.array([port for _, _, port in IPV4_ROUTES], np.int64)   # next hop = route index -> port
    return Tables(lpm4, lpm6, route_port, route_port.copy(), eth_header), lines
