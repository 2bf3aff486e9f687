"""Route tables as dpdk-l3fwd sets them up (``setup_lpm``, ``setup_fib``, ``setup_hash``,
``setup_acl``).

Rule files are used only when both ``--rule_ipv4`` and ``--rule_ipv6`` are given;
otherwise l3fwd says "Missing 1 or more rule files, using default instead" and installs
its built-in tables (shipped here as ``routes/*.cfg``). Routes whose output port is not
in the portmask are not installed (``(1 << if_out) & enabled_port_mask``); routes to
ports >= 32 are not installed either (the C shift is undefined there), which is why
DPDK's "next hop outside the portmask" difference between the paths (path_differences
D7) cannot occur in l3fwd-sim. ACL mode is stricter, as l3fwd is: it has no default
rules, and a route line to a port outside the portmask stops it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..dataplane.ports import MAX_PORTS, PortConfig
from ..eal.net_pcap import dev_info_get
from ..errors import SimError
from ..tables.hash import ExactMatchTable
from ..tables.lpm import Fib, Lpm4, Lpm6, LpmError
from .acl import AclRoutes
from .em import em_table
from .rules import AclRules, LpmRuleArrays, lpm_rule_arrays, parse_acl_rules, parse_em_rules

DEFAULT_ROUTES = Path(__file__).parent / "routes"
MAX_ACL_RULE_NUM = 100_000       # l3fwd_acl.h: rules (deny and route) per ACL context


MISSING_RULE_FILES = "Missing 1 or more rule files, using default instead"


def rule_files(kind: str, rule_ipv4: Path | None, rule_ipv6: Path | None,
               warnings: list[str]) -> tuple[Path, Path]:
    """The (IPv4, IPv6) rule files l3fwd would use for ``kind`` ("lpm" or "em"): both
    given, or else its built-in tables, with its message (``read_config_files_lpm``)."""
    if rule_ipv4 and rule_ipv6:
        return Path(rule_ipv4), Path(rule_ipv6)
    warnings.append(MISSING_RULE_FILES)
    return DEFAULT_ROUTES / f"{kind}_default_v4.cfg", DEFAULT_ROUTES / f"{kind}_default_v6.cfg"


def file_label(path: Path) -> str:
    """How traces and ``lookup`` name a rule file: as given, or ``routes/<name>`` for
    l3fwd's built-in tables."""
    path = Path(path)
    return f"routes/{path.name}" if path.parent == DEFAULT_ROUTES else str(path)


def installed(rules: list, ports: PortConfig) -> list:
    """The rules ``setup_*`` keeps: output port enabled in the portmask."""
    return [r for r in rules if ports.is_enabled(r.port)]


@dataclass
class LpmRoutes:
    """rte_lpm/rte_lpm6 tables (``--lookup lpm``) or rte_fib/rte_fib6 (``--lookup fib``,
    :class:`~l3fwd_sim.tables.lpm.Fib`: a /0 route is the default next hop instead of a
    miss). Every installed rule's id is its line in ``files[family]``."""
    v4: Lpm4 | Fib
    v6: Lpm6 | Fib
    installed: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)        # family -> file_label of its rule file
    rule_lines: dict = field(default_factory=dict)   # family -> (each rule's line, installed?) in file order
    route_ports: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # each installed route's port,
                                                     # in set-up order
    not_installed: dict = field(default_factory=dict)   # port -> rule lines left out: the port is not enabled


@dataclass
class EmRoutes:
    """rte_hash flow tables (``--lookup em``); only one family is populated. Rule ids
    are lines of ``files[family]``."""
    v4: ExactMatchTable
    v6: ExactMatchTable
    installed: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    rule_lines: dict = field(default_factory=dict)   # family -> (each rule's line, installed?) in file order
    route_ports: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # each installed flow's port,
                                                     # in set-up order
    not_installed: dict = field(default_factory=dict)   # port -> flow lines left out: the port is not enabled


