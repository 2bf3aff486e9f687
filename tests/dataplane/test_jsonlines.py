"""JSON lines built column-wise (dataplane/jsonlines.py) against the same lines built
one by one in Python, with the compiled renderer (jsonlines.c) and the numpy one; each
distinct row found once, in order, by both."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from twins import KERNELS, needs_twins

from l3fwd_sim import compiled
from l3fwd_sim.dataplane.jsonlines import LineBuffer, Lines, distinct, pool, quoted

TEXTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=12)
INTEGER_TYPES = ("i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8")


@st.composite
def integers(draw, n: int, low: int, high: int):
    """(values, array): ``n`` integers in low..high as an array of a random integer type
    they fit, contiguous or a field of a record array (strided)."""
    dtype = np.dtype(draw(st.sampled_from([t for t in INTEGER_TYPES
                                           if np.iinfo(t).min <= low and high <= np.iinfo(t).max])))
    values = draw(st.lists(st.integers(max(low, np.iinfo(dtype).min), min(high, np.iinfo(dtype).max)),
                           min_size=n, max_size=n))
    if not draw(st.booleans()):
        return values, np.array(values, dtype)
    records = np.zeros(n, [("before", "u1"), ("value", dtype), ("after", "i2")])
    records["value"] = values
    return values, records["value"]


@st.composite
def padded_cells(draw, texts: list[str]) -> np.ndarray:
    """``texts`` as NUL-padded cells, with NULs between their bytes too (as the IPv4 key
    words hold them)."""
    cells = []
    for text in texts:
        cell = bytearray()
        for byte in text.encode():
            cell += bytes(draw(st.integers(0, 2))) + bytes([byte])
        cells.append(cell + bytes(draw(st.integers(0, 9))))
    block = np.zeros((len(cells), max(1, *map(len, cells))), np.uint8)
    for row, cell in enumerate(cells):
        block[row, :len(cell)] = np.frombuffer(bytes(cell), np.uint8)
    return block


@st.composite
def batches(draw):
    """(n, pieces): each piece ("text", str) | ("choice", texts, codes, code array) |
    ("number", values, array) | ("block", per-line strings, their cells)."""
    n = draw(st.integers(1, 40))
    pieces = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["text", "choice", "number", "block"]))
        if kind == "text":
            pieces.append(("text", draw(TEXTS)))
        elif kind == "choice":
            texts = draw(st.lists(TEXTS, min_size=1, max_size=5))
            pieces.append(("choice", texts, *draw(integers(n, 0, len(texts) - 1))))
        elif kind == "number":
            pieces.append(("number", *draw(integers(n, -2**63, 2**63 - 1))))
        else:
            texts = draw(st.lists(TEXTS, min_size=n, max_size=n))
            pieces.append(("block", texts, pool(texts) if draw(st.booleans()) else draw(padded_cells(texts))))
    return n, pieces


def _render(n, pieces, buffer=None) -> bytes:
    """The lines rendered, each line's end as ``render`` reports it checked against the
    reference's."""
    lines = Lines(n)
    for kind, *args in pieces:
        if kind == "text":
            lines.text(args[0])
        elif kind == "choice":
            lines.choice(args[0], args[2])
        elif kind == "number":
            lines.number(args[1])
        else:
            lines.block(args[1])
    ends = np.full(n, -1, np.int64)
    rendered = bytes(lines.render(buffer, ends))
    assert ends.tolist() == _reference_ends(n, pieces)
    return rendered


def _reference_ends(n, pieces) -> list[int]:
    """Where each of the reference's lines ends: the place of its newline."""
    return (np.cumsum([len(line.encode()) for line in _reference_lines(n, pieces)], dtype=np.int64) - 1).tolist()


def _reference(n, pieces) -> bytes:
    return "".join(_reference_lines(n, pieces)).encode()


def _reference_lines(n, pieces) -> list[str]:
    out = []
    for i in range(n):
        line = ""
        for kind, *args in pieces:
            if kind == "text":
                line += args[0]
            elif kind == "choice":
                line += args[0][args[1][i]]
            elif kind == "number":
                line += "null" if args[0][i] < 0 else str(args[0][i])
            else:
                line += args[0][i]
        out.append(line + "\n")
    return out


