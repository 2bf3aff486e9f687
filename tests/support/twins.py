"""Running code once with the compiled twins and once with the numpy stages they twin
(:mod:`l3fwd_sim.compiled`), to compare the two."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from l3fwd_sim import compiled

KERNELS = ("compiled", "numpy")

# Where a C compiler is, the install builds the twins; a test of them must not be skipped
# then (a broken build would otherwise pass unnoticed).
needs_twins = pytest.mark.skipif(compiled.extension() is None and not any(map(shutil.which, ("cc", "gcc", "clang"))),
                                 reason="no C compiler at install: no compiled twins")


def both(function, *args):
    """``function(*args)`` with the compiled twins, then with the numpy stages (fresh
    copies of the array arguments each time): [(result, args), (result, args)]."""
    results = []
    for choice in KERNELS:
        with compiled.using(choice):
            copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            results.append((function(*copies), copies))
    return results