@dataclass
class Forwarding:
    """What a pipeline needs besides the packets: ports and route tables."""
    ports: PortConfig
    lookup: str
    routes: LpmRoutes | EmRoutes | AclRoutes
    derived: dict = field(default_factory=dict)   # what a pipeline derives from the tables once per run


def _build(table_cls, rules: LpmRuleArrays, ports: PortConfig, fib: bool):
    """The table of the installed rules, each with its line as rule id: rte_lpm's,
    which refuses depth 0, or rte_fib's, whose default route is the last installed /0
    rule."""
    refuse_depth_zero(rules, fib)
    rules = rules.select(ports.enabled[rules.port])
    defaults = np.flatnonzero(rules.depth == 0)
    default = (int(rules.port[defaults[-1]]), int(rules.line[defaults[-1]])) if len(defaults) else (None, None)
    rules = rules.select(rules.depth > 0)
    try:
        if table_cls is Lpm4:
            table = Lpm4()
            table.build(rules.prefix, rules.depth, rules.port, rules.line)
        else:
            table = table_cls.from_rules(zip(rules.prefix.tolist(), rules.depth.tolist(), rules.port.tolist(),
                                             rules.line.tolist()))
    except LpmError as err:
        raise SimError(f"{rules.path}: {err}") from None
    return Fib(table, *default) if fib else table


def refuse_depth_zero(rules: LpmRuleArrays, fib: bool) -> None:
    """rte_lpm/rte_lpm6 refuse depth 0 (l3fwd exits); rte_fib takes a /0 as its default route."""
    zero = np.flatnonzero(rules.depth == 0)
    if len(zero) and not fib:
        raise SimError(f"{rules.where(zero[0])}: depth 0 is rejected by rte_lpm/rte_lpm6 "
                       "(--lookup fib takes /0 as a default route)")


def load_routes(lookup: str, ports: PortConfig, rule_ipv4: Path | None = None,
                rule_ipv6: Path | None = None, ipv6: bool = False,
                warnings: list[str] | None = None) -> LpmRoutes | EmRoutes | AclRoutes:
    """The tables ``--lookup lookup`` installs (``ipv6``: l3fwd's ``--ipv6``, which
    makes EM populate the IPv6 flows instead of the IPv4 ones)."""
    if lookup == "acl":
        return _acl_routes(ports, rule_ipv4, rule_ipv6)
    kind = "em" if lookup == "em" else "lpm"
    warnings = warnings if warnings is not None else []
    path4, path6 = rule_files(kind, rule_ipv4, rule_ipv6, warnings)
    parse = parse_em_rules if lookup == "em" else lpm_rule_arrays
    rules4, rules6 = parse(path4, 4), parse(path6, 6)            # both files are read, as in l3fwd
    for path, rules in ((path4, rules4), (path6, rules6)):
        if not len(rules):
            warnings.append(f"{path}: no rules (dpdk-l3fwd itself refuses a rule file without R lines)")
    files = {4: file_label(path4), 6: file_label(path6)}
    if lookup == "em":
        lines = {family: (np.array([r.line for r in rules], np.int64),
                          np.array([ports.is_enabled(r.port) and populated for r in rules], bool))
                 for family, rules, populated in ((4, rules4, not ipv6), (6, rules6, ipv6))}
        populated = np.array([r.port for r in (rules6 if ipv6 else rules4)], np.int64)
        rules4 = installed(rules4, ports) if not ipv6 else []
        rules6 = installed(rules6, ports) if ipv6 else []
        left_out = _not_installed(populated, ports)
        return EmRoutes(em_table(rules4, 4), em_table(rules6, 6),
                        {"ipv4": len(rules4), "ipv6": len(rules6)}, files, lines,
                        np.array([rule.port for rule in (*rules4, *rules6)], np.int64), left_out)
    v4, v6 = _build(Lpm4, rules4, ports, lookup == "fib"), _build(Lpm6, rules6, ports, lookup == "fib")
    count = {"ipv4": int(ports.enabled[rules4.port].sum()), "ipv6": int(ports.enabled[rules6.port].sum())}
    lines = {family: (np.asarray(rules.line, np.int64), ports.enabled[rules.port])
             for family, rules in ((4, rules4), (6, rules6))}
    route_ports = np.concatenate([rules.port[ports.enabled[rules.port]] for rules in (rules4, rules6)]).astype(np.int64)
    left_out = _not_installed(np.concatenate([rules4.port, rules6.port]).astype(np.int64), ports)
    return LpmRoutes(v4, v6, count, files, lines, route_ports, left_out)


