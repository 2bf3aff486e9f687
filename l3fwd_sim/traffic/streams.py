"""Streams (what ``generate`` sends on each port) and the TOML stream file that defines them.

The model follows TRex's STL streams (a scapy template + a field-engine program + a
packet count; ``next`` chains them in sequence) and Pktgen's sequence mode: per input
port, an ordered list of streams and how their packets interleave:

* ``sequence``     -- all packets of the first stream, then the second, ... (TRex ``next``);
* ``round-robin``  -- ``group`` packets of each stream in turn; a stream that has sent all
  its packets drops out (the 2014 ``4STREAMSX8`` pattern is 4 streams, group 8);
* ``random``       -- the packets of all streams in a seeded random order (counts kept).

Stream file (Python 3.11 ``tomllib``, no extra dependency)::

    seed = 1                      # optional: random fields, sizes and order
    rate = 1000000                # optional: packets per second on each port
    order = "round-robin"         # sequence (default) | round-robin | random
    group = 8                     # round-robin group size (default 1)

    [[stream]]
    name = "to-port1"
    ports = [0, 2]                # input ports that send it (default [0])
    count = 1000                  # packets per port
    size = 64                     # on the wire: N | "A-B" | "imix" | {op, min, max, step}
    payload = "x"                 # fill after the headers (or payload_hex = "00ff")
    eth = { dst = "02:70:63:61:70:00" }
    ipv4 = { src = "198.18.1.1", dst = "198.18.1.0", ttl = 64 }
    udp = { sport = 9, dport = 9 }

    [[stream.vary]]               # TRex STLVmFlowVar + STLVmWrFlowVar
    field = "ipv4.dst"
    op = "inc"                    # inc | dec | random
    min = "198.18.1.0"
    max = "198.18.1.255"
    step = 1

Every error names ``file:line`` (tomllib's own errors carry line and column; for the
others the line of the offending key is found by scanning the text).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..dataplane.ports import MAX_PORTS
from ..errors import SimError
from ..numbers import brief
from .field_engine import OPS, FieldVar, SizeSpec, parse_size, size_var
from .field_values import FieldError, parse_field_value
from .templates import LAYERS, VARIABLE_FIELDS, Template, build_stack, default_eth, template_from_scapy

ORDERS = ("sequence", "round-robin", "random")
DEFAULT_RATE = 1_000_000.0
# Packets per port: a pcap record takes at least 76 bytes (16 + a 60-byte frame), so 2**48
# packets are over 21 PB in one file, more than any disk holds; within it every position,
# offset and timestamp computation stays exact in int64 and float64.
MAX_COUNT = 1 << 48
# pcap time stamps have nanosecond resolution at best: packets less than 1 ns apart would
# get equal time stamps.
MAX_RATE = 1e9
MIN_RATE = 1 / (1 << 32)                    # one packet per 2**32 s (136 years): a period a time stamp holds
MAX_SEED = (1 << 64) - 1
_INT64 = (-(1 << 63), (1 << 63) - 1)        # TOML integers: a parser must refuse any beyond
_TOP_KEYS = ("seed", "rate", "order", "group", "stream")
_STREAM_KEYS = ("name", "port", "ports", "count", "size", "payload", "payload_hex", "vary") + LAYERS
_VARY_KEYS = ("field", "op", "min", "max", "step", "init")


@dataclass
class Variants:
    """Many streams in one (``generate random``'s one flow per route, per EM flow or per
    ACL line: up to millions): the same template, each variant with its own values of a
    few header fields. Variant k sends ``counts[k]`` packets carrying ``values[f][k]`` in
    field f; the port's order interleaves the variants exactly as it would streams of
    their own, so rendering them as one changes no byte. They have no field variables;
    sizes come from the port (patterns) or are drawn for the stream as a whole."""
    counts: np.ndarray                    # int64 (K,) packets per variant
    values: dict[str, np.ndarray]         # field ("ipv4.dst", "udp.sport") -> (K, width) uint8, network order
    names: list[str] | None = None        # per variant, for the summary; None: counted under the stream's name

    def __len__(self) -> int:
        return len(self.counts)


@dataclass
class Stream:
    """One stream on one port: a template, how many packets, their sizes and varying
    fields, or with ``variants`` many streams that share the template."""
    name: str
    template: Template
    count: int
    size: SizeSpec
    fields: list[tuple[str, FieldVar]] = field(default_factory=list)
    variants: Variants | None = None

    def packets_by_name(self) -> list[tuple[str, int]]:
        """(name, packets) for the summary: the stream's, or each named variant's."""
        if self.variants is None or self.variants.names is None:
            return [(self.name, self.count)]
        return list(zip(self.variants.names, self.variants.counts.tolist()))


@dataclass
class PortTraffic:
    """The streams one input port sends, and how their packets interleave. ``size``, when
    set, gives the sizes by position on the port (patterns), overriding the streams'."""
    streams: list[Stream]
    order: str = "sequence"
    group: int = 1
    size: SizeSpec | None = None

    @property
    def count(self) -> int:
        return sum(s.count for s in self.streams)


