"""Why two runs' outputs differ: the decision each run made for the input packet behind a
difference, read from its trace line (``run --trace``), and where DPDK's own two paths
disagree, which of their documented path differences it is.

This module is the home of the path differences (:data:`PATH_DIFFERENCES`, D1–D10:
``../shared/reference/dpdk/path_differences.md``, as l3fwd-sim models each row);
docs/faithfulness.md shows the same table, and ``tests/diff/test_causes.py`` keeps the
two equal.

A trace line becomes a :class:`Decision` — dropped (the reason), sent after a lookup hit
(the table and the rule's ``file:line``, the TX port), after a miss or without a lookup
(sent back out of the input port, as l3fwd sends a packet without a next hop), or not
traced — and a difference's input packet the pair of its decisions in A and B, named by
:func:`cause`: ``unknown_ptype in A``, ``lpm4 miss in B``, ``lpm4: another rule``, ``the
same decision``…; with the two runs' pipelines and lookup mode (their ``stats.json``),
:func:`path_difference` tells the row of the table that makes the simple and the multi
path decide that packet differently (e.g. D1: a non-IP frame the simple path drops and
the multi path sends back).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

# ---------------------------------------------------------------------------------------
# the path differences
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PathDifference:
    """One row: what input, and what each path does with it (Markdown, as the docs show it)."""
    id: str
    input: str
    simple: str
    multi: str


PATH_DIFFERENCES = {d.id: d for d in (
    PathDifference("D1", "non-IP frame (ARP, VLAN-tagged, LLDP, …), lpm or em", "dropped (`unknown_ptype`)",
                   "sent back out of the input port, MACs rewritten"),
    PathDifference("D2", "em: IPv4/IPv6 that is not TCP/UDP (ICMP, proto 61, …)", "dropped (`not_tcp_udp`)",
                   "input port; IPv4 with TTL − 1 and the checksum update (and dropped if RFC 1812-invalid)"),
    PathDifference("D3", "em: IPv4 with options (IHL > 5)", "dropped (`not_tcp_udp`)",
                   "input port, TTL − 1, checksum update"),
    PathDifference("D4", "em: IPv6 with an extension header", "dropped (`not_tcp_udp`)", "input port"),
    PathDifference("D5", "bad IPv4 header checksum", "forwarded (no checksum flag from net_pcap)", "forwarded"),
    PathDifference("D6", "frame shorter than 20 bytes with the IPv4 EtherType",
                   "dropped (`rfc1812_invalid`, l3fwd's own check)", "dropped (`truncated`, see below)"),
    PathDifference("D7", "LPM next hop outside the portmask",
                   "cannot happen: such routes are never installed (as in l3fwd; routes to ports ≥ 32 are not "
                   "installed either, where C's shift is undefined)", "same"),
    PathDifference("D8", "next hop ≥ 32768", "cannot happen: rule-file ports are 0..255", "same"),
    PathDifference("D9", "em: RFC 1812-invalid IPv4 TCP/UDP",
                   "dropped — DPDK frees it and then still enqueues it (a use-after-free); l3fwd-sim drops it",
                   "dropped"),
    PathDifference("D10", "fib: any packet without the IPv4 type",
                   "looked up as IPv6 with frame bytes 38..53 (DPDK's per-packet FIB variant behaves the same)",
                   "same"),
)}
# Only D1–D4 make the two pipelines' outputs differ: D5, D7, D8, D10 are decided alike
# (or cannot happen), D6 and D9 drop the packet in both.

# IPv6 extension headers (IANA's "IPv6 Extension Header Types"): a not-TCP/UDP packet whose
# next header is one of them is D4, any other (ICMPv6, no next header, ...) D2
IPV6_EXTENSION_HEADERS = frozenset({0, 43, 44, 50, 51, 60, 135, 139, 140, 253, 254})
_NEXT_HEADER = re.compile(r"\bnext header ([0-9]+)\b")


def plain(markdown: str) -> str:
    """A cell of the table as plain text (no backticks)."""
    return markdown.replace("`", "")


# ---------------------------------------------------------------------------------------
# one run's decision for one packet
# ---------------------------------------------------------------------------------------
SENT_BACK = "sent back out of the input port"


@dataclass(frozen=True)
class Decision:
    """What one run did with one input packet, as its trace line says (``traced`` False:
    the trace has no line for it)."""
    traced: bool = True
    drop: str | None = None
    table: str | None = None
    rule: str | None = None           # "file:line" of the rule that decided (None: a miss, or no lookup)
    tx_port: int | None = None        # None: dropped
    back: bool = False                # sent out of its input port
    ptype: str | None = None
    next_header: int | None = None    # the IPv6 next header a not-TCP/UDP detail names

    @property
    def sent(self) -> bool:
        return self.traced and self.drop is None and self.tx_port is not None

    @property
    def missed(self) -> bool:
        return self.sent and self.table is not None and self.rule is None

    def text(self) -> str:
        """``dropped: unknown_ptype``, ``lpm4 routes/lpm_default_v4.cfg:4 → port 1``,
        ``lpm4 miss: sent back out of the input port``, ``no lookup: sent back out of the
        input port``, ``not traced``."""
        if not self.traced:
            return "not traced"
        if not self.sent:
            return f"dropped: {self.drop}" if self.drop else "dropped"
        where = SENT_BACK if self.back else f"→ port {self.tx_port}"
        if self.table is None:
            return f"no lookup: {where}" if self.back else f"no lookup {where}"
        if self.rule is None:
            return f"{self.table} miss: {where}" if self.back else f"{self.table} miss {where}"
        return f"{self.table} {self.rule} → port {self.tx_port}"

    def to_dict(self) -> dict:
        """The decision (its text) and what it is made of; ``sent``: ``"input port"``, a
        port, or null (dropped or not traced)."""
        return {"decision": self.text(), "traced": self.traced, "drop": self.drop, "table": self.table,
                "rule": self.rule,
                "sent": None if not self.sent else "input port" if self.back else self.tx_port}


NOT_TRACED = Decision(traced=False)
UNKNOWN_PACKET = "input packet not known"     # the other side of a record that is not traced


def decision(line: dict | None) -> Decision:
    """The decision of one trace line (a JSON object; None: not traced)."""
    if line is None:
        return NOT_TRACED
    rule = line.get("rule")
    if isinstance(rule, dict):
        rule = f"{rule.get('file')}:{rule.get('line')}"
    elif rule is not None:
        rule = str(rule)
    detail = line.get("detail")
    found = _NEXT_HEADER.search(detail) if isinstance(detail, str) else None
    drop, tx_port = line.get("drop"), line.get("tx_port")
    return Decision(True, None if drop is None else str(drop), _text(line.get("table")), rule,
                    tx_port if isinstance(tx_port, int) else None,
                    tx_port is not None and tx_port == line.get("rx_port"), _text(line.get("ptype")),
                    int(found.group(1)) if found else None)


def _text(value) -> str | None:
    return None if value is None else str(value)


# ---------------------------------------------------------------------------------------
# the cause of a difference: the two decisions for its input packet
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cause:
    """Why a difference's input packet came out differently: ``headline`` (what differs),
    ``path_difference`` (D1–D10 or None) and the two decisions' texts, A's and B's (causes
    are equal when these are); ``decisions``: the two :class:`Decision` (None: unknown)."""
    headline: str
    path_difference: str | None
    a: str
    b: str
    decisions: tuple = field(default=(None, None), compare=False, hash=False)

    def title(self) -> str:
        """``unknown_ptype in A (D1)``."""
        return title(self.to_dict())

    def one_line(self) -> str:
        """``unknown_ptype in A (D1) — A: dropped: unknown_ptype; B: no lookup: sent back…``."""
        return one_line(self.to_dict())

    def to_dict(self) -> dict:
        """``{"cause", "path_difference", "a", "b"}``, each side's decision as
        :meth:`Decision.to_dict` (``{"decision": "input packet not known", ...}`` when its
        own record is not traced)."""
        sides = [d.to_dict() if d is not None else
                 {"decision": text, "traced": None, "drop": None, "table": None, "rule": None, "sent": None}
                 for d, text in zip(self.decisions, (self.a, self.b))]
        return {"cause": self.headline, "path_difference": self.path_difference, "a": sides[0], "b": sides[1]}


def title(cause: dict) -> str:
    """A cause (:meth:`Cause.to_dict`) in a few words: ``unknown_ptype in A (D1)``."""
    return cause["cause"] + (f" ({cause['path_difference']})" if cause["path_difference"] else "")


def one_line(cause: dict) -> str:
    """A cause (:meth:`Cause.to_dict`) with both decisions: ``unknown_ptype in A (D1) —
    A: dropped: unknown_ptype; B: no lookup: sent back out of the input port``."""
    return f"{title(cause)} — A: {cause['a']['decision']}; B: {cause['b']['decision']}"


def cause(a: Decision, b: Decision, runs: dict | None = None) -> Cause:
    """The cause of a difference whose input packet run A decided as ``a`` and run B as
    ``b``; ``runs``: each run's ``{"pipeline", "lookup"}`` (:func:`run_of`), to name the
    path difference where the two runs are DPDK's two paths."""
    return Cause(headline(a, b), path_difference(runs, a, b), a.text(), b.text(), (a, b))


