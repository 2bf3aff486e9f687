"""``l3fwd-sim rules import`` (l3fwd_sim.l3fwd.importers): one router's table written as
each tool prints it (``tests/data/rules_import``) imports to the same rules; the real MRT
dumps of BIRD, OpenBGPD and Quagga; every kind of finding, one per route, naming its
line; the port mapping; refusals in one line; and properties against an oracle written
here — the longest-prefix match over the generated routes, by brute force with
``ipaddress`` — of l3fwd's own LPM tables built from the imported files by the
project's rule loading (``routing.load_routes``)."""
from __future__ import annotations

import bz2
import gzip
import ipaddress
import json
import lzma
import random
import shutil
import struct
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from refusals import assert_refused

from forwarding import run_cli

from l3fwd_sim.dataplane.ports import PortConfig
from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd.importers import FORMATS, ImportOptions, detect, import_routes, parse_ports
from l3fwd_sim.l3fwd.routing import load_routes

DATA = Path(__file__).resolve().parents[1] / "data" / "rules_import"
PROPS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                        HealthCheck.function_scoped_fixture])

# The one table every text/JSON fixture holds: prefix -> interface of the rule written
EXPECTED4 = {"10.0.0.0/8": "eth2", "10.1.1.0/24": "eth2", "10.2.0.0/16": "eth2", "192.0.2.0/24": "eth0",
             "198.18.0.0/15": "eth0", "198.51.100.0/24": "eth1", "203.0.113.9/32": "eth2"}
EXPECTED6 = {"2001:db8:1::/64": "eth0", "2001:db8:2::/48": "eth0", "2001:db8:3::/48": "eth1",
             "2001:db8:5::1/128": "eth0"}
PAIRS = {"ip-route": ("iproute.txt", "iproute6.txt"), "ip-route-json": ("iproute.json", "iproute6.json"),
         "frr-json": ("frr.json", "frr6.json"), "bird": ("bird.txt",)}


def rule_lines(path: Path) -> list[str]:
    return [line for line in Path(path).read_text().splitlines() if line and not line.startswith("#")]


def by_key(path: Path, ports: dict) -> dict[str, str]:
    """The rules of a written file as prefix -> the interface, next hop or peer of its port."""
    names = {port: key for key, port in ports.items()}
    out = {}
    for line in rule_lines(path):
        prefix, port = line[1:].split()
        out[prefix] = names[int(port)]
    return out


def run_import(tmp_path: Path, *sources, **options):
    report = import_routes(ImportOptions([str(s) for s in sources], prefix=str(tmp_path / "t"), **options))
    return report, tmp_path / "t_v4.cfg", tmp_path / "t_v6.cfg"


