"""The captures users bring, as real dpdk-l3fwd v26.07 over net_pcap read them
(tests/data/golden/capture_edges, its README says what each case is): snaplen-cut
records, a gzip'd file, other link types, pcapng interfaces libpcap rejects, nanosecond
and big-endian pcaps, odd file snaplens, ``-p`` naming ports that do not exist.

* ``dpdk-l3fwd`` verbatim, every run, both kernels: each ``tx_pcap`` file record for
  record the same captured length, wire length and bytes as real l3fwd's; a file real
  l3fwd never created is not created; a refusal is exit 2 with real l3fwd's decisive
  message and no file.
* ``run`` on the same inputs: where nothing goes beyond libpcap, the same records; where
  a convenience does (gzip, a link type converted, a pcapng interface libpcap rejects),
  one warning line per input naming what real DPDK would have done, listed in
  stats.json's ``conveniences``."""
from __future__ import annotations

import json
import re

import pytest
from dpdk_lines import invoke
from forwarding import GOLDEN, run_cli
from frames import assert_same_records
from refusals import assert_refused
from twins import KERNELS

from l3fwd_sim import compiled

EDGES = GOLDEN / "capture_edges"
RUNS = json.loads((EDGES / "runs.json").read_text())
# the cases where run's reading goes beyond libpcap (capture_edges/README.md, "Where a simulator ... would differ")
CONVENIENT = {"gzip", "gzip-p0x7", "raw101", "raw228", "raw229", "sll113", "sll2_276", "null0", "ppp9", "chdlc104",
              "ng_2idb_lt", "ng_2idb_snap"}


def argv_of(expected: str, out) -> list[str]:
    return [word.replace("{in}", str(EDGES / "in")).replace("{out}", str(out)) for word in RUNS[expected]["argv"][1:]]


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("expected", sorted(RUNS), ids=lambda e: f"{e}-{RUNS[e]['case']}")
def test_verbatim_as_real_l3fwd(tmp_path, expected, kernels):
    with compiled.using(kernels):
        result = invoke("dpdk-l3fwd", *argv_of(expected, tmp_path))
    error = EDGES / expected / "error.txt"
    if error.is_file():
        decisive = re.match(r"dpdk-l3fwd exits 1: (.*)", error.read_text()).group(1)
        assert_refused(result, decisive)
        assert list(tmp_path.iterdir()) == []
        return
    assert result.exit_code == 0, result.output
    want = sorted(p.name for p in (EDGES / expected).glob("port*.pcap"))
    assert sorted(p.name for p in tmp_path.iterdir()) == want        # port0.pcap of a vdev that failed to probe: none
    for name in want:
        assert_same_records(EDGES / expected / name, tmp_path / name, name)


def test_probe_failure_says_why_the_ports_moved(tmp_path):
    """gzip'd rx_pcap: net_pcap's own lines on the console, one warning naming the ports
    as EAL renumbered them, and the refusal that follows from -p explains itself."""
    result = invoke("dpdk-l3fwd", *argv_of("expected-25", tmp_path))
    assert "EAL: Failed to probe device net_pcap0" in result.stdout.splitlines()
    assert "ports: 0=net_pcap1, 1=net_pcap2, 2=net_pcap3" in result.stderr
    refused = invoke("dpdk-l3fwd", *argv_of("expected-04", tmp_path))
    assert_refused(refused, "Unable to get device info for port 3", "net_pcap0 failed to probe", "unknown file format")


def test_rx_errors_are_counted_drops(tmp_path):
    """The packets of a pcapng interface libpcap rejects are RX errors of net_pcap: in
    stats.json they are received and dropped as rx_error (rx == tx + dropped)."""
    stats_file = tmp_path / "stats.json"
    (tmp_path / "out").mkdir()
    result = invoke("dpdk-l3fwd", *argv_of("expected-15", tmp_path / "out"), env={"L3FWD_SIM_STATS": str(stats_file)})
    assert result.exit_code == 0, result.output
    stats = json.loads(stats_file.read_text())
    assert stats["ports"]["0"]["drops"]["rx_error"] == 10            # interface 1's packets: ng_2idb_lt has 10
    assert stats["totals"]["rx"] == 30 == stats["totals"]["tx"] + stats["totals"]["dropped"]


def _run_options(expected: str) -> list[str]:
    """``run``'s options for a capture_edges command line: its application options; the
    rx_pcap as port 0's input."""
    argv = RUNS[expected]["argv"]
    app = argv[argv.index("--") + 1:]
    rx = next(re.search(r"rx_pcap=([^,]+)", w).group(1) for w in argv if "rx_pcap=" in w)
    return [f"0={rx.replace('{in}', str(EDGES / 'in'))}", *(w for w in app if w not in ("--parse-ptype",
                                                                                        "--relax-rx-offload"))]


@pytest.mark.parametrize("expected", sorted(e for e in RUNS if RUNS[e]["case"] not in ("mask_missing", "mask_em")),
                         ids=lambda e: f"{e}-{RUNS[e]['case']}")
def test_run_says_where_it_goes_beyond_dpdk(tmp_path, expected):
    case = RUNS[expected]["case"]
    result = run_cli("run", *_run_options(expected), "-o", tmp_path, "--output-format", "pcap")
    assert result.exit_code == 0, result.output
    stats = json.loads((tmp_path / "stats.json").read_text())
    said = [line for line in result.stderr.splitlines() if "real net_pcap" in line]
    assert bool(said) == (case in CONVENIENT) == bool(stats["conveniences"]), (said, stats["conveniences"])
    assert len(said) == len(stats["conveniences"]) and all(line.startswith("l3fwd-sim: warning: ") for line in said)
    if case in CONVENIENT or (EDGES / expected / "error.txt").exists():
        return
    for exp in sorted((EDGES / expected).glob("port*.pcap")):       # the same as real l3fwd's, lengths too
        assert_same_records(exp, tmp_path / exp.name, exp.name)
