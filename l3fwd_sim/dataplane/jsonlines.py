"""JSON lines from numpy columns, without a Python object per line.

A batch of lines is described piece by piece, left to right (:class:`Lines`): a
constant text, one of a few texts per line, a decimal number per line, or a block of
bytes per line. To render them, every piece is laid out as a column of fixed-width,
NUL-padded byte cells in one matrix, and one ``bytearray.translate`` drops the padding.
JSON text never holds a raw NUL (it would be escaped), so padding cannot be confused
with content. Formatting each line in Python costs 1.3 µs; this about 0.3 µs; its
compiled twin (``jsonlines.c``: each line written in turn, texts copied, numbers
formatted, a block's padding skipped) about 0.14 µs for a 210-byte trace line
(docs/performance.md#tracing).
"""
from __future__ import annotations

import functools
import json

import numpy as np

from .. import compiled
from . import twins

TEXT, CHOICE, NUMBER, BLOCK = range(4)         # jsonlines.c's piece kinds, in this order


@functools.cache
def _limb_tables() -> np.ndarray:
    """Four digits of a number per row, NUL where a digit is a leading zero. A limb is
    looked up at ``value + 10000 * started + 20000 * last``: ``started`` when a more
    significant limb is non-zero (then all four digits show), ``last`` for the least
    significant limb (where 0 is "0", not nothing)."""
    digits = np.array([list(f"{v:04d}".encode()) for v in range(10000)], np.uint8)
    leading = np.array([list(f"{v:>4}".encode()) for v in range(10000)], np.uint8)
    leading[leading == ord(" ")] = 0
    first = leading.copy()
    first[0] = 0                       # a leading limb of 0 is nothing; a last one is "0"
    return np.concatenate([first, digits, leading, digits])


_NULL = np.frombuffer(b"null", np.uint8)


