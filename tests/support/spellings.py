"""Rule-file spellings for property tests: numbers as C's ``strtoul(..., 0)`` reads them."""
from __future__ import annotations

from hypothesis import strategies as st


def c_number(draw, value: int) -> str:
    """``value`` written the way strtoul(..., 0) reads it: decimal, 0x hex or 0-octal."""
    style = draw(st.sampled_from(["dec", "hex", "HEX", "oct"]))
    if style == "dec":
        return str(value)
    if style == "hex":
        return "0x" + "0" * draw(st.integers(0, 2)) + format(value, "x")
    if style == "HEX":
        return "0X" + format(value, "X")
    return "0" + "0" * draw(st.integers(0, 2)) + format(value, "o")
