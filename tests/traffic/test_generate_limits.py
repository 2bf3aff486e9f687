"""`generate` refuses what it cannot write faithfully: header values wider than their
field (scapy would truncate them silently), absurd counts, rates and integers, and says
so in one line naming the file, line and field, in the user's terms (no scapy internals).

Oracles: the field widths are written out here from the standards (IEEE 802.1Q, RFC 791,
8200, 768, 793, 792, 4443), independently of scapy's field descriptions; what is
accepted is read back from the pcap by scapy.
"""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from refusals import BIG, assert_refused
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Dot1Q, Ether
from scapy.utils import rdpcap

from l3fwd_sim import SimError
from l3fwd_sim.traffic.generate import GenerateOptions, generate
from l3fwd_sim.traffic.templates import COMPUTED, LAYERS

# (layer, field) -> (bits, the other header values the field needs to be in the header)
V4, V6 = {"ipv4": {}}, {"ipv6": {}}
WIDTHS = {
    ("vlan", "prio"): (3, V4), ("vlan", "dei"): (1, V4), ("vlan", "vlan"): (12, V4),
    ("ipv4", "tos"): (8, {}), ("ipv4", "id"): (16, {}), ("ipv4", "flags"): (3, {}), ("ipv4", "frag"): (13, {}),
    ("ipv4", "ttl"): (8, {}), ("ipv4", "proto"): (8, {}),
    ("ipv6", "tc"): (8, {}), ("ipv6", "fl"): (20, {}), ("ipv6", "nh"): (8, {}), ("ipv6", "hlim"): (8, {}),
    ("udp", "sport"): (16, V4), ("udp", "dport"): (16, V4),
    ("tcp", "sport"): (16, V4), ("tcp", "dport"): (16, V4), ("tcp", "seq"): (32, V4), ("tcp", "ack"): (32, V4),
    ("tcp", "reserved"): (3, V4), ("tcp", "flags"): (9, V4), ("tcp", "window"): (16, V4),
    ("tcp", "urgptr"): (16, V4),
    ("icmp", "type"): (8, V4), ("icmp", "code"): (8, V4), ("icmp", "id"): (16, V4), ("icmp", "seq"): (16, V4),
    ("icmp", "ts_ori"): (32, {**V4, "icmp": {"type": 13}}), ("icmp", "ts_rx"): (32, {**V4, "icmp": {"type": 13}}),
    ("icmp", "ts_tx"): (32, {**V4, "icmp": {"type": 13}}), ("icmp", "ptr"): (8, {**V4, "icmp": {"type": 12}}),
    ("icmp", "reserved"): (8, {**V4, "icmp": {"type": 3}}), ("icmp", "length"): (8, {**V4, "icmp": {"type": 3}}),
    ("icmp", "nexthopmtu"): (16, {**V4, "icmp": {"type": 3}}),
    ("icmp", "unused"): (16, {**V4, "icmp": {"type": 11}}),        # RFC 792 time exceeded: 32 bits, 16 in scapy
    ("icmp6", "type"): (8, V6), ("icmp6", "code"): (8, V6), ("icmp6", "id"): (16, V6), ("icmp6", "seq"): (16, V6),
}
NOT_NUMBERS = {("eth", "dst"), ("eth", "src"), ("ipv4", "src"), ("ipv4", "dst"), ("ipv6", "src"), ("ipv6", "dst"),
               ("icmp", "gw"), ("icmp", "addr_mask"), ("icmp", "extpad"), ("icmp", "ext"), ("icmp6", "data")}


def stream_text(layer: str, field: str, value, others: dict) -> str:
    """A one-packet stream file setting ``layer.field = value`` (the field on line 3)."""
    key = "icmp" if layer == "icmp6" else layer
    tables = {**others, key: {**others.get(key, {}), field: value}}
    inline = {k: "{" + ", ".join(f"{f} = {v!r}".replace("'", '"') for f, v in t.items()) + "}"
              for k, t in tables.items()}
    body = f"{key} = {inline.pop(key)}\n" + "".join(f"{k} = {v}\n" for k, v in inline.items())
    return f"[[stream]]\ncount = 1\n{body}"


