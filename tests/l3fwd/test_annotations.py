"""``run --annotate`` and ``--drops`` read back by Wireshark's own dissector (tshark):
one comment per packet, the (RX port, record) pairs of all outputs and ``drops.pcapng``
covering every received packet exactly once, the frames identical to a plain run's
(drops: to the input records), the drop reasons and the RX → TX counts equal to
``stats.json``, and each rule's comments as many as its hit counter."""
from __future__ import annotations

import json
import os
import random
import re
from collections import Counter

import pytest
from forwarding import run_cli
from frames import mixed_frames, write_pcap
from rule_files import random_routes, write_acl_rules, write_rules
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw
from scapy.utils import rdpcap
from tshark import fields, needs_tshark

from l3fwd_sim import compiled

pytestmark = needs_tshark

RECEIVED = re.compile(r"rx port (\d+)(?: queue \d+)? #(\d+)")
NO_HOP = re.compile(r" · (?:[a-z]+[46] miss|no lookup) · ")
RSS_CONFIG = "(0,0,0),(0,1,1),(1,0,0),(1,1,1)"

CASES = [   # lookup, pipeline, more options, kernels
    ("lpm", "multi", (), "compiled"),
    ("em", "simple", (), "compiled"),
    ("acl", "multi", (), "numpy"),
    ("lpm", "multi", ("--config", RSS_CONFIG, "--jobs", "2"), "compiled"),
    ("fib", "simple", ("--jobs", "2"), "numpy"),
    ("lpm", "simple", ("--config", "(0,0,0),(1,0,1)"), "numpy"),
]


def _inputs(tmp_path, seed: int) -> dict[int, list[bytes]]:
    indir = tmp_path / "in"
    indir.mkdir()
    frames = {port: mixed_frames(seed, port, 300) for port in (0, 1)}
    for port, each in frames.items():
        write_pcap(indir / f"port{port}.pcap", each)
    return frames


def _rule_files(tmp_path, lookup: str, seed: int) -> list[str]:
    rng = random.Random(f"annotate/{lookup}/{seed}")
    v4, v6 = tmp_path / "v4.cfg", tmp_path / "v6.cfg"
    if lookup == "acl":
        write_acl_rules(v4, 4, rng, 40, ports=(0, 1)), write_acl_rules(v6, 6, rng, 20, ports=(0, 1))
    elif lookup in ("lpm", "fib"):
        routes4, routes6 = random_routes(rng, 60, 30)
        write_rules(v4, routes4), write_rules(v6, routes6)
    else:
        return []                                   # em: l3fwd's default flows
    return ["--rule_ipv4", v4, "--rule_ipv6", v6]


def _frames(path) -> list[tuple[bytes, float]]:
    return [(bytes(p), float(p.time)) for p in rdpcap(str(path))]


@pytest.mark.parametrize("lookup,pipeline,more,kernels", CASES)
def test_annotated_outputs_and_drops_account_for_every_packet(tmp_path, lookup, pipeline, more, kernels):
    with compiled.using(kernels):
        _check_annotated(tmp_path, lookup, pipeline, more)


