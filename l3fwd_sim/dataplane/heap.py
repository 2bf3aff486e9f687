"""Where the super-bursts' big temporaries live: glibc's heap, not fresh mappings.

glibc's malloc serves a request above ``M_MMAP_THRESHOLD`` (128 KiB at first, raised
to the size of a freed mapping as it goes) with a mapping of its own, unmapped again
when freed. Every super-burst allocates arrays of a few MB; served as mappings, each is
mapped, faulted in and unmapped per super-burst, and the kernel's copies around them
(``write()`` of the outputs) slow down: measured on the project VM, 4M 64-byte packets,
lpm, multi: write stage 216-228 ms with mappings, 146-168 ms from the heap. A run used
to get the heap by accident (opening and closing every input once freed 8 MB buffers,
which raised the threshold); it is asked for here. Not glibc (or no ctypes): nothing is
done, and only speed differs.
"""
from __future__ import annotations

import ctypes
import functools

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3     # mallopt's parameter numbers (malloc.h)
THRESHOLD = 64 << 20             # above a super-burst's largest array (65536 × 80-byte rows = 5 MB)


@functools.cache
def keep_batches_on_heap() -> bool:
    """Raise glibc's mmap threshold once per process, and its trim threshold with it (as
    glibc's own adjustment does: freed memory stays for the next super-burst); whether
    it was done."""
    try:
        libc = ctypes.CDLL(None)          # the process's own symbols (libc's among them): no ldconfig to ask
        return bool(libc.mallopt(M_MMAP_THRESHOLD, THRESHOLD)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 2 * THRESHOLD))
    except (OSError, AttributeError):
        return False