def untraced_record(side: str) -> Cause:
    """The cause of a difference whose own record of ``side`` is not in its trace: its
    input packet is not known."""
    if side == "A":
        return Cause("not traced in A", None, NOT_TRACED.text(), UNKNOWN_PACKET, (NOT_TRACED, None))
    return Cause("not traced in B", None, UNKNOWN_PACKET, NOT_TRACED.text(), (None, NOT_TRACED))


def headline(a: Decision, b: Decision) -> str:
    """What differs between the two decisions, in a few words."""
    if not (a.traced and b.traced):
        return "not traced in " + ("A and B" if not (a.traced or b.traced) else "A" if not a.traced else "B")
    if a.sent != b.sent:
        side, dropped = ("A", a) if not a.sent else ("B", b)
        return f"{dropped.drop or 'dropped'} in {side}"
    if not a.sent:
        return "dropped in both" if a.drop == b.drop else f"{a.drop} in A, {b.drop} in B"
    if a.text() == b.text():
        return "the same decision"
    if (a.table is None) != (b.table is None):
        return f"no lookup in {'A' if a.table is None else 'B'}"
    if a.table != b.table:
        return f"{a.table} in A, {b.table} in B"
    if a.missed != b.missed:
        return f"{a.table} miss in {'A' if a.missed else 'B'}"
    if a.rule != b.rule:
        return f"{a.table}: another rule"
    return "another port"


