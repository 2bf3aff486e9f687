"""Fuzz every option value and argument the CLI parses: ``run``'s options (l3fwd's app
options included), INPUT specs, malformed ``--cluster`` addresses, ``testpmd``'s options,
``generate``'s PATTERN and options, ``lookup``'s keys, ``compare``'s options, and verbatim
``dpdk-l3fwd`` / ``dpdk-testpmd`` command lines with words mutated, dropped or repeated:
valid values mutated, hostile text, Unicode digits, 5000-digit numbers (support/fuzzing.py)."""
from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path

from hypothesis import strategies as st
from fuzzing import fuzz, hostile_text, mutated, run_case
from frames import mixed_frames, write_pcap

BIG = "9" * 5000
# values every option parser meets: Unicode digits, huge, empty, whitespace, NUL, signs
SPECIAL = ["\u0661", "\uff11", "\u0663\u0662", BIG, "-" + BIG, "0x" + "f" * 5000, "", " ", "\n", "\x00", "1\x00",
           " 32 ", "32\n", "\t1", "+1", "-1", "+", "-", "0", "-0", "00000000000000000000000001", "1e3", "0x20",
           "4294967297", "18446744073709551617", "nan", "inf", "-inf", "1.5", "\u202e1", "\udcff"]

DEFAULT_RSS_KEY = ("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c"
                   "6a42b73bbeac01fa")


def values(valid: list[str]):
    """A value for an option that starts from ``valid``: mutated, special, or a special
    glued to a valid one."""
    return st.one_of(mutated(valid), st.sampled_from(SPECIAL),
                     st.tuples(st.sampled_from(valid), st.sampled_from(SPECIAL), st.booleans()).map(
                         lambda t: t[0] + t[1] if t[2] else t[1] + t[0]))


def _at_most(limit: int, refused_above: int | None = None):
    """A filter: no value Python's int() reads as more than ``limit`` (a huge --jobs or
    --count would be slow, not wrong), unless it is refused anyway (above ``refused_above``)."""
    def ok(text: str) -> bool:
        try:
            value = int(text)
        except ValueError:
            return True
        return value <= limit or (refused_above is not None and value > refused_above)
    return ok


@functools.cache
def work() -> Path:
    """The targets' scratch directory (one per process): two ports' captures, per-queue
    ones, rule files, and two runs' outputs to compare."""
    root = Path(tempfile.mkdtemp(prefix="fuzz-options-"))
    inputs = root / "in"
    (inputs / "q").mkdir(parents=True)
    write_pcap(inputs / "port0.pcap", mixed_frames(7, 0, 40))
    write_pcap(inputs / "port1.pcap", mixed_frames(8, 1, 40))
    write_pcap(inputs / "q" / "port0.q0.pcap", mixed_frames(9, 0, 20))
    write_pcap(inputs / "q" / "port0.q1.pcap", mixed_frames(10, 0, 20))
    rules = root / "rules"
    rules.mkdir()
    (rules / "lpm4.cfg").write_text("R198.18.0.0/24 0\nR198.18.1.0/24 1\nR128.0.0.0/1 1\n")      # /0: fib only
    (rules / "lpm6.cfg").write_text("R2001:200:0:0:0:0:0:0/48 1\nR8000:0:0:0:0:0:0:0/1 0\n")
    (rules / "em4.cfg").write_text("R198.18.0.0 198.18.0.1 9 9 0x11 0\n")
    (rules / "em6.cfg").write_text("R2001:200:0:0:0:0:0:0 2001:200:0:0:0:0:0:1 9 9 0x11 1\n")
    (rules / "acl4.cfg").write_text("R0.0.0.0/0 198.18.0.0/16 0 : 65535 0 : 65535 0/0 1\n")
    (rules / "acl6.cfg").write_text("R0:0:0:0:0:0:0:0/0 2001:200:0:0:0:0:0:0/48 0 : 65535 0 : 65535 0/0 0\n")
    (rules / "empty.cfg").write_text("")
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    for name, pipeline in (("a", "multi"), ("b", "simple")):
        result = CliRunner().invoke(main, ["run", str(inputs), "-o", str(root / name), "--pipeline", pipeline,
                                           "--trace", "all", "--quiet"])
        assert result.exit_code == 0, result.output
    (root / "cases").mkdir()
    return root


