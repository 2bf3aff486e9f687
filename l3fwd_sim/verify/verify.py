"""``verify``: a real dpdk-l3fwd/dpdk-l3fwd-graph/dpdk-testpmd binary against the simulator on one command
line. The line's ``tx_pcap`` files are redirected into two private directories (the real
program's, the simulator's), each side runs the line, and every transmitted file is
compared record by record (``diff/compare.py``). A refusal is compared as a refusal.

``dpdk="auto"`` picks the release profile from the binary itself: its EAL's ``RTE
Version`` line (``-v``, on a line that only asks for the usage text); a patched build
compares with its release."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..dataplane.trace import TRACE_FILE
from ..diff.compare import CompareOptions, compare_files
from ..eal.args import split_argv
from ..errors import SimError
from ..graph.main import dpdk_l3fwd_graph
from ..graph.run import check_release
from ..l3fwd.main import dpdk_l3fwd
from ..releases import RELEASES, Release, release
from ..testpmd.main import dpdk_testpmd
from .real import RealRun, run_real

PROGRAMS = ("dpdk-l3fwd", "dpdk-l3fwd-graph", "dpdk-testpmd")
_VERSION = re.compile(r"RTE Version: 'DPDK (\d\d\.\d\d)(?:\.\d+)?")


@dataclass
class VerifyOptions:
    """One verification: ``argv`` is the program's command line after its name."""
    program: str
    argv: list[str]
    binary: Path | None = None          # default: ``program`` on PATH
    dpdk: str = "auto"                  # a release profile, or auto: the binary's own
    keep: Path | None = None            # keep both sides' files (and the stats) here
    pipeline: str = "multi"             # the binary's build: the x86 multi-buffer path, or simple
    max_diffs: int = 3                  # differences described per file


@dataclass
class TxFile:
    """One ``tx_pcap`` of the line — TX queue ``queue`` of port ``port`` — and where each
    side wrote it."""
    given: str
    real: Path
    sim: Path
    port: int
    queue: int


def binary_release(binary: Path) -> Release:
    """The release profile of a real binary: the ``RTE Version`` its EAL prints with
    ``-v`` (asked of a line with no port that only prints the usage text)."""
    prefix = f"l3fwd-sim-version-{os.getpid()}"
    try:
        done = subprocess.run([str(binary), "-v", "--no-huge", "-m", "64", "--no-pci", "--no-telemetry", "-l", "0",
                               "--file-prefix", prefix, "--log-level=lib.eal:info", "--", "--help"],
                              capture_output=True, text=True, errors="replace", timeout=60, start_new_session=True)
    except (OSError, subprocess.SubprocessError) as err:
        raise SimError(f"{binary}: cannot run it to read its DPDK release ({err}); give --dpdk") from None
    finally:
        shutil.rmtree(Path("/var/run/dpdk") / prefix, ignore_errors=True)
    found = _VERSION.search(done.stdout + done.stderr)
    if not found:
        raise SimError(f"{binary}: printed no 'RTE Version' line with -v; give --dpdk")
    if found.group(1) not in RELEASES:
        raise SimError(f"{binary}: DPDK {found.group(1)}: no profile for it (modelled: {', '.join(RELEASES)}); "
                       "give --dpdk to compare with one")
    return release(found.group(1))


def _redirect(argv: list[str], real_dir: Path, sim_dir: Path, prefix: str) -> tuple[list, list, list[TxFile]]:
    """The line for each side: every tx_pcap redirected, EAL's file prefix made private."""
    eal, app = split_argv(argv)
    real_eal, sim_eal, files = [], [], []
    port = 0
    words = iter(eal)
    for word in words:
        if word == "--file-prefix":
            next(words, None)
            continue
        if word.startswith("--file-prefix="):
            continue
        vdev = None
        if word == "--vdev":
            vdev = next(words, "")
        elif word.startswith("--vdev="):
            vdev = word.partition("=")[2]
        if vdev is None:
            real_eal.append(word)
            sim_eal.append(word)
            continue
        parts_real, parts_sim, queue = [], [], 0
        for part in vdev.split(","):
            key, eq, value = part.partition("=")
            if key.strip() == "tx_pcap" and eq:
                name = f"{len(files)}-{Path(value).name}"
                files.append(TxFile(value, real_dir / name, sim_dir / name, port, queue))
                queue += 1
                parts_real.append(f"tx_pcap={real_dir / name}")
                parts_sim.append(f"tx_pcap={sim_dir / name}")
            else:
                parts_real.append(part)
                parts_sim.append(part)
        real_eal += ["--vdev", ",".join(parts_real)]
        sim_eal += ["--vdev", ",".join(parts_sim)]
        port += not vdev.startswith("event_")
    tail = ["--", *app] if "--" in argv else []
    return [*real_eal, "--file-prefix", prefix, *tail], [*sim_eal, *tail], files


