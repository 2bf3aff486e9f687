"""The ``l3fwd-sim`` command's first lines. Loading the command line (numpy, click, the
command's modules) takes about a tenth of a second; Ctrl-C in it ends the command as
Ctrl-C later does — one line, exit status 130 — not with the interpreter's traceback of
an interrupted import (``cli`` takes over the signals once it runs)."""
from __future__ import annotations

import os
import sys

INTERRUPTED = "l3fwd-sim: interrupted; no partial output was left\n"


def entry() -> None:
    try:
        from .cli import entry as command
    except KeyboardInterrupt:
        sys.stderr.write(INTERRUPTED)
        sys.stderr.flush()
        os._exit(130)
    command()
