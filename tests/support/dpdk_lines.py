"""Real dpdk-l3fwd / dpdk-testpmd command lines for the golden runs, built as the golden
harness launched them (golden/README.md): one ``--vdev net_pcapN`` per port up to the
highest enabled one, one ``rx_pcap`` per RX queue file, one ``tx_pcap`` per lcore,
``--parse-ptype --relax-rx-offload``; and the way to run them in-process."""
from __future__ import annotations

import re
import shlex
from pathlib import Path

EAL = ["--no-huge", "-m", "4096", "--no-pci", "--no-telemetry", "--file-prefix", "golden", "--log-level", "7"]


def invoke(*args, env: dict | None = None):
    """``l3fwd-sim ARGS`` in-process, with ``env`` set meanwhile; click's Result."""
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


def _config_lcores(config: str) -> list[int]:
    return sorted({int(t.split(",")[2]) for t in re.findall(r"\(([^)]*)\)", config)})


def l3fwd_line(scenario: Path, options: str, outdir: Path) -> tuple[list[str], dict, dict[str, Path]]:
    """The argv (after ``dpdk-l3fwd``), the environment (the build: ``--pipeline``) and,
    per expected file name, the tx_pcap that must equal it, for one golden run."""
    words = shlex.split(options.replace("{d}", str(scenario)))
    pipeline = words[words.index("--pipeline") + 1]
    del words[words.index("--pipeline"):words.index("--pipeline") + 2]
    portmask = int(words[words.index("-p") + 1], 16)
    inputs = sorted((scenario / "in").glob("port*.pcap"))
    queues: dict[int, list[Path]] = {}
    for path in inputs:                                # port<N>.pcap or port<N>.q<Q>.pcap, in queue order
        queues.setdefault(int(re.match(r"port(\d+)", path.name).group(1)), []).append(path)
    if "--config" in words:
        lcores = _config_lcores(words[words.index("--config") + 1])
        # several lcores as the harness ran them: EAL --lcores mapping them onto two CPUs
        eal_lcores = ["--lcores", ",".join(f"{lc}@{i % 2}" for i, lc in enumerate(lcores))]
    else:
        lcores = [0]
        words += ["--config", ",".join(f"({p},0,0)" for p in sorted(queues) if portmask >> p & 1)]
        eal_lcores = ["-l", "0"]
    several = len(lcores) > 1
    argv, expected = [*eal_lcores, *EAL], {}
    for port in range(portmask.bit_length()):
        devargs = [f"rx_pcap={path}" for path in queues.get(port, [])]
        for k in range(len(lcores)):
            name = f"port{port}.q{k}.pcap" if several else f"port{port}.pcap"
            devargs.append(f"tx_pcap={outdir / name}")
            expected[name] = outdir / name
        argv += ["--vdev", ",".join([f"net_pcap{port}", *devargs])]
    argv += ["--", *words, "--parse-ptype", "--relax-rx-offload"]
    return argv, {"L3FWD_SIM_PIPELINE": pipeline}, expected


def pmd_line(indir: Path, mode: str, outdir: Path) -> tuple[list[str], dict[str, Path]]:
    """dpdk-testpmd over the golden testpmd inputs, as their README gives it."""
    argv = ["-l", "0,1", *EAL]
    expected = {}
    for path in sorted(indir.glob("port*.pcap")):
        port = int(path.stem.removeprefix("port"))
        argv += ["--vdev", f"net_pcap{port},rx_pcap={path},tx_pcap={outdir / path.name}"]
        expected[path.name] = outdir / path.name
    argv += ["--", "--port-topology=paired", "--auto-start", "--no-flush-rx", f"--forward-mode={mode}"]
    return argv, expected


def command_text(program: str, argv: list[str]) -> str:
    """The line as a user would paste it."""
    return shlex.join([program, *argv])
