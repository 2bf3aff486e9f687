"""``l3fwd-sim dpdk-l3fwd``: real dpdk-l3fwd v26.07 command lines, verbatim.

Every golden run is replayed as the command line that produced it (EAL part, one
``--vdev net_pcapN`` per port, per-queue files for several lcores) and its ``tx_pcap``
files compared with what real l3fwd transmitted; where it refused (``error.txt``), exit 2,
one line, no tx file. Then each refusal real_command_lines.md lists, the options it
accepts with unchanged outputs, the console lines DTS checks, and the outputs as one
all-or-nothing set."""
from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from dpdk_lines import invoke, l3fwd_line
from forwarding import GOLDEN, golden_runs
from frames import assert_same_records, read_pcap_frames, write_pcap
from refusals import assert_refused

from l3fwd_sim.capture import outdir as outdir_module

MIX = GOLDEN / "mix_default"


@pytest.mark.parametrize("scenario,expected,options", golden_runs())
def test_golden_command_line(tmp_path, scenario, expected, options):
    argv, env, outputs = l3fwd_line(GOLDEN / scenario, options, tmp_path)
    result = invoke("dpdk-l3fwd", *argv, env=env)
    error = GOLDEN / scenario / expected / "error.txt"
    if error.is_file():                              # real dpdk-l3fwd refused to start: its decisive message
        assert_refused(result, re.split(r": (?:L3FWD|ETH_PCAP: eth_rx_queue_setup\(\)): ", error.read_text())[1].strip())
        assert list(tmp_path.iterdir()) == []
        return
    assert result.exit_code == 0, result.output
    want_files = sorted((GOLDEN / scenario / expected).glob("port*.pcap"))
    assert want_files and {p.name for p in want_files} <= set(outputs)
    for want_file in want_files:
        assert_same_records(want_file, outputs[want_file.name], want_file.name)
    for name in set(outputs) - {p.name for p in want_files}:      # a disabled port's tx file: created, empty
        assert read_pcap_frames(outputs[name]) == []
    magic = (GOLDEN / scenario / "in").glob("port*.pcap").__next__().read_bytes()[:4]
    assert all(path.read_bytes()[:4] == magic for path in outputs.values())   # the inputs' precision, empty ones too


def mix_line(tmp_path, app: str, eal: str = "-l 0", ports: int = 2, tx: int = 1) -> list[str]:
    """A small dpdk-l3fwd line over the mix_default inputs."""
    argv = eal.split()
    for port in range(ports):
        tx_files = ",".join(f"tx_pcap={tmp_path / f'port{port}.q{k}.pcap'}" for k in range(tx))
        argv += ["--vdev", f"net_pcap{port},rx_pcap={MIX / 'in' / f'port{port}.pcap'},{tx_files}"]
    return argv + ["--", *app.split()]


BASE = "-p 0x3 --config (0,0,0),(1,0,0) --parse-ptype --relax-rx-offload"

