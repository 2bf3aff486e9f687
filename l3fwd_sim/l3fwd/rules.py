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

ACL (``--lookup acl``, ``l3fwd_acl.c``), one file per family, read by :func:`parse_acl_rules`:
``#`` in column 0 is a comment, a line of blanks only is skipped, ``@`` in column 0 starts
a deny line, ``R`` a route line, any other first character is an error; a file without a
single ``R`` line is an error. The rest of the line is split on blanks and tabs::

    @<src>/<len> <dst>/<len> <sport_lo> : <sport_hi> <dport_lo> : <dport_hi> <proto>/<mask>
    R<src>/<len> <dst>/<len> <sport_lo> : <sport_hi> <dport_lo> : <dport_hi> <proto>/<mask> <port>

* each ``:`` is a token of its own (``0 : 65535``, never ``0:65535``); ``lo <= hi``;
* ports 0..65535, proto and mask 0..255, route port 0..2^32-1, prefix lengths 0..32 /
  0..128: ``strtoul(..., 0)`` numbers;
* IPv4 addresses: ``inet_pton`` dotted quads; IPv6 addresses: exactly eight
  ``:``-separated groups, each a ``strtoul(..., 16)`` number (optional ``0x``, at most
  0xffff). An empty group reads as 0, as in l3fwd, so a ``::`` that leaves eight groups
  (seven colons) is accepted while the usual ``::`` shorthand is an error;
* the proto ``p`` of a packet matches ``<proto>/<mask>`` when ``p & mask == proto & mask``;
* the address bits beyond the prefix length are kept as written (the table ignores them);
* file order is priority order, deny and route lines counted together.

Strictness beyond l3fwd's ACL parser, besides the ``#``-comment rule above (which also
means a deny line cannot carry a port): no empty numbers where ``strtoul`` would read 0
(``10::/`` = ``/0``, ``6/`` = mask 0, ``/0xff`` = proto 0), no signs (``-0``, ``+1``),
exactly one ``/`` in an IPv4 ``<addr>/<len>`` (l3fwd's ``strtok`` takes ``1.2.3.4//8``
and ``1.2.3.4/8/9``), and fields separated by blanks and tabs only. CRLF line ends are
tolerated (l3fwd reads the ``\r`` into the last field and fails).
"""
from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import SimError
from ..numbers import brief, check_range, parse_int

FAMILIES = {4: (socket.AF_INET, 32), 6: (socket.AF_INET6, 128)}
_C_ULONG = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")


@dataclass(frozen=True)
class LpmRule:
    """One ``R<prefix>/<depth> <port>`` line; ``prefix`` is the address as an int."""
    prefix: int
    depth: int
    port: int
    where: str  # "file:line", for errors raised after parsing (e.g. by the LPM)

    @property
    def line(self) -> int:
        return int(self.where.rsplit(":", 1)[1])


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

    @property
    def line(self) -> int:
        return int(self.where.rsplit(":", 1)[1])


def _c_number(token: str, what: str, limit: int, where: str) -> int:
    """``strtoul(token, &end, 0)`` with l3fwd's "whole token, within range" checks."""
    if token.isascii() and token.isdigit() and (token[0] != "0" or len(token) == 1) and len(token) < 20:
        value = int(token)                            # plain decimal, the usual case: no regex
    elif not _C_ULONG.fullmatch(token):
        raise SimError(f"{where}: bad {what} {brief(token)} (expected a decimal, 0x-hex or 0-octal number)")
    else:                                             # parse_int checks the digits' length before int()
        hexadecimal = token[:2] in ("0x", "0X")
        value = parse_int(token[2:] if hexadecimal else token, f"{where}: {what}", 0, limit,
                          16 if hexadecimal else 8 if token.startswith("0") else 10, brief(token))
    return check_range(value, f"{where}: {what}", 0, limit, brief(token))


