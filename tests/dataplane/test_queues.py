"""--config as l3fwd parses and checks it; several lcores end to end: per-TX-queue files,
the merged port file, per-lcore stats, --jobs, and RSS placement of a port's capture."""
from __future__ import annotations

import json
import re

import pytest
from forwarding import run_cli
from frames import mixed_frames, read_pcap_frames, write_pcap
from handmade import head_merge
from scapy.utils import RawPcapReader

from l3fwd_sim import SimError
from l3fwd_sim.dataplane.inputs import find_rx_queues
from l3fwd_sim.dataplane.queues import RxQueue, lcores_of, parse_config

CONFIG = "(0,0,0),(0,1,1),(1,0,2),(1,1,3),(2,0,0),(2,1,1),(3,0,2),(3,1,3)"


def test_parse_config_reads_strtoul_fields_in_order():
    assert parse_config(" (1,0,1),(0x0, 0,0) junk (2,00,0x1)") == [RxQueue(1, 0, 1), RxQueue(0, 0, 0), RxQueue(2, 0, 1)]


@pytest.mark.parametrize("text,needle", [
    ("(0,0)", "Invalid config"), ("(0,0,0", "Invalid config"), ("(a,0,0)", "Invalid config"),
    ("(33,0,0)", "Invalid config"), ("(0,0,129)", "Invalid config"), ("", "Invalid config"),
    ("(0,1,0)", "queue ids of the port 0 must be in sequence and must start with 0"),
    ("(0,0,0),(0,2,1)", "must be in sequence"),
    ("(20,0,0)", "port 20 is not enabled in port mask"),
    ("(0,128,0)", "invalid queue number: 128"),
    ("".join(f"({p},0,0)," for p in range(17)), "too many queues (17) for lcore: 0"),
])
def test_config_errors_are_l3fwds(text, needle):
    with pytest.raises(SimError, match=re.escape(needle)):
        lcores_of(parse_config(text), 0x1FFFF)


def test_tx_queues_follow_ascending_lcore_ids():
    lcores = lcores_of(parse_config("(2,0,4),(0,0,2),(0,1,4),(1,0,1),(2,1,2),(3,0,4)"), 0xF)
    assert lcores.ids == [1, 2, 4] and [lcores.tx_queue(lc) for lc in lcores.ids] == [0, 1, 2]
    assert lcores.queues == {0: 2, 1: 1, 2: 2, 3: 1}
    assert [(q.port, q.queue) for q in lcores.rx[4]] == [(2, 0), (0, 1), (3, 0)]


@pytest.fixture(scope="module")
def traffic(tmp_path_factory):
    indir = tmp_path_factory.mktemp("in")
    for port in range(4):
        write_pcap(indir / f"port{port}.pcap", mixed_frames(40 + port, port, 300))
    return indir


def test_several_lcores_with_rss(tmp_path, traffic):
    result = run_cli("run", traffic, "-o", tmp_path / "out", "--config", CONFIG, "--rx-burst", "7", "--json",
                     "--per-queue")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    per_lcore = stats["lcores"]["per_lcore"]
    assert sum(e["rx"] for e in per_lcore.values()) == stats["totals"]["rx"] == 1200
    for entry in per_lcore.values():
        assert entry["rx"] == entry["tx"] + entry["dropped"] == sum(entry["rx_per_queue"].values())
    assert stats["lcores"]["imbalance"] == max(e["rx"] for e in per_lcore.values()) / 300
    # per TX queue files, and each port's merge of them by their heads' time stamps
    for port in range(4):
        queues = [[(bytes(p), (m.sec, m.usec)) for p, m in RawPcapReader(str(tmp_path / "out" / f"port{port}.q{k}.pcap"))]
                  for k in range(4)]
        merged = list(RawPcapReader(str(tmp_path / "out" / f"port{port}.pcap")))
        assert [bytes(p) for p, _ in merged] == [queues[k][i][0] for k, i in head_merge(queues)]
    # --jobs gives the same bytes and counters
    again = run_cli("run", traffic, "-o", tmp_path / "jobs", "--config", CONFIG, "--rx-burst", "7", "--jobs", "2",
                    "--json", "--per-queue")
    assert json.loads(again.stdout)["lcores"] == stats["lcores"]
    for name in sorted(p.name for p in (tmp_path / "out").glob("port*.pcap")):
        assert read_pcap_frames(tmp_path / "jobs" / name) == read_pcap_frames(tmp_path / "out" / name), name


