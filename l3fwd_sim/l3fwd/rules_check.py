"""``rules check``: a static look at l3fwd's rule files — the lines no packet can ever be
decided by, and the lines the tables never hold — without any traffic::

    from l3fwd_sim.l3fwd.rules_check import CheckOptions, check
    report = check(CheckOptions(lookup="acl", rule_ipv4=Path("acl4.cfg"), rule_ipv6=Path("acl6.cfg")))
    report.findings[0]           # Finding(file, line, kind, text, by): by, lines of the same file
    report.to_dict()             # what --json prints

The rules are read and filtered as ``run`` reads them (:mod:`~l3fwd_sim.l3fwd.routing`):
the same files (l3fwd's built-in tables unless both ``--rule_ipv4`` and ``--rule_ipv6``
are given, for lpm, fib and em), the same parsers, the same refusals (rte_lpm's depth 0;
ACL's missing file, rule count and route to a port outside the portmask), the same
portmask filter. Kinds of finding:

* ``shadowed``: no packet is ever decided by the line. ACL (``rte_acl_classify``, the
  first matching line of the file wins): every key the line matches is matched by an
  earlier line, or by the union of several. lpm/fib (``rte_lpm_lookup``, the longest
  installed prefix wins): every address of the prefix lies in a strictly longer
  installed prefix. ``by``: earlier lines that together match everything the ACL line
  matches (one that holds it all when there is one, else enough to cover it); the
  outermost longer prefixes inside an lpm/fib prefix.
* ``duplicate``: the same prefix (lpm/fib: family and depth, the address masked to the
  depth) or the same flow key (em) again; the line reported is the one not in effect,
  ``by`` names the one in effect: the last installed one (``rte_lpm_add`` of a present
  prefix, ``rte_hash_add_key`` of a present key, overwrite the next hop; rte_fib's
  default route is the last /0). A duplicate is not also reported as shadowed.
* ``not_installed``: an lpm/fib/em route to a port outside the portmask (``setup_lpm``
  / ``setup_hash`` skip it); ``by`` is empty. In ACL mode such a route is an error.

Text output, one finding per line, in file (IPv4, then IPv6) and line order::

    FILE:LINE: TEXT  — KIND by FILE:LINE, FILE:LINE, ...
    FILE:LINE: TEXT  — not_installed

where FILE is named as traces name it (``routes/lpm_default_v4.cfg`` for a built-in
table) and TEXT is the rule line, stripped; at most :data:`BY_SHOWN` ``by`` lines are
named, then ``… (N more)`` (the JSON report lists them all).

How (exact, no sampling):

* ACL. Each field's value space is cut into elementary intervals at every rule's bounds
  (the proto field, a bitmask match, into classes of values matched by the same rules),
  so a rule is a box of intervals. A line's candidates are the earlier rules whose box
  meets its own in every field, found :data:`ACL_QUERIES` lines at a time either by a
  join on the field where fewest pairs of rules meet (ranges of the rules sorted by
  start; when that field is selective, as addresses usually are) or by bit-vector
  tables per block of :data:`ACL_BLOCK` earlier rules (per field, the rules starting at
  or before and ending at or after a point), ANDed as uint64 words. A line with no
  candidate decides something; one with a candidate holding its whole box is shadowed
  by the first such. Otherwise the box is split field by field at the candidates'
  bounds, each piece keeping the candidates that hold it in that field (pieces with the
  same set are one question, asked once): a piece left with no candidate is a key the
  line decides, a piece one candidate holds in every field left is covered. Lines
  found shadowed are no candidates of later ones (their keys are matched earlier anyway).
* lpm/fib. Per depth, from the longest up, the set of "full" prefixes — installed, or
  both halves full — is built from the one below (a sort per depth, never an address
  expanded); a prefix both of whose halves are full is shadowed. Its ``by`` lines are
  found walking down from it to the installed prefixes that make its halves full.
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from itertools import repeat
from json.encoder import encode_basestring_ascii as _json_string
from operator import itemgetter
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..capture.pcap import paused_gc
from ..dataplane.ports import PortConfig
from .em import rule_key
from .lookup import ALL_PORTS
from .routing import MISSING_RULE_FILES, acl_rules, file_label, installed, refuse_depth_zero, rule_files
from .rules import AclRules, LpmRuleArrays, lpm_rule_arrays, parse_em_rules

SHADOWED, DUPLICATE, NOT_INSTALLED = "shadowed", "duplicate", "not_installed"
KINDS = (SHADOWED, DUPLICATE, NOT_INSTALLED)
TABLES = {4: "ipv4", 6: "ipv6"}
BY_SHOWN = 10                        # by lines named in the text output
ACL_BLOCK = 1024                     # earlier rules per block of bitset tables: 16 words a row
ACL_QUERIES = 8192                   # lines whose earlier rules are found together
JOIN_COST = 32                       # a pair met in a join costs about as much as 32 bit-vector (line, rule) tests
OUTPUT_CHUNK = 10_000                # findings written at once
CELLS = 1 << 20                      # bits held at once: candidate pairs, piece × candidate matrices


@dataclass
class CheckOptions:
    """Options of one ``rules check``, named as ``run`` names them."""
    lookup: str = "lpm"
    portmask: int | None = None          # default ALL_PORTS (0xffffffff): every route is installed
    rule_ipv4: Path | None = None
    rule_ipv6: Path | None = None


class Finding(NamedTuple):
    """A line of a rule file (``file`` named as traces name it, ``text`` the line
    stripped), what is wrong with it, and the lines of the same file that make it so."""
    file: str
    line: int
    kind: str
    text: str
    by: tuple[int, ...]

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "kind": self.kind, "text": self.text,
                "by": [{"file": self.file, "line": line} for line in self.by]}

    def __str__(self) -> str:
        return _finding_text(*self)


def _finding_text(file: str, line: int, kind: str, text: str, by: tuple) -> str:
    """``FILE:LINE: TEXT  — KIND by FILE:LINE, ...``, at most BY_SHOWN of the by lines."""
    if not by:
        return f"{file}:{line}: {text}  — {kind}"
    more = f", … ({len(by) - BY_SHOWN} more)" if len(by) > BY_SHOWN else ""
    return f"{file}:{line}: {text}  — {kind} by {', '.join([f'{file}:{b}' for b in by[:BY_SHOWN]])}{more}"


def _finding_json(file: str, line: int, kind: str, text: str, by: tuple) -> str:
    """``json.dumps(finding.to_dict())``, written out: the strings go through json's own
    (C) encoder, the rest is digits, at a fraction of json.dumps' cost per call."""
    file = _json_string(file)
    by = ", ".join([f'{{"file": {file}, "line": {b}}}' for b in by])
    return f'{{"file": {file}, "line": {line}, "kind": "{kind}", "text": {_json_string(text)}, "by": [{by}]}}'