def import_json(tmp_path: Path, *args) -> dict:
    result = run_cli("rules", "import", *args, "-o", tmp_path / "t", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def findings(report: dict) -> list[tuple[str, int, str]]:
    """(file name, line/route/record, kind) of each finding of a --json report."""
    return [(Path(f["file"]).name, f.get("line", f.get("route", f.get("record"))), f["kind"])
            for f in report["findings"]]


# ---------------------------------------------------------------------------------------
# one router's table, in every format
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", list(PAIRS))
def test_every_format_of_the_same_table_imports_to_the_same_rules(tmp_path, fmt):
    sources = [DATA / name for name in PAIRS[fmt]]
    assert {detect(path.read_bytes(), path.name) for path in sources} == {fmt}
    report, v4, v6 = run_import(tmp_path, *sources)
    assert by_key(v4, report.ports) == EXPECTED4
    assert by_key(v6, report.ports) == EXPECTED6
    assert report.written == {4: 7, 6: 4}
    assert report.counts["multipath"] == 2 and report.counts["default"] == 2
    assert set(report.ports) == {"eth0", "eth1", "eth2"}                       # eth3: only a next hop left out
    assert sorted(report.ports.values()) == [0, 1, 2] and not report.ports_given


def test_ip_route_findings_name_each_line(tmp_path):
    report = import_json(tmp_path, DATA / "iproute.txt", DATA / "iproute6.txt")
    assert findings(report) == [
        ("iproute.txt", 1, "default"), ("iproute.txt", 2, "duplicate"), ("iproute.txt", 5, "multipath"),
        ("iproute.txt", 8, "blackhole"), ("iproute.txt", 9, "unreachable"), ("iproute.txt", 10, "prohibit"),
        ("iproute.txt", 11, "link-local"), ("iproute.txt", 13, "duplicate"),
        ("iproute6.txt", 1, "loopback"), ("iproute6.txt", 4, "multipath"), ("iproute6.txt", 7, "unreachable"),
        ("iproute6.txt", 9, "link-local"), ("iproute6.txt", 10, "duplicate"), ("iproute6.txt", 11, "default")]
    texts = {(Path(f["file"]).name, f["line"]): f["message"] for f in report["findings"]}
    assert texts["iproute.txt", 13] == ("duplicate of " + str(DATA / "iproute.txt") +
                                        ":14, which takes precedence (lower metric: 10 < 50)")
    assert "kept the first of 2 next hops (left out: via 10.1.1.3 dev eth3)" in texts["iproute.txt", 5]
    assert report["counts"] == {"duplicate": 3, "blackhole": 1, "unreachable": 2, "prohibit": 1, "default": 2,
                                "link-local": 2, "loopback": 1, "multipath": 2}


def test_the_text_output_is_one_line_per_finding_then_the_summary(tmp_path):
    result = run_cli("rules", "import", DATA / "iproute.txt", "-o", tmp_path / "t")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == (f"{DATA / 'iproute.txt'}:1: 0.0.0.0/0 via 192.0.2.1 dev eth0  — default route: rte_lpm "
                        "refuses depth 0 (l3fwd exits); --lookup fib writes it (rte_fib's default next hop)")
    assert lines[-5:] == [f"read {DATA / 'iproute.txt'} (ip-route, 14 routes)",
                          f"wrote {tmp_path / 't_v4.cfg'}: 7 IPv4 routes, {tmp_path / 't_v6.cfg'}: 0 IPv6 routes",
                          "ports: eth0=0 eth1=1 eth2=2 (in order of first appearance; to fix them: "
                          "--port eth0=0,eth1=1,eth2=2); portmask 0x7",
                          "left out: 7 routes — 2 duplicate, 1 blackhole, 1 unreachable, 1 prohibit, 1 default, "
                          "1 link-local",
                          "multipath: 1 route kept one next hop of several"]
    assert len(lines) == 8 + 5
    assert "warning: " in result.stderr and "no IPv6 route" in result.stderr
    assert rule_lines(tmp_path / "t_v4.cfg") == ["R10.0.0.0/8 2", "R10.1.1.0/24 2", "R10.2.0.0/16 2",
                                                 "R192.0.2.0/24 0", "R198.18.0.0/15 0", "R198.51.100.0/24 1",
                                                 "R203.0.113.9/32 2"]
    header = (tmp_path / "t_v4.cfg").read_text().splitlines()[:3]
    assert header[0].startswith("# dpdk-l3fwd lpm rules, IPv4: 7 routes") and header[2] == "# ports: eth0=0 eth1=1 eth2=2"


def test_frr_and_bird_count_the_alternatives_they_do_not_use(tmp_path):
    frr = import_json(tmp_path, DATA / "frr.json", DATA / "frr6.json")
    assert frr["not_selected"] == 3
    assert ("frr.json", 6, "local") in findings(frr)                     # FRR 9's local route: the router's address
    assert [k for _, _, k in findings(frr)].count("prohibit") == 1        # adminProhibited
    bird = import_json(tmp_path, DATA / "bird.txt")
    assert bird["not_selected"] == 3
    assert findings(bird) == [("bird.txt", 3, "default"), ("bird.txt", 13, "multipath"), ("bird.txt", 16, "blackhole"),
                              ("bird.txt", 17, "unreachable"), ("bird.txt", 18, "prohibit"), ("bird.txt", 31, "default"),
                              ("bird.txt", 37, "multipath"), ("bird.txt", 40, "unreachable"),
                              ("bird.txt", 43, "link-local")]


def test_bird_1_lines_and_show_route_all_attributes(tmp_path):
    source = tmp_path / "bird1.txt"
    source.write_text("10.0.0.0/8         via 10.1.1.1 on eth2 [ospf1 2024-03-01] * I (150/20) [10.1.1.1]\n"
                      "\tType: OSPF unicast univ\n\tOSPF.metric1: 20\n"
                      "10.9.0.0/16        dev eth3 [direct1 2024-03-01] * (240)\n"
                      "10.8.0.0/16        multipath [static1 2024-03-01] * (200)\n"
                      "\tvia 10.1.1.5 on eth2 weight 1\n\tvia 10.1.1.6 on eth3 weight 1\n"
                      "10.7.0.0/16        blackhole [static1 2024-03-01] * (200)\n")
    report, v4, _ = run_import(tmp_path, source)
    assert by_key(v4, report.ports) == {"10.0.0.0/8": "eth2", "10.9.0.0/16": "eth3", "10.8.0.0/16": "eth2"}
    assert report.counts == {"blackhole": 1, "multipath": 1}


# ---------------------------------------------------------------------------------------
# MRT: the real dumps of BIRD, OpenBGPD and Quagga
# ---------------------------------------------------------------------------------------
OPENBGPD4 = {"192.168.0.0/16", "192.168.0.10/32", "192.168.0.12/32", "192.168.0.13/32", "192.168.0.14/32",
             "192.168.0.15/32", "192.168.1.0/24", "192.168.3.0/24", "192.168.4.0/24", "192.168.5.0/24",
             "192.168.6.0/24"}


@pytest.mark.parametrize("name", ["mrt-openbgpd_rib_table", "mrt-openbgpd_rib_table-v2", "mrt-openbgpd_rib_table-mp"])
def test_openbgpd_dumps_of_one_table_agree_in_all_three_mrt_layouts(tmp_path, name):
    report, v4, v6 = run_import(tmp_path, DATA / name)
    assert report.sources[0].format == "mrt"
    assert by_key(v4, report.ports) == dict.fromkeys(OPENBGPD4, "192.168.1.10")       # the peer, not the local address
    assert set(by_key(v6, report.ports).values()) == {"2001:db8:0:1::10"} and report.written[6] == 10
    assert report.several_paths == 10                                     # the IPv6 prefixes: two peers each
    assert report.ignored == ({"RIB_GENERIC records (VPN and other address families)": 2}
                              if name.endswith("-v2") else {})


def test_quagga_and_bird_dumps(tmp_path):
    quagga = import_json(tmp_path, DATA / "mrt-quagga_rib")
    assert [o["routes"] for o in quagga["outputs"].values()] == [3, 3] and quagga["findings"] == []
    assert quagga["ports"] == {"192.168.0.10": 0, "fd02::10": 1}
    bird = import_json(tmp_path, DATA / "mrt-bird-mrtdump_rib")          # ADD-PATH records, the table dumped twice
    assert findings(bird)[:2] == [("mrt-bird-mrtdump_rib", 2, "default"), ("mrt-bird-mrtdump_rib", 3, "link-local")]
    assert [k for *_, k in findings(bird)[2:]] == ["duplicate"] * 6
    assert rule_lines(tmp_path / "t_v4.cfg") == ["R192.168.0.0/24 0", "R172.17.0.0/24 1", "R172.17.1.0/24 1",
                                                 "R172.17.2.0/24 1"]
    bird6 = import_json(tmp_path, DATA / "mrt-bird6-mrtdump_rib")
    assert rule_lines(tmp_path / "t_v6.cfg") == ["Rfd01:1::/64 1", "Rfd01:1:1::/64 1", "Rfd01:1:2::/64 1",
                                                 "Rfd02::/64 0"]
    assert bird6["ports"] == {"::": 0, "fd02::10": 1}                   # the default route's peer comes first


def test_mrt_ports_by_peer_then_next_hop(tmp_path):
    """With --port, a prefix's path is the first whose peer, else next hop, has a port."""
    report, v4, v6 = run_import(tmp_path, DATA / "mrt-openbgpd_rib_table-v2",
                                ports={"2001:db8:0:1::10": 3, "192.168.3.12": 2})
    assert report.ports_given and report.ports == {"2001:db8:0:1::10": 3, "192.168.3.12": 2}
    assert rule_lines(v6)[0] == "R2001:db8::/64 3"
    # IPv4 paths come from peer 192.168.1.10, which has no port: those via next hop 192.168.3.12 get port 2
    assert rule_lines(v4) == ["R192.168.0.12/32 2", "R192.168.0.13/32 2", "R192.168.4.0/24 2"]
    assert report.counts["no-port"] == 8


@pytest.mark.parametrize("pack", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_sources_read_as_the_plain_ones(tmp_path, pack):
    for name in ("mrt-quagga_rib", "iproute.txt"):
        run_import(tmp_path, DATA / name)
        plain = [rule_lines(tmp_path / f"t_v{f}.cfg") for f in (4, 6)]
        packed = tmp_path / f"{name}.z"
        packed.write_bytes(pack((DATA / name).read_bytes()))
        report, v4, v6 = run_import(tmp_path, packed)
        assert [rule_lines(v4), rule_lines(v6)] == plain and plain[0]
        assert report.sources[0].format == ("mrt" if name.startswith("mrt") else "ip-route")
    packed.write_bytes(pack((DATA / "iproute.txt").read_bytes())[:-12])
    assert_refused(run_cli("rules", "import", packed, "-o", tmp_path / "t"), f"{packed}: damaged ")


def test_bgp4mp_updates_are_not_a_table(tmp_path):
    line = assert_refused(run_cli("rules", "import", DATA / "mrt-bird-mrtdump_bgp", "-o", tmp_path / "t"),
                          "mrt-bird-mrtdump_bgp: 27 BGP4MP records: BGP update messages, not a table")
    assert "RouteViews' rib.*" in line
    assert not list(tmp_path.iterdir())


def test_a_cut_mrt_dump_is_refused_at_its_offset(tmp_path):
    cut = tmp_path / "rib"
    data = (DATA / "mrt-quagga_rib").read_bytes()
    cut.write_bytes(data[:-10])
    assert_refused(run_cli("rules", "import", cut, "-o", tmp_path / "t"), f"{cut}: offset ", "cut short")
    damaged = bytearray(data)
    damaged[0x4a] = 200                                                   # the first RIB record's prefix length
    cut.write_bytes(bytes(damaged))
    assert_refused(run_cli("rules", "import", cut, "-o", tmp_path / "t", "--from", "mrt"),
                   f"{cut}: record 2: damaged RIB record (prefix length 200)")


# ---------------------------------------------------------------------------------------
# findings, ports
# ---------------------------------------------------------------------------------------
def write(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_fib_writes_the_default_route(tmp_path):
    report, v4, v6 = run_import(tmp_path, DATA / "iproute.txt", DATA / "iproute6.txt", lookup="fib")
    assert rule_lines(v4)[0] == "R0.0.0.0/0 0" and rule_lines(v6)[-1] == "R::/0 1"
    assert "default" not in report.counts and report.counts["duplicate"] == 3
    routes = load_routes("fib", PortConfig(0xF), v4, v6)
    assert routes.v4.lookup(int(ipaddress.IPv4Address("8.8.8.8"))) == 0        # rte_fib's default next hop


def test_tables_tos_source_routes_and_odd_types_are_findings(tmp_path):
    source = write(tmp_path / "r.txt",
                   "10.0.0.0/8 via 10.1.1.1 dev eth0",
                   "10.1.0.0/16 via 10.1.1.1 dev eth0 table 100",
                   "10.2.0.0/16 tos 0x10 via 10.1.1.1 dev eth0",
                   "local 10.1.1.5 dev eth0 table local proto kernel scope host src 10.1.1.5",
                   "broadcast 10.1.1.255 dev eth0 table local proto kernel scope link src 10.1.1.5",
                   "throw 10.3.0.0/16",
                   "224.0.0.0/4 dev eth0 scope link",
                   "127.0.0.0/8 dev lo",
                   "10.4.0.0/16 encap mpls 100 via 10.1.1.9 dev eth1 proto static",
                   "10.5.0.0/16 nhid 7 proto static",
                   "10.6.0.0/16 via inet6 fe80::1 dev eth1",
                   "multicast ff00::/8 dev eth0 table local proto kernel metric 256 pref medium",
                   "2001:db8::/64 from 2001:db8:1::/48 via 2001:db8::1 dev eth0 metric 1024 pref medium")
    report = import_json(tmp_path, source)
    assert findings(report) == [("r.txt", 2, "other-table"), ("r.txt", 3, "tos"), ("r.txt", 4, "other-table"),
                                ("r.txt", 5, "other-table"), ("r.txt", 6, "throw"), ("r.txt", 7, "multicast"),
                                ("r.txt", 8, "loopback"), ("r.txt", 10, "no-next-hop"), ("r.txt", 12, "other-table"),
                                ("r.txt", 13, "source-specific")]
    assert rule_lines(tmp_path / "t_v4.cfg") == ["R10.0.0.0/8 0", "R10.4.0.0/16 1", "R10.6.0.0/16 1"]


def test_host_bits_do_not_make_another_prefix(tmp_path):
    source = write(tmp_path / "r.txt", "10.1.2.3/8 via 10.1.1.1 dev eth0", "10.0.0.0/8 via 10.1.1.2 dev eth1",
                   "2001:db8::1/32 dev eth0", "2001:db8::/32 dev eth1")
    report = import_json(tmp_path, source)
    assert findings(report) == [("r.txt", 2, "duplicate"), ("r.txt", 4, "duplicate")]
    assert rule_lines(tmp_path / "t_v4.cfg") == ["R10.0.0.0/8 0"]         # written masked, as rte_lpm_add masks it
    assert rule_lines(tmp_path / "t_v6.cfg") == ["R2001:db8::/32 0"]


def test_dead_next_hops_are_left_out_unless_all_are(tmp_path):
    source = write(tmp_path / "r.txt", "10.0.0.0/8 proto bird metric 32",
                   "\tnexthop via 10.1.1.1 dev eth0 weight 1 dead linkdown",
                   "\tnexthop via 10.1.2.1 dev eth1 weight 1",
                   "10.9.0.0/16 proto bird metric 32",
                   "\tnexthop via 10.1.1.1 dev eth0 weight 1 dead linkdown")
    report, v4, _ = run_import(tmp_path, source)
    assert by_key(v4, report.ports) == {"10.0.0.0/8": "eth1", "10.9.0.0/16": "eth0"}
    assert "multipath" not in report.counts


def test_explicit_ports_pick_the_first_next_hop_with_one_and_report_the_others(tmp_path):
    ports = parse_ports(["eth1=4", "10.1.1.3=7"])
    report, v4, v6 = run_import(tmp_path, DATA / "iproute.txt", ports=ports)
    assert rule_lines(v4) == ["R10.2.0.0/16 7", "R198.51.100.0/24 4"]
    assert report.counts["no-port"] == 5 and report.ports == {"eth1": 4, "10.1.1.3": 7}
    text = "\n".join(report.finding_lines())
    assert "10.1.1.0/24 dev eth2  — no port for dev eth2: --port gives eth1, 10.1.1.3" in text
    assert "multipath: kept the first with a port of 2 next hops (left out: via 10.1.1.2 dev eth2)" in text


def test_more_than_32_interfaces_run_out_of_ports(tmp_path):
    source = write(tmp_path / "r.txt", *(f"10.{i}.0.0/16 dev eth{i}" for i in range(34)))
    report = import_json(tmp_path, source)
    assert findings(report) == [("r.txt", 33, "port-range"), ("r.txt", 34, "port-range")]
    assert report["findings"][0]["message"].startswith("would be port 32: l3fwd has 32 ports (0..31)")
    assert len(report["ports"]) == 32 and max(report["ports"].values()) == 31


@pytest.mark.parametrize("value, needle", [
    ("eth0", "expected NAME=PORT"), ("eth0=32", "port '32' is not one of l3fwd's ports 0..31"),
    ("eth0=x", "is not one of l3fwd's ports"), ("eth0=1,eth0=2", "'eth0' is given twice"),
    ("192.0.2.1=1,192.0.2.01=2", "is not one of"), ("2001:DB8::1=1,2001:db8::1=2", "'2001:db8::1' is given twice")])
def test_bad_port_mappings_are_refused(tmp_path, value, needle):
    if value.startswith("192.0.2.1=1,"):
        # 192.0.2.01 is no address (inet_pton): an interface name, so no clash
        assert parse_ports([value]) == {"192.0.2.1": 1, "192.0.2.01": 2}
        return
    assert_refused(run_cli("rules", "import", DATA / "iproute.txt", "-o", tmp_path / "t", "--port", value), needle)


# ---------------------------------------------------------------------------------------
# refusals, outputs
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, needle", [
    ("10.0.0.0/8 via 10.1.1.1 dev eth0\n$ ip route\n", "r.txt:2: not an `ip route` line: '$ ip route'"),
    ("10.0.0.0/33 dev eth0\n", "r.txt:1: bad prefix length in '10.0.0.0/33' (expected 0..32)"),
    ("10.0.0.0/8 dev eth0\n10.0.0.256/8 dev eth0\n", "r.txt:2: bad IPv4 prefix '10.0.0.256/8'"),
    ("10.0.0.0/8 dev eth0\n010.0.0.0/8 dev eth0\n", "r.txt:2: bad IPv4 prefix '010.0.0.0/8'"),
    ("2001:db8::/64 dev eth0 metric 99999999999\n", "r.txt:1: bad metric '99999999999'"),
    ("\tnexthop via 10.1.1.1 dev eth0\n", "r.txt: cannot tell what table this is"),
    ("10.0.0.0/8 dev eth0\n  weight 1\n", "r.txt:2: not an `ip route` line"),
    ("[{\"dst\": 5}]", "r.txt: route 1: not a route of `ip -j route`"),
    ("[{\"dst\": \"10.0.0.0/8\",", "r.txt:1: not valid JSON"),
    ("{\"default\": {\"10.0.0.0/8\": []}}", "r.txt: FRR routes of several VRFs"),
    ("Table master4:\n10.0.0.0/8 unicast [static1 2024-03-01] * (200)\nfoo\n", "r.txt:3: not a line of BIRD's"),
    ("hello world\n", "r.txt: cannot tell what table this is (first line 'hello world'): give --from"),
])
def test_bad_sources_are_refused_in_one_line_naming_the_line(tmp_path, text, needle):
    source = tmp_path / "r.txt"
    source.write_text(text)
    assert_refused(run_cli("rules", "import", source, "-o", tmp_path / "t"), needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.txt"]        # nothing written, no temporary file


def test_outputs_are_written_whole_or_not_at_all_and_inputs_never(tmp_path):
    (tmp_path / "t_v4.cfg").write_text("R1.0.0.0/8 0\n")
    bad = write(tmp_path / "bad.txt", "10.0.0.0/8 dev eth0", "garbage here")
    assert_refused(run_cli("rules", "import", DATA / "iproute.txt", bad, "-o", tmp_path / "t"), "bad.txt:2")
    assert (tmp_path / "t_v4.cfg").read_text() == "R1.0.0.0/8 0\n" and not (tmp_path / "t_v6.cfg").exists()
    source = shutil.copy(DATA / "iproute.txt", tmp_path / "x_v4.cfg")
    before = Path(source).read_bytes()
    assert_refused(run_cli("rules", "import", source, "-o", tmp_path / "x"), "is also a source")
    assert Path(source).read_bytes() == before
    result = run_cli("rules", "import", DATA / "iproute.txt", "--rule_ipv4", tmp_path / "a.cfg",
                     "--rule-ipv6", tmp_path / "b.cfg")
    assert result.exit_code == 0 and rule_lines(tmp_path / "a.cfg") and rule_lines(tmp_path / "b.cfg") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.cfg", "b.cfg", "bad.txt", "t_v4.cfg", "x_v4.cfg"]


@pytest.mark.parametrize("args, needle", [
    (["-o", "{t}/t", "--rule_ipv4", "{t}/a"], "either -o PREFIX or --rule_ipv4"),
    ([], "no output: give -o PREFIX"), (["--rule_ipv4", "{t}/a"], "no output"),
    (["--rule_ipv4", "{t}/a", "--rule_ipv6", "{t}/a"], "given as both the IPv4 and the IPv6 rule file"),
    (["-o", "{t}"], "a directory; -o takes a prefix"),
    (["-o", "{t}/nodir/t"], "nodir/t_v4.cfg: cannot create"),
    (["-o", "{t}/t", "--from", "bgp"], "Invalid value for '--from'"),
])
def test_bad_outputs_are_refused(tmp_path, args, needle):
    assert_refused(run_cli("rules", "import", DATA / "iproute.txt", *[a.format(t=tmp_path) for a in args]), needle)


def test_missing_source_and_forced_formats(tmp_path):
    assert_refused(run_cli("rules", "import", tmp_path / "none.txt", "-o", tmp_path / "t"), "none.txt: cannot read")
    assert_refused(run_cli("rules", "import", DATA / "iproute.txt", "-o", tmp_path / "t", "--from", "mrt"),
                   "iproute.txt: not an MRT dump")
    assert_refused(run_cli("rules", "import", DATA / "bird.txt", "-o", tmp_path / "t", "--from", "ip-route"),
                   "bird.txt:1: not an `ip route` line: 'BIRD 2.0.12 ready.'")
    empty = write(tmp_path / "empty.txt")
    report, _, _ = run_import(tmp_path, empty, DATA / "iproute6.txt")       # `ip route` of a host without IPv4
    assert report.sources[0].routes == 0 and report.written == {4: 0, 6: 4}


def test_standard_input(tmp_path, monkeypatch):
    import io
    import sys
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((DATA / "iproute6.txt").read_bytes())))
    report, _, v6 = run_import(tmp_path, "-")
    assert report.sources[0].name == "<stdin>" and len(rule_lines(v6)) == 4


