"""Reading a report page back: every number it shows, with its ``data-*`` attributes, and
checking them against the stats.json or comparison it was made from. The same checks run
on the HTML as parsed by ``html.parser`` and on the DOM of a browser (browser.py)."""
from __future__ import annotations

import re
from html.parser import HTMLParser

PORT_KEYS = ("rx", "tx", "dropped", "out")
GRAPH_KEYS = ("calls", "objs", "realloc_count")
COMPARE_KEYS = ("packets_a", "packets_b", "matched", "reordered", "modified", "missing", "extra")


def _camel(name: str) -> str:
    """``data-rx-port`` -> ``rxPort``, as the DOM's ``dataset`` names it."""
    return re.sub(r"-(\w)", lambda m: m[1].upper(), name[5:])


class _Values(HTMLParser):
    """Elements with a ``data-value``: their data attributes and text, as :data:`VALUES_JS`
    of browser.py returns them; also every tag and script seen."""

    def __init__(self):
        super().__init__()
        self.values: list[dict] = []
        self.tags: list[tuple[str, dict]] = []
        self._open: list[tuple[str, dict | None]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag in ("meta", "br", "hr", "img", "input", "link"):
            return
        record = {_camel(k): v for k, v in attrs.items() if k.startswith("data-")} if "data-value" in attrs else None
        if record is not None:
            record["text"] = ""
            self.values.append(record)
        self._open.append((tag, record))

    def handle_endtag(self, tag):
        while self._open:
            if self._open.pop()[0] == tag:
                break

    def handle_data(self, data):
        for _, record in self._open:
            if record is not None:
                record["text"] += data


def parse_page(text: str) -> _Values:
    parser = _Values()
    parser.feed(text)
    parser.close()
    return parser


def _shown(value: int) -> str:
    return f"{value:,}"


def check_run_values(values: list[dict], stats: dict) -> None:
    """Every per-port, total, destination and drop number of the page equals stats.json,
    raw in data-value and exact (thousands separators only) in the text; none missing."""
    ports = {}
    for v in values:
        if "port" in v and v.get("key") in PORT_KEYS:
            ports[v["port"], v["key"]] = v
    expected = {(port, key): entry[key] for port, entry in stats["ports"].items() for key in PORT_KEYS}
    expected.update({("all", key): stats["totals"][key] for key in ("rx", "tx", "dropped")})
    expected["all", "out"] = stats["totals"]["tx"]
    assert set(ports) == set(expected)
    for where, value in expected.items():
        assert int(ports[where]["value"]) == value, where
        assert ports[where]["text"] == _shown(value), where

    went: dict[str, dict[str, int]] = {}
    for v in values:
        if "rxPort" in v:
            assert v["text"] == _shown(int(v["value"]))
            went.setdefault(v["rxPort"], {})[v["to"]] = int(v["value"])
    senders = {port for port, entry in stats["ports"].items() if entry["rx"]}
    assert set(went) == senders
    for port in senders:
        entry = stats["ports"][port]
        sent = {to: n for to, n in went[port].items() if not to.startswith("drop:")}
        drops = {to[5:]: n for to, n in went[port].items() if to.startswith("drop:")}
        assert drops == entry["drops"]
        assert sent == (entry["to"] if "to" in entry else {"tx": entry["tx"]})
        assert sum(sent.values()) == entry["tx"]

    drops = {v["reason"]: int(v["value"]) for v in values if v.get("key") == "drops"}
    assert drops == stats["drops"]
    stages = {v["stage"]: float(v["value"]) for v in values if "stage" in v and v["key"] == "ms"}
    assert stages == stats["stages_ms"]
    if "lcores" in stats:
        for lcore, entry in stats["lcores"]["per_lcore"].items():
            shown = {v["key"]: v for v in values if v.get("lcore") == lcore and "queue" not in v}
            for key in ("rx", "tx", "dropped", "tx_queue"):
                assert int(shown[key]["value"]) == entry[key]
            assert float(shown["share"]["value"]) == entry["share"]
            queues = {v["queue"]: int(v["value"]) for v in values if v.get("lcore") == lcore and "queue" in v}
            assert queues == entry["rx_per_queue"]
        imbalance = [v for v in values if v.get("key") == "imbalance"]
        assert float(imbalance[0]["value"]) == stats["lcores"]["imbalance"]
    if "rules" in stats:
        never = [v for v in values if v.get("key") == "rules_never_hit"]
        assert int(never[0]["value"]) == stats["rules_never_hit"]
        hits = sorted((r["packets"] for r in stats["rules"] if r["packets"]), reverse=True)[:10]
        assert [int(v["value"]) for v in values if "rule" in v and v["key"] == "packets"] == hits


def check_compare_values(values: list[dict], report: dict) -> None:
    """Per port and in total, every count of the comparison, and whether it is equal."""
    shown = {(v["port"], v["key"]): v for v in values if "port" in v}
    for p in report["ports"]:
        name = "file" if p["port"] is None else str(p["port"])
        for key in COMPARE_KEYS:
            assert int(shown[name, key]["value"]) == p[key] and shown[name, key]["text"] == _shown(p[key])
        assert shown[name, "equal"]["value"] == str(p["equal"]).lower()
    for key in COMPARE_KEYS:
        assert int(shown["all", key]["value"]) == report["totals"][key]
    described = [v for v in values if "difference" in v and v.get("key") in ("index_a", "index_b")]
    expected = [(str(i), key, d[key]) for i, d in enumerate(report["differences"]) for key in ("index_a", "index_b")
                if d[key] is not None]
    assert [(v["difference"], v["key"], int(v["value"])) for v in described] == expected


def check_graph_values(values: list[dict], graph: dict) -> None:
    """Every node's counters (objs/call as the integer quotient), its xstats, each graph's
    lcore, graph id, TX queue and walks and (several graphs) its nodes, and every edge's
    packets: on the page, raw in data-value and exact in the text; none missing."""
    def shown(where: dict) -> dict:
        found = {}
        for v in values:
            if "node" in v and v.get("graph") == where.get("graph"):
                key = (v["node"], v["key"], v.get("xstat"))
                assert key not in found and v["text"] == f"{int(v['value']):,}", v
                found[key] = int(v["value"])
        return found

    def expected(nodes: dict) -> dict:
        numbers = {}
        for node, n in nodes.items():
            numbers.update({(node, key, None): n[key] for key in GRAPH_KEYS})
            numbers[node, "objs_per_call", None] = n["objs"] // n["calls"] if n["calls"] else 0
            numbers.update({(node, "xstat", x): count for x, count in n.get("xstats", {}).items()})
        return numbers

    assert shown({}) == expected(graph["nodes"])
    several = len(graph["graphs"]) > 1
    for name, g in graph["graphs"].items():
        assert shown({"graph": name}) == (expected(g["nodes"]) if several else {})
        facts = {v["key"]: int(v["value"]) for v in values if v.get("graph") == name and "node" not in v}
        assert facts == {key: g[key] for key in ("lcore", "graph_id", "tx_queue", "walks")}
    edges = {v["edge"]: int(v["value"]) for v in values if "edge" in v}
    assert edges == graph["edges"]