@dataclass
class CheckReport:
    """The findings on both rule files, IPv4 then IPv6, by line; ``tables``: per table
    ("ipv4", "ipv6") its file, rule lines and findings of each kind."""
    lookup: str
    portmask: int
    warnings: list[str]
    tables: dict
    findings: list[Finding]

    def counts(self) -> dict:
        return {kind: sum(table[kind] for table in self.tables.values()) for kind in KINDS}

    def summary(self) -> dict:
        return {"lookup": self.lookup, "portmask": f"0x{self.portmask:x}", "warnings": self.warnings,
                "counts": self.counts(), "tables": self.tables}

    def to_dict(self) -> dict:
        """``{"lookup", "portmask", "warnings", "counts": {kind: n}, "tables": {...},
        "findings": [{"file", "line", "kind", "text", "by": [{"file", "line"}, ...]}, ...]}``."""
        return {**self.summary(), "findings": [finding.to_dict() for finding in self.findings]}

    def text_chunks(self) -> Iterator[str]:
        """The findings, a line each (see the module docstring), in chunks of whole lines:
        a million findings are never one string."""
        for at in range(0, len(self.findings), OUTPUT_CHUNK):
            yield "".join([_finding_text(*finding) + "\n" for finding in self.findings[at:at + OUTPUT_CHUNK]])

    def json_chunks(self) -> Iterator[str]:
        """:meth:`to_dict` as JSON, in chunks: the summary indented, each finding on a line
        of its own (an indented dump takes json's pure-Python encoder: a minute for a
        million findings)."""
        yield json.dumps(self.summary(), indent=2)[:-2] + ',\n  "findings": ['
        for at in range(0, len(self.findings), OUTPUT_CHUNK):
            yield ",".join([f"\n    {_finding_json(*finding)}" for finding in self.findings[at:at + OUTPUT_CHUNK]]) + \
                ("," if at + OUTPUT_CHUNK < len(self.findings) else "\n  ")
        yield "]\n}\n"


def check(options: CheckOptions) -> CheckReport:
    """The findings on the rule files ``run`` with the same options would use."""
    with paused_gc():                    # a finding or more per rule line: the collector would dominate
        return _check(options)


def _check(options: CheckOptions) -> CheckReport:
    portmask = ALL_PORTS if options.portmask is None else options.portmask
    ports = PortConfig(portmask)
    warnings: list[str] = []
    if options.lookup == "acl":
        paths, rules = _acl_rules(ports, options.rule_ipv4, options.rule_ipv6)
        found = {family: _acl_findings(family_rules) for family, family_rules in rules.items()}
    else:
        kind = "em" if options.lookup == "em" else "lpm"
        paths = dict(zip((4, 6), rule_files(kind, options.rule_ipv4, options.rule_ipv6, warnings)))
        if not (options.rule_ipv4 or options.rule_ipv6):
            warnings.remove(MISSING_RULE_FILES)        # the defaults asked for: l3fwd's note would be noise
        parse = parse_em_rules if kind == "em" else lpm_rule_arrays
        rules = {family: parse(path, family) for family, path in paths.items()}   # both read, as load_routes does
        for family, path in paths.items():
            if not len(rules[family]):
                warnings.append(f"{path}: no rules (dpdk-l3fwd itself refuses a rule file without R lines)")
        if kind == "em":
            found = {family: _em_findings(family_rules, family, ports) for family, family_rules in rules.items()}
        else:
            for family_rules in rules.values():
                refuse_depth_zero(family_rules, options.lookup == "fib")
            found = {family: _lpm_findings(family_rules, family, ports) for family, family_rules in rules.items()}
    findings, tables = [], {}
    for family, path in paths.items():
        label = file_label(path)
        found[family].sort(key=itemgetter(0))
        lines, kinds, by = zip(*found[family]) if found[family] else ((), (), ())
        findings += map(partial(tuple.__new__, Finding), zip(repeat(label), lines, kinds, _line_texts(path, lines), by))
        counts = Counter(kind for _, kind, _ in found[family])
        tables[TABLES[family]] = {"file": label, "rules": len(rules[family]), **{k: counts[k] for k in KINDS}}
    return CheckReport(options.lookup, portmask, warnings, tables, findings)