def test_the_cli_knows_every_format():
    from l3fwd_sim.cli.rules import SOURCE_FORMATS
    assert SOURCE_FORMATS == FORMATS


def test_limits_of_the_real_dpdk_l3fwd_are_warned_about(tmp_path):
    source = write(tmp_path / "r.txt", *(f"10.{i >> 8}.{i & 255}.{j * 64}/26 dev eth0" for i in range(300)
                                         for j in range(4)))
    report, v4, _ = run_import(tmp_path, source)
    warned = " ".join(report.warnings)
    assert "1,200 routes, but dpdk-l3fwd's LPM holds 1024 per family" in warned
    assert "prefixes longer than /24 in 300 different /24s" in warned
    routes = load_routes("lpm", PortConfig(0x1), v4, tmp_path / "t_v6.cfg")
    assert routes.installed["ipv4"] == 1200                               # l3fwd-sim has no such limit


# ---------------------------------------------------------------------------------------
# properties: the imported tables answer as the routes they came from
# ---------------------------------------------------------------------------------------
SPECIAL = [ipaddress.ip_network(n) for n in ("169.254.0.0/16", "127.0.0.0/8", "224.0.0.0/4",
                                               "fe80::/10", "::1/128", "ff00::/8")]
BASES = {4: [0x0A000000, 0xC6120000, 0xA9FE0000, 0xE0000000, 0x7F000000, 0xCB007100],
         6: [0x20010DB8 << 96, 0xFE80 << 112, 0xFF02 << 112, 0x2A00 << 112]}
