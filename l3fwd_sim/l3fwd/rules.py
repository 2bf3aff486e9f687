"""dpdk-l3fwd rule files (``--rule_ipv4`` / ``--rule_ipv6``).

Grammar as ``lpm_route_parse.c`` / ``em_route_parse.c`` read it: a line whose first
character is ``#`` is a comment, a blank line is skipped, every other line starts with
``R`` in column 0; the rest is split on blanks; numbers are C ``strtoul(..., 0)``
numbers (decimal, ``0x`` hex, leading-``0`` octal); addresses go through ``inet_pton``.

* LPM/FIB: ``R<addr>/<depth> <out_port>``
* EM:      ``R<dst_ip> <src_ip> <dst_port> <src_port> <proto> <out_port>``

Deliberate strictness beyond l3fwd (which ignores extra tokens): anything after the
required fields must be a ``#`` comment, so a typo cannot silently change a route.
Every error names ``file:line``.
"""
from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import SimError

FAMILIES = {4: (socket.AF_INET, 32), 6: (socket.AF_INET6, 128)}
_C_ULONG = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")


@dataclass(frozen=True)
class LpmRule:
    """One ``R<prefix>/<depth> <port>`` line; ``prefix`` is the address as an int."""
    prefix: int
    depth: int
    port: int
    where: str  # "file:line", for errors raised after parsing (e.g. by the LPM)


@dataclass(frozen=True)
class EmRule:
    """One exact-match flow line, fields as integers in host order."""
    dst: int
    src: int
    dst_port: int
    src_port: int
    proto: int
    port: int
    where: str


def _c_number(token: str, what: str, limit: int, where: str) -> int:
    """``strtoul(token, &end, 0)`` with l3fwd's "whole token, within range" checks."""
    if token.isascii() and token.isdigit() and (token[0] != "0" or len(token) == 1):
        value = int(token)                            # plain decimal, the usual case: no regex
    elif not _C_ULONG.fullmatch(token):
        raise SimError(f"{where}: bad {what} {token!r} (expected a decimal, 0x-hex or 0-octal number)")
    else:
        value = int(token, 8 if token.startswith("0") and len(token) > 1 and token[1] not in "xX" else 0)
    if value > limit:
        raise SimError(f"{where}: {what} {token!r} out of range 0..{limit}")
    return value


def _address(token: str, family: int, where: str) -> int:
    af, _ = FAMILIES[family]
    try:
        return int.from_bytes(socket.inet_pton(af, token), "big")
    except (OSError, ValueError):      # ValueError: an embedded NUL
        raise SimError(f"{where}: bad IPv{family} address {token!r}") from None


def _rule_lines(path: Path, nfields: int, usage: str):
    """Yield ``(where, fields)`` for every rule line of ``path``."""
    try:
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError as err:
        raise SimError(f"{path}: cannot read rule file: {err.strerror}") from None
    name = f"{path}:"
    for lineno, line in enumerate(text.split("\n"), 1):       # fgets: lines end at \n only
        line = line.removesuffix("\r")                            # tolerate CRLF files
        where = name + str(lineno)
        if line.startswith("#") or not line.strip():
            continue
        if not line.startswith("R"):
            raise SimError(f"{where}: rule lines must start with 'R' in column 0 (got {line.strip()[:40]!r})")
        tokens = line[1:].split()
        if len(tokens) < nfields:
            raise SimError(f"{where}: missing fields, expected {usage}")
        if len(tokens) > nfields and not tokens[nfields].startswith("#"):
            raise SimError(f"{where}: trailing garbage {tokens[nfields]!r} after {usage}")
        yield where, tokens[:nfields]


def parse_lpm_rules(path: Path, family: int) -> list[LpmRule]:
    """Parse an LPM/FIB rule file of IPv4 (``family=4``) or IPv6 (``family=6``) routes.

    Depth is checked against the parser's range (0..32 / 0..128); whether depth 0 is
    allowed is the table's business (rte_lpm rejects it, rte_fib takes it as default).
    """
    _, bits = FAMILIES[family]
    rules = []
    for where, (prefix, port) in _rule_lines(path, 2, "R<prefix>/<depth> <port>"):
        addr, slash, depth = prefix.partition("/")
        if not slash:
            raise SimError(f"{where}: missing '/<depth>' in {prefix!r}")
        rules.append(LpmRule(_address(addr, family, where), _c_number(depth, "depth", bits, where),
                             _c_number(port, "port", 255, where), where))
    return rules


