"""The ``l3fwd-sim run`` command line, run as a real subprocess.

Bad input must end with exit status 2 and exactly one line on stderr starting with
``l3fwd-sim:`` (no traceback). A good run is checked against the independent oracle
(tests/oracle.py), scapy's pcap reader and its own stats.json.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from scapy.utils import RawPcapReader

from oracle import l3fwd_oracle  # noqa: E402
from frames import mixed_frames, write_pcap  # noqa: E402
from forwarding import REPO  # noqa: E402

CLI = Path(sys.executable).with_name("l3fwd-sim")
N_FRAMES = 300
START = {0: 1_700_000_000.0, 2: 1_700_000_100.0}


# ---------------------------------------------------------------------------------------
# helpers and fixtures
# ---------------------------------------------------------------------------------------
def cli(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=300)


def assert_clean_error(res: subprocess.CompletedProcess, needles=()) -> str:
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    lines = res.stderr.splitlines()
    assert len(lines) == 1, res.stderr[-2000:]
    assert lines[0].startswith("l3fwd-sim: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    assert res.returncode == 2, (res.returncode, lines[0])
    assert res.stdout == ""
    return lines[0]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pcap_records(path: Path):
    """(frame, sec, usec, caplen, wirelen) via scapy; also checks the link type."""
    with RawPcapReader(str(path)) as r:
        assert r.linktype == 1
        return [(bytes(d), m.sec, m.usec, m.caplen, m.wirelen) for d, m in r]


def pcap_header(linktype=1, magic=0xA1B2C3D4) -> bytes:
    return struct.pack("<IHHiIII", magic, 2, 4, 0, 0, 65535, linktype)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """Input pcaps on ports 0 and 2, plus broken files for the error cases."""
    root = tmp_path_factory.mktemp("cli")
    indir = root / "in"
    indir.mkdir()
    frames = {p: mixed_frames(11, p, N_FRAMES) for p in (0, 2)}
    for p in (0, 2):
        write_pcap(indir / f"port{p}.pcap", frames[p], start_ts=START[p])
    bad = root / "bad"
    bad.mkdir()
    (bad / "notpcap.pcap").write_bytes(b"this is not a capture file, honest\n" * 4)
    (bad / "radiotap.pcap").write_bytes(pcap_header(linktype=127) + struct.pack("<IIII", 1, 0, 20, 20) + bytes(20))
    # pcapng whose only interface is 802.11 radiotap (Ethernet and a few converted link types are read)
    (bad / "ng.pcap").write_bytes(struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28) +
                                  struct.pack("<IIHHII", 1, 20, 127, 0, 0, 20))
    good = (indir / "port0.pcap").read_bytes()
    (bad / "damaged.pcap").write_bytes(good + struct.pack("<IIII", 1, 0, 262145, 262145) + bytes(100))
    (bad / "empty.pcap").write_bytes(b"")
    nopcaps = root / "nopcaps"
    nopcaps.mkdir()
    for name in ("capture.pcap", "port.pcap", "port0.pcapng.bz2", "Port1.pcap", "port2.pcap.bak"):
        (nopcaps / name).write_bytes(good[:24])
    rules = root / "rules"
    rules.mkdir()
    (rules / "good_v4.cfg").write_text("# v4\nR198.18.0.0/24 0\nR198.18.1.0/24 1\n")
    (rules / "good_v6.cfg").write_text("# v6\nR2001:200::/64 0\n")
    (rules / "bad_v4.cfg").write_text("# v4\nR198.18.0.0/24 0\nR198.18.1.0/24 1 extra\n")
    (rules / "bad_v6.cfg").write_text("R2001:200::/64 0\n\nR2001:200:0:1::/129 1\n")
    (rules / "depth0_v4.cfg").write_text("R198.18.0.0/24 0\nR0.0.0.0/0 1\n")
    (rules / "empty_v4.cfg").write_text("# nothing but comments\n\n")
    (root / "afile").write_text("not a directory\n")
    hashes = {p: sha256(p) for p in sorted(indir.iterdir())}
    return {"root": root, "in": indir, "bad": bad, "nopcaps": nopcaps, "rules": rules,
            "frames": frames, "hashes": hashes}


# ---------------------------------------------------------------------------------------
# bad input: exit status 2, one line on stderr, no traceback
# ---------------------------------------------------------------------------------------
def _case(name, args, needles=(), extra_marks=()):
    return name, args, needles, extra_marks


R = "{rules}"
ERROR_CASES = [
    _case("missing-input-dir", ["{root}/nonexistent", "-o", "{out}"], ["nonexistent"]),
    _case("dir-without-port-pcaps", ["{nopcaps}", "-o", "{out}"], ["nopcaps"]),
    _case("not-a-pcap", ["0={bad}/notpcap.pcap", "-o", "{out}"], ["notpcap.pcap"]),
    _case("empty-file", ["0={bad}/empty.pcap", "-o", "{out}"], ["empty.pcap"]),
    _case("pcapng-radiotap", ["0={bad}/ng.pcap", "-o", "{out}"], ["ng.pcap", "interface 0", "link type 127"]),
    _case("linktype-127", ["0={bad}/radiotap.pcap", "-o", "{out}"], ["radiotap.pcap", "127"]),
    _case("damaged-record", ["0={bad}/damaged.pcap", "-o", "{out}"], ["damaged.pcap", "offset"]),
    _case("missing-input-file", ["0={root}/missing.pcap", "-o", "{out}"], ["missing.pcap"]),
    _case("same-port-twice", ["0={in}/port0.pcap", "0={in}/port2.pcap", "-o", "{out}"], ["port 0"]),
    _case("port-32", ["32={in}/port0.pcap", "-o", "{out}"], ["32"]),
    _case("malformed-rule-v4", ["{in}", "-o", "{out}", "-p", "0xf", "--rule_ipv4", R + "/bad_v4.cfg",
                                "--rule_ipv6", R + "/good_v6.cfg"], ["bad_v4.cfg:3:"]),
    _case("malformed-rule-v6", ["{in}", "-o", "{out}", "-p", "0xf", "--rule_ipv4", R + "/good_v4.cfg",
                                "--rule_ipv6", R + "/bad_v6.cfg"], ["bad_v6.cfg:3:"]),
    _case("depth-0-lpm", ["{in}", "-o", "{out}", "-p", "0xf", "--rule_ipv4", R + "/depth0_v4.cfg",
                          "--rule_ipv6", R + "/good_v6.cfg"], ["depth0_v4.cfg:2:"]),
    _case("missing-rule-file", ["{in}", "-o", "{out}", "--rule_ipv4", R + "/nope.cfg",
                                "--rule_ipv6", R + "/good_v6.cfg"], ["nope.cfg"]),
    _case("portmask-zz", ["{in}", "-o", "{out}", "-p", "zz"], ["zz"]),
    _case("portmask-0", ["{in}", "-o", "{out}", "-p", "0"], ["portmask"]),
    _case("portmask-too-wide", ["{in}", "-o", "{out}", "-p", "0x100000005"], ["portmask"]),
    _case("eth-dest-bad-mac", ["{in}", "-o", "{out}", "--eth-dest", "0,zz:00:00:00:00:01"], ["zz:00:00:00:00:01"]),
    _case("eth-dest-short-mac", ["{in}", "-o", "{out}", "--eth-dest", "0,02:00:00:00:01"], ["--eth-dest"]),
    _case("eth-dest-no-comma", ["{in}", "-o", "{out}", "--eth-dest", "02:00:00:00:00:01"], ["--eth-dest"]),
    _case("eth-dest-port-40", ["{in}", "-o", "{out}", "--eth-dest", "40,02:00:00:00:00:01"], ["--eth-dest"]),
    _case("port-mac-bad", ["{in}", "-o", "{out}", "--port-mac", "1,02:00:00:00:00:0g"], ["--port-mac"]),
    _case("lookup-bogus", ["{in}", "-o", "{out}", "--lookup", "bogus"], ["--lookup"]),
    _case("missing-output", ["{in}"], ["--output"]),
    _case("unknown-option", ["{in}", "-o", "{out}", "--frobnicate"], ["--frobnicate"]),
    _case("max-pkt-len-63", ["{in}", "-o", "{out}", "--max-pkt-len", "63"], ["--max-pkt-len 63", "64..9600"]),
    _case("max-pkt-len-9601", ["{in}", "-o", "{out}", "--max-pkt-len", "9601"], ["Invalid max packet length"]),
    _case("max-pkt-len-2049", ["{in}", "-o", "{out}", "--max-pkt-len", "2049"], ["2049", "Rx scatter is disabled"]),
    _case("acl-without-rule-files", ["{in}", "-o", "{out}", "--lookup", "acl"], ["--rule_ipv4", "--rule_ipv6"]),
    _case("acl-with-lpm-rules", ["{in}", "-o", "{out}", "-p", "0xf", "--lookup", "acl", "--rule_ipv4",
                                 R + "/good_v4.cfg", "--rule_ipv6", R + "/good_v6.cfg"], ["good_v4.cfg:"]),
    _case("no-input-in-portmask", ["1={in}/port2.pcap", "2={in}/port0.pcap", "-o", "{out}", "-p", "0x1"],
          ["no input", "0x1"]),
    _case("output-is-input-dir", ["{in}", "-o", "{in}", "-p", "0xf"], ["overwrite"]),
    _case("output-is-a-file", ["{in}", "-o", "{root}/afile"], ["afile"]),
    _case("portmask-underscore", ["{in}", "-o", "{out}", "-p", "0x_f"], ["portmask"]),
    _case("input-port-superscript", ["\u00b2={in}/port0.pcap", "-o", "{out}"], ["\u00b2"]),
    _case("eth-dest-port-superscript", ["{in}", "-o", "{out}", "--eth-dest", "\u00b2,02:00:00:00:00:01"],
          ["--eth-dest"]),
]


def _fill_args(args, world, out):
    names = {k: str(v) for k, v in world.items() if isinstance(v, Path)}
    names["out"] = str(out)
    return [a.format(**names) for a in args]


def _params(entry):
    params = []
    for name, args, needles, marks in ERROR_CASES:
        marks = list(marks)
        params.append(pytest.param(args, needles, marks=marks, id=name))
    return params


@pytest.mark.parametrize("args,needles", _params("console-script"))
def test_bad_input_console_script(world, tmp_path, args, needles):
    out = tmp_path / "out"
    before = sorted(p.name for p in world["in"].iterdir())
    res = cli("run", *_fill_args(args, world, out))
    assert_clean_error(res, needles)
    # nothing written: no outputs, no stats.json, no temporary files, inputs untouched
    if out.exists():
        assert list(out.iterdir()) == []
    assert sorted(p.name for p in world["in"].iterdir()) == before
    assert {p: sha256(p) for p in sorted(world["in"].iterdir())} == world["hashes"]


@pytest.mark.parametrize("args,needles", _params("command"))
def test_bad_input_command_handler(world, tmp_path, args, needles, capsys):
    """The same cases in process, through the command group's error handler."""
    from l3fwd_sim.cli import main
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as info:
        main.main(["run", *_fill_args(args, world, out)], prog_name="l3fwd-sim")
    captured = capsys.readouterr()
    res = subprocess.CompletedProcess([], info.value.code, captured.out, captured.err)
    assert_clean_error(res, needles)
    if out.exists():
        assert list(out.iterdir()) == []


