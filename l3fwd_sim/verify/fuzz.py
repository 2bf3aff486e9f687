"""``verify --fuzz N``: a differential fuzzer for a real dpdk-l3fwd (or dpdk-testpmd)
build. Each round draws a layout — ports, lcores, lookup (lpm, em, fib, acl) or testpmd
engine, burst — random rule files of that lookup, and traffic ``generate`` makes for them
(random and malformed mixes, the seed patterns, frames of 64 to 3000 bytes), then
verifies the line. It stops at the first difference and keeps a reproducer: the inputs,
the rule files, the command line, and both sides' outputs."""
from __future__ import annotations

import ipaddress
import json
import random
import shlex
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from ..errors import SimError
from ..traffic.generate import GenerateOptions, generate
from .verify import VerifyOptions, verify

PATTERNS = ("random", "random", "malformed", "IPV4-4STREAMSX8", "IPV6-4STREAMSX8", "IPV4/IPV6-CONT-BURST")
SIZES = ("64", "64-1518", "imix", "64-3000")
EAL = ["--no-huge", "-m", "1024", "--no-pci", "--no-telemetry"]
ENGINES = ("io", "mac", "macswap", "5tswap", "icmpecho", "rxonly")


def _lpm_rules(rng: random.Random, family: int, ports: int) -> str:
    """Routes biased to the benchmarking ranges generate uses, depths of every kind."""
    lines = []
    for _ in range(rng.randrange(1, 40)):
        if family == 4:
            depth = rng.choice([8, 15, 16, 20, 24, 25, 28, 32])
            base = rng.choice([0xC6120000, 0xC6130000, rng.getrandbits(32)]) | rng.getrandbits(16)
            prefix = ipaddress.IPv4Address(base & (0xFFFFFFFF << (32 - depth)))
        else:
            depth = rng.choice([16, 32, 48, 56, 64, 96, 128])
            base = rng.choice([0x20010200 << 96, rng.getrandbits(128)]) | rng.getrandbits(80)
            prefix = ipaddress.IPv6Address(base & (((1 << 128) - 1) << (128 - depth)))
        lines.append(f"R{prefix}/{depth} {rng.randrange(ports)}")
    return "\n".join(lines) + "\n"


def _em_rules(rng: random.Random, family: int, ports: int) -> str:
    lines = []
    for _ in range(rng.randrange(1, 30)):
        if family == 4:
            dst, src = (ipaddress.IPv4Address(0xC6120000 | rng.getrandbits(12)) for _ in range(2))
        else:
            dst, src = (ipaddress.IPv6Address(0x20010200 << 96 | rng.getrandbits(12)) for _ in range(2))
        lines.append(f"R{dst} {src} {rng.choice([9, 53, rng.randrange(65536)])} "
                     f"{rng.choice([9, 1024, rng.randrange(65536)])} {rng.choice(['0x11', '0x6'])} {rng.randrange(ports)}")
    return "\n".join(lines) + "\n"


def _acl_rules(rng: random.Random, family: int, ports: int) -> str:
    lines = []
    for _ in range(rng.randrange(1, 20)):
        if family == 4:
            src = f"{ipaddress.IPv4Address(rng.choice([0, 0x0A000000, rng.getrandbits(32)]) & 0xFFFF0000)}/" \
                  f"{rng.choice([0, 8, 16])}"
            dst = f"198.18.{rng.randrange(4)}.0/{rng.choice([0, 15, 24])}"
        else:
            src = f"{ipaddress.IPv6Address(rng.getrandbits(16) << 112)}/{rng.choice([0, 16])}"
            dst = f"2001:200:0:{rng.randrange(4)}:0:0:0:0/{rng.choice([0, 32, 64])}"
        low = rng.randrange(65536)
        sports, dports = f"0 : 65535", f"{low} : {rng.randrange(low, 65536)}"
        proto = rng.choice(["0/0x0", "17/0xff", "6/0xff"])
        action = "@" if rng.random() < 0.2 else "R"
        port = "" if action == "@" else f" {rng.randrange(ports)}"
        lines.append(f"{action}{src} {dst} {sports} {dports} {proto}{port}")
    return "\n".join(lines) + "\n"


