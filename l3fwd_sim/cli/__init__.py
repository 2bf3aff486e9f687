"""``l3fwd-sim`` command line: parse options, call the library, print.

Each command lives in a module of its own (``cli/run.py``, ``cli/testpmd.py``, ...),
imported only when it is the command given: ``l3fwd-sim run`` loads the forwarding
code and nothing of ``generate``, ``compare``, ``--cluster`` or ``--trace``, so that it
starts fast."""
from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from importlib import import_module

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")     # numpy's BLAS is never used: no idle thread pool

import numpy  # noqa: F401  (every command uses it; imported first, it brings what click needs too: 39 -> 16 ms)
import click

from .. import hold
from ..errors import SimError
from ..numbers import brief
from ..text import printable

COMMANDS = {"run": "run", "testpmd": "testpmd", "generate": "generate", "compare": "compare", "lookup": "lookup",
            "rules": "rules", "report": "report",
            "bench": "bench", "dpdk-l3fwd": "dpdk_l3fwd", "dpdk-l3fwd-graph": "dpdk_l3fwd_graph",
            "dpdk-testpmd": "dpdk_testpmd",
            "verify": "verify"}   # command -> its module


def tell(message: str) -> None:
    """One line on stderr, ``l3fwd-sim: <message>``: every error, warning and note. The
    message often holds an input's name or value; :func:`printable` escapes whatever
    could break the line (a newline in a path, an escape sequence in a rule file)."""
    click.echo(f"l3fwd-sim: {printable(message)}", err=True)


class _Interrupted(Exception):
    """Ctrl-C during a command, kept away from click (which prints an empty line first)."""


class _Terminated(BaseException):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C, so every output and temporary file is
    cleaned up on the way out (a BaseException: no ``except Exception`` stops it)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_stopping: list[int] = []          # the stop signal being handled, once one arrived


def _on_signal(signum, frame):
    """Stop the command by unwinding, once: later signals (the watcher's resends, a
    second Ctrl-C) must not interrupt the clean-up."""
    if _stopping:
        return
    _stopping.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise _Terminated(signum)


@contextmanager
def _stop_signals():
    """Ctrl-C, SIGTERM and SIGHUP go to :func:`_on_signal` while the command runs (the
    previous handlers are put back after it). Python runs a handler only between
    bytecodes, so a signal arriving just before a blocking read (a FIFO with no data
    yet) would wait for the next byte. Python's C-level handler also writes the signal
    number to a wakeup pipe; a watcher thread (the signals blocked in it, so that they go
    to the main thread) reads it and sends the signal to the main thread again every
    50 ms until the handler has run: each resend interrupts the read (EINTR)."""
    _stopping.clear()
    previous = {signum: signal.signal(signum, _on_signal) for signum in _STOP_SIGNALS}
    hold.arm()                          # a test's known point to signal the command at (hold.py)
    old_wakeup = signal.set_wakeup_fd(_watcher(), warn_on_full_buffer=False)
    try:
        yield
    finally:
        signal.set_wakeup_fd(old_wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@functools.cache
def _watcher() -> int:
    """Start the watcher thread (once per process); the write end of its pipe."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    os.register_at_fork(after_in_child=lambda: signal.set_wakeup_fd(-1))   # a --jobs worker's are its own
    main = threading.get_ident()

    def watch():
        while True:
            signum = os.read(read_end, 1)[0]
            while signum in _STOP_SIGNALS and not _stopping:
                signal.pthread_kill(main, signum)
                time.sleep(0.05)

    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)        # inherited by the watcher only
    threading.Thread(target=watch, name="stop-signals", daemon=True).start()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    return write_end


class _Group(click.Group):
    """Bad usage and library errors end in one line on stderr and exit status 2. A
    command's module is imported when the command is looked up (click's lazy group)."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        # a command line pasted with its program's path (the sample guide's ./build/examples/dpdk-l3fwd ...)
        program = name.rsplit("/", 1)[-1]
        if name not in COMMANDS and program.startswith("dpdk-") and program in COMMANDS:
            name = program
        if name not in COMMANDS:
            return None
        return import_module(f".{COMMANDS[name]}", __name__).command

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted() from None

    def main(self, args=None, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            _refuse_nul(sys.argv[1:] if args is None else args)
            with _stop_signals():
                return super().main(args, **kwargs)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.ClickException as err:
            tell(err.format_message())
            sys.exit(2)
        except SimError as err:
            tell(str(err))
            sys.exit(2)
        except (KeyboardInterrupt, click.exceptions.Abort, _Interrupted):
            tell("interrupted; no partial output was left")
            sys.exit(130)
        except _Terminated as err:
            tell(f"stopped by {signal.Signals(err.signum).name}; no partial output was left")
            sys.exit(128 + err.signum)
        except OSError as err:
            tell(f"{err.filename or ''}: {err.strerror}")
            sys.exit(2)


def _refuse_nul(words) -> None:
    """No argument of a command line holds a NUL (``execve`` cannot pass one); a caller
    in-process could, and a file name holding one reaches the system calls as a ValueError."""
    for word in words:
        if "\x00" in str(word):
            raise SimError(f"{brief(str(word), 60)}: an argument cannot hold a NUL character")


@click.group(cls=_Group)
@click.version_option(package_name="l3fwd-sim")
def main():
    """Simulate DPDK's dpdk-l3fwd, dpdk-l3fwd-graph and dpdk-testpmd on pcap files, byte
    for byte."""


def entry() -> None:
    """The ``l3fwd-sim`` command: :func:`main`, then straight out of the process. Every
    output is committed and closed by then; the interpreter's own teardown (freeing
    every object, the route tables' memory) would add ~30 ms to every command
    (docs/performance.md#start-up). Tests call :func:`main` in-process instead."""
    status = 0
    try:
        main()
    except SystemExit as done:
        if isinstance(done.code, int) or done.code is None:
            status = done.code or 0
        else:
            print(done.code, file=sys.stderr)
            status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):         # a closed pipe (| head): nothing more to say
            pass
    os._exit(status)
