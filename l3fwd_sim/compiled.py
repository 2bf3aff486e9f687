"""The compiled twins, when they are used, and the one way they are called.

The loops that numpy and Python do slowly — the walk over variable-size pcap records,
l3fwd's multi and simple paths, the ACL walk, the TX model's runs, grouping a super-burst
by TX port — have compiled twins: plain C beside the modules they twin
(``capture/records.c`` beside ``capture/kernels.py``, ``l3fwd/multi.c`` beside
``l3fwd/multi.py``, ...), declared in each package's ``twins.h`` and built at install into
one extension, ``l3fwd_sim._compiled``, by cffi (``setup.py``: the one build
description). Each package's ``twins.py`` is their Python face: it checks what it hands
the C — through :func:`take`, from a table of :class:`Array` rows — and calls it. The
numpy (or Python) code stays the definition; the tests prove each twin byte-identical
to it.

Loading the extension costs about a millisecond (docs/performance.md), so the choice is
made up front, from the sizes of a run's inputs: a run reading less than
:data:`MIN_INPUT_BYTES` keeps the numpy stages and never loads the extension. That is
not for speed (the twins are faster at any size): small runs — the demo, the docs'
examples — run the readable definition.

``L3FWD_SIM_KERNELS`` overrides the choice: ``numpy`` always runs the numpy stages,
``compiled`` always the twins (an error if the extension was not built). Without a C
compiler at install there is no extension and everything runs in numpy.
"""
from __future__ import annotations

import importlib
import os
from contextlib import contextmanager
from types import ModuleType
from typing import NamedTuple

import numpy as np

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


def enabled() -> bool:
    """Whether this run uses the compiled twins (else the numpy stages run)."""
    choice = _choice()
    if choice == "numpy" or not _enabled:
        return False
    if extension() is None:
        if choice == "compiled":
            raise SimError("L3FWD_SIM_KERNELS=compiled, but the compiled twins were not built "
                           "(no C compiler at install?); reinstall with one, or unset it")
        return False
    return True


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


# ------------------------------------------------------------ the twins' arguments

class Array(NamedTuple):
    """One array argument of a twin, as a row of its face's table: its name (in
    messages), its C item type, whether the twin writes it, the least length it must
    have — a number, or the name of an earlier argument whose length it must reach —
    and whether it is a matrix of bytes (2-d, each row contiguous: a strided view of a
    buffer will do) rather than a vector (1-d, contiguous)."""
    name: str
    ctype: str
    writable: bool = False
    at_least: int | str = 0
    matrix: bool = False


class View(NamedTuple):
    """An argument as :func:`take` hands it on: the C pointer, the array (numpy), its
    length (a matrix: rows), and a matrix's columns and row stride."""
    ptr: object
    array: np.ndarray
    len: int
    cols: int = 0
    stride: int = 0


ITEM_BYTES = {"uint8_t": 1, "int8_t": 1, "uint16_t": 2, "int16_t": 2, "uint32_t": 4, "int32_t": 4, "uint64_t": 8,
              "int64_t": 8}
_array_types: dict = {}


def take(table: tuple[Array, ...], *objs) -> list[View]:
    """``objs`` (numpy arrays or buffers) as ``table`` says, one row each: checked for
    item size, dimensions, contiguity, writability and length — a one-line TypeError or
    ValueError naming the argument otherwise — and turned into C pointers. The pointers
    hold their buffers while the views live."""
    ffi = extension().ffi
    views: list[View] = []
    lengths: dict[str, int] = {}
    for spec, obj in zip(table, objs, strict=True):
        a = obj if isinstance(obj, np.ndarray) else np.frombuffer(obj, np.uint8)
        size = ITEM_BYTES[spec.ctype]
        ndim = 2 if spec.matrix else 1
        if a.itemsize != size or a.ndim != ndim:
            raise TypeError(f"{spec.name}: expected {ndim}-d items of {size} bytes, got {a.ndim}-d items of "
                            f"{a.itemsize}")
        if a.shape[-1] > 1 and a.strides[-1] != size and a.size:     # (numpy strides an empty array 0)
            raise TypeError(f"{spec.name}: its last axis is not contiguous")
        if spec.writable and not a.flags.writeable:
            raise TypeError(f"{spec.name}: a read-only array, but the twin writes it")
        n = a.shape[0]
        want = lengths[spec.at_least] if isinstance(spec.at_least, str) else spec.at_least
        if n < want:
            raise ValueError(f"{spec.name}: {n} items, at least {want} needed")
        lengths[spec.name] = n
        if a.flags.c_contiguous:
            if (array_type := _array_types.get(spec.ctype)) is None:
                array_type = _array_types[spec.ctype] = ffi.typeof(spec.ctype + "[]")
            ptr = ffi.from_buffer(array_type, a)
        else:                   # rows apart in a larger buffer: the view holds the array
            ptr = ffi.cast(spec.ctype + " *", a.ctypes.data)
        views.append(View(ptr, a, n, a.shape[1], a.strides[0]) if spec.matrix else View(ptr, a, n))
    return views


def need(ok: bool, message: str) -> None:
    """A twin's precondition: a one-line ValueError when it does not hold."""
    if not ok:
        raise ValueError(message)


def pointers(ctype: str, views) -> object:
    """A C array of the views' pointers (per source: its buffer, its offsets ...)."""
    return extension().ffi.new(ctype + " *[]", [v.ptr for v in views])