@dataclass
class Traffic:
    ports: dict[int, PortTraffic]
    seed: int = 1
    rate: float = DEFAULT_RATE
    warnings: list[str] = field(default_factory=list)
    rate_from: str = "--rate"             # the option or file:line the rate came from, for errors
    source: str = "--count"               # what the counts came from, for errors


def check_rate(rate, what: str) -> float:
    """A packet rate as a float, or SimError naming ``what`` (``--rate``, ``file:line: rate``)."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not MIN_RATE <= rate <= MAX_RATE:  # nan too
        raise SimError(f"{what} {rate!r} is not a packet rate: give packets per second from {MIN_RATE:.2g} (one "
                       f"packet per 2**32 s) to {MAX_RATE:,.0f} (pcap time stamps resolve 1 ns)")
    return float(rate)


# --------------------------------------------------------------------------------------
# Locating keys in the TOML text (tomllib reports no positions for valid documents)
# --------------------------------------------------------------------------------------
_BARE = r"[A-Za-z0-9_-]+"
_KEY_PATH = rf"(?:{_BARE}|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:{_BARE}|\"[^\"]*\"|'[^']*'))*"
_ARRAY_HEADER = re.compile(rf"\s*\[\[\s*({_KEY_PATH})\s*\]\]\s*(?:#.*)?$")
_TABLE_HEADER = re.compile(rf"\s*\[\s*({_KEY_PATH})\s*\]\s*(?:#.*)?$")
_ASSIGN = re.compile(rf"\s*({_KEY_PATH})\s*=")
_INLINE_ASSIGN = re.compile(rf"({_BARE})\s*=")


def _split_key(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in re.findall(rf"{_BARE}|\"[^\"]*\"|'[^']*'", text))


class KeyLines:
    """Line number of every table header and key of a TOML document, by key path; arrays
    of tables get their index in the path (``("stream", 1, "vary", 0, "min")``)."""

    def __init__(self, text: str):
        self.lines: dict[tuple, int] = {}
        counts: dict[tuple, int] = {}
        current: tuple = ()
        for lineno, line in enumerate(text.splitlines(), 1):
            if match := _ARRAY_HEADER.match(line):
                parts = _split_key(match.group(1))
                array = self._resolve(parts[:-1], counts) + parts[-1:]
                counts[array] = counts.get(array, 0) + 1
                current = array + (counts[array] - 1,)
                self.lines.setdefault(array, lineno)
                self.lines[current] = lineno
            elif match := _TABLE_HEADER.match(line):
                current = self._resolve(_split_key(match.group(1)), counts)
                self.lines.setdefault(current, lineno)
            elif match := _ASSIGN.match(line):
                key = current + _split_key(match.group(1))
                self.lines[key] = lineno
                rest = line[match.end():].lstrip()
                if rest.startswith("{"):
                    for inner in _INLINE_ASSIGN.finditer(rest):
                        self.lines.setdefault(key + (inner.group(1),), lineno)

    @staticmethod
    def _resolve(parts: tuple, counts: dict) -> tuple:
        path: tuple = ()
        for part in parts:
            path += (part,)
            if path in counts:
                path += (counts[path] - 1,)
        return path

    def line(self, path: tuple) -> int | None:
        """The line of ``path`` or of its nearest enclosing key or table."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = path[:-1]
        return None