DEVS = ["eth0", "eth1", "eth2", "eth3"]
PORTS = {"eth0": 0, "eth1": 1, "eth2": 2}                 # eth3 has none


@st.composite
def tables(draw, families=(4, 6)):
    """Routes: (family, network int, depth, kind, [(via, dev), ...], metric)."""
    routes = []
    for _ in range(draw(st.integers(1, 30))):
        family = draw(st.sampled_from(families))
        bits = 32 if family == 4 else 128
        depth = draw(st.sampled_from([0, 4, 8, 10, 12, 16, 17, 24, 25, 31, bits] if family == 4 else
                                     [0, 8, 10, 16, 32, 48, 64, 65, 127, 128]))
        address = draw(st.sampled_from(BASES[family])) | draw(st.integers(0, (1 << (bits - 8)) - 1))
        network = address >> (bits - depth) << (bits - depth) if depth else 0
        kind = draw(st.sampled_from(["unicast"] * 6 + ["blackhole", "unreachable"]))
        hops = [] if kind != "unicast" else draw(st.lists(
            st.tuples(st.sampled_from(["10.1.1.1", "10.1.1.2", "fe80::1"]), st.sampled_from(DEVS)),
            min_size=1, max_size=3))
        routes.append((family, network, depth, kind, hops, draw(st.sampled_from([0, 10, 20, 100]))))
    return routes


