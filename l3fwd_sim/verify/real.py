"""Driving a real DPDK program over net_pcap as a person would, and as the golden runs
were made: in a session of its own; ready when it prints its main-loop line; done when a
state says so — every capture the simulator read of the same line is read to its end
(``/proc/PID/fdinfo``: the file position at its size) and the ``tx_pcap`` sizes have
stayed still: a few polls when they are the sizes the simulator wrote, a second when not
(a loaded machine may hold the program back that long) — then SIGINT (dpdk-l3fwd, dpdk-l3fwd-graph) or the end of standard input
(dpdk-testpmd). Every wait is bounded; the program is ended by its PID only; its
``/var/run/dpdk/<prefix>`` is removed."""
from __future__ import annotations

import os
import pty
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SimError

READY = {"dpdk-l3fwd": "entering main loop", "dpdk-l3fwd-graph": "Entering main loop",
         "dpdk-testpmd": "Press enter to exit"}
POLL_SECONDS = 0.05
STILL_POLLS = (4, 20)             # tx sizes unchanged this many polls in a row, once the inputs are read: when
                                  # they are the simulator's sizes, and when they are not
START_SECONDS = 60.0              # bounded waits: to the ready line, to the done state, to the exit
RUN_SECONDS = 120.0
EXIT_SECONDS = 20.0


@dataclass
class RealRun:
    """What the real program did: its exit status, whether it started forwarding, and
    its console (stdout and stderr, in order)."""
    status: int
    started: bool
    console: list[str] = field(default_factory=list)

    @property
    def refusal(self) -> str:
        """The decisive line of a refusal: rte_exit's message (after ``Cause:`` up to
        23.11, alone from 24.11), else the last line."""
        lines = [line.strip() for line in self.console if line.strip()]
        for i, line in enumerate(lines):
            if line.startswith("EAL: Error - exiting with code"):
                rest = lines[i + 1:]
                return rest[0].removeprefix("Cause: ") if rest else line
        return lines[-1] if lines else f"exit status {self.status}"


def _position(pid: int, path: Path) -> int | None:
    """Where the process stands in ``path`` (its open descriptor's file position)."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if Path(os.readlink(f"/proc/{pid}/fd/{fd}")) == path:
                    for line in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines():
                        if line.startswith("pos:"):
                            return int(line.split()[1])
            except OSError:
                continue
    except OSError:
        return None
    return None


def run_real(program: str, binary: Path, argv: list[str], read: list[Path], written: dict[Path, int],
             prefix: str) -> RealRun:
    """Run ``binary argv`` (``program``: a key of READY) until done: ``read``
    are the captures it must read to their end, ``written`` its tx files with the sizes
    the simulator gave them; ``prefix`` its EAL file prefix (removed after)."""
    # the console on a terminal, so that it is line-buffered as a person sees it (a pipe would
    # hold testpmd's "Press enter to exit" in its stdio buffer)
    terminal, their_end = pty.openpty()
    proc = subprocess.Popen([str(binary), *argv], stdin=subprocess.PIPE, stdout=their_end, stderr=their_end,
                            start_new_session=True, text=True)
    os.close(their_end)
    console: list[str] = []
    ready = threading.Event()

    def collect():
        pending = b""
        while True:
            try:
                chunk = os.read(terminal, 65536)
            except OSError:                     # EIO: the program and its children closed the terminal
                chunk = b""
            if not chunk:
                break
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                text = line.decode(errors="replace").rstrip("\r")
                console.append(text)
                if READY[program] in text:
                    ready.set()
            if READY[program].encode() in pending:
                ready.set()
        if pending:
            console.append(pending.decode(errors="replace").rstrip("\r"))
    reader = threading.Thread(target=collect, daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + START_SECONDS
        while not ready.is_set() and proc.poll() is None and time.monotonic() < deadline:
            ready.wait(POLL_SECONDS)
        if not ready.is_set():
            if proc.poll() is None:
                raise SimError(f"{binary}: no '{READY[program]}' line within {START_SECONDS:g} s; stopped it")
            reader.join(EXIT_SECONDS)
            return RealRun(proc.returncode, False, console)
        _until_done(proc, read, written)
        if program == "dpdk-l3fwd-graph":
            _until_tables(proc, console, _tables(console) + 1)
        if proc.poll() is None:                 # (an exited one's PID may be someone else's by now)
            if program != "dpdk-testpmd":
                proc.send_signal(signal.SIGINT)
            else:
                proc.stdin.write("\n")
                proc.stdin.flush()
        proc.wait(EXIT_SECONDS)
        reader.join(EXIT_SECONDS)
        return RealRun(proc.returncode, True, console)
    except subprocess.TimeoutExpired:
        raise SimError(f"{binary}: did not exit within {EXIT_SECONDS:g} s of being told to; killed it") from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        reader.join(EXIT_SECONDS)
        os.close(terminal)
        shutil.rmtree(Path("/var/run/dpdk") / prefix, ignore_errors=True)


def _tables(console: list[str]) -> int:
    """How many complete statistics tables the console holds: dpdk-l3fwd-graph's main
    lcore prints one a second (a banner, rows, a border)."""
    borders = sum(1 for line in list(console) if "+-------------------------------+" in line)   # after ESC[2J
    return borders // 3


def _until_tables(proc: subprocess.Popen, console: list[str], tables: int) -> None:
    """dpdk-l3fwd-graph: wait for its ``tables``-th statistics table, the first printed
    wholly after the done state, so that its figures are final; bounded by RUN_SECONDS."""
    deadline = time.monotonic() + RUN_SECONDS
    while _tables(console) < tables and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)


def _until_done(proc: subprocess.Popen, read: list[Path], written: dict[Path, int]) -> None:
    """Wait for the done state: every capture of ``read`` at its end in the process and
    the sizes of ``written`` still for STILL_POLLS polls; bounded by RUN_SECONDS."""
    sizes, still = None, 0
    expected = list(written.values())
    deadline = time.monotonic() + RUN_SECONDS
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return
        at_end = all(_position(proc.pid, path) == path.stat().st_size for path in read)
        now = [path.stat().st_size if path.exists() else -1 for path in written]
        still = still + 1 if at_end and now == sizes else 0
        if still >= STILL_POLLS[now != expected]:
            return
        sizes = now
        time.sleep(POLL_SECONDS)
    raise SimError(f"the real program did not finish reading its inputs within {RUN_SECONDS:g} s; stopped it")