def case_dir() -> Path:
    return Path(tempfile.mkdtemp(dir=work() / "cases"))


def _done(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)


def _options(option_values: list[tuple[str, str]], equals: bool) -> list[str]:
    args = []
    for option, value in option_values:
        if equals and option.startswith("--"):
            args.append(f"{option}={value}")
        else:
            args += [option, value]
    return args


def option_case(valid: dict[str, list[str]], fixed: dict | None = None, fewest: int = 1):
    """(options, equals-form): one or two options (at least ``fewest``) mutated, some of
    the others valid."""
    fixed = fixed or {}
    names = sorted(valid)

    @st.composite
    def draw(draw):
        bad = draw(st.lists(st.sampled_from(names), min_size=fewest, max_size=2, unique=True))
        chosen = []
        for name in names:
            if name in bad:
                strategy = values(valid[name])
                if name in fixed:
                    strategy = strategy.filter(fixed[name])
                chosen.append((name, draw(strategy)))
            elif draw(st.integers(0, 3)) == 0:
                chosen.append((name, draw(st.sampled_from(valid[name]))))
        draw(st.randoms(use_true_random=False)).shuffle(chosen)
        return chosen, draw(st.booleans())
    return draw()


# ---------------------------------------------------------------------------------------
# 1. run's option values
# ---------------------------------------------------------------------------------------
RUN_VALID = {
    "-p": ["0x3", "3", "0xf", "0x03", "0X3"],
    "--portmask": ["0x3", "f"],
    "--config": ["(0,0,0),(1,0,1)", "(0,0,0),(1,0,0)", "(1,0,0),(0,0,0)", " (0, 0, 0) , (1, 0, 0) "],
    "--eth-dest": ["0,02:00:00:00:00:01", "1,00:1b:21:aa:bb:cc"],
    "--port-mac": ["1,02:70:63:61:70:09", "0,AA:BB:CC:DD:EE:FF"],
    "--rss-key": [DEFAULT_RSS_KEY, "0x" + DEFAULT_RSS_KEY, ":".join(DEFAULT_RSS_KEY[i:i + 2] for i in range(0, 80, 2))],
    "--rx-burst": ["32", "1", "512", "0", "600", "abc"],
    "--tx-burst": ["32", "4", "512", "0"],
    "--max-pkt-len": ["1518", "2048", "64", "9600"],
    "--reta-size": ["128", "64", "512"],
    "--jobs": ["1", "2"],
    "--trace": ["5", "all", "0"],
    "--alg": ["scalar", "sse", "avx2", "avx512x16"],
    "--lookup": ["lpm", "em", "fib"],
    "--pipeline": ["simple", "multi"],
    "--output-format": ["auto", "pcap", "pcapng"],
    "--rx-queue-size": ["1024", "512", "65535"],
    "--tx-queue-size": ["1024", "1"],
    "--mbcache": ["256", "abc", "512"],
    "--hash-entry-num": ["16", "0x10"],
    "--eth-link-speed": ["1000", "40000", "0"],
    "--mode": ["poll", "eventdev"],
}
RUN_FLAGS = ["--quiet", "--json", "-P", "--parse-ptype", "--relax-rx-offload", "--no-numa", "--per-port-pool",
             "--disable-rss", "--drops", "--annotate", "-L", "-E", "--ipv6"]

RUN_OPTIONS = st.tuples(option_case(RUN_VALID, {"--jobs": _at_most(2, 64)}),
                        st.lists(st.sampled_from(RUN_FLAGS), max_size=3, unique=True))


@fuzz(RUN_OPTIONS)
def test_run_options(case):
    """run with one or two option values mutated: forwards, or refuses in one line."""
    (chosen, equals), flags = case
    out = case_dir()
    run_case(["run", work() / "in", "-o", out, *_options(chosen, equals), *flags], watched=(out, work() / "in"))
    _done(out)


# ---------------------------------------------------------------------------------------
# 2. INPUT specs of run and testpmd (relative to the inputs' directory)
# ---------------------------------------------------------------------------------------
SPEC_SETS = [["."], ["0=port0.pcap", "1=port1.pcap"], ["q"], ["0.0=q/port0.q0.pcap", "0.1=q/port0.q1.pcap"],
             ["q", "1=port1.pcap"], ["1=./port1.pcap", "00=port0.pcap"], ["./"], ["0=port0.pcap"]]
