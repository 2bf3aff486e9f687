"""``compare --explain``: the trace lines behind each reported difference.

``run --trace`` writes ``OUTDIR/trace.jsonl``, one JSON object per received packet::

    {"rx_port":0,"rx_queue":0,"index":17,"lcore":0,"burst":0,"ptype":"ipv4","table":"lpm4",
     "key":"198.18.1.7","rule":{"file":"routes/lpm_default_v4.cfg","line":12},"next_hop":1,
     "tx_port":1,"tx_index":9,"drop":null,"detail":null}

(rx_port, rx_queue, index) names the input packet (the same in two runs of the same
inputs); (tx_port, tx_index) is the output record it became (port and 0-based position
in ``port<tx_port>.pcap``), both null when it was dropped.

For each difference the report describes, :func:`explain_report` looks up the trace line
of the differing A record in A's trace and of the differing B record in B's trace (by
tx_port and tx_index), then, by input packet, the other run's line for the same packet:
that pair is usually the answer (the same packet, decided differently: dropped in one
run, sent elsewhere or later in the other). ``Difference.trace`` gets, per input packet
involved (one, or two for a modified pair made of two different inputs), both lines and
the keys whose values differ.

Every difference, described or not, gets its cause (:mod:`.causes`): the two runs'
decisions for its input packet — the one its own record came from, A's record for a
missing, modified or reordered packet, B's for an extra one — and, where the runs are
DPDK's simple and multi paths (their ``stats.json``), the path difference (D1–D10) that
makes them differ. ``Report.causes`` counts the differences (and their distinct input
packets) by cause, ``Report.cause_ids`` holds each difference's (an index into
``Report.cause_list``, per port as ``Report.listed`` lists them: ``--write``'s comments),
and each described difference's ``trace`` its ``cause``.

Traces may hold millions of lines; only the lines of the differences' packets are kept —
in full (the JSON object) for the differences described, as their decision for the
others. Each file is read once: a regular expression picks the ids out of each line, and
for a line kept only as its decision, the fields the decision depends on (each distinct
combination decoded once); a line it does not recognise, e.g. JSON with spaces, goes
through ``json.loads``.
The first file read (A's, unless only B has differing records) keeps, when the other
side has differing records, a compact index (input packet -> byte offset, 16 bytes a
line): the lines of the packets the other side's records turn out to be are then read
by seeking.
"""
from __future__ import annotations

import json
import re
from array import array
from pathlib import Path

import numpy as np

from ..dataplane.trace import TRACE_FILE
from ..errors import SimError
from ..text import printable
from . import causes
from .causes import NOT_TRACED, PATH_DIFFERENCES, Cause, plain

ID_KEYS = ("rx_port", "rx_queue", "index")
_PORT_PCAP = re.compile(r"port([0-9]+)\.pcap(?:ng)?")
_NUM = rb"(0|[1-9][0-9]*)"
_FAST = re.compile(rb'\{"rx_port":' + _NUM + rb',"rx_queue":' + _NUM + rb',"index":' + _NUM
                   + rb',(?:.*,)?"tx_port":(0|[1-9][0-9]*|null),"tx_index":(0|[1-9][0-9]*|null)(?:,.*)?\}[ \t\r]*\n?')
_NO_KEY = -1                # a blank line's index key (hash() of bytes is never -1)


def trace_paths(report, traces=None) -> tuple[Path, Path]:
    """The two trace files: ``traces`` as given, or ``A/trace.jsonl`` and ``B/trace.jsonl``
    when A and B are run output directories."""
    if traces:
        return Path(traces[0]), Path(traces[1])
    if not Path(report.a).is_dir():
        raise SimError("--explain: A and B are pcap files; name their traces with --traces TRACE_A TRACE_B")
    return Path(report.a) / TRACE_FILE, Path(report.b) / TRACE_FILE


