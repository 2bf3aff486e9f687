"""net_pcap vdevs: ``--vdev 'net_pcapN,rx_pcap=FILE,...,tx_pcap=FILE,...'``
(``drivers/net/pcap/pcap_ethdev.c``, v26.07; real_command_lines.md, lcores_and_queues.md).

* Each ``rx_pcap`` is one RX queue and each ``tx_pcap`` one TX queue, in the order written;
  the counts may differ. At most 16 each (``RTE_PMD_PCAP_MAX_QUEUES``).
* A vdev with only ``tx_pcap`` gets one dummy RX queue per TX queue (never a packet); one
  with only ``rx_pcap`` one TX queue per RX queue that counts and drops.
* The device reports exactly those queue counts (``max_rx_queues``/``max_tx_queues``),
  no packet types, no RSS hash types, and RX offloads without checksums — hence
  ``rte_eth_dev_configure`` fails for more queues than files, and l3fwd needs
  ``--parse-ptype`` and ``--relax-rx-offload``.
* Every tx file is created when the device is probed, so a queue no one sends on leaves
  an empty pcap. net_pcap writes nanosecond pcaps stamped at transmit time; l3fwd-sim
  keeps each packet's input time stamp and the inputs' precision (nanoseconds when an
  input has them), so that records are written straight from the input buffer (~0.1 s
  per 1M packets saved); the frames, which are what real runs are compared on, are the same.
* Live interfaces (``iface``, ``rx_iface``, ``rx_iface_in``, ``tx_iface``) and
  ``infinite_rx`` have no meaning on files here: refused.
* The probe opens every ``rx_pcap`` with libpcap (``open_single_rx_pcap``) before it
  creates any tx file. A file libpcap cannot read — gzip'd, another format, a damaged
  header — fails the probe: the vdev is no port at all, EAL goes on, and the vdevs after
  it take the port ids from there on (capture_edges 04 and 25). A file that cannot be
  opened at all is refused here instead, naming it (a typo, most likely). The
  ``rx_pcap`` files are then read as libpcap reads them (``capture/reading.py``).
* ``rte_eth_dev_info_get`` of a port id no vdev has fails (``-ENODEV``): l3fwd asks it
  for the port of every route it installs (:class:`NoSuchPort`).
"""
from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..capture.atomic import create_new
from ..capture.location import as_location, identity, is_url
from ..capture.offline import open_offline
from ..capture.outdir import publish_files
from ..capture.pcap import PcapWriter
from ..capture.reading import NotACapture, Reading
from ..errors import SimError
from ..numbers import brief

MAX_QUEUES = 16                                     # RTE_PMD_PCAP_MAX_QUEUES
DRIVER_NAMES = ("net_pcap", "eth_pcap")              # the driver and its alias
LIVE = ("iface", "rx_iface", "rx_iface_in", "tx_iface")
FLAGS = ("phy_mac", "eof")                           # accepted, no effect on files
CONFIGURE_EINVAL = -22
NANOSECOND_MAGIC = bytes.fromhex("4d3cb2a1")          # what PcapWriter writes for nanosecond pcaps


@dataclass
class PcapVdev:
    """One ``--vdev net_pcap...``: a port, its RX and TX queue files in queue order."""
    name: str
    rx_pcap: list[str] = field(default_factory=list)
    tx_pcap: list[str] = field(default_factory=list)

    @property
    def rx_queues(self) -> int:
        """``max_rx_queues``: one per rx_pcap, or a dummy one per tx_pcap."""
        return len(self.rx_pcap) or len(self.tx_pcap)

    @property
    def tx_queues(self) -> int:
        """``max_tx_queues``: one per tx_pcap, or a dropping one per rx_pcap."""
        return len(self.tx_pcap) or len(self.rx_pcap)

    def probe(self) -> tuple[str, str] | None:
        """What ``pmd_pcap_probe`` makes of the files: None if every rx_pcap opens as
        libpcap opens it, else the first that does not and libpcap's reason (the probe
        fails). A pipe is not opened here: it can be read only once."""
        for path in self.rx_pcap:
            location = as_location(path)
            if not identity(location)[1]:
                continue
            try:
                open_offline(location, Reading.LIBPCAP).close()
            except NotACapture as err:
                return path, err.reason
        return None

    def configure(self, port: int, nb_rxq: int, nb_txq: int, relax_rx_offload: bool) -> None:
        """``rte_eth_dev_configure`` as l3fwd calls it: l3fwd's message on failure."""
        why = None
        if not relax_rx_offload:
            why = "l3fwd asks for RX checksum offload, which net_pcap lacks: add --relax-rx-offload"
        elif nb_rxq > self.rx_queues:
            why = f"{self.name} has {self.rx_queues} RX queue(s) (rx_pcap), --config gives port {port} {nb_rxq}"
        elif nb_txq > self.tx_queues:
            why = (f"{self.name} has {self.tx_queues} TX queue(s) (tx_pcap); l3fwd opens one per lcore: {nb_txq} "
                   f"— give {nb_txq} tx_pcap")
        if why:
            raise SimError(f"Cannot configure device: err={CONFIGURE_EINVAL}, port={port} ({why})")