SPECS = sorted({spec for specs in SPEC_SETS for spec in specs})
SPEC_EDITS = st.one_of(
    mutated(SPECS),
    st.sampled_from(["0=a.pcap", "\u0660=port0.pcap", "0.1=", "=x", "99999999999=a", "0=port0\n.pcap",
                     "0=port0.pcap\n", "1=port0.pcap", "0.0=port0.pcap", BIG + "=port0.pcap", "0." + BIG + "=port0.pcap",
                     "0.16=port0.pcap", "32=port0.pcap", "-1=port0.pcap", "+0=port0.pcap", " 0=port0.pcap",
                     "0 =port0.pcap", "0=q", "0=.", "0=", "=", "", "q/port0.q0.pcap", "port0.pcap", "\x00",
                     "\uff11=port1.pcap", "0.\u0661=q/port0.q1.pcap", "1.0=port1.pcap"]))


@st.composite
def spec_list(draw):
    """A valid set of INPUTs with one edited, added or repeated."""
    specs = list(draw(st.sampled_from(SPEC_SETS)))
    kind = draw(st.sampled_from(("edit", "add", "repeat", "none")))
    at = draw(st.integers(0, len(specs) - 1))
    if kind == "edit":
        specs[at] = draw(SPEC_EDITS)
    elif kind == "add":
        specs.insert(at, draw(SPEC_EDITS))
    elif kind == "repeat":
        specs.insert(at, specs[at])
    return specs


SPEC_CASES = st.tuples(st.sampled_from(("run", "testpmd")), spec_list(),
                       st.sampled_from([[], ["-p", "0x3"], ["-p", "0x1"], ["--config", "(0,0,0),(0,1,0),(1,0,0)"]]))


@fuzz(SPEC_CASES)
def test_input_specs(case):
    """run / testpmd with mutated N=FILE, N.Q=FILE and directory INPUTs."""
    command, specs, extra = case
    if command == "testpmd" and extra[:1] == ["--config"]:
        extra = []
    out = case_dir()
    run_case([command, *specs, "-o", out, "--quiet", *extra], watched=(out, work() / "in"), cwd=work() / "in")
    _done(out)


# ---------------------------------------------------------------------------------------
# 3. malformed --cluster addresses: only ones that fail before any connection
# ---------------------------------------------------------------------------------------
CLUSTERS = ["local:", "local:x", "local:-", "tcp://", "tls://", "tcp://host", "tls://[::1]", "tcp://host:",
            "tcp://:", "host", "tcp:/host", "local", "tcp://host:port", "tls://host:", "tcp://[::1]:", ":"]


def fails_fast(address: str) -> bool:
    """Nothing that could name a port (tcp://host:8786, local:2, host:8786), in any digits."""
    tail = address.rpartition(":")[2]
    return not any(char.isdigit() for char in tail) and not address.lstrip().startswith(("inproc", "ucx", "ws"))


CLUSTER_CASES = st.tuples(mutated(CLUSTERS).filter(fails_fast), st.sampled_from([[], ["--jobs", "1"], ["--trace", "3"]]),
                          st.booleans())


@fuzz(CLUSTER_CASES)
def test_cluster_addresses(case):
    """run --cluster with a malformed address: refused in one line, nothing written."""
    address, extra, tls = case
    out = case_dir()
    tls_files = ["--tls-ca-file", out / "ca.pem", "--tls-cert", out / "c.pem", "--tls-key", out / "k.pem"] if tls else []
    run_case(["run", work() / "in", "-o", out, "--quiet", "--cluster", address, *extra, *tls_files],
             watched=(out, work() / "in"))
    _done(out)


# ---------------------------------------------------------------------------------------
# 4. testpmd's options
# ---------------------------------------------------------------------------------------
TESTPMD_VALID = {
    "--forward-mode": ["io", "mac", "macswap", "5tswap", "icmpecho", "rxonly"],
    "--port-topology": ["paired", "chained", "loop"],
    "--burst": ["32", "1", "512", "7"],
    "--eth-peer": ["0,02:00:00:00:00:01", "1,b4:96:91:9f:64:b9"],
    "--port-mac": ["0,02:70:63:61:70:00", "1,00:00:00:00:00:00"],
    "-p": ["0x3", "3", "0x1"],
    "--output-format": ["auto", "pcap", "pcapng"],
}


