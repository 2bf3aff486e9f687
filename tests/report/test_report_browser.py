"""report.html in headless Chromium: it loads nothing but itself, logs no error, runs no
script of an input, draws every chart it declares, shows stats.json's numbers (an
l3fwd-graph run's node graph: an edge label per edge, in the document Bokeh drew), and
does not look blank. One browser for the module."""
from __future__ import annotations

import json

import pytest
from browser import launch, missing, open_report, screenshot_stats
from report_pages import check_compare_values, check_graph_values, check_run_values
from report_runs import EVIL_CAPTURE, EVIL_RULES, INJECTED

from l3fwd_sim import CompareOptions, compare

pytestmark = pytest.mark.skipif(missing() is not None, reason=f"browser tests: {missing()}")
PAGES = ("one", "lcores", "acl", "testpmd", "compare", "evil", "injected", "graph", "graph2")
# the node graph's edges as the page's Bokeh document holds them: from, to, label (charts.node_graph)
EDGE_LABELS_JS = """() => { const r = Bokeh.documents[0].get_model_by_name("edge_labels");
    return r ? ["from", "to", "shown"].map(k => [...r.data_source.get_column(k)]) : null; }"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def seen(browser, reports):
    """What each page did in the browser, the labels of its charts' axes (evil, injected)
    and of its node graph's edges (graph, graph2), as Bokeh holds them."""
    labels, edges = {}, {}

    def look(name):
        def keep(page):
            labels[name] = page.evaluate(
                "() => [...Bokeh.index].filter(v => v.model.type === 'Figure')"
                ".flatMap(v => [...v.model.x_range.factors ?? [], ...v.model.y_range.factors ?? []].flat())")
            edges[name] = page.evaluate(EDGE_LABELS_JS)
        return keep

    pages = {name: open_report(browser, reports[name], keep_open=look(name)) for name in PAGES}
    return pages, labels, edges


@pytest.mark.parametrize("name", PAGES)
def test_the_page_renders_cleanly_and_offline(seen, reports, name):
    loaded = seen[0][name]
    assert loaded.requests == [reports[name].resolve().as_uri()]
    assert loaded.errors == []
    assert loaded.dialogs == []
    assert loaded.declared > 0 and len(loaded.figures) == loaded.declared
    for figure in loaded.figures:
        assert figure["width"] > 300 and figure["height"] > 80, figure
        assert figure["inked"] > 2000 and figure["colours"] > 20, figure        # axes, bars, labels drawn
    colours, inked = screenshot_stats(loaded.screenshot)
    assert colours > 200 and inked > 0.05


@pytest.mark.parametrize("name", ("one", "lcores", "acl", "testpmd", "evil", "graph", "graph2"))
def test_the_numbers_in_the_dom_equal_stats_json(seen, reports, name):
    stats = json.loads((reports[name].parent / "stats.json").read_text())
    check_run_values(seen[0][name].values, stats)
    if "graph" in stats:
        check_graph_values(seen[0][name].values, stats["graph"])


@pytest.mark.parametrize("name", ("graph", "graph2"))
def test_the_node_graph_labels_every_edge_with_its_count(seen, reports, name):
    graph = json.loads((reports[name].parent / "stats.json").read_text())["graph"]
    assert sorted(zip(*seen[2][name])) == sorted((*edge.split(" -> "), f"{n:,}") for edge, n in graph["edges"].items())
    assert seen[2]["one"] is None


def test_the_charts_a_run_declares(seen):
    charts = {name: [f["chart"] for f in seen[0][name].figures]
              for name in ("one", "lcores", "testpmd", "compare", "graph2")}
    assert charts["one"] == ["ports", "destinations", "drops", "top_rules", "stages"]
    assert charts["lcores"] == ["ports", "destinations", "drops", "lcores", "rx_per_queue", "top_rules", "stages"]
    assert charts["testpmd"] == ["ports", "destinations", "stages"]            # macswap drops nothing
    assert charts["compare"] == ["ports"]
    assert charts["graph2"] == ["ports", "destinations", "drops", "graph_nodes", "node_graph", "stages"]


def test_the_comparison_in_the_dom(seen, runs):
    root = runs["compare"].parent
    check_compare_values(seen[0]["compare"].values, compare(root / "multi", root / "simple", CompareOptions()))


def test_hostile_names_are_shown_as_text(seen, browser, runs):
    """The rule file named like an img tag, the capture path's controls and the string
    that closes a script: on the page as the text they are, in the charts' labels as
    Bokeh draws them (on a canvas), and none of them ran (no dialog above)."""
    def texts(page):
        found.extend(page.locator(selector).inner_text() for selector in
                     ('td[data-key="rule_file"][data-table="lpm4"]', 'td[data-key="input"][data-port="0"]'))
    found: list[str] = []
    open_report(browser, runs["evil"], keep_open=texts)
    capture = repr(EVIL_CAPTURE)[1:-1]                 # escaped as repr escapes: \x1b, \n, \u202e
    assert found[0].endswith(EVIL_RULES) and found[1].endswith(capture)
    labels = seen[1]
    assert any(label.startswith(f"{EVIL_RULES}:") for label in labels["evil"])
    assert INJECTED in labels["injected"] and f"drop: {INJECTED}" in labels["injected"]


def test_the_checks_would_see_a_script_run_and_a_load(browser, tmp_path):
    """The listeners above are live: markup that did get through would show as a dialog,
    a request and an error."""
    page = tmp_path / "leak.html"
    page.write_text('<body data-figures="0"><img src="x.png" onerror="alert(1)"><script>alert(2)</script></body>')
    loaded = open_report(browser, page)
    assert sorted(loaded.dialogs) == ["1", "2"]
    assert loaded.requests[1:] == [(tmp_path / "x.png").as_uri()] and loaded.errors