def _address(token: str, family: int, where: str) -> int:
    af, _ = FAMILIES[family]
    try:
        return int.from_bytes(socket.inet_pton(af, token), "big")
    except (OSError, ValueError):      # ValueError: an embedded NUL
        raise SimError(f"{where}: bad IPv{family} address {token!r}") from None


def _text_lines(path: Path):
    """Yield ``(lineno, line)`` for every line of ``path`` (``\\n`` ends a line, a final
    ``\\r`` is dropped); unreadable files are a :class:`SimError`."""
    try:
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError as err:
        raise SimError(f"{path}: cannot read rule file: {err.strerror}") from None
    for lineno, line in enumerate(text.split("\n"), 1):       # fgets: lines end at \n only
        yield lineno, line.removesuffix("\r")                     # tolerate CRLF files


def _fields(body: str, where: str) -> list[str]:
    """The fields of a rule line after its lead character, as l3fwd's ``strtok(" \\t\\n")``
    cuts them. Other whitespace (``\\v``, ``\\f``, ``\\r``, a no-break space) is part of a
    token to l3fwd, which then fails to parse it: refused, naming it, unless in a comment."""
    odd = _ODD_SPACE.search(body)
    if odd and ("#" not in body or odd.start() < body.index("#")):
        raise SimError(f"{where}: {odd.group()!r} between fields (l3fwd separates fields with blanks "
                       f"and tabs only)")
    return body.split()


def _rule_lines(path: Path, nfields: int, usage: str):
    """Yield ``(where, fields)`` for every rule line of ``path``."""
    name = f"{path}:"
    for lineno, line in _text_lines(path):
        where = name + str(lineno)
        if line.startswith("#") or not line.strip(_C_SPACE):
            continue
        if not line.startswith("R"):
            raise SimError(f"{where}: rule lines must start with 'R' in column 0 (got {line.strip()[:40]!r}); a route "
                           "table (ip route, FRR, BIRD, MRT)? `l3fwd-sim rules import` turns it into rule files")
        tokens = _fields(line[1:], where)
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


# ---------------------------------------------------------------------------------------
# ACL rule files (--lookup acl)
# ---------------------------------------------------------------------------------------
@dataclass
class AclRules:
    """The rules of one ACL rule file, in file order: line k outranks line k+1 (l3fwd gives
    the k-th rule line priority RTE_ACL_MAX_PRIORITY - k, deny and route lines numbered together)."""
    family: int                 # 4 or 6
    proto: np.ndarray           # (n,) int64 protocol value 0..255
    proto_mask: np.ndarray      # (n,) int64 protocol mask 0..255  (packet proto p matches when p & mask == proto & mask)
    src: np.ndarray             # (n, W) int64, W = 1 (IPv4) or 4 (IPv6): the address as 32-bit words, most significant first
    src_len: np.ndarray         # (n,) int64 prefix length 0..32 / 0..128
    dst: np.ndarray             # (n, W) int64
    dst_len: np.ndarray         # (n,) int64
    sport: np.ndarray           # (n, 2) int64 inclusive range lo, hi (lo <= hi)
    dport: np.ndarray           # (n, 2) int64
    port: np.ndarray            # (n,) int64: the output port of an R line, -1 for an @ (deny) line
    where: list[str]            # "file:line" of each rule

    def __len__(self) -> int:
        return len(self.port)


_ACL_FIELDS = "<src>/<len> <dst>/<len> <sport_lo> : <sport_hi> <dport_lo> : <dport_hi> <proto>/<mask>"
_ACL_USAGE = {"@": "@" + _ACL_FIELDS, "R": "R" + _ACL_FIELDS + " <port>"}
_C_SPACE = " \t\n\v\f\r"                              # C isspace(): what makes a line blank
_ODD_SPACE = re.compile(r"[^\S \t]")                  # whitespace strtok(" \t\n") does not split on
# eight strtoul(..., 16) groups: optional 0x (only when a hex digit follows), digits, maybe none
_V6_GROUP = r"(?:0[xX](?=[0-9a-fA-F]))?([0-9a-fA-F]*)"
_V6_ADDR = re.compile(":".join([_V6_GROUP] * 8))


