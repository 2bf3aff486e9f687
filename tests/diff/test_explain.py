"""``l3fwd-sim compare --explain``: each reported difference with the trace lines of its
input packet in both runs.

The unit tests write two "runs" by hand: every input packet's fate is chosen by the test
(sent to a port, dropped, rewritten), the output pcaps and trace.jsonl follow from those
choices, so the expected explanation follows from the choices, not from explain.py. The
end-to-end test runs the simulator twice (``--pipeline simple`` vs ``multi``, which
disagree on non-IP frames) with ``--trace all`` and checks every reported difference
against an independent reading of the two traces.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from forwarding import run_cli
from frames import mixed_frames, write_pcap
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from l3fwd_sim.diff import explain
from l3fwd_sim.diff.compare import CompareOptions, compare_paths
from l3fwd_sim.diff.explain import explain_report
from l3fwd_sim.errors import SimError

CLI = Path(sys.executable).with_name("l3fwd-sim")
KEYS = ("rx_port", "rx_queue", "index", "lcore", "burst", "ptype", "table", "key", "rule", "next_hop",
        "tx_port", "tx_index", "drop", "detail")


# ---------------------------------------------------------------------------------------
# hand-made runs
# ---------------------------------------------------------------------------------------
def udp4(k: int, ttl: int = 64) -> bytes:
    return bytes(Ether(dst="02:00:00:00:00:01", src="02:70:63:61:70:00") /
                 IP(src="198.18.0.1", dst=f"198.18.1.{k}", ttl=ttl) / UDP(sport=1000 + k, dport=9) /
                 (b"\x00" * 18))


INPUTS = {0: [udp4(k) for k in range(8)], 2: [udp4(100 + k) for k in range(4)]}


def fake_run(path: Path, fate: dict | None = None, traced: int | None = None, ports=(0, 1, 2, 3),
             dump=lambda record: json.dumps(record, separators=(",", ":"))) -> list[dict]:
    """Write a run of INPUTS into ``path``: by default input port p sends everything to
    port p ^ 1; ``fate[(rx_port, index)]`` overrides that with ``("drop", reason)``,
    ``("send", tx_port)`` or ``("rewrite", frame)`` (sent as usual, but as ``frame``).
    Packets are processed port by port, in order; the first ``traced`` are traced (all
    by default). Returns the trace records (all of them, traced or not)."""
    fate = fate or {}
    outputs: dict[int, list[bytes]] = {p: [] for p in ports}
    records = []
    for rx_port in sorted(INPUTS):
        for index, frame in enumerate(INPUTS[rx_port]):
            what, arg = fate.get((rx_port, index), ("send", rx_port ^ 1))
            tx_port = None if what == "drop" else arg if what == "send" else rx_port ^ 1
            record = dict(zip(KEYS, (rx_port, 0, index, 0, index // 4, "ipv4", "lpm4", f"198.18.1.{index}",
                                     {"file": "routes/lpm_default_v4.cfg", "line": 10 + index},
                                     tx_port, tx_port, None, arg if what == "drop" else None,
                                     "ttl 1" if what == "drop" else None)))
            if tx_port is not None:
                record["tx_index"] = len(outputs[tx_port])
                outputs[tx_port].append(arg if what == "rewrite" else frame)
            records.append(record)
    path.mkdir(parents=True, exist_ok=True)
    for port, frames in outputs.items():
        write_pcap(path / f"port{port}.pcap", frames)
    shown = records if traced is None else records[:traced]
    (path / "trace.jsonl").write_text("".join(dump(r) + "\n" for r in shown))
    return records


def report_json(a, b, *args) -> tuple[int, dict]:
    result = run_cli("compare", a, b, "--json", *args)
    return result.exit_code, json.loads(result.output)


def line_of(records: list[dict], **match) -> tuple[int, dict]:
    """(1-based line number, record) of the one trace record with these values."""
    (found,) = [(n, r) for n, r in enumerate(records, 1) if all(r[k] == v for k, v in match.items())]
    return found


def cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, timeout=120)


def one_error_line(res: subprocess.CompletedProcess) -> str:
    assert res.returncode == 2, (res.stdout[-1000:], res.stderr[-1000:])
    assert "Traceback" not in res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("l3fwd-sim: "), lines
    return lines[0]


# ---------------------------------------------------------------------------------------
# which lines
# ---------------------------------------------------------------------------------------
def test_dropped_and_redirected_packets_are_explained_by_their_input(tmp_path):
    """B drops input 0/2 and sends input 0/5 to port 0 instead of port 1: port 1 misses
    A[2] and A[5], port 0 has an extra B[0]; each is that input packet's two lines."""
    rec_a = fake_run(tmp_path / "a")
    rec_b = fake_run(tmp_path / "b", {(0, 2): ("drop", "rfc1812_invalid"), (0, 5): ("send", 0)})
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain")
    assert code == 1
    got = [(d["port"], d["kind"], d["index_a"], d["index_b"]) for d in report["differences"]]
    assert got == [(0, "extra", None, 0), (1, "missing", 2, None), (1, "missing", 5, None)]
    assert report["traces"] == {"a": {"path": str(tmp_path / "a" / "trace.jsonl"), "lines": 12},
                                "b": {"path": str(tmp_path / "b" / "trace.jsonl"), "lines": 12}}
    for d, (side, index) in zip(report["differences"], [("B", 5), ("A", 2), ("A", 5)]):
        record_index = d["index_a"] if side == "A" else d["index_b"]
        assert d["trace"]["records"] == [{"side": side, "port": d["port"], "index": record_index,
                                          "input": {"rx_port": 0, "rx_queue": 0, "index": index}}]
        (item,) = d["trace"]["inputs"]
        line_a, want_a = line_of(rec_a, rx_port=0, index=index)
        line_b, want_b = line_of(rec_b, rx_port=0, index=index)
        assert item["a"] == {"line": line_a, "trace": want_a}
        assert item["b"] == {"line": line_b, "trace": want_b}
    dropped = report["differences"][1]["trace"]["inputs"][0]["differ"]
    assert dropped == [{"key": "next_hop", "a": 1, "b": None}, {"key": "tx_port", "a": 1, "b": None},
                       {"key": "tx_index", "a": 2, "b": None}, {"key": "drop", "a": None, "b": "rfc1812_invalid"},
                       {"key": "detail", "a": None, "b": "ttl 1"}]
    moved = report["differences"][0]["trace"]["inputs"][0]["differ"]
    assert moved == [{"key": "next_hop", "a": 1, "b": 0}, {"key": "tx_port", "a": 1, "b": 0},
                     {"key": "tx_index", "a": 5, "b": 0}]