def _not_installed(rule_ports: np.ndarray, ports: PortConfig) -> dict[int, int]:
    """Per port, the rule lines l3fwd leaves out because the portmask does not enable the
    port (``(1 << if_out) & enabled_port_mask``)."""
    left = rule_ports[~ports.enabled[rule_ports]]
    return {int(port): int(n) for port, n in zip(*np.unique(left, return_counts=True))}


def not_installed_warning(routes, ports: PortConfig, rule_ipv4, rule_ipv6) -> list[str]:
    """A run with the user's rule files whose lines route to ports outside the portmask:
    one warning, the lines per port and the ``-p`` that would install them (l3fwd says
    nothing). l3fwd's own default tables are left out: their 16 ports are no one's choice."""
    counts = getattr(routes, "not_installed", {})          # ACL refuses such lines instead
    if not (counts and rule_ipv4 and rule_ipv6):
        return []
    reachable = [port for port in counts if port < MAX_PORTS]
    per_port = ", ".join(f"port {port}: {n:,}" for port, n in counts.items())
    total = sum(counts.values())
    fix = (f"; -p 0x{ports.portmask | sum(1 << p for p in reachable):x} would install "
           f"{'them' if len(reachable) == len(counts) else f'those to ports below {MAX_PORTS}'}") if reachable else ""
    return [f"{rule_ipv4}, {rule_ipv6}: {total:,} rule line{'s' if total != 1 else ''} not installed: their ports are "
            f"outside portmask 0x{ports.portmask:x} ({per_port}){fix}; dpdk-l3fwd installs routes to enabled ports only"]


# what l3fwd's own tables hold (l3fwd_lpm.c, l3fwd_fib.c: (max routes, tbl8 groups) per family)
TABLE_LIMITS = {"lpm": {"ipv4": (1024, 1 << 8), "ipv6": (1024, 1 << 16)},
                "fib": {"ipv4": (1 << 16, 1 << 15), "ipv6": ((1 << 16) - 1, 1 << 15)}}


def capacity_warning(lookup: str, routes) -> list[str]:
    """Where a table holds more than dpdk-l3fwd's own would: real l3fwd exits while
    adding the routes ("Unable to add entry N to the l3fwd LPM table"); l3fwd-sim's
    tables have no such limit and forward as if l3fwd held them all — said, not hidden."""
    warnings = []
    for family, (max_routes, max_groups) in TABLE_LIMITS.get(lookup, {}).items():
        table = routes.v4 if family == "ipv4" else routes.v6
        groups = getattr(getattr(table, "lpm", table), "tbl8_groups_used", 0)      # a Fib wraps its LPM
        if routes.installed[family] > max_routes or groups > max_groups:
            warnings.append(f"{routes.installed[family]:,} {family} routes ({groups:,} tbl8 groups): real dpdk-l3fwd's "
                            f"{lookup.upper()} table holds {max_routes:,} routes and {max_groups:,} tbl8 groups, so it "
                            f"exits while adding them (\"Unable to add entry … to the l3fwd {lookup.upper()} table\"); "
                            "l3fwd-sim forwards as if it held them all")
    return warnings


# the message of each lookup's set-up when rte_eth_dev_info_get fails for a route's port
_NO_DEVICE = {"lpm": "Unable to get device info for port {port}", "fib": "Unable to get device info for port {port}",
              "em": "Error during getting device (port {port}) info: No such device"}


