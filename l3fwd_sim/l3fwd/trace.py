"""What an l3fwd trace line says beyond the port's part (:mod:`l3fwd_sim.dataplane.trace`):
the packet type the path gave the packet, the table and key it looked up, the rule
that decided (file and line, from the table's own rule ids) and the next hop, and for
a drop what failed — or, for a packet sent back out of its input port without a next hop
(a lookup miss; a packet the path does not look up: the multi path's non-IP frames, EM's
non-TCP/UDP packets), why.

Everything is read from the records: the header bytes kept before the pipeline edited
them, and the lookups' answers the stages noted (:class:`~l3fwd_sim.dataplane.hits.Decisions`).
Packet types and the frame lengths a path needs come from :mod:`.ptype`, the RFC 1812
wording from :mod:`.rfc1812`: nothing here decides anything again.
"""
from __future__ import annotations

import numpy as np

from .. import compiled
from ..dataplane.jsonlines import Lines, distinct, pool, quoted
from ..dataplane.rx import MBUF_DATA_ROOM
from ..dataplane.trace import SNAPSHOT_FROM, SNAPSHOT_TO, Describe, Records
from . import ptype, rfc1812, twins
from .keys import ADDRESS_BYTES, DESTINATION_AT, FIVE_TUPLE_AT, key_text
from .keys import TABLE_NAMES

TABLES = TABLE_NAMES                      # lpm4, lpm6, fib4, ... acl6: a table's code is 1 + its index

# Packet type names: lpm_parse_ptype's classes (lpm, fib, acl) and em_parse_ptype's (em).
LPM_PTYPES = ("unknown", "ipv4", "ipv6")
EM_PTYPES = ("unknown", "ipv4", "ipv4_ext", "ipv6", "ipv6_ext")
_OCTETS = pool([str(octet) for octet in range(256)]).view(np.uint32)[:, 0]        # "0".."255" as 4-byte words
_OCTETS_DOT = pool([f"{octet}." for octet in range(256)]).view(np.uint32)[:, 0]   # "0.".."255."
_QUOTE = pool(['"']).view(np.uint32)[0, 0]


def describe(lookup: str, routes, reasons: tuple[str, ...]) -> Describe:
    """The l3fwd part of the trace lines of a run with ``--lookup lookup`` over ``routes``."""
    files = getattr(routes, "files", {})
    rule_open = ["", *(f'{{"file":{quoted(files.get(4 if name.endswith("4") else 6, "?"))},"line":'
                       for name in TABLES)]

    def middle(records: Records, lines: Lines) -> None:
        heads = frame_heads(records["head"])
        table = records["table"]
        if lookup == "em":
            lines.text('"ptype":')
            lines.choice([quoted(name) for name in EM_PTYPES], ptype.em_ptype_bulk(heads)[0])
        else:
            lines.text('"ptype":')
            lines.choice([quoted(name) for name in LPM_PTYPES], ptype.lpm_ptype_bulk(heads))
        lines.text(',"table":')
        lines.choice(["null", *map(quoted, TABLES)], table)
        lines.text(',"key":')
        lines.block(key_block(table, heads))
        lines.text(',"rule":')
        has_rule = records["rule"] >= 0
        lines.choice(rule_open, np.where(has_rule, table, 0))
        lines.number(records["rule"])
        lines.choice(["", "}"], has_rule.astype(np.intp))
        lines.text(',"next_hop":')
        lines.number(records["next_hop"])

    def detail(records: Records) -> tuple[list[str], np.ndarray]:
        return details(records, lookup, reasons)

    def decision(records: Records) -> tuple[list[str], np.ndarray]:
        """``lpm4 routes/lpm_default_v4.cfg:5`` (the rule's line), ``lpm4 miss`` or
        ``no lookup``, each distinct one written once."""
        keys = records["table"].astype(np.int64) << 40 | (records["rule"] + 1)
        first, codes = distinct(keys.view(np.uint8).reshape(-1, 8))
        texts = []
        for case in keys[first].tolist():  # (table code, rule id + 1): a rule id is a line number, < 2^40
            code, line = case >> 40, (case & (1 << 40) - 1) - 1
            table = TABLES[code - 1]
            texts.append("no lookup" if code == 0 else f"{table} miss" if line < 0 else
                         f"{table} {files.get(4 if table.endswith('4') else 6, '?')}:{line}")
        return texts, codes.reshape(-1)

    return Describe(middle, detail, reasons, TABLES, decision)


