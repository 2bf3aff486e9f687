"""Numbers from options and files, bounded where they are parsed: the one parser every
option and file parser uses, so that an absurd value (a 5000-digit port, a count past
2**48) is one line naming it, never a traceback."""
from __future__ import annotations

import re

from .errors import SimError

_DIGITS = {8: re.compile(r"[+-]?[0-7]+"), 10: re.compile(r"[+-]?[0-9]+"), 16: re.compile(r"[+-]?[0-9a-fA-F]+")}
_FORMAT = {8: "o", 10: "d", 16: "x"}
_SHOWN = 24          # characters of a value echoed in a message


def brief(text: str, shown: int = _SHOWN) -> str:
    """``repr(text)``, cut short past ``shown`` characters: an error message stays one
    readable line even when the culprit is a 5000-digit number."""
    if len(text) <= shown:
        return repr(text)
    return f"{text[:shown - 8]!r}… ({len(text)} characters)"


def check_range(value: int, what: str, low: int, high: int, shown: str | None = None) -> int:
    """``value`` if ``low <= value <= high``; else SimError ``"<what> <value> out of range <low>..<high>"``."""
    if not low <= value <= high:
        raise SimError(f"{what} {shown if shown is not None else value} out of range {low}..{high}")
    return value


def parse_int(text: str, what: str, low: int, high: int, base: int = 10, shown: str | None = None) -> int:
    """``text`` (digits of ``base``, optional sign) as an int in ``low..high``, else a
    SimError naming ``what`` and ``shown`` (default: ``text``, cut short). Digits beyond
    those of the widest number in range are refused before conversion: the number is out
    of range anyway, and Python refuses to convert a decimal string of more than 4300
    digits (a ValueError, not a message); leading zeros are dropped first for the same reason."""
    shown = shown or brief(str(text))
    if not isinstance(text, str) or not _DIGITS[base].fullmatch(text):
        raise SimError(f"{what} {shown} is not a{' hexadecimal' if base == 16 else ''} number")
    digits = text.lstrip("+-").lstrip("0") or "0"
    if len(digits) > len(format(max(abs(low), abs(high)), _FORMAT[base])):
        raise SimError(f"{what} {shown} out of range {low}..{high}")
    value = int(digits, base)
    return check_range(-value if text.startswith("-") else value, what, low, high, shown)


def c_strtoul(text: str) -> int | None:
    """``strtoul(text, &end, 10)`` with the whole text consumed; None otherwise."""
    stripped = text.lstrip(" \t\n\v\f\r")
    body = stripped[1:] if stripped[:1] == "+" else stripped
    if not body or not body.isascii() or not body.isdigit():
        return None
    return int(body) if len(body) <= 20 else 1 << 64          # strtoul saturates: out of every range here


def c_atoi(text: str) -> int:
    """C's ``atoi``: the leading decimal number, 0 when there is none."""
    body = text.lstrip(" \t\n\v\f\r")
    sign = -1 if body[:1] == "-" else 1
    body = body[1:] if body[:1] in "+-" else body
    digits = ""
    for char in body[:12]:
        if not "0" <= char <= "9":
            break
        digits += char
    return sign * int(digits or 0)
