"""Which stream sends the packet at each position of a port, a chunk of positions at a
time, so that ``generate`` holds one chunk in memory however many packets a port sends.

A stream's packets always go out in index order, so a packet's index within its stream
is the number of that stream's packets before it; the chunks give only the streams.

* ``sequence``: all packets of stream 0, then stream 1, ... (TRex ``next``);
* ``round-robin``: ``group`` packets of each stream in turn; a stream that has sent all
  its packets drops out;
* ``random``: a seeded pseudo-random permutation of all the packets. Position p carries
  packet ``perm(p)`` of the port's packets numbered stream by stream; ``perm`` is a Feistel
  network (a keyed bijection computed per position, so no shuffled array of the whole
  port is needed).
"""
from __future__ import annotations

from typing import Iterator

import numpy as np

from ..errors import SimError


def stream_chunks(counts: list[int], order: str, group: int, chunk: int,
                  rng: np.random.Generator | None = None) -> Iterator[np.ndarray]:
    """The stream (int32) of each position, in consecutive pieces of at most ``chunk``."""
    counts_arr = np.asarray(counts, np.int64)
    if order == "sequence" or len(counts) == 1:
        return _sequence(counts_arr, chunk)
    if order == "round-robin":
        return _round_robin(counts_arr, group, chunk)
    if order == "random":
        return _random(counts_arr, chunk, rng)
    raise SimError(f"unknown order {order!r}")


def _sequence(counts: np.ndarray, chunk: int) -> Iterator[np.ndarray]:
    ends = np.cumsum(counts)
    total = int(ends[-1]) if len(ends) else 0
    for a in range(0, total, chunk):
        positions = np.arange(a, min(total, a + chunk), dtype=np.int64)
        yield np.searchsorted(ends, positions, side="right").astype(np.int32)


def _round_robin(counts: np.ndarray, group: int, chunk: int) -> Iterator[np.ndarray]:
    """Rounds of up to ``group`` packets per stream. Rounds that fit a chunk are taken many
    at a time (sorted by round, then stream); a longer round is a sequence of its own."""
    streams = np.arange(len(counts), dtype=np.int32)
    last = -(-int(counts.max()) // group)           # rounds in all
    first = 0                                       # first round not yet sent
    while first < last:
        per_round = int(np.clip(counts - first * group, 0, group).sum())
        if per_round > chunk:
            yield from _sequence(np.clip(counts - first * group, 0, group), chunk)
            first += 1
            continue
        rounds = min(chunk // per_round, last - first)   # (first + rounds) * group stays within int64
        start = first * group
        taken = np.clip(np.minimum(counts, (first + rounds) * group) - start, 0, None)
        stream_of = np.repeat(streams, taken)
        index = start + np.arange(len(stream_of), dtype=np.int64) - np.repeat(np.cumsum(taken) - taken, taken)
        yield stream_of[np.argsort(index // group * len(counts) + stream_of, kind="stable")]
        first += rounds


def _random(counts: np.ndarray, chunk: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    ends = np.cumsum(counts)
    total = int(ends[-1])
    permute = _Feistel(total, rng)
    for a in range(0, total, chunk):
        packets = permute(np.arange(a, min(total, a + chunk), dtype=np.uint64)).astype(np.int64)
        yield _stream_of(ends, packets)


_SORT_ABOVE = 4096          # streams (variants) beyond which the packets are looked up in sorted order


def _stream_of(ends: np.ndarray, packets: np.ndarray) -> np.ndarray:
    """The stream (int32) of each packet number. Over many streams (``generate random``
    aims at every route of a table: up to millions) the binary searches of random
    numbers miss the cache at every step; in sorted order they walk the ends in turn."""
    if len(ends) <= _SORT_ABOVE:
        return np.searchsorted(ends, packets, side="right").astype(np.int32)
    order = np.argsort(packets)
    out = np.empty(len(packets), np.int32)
    out[order] = np.searchsorted(ends, packets[order], side="right")
    return out


class _Feistel:
    """A seeded bijection of 0..n-1: a 4-round Feistel network over the smallest even
    number of bits that holds n - 1; a value that lands at n or above is encrypted again
    until it falls below n (cycle walking keeps it a bijection; the domain is under 4n, so
    fewer than 4 steps on average)."""

    _ROUNDS = 4

    def __init__(self, n: int, rng: np.random.Generator):
        self.n = n
        bits = max(2, (n - 1).bit_length())
        self.half = np.uint64((bits + 1) // 2)
        self.mask = np.uint64((1 << int(self.half)) - 1)
        self.keys = rng.integers(0, 1 << 63, size=self._ROUNDS, dtype=np.uint64)

    def _round(self, right: np.ndarray, key: np.uint64) -> np.ndarray:
        # splitmix64's finaliser: every input bit reaches every output bit
        h = (right ^ key) * np.uint64(0x9E3779B97F4A7C15)
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return (h ^ (h >> np.uint64(31))) & self.mask

    def _encrypt(self, x: np.ndarray) -> np.ndarray:
        left, right = x >> self.half, x & self.mask
        for key in self.keys:
            left, right = right, left ^ self._round(right, key)
        return (left << self.half) | right

    def __call__(self, x: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):            # the round function multiplies modulo 2**64
            out = self._encrypt(x)
            outside = np.flatnonzero(out >= np.uint64(self.n))
            while len(outside):
                out[outside] = self._encrypt(out[outside])
                outside = outside[out[outside] >= np.uint64(self.n)]
        return out
