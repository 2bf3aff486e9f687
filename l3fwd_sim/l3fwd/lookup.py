"""``lookup``: ``ip route get`` for l3fwd's tables — what ``l3fwd-sim run`` does with a
packet carrying a given key, and which rule line decided it.

The tables are the ones ``run`` builds (:func:`~l3fwd_sim.l3fwd.routing.load_routes`,
portmask filtering included), and each key is looked up by the tables' own rule-aware
lookups, as the pipelines call them::

    from l3fwd_sim.l3fwd.lookup import LookupOptions, lookup
    report = lookup(LookupOptions(keys=["198.18.1.7"]))
    report["results"][0]["tx_port"]          # 1

Only the lookup is answered: what happens to a packet before it (its type, length and
RFC 1812 checks) or after it (the MAC rewrite) is :func:`~l3fwd_sim.l3fwd.run.run`'s.
With ``hits=OUT`` each deciding rule's counters from a run's ``OUT/stats.json`` are
added (:mod:`~l3fwd_sim.l3fwd.rule_hits`).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..dataplane.ports import MAX_PORTS, PortConfig
from ..errors import SimError
from . import acl, em
from .keys import ADDRESS_BYTES, DESTINATION_AT, FIVE_TUPLE_AT, ParsedKey, key_text, parse_key
from .routing import MISSING_RULE_FILES, AclRoutes, EmRoutes, LpmRoutes, load_routes, rule_files
from .rule_hits import counters_by_rule

ALL_PORTS = (1 << MAX_PORTS) - 1      # the default portmask: every port, so no route is left out
FORWARD = "forward"
MISS = "miss: sent back out of the input port"
ACL_MISS = "drop: ACL miss"
NOT_TCP_UDP = ("not looked up: em looks up TCP and UDP only (the simple path drops the packet, "
               "the multi path sends it back out of the input port)")


@dataclass
class LookupOptions:
    """Options of one ``lookup``, named as ``run`` names them."""
    keys: list[str]                      # as :func:`~l3fwd_sim.l3fwd.keys.parse_key` reads them
    lookup: str = "lpm"
    portmask: int | None = None          # default ALL_PORTS (0xffffffff): every route is installed
    rule_ipv4: Path | None = None
    rule_ipv6: Path | None = None
    ipv6: bool = False                   # l3fwd's --ipv6: EM installs the IPv6 flows only
    port: int | None = None              # the input port, where a miss is sent back (None: not resolved)
    hits: Path | None = None             # a run's output directory: add each deciding rule's counters


@dataclass
class Decision:
    """What the table answered for one key: the deciding rule's line in the family's
    rule file (None: no rule), the next hop (None: none), the TX port (None: no
    transmission, or the input port when it is not given) and the action text."""
    line: int | None
    next_hop: int | None
    tx_port: int | None
    action: str


def _miss(port: int | None) -> Decision:
    """lpm/em/fib without a next hop: ``dst_port = portid``, back out of the input port."""
    return Decision(None, None, port, MISS)


def _routed(next_hop: int | None, line: int | None, port: int | None) -> Decision:
    """``l3fwd_lpm_simple_forward`` / ``em_get_dst_port``: a next hop is sent to, a miss
    goes back out of the input port. l3fwd re-checks the next hop against the portmask
    (a port outside it also goes back to the input port), but a route to such a port
    is never installed (``setup_lpm``/``setup_hash`` skip it), so the re-check never
    changes an answer: :func:`_left_out` tells when it would have applied."""
    return _miss(port) if next_hop is None else Decision(line, next_hop, next_hop, FORWARD)


def _longest_prefix(routes: LpmRoutes, key: ParsedKey) -> tuple[int | None, int | None]:
    """(next hop, line) of the longest installed prefix holding the key's destination
    (rte_lpm_lookup / rte_lpm6_lookup, as ``lpm_get_dst_port`` calls them), or (None, None)."""
    at = DESTINATION_AT[key.family]
    destination = int.from_bytes(key.frame[at:at + ADDRESS_BYTES[key.family]], "big")
    return (routes.v4 if key.family == 4 else routes.v6).lookup_rule(destination)


def _lpm(routes: LpmRoutes, key: ParsedKey, port: int | None) -> Decision:
    """lpm, and fib, whose table answers a /0 route as the default next hop (a rule like
    any other); with none, a miss goes back out of the input port."""
    return _routed(*_longest_prefix(routes, key), port)


def _em(routes: EmRoutes, key: ParsedKey, port: int | None) -> Decision:
    """rte_hash_lookup of the masked 5-tuple (``em_get_dst_port``); only TCP and UDP are
    looked up (``em_parse_ptype``), the rest differs between the paths (D2)."""
    if key.frame[FIVE_TUPLE_AT[key.family][0]] not in (6, 17):
        return Decision(None, None, None, NOT_TCP_UDP)
    table = routes.v4 if key.family == 4 else routes.v6
    return _routed(*table.lookup_rule(em.key_of(key.frame, key.family)), port)


def _acl(routes: AclRoutes, key: ParsedKey, port: int | None) -> Decision:
    """rte_acl_classify: the first matching line routes or denies; in ACL mode a miss is
    dropped (``acl_process_pkts``), never sent back out of the input port."""
    heads = np.frombuffer(key.frame, np.uint8).reshape(1, -1)
    (action,), (line,) = (a.tolist() for a in routes.actions(heads, np.arange(1), key.family, rules=True))
    if action == acl.MISS:
        return Decision(None, None, None, ACL_MISS)
    if action == acl.DENY:
        return Decision(line, None, None, f"drop: ACL deny (line {line})")
    return Decision(line, action, action, FORWARD)


DECIDE = {"lpm": _lpm, "fib": _lpm, "em": _em, "acl": _acl}


def _rule_paths(options: LookupOptions) -> dict[int, Path]:
    """The rule file of each family, as ``load_routes`` picks it (its warnings aside)."""
    if options.lookup == "acl":
        return {4: Path(options.rule_ipv4), 6: Path(options.rule_ipv6)}
    kind = "em" if options.lookup == "em" else "lpm"
    return dict(zip((4, 6), rule_files(kind, options.rule_ipv4, options.rule_ipv6, [])))


def _rule_text(path: Path, line: int, cache: dict) -> str:
    """Line ``line`` (1-based, as the rule ids count) of ``path``, without its line end."""
    if path not in cache:
        cache[path] = path.read_bytes().decode("utf-8", errors="replace").split("\n")
    return cache[path][line - 1].rstrip()


def _family_warnings(options: LookupOptions, keys: list[ParsedKey]) -> list[str]:
    """EM installs one family (``--ipv6`` picks which); say so when a key is of the other."""
    if options.lookup != "em":
        return []
    empty = 4 if options.ipv6 else 6
    if not any(k.family == empty for k in keys):
        return []
    installed = "with --ipv6, --lookup em installs only the IPv6 flows" if options.ipv6 else \
        "without --ipv6, --lookup em installs only the IPv4 flows"
    return [f"{installed} (as dpdk-l3fwd does): every IPv{empty} key misses"]


def _left_out(decision: Decision, unfiltered: Decision, portmask: int) -> str | None:
    """Where a rule the portmask left out would have decided instead (``unfiltered``:
    the answer of the tables of every port): l3fwd's portmask re-check would apply to
    its next hop, but the rule is not installed, so the key falls through to a shorter
    rule or misses."""
    if unfiltered.line is None or unfiltered.line == decision.line:
        return None
    instead = "the key misses" if decision.line is None else f"line {decision.line} decides instead"
    return (f"line {unfiltered.line} routes to port {unfiltered.next_hop}, outside portmask 0x{portmask:x}, so "
            f"dpdk-l3fwd does not install it (its next-hop re-check never applies): {instead}")


def _add_hits(counted: tuple[Path, dict], keys: list[ParsedKey], results: list[dict], paths: dict[int, Path],
              labels: dict[int, str], warnings: list[str]) -> None:
    """``--hits OUT``: each result's ``hits``, the counters of its deciding rule in the
    run's stats (``counted``: :func:`~l3fwd_sim.l3fwd.rule_hits.counters_by_rule`'s),
    matched by rule file, line and table (None: no rule decided, or the run counted no
    such line). A rule file or table the run did not count is warned about once: its
    counters are of other tables than these."""
    stats, counters, _ = counted
    files = {(path, table) for path, _, table in counters}
    for key, result in zip(keys, results):
        path = paths[key.family].resolve()
        warning = (f"{stats} has no {key.table} counters of {labels[key.family]}: "
                   "the run used other rule files or another --lookup")
        if (path, key.table) not in files and warning not in warnings:
            warnings.append(warning)
        rule = result["rule"]
        result["hits"] = rule and counters.get((path, rule["line"], key.table))


def _portmask(options: LookupOptions, counted: tuple | None, warnings: list[str]) -> int:
    """The portmask to answer for: ``-p``, else with ``--hits OUT`` the run's (from its
    stats: the routes it installed are those the counters are of), else every port. A
    ``-p`` other than the run's is answered as given, with a warning."""
    run_mask = counted[2] if counted else None
    if options.portmask is None:
        return ALL_PORTS if run_mask is None else run_mask
    if run_mask is not None and run_mask != options.portmask:
        warnings.append(f"{counted[0]}: the run used portmask 0x{run_mask:x}, these answers are for -p "
                        f"0x{options.portmask:x}: a rule they show may not have been installed in the run")
    return options.portmask