def test_text_prints_both_lines_and_the_changed_keys(tmp_path):
    rec_a = fake_run(tmp_path / "a")
    rec_b = fake_run(tmp_path / "b", {(0, 2): ("drop", "rfc1812_invalid")})
    result = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    title = lines.index("difference 1 of 1: port 1, packet A[2] missing from B")
    at = lines.index("  trace: A[2] is input packet rx_port 0 rx_queue 0 index 2", title)
    trace_a, trace_b = tmp_path / "a" / "trace.jsonl", tmp_path / "b" / "trace.jsonl"
    assert lines[at + 1] == f"    A  {trace_a}:3  " + json.dumps(rec_a[2], separators=(",", ":"))
    assert lines[at + 2] == f"    B  {trace_b}:3  " + json.dumps(rec_b[2], separators=(",", ":"))
    assert lines[at + 3] == ('    differ: next_hop: 1 → null, tx_port: 1 → null, tx_index: 2 → null, '
                             'drop: null → "rfc1812_invalid", detail: null → "ttl 1"')
    assert lines[-1].startswith("DIFFER")
    # the printed lines are the trace's own lines
    assert trace_a.read_text().splitlines()[2] in lines[at + 1]
    assert trace_b.read_text().splitlines()[2] in lines[at + 2]


def test_modified_record_of_the_same_input_with_the_same_decision(tmp_path):
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(2, 1): ("rewrite", udp4(101, ttl=9))})
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain")
    (d,) = report["differences"]
    assert (d["port"], d["kind"], d["index_a"], d["index_b"]) == (3, "modified", 1, 1)
    ident = {"rx_port": 2, "rx_queue": 0, "index": 1}
    assert [r["input"] for r in d["trace"]["records"]] == [ident, ident]
    (item,) = d["trace"]["inputs"]
    assert item["differ"] == [] and item["a"]["line"] == item["b"]["line"] == 10
    text = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain").output
    assert "  trace: A[1] and B[1] are input packet rx_port 2 rx_queue 0 index 1" in text
    assert "    differ: nothing: the same decision in both runs" in text


