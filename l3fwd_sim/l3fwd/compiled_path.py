"""The l3fwd paths' compiled twins as the Python side calls them: ``multi.c`` twins
:mod:`.multi`, ``simple.c`` twins :mod:`.simple`. Both take the run's tables as views of
the tables' own arrays (derived once per run); :func:`forward` runs a twin over a batch
as the path's ``forward`` does, and :func:`lcore_path` is what ``dataplane/lcore.c``
needs to run a path itself over a super-burst. They run when the run uses the compiled
twins (:mod:`l3fwd_sim.compiled`); the Python paths are the definition.
"""
from __future__ import annotations

import numpy as np

from . import acl
from .pipelines import DROP_REASONS

LOOKUPS = ("lpm", "fib", "em", "acl")      # compiled.h's enum lookup
PIPELINES = ("multi", "simple")            # compiled.c's PIPELINES
# The simple path sends each packet with send_single_packet (tx.account_simple): as
# lcore.c's step drops, any reason — forwarded too — sends a burst packet by packet.
SINGLE_SENDS = np.ones_like(acl.STEP_DROPS)


def _routes(setup, codes: tuple[int, int] = (0, 0)) -> tuple:
    """The run's tables as the twins take them (``compiled.c``'s ``routes_of``): lookup,
    IPv4 table, IPv6 table, MAC rewrite bytes, the trace's ``codes`` of the two tables,
    ACL actions, ACL lines and the portmask. All but the codes are derived once per run."""
    if "compiled" not in setup.derived:
        routes, ports = setup.routes, setup.ports
        if setup.lookup == "em":
            tables = routes.v4.probe_arrays(), routes.v6.probe_arrays()
        else:
            tables = routes.v4.walk_arrays(), routes.v6.walk_arrays()
        actions = lines = None
        if setup.lookup == "acl":
            actions = tuple(np.ascontiguousarray(a, np.int64) for a in (routes.action4, routes.action6))
            lines = tuple(np.ascontiguousarray(routes.lines[family], np.int64) for family in (4, 6))
        enabled = sum(1 << port for port in range(32) if ports.is_enabled(port))
        setup.derived["compiled"] = (LOOKUPS.index(setup.lookup), *tables, ports.eth_header.reshape(-1), actions,
                                     lines, enabled)
    lookup, table4, table6, eth_header, actions, lines, enabled = setup.derived["compiled"]
    return lookup, table4, table6, eth_header, codes, actions, lines, enabled


def lcore_path(setup, pipeline: str, codes: tuple[int, int] = (0, 0)) -> tuple:
    """What ``lcore.c`` needs to run ``pipeline`` itself over a super-burst: which twin,
    the tables as it takes them (with the trace's ``codes`` for them, when tracing), and
    the drops that make a burst's TX calls ``send_single_packet`` per packet (every
    burst on the simple path; ACL mode's classification drops on the multi path,
    :func:`~.acl.account_acl`; None: none)."""
    if pipeline == "simple":
        step_drops = SINGLE_SENDS
    else:
        step_drops = acl.STEP_DROPS if setup.lookup == "acl" else None
    return PIPELINES.index(pipeline), _routes(setup, codes), step_drops


def forward(k, pipeline: str, batch, setup, timer, trace) -> tuple[np.ndarray, np.ndarray]:
    """``pipeline``'s ``forward`` by its twin, noting the lookups' answers in ``trace``
    (a :class:`~l3fwd_sim.dataplane.hits.Decisions`, or None) as the Python path does."""
    if k.DROP_REASONS != DROP_REASONS or k.LOOKUPS != LOOKUPS or k.PIPELINES != PIPELINES:
        raise AssertionError("the compiled twins and pipelines.py number drop reasons, lookups or paths differently")
    with timer("forward"):
        codes = (0, 0) if trace is None else tuple(trace.codes[f"{setup.lookup}{family}"] for family in (4, 6))
        notes = (None, None, None) if trace is None else (trace.table, trace.rule, trace.next_hop)
        dest, reason = np.empty(len(batch), np.int64), np.empty(len(batch), np.uint8)
        getattr(k, f"forward_{pipeline}")(batch.arrays(), _routes(setup, codes), (dest, reason, *notes))
    return dest, reason
