"""Every ``l3fwd-sim`` command in the README's and docs/' ```sh blocks runs, so the docs
cannot rot: each page's commands run top to bottom in a fresh directory holding the
shipped pcaps, rule files and a stream file under the names the docs use, and
``tests/data`` (the recorded golden runs and captures, as the repository ships them). A
command must exit 0 (``compare`` may exit 1: "they differ") and never print a traceback."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from forwarding import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent
FLOWS_TOML = """\
seed = 1
order = "round-robin"

[[stream]]
name = "udp-sweep"
ports = [0, 1]
count = 100
size = "64-256"
ipv4 = { src = "198.18.1.1", dst = "198.18.1.0" }
udp = { sport = 1024, dport = 9 }

[[stream.vary]]
field = "ipv4.dst"
op = "inc"
min = "198.18.1.0"
max = "198.18.1.255"
"""


def sh_commands(text: str) -> list[str]:
    """The ``l3fwd-sim`` lines of a page's ```sh blocks (after environment settings such
    as ``L3FWD_SIM_KERNELS=numpy``), continuation lines joined."""
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S):
        for line in re.sub(r"\s*\\\n\s*", " ", block).splitlines():
            if re.match(r"(\w+=\S*\s+)*l3fwd-sim\b", line.strip()):
                commands.append(line.strip())
    return commands


COMMANDED = [page for page in PAGES if sh_commands(page.read_text())]      # pages with a command to run


def test_sh_commands_are_found_with_continuations_and_only_in_sh_blocks():
    text = ("```sh\nl3fwd-sim run pcaps \\\n    -o out   # comment\nmake demo\n```\n"
            "```console\nl3fwd-sim run nothing\n```\n```sh\n  l3fwd-sim compare a b\n"
            "L3FWD_SIM_KERNELS=numpy l3fwd-sim run c\nl3fwd-simulate x\n```\n")
    assert sh_commands(text) == ["l3fwd-sim run pcaps -o out   # comment", "l3fwd-sim compare a b",
                                 "L3FWD_SIM_KERNELS=numpy l3fwd-sim run c"]


def sandbox(root: Path) -> Path:
    """The files the docs' examples name: ``pcaps/``, ``a.pcap``, ``b.pcap``,
    ``routes/``, ``v4.cfg``/``v6.cfg`` (LPM), ``em4.cfg``/``em6.cfg`` (EM), ``acl4.cfg``/``acl6.cfg`` (ACL),
    ``flows.toml``, and the output sets ``before/``, ``after/``, ``demo-out/{simple,multi}``."""
    work = root / "main"
    shutil.copytree(REPO / "pcaps", work / "pcaps")
    shutil.copytree(REPO / "routes", work / "routes")
    (work / "tests").mkdir()
    (work / "tests" / "data").symlink_to(REPO / "tests" / "data")
    shutil.copy(work / "pcaps" / "port0.pcap", work / "a.pcap")
    shutil.copy(work / "pcaps" / "port1.pcap", work / "b.pcap")
    for name, source in (("v4.cfg", "lpm_default_v4.cfg"), ("v6.cfg", "lpm_default_v6.cfg"),
                         ("em4.cfg", "em_default_v4.cfg"), ("em6.cfg", "em_default_v6.cfg")):
        shutil.copy(work / "routes" / source, work / name)
    for family in (4, 6):
        shutil.copy(REPO / "tests" / "data" / "golden" / "acl" / f"acl_v{family}.cfg", work / f"acl{family}.cfg")
    (work / "flows.toml").write_text(FLOWS_TOML)
    for out, options in (("before", ()), ("after", ("--pipeline", "simple")),
                         ("demo-out/multi", ()), ("demo-out/simple", ("--pipeline", "simple"))):
        subprocess.run([BIN / "l3fwd-sim", "run", "pcaps", "-o", out, "--quiet", *options], cwd=work, check=True)
    return work


def test_the_readme_has_its_copy_paste_examples():
    assert len(sh_commands((REPO / "README.md").read_text())) >= 10


@pytest.mark.parametrize("page", COMMANDED, ids=[p.relative_to(REPO).as_posix() for p in COMMANDED])
def test_every_documented_command_runs(tmp_path, page):
    commands = sh_commands(page.read_text())
    work = sandbox(tmp_path)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120)
        allowed = (0, 1) if re.search(r"\bl3fwd-sim compare\b", command) else (0,)
        assert done.returncode in allowed, f"{page.name}: `{command}` exited {done.returncode}:\n{done.stderr}"
        assert "Traceback" not in done.stderr, f"{page.name}: `{command}`:\n{done.stderr}"
