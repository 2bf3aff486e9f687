"""Option value types that every command may use, light to import (``compare`` and
``rules hits`` start without the forwarding code that ``options.py`` brings)."""
from __future__ import annotations

import click

from ..numbers import parse_int


class Int(click.ParamType):
    """An integer option bounded where it is parsed: out of range, or too long for Python
    to convert, it ends as one line naming the option."""
    name = "n"                                # --help shows N

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value                      # a default
        return parse_int(value.strip(), max(param.opts, key=len), self.low, self.high)