@settings(max_examples=300, deadline=None)
@given(batches())
def test_lines_are_the_pieces_joined(batch):
    assert _render(*batch) == _reference(*batch)


EXTREMES = (3, [("number", [2**63 - 1, -2**63, 0], np.array([2**63 - 1, -2**63, 0])),
                ("choice", ["x" * 8, "ab"], [0, 1, 0], np.array([0, 1, 0], np.uint8)),
                ("block", ["12345678", "", "1"], pool(["12345678", "", "1"]))])


@needs_twins
@settings(max_examples=300, deadline=None)
@given(batches())
@example(EXTREMES)
def test_compiled_renderer_equals_the_numpy_one(batch):
    """Both renderers give the reference's lines, the compiled one never past its
    buffer's bound (every cell at full width, numbers of 19 digits)."""
    rendered = []
    for choice in KERNELS:
        with compiled.using(choice):
            rendered.append(_render(*batch))
    assert rendered[0] == rendered[1] == _reference(*batch)


@needs_twins
@pytest.mark.parametrize("code", [-1, 2, 2**40])
def test_compiled_renderer_refuses_a_code_outside_its_choices(code):
    lines = Lines(2)
    lines.choice(["null", quoted("x")], np.array([0, code]))
    with compiled.using("compiled"), pytest.raises(ValueError, match="outside its pool"):
        lines.render()


@settings(max_examples=100, deadline=None)
@given(batches(), st.integers(1, 3))
def test_a_kept_buffer_gives_the_same_lines(batch, times):
    """The matrix is reused while the layout stays the same: the texts already in place
    and the cells of the previous batch must not leak into the next."""
    n, pieces = batch
    buffer = LineBuffer()
    for _ in range(times):
        assert _render(n, pieces, buffer) == _reference(n, pieces)
    other = [(kind, *[list(reversed(a)) if isinstance(a, list) else a[::-1] if isinstance(a, np.ndarray) else a
                      for a in args]) for kind, *args in pieces]
    assert _render(n, other, buffer) == _reference(n, other)


def test_trace_like_lines_are_json():
    lines = Lines(3)
    lines.text('{"a":')
    lines.number(np.array([0, 12345678901, -1]))
    lines.text(',"b":')
    lines.choice(["null", quoted('x "quoted" \\ text'), quoted("é")], np.array([1, 0, 2]))
    lines.text("}")
    assert [json.loads(line) for line in bytes(lines.render()).splitlines()] == [
        {"a": 0, "b": 'x "quoted" \\ text'}, {"a": 12345678901, "b": None}, {"a": None, "b": "é"}]


@st.composite
def matrices(draw):
    """2-d arrays of bytes or int64s with many repeated rows, maybe a strided view."""
    n, width = draw(st.integers(0, 60)), draw(st.integers(1, 70))
    dtype, values = draw(st.sampled_from([(np.uint8, [0, 1, 255]), (np.int64, [0, 1, -1, 2**40])]))
    rows = []
    for _ in range(n):
        if rows and draw(st.booleans()):
            rows.append(draw(st.sampled_from(rows)))
        else:
            rows.append(draw(st.lists(st.sampled_from(values), min_size=width, max_size=width)))
    matrix = np.array(rows, dtype).reshape(n, width)
    return matrix[:, ::-1] if draw(st.booleans()) else matrix


@needs_twins
@settings(max_examples=300, deadline=None)
@given(matrices())
def test_distinct_rows_in_order_of_first_occurrence(matrix):
    seen: dict[bytes, int] = {}
    inverse = [seen.setdefault(row.tobytes(), len(seen)) for row in matrix]
    first = [inverse.index(number) for number in range(len(seen))]
    for choice in KERNELS:
        with compiled.using(choice):
            got = distinct(matrix)
        assert (got[0].tolist(), got[1].tolist()) == (first, inverse), choice