def test_no_subcommand_or_unknown_subcommand(world):
    for args in (["frobnicate"], ["run"]):
        assert_clean_error(cli(*args))


def test_damaged_input_leaves_no_partial_output(world, tmp_path):
    """The damage is found while forwarding (after the writers were opened): the run fails
    and removes every output, including temporary files and the directory it created."""
    out = tmp_path / "out"
    res = cli("run", f"0={world['bad']}/damaged.pcap", f"2={world['in']}/port2.pcap", "-o", out, "-p", "0xf")
    assert res.returncode != 0
    assert "damaged.pcap" in res.stderr
    assert not out.exists()


def test_version():
    res = cli("--version")
    assert res.returncode == 0
    assert "l3fwd-sim" in res.stdout


# ---------------------------------------------------------------------------------------
# good runs
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def runs(world):
    root, indir = world["root"], world["in"]
    out = {}

    def go(name, *args):
        d = root / f"out-{name}"
        out[name] = (d, cli("run", *args, "-o", d))
        return out[name]

    go("dir", indir, "-p", "0xf")
    go("json", indir, "-p", "0xf", "--json")
    go("quiet", indir, "-p", "0xf", "--quiet")
    go("files", f"2={indir}/port2.pcap", f"0={indir}/port0.pcap", "-p", "0xf")
    go("L", indir, "-p", "0xf", "-L")
    go("L-lookup", indir, "-p", "0xf", "-L", "--lookup", "lpm")      # refused, as l3fwd refuses it
    go("sparse", indir, "-p", "0x80000005")
    return out