# --------------------------------------------------------------------------------------
# Stream file
# --------------------------------------------------------------------------------------
class _File:
    """Typed access to the parsed document with ``file:line`` errors."""

    def __init__(self, path: Path, text: str):
        self.path = path
        self.where = KeyLines(text)

    def fail(self, key_path: tuple, message: str):
        line = self.where.line(key_path)
        location = f"{self.path}:{line}" if line else f"{self.path}"
        raise SimError(f"{location}: {message}")

    def check_integers(self, node, path: tuple = ()) -> None:
        """Refuse integers beyond 64 bits, as the TOML spec asks a parser to (tomllib takes any)."""
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            if isinstance(value, (dict, list)):
                self.check_integers(value, path + (key,))
            elif isinstance(value, int) and not isinstance(value, bool) and not _INT64[0] <= value <= _INT64[1]:
                name = next(k for k in reversed(path + (key,)) if isinstance(k, str))
                hint = "; write a larger bound as a string" if name in ("min", "max", "init") else ""
                self.fail(path + (key,), f"{name}: integer {brief(str(value))} does not fit in 64 bits "
                                         f"(TOML integers are 64-bit{hint})")

    def check_keys(self, table: dict, allowed: tuple, path: tuple, what: str) -> None:
        for key in table:
            if key not in allowed:
                self.fail(path + (key,), f"{what}: unknown key {key!r} (expected one of: {', '.join(allowed)})")

    def integer(self, table: dict, key: str, path: tuple, what: str, low: int, high: int | None = None,
                default=None) -> int:
        if key not in table:
            if default is None:
                self.fail(path, f"{what}: {key} is required")
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
            bounds = f"{low}..{high}" if high is not None else f">= {low}"
            self.fail(path + (key,), f"{what}: {key} must be an integer {bounds} (got {value!r})")
        return value