def test_one_lcore_config_writes_todays_files(tmp_path, traffic):
    default = run_cli("run", traffic, "-o", tmp_path / "a", "--quiet")
    configured = run_cli("run", traffic, "-o", tmp_path / "b", "--config", "(0,0,0),(1,0,0),(2,0,0),(3,0,0)", "--quiet")
    assert default.exit_code == configured.exit_code == 0
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == sorted(p.name for p in (tmp_path / "a").iterdir())
    for port in range(4):
        assert read_pcap_frames(tmp_path / "a" / f"port{port}.pcap") == read_pcap_frames(tmp_path / "b" / f"port{port}.pcap")


def test_queue_inputs_and_their_errors(tmp_path, traffic):
    both = run_cli("run", f"0={traffic}/port0.pcap", f"0.1={traffic}/port1.pcap", "-o", tmp_path / "x")
    assert both.exit_code == 2 and "both a whole-port capture and per-queue captures" in both.output
    queues = run_cli("run", f"0.0={traffic}/port0.pcap", f"0.1={traffic}/port1.pcap", "-o", tmp_path / "q",
                     "--config", "(0,0,0),(0,1,1)", "--json")
    assert queues.exit_code == 0, queues.output
    per_lcore = json.loads(queues.stdout)["lcores"]["per_lcore"]
    assert per_lcore["0"]["rx_per_queue"] == {"0.0": 300} and per_lcore["1"]["rx_per_queue"] == {"0.1": 300}


@pytest.mark.parametrize("pipeline", ["simple", "multi"])
@pytest.mark.parametrize("config,rx_burst", [("(0,0,3),(1,0,1),(0,1,1),(2,0,3)", 5), ("(2,0,0),(0,0,2),(1,0,2)", 1)])
def test_several_lcores_match_the_oracle(tmp_path, pipeline, config, rx_burst):
    """Per-queue inputs, several lcores: every TX queue's file against the oracle's
    per-lcore polling."""
    from oracle import l3fwd_oracle
    tuples = [tuple(int(x) for x in t.split(",")) for t in re.findall(r"\(([^)]*)\)", config)]
    inputs = {(port, queue): mixed_frames(port * 10 + queue, port, 120) for port, queue, _ in tuples}
    args = []
    for (port, queue), frames in inputs.items():
        write_pcap(tmp_path / f"in{port}.{queue}.pcap", frames)
        args.append(f"{port}.{queue}={tmp_path}/in{port}.{queue}.pcap")
    result = run_cli("run", *args, "-o", tmp_path / "out", "-p", "0x7", "--config", config, "--quiet",
                     "--pipeline", pipeline, "--rx-burst", str(rx_burst), "--per-queue")
    assert result.exit_code == 0, result.output
    want, _ = l3fwd_oracle(inputs, portmask=0x7, pipeline=pipeline, rx_burst=rx_burst, config=tuples)
    for (port, queue), frames in want.items():
        assert read_pcap_frames(tmp_path / "out" / f"port{port}.q{queue}.pcap") == frames, (port, queue)


def test_compare_and_run_read_a_several_lcore_output_directory(tmp_path, traffic):
    """Its port<N>.q<K>.pcap files sit beside the merged port<N>.pcap: directories take
    the whole-port files, so compare and a chained run work on it."""
    config = "(0,0,0),(1,0,1),(2,0,0),(3,0,1)"
    for name in ("a", "b"):
        assert run_cli("run", traffic, "-o", tmp_path / name, "--config", config, "--quiet",
                       "--per-queue").exit_code == 0
    assert any(".q" in p.name for p in (tmp_path / "a").iterdir())
    same = run_cli("compare", tmp_path / "a", tmp_path / "b")
    assert same.exit_code == 0, same.output
    chained = run_cli("run", tmp_path / "a", "-o", tmp_path / "c", "--json")
    assert chained.exit_code == 0, chained.output
    assert json.loads(chained.output)["totals"]["rx"] == json.loads((tmp_path / "a" / "stats.json").read_text())["totals"]["tx"]