def _stats(d: Path) -> dict:
    return json.loads((d / "stats.json").read_text())


def _comparable(stats: dict) -> dict:
    """stats without the fields that legitimately differ between equivalent runs."""
    s = json.loads(json.dumps(stats))
    for key in ("elapsed_seconds", "mpps", "stages_ns_per_packet", "stages_ms", "setup_ms"):
        s.pop(key, None)
    s.get("options", {}).pop("inputs", None)
    return s


def test_good_run_writes_one_pcap_per_enabled_port(runs, world):
    d, res = runs["dir"]
    assert res.returncode == 0, res.stderr
    # l3fwd's own note: no rule files given (read_config_files_lpm says it whenever both are not)
    assert res.stderr == "l3fwd-sim: warning: Missing 1 or more rule files, using default instead\n"
    _, twice = runs["L-lookup"]
    assert (twice.returncode, twice.stderr) == (2, "l3fwd-sim: Only one lookup mode is allowed at a time! "
                                                   "(-E, -L, --lookup)\n")
    assert sorted(p.name for p in d.iterdir()) == ["port0.pcap", "port1.pcap", "port2.pcap", "port3.pcap",
                                                   "stats.json"]
    oracle, drops = l3fwd_oracle(world["frames"], portmask=0xF)
    stats = _stats(d)
    for port in range(4):
        recs = pcap_records(d / f"port{port}.pcap")
        assert [r[0] for r in recs] == oracle[port], f"port {port} differs from the oracle"
        assert stats["ports"][str(port)]["out"] == len(recs)
    assert {k: v for k, v in stats["drops"].items() if v} == drops


