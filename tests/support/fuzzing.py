"""The fuzz suite's one property, and its budget.

Every case is a whole ``l3fwd-sim`` command line run in-process (click's runner: ~100x
faster than a child process per case), and its outcome must be what the CLI promises
for any input:

* exit status 0 — or 1 for a ``compare`` that found differences — or 2 with exactly one
  line on stderr, ``l3fwd-sim: ...``, and no traceback anywhere;
* on exit 2, every watched directory (the output directory, the inputs) byte for byte
  and link for link as it was; on exit 0, only the command's own outputs changed;
* nothing left in ``TMPDIR`` (each case gets an empty one);
* no hang: a case running longer than :data:`HANG_SECONDS` fails.

The budget: under ``make test`` each target runs a fixed number of derandomized
examples (the same cases every run: CI does not turn red on a new find by chance);
``make fuzz`` gives every target an equal share of ``FUZZ_SECONDS`` with fresh random
seeds, batch after batch, and prints how many cases each ran (conftest.py).
"""
from __future__ import annotations

import os
import re
import signal
import stat
import tempfile
import time
import traceback
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import HealthCheck, given, settings

HANG_SECONDS = 30
CI_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "50"))       # per target under make test
FUZZ_SECONDS = float(os.environ.get("FUZZ_SECONDS", "0"))      # make fuzz: the whole run's length
# what a run, testpmd or generate may write (independent of capture/outdir.py's pattern)
OURS = re.compile(r"port[0-9]+(\.q[0-9]+)?\.pcap(ng)?|stats\.json|trace\.jsonl|drops\.pcapng|report\.html"
                  r"|trace_[A-Za-z0-9]{6}\.pcapng")     # dpdk-l3fwd-graph --pcap-enable --pcap-file-name trace


@dataclass
class Tally:
    """Cases run per target (printed at the end of ``make fuzz``)."""
    cases: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    targets: int = 1                    # fuzz targets collected (conftest.py sets it)


TALLY = Tally()


class Hang(Exception):
    """A case ran past HANG_SECONDS."""


def snapshot(directory: Path) -> dict:
    """Every entry below ``directory`` without following links: a file's bytes, "dir",
    or a link's target."""
    found = {}
    if not os.path.lexists(directory):
        return found
    for root, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            path = os.path.join(root, name)
            key = os.path.relpath(path, directory)
            if os.path.islink(path):
                found[key] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                found[key] = "dir"
            elif not stat.S_ISREG(os.lstat(path).st_mode):     # a FIFO (opening it would block), a socket
                found[key] = ("special", stat.S_IFMT(os.lstat(path).st_mode))
            else:
                try:
                    found[key] = Path(path).read_bytes()
                except OSError as err:                 # a FIFO or an unreadable file: its kind
                    found[key] = ("unreadable", err.errno)
    return found


@contextmanager
def _deadline(seconds: float):
    def expire(signum, frame):
        raise Hang(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def _empty_tmpdir():
    """An empty TMPDIR for one case; fails the case if anything is left in it."""
    case_tmp = Path(tempfile.mkdtemp(prefix="fuzz-tmp-"))
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(case_tmp), str(case_tmp)
    try:
        yield
        left = sorted(os.listdir(case_tmp))
        assert not left, f"left in TMPDIR: {left}"
    finally:
        tempfile.tempdir = saved_dir
        if saved_env is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_env
        _remove(case_tmp)


def _remove(path: Path) -> None:
    import shutil
    shutil.rmtree(path, ignore_errors=True)


def run_case(args: list, watched: tuple[Path, ...] = (), differs_ok: bool = False, cwd: Path | None = None,
             env: dict | None = None):
    """Run ``l3fwd-sim *args`` in-process (``env`` set meanwhile) and check the property
    above; returns click's Result for a target's own further checks."""
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    before = {directory: snapshot(directory) for directory in watched}
    with _empty_tmpdir(), _deadline(HANG_SECONDS), _working_directory(cwd):
        result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=True, env=env)
    shown = f"args={args!r}\nstderr={result.stderr[-3000:]!r}"
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{shown}\n" + "".join(traceback.format_exception(result.exception)))
    allowed = (0, 1, 2) if differs_ok else (0, 2)
    assert result.exit_code in allowed, shown
    assert "Traceback" not in result.stdout + result.stderr, shown
    if result.exit_code == 2:
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("l3fwd-sim: "), shown
        for directory in watched:
            assert snapshot(directory) == before[directory], f"{shown}\n{directory} changed"
    else:
        for directory in watched:
            after = snapshot(directory)
            changed = {name for name in set(before[directory]) | set(after)
                       if before[directory].get(name) != after.get(name)}
            theirs = sorted(name for name in changed if not OURS.fullmatch(name))     # a run writes no subdirectory
            assert not theirs, f"{shown}\n{directory}: a file not ours changed: {theirs}"
    return result