class NoSuchPort(SimError):
    """``rte_eth_dev_info_get`` of a port id that no device has: the application's own
    message (it exits)."""


def dev_info_get(vdevs: list[PcapVdev], port: int, message: str) -> None:
    """``rte_eth_dev_info_get(port)`` as an application calls it: it fails (-ENODEV) for
    a port id beyond the probed vdevs, and the application exits with ``message``."""
    if port >= len(vdevs):
        raise NoSuchPort(message)


NO_TX_DEVICE = "tx_no_device"


def tx_without_device(stats: dict, ports: int) -> None:
    """``rte_eth_tx_burst`` on a port id no device has: ethdev's dummy burst function
    sends nothing, and l3fwd frees what was not sent (``send_burst``). Only ACL mode gets
    there (its set-up asks no device; lpm, em and fib refuse such routes at start). The
    run's packets counted as sent on those ports become drops ``tx_no_device`` of their
    RX ports, with one warning; nothing was written for them."""
    lost = {port: entry["out"] for port, entry in stats["ports"].items() if int(port) >= ports and entry["out"]}
    if not lost:
        return
    for entry in stats["ports"].values():
        for port in lost:
            if (n := entry["to"].pop(port, 0)):
                entry["tx"] -= n
                entry["dropped"] += n
                entry["drops"][NO_TX_DEVICE] = entry["drops"].get(NO_TX_DEVICE, 0) + n
    total = sum(lost.values())
    for port in lost:
        stats["ports"][port]["out"] = 0
    stats["totals"]["tx"] -= total
    stats["totals"]["dropped"] += total
    stats["drops"][NO_TX_DEVICE] = total
    shown = ", ".join(f"port {port}: {n:,}" for port, n in lost.items())
    stats["warnings"].append(f"{total:,} packets routed to ports no --vdev made ({shown}): rte_eth_tx_burst sends "
                             f"nothing there (ethdev logs \"called tx_pkt_burst for not ready port\") and l3fwd frees "
                             f"them; counted as dropped ({NO_TX_DEVICE})")


def parse_vdev(text: str) -> PcapVdev:
    """``--vdev`` as EAL and ``rte_kvargs`` read it: ``NAME[,key=value]...``."""
    name, _, args = text.partition(",")
    name = name.strip()
    if not name.startswith(DRIVER_NAMES):
        raise SimError(f"--vdev {brief(text)}: only net_pcap devices are modelled (ports read and "
                       f"write pcap files; and event_sw, the event device); got {name!r}")
    vdev = PcapVdev(name)
    for pair in filter(None, args.split(",")):
        key, eq, value = pair.partition("=")
        key = key.strip()
        if key in LIVE or key == "infinite_rx":
            raise SimError(f"--vdev {name}: {key}= is not modelled (no live interfaces here: a port reads "
                           "rx_pcap= files and writes tx_pcap= files, once through)")
        if key == "snaplen":
            raise SimError(f"--vdev {name}: snaplen= is not modelled (net_pcap's default 65535 is)")
        if not eq and key not in FLAGS:
            raise SimError(f"--vdev {name}: {brief(pair)} is not key=value")
        if key == "rx_pcap":
            vdev.rx_pcap.append(value)
        elif key == "tx_pcap":
            vdev.tx_pcap.append(value)
        elif key not in FLAGS:
            raise SimError(f"--vdev {name}: unknown argument {brief(key)} (net_pcap takes rx_pcap=, tx_pcap=)")
        if not value and key in ("rx_pcap", "tx_pcap"):
            raise SimError(f"--vdev {name}: {key}= names no file")
        if "\x00" in value:                    # no argv word holds one; os.stat would raise ValueError
            raise SimError(f"--vdev {name}: {key}={brief(value)}: a file name cannot hold a NUL character")
    if not vdev.rx_pcap and not vdev.tx_pcap:
        raise SimError(f"--vdev {name}: Error - No rx or tx queues provided")
    for key, files in (("rx_pcap", vdev.rx_pcap), ("tx_pcap", vdev.tx_pcap)):
        if len(files) > MAX_QUEUES:
            raise SimError(f"--vdev {name}: {len(files)} {key} files; net_pcap takes at most {MAX_QUEUES}")
    return vdev