def _check_port(options: LookupOptions, portmask: int) -> None:
    """The input port must be enabled, as ``check_port_config`` requires of an RX port."""
    if options.port is None:
        return
    if not 0 <= options.port < MAX_PORTS:
        raise SimError(f"--port {options.port}: not a port (0..{MAX_PORTS - 1})")
    if not portmask >> options.port & 1:
        raise SimError(f"--port {options.port} is not in portmask 0x{portmask:x}")


def lookup(options: LookupOptions) -> dict:
    """For each key, what ``run`` with the same options does with a packet carrying it:
    ``{"lookup", "portmask", "input_port", "warnings", "results": [{"key", "table",
    "rule": {"file", "line", "text"} | None, "next_hop", "tx_port", "action", "note"}, ...]}``
    (``note``: a rule the portmask left out, or None), and with ``hits`` a ``"hits":
    {"packets", "bytes"} | None`` per result. ACL acts on the portmask when the
    tables are built: a route line to a port outside it is an error, as in l3fwd."""
    keys = [parse_key(text, options.lookup) for text in options.keys]
    counted = None if options.hits is None else counters_by_rule(options.hits)    # refused before the tables are built
    warnings: list[str] = []
    portmask = _portmask(options, counted, warnings)
    _check_port(options, portmask)
    routes = load_routes(options.lookup, PortConfig(portmask), options.rule_ipv4, options.rule_ipv6,
                         options.ipv6, warnings)
    if not (options.rule_ipv4 or options.rule_ipv6) and MISSING_RULE_FILES in warnings:
        warnings.remove(MISSING_RULE_FILES)     # the defaults asked for: l3fwd's console note would be noise here
    unfiltered = None if portmask == ALL_PORTS or options.lookup == "acl" else \
        load_routes(options.lookup, PortConfig(ALL_PORTS), options.rule_ipv4, options.rule_ipv6, options.ipv6, [])
    decide = DECIDE[options.lookup]
    paths, texts = _rule_paths(options), {}
    results = []
    for key in keys:
        decision = decide(routes, key, options.port)
        rule = None if decision.line is None else {
            "file": routes.files[key.family], "line": decision.line,
            "text": _rule_text(paths[key.family], decision.line, texts)}
        note = unfiltered and _left_out(decision, decide(unfiltered, key, options.port), portmask)
        results.append({"key": key_text(key.table, key.frame), "table": key.table, "rule": rule,
                        "next_hop": decision.next_hop, "tx_port": decision.tx_port, "action": decision.action,
                        "note": note})
    warnings += _family_warnings(options, keys)
    if counted:
        _add_hits(counted, keys, results, paths, routes.files, warnings)
    return {"lookup": options.lookup, "portmask": f"0x{portmask:x}", "input_port": options.port,
            "warnings": warnings, "results": results}


