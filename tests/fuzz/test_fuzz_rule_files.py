"""Fuzz l3fwd's rule files (LPM, EM, ACL; IPv4 and IPv6) through ``run``, ``lookup`` and
``rules check``: valid lines mutated, whole files of hostile text (support/fuzzing.py)."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st
from fuzzing import fuzz, mutated, run_case
from frames import mixed_frames, write_pcap

ACL_V4 = ["@0.0.0.0/0 10.0.0.0/8 0 : 65535 0 : 65535 0/0", "R0.0.0.0/0 198.18.0.0/16 0 : 65535 9 : 9 17/0xff 1"]
ACL_V6 = ["R0:0:0:0:0:0:0:0/0 2001:200:0:0:0:0:0:0/48 0 : 65535 0 : 65535 0x11/0xff 2",
          "@0:0:0:0:0:0:0:0/0 0:0:0:0:0:0:0:0/0 0 : 65535 0 : 1023 6/0xfe"]
LINES = {   # lookup -> (IPv4 lines, IPv6 lines): valid ones the mutations start from
    "lpm": (["R198.18.0.0/24 0", "R10.0.0.0/8 1", "R128.0.0.0/1 0x1", "# comment", ""],
            ["R2001:200:0:0:0:0:0:0/48 1", "R8000:0:0:0:0:0:0:0/1 0", "R2001:0db8:0:0:0:0:0:1/128 010"]),
    "fib": (["R198.18.0.0/24 0", "R0.0.0.0/0 0x1"], ["R0:0:0:0:0:0:0:0/0 0", "R2001:200:0:0:0:0:0:0/48 1"]),
    "em": (["R198.18.0.0 198.18.0.1 9 9 0x11 0", "R10.0.0.1 10.0.0.2 80 1024 6 1"],
           ["R2001:200:0:0:0:0:0:0 2001:200:0:0:0:0:0:1 9 9 0x11 1"]),
    "acl": (ACL_V4, ACL_V6),
}


@functools.cache
def work() -> Path:
    """The target's scratch directory (one per process) and its capture."""
    root = Path(tempfile.mkdtemp(prefix="fuzz-rules-"))
    write_pcap(root / "port0.pcap", mixed_frames(7, 0, 40))
    return root


def _file(lines):
    return st.lists(mutated(lines), min_size=1, max_size=6).map("\n".join)


# (lookup, the IPv4 file is the mutated one, command), the mutated file's text
CASES = st.tuples(st.sampled_from(sorted(LINES)), st.booleans(), st.sampled_from(("run", "lookup", "check"))).flatmap(
    lambda t: st.tuples(st.just(t), _file(LINES[t[0]][0] if t[1] else LINES[t[0]][1])))


def _command(lookup: str, command: str, v4: Path, v6: Path, out: Path) -> list:
    rules = ["--rule_ipv4", v4, "--rule_ipv6", v6]
    if command == "run":
        return ["run", f"0={work() / 'port0.pcap'}", "-o", out, "--lookup", lookup, "-p", "0xf", *rules]
    if command == "lookup":
        key = "198.18.0.1" if lookup in ("lpm", "fib") else "udp 198.18.0.1:9 > 198.18.0.0:9"
        return ["lookup", "--lookup", lookup, "-p", "0xf", *rules, key]
    return ["rules", "check", "--lookup", lookup, "-p", "0xf", *rules]


def _valid(lookup: str, family: int) -> str:
    return "\n".join(line for line in LINES[lookup][family == 6] if line.startswith(("R", "@")))


@fuzz(CASES)
def test_rule_files(case):
    """A mutated rule file: run forwards with it, lookup answers, rules check finds, or
    each refuses it in one line."""
    (lookup, v4, command), text = case
    case_dir = Path(tempfile.mkdtemp(dir=work()))
    rules_dir, out = case_dir / "rules", case_dir / "out"
    rules_dir.mkdir()
    mutated_file, other = rules_dir / "mutated.cfg", rules_dir / "valid.cfg"
    mutated_file.write_bytes(text.encode("utf-8", "surrogateescape"))
    other.write_text(_valid(lookup, 6 if v4 else 4))
    files = (mutated_file, other) if v4 else (other, mutated_file)
    run_case(_command(lookup, command, *files, out), watched=(out, rules_dir), differs_ok=command == "check")


@pytest.mark.parametrize("lookup", sorted(LINES))
@pytest.mark.parametrize("command", ("run", "lookup", "check"))
def test_the_unmutated_files_are_taken(tmp_path, lookup, command):
    """The commands the fuzz target builds work on the files it starts from: a mutation
    that keeps a file valid reaches the forwarding, not a refusal of the command line."""
    v4, v6 = tmp_path / "v4.cfg", tmp_path / "v6.cfg"
    v4.write_text(_valid(lookup, 4))
    v6.write_text(_valid(lookup, 6))
    result = run_case(_command(lookup, command, v4, v6, tmp_path / "out"), differs_ok=command == "check")
    assert result.exit_code in ((0, 1) if command == "check" else (0,)), result.stderr
