"""``rules hits`` and ``lookup --hits``: a run's per-rule counters (``stats.json``'s
``"rules"``) joined with the rule files' lines — sorting, ``--top``, ``--never-hit``,
the share, the summary line, files gone or changed, stats without counters refused in
one line, the JSON shape — and the docs' console examples.

The runs are real. Where ``run`` writes its counters they are checked against the
trace of the same run; where it does not (yet), the counters are built here from that
trace, by the same definition, so that every test holds either way: a line counts
the packets it decided that were sent, and ACL deny lines the packets they dropped;
a packet dropped by another check (RFC 1812) counts for no line; bytes are the frames'
captured lengths."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from importlib import import_module
from pathlib import Path

import pytest
from click.testing import CliRunner
from forwarding import GOLDEN, REPO
from frames import read_pcap_frames

from l3fwd_sim.cli import COMMANDS
from l3fwd_sim.cli.rules_hits import hits
from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd.lookup import LookupOptions, lookup
from l3fwd_sim.l3fwd.rule_hits import CHANGED, NOT_FOUND, rule_hits

BUILTIN = REPO / "l3fwd_sim" / "l3fwd" / "routes"
COUNTED_DROPS = (None, "acl_deny")        # sent, or denied by an ACL line


# ---------------------------------------------------------------------------------------
# counters of real runs: the run's own, or built from its trace
# ---------------------------------------------------------------------------------------
def source(label: str) -> Path:
    """The file a rule file label names: ``routes/<name>`` is the built-in table."""
    return BUILTIN / label[len("routes/"):] if label.startswith("routes/") else Path(label)


def trace_counts(out: Path, stats: dict) -> dict[tuple[str, int], list[int]]:
    """(file, line) -> [packets, bytes] of the packets each rule decided, from the trace."""
    frames = {int(port): read_pcap_frames(path) for port, path in stats["options"]["inputs"].items()}
    counts: dict = {}
    for text in (out / "trace.jsonl").read_text().splitlines():
        record = json.loads(text)
        if record["rule"] and record["drop"] in COUNTED_DROPS:
            count = counts.setdefault((record["rule"]["file"], record["rule"]["line"]), [0, 0])
            count[0] += 1
            count[1] += len(frames[record["rx_port"]][record["index"]])
    return counts


def rule_entries(stats: dict, labels: list[str], counts: dict) -> list[dict]:
    """``stats.json``'s ``"rules"`` by the spec: every rule line of the files in effect
    (IPv4's first), installed unless it routes to a port outside the portmask (or is
    EM's other family)."""
    options = stats["options"]
    lookup_method, portmask = options["lookup"], int(options["portmask"], 16)
    entries = []
    for family, label in zip((4, 6), labels):
        for number, text in enumerate(source(label).read_text().split("\n"), 1):
            if text[:1] not in ("R", "@"):
                continue
            tokens = text[1:].split("#")[0].split()
            installed = lookup_method == "acl" or (
                portmask >> int(tokens[-1], 0) & 1 == 1 and (lookup_method != "em" or (family == 6) == options["ipv6"]))
            packets, octets = counts.get((label, number), (0, 0))
            entries.append({"file": label, "line": number, "table": f"{lookup_method}{family}", "installed": installed,
                            "packets": packets, "bytes": octets})
    return entries


def counted_run(cli, out: Path, labels: list[str], *args: str) -> tuple[dict, bool]:
    """Run ``run pcaps -o out ARGS`` traced; (its stats, with counters, and whether they
    are the run's own). ``labels``: the rule files in effect, as the run names them."""
    res = cli("run", REPO / "pcaps", "-o", out, "--trace", "all", "--quiet", *args)
    assert res.exit_code == 0, res.output
    stats = json.loads((out / "stats.json").read_text())
    if "rules" in stats:
        return stats, True
    stats["rules"] = rule_entries(stats, labels, trace_counts(out, stats))
    stats["rules_never_hit"] = sum(e["installed"] and not e["packets"] for e in stats["rules"])
    (out / "stats.json").write_text(json.dumps(stats, indent=2))
    return stats, False


DEFAULTS = ["routes/lpm_default_v4.cfg", "routes/lpm_default_v6.cfg"]
ACL_FILES = [str(GOLDEN / "acl" / "acl_v4.cfg"), str(GOLDEN / "acl" / "acl_v6.cfg")]


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("labels, args", [
    (DEFAULTS, []), (DEFAULTS, ["--lookup", "fib", "-p", "0xff"]),
    (["routes/em_default_v4.cfg", "routes/em_default_v6.cfg"], ["-E"]),
    (["routes/em_default_v4.cfg", "routes/em_default_v6.cfg"], ["-E", "--ipv6"]),
    (ACL_FILES, ["--lookup", "acl", "--rule_ipv4", ACL_FILES[0], "--rule_ipv6", ACL_FILES[1]]),
], ids=["lpm", "fib", "em", "em-ipv6", "acl"])
def test_the_runs_own_counters_agree_with_its_trace(cli, tmp_path, labels, args, pipeline):
    stats, own = counted_run(cli, tmp_path / "out", labels, "--pipeline", pipeline, *args)
    if not own:
        pytest.skip("run writes no rule counters yet")
    assert stats["rules"] == rule_entries(stats, labels, trace_counts(tmp_path / "out", stats))
    assert stats["rules_never_hit"] == sum(e["installed"] and not e["packets"] for e in stats["rules"])


def invoke(*args) -> object:
    """``rules hits ARGS``, the command object itself (the ``rules`` group registers it)."""
    return CliRunner().invoke(hits, [str(a) for a in args], catch_exceptions=False)


def test_a_run_by_packets(cli, tmp_path):
    stats, _ = counted_run(cli, tmp_path / "out", DEFAULTS)
    res = invoke(tmp_path / "out")
    assert res.exit_code == 0 and res.stderr == ""
    header, *rows, summary = res.stdout.splitlines()
    assert header.split() == ["file:line", "table", "packets", "bytes", "share", "installed", "rule"]
    assert len(rows) == len(stats["rules"]) == 32
    by_packets = sorted(stats["rules"], key=lambda e: -e["packets"])
    for row, entry in zip(rows, by_packets):
        where, table, packets, octets, share, installed, rule = row.split(maxsplit=6)
        total = sum(e["packets"] for e in stats["rules"] if e["table"] == entry["table"])
        assert (where, table, installed) == (f"{entry['file']}:{entry['line']}", entry["table"],
                                             "yes" if entry["installed"] else "no")
        assert (packets, octets) == (f"{entry['packets']:,}", f"{entry['bytes']:,}")
        assert share == f"{100 * entry['packets'] / total:.1f}%"
        assert rule == source(entry["file"]).read_text().split("\n")[entry["line"] - 1]
    installed = [e for e in stats["rules"] if e["installed"]]
    assert summary == (f"rules: {stats['rules_never_hit']} of {len(installed)} installed lines never hit "
                       f"(lpm4 {sum(not e['packets'] for e in installed if e['table'] == 'lpm4')}/4, "
                       f"lpm6 {sum(not e['packets'] for e in installed if e['table'] == 'lpm6')}/4); "
                       "24 lines not installed")


def test_own_rule_files_named_as_given(cli, tmp_path, monkeypatch):
    """Relative rule files are read from the current directory, as ``run`` read them;
    a route to a port outside the portmask is listed, not installed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "v4.cfg").write_text((BUILTIN / "lpm_default_v4.cfg").read_text() + "R198.18.1.0/24 1\n")
    shutil.copy(BUILTIN / "lpm_default_v6.cfg", tmp_path / "v6.cfg")
    stats, _ = counted_run(cli, Path("out"), ["v4.cfg", "v6.cfg"], "--rule_ipv4", "v4.cfg", "--rule_ipv6",
                           "v6.cfg", "-p", "0xff")
    report = json.loads(invoke("out", "--json").stdout)
    lines = {(r["file"], r["line"]): r for r in report["rules"]}
    assert lines[("v4.cfg", 4)]["packets"] == 0 and lines[("v4.cfg", 4)]["installed"]    # line 19 is in effect
    assert lines[("v4.cfg", 19)]["text"] == "R198.18.1.0/24 1" and lines[("v4.cfg", 19)]["packets"] > 0
    assert [r["installed"] for r in report["rules"] if r["file"] == "v6.cfg"] == [True] * 8 + [False] * 8
    assert report["summary"]["not_installed"] == 16 and report["summary"]["installed"] == 17
    assert report["summary"]["never_hit"] == stats["rules_never_hit"]
    never = invoke("out", "--never-hit").stdout.splitlines()
    assert never[1].startswith("v4.cfg:4 ")                   # the duplicate not in effect, first in file order


# ---------------------------------------------------------------------------------------
# the table from written counters: sorting, selections, share, summary, texts
# ---------------------------------------------------------------------------------------
def write_stats(out: Path, entries: list[tuple]) -> Path:
    """OUT/stats.json with ``rules`` from (file, line, table, installed, packets, bytes)."""
    out.mkdir(parents=True, exist_ok=True)
    keys = ("file", "line", "table", "installed", "packets", "bytes")
    rules = [dict(zip(keys, entry)) for entry in entries]
    (out / "stats.json").write_text(json.dumps({
        "options": {}, "rules": rules,
        "rules_never_hit": sum(r["installed"] and not r["packets"] for r in rules)}))
    return out


@pytest.fixture
def small(tmp_path, monkeypatch):
    """Two rule files, counters with ties, a line never hit, a line not installed."""
    monkeypatch.chdir(tmp_path)
    Path("a4.cfg").write_text("# v4\nR10.0.0.0/8 1\nR10.1.0.0/16 2\n\nR10.2.0.0/16 9\nR10.3.0.0/16 0\n")
    Path("a6.cfg").write_text("R2001:db8::/32 1\nR2001:db8:1::/48 3\n")
    return write_stats(Path("out"), [
        ("a4.cfg", 2, "lpm4", True, 30, 3000), ("a4.cfg", 3, "lpm4", True, 90, 91_000),
        ("a4.cfg", 5, "lpm4", False, 0, 0), ("a4.cfg", 6, "lpm4", True, 0, 0),
        ("a6.cfg", 1, "lpm6", True, 30, 4500), ("a6.cfg", 2, "lpm6", True, 10, 1000)])


def test_sorted_by_packets_ties_in_file_order(small):
    res = invoke(small)
    assert res.stdout.splitlines() == [
        "file:line  table  packets   bytes  share  installed  rule",
        "a4.cfg:3   lpm4        90  91,000  75.0%  yes        R10.1.0.0/16 2",
        "a4.cfg:2   lpm4        30   3,000  25.0%  yes        R10.0.0.0/8 1",
        "a6.cfg:1   lpm6        30   4,500  75.0%  yes        R2001:db8::/32 1",
        "a6.cfg:2   lpm6        10   1,000  25.0%  yes        R2001:db8:1::/48 3",
        "a4.cfg:5   lpm4         0       0   0.0%  no         R10.2.0.0/16 9",
        "a4.cfg:6   lpm4         0       0   0.0%  yes        R10.3.0.0/16 0",
        "rules: 1 of 5 installed lines never hit (lpm4 1/3, lpm6 0/2); 1 line not installed"]


def test_top_keeps_the_first_n(small):
    assert [line.split()[0] for line in invoke(small, "--top", "3").stdout.splitlines()] == [
        "file:line", "a4.cfg:3", "a4.cfg:2", "a6.cfg:1", "rules:"]
    for bad in ("0", "x"):
        with pytest.raises(SimError, match="--top"):
            invoke(small, "--top", bad)


def test_never_hit_lists_installed_lines_in_file_order(small, tmp_path):
    assert invoke(small, "--never-hit").stdout.splitlines() == [
        "file:line  table  packets  bytes  share  installed  rule",
        "a4.cfg:6   lpm4         0      0   0.0%  yes        R10.3.0.0/16 0",
        "rules: 1 of 5 installed lines never hit (lpm4 1/3, lpm6 0/2); 1 line not installed"]
    every = write_stats(tmp_path / "every", [(f"x{i}.cfg", 1, "acl4", True, 0, 0) for i in range(5)])
    assert [line.split()[0] for line in invoke(every, "--never-hit", "--top", "2").stdout.splitlines()] == [
        "file:line", "x0.cfg:1", "x1.cfg:1", "rules:"]
    hit = write_stats(tmp_path / "hit", [("a4.cfg", 2, "lpm4", True, 1, 60)])
    assert invoke(hit, "--never-hit").stdout == "rules: 0 of 1 installed lines never hit (lpm4 0/1)\n"


def test_summary_counts_installed_lines_with_thousands(tmp_path):
    entries = [("big4.cfg", n, "lpm4", True, 0 if n <= 812 else 5, 300) for n in range(1, 901)]
    entries += [("big6.cfg", n, "lpm6", True, 1, 100) for n in range(1, 101)]
    entries += [("big6.cfg", n, "lpm6", False, 0, 0) for n in range(101, 104)]
    report = rule_hits(write_stats(tmp_path / "out", entries))
    assert report["summary"]["text"] == ("rules: 812 of 1,000 installed lines never hit (lpm4 812/900, lpm6 0/100); "
                                         "3 lines not installed")
    assert report["rules"][0]["share"] == pytest.approx(100 / 88)
    assert [r["share"] for r in report["rules"][88:188]] == [1.0] * 100


def test_small_shares_and_tables_with_no_packets(tmp_path):
    entries = [("s.cfg", 1, "em4", True, 9999, 1), ("s.cfg", 2, "em4", True, 1, 1), ("s.cfg", 3, "em6", False, 0, 0)]
    res = invoke(write_stats(tmp_path / "out", entries))
    assert [line.split()[4] for line in res.stdout.splitlines()[1:-1]] == ["100.0%", "<0.1%", "0.0%"]
    assert res.stdout.splitlines()[-1] == "rules: 0 of 2 installed lines never hit (em4 0/2); 1 line not installed"


def test_builtin_tables_are_read_from_the_package(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)            # no routes/ here: routes/<name> is the built-in table
    out = write_stats(tmp_path / "out", [("routes/em_default_v4.cfg", 3, "em4", True, 5, 500)])
    (row,) = rule_hits(out)["rules"]
    assert row["text"] == "R198.18.0.0 198.18.0.1 9 9 0x11 0"


def test_a_file_gone_or_changed_keeps_its_counters(small):
    run_time = Path("a4.cfg").stat().st_mtime - 10
    os.utime(small / "stats.json", (run_time, run_time))               # the edit below comes after the run
    Path("a6.cfg").unlink()
    Path("a4.cfg").write_text("R10.0.0.0/8 1\nR10.1.0.0/16 2\n")           # edited after the run: lines moved
    report = rule_hits(small)
    texts = {(r["file"], r["line"]): (r["text"], r["packets"]) for r in report["rules"]}
    assert texts[("a6.cfg", 1)] == (NOT_FOUND, 30) and texts[("a6.cfg", 2)] == (NOT_FOUND, 10)
    assert texts[("a4.cfg", 2)] == ("R10.1.0.0/16 2", 30)            # a rule line still: shown as it reads now
    assert texts[("a4.cfg", 3)] == (CHANGED, 90) and texts[("a4.cfg", 6)] == (CHANGED, 0)
    assert report["warnings"][0].startswith("a4.cfg: modified after the run")
    assert report["warnings"][1:] == [
        f"a6.cfg: not found: its lines are shown as {NOT_FOUND}",
        f"a4.cfg: changed since the run: 3 counted line(s) are not rule lines now (first: line 3), shown as {CHANGED}"]
    res = invoke(small)
    assert res.stderr.splitlines() == [f"l3fwd-sim: warning: {w}" for w in report["warnings"]]
    assert res.stdout.splitlines()[3] == f"a6.cfg:1   lpm6        30   4,500  75.0%  yes        {NOT_FOUND}"


def test_json_shape(small):
    report = json.loads(invoke(small, "--json", "--top", "2").stdout)
    assert set(report) == {"stats", "warnings", "rules", "summary"}
    assert report["stats"] == str(Path("out") / "stats.json") and report["warnings"] == []
    assert report["rules"] == [
        {"file": "a4.cfg", "line": 3, "table": "lpm4", "installed": True, "packets": 90, "bytes": 91000,
         "text": "R10.1.0.0/16 2", "share": 75.0},
        {"file": "a4.cfg", "line": 2, "table": "lpm4", "installed": True, "packets": 30, "bytes": 3000,
         "text": "R10.0.0.0/8 1", "share": 25.0}]
    assert report["summary"] == {
        "installed": 5, "never_hit": 1, "not_installed": 1,
        "tables": {"lpm4": {"installed": 3, "never_hit": 1, "packets": 120, "bytes": 94000},
                   "lpm6": {"installed": 2, "never_hit": 0, "packets": 40, "bytes": 5500}},
        "text": "rules: 1 of 5 installed lines never hit (lpm4 1/3, lpm6 0/2); 1 line not installed"}
    assert invoke(small, "--json", "--never-hit").stdout == json.dumps(rule_hits(small, never_hit=True), indent=2) + "\n"


def test_stats_without_counters_and_bad_stats_are_one_line_errors(tmp_path):
    (tmp_path / "testpmd").mkdir()
    (tmp_path / "testpmd" / "stats.json").write_text(json.dumps({"options": {}, "ports": {}}))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "stats.json").write_text("{\"rules\": [")
    write_stats(tmp_path / "odd", [("a.cfg", "1", "lpm4", True, 0, 0)])
    write_stats(tmp_path / "table", [("a.cfg", 1, "hash4", True, 0, 0)])
    for out, message in ((tmp_path / "testpmd", "stats.json: no rule counters: the stats are from a run without "
                                                "them"),
                         (tmp_path / "broken", "stats.json: not a readable stats.json"),
                         (tmp_path / "odd", r"stats.json: rules\[0\] is not a rule counter"),
                         (tmp_path / "table", r"stats.json: rules\[0\] is not a rule counter"),
                         (tmp_path / "nowhere", "nowhere: no stats.json there")):
        for call in (lambda: invoke(out), lambda: lookup(LookupOptions(keys=["10.0.0.1"], hits=out))):
            with pytest.raises(SimError, match=message) as err:
                call()
            assert "\n" not in str(err.value)


def test_stats_file_itself_may_be_named(small):
    assert rule_hits(small / "stats.json") == {**rule_hits(small), "stats": str(small / "stats.json")}


# ---------------------------------------------------------------------------------------
# lookup --hits
# ---------------------------------------------------------------------------------------
def test_lookup_hits_gives_the_deciding_rules_counters(cli, tmp_path):
    stats, _ = counted_run(cli, tmp_path / "out", DEFAULTS)
    counters = {(e["file"], e["line"]): e for e in stats["rules"]}
    keys = ["198.18.1.7", "2001:200:0:3::1", "203.0.113.5", "198.18.9.1"]
    report = lookup(LookupOptions(keys=keys, hits=tmp_path / "out"))
    assert report["warnings"] == []
    for result in report["results"]:
        rule = result["rule"]
        entry = rule and counters[(rule["file"], rule["line"])]
        assert result["hits"] == (entry and {"packets": entry["packets"], "bytes": entry["bytes"]})
    # 198.18.9.1: its route to port 9 was not installed in the run (-p 0xf): answered for the run's portmask, it misses
    assert [r["hits"] is None for r in report["results"]] == [False, False, True, True]
    res = cli("lookup", "--hits", tmp_path / "out", *keys)
    assert res.exit_code == 0 and res.stderr == ""
    line4, line6 = counters[("routes/lpm_default_v4.cfg", 4)], counters[("routes/lpm_default_v6.cfg", 6)]
    assert res.stdout.splitlines() == [
        "198.18.1.7  lpm4  routes/lpm_default_v4.cfg:4: R198.18.1.0/24 1  → next hop 1 → port 1",
        f"    hits: {line4['packets']:,} packets, {line4['bytes']:,} bytes",
        "2001:200:0:3::1  lpm6  routes/lpm_default_v6.cfg:6: R2001:0200:0000:0003:0000:0000:0000:0000/64 3  "
        "→ next hop 3 → port 3",
        f"    hits: {line6['packets']:,} packets, {line6['bytes']:,} bytes",
        "203.0.113.5  lpm4  no matching rule → miss: sent back out of the input port",
        "198.18.9.1  lpm4  no matching rule → miss: sent back out of the input port",
        "    note: line 12 routes to port 9, outside portmask 0xf, so dpdk-l3fwd does not install it (its next-hop "
        "re-check never applies): the key misses"]
    assert counters[("routes/lpm_default_v4.cfg", 12)]["installed"] is False
    as_json = json.loads(cli("lookup", "--hits", tmp_path / "out", "198.18.1.7", "--json").stdout)
    assert as_json["results"][0]["hits"] == {"packets": line4["packets"], "bytes": line4["bytes"]}
    assert "hits" not in json.loads(cli("lookup", "198.18.1.7", "--json").stdout)["results"][0]


def test_lookup_hits_matches_files_by_where_they_lie(small):
    (result,) = lookup(LookupOptions(keys=["10.1.2.3"], rule_ipv4=Path("./a4.cfg"), rule_ipv6=Path("a6.cfg"),
                                     hits=small))["results"]
    assert (result["rule"]["line"], result["hits"]) == (3, {"packets": 90, "bytes": 91000})


def test_lookup_hits_of_other_tables_or_files_warns(small, cli):
    report = lookup(LookupOptions(keys=["10.1.2.3", "2001:db8::1"], lookup="fib", rule_ipv4=Path("a4.cfg"),
                                  rule_ipv6=Path("a6.cfg"), hits=small))
    assert [r["hits"] for r in report["results"]] == [None, None]
    stats = Path("out") / "stats.json"
    assert report["warnings"] == [
        f"{stats} has no fib4 counters of a4.cfg: the run used other rule files or another --lookup",
        f"{stats} has no fib6 counters of a6.cfg: the run used other rule files or another --lookup"]
    res = cli("lookup", "--hits", "out", "198.18.1.7")
    assert res.stderr == (f"l3fwd-sim: warning: {stats} has no lpm4 counters of routes/lpm_default_v4.cfg: the run "
                          "used other rule files or another --lookup\n")
    assert res.stdout.splitlines()[1] == "    hits: no counters of this line in the run's stats"


# ---------------------------------------------------------------------------------------
# the docs' console examples print what the commands print
# ---------------------------------------------------------------------------------------
PAGE = REPO / "docs" / "rules.md"


def sh_runs(text: str) -> list[list[str]]:
    """The arguments of every ``l3fwd-sim run``/``testpmd`` line of the page's ```sh blocks."""
    blocks = re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S)
    return [shlex.split(line)[1:] for block in blocks for line in block.splitlines()
            if re.match(r"l3fwd-sim (run|testpmd) ", line)]