def write_stream(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def read_back(path: Path, layer: str, field: str) -> int:
    pkt = rdpcap(str(path))[0]
    if layer == "icmp6":            # RFC 4443 echo layout: scapy parses type 255 as no known message
        at, width = {"type": (0, 1), "code": (1, 1), "id": (4, 2), "seq": (6, 2)}[field]
        return int.from_bytes(bytes(pkt[IPv6].payload)[at:at + width], "big")
    cls = {"vlan": Dot1Q, "ipv4": IP, "ipv6": IPv6, "udp": UDP, "tcp": TCP, "icmp": ICMP}[layer]
    return int(pkt[cls].getfieldval(field))


def test_every_settable_field_has_a_width():
    """The table covers every header field a stream file may set, so none is left unchecked."""
    classes = {"eth": Ether, "vlan": Dot1Q, "ipv4": IP, "ipv6": IPv6, "udp": UDP, "tcp": TCP, "icmp": ICMP,
               "icmp6": ICMPv6EchoRequest}
    settable = {(layer, f.name) for layer, cls in classes.items() for f in cls.fields_desc
                if f.name not in COMPUTED["icmp" if layer == "icmp6" else layer]}
    assert set(classes) - {"icmp6"} == set(LAYERS)
    assert settable == set(WIDTHS) | NOT_NUMBERS


@pytest.mark.parametrize("layer,field", sorted(WIDTHS), ids=[f"{a}.{b}" for a, b in sorted(WIDTHS)])
def test_field_width(tmp_path, layer, field):
    """The widest value goes out unchanged; one more, or a negative one, is refused with
    file:line, the field and its range."""
    bits, others = WIDTHS[layer, field]
    top = (1 << bits) - 1
    path = write_stream(tmp_path, stream_text(layer, field, top, others))
    generate(GenerateOptions(outdir=tmp_path / "g", streams=path))
    assert read_back(tmp_path / "g" / "port0.pcap", layer, field) == top
    shown = "icmp" if layer == "icmp6" else layer
    for bad in (top + 1, -1, f"{top + 1}", hex(top + 1)):
        bad_path = write_stream(tmp_path, stream_text(layer, field, bad, others), "bad.toml")
        with pytest.raises(SimError) as err:
            generate(GenerateOptions(outdir=tmp_path / "bad", streams=bad_path))
        message = str(err.value)
        assert message.startswith(f"{bad_path}:3: stream 'stream0': {shown}.{field} ({bits}-bit field) "), message
        assert message.endswith(f"out of range 0..{top}") and "\n" not in message


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(WIDTHS)), st.data())
def test_values_fit_or_are_refused(tmp_path_factory, key, data):
    """Any value either goes out exactly as given or is refused: never truncated."""
    bits, others = WIDTHS[key]
    value = data.draw(st.integers(0, (1 << bits) + 70000))
    tmp = tmp_path_factory.mktemp("w")
    path = write_stream(tmp, stream_text(*key, value, others))
    try:
        generate(GenerateOptions(outdir=tmp / "g", streams=path))
    except SimError as err:
        assert value >= 1 << bits and "out of range" in str(err)
    else:
        assert value < 1 << bits and read_back(tmp / "g" / "port0.pcap", *key) == value


