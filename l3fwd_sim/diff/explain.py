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

Traces may hold millions of lines; only the lines asked for are parsed and kept. Each
file is read once: a regular expression picks the ids out of each line (a line it does
not recognise, e.g. JSON with spaces, goes through ``json.loads``). The first file read
(A's, unless only B has differing records) keeps, when the other side has differing
records, a compact index (input packet -> byte offset, 16 bytes a line): the lines of the
packets the other side's records turn out to be are then read by seeking.
"""
from __future__ import annotations

import json
import re
from array import array
from pathlib import Path

import numpy as np

from ..dataplane.trace import TRACE_FILE
from ..errors import SimError

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
    """Give each of ``report.differences`` its ``trace`` (see the module docstring) and the
    report its ``traces``; ``trace_a``/``trace_b`` default to A/trace.jsonl, B/trace.jsonl."""
    if (trace_a is None) != (trace_b is None):
        raise SimError("--traces: give both trace files, A's and B's")
    path_a, path_b = trace_paths(report, (trace_a, trace_b) if trace_a is not None else None)
    for path in (path_a, path_b):
        if not path.is_file():
            raise SimError(f"{path}: no such trace file (write one with `l3fwd-sim run ... --trace all`, "
                           "or name the two traces with --traces TRACE_A TRACE_B)")
    ports_a, ports_b, limits_a, limits_b, closed = _ports(report)
    wanted_a = {(ports_a(d.port), d.index_a) for d in report.differences if d.index_a is not None}
    wanted_b = {(ports_b(d.port), d.index_b) for d in report.differences if d.index_b is not None}
    side_a, side_b = _TraceFile(path_a, "A", limits_a, closed), _TraceFile(path_b, "B", limits_b, closed)
    if report.differences:
        # first the side with records to look up (A, unless all are B's); it keeps an
        # index only if the other side has records whose input packets it must then find
        (first, want_first), (second, want_second) = sorted(
            ((side_a, wanted_a), (side_b, wanted_b)), key=lambda side: not side[1])
        first.scan(want_first, set(), keep_index=bool(want_second))
        second.scan(want_second, {line["id"] for line in first.by_tx.values()})
        first.fetch({line["id"] for line in second.by_tx.values()})
    report.traces = {"a": {"path": str(path_a), "lines": side_a.lines},
                     "b": {"path": str(path_b), "lines": side_b.lines}}
    for d in report.differences:
        records = []
        if d.index_a is not None:
            records.append(("A", ports_a(d.port), d.index_a, side_a.by_tx.get((ports_a(d.port), d.index_a))))
        if d.index_b is not None:
            records.append(("B", ports_b(d.port), d.index_b, side_b.by_tx.get((ports_b(d.port), d.index_b))))
        d.trace = _explain(records, side_a, side_b)
    return report


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
        port_a = named(report.a, "A") if report.differences else None
        port_b = named(report.b, "B") if report.differences else None
        limits_a = {port_a: only.packets_a} if report.differences else {}
        limits_b = {port_b: only.packets_b} if report.differences else {}
        return (lambda _: port_a), (lambda _: port_b), limits_a, limits_b, False
    limits_a = {p.port: p.packets_a for p in report.ports if p.file_a}
    limits_b = {p.port: p.packets_b for p in report.ports if p.file_b}
    return (lambda port: port), (lambda port: port), limits_a, limits_b, True


def _explain(records, side_a: "_TraceFile", side_b: "_TraceFile") -> dict:
    inputs, out_records = [], []
    for side, port, index, line in records:
        ident = line["id"] if line else None
        out_records.append({"side": side, "port": port, "index": index,
                            "input": dict(zip(ID_KEYS, ident)) if ident else None})
        if ident and ident not in inputs:
            inputs.append(ident)
    out_inputs = []
    for ident in inputs:
        a, b = side_a.by_id.get(ident), side_b.by_id.get(ident)
        item = {**dict(zip(ID_KEYS, ident)),
                "a": {"line": a["line"], "trace": a["trace"]} if a else None,
                "b": {"line": b["line"], "trace": b["trace"]} if b else None,
                "differ": _differ(a["trace"], b["trace"]) if a and b else None}
        out_inputs.append(item)
    return {"records": out_records, "inputs": out_inputs}


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
class _TraceFile:
    """One trace file: the lines looked up, by output record and by input packet."""

    def __init__(self, path: Path, label: str, limits: dict, closed: bool):
        self.path, self.label = path, label
        self.limits = limits                      # port -> records in its port file
        self.closed = closed                      # limits names every port (dirs): others hold nothing
        self.lines: int | None = None             # trace lines (packets traced); None: not read
        self.by_tx: dict = {}                     # (tx_port, tx_index) -> line
        self.by_id: dict = {}                     # (rx_port, rx_queue, index) -> line
        self._keys = self._offsets = None

    def scan(self, tx_wanted: set, id_wanted: set, keep_index: bool = False) -> None:
        """One pass: keep the lines sent as a ``tx_wanted`` record or of an ``id_wanted``
        input packet; check every line's ids; with ``keep_index``, note every line's
        input packet and offset for :meth:`fetch`."""
        want_tx = {(str(p).encode(), str(i).encode()) for p, i in tx_wanted}
        want_id = {tuple(str(v).encode() for v in ident) for ident in id_wanted}
        limits = {str(p).encode(): n for p, n in self.limits.items()}
        sent: dict = {}
        keys, offsets = array("q"), array("q")
        fast, lines, offset = _FAST.fullmatch, 0, 0
        with open(self.path, "rb") as f:
            for lineno, raw in enumerate(f, 1):
                start, offset = offset, offset + len(raw)
                m = fast(raw)
                if m:
                    rx_port, rx_queue, index, tx_port, tx_index = m.groups()
                    if (tx_port == b"null") != (tx_index == b"null"):
                        self._parse(raw, lineno)          # raises: one null, one not
                elif not raw.strip():                     # a blank line
                    if keep_index:
                        keys.append(_NO_KEY)
                        offsets.append(start)
                    continue
                else:
                    record = self._parse(raw, lineno)
                    rx_port, rx_queue, index, tx_port, tx_index = (
                        b"null" if record[k] is None else str(record[k]).encode()
                        for k in (*ID_KEYS, "tx_port", "tx_index"))
                lines += 1
                if tx_port != b"null":
                    count = sent[tx_port] = sent.get(tx_port, 0) + 1
                    if self.closed or tx_port in limits:
                        self._check_sent(tx_port, count, limits, lineno)
                    if (tx_port, tx_index) in want_tx:
                        self._keep(raw, lineno, by_tx=True)
                if want_id and (rx_port, rx_queue, index) in want_id:
                    self._keep(raw, lineno)
                if keep_index:
                    keys.append(hash(raw[:m.end(3)]) if m else _id_hash(record))
                    offsets.append(start)
        self.lines = lines
        if keep_index:
            self._keys, self._offsets = np.frombuffer(keys, np.int64), np.frombuffer(offsets, np.int64)

    def fetch(self, ids: set) -> None:
        """The lines of input packets ``ids`` not yet kept, through the index of :meth:`scan`."""
        ids = {ident for ident in ids if ident not in self.by_id}
        if not ids or self._keys is None or not len(self._keys):
            return
        wanted = np.array([_id_hash(dict(zip(ID_KEYS, ident))) for ident in ids], np.int64)
        rows = np.flatnonzero(np.isin(self._keys, wanted))
        with open(self.path, "rb") as f:
            for row in rows.tolist():
                f.seek(int(self._offsets[row]))
                raw = f.readline()
                if tuple(self._parse(raw, row + 1)[k] for k in ID_KEYS) in ids:   # not a hash collision
                    self._keep(raw, row + 1)

    def _keep(self, raw: bytes, lineno: int, by_tx: bool = False) -> None:
        record = self._parse(raw, lineno)
        ident = tuple(record[k] for k in ID_KEYS)
        line = {"line": lineno, "trace": record, "id": ident}
        self.by_id.setdefault(ident, line)
        if by_tx:
            first = self.by_tx.setdefault((record["tx_port"], record["tx_index"]), line)
            if first is not line:
                raise SimError(f"{self.path}:{lineno}: a second packet traced as port {record['tx_port']} "
                               f"record {record['tx_index']} (the first is on line {first['line']})")

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


def _id_hash(record: dict) -> int:
    """The index key of an input packet: the hash of its line's compact start
    (``{"rx_port":0,"rx_queue":0,"index":17``, what the fast path sees)."""
    return hash(b'{"rx_port":%d,"rx_queue":%d,"index":%d' % tuple(record[k] for k in ID_KEYS))


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
    return out


def _missing(traces: dict, label: str) -> str:
    info = traces[label.lower()]
    return (f"{info['path']} (not traced: that trace holds {info['lines']} packet"
            f"{'s' * (info['lines'] != 1)}; run {label} with --trace all to trace every packet)")


def _compact(value) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