def net(family: int, network: int, depth: int):
    return ipaddress.ip_network((network, depth)) if family == 4 else ipaddress.IPv6Network((network, depth))


def ip_route_text(routes) -> str:
    lines = []
    for family, network, depth, kind, hops, metric in routes:
        prefix = "default" if depth == 0 else str(net(family, network, depth)) if depth < (32 if family == 4 else 128) \
            else str(ipaddress.ip_address(network) if family == 4 else ipaddress.IPv6Address(network))
        lead = "" if kind == "unicast" else kind + " "
        tail = f" proto static metric {metric}" if metric or family == 6 else " proto static"
        if len(hops) == 1:
            via, dev = hops[0]
            via = f" via {'inet6 ' if ':' in via and family == 4 else ''}{via}"
            lines.append(f"{lead}{prefix}{via} dev {dev}{tail}")
        else:
            lines.append(f"{lead}{prefix}{tail}")
            lines += [f"\tnexthop via {'inet6 ' if ':' in via and family == 4 else ''}{via} dev {dev} weight 1"
                      for via, dev in hops]
    return "\n".join(lines) + "\n"


def ip_route_json(routes) -> str:
    out = []
    for family, network, depth, kind, hops, metric in routes:
        route = {"dst": "default" if depth == 0 else str(net(family, network, depth)) if depth < (32 if family == 4 else 128)
                 else str(ipaddress.ip_address(network) if family == 4 else ipaddress.IPv6Address(network))}
        if kind != "unicast":
            route = {"type": kind, **route}
        hop_objects = [{"gateway": via, "dev": dev, "weight": 1, "flags": []} if ":" not in via or family == 6 else
                       {"via": {"family": "inet6", "host": via}, "dev": dev, "weight": 1, "flags": []}
                       for via, dev in hops]
        if len(hops) == 1:
            route.update({k: v for k, v in hop_objects[0].items() if k != "weight"})
        elif hops:
            route["nexthops"] = hop_objects
        route.update({"protocol": "static", "metric": metric, "flags": []})
        out.append(route)
    return json.dumps(out)