def explain_report(report, trace_a=None, trace_b=None):
    """Give each of ``report.differences`` its ``trace``, the report its ``traces``, and
    every difference its cause (``report.causes``, ``report.cause_list``/``cause_ids``;
    see the module docstring); ``trace_a``/``trace_b`` default to A/trace.jsonl, B/trace.jsonl."""
    if (trace_a is None) != (trace_b is None):
        raise SimError("--traces: give both trace files, A's and B's")
    path_a, path_b = trace_paths(report, (trace_a, trace_b) if trace_a is not None else None)
    for path in (path_a, path_b):
        if not path.is_file():
            raise SimError(f"{path}: no such trace file (write one with `l3fwd-sim run ... --trace all`, "
                           "or name the two traces with --traces TRACE_A TRACE_B)")
    ports_a, ports_b, limits_a, limits_b, closed = _ports(report)
    shown_a = {_tx_key(ports_a(d.port), d.index_a) for d in report.differences if d.index_a is not None}
    shown_b = {_tx_key(ports_b(d.port), d.index_b) for d in report.differences if d.index_b is not None}
    wanted_a, wanted_b = set(), set()
    for listed in report.listed:
        port_a, port_b = ports_a(listed.port), ports_b(listed.port)
        wanted_a.update(_tx_key(port_a, i) for i in listed.index_a[listed.index_a >= 0].tolist())
        wanted_b.update(_tx_key(port_b, i) for i in listed.index_b[listed.index_b >= 0].tolist())
    side_a, side_b = _TraceFile(path_a, "A", limits_a, closed), _TraceFile(path_b, "B", limits_b, closed)
    if wanted_a or wanted_b:
        # first the side with records to look up (A, unless all are B's); it keeps an
        # index only if the other side has records whose input packets it must then find
        (first, want_first, shown_first), (second, want_second, shown_second) = sorted(
            ((side_a, wanted_a, shown_a), (side_b, wanted_b, shown_b)), key=lambda side: not side[1])
        first.scan(want_first, set(), keep_index=bool(want_second), tx_full=shown_first)
        second.scan(want_second, first.sent_ids(), tx_full=shown_second, id_full=first.sent_ids(shown_first))
        first.fetch(second.sent_ids(), second.sent_ids(shown_second))
    report.traces = {"a": {"path": str(path_a), "lines": side_a.lines},
                     "b": {"path": str(path_b), "lines": side_b.lines}}
    runs = {"a": causes.run_of(path_a), "b": causes.run_of(path_b)}
    for d in report.differences:
        records = []
        if d.index_a is not None:
            records.append(("A", ports_a(d.port), d.index_a, side_a.sent_as(ports_a(d.port), d.index_a)))
        if d.index_b is not None:
            records.append(("B", ports_b(d.port), d.index_b, side_b.sent_as(ports_b(d.port), d.index_b)))
        d.trace = _explain(records, side_a, side_b, runs)
    _group(report, side_a, side_b, ports_a, ports_b, runs)
    return report


def _group(report, side_a: "_TraceFile", side_b: "_TraceFile", ports_a, ports_b, runs: dict) -> None:
    """Every difference's cause (``report.cause_ids``: per port, an index into
    ``report.cause_list`` per difference of ``report.listed``) and the differences
    counted by cause (``report.causes``): a difference goes with its own input packet,
    the one its A record came from (B's record for an extra packet)."""
    known: dict = {}                                   # (id of decision A, id of decision B) -> group
    group_of: dict[Cause, int] = {}                    # causes equal by their texts: one group
    found: list[Cause] = []
    counts: list[int] = []
    packets: list[set] = []
    ids_of = {}
    for listed in report.listed:
        port_a, port_b = ports_a(listed.port), ports_b(listed.port)
        ids = np.empty(len(listed.kinds), np.int64)
        for k, (ia, ib) in enumerate(zip(listed.index_a.tolist(), listed.index_b.tolist())):
            side, sent = ("A", side_a.by_tx.get(b"%d,%d" % (port_a, ia))) if ia >= 0 else \
                ("B", side_b.by_tx.get(b"%d,%d" % (port_b, ib)))
            if sent is None:                           # the record itself is not traced
                pair, packet = side, (side, listed.port, ia if ia >= 0 else ib)
            else:
                packet = sent[0]
                decisions = side_a.decision(packet), side_b.decision(packet)
                pair = id(decisions[0]), id(decisions[1])
            group = known.get(pair)
            if group is None:
                made = causes.untraced_record(side) if sent is None else causes.cause(*decisions, runs)
                group = known[pair] = group_of.setdefault(made, len(found))
                if group == len(found):
                    found.append(made)
                    counts.append(0)
                    packets.append(set())
            ids[k] = group
            counts[group] += 1
            packets[group].add(packet)
        ids_of[listed.port] = ids
    order = sorted(range(len(found)), key=lambda g: (-counts[g], found[g].title(), found[g].a, found[g].b))
    rank = np.empty(len(found), np.int64)
    rank[order] = np.arange(len(found))
    report.cause_list = [found[g] for g in order]
    report.cause_ids = {port: rank[ids] for port, ids in ids_of.items()}
    named = sorted({c.path_difference for c in found if c.path_difference}, key=lambda d: int(d[1:]))
    report.causes = {
        "differences": sum(counts),
        "runs": runs,
        "groups": [{"differences": counts[g], "packets": len(packets[g]), **found[g].to_dict()} for g in order],
        "path_differences": {d: {"input": plain(PATH_DIFFERENCES[d].input), "simple": plain(PATH_DIFFERENCES[d].simple),
                                 "multi": plain(PATH_DIFFERENCES[d].multi)} for d in named},
    }