def test_modified_pair_of_two_input_packets_shows_both(tmp_path):
    """B drops 0/3 and rewrites 0/4: port 1's A[3] (input 3) and B[3] (input 4) face
    each other as one modified pair; both inputs are explained."""
    rec_a = fake_run(tmp_path / "a")
    rec_b = fake_run(tmp_path / "b", {(0, 3): ("drop", "acl_deny"), (0, 4): ("rewrite", udp4(4, ttl=3))})
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain")
    kinds = [(d["kind"], d["index_a"], d["index_b"]) for d in report["differences"]]
    assert kinds == [("modified", 3, 3), ("missing", 4, None)]
    d = report["differences"][0]
    assert [(r["side"], r["input"]["index"]) for r in d["trace"]["records"]] == [("A", 3), ("B", 4)]
    assert [(i["index"], i["a"]["trace"], i["b"]["trace"]) for i in d["trace"]["inputs"]] == \
        [(3, rec_a[3], rec_b[3]), (4, rec_a[4], rec_b[4])]
    assert [x["key"] for x in d["trace"]["inputs"][1]["differ"]] == ["tx_index"]
    text = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain").output
    assert "  trace: A[3] is input packet rx_port 0 rx_queue 0 index 3" in text
    assert "  trace: B[3] is input packet rx_port 0 rx_queue 0 index 4" in text
    assert "    differ: tx_index: 4 → 3" in text


def test_only_the_differences_described_are_explained(tmp_path):
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(0, 2): ("drop", "truncated"), (2, 0): ("drop", "oversize")})
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain", "--max-diffs", "1")
    assert report["totals"]["missing"] == 2
    (d,) = report["differences"]
    assert d["trace"]["inputs"][0]["index"] == 2
    code, report = report_json(tmp_path / "a", tmp_path / "b")
    assert "traces" not in report and all("trace" not in d for d in report["differences"])


def test_every_difference_is_grouped_by_its_cause(tmp_path):
    """Not only the differences described: B drops input 0/2 (a missing record), sends
    0/5 to port 0 (a missing and an extra record: two differences, one packet) and
    rewrites 2/1 (the same decision, other bytes); --max-diffs 0 describes none, yet
    each is counted under its cause, with both decisions; no stats.json: no path
    difference, and the runs are not known."""
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(0, 2): ("drop", "rfc1812_invalid"), (0, 5): ("send", 0),
                              (2, 1): ("rewrite", udp4(101, ttl=9))})
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain", "--max-diffs", "0")
    assert code == 1 and report["differences"] == []
    rule = lambda n: f"lpm4 routes/lpm_default_v4.cfg:{n}"    # noqa: E731  (fake_run's rule: line 10 + index)
    got = [(g["differences"], g["packets"], g["cause"], g["path_difference"], g["a"]["decision"], g["b"]["decision"])
           for g in report["causes"]["groups"]]
    assert got == [(2, 1, "another port", None, rule(15) + " → port 1", rule(15) + " → port 0"),
                   (1, 1, "rfc1812_invalid in B", None, rule(12) + " → port 1", "dropped: rfc1812_invalid"),
                   (1, 1, "the same decision", None, rule(11) + " → port 3", rule(11) + " → port 3")]
    assert report["causes"]["differences"] == 4 and report["causes"]["runs"] == {"a": None, "b": None}
    assert report["causes"]["path_differences"] == {}
    text = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain", "--max-diffs", "0").output.splitlines()
    at = text.index("differences by cause (all 4): what each run did with the input packet, from its trace")
    assert text[at + 1] == (f"  2 × another port          A: {rule(15)} → port 1  B: {rule(15)} → port 0"
                            "  (1 input packet)")
    assert text[at + 2].startswith("  1 × rfc1812_invalid in B  A: ")
    assert text[at + 4] == ("runs: A (no stats.json beside its trace: pipeline not known), "
                            "B (no stats.json beside its trace: pipeline not known)")
    # a described difference names its cause too
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain")
    assert [(d["port"], d["kind"], d["trace"]["cause"]["cause"]) for d in report["differences"]] == [
        (0, "extra", "another port"), (1, "missing", "rfc1812_invalid in B"), (1, "missing", "another port"),
        (3, "modified", "the same decision")]
    assert all(d["trace"]["cause"] == d["trace"]["inputs"][0]["cause"] for d in report["differences"])


