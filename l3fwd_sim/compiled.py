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


def binding() -> tuple:
    """The extension's (ffi, lib): what each package's ``twins.py`` calls its C through."""
    module = extension()
    return module.ffi, module.lib


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
    and whether it is a matrix (2-d, each row contiguous, rows a ``stride`` apart: a
    strided view of a buffer will do) rather than a vector (1-d, contiguous)."""
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
_ready: dict = {}                       # per row (by value) and per table (by id): as take() reads them
_new_view = tuple.__new__               # a View without NamedTuple's Python-level __new__ (take runs per call)


def _prepared(spec: Array) -> tuple:
    """``spec`` with what :func:`take` needs at hand: item size, dimensions, the C array
    and pointer types."""
    if (row := _ready.get(spec)) is None:
        ffi = extension().ffi
        row = _ready[spec] = (spec, ITEM_BYTES[spec.ctype], 2 if spec.matrix else 1, ffi.typeof(spec.ctype + "[]"),
                              ffi.typeof(spec.ctype + " *"))
    return row


def _table(table: tuple[Array, ...]) -> tuple:
    """``table``'s rows prepared, each with the row whose length it must reach (-1: none)."""
    known, rows = _ready.get(id(table), (None, None))
    if known is not table:
        names = [spec.name for spec in table]
        rows = tuple((*_prepared(spec), names.index(spec.at_least) if isinstance(spec.at_least, str) else -1)
                     for spec in table)
        _ready[id(table)] = table, rows         # the table held: its id is never another's
    return rows


def _view(row: tuple, obj, want: int) -> View:
    """One argument checked as its prepared ``row`` says, at least ``want`` long."""
    spec, size, ndim, array_type, pointer_type = row[:5]
    a = obj if type(obj) is np.ndarray else np.asarray(obj) if isinstance(obj, np.ndarray) \
        else np.frombuffer(obj, np.uint8)
    contiguous = a.flags.c_contiguous
    if a.itemsize != size or a.ndim != ndim or not contiguous and a.strides[-1] != size and a.shape[-1] > 1 \
            and a.size or spec.writable and not a.flags.writeable:
        raise TypeError(_refusal(spec, a, size, ndim))
    n = a.shape[0]
    if n < want:
        raise ValueError(f"{spec.name}: {n} items, at least {want} needed")
    ffi = extension().ffi
    ptr = ffi.from_buffer(array_type, a) if contiguous else ffi.cast(pointer_type, a.ctypes.data)
    return _new_view(View, (ptr, a, n, a.shape[1], a.strides[0]) if ndim == 2 else (ptr, a, n, 0, 0))


def take(table: tuple[Array, ...], *objs) -> list[View]:
    """``objs`` (numpy arrays or buffers) as ``table`` (a module constant) says, one row
    each: checked for item size, dimensions, contiguity, writability and length — a
    one-line TypeError or ValueError naming the argument otherwise — and turned into C
    pointers. The pointers hold their buffers while the views live."""
    views: list[View] = []
    for row, obj in zip(_table(table), objs, strict=True):
        views.append(_view(row, obj, views[row[5]].len if row[5] >= 0 else row[0].at_least))
    return views


def take_each(spec: Array, objs) -> list[View]:
    """:func:`take` of every one of ``objs`` as ``spec`` (its least length a number)."""
    row = _prepared(spec)
    return [_view(row, obj, spec.at_least) for obj in objs]


def _refusal(spec: Array, a: np.ndarray, size: int, ndim: int) -> str:
    if a.itemsize != size or a.ndim != ndim:
        return f"{spec.name}: expected {ndim}-d items of {size} bytes, got {a.ndim}-d items of {a.itemsize}"
    if spec.writable and not a.flags.writeable:
        return f"{spec.name}: a read-only array, but the twin writes it"
    return f"{spec.name}: its last axis is not contiguous"   # (rows apart in a larger buffer will do)


def need(ok: bool, message: str) -> None:
    """A twin's precondition: a one-line ValueError when it does not hold."""
    if not ok:
        raise ValueError(message)


def pointers(ctype: str, views) -> object:
    """A C array of the views' pointers (per source: its buffer, its offsets ...)."""
    return extension().ffi.new(ctype + " *[]", [v.ptr for v in views])