def parse_em_rules(path: Path, family: int) -> list[EmRule]:
    """Parse an exact-match (``-E`` / ``--lookup em``) flow file."""
    rules = []
    usage = "R<dst_ip> <src_ip> <dst_port> <src_port> <proto> <port>"
    for where, (dst, src, dport, sport, proto, port) in _rule_lines(path, 6, usage):
        rules.append(EmRule(_address(dst, family, where), _address(src, family, where),
                            _c_number(dport, "dst_port", 0xFFFF, where),
                            _c_number(sport, "src_port", 0xFFFF, where),
                            _c_number(proto, "proto", 0xFF, where),
                            _c_number(port, "port", 255, where), where))
    return rules


@dataclass
class LpmRuleArrays:
    """LPM rules as arrays (file order): what route tables are built from. ``line`` is
    each rule's line number, for errors found after parsing."""
    path: Path
    prefix: np.ndarray      # uint32 (IPv4) or object (IPv6 Python ints)
    depth: np.ndarray
    port: np.ndarray
    line: np.ndarray

    def __len__(self) -> int:
        return len(self.depth)

    def where(self, i: int) -> str:
        return f"{self.path}:{int(self.line[i])}"

    def select(self, keep: np.ndarray) -> "LpmRuleArrays":
        return LpmRuleArrays(self.path, self.prefix[keep], self.depth[keep], self.port[keep], self.line[keep])


# The common IPv4 line, decimal only: R<a>.<b>.<c>.<d>/<depth> <port>
_V4_SKELETON = re.compile(rb"R\.\.\./[ \t]+[ \t]*\r?")


def _has_leading_zero(data: bytes) -> bool:
    """Whether a number starts with 0 and goes on (``010``: octal to strtoul)."""
    text = np.frombuffer(b" " + data + b" ", np.uint8)
    digit = (text >= 0x30) & (text <= 0x39)
    return bool((~digit[:-2] & (text[1:-1] == 0x30) & digit[2:]).any())


def lpm_rule_arrays(path: Path, family: int) -> LpmRuleArrays:
    """Parse an LPM/FIB rule file into arrays. A million-route IPv4 file is parsed in
    a few numpy passes (the lines' digits are read by ``np.fromstring``, their shape
    checked once per distinct skeleton); any line outside that common shape — hex or
    octal numbers, comments after a rule, errors — sends the whole file through
    :func:`parse_lpm_rules`, which gives the same rules or the precise error."""
    fast = _fast_ipv4_rules(path) if family == 4 else None
    if fast is not None:
        return fast
    rules = parse_lpm_rules(path, family)
    lines = np.array([int(r.where.rsplit(":", 1)[1]) for r in rules], np.int64)
    prefix = np.array([r.prefix for r in rules], np.uint32 if family == 4 else object)
    return LpmRuleArrays(Path(path), prefix, np.array([r.depth for r in rules], np.int64),
                         np.array([r.port for r in rules], np.int64), lines)


def _fast_ipv4_rules(path: Path) -> LpmRuleArrays | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None                                   # the slow path reports it
    if _has_leading_zero(data):
        return None                                   # octal numbers, or inet_pton's refusal
    lines = data.split(b"\n")
    numbers = [i for i, line in enumerate(lines, 1) if line[:1] == b"R"]
    rule_lines = [lines[i - 1] for i in numbers]
    if len(rule_lines) < len(lines) and any(line[:1] not in (b"R", b"#") and line.strip() for line in lines):
        return None                                   # a line neither rule, comment nor blank
    skeletons = set(b"\n".join(rule_lines).translate(None, b"0123456789").split(b"\n")) if rule_lines else set()
    if not all(_V4_SKELETON.fullmatch(skeleton) for skeleton in skeletons):
        return None                                   # not R<a>.<b>.<c>.<d>/<depth> <port>
    text = b" ".join(rule_lines).translate(_SEPARATORS)
    values = np.fromstring(text, dtype=np.int64, sep=" ") if rule_lines else np.zeros(0, np.int64)
    if values.size != 6 * len(rule_lines):
        return None
    values = values.reshape(-1, 6)
    if (values[:, :4] > 255).any() or (values[:, 4] > 32).any() or (values[:, 5] > 255).any():
        return None                                   # out of range: the slow path names the line
    prefix = (values[:, 0] << 24 | values[:, 1] << 16 | values[:, 2] << 8 | values[:, 3]).astype(np.uint32)
    return LpmRuleArrays(Path(path), prefix, values[:, 4].copy(), values[:, 5].copy(), np.array(numbers, np.int64))


_SEPARATORS = bytes.maketrans(b"R./\t\r", b"     ")
