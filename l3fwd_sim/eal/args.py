"""EAL options of a real command line (``rte_eal_init``): the lcores, the ``--vdev``
ports, and the options seen in practice that change nothing on pcap files.

``split_argv`` cuts ``[EAL options] -- [app options]``; ``parse_eal`` reads the first
part as EAL's getopt does (``-l0-3``, ``--lcores=1@0,2@1``, ``--vdev`` repeated).
"""
from __future__ import annotations

import getopt
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..dataplane.queues import MAX_LCORE
from ..errors import SimError
from ..numbers import brief
from .net_pcap import NoSuchPort, PcapVdev, parse_vdev

# options that change nothing for pcap files (memory, logging, process, drivers, tracing)
_QUIET_SHORT = "n:m:r:d:s:S:v"
_QUIET_LONG = ("no-huge", "no-pci", "no-telemetry", "telemetry", "in-memory", "no-shconf", "no-hpet",
               "legacy-mem", "single-file-segments", "match-allocations", "huge-unlink", "create-uio-dev",
               "file-prefix=", "log-level=", "huge-dir=", "socket-mem=", "socket-limit=", "iova-mode=",
               "base-virtaddr=", "vfio-intr=", "vfio-vf-token=", "mbuf-pool-ops-name=", "syslog=",
               "trace=", "trace-dir=", "trace-bufsz=", "trace-mode=", "force-max-simd-bitwidth=",
               "log-timestamp", "log-color", "main-lcore=")
_SHORT = "l:c:a:b:w:" + _QUIET_SHORT
_LONG = ("lcores=", "vdev=", "proc-type=", "allow=", "block=", "pci-whitelist=", "pci-blacklist=", *_QUIET_LONG)
_RANGE = re.compile(r"([0-9]+)(?:-([0-9]+))?")
EVENT_SW = "event_sw"              # the software event device: accepted, opened only in event mode


@dataclass
class Eal:
    """What ``rte_eal_init`` leaves for the application: enabled lcores (ascending), the
    ports — one per ``--vdev net_pcap`` that probed, in command-line order (port id =
    position) — the event devices (``--vdev event_sw0``: only event mode opens them), and
    the vdevs whose probe failed, each as (name, the rx_pcap libpcap could not open, why)."""
    lcores: list[int]
    vdevs: list[PcapVdev] = field(default_factory=list)
    main_lcore: int | None = None
    eventdevs: list[str] = field(default_factory=list)
    unprobed: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def console(self) -> list[str]:
        """What net_pcap and EAL printed of the probe."""
        return [line for name, path, reason in self.unprobed
                for line in (f"ETH_PCAP: open_single_rx_pcap(): Couldn't open {path}: {reason}",
                             f"EAL: Failed to probe device {name}")]

    @property
    def warnings(self) -> list[str]:
        """One line per vdev whose probe failed: what it costs the run."""
        return [f"{name} failed to probe (Couldn't open {path}: {reason}): it is no port, its tx_pcap files are not "
                f"created, and the vdevs after it take its port ids; ports: {self._ports()}"
                for name, path, reason in self.unprobed]

    def _ports(self) -> str:
        return ", ".join(f"{port}={vdev.name}" for port, vdev in enumerate(self.vdevs)) or "none"

    @contextmanager
    def explaining_ports(self):
        """A refusal for a port id no device has gets the probe failures that explain it."""
        try:
            yield
        except NoSuchPort as err:
            raise NoSuchPort(f"{err}{self.probe_note()}") from None

    def probe_note(self) -> str:
        """Why the ports are fewer than the vdevs given ("" when every vdev probed): what
        a refusal about a missing port needs to be understood."""
        if not self.unprobed:
            return ""
        failed = "; ".join(f"{name} failed to probe (Couldn't open {path}: {reason})"
                           for name, path, reason in self.unprobed)
        return f" ({failed}; ports: {self._ports()})"


def split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    """``[EAL options] -- [app options]``: the two parts (no ``--``: no app options)."""
    if "--" in argv:
        cut = argv.index("--")
        return argv[:cut], argv[cut + 1:]
    return argv, []


def getopt_long(argv: list[str], short: str, long: tuple[str, ...], who: str) -> list[tuple[str, str]]:
    """glibc's ``getopt_long`` as DPDK apps call it: ``-p0xf`` and ``-p 0xf``,
    ``--opt=v`` and ``--opt v``, unique prefixes of long names; one line on error. A
    word that is no option is refused (the real apps would silently ignore it)."""
    try:
        options, rest = getopt.gnu_getopt(argv, short, list(long))
    except getopt.GetoptError as err:
        raise SimError(f"{who}: {_getopt_message(err)}") from None
    if rest:
        raise SimError(f"{who}: unexpected argument {brief(rest[0])} (not an option)")
    return options


def _getopt_message(err: getopt.GetoptError) -> str:
    """Python's getopt messages, in glibc's words."""
    opt = brief(f"-{err.opt}" if len(err.opt) == 1 else f"--{err.opt}")
    text = str(err.msg)
    if "not recognized" in text:
        return f"unrecognized option {opt}"
    if "requires argument" in text:
        return f"option {opt} requires an argument"
    if "must not have an argument" in text:
        return f"option {opt} doesn't allow an argument"
    if "not a unique prefix" in text:
        return f"option {opt} is ambiguous"
    return brief(text)


