"""dpdk-l3fwd-graph against a live real DPDK: Debian 12's 22.11 sample, built as packaged
(tests/dpdk/build-l3fwd-graph-22.11.sh), run over net_pcap on the same command lines as
``l3fwd-sim dpdk-l3fwd-graph``. 22.11's sample has no IPv6 routes (its IPv6 nodes came
with v23.07) and its net_pcap chains frames over 2048 bytes, so the traffic is the golden
inputs' IPv4 and non-IP frames up to 1514 bytes: there 22.11 forwards as v26.07 does.
Checked: every TX queue file's bytes, and the statistics table's figures that do not
depend on time (every node's objs and realloc_count; calls but the sources') — the walk,
pending ring and stream sizes the simulator models, against the real graph library."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from dpdk_lines import invoke
from forwarding import GOLDEN
from frames import assert_same_records, read_pcap_frames, write_pcap
from real_dpdk import build_l3fwd_graph

from l3fwd_sim.verify.real import run_real

GRAPH = GOLDEN / "l3fwd_graph"
LAYOUTS = {   # name: (EAL lcores, how many, ports, --config)
    "one-worker": ("-l 0,1", 2, 2, "(0,0,1),(1,0,1)"),
    "reversed": ("-l 0,1", 2, 2, "(1,0,1),(0,0,1)"),
    "two-workers": ("--lcores 0@0,1@1,2@1", 3, 2, "(0,0,1),(1,0,2)"),
    "four-ports": ("-l 0,1", 2, 4, "(0,0,1),(1,0,1),(2,0,1),(3,0,1)"),
}
ROW = re.compile(r"\|([\w-]+)\s*\|(\d+)\s*\|(\d+)\s*\|(\d+)\s*\|")


def _ipv4_and_non_ip(scenario: str, port: int, path):
    frames = [f for f in read_pcap_frames(GRAPH / "in" / scenario / f"port{port}.pcap")
              if f[12:14] != b"\x86\xdd" and len(f) <= 1514]
    write_pcap(path, frames)
    return path


def _table(console: list[str]) -> dict[str, tuple[int, int, int]]:
    """The last statistics table printed: node -> (calls, objs, realloc_count)."""
    start = max(i for i, line in enumerate(console) if line.startswith("|Node"))
    return {m[1]: tuple(map(int, m.groups()[1:])) for line in console[start:] if (m := ROW.match(line))}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_ipv4_forwarding_and_node_counters_as_real_22_11(tmp_path, layout):
    binary = build_l3fwd_graph()
    lcores, n_txq, ports, config = LAYOUTS[layout]        # a TX queue per EAL lcore
    scenario = "mix4" if ports == 4 else "mix2"
    inputs = [_ipv4_and_non_ip(scenario, port, tmp_path / f"in{port}.pcap") for port in range(ports)]
    outputs = {}
    for side in ("real", "sim"):
        (tmp_path / side).mkdir()
        vdevs = [f"--vdev=net_pcap{p},rx_pcap={inputs[p]}," + ",".join(
            f"tx_pcap={tmp_path / side / f'port{p}.q{q}.pcap'}" for q in range(n_txq)) for p in range(ports)]
        outputs[side] = [*lcores.split(), "--no-huge", "-m", "512", "--no-pci", "--no-telemetry",
                         "--file-prefix", f"l3fwd-sim-graph-{layout}", *vdevs, "--",
                         "-p", hex((1 << ports) - 1), "--config", config]
    sim = invoke("dpdk-l3fwd-graph", *outputs["sim"])
    assert sim.exit_code == 0, sim.output
    written = {p: p.stat().st_size for p in (tmp_path / "sim").iterdir()}
    real = run_real("dpdk-l3fwd-graph", binary, outputs["real"], inputs,
                    {tmp_path / "real" / p.name: size for p, size in written.items()}, f"l3fwd-sim-graph-{layout}")
    assert real.started, "\n".join(real.console[-20:])
    for path in sorted(written):
        assert_same_records(tmp_path / "real" / path.name, path, path.name)
    real_table, sim_table = _table(real.console), _table(sim.stdout.splitlines())
    assert set(real_table) == set(sim_table)
    for node, (calls, objs, realloc_count) in real_table.items():
        want = (objs, realloc_count) if node.startswith("ethdev_rx-") else (calls, objs, realloc_count)
        got = sim_table[node][1:] if node.startswith("ethdev_rx-") else sim_table[node]
        assert got == want, (node, got, want)


def test_verify_a_real_l3fwd_graph(tmp_path):
    """``verify`` on dpdk-l3fwd-graph: Debian's 22.11 build is refused as a release not
    modelled, naming --dpdk 26.07; with it, the real 22.11 differs from v26.07 exactly by
    the routed IPv6 (22.11's sample has no IPv6 routes: the packets are extra in l3fwd-sim)."""
    binary = build_l3fwd_graph()
    line = ["-l", "0,1", "--no-huge", "-m", "512", "--no-pci"] + [
        f"--vdev=net_pcap{p},rx_pcap={GRAPH / 'in' / 'mix2' / f'port{p}.pcap'},tx_pcap={tmp_path / f'p{p}q0'},"
        f"tx_pcap={tmp_path / f'p{p}q1'}" for p in (0, 1)] + ["--", "-p", "0x3", "--config", "(0,0,1),(1,0,1)"]
    refused = invoke("verify", "--binary", binary, "--", "dpdk-l3fwd-graph", *line)
    assert refused.exit_code == 2 and "--dpdk 26.07 compares with it" in refused.stderr
    result = invoke("verify", "--binary", binary, "--dpdk", "26.07", "--json", "--", "dpdk-l3fwd-graph", *line)
    assert result.exit_code == 1, result.output
    files = {Path(f["file"]).name: f for f in json.loads(result.stdout)["files"]}
    assert files["p0q0"]["equal"] and files["p0q1"]["equal"] and files["p1q1"]["equal"]
    causes = files["p1q0"]["by_cause"]
    assert causes and all(c["kind"] == "extra" and c["layers"].startswith("Ether/IPv6") for c in causes)
    assert sum(c["packets"] for c in causes) == 223          # the golden run 00's routed IPv6 (all to port 1)
