"""l3fwd's compiled twins as Python calls them (``twins.h``): ``multi.c`` twins
:mod:`.multi`, ``simple.c`` twins :mod:`.simple`, ``trace.c`` the trace's key texts
(:func:`.trace.key_block`). The paths take the run's tables as ``struct routes`` over
the tables' own arrays (built and checked once per run); :func:`forward` runs a twin
over a batch as the path's ``forward`` does, and :func:`lcore_path` is what
``dataplane/lcore.c`` needs to run a path itself over a super-burst. They run when the
run uses the compiled twins (:mod:`l3fwd_sim.compiled`); the Python paths are the
definition.
"""
from __future__ import annotations

import numpy as np

from ..capture.twins import Packets
from ..compiled import Array, binding, need, take
from ..dataplane.ports import MAX_PORTS
from ..dataplane.twins import LcorePath
from ..tables import twins as tables
from . import acl
from .pipelines import DROP_REASONS

LOOKUPS = ("lpm", "fib", "em", "acl")      # twins.h's enum lookup
PIPELINES = ("multi", "simple")
# The simple path sends each packet with send_single_packet (tx.account_simple): as
# lcore.c's step drops, any reason — forwarded too — sends a burst packet by packet.
SINGLE_SENDS = np.ones_like(acl.STEP_DROPS)
KEY_BYTES = {4: (4, 2, 5), 6: (16, 5, 11)}  # per family: LPM key bytes, EM key words, ACL fields
_ETH = (Array("eth_header", "uint8_t", at_least=MAX_PORTS * 12),)
_ACL_RULES = (Array("acl actions", "int64_t"), Array("acl lines", "int64_t"))


def _check_numbering() -> None:
    """twins.h's enums name what pipelines.py names, in its order."""
    _, lib = binding()
    if [getattr(lib, reason.upper()) for reason in DROP_REASONS] != list(range(1, len(DROP_REASONS) + 1)) \
            or [getattr(lib, f"LOOKUP_{lookup.upper()}") for lookup in LOOKUPS] != list(range(len(LOOKUPS))):
        raise AssertionError("the compiled twins and pipelines.py number drop reasons or lookups differently")


class Routes:
    """``struct routes``: the run's tables for both families as the paths' twins read
    them, the MAC rewrite bytes per TX port, the trace's codes of the two tables and
    the portmask. ``.c`` is the struct; the object holds what it points into."""

    def __init__(self, lookup: str, table4: tuple, table6: tuple, eth_header, codes: tuple[int, int],
                 acl_rules: tuple | None, enabled: int):
        ffi, lib = binding()
        need(lookup in LOOKUPS, f"unknown lookup {lookup!r}")
        self.eth, = take(_ETH, eth_header)
        init = {"lookup": LOOKUPS.index(lookup), "eth_header": self.eth.ptr, "table_code": list(codes),
                "enabled": enabled & 0xFFFFFFFF}      # ports past 31 are never enabled (ports.is_enabled)
        self.tables = []
        for f, (family, arrays) in enumerate(((4, table4), (6, table6))):
            key_bytes, words, fields = KEY_BYTES[family]
            if lookup in ("lpm", "fib"):
                table = tables.lpm(arrays, key_bytes)
                init.setdefault("lpm", [{}, {}])[f] = table.init
            elif lookup == "em":
                table = tables.em(arrays, words)
                init.setdefault("em", [{}, {}])[f] = table.init
            else:
                table = tables.acl(arrays, fields)
                actions, lines = take(_ACL_RULES, acl_rules[0][f], acl_rules[1][f])
                need(actions.len >= table.rules and lines.len >= table.rules,
                     "acl actions and lines: one for every rule")
                a = actions.array[:table.rules]
                need(bool(((a < MAX_PORTS) & ((a >= 0) | (a == lib.ACL_DENY_ACTION))).all()),
                     "an ACL action that is neither a port nor a deny")
                init.setdefault("acl", [{}, {}])[f] = table.init
                init.setdefault("acl_action", [None, None])[f] = actions.ptr
                init.setdefault("acl_line", [None, None])[f] = lines.ptr
                self.tables.append((actions, lines))
            self.tables.append(table)
        self.c = ffi.new("struct routes *", init)


def _routes(setup, codes: tuple[int, int] = (0, 0)) -> Routes:
    """The run's :class:`Routes` with the trace's ``codes`` for its two tables, built
    once per run."""
    key = "compiled", codes
    if key not in setup.derived:
        _check_numbering()
        routes, ports = setup.routes, setup.ports
        if setup.lookup == "em":
            table4, table6 = routes.v4.probe_arrays(), routes.v6.probe_arrays()
        else:
            table4, table6 = routes.v4.walk_arrays(), routes.v6.walk_arrays()
        acl_rules = None
        if setup.lookup == "acl":
            acl_rules = (tuple(np.ascontiguousarray(a, np.int64) for a in (routes.action4, routes.action6)),
                         tuple(np.ascontiguousarray(routes.lines[family], np.int64) for family in (4, 6)))
        enabled = sum(1 << port for port in range(MAX_PORTS) if ports.is_enabled(port))
        setup.derived[key] = Routes(setup.lookup, table4, table6, ports.eth_header.reshape(-1), codes, acl_rules,
                                    enabled)
    return setup.derived[key]


