"""report.html without a browser: the numbers read back from the HTML equal stats.json (or
the comparison), the page loads nothing, input strings stay text, and bad input ends in
one line."""
from __future__ import annotations

import json

import pytest
from forwarding import run_cli
from report_pages import check_compare_values, check_run_values, parse_page
from report_runs import EVIL_CAPTURE, EVIL_RULES, INJECTED, PCAPS

from l3fwd_sim import CompareOptions, compare
from l3fwd_sim.report import write_report

RUNS = ("one", "lcores", "acl", "testpmd", "evil", "injected")


def _stats(report) -> dict:
    return json.loads((report.parent / "stats.json").read_text())


@pytest.mark.parametrize("name", RUNS)
def test_every_number_equals_stats_json(runs, name):
    page = parse_page(runs[name].read_text())
    check_run_values(page.values, _stats(runs[name]))


def test_each_kind_of_run_shows_its_sections(runs):
    def sections(name):
        return {attrs["id"] for tag, attrs in parse_page(runs[name].read_text()).tags if tag == "h2"}
    common = {"ports", "destinations", "drops", "stages", "warnings"}
    assert sections("one") == common | {"rules"}
    assert sections("lcores") == common | {"rules", "lcores"}
    assert sections("testpmd") == common
    assert "acl4" in runs["acl"].read_text() and "acl_miss" in runs["acl"].read_text()


def test_stats_without_to_show_one_column_of_packets_sent(runs, tmp_path):
    """A stats.json of an l3fwd-sim that did not count per TX port yet: each RX port's
    tx, on any port, in one column."""
    stats = _stats(runs["one"])
    for entry in stats["ports"].values():
        del entry["to"]
    (tmp_path / "stats.json").write_text(json.dumps(stats))
    page = parse_page(write_report(tmp_path).read_text())
    check_run_values(page.values, stats)
    assert {v["to"] for v in page.values if "rxPort" in v} >= {"tx"}


def test_the_comparison_page_holds_the_comparison(runs):
    root = runs["compare"].parent
    report = compare(root / "multi", root / "simple", CompareOptions(by_layers=True))
    page = parse_page(runs["compare"].read_text())
    check_compare_values(page.values, report)
    verdict = [v for v in page.values if v.get("key") == "equal" and "port" not in v]
    assert verdict[0]["value"] == "false" and verdict[0]["text"] == report["verdict"]
    assert "trace lines:" in runs["compare"].read_text()        # --explain's lines, in each difference's details


@pytest.mark.parametrize("name", [*RUNS, "compare", "graph", "graph2"])
def test_the_page_is_self_contained(reports, name):
    """Bokeh's JavaScript and the styles inline: no tag that loads anything."""
    page = parse_page(reports[name].read_text())
    loading = [(tag, attrs) for tag, attrs in page.tags
               if tag in ("link", "img", "iframe", "object", "embed", "svg", "audio", "video", "source")
               or (tag == "script" and "src" in attrs)]
    assert loading == []
    # Bokeh's library, its log level, the document's embed
    assert [tag for tag, _ in page.tags].count("script") == 3
    body = [attrs for tag, attrs in page.tags if tag == "body"][0]
    charts = [attrs for tag, attrs in page.tags if "data-chart" in attrs]
    assert int(body["data-figures"]) == len(charts) > 0


def test_input_strings_are_text(runs):
    """A rule file named like markup, a capture path of control characters: shown as
    text (escaped), never parsed as tags; the controls as escapes."""
    text = runs["evil"].read_text()
    page = parse_page(text)
    assert not [tag for tag, _ in page.tags if tag in ("img", "svg")]
    shown = repr(EVIL_CAPTURE)[1:-1]                   # escaped as repr escapes: \x1b, \n, \u202e
    assert "&lt;svg onload=alert(2)&gt;" in text and shown.replace("<", "&lt;").replace(">", "&gt;") in text
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert EVIL_RULES.replace("<", "&lt;").replace(">", "&gt;") in text


def test_a_script_end_in_a_string_stays_in_its_string(runs):
    """Strings that would close the page's script (a warning, an input, the rule file of
    the top rule, a chart label) are escaped in the HTML and in Bokeh's embedded JSON."""
    text = runs["injected"].read_text()
    assert text.count("</script>") == 3
    assert INJECTED not in text
    assert "&lt;/script&gt;&lt;script&gt;alert(3)&lt;/script&gt;" in text


