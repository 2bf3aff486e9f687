"""JSON lines built column-wise (dataplane/jsonlines.py) against the same lines built
one by one in Python."""
from __future__ import annotations

import json

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from l3fwd_sim.dataplane.jsonlines import LineBuffer, Lines, pool, quoted

TEXTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\0"), max_size=12)


@st.composite
def batches(draw):
    """(n, pieces): each piece ("text", str) | ("choice", texts, codes) | ("number", values)
    | ("block", list of per-line strings)."""
    n = draw(st.integers(1, 40))
    pieces = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["text", "choice", "number", "block"]))
        if kind == "text":
            pieces.append(("text", draw(TEXTS)))
        elif kind == "choice":
            texts = draw(st.lists(TEXTS, min_size=1, max_size=5))
            pieces.append(("choice", texts, draw(st.lists(st.integers(0, len(texts) - 1), min_size=n, max_size=n))))
        elif kind == "number":
            pieces.append(("number", draw(st.lists(st.integers(-3, 10**18), min_size=n, max_size=n))))
        else:
            pieces.append(("block", draw(st.lists(TEXTS, min_size=n, max_size=n))))
    return n, pieces


def _render(n, pieces, buffer=None) -> bytes:
    lines = Lines(n)
    for kind, *args in pieces:
        if kind == "text":
            lines.text(args[0])
        elif kind == "choice":
            lines.choice(args[0], np.array(args[1]))
        elif kind == "number":
            lines.number(np.array(args[0], np.int64))
        else:
            block = pool(args[0]) if args[0] else np.zeros((n, 4), np.uint8)
            lines.block(block)
    return bytes(lines.render(buffer))


def _reference(n, pieces) -> bytes:
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
    return "".join(out).encode()


@settings(max_examples=300, deadline=None)
@given(batches())
def test_lines_are_the_pieces_joined(batch):
    assert _render(*batch) == _reference(*batch)


@settings(max_examples=100, deadline=None)
@given(batches(), st.integers(1, 3))
def test_a_kept_buffer_gives_the_same_lines(batch, times):
    """The matrix is reused while the layout stays the same: the texts already in place
    and the cells of the previous batch must not leak into the next."""
    n, pieces = batch
    buffer = LineBuffer()
    for _ in range(times):
        assert _render(n, pieces, buffer) == _reference(n, pieces)
    other = [(kind, *[list(reversed(a)) if isinstance(a, list) else a for a in args]) for kind, *args in pieces]
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