def _acl_v4_net(token: str, side: str, where: str) -> tuple[tuple[int], int]:
    addr, slash, length = token.partition("/")
    if not slash:
        raise SimError(f"{where}: missing '/<len>' in {side} {token!r} (expected <IPv4 address>/<0..32>)")
    if "/" in length:
        raise SimError(f"{where}: more than one '/' in {side} {token!r} (expected <IPv4 address>/<0..32>)")
    try:
        value = int.from_bytes(socket.inet_pton(socket.AF_INET, addr), "big")
    except (OSError, ValueError):
        raise SimError(f"{where}: bad IPv4 {side} address {addr!r} (expected a dotted quad a.b.c.d)") from None
    if not length:
        raise SimError(f"{where}: no prefix length after '/' in {side} {token!r} (expected <IPv4 address>/<0..32>)")
    return (value,), _c_number(length, f"{side} prefix length", 32, where)


def _acl_v6_net(token: str, side: str, where: str) -> tuple[tuple[int, int, int, int], int]:
    addr, slash, length = token.partition("/")
    if not slash:
        raise SimError(f"{where}: missing '/<len>' in {side} {token!r} (expected <IPv6 address>/<0..128>)")
    match = _V6_ADDR.fullmatch(addr)
    if match is None:
        groups = addr.split(":")
        if len(groups) != 8:
            shorthand = " ('::' shorthand is not accepted)" if "::" in addr else ""
            raise SimError(f"{where}: bad IPv6 {side} address {addr!r}: {len(groups)} ':'-separated groups"
                           f"{shorthand}, l3fwd's ACL parser wants exactly eight hex groups")
        bad = next(g for g in groups if not re.fullmatch(_V6_GROUP, g))
        raise SimError(f"{where}: bad IPv6 {side} address {addr!r}: group {bad!r} is not a hex number")
    words = [int(g, 16) if g else 0 for g in match.groups()]      # empty: strtoul reads 0
    if max(words) > 0xFFFF:
        text = match.group(1 + next(i for i, w in enumerate(words) if w > 0xFFFF))
        raise SimError(f"{where}: bad IPv6 {side} address {brief(addr)}: group {brief(text)} > 0xffff")
    value = (words[0] << 16 | words[1], words[2] << 16 | words[3], words[4] << 16 | words[5], words[6] << 16 | words[7])
    if not length:
        raise SimError(f"{where}: no prefix length after '/' in {side} {token!r} (expected <IPv6 address>/<0..128>)")
    return value, _c_number(length, f"{side} prefix length", 128, where)


def _acl_shape_error(lead: str, tokens: list[str], need: int, line: str, where: str):
    """Raise the error of a rule line whose tokens (comment removed) are not ``need``
    fields with ``:`` tokens in their places."""
    usage = _ACL_USAGE[lead]
    for token in tokens[2:8]:
        if ":" in token and token != ":":
            raise SimError(f"{where}: port range {token!r} must be written '<lo> : <hi>' "
                           f"with blanks around the ':'")
    if len(tokens) < need:
        raise SimError(f"{where}: missing fields ({len(tokens)} of {need}), expected {usage}")
    if len(tokens) > need:
        hint = " (deny lines take no port)" if lead == "@" and len(tokens) == need + 1 else ""
        raise SimError(f"{where}: trailing garbage {tokens[need]!r} after {usage}{hint}")
    for index, side in ((3, "source"), (6, "destination")):
        if tokens[index] != ":":
            raise SimError(f"{where}: expected ':' between the {side} port bounds, got {tokens[index]!r} "
                           f"(l3fwd wants '<lo> : <hi>' with blanks around the ':')")
    raise AssertionError(line)


