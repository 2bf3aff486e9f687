"""What every refused command must look like: exit status 2, nothing on stdout, and one
short line on stderr, ``l3fwd-sim: ...``, naming the culprit; never a traceback."""
from __future__ import annotations

BIG = "9" * 5000                 # more digits than Python converts (4300): must be refused before int()
MAX_LINE = 300                   # a 5000-digit culprit is shown cut short


def assert_refused(result, *needles: str) -> str:
    """Check a click ``Result`` of a refused command; return its one stderr line."""
    assert "Traceback" not in result.output + result.stderr, result.stderr[-2000:]
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    line = lines[0]
    assert line.startswith("l3fwd-sim: ") and len(line) < MAX_LINE, line
    for needle in needles:
        assert needle in line, (needle, line)
    assert result.exit_code == 2, (result.exit_code, line)
    assert result.stdout == "", result.stdout
    return line