def test_cause_text_from_the_trace_stays_one_line(tmp_path):
    """A rule file's name with a newline (as the trace escapes it) is escaped in the
    causes' text, as in --write's comments."""
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(0, 5): ("send", 0)})
    path = tmp_path / "b" / "trace.jsonl"
    path.write_text(path.read_text().replace("routes/lpm_default_v4.cfg", "v\\n4\\u202e.cfg"))
    text = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain").output
    (line,) = [line for line in text.splitlines() if line.startswith("  2 × ")]
    assert "B: lpm4 v\\n4\\u202e.cfg:15 → port 0" in line
    assert "  cause: lpm4: another rule — A: lpm4 routes/lpm_default_v4.cfg:15 → port 1; " \
           "B: lpm4 v\\n4\\u202e.cfg:15 → port 0" in text.splitlines()


def test_the_text_lists_the_first_causes(tmp_path, monkeypatch):
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(0, 2): ("drop", "rfc1812_invalid"), (0, 5): ("send", 0),
                              (2, 1): ("rewrite", udp4(101, ttl=9))})
    monkeypatch.setattr(explain, "CAUSE_LINES", 1)
    text = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain", "--max-diffs", "0").output
    assert "  ... 2 more causes, 2 differences (--json lists them all)" in text
    assert "2 × another port" in text and "the same decision" not in text


def test_packets_not_traced(tmp_path):
    """--trace N: a record whose packet is not in the trace, and an input packet the
    other run did not trace, are said to be not traced."""
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(0, 2): ("drop", "rfc1812_invalid"), (2, 3): ("drop", "unknown_ptype")},
             traced=9)
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain")
    diffs = {(d["port"], d["index_a"]): d["trace"] for d in report["differences"]}
    late = diffs[3, 3]                          # input 2/3: 12th packet, traced in A only
    assert late["records"][0]["input"] == {"rx_port": 2, "rx_queue": 0, "index": 3}
    assert late["inputs"][0]["a"]["line"] == 12 and late["inputs"][0]["b"] is None
    assert late["inputs"][0]["differ"] is None
    assert report["traces"]["b"]["lines"] == 9
    fake_run(tmp_path / "a2", traced=0)
    code, report = report_json(tmp_path / "a2", tmp_path / "b", "--explain")
    nothing = {"drop": None, "table": None, "rule": None, "sent": None}
    assert report["differences"][0]["trace"] == {
        "records": [{"side": "A", "port": 1, "index": 2, "input": None}], "inputs": [],
        "cause": {"cause": "not traced in A", "path_difference": None,
                  "a": {"decision": "not traced", "traced": False, **nothing},
                  "b": {"decision": "input packet not known", "traced": None, **nothing}}}
    assert report["causes"]["groups"][0]["cause"] == "not traced in A"
    text = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain").output
    assert (f"    B  not in {tmp_path / 'b' / 'trace.jsonl'} (not traced: that trace holds 9 packets; "
            "run B with --trace all to trace every packet)") in text
    text = run_cli("compare", tmp_path / "a2", tmp_path / "b", "--explain").output
    assert f"  trace: A[2] is not in {tmp_path / 'a2' / 'trace.jsonl'} (not traced: that trace holds 0 packets;" in text


