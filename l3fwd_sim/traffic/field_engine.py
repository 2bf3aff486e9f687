"""Per-packet values of a generated stream: field variables and frame sizes.

Modelled on TRex's field engine (``STLVmFlowVar``, trex-core
``scripts/automation/trex_control_plane/interactive/trex/stl/trex_stl_packet_builder_scapy.py``)
and Pktgen's range mode (start/min/max/inc per field):

* ``inc``: the first packet carries ``init`` (default ``min``); each next packet adds ``step``;
  a value that would pass ``max`` wraps to ``min`` (TRex's documented example: min 0, max 10,
  step 3 gives 0, 3, 6, 9, 0, 3, ...). The wrap goes to ``min`` exactly, it is not modular.
* ``dec``: the first packet carries ``init`` (default ``max``); each next packet subtracts
  ``step``; a value that would fall below ``min`` wraps to ``max``.
* ``random``: uniform over ``min, min+step, ..., <= max`` from a seeded generator
  (TRex's ``random`` ignores ``step``; here step 1 gives exactly that).

Values are returned as uint64 *offsets from* ``min`` so that 128-bit fields (IPv6
addresses) work with numpy: a range may be as wide as 2**63 values.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import SimError
from ..numbers import brief, check_range, parse_int

OPS = ("inc", "dec", "random")
MAX_SPAN = (1 << 63) - 1

# Simple IMIX (TRex ``stl/imix.py``: 64/570/1518 bytes on the wire at packet ratio 7:4:1),
# as one 12-packet cycle in which the sizes are spread out evenly (smooth weighted
# round-robin over the weights 7, 4, 1) rather than sent in blocks.
IMIX_WIRE_SIZES = (64, 570, 1518)
IMIX_WEIGHTS = (7, 4, 1)
IMIX_CYCLE = (64, 570, 64, 64, 570, 64, 1518, 64, 570, 64, 570, 64)

FCS_BYTES = 4           # sizes are given on the wire; a pcap frame excludes the FCS
MIN_WIRE_SIZE = 64      # Ethernet minimum
MAX_WIRE_SIZE = 9600    # a jumbo frame
_NUMBER = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class FieldVar:
    """One TRex-style flow variable: ``op`` over ``min..max`` by ``step``, first value ``init``."""
    op: str
    min: int
    max: int
    step: int = 1
    init: int | None = None

    def check(self, where: str) -> None:
        """Raise SimError (prefixed by ``where``) unless the variable is well formed."""
        if self.op not in OPS:
            raise SimError(f"{where}: op {self.op!r} is not one of {', '.join(OPS)}")
        if self.min > self.max:
            raise SimError(f"{where}: min {self.min} is greater than max {self.max}")
        if self.max - self.min > MAX_SPAN:
            raise SimError(f"{where}: range max - min = {self.max - self.min} is wider than 2**63 - 1")
        if self.step < 1:
            raise SimError(f"{where}: step {self.step} must be >= 1")
        if self.init is not None and not self.min <= self.init <= self.max:
            raise SimError(f"{where}: init {self.init} is outside min..max ({self.min}..{self.max})")

    def offsets(self, n: int, rng: np.random.Generator | None = None, start: int = 0) -> np.ndarray:
        """Values of packets start..start+n-1 as uint64 offsets from ``min``. ``random``
        draws the next n values from ``rng``: pieces taken in turn give the same values
        as one call (uint64 draws take one generator output each)."""
        span = self.max - self.min
        cycle = span // self.step + 1            # grid points min, min+step, ... <= max
        j = np.arange(start, start + n, dtype=np.uint64)
        if self.op == "random":
            if rng is None:
                raise ValueError("a random field variable needs a generator")
            return rng.integers(0, cycle, size=n, dtype=np.uint64) * np.uint64(self.step)
        step = np.uint64(self.step)
        if self.op == "inc":
            first = (self.init if self.init is not None else self.min) - self.min
            before_wrap = (span - first) // self.step + 1   # packets until the first wrap
            lead = np.uint64(first) + np.minimum(j, np.uint64(before_wrap - 1)) * step
            after = ((j - np.uint64(before_wrap)) % np.uint64(cycle)) * step
        else:
            first = (self.init if self.init is not None else self.max) - self.min
            before_wrap = first // self.step + 1
            lead = np.uint64(first) - np.minimum(j, np.uint64(before_wrap - 1)) * step
            after = np.uint64(span) - ((j - np.uint64(before_wrap)) % np.uint64(cycle)) * step
        # ``after`` is garbage (uint64 wrap) for j < before_wrap; where() discards it
        with np.errstate(over="ignore"):
            return np.where(j < np.uint64(before_wrap), lead, after)

    def values(self, n: int, rng: np.random.Generator | None = None, start: int = 0) -> np.ndarray:
        """Values as uint64 (only for ranges that end below 2**64)."""
        return self.offsets(n, rng, start) + np.uint64(self.min)


@dataclass(frozen=True)
class SizeSpec:
    """Frame sizes on the wire (FCS included): fixed, ``imix``, or a field variable over sizes
    (``64-1518`` is ``FieldVar("random", 64, 1518)``)."""
    fixed: int | None = None
    imix: bool = False
    var: FieldVar | None = None

    @property
    def constant(self) -> bool:
        return self.fixed is not None

    @property
    def max_wire(self) -> int:
        return self.fixed if self.fixed is not None else max(IMIX_CYCLE) if self.imix else self.var.max

    def wire_sizes(self, n: int, rng: np.random.Generator | None, start: int = 0) -> np.ndarray:
        """On-wire sizes of packets start..start+n-1 (int64); random sizes are the next n
        drawn from ``rng``."""
        if self.fixed is not None:
            return np.full(n, self.fixed, np.int64)
        if self.imix:
            return np.array(IMIX_CYCLE, np.int64)[np.arange(start, start + n) % len(IMIX_CYCLE)]
        return self.var.values(n, rng, start).astype(np.int64)


def _check_wire(size: int, what: str) -> int:
    return check_range(size, f"{what}: size", MIN_WIRE_SIZE, MAX_WIRE_SIZE)


def _wire(text: str, what: str) -> int:
    return parse_int(text, f"{what}: size", MIN_WIRE_SIZE, MAX_WIRE_SIZE)


def parse_size(value, what: str) -> SizeSpec:
    """``64`` | ``"64"`` | ``"64-1518"`` (uniform random) | ``"imix"`` -> SizeSpec."""
    if isinstance(value, int) and not isinstance(value, bool):
        return SizeSpec(fixed=_check_wire(value, what))
    if isinstance(value, str):
        text = value.strip().lower()
        if text == "imix":
            return SizeSpec(imix=True)
        low, dash, high = text.partition("-")
        if _NUMBER.fullmatch(low) and (not dash or _NUMBER.fullmatch(high)):
            if not dash:
                return SizeSpec(fixed=_wire(low, what))
            low_size, high_size = _wire(low, what), _wire(high, what)
            if low_size > high_size:
                raise SimError(f"{what}: size range {brief(value)} runs backwards")
            return SizeSpec(var=FieldVar("random", low_size, high_size))
    shown = brief(value) if isinstance(value, str) else repr(value)
    raise SimError(f"{what}: size must be a number, 'A-B' or 'imix' (got {shown})")


def size_var(var: FieldVar, what: str) -> SizeSpec:
    """A size given as a field variable (``size = {op = "inc", min = 64, max = 1518}``)."""
    var.check(what)
    _check_wire(var.min, what)
    _check_wire(var.max, what)
    return SizeSpec(var=var)
