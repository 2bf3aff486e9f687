"""The runs whose reports tests/report looks at: the shipped pcaps through one lcore,
several lcores, ACL, testpmd, a comparison, and hostile names (a rule file named like
markup, a capture path of control characters, a stats.json whose strings try to close
the page's script)."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from forwarding import REPO, run_cli
from rule_files import write_acl_rules

PCAPS = REPO / "pcaps"
LCORES = "(0,0,0),(1,0,1),(2,0,0),(3,0,1)"
EVIL_RULES = "<img src=x onerror=alert(1)>.cfg"
EVIL_CAPTURE = "cap\x1b[31m\n<svg onload=alert(2)>\u202e\x07.pcap"
INJECTED = "</script><script>alert(3)</script>"


def _ok(*args) -> None:
    done = run_cli(*args)
    assert done.exit_code in (0, 1), done.output
    assert "Traceback" not in done.output


def make_runs(root: Path) -> dict[str, Path]:
    """Run them all under ``root``; name -> the report file: one, lcores, acl, testpmd,
    compare, evil, injected."""
    _ok("run", PCAPS, "-o", root / "one", "--quiet", "--report")
    _ok("run", PCAPS, "-o", root / "lcores", "--config", LCORES, "--quiet", "--report")
    rules = {family: write_acl_rules(root / f"acl{family}.cfg", family, random.Random(family), 40)
             for family in (4, 6)}
    _ok("run", PCAPS, "-o", root / "acl", "--lookup", "acl", "--rule_ipv4", rules[4], "--rule_ipv6", rules[6],
        "--quiet", "--report")
    _ok("testpmd", PCAPS, "-o", root / "testpmd", "--forward-mode", "macswap", "--quiet", "--report")
    # the two paths differ on the shipped pcaps; traced, so that --explain adds trace lines
    _ok("run", PCAPS, "-o", root / "multi", "--trace", "all", "--quiet")
    _ok("run", PCAPS, "-o", root / "simple", "--pipeline", "simple", "--trace", "all", "--quiet")
    _ok("compare", root / "multi", root / "simple", "--explain", "--by-layers", "--report", root / "compare.html")

    shutil.copy(REPO / "routes" / "lpm_default_v4.cfg", root / EVIL_RULES)
    shutil.copy(REPO / "routes" / "lpm_default_v6.cfg", root / "v6.cfg")
    shutil.copy(PCAPS / "port0.pcap", root / EVIL_CAPTURE)
    _ok("run", f"0={root / EVIL_CAPTURE}", f"1={PCAPS / 'port1.pcap'}", "-o", root / "evil",
        "--rule_ipv4", root / EVIL_RULES, "--rule_ipv6", root / "v6.cfg", "--quiet", "--report")

    stats = json.loads((root / "one" / "stats.json").read_text())
    stats["warnings"].append(INJECTED)
    stats["options"]["inputs"]["0"] = INJECTED
    stats["rules"][0].update(file=f"{INJECTED}.cfg", packets=10**6)     # the top rule
    stats["drops"][INJECTED] = stats["ports"]["0"]["drops"][INJECTED] = 5    # a label of two charts
    (root / "injected").mkdir()
    (root / "injected" / "stats.json").write_text(json.dumps(stats))
    _ok("report", root / "injected")
    return {name: root / name / "report.html" for name in ("one", "lcores", "acl", "testpmd", "evil", "injected")} | {
        "compare": root / "compare.html"}