def test_report_command_writes_beside_stats_json_and_prints_the_path(runs, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "stats.json").write_text((runs["one"].parent / "stats.json").read_text())
    done = run_cli("report", out)
    assert done.exit_code == 0 and done.output.strip() == str(out / "report.html")
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "stats.json"]      # no temporary file left
    assert write_report(str(out)) == out / "report.html"


def _one_line_error(*args) -> str:
    done = run_cli(*args)
    assert done.exit_code == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    return done.stderr


def test_no_stats_json_is_one_line_naming_the_file(tmp_path):
    assert str(tmp_path / "stats.json") in _one_line_error("report", tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("content,said", [
    ("{not json", "not a stats.json"),
    ("\xff\xfe", "not a stats.json"),
    ("[1, 2]", "the document: not an object"),
    ('{"ports": {}}', "options: missing"),
], ids=["syntax", "encoding", "list", "missing"])
def test_a_corrupt_stats_json_is_one_line(runs, tmp_path, content, said):
    (tmp_path / "stats.json").write_bytes(content.encode("latin-1"))
    error = _one_line_error("report", tmp_path)
    assert str(tmp_path / "stats.json") in error and said in error
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stats.json"]


def test_a_wrong_field_is_named(runs, tmp_path):
    stats = _stats(runs["one"])
    stats["ports"]["2"]["rx"] = "256"
    stats["ports"]["3"]["drops"]["a\nb"] = True
    (tmp_path / "stats.json").write_text(json.dumps(stats))
    assert "ports.2.rx: not int" in _one_line_error("report", tmp_path)
    stats["ports"]["2"]["rx"] = 256
    (tmp_path / "stats.json").write_text(json.dumps(stats))
    assert "ports.3.drops.a\\nb: not int" in _one_line_error("report", tmp_path)


@pytest.mark.parametrize("change,said", [
    (lambda s: s["ports"]["0"].update(rx=-1), "ports.0.rx: -1 is not a number >= 0"),
    (lambda s: s.update(elapsed_seconds=float("nan")), "elapsed_seconds: nan is not a number >= 0"),
    (lambda s: s["setup_ms"].update(tables=10**400), "setup_ms.tables: '1000"),      # math.isfinite() overflowed
    (lambda s: s["ports"]["0"].update(rx=2**64), "ports.0.rx: '18446744073709551616' is more than a 64-bit counter"),
], ids=["negative", "nan", "huge", "beyond-64-bits"])
def test_an_impossible_number_is_one_line(runs, tmp_path, change, said):
    stats = _stats(runs["lcores"])
    change(stats)
    (tmp_path / "stats.json").write_text(json.dumps(stats))
    assert said in _one_line_error("report", tmp_path)


def test_a_doctored_stats_json_still_makes_a_page(runs, tmp_path):
    """Keys that print alike (a chart axis refuses repeated labels), an RX queue of three
    numbers, a TX port that is no number: drawn as they are, not a traceback."""
    stats = _stats(runs["lcores"])
    stats["ports"]["\x1b"] = stats["ports"][""] = stats["ports"]["0"]
    stats["lcores"]["per_lcore"]["0"]["rx_queues"].append([0, 1, 2])
    stats["ports"]["1"]["to"]["x"] = stats["ports"]["1"]["to"].pop("1")
    (tmp_path / "stats.json").write_text(json.dumps(stats))
    page = parse_page(write_report(tmp_path).read_text())
    assert {v["to"] for v in page.values if v.get("rxPort") == "1"} >= {"x"}


def test_report_refuses_an_output_url_before_running(tmp_path):
    assert "--report" in _one_line_error("run", PCAPS, "-o", "s3://bucket/out", "--report")


def test_a_later_run_without_report_takes_the_stale_report_away(tmp_path):
    """report.html belongs to the run's set of outputs: it would otherwise describe
    another run's stats.json."""
    assert run_cli("run", PCAPS, "-o", tmp_path, "--quiet", "--report").exit_code == 0
    assert (tmp_path / "report.html").is_file()
    assert run_cli("run", PCAPS, "-o", tmp_path, "--quiet").exit_code == 0
    assert not (tmp_path / "report.html").exists()


def test_a_compare_report_that_cannot_be_written_is_one_line(runs, tmp_path):
    root = runs["compare"].parent
    target = tmp_path / "no such directory" / "c.html"
    assert str(target) in _one_line_error("compare", root / "multi", root / "simple", "--report", target)