def test_two_files_take_the_port_from_their_names(tmp_path):
    rec_a = fake_run(tmp_path / "a")
    rec_b = fake_run(tmp_path / "b", {(0, 6): ("drop", "acl_miss")})
    ta, tb = tmp_path / "a" / "trace.jsonl", tmp_path / "b" / "trace.jsonl"
    code, report = report_json(tmp_path / "a" / "port1.pcap", tmp_path / "b" / "port1.pcap", "--traces", ta, tb)
    (d,) = report["differences"]
    assert d["port"] is None and d["index_a"] == 6
    (item,) = d["trace"]["inputs"]
    assert (item["a"]["trace"], item["b"]["trace"]) == (rec_a[6], rec_b[6])
    # --traces also overrides the directories' own trace.jsonl
    (tmp_path / "elsewhere").mkdir()
    moved = tmp_path / "elsewhere" / "b.jsonl"
    tb.rename(moved)
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--traces", ta, moved)
    assert report["differences"][0]["trace"]["inputs"][0]["b"]["trace"] == rec_b[6]
    # a file not named port<N>.pcap: which port's records are they?
    (tmp_path / "b" / "port1.pcap").rename(tmp_path / "b" / "out.pcap")
    message = one_error_line(cli("compare", tmp_path / "a" / "port1.pcap", tmp_path / "b" / "out.pcap",
                                 "--traces", ta, moved))
    assert "out.pcap" in message and "port<N>.pcap" in message


def test_library_entry_point(tmp_path):
    fake_run(tmp_path / "a")
    rec_b = fake_run(tmp_path / "b", {(2, 2): ("send", 2)})
    report = explain_report(compare_paths(tmp_path / "a", tmp_path / "b", CompareOptions()))
    assert [d.kind for d in report.differences] == ["extra", "missing"]
    assert report.differences[0].trace["inputs"][0]["b"]["trace"] == rec_b[10]
    assert "trace" in report.to_dict()["differences"][0]


def test_each_trace_is_read_in_one_pass(tmp_path, monkeypatch):
    opened = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        opened.append(Path(path).parent.name)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(explain, "open", counting_open, raising=False)
    # A drops input 0/3, B drops 0/1: B's extra record (0/3) is not a record of A, so
    # A's line for it is found through the index of A's pass (A opened again to seek)
    fake_run(tmp_path / "a", {(0, 3): ("drop", "acl_deny")})
    fake_run(tmp_path / "b", {(0, 1): ("drop", "acl_deny")})
    report = explain_report(compare_paths(tmp_path / "a", tmp_path / "b"))
    assert [(d.kind, d.trace["inputs"][0]["index"]) for d in report.differences] == [("missing", 1), ("extra", 3)]
    assert all(d.trace["inputs"][0]["a"] and d.trace["inputs"][0]["b"] for d in report.differences)
    assert opened == ["a", "b", "a"]
    # only B records differ: B is read first, then A, for those packets; once each
    fake_run(tmp_path / "e", {(0, 1): ("send", 0)})
    fake_run(tmp_path / "f", {(0, 1): ("send", 0), (0, 3): ("send", 0)})
    opened.clear()
    report = explain_report(compare_paths(tmp_path / "e" / "port0.pcap", tmp_path / "f" / "port0.pcap"),
                            tmp_path / "e" / "trace.jsonl", tmp_path / "f" / "trace.jsonl")
    (d,) = report.differences
    assert d.kind == "extra" and d.trace["inputs"][0]["a"]["trace"]["tx_port"] == 1
    assert opened == ["f", "e"]
    with pytest.raises(SimError, match="give both trace files"):
        explain_report(compare_paths(tmp_path / "e", tmp_path / "f"), tmp_path / "e" / "trace.jsonl")


def test_lines_in_other_json_spellings_and_blank_lines(tmp_path):
    """Any JSON object per line is read (spaces, other key order); blank lines are
    skipped but counted in line numbers."""
    spaced = lambda r: json.dumps(dict(sorted(r.items())), indent=None)  # noqa: E731
    rec_a = fake_run(tmp_path / "a", dump=spaced)
    rec_b = fake_run(tmp_path / "b", {(0, 2): ("drop", "not_tcp_udp"), (2, 1): ("send", 0)}, dump=spaced)
    for side in "ab":
        path = tmp_path / side / "trace.jsonl"
        path.write_text("\n" + path.read_text() + "\n\n")
    code, report = report_json(tmp_path / "a", tmp_path / "b", "--explain")
    extra, missing, _ = report["differences"]
    assert (extra["kind"], missing["kind"]) == ("extra", "missing")
    (item,) = extra["trace"]["inputs"]                    # A's line found by input packet
    assert item["a"] == {"line": 11, "trace": rec_a[9]} and item["b"] == {"line": 11, "trace": rec_b[9]}
    (item,) = missing["trace"]["inputs"]
    assert item["b"] == {"line": 4, "trace": rec_b[2]}
    assert report["traces"]["a"]["lines"] == report["traces"]["b"]["lines"] == 12


