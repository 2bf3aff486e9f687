"""Every message is one line, whatever the names and values it echoes (issue 28, class 3).

A path or an option value may hold a newline, an escape sequence or a bidirectional
override; the message shows each as ``repr`` escapes it (``\\n``, ``\\x1b``, ``\\u202e``)
— an error on stderr, a warning, a path printed on stdout."""
from __future__ import annotations

import pytest

from frames import mixed_frames, write_pcap
from refusals import assert_refused

ODD = "no\nsu\x1bch\u202e"
SHOWN = repr(ODD)[1:-1]                  # the oracle: Python's own escaping


@pytest.mark.parametrize("args", [
    ("run", f"0={ODD}.pcap", "-o", "{out}"),
    ("run", "{out}/{odd}", "-o", "{out}/x"),
    ("testpmd", f"0={ODD}.pcap", "-o", "{out}"),
    ("generate", "--streams", f"{ODD}.toml", "-o", "{out}"),
    ("compare", f"{ODD}.pcap", "{out}"),
    ("lookup", "--rule_ipv4", f"{ODD}.cfg", "--rule_ipv6", f"{ODD}.cfg", "198.18.0.1"),
    ("report", "{out}/{odd}"),
    ("run", "0=a.pcap", "-o", "{out}", "--portmask", ODD),
    ("run", "0=a.pcap", "-o", "{out}", "--config", ODD),
    ("generate", ODD, "-o", "{out}"),
])
def test_an_echoed_name_or_value_stays_on_one_line(cli, tmp_path, args):
    out = tmp_path / "out"
    out.mkdir()
    line = assert_refused(cli(*(a.format(out=out, odd=ODD) for a in args)))
    assert SHOWN in line or repr(ODD) in line, line
    assert line.isprintable(), line


def test_a_warning_naming_an_odd_file_stays_on_one_line(cli, tmp_path):
    """A rule file without routes is a warning naming it (a run that goes on)."""
    pcaps = tmp_path / "in"
    pcaps.mkdir()
    write_pcap(pcaps / "port0.pcap", mixed_frames(1, 0, 20))
    empty, v6 = tmp_path / f"{ODD}.cfg", tmp_path / "v6.cfg"
    empty.write_text("# no routes\n")
    v6.write_text("R2001:200:0:0:0:0:0:0/48 0\n")
    result = cli("run", pcaps, "-o", tmp_path / "out", "--rule_ipv4", empty, "--rule_ipv6", v6)
    assert result.exit_code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "no rules" in line]
    assert len(warnings) == 1 and SHOWN in warnings[0] and warnings[0].isprintable(), result.stderr


def test_a_printed_output_path_stays_on_one_line(cli, tmp_path):
    """generate prints each file it wrote: under a directory with a newline in its name."""
    result = cli("generate", "IPV4-CONT-BURST", "--count", "3", "-o", tmp_path / ODD)
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if "packets," in line]
    assert lines and all(SHOWN in line for line in lines), result.stdout


@pytest.mark.parametrize("args", [
    ("run", ".", "-o", "out", "--rule_ipv4", "a\x00", "--rule_ipv6", "b"),
    ("compare", "a\x00", "b"),
    ("generate", "--streams", "s\x00.toml", "-o", "out"),
])
def test_a_nul_in_any_argument_is_one_line(cli, args):
    """No real command line holds a NUL (execve cannot pass one), but a caller in-process
    can: refused before any option is parsed, not a ValueError from a system call."""
    assert_refused(cli(*args), "cannot hold a NUL character")