def lcore_path(setup, pipeline: str, codes: tuple[int, int] = (0, 0)) -> LcorePath:
    """What ``lcore.c`` needs to run ``pipeline`` itself over a super-burst: its twin,
    the tables as it takes them (with the trace's ``codes`` for them, when tracing), and
    the drops that make a burst's TX calls ``send_single_packet`` per packet (every
    burst on the simple path; ACL mode's classification drops on the multi path,
    :func:`~.acl.account_acl`; None: none)."""
    ffi, lib = binding()
    if pipeline == "simple":
        step_drops = SINGLE_SENDS
    else:
        step_drops = acl.STEP_DROPS if setup.lookup == "acl" else None
    need(pipeline in PIPELINES, f"unknown pipeline {pipeline!r}")
    routes = _routes(setup, codes)
    return LcorePath(ffi.addressof(lib, f"lcore_forward_{pipeline}"), routes.c, routes,
                     step_drops)


_VERDICTS = (Array("dest", "int64_t", True), Array("reason", "uint8_t", True, "dest"))
_NOTES = (Array("table", "uint8_t", True), Array("rule", "int64_t", True), Array("next_hop", "int64_t", True))


def forward_path(pipeline: str, packets: tuple, routes: Routes, verdicts: tuple) -> None:
    """``forward_multi`` or ``forward_simple`` over ``packets`` (PacketBatch.arrays(),
    heads edited in place): verdicts (dest, reason, table, rule, next_hop), the last
    three None unless tracing."""
    ffi, lib = binding()
    p = Packets(packets, writable=True)
    dest, reason, *notes = verdicts
    d, r = take(_VERDICTS, dest, reason)
    need(d.len >= p.n, f"dest: {d.len} items, at least {p.n} needed")
    need(not p.n or bool(((p.in_port >= 0) & (p.in_port < MAX_PORTS)).all()), "an input port outside 0..31")
    v = {"dest": d.ptr, "reason": r.ptr}
    if notes[0] is not None:
        table, rule, next_hop = take(_NOTES, *notes)
        need(min(table.len, rule.len, next_hop.len) >= p.n, "table, rule, next_hop: one for each packet")
        v.update(table=table.ptr, rule=rule.ptr, next_hop=next_hop.ptr)
    getattr(lib, f"forward_{pipeline}")(p.c, routes.c, ffi.new("struct verdicts *", v))


def forward(pipeline: str, batch, setup, timer, trace) -> tuple[np.ndarray, np.ndarray]:
    """``pipeline``'s ``forward`` by its twin, noting the lookups' answers in ``trace``
    (a :class:`~l3fwd_sim.dataplane.hits.Decisions`, or None) as the Python path does."""
    with timer("forward"):
        codes = (0, 0) if trace is None else tuple(trace.codes[f"{setup.lookup}{family}"] for family in (4, 6))
        notes = (None, None, None) if trace is None else (trace.table, trace.rule, trace.next_hop)
        dest, reason = np.empty(len(batch), np.int64), np.empty(len(batch), np.uint8)
        forward_path(pipeline, batch.arrays(), _routes(setup, codes), (dest, reason, *notes))
    return dest, reason


_KEYS = (Array("table", "uint8_t"), Array("heads", "uint8_t", at_least="table", matrix=True),
         Array("kinds", "uint8_t"))


def key_texts(table, heads, kinds) -> tuple[np.ndarray, int, int]:
    """trace.key_block's texts: (texts, width, longest) — n rows of ``width`` bytes
    (room for the longest text of the kinds the rows have), each key's JSON text
    NUL-padded; heads at frame offsets (58+ bytes a row); kinds: the key_kind of each
    table code."""
    ffi, lib = binding()
    t, h, k = take(_KEYS, table, heads, kinds)
    need(h.cols >= lib.KEY_FRAME_BYTES, f"a head: {h.cols} bytes, at least {lib.KEY_FRAME_BYTES} needed")
    need(not k.len or k.array.max() <= lib.KEY_FIVE_TUPLE6, "key_texts: an unknown key kind")
    need(not t.len or t.array.max() < k.len, "key_texts: a table code without a kind")
    used = np.bincount(t.array, minlength=k.len) > 0                    # the table codes the rows have
    longest = max((lib.key_text_bytes[kind] for kind in k.array[used].tolist()), default=0)
    width = max(8, (longest + 7) // 8 * 8)
    texts = np.empty(t.len * width, np.uint8)                           # key_texts pads every row itself
    longest = lib.key_texts(t.ptr, h.ptr, h.stride, t.len, k.ptr, ffi.from_buffer("uint8_t[]", texts),
                            width)
    return texts, width, longest