def parse_corelist(text: str, option: str) -> list[int]:
    """``-l 0-3,5``: lcore ids and ranges."""
    lcores: set[int] = set()
    for part in text.split(","):
        match = _RANGE.fullmatch(part.strip())
        if not match:
            raise SimError(f"{option} {brief(text)}: invalid core list (e.g. 0-3,5)")
        texts = [t.lstrip("0") or "0" for t in (match.group(1), match.group(2) or match.group(1))]
        # more digits than any lcore id: out of range (strtoul saturates; int() would refuse 4300+ digits)
        low, high = ((MAX_LCORE, MAX_LCORE) if any(len(t) > len(str(MAX_LCORE)) for t in texts)
                     else map(int, texts))
        if low > high or high >= MAX_LCORE:
            raise SimError(f"{option} {brief(text)}: invalid core list (lcores 0..{MAX_LCORE - 1}, ranges low-high)")
        lcores.update(range(low, high + 1))
    return sorted(lcores)


def parse_coremask(text: str) -> list[int]:
    """``-c 0xf``: hex bitmask of lcores."""
    digits = text.strip()
    digits = digits[2:] if digits[:2].lower() == "0x" else digits
    if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits) or len(digits) > MAX_LCORE // 4:
        raise SimError(f"-c {brief(text)}: invalid coremask (hex, e.g. 0xf)")
    mask = int(digits, 16)
    if not mask:
        raise SimError(f"-c {brief(text)}: invalid coremask (no lcore)")
    return [lcore for lcore in range(MAX_LCORE) if mask >> lcore & 1]


def parse_lcores_map(text: str) -> list[int]:
    """``--lcores '1@0,2@1,(3-5)@(0,2),6'``: the lcore ids (the CPUs after ``@`` only
    place threads)."""
    lcores: list[int] = []
    depth, start = 0, 0
    elements = []
    for i, char in enumerate(text + ","):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            break
        if char == "," and depth == 0:
            elements.append(text[start:i])
            start = i + 1
    if depth != 0 or not all(elements):
        raise SimError(f"--lcores {brief(text)}: invalid lcore map (e.g. 1@0,2@1,(3-5)@(0,2))")
    for element in elements:
        ids = element.split("@", 1)[0]
        if ids.startswith("(") and ids.endswith(")"):
            ids = ids[1:-1]
        lcores += parse_corelist(ids, "--lcores")
    return sorted(set(lcores))


def parse_eal(argv: list[str]) -> Eal:
    """EAL's part of the command line; one line (and no port) on any error."""
    lcores: list[int] | None = None
    lcore_option = ""
    vdevs: list[PcapVdev] = []
    eventdevs: list[str] = []
    main_lcore = None
    for opt, value in getopt_long(argv, _SHORT, _LONG, "EAL"):
        if opt in ("-l", "-c", "--lcores"):
            if lcores is not None:
                raise SimError(f"EAL: {opt} and {lcore_option} both set the lcores; give one")
            lcores = {"-l": lambda v: parse_corelist(v, "-l"), "-c": parse_coremask,
                      "--lcores": parse_lcores_map}[opt](value)
            lcore_option = opt
        elif opt == "--vdev" and value.startswith(EVENT_SW):
            eventdevs.append(value.partition(",")[0])
        elif opt == "--vdev":
            vdev = parse_vdev(value)
            if any(v.name == vdev.name for v in vdevs):
                raise SimError(f"--vdev {vdev.name}: given twice (each device name once)")
            vdevs.append(vdev)
        elif opt in ("-a", "-b", "-w", "--allow", "--block", "--pci-whitelist", "--pci-blacklist"):
            raise SimError(f"EAL {opt} {brief(value)}: PCI devices are not modelled; every port is a "
                           "--vdev 'net_pcapN,rx_pcap=FILE,tx_pcap=FILE'")
        elif opt == "--proc-type" and value not in ("primary", "auto"):
            raise SimError(f"EAL --proc-type {brief(value)}: only a primary process is modelled")
        elif opt == "--main-lcore":
            main_lcore = value
    if lcores is None:                          # EAL's default: every CPU of the machine
        lcores = list(range(min(os.cpu_count() or 1, MAX_LCORE)))
    if main_lcore is not None:
        digits = main_lcore.lstrip("0") or "0"         # int() would refuse 4300+ digits
        if not (main_lcore.isascii() and main_lcore.isdigit() and len(digits) <= 18 and int(digits) in lcores):
            raise SimError(f"EAL --main-lcore {brief(main_lcore)}: not one of the enabled lcores {lcores}")
        main_lcore = int(digits)
    probed = [(vdev, vdev.probe()) for vdev in vdevs]            # the bus probe, once every option is read
    return Eal(lcores, [vdev for vdev, failed in probed if not failed], main_lcore if main_lcore is not None else lcores[0],
               eventdevs, [(vdev.name, *failed) for vdev, failed in probed if failed])
