"""A real DPDK for the differential tests: Debian 12's DPDK 22.11 packages, when the
machine has them (``.ci/run`` installs them). ``dpdk-testpmd`` as packaged; ``dpdk-l3fwd``
built once per test process from the packaged examples by
``tests/dpdk/build-l3fwd-22.11.sh`` (with its net_pcap patch), or from an edited copy of
them. Without the packages, the tests skip with a line naming what is missing."""
from __future__ import annotations

import atexit
import functools
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "tests" / "dpdk" / "build-l3fwd-22.11.sh"
BUILD_GRAPH = REPO / "tests" / "dpdk" / "build-l3fwd-graph-22.11.sh"
EXAMPLES = Path("/usr/share/dpdk/examples")
PACKAGES = "apt-get install dpdk dpdk-dev libdpdk-dev dpdk-doc pkg-config"


def _missing() -> str | None:
    if not shutil.which("dpdk-testpmd"):
        return "dpdk-testpmd"
    if not (EXAMPLES / "l3fwd").is_dir():
        return "dpdk-doc (l3fwd's example sources)"
    if not shutil.which("pkg-config") or subprocess.run(["pkg-config", "--exists", "libdpdk"]).returncode:
        return "libdpdk-dev and pkg-config"
    if not shutil.which("make") or not shutil.which("cc"):
        return "make and a C compiler"
    return None


def require() -> None:
    """Skip the calling test, naming the missing package, unless a real DPDK is here."""
    if (missing := _missing()) is not None:
        pytest.skip(f"no real DPDK: {missing} missing ({PACKAGES})")


@functools.cache
def _workdir() -> Path:
    path = Path(tempfile.mkdtemp(prefix="l3fwd-sim-real-dpdk-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def build_l3fwd(name: str = "stock", edit=None) -> Path:
    """dpdk-l3fwd 22.11 built over net_pcap; ``edit(sources)`` first changes a copy of the
    example sources (a deliberately broken build)."""
    require()
    return _build(name, edit)


@functools.cache
def build_l3fwd_graph() -> Path:
    """dpdk-l3fwd-graph 22.11, as packaged (tests/dpdk/build-l3fwd-graph-22.11.sh)."""
    require()
    done = subprocess.run(["bash", str(BUILD_GRAPH), str(_workdir() / "graph")], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.strip().splitlines()[-1])


@functools.cache
def _build(name: str, edit) -> Path:
    out = _workdir() / name
    env = None
    if edit is not None:
        sources = out / "sources"
        sources.mkdir(parents=True)
        for folder in ("l3fwd", "common"):
            shutil.copytree(EXAMPLES / folder, sources / folder)
        edit(sources)
        env = {**__import__("os").environ, "SOURCES": str(sources)}
    done = subprocess.run(["bash", str(BUILD), str(out / "build")], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.strip().splitlines()[-1])