@pytest.mark.parametrize("text,line,phrase", [
    ('ipv4 = {}\ntcp = { flags = "XYZ" }\n', 4, "tcp.flags: 'XYZ' is not a number nor a name"),
    ('ipv4 = { flags = "XX" }\n', 3, "ipv4.flags: 'XX' is not a number nor a name"),
    ('ipv4 = {}\nicmp = { type = "bogus" }\n', 4, "icmp.type: 'bogus' is not a number nor a name"),
    ('ipv4 = {}\ntcp = { window = "abc" }\n', 4, "tcp.window: 'abc' is not a number"),
    ('ipv4 = {}\nudp = { sport = "http" }\n', 4, "udp.sport: 'http' is not a number"),
    ('ipv4 = {}\nicmp = { gw = "1.2.3.4" }\n', 4, "icmp.gw is not part of this icmp header"),
    ('ipv4 = {}\nicmp = { gw = "example.invalid", type = 5 }\n', 4, "icmp.gw: bad IPv4 address"),
    ('ipv4 = {}\nicmp = { type = 8, unused = 5 }\n', 4, "icmp.unused is not part of this icmp header"),
    ('ipv6 = {}\nicmp = { data = 5 }\n', 4, "icmp.data: expected a string of bytes, got 5"),
    ('ipv4 = {}\ntcp = { window = 1.5 }\n', 4, "tcp.window: expected a number of 16 bits, got 1.5"),
])
def test_scapy_internals_do_not_leak(tmp_path, text, line, phrase):
    path = write_stream(tmp_path, "[[stream]]\ncount = 1\n" + text)
    with pytest.raises(SimError) as err:
        generate(GenerateOptions(outdir=tmp_path / "g", streams=path))
    message = str(err.value)
    assert message.startswith(f"{path}:{line}: ") and phrase in message, message
    for internal in ("RawVal", "struct", "substring", "not in list", "KeyError", "Traceback"):
        assert internal not in message


def test_no_scapy_warning_on_stderr(tmp_path, capfd):
    """An ICMPv6 stream: scapy's "No IPv6 underlayer" warning stays off the command's stderr."""
    generate(GenerateOptions(outdir=tmp_path / "g", streams=write_stream(tmp_path, stream_text("icmp6", "id", 5, V6))))
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("size", ['{op = "jump", min = 64, max = 99}', '{op = "inc", min = 64, max = 99, step = 0}',
                                  '{op = "inc", min = 100, max = 99}', '{op = "inc", min = 64, max = 99999}'])
def test_size_errors_name_the_location_once(tmp_path, size):
    path = write_stream(tmp_path, f"[[stream]]\ncount = 1\nsize = {size}\nipv4 = {{}}\n")
    with pytest.raises(SimError) as err:
        generate(GenerateOptions(outdir=tmp_path / "g", streams=path))
    assert str(err.value).startswith(f"{path}:3: stream 'stream0': ") and str(err.value).count(str(path)) == 1


@pytest.mark.parametrize("text,line,phrase", [
    ("count = 100000000000000000000", 2, "count: integer '100000000000000000000' does not fit in 64 bits"),
    ("count = 281474976710657", 2, "count must be an integer 0..281474976710656"),
    (f"count = {BIG}", 2, "a number of more than 4300 digits"),
    ("count = 1\n[[stream.vary]]\nfield = \"ipv4.ttl\"\nmin = 1\nmax = 3\nstep = 100000000000000000000",
     8, "step: integer '100000000000000000000' does not fit in 64 bits"),
    ("count = 1\n[[stream.vary]]\nfield = \"ipv4.ttl\"\nmin = 1\nmax = \"" + BIG + "\"", 7, "max '9999999999"),
    ("count = 1\n[[stream.vary]]\nfield = \"ipv4.dst\"\nmin = 0\nmax = 18446744073709551616", 7,
     "write a larger bound as a string"),
])
def test_absurd_integers_in_stream_files(tmp_path, cli, text, line, phrase):
    path = write_stream(tmp_path, f"[[stream]]\n{text}\nipv4 = {{}}\n" if "vary" not in text else
                        f"[[stream]]\nipv4 = {{}}\n{text}\n")
    assert_refused(cli("generate", "--streams", path, "-o", tmp_path / "g"), f"{path}:{line}: ", phrase)


@pytest.mark.parametrize("top", ["seed = 100000000000000000000", "group = 100000000000000000000",
                                 "rate = 1e-300", "rate = 0", "rate = -5", "rate = inf", "rate = nan",
                                 "rate = 2e9", f"rate = {BIG}.0", "rate = true"])
