"""The public API of ``l3fwd_sim`` (docs/api.md): each command as a function returning
the plain dict its ``--json`` prints, and the tables; paths may be strings."""
from __future__ import annotations

import json
import subprocess
import sys

from forwarding import REPO

import l3fwd_sim
from l3fwd_sim import CompareOptions, GenerateOptions, Lpm4, RunOptions, compare, generate, run

# imported as module attributes: pytest would collect ``testpmd_run`` / ``TestpmdOptions`` as tests
api = l3fwd_sim


def test_commands_as_functions_with_string_paths(tmp_path, cli):
    pcaps = str(REPO / "pcaps")
    inputs = {port: f"{pcaps}/port{port}.pcap" for port in range(4)}
    stats = run(RunOptions(inputs=inputs, outdir=str(tmp_path / "multi")))
    simple = run(RunOptions(inputs=inputs, outdir=str(tmp_path / "simple"), pipeline="simple"))
    assert stats["totals"] == json.loads((tmp_path / "multi" / "stats.json").read_text())["totals"]
    assert stats["totals"]["rx"] == simple["totals"]["rx"] == 1024

    report = compare(str(tmp_path / "simple"), str(tmp_path / "multi"), CompareOptions(max_diffs=1))
    assert cli("compare", tmp_path / "simple", tmp_path / "multi", "--max-diffs", "1", "--json").exit_code == 1
    printed = json.loads(cli("compare", tmp_path / "simple", tmp_path / "multi", "--max-diffs", "1", "--json").output)
    assert report["totals"] == printed["totals"] and report["equal"] is False

    summary = generate(GenerateOptions(outdir=str(tmp_path / "gen"), pattern="IPV4-4STREAMSX8", count=64))
    assert summary["packets"] == 4 * 64
    pmd = api.testpmd_run(api.TestpmdOptions(inputs={0: inputs[0]}, outdir=str(tmp_path / "pmd"), forward_mode="macswap"))
    assert pmd["totals"]["tx"] == 256


def test_the_tables_are_exported():
    lpm = Lpm4()
    lpm.add(0xC6120100, 24, 1)
    assert lpm.lookup(0xC6120107) == 1 and lpm.lookup(0xC6120207) is None


def test_importing_the_package_loads_no_scapy():
    code = "import sys, l3fwd_sim; print(any(m.startswith('scapy') for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    assert set(l3fwd_sim.__all__) <= set(dir(l3fwd_sim)) | {"generate", "GenerateOptions", "compare", "CompareOptions"}


def test_command_lines_as_functions(tmp_path):
    """``dpdk_l3fwd`` / ``dpdk_testpmd``: the words after the program name, as lists."""
    port0 = REPO / "pcaps" / "port0.pcap"
    launch = api.dpdk_l3fwd(["-l", "0", "--vdev", f"net_pcap0,rx_pcap={port0},tx_pcap={tmp_path / 'l3.pcap'}", "--",
                             "-p", "0x1", "--config", "(0,0,0)", "--parse-ptype", "--relax-rx-offload"],
                            stats_file=str(tmp_path / "l3.json"))
    assert launch.stats == json.loads((tmp_path / "l3.json").read_text())
    assert launch.console[-1] == "Initializing rx queues on lcore 0 ... rxq=0,0,0"
    stats, console = api.dpdk_testpmd(["-l", "0,1", "--vdev", f"net_pcap0,rx_pcap={port0},tx_pcap={tmp_path / 'p.pcap'}",
                                       "--", "--no-flush-rx", "--forward-mode=io", "--port-topology=loop"])
    assert stats["totals"]["tx"] == stats["totals"]["rx"] == 256 and console[0] == "Set io packet forwarding mode"