@fuzz(st.tuples(option_case(TESTPMD_VALID), st.lists(st.sampled_from(["--quiet", "--json", "--drops"]), max_size=2)))
def test_testpmd_options(case):
    """testpmd with one or two option values mutated."""
    (chosen, equals), flags = case
    out = case_dir()
    run_case(["testpmd", work() / "in", "-o", out, *_options(chosen, equals), *flags], watched=(out, work() / "in"))
    _done(out)


# ---------------------------------------------------------------------------------------
# 5. generate's PATTERN and options
# ---------------------------------------------------------------------------------------
PATTERNS = ["IPV4-4STREAMSX8", "IPV6-1STREAMSX1", "random", "malformed", "IPV4-CONT-BURST", "IPV6-CONT-BURST",
            "IPV4/IPV6-CONT-BURST", "ipv4-2streamsx3"]
GENERATE_VALID = {
    "--ports": ["2"],
    "--count": ["0", "5", "20"],
    "--size": ["64", "imix", "64-128", "1518", "60-70"],
    "--rate": ["1000000", "1", "1e9"],
    "--seed": ["1", "0", "18446744073709551615"],
    "--proto": ["udp", "tcp"],
    "--map": ["0:1,1:0", "1,0", "0:0,1:1", "1:1"],
    "--output-format": ["auto", "pcap", "pcapng"],
}
RULE_PAIRS = [[], ["lpm4.cfg", "lpm6.cfg"], ["em4.cfg", "em6.cfg"], ["acl4.cfg", "acl6.cfg"], ["lpm4.cfg", None],
              [None, "em6.cfg"], ["empty.cfg", "empty.cfg"], ["missing.cfg", "lpm6.cfg"], [".", "lpm6.cfg"]]
GENERATE_CASES = st.tuples(st.one_of(st.sampled_from(PATTERNS), st.sampled_from(PATTERNS), mutated(PATTERNS)),
                           option_case(GENERATE_VALID, {"--count": _at_most(20, 1 << 48),
                                                        "--ports": _at_most(2, 32)}, fewest=0),
                           st.sampled_from(RULE_PAIRS), st.booleans())


@fuzz(GENERATE_CASES)
def test_generate_arguments(case):
    """generate with a mutated PATTERN or option values: writes, or refuses in one line."""
    pattern, (chosen, equals), rules, json_out = case
    chosen = list(chosen)
    if not any(name == "--count" for name, _ in chosen):
        chosen.append(("--count", "5"))                # the default 1000 packets per port: slow, not wrong
    if not any(name == "--ports" for name, _ in chosen):
        chosen.append(("--ports", "2"))
    rule_args = []
    for option, name in zip(("--rule_ipv4", "--rule_ipv6"), rules):
        if name is not None:
            rule_args += [option, work() / "rules" / name]
    out = case_dir()
    run_case(["generate", pattern, "-o", out, *_options(chosen, equals), *rule_args, "--quiet" if not json_out else "--json"],
             watched=(out, work() / "rules"))
    _done(out)


# ---------------------------------------------------------------------------------------
# 6. lookup's keys
# ---------------------------------------------------------------------------------------
ADDRESSES = ["198.18.0.1", "2001:200::1", "::", "0.0.0.0", "255.255.255.255", "::ffff:198.18.0.1",
             "2001:200:0:1::9", "198.18.1.7", "2001:0200:0000:0003:0000:0000:0000:0001"]
TUPLES = ["udp 198.18.0.1:9 > 198.18.0.0:9", "tcp [2001:200::1]:80 > [2001:200::2]:9", "1 10.0.0.1:0 > 10.0.0.2:0",
          "17 198.18.1.1:1 > 198.18.1.2:2", "udp [2001:200::1]:9 > [2001:200::]:9", "6 10.1.2.9:1000 > 9.9.9.9:80"]