def pool(texts: list[str]) -> np.ndarray:
    """Texts as the rows of a NUL-padded (len(texts), width) array; the width is a
    multiple of 4 (numpy copies such cells fastest)."""
    raw = [text.encode() for text in texts]
    table = np.zeros((len(raw), -(-max(1, *map(len, raw)) // 4) * 4), np.uint8)
    for row, text in enumerate(raw):
        table[row, :len(text)] = np.frombuffer(text, np.uint8)
    return table


def quoted(text: str | None) -> str:
    """``text`` as a JSON value (``null`` for None)."""
    return json.dumps(text)


def distinct(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-d array, compared by their bytes, in order of first
    occurrence: ``(first, inverse)``, ``first`` the index of each one's first occurrence
    (ascending), ``inverse`` each row's index in ``first`` (``rows[first][inverse]`` is
    ``rows``) — for writing each distinct case once. The rows are sorted as a few 8-byte
    words (``np.unique(axis=0)`` sorts them as records of one-byte fields: 18 s for 1M
    rows of 58 bytes); the compiled twin hashes them (``jsonlines.c``)."""
    raw = np.ascontiguousarray(rows).view(np.uint8)
    if compiled.enabled():
        first, inverse = np.empty((2, len(raw)), np.int64)
        return first[:twins.distinct_rows(raw, first, inverse)], inverse
    words = np.zeros((len(raw), -(-raw.shape[1] // 8)), np.uint64)
    words.view(np.uint8)[:, :raw.shape[1]] = raw
    order = np.lexsort(words.T)                    # stable: each distinct row's first occurrence leads its run
    ordered = words[order]
    starts = np.ones(len(raw), bool)
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    first = order[starts]
    by_occurrence = np.argsort(first)
    number = np.empty(len(first), np.int64)        # each run's place in order of first occurrence
    number[by_occurrence] = np.arange(len(first))
    inverse = np.empty(len(raw), np.int64)
    inverse[order] = number[np.cumsum(starts) - 1]
    return first[by_occurrence], inverse


class LineBuffer:
    """The matrix a batch of lines is laid out in, kept from one batch to the next:
    while the layout (the pieces' widths) and the number of lines stay the same, the
    constant texts are already in place and the memory is not faulted in again. The
    compiled renderer writes the lines into ``out`` instead, made anew when a batch may
    take more and kept likewise."""

    def __init__(self):
        self.layout: tuple | None = None
        self.data = bytearray()
        self.matrix = np.zeros((0, 0), np.uint8)
        self.out = np.zeros(0, np.uint8)

    def matrix_for(self, n: int, layout: tuple, width: int) -> tuple[np.ndarray, bool]:
        """An (n, width) matrix over ``data``; True when it is new (texts to write)."""
        if (n, layout) == (len(self.matrix), self.layout):
            return self.matrix, False
        self.layout, self.data = layout, bytearray(n * width)
        self.matrix = np.frombuffer(self.data, np.uint8).reshape(n, width)
        return self.matrix, True


class Lines:
    """The pieces of ``n`` lines, left to right; :meth:`render` joins them."""

    def __init__(self, n: int):
        self.n = n
        self.pieces: list[tuple[int, object]] = []

    def text(self, text: str) -> None:
        """The same text on every line."""
        raw = text.encode()
        if self.pieces and self.pieces[-1][0] == TEXT:              # joined to the text before
            raw = self.pieces.pop()[1] + raw
        self.pieces.append((TEXT, raw))

    def choice(self, texts: list[str], codes: np.ndarray) -> None:
        """``texts[codes[i]]`` on line i (JSON text, e.g. from :func:`quoted`)."""
        self.pieces.append((CHOICE, (texts, _integers(codes))))

    def number(self, values: np.ndarray) -> None:
        """Integers in decimal; ``null`` where a value is negative."""
        self.pieces.append((NUMBER, _integers(values)))

    def block(self, block: np.ndarray) -> None:
        """An (n, width) uint8 block per line, NUL-padded."""
        self.pieces.append((BLOCK, block))

    def render(self, buffer: LineBuffer | None = None, ends: np.ndarray | None = None) -> bytes | bytearray | memoryview:
        """The lines, each ended by a newline (laid out in ``buffer`` if given; what is
        returned may be a view of it, valid until its next render); ``ends`` (``n``
        int64s) gets where each line's newline is."""
        if not self.n:
            return b""
        self.text("\n")
        buffer = buffer or LineBuffer()
        if compiled.enabled():
            buffer.out, written = twins.render_lines(list(self._compiled_pieces()), self.n, buffer.out, ends)
            return memoryview(buffer.out)[:written]
        cells = [self._cells(kind, payload) for kind, payload in self.pieces]
        widths = [cell.shape[-1] for cell in cells]
        layout = tuple(payload if kind == TEXT else width for (kind, payload), width in zip(self.pieces, widths))
        total = sum(widths)
        matrix, new = buffer.matrix_for(self.n, layout, total)
        at = 0
        for (kind, _), cell, width in zip(self.pieces, cells, widths):
            if kind == TEXT and new:
                matrix[:, at:at + width] = cell
            elif kind != TEXT:
                # a column of width-byte items: numpy copies those several times faster than
                # a (n, width) slice of small rows (widths that are multiples of 4 fastest)
                column = np.ndarray((self.n,), f"V{width}", buffer.data, at, (total,))
                column[...] = np.ascontiguousarray(cell).view(f"V{width}").ravel()
            at += width
        if ends is not None:                      # a line is its row less the NUL padding
            np.cumsum(np.count_nonzero(matrix, axis=1), out=ends[:self.n])
            ends[:self.n] -= 1
        return buffer.data.translate(None, b"\0")

    def _compiled_pieces(self):
        """The pieces as ``jsonlines.c`` takes them: (kind, bytes, offsets, numbers), texts
        without NULs (as the numpy renderer leaves them)."""
        for kind, payload in self.pieces:
            if kind == TEXT:
                yield kind, payload.replace(b"\0", b""), None, None
            elif kind == CHOICE:
                texts = [text.encode().replace(b"\0", b"") for text in payload[0]]
                yield kind, b"".join(texts), np.cumsum([0, *map(len, texts)]), payload[1]
            elif kind == NUMBER:
                yield kind, None, None, payload
            else:
                yield kind, payload, None, None

    def _cells(self, kind: int, payload) -> np.ndarray:
        """A piece as NUL-padded cells: one row for a text, (n, width) otherwise."""
        if kind == TEXT:
            return np.frombuffer(payload, np.uint8)
        if kind == CHOICE:
            choices, codes = payload[0], payload[1].astype(np.intp)
            used = np.flatnonzero(np.bincount(codes, minlength=len(choices)))    # only as wide as needed
            remap = np.zeros(len(choices), np.intp)
            remap[used] = np.arange(len(used))
            return np.take(pool([choices[i] for i in used.tolist()]), remap[codes], axis=0)
        if kind == NUMBER:
            return _decimal(payload.astype(np.int64))
        return payload


def _integers(values) -> np.ndarray:
    """``values`` as an integer array: as it is if it is one (a record array's field: the
    compiled renderer reads any width and stride), else as int64."""
    values = np.asarray(values)
    return values if values.dtype.kind in "iu" else values.astype(np.int64)


def _decimal(values: np.ndarray) -> np.ndarray:
    """Integers as NUL-padded decimal text, four digits per limb; ``null`` for negatives."""
    null = values < 0
    values = np.where(null, 0, values)
    limbs = max(1, -(-len(str(int(values.max(initial=0)))) // 4))
    if limbs == 1:                                   # below 10000: one last limb
        index = values + 20000
    elif limbs == 2:                                 # below 10**8 (record numbers, bursts): one division
        high = values // 10000
        index = np.empty((len(values), 2), np.int64)
        index[:, 0] = high
        index[:, 1] = values - 10000 * high + np.where(high > 0, 30000, 20000)
    else:
        scale = 10000 ** np.arange(limbs - 1, -1, -1, dtype=np.int64)     # most significant limb first
        index = values[:, None] // scale % 10000
        started = np.zeros_like(index, dtype=bool)
        started[:, 1:] = np.maximum.accumulate(index[:, :-1], axis=1) > 0
        index += 10000 * started
        index[:, -1] += 20000
    cells = np.take(_limb_tables(), index, axis=0).reshape(len(values), 4 * limbs)
    if null.any():
        cells[null] = 0
        cells[null, :4] = _NULL
    return cells