def _ports(report):
    """Per side: the TX port a difference's records were sent on (its port; for two
    files, the N of the file name port<N>.pcap), and how many records each port file
    holds, and whether that names every port (directories) or only the file's."""
    if report.ports and report.ports[0].port is None:
        only = report.ports[0]

        def named(path: str, side: str):
            m = _PORT_PCAP.fullmatch(Path(path).name)
            if not m:
                raise SimError(f"{path}: --explain needs to know which port's output this is "
                               f"(trace lines name port<N>.pcap): give the file of {side} its run's name port<N>.pcap")
            return int(m.group(1))
        differ = bool(report.listed)
        port_a = named(report.a, "A") if differ else None
        port_b = named(report.b, "B") if differ else None
        limits_a = {port_a: only.packets_a} if differ else {}
        limits_b = {port_b: only.packets_b} if differ else {}
        return (lambda _: port_a), (lambda _: port_b), limits_a, limits_b, False
    limits_a = {p.port: p.packets_a for p in report.ports if p.file_a}
    limits_b = {p.port: p.packets_b for p in report.ports if p.file_b}
    return (lambda port: port), (lambda port: port), limits_a, limits_b, True


def _explain(records, side_a: "_TraceFile", side_b: "_TraceFile", runs: dict) -> dict:
    inputs, out_records = [], []
    for side, port, index, sent in records:
        key = sent[0] if sent else None
        out_records.append({"side": side, "port": port, "index": index,
                            "input": dict(zip(ID_KEYS, _ident(key))) if key else None})
        if key and key not in inputs:
            inputs.append(key)
    out_inputs = []
    for key in inputs:
        a, b = side_a.kept(key), side_b.kept(key)
        decisions = side_a.decision(key), side_b.decision(key)
        item = {**dict(zip(ID_KEYS, _ident(key))), "a": a, "b": b,
                "differ": _differ(a["trace"], b["trace"]) if a and b else None,
                "cause": causes.cause(*decisions, runs).to_dict()}
        out_inputs.append(item)
    side, _, _, sent = records[0]
    if sent is None:
        found = causes.untraced_record(side)
    else:
        found = causes.cause(side_a.decision(sent[0]), side_b.decision(sent[0]), runs)
    return {"records": out_records, "inputs": out_inputs, "cause": found.to_dict()}


def _differ(a: dict, b: dict) -> list[dict]:
    keys = list(a) + [k for k in b if k not in a]
    missing = object()
    out = []
    for k in keys:
        va, vb = a.get(k, missing), b.get(k, missing)
        if va != vb or type(va) is not type(vb):
            out.append({"key": k, "a": None if va is missing else va, "b": None if vb is missing else vb})
    return out


# ---------------------------------------------------------------------------------------
# reading a trace
# ---------------------------------------------------------------------------------------
_DIGITS = re.compile(rb"[0-9]+")


def _tx_key(port: int, index: int) -> bytes:
    """An output record's key: ``b"tx_port,tx_index"``."""
    return b"%d,%d" % (port, index)


def _id_key(record: dict) -> bytes:
    """An input packet's key: its line's compact start, ``{"rx_port":0,"rx_queue":0,"index":17``
    (what the fast path sees), whatever the line's spelling."""
    return b'{"rx_port":%d,"rx_queue":%d,"index":%d' % tuple(record[k] for k in ID_KEYS)


def _ident(key: bytes) -> tuple[int, int, int]:
    """(rx_port, rx_queue, index) of an input packet's key."""
    return tuple(int(n) for n in _DIGITS.findall(key))


