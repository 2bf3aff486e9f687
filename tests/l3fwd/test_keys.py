"""Lookup keys as text (``l3fwd_sim.l3fwd.keys``): the documented spellings, the bytes a
parsed key puts where each table reads it, round trips on random frames and values
(IPv6 text checked against ``ipaddress``), and one-line errors for bad text."""
from __future__ import annotations

import ipaddress
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd.keys import TABLES, key_text, parse_key

LOOKUP_OF = {table: lookup for lookup, tables in TABLES.items() for table in tables}
PROTOCOL = {6: "tcp", 17: "udp"}


def v4_frame(proto, src, dst, sport, dport) -> bytes:
    head = bytearray(64)
    head[12:15] = b"\x08\x00\x45"
    head[23] = proto
    head[26:38] = struct.pack(">IIHH", src, dst, sport, dport)
    return bytes(head)


def v6_frame(proto, src, dst, sport, dport) -> bytes:
    head = bytearray(64)
    head[12:15] = b"\x86\xdd\x60"
    head[20] = proto
    head[22:58] = src.to_bytes(16, "big") + dst.to_bytes(16, "big") + struct.pack(">HH", sport, dport)
    return bytes(head)


@pytest.mark.parametrize("table, frame, text", [
    ("lpm4", v4_frame(17, 0, 0xC6120107, 0, 0), "198.18.1.7"),
    ("fib4", v4_frame(17, 0, 0xC6120107, 0, 0), "198.18.1.7"),
    ("lpm6", v6_frame(17, 0, 0x20010200000000010000000000000009, 0, 0), "2001:200:0:1::9"),
    ("fib6", v6_frame(17, 0, 0x20010200000000010000000000000009, 0, 0), "2001:200:0:1::9"),
    ("em4", v4_frame(17, 0xC6120001, 0xC6120000, 9, 9), "udp 198.18.0.1:9 > 198.18.0.0:9"),
    ("acl4", v4_frame(6, 0xC6120001, 0xC6120000, 1024, 80), "tcp 198.18.0.1:1024 > 198.18.0.0:80"),
    ("acl4", v4_frame(1, 0x0A000001, 0x0A000002, 0, 0), "1 10.0.0.1:0 > 10.0.0.2:0"),
    ("em6", v6_frame(17, 0x20010DB8 << 96 | 1, 0x20010DB8 << 96 | 2, 9, 53), "udp [2001:db8::1]:9 > [2001:db8::2]:53"),
    ("acl6", v6_frame(0, 0, 1, 65535, 0), "0 [::]:65535 > [::1]:0"),
])
def test_documented_spellings(table, frame, text):
    assert key_text(table, frame) == text
    parsed = parse_key(text, LOOKUP_OF[table])
    assert parsed.table == table and parsed.family == (4 if table.endswith("4") else 6)
    assert key_text(table, parsed.frame) == text


def test_key_text_reads_58_bytes_of_any_buffer():
    frame = v6_frame(6, 1, 2, 3, 4)[:58]
    assert key_text("em6", memoryview(frame)) == key_text("em6", bytearray(frame)) == "tcp [::1]:3 > [::2]:4"
    with pytest.raises(ValueError, match="unknown table"):
        key_text("lpm5", frame)


@pytest.mark.parametrize("text, lookup, ether_type, at, key", [
    ("198.18.1.7", "lpm", b"\x08\x00", 30, bytes([198, 18, 1, 7])),
    ("2001:200:0:1::9", "fib", b"\x86\xdd", 38, ipaddress.IPv6Address("2001:200:0:1::9").packed),
    ("udp 198.18.0.1:9 > 198.18.0.0:9", "em", b"\x08\x00", 23,
     bytes([17, 0, 0, 198, 18, 0, 1, 198, 18, 0, 0, 0, 9, 0, 9])),
    ("tcp [2001:db8::1]:1 > [2001:db8::2]:2", "acl", b"\x86\xdd", 20,
     b"\x06\x00" + ipaddress.IPv6Address("2001:db8::1").packed + ipaddress.IPv6Address("2001:db8::2").packed
     + b"\x00\x01\x00\x02"),
])
def test_parsed_frame_carries_the_key_where_the_table_reads_it(text, lookup, ether_type, at, key):
    frame = parse_key(text, lookup).frame
    assert len(frame) == 64 and frame[12:14] == ether_type
    assert frame[14] == (0x45 if ether_type == b"\x08\x00" else 0x60)
    assert frame[at:at + len(key)] == key
    assert frame[at + len(key):].strip(b"\0") == b"" and frame[15:at].strip(b"\0") == b""


def test_spelling_variants_are_accepted():
    assert parse_key("  UDP 1.2.3.4:009>5.6.7.8:0  ", "em") == parse_key("udp 1.2.3.4:9 > 5.6.7.8:0", "em")
    assert parse_key("17 1.2.3.4:9 > 5.6.7.8:0", "acl").frame == parse_key("udp 1.2.3.4:9 > 5.6.7.8:0", "acl").frame
    assert key_text("lpm6", parse_key("2001:0200:0000:0001:0000:0000:0000:0009", "lpm").frame) == "2001:200:0:1::9"
    assert key_text("lpm4", parse_key(" 10.0.0.1 ", "lpm").frame) == "10.0.0.1"


frames = st.binary(min_size=58, max_size=80)


@settings(max_examples=300, deadline=None)
@given(table=st.sampled_from(sorted(LOOKUP_OF)), frame=frames)
def test_text_of_the_parsed_text_is_the_text(table, frame):
    text = key_text(table, frame)
    parsed = parse_key(text, LOOKUP_OF[table])
    assert parsed.table == table
    assert key_text(table, parsed.frame) == text