def _line_texts(path: Path, numbers: list[int]) -> list[str]:
    """Lines ``numbers`` of ``path``, stripped, counted as the rule parsers count them
    (``\\n`` ends a line)."""
    if not numbers:
        return []
    lines = Path(path).read_bytes().decode("utf-8", errors="replace").split("\n")
    return [lines[n - 1].strip() for n in numbers]


# ---------------------------------------------------------------------------------------
# lpm, fib, em
# ---------------------------------------------------------------------------------------
def _em_findings(rules: list, family: int, ports: PortConfig) -> list[tuple]:
    """Flows to disabled ports, and keys given again: ``em_table``'s dict keeps the last."""
    kept = [(rule_key(r, family), r.line) for r in installed(rules, ports)]
    in_effect = dict(kept)
    lines = {line for _, line in kept}
    found = [(r.line, NOT_INSTALLED, ()) for r in rules if r.line not in lines]
    return found + [(line, DUPLICATE, (in_effect[key],)) for key, line in kept if in_effect[key] != line]


def _prefix_mask(bits: int, depth: int):
    mask = ((1 << depth) - 1) << (bits - depth)
    return np.uint64(mask) if bits == 32 else mask


def _lpm_findings(rules: LpmRuleArrays, family: int, ports: PortConfig) -> list[tuple]:
    """Routes to disabled ports, prefixes given again, prefixes shadowed by longer ones.
    Addresses are uint64 (IPv4) or Python ints (IPv6, an object array): each depth's
    prefixes are one sorted array."""
    bits = 32 if family == 4 else 128
    enabled = ports.enabled[rules.port]
    found = list(zip(rules.line[~enabled].tolist(), repeat(NOT_INSTALLED), repeat(())))
    kept = rules.select(enabled)
    prefix = kept.prefix.astype(np.uint64) if family == 4 else kept.prefix
    present = {}                         # depth -> (sorted distinct prefixes, the line in effect of each)
    by_depth = np.argsort(kept.depth, kind="stable")
    ends = np.cumsum(np.bincount(kept.depth, minlength=bits + 1))
    for depth in np.flatnonzero(np.diff(ends, prepend=0)).tolist():
        at = by_depth[ends[depth - 1] if depth else 0:ends[depth]]          # file order
        keys = prefix[at] & _prefix_mask(bits, depth)
        order = np.argsort(keys, kind="stable")       # file order within a prefix: its last line is in effect
        keys, lines = keys[order], kept.line[at[order]]
        last = np.ones(len(keys), bool)
        last[:-1] = keys[1:] != keys[:-1]
        in_effect = lines[last][np.cumsum(last) - last]           # the last line of each one's prefix
        found += zip(lines[~last].tolist(), repeat(DUPLICATE), zip(in_effect[~last].tolist()))
        present[depth] = (keys[last], lines[last])
    return found + _shadowed_prefixes(present, bits)


def _shadowed_prefixes(present: dict, bits: int) -> list[tuple]:
    """A prefix is covered by the installed ones of its depth or longer when it is
    installed or both its halves are; it is shadowed when both its halves are covered.
    Per depth, from ``bits`` up: the covered prefixes ("full"), the shadowed ones."""
    empty = np.zeros(0, np.uint64) if bits == 32 else np.zeros(0, object)
    full, shadowed = empty, {}
    for depth in range(bits, min(present, default=bits + 1) - 1, -1):
        keys, lines = present.get(depth, (empty, None))
        parents = full & _prefix_mask(bits, depth)       # full is sorted: so are its parents, twins adjacent
        both = parents[1:][parents[1:] == parents[:-1]]
        if len(both) and len(keys):
            hit = np.isin(keys, both)
            if hit.any():
                shadowed[depth] = (keys[hit], lines[hit])
        full = np.sort(np.concatenate([keys, both]), kind="stable")     # two sorted runs: a merge
        full = full[np.append(full[1:] != full[:-1], True)] if len(full) else full
    return _covering_lines(shadowed, present, bits)


