"""Pairing two packet sequences for ``compare``: which packet of A is which packet of B.

Each packet is reduced to a 64-bit token (a digest of its bytes, see ``compare.py``); two
packets are "the same" when their tokens are equal. ``align(a, b)`` returns the index
pairs of a longest common subsequence (LCS) of the two token sequences, the pairing
``diff``/``git diff`` use for lines: a packet inserted into or deleted from B costs one
extra or missing packet and every later packet still pairs with its counterpart, instead
of the whole rest of the capture shifting by one (as index-by-index pairing would).

How (in order, the first that applies):

1. common prefix and suffix: compared vectorised in numpy, so equal captures and a
   few scattered edits cost almost nothing;
2. Myers' O((N+M)·D) greedy LCS (E. W. Myers, "An O(ND) difference algorithm and its
   variations", 1986 -- the algorithm of GNU diff and git) on the rest, as long as at most
   ``max_edits`` packets have to be inserted or deleted; it is exact whatever the packets
   repeat (streams of identical frames, round-robin flows);
3. beyond that, Python's ``difflib.SequenceMatcher`` (Ratcliff/Obershelp: longest
   contiguous matching runs first, not always a longest subsequence), if its work --
   about the number of (A packet, equal B packet) pairs -- stays under ``DIFFLIB_WORK``;
4. otherwise (very many differences *and* heavily repeated packets) packets are paired
   by position, and the result says so (``Alignment.method``).

An LCS is rarely unique when packets repeat: in a stream of identical frames, one
modified frame plus one deleted elsewhere can come out as "one missing here, one missing
there, one extra" instead of "one modified, one missing". ``compare`` calls a packet
*modified* when an unpaired packet of A and one of B sit in the same gap between paired
packets, so after the LCS, ``_slide`` moves unpaired packets along runs of identical
packets (which keeps it an LCS) into gaps where the other side has unpaired packets --
what diff tools call compaction of sliders.
"""
from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass

import numpy as np

MAX_EDITS = 1000            # Myers' cost grows with edits²; beyond this, difflib
DIFFLIB_WORK = 50_000_000   # pairs of equal tokens difflib may have to visit
MAX_SLIDES = 1000           # each slide is one O(n) numpy pass


@dataclass
class Alignment:
    """``pairs_a[k]`` and ``pairs_b[k]`` are the same packet (ascending in both)."""
    pairs_a: np.ndarray
    pairs_b: np.ndarray
    method: str             # "lcs", "difflib" or "position"


def align(a: np.ndarray, b: np.ndarray, max_edits: int = MAX_EDITS) -> Alignment:
    """Pair equal tokens of ``a`` and ``b`` in order (see the module docstring)."""
    n, m = len(a), len(b)
    short = min(n, m)
    differs = np.flatnonzero(a[:short] != b[:short])
    head = int(differs[0]) if len(differs) else short
    tail_differs = np.flatnonzero(a[n - short + head:][::-1] != b[m - short + head:][::-1])
    tail = int(tail_differs[0]) if len(tail_differs) else short - head
    mid_a, mid_b = a[head:n - tail], b[head:m - tail]

    method = "lcs"
    if len(mid_a) and len(mid_b):
        found = _myers(mid_a, mid_b, max_edits) if _min_edits(mid_a, mid_b) <= max_edits else None
        if found is None:
            found, method = _difflib_or_position(mid_a, mid_b)
        mid_pa, mid_pb = found
    else:
        mid_pa = mid_pb = np.zeros(0, np.int64)
    pairs_a = np.concatenate([np.arange(head), mid_pa + head, np.arange(n - tail, n)]).astype(np.int64)
    pairs_b = np.concatenate([np.arange(head), mid_pb + head, np.arange(m - tail, m)]).astype(np.int64)
    if method == "lcs":
        pairs_a, pairs_b = _slide(a, b, pairs_a, pairs_b)        # A's unpaired towards B's
        pairs_b, pairs_a = _slide(b, a, pairs_b, pairs_a)        # and the other way round
    return Alignment(pairs_a, pairs_b, method)