def test_directory_inputs_ignore_names_with_non_ascii_digits(tmp_path):
    """port١.pcap, port１.pcap, port0.q٣.pcap are no port's capture (int() would read their
    digits): a directory is found to hold port 0 only, and one holding only such names
    holds nothing."""
    from l3fwd_sim.dataplane.inputs import find_inputs
    for name in ("port0.pcap", "port\u0661.pcap", "port\uff11.pcap", "port0.q\u0663.pcap", "port\u0662.q0.pcapng"):
        write_pcap(tmp_path / name, [])
    assert find_rx_queues([str(tmp_path)]) == {(0, None): tmp_path / "port0.pcap"}
    assert find_inputs([str(tmp_path)]) == {0: tmp_path / "port0.pcap"}
    (tmp_path / "port0.pcap").unlink()
    with pytest.raises(SimError, match="no port<N>.pcap files in this directory"):
        find_rx_queues([str(tmp_path)])


def test_directory_of_gzip_and_pcapng_captures_runs_like_the_plain_one(tmp_path):
    """port<N>.pcap.gz, port<N>.pcapng and port<N>.pcapng.gz are found as port<N>.pcap
    is; the run forwards the same frames."""
    import gzip
    from handmade import Ng
    frames = {p: mixed_frames(40 + p, p, 50) for p in range(4)}
    plain, mixed = tmp_path / "plain", tmp_path / "mixed"
    plain.mkdir()
    mixed.mkdir()
    for p, fs in frames.items():
        write_pcap(plain / f"port{p}.pcap", fs)
    ng = Ng("<")
    pcapng = ng.shb() + ng.idb() + b"".join(ng.epb(0, 1_700_000_000 * 10**6 + k, f) for k, f in enumerate(frames[1]))
    (mixed / "port0.pcap.gz").write_bytes(gzip.compress((plain / "port0.pcap").read_bytes()))
    (mixed / "port1.pcapng").write_bytes(pcapng)
    (mixed / "port2.pcapng.gz").write_bytes(gzip.compress(pcapng))
    (mixed / "port3.pcap").write_bytes((plain / "port3.pcap").read_bytes())
    assert sorted(find_rx_queues([str(mixed)])) == [(p, None) for p in range(4)]
    frames[2] = frames[1]                                  # port 2's file holds port 1's frames
    write_pcap(plain / "port2.pcap", frames[2])
    for d in (plain, mixed):
        run_cli("run", str(d), "-o", str(tmp_path / f"out-{d.name}"), "--output-format", "pcap", "--quiet")
    for p in range(4):
        assert read_pcap_frames(tmp_path / f"out-mixed/port{p}.pcap") == read_pcap_frames(tmp_path / f"out-plain/port{p}.pcap")


@pytest.mark.parametrize("names", [("port0.pcap", "port0.pcap.gz"), ("port0.pcap", "port0.pcapng"),
                                   ("port1.pcapng", "port1.pcapng.gz"), ("port2.q1.pcap", "port2.q1.pcapng")])
def test_two_files_for_one_port_are_refused_in_one_line(tmp_path, names):
    for name in names:
        write_pcap(tmp_path / name, [])
    with pytest.raises(SimError) as info:
        find_rx_queues([str(tmp_path)])
    message = str(info.value)
    assert "\n" not in message and all(name in message for name in names) and "keep one" in message


@pytest.mark.parametrize("command,spec,out", [("run", "0.0=q/\x00port0.q0.pcap", "out"), ("testpmd", "0=port0\x00.pcap", "out"),
                                              ("run", ".\x00", "out"), ("run", "0=port0.pcap", "out\x00"),
                                              ("generate", "random", "o\x00ut")])
def test_nul_in_a_path_refused(tmp_path, command, spec, out):
    """A NUL character in an INPUT or -o path (os.stat would raise ValueError): one line
    (found by tests/fuzz/test_fuzz_options.py)."""
    from refusals import assert_refused
    write_pcap(tmp_path / "port0.pcap", mixed_frames(1, 0, 10))
    assert_refused(run_cli(command, spec.replace("port0", str(tmp_path / "port0")).replace(".\x00", f"{tmp_path}\x00"),
                           "-o", f"{tmp_path}/{out}"), "cannot hold a NUL character")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["port0.pcap"]


@pytest.mark.parametrize("text", ["0=a\x00.pcap", "0.1=q/\x00"])
def test_nul_in_a_path_refused_by_the_library(text):
    """The CLI refuses a NUL in any argument before parsing; the library's own callers
    (find_rx_queues of an API user) get the same one line from as_location."""
    with pytest.raises(SimError, match="a file name cannot hold a NUL character"):
        find_rx_queues([text])
