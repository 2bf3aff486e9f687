"""``run`` takes every dpdk-l3fwd v26.07 application option with its real spelling:
those without effect on pcap files leave every output byte as it was, the checked ones
refuse what l3fwd refuses, ``--disable-rss`` puts a port's capture on its RX queue 0,
and the rule-file note follows l3fwd's ``read_config_files``."""
from __future__ import annotations

import json

import pytest
from forwarding import run_cli
from frames import read_pcap_frames
from refusals import assert_refused

PCAPS = "pcaps"


def outputs(directory) -> dict[str, list[bytes]]:
    return {p.name: read_pcap_frames(p) for p in sorted(directory.glob("port*.pcap"))}


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    out = tmp_path_factory.mktemp("plain")
    assert run_cli("run", PCAPS, "-o", out, "--quiet").exit_code == 0
    return outputs(out)


@pytest.mark.parametrize("extra,note", [
    ("-P --parse-ptype --relax-rx-offload --no-numa --per-port-pool", None),
    ("--rx-queue-size 512 --tx-queue-size 2048 --mbcache 256 --eth-link-speed 25000 --mode poll", None),
    ("--hash-entry-num 16", "Hash entry number will be ignored"),
    ("--rx-burst 0", "PMD does not recommend a burst size. Using default value 32"),
    ("--rx-burst 600", "User provided burst must be <= 512. Using default value 32"),
    ("--tx-burst 0", "User provided TX burst is 0. Using default value 32"),
    ("--disable-rss", None),
    ("--rx-burst abc --tx-burst 1x", None),           # not a number: ignored, as parse_pkt_burst ignores it
    ("-L", None),
    ("--event-vector --event-vector-size 64 --event-vector-tmo 5000", "event vectorization is enabled"),
    ("--event-vector", "vector timeout set to default (1000000 ns)"),      # poll mode: accepted, no effect
    ("--mode eventdev --mode poll", None), ("--mode bogus", None),         # the last word l3fwd knows wins
])
def test_accepted_outputs_unchanged(tmp_path, plain, extra, note):
    result = run_cli("run", PCAPS, "-o", tmp_path, *extra.split())
    assert result.exit_code == 0, result.output
    assert outputs(tmp_path) == plain
    if note:
        assert f"l3fwd-sim: {note}" in result.stderr


@pytest.mark.parametrize("extra,needle", [
    ("--rx-queue-size 0", "Invalid rx-queue-size"), ("--tx-queue-size 65536", "tx-queue-size 65536 > 65535"),
    ("--rx-queue-size 12ab", "Invalid rx-queue-size"), ("--mbcache 513", "mbcache must be >= 0 and <= 512"),
    ("--eth-link-speed 10", "Unsupported fixed speed"), ("--eth-link-speed 100", "Unsupported fixed speed"),
    ("--mode eventdev", "real l3fwd cannot run --mode eventdev over net_pcap"),
    ("--mode eventdev --config (0,0,0)", "lcore config is not valid when event mode is selected"),
    ("--eventq-sched atomic", "eventq_sched is valid only when event mode is selected"),
    ("--event-eth-rxqs 2", "eth_rx_queues is valid only when event mode is selected"),
    ("-E -L", "Only one lookup mode is allowed at a time!"),
    ("-L --lookup fib", "Only one lookup mode is allowed at a time!"),
    ("--lookup bogus", "Invalid lookup option! Accepted options: acl, em, lpm, fib"),
])
def test_refused_as_l3fwd(tmp_path, extra, needle):
    assert_refused(run_cli("run", PCAPS, "-o", tmp_path / "out", *extra.split()), needle)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("extra", ["--hash-entry-num 16 -p bogus", "--rx-burst 0 --trace 5 --drops",
                                   "--tx-burst 0 --jobs 0", "--rx-burst 600 --config (9,0,0)"])
def test_notes_not_printed_when_refused(tmp_path, extra):
    """A note (l3fwd's message about an ignored value) comes after a run that succeeds: a
    refused run says its one line only (found by tests/fuzz/test_fuzz_options.py)."""
    assert_refused(run_cli("run", PCAPS, "-o", tmp_path / "out", *extra.split()))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("given", [(), ("v4",), ("v6",), ("v4", "v6")])
def test_missing_rule_files_note(tmp_path, given):
    """l3fwd says it whenever the two files are not both given (read_config_files_lpm)."""
    files = {"v4": ("--rule_ipv4", "routes/lpm_default_v4.cfg"), "v6": ("--rule_ipv6", "routes/lpm_default_v6.cfg")}
    args = [word for g in given for word in files[g]]
    result = run_cli("run", PCAPS, "-o", tmp_path, "--json", *args)
    stats = json.loads(result.stdout)
    assert ("Missing 1 or more rule files, using default instead" in stats["warnings"]) == (len(given) < 2)


def test_disable_rss_puts_the_capture_on_queue_0(tmp_path):
    """With RSS a port's capture is spread over its two RX queues; with --disable-rss
    (mq_mode NONE) queue 0 receives all of it and queue 1 nothing."""
    config = "(0,0,0),(0,1,1),(1,0,0)"
    spread = json.loads(run_cli("run", PCAPS, "-o", tmp_path / "rss", "-p", "0x3", "--config", config,
                                "--json").stdout)
    whole = json.loads(run_cli("run", PCAPS, "-o", tmp_path / "off", "-p", "0x3", "--config", config,
                               "--disable-rss", "--json").stdout)
    per_queue = {lc: v["rx_per_queue"] for lc, v in whole["lcores"]["per_lcore"].items()}
    rx0 = whole["ports"]["0"]["rx"]
    assert per_queue["0"]["0.0"] == rx0 and per_queue["1"].get("0.1", 0) == 0
    spread_queues = {lc: v["rx_per_queue"] for lc, v in spread["lcores"]["per_lcore"].items()}
    assert 0 < spread_queues["1"]["0.1"] < rx0