def test_good_run_keeps_timestamps_and_lengths(runs, world):
    d, _ = runs["dir"]
    in_ts = set()
    for p in (0, 2):
        in_ts |= {(r[1], r[2]) for r in pcap_records(world["in"] / f"port{p}.pcap")}
    for port in range(4):
        with RawPcapReader(str(d / f"port{port}.pcap")) as r:
            assert not r.nano   # inputs are microsecond pcaps
        for frame, sec, usec, cap, wire in pcap_records(d / f"port{port}.pcap"):
            assert (sec, usec) in in_ts
            assert cap == wire == len(frame)


def test_stats_conservation(runs):
    d, _ = runs["dir"]
    s = _stats(d)
    assert set(s["ports"]) == {"0", "1", "2", "3"}
    for port, p in s["ports"].items():
        for key in ("rx", "tx", "dropped"):
            assert isinstance(p[key], int) and p[key] >= 0
        assert p["rx"] == p["tx"] + p["dropped"], port
        assert sum(p["drops"].values()) == p["dropped"], port
    assert s["ports"]["0"]["rx"] == s["ports"]["2"]["rx"] == N_FRAMES
    assert s["ports"]["1"]["rx"] == s["ports"]["3"]["rx"] == 0
    t = s["totals"]
    assert t["rx"] == 2 * N_FRAMES
    assert t["rx"] == t["tx"] + t["dropped"]
    assert t["tx"] == sum(p["tx"] for p in s["ports"].values()) == sum(p["out"] for p in s["ports"].values())
    assert t["dropped"] == sum(s["drops"].values()) > 0
    for reason, n in s["drops"].items():
        assert n == sum(p["drops"].get(reason, 0) for p in s["ports"].values())


def test_json_prints_the_stats_json(runs):
    d, res = runs["json"]
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == _stats(d)


def test_quiet_prints_nothing(runs):
    d, res = runs["quiet"]
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""
    assert res.stderr == ""
    assert (d / "stats.json").exists()


def test_default_output_is_a_table(runs):
    d, res = runs["dir"]
    assert str(_stats(d)["totals"]["rx"]) in res.stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(res.stdout)


@pytest.mark.parametrize("name", ["json", "quiet", "files", "L"])
def test_equivalent_runs_give_identical_outputs(runs, name):
    ref, _ = runs["dir"]
    d, res = runs[name]
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in d.iterdir()) == sorted(p.name for p in ref.iterdir())
    for port in range(4):
        assert (d / f"port{port}.pcap").read_bytes() == (ref / f"port{port}.pcap").read_bytes(), port
    assert _comparable(_stats(d)) == _comparable(_stats(ref))


def test_port_without_traffic_gets_an_empty_valid_pcap(runs, world):
    d, res = runs["sparse"]
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in d.iterdir()) == ["port0.pcap", "port2.pcap", "port31.pcap", "stats.json"]
    assert (d / "port31.pcap").stat().st_size == 24
    assert pcap_records(d / "port31.pcap") == []
    oracle, _ = l3fwd_oracle(world["frames"], portmask=0x80000005)
    assert oracle[31] == []
    for port in (0, 2):
        assert [r[0] for r in pcap_records(d / f"port{port}.pcap")] == oracle[port]
    s = _stats(d)
    assert s["ports"]["31"]["rx"] == s["ports"]["31"]["out"] == 0
    assert s["totals"]["rx"] == s["totals"]["tx"] + s["totals"]["dropped"]


