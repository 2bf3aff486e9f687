"""Which capture each RX port receives: the ``INPUT`` arguments of ``run``, ``testpmd``
and ``compare`` (net_pcap's ``rx_pcap=`` of each port's vdev)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..capture.location import Location, as_location, exists, list_directory
from ..capture.reading import Reading
from ..errors import SimError
from ..releases import Release, release
from ..numbers import brief, parse_int
from .ports import MAX_PORTS
from .queues import MAX_RX_QUEUE_PER_PORT

# port<N>.pcap, or RX queue Q's port<N>.q<Q>.pcap; .pcapng alike (what --output-format pcapng writes),
# and either gzip'd (.gz: the readers know gzip by its magic)
_PORT_FILE = re.compile(r"port([0-9]+)(?:\.q([0-9]+))?\.pcap(?:ng)?(?:\.gz)?")
_SPEC = re.compile(r"([0-9]+)(?:\.([0-9]+))?")                # N=FILE or N.Q=FILE
# a file that looks like a capture by its name, though not one of ours: said, not skipped silently
_CAPTURE_LIKE = re.compile(r".*\.(pcap|pcapng|cap|dmp|ntar)(\.gz)?", re.IGNORECASE)


def find_rx_queues(specs: list[str], notes: list[str] | None = None) -> dict[tuple[int, int | None], Location]:
    """Map (port, RX queue) → capture from ``INPUT`` arguments: directories of
    ``port<N>.pcap`` (queue None: the whole port's traffic) and ``port<N>.q<Q>.pcap``
    (what RX queue Q receives, as one ``rx_pcap`` of net_pcap), each also named
    ``.pcapng``, either gzip'd (``.gz``), or ``N=FILE`` / ``N.Q=FILE``. Two files of a
    directory for one port (or RX queue) are refused. A port has either one whole-port capture
    or per-queue ones; a directory holding both (a several-lcore run's outputs) gives
    the whole-port one. A lone capture file (no ``N=``) is port 0's. Into ``notes``: one
    line per directory naming the captures it holds under other names (not taken)."""
    inputs: dict[tuple[int, int | None], Location] = {}

    def add(port_text: str, queue_text: str | None, path: Location, spec: str):
        port = parse_int(port_text, f"{brief(spec)}: port", 0, MAX_PORTS - 1)
        queue = None if queue_text is None else parse_int(queue_text, f"{brief(spec)}: RX queue", 0,
                                                          MAX_RX_QUEUE_PER_PORT - 1)   # l3fwd's limit
        if (port, queue) in inputs:
            raise SimError(f"{spec}: port {port}{'' if queue is None else f' queue {queue}'} already has an "
                           f"input ({inputs[port, queue]})")
        other = [q for p, q in inputs if p == port and (q is None) != (queue is None)]
        if other:
            raise SimError(f"{spec}: port {port} has both a whole-port capture and per-queue captures; "
                           "give one or the other")
        inputs[port, queue] = path

    for spec in specs:
        port, eq, file = spec.partition("=")
        if eq and (m := _SPEC.fullmatch(port)):
            add(m.group(1), m.group(2), as_location(file), spec)
            continue
        entries = list_directory(as_location(spec))
        if entries is None:
            if not exists(as_location(spec)):
                raise SimError(f"{spec}: no such file or directory")
            if len(specs) == 1:                                   # `run capture.pcap -o out`: port 0 receives it
                add("0", None, as_location(spec), spec)
                continue
            raise SimError(f"{spec}: not a directory of port<N>.pcap files; with several captures, name each one's "
                           "port: 0=a.pcap 1=b.pcap")
        found = [(m.group(1), m.group(2), p) for name, p in entries if (m := _PORT_FILE.fullmatch(name))]
        others = sorted(name for name, _ in entries if _CAPTURE_LIKE.fullmatch(name) and not _PORT_FILE.fullmatch(name))
        if others and notes is not None:
            notes.append(f"{spec}: {len(others)} capture{'s' * (len(others) != 1)} not taken as input (a port's file is "
                         f"port<N>.pcap, .pcapng, .gz; N=FILE names any): {', '.join(others[:8])}"
                         + (f", … ({len(others) - 8} more)" if len(others) > 8 else ""))
        whole = {port for port, queue, _ in found if queue is None}
        # beside a port's whole capture, its per-queue files are a run's per-TX-queue outputs
        found = [(port, queue, p) for port, queue, p in found if queue is None or port not in whole]
        if not found:
            raise SimError(f"{spec}: no port<N>.pcap files in this directory")
        named: dict[tuple[int, int | None], str] = {}
        for port, queue, p in sorted(found, key=lambda f: str(f[2])):
            key = (int(port), None if queue is None else int(queue))
            if key in named:
                raise SimError(f"{spec}: {named[key]} and {Path(str(p)).name} are both the capture of port "
                               f"{key[0]}{'' if key[1] is None else f' RX queue {key[1]}'}; keep one")
            named[key] = Path(str(p)).name
        for port, queue, p in found:
            add(port, queue, p, spec)
    if not inputs:
        raise SimError("no input given")
    return inputs


def find_inputs(specs: list[str], notes: list[str] | None = None) -> dict[int, Location]:
    """Map RX port → pcap from ``INPUT`` arguments: a directory of ``port<N>.pcap``
    files, or ``N=FILE`` (a lone file: port 0). Per-queue captures (``port<N>.q<Q>.pcap``)
    are left out: a run's output directory holds them beside the merged ``port<N>.pcap``."""
    inputs = {port: path for (port, queue), path in find_rx_queues(specs, notes).items() if queue is None}
    if not inputs:
        raise SimError(f"{' '.join(specs)}: per-queue captures only; this command takes port<N>.pcap files")
    return inputs


@dataclass
class PortInputs:
    """What every forwarding run starts from (``RunOptions``, ``TestpmdOptions``): the
    capture each RX port receives and the directory for the per-port outputs. Paths may
    be given as strings."""
    inputs: dict[int, Location]       # a path, or an fsspec URL (capture/location.py)
    outdir: Location
    reading: Reading = Reading.ETHERNET   # LIBPCAP: a verbatim command line's rx_pcap files (capture/reading.py)
    dpdk: Release = field(default_factory=release)   # the DPDK release modelled (releases.py; L3FWD_SIM_DPDK)

    def __post_init__(self):
        if not str(self.outdir):                  # Path("") would be the current directory
            raise SimError("the output directory is an empty string; name a directory")
        self.inputs = {int(port): as_location(path) for port, path in self.inputs.items()}
        self.outdir = as_location(self.outdir)     # a URL: uploaded once complete (capture/outdir.py)
