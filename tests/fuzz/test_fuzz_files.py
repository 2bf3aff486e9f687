"""Fuzz every file and directory the CLI reads (support/fuzzing.py's property):

* captures (classic pcap in both byte orders, µs and ns; pcapng with several sections,
  interfaces, EPB/SPB/PB and options; gzip of either; the converted link types and a
  refused one; a few small files of the tcpdump corpus), byte-mutated, also inside and
  after gzip → ``run`` (both pipelines), ``testpmd``, ``compare`` against a valid file;
* captures with the edits users' captures have (snaplen cuts, link types, pcapng
  interface sequences, a cut last record, gzip) → ``dpdk-testpmd`` verbatim, checked
  against a model of libpcap (support/libpcap_model.py), and ``run``'s conveniences;
* stream TOML files → ``generate --streams``: valid files mutated as text, and values
  replaced by other TOML types;
* trace lines → ``compare --explain`` / ``--traces``: one run's trace.jsonl mutated line
  by line, cut, replaced by garbage or by huge lines;
* stats.json → ``report``: values of other types, odd keys, huge numbers, NaN; as text;
* output directories holding odd names, links, directories and FIFOs, or being no
  directory at all → ``run``, ``testpmd``, ``generate``: only our own names change, and
  nothing reached through a link.

Every case gets its own directory under the target's scratch directory (removed again
when the case passes); the seed files are built once per process."""
from __future__ import annotations

import copy
import datetime
import functools
import gzip
import json
import math
import os
import shutil
import struct
import tempfile
from pathlib import Path

from hypothesis import assume
from hypothesis import strategies as st
from fuzzing import fuzz, hostile_text, mutated, mutated_bytes, run_case, snapshot
from forwarding import CORPUS
from frames import mixed_frames, read_pcap_records, write_pcap
from handmade import Ng, classic as handmade_pcap
from libpcap_model import libpcap_capture

# small files of tcpdump's corpus: Cisco HDLC, raw IPv6, PPP in HDLC framing (fuzzed), PPP,
# pcapng, ns pcap, big-endian pcap, QinQ, SLARP
CORPUS_SEEDS = ("HDLC.pcap", "LINKTYPE_RAW_ipv6.pcap", "heapoverflow-ppp_hdlc_if_print.pcap", "ppp-invalid-lengths.pcap",
                "icmp-cksum-oobr-3.pcapng", "resp_4_infiniteloop.pcapng", "tcp-handshake-nano.pcap", "pptp.pcap",
                "802.1ad_QinQ.pcap", "chdlc-slarp.pcap")
T0 = 1_700_000_000 * 10**9


@functools.cache
def work() -> Path:
    """The scratch directory of this file's targets (one per process)."""
    return Path(tempfile.mkdtemp(prefix="fuzz-files-"))


def case_dir() -> Path:
    return Path(tempfile.mkdtemp(dir=work()))


def done(directory: Path) -> None:
    """A case passed: its files go (a failing case's stay, to look at)."""
    shutil.rmtree(directory, ignore_errors=True)


# ---------------------------------------------------------------------------------------
# 1. captures
# ---------------------------------------------------------------------------------------
def classic(frames, order="<", nano=False, network=1, snaplen=262144) -> bytes:
    return handmade_pcap([(f, len(f), T0 + i * 1500) for i, f in enumerate(frames)], order, nano, network, snaplen)


def _ip_packets(seed: int, n: int) -> list[bytes]:
    """IPv4 and IPv6 packets (the Ethernet header taken off mixed frames)."""
    frames = [f for f in mixed_frames(seed, 0, 4 * n) if len(f) > 34 and f[12:14] in (b"\x08\x00", b"\x86\xdd")]
    return [f[14:] for f in frames[:n]]


def _link(linktype: int, ip: bytes) -> bytes:
    v6 = ip[0] >> 4 == 6
    if linktype in (101, 228, 229):
        return ip
    if linktype == 0:
        return struct.pack("<I", 30 if v6 else 2) + ip
    if linktype == 108:
        return struct.pack(">I", 24 if v6 else 2) + ip
    if linktype in (9, 50):
        return b"\xff\x03" + (b"\x00\x57" if v6 else b"\x00\x21") + ip
    if linktype == 104:
        return b"\x0f\x00" + (b"\x86\xdd" if v6 else b"\x08\x00") + ip
    if linktype == 113:
        return struct.pack(">HHH8sH", 0, 1, 6, bytes(8), 0x86DD if v6 else 0x0800) + ip
    if linktype == 276:
        return struct.pack(">HHIHBB8s", 0x86DD if v6 else 0x0800, 0, 1, 1, 0, 6, bytes(8)) + ip
    raise ValueError(linktype)


