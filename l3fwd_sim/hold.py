"""A known point where a command can be held, for the tests of Ctrl-C, SIGTERM and SIGHUP.

With ``L3FWD_SIM_HOLD=PATH`` in the environment of an ``l3fwd-sim`` command, the first
time its process reaches :func:`point` — it has written records into its staged outputs:
a super-burst forwarded (``run``, ``testpmd``, ``bench``'s runs; with ``--jobs``, after
its workers started), a chunk generated, a ``--cluster`` chunk done — it creates
``PATH`` and waits there until a signal stops it. A test waits for ``PATH``, then
signals: the command is at that state on a machine of any speed, never done already.
Only the command's own process holds: :func:`arm` takes the variable out of the
environment (so ``--cluster`` workers never see it) and notes the process and its
main thread (so ``--jobs`` forks and worker threads pass by). Without the variable :func:`point` is one comparison.
"""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

ENV = "L3FWD_SIM_HOLD"
_armed: dict[str, object] = {}         # "path", "pid": where to say it is held, and who holds


def arm() -> None:
    """Take ``L3FWD_SIM_HOLD`` for this process (the command line's; called once it
    handles the stop signals)."""
    _armed.clear()
    path = os.environ.pop(ENV, None)
    if path:
        _armed.update(path=Path(path), pid=os.getpid())


def point() -> None:
    """Hold here, the first time, if armed: ``PATH`` is created, then the process waits
    for a signal (whose handler unwinds the command from here)."""
    if not _armed or _armed["pid"] != os.getpid() or threading.current_thread() is not threading.main_thread():
        return
    path = _armed.pop("path")
    _armed.clear()
    path.write_text(f"{os.getpid()}\n")
    while True:
        signal.pause()