def _check_annotated(tmp_path, lookup, pipeline, more):
    frames = _inputs(tmp_path, 7)
    common = [tmp_path / "in", "--lookup", lookup, "--pipeline", pipeline, *_rule_files(tmp_path, lookup, 7),
              *more, "--quiet"]
    assert run_cli("run", *common, "-o", tmp_path / "plain", "--output-format", "pcapng").exit_code == 0
    assert run_cli("run", *common, "-o", tmp_path / "ann", "--annotate", "--drops").exit_code == 0
    stats = json.loads((tmp_path / "ann" / "stats.json").read_text())
    assert stats == {**json.loads((tmp_path / "plain" / "stats.json").read_text()),
                     **{k: stats[k] for k in ("elapsed_seconds", "mpps", "stages_ms", "stages_ns_per_packet",
                                              "setup_ms")}}

    seen, flows, comments_of = Counter(), Counter(), {}
    for path in sorted((tmp_path / "ann").glob("port*.pcapng")):
        assert _frames(path) == _frames(tmp_path / "plain" / path.name), path.name   # bytes and time stamps
        comments = [row[0] for row in fields(path, "frame.comment")]
        assert len(comments) == len(_frames(path)) and all(RECEIVED.match(c) for c in comments), path.name
        comments_of[path.name] = comments
        if ".q" not in path.name:                   # a TX queue's file: its records are in port<N>.pcapng too
            tx_port = int(path.name[4:].split(".")[0])
            for comment, (frame, _) in zip(comments, _frames(path)):
                rx_port, index = map(int, RECEIVED.match(comment).groups())
                # a next hop is the TX port; without one (a miss, no lookup) l3fwd sent it back
                back = tx_port == rx_port and NO_HOP.search(comment)
                where = f" · sent back to port {rx_port}" if back else f" · next hop {tx_port}"
                assert comment.endswith(where), comment
                # the packet named: l3fwd edits MACs, TTL/hop limit and checksum only (bytes < 26)
                assert len(frame) == len(frames[rx_port][index]) and frame[26:] == frames[rx_port][index][26:]
                seen[rx_port, index] += 1
                flows[rx_port, tx_port] += 1
    for name, comments in comments_of.items():      # a TX queue file's comments are its records' in the port file
        if ".q" in name:
            assert not Counter(comments) - Counter(comments_of[name.split(".")[0] + ".pcapng"])

    dropped = fields(tmp_path / "ann" / "drops.pcapng", "frame.interface_name", "frame.comment")
    assert len(dropped) == stats["totals"]["dropped"]
    reasons = Counter()
    for (interface, comment), (frame, _) in zip(dropped, _frames(tmp_path / "ann" / "drops.pcapng")):
        rx_port, index = map(int, RECEIVED.search(comment).groups())
        assert interface == f"port{rx_port}" and frame == frames[rx_port][index]     # as received
        reasons[re.match(r"[a-z_0-9]+", comment).group()] += 1
        seen[rx_port, index] += 1
    assert reasons == {name: n for name, n in stats["drops"].items() if n}
    assert seen == Counter((port, i) for port, each in frames.items() for i in range(len(each)))   # each once
    assert flows == Counter({(int(rx), int(tx)): n for rx, port in stats["ports"].items()
                             for tx, n in port["to"].items()})

    if lookup != "acl":                             # a sent packet's comment names the rule its counter counts
        port_comments = [c for name, each in comments_of.items() if ".q" not in name for c in each]
        for rule in stats["rules"]:
            named = f" · {rule['table']} {rule['file']}:{rule['line']} · "
            assert sum(named in c for c in port_comments) == rule["packets"], named


def test_wireshark_filters_by_rule(tmp_path):
    """The docs' recipe: ``tshark -Y 'frame.comment contains "FILE:LINE"'`` finds that
    rule's packets, as many as its hit counter."""
    _inputs(tmp_path, 3)
    rules = _rule_files(tmp_path, "lpm", 3)
    assert run_cli("run", tmp_path / "in", *rules, "-o", tmp_path / "out", "--annotate", "--quiet").exit_code == 0
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    rule = max(stats["rules"], key=lambda r: r["packets"])
    found = sum(len(fields(path, "frame.number", display_filter=f'frame.comment contains "v4.cfg:{rule["line"]} "'))
                for path in (tmp_path / "out").glob("port*.pcapng"))
    assert rule["packets"] > 0 and found == sum(r["packets"] for r in stats["rules"]
                                                if r["table"] == "lpm4" and r["line"] == rule["line"])