class _TraceFile:
    """One trace file: the lines looked up, by output record and by input packet — each
    as its decision, and in full (its JSON object) where asked for."""

    def __init__(self, path: Path, label: str, limits: dict, closed: bool):
        self.path, self.label = path, label
        self.limits = limits                      # port -> records in its port file
        self.closed = closed                      # limits names every port (dirs): others hold nothing
        self.lines: int | None = None             # trace lines (packets traced); None: not read
        self.by_tx: dict = {}                     # b"tx_port,tx_index" -> (input packet key, line number)
        self.by_id: dict = {}                     # input packet key -> (line number, offset, Decision)
        self.full: dict = {}                      # input packet key -> its line (JSON object), where kept in full
        self._keys = self._offsets = None
        self._signatures: dict = {}               # a line's decision fields as written -> Decision
        self._decisions: dict = {}                # one Decision object per distinct decision

    def sent_as(self, port: int, index: int) -> tuple | None:
        """(input packet key, line number) of the packet sent as record ``index`` of ``port``."""
        return self.by_tx.get(_tx_key(port, index))

    def decision(self, key: bytes):
        """The decision for input packet ``key`` (not traced when its line is not kept)."""
        kept = self.by_id.get(key)
        return NOT_TRACED if kept is None else kept[2]

    def kept(self, key: bytes) -> dict | None:
        """``{"line": N, "trace": {...}}`` of input packet ``key`` (None: not traced)."""
        kept = self.by_id.get(key)
        return None if kept is None else {"line": kept[0], "trace": self.full.get(key)}

    def sent_ids(self, records: set | None = None) -> set:
        """The input packets of the records kept (of ``records`` only, if given)."""
        if records is None:
            return {key for key, _ in self.by_tx.values()}
        return {key for tx, (key, _) in self.by_tx.items() if tx in records}

    def scan(self, tx_wanted: set, id_wanted: set, keep_index: bool = False, tx_full: set = frozenset(),
             id_full: set = frozenset()) -> None:
        """One pass: keep the lines sent as a ``tx_wanted`` record or of an ``id_wanted``
        input packet (in full for those of ``tx_full`` and ``id_full``); check every
        line's ids; with ``keep_index``, note every line's input packet and offset for
        :meth:`fetch`."""
        limits = {str(p).encode(): n for p, n in self.limits.items()}
        sent: dict = {}
        keys, offsets = array("q"), array("q")
        fast, lines, offset = _FAST.fullmatch, 0, 0
        with open(self.path, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                start, offset = offset, offset + len(raw)
                m, record = fast(raw), None
                if m:
                    tx_port, tx_index = m.group(4, 5)
                    if (tx_port == b"null") != (tx_index == b"null"):
                        self._parse(raw, lineno)          # raises: one null, one not
                    key = raw[:m.end(3)]
                elif not raw.strip():                     # a blank line
                    if keep_index:
                        keys.append(_NO_KEY)
                        offsets.append(start)
                    continue
                else:
                    record = self._parse(raw, lineno)
                    tx_port, tx_index = (b"null" if record[k] is None else b"%d" % record[k]
                                         for k in ("tx_port", "tx_index"))
                    key = _id_key(record)
                lines += 1
                tx = None
                if tx_port != b"null":
                    count = sent[tx_port] = sent.get(tx_port, 0) + 1
                    if self.closed or tx_port in limits:
                        self._check_sent(tx_port, count, limits, lineno)
                    tx = tx_port + b"," + tx_index
                    if tx not in tx_wanted:
                        tx = None
                if tx is not None or (id_wanted and key in id_wanted):
                    self._keep(raw, lineno, start, key, m, record, tx,
                               (tx is not None and tx in tx_full) or key in id_full)
                if keep_index:
                    keys.append(hash(key))
                    offsets.append(start)
        self.lines = lines
        if keep_index:
            self._keys, self._offsets = np.frombuffer(keys, np.int64), np.frombuffer(offsets, np.int64)

    def fetch(self, ids: set, full: set = frozenset()) -> None:
        """The lines of input packets ``ids`` not yet kept, through the index of
        :meth:`scan`, and of the packets ``full`` the lines themselves."""
        upgrade = [key for key in full if key in self.by_id and key not in self.full]
        ids = {key for key in ids if key not in self.by_id}
        if not ids and not upgrade:
            return
        with open(self.path, "rb") as f:
            for key in upgrade:
                lineno, offset, _ = self.by_id[key]
                f.seek(offset)
                self.full[key] = self._parse(f.readline(), lineno)
            if not ids or self._keys is None or not len(self._keys):
                return
            wanted = np.array([hash(key) for key in ids], np.int64)
            for row in np.flatnonzero(np.isin(self._keys, wanted)).tolist():
                at = int(self._offsets[row])
                f.seek(at)
                raw = f.readline()
                m = _FAST.fullmatch(raw)
                record = None if m else self._parse(raw, row + 1)
                key = raw[:m.end(3)] if m else _id_key(record)
                if key in ids:                            # not a hash collision
                    self._keep(raw, row + 1, at, key, m, record, None, key in full)

    def _keep(self, raw: bytes, lineno: int, offset: int, key: bytes, m, record: dict | None, tx: bytes | None,
              full: bool) -> None:
        """Keep a line: its decision, and with ``full`` the line itself (``record``, if
        already parsed); ``tx``: the output record it was sent as, if wanted."""
        if full and record is None:
            record = self._parse(raw, lineno)
        decision = self._decision(raw, m, lineno) if record is None else self._intern(causes.decision(record))
        if key not in self.by_id:
            self.by_id[key] = (lineno, offset, decision)
            if full:
                self.full[key] = record
        if tx is not None:
            first = self.by_tx.setdefault(tx, (key, lineno))
            if first[1] != lineno:
                port, index = tx.decode().split(",")
                raise SimError(f"{self.path}:{lineno}: a second packet traced as port {port} "
                               f"record {index} (the first is on line {first[1]})")

    def _decision(self, raw: bytes, m, lineno: int):
        """The decision of a line the fast path read, from the fields it depends on as
        written — ``"ptype"``, ``"table"``; ``"rule"``; ``"drop"``, ``"detail"`` and
        after; whether it was sent back out of its input port, and where — each distinct
        combination decoded once; a line in another spelling is parsed."""
        at = m.end(3)
        ptype = raw.find(b',"ptype":', at)
        key = raw.find(b',"key":', ptype)          # a ," never occurs inside a JSON string: \" there
        rule = raw.find(b',"rule":', key)
        next_hop = raw.find(b',"next_hop":', rule)
        drop = raw.find(b',"drop":', next_hop)
        rx_port, tx_port = m.group(1), m.group(4)
        signature = (raw[ptype + 1:key], raw[rule + 1:next_hop], raw[drop + 1:].rstrip(), tx_port, rx_port == tx_port)
        found = self._signatures.get(signature)
        if found is not None:
            return found
        try:
            if min(ptype, key, rule, next_hop, drop) < 0 or not signature[2].endswith(b"}"):
                raise ValueError
            fields = json.loads(b"{" + b",".join((*signature[:2], signature[2][:-1])) + b"}")
        except ValueError:
            return self._intern(causes.decision(self._parse(raw, lineno)))
        fields.update(rx_port=int(rx_port), tx_port=None if tx_port == b"null" else int(tx_port))
        found = self._signatures[signature] = self._intern(causes.decision(fields))
        return found

    def _intern(self, decision):
        return self._decisions.setdefault(decision, decision)

    def _check_sent(self, tx_port: bytes, count: int, limits: dict, lineno: int) -> None:
        """More packets sent to a port than its file holds: the trace of another run."""
        held, port = limits.get(tx_port), tx_port.decode()
        if held is None:
            raise SimError(f"{self.path}:{lineno}: a packet traced as sent to port {port}, but {self.label} has "
                           f"no port{port}.pcap: this trace is not of run {self.label}")
        if count > held:
            raise SimError(f"{self.path}:{lineno}: {count} packets traced as sent to port {port} by this line, "
                           f"but {self.label}'s port{port}.pcap holds {held}: this trace is not of run {self.label}")

    def _parse(self, raw: bytes, lineno: int) -> dict:
        """A whole line, checked: a JSON object with the ids as numbers >= 0 and
        tx_port/tx_index both numbers or both null."""
        where = f"{self.path}:{lineno}"
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError) as err:    # RecursionError: [[[[...; ValueError: a 4301-digit number
            reason = (f"{err.msg} (column {err.colno})" if isinstance(err, json.JSONDecodeError) else
                      "not UTF-8 text" if isinstance(err, UnicodeDecodeError) else
                      "nested too deeply" if isinstance(err, RecursionError) else
                      "a number of more than 4300 digits")
            raise SimError(f"{where}: not a trace line: invalid JSON, {reason}") from None
        if not isinstance(record, dict):
            raise SimError(f"{where}: not a trace line: a JSON object per line expected")
        for key in (*ID_KEYS, "tx_port", "tx_index"):
            if key not in record:
                raise SimError(f'{where}: not a trace line: no "{key}"')
            value = record[key]
            nullable = key in ("tx_port", "tx_index")
            if not ((value is None and nullable) or (type(value) is int and value >= 0)):
                raise SimError(f'{where}: not a trace line: "{key}" is {json.dumps(value)}, '
                               f"not a number >= 0{' or null' if nullable else ''}")
        if (record["tx_port"] is None) != (record["tx_index"] is None):
            raise SimError(f'{where}: not a trace line: "tx_port" and "tx_index" must both be null '
                           "(dropped) or both numbers")
        return record