KEYS = {"lpm": ADDRESSES, "fib": ADDRESSES, "em": TUPLES, "acl": TUPLES}
LOOKUP_RULES = {"lpm": ["lpm4.cfg", "lpm6.cfg"], "fib": ["lpm4.cfg", "lpm6.cfg"], "em": ["em4.cfg", "em6.cfg"],
                "acl": ["acl4.cfg", "acl6.cfg"]}


@st.composite
def lookup_case(draw):
    """(method, keys, --port, -p): one of keys, --port and -p mutated."""
    method = draw(st.sampled_from(sorted(KEYS)))
    keys = draw(st.lists(st.sampled_from(KEYS[method]), min_size=1, max_size=3))
    port = draw(st.sampled_from([None, "0", "1", "31"]))
    portmask = draw(st.sampled_from([None, "0xf", "0x3", "0xffffffff"]))
    bad = draw(st.sampled_from(("key", "key", "key", "port", "portmask", "none")))
    if bad == "key":
        at = draw(st.integers(0, len(keys)))
        other = KEYS["em" if method in ("lpm", "fib") else "lpm"]          # the other kind of key
        keys.insert(at, draw(st.one_of(mutated(KEYS[method]), st.sampled_from(SPECIAL + other))))
    elif bad == "port":
        port = draw(values(["0", "3", "31"]))
    elif bad == "portmask":
        portmask = draw(values(["0xf", "0x3"]))
    return method, keys, port, portmask


LOOKUP_CASES = st.tuples(lookup_case(), st.booleans(), st.booleans(), st.booleans())


@fuzz(LOOKUP_CASES)
def test_lookup_keys(case):
    """lookup with mutated keys, --port and -p: answers, or refuses in one line."""
    (method, keys, port, portmask), with_rules, as_json, ipv6 = case
    args = ["lookup", "--lookup", method]
    if with_rules or method == "acl":
        args += ["--rule_ipv4", work() / "rules" / LOOKUP_RULES[method][0],
                 "--rule_ipv6", work() / "rules" / LOOKUP_RULES[method][1]]
    if port is not None:
        args += ["--port", port]
    if portmask is not None:
        args += ["-p", portmask]
    args += ["--json"] * as_json + ["--ipv6"] * ipv6 + ["--", *keys]
    run_case(args, watched=(work() / "rules",))


# ---------------------------------------------------------------------------------------
# 7. compare's options on two small runs' outputs
# ---------------------------------------------------------------------------------------
COMPARE_VALID = {
    "--max-diffs": ["5", "0", "1", "100"],
    "--ts-tolerance": ["0", "0.5", "1e-6", "1e9"],
    "--ignore": ["IP.ttl", "Ether.src", "frame.len", "frame.time", "UDP.dport", "IPv6.hlim", "IP.chksum"],
}
COMPARE_CASES = st.tuples(option_case(COMPARE_VALID),
                          st.lists(st.sampled_from(["--unordered", "--by-layers", "--json", "--timestamps",
                                                    "--explain"]), max_size=3, unique=True),
                          st.lists(st.sampled_from(COMPARE_VALID["--ignore"]), max_size=2),
                          st.sampled_from([("a", "b"), ("a", "a"), ("b", "a"), ("a/port0.pcap", "b/port0.pcap")]))


@fuzz(COMPARE_CASES)
def test_compare_options(case):
    """compare with mutated --max-diffs, --ts-tolerance, --ignore: equal, differs, or
    refuses in one line."""
    (chosen, equals), flags, ignores, (a, b) = case
    extra = [x for field in ignores for x in ("--ignore", field)]
    run_case(["compare", work() / a, work() / b, *_options(chosen, equals), *extra, *flags],
             watched=(work() / "a", work() / "b"), differs_ok=True)


# ---------------------------------------------------------------------------------------
# 8. verbatim dpdk-l3fwd / dpdk-l3fwd-graph / dpdk-testpmd command lines, words mutated
# ---------------------------------------------------------------------------------------
# a word is text, or ("vdev", driver, [devargs]) with devargs ("rx", FILE) / ("tx", NAME) /
# ("raw", TEXT): tx files always land in the case's directory under one of our names
EAL = ["--no-huge", "-m", "4096", "--no-pci", "--no-telemetry", "--file-prefix", "fuzz", "--log-level", "7"]
PARSE = ["--parse-ptype", "--relax-rx-offload"]


