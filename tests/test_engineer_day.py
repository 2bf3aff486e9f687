"""A network engineer's first day with l3fwd-sim, replayed (issue 47): each trap a new
user fell into, as they met it, and the answer they get now."""
from __future__ import annotations

import json
import signal
import subprocess
import sys

from dpdk_lines import invoke
from forwarding import REPO
from frames import read_pcap_frames
from refusals import assert_refused

PCAPS = REPO / "pcaps"


def _rules(tmp_path):
    (tmp_path / "r4.cfg").write_text("R198.18.0.0/24 0\nR198.18.1.0/24 1\nR198.18.2.0/24 2\nR198.18.3.0/24 2\n"
                                     "R10.0.0.0/8 40\n")
    (tmp_path / "r6.cfg").write_text("R2001:200::/64 1\n")
    return ["--rule_ipv4", str(tmp_path / "r4.cfg"), "--rule_ipv6", str(tmp_path / "r6.cfg")]


def test_routes_outside_the_portmask_are_said(tmp_path):
    """`run 0=pcaps/port0.pcap --rule_ipv4 r4 --rule_ipv6 r6` with rules to ports 1 and
    2: one warning with the count per port and the -p that installs them; stats.json's
    rules_not_installed; the summary line; the report's Rules section."""
    result = invoke("run", f"0={PCAPS / 'port0.pcap'}", "-o", tmp_path / "out", *_rules(tmp_path), "--report")
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if "not installed" in line]
    assert len(warnings) == 1
    assert "(port 1: 2, port 2: 2, port 40: 1)" in warnings[0] and "-p 0x7 would install" in warnings[0]
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["rules_not_installed"] == {"1": 2, "2": 2, "40": 1}
    assert sum(not r["installed"] for r in stats["rules"]) == 5
    assert "; 5 lines not installed" in result.stdout
    page = (tmp_path / "out" / "report.html").read_text()
    assert 'data-key="rules_not_installed" data-value="5"' in page
    # the defaults are l3fwd's, not the user's: counted, not warned about
    quiet = invoke("run", f"0={PCAPS / 'port0.pcap'}", "-o", tmp_path / "defaults")
    assert "not installed" not in quiet.stderr
    assert json.loads((tmp_path / "defaults" / "stats.json").read_text())["rules_not_installed"] == {
        str(p): 2 for p in range(1, 16)}


def test_lookup_hits_answers_for_the_runs_portmask(tmp_path):
    """After a run with -p 0xf, 198.18.7.1 missed (its route to port 7 was not
    installed): `lookup --hits` says so; with another -p it answers for that one and warns."""
    assert invoke("run", PCAPS, "-o", tmp_path / "out", "-p", "0xf", "--quiet").exit_code == 0
    result = invoke("lookup", "--hits", tmp_path / "out", "198.18.7.1")
    assert result.exit_code == 0 and "no matching rule → miss" in result.stdout and "hits:" not in result.stdout
    other = invoke("lookup", "--hits", tmp_path / "out", "198.18.7.1", "-p", "0xff")
    assert "→ next hop 7 → port 7" in other.stdout
    assert "the run used portmask 0xf, these answers are for -p 0xff" in other.stderr


def test_a_route_table_given_as_a_rule_file_points_to_rules_import(tmp_path):
    """`ip route` output fed as a rule file: the one line names the way in."""
    table = REPO / "tests" / "data" / "rules_import" / "iproute.txt"
    assert_refused(invoke("run", PCAPS, "-o", tmp_path / "out", "--rule_ipv4", table, "--rule_ipv6", table),
                   f"{table}:1: rule lines must start with 'R'", "l3fwd-sim rules import")


def test_one_capture_is_port_0s_and_a_directory_says_what_it_skips(tmp_path):
    result = invoke("run", PCAPS / "port2.pcap", "-o", tmp_path / "one", "--quiet")
    assert result.exit_code == 0, result.output
    stats = json.loads((tmp_path / "one" / "stats.json").read_text())
    assert stats["options"]["inputs"] == {"0": str(PCAPS / "port2.pcap")} and stats["totals"]["rx"] == 256
    assert_refused(invoke("run", PCAPS / "port0.pcap", PCAPS / "port1.pcap", "-o", tmp_path / "two"),
                   "0=a.pcap 1=b.pcap")
    folder = tmp_path / "captures"
    folder.mkdir()
    for name, source in (("port0.pcap", 0), ("port6.cap", 1), ("Port4.pcap", 2), ("eth7.pcap", 3)):
        (folder / name).write_bytes((PCAPS / f"port{source}.pcap").read_bytes())
    (folder / "notes.txt").write_text("not a capture")
    result = invoke("run", folder, "-o", tmp_path / "dir", "--quiet")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        f"l3fwd-sim: warning: {folder}: 3 captures not taken as input (a port's file is port<N>.pcap, .pcapng, .gz; "
        "N=FILE names any): Port4.pcap, eth7.pcap, port6.cap"]


def test_quiet_still_says_when_input_was_lost(tmp_path):
    cut = tmp_path / "cut.pcap"
    cut.write_bytes((PCAPS / "port0.pcap").read_bytes()[:10000])
    result = invoke("run", cut, "-o", tmp_path / "out", "--quiet")
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.splitlines() == [f"l3fwd-sim: warning: {cut}: the last record is cut short at offset 9602; "
                                          "every complete record before it was read"]