RULES = {"lpm": _lpm_rules, "fib": _lpm_rules, "em": _em_rules, "acl": _acl_rules}


def _round(rng: random.Random, work: Path, program: str) -> list[str]:
    """One round's inputs in ``work`` and its command line (after the program name)."""
    ports, lcores = rng.choice([2, 3, 4]), rng.choice([1, 1, 2])
    indir, outdir = work / "in", work / "out"
    outdir.mkdir(parents=True, exist_ok=True)
    app, rules = [], {}
    lookup = rng.choice(["lpm", "em", "fib", "acl"]) if program == "dpdk-l3fwd" else None
    if lookup and (lookup == "acl" or rng.random() < 0.7):
        for family in (4, 6):
            rules[family] = work / f"rules_v{family}.cfg"
            rules[family].write_text(RULES[lookup](rng, family, ports))
    pattern = rng.choice(PATTERNS)
    traffic = GenerateOptions(outdir=indir, pattern=pattern, ports=ports, count=rng.randrange(20, 300),
                              size=rng.choice(SIZES) if pattern in ("random", "malformed") else "64",
                              seed=rng.randrange(1 << 30))
    try:                                # destinations the rule files route, where generate finds some
        generate(replace(traffic, rule_ipv4=rules.get(4) if lookup in ("lpm", "fib", "em") else None,
                         rule_ipv6=rules.get(6) if lookup in ("lpm", "fib", "em") else None))
    except SimError:
        generate(traffic)
    if program == "dpdk-l3fwd":
        line = ["-l", f"0-{lcores - 1}", *EAL]
        for port in range(ports):
            tx = ",".join(f"tx_pcap={outdir}/port{port}.q{q}.pcap" for q in range(lcores))
            line += ["--vdev", f"net_pcap{port},rx_pcap={indir}/port{port}.pcap,{tx}"]
        config = ",".join(f"({port},0,{rng.randrange(lcores)})" for port in range(ports))
        app = ["-p", hex((1 << ports) - 1), "--config", config, "--parse-ptype", f"--lookup={lookup}",
               *(f"--rule_ipv{family}={path}" for family, path in rules.items())]
    else:
        line = ["-l", "0-1", *EAL]
        for port in range(ports):
            line += ["--vdev", f"net_pcap{port},rx_pcap={indir}/port{port}.pcap,tx_pcap={outdir}/port{port}.pcap"]
        app = ["--no-flush-rx", f"--forward-mode={rng.choice(ENGINES)}",
               f"--port-topology={rng.choice(['paired', 'chained', 'loop'])}", f"--burst={rng.randrange(1, 65)}"]
    return [*line, "--", *app]


def fuzz(program: str, binary: Path | None, rounds: int, seed: int, keep: Path | None, dpdk: str = "auto",
         pipeline: str = "multi", report=None) -> dict:
    """Up to ``rounds`` verified rounds from ``seed``; stops at the first difference (its
    reproducer kept in ``keep``, or a directory named in the result)."""
    rng = random.Random(seed)
    for number in range(rounds):
        work = Path(tempfile.mkdtemp(prefix="l3fwd-sim-fuzz-"))
        try:
            line = _round(rng, work, program)
            result = verify(VerifyOptions(program, line, binary, dpdk, work / "sides", pipeline))
            if report:
                report(number, result)
            if not result["equal"]:
                kept = (keep or Path(tempfile.mkdtemp(prefix="l3fwd-sim-fuzz-found-"))) / f"round-{number}"
                command = shlex.join(["l3fwd-sim", "verify", *(["--binary", str(binary)] if binary else []),
                                      "--dpdk", result["dpdk"], "--", program, *line])
                (work / "command.sh").write_text(command.replace(str(work), str(kept)) + "\n")
                (work / "result.json").write_text(json.dumps(result, indent=2))
                shutil.copytree(work, kept, dirs_exist_ok=True)
                return {"rounds": number + 1, "equal": False, "reproducer": str(kept), "result": result}
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return {"rounds": rounds, "equal": True}
