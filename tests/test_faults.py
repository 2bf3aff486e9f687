"""Faults from outside, on the real command in a child process: signals, a full disk,
pipes and FIFOs as inputs, odd output directories, stale outputs of an earlier run.

Each must end in one line on stderr and the conventional exit status, with the output
directory holding exactly what it held before (nothing half-written, no temporary file)
— or, for a run that succeeds, exactly its own outputs."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from l3fwd_sim import hold
from l3fwd_sim.traffic.generate import GenerateOptions, generate

REPO = Path(__file__).resolve().parents[1]
PCAPS = REPO / "pcaps"
CLI = [str(Path(sys.executable).with_name("l3fwd-sim"))]


def snapshot(directory: Path) -> dict:
    """Every entry below ``directory``, hidden ones included: bytes of files, "dir"."""
    if not directory.exists():
        return {}
    return {str(p.relative_to(directory)): ("dir" if p.is_dir() else p.read_bytes())
            for p in sorted(directory.rglob("*"))}


def cli(*args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=120, **kwargs)


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.fixture(scope="module")
def traffic(tmp_path_factory) -> Path:
    """4 × 60,000 64-byte packets: several super-bursts, so that a run held after its first
    (``interrupt``) is half-way."""
    out = tmp_path_factory.mktemp("traffic")
    generate(GenerateOptions(outdir=out, pattern="IPV4-CONT-BURST", ports=4, count=60000, seed=1))
    return out


def _staged(outdir: Path) -> bool:
    """The command has begun writing its outputs (hidden staging or temporary files)."""
    return outdir.exists() and any(p.name.startswith(".") for p in outdir.rglob("*"))


def _wait_for(state, what: str, child: subprocess.Popen | None = None) -> None:
    """Poll until ``state()`` holds; ``child`` ending first fails the test with its
    output (60 s is a bound on a hang, not on the machine's speed)."""
    deadline = time.monotonic() + 60
    while not state():
        assert child is None or child.poll() is None, f"ended before {what}: {child.communicate()}"
        assert time.monotonic() < deadline, f"no {what} after 60 s"
        time.sleep(0.002)


def interrupt(args: list, outdir: Path, signum: int, tmp_path: Path, stdin=None, env=None, staged=None):
    """Start the command held at its known point (``l3fwd_sim.hold``: records written into
    its staged outputs — in ``outdir``, or ``staged`` —, its --jobs/--cluster workers
    started), then send ``signum``; the processes it had started are noted, and waited
    for until they are gone."""
    held = tmp_path / "held"
    child = subprocess.Popen([*CLI, *map(str, args)], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env={**os.environ, **(env or {}), hold.ENV: str(held)})
    _wait_for(held.exists, "the hold point", child)
    assert _staged(staged or outdir), "held before writing its outputs"
    descendants = _descendants(child.pid)
    child.send_signal(signum)
    out, err = child.communicate(timeout=60)
    result = subprocess.CompletedProcess(child.args, child.returncode, out, err)
    result.descendants = descendants
    _wait_for(lambda: not [pid for pid in descendants if _alive(pid)], "the end of the processes it started")
    return result


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid`` (Linux /proc)."""
    found, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += children
            todo += children
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def earlier_outputs(outdir: Path) -> dict:
    """An output directory as an earlier run left it, with a file of the user's."""
    result = cli("run", PCAPS, "-o", outdir, "-p", "0x3f", "--quiet")
    assert result.returncode == 0, result.stderr
    (outdir / "notes.txt").write_text("the user's own file")
    return snapshot(outdir)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("command", [
    ["run", "{traffic}", "-o", "{out}", "--pipeline", "simple"],
    ["run", "{traffic}", "-o", "{out}", "--pipeline", "simple", "--jobs", "2"],
    ["run", "{traffic}", "-o", "{out}", "--trace", "all"],
    ["testpmd", "{traffic}", "-o", "{out}", "--forward-mode", "macswap"],
    ["run", "{traffic}", "-o", "{out}", "--pipeline", "simple", "--cluster", "local:2", "--quiet"],
], ids=["run", "run-jobs2", "run-trace", "testpmd", "run-cluster"])
def test_a_signal_leaves_the_outputs_as_they_were(tmp_path, traffic, command, signum):
    out = tmp_path / "out"
    before = earlier_outputs(out)
    result = interrupt([a.format(traffic=traffic, out=out) for a in command], out, signum, tmp_path)
    assert result.returncode == 128 + signum
    assert one_line(result.stderr) == \
        f"l3fwd-sim: stopped by {signal.Signals(signum).name}; no partial output was left"
    assert snapshot(out) == before
    if "--jobs" in command or "--cluster" in command:     # held while they ran; all gone since (interrupt)
        assert result.descendants


def test_a_signal_during_generate_leaves_the_earlier_set(tmp_path):
    out = tmp_path / "out"
    before = earlier_outputs(out)
    result = interrupt(["generate", "IPV4-CONT-BURST", "--count", "200000", "-o", out], out, signal.SIGTERM, tmp_path)
    assert result.returncode == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in one_line(result.stderr)
    assert snapshot(out) == before


def test_a_signal_during_bench_leaves_no_temporary_file(tmp_path):
    """Held in its first generate (into a temporary directory: the traffic of a probe),
    stopped: neither the temporary directory nor anything hidden in the output stays."""
    out, temp = tmp_path / "bench", tmp_path / "temp"
    temp.mkdir()
    result = interrupt(["bench", "--count", "100000", "-o", out, "--no-reference", "--no-trace", "--acl-rules", "0",
                        "--acl-build", "0", "--no-testpmd"], out, signal.SIGHUP, tmp_path, env={"TMPDIR": str(temp)},
                       staged=temp)
    assert result.returncode == 128 + signal.SIGHUP
    assert "stopped by SIGHUP" in one_line(result.stderr)
    assert not list(temp.iterdir()) and not [p for p in out.rglob(".*")]


@pytest.mark.parametrize("attempt", range(4))
def test_a_signal_while_reading_a_fifo(tmp_path, traffic, attempt):
    """The run waits for more packets from a FIFO (a capture still being taken); SIGTERM
    then ends it cleanly, and a directory it created is gone. A signal that arrives just
    before the blocking read must still stop it (without cli's watcher thread, 1 run in
    40 under load hung here): a few attempts, signalled as early as possible."""
    fifo = tmp_path / "live.pcap"
    os.mkfifo(fifo)
    out = tmp_path / "new" / "out"
    child = subprocess.Popen([*CLI, "run", f"0={fifo}", "-o", out], stderr=subprocess.PIPE, text=True)
    with open(fifo, "wb") as writer:              # a header and some records, then nothing more for now
        writer.write((traffic / "port0.pcap").read_bytes()[:24 + 76 * 1000])
        writer.flush()
        deadline = time.monotonic() + 60
        while not _staged(out) and time.monotonic() < deadline:
            time.sleep(0.002)
        child.send_signal(signal.SIGTERM)
        _, err = child.communicate(timeout=60)
    assert child.returncode == 128 + signal.SIGTERM
    assert "stopped by SIGTERM" in one_line(err)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("how", ["stdin", "fifo", "gzip-fifo"])
def test_pipes_are_inputs_opened_once(tmp_path, how):
    """``tcpdump -w - | l3fwd-sim run 0=/dev/stdin``, a FIFO, a gzip stream through a FIFO:
    the outputs are those of the same run on the files."""
    reference = tmp_path / "ref"
    assert cli("run", f"0={PCAPS}/port0.pcap", f"1={PCAPS}/port1.pcap", "-o", reference).returncode == 0
    out = tmp_path / "out"
    data = (PCAPS / "port0.pcap").read_bytes()
    if how == "stdin":
        result = subprocess.run([*CLI, "run", "0=/dev/stdin", f"1={PCAPS}/port1.pcap", "-o", out], input=data,
                                capture_output=True, timeout=120)
    else:
        fifo = tmp_path / "in.fifo"
        os.mkfifo(fifo)
        feed = subprocess.Popen(f"{'gzip -c' if how == 'gzip-fifo' else 'cat'} {PCAPS}/port0.pcap > {fifo}",
                                shell=True)
        result = subprocess.run([*CLI, "run", f"0={fifo}", f"1={PCAPS}/port1.pcap", "-o", out],
                                capture_output=True, timeout=120)
        feed.wait(timeout=60)
    assert result.returncode == 0, result.stderr
    for name in ("port0.pcap", "port1.pcap"):
        assert (out / name).read_bytes() == (reference / name).read_bytes()


def test_pipes_are_refused_where_they_cannot_work(tmp_path):
    data = (PCAPS / "port0.pcap").read_bytes()
    for args, words in (
        (["0=/dev/stdin", f"1={PCAPS}/port1.pcap", "--jobs", "2"], "not a regular file"),
        (["0=/dev/stdin", "1=/dev/stdin"], "read only once"),
        (["0=/dev/stdin", "--config", "(0,0,0),(0,1,1)"], "the 2 RX queues of port 0 each read it (RSS)"),
    ):
        result = subprocess.run([*CLI, "run", *args, "-o", tmp_path / "out"], input=data, capture_output=True,
                                timeout=120)
        assert result.returncode == 2
        line = one_line(result.stderr.decode())
        assert line.startswith("l3fwd-sim: /dev/stdin: ") and words in line
        assert not (tmp_path / "out").exists()


def test_stale_outputs_of_an_earlier_run_are_replaced(tmp_path):
    """``-p 0xff`` then the default portmask: port4..7.pcap of the first run go, the
    user's files stay; a run without --trace takes an earlier trace away too."""
    out = tmp_path / "out"
    assert cli("run", PCAPS, "-o", out, "-p", "0xff", "--trace", "all", "--quiet").returncode == 0
    (out / "notes.txt").write_text("mine")
    (out / "port9.pcap.orig").write_text("mine")
    assert cli("run", PCAPS, "-o", out, "--quiet").returncode == 0
    stats = json.loads((out / "stats.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [f"port{p}.pcap" for p in stats["ports"]] + ["stats.json", "notes.txt", "port9.pcap.orig"])
    assert len(stats["ports"]) == 4


@pytest.mark.parametrize("blocker", ["port2.pcap", "stats.json", "trace.jsonl"])
def test_a_failed_commit_changes_nothing(tmp_path, blocker):
    out = tmp_path / "out"
    earlier_outputs(out)
    (out / blocker).unlink(missing_ok=True)
    (out / blocker).mkdir()
    before = snapshot(out)
    result = cli("run", PCAPS, "-o", out, "--lookup", "em", "--trace", "5")
    assert result.returncode == 2
    assert one_line(result.stderr) == \
        f"l3fwd-sim: {out / blocker}: is a directory, so the outputs cannot replace it; nothing was changed"
    assert snapshot(out) == before


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounting a small tmpfs needs root")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_full_disk_names_the_file_and_leaves_nothing(tmp_path, jobs):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = disk / "out"
        out.mkdir()
        (out / "notes.txt").write_text("mine")
        before = snapshot(out)
        result = cli("run", PCAPS, "-o", out, "--jobs", jobs)
        assert result.returncode == 2
        line = one_line(result.stderr)
        assert line.startswith(f"l3fwd-sim: {out}/port") and line.endswith(": cannot write: No space left on device")
        assert snapshot(out) == before
    finally:
        subprocess.run(["umount", str(disk)])


@pytest.mark.parametrize("args,message", [
    (["-o", ""], "Invalid value for '-o' / '--output': an empty string; name a directory"),
    (["-o", "{tmp}/out", "-p", ""], "invalid portmask '' (expected hex, e.g. 0x3)"),
    (["-o", "{tmp}/afile"], "{tmp}/afile: is a file, not a directory; give a directory for the outputs"),
])
@pytest.mark.parametrize("command", ["run", "testpmd"])
def test_output_and_portmask_mistakes(tmp_path, command, args, message):
    (tmp_path / "afile").write_text("x")
    result = cli(command, PCAPS, *[a.format(tmp=tmp_path) for a in args], cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result.stderr) == "l3fwd-sim: " + message.format(tmp=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
