"""l3fwd_sim.dataplane.heap: glibc is asked to keep super-bursts' arrays on its heap."""
from __future__ import annotations

import platform
import subprocess
import sys

import pytest


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_big_arrays_come_from_the_heap_after_a_run_starts():
    """In a fresh process, a 5 MB array is a mapping of its own before and lies in the
    heap after ``keep_batches_on_heap`` (/proc/self/maps names the heap)."""
    probe = """
import numpy as np
from l3fwd_sim.dataplane.heap import keep_batches_on_heap

def in_heap():
    a = np.ones(5 << 20, np.uint8)
    address = a.__array_interface__["data"][0]
    for line in open("/proc/self/maps"):
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if lo <= address < hi:
            return line.rstrip().endswith("[heap]")

print(in_heap(), keep_batches_on_heap(), in_heap(), keep_batches_on_heap())
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "True", "True"]