@contextmanager
def _working_directory(cwd: Path | None):
    if cwd is None:
        yield
        return
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(previous)


def fuzz(strategy):
    """Decorate ``check(case)`` into a test that draws ``case`` from ``strategy``, within
    the budget above."""
    def wrap(check):
        def test():
            name = check.__name__
            started = time.monotonic()
            share = FUZZ_SECONDS / max(TALLY.targets, 1)
            while True:
                batch = _batch(strategy, check, name)
                batch()
                if not FUZZ_SECONDS or time.monotonic() - started >= share:
                    break
            TALLY.seconds[name] = time.monotonic() - started
        test.__name__ = check.__name__
        test.__doc__ = check.__doc__
        test.fuzz_target = True
        return test
    return wrap


def _batch(strategy, check, name):
    """One hypothesis run of ``check``: CI_EXAMPLES derandomized examples, or under
    make fuzz 200 examples from a fresh seed."""
    fuzzing = bool(FUZZ_SECONDS)

    @settings(max_examples=200 if fuzzing else CI_EXAMPLES, derandomize=not fuzzing, database=None, deadline=None,
              suppress_health_check=list(HealthCheck), print_blob=True)
    @given(strategy)
    def batch(case):
        TALLY.cases[name] = TALLY.cases.get(name, 0) + 1
        check(case)
    return batch


# ---------------------------------------------------------------------------------------
# Strategies every target shares: valid examples, mutated; hostile text
# ---------------------------------------------------------------------------------------
# characters parsers trip on: separators, C's other whitespace, NUL, Unicode digits and
# spaces (Python's \d, int() and str.split() take them; C does not), a bidi override, an
# undecodable byte of a file name (surrogate escape), quotes and backslashes
HOSTILE = ("0123456789abcdefxXR@#:/.,;=-+*()[]{}<>'\"\\ \t\r\n\v\f\x00\x1b\x85\xa0\u2028\u202e"
           "\u0661\uff11\u0663\udcff\u00e9")


def hostile_text(max_size: int = 40):
    from hypothesis import strategies as st
    return st.text(alphabet=HOSTILE, max_size=max_size)


def mutated(examples: list[str], max_edits: int = 4):
    """One of ``examples`` with up to ``max_edits`` edits (insert hostile text, delete a
    span, repeat a span), or hostile text outright: near-valid inputs reach past the
    first check of a parser, where most of its code is."""
    from hypothesis import strategies as st

    @st.composite
    def edit(draw):
        text = draw(st.sampled_from(examples))
        for _ in range(draw(st.integers(0, max_edits))):
            at = draw(st.integers(0, len(text)))
            end = draw(st.integers(at, min(len(text), at + 8)))
            kind = draw(st.sampled_from(("insert", "delete", "repeat", "replace")))
            piece = draw(hostile_text(6)) if kind in ("insert", "replace") else text[at:end]
            text = (text[:at] + piece + text[at:] if kind in ("insert", "repeat")
                    else text[:at] + text[end:] if kind == "delete" else text[:at] + piece + text[end:])
        return text
    return st.one_of(edit(), hostile_text())


def mutated_bytes(examples: list[bytes], max_edits: int = 6):
    """A binary input (a capture, a gzip stream) with up to ``max_edits`` byte edits:
    overwrite, flip, cut the tail, insert, duplicate a span."""
    from hypothesis import strategies as st

    @st.composite
    def edit(draw):
        data = bytearray(draw(st.sampled_from(examples)))
        for _ in range(draw(st.integers(1, max_edits))):
            at = draw(st.integers(0, len(data)))
            kind = draw(st.sampled_from(("overwrite", "flip", "cut", "insert", "repeat")))
            if kind == "overwrite" and at < len(data):
                data[at:at + 4] = draw(st.sampled_from((b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
                                                        b"\xff\xff\x00\x00", b"\x7f\xff\xff\xff")))
            elif kind == "flip" and at < len(data):
                data[at] ^= 1 << draw(st.integers(0, 7))
            elif kind == "cut":
                del data[at:]
            elif kind == "insert":
                data[at:at] = draw(st.binary(max_size=8))
            else:
                data[at:at] = data[at:at + draw(st.integers(1, 64))]
        return bytes(data)
    return edit()