def path_difference(runs: dict | None, a: Decision, b: Decision) -> str | None:
    """The row of :data:`PATH_DIFFERENCES` behind two decisions for one packet, when one
    run is the simple path and the other the multi path of one lookup mode (``runs``:
    {"a": {"pipeline", "lookup"}, "b": ...}); None otherwise."""
    run_a, run_b = (runs or {}).get("a"), (runs or {}).get("b")
    if not (run_a and run_b) or run_a.get("lookup") != run_b.get("lookup"):
        return None
    pipelines = (run_a.get("pipeline"), run_b.get("pipeline"))
    if pipelines == ("simple", "multi"):
        simple, multi = a, b
    elif pipelines == ("multi", "simple"):
        simple, multi = b, a
    else:
        return None
    if not (simple.traced and multi.traced) or simple.sent or not multi.sent:
        return None                                   # D1–D4: the simple path drops what the multi path sends
    lookup = run_a["lookup"]
    if simple.drop == "unknown_ptype" and lookup in ("lpm", "em"):
        return "D1"
    if simple.drop == "not_tcp_udp" and lookup == "em":
        if simple.ptype == "ipv4_ext":
            return "D3"
        next_header = simple.next_header if simple.next_header is not None else multi.next_header
        if simple.ptype == "ipv6_ext" and next_header in IPV6_EXTENSION_HEADERS:
            return "D4"
        return "D2"
    return None


# ---------------------------------------------------------------------------------------
# the runs
# ---------------------------------------------------------------------------------------
def run_of(trace: Path) -> dict | None:
    """The run a trace belongs to, from the ``stats.json`` beside it: ``{"stats": path,
    "pipeline", "lookup"}``; None without one (or when it names neither)."""
    path = Path(trace).parent / "stats.json"
    try:
        options = json.loads(path.read_text())["options"]
        pipeline, lookup = options.get("pipeline"), options.get("lookup")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not (isinstance(pipeline, str) and isinstance(lookup, str)):
        return None
    return {"stats": str(path), "pipeline": pipeline, "lookup": lookup}