# real_command_lines.md's refusals (and the ones l3fwd-sim adds for what it does not model)
REFUSALS = [
    ("-p 0x3 --config (0,0,0),(1,0,0) --relax-rx-offload", "-l 0", "port 0 cannot parse packet type, please add --parse-ptype"),
    ("-p 0x3 --config (0,0,0),(1,0,0) --parse-ptype", "-l 0", "Cannot configure device: err=-22, port=0"),
    (BASE + " --eth-link-speed 10", "-l 0", "Unsupported fixed speed"),
    (BASE + " --eth-link-speed 100", "-l 0", "Unsupported fixed speed"),
    (BASE + " --mode=eventdev", "-l 0", "lcore config is not valid when event mode is selected"),
    (BASE + " --event-eth-rxqs 2", "-l 0", "eth_rx_queues is valid only when event mode is selected"),
    (BASE + " --rx-queue-size 0", "-l 0", "Invalid rx-queue-size"),
    (BASE + " --tx-queue-size 70000", "-l 0", "tx-queue-size 70000 > 65535"),
    (BASE + " --mbcache 1024", "-l 0", "mbcache must be >= 0 and <= 512"),
    (BASE + " -E --lookup=lpm", "-l 0", "Only one lookup mode is allowed at a time!"),
    (BASE + " --lookup=bogus", "-l 0", "Invalid lookup option! Accepted options: acl, em, lpm, fib"),
    ("-p 0x3 --config (0,0,1),(1,0,0) --parse-ptype --relax-rx-offload", "-l 0",
     "error: lcore 1 is not enabled in lcore mask"),
    ("-p 0x3 --parse-ptype --relax-rx-offload", "-l 0", "error: lcore 2 is not enabled in lcore mask"),  # l3fwd's default --config
    (BASE, "-l 0-1", "Cannot configure device: err=-22, port=0"),             # 2 lcores, 1 tx_pcap per port
    ("-p 0x7 --config (0,0,0),(2,0,0) --parse-ptype --relax-rx-offload", "-l 0", "port 2 is not present on the board"),
    (BASE + " --bogus", "-l 0", "unrecognized option '--bogus'"),
    (BASE, "-l 0 -a 0000:01:00.0", "PCI devices are not modelled"),
    (BASE, "-l 0 --vdev net_null0", "only net_pcap devices are modelled"),
    (BASE, "-l 0 --vdev net_pcap9,iface=eth0", "iface= is not modelled"),
    (BASE, "-l 0 --vdev net_pcap9,rx_iface=eth0", "rx_iface= is not modelled"),
    (BASE, "-l 0 --vdev net_pcap9,tx_iface=eth0", "tx_iface= is not modelled"),
    (BASE, "-l 0 --frobnicate", "unrecognized option '--frobnicate'"),
    (BASE, "-l 0 -l 1", "both set the lcores"),
    (BASE, "-l 0 --proc-type secondary", "only a primary process is modelled"),
]