def test_truncated_last_record_is_a_warning(world, tmp_path):
    src = (world["in"] / "port0.pcap").read_bytes()
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(src[:-10])
    res = cli("run", f"0={cut}", "-o", tmp_path / "out")
    assert res.returncode == 0, res.stderr
    warnings = [line for line in res.stderr.splitlines() if line.startswith("l3fwd-sim: warning:")
                and "Missing 1 or more rule files" not in line]
    assert len(warnings) == 1 and "cut.pcap" in warnings[0]
    s = _stats(tmp_path / "out")
    assert s["totals"]["rx"] == N_FRAMES - 1
    assert any("cut.pcap" in w for w in s["warnings"])


def test_input_named_stats_json_in_output_dir_is_not_overwritten(world, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    src = out / "stats.json"
    src.write_bytes((world["in"] / "port0.pcap").read_bytes())
    before = sha256(src)
    res = cli("run", f"0={src}", "-o", out, "--quiet")
    assert sha256(src) == before
    assert_clean_error(res, ["stats.json"])


def test_outputs_honour_umask(world, tmp_path):
    out = tmp_path / "out"
    res = subprocess.run([str(CLI), "run", str(world["in"]), "-o", str(out), "--quiet"],
                         capture_output=True, text=True, preexec_fn=lambda: os.umask(0o022), timeout=300)
    assert res.returncode == 0, res.stderr
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in out.iterdir()}
    assert modes == {name: 0o644 for name in modes}


def test_inputs_are_never_modified(world, tmp_path, runs):
    indir = world["in"]
    stat_before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in indir.iterdir()}
    cli("run", indir, "-o", tmp_path / "a", "-p", "0xf")
    cli("run", indir, "-o", indir, "-p", "0xf")           # refused
    cli("run", f"0={indir}/port0.pcap", "-o", tmp_path / "b", "--json")
    assert {p: sha256(p) for p in sorted(indir.iterdir())} == world["hashes"]
    assert world["hashes"]    # the inputs do exist
    assert {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in indir.iterdir()} == stat_before


def test_empty_rule_file_is_accepted_with_a_warning(world, tmp_path):
    """dpdk-l3fwd refuses a rule file without R lines; l3fwd-sim accepts it (no routes:
    every lookup misses) and says so."""
    rules = world["rules"]
    res = cli("run", world["in"], "-o", tmp_path / "out", "-p", "0xf",
              "--rule_ipv4", rules / "empty_v4.cfg", "--rule_ipv6", rules / "good_v6.cfg")
    assert res.returncode == 0, res.stderr
    assert "empty_v4.cfg: no rules" in res.stderr
    stats = _stats(tmp_path / "out")
    assert stats["options"]["routes_installed"]["ipv4"] == 0
    assert any("empty_v4.cfg" in w for w in stats["warnings"])


UNUSED_BY_RUN = ("dask", "distributed", "scapy", "tomllib", "numba", "bokeh", "l3fwd_sim.report",
                 "l3fwd_sim.testpmd", "l3fwd_sim.diff",
                 "l3fwd_sim.traffic", "l3fwd_sim.bench", "l3fwd_sim.dataplane.cluster", "l3fwd_sim.dataplane.jobs",
                 "l3fwd_sim.dataplane.trace", "l3fwd_sim.dataplane.jsonlines", "l3fwd_sim.l3fwd.lookup")


@pytest.mark.parametrize("args,loaded", [([], ()), (["--trace", "all"], ("l3fwd_sim.dataplane.trace", "l3fwd_sim.dataplane.jsonlines"))])
def test_run_imports_only_what_it_uses(tmp_path, args, loaded):
    """`run` starts fast by importing only its own code: not Dask, scapy, the traffic
    generator, TOML, testpmd, compare, the report (Bokeh), --jobs, --cluster — nor the trace machinery
    unless --trace asks for it."""
    code = ("import sys; from l3fwd_sim.cli import main\n"
            f"sys.argv = ['l3fwd-sim', 'run', {str(REPO / 'pcaps')!r}, '-o', {str(tmp_path / 'o')!r}, '--quiet', "
            f"*{args!r}]\n"
            "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
            "print(' '.join(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modules = set(done.stdout.split())
    unused = [m for m in modules if m.startswith(UNUSED_BY_RUN) and not m.startswith(loaded)]
    assert unused == []
    assert all(m in modules for m in loaded)