def frame_heads(head: np.ndarray) -> np.ndarray:
    """Records' kept header bytes (their ``head``) at their frame offsets (zeros before them)."""
    heads = np.zeros((len(head), SNAPSHOT_TO), np.uint8)
    heads[:, SNAPSHOT_FROM:] = head
    return heads


def key_block(table: np.ndarray, heads: np.ndarray) -> np.ndarray:
    """The key column: ``null`` without a lookup, else the key as a JSON string (IPv4
    destinations assembled from octet texts, other keys written once per distinct key
    by :func:`~l3fwd_sim.l3fwd.keys.key_text`). The compiled twin (``trace.c``) writes
    every key itself, in key_text's spelling."""
    if compiled.enabled():
        texts, width, longest = twins.key_texts(np.ascontiguousarray(table), heads, _KEY_KINDS)
        return texts.reshape(len(table), width)[:, :-(-longest // 4) * 4]
    n = len(table)
    texts: dict[int, tuple[np.ndarray, np.ndarray]] = {}       # table code -> (rows, their NUL-padded texts)
    for code in np.unique(table).tolist():
        rows = np.flatnonzero(table == code)
        if code == 0:
            texts[code] = rows, np.broadcast_to(pool(["null"]), (len(rows), 4))
        elif TABLES[code - 1] in ("lpm4", "fib4"):
            texts[code] = rows, _ipv4_text(heads[rows, 30:34])
        else:
            first, inverse = distinct(np.concatenate([heads[rows, start:end]        # the key's bytes only
                                                      for start, end in _key_spans(TABLES[code - 1])], axis=1))
            table_texts = pool([quoted(key_text(TABLES[code - 1], bytes(frame))) for frame in heads[rows[first]]])
            texts[code] = rows, table_texts[inverse]
    block = np.zeros((n, -(-max(t.shape[1] for _, t in texts.values()) // 4) * 4), np.uint8)
    for rows, text in texts.values():
        block[rows, :text.shape[1]] = text
    return block


def _key_kind(table: str) -> int:
    """``trace.c``'s kind of ``table``'s key: 1 an IPv4 destination, 2 an IPv6 one, 3 an
    IPv4 5-tuple, 4 an IPv6 one (0, no lookup, has no table)."""
    return (1 if table.endswith("4") else 2) + (0 if table.startswith(("lpm", "fib")) else 2)


_KEY_KINDS = bytes([0, *map(_key_kind, TABLES)])          # by table code


def _key_spans(table: str) -> list[tuple[int, int]]:
    """The frame byte ranges ``table``'s key is read from (:mod:`.keys`)."""
    family = 4 if table.endswith("4") else 6
    if table.startswith(("lpm", "fib")):
        return [(DESTINATION_AT[family], DESTINATION_AT[family] + ADDRESS_BYTES[family])]
    proto_at, source_at, _, ports_at = FIVE_TUPLE_AT[family]
    return [(proto_at, proto_at + 1), (source_at, ports_at + 4)]


def _ipv4_text(addresses: np.ndarray) -> np.ndarray:
    """``"a.b.c.d"`` of each row of 4 address bytes, NUL-padded: six 4-byte words (the
    quotes and four octet texts), written a word column at a time."""
    words = np.zeros((len(addresses), 6), np.uint32)
    words[:, 0] = words[:, 5] = _QUOTE
    for i in range(3):
        words[:, 1 + i] = _OCTETS_DOT[addresses[:, i]]
    words[:, 4] = _OCTETS[addresses[:, 3]]
    return words.view(np.uint8)


SENT_BACK = "sent back out of the input port"
MISS_DETAIL = f"no matching rule: {SENT_BACK}"


def details(records: Records, lookup: str, reasons: tuple[str, ...]) -> tuple[list[str], np.ndarray]:
    """What failed, per record: (texts, code per record: 0 for none, else 1 + its
    text's index). A drop says what failed; a packet sent back out of its input port
    without a next hop says why: a miss (``no matching rule: sent back out of the input
    port``), or no lookup at all (the multi path's non-IP frames, EM's non-TCP/UDP
    packets: ``EtherType 0x0806 is neither IPv4 nor IPv6: sent back out of the input
    port``). A packet sent to its next hop has none. Each distinct case is written once."""
    reason = records["reason"]
    sent = reason == 0
    no_lookup = sent & (records["table"] == 0)
    missed = sent & ~no_lookup & (records["rule"] < 0)
    rows = np.flatnonzero(~sent | no_lookup)
    codes = np.zeros(len(records), np.intp)
    texts: list[str] = []
    if len(rows):
        heads = frame_heads(records["head"][rows])
        cases = np.column_stack([
            no_lookup[rows], reason[rows], records["caplen"][rows], ptype.needed_bytes(lookup, heads),
            heads[:, 12].astype(np.int64) << 8 | heads[:, 13],            # EtherType
            heads[:, 14], heads[:, 16].astype(np.int64) << 8 | heads[:, 17], heads[:, 23], heads[:, 20]])
        back = no_lookup[rows]                        # what a sent packet's detail does not read:
        cases[back, 1:4] = 0                          # the reason and lengths; the IP fields of
        ipv4, ipv6 = cases[:, 4] == ptype.ETHER_TYPE_IPV4, cases[:, 4] == ptype.ETHER_TYPE_IPV6
        cases[back & ~ipv4 & ~ipv6, 5:] = 0           # a non-IP frame, those of another version
        cases[back & ipv4, 6] = 0
        cases[back & ipv4, 8] = 0
        cases[back & ipv6, 5:8] = 0
        first, inverse = distinct(cases)
        texts = [_sent_detail(*case[4:]) if case[0] else _detail(reasons[case[1] - 1], *case[2:])
                 for case in cases[first].tolist()]
        codes[rows] = 1 + inverse
    if missed.any():                                  # one text for every miss
        texts.append(MISS_DETAIL)
        codes[missed] = len(texts)
    return texts, codes


def _sent_detail(ether_type: int, version_ihl: int, total_length: int, proto4: int, next_header: int) -> str:
    """Why a packet sent back out of its input port was not looked up: not IP (the multi
    path; the simple path drops it, D1), or in em mode not TCP/UDP (D2–D4)."""
    if ether_type in (ptype.ETHER_TYPE_IPV4, ptype.ETHER_TYPE_IPV6):
        why = _detail("not_tcp_udp", 0, 0, ether_type, version_ihl, total_length, proto4, next_header)
    else:
        why = _detail("unknown_ptype", 0, 0, ether_type, version_ihl, total_length, proto4, next_header)
    return f"{why}: {SENT_BACK}"


def _detail(reason: str, caplen: int, need: int, ether_type: int, version_ihl: int, total_length: int,
            proto4: int, next_header: int) -> str | None:
    if reason == "truncated":
        return f"frame {caplen} < {need} bytes"
    if reason == "oversize":
        return f"frame {caplen} > {MBUF_DATA_ROOM} bytes (one mbuf, no RX scatter)"
    if reason == "rfc1812_invalid":
        return rfc1812.explain(version_ihl, total_length, caplen)
    if reason == "unknown_ptype":
        return f"EtherType 0x{ether_type:04x} is neither IPv4 nor IPv6"
    if reason == "not_tcp_udp":
        if ether_type == ptype.ETHER_TYPE_IPV6:
            return f"next header {next_header} is not TCP or UDP"
        if version_ihl & 0x0F != 5:
            return f"IPv4 options (IHL {version_ihl & 0x0F})"
        return f"protocol {proto4} is not TCP or UDP"
    if reason == "acl_deny":
        return "the first matching rule is a deny (@) line"
    if reason == "acl_miss":
        return "no ACL rule matches"
    return None