def test_equal_outputs_need_no_trace_reading(tmp_path):
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b")
    (tmp_path / "b" / "trace.jsonl").write_text("not json\n")
    result = run_cli("compare", tmp_path / "a", tmp_path / "b", "--explain")
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------------------------------
# errors: one line, exit 2
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("bad,needle", [
    ('{"rx_port":0,"rx_queue":0,"index":', "invalid JSON"),
    ("[1, 2]", "a JSON object per line"),
    ('{"rx_port":0,"rx_queue":0,"index":2,"tx_port":1}', 'no "tx_index"'),
    ('{"rx_port":0,"rx_queue":0,"index":-2,"tx_port":1,"tx_index":2}', '"index" is -2'),
    ('{"rx_port":"0","rx_queue":0,"index":2,"tx_port":1,"tx_index":2}', '"rx_port" is "0"'),
    ('{"rx_port":0,"rx_queue":0,"index":2,"lcore":0,"tx_port":null,"tx_index":4,"drop":null}', "must both be null"),
    ("[" * 100_000 + "]" * 100_000, "invalid JSON, nested too deeply"),              # was a RecursionError
    ('{"rx_port": 0, "rx_queue": 0, "index": 2, "tx_port": null, "tx_index": null, "x": ' + "9" * 5000 + "}",
     "invalid JSON, a number of more than 4300 digits"),                          # was "not UTF-8 text"
])
def test_bad_trace_line_is_named_by_file_and_line(tmp_path, bad, needle):
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(0, 1): ("drop", "truncated")})
    path = tmp_path / "b" / "trace.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = bad
    path.write_text("\n".join(lines) + "\n")
    message = one_error_line(cli("compare", tmp_path / "a", tmp_path / "b", "--explain"))
    assert message.startswith(f"l3fwd-sim: {path}:5: not a trace line") and needle in message, message
    with pytest.raises(SimError, match=":5: "):
        explain_report(compare_paths(tmp_path / "a", tmp_path / "b"))


def test_missing_traces_and_mismatched_traces(tmp_path):
    fake_run(tmp_path / "a")
    fake_run(tmp_path / "b", {(0, 1): ("drop", "truncated")})
    fake_run(tmp_path / "c", {(0, 1): ("send", 0)})
    message = one_error_line(cli("compare", tmp_path / "b" / "port1.pcap", tmp_path / "c" / "port1.pcap",
                                 "--explain"))
    assert "--traces TRACE_A TRACE_B" in message
    # a's trace beside b's output: it sends 8 packets to port 1, whose b file holds 7
    message = one_error_line(cli("compare", tmp_path / "c", tmp_path / "b", "--traces",
                                 tmp_path / "c" / "trace.jsonl", tmp_path / "b" / "../a/trace.jsonl"))
    assert message == (f"l3fwd-sim: {tmp_path / 'b' / '../a/trace.jsonl'}:8: 8 packets traced as sent to "
                       f"port 1 by this line, but B's port1.pcap holds 7: this trace is not of run B")
    # a trace sending to a port the output directory has no file for
    fake_run(tmp_path / "d")
    (tmp_path / "d" / "port3.pcap").unlink()
    message = one_error_line(cli("compare", tmp_path / "a", tmp_path / "d", "--explain"))
    assert message == (f"l3fwd-sim: {tmp_path / 'd' / 'trace.jsonl'}:9: a packet traced as sent to port 3, "
                       "but B has no port3.pcap: this trace is not of run B")
    # no trace at all
    (tmp_path / "a" / "trace.jsonl").unlink()
    message = one_error_line(cli("compare", tmp_path / "a", tmp_path / "b", "--explain"))
    assert f"{tmp_path / 'a' / 'trace.jsonl'}: no such trace file" in message and "--trace all" in message


def test_cli_needs_two_traces(tmp_path):
    fake_run(tmp_path / "a")
    res = cli("compare", tmp_path / "a", tmp_path / "a", "--traces", tmp_path / "a" / "trace.jsonl")
    assert res.returncode == 2 and "--traces" in res.stderr