@settings(max_examples=300, deadline=None)
@given(family=st.sampled_from([4, 6]), data=st.data(), proto=st.integers(0, 255),
       sport=st.integers(0, 65535), dport=st.integers(0, 65535), lookup=st.sampled_from(["em", "acl"]))
def test_five_tuples_round_trip(family, data, proto, sport, dport, lookup):
    bits = 32 if family == 4 else 128
    src, dst = data.draw(st.integers(0, 2**bits - 1)), data.draw(st.integers(0, 2**bits - 1))
    address = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    endpoint = "{}:{}" if family == 4 else "[{}]:{}"
    text = (f"{PROTOCOL.get(proto, proto)} {endpoint.format(address(src), sport)} > "
            f"{endpoint.format(address(dst), dport)}")
    parsed = parse_key(text, lookup)
    table = f"{lookup}{family}"
    assert parsed.table == table
    assert parsed.frame == (v4_frame if family == 4 else v6_frame)(proto, src, dst, sport, dport)
    assert key_text(table, parsed.frame) == text


@settings(max_examples=300, deadline=None)
@given(address=st.integers(0, 2**128 - 1), lookup=st.sampled_from(["lpm", "fib"]))
def test_ipv6_text_is_ipaddress_compressed_text(address, lookup):
    frame = v6_frame(0, 0, address, 0, 0)
    text = key_text(f"{lookup}6", frame)
    assert text == str(ipaddress.IPv6Address(address)) == ipaddress.IPv6Address(address).compressed
    assert parse_key(text, lookup).frame == parse_key(ipaddress.IPv6Address(address).exploded, lookup).frame


@settings(max_examples=200, deadline=None)
@given(address=st.integers(0, 2**32 - 1))
def test_ipv4_text_is_ipaddress_text(address):
    assert key_text("fib4", v4_frame(0, 0, address, 0, 0)) == str(ipaddress.IPv4Address(address))


@pytest.mark.parametrize("text, lookup, message", [
    ("300.1.1.1", "lpm", "lookup key '300.1.1.1': not an IPv4 or IPv6 address"),
    ("", "fib", "lookup key '': not an IPv4 or IPv6 address"),
    ("fe80::1%eth0", "lpm", "not an IPv4 or IPv6 address"),
    ("udp 1.1.1.1:9 > 2.2.2.2:9", "lpm", "5-tuples are for --lookup em and acl"),
    ("198.18.0.1", "em", '--lookup em needs a 5-tuple like "udp 198.18.0.1:9 > 198.18.0.0:9"'),
    ("udp 1.1.1.1:9", "acl", "--lookup acl needs a 5-tuple like"),
    ("icmp 1.1.1.1:0 > 2.2.2.2:0", "em", "protocol 'icmp' is not tcp, udp or a number 0..255"),
    ("256 1.1.1.1:0 > 2.2.2.2:0", "em", "protocol '256' is not in 0..255"),
    ("-1 1.1.1.1:0 > 2.2.2.2:0", "em", "protocol '-1' is not tcp, udp"),
    ("udp 1.1.1.1:65536 > 2.2.2.2:0", "em", "source port '65536' is not in 0..65535"),
    ("udp 1.1.1.1:0 > 2.2.2.2:0x10", "acl", "destination port '0x10' is not a decimal number"),
    ("udp 1.1.1.1:0 > 2.2.2.2:", "acl", "destination port '' is not a decimal number"),
    ("udp 1.1.1.1 > 2.2.2.2:0", "em", "the source '1.1.1.1' is not ADDRESS:PORT"),
    ("udp 2001:db8::1:9 > [::1]:0", "em", "an IPv6 address goes in brackets"),
    ("udp [1.1.1.1]:9 > 2.2.2.2:0", "em", "the source address '[1.1.1.1]' is not an IPv6 address"),
    ("udp 1.1.1.256:9 > 2.2.2.2:0", "em", "the source address '1.1.1.256' is not an IPv4 address"),
    ("udp 1.1.1.1:9 > [::1]:0", "acl", "the source is IPv4 but the destination IPv6"),
])
def test_bad_keys_are_one_line_errors_naming_the_key(text, lookup, message):
    with pytest.raises(SimError) as err:
        parse_key(text, lookup)
    assert message in str(err.value)
    assert "\n" not in str(err.value) and str(err.value).startswith("lookup key ")


def test_absurd_numbers_and_keys_are_refused_before_int_reads_them():
    for digits in ("9" * 100_000, "0" * 100_000 + "1" * 6):
        with pytest.raises(SimError, match="is not in 0..65535") as err:
            parse_key(f"udp 1.1.1.1:{digits} > 2.2.2.2:0", "em")
        assert len(str(err.value)) < 300
    with pytest.raises(SimError, match=r"is not in 0\.\.255"):
        parse_key(f"{'7' * 100_000} 1.1.1.1:0 > 2.2.2.2:0", "acl")
    assert parse_key(f"udp 1.1.1.1:{'0' * 100_000}7 > 2.2.2.2:0", "em") == parse_key("udp 1.1.1.1:7 > 2.2.2.2:0", "em")
    with pytest.raises(SimError) as err:
        parse_key("1.1.1.1" * 10_000, "lpm")
    assert len(str(err.value)) < 300 and "\n" not in str(err.value)


def test_unknown_lookup_method():
    with pytest.raises(SimError, match="--lookup lpm6: not supported"):
        parse_key("1.1.1.1", "lpm6")