# ---------------------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------------------
def format_trace(trace: dict, traces: dict) -> list[str]:
    """The text lines of one difference's ``trace`` (indented as the report's)."""
    out = []
    by_input = {}
    for rec in trace["records"]:
        name = f"{rec['side']}[{rec['index']}]"
        if rec["input"] is None:
            out.append(f"  trace: {name} is not in {_missing(traces, rec['side'])}")
            continue
        ident = tuple(rec["input"][k] for k in ID_KEYS)
        by_input.setdefault(ident, []).append(name)
    for item in trace["inputs"]:
        ident = tuple(item[k] for k in ID_KEYS)
        names = by_input.get(ident, [])
        out.append(f"  trace: {' and '.join(names)} {'are' if len(names) > 1 else 'is'} input packet "
                   f"rx_port {ident[0]} rx_queue {ident[1]} index {ident[2]}")
        for side in ("a", "b"):
            label = side.upper()
            line = item[side]
            if line is None:
                out.append(f"    {label}  not in {_missing(traces, label)}")
            else:
                out.append(f"    {label}  {traces[side]['path']}:{line['line']}  {_compact(line['trace'])}")
        if item["differ"] is not None:
            changes = [f"{d['key']}: {_compact(d['a'])} → {_compact(d['b'])}" for d in item["differ"]]
            out.append("    differ: " + (", ".join(changes) if changes else "nothing: the same decision in both runs"))
    if "cause" in trace:
        out.append(f"  cause: {printable(causes.one_line(trace['cause']))}")
    return out