# ---------------------------------------------------------------------------------------
# end to end: two real runs of the same inputs
# ---------------------------------------------------------------------------------------
def read_trace(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_simple_vs_multi_every_difference_is_its_packets_trace(tmp_path):
    """The simple path drops the non-IP frames (and a few more) that the multi path sends
    back out of their input port: every difference is explained by the two trace lines
    of that very packet, as an independent reading of the traces finds them."""
    indir = tmp_path / "in"
    indir.mkdir()
    for port in (0, 1, 2):
        write_pcap(indir / f"port{port}.pcap", mixed_frames(7, port, 150))
    for name, pipeline in (("simple", "simple"), ("multi", "multi")):
        result = run_cli("run", indir, "-o", tmp_path / name, "-p", "0xf", "--pipeline", pipeline,
                         "--trace", "all", "--quiet")
        assert result.exit_code == 0, result.output
    a, b = tmp_path / "simple", tmp_path / "multi"
    trace_a, trace_b = read_trace(a / "trace.jsonl"), read_trace(b / "trace.jsonl")
    assert len(trace_a) == len(trace_b) == 450
    by_tx = [{(r["tx_port"], r["tx_index"]): (n, r) for n, r in enumerate(t, 1) if r["tx_port"] is not None}
             for t in (trace_a, trace_b)]
    by_id = [{(r["rx_port"], r["rx_queue"], r["index"]): (n, r) for n, r in enumerate(t, 1)}
             for t in (trace_a, trace_b)]

    code, report = report_json(a, b, "--explain", "--max-diffs", "100000")
    assert code == 1
    total = sum(report["totals"][k] for k in ("modified", "missing", "extra", "reordered"))
    assert len(report["differences"]) == total > 20
    drops_explained = 0
    for d in report["differences"]:
        want_inputs = []
        for side, k, index in (("A", 0, d["index_a"]), ("B", 1, d["index_b"])):
            if index is None:
                continue
            n, r = by_tx[k][d["port"], index]
            ident = (r["rx_port"], r["rx_queue"], r["index"])
            assert {"side": side, "port": d["port"], "index": index,
                    "input": dict(zip(("rx_port", "rx_queue", "index"), ident))} in d["trace"]["records"]
            if ident not in want_inputs:
                want_inputs.append(ident)
        assert [(i["rx_port"], i["rx_queue"], i["index"]) for i in d["trace"]["inputs"]] == want_inputs
        for item, ident in zip(d["trace"]["inputs"], want_inputs):
            for side, k in (("a", 0), ("b", 1)):
                n, r = by_id[k][ident]
                assert item[side] == {"line": n, "trace": r}
            ra, rb = by_id[0][ident][1], by_id[1][ident][1]
            assert item["differ"] == [{"key": key, "a": ra.get(key), "b": rb.get(key)}
                                      for key in ra if ra.get(key) != rb.get(key)]
            assert item["differ"] or d["kind"] == "modified"
            drops_explained += d["kind"] == "extra" and ra["drop"] is not None and rb["drop"] is None
    assert drops_explained > 10

    # the text report prints those very lines, as the trace files hold them
    text = run_cli("compare", a, b, "--explain", "--max-diffs", "3").output
    raw_a, raw_b = (a / "trace.jsonl").read_text().splitlines(), (b / "trace.jsonl").read_text().splitlines()
    for d in report["differences"][:3]:
        for item in d["trace"]["inputs"]:
            assert f"  {a / 'trace.jsonl'}:{item['a']['line']}  {raw_a[item['a']['line'] - 1]}" in text
            assert f"  {b / 'trace.jsonl'}:{item['b']['line']}  {raw_b[item['b']['line'] - 1]}" in text
    assert text.count("    differ: ") == sum(len(d["trace"]["inputs"]) for d in report["differences"][:3])

    # --trace N: packets beyond the first N are said to be not traced
    result = run_cli("run", indir, "-o", tmp_path / "short", "-p", "0xf", "--pipeline", "multi",
                     "--trace", "20", "--quiet")
    assert result.exit_code == 0, result.output
    assert len(read_trace(tmp_path / "short" / "trace.jsonl")) == 20
    code, report = report_json(a, tmp_path / "short", "--explain", "--max-diffs", "100000")
    untraced = [r for d in report["differences"] for r in d["trace"]["records"] if r["input"] is None]
    assert untraced and all(r["side"] == "B" for r in untraced)