def _covering_lines(shadowed: dict, present: dict, bits: int) -> list[tuple]:
    """Each shadowed prefix (``shadowed``: depth -> (prefixes, lines)) with the outermost
    installed prefixes inside it: walking down from its halves, an installed prefix is
    one of them, any other is covered by its own halves and walked on."""
    if not shadowed:
        return []
    lines = np.concatenate([lines for _, lines in shadowed.values()])
    found_owners, found_lines = [], []
    first_owner = dict(zip(shadowed, np.cumsum([0] + [len(keys) for keys, _ in shadowed.values()]).tolist()))
    keys, owners = np.zeros(0, np.uint64 if bits == 32 else object), np.zeros(0, np.int64)
    for depth in range(min(shadowed), bits):
        if depth in shadowed:                            # the shadowed prefixes of this depth join the walk
            keys = np.concatenate([keys, shadowed[depth][0]])
            owners = np.concatenate([owners, first_owner[depth] + np.arange(len(shadowed[depth][0]))])
        half = 1 << (bits - depth - 1)
        keys = np.concatenate([keys, keys | (np.uint64(half) if bits == 32 else half)])
        owners = np.concatenate([owners, owners])
        below, below_lines = present.get(depth + 1, (keys[:0], np.zeros(0, np.int64)))
        at = np.minimum(np.searchsorted(below, keys), max(len(below) - 1, 0))
        hit = below[at] == keys if len(below) else np.zeros(len(keys), bool)
        found_owners.append(owners[hit])
        found_lines.append(below_lines[at[hit]])
        keys, owners = keys[~hit], owners[~hit]
    owners, by = np.concatenate(found_owners), np.concatenate(found_lines)
    order = np.lexsort((by, owners))
    by, bounds = by[order].tolist(), [0, *(np.flatnonzero(np.diff(owners[order])) + 1).tolist(), len(by)]
    return list(zip(lines.tolist(), repeat(SHADOWED), (tuple(by[a:b]) for a, b in zip(bounds, bounds[1:]))))


# ---------------------------------------------------------------------------------------
# acl
# ---------------------------------------------------------------------------------------
def _acl_rules(ports: PortConfig, rule_ipv4: Path | None, rule_ipv6: Path | None) -> tuple[dict, dict]:
    """The two rule files ``routing._acl_routes`` reads, with its refusals (its tables are
    not built: this needs only the rules)."""
    rules = acl_rules(ports, rule_ipv4, rule_ipv6)
    return {4: Path(rule_ipv4), 6: Path(rule_ipv6)}, dict(zip((4, 6), rules))


@dataclass
class _AclSpace:
    """An ACL rule file in elementary coordinates. Interval fields (source, destination,
    source port, destination port): rule i holds elementary intervals ``lo[f, i]`` to
    ``hi[f, i]``. Proto: rule i matches the value classes ``classes[spec[i]]``."""
    lo: np.ndarray           # (4, n) int64
    hi: np.ndarray           # (4, n) int64
    spec: np.ndarray         # (n,) its (proto & mask, mask) among the file's distinct ones
    classes: np.ndarray      # (specs, classes) bool
    meets: np.ndarray        # (specs, specs) bool: the two share a class
    within: np.ndarray       # (specs, specs) bool: within[s, t]: t matches every class s matches
    meeting: list            # per field (proto last): how many ordered pairs of rules meet in it
    order: tuple             # the fields, those where fewest pairs meet first

    def __len__(self) -> int:
        return len(self.spec)


INTERVAL_FIELDS, PROTO = 4, 4        # fields 0..3 are intervals, field 4 is the protocol