def _slide(a: np.ndarray, b: np.ndarray, pa: np.ndarray, pb: np.ndarray, budget: int = MAX_SLIDES):
    """Move unpaired packets of A, along runs of identical packets of A, into gaps where
    B has more unpaired packets than A. Gap g lies between pair g-1 and pair g; an
    unpaired A[i] moves to gap g (at A position p) when A[p..i] (or A[i..p-1]) are all
    equal and no other unpaired packet of A lies between: the pairs in between shift by
    one, still pairing equal packets, so the pairing stays an LCS."""
    pa = pa.copy()
    left_a = _unpaired(len(a), pa)
    left_b = _unpaired(len(b), pb)
    if not len(left_a) or not len(left_b):
        return pa, pb
    gaps = len(pa) + 1
    count_a = np.bincount(np.searchsorted(pa, left_a), minlength=gaps)
    count_b = np.bincount(np.searchsorted(pb, left_b), minlength=gaps)
    if not ((count_b > count_a).any() and (count_a > count_b).any()):
        return pa, pb
    run = np.concatenate([[0], np.cumsum(a[1:] != a[:-1])]) if len(a) else np.zeros(0, np.int64)
    left = left_a.tolist()
    for g in np.flatnonzero(count_b > count_a).tolist():
        p = int(pa[g - 1]) + 1 if g else 0            # where gap g sits in A
        while count_b[g] > count_a[g] and budget > 0:
            k = bisect.bisect_left(left, p)
            moved = False
            for idx in (k, k - 1):                    # nearest unpaired A below / above p
                if not 0 <= idx < len(left):
                    continue
                i = left[idx]
                h = int(np.searchsorted(pa, i))
                if count_a[h] <= count_b[h]:
                    continue
                if i >= p and p < len(a) and run[i] == run[p]:
                    shift = (pa >= p) & (pa < i)
                    pa[shift] += 1
                    left[idx] = p
                elif i < p and run[i] == run[p - 1]:
                    shift = (pa > i) & (pa < p)
                    pa[shift] -= 1
                    left[idx] = p - 1
                else:
                    continue
                count_a[h] -= 1
                count_a[g] += 1
                budget -= 1
                moved = True
                break
            if not moved:
                break
    return pa, pb


def _unpaired(n: int, paired: np.ndarray) -> np.ndarray:
    keep = np.ones(n, bool)
    keep[paired] = False
    return np.flatnonzero(keep)


def _min_edits(a: np.ndarray, b: np.ndarray) -> int:
    """A lower bound of the insertions + deletions needed: packets of one side with no
    copy left on the other (multiset difference). Spares Myers hopeless cases."""
    values, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
    count_a = np.bincount(inverse[:len(a)], minlength=len(values))
    count_b = np.bincount(inverse[len(a):], minlength=len(values))
    return int(np.abs(count_a - count_b).sum())


def _myers(a: np.ndarray, b: np.ndarray, max_edits: int):
    """Index pairs of an LCS of ``a`` and ``b``, or None if more than ``max_edits``
    insertions + deletions are needed. Snakes (runs of equal tokens along a diagonal)
    are followed in Python for a few steps, then in growing numpy chunks."""
    n, m = len(a), len(b)
    la, lb = a.tolist(), b.tolist()

    def snake(x: int, y: int) -> int:
        for _ in range(8):
            if x >= n or y >= m or la[x] != lb[y]:
                return x
            x, y = x + 1, y + 1
        step = 64
        while x < n and y < m:
            k = min(step, n - x, m - y)
            neq = np.flatnonzero(a[x:x + k] != b[y:y + k])
            if len(neq):
                return x + int(neq[0])
            x, y, step = x + k, y + k, step * 4
        return x

    offset = max_edits + 1
    v = [0] * (2 * offset + 1)          # v[offset + k]: furthest x on diagonal k
    trace = []
    for d in range(min(max_edits, n + m) + 1):
        row = {}
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[offset + k - 1] < v[offset + k + 1]):
                x = v[offset + k + 1]                   # down: B[y-1] inserted
            else:
                x = v[offset + k - 1] + 1               # right: A[x-1] deleted
            x = snake(x, x - k)
            v[offset + k] = x
            row[k] = x
            if x >= n and x - k >= m:
                trace.append(row)
                return _backtrack(trace, n, m)
        trace.append(row)
    return None


def _backtrack(trace: list[dict], n: int, m: int):
    """Walk the Myers trace back from (n, m), collecting the diagonal (equal) steps."""
    pa, pb = [], []
    x, y = n, m
    for d in range(len(trace) - 1, -1, -1):
        k = x - y
        if d == 0:
            start_x = 0
        else:
            prev = trace[d - 1]
            down = k == -d or (k != d and prev.get(k - 1, -1) < prev.get(k + 1, -1))
            prev_k = k + 1 if down else k - 1
            prev_x = prev[prev_k]
            start_x = prev_x if down else prev_x + 1
        # the snake on diagonal k from start_x to x is all equal tokens
        pa.extend(range(x - 1, start_x - 1, -1))
        pb.extend(range(x - k - 1, start_x - k - 1, -1))
        if d:
            x, y = prev_x, prev_x - prev_k
    return np.array(pa[::-1], np.int64), np.array(pb[::-1], np.int64)


def _difflib_or_position(a: np.ndarray, b: np.ndarray):
    values, counts = np.unique(b, return_counts=True)
    where = np.clip(np.searchsorted(values, a), 0, len(values) - 1)
    work = int(np.where(values[where] == a, counts[where], 0).sum())
    if work <= DIFFLIB_WORK:
        matcher = difflib.SequenceMatcher(None, a.tolist(), b.tolist(), autojunk=False)
        pa, pb = [], []
        for i, j, size in matcher.get_matching_blocks():
            pa.extend(range(i, i + size))
            pb.extend(range(j, j + size))
        return (np.array(pa, np.int64), np.array(pb, np.int64)), "difflib"
    short = min(len(a), len(b))
    same = np.flatnonzero(a[:short] == b[:short])
    return (same, same.copy()), "position"