def _magic(path: Path) -> bytes:
    with open(path, "rb") as file:
        return file.read(4)


def check_ptype(port: int, parse_ptype: bool) -> None:
    """l3fwd's ``prepare_ptype_parser``: net_pcap reports no packet types, so only the
    software parser (``--parse-ptype``) lets l3fwd start."""
    if not parse_ptype:
        raise SimError(f"port {port} cannot parse packet type, please add --parse-ptype")


class TxFiles:
    """Every ``tx_pcap`` of a command line (and the run's own files asked for: the stats,
    the trace, each by its name in the run's output directory): the outputs of the run,
    written as one all-or-nothing set. Refused before anything runs: a file named twice, a
    tx file that is also an rx_pcap (net_pcap would truncate the input when it creates
    its outputs), a directory that does not exist."""

    def __init__(self, vdevs: list[PcapVdev], extras: dict[str, str | None] | None = None):
        self.queues = [(port, queue, Path(path)) for port, vdev in enumerate(vdevs)
                       for queue, path in enumerate(vdev.tx_pcap)]
        self.extras = {name: Path(target) for name, target in (extras or {}).items() if target}
        targets = [path for _, _, path in self.queues] + list(self.extras.values())
        if not targets:
            raise SimError("no tx_pcap= in any --vdev and no L3FWD_SIM_STATS: this run would write nothing")
        inputs = {identity(p)[0] for vdev in vdevs for p in vdev.rx_pcap if not is_url(p) and os.path.exists(p)}
        seen: set[Path] = set()
        for target in targets:
            if is_url(str(target)) or target.resolve() in seen:
                raise SimError(f"{target}: named as two outputs, or not a local file; each tx_pcap needs a file "
                               "of its own")
            seen.add(target.resolve())
            if target.exists() and identity(target)[0] in inputs:
                raise SimError(f"{target}: both an rx_pcap input and an output (net_pcap would truncate it first)")
            if not target.parent.is_dir():
                raise SimError(f"{target}: cannot create output: directory {target.parent} does not exist")
        self.directory = targets[0].parent

    @contextmanager
    def scratch(self):
        """A private directory beside the first output (same file system: the outputs are
        renamed, not copied, into place), removed on the way out whatever happens."""
        path, _ = create_new(self.directory, ".l3fwd-sim.", ".vdev", os.mkdir)
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)

    def publish(self, sent: Callable[[int, int], Path], outdir: Path, scratch: Path) -> None:
        """Put in place what TX queue (port, queue) sent (``sent``: the run's file for it)
        and the run's own files asked for (from ``outdir``). A queue the run wrote nothing for (a port outside the portmask, a
        queue no lcore sends on) becomes an empty pcap, as net_pcap leaves such a file, with
        the time-stamp precision of the run's other files."""
        produced = {(port, queue): sent(port, queue) for port, queue, _ in self.queues}
        written = [path for path in produced.values() if path.exists()]
        nanosecond = not written or _magic(written[0]) == NANOSECOND_MAGIC
        files = {}
        for index, (port, queue, target) in enumerate(self.queues):
            if not produced[port, queue].exists():
                produced[port, queue] = scratch / f"empty{index}.pcap"
                PcapWriter(produced[port, queue], nanosecond=nanosecond).commit()
            files[produced[port, queue]] = target
        files.update({outdir / name: target for name, target in self.extras.items()})
        publish_files(files)