def _vdev(port: int, rx: list[str], tx: list[str]):
    return ("vdev", f"net_pcap{port}", [("rx", f) for f in rx] + [("tx", t) for t in tx])


L3FWD_LINES = [
    ["-l", "0", *EAL, "--vdev", _vdev(0, ["port0.pcap"], ["port0.pcap"]), "--", "-p", "0x1", "--config", "(0,0,0)", *PARSE],
    ["-l", "0", "--no-huge", "--vdev", _vdev(0, ["port0.pcap"], ["port0.q0.pcap"]), "--vdev",
     _vdev(1, ["port1.pcap"], ["port1.q0.pcap"]), "--", "-p", "0x3", "--config", "(0,0,0),(1,0,0)", *PARSE],
    ["-l", "0,1", "-n", "4", "--vdev", _vdev(0, ["port0.pcap"], ["port0.q0.pcap", "port0.q1.pcap"]), "--vdev",
     _vdev(1, ["port1.pcap"], ["port1.q0.pcap", "port1.q1.pcap"]), "--", "-p", "0x3", "--config=(0,0,0),(1,0,1)",
     "-P", "--lookup=em", "--rx-queue-size=1024", "--tx-queue-size=1024", "--eth-dest=0,b4:96:91:9f:64:b9", *PARSE],
    ["--lcores", "0", "--vdev", _vdev(0, ["q/port0.q0.pcap", "q/port0.q1.pcap"], ["port0.pcap"]), "--", "-p0x1",
     "--config", "(0,0,0),(0,1,0)", "-L", "--rx-burst", "16", "--tx-burst", "8", "--max-pkt-len", "1518", *PARSE],
    ["-c", "0x1", *EAL, "--vdev", _vdev(0, ["port0.pcap"], ["port0.pcap"]), "--", "-p", "1", "--config", "(0,0,0)",
     "--look=fib", "--mbcache", "256", "--eth-link-speed", "1000", "--hash-entry-num", "4", "--mode=poll", *PARSE],
]
TESTPMD_LINES = [
    ["-l", "0,1", *EAL, "--vdev", _vdev(0, ["port0.pcap"], ["port0.pcap"]), "--vdev", _vdev(1, ["port1.pcap"], ["port1.pcap"]),
     "--", "--port-topology=paired", "--auto-start", "--no-flush-rx", "--forward-mode=macswap"],
    ["-l", "0,1", "--no-huge", "--vdev", _vdev(0, ["port0.pcap"], ["port0.pcap"]), "--vdev",
     _vdev(1, ["port1.pcap"], ["port1.pcap"]), "--", "--no-flush-rx", "--forward-mode", "mac", "--burst=16",
     "--eth-peer=0,02:00:00:00:00:09", "--nb-cores=1", "--rxq=1", "--txq=1", "--portmask=0x3"],
    ["-l", "0,1", "--vdev", _vdev(0, ["port0.pcap"], ["port0.pcap"]), "--", "--no-flush-rx",
     "--port-topology=loop", "--forward-mode=5tswap", "--nb-ports=1"],
]
GRAPH_LINES = [
    ["-l", "0,1", *EAL, "--vdev", _vdev(0, ["port0.pcap"], ["port0.q0.pcap", "port0.q1.pcap"]), "--vdev",
     _vdev(1, ["port1.pcap"], ["port1.q0.pcap", "port1.q1.pcap"]), "--", "-p", "0x3", "--config", "(0,0,1),(1,0,1)"],
    ["--lcores", "0@0,1@1,2@1", "--no-huge", "--vdev", _vdev(0, ["port0.pcap"], ["port0.q0.pcap", "port0.q1.pcap",
     "port0.q2.pcap"]), "--vdev", _vdev(1, ["port1.pcap"], ["port1.q0.pcap", "port1.q1.pcap", "port1.q2.pcap"]), "--",
     "-p", "0x3", "-P", "--config=(0,0,1),(1,0,2)", "--eth-dest=1,02:00:00:00:00:09", "--max-pkt-len", "2048",
     "--model", "dispatch", "--per-port-pool", "--no-numa"],
    ["-l", "0,1", "--vdev", _vdev(0, ["q/port0.q0.pcap", "q/port0.q1.pcap"], ["port0.q0.pcap", "port0.q1.pcap"]),
     "--", "-p0x1", "--config", "(0,0,1),(0,1,1)", "--pcap-enable", "--pcap-num-cap", "100", "--pcap-file-name",
     "trace"],
]
LINES = {"dpdk-l3fwd": L3FWD_LINES, "dpdk-l3fwd-graph": GRAPH_LINES, "dpdk-testpmd": TESTPMD_LINES}
WORDS = sorted({w for line in L3FWD_LINES + GRAPH_LINES + TESTPMD_LINES for w in line if isinstance(w, str)})
DRIVERS = ["net_pcap0", "net_pcap1", "eth_pcap0", "net_pcap", "net_null0", "net_pcap99"]
DEVARGS = ["eof=1", "phy_mac=1", "iface=lo", "infinite_rx=1", "rx_pcap=", "rx_iface=x", "rx_pcap", "tx_iface=x"]
TX_ODD = ["", ".", "nodir/port0.pcap", "port0.pcap/", "q/port0.pcap"]    # refused (a tx file is ours or refused)
RX_ODD = ["", ".", "missing.pcap", "q", "port0.pcap\n", "port0.pcap,tx_pcap"]


