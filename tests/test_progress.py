"""The progress bar of ``run``, ``testpmd`` and ``generate`` (``cli/options.py``): drawn
only on a terminal, redrawn in place, ended at 100 % (or erased when the work fails) so
that whatever is printed next starts on a line of its own; ``generate`` draws it by
default and moves it in steps of about 1 %. A fake terminal (a StringIO that says it is
a tty) or a real pseudo-terminal stands for the user's; nothing depends on timing."""
from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from l3fwd_sim.cli.options import end_progress, progress_printer
from l3fwd_sim.errors import SimError
from l3fwd_sim.traffic.generate import GenerateOptions, generate

BAR = re.compile(r"\[(#*) *\] +(\d+)%")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def drawn(text: str) -> list[int]:
    """The percentages the bar showed, in order."""
    return [int(m.group(2)) for m in BAR.finditer(text)]


def screen_lines(text: str) -> list[str]:
    """What stays on screen: each line as its last carriage return leaves it (the text
    after a final newline is the line the cursor is on)."""
    return [line.rsplit("\r", 1)[-1] for line in text.replace("\r\n", "\n").split("\n")]


def test_no_bar_off_a_terminal_or_when_quiet():
    assert progress_printer(False, io.StringIO()) is None
    assert progress_printer(True, Terminal()) is None
    end_progress(None)                                   # what a command calls either way


def test_each_percentage_once_and_the_line_ended_at_100():
    term = Terminal()
    bar = progress_printer(False, term)
    for done in (0, 1, 2, 50, 51, 99, 100):
        bar(done, 100)
    assert drawn(term.getvalue()) == [0, 1, 2, 50, 51, 99, 100]
    assert term.getvalue().endswith("] 100%\n")
    end_progress(bar)                                    # already ended: nothing more
    print("summary", file=term)
    assert screen_lines(term.getvalue())[-3:] == ["[#########################] 100%", "summary", ""]


def test_a_count_that_stops_short_is_ended_at_100_before_the_next_line():
    """``run`` counts records, not the files' headers: its last call says 99 %. The
    warning printed after the run used to follow on the bar's line."""
    term = Terminal()
    bar = progress_printer(False, term)
    bar(990, 1000)
    bar(999, 1000)
    assert not term.getvalue().endswith("\n")
    end_progress(bar)
    print("l3fwd-sim: warning: something", file=term)
    assert drawn(term.getvalue()) == [99, 100]
    assert screen_lines(term.getvalue())[-3:] == ["[#########################] 100%",
                                                  "l3fwd-sim: warning: something", ""]


def test_a_failing_command_erases_its_bar_before_the_error():
    """The command's click context closes (and the bar is erased) before the exception
    reaches the code that prints it."""
    term = Terminal()

    @click.command()
    def command():
        bar = progress_printer(False, term)
        bar(3, 10)
        raise SimError("no")

    with pytest.raises(SimError):
        command.main([], standalone_mode=False)
    assert drawn(term.getvalue()) == [30]
    assert screen_lines(term.getvalue())[-1].strip() == ""          # the cursor back at column 0 of a blank line
    assert term.getvalue().endswith("\r")


def test_generate_reports_in_small_steps_however_few_chunks(tmp_path):
    """2 ports of 60,000 packets fit a chunk each (65,536): the bar used to jump 50 % at a
    time. With a bar, chunks are cut to about 1 % of the packets (at least 8,192)."""
    term = Terminal()
    bar = progress_printer(False, term)
    generate(GenerateOptions(outdir=tmp_path / "g", pattern="IPV4-CONT-BURST", ports=2, count=60_000, progress=bar))
    shown = drawn(term.getvalue())
    assert shown[-1] == 100 and term.getvalue().endswith("\n")
    assert len(shown) >= 12 and max(b - a for a, b in zip(shown, shown[1:])) <= 10


def _on_a_terminal(*args) -> str:
    """Run ``l3fwd-sim`` with stdout and stderr on a pseudo-terminal; what it printed."""
    master, slave = pty.openpty()
    try:
        done = subprocess.run([str(Path(sys.executable).parent / "l3fwd-sim"), *map(str, args)], stdin=subprocess.DEVNULL,
                              stdout=slave, stderr=slave, timeout=120)
    finally:
        os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:                                  # EIO: the terminal's other end is closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert done.returncode == 0, out
    return out.decode()


def test_generate_draws_its_bar_on_a_terminal_by_default(tmp_path):
    text = _on_a_terminal("generate", "IPV4-CONT-BURST", "--ports", "2", "--count", "20000", "--size", "64-128",
                          "-o", tmp_path / "a")
    shown = drawn(text)
    assert len(shown) >= 3 and shown[-1] == 100
    lines = screen_lines(text)
    at = lines.index("[#########################] 100%")
    assert lines[at + 1].endswith("port0.pcap: 20000 packets, " + lines[at + 1].rsplit(", ", 1)[1])
    assert "--no-progress" in _on_a_terminal("generate", "--help")
    assert drawn(_on_a_terminal("generate", "IPV4-CONT-BURST", "--count", "10", "--no-progress", "-o", tmp_path / "b")) \
        == []