def verify(opt: VerifyOptions) -> dict:
    """Run both sides and compare; the result as a dict (``equal``: nothing differs)."""
    if opt.program not in PROGRAMS:
        raise SimError(f"verify: {opt.program!r}: give dpdk-l3fwd, dpdk-l3fwd-graph or dpdk-testpmd after --")
    binary = Path(opt.binary) if opt.binary else Path(shutil.which(opt.program) or "")
    if not binary.is_file() or not os.access(binary, os.X_OK):
        raise SimError(f"{opt.binary or opt.program}: no such executable (install DPDK, or give --binary PATH)")
    profile = binary_release(binary) if opt.dpdk == "auto" else release(opt.dpdk)
    if opt.program == "dpdk-l3fwd-graph":
        check_release(profile)              # not a refusal of the line: nothing to compare with
    work = Path(tempfile.mkdtemp(prefix="l3fwd-sim-verify-"))
    try:
        real_dir, sim_dir = work / "real", work / "sim"
        real_dir.mkdir(), sim_dir.mkdir()
        real_argv, sim_argv, files = _redirect(opt.argv, real_dir, sim_dir, f"l3fwd-sim-verify-{os.getpid()}")
        sim_refusal, read = None, []
        try:
            if opt.program == "dpdk-l3fwd":
                stats = dpdk_l3fwd(sim_argv, opt.pipeline, str(sim_dir / "stats.json"), profile,
                                   str(sim_dir / TRACE_FILE)).stats
            elif opt.program == "dpdk-l3fwd-graph":         # v26.07 only (graph/run.py): --dpdk 26.07 otherwise
                stats = dpdk_l3fwd_graph(sim_argv, str(sim_dir / "stats.json"), profile).stats
            else:
                stats = dpdk_testpmd(sim_argv, str(sim_dir / "stats.json"), profile)[0]
            read = sorted({Path(p).resolve() for p in stats["options"]["inputs"].values()})
        except SimError as err:
            sim_refusal = str(err)
        real = run_real(opt.program, binary, real_argv, read,
                        {f.real: f.sim.stat().st_size if f.sim.exists() else -1 for f in files},
                        f"l3fwd-sim-verify-{os.getpid()}")
        result = _compared(opt, binary, profile, real, sim_refusal, files, _trace(sim_dir))
        if opt.keep:
            shutil.copytree(work, opt.keep, dirs_exist_ok=True)
            result["kept"] = str(opt.keep)
        return result
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _trace(sim_dir: Path) -> dict:
    """The simulator's trace lines of the packets it sent, by (TX port, TX queue, place in
    that queue's file); empty for testpmd (it keeps no trace)."""
    path, stats = sim_dir / TRACE_FILE, sim_dir / "stats.json"
    if not path.exists():
        return {}
    per_lcore = json.loads(stats.read_text()).get("lcores", {}).get("per_lcore", {})
    queue_of = {int(lcore): entry["tx_queue"] for lcore, entry in per_lcore.items()}
    lines = {}
    with open(path) as trace:
        for text in trace:
            line = json.loads(text)
            if line["tx_port"] is not None:
                lines[line["tx_port"], queue_of.get(line["lcore"], 0), line["tx_index"]] = line
    return lines


def _compared(opt: VerifyOptions, binary: Path, profile: Release, real: RealRun, sim_refusal: str | None,
              files: list[TxFile], trace: dict) -> dict:
    out = {"program": opt.program, "binary": str(binary), "dpdk": profile.name, "pipeline": opt.pipeline,
           "real": {"status": real.status, "forwarded": real.started}, "simulator": {"refused": sim_refusal}}
    if not real.started or sim_refusal is not None:
        if not real.started:
            out["real"]["refusal"] = real.refusal
            out["real"]["console_tail"] = real.console[-6:]
        out["equal"] = not real.started and sim_refusal is not None
        out["files"] = []
        return out
    compared = []
    for f in files:
        if not f.real.exists() or not f.sim.exists():
            compared.append({"file": f.given, "equal": f.real.exists() == f.sim.exists(),
                             "verdict": "written by neither" if not (f.real.exists() or f.sim.exists()) else
                             f"written only by the {'real program' if f.real.exists() else 'simulator'}"})
            continue
        report = compare_files(f.real, f.sim, CompareOptions(max_diffs=opt.max_diffs, by_layers=True))
        entry = {"file": f.given, "equal": report.equal, "verdict": report.verdict()}
        if not report.equal:
            entry["report"] = report.format_text().replace(str(f.real), f"the real {opt.program}").replace(
                str(f.sim), "l3fwd-sim")
            entry["by_cause"] = report.by_layers
            # the simulator's decision for each differing packet it sent: rule line, next hop, drop
            entry["simulator_trace"] = [trace[f.port, f.queue, d.index_b] for d in report.differences
                                        if d.index_b is not None and (f.port, f.queue, d.index_b) in trace]
        compared.append(entry)
    out["files"] = compared
    out["equal"] = all(entry["equal"] for entry in compared)
    return out