@st.composite
def _vdev_edit(draw, word):
    _, driver, devargs = word
    devargs = list(devargs)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(("driver", "drop", "repeat", "raw", "rx", "tx", "swap")))
        at = draw(st.integers(0, max(len(devargs) - 1, 0)))
        if kind == "driver":
            driver = draw(st.one_of(st.sampled_from(DRIVERS), mutated(DRIVERS)))
        elif kind == "drop" and devargs:
            del devargs[at]
        elif kind == "repeat" and devargs:
            devargs.insert(at, devargs[at])
        elif kind == "raw":
            devargs.insert(at, ("raw", draw(st.one_of(st.sampled_from(DEVARGS + ["tx_pcap="]), mutated(DEVARGS)))))
        elif kind == "rx":
            devargs.insert(at, ("rx", draw(st.one_of(st.sampled_from(RX_ODD), mutated(["port0.pcap", "port1.pcap"])))))
        elif kind == "tx":
            devargs.insert(at, ("tx", draw(st.sampled_from(TX_ODD + ["port7.pcap", "port0.q3.pcap", "port0.pcap"]))))
        elif kind == "swap" and len(devargs) > 1:
            devargs[0], devargs[-1] = devargs[-1], devargs[0]
    return ("vdev", driver, devargs)


@st.composite
def command_line(draw, lines):
    """A real line with one to three words mutated, dropped, repeated, or replaced."""
    line = list(draw(st.sampled_from(lines)))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(line) - 1))
        kind = draw(st.sampled_from(("mutate", "drop", "repeat", "insert", "special")))
        word = line[at]
        if kind == "drop":
            del line[at]
        elif kind == "repeat":
            line.insert(at, word)
        elif kind == "insert":
            line.insert(at, draw(st.sampled_from(WORDS)))
        elif not isinstance(word, str):
            line[at] = draw(_vdev_edit(word))
        elif kind == "special":
            line[at] = draw(st.sampled_from(SPECIAL))
        else:
            line[at] = draw(mutated([word]))
        if not line:
            line = [draw(hostile_text(8))]
    return line


def _words(line: list, out: Path) -> list[str]:
    inputs = work() / "in"
    words = []
    for word in line:
        if isinstance(word, str):
            words.append(word)
            continue
        _, driver, devargs = word
        parts = [driver]
        for kind, text in devargs:
            parts.append(f"rx_pcap={inputs / text}" if kind == "rx" and text else
                         f"tx_pcap={out}/{text}" if kind == "tx" and text else
                         f"{kind}_pcap=" if kind in ("rx", "tx") else text)
        words.append(",".join(parts))
    return words


@fuzz(st.tuples(st.sampled_from(sorted(LINES)), st.data()))
def test_dpdk_command_lines(case):
    """A real dpdk-l3fwd / dpdk-l3fwd-graph / dpdk-testpmd line with words mutated, dropped
    or repeated: runs, or refuses in one line; tx files only in the case's directory."""
    program, data = case
    line = data.draw(command_line(LINES[program]))
    out = case_dir()
    run_case([program, *_words(line, out)], watched=(out, work() / "in"), cwd=out)
    _done(out)
