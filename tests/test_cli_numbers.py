"""Absurd numbers on the command line and in rule files end in one line naming the
option or file:line, the value (cut short) and the range it must lie in; exit status 2,
never a traceback. Python refuses to convert decimal strings of more than 4300 digits
(a ValueError), so such numbers must be refused before they are converted.

Ranges are l3fwd's and testpmd's own (dpdk/l3fwd_options_and_rule_files.md): ports
below RTE_MAX_ETHPORTS (32), RX queues below MAX_RX_QUEUE_PER_PORT (128), ACL rule sets
of at most MAX_ACL_RULE_NUM (100000) lines.
"""
from __future__ import annotations

import pytest
from refusals import BIG, assert_refused

from l3fwd_sim.traffic.generate import GenerateOptions, generate

MAC = "02:00:00:00:00:09"
ACL = "R{src} {dst} 0 : 65535 0 : 65535 {proto} {port}\n"
V4_ANY, V6_ANY = "0.0.0.0/0", ":".join(["0"] * 8) + "/0"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("numbers") / "in"
    generate(GenerateOptions(outdir=directory, pattern="IPV4-CONT-BURST", ports=2, count=4))
    return directory


@pytest.mark.parametrize("spec,phrases", [
    (f"{BIG}=x.pcap", ("port '9999", "(5000 characters) out of range 0..31")),
    ("32=x.pcap", ("'32=x.pcap': port '32' out of range 0..31",)),
    (f"0.{BIG}=x.pcap", ("RX queue '9999", "out of range 0..127")),
    ("0.128=x.pcap", ("'0.128=x.pcap': RX queue '128' out of range 0..127",)),
])
def test_input_specs(tmp_path, cli, spec, phrases):
    assert_refused(cli("run", spec, "-o", tmp_path / "out"), *phrases)


@pytest.mark.parametrize("command,option", [("run", "--eth-dest"), ("run", "--port-mac"),
                                            ("testpmd", "--eth-peer"), ("testpmd", "--port-mac")])
@pytest.mark.parametrize("port,phrase", [(BIG, "PORT '9999"), ("32", "PORT '32' out of range 0..31"),
                                         ("0" * 5000 + "33", "PORT '0000")])
def test_port_mac_options(tmp_path, cli, inputs, command, option, port, phrase):
    line = assert_refused(cli(command, inputs, "-o", tmp_path / "out", option, f"{port},{MAC}"),
                          f"{option} '", phrase, "out of range 0..31")
    assert not (tmp_path / "out").exists(), line


GOOD = {("lpm", 4): "R198.18.0.0/16 0\n", ("lpm", 6): "R2001:200::/32 0\n",
        ("em", 4): "R198.18.0.0 198.18.0.1 9 9 17 0\n", ("em", 6): "R2001:200:: 2001:200::1 9 9 17 0\n",
        ("acl", 4): ACL.format(src=V4_ANY, dst=V4_ANY, proto="17/0xff", port=0),
        ("acl", 6): ACL.format(src=V6_ANY, dst=V6_ANY, proto="17/0xff", port=0)}


@pytest.mark.parametrize("lookup,family,text,phrases", [
    ("lpm", 4, f"R10.0.0.0/8 {BIG}\n", ("r.cfg:1: port '9999", "out of range 0..255")),
    ("lpm", 4, f"R10.0.0.0/{BIG} 1\n", ("r.cfg:1: depth '9999", "out of range 0..32")),
    ("lpm", 6, "R2001::/16 0" + "7" * 5000 + "\n", ("r.cfg:1: port '0777", "out of range 0..255")),
    ("lpm", 4, "# comment\nR10.0.0.0/8 0x" + "f" * 5000 + "\n", ("r.cfg:2: port '0xff", "out of range 0..255")),
    ("em", 4, f"R198.18.0.0 198.18.0.1 {BIG} 9 17 0\n", ("r.cfg:1: dst_port '9999", "out of range 0..65535")),
    ("em", 6, f"R2001:200:: 2001:200::1 9 9 {BIG} 0\n", ("r.cfg:1: proto '9999", "out of range 0..255")),
    ("acl", 6, ACL.format(src=V6_ANY, dst=V6_ANY, proto="6/0xff", port=BIG),
     ("r.cfg:1: port '9999", "out of range 0..4294967295")),
    ("acl", 6, ACL.format(src=V6_ANY, dst=V6_ANY, proto=f"{BIG}/0xff", port=1), ("r.cfg:1: proto '9999",)),
    ("acl", 4, ACL.format(src=f"0.0.0.0/{BIG}", dst=V4_ANY, proto="6/0xff", port=1),
     ("r.cfg:1: source prefix length '9999", "out of range 0..32")),
])
def test_rule_files(tmp_path, cli, inputs, lookup, family, text, phrases):
    """The culprit's family gets the bad file, the other family a good one of the same grammar."""
    bad, good = tmp_path / "r.cfg", tmp_path / "good.cfg"
    bad.write_text(text)
    good.write_text(GOOD[lookup, 10 - family])
    files = {family: bad, 10 - family: good}
    assert_refused(cli("run", inputs, "-o", tmp_path / "out", "--lookup", lookup, "-p", "0xf",
                       "--rule_ipv4", files[4], "--rule_ipv6", files[6]), f"{bad}:", *phrases)


@pytest.mark.parametrize("count", ["0", "1", "2", "3"])
def test_bench_needs_a_packet_per_port(tmp_path, cli, count):
    """Fewer than 4 packets over 4 ports: a pattern with no packet would be divided by a
    zero rate. Refused before anything is generated or printed."""
    assert_refused(cli("bench", "--count", count, "-o", tmp_path / "b", "--no-reference"),
                   f"--count {count} out of range 4..")
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("args,phrase", [
    (("--count", BIG), "--count '9999"), (("--count", "-5"), "--count '-5' out of range"),
    (("--acl-rules", "100001"), "--acl-rules '100001' out of range 0..100000"),
    (("--acl-build", BIG), "--acl-build '9999"),
])
def test_bench_absurd_options(tmp_path, cli, args, phrase):
    assert_refused(cli("bench", *args, "-o", tmp_path / "b"), phrase)
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("command,option", [("run", "--jobs"), ("run", "--reta-size"), ("run", "--max-pkt-len"),
                                            ("testpmd", "--burst"), ("compare", "--max-diffs")])
@pytest.mark.parametrize("value,phrase", [(BIG, "(5000 characters)"), ("\uff11", "is not a number"),
                                          ("\u0661", "is not a number"), ("1_0", "is not a number")])
def test_integer_options_take_ascii_digits_only(tmp_path, cli, inputs, command, option, value, phrase):
    """Python's int() takes Unicode digits and underscores, C's strtoul does not; a
    5000-digit value is shown cut short."""
    operands = [inputs, inputs] if command == "compare" else [inputs, "-o", tmp_path / "out"]
    assert_refused(cli(command, *operands, option, value), option, phrase)