@pytest.mark.parametrize("app,eal,needle", REFUSALS, ids=[r[2][:40] for r in REFUSALS])
def test_refused_as_real_l3fwd(tmp_path, app, eal, needle):
    """Exit 2, l3fwd's message in one line, and every file as it was (a tx file that
    existed keeps its bytes; real net_pcap would have left it empty)."""
    (tmp_path / "port0.q0.pcap").write_bytes(b"before")
    result = invoke("dpdk-l3fwd", *mix_line(tmp_path, app, eal))
    assert_refused(result, needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["port0.q0.pcap"]
    assert (tmp_path / "port0.q0.pcap").read_bytes() == b"before"


def test_infinite_rx_refused(tmp_path):
    line = mix_line(tmp_path, BASE)
    line[3] += ",infinite_rx=1"
    assert_refused(invoke("dpdk-l3fwd", *line), "infinite_rx= is not modelled")


@pytest.mark.parametrize("extra", [
    "-P", "--rx-queue-size 512 --tx-queue-size 2048", "--no-numa", "--per-port-pool", "--mbcache 256", "-L",
    "--lookup=lpm", "--hash-entry-num 16", "--disable-rss", "--rx-burst 0", "--rx-burst 600", "--tx-burst 0",
    "--eth-link-speed 1000", "--mode=poll", "--mbcache abc", "--alg=scalar"])
def test_accepted_with_outputs_unchanged(tmp_path, extra):
    """real_command_lines.md: each of these ran on real v26.07 with outputs byte-identical
    to the plain run."""
    plain, other = tmp_path / "plain", tmp_path / "other"
    plain.mkdir(), other.mkdir()
    assert invoke("dpdk-l3fwd", *mix_line(plain, BASE)).exit_code == 0
    result = invoke("dpdk-l3fwd", *mix_line(other, f"{BASE} {extra}"))
    assert result.exit_code == 0, result.output
    for port in (0, 1):
        name = f"port{port}.q0.pcap"
        assert read_pcap_frames(other / name) == read_pcap_frames(plain / name)


@pytest.mark.parametrize("rules,lookup", [((), ""), (("v4",), "--lookup=em"), (("v6",), "-L"),
                                          (("v4", "v6"), "--lookup=fib"), ((), "-E")])
def test_console_lines_dts_checks(tmp_path, rules, lookup):
    """"Missing 1 or more rule files" whenever the two files are not both given (DTS
    greps for it), the lookup default only without a lookup option, l3fwd's notes."""
    files = {"v4": f"--rule_ipv4={GOLDEN / 'mix_rules' / 'rules_v4.cfg'}",
             "v6": f"--rule_ipv6={GOLDEN / 'mix_rules' / 'rules_v6.cfg'}"}
    kind = "em" if lookup in ("--lookup=em", "-E") else "lpm"
    if kind == "em":                                   # EM takes its own rule format
        files = {"v4": f"--rule_ipv4={GOLDEN / 'em_rules' / 'em_v4.cfg'}",
                 "v6": f"--rule_ipv6={GOLDEN / 'em_rules' / 'em_v6.cfg'}"}
    app = " ".join([BASE, lookup, "--hash-entry-num 4", *(files[r] for r in rules)])
    result = invoke("dpdk-l3fwd", *mix_line(tmp_path, app))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert ("L3FWD: Missing 1 or more rule files, using default instead" in lines) == (len(rules) < 2)
    assert ("Neither ACL, LPM, EM, or FIB selected, defaulting to LPM" in lines) == (lookup == "")
    assert "Hash entry number will be ignored" in lines and "soft parse-ptype is enabled" in lines
    assert "Initializing port 1 ... Creating queues: nb_rxq=1 nb_txq=1" in result.stdout
    assert "Missing" not in result.stderr                 # said once, as l3fwd's own line


def test_lcores_queues_and_idle_lcore(tmp_path):
    """``-l 0-2`` with --config naming lcores 0 and 2: three TX queues per port (one per
    EAL lcore, in ascending lcore id), lcore 1's stays empty; the stats file when asked."""
    stats_file = tmp_path / "stats.json"
    result = invoke("dpdk-l3fwd", *mix_line(tmp_path, "-p 0x3 --config (0,0,0),(1,0,2) --parse-ptype "
                                            "--relax-rx-offload", "-l 0-2", tx=3),
                    env={"L3FWD_SIM_STATS": str(stats_file)})
    assert result.exit_code == 0, result.output
    assert "L3FWD: lcore 1 has nothing to do" in result.stdout
    stats = json.loads(stats_file.read_text())
    assert [stats["lcores"]["per_lcore"][str(lc)]["tx_queue"] for lc in (0, 1, 2)] == [0, 1, 2]
    for port in (0, 1):
        assert read_pcap_frames(tmp_path / f"port{port}.q1.pcap") == []
    sent = {port: sum(len(read_pcap_frames(tmp_path / f"port{port}.q{k}.pcap")) for k in range(3)) for port in (0, 1)}
    assert sent == {int(p): v["out"] for p, v in stats["ports"].items()}
    assert stats["totals"]["rx"] == stats["totals"]["tx"] + stats["totals"]["dropped"]


def test_extra_tx_files_and_disabled_port_are_empty_pcaps(tmp_path):
    """A tx_pcap beyond the lcores' queues, and every tx file of a port outside -p: empty
    pcaps, as net_pcap creates them."""
    line = mix_line(tmp_path, "-p 0x1 --config (0,0,0) --parse-ptype --relax-rx-offload", tx=2)
    result = invoke("dpdk-l3fwd", *line)
    assert result.exit_code == 0, result.output
    assert read_pcap_frames(tmp_path / "port0.q0.pcap")
    for name in ("port0.q1.pcap", "port1.q0.pcap", "port1.q1.pcap"):
        assert read_pcap_frames(tmp_path / name) == []


@pytest.mark.parametrize("stop", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_tx_files_all_or_nothing(tmp_path, monkeypatch, stop):
    """A failure while the tx files are put in place (a full disk, Ctrl-C) leaves every
    earlier tx file as it was and nothing of ours behind."""
    for port in (0, 1):
        write_pcap(tmp_path / f"port{port}.q0.pcap", [b"\x00" * 60])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    real_rename, calls = os.rename, []

    def rename(source, target):
        if Path(target).name in before:     # a tx file put in place: fail at the second one
            calls.append(target)
            if len(calls) == 2:
                raise stop
        return real_rename(source, target)
    monkeypatch.setattr(outdir_module.os, "rename", rename)
    result = invoke("dpdk-l3fwd", *mix_line(tmp_path, BASE))
    if isinstance(stop, KeyboardInterrupt):
        assert result.exit_code == 130 and "no partial output was left" in result.stderr
    else:
        assert_refused(result, "nothing was changed")
    assert len(calls) >= 2                  # it did fail part-way
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_inputs_and_outputs_checked_before_running(tmp_path):
    rx = MIX / "in" / "port0.pcap"
    copy = tmp_path / "in.pcap"
    shutil.copy(rx, copy)
    cases = [
        ([f"net_pcap0,rx_pcap={copy},tx_pcap={copy}"], "both an rx_pcap input and an output"),
        ([f"net_pcap0,rx_pcap={rx},tx_pcap={tmp_path}/a.pcap,tx_pcap={tmp_path}/a.pcap"], "named as two outputs"),
        ([f"net_pcap0,rx_pcap={rx},tx_pcap={tmp_path}/no/a.pcap"], "does not exist"),
        ([f"net_pcap0,rx_pcap={tmp_path}/missing.pcap,tx_pcap={tmp_path}/a.pcap"], "missing.pcap: cannot open"),
        ([f"net_pcap0,rx_pcap={rx}"], "this run would write nothing"),
    ]
    for vdevs, needle in cases:
        argv = ["-l", "0", *(w for v in vdevs for w in ("--vdev", v)), "--", "-p", "0x1", "--config", "(0,0,0)",
                "--parse-ptype", "--relax-rx-offload"]
        assert_refused(invoke("dpdk-l3fwd", *argv), needle)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.pcap"]
    assert copy.read_bytes() == rx.read_bytes()


def test_pipeline_from_environment(tmp_path):
    """The build variant is DPDK's compile-time choice: L3FWD_SIM_PIPELINE, argv verbatim."""
    outs = {}
    for pipeline in ("simple", "multi"):
        (tmp_path / pipeline).mkdir()
        result = invoke("dpdk-l3fwd", *mix_line(tmp_path / pipeline, BASE), env={"L3FWD_SIM_PIPELINE": pipeline,
                                                                                 "L3FWD_SIM_STATS": str(tmp_path / f"{pipeline}.json")})
        assert result.exit_code == 0
        assert json.loads((tmp_path / f"{pipeline}.json").read_text())["options"]["pipeline"] == pipeline
        outs[pipeline] = read_pcap_frames(tmp_path / pipeline / "port0.q0.pcap")
    assert outs["simple"] != outs["multi"]             # lpm: the paths differ on non-IP frames (D1)
    assert_refused(invoke("dpdk-l3fwd", *mix_line(tmp_path, BASE), env={"L3FWD_SIM_PIPELINE": "fast"}),
                   "L3FWD_SIM_PIPELINE")


def test_getopt_spellings(tmp_path):
    """What glibc's getopt_long takes: attached short arguments, ``--opt=value``, unique
    prefixes of long options."""
    spelled = tmp_path / "spelled"
    spelled.mkdir()
    line = mix_line(spelled, "-p0x3 --conf=(0,0,0),(1,0,0) --parse-ptype --relax-rx --look=lpm")
    line[:2] = ["-l0"]
    assert invoke("dpdk-l3fwd", *line).exit_code == 0
    assert invoke("dpdk-l3fwd", *mix_line(tmp_path, BASE)).exit_code == 0
    for port in (0, 1):
        assert read_pcap_frames(spelled / f"port{port}.q0.pcap") == read_pcap_frames(tmp_path / f"port{port}.q0.pcap")
    assert_refused(invoke("dpdk-l3fwd", *mix_line(tmp_path, BASE + " --rule_ipv=x")), "is ambiguous")