def test_absurd_top_level_values(tmp_path, cli, top):
    path = write_stream(tmp_path, f"{top}\n[[stream]]\ncount = 3\nipv4 = {{}}\n")
    key = top.partition(" ")[0]
    assert_refused(cli("generate", "--streams", path, "-o", tmp_path / "g"), f"{path}:1: {key}")


@pytest.mark.parametrize("rate", ["1e400", "1e-300", "nan", "inf", "-1", "0", "2e9"])
def test_absurd_rate_options(tmp_path, cli, rate):
    assert_refused(cli("generate", "IPV4-CONT-BURST", "--rate", rate, "-o", tmp_path / "g"),
                   "--rate", "is not a packet rate")


def test_highest_rate_gives_distinct_time_stamps(tmp_path):
    generate(GenerateOptions(outdir=tmp_path / "g", pattern="IPV4-CONT-BURST", ports=1, count=50, rate=1e9))
    stamps = [p.time for p in rdpcap(str(tmp_path / "g" / "port0.pcap"))]
    assert all(b - a > 0 for a, b in zip(stamps, stamps[1:]))


@pytest.mark.parametrize("args,phrases", [
    (("IPV4-CONT-BURST", "--count", "1000000000000"), ("need at least 304,000,000,000,096 bytes",)),
    (("IPV4-CONT-BURST", "--count", str((1 << 48) + 1)), ("--count", "out of range 0..281474976710656")),
    (("IPV4-CONT-BURST", "--count", BIG), ("--count '9999", "(5000 characters) out of range")),
    (("IPV4-CONT-BURST", "--count", "-1"), ("--count '-1' out of range",)),
    (("IPV4-CONT-BURST", "--seed", BIG), ("--seed", "out of range 0..18446744073709551615")),
    (("IPV4-CONT-BURST", "--ports", "33"), ("--ports '33' out of range 1..32",)),
    (("IPV4-CONT-BURST", "--count", "10000000", "--rate", "0.001"), ("--rate 0.001", "past 2106-02-07")),
    ((f"IPV4-{BIG}STREAMSX1",), ("K '9999", "out of range 1..32")),
    (("IPV4-33STREAMSX1",), ("K '33' out of range 1..32",)),
    (("IPV6-4STREAMSX" + BIG,), ("G '9999", "out of range 1..281474976710656")),
    (("IPV4-CONT-BURST", "--map", f"0:{BIG}"), ("--map", "output port '9999", "out of range 0..31")),
    (("IPV4-CONT-BURST", "--size", f"64-{BIG}"), ("--size: size '9999", "out of range 64..9600")),
])
def test_absurd_pattern_options(tmp_path, cli, monkeypatch, args, phrases):
    monkeypatch.setattr("shutil.disk_usage", lambda path: type("Usage", (), {"free": 10**12})())
    assert_refused(cli("generate", *args, "-o", tmp_path / "g"), *phrases)
    assert not list(tmp_path.glob("g/port*"))


def test_huge_stream_file_count(tmp_path, cli, monkeypatch):
    """A count that fits in memory nowhere but streams: refused only for the disk it needs."""
    monkeypatch.setattr("shutil.disk_usage", lambda path: type("Usage", (), {"free": 10**9})())
    path = write_stream(tmp_path, "[[stream]]\ncount = 1000000000000\nipv4 = {}\n")
    assert_refused(cli("generate", "--streams", path, "-o", tmp_path / "g"),
                   f"{tmp_path / 'g'}: the output files need at least 76,000,000,000,024 bytes",
                   "1,000,000,000 bytes free")
    two = write_stream(tmp_path, "[[stream]]\ncount = 200000000000000\nipv4 = {}\n" * 2, "two.toml")
    assert_refused(cli("generate", "--streams", two, "-o", tmp_path / "g"),
                   f"{two}: port 0 sends 400,000,000,000,000 packets, more than 281,474,976,710,656")