def console_examples(text: str) -> list[tuple[str, str]]:
    """(command, output) of every ``$ l3fwd-sim ...`` in the page's console blocks."""
    found = []
    for block in re.findall(r"^```console\n(.*?)^```", text, re.M | re.S):
        found += re.findall(r"^\$ (l3fwd-sim .*)\n((?:(?!\$ ).*\n)*)", block, re.M)
    return found


def rules_subcommands() -> dict:
    """The ``rules`` group's subcommands, once the group is registered."""
    return import_module(f"l3fwd_sim.cli.{COMMANDS['rules']}").command.commands if "rules" in COMMANDS else {}


def sandbox_run(cli, args: list[str]) -> None:
    """A ``run`` of the page, traced (for counters built from the trace where run writes
    none), or another command as it is."""
    if args[0] != "run":
        assert cli(*args).exit_code == 0
        return
    assert args[:4] == ["run", "pcaps", "-o", args[3]] and args[-1] == "--quiet", args
    options = dict(zip(args, args[1:]))
    labels = [options.get("--rule_ipv4"), options.get("--rule_ipv6")]
    counted_run(cli, Path(args[3]), labels if all(labels) else DEFAULTS, *args[4:-1])


def test_docs_console_examples(cli, tmp_path, monkeypatch):
    """In the docs sandbox's files (tests/test_docs.py), after the page's runs; ``rules
    hits`` through the ``rules`` group once it holds it, else as the command itself;
    ``rules check`` once the group is registered."""
    page = PAGE.read_text()
    monkeypatch.chdir(tmp_path)
    shutil.copytree(REPO / "pcaps", "pcaps")
    for name, builtin in (("v4.cfg", "lpm_default_v4.cfg"), ("v6.cfg", "lpm_default_v6.cfg"),
                          ("em4.cfg", "em_default_v4.cfg"), ("em6.cfg", "em_default_v6.cfg")):
        shutil.copy(BUILTIN / builtin, name)
    for family in (4, 6):
        shutil.copy(GOLDEN / "acl" / f"acl_v{family}.cfg", f"acl{family}.cfg")
    for args in sh_runs(page):
        sandbox_run(cli, args)
    examples = console_examples(page)
    assert sum(command.startswith("l3fwd-sim rules hits") for command, _ in examples) >= 5
    group = rules_subcommands()
    for command, output in examples:
        args = shlex.split(command)[1:]
        error = output.startswith("l3fwd-sim: ") and not output.startswith("l3fwd-sim: warning:")
        if args[:2] == ["rules", "hits"] and "hits" not in group:
            if error:
                with pytest.raises(SimError) as err:
                    invoke(*args[2:])
                assert f"l3fwd-sim: {err.value}\n" == output
                continue
            res = invoke(*args[2:])
        elif args[:2] == ["rules", "check"] and "check" not in group:
            continue
        else:
            res = cli(*args)
        finds = args[:2] == ["rules", "check"] and output
        assert res.exit_code == (2 if error else 1 if finds else 0), (command, res.output)
        assert res.output == output, command
    for block in re.findall(r"^```python\n(.*?)^```", page, re.M | re.S):
        exec(compile(block, "docs/rules.md", "exec"), {})