def load_stream_file(path: str | Path, seed: int | None = None, rate: float | None = None) -> Traffic:
    """Parse a stream file into per-port traffic. ``seed``/``rate`` override the file's."""
    try:
        import tomllib
    except ImportError:      # Python 3.10: the package allows it, stream files need 3.11
        raise SimError("stream files need Python 3.11 or later (tomllib)") from None
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise SimError(f"{path}: cannot read stream file: {err.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        message = str(err)
        found = re.search(r"\(at line (\d+), column (\d+)\)", message)
        if found:
            message = message[:found.start()].strip()
            raise SimError(f"{path}:{found.group(1)}:{found.group(2)}: {message}") from None
        raise SimError(f"{path}: {message}") from None
    except ValueError:       # tomllib's int() of more than 4300 digits (Python's limit) is not a TOMLDecodeError
        long_number = re.search(r"[0-9][0-9_]{4300,}", text)
        line = f":{text.count(chr(10), 0, long_number.start()) + 1}" if long_number else ""
        raise SimError(f"{path}{line}: a number of more than 4300 digits (TOML integers are 64-bit)") from None
    f = _File(path, text)
    f.check_integers(doc)
    f.check_keys(doc, _TOP_KEYS, (), "stream file")
    file_seed = f.integer(doc, "seed", (), "stream file", 0, MAX_SEED, default=1)
    rate_from = "--rate"
    if rate is None:
        rate_from = f"{path}:{f.where.line(('rate',))}: rate" if "rate" in doc else "the default rate"
        try:
            rate = check_rate(doc.get("rate", DEFAULT_RATE), "rate")
        except SimError as err:
            f.fail(("rate",), str(err))
    order = doc.get("order", "sequence")
    if order not in ORDERS:
        f.fail(("order",), f"order {order!r} is not one of {', '.join(ORDERS)}")
    group = f.integer(doc, "group", (), "stream file", 1, MAX_COUNT, default=1)
    streams = doc.get("stream")
    if not isinstance(streams, list) or not streams:
        f.fail(("stream",), "no [[stream]] tables: a stream file defines at least one stream")

    traffic = Traffic({}, seed if seed is not None else file_seed, float(rate), rate_from=rate_from,
                      source=str(path))
    for index, table in enumerate(streams):
        if not isinstance(table, dict):                # stream = [1, "a"]: an array, but not of tables
            f.fail(("stream", index), f"stream #{index}: each [[stream]] must be a table, not {type(table).__name__}")
        for port, stream in _streams(f, table, ("stream", index), index):
            traffic.ports.setdefault(port, PortTraffic([], order, group)).streams.append(stream)
    return traffic


def _streams(f: _File, table: dict, path: tuple, index: int):
    """(port, Stream) for every port the stream table is sent on."""
    name = table.get("name", f"stream{index}")
    what = f"stream {name!r}"
    if not isinstance(name, str):
        f.fail(path + ("name",), f"stream #{index}: name must be a string")
    f.check_keys(table, _STREAM_KEYS, path, what)
    ports = _ports(f, table, path, what)
    count = f.integer(table, "count", path, what, 0, MAX_COUNT)
    size = _size(f, table.get("size", 64), path + ("size",), what)
    fill = _payload(f, table, path, what)
    layers = {}
    for layer in LAYERS:
        if layer in table:
            if not isinstance(table[layer], dict):
                f.fail(path + (layer,), f"{what}: {layer} must be a table of header fields")
            layers[layer] = table[layer]
    if "ipv4" not in layers and "ipv6" not in layers:
        f.fail(path, f"{what}: needs an ipv4 or ipv6 header table (l3fwd forwards IP only)")
    for port in ports:
        per_port = {**layers, "eth": {**default_eth(port), **layers.get("eth", {})}}
        try:
            template = template_from_scapy(build_stack(per_port), fill)
        except FieldError as err:
            f.fail(path + err.path, f"{what}: {err}")
        fields = _vary(f, table.get("vary", []), path + ("vary",), what, template)
        yield port, Stream(name, template, count, size, fields)


def _ports(f: _File, table: dict, path: tuple, what: str) -> list[int]:
    if "port" in table and "ports" in table:
        f.fail(path + ("ports",), f"{what}: give port or ports, not both")
    value = table.get("ports", table.get("port", [0]))
    key = "ports" if "ports" in table else "port"
    values = value if isinstance(value, list) else [value]
    if not values or any(isinstance(p, bool) or not isinstance(p, int) or not 0 <= p < MAX_PORTS for p in values):
        f.fail(path + (key,), f"{what}: {key} must be port numbers in 0..{MAX_PORTS - 1} (got {value!r})")
    if len(set(values)) != len(values):
        f.fail(path + (key,), f"{what}: {key} lists a port twice")
    return values


def _size(f: _File, value, path: tuple, what: str) -> SizeSpec:
    var = _field_var(f, value, path, what, "int", None) if isinstance(value, dict) else None   # fails located
    try:
        return size_var(var, what) if var else parse_size(value, what)
    except SimError as err:
        f.fail(path, str(err))


def _payload(f: _File, table: dict, path: tuple, what: str) -> bytes:
    if "payload" in table and "payload_hex" in table:
        f.fail(path + ("payload_hex",), f"{what}: give payload or payload_hex, not both")
    if "payload_hex" in table:
        try:
            fill = bytes.fromhex(table["payload_hex"])
        except (TypeError, ValueError):
            f.fail(path + ("payload_hex",), f"{what}: payload_hex must be hex digits (got {table['payload_hex']!r})")
    else:
        value = table.get("payload", "x")
        if not isinstance(value, str):
            f.fail(path + ("payload",), f"{what}: payload must be a string")
        fill = value.encode()
    if not fill:
        f.fail(path + ("payload",), f"{what}: the payload fill pattern is empty")
    return fill


def _field_var(f: _File, table: dict, path: tuple, what: str, kind: str, limit: int | None) -> FieldVar:
    f.check_keys(table, _VARY_KEYS[1:], path, what)
    op = table.get("op", "inc")
    if not isinstance(op, str) or op not in OPS:
        f.fail(path + ("op",), f"{what}: op {op!r} is not one of {', '.join(OPS)}")
    for key in ("min", "max"):
        if key not in table:
            f.fail(path, f"{what}: {key} is required")
    bounds = {}
    for key in ("min", "max", "init"):
        if key in table:
            try:
                bounds[key] = parse_field_value(kind, table[key], f"{what}: {key}", limit if limit is not None
                                                else _INT64[1])
            except SimError as err:
                f.fail(path + (key,), str(err))
    step = f.integer(table, "step", path, what, 1, default=1)
    var = FieldVar(op, bounds["min"], bounds["max"], step, bounds.get("init"))
    init = bounds.get("init")
    culprit = "init" if init is not None and not var.min <= init <= var.max else "max"
    try:
        var.check(what)
    except SimError as err:
        f.fail(path + (culprit,), str(err))
    return var


def _vary(f: _File, entries, path: tuple, what: str, template: Template) -> list[tuple[str, FieldVar]]:
    if not isinstance(entries, list):
        f.fail(path, f"{what}: vary must be an array of tables ([[stream.vary]])")
    fields = []
    for index, entry in enumerate(entries):
        entry_path = path + (index,)
        if not isinstance(entry, dict):
            f.fail(entry_path, f"{what}: each vary entry must be a table")
        name = entry.get("field")
        if not isinstance(name, str) or name not in VARIABLE_FIELDS:       # a list or table is no field name
            f.fail(entry_path + ("field",), f"{what}: field {name!r} cannot be varied "
                                            f"(choose from {', '.join(VARIABLE_FIELDS)})")
        slot = template.slots.get(name)
        if slot is None:
            f.fail(entry_path + ("field",), f"{what}: field {name!r} is not in this stream's headers")
        if any(name == other for other, _ in fields):
            f.fail(entry_path + ("field",), f"{what}: field {name!r} is varied twice")
        rest = {k: v for k, v in entry.items() if k != "field"}
        fields.append((name, _field_var(f, rest, entry_path, f"{what}: {name}", slot.kind, slot.limit)))
    return fields
