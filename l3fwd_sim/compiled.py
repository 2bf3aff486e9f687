"""Compiled twins of hot loops (numba), and when they are used.

A few loops are slow in numpy and Python and fast compiled: the walk over variable-size
pcap records (``capture.kernels``), the walk over ACL tables (``tables.acl``). The module
that defines such a loop keeps its numpy (or Python) twin, and the compiled version
lives beside it in a module of the same name ending in ``_jit``. Both give the same
result; the tests run both. This module decides which one runs.

It is a rent-or-buy choice. Importing numba and loading cached machine code costs about
0.33 s (2.8 s when it compiles; measured on the project VM). A twin reports the time it
loses against its compiled version (:func:`rent`: work done × measured extra cost per
unit); once the total would have paid for the import, the compiled modules are loaded.
A small run never pays the import, a large one loses at most that much more, and a run
that needs no such loop never imports numba. ``make`` fills numba's on-disk cache when
it installs, so no run compiles. ``L3FWD_SIM_KERNELS=numpy`` or :func:`use_numpy` keep
the twins; without numba they are all there is.
"""
from __future__ import annotations

import importlib
import os
import time
from types import ModuleType

IMPORT_COST = 0.33               # seconds: numba's import with a warm cache (measured)
_modules: dict[str, ModuleType | None] = {}   # owner module name -> its compiled twin (None: unavailable)
_lost = 0.0                      # seconds the twins have lost so far in this process
_use = True
import_seconds = 0.0             # what importing compiled modules took in this process


def load(owner: str) -> ModuleType | None:
    """The compiled twin of module ``owner`` (``owner + "_jit"``), imported now if it
    was not; None when numba is missing, cannot compile or cache here, or is disabled."""
    global import_seconds
    if owner not in _modules:
        _modules[owner] = None
        if os.environ.get("L3FWD_SIM_KERNELS", "numba") != "numpy":
            started = time.perf_counter()
            try:
                _modules[owner] = importlib.import_module(owner + "_jit")
            except Exception:       # no numba, or one that cannot compile or cache here: the twins
                pass
            import_seconds += time.perf_counter() - started
    return _modules[owner] if _use else None


def module(owner: str) -> ModuleType | None:
    """The compiled twin of ``owner`` if it is loaded or has now paid for its import."""
    if owner in _modules or _lost >= IMPORT_COST:
        return load(owner)
    return None


def loaded(owner: str) -> ModuleType | None:
    """The compiled twin of ``owner`` only if something already loaded it (for loops
    whose twins cost too little to ever pay for the import themselves)."""
    return _modules.get(owner) if _use else None


def rent(seconds: float) -> None:
    """A twin ran where compiled code would have saved ``seconds``."""
    global _lost
    _lost += seconds


def use_numpy(enabled: bool = True) -> None:
    """Use the twins everywhere (or the compiled versions again, where loaded)."""
    global _use
    _use = not enabled
