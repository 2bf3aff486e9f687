"""Which capture each RX port receives: the ``INPUT`` arguments of ``run``, ``testpmd``
and ``compare`` (net_pcap's ``rx_pcap=`` of each port's vdev)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import SimError
from .ports import MAX_PORTS

_PORT_FILE = re.compile(r"port(\d+)\.pcap")


def find_inputs(specs: list[str]) -> dict[int, Path]:
    """Map RX port → pcap from ``INPUT`` arguments: a directory of ``port<N>.pcap``
    files, or ``N=FILE``."""
    inputs: dict[int, Path] = {}

    def add(port: int, path: Path, spec: str):
        if port >= MAX_PORTS:
            raise SimError(f"{spec}: port {port} out of range 0..{MAX_PORTS - 1}")
        if port in inputs:
            raise SimError(f"{spec}: port {port} already has an input ({inputs[port]})")
        inputs[port] = path

    for spec in specs:
        port, eq, file = spec.partition("=")
        if eq and re.fullmatch(r"[0-9]+", port):
            add(int(port), Path(file), spec)
            continue
        path = Path(spec)
        if not path.is_dir():
            raise SimError(f"{spec}: not a directory of port<N>.pcap files nor N=FILE")
        found = [(int(m.group(1)), p) for p in sorted(path.iterdir()) if (m := _PORT_FILE.fullmatch(p.name))]
        if not found:
            raise SimError(f"{spec}: no port<N>.pcap files in this directory")
        for port, p in found:
            add(port, p, spec)
    if not inputs:
        raise SimError("no input given")
    return inputs


@dataclass
class PortInputs:
    """What every forwarding run starts from (``RunOptions``, ``TestpmdOptions``): the
    capture each RX port receives and the directory for the per-port outputs. Paths may
    be given as strings."""
    inputs: dict[int, Path]
    outdir: Path

    def __post_init__(self):
        self.inputs = {int(port): Path(path) for port, path in self.inputs.items()}
        self.outdir = Path(self.outdir)