def test_report_reads_the_stats_file_of_a_verbatim_run(tmp_path):
    stats_file = tmp_path / "run1.json"
    line = ["-l", "0", "--vdev", f"net_pcap0,rx_pcap={PCAPS / 'port0.pcap'},tx_pcap={tmp_path / 'tx0.pcap'}", "--",
            "-p", "0x1", "--config", "(0,0,0)", "--parse-ptype", "--relax-rx-offload"]
    assert invoke("dpdk-l3fwd", *line, env={"L3FWD_SIM_STATS": str(stats_file)}).exit_code == 0
    result = invoke("report", stats_file)
    assert result.exit_code == 0 and result.stdout.strip() == str(tmp_path / "run1.html")
    assert "l3fwd run" in (tmp_path / "run1.html").read_text()


def test_acl_routes_to_ports_without_a_device_are_dropped(tmp_path):
    """`dpdk-l3fwd -p 0x0f` over one vdev, ACL rules routing to port 3: real l3fwd's
    rte_eth_tx_burst on a port with no device sends nothing (ethdev's dummy burst) and
    l3fwd frees the packets — dropped, not counted as sent, with one warning."""
    acl = REPO / "tests" / "data" / "golden" / "acl"
    stats_file = tmp_path / "stats.json"
    line = ["-l", "0", "--vdev", f"net_pcap0,rx_pcap={PCAPS / 'port0.pcap'},tx_pcap={tmp_path / 'tx0.pcap'}", "--",
            "-p", "0x0f", "--config", "(0,0,0)", "--parse-ptype", "--relax-rx-offload", "--lookup", "acl",
            "--rule_ipv4", str(acl / "acl_v4.cfg"), "--rule_ipv6", str(acl / "acl_v6.cfg")]
    result = invoke("dpdk-l3fwd", *line, env={"L3FWD_SIM_STATS": str(stats_file)})
    assert result.exit_code == 0, result.output
    stats = json.loads(stats_file.read_text())
    sent = len(read_pcap_frames(tmp_path / "tx0.pcap"))
    assert stats["totals"]["tx"] == sent == stats["ports"]["0"]["out"]
    lost = stats["drops"]["tx_no_device"]
    assert lost > 0 and all(stats["ports"][p]["out"] == 0 for p in ("1", "2", "3"))
    assert stats["totals"]["rx"] == stats["totals"]["tx"] + stats["totals"]["dropped"]
    assert f"{lost:,} packets routed to ports no --vdev made" in result.stderr


def test_ctrl_c_while_loading_is_one_line():
    """Ctrl-C while the command line loads (numpy, click: ~0.1 s) — the state is made
    here: the import of the command line raises KeyboardInterrupt."""
    script = ("import builtins\nreal = builtins.__import__\n"
              "def imp(name, globals=None, locals=None, fromlist=(), level=0):\n"
              "    if level == 1 and name == 'cli':\n        raise KeyboardInterrupt\n"
              "    return real(name, globals, locals, fromlist, level)\n"
              "builtins.__import__ = imp\nfrom l3fwd_sim.command import entry\nentry()\n")
    done = subprocess.run([sys.executable, "-c", script, "run", "pcaps", "-o", "x"], capture_output=True, text=True)
    assert done.returncode == 128 + signal.SIGINT
    assert done.stderr == "l3fwd-sim: interrupted; no partial output was left\n"


def test_help_names_values_and_takes_the_guides_program_path(tmp_path):
    overview = invoke("--help").stdout
    lines = {line.split()[0]: line for line in overview.splitlines() if line.startswith("  ") and line.split()}
    assert lines["run"] != lines["testpmd"] and "..." not in lines["run"] + lines["testpmd"]
    for command in ("run", "testpmd", "lookup"):
        shown = invoke(command, "--help").stdout
        assert " TEXT " not in shown and " INTEGER " not in shown, command
    line = ["-l", "0", "--vdev", f"net_pcap0,rx_pcap={PCAPS / 'port0.pcap'},tx_pcap={tmp_path / 'tx0.pcap'}", "--",
            "-p", "0x1", "--config", "(0,0,0)", "--parse-ptype", "--relax-rx-offload"]
    assert invoke("./build/examples/dpdk-l3fwd", *line).exit_code == 0
    assert read_pcap_frames(tmp_path / "tx0.pcap")


def test_a_table_bigger_than_l3fwds_own_is_said(tmp_path):
    """A real table in an LPM run: dpdk-l3fwd's rte_lpm holds 1,024 rules per family and
    256 IPv4 tbl8 groups (l3fwd_lpm.c), and real l3fwd exits adding more; l3fwd-sim
    forwards, with one warning saying so. fib holds 65,536: no warning there."""
    import random
    rng = random.Random(1)
    (tmp_path / "big4.cfg").write_text("".join(f"R10.{i // 256}.{i % 256}.0/24 {rng.randrange(4)}\n"
                                               for i in range(1025)))
    (tmp_path / "v6.cfg").write_text("R2001:200::/64 1\n")
    rules = ["--rule_ipv4", str(tmp_path / "big4.cfg"), "--rule_ipv6", str(tmp_path / "v6.cfg")]
    result = invoke("run", PCAPS, "-o", tmp_path / "lpm", *rules)
    said = [line for line in result.stderr.splitlines() if "real dpdk-l3fwd's LPM table holds 1,024 routes" in line]
    assert result.exit_code == 0 and len(said) == 1 and "1,025 ipv4 routes" in said[0]
    (tmp_path / "ok4.cfg").write_text("".join((tmp_path / "big4.cfg").read_text().splitlines(True)[:1024]))
    fine = invoke("run", PCAPS, "-o", tmp_path / "ok", "--rule_ipv4", tmp_path / "ok4.cfg", "--rule_ipv6",
                  tmp_path / "v6.cfg")
    assert "real dpdk-l3fwd" not in fine.stderr
    assert "real dpdk-l3fwd" not in invoke("run", PCAPS, "-o", tmp_path / "fib", *rules, "--lookup", "fib").stderr
