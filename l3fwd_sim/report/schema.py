"""What a report reads of ``stats.json``, checked before anything is drawn: a file that is
not what ``run`` (l3fwd or l3fwd-graph) or ``testpmd`` writes ends in one line naming the
file and the key.

A schema is a type (or a tuple of types; numbers must be finite and >= 0), :class:`Maybe`
(null allowed), a list of one schema (each item) or a dict: its named keys must be there (a trailing ``?``: may be
there), ``"*"`` is the schema of every other key (a map: ports, reasons, stages); keys
it does not name are otherwise left alone, so that a field added later breaks nothing.
Beyond what a schema says: each key of ``graph.edges`` must join two nodes of ``graph.nodes``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

from ..errors import SimError
from ..numbers import brief
from ..text import printable


class Maybe:
    """A schema that also allows null."""

    def __init__(self, schema):
        self.schema = schema


NUMBER = (int, float)
_MAX_COUNT = (1 << 64) - 1          # what run and testpmd count in: uint64
_COUNTS = {"*": int}
_TIMES = {"*": NUMBER}
_NODE = {"calls": int, "objs": int, "realloc_count": int, "xstats?": _COUNTS}
EDGE = " -> "                       # graph.edges' keys: "<node> -> <node>"

STATS = {
    "options": {"inputs?": {"*": str}, "dpdk?": str},
    "ports": {"*": {"rx": int, "tx": int, "dropped": int, "out": int, "drops": _COUNTS, "to?": _COUNTS,
                    "tx_model?": {"tx_burst_calls": int}}},
    "totals": {"rx": int, "tx": int, "dropped": int},
    "drops": _COUNTS,
    "stages_ms": _TIMES,
    "stages_ns_per_packet": _TIMES,
    "setup_ms": _TIMES,
    "elapsed_seconds": NUMBER,
    "warnings": [str],
    "conveniences?": [str],
    "input_losses?": [str],
    "trace?": Maybe({"file": str, "limit": (str, int), "packets": int, "dpdk?": str}),
    "lcores?": {"per_lcore": {"*": {"rx": int, "tx": int, "dropped": int, "share": NUMBER, "tx_queue": int,
                                    "rx_queues": [[int]], "rx_per_queue": _COUNTS}},
                "imbalance": NUMBER},
    "rules?": [{"file": str, "line": int, "table": str, "installed": bool, "packets": int, "bytes": int}],
    "rules_never_hit?": int,
    "rules_not_installed?": _COUNTS,
    "graph?": {"graphs": {"*": {"lcore": int, "graph_id": int, "tx_queue": int, "walks": int, "nodes": {"*": _NODE}}},
               "nodes": {"*": _NODE}, "edges": _COUNTS},
}


def load_stats(path: Path) -> dict:
    """``stats.json`` read and checked (SimError: one line naming ``path``)."""
    try:
        stats = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise SimError(f"{path}: no such file: give the output directory of an l3fwd-sim run or testpmd") from None
    except OSError as err:
        raise SimError(f"{path}: cannot read: {err.strerror}") from None
    except (ValueError, RecursionError) as err:     # JSONDecodeError, UnicodeDecodeError, absurd nesting
        raise SimError(f"{path}: not a stats.json: {err}") from None
    problem = mismatch(stats, STATS, "") or _edge_mismatch(stats.get("graph"))
    if problem:
        raise SimError(f"{path}: not a stats.json of l3fwd-sim: {problem}")
    return stats


def mismatch(value, schema, where: str) -> str | None:
    """Where ``value`` departs from ``schema`` (``ports.0.rx: not int``), or None."""
    if isinstance(schema, Maybe):
        return None if value is None else mismatch(value, schema.schema, where)
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return f"{where or 'the document'}: not an object"
        named = {key.rstrip("?"): (inner, key.endswith("?")) for key, inner in schema.items() if key != "*"}
        for key, (inner, optional) in named.items():
            if key not in value and not optional:
                return f"{_join(where, key)}: missing"
        others = schema.get("*")
        for key, item in value.items():
            inner = named[key][0] if key in named else others
            if inner is not None and (problem := mismatch(item, inner, _join(where, key))):
                return problem
        return None
    if isinstance(schema, list):
        if not isinstance(value, list):
            return f"{where}: not a list"
        return next((p for i, item in enumerate(value) if (p := mismatch(item, schema[0], f"{where}[{i}]"))), None)
    types = schema if isinstance(schema, tuple) else (schema,)
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
        return f"{where}: not {' or '.join(t.__name__ for t in types)}"
    # every number a report reads is a count, a time, a share or a ratio
    if isinstance(value, int) and not isinstance(value, bool) and value > _MAX_COUNT:   # math.isfinite() would overflow
        return f"{where}: {brief(str(value))} is more than a 64-bit counter holds"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not (math.isfinite(value) and value >= 0):
        return f"{where}: {value} is not a number >= 0"
    return None


def _edge_mismatch(graph: dict | None) -> str | None:
    """The first edge of ``graph.edges`` that does not join two nodes of ``graph.nodes``
    (the drawing places nodes from there), or None."""
    if graph is None:
        return None
    for key in graph["edges"]:
        ends = key.split(EDGE)
        if len(ends) != 2 or not set(ends) <= graph["nodes"].keys():
            return f"{_join('graph.edges', key)}: not two nodes of graph.nodes joined by '{EDGE}'"
    return None


def _join(where: str, key: str) -> str:
    """A key's path (``ports.0.rx``); the key as printable text: it is the input's, and the
    message is one line."""
    return f"{where}.{printable(key)}" if where else printable(key)