def _address_bounds(words: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First address of each prefix and the one past its last, as rows that sort as the
    numbers do: a carry column, then the 32-bit words, most significant first (the
    address bits beyond the length are ignored, as rte_acl's MASK field ignores them)."""
    n, width = words.shape
    keep = np.clip(length[:, None] - 32 * np.arange(width), 0, 32)
    first = words & (((np.int64(1) << keep) - 1) << (32 - keep))
    end = np.column_stack([np.zeros(n, np.int64), first])
    rows = np.flatnonzero(length > 0)
    last_word = (length[rows] - 1) // 32
    end[rows, 1 + last_word] += np.int64(1) << (32 * (last_word + 1) - length[rows])
    for word in range(width, 0, -1):                 # propagate the carries
        end[:, word - 1] += end[:, word] >> 32
        end[:, word] &= 0xFFFFFFFF
    end[length == 0, 0] = 1                          # /0: up to 2^32 or 2^128
    return np.column_stack([np.zeros(n, np.int64), first]), end


def _elementary(first: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cut the field at every rule's bounds ``[first, end)`` (rows of sortable words):
    each rule's first and last elementary interval."""
    points = np.concatenate([first, end])
    if points.shape[1] <= 2:                          # a carry and a 32-bit word, or a port: one int64
        points = (points[:, 0] << 32 | points[:, -1] if points.shape[1] == 2 else points[:, 0])[:, None]
    order = np.lexsort(points.T[::-1])
    ordered = points[order]
    new = np.ones(len(points), bool)
    new[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    rank = np.empty(len(points), np.int64)
    rank[order] = np.cumsum(new) - 1
    return rank[:len(first)], rank[len(first):] - 1


def _meeting_pairs(lo: np.ndarray, hi: np.ndarray) -> int:
    """How many (ordered) pairs of the intervals meet: all but those apart."""
    before = np.searchsorted(np.sort(hi), lo).sum()                          # j ends before i starts
    after = (len(lo) - np.searchsorted(np.sort(lo), hi, "right")).sum()      # j starts after i ends
    return len(lo) ** 2 - int(before) - int(after)


def _acl_space(rules: AclRules) -> _AclSpace:
    n = len(rules)
    bounds = [_address_bounds(rules.src, rules.src_len), _address_bounds(rules.dst, rules.dst_len),
              (rules.sport[:, :1], rules.sport[:, 1:] + 1), (rules.dport[:, :1], rules.dport[:, 1:] + 1)]
    lo, hi = np.empty((INTERVAL_FIELDS, n), np.int64), np.empty((INTERVAL_FIELDS, n), np.int64)
    for f, (first, end) in enumerate(bounds):
        lo[f], hi[f] = _elementary(first, end)
    # proto p matches when p & mask == proto & mask: values matched by the same specs are one class
    specs, spec = np.unique((rules.proto & rules.proto_mask) << 8 | rules.proto_mask, return_inverse=True)
    match = (np.arange(256)[:, None] & (specs & 0xFF)) == specs >> 8          # (value, spec)
    classes = match[_distinct_rows(match)].T
    counts = classes.astype(np.float32)             # sums of at most 256 ones: exact, and BLAS does the products
    meets = counts @ counts.T > 0
    per_spec = np.bincount(spec.reshape(-1), minlength=len(specs))
    pairs = [_meeting_pairs(lo[f], hi[f]) for f in range(INTERVAL_FIELDS)] + [int(per_spec @ meets @ per_spec)]
    return _AclSpace(lo, hi, spec.reshape(-1), classes, meets, counts @ (1 - counts).T == 0, pairs,
                     tuple(np.argsort(pairs, kind="stable").tolist()))


def _distinct_rows(matrix: np.ndarray) -> np.ndarray:
    """Index of one row of each distinct row of a bool matrix (compared as packed bytes:
    ``np.unique(axis=0)`` would make a field of every column)."""
    packed = np.ascontiguousarray(np.packbits(matrix, axis=1))
    _, first = np.unique(packed.view(np.dtype((np.void, packed.shape[1]))).ravel(), return_index=True)
    return np.sort(first)


def _bits(positions: np.ndarray) -> np.ndarray:
    return np.uint64(1) << (positions % 64).astype(np.uint64)


def _lowest_bit(words: np.ndarray) -> np.ndarray:
    """Per row of uint64 words (none all zero), the position of its lowest set bit."""
    word = (words != 0).argmax(axis=1)
    value = words[np.arange(len(words)), word]
    return word * 64 + np.bitwise_count((value & (~value + np.uint64(1))) - np.uint64(1)).astype(np.int64)


WORDS = ACL_BLOCK // 64


@dataclass
class _Block:
    """Rules ``first..first + ACL_BLOCK - 1`` as bitset tables, a row of ``WORDS`` words per
    entry. Per interval field: ``starts[f][k]``, the k rules of smallest ``lo`` (those
    starting at or before a point: ``k = searchsorted(lo[f], point, "right")``) and
    ``ends[f][k]``, all but the k of smallest ``hi`` (those ending at or after a point:
    ``k = searchsorted(hi[f], point)``). Per proto spec s: ``meets[s]``, the rules whose
    proto shares a value with s, ``holds[s]``, those whose proto takes every value s takes."""
    first: int
    lo: list
    hi: list
    starts: list
    ends: list
    meets: np.ndarray
    holds: np.ndarray

    @classmethod
    def build(cls, space: _AclSpace, first: int) -> "_Block":
        rules = np.arange(first, min(first + ACL_BLOCK, len(space)))
        lo, hi, starts, ends = [], [], [], []
        for f in range(INTERVAL_FIELDS):
            for values, tables, reverse in ((space.lo[f, rules], starts, False), (space.hi[f, rules], ends, True)):
                order = np.argsort(values, kind="stable")
                table = np.zeros((len(rules) + 1, WORDS), np.uint64)
                table[np.arange(len(rules)) + (not reverse), order // 64] = _bits(order)
                # running ORs: from the top for starts, from the bottom for ends
                table = np.bitwise_or.accumulate(table[::-1] if reverse else table, axis=0)
                tables.append(np.ascontiguousarray(table[::-1] if reverse else table))
                (hi if reverse else lo).append(values[order])
        return cls(first, lo, hi, starts, ends, *(cls._spec_table(relation[:, space.spec[rules]])
                                                 for relation in (space.meets, space.within)))

    @staticmethod
    def _spec_table(relation: np.ndarray) -> np.ndarray:
        padded = np.zeros((len(relation), ACL_BLOCK), bool)
        padded[:, :relation.shape[1]] = relation
        return np.packbits(padded, axis=1, bitorder="little").view(np.uint64)

    def meeting(self, space: _AclSpace, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rows of ``lines``, their bits): the rules of the block meeting each line in
        every field, for the lines that meet any, fields in ``space.order``."""
        rows, bits = np.arange(len(lines)), None
        for f in space.order:
            mine = lines[rows]
            if f == PROTO:
                meet = self.meets[space.spec[mine]]
            else:
                meet = self.starts[f][np.searchsorted(self.lo[f], space.hi[f, mine], "right")]
                meet &= self.ends[f][np.searchsorted(self.hi[f], space.lo[f, mine])]
            bits = meet if bits is None else bits & meet
            alive = bits.any(axis=1)
            rows, bits = rows[alive], bits[alive]
        return rows, bits

    def holding(self, space: _AclSpace, lines: np.ndarray, bits: np.ndarray) -> np.ndarray:
        """Of ``bits`` (rules meeting each of ``lines``), those whose box holds the line's."""
        bits = bits & self.holds[space.spec[lines]]
        for f in range(INTERVAL_FIELDS):
            bits &= self.starts[f][np.searchsorted(self.lo[f], space.lo[f, lines], "right")]
            bits &= self.ends[f][np.searchsorted(self.hi[f], space.hi[f, lines])]
        return bits


def _earlier_bits(count: np.ndarray) -> np.ndarray:
    """Rows of ``WORDS`` words with the first ``count[r]`` bits of row r set."""
    left = np.clip(count[:, None] - 64 * np.arange(WORDS), 0, 64)
    partial = (np.uint64(1) << np.minimum(left, 63).astype(np.uint64)) - np.uint64(1)
    return np.where(left >= 64, ~np.uint64(0), partial)


def _set_bits(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, bit) of every set bit of a matrix of uint64 words, by row, then bit."""
    row, word = np.nonzero(bits)
    set_bits = np.unpackbits(bits[row, word].view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    at, bit = np.nonzero(set_bits)
    return row[at], word[at] * 64 + bit


def _bitset_rules(space: _AclSpace, first: int, last: int) -> tuple[np.ndarray, Iterator]:
    """For the lines ``first..last - 1``: the first earlier rule whose box holds the
    line's (-1: none), and, for the lines without one, (row, the earlier rules meeting
    the line in every field), by row. Bit-vector tables of every block of earlier rules."""
    lines = np.arange(first, last)
    holder = np.full(len(lines), -1, np.int64)
    rows, blocks, bits = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros((0, WORDS), np.uint64)]
    for block_first in range(0, last, ACL_BLOCK):
        block = _Block.build(space, block_first)
        open_rows = np.flatnonzero(holder < 0)              # a line with a holder needs no more
        meet_rows, meet = block.meeting(space, lines[open_rows])
        meet_rows = open_rows[meet_rows]
        if block_first + ACL_BLOCK > first:                 # the block holds the line itself, or later ones
            meet &= _earlier_bits(lines[meet_rows] - block_first)
        held = block.holding(space, lines[meet_rows], meet)
        has = held.any(axis=1)
        holder[meet_rows[has]] = block_first + _lowest_bit(held[has])
        left = ~has & meet.any(axis=1)
        rows.append(meet_rows[left])
        blocks.append(np.full(left.sum(), block_first))
        bits.append(meet[left])
    rows, blocks, bits = np.concatenate(rows), np.concatenate(blocks), np.concatenate(bits)
    keep = holder[rows] < 0                                 # a holder found in a later block
    order = np.argsort(rows[keep], kind="stable")
    rows, blocks, bits = rows[keep][order], blocks[keep][order], bits[keep][order]

    def candidates():
        for start, end in _runs(rows):
            entry, bit = _set_bits(bits[start:end])
            yield int(rows[start]), blocks[start:end][entry] + bit
    return holder, candidates()


def _runs(values: np.ndarray) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of equal values of a sorted array."""
    starts = np.flatnonzero(np.diff(values, prepend=-1))
    return zip(starts.tolist(), np.append(starts[1:], len(values)).tolist())


def _joined_rules(space: _AclSpace, field: int, by_lo: np.ndarray, first: int,
                  last: int) -> tuple[np.ndarray, Iterator]:
    """As :func:`_bitset_rules`, by a join on one interval field (``by_lo``: the rules in
    order of their ``lo`` there): a rule meeting line i there starts inside it, or i starts
    inside the rule, after its start — both ranges of a sorted array. The other fields
    filter the pairs."""
    lo, hi = space.lo[field], space.hi[field]
    chunk_by_lo = first + np.argsort(lo[first:last], kind="stable")
    lines, earlier = np.arange(first, last), np.arange(last)
    sides = [(lines, by_lo, np.searchsorted(lo[by_lo], lo[lines]), np.searchsorted(lo[by_lo], hi[lines], "right")),
             (earlier, chunk_by_lo, np.searchsorted(lo[chunk_by_lo], lo[earlier], "right"),
              np.searchsorted(lo[chunk_by_lo], hi[earlier], "right"))]
    found = []
    for side, (owners, order, start, stop) in enumerate(sides):
        for owner, other in _expand(owners, order, start, stop):
            found.append(_meet(space, field, *((owner, other) if side == 0 else (other, owner))))
    line, rule, holds = (np.concatenate(column) for column in zip(*found))
    holder = np.full(len(lines), len(space), np.int64)
    np.minimum.at(holder, line[holds] - first, rule[holds])
    holder[holder == len(space)] = -1
    keep = holder[line - first] < 0
    order = np.lexsort((rule[keep], line[keep]))
    line, rule = line[keep][order], rule[keep][order]

    def candidates():
        for start, end in _runs(line):
            yield int(line[start]) - first, rule[start:end]
    return holder, candidates()


def _expand(owners: np.ndarray, order: np.ndarray, start: np.ndarray, stop: np.ndarray) -> Iterator:
    """(owner, ``order[k]``) for every k in ``start..stop - 1`` of each owner, in batches of
    about CELLS pairs."""
    length = stop - start
    batch = (np.cumsum(length) - length) // CELLS
    for begin, end in _runs(batch):
        counts = length[begin:end]
        at = np.repeat(start[begin:end] - (np.cumsum(counts) - counts), counts) + np.arange(counts.sum())
        yield np.repeat(owners[begin:end], counts), order[at]


def _meet(space: _AclSpace, field: int, line: np.ndarray, rule: np.ndarray) -> tuple:
    """Of pairs meeting in ``field``: (line, rule, whether the rule's box holds the line's)
    for the rules earlier than the line meeting it in every field."""
    keep = rule < line
    line, rule = line[keep], rule[keep]
    for f in space.order:                     # the most selective fields first: fewer pairs to test after
        if f == PROTO:
            keep = space.meets[space.spec[line], space.spec[rule]]
        elif f != field:
            lo, hi = space.lo[f], space.hi[f]
            keep = (lo[rule] <= hi[line]) & (hi[rule] >= lo[line])
        else:
            continue
        line, rule = line[keep], rule[keep]
    holds = space.within[space.spec[line], space.spec[rule]]
    for lo, hi in zip(space.lo, space.hi):
        holds &= (lo[rule] <= lo[line]) & (hi[rule] >= hi[line])
    return line, rule, holds


def _acl_findings(rules: AclRules) -> list[tuple]:
    """The lines of one ACL file no key is decided by (first match wins), in order.
    Earlier rules are found by a join on the most selective interval field when few
    pairs of rules meet there, else by bit-vector tables."""
    space = _acl_space(rules)
    field = min(range(INTERVAL_FIELDS), key=lambda f: space.meeting[f])
    by_lo = np.argsort(space.lo[field], kind="stable")
    join = space.meeting[field] * JOIN_COST <= len(space) ** 2
    live = np.ones(len(space), bool)                       # cleared for the lines no key is decided by
    found = []
    for first in range(0, len(space), ACL_QUERIES):
        last = min(first + ACL_QUERIES, len(space))
        holder, candidates = (_joined_rules(space, field, by_lo, first, last) if join
                              else _bitset_rules(space, first, last))
        held = np.flatnonzero(holder >= 0)
        covered = dict(zip((first + held).tolist(), holder[held, None].tolist()))
        live[first + held] = False
        for row, members in candidates:
            members = members[live[members]]
            rule = first + row
            by = _Cover(space, rule, members).by_rules() if len(members) else None
            if by is not None:
                covered[rule] = by
                live[rule] = False
        found += [(_line(rules, rule), SHADOWED, tuple(sorted(_line(rules, r) for r in by)))
                  for rule, by in sorted(covered.items())]
    return found


def _line(rules: AclRules, rule: int) -> int:
    return int(rules.where[rule].rsplit(":", 1)[1])


class _Cover:
    """Whether the boxes of ``members`` (earlier rules, each meeting the box of ``rule``
    but none holding it) cover it: split field by field at their bounds inside the box.
    Members are numbered by position; a question is (the fields not split yet, the
    members left), asked once. Two fields left, the pieces of both are a grid whose
    every cell some member must hold (a matrix product); one field left, no gap in it
    is enough."""

    def __init__(self, space: _AclSpace, rule: int, members: np.ndarray):
        self.members = members
        self.box_lo, self.box_hi = space.lo[:, rule], space.hi[:, rule]
        self.lo = np.maximum(space.lo[:, members].T, self.box_lo)    # (members, field), clipped to the box
        self.hi = np.minimum(space.hi[:, members].T, self.box_hi)
        inside = space.classes[space.spec[rule]]
        self.sets = space.classes[space.spec[members]][:, inside]   # the box's proto classes each member matches
        self.holds = np.column_stack([(self.lo == self.box_lo) & (self.hi == self.box_hi), self.sets.all(axis=1)])
        self.answers: dict = {}
        self.chosen: dict[int, None] = {}      # members holding the pieces found covered (ordered set)

    def by_rules(self) -> list[int] | None:
        """The rules that together cover the box, or None when a key of it is left to the line."""
        if not self._covered(np.arange(len(self.members)), tuple(range(INTERVAL_FIELDS + 1))):
            return None
        return self.members[list(self.chosen)].tolist()

    def _covered(self, subset: np.ndarray, fields: tuple) -> bool:
        key = (fields, subset.astype(np.int32).tobytes())
        if key not in self.answers:
            self.answers[key] = self._split(subset, fields)
        return self.answers[key]

    def _split(self, subset: np.ndarray, fields: tuple) -> bool:
        holds = self.holds[subset][:, fields]
        whole = subset[holds.all(axis=1)]
        if len(whole):                          # one member holds the piece: prefer one already named
            self.chosen.setdefault(next((m for m in whole.tolist() if m in self.chosen), int(whole[0])))
            return True
        # fields every member holds whole say nothing about the piece, now or below it
        fields = tuple(f for f, everyone in zip(fields, holds.all(axis=0)) if not everyone)
        cuts = {}
        for f in fields:
            cuts[f] = self._cuts(subset, f)
            if cuts[f] is None:                 # a gap in one field: keys no member matches
                return False
        if len(fields) == 1:
            self._choose_along(subset, fields[0])
            return True
        if len(fields) == 2 and len(subset) * (len(cuts[fields[0]]) + len(cuts[fields[1]])) <= CELLS:
            return self._grid(subset, *(self._membership(subset, f, cuts[f]) for f in fields))
        split = min(fields, key=lambda f: len(cuts[f]))
        rest = tuple(f for f in fields if f != split)
        step = max(1, CELLS // len(subset))
        for at in range(0, len(cuts[split]), step):
            membership = self._membership(subset, split, cuts[split][at:at + step])
            for row in membership[_distinct_rows(membership)]:
                if not self._covered(subset[row], rest):
                    return False
        return True

    def _grid(self, subset: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> bool:
        """Whether every cell (row piece, column piece) is held by a member (``rows``,
        ``columns``: (pieces, members of subset) of the two fields left); if so, name
        members for the cells: those already named, then the others in order."""
        rows, columns = rows.astype(np.float32), columns.astype(np.float32)     # counts < 2^24: exact
        step = max(1, CELLS // len(columns))
        if any(((rows[at:at + step] @ columns.T) == 0).any() for at in range(0, len(rows), step)):
            return False
        named = np.isin(subset, list(self.chosen))
        left = (rows[:, named] @ columns[:, named].T) == 0
        for member in np.flatnonzero(~named).tolist():
            if not left.any():
                break
            cells = np.ix_(rows[:, member] > 0, columns[:, member] > 0)
            if left[cells].any():
                self.chosen.setdefault(int(subset[member]))
                left[cells] = False
        return True

    def _choose_along(self, subset: np.ndarray, f: int) -> None:
        """Name members covering the box in field f, the one field left (no gap in it): the
        greedy cover — from the start, the member reaching furthest — for an interval field,
        the member matching most classes left, again and again, for proto."""
        if f == PROTO:
            left = np.ones(self.sets.shape[1], bool)
            while left.any():
                member = int(np.argmax((self.sets[subset] & left).sum(axis=1)))
                self.chosen.setdefault(int(subset[member]))
                left &= ~self.sets[subset[member]]
            return
        order = np.lexsort((-self.hi[subset, f], self.lo[subset, f]))
        lo, hi = self.lo[subset[order], f], self.hi[subset[order], f]
        reach = np.maximum.accumulate(hi)
        end = self.box_lo[f] - 1
        while end < self.box_hi[f]:
            best = np.searchsorted(reach, reach[np.searchsorted(lo, end + 1, "right") - 1])   # furthest reach, first
            self.chosen.setdefault(int(subset[order[best]]))
            end = hi[best]

    def _cuts(self, subset: np.ndarray, f: int) -> np.ndarray | None:
        """Where the members cut field f of the box (the first interval, or class, of each
        piece), or None when some part of the box's field is outside every member."""
        if f == PROTO:
            return None if not self.sets[subset].any(axis=0).all() else np.arange(self.sets.shape[1])
        lo, hi = self.lo[subset, f], self.hi[subset, f]
        order = np.argsort(lo)
        reach = np.maximum.accumulate(hi[order])
        if lo[order[0]] > self.box_lo[f] or reach[-1] < self.box_hi[f] or (lo[order[1:]] > reach[:-1] + 1).any():
            return None
        cuts = np.sort(np.concatenate([lo, hi[hi < self.box_hi[f]] + 1]))
        return cuts[np.diff(cuts, prepend=-1) != 0]

    def _membership(self, subset: np.ndarray, f: int, cuts: np.ndarray) -> np.ndarray:
        """(pieces, members of subset) bool: which members hold each piece in field f."""
        if f == PROTO:
            return self.sets[subset][:, cuts].T
        return (self.lo[subset, f] <= cuts[:, None]) & (self.hi[subset, f] >= cuts[:, None])