def _pcapng_seed(frames, ppp) -> bytes:
    le, be = Ng("<"), Ng(">")
    out = [le.shb(options=[le.opt(1, b"a section comment"), le.opt(4, b"fuzz")]),
           le.idb(1, 0, tsresol=9, tsoffset=3, name="eth0"),
           le.idb(9, 1500, name="ppp0"),
           le.idb(1, 64, tsresol=0x94)]                                 # 2^-20 s ticks, snaplen 64
    for i, frame in enumerate(frames):
        ticks = (T0 // 1000 + i) * 1000
        out.append([le.epb(0, ticks, frame, comment=True),
                    le.spb(frame), le.pb(1, ticks // 1000, ppp[i % len(ppp)]),
                    le.epb(2, T0 * 2**20 // 10**9 + i, frame), le.block(5, bytes(20)),
                    le.block(0x40000BAD, b"custom")][i % 6])
    out.append(be.shb() + be.idb(1, 0, tsresol=6))
    out += [be.epb(0, T0 // 1000 + i, frame) for i, frame in enumerate(frames[:4])]
    return b"".join(out)


@functools.cache
def capture_seeds() -> tuple[list[bytes], bytes]:
    """(the mutation seeds, a valid capture to compare with)."""
    frames = mixed_frames(11, 0, 10)
    ip = _ip_packets(12, 6)
    ppp = [_link(9, p) for p in ip]
    seeds = [classic(frames), classic(frames, ">", nano=True), classic(frames[:5], "<", nano=True, snaplen=64),
             classic([f + b"FCS!" for f in frames[:5]], network=0x04000000 | 2 << 28 | 1),
             classic(frames[:3], network=127)]                                 # radiotap: refused
    seeds += [classic([_link(lt, p) for p in ip], order, lt == 9, network=lt)
              for lt, order in ((0, "<"), (9, ">"), (50, "<"), (101, ">"), (104, "<"), (108, "<"), (113, ">"),
                                (228, "<"), (229, ">"), (276, "<"))]
    ng = _pcapng_seed(frames, ppp)
    seeds += [ng, Ng(">").shb() + Ng(">").idb(1) + b"".join(Ng(">").epb(0, i, f) for i, f in enumerate(frames[:5]))]
    seeds += [gzip.compress(seeds[0], mtime=0), gzip.compress(ng, mtime=0),
              gzip.compress(seeds[1][:200], mtime=0) + gzip.compress(seeds[1][200:], mtime=0) + bytes(9)]
    seeds += [(CORPUS / name).read_bytes() for name in CORPUS_SEEDS]
    return seeds, classic(frames)


@st.composite
def captures(draw):
    seeds, _ = capture_seeds()
    data = draw(mutated_bytes(seeds))
    if draw(st.integers(0, 3)) == 0:                   # mutated, then compressed (cut short, maybe)
        data = gzip.compress(data, mtime=0)
        data = data[:draw(st.integers(0, len(data)))] if draw(st.booleans()) else data
    return data


COMMANDS = (("run", "--pipeline", "simple"), ("run", "--pipeline", "multi"),
            ("run", "--pipeline", "multi", "--trace", "all", "--drops"), ("run", "--lookup", "em", "--pipeline", "simple"),
            ("testpmd",), ("testpmd", "--forward-mode", "5tswap", "--drops"), ("compare",), ("compare", "reversed"))


@fuzz(st.tuples(captures(), st.sampled_from(COMMANDS), st.booleans()))
def test_captures(case):
    """A damaged capture: forwarded (what can be read of it), compared, or refused in one line."""
    data, command, second_port = case
    here = case_dir()
    inputs, out = here / "in", here / "out"
    inputs.mkdir()
    (inputs / "mutated.pcap").write_bytes(data)
    (inputs / "valid.pcap").write_bytes(capture_seeds()[1])
    if command[0] == "compare":
        pair = [inputs / "mutated.pcap", inputs / "valid.pcap"]
        run_case(["compare", *(pair[::-1] if "reversed" in command else pair)], watched=(inputs,), differs_ok=True)
    else:
        ports = [f"0={inputs / 'mutated.pcap'}"] + ([f"1={inputs / 'valid.pcap'}"] if second_port else [])
        run_case([*command[:1], *ports, "-o", out, "--quiet", *command[1:]], watched=(inputs, out))
    done(here)


@fuzz(libpcap_capture())
def test_captures_as_libpcap_reads_them(case):
    """The captures users bring (snaplen cuts, other link types, pcapng interface
    sequences, a cut last record, gzip) against a model of libpcap (libpcap_model.py):
    dpdk-testpmd's io engine sends exactly the records libpcap hands net_pcap, as
    captured length = wire length, counts each failed read as an rx_error drop, and a
    file libpcap cannot open fails its port's probe; ``run`` says exactly when it read
    more than libpcap would."""
    data, want = case
    here = case_dir()
    inputs, out, run_out = here / "in", here / "out", here / "run"
    inputs.mkdir(), out.mkdir()
    (inputs / "edge.pcap").write_bytes(data)
    line = ["dpdk-testpmd", "-l", "0,1", "--no-pci", "--vdev",
            f"net_pcap0,rx_pcap={inputs / 'edge.pcap'},tx_pcap={out / 'port0.pcap'}",
            "--", "--no-flush-rx", "--forward-mode=io", "--port-topology=loop"]
    result = run_case(line, watched=(inputs, out), env={"L3FWD_SIM_STATS": str(out / "stats.json")})
    if not want.opens:
        assert result.exit_code == 2 and "net_pcap0 failed to probe (" in result.stderr, result.stderr
    else:
        assert result.exit_code == 0, result.stderr
        assert read_pcap_records(out / "port0.pcap") == [(cap, cap, frame) for cap, frame in want.received]
        stats = json.loads((out / "stats.json").read_text())
        assert stats["drops"]["rx_error"] == want.errors and stats["totals"]["rx"] == len(want.records) + want.errors
        assert stats["records_cut_short"] == ({"0": 1} if want.cut else {})
    result = run_case(["run", f"0={inputs / 'edge.pcap'}", "-o", run_out, "--quiet"], watched=(inputs,))
    if result.exit_code == 0:
        assert bool(json.loads((run_out / "stats.json").read_text())["conveniences"]) == want.beyond
    done(here)


# ---------------------------------------------------------------------------------------
# 2. stream TOML files
# ---------------------------------------------------------------------------------------
STREAM_FILES = [
    """seed = 1
rate = 14880952
order = "round-robin"
group = 2

[[stream]]
name = "sweep"
ports = [0, 1]
count = 6
size = "64-1518"
ipv4 = { src = "198.18.1.1", dst = "198.18.1.0", ttl = 64 }
udp = { sport = 1024, dport = 9 }

[[stream.vary]]
field = "ipv4.dst"
op = "inc"
min = "198.18.1.0"
max = "198.18.1.255"
step = 1

[[stream]]
name = "v6-tcp"
count = 5
vlan = { vlan = 100, prio = 3 }
eth = { src = "00:1b:21:00:00:01" }
ipv6 = { src = "2001:200:0:2::1", dst = "2001:200:0:2::", hlim = 9 }
tcp = { flags = "A", window = 1024 }
""",
    """order = "random"
[[stream]]
port = 2
count = 7
size = { op = "dec", min = 64, max = 200, step = 8 }
payload_hex = "00ff"
ipv4 = { tos = "0x10", id = 7, flags = 2 }
icmp = { type = "echo-request", id = 1, seq = 2 }

[[stream.vary]]
field = "icmp.seq"
op = "random"
min = 0
max = 65535
init = 5

[[stream.vary]]
field = "eth.src"
min = "02:00:00:00:00:00"
max = "02:00:00:00:00:ff"
""",
    """rate = 0.5
[[stream]]
name = "plain"
count = 3
size = "imix"
payload = "abc"
ipv6 = { fl = 5, tc = 1 }
udp = {}
[[stream.vary]]
field = "ipv6.src"
op = "inc"
min = "2001:200::"
max = "2001:200::ffff:ffff:ffff:ffff:ffff"
step = 4096
[stream.eth]
dst = "02:70:63:61:70:09"
""",
]
MAX_PACKETS = 200          # a mutation that asks for more packets is valid, but not a fast case


def _too_many_packets(text: str) -> bool:
    import tomllib
    try:
        doc = tomllib.loads(text)
    except Exception:
        return False
    streams = doc.get("stream")
    if not isinstance(streams, list):
        return False
    total = 0
    for table in streams:
        if isinstance(table, dict):
            count = table.get("count")
            ports = table.get("ports", table.get("port", [0]))
            width = len(ports) if isinstance(ports, list) else 1
            total += (count if type(count) is int and count > 0 else 0) * max(width, 1)
    return total > MAX_PACKETS


def _toml_string(text: str) -> str:
    out = []
    for ch in text:
        code = ord(ch)
        if ch in '"\\':
            out.append("\\" + ch)
        elif code < 0x20 or code == 0x7F or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")              # a surrogate's escape: invalid TOML, refused
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_toml_string(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    raise TypeError(value)


def toml_document(doc: dict, tables: bool) -> str:
    """``doc`` as TOML: scalars first, then ``[[stream]]`` tables with ``[[stream.vary]]``
    (or, without ``tables``, everything inline)."""
    lines = [f"{_toml_string(k)} = {toml_value(v)}" for k, v in doc.items()
             if not (tables and k == "stream" and isinstance(v, list) and all(isinstance(s, dict) for s in v))]
    if tables and isinstance(doc.get("stream"), list) and all(isinstance(s, dict) for s in doc["stream"]):
        for stream in doc["stream"]:
            lines.append("[[stream]]")
            vary = stream.get("vary")
            as_tables = isinstance(vary, list) and all(isinstance(v, dict) for v in vary)
            lines += [f"{_toml_string(k)} = {toml_value(v)}" for k, v in stream.items() if k != "vary" or not as_tables]
            for entry in vary if as_tables else []:
                lines.append("[[stream.vary]]")
                lines += [f"{_toml_string(k)} = {toml_value(v)}" for k, v in entry.items()]
    return "\n".join(lines) + "\n"


OTHER_VALUES = st.sampled_from([
    [], [1, "a"], [[1], [2.5]], {}, {"op": "inc"}, {"a": {"b": []}}, 0.0, -1.5, 1e308, math.nan, math.inf, -math.inf,
    True, False, datetime.date(1979, 5, 27), datetime.datetime(1979, 5, 27, 7, 32, tzinfo=datetime.timezone.utc),
    datetime.time(7, 32), 2**63, -2**63 - 1, 10**40, -1, 0, 3, 2**48, "", "a\x00b", "line\nbreak", "\udcff", "x" * 300,
    "0x" + "f" * 40, "198.18.1.300", "ipv4.dst", "imix", "64-1518", "1518-64", "\u0661\u0662",
])


def _entry(draw, doc, descend: int):
    """A random entry of a parsed document (TOML or JSON): walk down from the top, into a
    non-empty table or array with odds ``descend`` in ``descend + 1``; (its container, its
    key or index), or None at an empty container."""
    node = doc
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return None
        key = draw(st.sampled_from(keys))
        child = node[key]
        if not (isinstance(child, (dict, list)) and child and draw(st.integers(0, descend))):
            return node, key
        node = child


@st.composite
def replaced(draw):
    """A valid stream file's value (or a key) replaced by another TOML type."""
    import tomllib
    doc = tomllib.loads(draw(st.sampled_from(STREAM_FILES)))
    for _ in range(draw(st.integers(1, 3))):
        found = _entry(draw, doc, descend=2)
        if found is None:
            continue
        node, key = found
        action = draw(st.sampled_from(("value", "value", "value", "key", "delete")))
        if action == "value":
            node[key] = copy.deepcopy(draw(OTHER_VALUES))          # sampled objects are shared
        elif action == "key" and isinstance(node, dict):
            node[draw(hostile_text(8))] = node.pop(key)
        else:
            del node[key]
    return toml_document(doc, tables=draw(st.booleans()))


@fuzz(st.one_of(mutated(STREAM_FILES), replaced()))
def test_stream_files(text):
    """A mutated stream file: generated, or refused in one line."""
    assume(not _too_many_packets(text))
    here = case_dir()
    streams = here / "flows.toml"
    streams.write_bytes(text.encode("utf-8", "surrogateescape"))
    run_case(["generate", "--streams", streams, "-o", here / "out", "--quiet"], watched=(here / "out",))
    assert streams.read_bytes() == text.encode("utf-8", "surrogateescape")
    done(here)


# ---------------------------------------------------------------------------------------
# 3. trace lines for compare --explain
# ---------------------------------------------------------------------------------------
@functools.cache
def traced_runs() -> Path:
    """Two traced runs that differ (the simple path drops non-IP frames, multi sends them
    back): runs/a and runs/b."""
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    root = work() / "runs"
    (root / "in").mkdir(parents=True)
    for port in (0, 1):
        write_pcap(root / "in" / f"port{port}.pcap", mixed_frames(30 + port, port, 24))
    for name, pipeline in (("a", "simple"), ("b", "multi")):
        result = CliRunner().invoke(main, ["run", str(root / "in"), "-o", str(root / name), "--pipeline", pipeline,
                                           "--trace", "all", "--quiet"])
        assert result.exit_code == 0, result.output
    return root


def _trace_lines(side: str) -> list[str]:
    return (traced_runs() / side / "trace.jsonl").read_text().splitlines(keepends=True)


HUGE_LINES = (
    lambda: '{"rx_port":0,"rx_queue":0,"index":0,"detail":"' + "x" * 300_000 + '","tx_port":0,"tx_index":0}\n',
    lambda: "[" * 100_000 + "]" * 100_000 + "\n",
    lambda: '{"rx_port":0,"rx_queue":0,"index":' + "9" * 5000 + ',"tx_port":null,"tx_index":null}\n',
    lambda: '{"rx_port":0,"rx_queue":0,"index":1e400,"tx_port":1,"tx_index":1}\n',
    lambda: '{"rx_port":0,"rx_queue":0,"index":0,"tx_port":0,"tx_index":0,"x":NaN}\n',
    lambda: '{"a":' * 50_000 + "1" + "}" * 50_000 + "\n",
    lambda: "\x00" * 200_000,
)


TRACE_KEYS = ("rx_port", "rx_queue", "index", "tx_port", "tx_index", "tx_index", "drop", "rule", "\u202e")
TRACE_VALUES = st.sampled_from([0, 1, 2, 3, 5, 23, 24, 10**6, None, -1, "0", 1.0, True, 2**70, [], {}, "\x1b[2J"])


@st.composite
def traces(draw):
    """(side whose trace is mutated, its bytes)."""
    side = draw(st.sampled_from("ab"))
    lines = _trace_lines(side)
    kind = draw(st.sampled_from(("lines", "lines", "values", "values", "cut", "garbage", "huge")))
    if kind == "values":                               # still JSON: other ids, other output records
        lines = list(lines)
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(lines) - 1))
            record = json.loads(lines[at])
            record[draw(st.sampled_from(TRACE_KEYS))] = copy.deepcopy(draw(TRACE_VALUES))
            lines[at] = json.dumps(record, separators=(",", ":") if draw(st.booleans()) else (", ", ": ")) + "\n"
        data = "".join(lines).encode()
    elif kind == "lines":
        lines = list(lines)
        for _ in range(draw(st.integers(1, 4))):
            at = draw(st.integers(0, len(lines)))
            new = draw(mutated(_trace_lines(side)))
            if draw(st.booleans()) and at < len(lines):
                lines[at] = new
            else:
                lines.insert(at, new)
        data = "".join(lines).encode("utf-8", "surrogateescape")
    elif kind == "cut":
        data = "".join(lines).encode()
        data = data[:draw(st.integers(0, len(data)))]
    elif kind == "garbage":
        data = draw(st.binary(max_size=300))
    else:
        at = draw(st.integers(0, len(lines)))
        data = "".join(lines[:at] + [HUGE_LINES[draw(st.integers(0, len(HUGE_LINES) - 1))]()] + lines[at:]).encode()
    return side, data


EXPLAIN = (("dirs",), ("dirs", "--traces"), ("files", "--traces"), ("dirs", "--json"), ("files", "--traces", "--json"),
           ("dirs", "--max-diffs", "40"), ("dirs", "--unordered"))


@fuzz(st.tuples(traces(), st.sampled_from(EXPLAIN), st.booleans()))
def test_trace_lines(case):
    """A mutated trace of one of two differing runs: compare explains with it, or refuses it in one line."""
    (side, data), (form, *options), port1 = case
    here = case_dir()
    for name in "ab":
        shutil.copytree(traced_runs() / name, here / name)
    (here / side / "trace.jsonl").write_bytes(data)
    trace_a, trace_b = here / "a" / "trace.jsonl", here / "b" / "trace.jsonl"
    args = ["--explain"]
    if "--traces" in options:
        options.remove("--traces")
        args = ["--traces", trace_a, trace_b]
    pcap = "port1.pcap" if port1 else "port0.pcap"
    pair = [here / "a", here / "b"] if form == "dirs" else [here / "a" / pcap, here / "b" / pcap]
    if form == "files" and "--traces" not in args:
        args = ["--traces", trace_a, trace_b]
    run_case(["compare", *pair, *args, *options], watched=(here,), differs_ok=True)
    done(here)


# ---------------------------------------------------------------------------------------
# 4. stats.json for report
# ---------------------------------------------------------------------------------------
@functools.cache
def stats_seeds() -> list[str]:
    """stats.json of a run (traced, two lcores), of a plain run, of testpmd and of
    dpdk-l3fwd-graph (two worker graphs: the graph section)."""
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    root = work() / "stats"
    (root / "in").mkdir(parents=True)
    for port in (0, 1):
        write_pcap(root / "in" / f"port{port}.pcap", mixed_frames(50 + port, port, 12))
    (root / "v4.cfg").write_text("R198.18.0.0/16 1\nR10.0.0.0/8 0\n")         # few rules: a quicker page
    (root / "v6.cfg").write_text("R2001:200::/32 0\n")
    rules = ["--rule_ipv4", str(root / "v4.cfg"), "--rule_ipv6", str(root / "v6.cfg")]
    runs = {"lcores": ["run", "--trace", "all", "--config", "(0,0,0),(1,0,1)", *rules],
            "plain": ["run", "--pipeline", "simple", *rules],
            "testpmd": ["testpmd", "--forward-mode", "macswap"],
            "graph": ["run", "--app", "graph", "--config", "(0,0,1),(1,0,2)"]}
    texts = []
    for name, (command, *options) in runs.items():
        result = CliRunner().invoke(main, [command, str(root / "in"), "-o", str(root / name), "--quiet", *options])
        assert result.exit_code == 0, result.output
        texts.append((root / name / "stats.json").read_text())
    return texts


ODD_KEYS = ("", "\x1b[31mred", "a\nb", "\u202eevil", "\udcff", "\x00", "ports", "0" * 400, "<script>", "\u0661")
ODD_NUMBERS = (math.nan, math.inf, -math.inf, -1, -0.0, 10**30, 2**64, 10**400, 1e308, 0.5, 2**63 - 1, True, None)


def _other(draw):
    return copy.deepcopy(draw(st.one_of(st.sampled_from(ODD_NUMBERS), st.sampled_from(([], {}, [1], {"x": 1}, [[]], "")),
                          hostile_text(12), st.sampled_from([[0] * 3, {"0": {}}, {"*": 1}]))))


@st.composite
def stats_files(draw):
    text = draw(st.sampled_from(stats_seeds()))
    if draw(st.integers(0, 4)) == 0:
        return draw(mutated([text])).encode("utf-8", "surrogateescape")
    doc = json.loads(text)
    for _ in range(draw(st.integers(1, 3))):
        found = _entry(draw, doc, descend=3)
        if found is None:
            continue
        node, key = found
        action = draw(st.sampled_from(("value", "value", "key", "add", "delete")))
        if action == "value":
            node[key] = _other(draw)
        elif action == "key" and isinstance(node, dict):
            node[draw(st.sampled_from(ODD_KEYS) | hostile_text(8))] = node.pop(key)
        elif action == "add" and isinstance(node, dict):
            node[draw(st.sampled_from(ODD_KEYS))] = copy.deepcopy(node[key])
        else:
            del node[key]
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from((None, 2))))
    return text.encode("utf-8", "surrogateescape" if draw(st.booleans()) else "surrogatepass")


@fuzz(stats_files())
def test_stats_json(data):
    """A mutated stats.json: report draws it, or refuses it in one line; only report.html appears."""
    here = case_dir()
    (here / "stats.json").write_bytes(data)
    run_case(["report", here], watched=(here,))
    assert (here / "stats.json").read_bytes() == data
    done(here)


# ---------------------------------------------------------------------------------------
# 5. output directories holding odd names, links, directories and FIFOs
# ---------------------------------------------------------------------------------------
NAMES = ("port0.pcap", "port1.pcap", "port2.pcap", "port0.q0.pcap", "port3.pcapng", "stats.json", "trace.jsonl",
         "drops.pcapng", "report.html", "port\u0661.pcap", "port\uff11.pcap", "port0.q\u0663.pcap", "port0.pcap ",
         ".hidden", ".l3fwd-sim.x.stage", "a\nb", "ctl\x1b[31m\x7f", "\udcff.pcap", "port0.pcap\udcff", "port00.pcap")
KINDS = ("file", "file", "dir", "full-dir", "link-file", "link-dir", "link-dangling", "link-self", "fifo")
OUT_KINDS = ("dir", "dir", "dir", "missing", "file", "link-dir", "link-dangling", "under-file", "fifo", "link-self")
OUT_COMMANDS = (("run",), ("run", "--trace", "all"), ("run", "--drops", "--output-format", "pcapng"),
                ("testpmd",), ("generate",))


def _make(path: Path, kind: str, outside: Path, blob: bytes) -> None:
    if kind == "file":
        path.write_bytes(blob)
    elif kind in ("dir", "full-dir"):
        path.mkdir()
        if kind == "full-dir":
            (path / "port0.pcap").write_bytes(blob)
    elif kind == "link-file":
        path.symlink_to(outside / "target.bin")
    elif kind == "link-dir":
        path.symlink_to(outside / "tdir", target_is_directory=True)
    elif kind == "link-dangling":
        path.symlink_to(outside / "nothing")
    elif kind == "link-self":
        path.symlink_to(path.name)
    else:
        os.mkfifo(path)


@functools.cache
def outdir_input() -> Path:
    path = work() / "outdir-input.pcap"
    write_pcap(path, mixed_frames(60, 0, 8))
    return path


@fuzz(st.tuples(st.sampled_from(OUT_KINDS), st.dictionaries(st.sampled_from(NAMES), st.sampled_from(KINDS), max_size=6),
                st.sampled_from(OUT_COMMANDS), st.binary(max_size=16)))
def test_output_directories(case):
    """An output directory full of odd entries: on success only our own names changed
    (nothing a link points to), on refusal nothing at all."""
    out_kind, entries, command, blob = case
    here = case_dir()
    outside = here / "outside"                      # what links point at: must never change
    outside.mkdir()
    (outside / "target.bin").write_bytes(b"outside")
    (outside / "tdir").mkdir()
    (outside / "tdir" / "port0.pcap").write_bytes(b"outside dir")
    out = here / "out"
    if out_kind in ("dir", "link-dir"):
        real = here / "real-out"
        real.mkdir()
        for name, kind in entries.items():
            _make(real / name, kind, outside, blob)
        if out_kind == "dir":
            real.rename(out)
        else:
            out.symlink_to(real, target_is_directory=True)
    elif out_kind == "file":
        out.write_bytes(blob)
    elif out_kind == "under-file":
        (here / "afile").write_bytes(blob)
        out = here / "afile" / "out"
    elif out_kind != "missing":
        _make(out, out_kind, outside, blob)
    before = snapshot(here)
    if command[0] == "generate":
        args = ["generate", "IPV4-CONT-BURST", "--count", "3", "--ports", "2", "-o", out, "--quiet"]
    else:
        args = [command[0], f"0={outdir_input()}", "-o", out, "--quiet", *command[1:]]
    result = run_case(args, watched=(out, outside) if out_kind in ("dir", "link-dir", "missing") else (outside,))
    after = snapshot(here)
    if result.exit_code == 2:
        assert after == before, f"{args}: refused, but {here} changed"
    else:
        prefix = ("out", "real-out")                # the outputs: checked by run_case against OURS
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)
                   and k.split(os.sep)[0] not in prefix}
        assert not changed, f"{args}: changed outside the output directory: {sorted(changed)}"
    done(here)