def test_a_packet_without_a_next_hop_says_where_l3fwd_sent_it(tmp_path):
    """A miss, and a non-IP frame the multi path does not look up, are sent back out of
    their input port: the comment says so, and names no next hop (they have none)."""
    indir = tmp_path / "in"
    indir.mkdir()
    eth = Ether(dst="02:00:00:00:00:02", src="02:00:00:00:00:09")
    miss = bytes(eth / IP(dst="192.0.2.1") / UDP() / Raw(bytes(8)))
    routed = bytes(eth / IP(dst="198.18.1.1") / UDP() / Raw(bytes(8)))
    arp = bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:09") / ARP())
    write_pcap(indir / "port2.pcap", [miss, arp, routed])
    assert run_cli("run", indir, "-p", "0x7", "-o", tmp_path / "out", "--annotate", "--quiet").exit_code == 0
    assert [row[0] for row in fields(tmp_path / "out" / "port2.pcapng", "frame.comment")] == [
        "rx port 2 #0 · lpm4 miss · sent back to port 2", "rx port 2 #1 · no lookup · sent back to port 2"]
    assert [row[0] for row in fields(tmp_path / "out" / "port1.pcapng", "frame.comment")] == [
        "rx port 2 #2 · lpm4 routes/lpm_default_v4.cfg:4 · next hop 1"]


def test_testpmd_drops(tmp_path):
    frames = _inputs(tmp_path, 5)
    result = run_cli("testpmd", tmp_path / "in", "-o", tmp_path / "out", "--forward-mode", "icmpecho", "--drops",
                     "--quiet")
    assert result.exit_code == 0
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    dropped = fields(tmp_path / "out" / "drops.pcapng", "frame.interface_name", "frame.comment")
    assert len(dropped) == stats["totals"]["dropped"] > 0
    reasons = Counter()
    for (interface, comment), (frame, _) in zip(dropped, _frames(tmp_path / "out" / "drops.pcapng")):
        rx_port, index = map(int, RECEIVED.search(comment).groups())
        assert interface == f"port{rx_port}" and frame == frames[rx_port][index]
        reasons[comment.split(" ")[0]] += 1
    assert reasons == {name: n for name, n in stats["drops"].items() if n}


def test_no_drops_still_writes_every_interface(tmp_path):
    """A run without a drop: drops.pcapng holds the interfaces and no packet."""
    indir = tmp_path / "in"
    indir.mkdir()
    write_pcap(indir / "port0.pcap", [])
    assert run_cli("run", indir, "-o", tmp_path / "out", "--drops", "--quiet").exit_code == 0
    assert fields(tmp_path / "out" / "drops.pcapng", "frame.number") == []
    assert b"port0" in (tmp_path / "out" / "drops.pcapng").read_bytes()


@pytest.mark.parametrize("options,message", [
    (("--annotate", "--output-format", "pcap"), "--annotate writes"),
    (("--annotate", "--trace", "5"), "--trace 5 with --annotate"),
    (("--drops", "--trace", "0"), "--trace 0 with --annotate or --drops"),
])
def test_refusals(tmp_path, options, message):
    _inputs(tmp_path, 1)
    result = run_cli("run", tmp_path / "in", "-o", tmp_path / "out", *options)
    assert result.exit_code == 2 and message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_drops_refuses_a_pipe(tmp_path):
    fifo = tmp_path / "port0.pcap"
    os.mkfifo(fifo)
    result = run_cli("run", f"0={fifo}", "-o", tmp_path / "out", "--drops")
    assert result.exit_code == 2 and "--drops reads the dropped packets again" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "out").exists()


def test_comments_escape_control_characters(tmp_path):
    """A rule file's name with a newline stays one line of comment."""
    _inputs(tmp_path, 2)
    v4, v6 = tmp_path / "v\n4.cfg", tmp_path / "v6.cfg"
    write_rules(v4, [("0.0.0.0", 1, 1), ("128.0.0.0", 1, 0)]), write_rules(v6, [("::", 1, 1)])
    assert run_cli("run", tmp_path / "in", "--lookup", "fib", "--rule_ipv4", v4, "--rule_ipv6", v6,
                   "-o", tmp_path / "out", "--annotate", "--quiet").exit_code == 0
    comments = [row[0] for row in fields(tmp_path / "out" / "port0.pcapng", "frame.comment")]
    assert any("v\\n4.cfg:" in c for c in comments) and all(RECEIVED.match(c) for c in comments)