def parse_acl_rules(path: Path, family: int) -> AclRules:
    """Parse a dpdk-l3fwd ACL rule file of IPv4 (``family=4``) or IPv6 (``family=6``) rules.

    Grammar and strictness: see the module docstring. The route port is any 32-bit
    number here; whether the port is enabled (``-p``) is checked by the caller."""
    if family not in FAMILIES:
        raise ValueError(f"family must be 4 or 6, not {family!r}")
    net = _acl_v4_net if family == 4 else _acl_v6_net
    lines = list(_text_lines(path))
    if not any(line[:1] == "R" for _, line in lines):
        raise SimError(f"{path}: no route ('R') line: l3fwd needs at least one in an ACL rule file "
                       f"(it exits with 'Not find any route entries')")
    name = f"{path}:"
    nets: dict[str, tuple] = {}                        # address tokens repeat: parse each once
    numbers: dict[str, int] = {}                       # so do numbers

    def number(token: str, what: str, limit: int) -> int:
        value = numbers.get(token)
        if value is None or value > limit:            # new, or too big for this field: say so
            value = numbers[token] = _c_number(token, what, limit, here)
        return value

    rows, where = [], []
    for lineno, line in lines:
        lead = line[:1]
        if lead == "#" or not line.strip(_C_SPACE):
            continue
        here = name + str(lineno)
        if lead not in ("@", "R"):
            raise SimError(f"{here}: ACL rule lines must start with '@' (deny) or 'R' (route) in column 0 "
                           f"(got {line.strip()[:40]!r})")
        body = line[1:]
        tokens = _fields(body, here)
        need = 10 if lead == "R" else 9
        if "#" in body:                               # a trailing comment, or a misplaced '#'
            tokens = tokens[:next((i for i, t in enumerate(tokens) if t.startswith("#")), len(tokens))]
        if len(tokens) != need or tokens[3] != ":" or tokens[6] != ":":
            _acl_shape_error(lead, tokens, need, line, here)
        src_tok, dst_tok, slo, _, shi, dlo, _, dhi, proto_tok = tokens[:9]
        src = nets.get(src_tok) or nets.setdefault(src_tok, net(src_tok, "source", here))
        dst = nets.get(dst_tok) or nets.setdefault(dst_tok, net(dst_tok, "destination", here))
        sport = number(slo, "source port", 0xFFFF), number(shi, "source port", 0xFFFF)
        dport = number(dlo, "destination port", 0xFFFF), number(dhi, "destination port", 0xFFFF)
        if sport[0] > sport[1]:
            raise SimError(f"{here}: bad source port range '{slo} : {shi}' (low > high)")
        if dport[0] > dport[1]:
            raise SimError(f"{here}: bad destination port range '{dlo} : {dhi}' (low > high)")
        proto, slash, mask = proto_tok.partition("/")
        if not slash:
            raise SimError(f"{here}: proto {proto_tok!r} has no mask (expected <proto>/<mask>, e.g. 6/0xff)")
        port = number(tokens[9], "port", 0xFFFFFFFF) if lead == "R" else -1
        rows.append((number(proto, "proto", 0xFF), number(mask, "proto mask", 0xFF),
                     *src[0], src[1], *dst[0], dst[1], *sport, *dport, port))
        where.append(here)
    width = 1 if family == 4 else 4
    table = np.array(rows, dtype=np.int64).reshape(len(rows), 2 * width + 9)
    s, d = 2, 3 + width                                # column of src, dst
    return AclRules(family, table[:, 0].copy(), table[:, 1].copy(),
                    table[:, s:s + width].copy(), table[:, s + width].copy(),
                    table[:, d:d + width].copy(), table[:, d + width].copy(),
                    table[:, d + width + 1:d + width + 3].copy(), table[:, d + width + 3:d + width + 5].copy(),
                    table[:, -1].copy(), where)