def oracle(routes, fib: bool = False):
    """What the import promises, computed from the routes: per prefix the route of lowest
    metric (the first of equal ones), forwarding ones only, not /0 (lpm), none inside a
    special range; its port: its first next hop's interface that has one. Returns
    [(network, port)]."""
    best = {}
    for index, (family, network, depth, kind, hops, metric) in enumerate(routes):
        key = (family, network, depth)
        if key not in best or metric < best[key][0]:
            best[key] = (metric, index)
    table = []
    for (family, network, depth), (_, index) in best.items():
        _, _, _, kind, hops, _ = routes[index]
        prefix = net(family, network, depth)
        if kind != "unicast" or (depth == 0 and not fib):
            continue
        if any(prefix.version == s.version and prefix.subnet_of(s) for s in SPECIAL):
            continue
        ports = [PORTS[dev] for _, dev in hops if dev in PORTS]
        if ports:
            table.append((prefix, ports[0]))
    return table


def longest_match(table, address):
    found = [(prefix.prefixlen, port) for prefix, port in table
             if prefix.version == address.version and address in prefix]
    return max(found)[1] if found else None


def probe_keys(routes, rng: random.Random):
    keys = []
    for family, network, depth, *_ in routes:
        bits = 32 if family == 4 else 128
        span = 1 << (bits - depth)
        for offset in (0, span - 1, rng.randrange(span)):
            keys.append(ipaddress.ip_address(network + offset) if family == 4 else ipaddress.IPv6Address(network + offset))
    for _ in range(20):
        keys.append(ipaddress.IPv4Address(rng.getrandbits(32)))
        keys.append(ipaddress.IPv6Address(rng.choice(BASES[6]) | rng.getrandbits(100)))
    return keys


def check_lookups(routes, v4: Path, v6: Path, table, lookup: str = "lpm", seed: int = 0):
    tables = load_routes(lookup, PortConfig(0xFFFFFFFF), v4, v6)
    for key in probe_keys(routes, random.Random(seed)):
        got = (tables.v4 if key.version == 4 else tables.v6).lookup(int(key))
        assert got == longest_match(table, key), (str(key), got, longest_match(table, key))


