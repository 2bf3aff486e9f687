"""The compiled twins, and when they are used.

The loops that numpy and Python do slowly — the walk over variable-size pcap records,
l3fwd's multi and simple paths, the ACL walk, the TX model's runs, grouping a super-burst
by TX port — have compiled twins in one C extension, ``l3fwd_sim._compiled``, built by
the build backend at install (``setup.py``) from the ``.c`` files that live beside the
modules they twin (``capture/records.c`` beside ``capture/kernels.py``, ``l3fwd/multi.c``
beside ``l3fwd/multi.py``, ...). The numpy (or Python) code stays the definition; the
tests prove each twin byte-identical to it.

Loading the extension costs about 0.3 ms (numba, the earlier mechanism, cost 0.5–1.4 s
to import; docs/performance.md), so the choice is made up front, from the sizes of a
run's inputs: a run reading less than :data:`MIN_INPUT_BYTES` keeps the numpy stages and
never loads the extension. That is not for speed (the twins are faster at any size):
small runs — the demo, the docs' examples — run the readable definition.

``L3FWD_SIM_KERNELS`` overrides the choice: ``numpy`` always runs the numpy stages,
``compiled`` always the twins (an error if the extension was not built). Without a C
compiler at install there is no extension and everything runs in numpy.
"""
from __future__ import annotations

import importlib
import os
from contextlib import contextmanager
from types import ModuleType

from .errors import SimError

MIN_INPUT_BYTES = 1 << 20        # below this a run keeps the numpy stages (measured break-even: performance.md)
CHOICES = ("auto", "numpy", "compiled")
_module: ModuleType | None = None
_loaded = False
_enabled = True                  # the current run's choice (auto: from its input sizes)


def _choice() -> str:
    choice = os.environ.get("L3FWD_SIM_KERNELS", "auto") or "auto"
    if choice not in CHOICES:
        raise SimError(f"L3FWD_SIM_KERNELS={choice!r}: choose {', '.join(CHOICES)}")
    return choice


def extension() -> ModuleType | None:
    """The extension module, loaded on first use; None when it was not built."""
    global _module, _loaded
    if not _loaded:
        _loaded = True
        try:
            _module = importlib.import_module("l3fwd_sim._compiled")
        except ImportError:
            _module = None
    return _module


def native() -> ModuleType | None:
    """The compiled twins if this run uses them, else None (run the numpy stages)."""
    choice = _choice()
    if choice == "numpy" or not _enabled:
        return None
    module = extension()
    if module is None and choice == "compiled":
        raise SimError("L3FWD_SIM_KERNELS=compiled, but the compiled twins were not built "
                       "(no C compiler at install?); reinstall with one, or unset it")
    return module


@contextmanager
def for_inputs(input_bytes: int):
    """Around a run: decide from its inputs' total size (``stat``) whether it uses the
    compiled twins — never later, after reading."""
    global _enabled
    before = _enabled
    _enabled = _choice() == "compiled" or input_bytes >= MIN_INPUT_BYTES
    try:
        yield
    finally:
        _enabled = before


@contextmanager
def using(choice: str):
    """Tests and benchmarks: run with ``choice`` (``numpy`` or ``compiled``) whatever the
    environment says."""
    if choice not in CHOICES:
        raise ValueError(choice)
    before = os.environ.get("L3FWD_SIM_KERNELS")
    os.environ["L3FWD_SIM_KERNELS"] = choice
    try:
        yield
    finally:
        if before is None:
            del os.environ["L3FWD_SIM_KERNELS"]
        else:
            os.environ["L3FWD_SIM_KERNELS"] = before