CAUSE_LINES = 20           # causes the text report lists (--json: all of them)


def format_causes(found: dict) -> list[str]:
    """The text lines of ``Report.causes``: a line per cause (the first ``CAUSE_LINES``),
    its differences first (``123 × unknown_ptype in A (D1)``), the two runs, and the
    path differences named."""
    groups, total = found["groups"][:CAUSE_LINES], found["differences"]
    out = [f"differences by cause ({'all ' if total != 1 else ''}{total}): what each run did with the input packet, "
           "from its trace"]
    width_count = max(len(str(g["differences"])) for g in groups)
    counts = [f"{g['differences']:>{width_count}} × {printable(causes.title(g))}" for g in groups]
    width = max(map(len, counts))
    shown = [(printable(g["a"]["decision"]), printable(g["b"]["decision"])) for g in groups]
    width_a = max(len(a) for a, _ in shown)
    for g, count, (a, b) in zip(groups, counts, shown):
        packets = (f"  ({g['packets']} input packet{'s' * (g['packets'] != 1)})"
                   if g["packets"] != g["differences"] else "")
        out.append(f"  {count:<{width}}  A: {a:<{width_a}}  B: {b}{packets}".rstrip())
    if len(found["groups"]) > len(groups):
        rest = found["groups"][len(groups):]
        out.append(f"  ... {len(rest)} more causes, {sum(g['differences'] for g in rest)} differences "
                   "(--json lists them all)")
    out.append(f"runs: A {printable(_run(found['runs']['a']))}, B {printable(_run(found['runs']['b']))}")
    if found["path_differences"]:
        out.append("path differences (docs/faithfulness.md):")
        for name, row in found["path_differences"].items():
            out.append(f"  {name}: {row['input']}: simple {row['simple']}; multi {row['multi']}")
    return out


def _run(run: dict | None) -> str:
    if run is None:
        return "(no stats.json beside its trace: pipeline not known)"
    return f"--lookup {run['lookup']} --pipeline {run['pipeline']}"


def _missing(traces: dict, label: str) -> str:
    info = traces[label.lower()]
    return (f"{info['path']} (not traced: that trace holds {info['lines']} packet"
            f"{'s' * (info['lines'] != 1)}; run {label} with --trace all to trace every packet)")


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