@PROPS
@given(routes=tables(), fmt=st.sampled_from(["ip-route", "ip-route-json"]), seed=st.integers(0, 99))
def test_imported_tables_answer_as_the_routes_they_came_from(tmp_path, routes, fmt, seed):
    source = tmp_path / "routes"
    source.write_text(ip_route_text(routes) if fmt == "ip-route" else ip_route_json(routes))
    report, v4, v6 = run_import(tmp_path, source, ports=dict(PORTS))
    assert report.sources[0].format == fmt
    check_lookups(routes, v4, v6, oracle(routes), seed=seed)


@PROPS
@given(routes=tables(families=(4,)), seed=st.integers(0, 99))
def test_fib_imports_answer_with_the_default_route(tmp_path, routes, seed):
    source = tmp_path / "routes.txt"
    source.write_text(ip_route_text(routes))
    report, v4, v6 = run_import(tmp_path, source, ports=dict(PORTS), lookup="fib")
    table = oracle(routes, fib=True)
    fib = load_routes("fib", PortConfig(0xFFFFFFFF), v4, v6)
    for key in probe_keys(routes, random.Random(seed)):
        if key.version == 4:
            assert fib.v4.lookup(int(key)) == longest_match(table, key)


def mrt_dump(records, peers, stray: int = 0) -> bytes:
    """A TABLE_DUMP_V2 dump, written here from RFC 6396: ``peers`` [(address, AS)],
    ``records`` [(family, network, depth, [peer index, ...])], each path with a
    NEXT_HOP (IPv4) or abbreviated MP_REACH_NLRI (IPv6) of the peer's address.
    ``stray``: bits set past the prefix length in its last byte (the table ignores them)."""
    def record(subtype, body):
        return struct.pack(">IHHI", 1700000000, 13, subtype, len(body)) + body

    table = struct.pack(">IH", 0x0A000001, 0) + struct.pack(">H", len(peers))
    for address, asn in peers:
        ip = ipaddress.ip_address(address)
        table += struct.pack(">BI", 0x02 | (ip.version == 6), 0x0A000002) + ip.packed + struct.pack(">I", asn)
    out = [record(1, table)]
    for seq, (family, network, depth, paths) in enumerate(records):
        size = 4 if family == 4 else 16
        prefix = bytearray(network.to_bytes(size, "big")[:(depth + 7) // 8])
        if depth % 8:
            prefix[-1] |= stray & ((1 << (8 - depth % 8)) - 1)
        body = struct.pack(">IB", seq, depth) + bytes(prefix)
        body += struct.pack(">H", len(paths))
        for index in paths:
            ip = ipaddress.ip_address(peers[index][0])
            attrs = b"\x40\x01\x01\x00" + b"\x40\x02\x00"
            if family == 4 and ip.version == 4:
                attrs += b"\x40\x03\x04" + ip.packed
            else:
                hop = ip.packed if ip.version == 6 else ipaddress.IPv6Address(f"::ffff:{ip}").packed
                attrs += b"\x80\x0e\x11\x10" + hop
            body += struct.pack(">HIH", index, 1700000000, len(attrs)) + attrs
        out.append(record(2 if family == 4 else 4, body))
    return b"".join(out)


MRT_PEERS = [("192.0.2.1", 64500), ("192.0.2.2", 64501), ("2001:db8::1", 64502), ("198.51.100.7", 64503)]
MRT_PORTS = {"192.0.2.1": 0, "2001:db8::1": 1, "192.0.2.2": 5}               # 198.51.100.7: none


@PROPS
@given(routes=tables(), paths=st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=3), min_size=30, max_size=30),
       explicit=st.booleans(), seed=st.integers(0, 99))
def test_mrt_imports_answer_as_the_dump(tmp_path, routes, paths, explicit, seed):
    records = [(family, network, depth, paths[i]) for i, (family, network, depth, *_) in enumerate(routes)]
    source = tmp_path / "rib"
    source.write_bytes(gzip.compress(mrt_dump(records, MRT_PEERS, stray=seed)))
    report, v4, v6 = run_import(tmp_path, source, ports=dict(MRT_PORTS) if explicit else None)
    seen, table, first_seen = set(), [], {}
    for family, network, depth, peers in records:             # the first record of a prefix, its first path (with a port)
        first_seen.setdefault(MRT_PEERS[peers[0]][0], len(first_seen))
        if (family, network, depth) in seen:
            continue
        seen.add((family, network, depth))
        prefix = net(family, network, depth)
        if depth == 0 or any(prefix.version == s.version and prefix.subnet_of(s) for s in SPECIAL):
            continue
        if explicit:
            ports = [MRT_PORTS[MRT_PEERS[p][0]] for p in peers if MRT_PEERS[p][0] in MRT_PORTS]
            if ports:
                table.append((prefix, ports[0]))
        else:
            table.append((prefix, MRT_PEERS[peers[0]][0]))
    if not explicit:              # a port for each peer of a route written, in order of first appearance in the dump
        used = {peer for _, peer in table}
        auto = {peer: n for n, peer in enumerate(p for p in first_seen if p in used)}
        assert report.ports == auto
        table = [(prefix, auto[peer]) for prefix, peer in table]
    check_lookups(routes, v4, v6, table, seed=seed)