def _decision_text(result: dict) -> str:
    """``→ next hop N → port N`` when forwarded; else the action, and the TX port if any."""
    if result["action"] == FORWARD:
        return f"→ next hop {result['next_hop']} → port {result['tx_port']}"
    port = "" if result["tx_port"] is None else f" → port {result['tx_port']}"
    return f"→ {result['action']}{port}"


def format_lookup(report: dict) -> str:
    """One line per key: ``KEY  TABLE  FILE:LINE: RULE TEXT  → ...`` (``no matching
    rule → ...`` where no rule decided; just ``→ ...`` where em looks nothing up), an
    indented ``note:`` line under it where there is a note, and with ``--hits`` a
    ``hits:`` line under each deciding rule."""
    lines = []
    for result in report["results"]:
        rule = result["rule"]
        where = "" if result["action"] == NOT_TCP_UDP else "no matching rule " if rule is None else \
            f"{rule['file']}:{rule['line']}: {' '.join(rule['text'].split())}  "
        lines.append(f"{result['key']}  {result['table']}  {where}{_decision_text(result)}")
        if result["note"]:
            lines.append(f"    note: {result['note']}")
        if rule and "hits" in result:
            hits = result["hits"]
            lines.append("    hits: " + ("no counters of this line in the run's stats" if hits is None else
                                         f"{hits['packets']:,} packets, {hits['bytes']:,} bytes"))
    return "\n".join(lines)