def check_route_devices(lookup: str, routes, vdevs: list) -> None:
    """``setup_lpm``/``setup_fib``/``setup_hash`` ask ``rte_eth_dev_info_get`` for the
    port of every route (flow) they install, in order (IPv4's, then IPv6's), and exit on
    the first port no device has: ``-p 0xf`` over one vdev is refused as soon as a route
    to port 1 is installed. ``setup_acl`` asks no device."""
    if lookup in _NO_DEVICE and len(missing := np.flatnonzero(routes.route_ports >= len(vdevs))):
        port = int(routes.route_ports[missing[0]])
        dev_info_get(vdevs, port, _NO_DEVICE[lookup].format(port=port))


def rule_hit_sizes(lookup: str, routes) -> dict[str, int]:
    """Per table of the run, how many rule ids its hit counters hold: its rule file's
    last rule line + 1 (rule ids are lines)."""
    return {f"{lookup}{family}": int(lines.max()) + 1 if len(lines) else 0
            for family, (lines, _) in _rule_lines(routes).items()}


def rule_hit_list(lookup: str, routes, hits) -> list[dict]:
    """``stats.json``'s ``rules``: every rule line of the files in effect, in file order
    (IPv4's, then IPv6's), with whether it is installed and what it decided."""
    entries = []
    for family, (lines, installed_flags) in _rule_lines(routes).items():
        table = f"{lookup}{family}"
        packets, octets = hits.of(table)
        for line, is_installed in zip(lines.tolist(), installed_flags.tolist()):
            entries.append({"file": routes.files[family], "line": line, "table": table, "installed": is_installed,
                            "packets": int(packets[line]), "bytes": int(octets[line])})
    return entries


def _rule_lines(routes) -> dict:
    if isinstance(routes, AclRoutes):          # every ACL line is installed (l3fwd refuses the others)
        return {family: (lines, np.ones(len(lines), bool)) for family, lines in routes.lines.items()}
    return routes.rule_lines


def _acl_routes(ports: PortConfig, rule_ipv4: Path | None, rule_ipv6: Path | None) -> AclRoutes:
    """``read_config_files_acl`` + ``setup_acl``."""
    rules = acl_rules(ports, rule_ipv4, rule_ipv6)
    return AclRoutes.from_rules(*rules, {4: file_label(Path(rule_ipv4)), 6: file_label(Path(rule_ipv6))})


def acl_rules(ports: PortConfig, rule_ipv4: Path | None, rule_ipv6: Path | None) -> tuple[AclRules, AclRules]:
    """The ACL rule files as ``read_config_files_acl`` reads them: both are required,
    each holds at most ``MAX_ACL_RULE_NUM`` rules, and every route line's port must be
    enabled (``acl_add_rules``: "fwd number illegal")."""
    if not (rule_ipv4 and rule_ipv6):
        missing = "IPv4" if not rule_ipv4 else "IPv6"
        raise SimError(f"--lookup acl needs both --rule_ipv4 and --rule_ipv6: {missing} rule file not specified "
                       "(dpdk-l3fwd has no default ACL rules and refuses to start without them)")
    rules = parse_acl_rules(Path(rule_ipv4), 4), parse_acl_rules(Path(rule_ipv6), 6)
    for path, family_rules in zip((rule_ipv4, rule_ipv6), rules):
        if len(family_rules) > MAX_ACL_RULE_NUM:
            raise SimError(f"{path}: {len(family_rules)} rules, but dpdk-l3fwd's ACL context holds at most "
                           f"{MAX_ACL_RULE_NUM} (MAX_ACL_RULE_NUM: it stops with \"add rules failed\")")
        port = family_rules.port
        enabled = np.zeros(len(port), bool)
        in_range = (port >= 0) & (port < len(ports.enabled))
        enabled[in_range] = ports.enabled[port[in_range]]
        bad = np.flatnonzero((port >= 0) & ~enabled)
        if len(bad):
            raise SimError(f"{family_rules.where[bad[0]]}: routes to port {port[bad[0]]}, which the portmask does "
                           "not enable (dpdk-l3fwd stops: fwd number illegal)")
    return rules