def test_the_properties_can_fail(tmp_path):
    """The oracle is not a copy of the import: a table the import reads differently from
    what the oracle assumes is caught (here: the routes of a higher metric kept)."""
    routes = [(4, 0x0A000000, 8, "unicast", [("10.1.1.1", "eth0")], 10),
              (4, 0x0A000000, 8, "unicast", [("10.1.1.1", "eth1")], 5)]
    source = tmp_path / "routes.txt"
    source.write_text(ip_route_text(routes))
    _, v4, v6 = run_import(tmp_path, source, ports=dict(PORTS))
    wrong = [(net(4, 0x0A000000, 8), 0)]                          # as if the first line won
    with pytest.raises(AssertionError):
        check_lookups(routes, v4, v6, wrong)
    check_lookups(routes, v4, v6, oracle(routes))


def test_library_errors_are_sim_errors(tmp_path):
    report, v4, _ = run_import(tmp_path, DATA / "iproute6.txt", ports={"ETH0": 1, "2001:DB8:1::2": 3})
    assert report.ports == {"ETH0": 1, "2001:db8:1::2": 3} and rule_lines(tmp_path / "t_v6.cfg") == \
        ["R2001:db8:2::/48 3", "R2001:db8:5::1/128 3"]
    with pytest.raises(SimError, match="each port 0..31"):
        run_import(tmp_path, DATA / "iproute6.txt", ports={"eth0": 32})
    with pytest.raises(SimError, match="unknown table format"):
        import_routes(ImportOptions([DATA / "iproute.txt"], prefix=str(tmp_path / "t"), source_format="cisco"))
    with pytest.raises(SimError, match="rules import writes LPM rules"):
        import_routes(ImportOptions([DATA / "iproute.txt"], prefix=str(tmp_path / "t"), lookup="em"))


# ---------------------------------------------------------------------------------------
# big tables: the timing (python tests/l3fwd/test_rules_import.py [N]) and a small round trip
# ---------------------------------------------------------------------------------------
def big_prefixes(count: int, seed: int = 1) -> list[tuple[int, int, int]]:
    """``count`` distinct unicast prefixes, (family, network, length), about 85 % IPv4 /8../24
    and 15 % IPv6 /19../48, as a full BGP table has them."""
    rng = random.Random(seed)
    seen, out = set(), []
    while len(out) < count:
        if rng.random() < 0.85:
            depth = rng.choice((8, 12, 16, 19, 20, 21, 22, 22, 23, 23, 24, 24, 24, 24, 24, 24))
            network = rng.randrange(1, 224) << 24 | rng.getrandbits(24)
            if network >> 24 == 127 or network >> 16 == 0xA9FE:
                continue
            network &= ~((1 << (32 - depth)) - 1) & 0xFFFFFFFF
            key = (4, network, depth)
        else:
            depth = rng.choice((19, 29, 32, 32, 36, 40, 44, 48, 48, 48))
            network = (0x2000 | rng.getrandbits(12)) << 112 | rng.getrandbits(112)
            network &= ~((1 << (128 - depth)) - 1)
            key = (6, network, depth)
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def big_ip_route(prefixes, path: Path) -> None:
    """As a router with a full table in its kernel prints it: ``ip route`` then ``ip -6 route``."""
    hops4 = [("192.0.2.1", "eth0"), ("198.51.100.1", "eth1"), ("203.0.113.1", "eth2")]
    hops6 = [("2001:db8:0:1::1", "eth0"), ("2001:db8:0:2::1", "eth1")]
    lines = []
    for i, (family, network, depth) in enumerate(prefixes):
        if family == 4:
            via, dev = hops4[i % 3]
            lines.append(f"{ipaddress.IPv4Address(network)}/{depth} via {via} dev {dev} proto bgp metric 20")
        else:
            via, dev = hops6[i % 2]
            lines.append(f"{ipaddress.IPv6Address(network)}/{depth} via {via} dev {dev} proto bgp metric 20 pref medium")
    path.write_text("\n".join(lines) + "\n")


def test_a_generated_table_round_trips(tmp_path):
    prefixes = big_prefixes(3000)
    big_ip_route(prefixes, tmp_path / "r.txt")
    (tmp_path / "rib").write_bytes(mrt_dump([(f, n, d, [i % 2, 2 if f == 6 else 3]) for i, (f, n, d) in
                                             enumerate(prefixes)], MRT_PEERS))
    for source in ("r.txt", "rib"):
        report, v4, v6 = run_import(tmp_path, tmp_path / source)
        assert report.findings == 0 and sum(report.written.values()) == 3000
        written = {line[1:].split()[0] for line in rule_lines(v4) + rule_lines(v6)}
        assert written == {str(net(f, n, d)) for f, n, d in prefixes}


if __name__ == "__main__":                     # the timing of docs/rules.md: N prefixes (default 1,000,000)
    import subprocess
    import sys
    import tempfile
    import time
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    binary = Path(sys.executable).parent / "l3fwd-sim"
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        prefixes = big_prefixes(count)
        big_ip_route(prefixes, work / "table.txt")
        peers = list(range(len(MRT_PEERS)))
        (work / "rib").write_bytes(mrt_dump([(f, n, d, [i % 2, 3, 2] if f == 4 else [2, 3]) for i, (f, n, d) in
                                             enumerate(prefixes)], MRT_PEERS))
        (work / "rib.gz").write_bytes(gzip.compress((work / "rib").read_bytes(), 6))
        for name in ("table.txt", "rib", "rib.gz"):
            started = time.perf_counter()
            done = subprocess.run([binary, "rules", "import", work / name, "-o", work / "t"], capture_output=True,
                                  text=True)
            took = time.perf_counter() - started
            size = (work / name).stat().st_size
            print(f"{name}: {size / 1e6:.0f} MB, {took:.2f} s: {done.stdout.splitlines()[-3:] if done.stdout else done.stderr}")
