"""The terminal's units: durations and rates to three significant digits in the unit
they reach, read back within rounding."""
from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from l3fwd_sim.dataplane.stats import RunStats, format_duration, format_rate, format_table

SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9, "Mpps": 1e6, "kpps": 1e3, "pps": 1.0}


def read_back(text: str) -> tuple[float, str, str]:
    number, unit = re.fullmatch(r"([0-9.]+) (\S+)", text).groups()
    return float(number) * SCALE[unit], number, unit


def significant(number: str) -> int:
    return len(number.replace(".", "").lstrip("0"))


@given(st.floats(1e-9, 1e5))
def test_durations_keep_three_significant_digits(seconds):
    value, number, unit = read_back(format_duration(seconds))
    assert abs(value - seconds) <= 0.005 * seconds
    assert significant(number) == 3 or float(number) >= 1000
    assert 1 <= float(number) < 1000 or (unit == "s" and float(number) >= 1000) or unit == "ns"


@given(st.integers(1, 10**10), st.floats(1e-4, 1e3))
def test_rates_keep_three_significant_digits(packets, seconds):
    value, number, unit = read_back(format_rate(packets, seconds))
    assert abs(value - packets / seconds) <= 0.005 * packets / seconds
    assert 1 <= float(number) < 1000 or unit == "Mpps" or (unit == "pps" and float(number) < 1)


def test_table_keeps_one_time_costs_apart_from_the_stages():
    stats = RunStats([0], [0], ("truncated",))
    stats.add_stage_time("read", 0.002)
    stats.add_setup_time("tables", 0.5)
    stats.elapsed = 0.6
    text = format_table(stats.to_dict())
    assert "one-time: route tables 500 ms" in text
    assert "500" not in text.splitlines()[-3]        # the stage total row holds read's 2.00 ms only
    assert "2.00 ms" in text
