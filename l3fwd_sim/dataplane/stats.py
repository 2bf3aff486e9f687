"""Run statistics: what l3fwd itself never counts.

Per RX port: ``rx``, ``tx`` (of those received there, how many were transmitted, on any
port), ``dropped`` and drops by reason, so that ``rx == tx + dropped`` per port and in
total, and ``to``: how many of them each TX port sent. Per TX port: ``out`` (packets
written to its pcap) and the TX model's counters.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from .. import compiled
from ..capture.atomic import AtomicFile
from . import twins
from .ports import MAX_PORTS

# Drops of the port itself, before any application sees the packet; their codes follow
# the application's own (an application's code i + 1 is its reasons[i]).
RX_DROPS = (
    "oversize",          # longer than the 2048-byte mbuf, no RX scatter: net_pcap drops it on receive
    "rx_error",          # libpcap fails to read it (a pcapng interface it rejects): net_pcap counts an RX error
)


class RunStats:
    def __init__(self, rx_ports: list[int], tx_ports: list[int], reasons: tuple[str, ...]):
        self.rx_ports = rx_ports
        self.tx_ports = tx_ports
        self.app_reasons = tuple(reasons)
        self.reasons = self.app_reasons + RX_DROPS
        self._rx = {p: 0 for p in rx_ports}
        self._drops = {p: np.zeros(len(self.reasons) + 1, np.int64) for p in rx_ports}
        self._flows = {p: np.zeros(MAX_PORTS + 1, np.int64) for p in rx_ports}   # by TX port + 1 (0: dropped)
        self.stage_seconds: dict[str, float] = {}
        self.setup_seconds: dict[str, float] = {}   # one-time costs: table builds
        self.warnings: list[str] = []
        self.conveniences: list[str] = []     # where reading the inputs went beyond libpcap (capture/reading.py)
        self.cut_short: dict[int, int] = {}   # RX port -> records lost to a cut-short input (0 or 1)
        self.input_losses: list[str] = []     # the warnings about input lost: told even under --quiet
        self.elapsed = 0.0
        self.tx_model = None
        self.options: dict = {}
        self.lcores: dict[int, dict] = {}     # lcore id -> its RX queues, TX queue and totals (several lcores)
        self.queue_rx: list[int] = []         # packets received per RX queue, in the lcore's polling order
        self.traced = 0                       # packets traced (run --trace)
        self.hits = None                      # per-rule hit counters (hits.RuleHits), when the application keeps them
        self.trace: dict | None = None        # what stats.json says about the trace
        self.rules: list[dict] | None = None  # what stats.json says of each rule line (the hit counters)
        self.rules_not_installed: dict[int, int] = {}   # port -> rule lines left out (the port is not enabled)

    def count(self, in_port: np.ndarray, reason: np.ndarray, dest: np.ndarray) -> None:
        """Count a super-burst: each packet's RX port, drop reason (0: sent) and TX port
        (-1: dropped). ``stats.c`` twins it."""
        if compiled.enabled():
            counts = self.counters()
            twins.count_packets(np.ascontiguousarray(in_port, np.int64), np.ascontiguousarray(reason, np.uint8),
                            np.ascontiguousarray(dest, np.int64), *counts)
            self.add_counts(*counts)
            return
        width, flow_width = len(self.reasons) + 1, MAX_PORTS + 1
        rx = np.bincount(in_port, minlength=MAX_PORTS)
        dropped = np.flatnonzero(reason)          # usually few: counted apart from the rx pass
        drops = np.bincount(in_port[dropped] * width + reason[dropped], minlength=len(rx) * width).reshape(-1, width)
        flows = np.bincount(in_port * flow_width + dest + 1, minlength=len(rx) * flow_width).reshape(-1, flow_width)
        self.add_counts(rx, drops, flows)

    def counters(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Zeroed counters for any port (0..31) as :meth:`add_counts` takes them."""
        return (np.zeros(MAX_PORTS, np.int64), np.zeros((MAX_PORTS, len(self.reasons) + 1), np.int64),
                np.zeros((MAX_PORTS, MAX_PORTS + 1), np.int64))

    def add_counts(self, rx: np.ndarray, drops: np.ndarray, flows: np.ndarray) -> None:
        """Add counts by RX port: ``rx``, ``drops`` by reason code, ``flows`` by TX port + 1."""
        for port in self.rx_ports:
            self._rx[port] += int(rx[port])
            self._drops[port] += drops[port]
            self._flows[port] += flows[port]

    @property
    def _out(self) -> dict[int, int]:
        """Packets sent per TX port, from any RX port."""
        sent = sum(self._flows.values(), np.zeros(MAX_PORTS + 1, np.int64))
        return {port: int(sent[port + 1]) for port in self.tx_ports}

    def empty_like(self) -> "RunStats":
        """Counters for another range of the same run (a ``--jobs`` worker)."""
        empty = RunStats(self.rx_ports, self.tx_ports, self.app_reasons)
        empty.hits = self.hits.empty_like() if self.hits is not None else None
        return empty

    def code(self, reason: str) -> int:
        return self.reasons.index(reason) + 1

    def count_queues(self, received: np.ndarray) -> None:
        """Count received packets per RX queue (``received``: by the queue's place in the
        polling order)."""
        self.queue_rx = _add_counts(self.queue_rx, received.tolist())

    def merge(self, other: "RunStats") -> None:
        """Add the counters of a run over another range of rounds (a ``--jobs`` worker)."""
        self.queue_rx = _add_counts(self.queue_rx, other.queue_rx)
        for port, n in other._rx.items():
            self._rx[port] += n
            self._drops[port] += other._drops[port]
            self._flows[port] += other._flows[port]
        for stage, seconds in other.stage_seconds.items():
            self.add_stage_time(stage, seconds)
        for what, seconds in other.setup_seconds.items():
            self.add_setup_time(what, seconds)
        for port, n in other.cut_short.items():
            self.cut_short[port] = self.cut_short.get(port, 0) + n
        self.warnings.extend(other.warnings)
        self.input_losses.extend(other.input_losses)
        self.traced += other.traced
        if other.hits is not None:
            self.hits.merge(other.hits)

    def rx_errors(self, port: int, packets: int) -> None:
        """``packets`` of port ``port``'s input that libpcap failed to read: received
        (they are in the capture) and dropped as ``rx_error``."""
        self.count(np.full(packets, port, np.int64), np.full(packets, self.code("rx_error"), np.uint8),
                   np.full(packets, -1, np.int64))

    def note_conveniences(self, lines: list[str]) -> None:
        """Where the inputs were read beyond what libpcap (so real DPDK) reads: each line
        is a warning, and stats.json lists them — these outputs are not what real l3fwd
        transmits."""
        self.conveniences = list(lines)
        self.warnings.extend(lines)

    def input_cut_short(self, port: int, warning: str) -> None:
        """Port ``port``'s input ends inside a record: warn once, count the lost record
        (it was never received, so it is not in ``rx``)."""
        self.cut_short[port] = self.cut_short.get(port, 0) + 1
        self.warnings.append(warning)
        self.input_losses.append(warning)

    def _lcores_view(self, total_rx: int) -> dict:
        """Per lcore its share of the received packets; ``imbalance``: the busiest
        lcore's rx over the mean (1.0: perfectly even)."""
        view = {str(lcore): {**entry, "share": entry["rx"] / total_rx if total_rx else 0.0}
                for lcore, entry in sorted(self.lcores.items())}
        mean = total_rx / len(self.lcores)
        return {"per_lcore": view, "imbalance": max(e["rx"] for e in self.lcores.values()) / mean if mean else 0.0}

    def add_stage_time(self, stage: str, seconds: float) -> None:
        """Time a per-packet stage took over the whole run."""
        self.stage_seconds[stage] = self.stage_seconds.get(stage, 0.0) + seconds

    def add_setup_time(self, what: str, seconds: float) -> None:
        """A one-time cost (``tables``: parse the rule files and build the tables), kept
        apart from the stages."""
        self.setup_seconds[what] = self.setup_seconds.get(what, 0.0) + seconds

    def to_dict(self) -> dict:
        ports, out = {}, self._out
        for port in sorted(set(self.rx_ports) | set(self.tx_ports)):
            drops = self._drops.get(port)
            rx = self._rx.get(port, 0)
            dropped = int(drops[1:].sum()) if drops is not None else 0
            flows = self._flows.get(port)
            entry = {"rx": rx, "tx": rx - dropped, "dropped": dropped, "out": out.get(port, 0),
                     "drops": {} if drops is None else
                     {name: int(drops[i + 1]) for i, name in enumerate(self.reasons) if drops[i + 1]},
                     "to": {} if flows is None else
                     {str(tx): int(flows[tx + 1]) for tx in range(MAX_PORTS) if flows[tx + 1]}}
            if self.tx_model is not None and port in self.tx_model.tx_bursts:
                entry["tx_model"] = {"tx_burst_calls": self.tx_model.tx_bursts[port],
                                     "direct_pkts": self.tx_model.direct[port],
                                     "buffered_pkts": self.tx_model.buffered[port],
                                     "send_packetsx4_calls": self.tx_model.runs[port]}
            ports[str(port)] = entry
        total_rx = sum(self._rx.values())
        drops = {name: int(sum(d[i + 1] for d in self._drops.values())) for i, name in enumerate(self.reasons)}
        dropped = sum(drops.values())
        totals = {"rx": total_rx, "tx": sum(out.values()), "dropped": dropped}
        # Conservation: every received packet was transmitted or dropped with a reason.
        assert totals["rx"] == totals["tx"] + totals["dropped"], totals
        assert all(p["rx"] == p["tx"] + p["dropped"] == sum(p["to"].values()) + p["dropped"]
                   for p in ports.values()), ports
        per_packet = {stage: (sec / total_rx * 1e9 if total_rx else 0.0)
                      for stage, sec in self.stage_seconds.items()}
        result = {
            "options": self.options,
            "ports": ports,
            "totals": totals,
            "drops": drops,
            "stages_ns_per_packet": per_packet,
            "stages_ms": {stage: sec * 1e3 for stage, sec in self.stage_seconds.items()},
            "setup_ms": {what: sec * 1e3 for what, sec in self.setup_seconds.items()},
            "elapsed_seconds": self.elapsed,
            "mpps": total_rx / self.elapsed / 1e6 if self.elapsed else 0.0,
            "records_cut_short": {str(port): n for port, n in sorted(self.cut_short.items())},
            "input_losses": self.input_losses,
            **({"lcores": self._lcores_view(total_rx)} if len(self.lcores) > 1 else {}),
            "trace": self.trace,
            "warnings": self.warnings,
            "conveniences": self.conveniences,
        }
        if self.rules is not None:
            result["rules"] = self.rules
            result["rules_never_hit"] = sum(1 for r in self.rules if r["installed"] and not r["packets"])
            result["rules_not_installed"] = {str(port): n for port, n in sorted(self.rules_not_installed.items())}
        return result


def rules_summary(rules: list[dict]) -> str:
    """``rules: 812 of 1,000 installed lines never hit (lpm4 812/900, lpm6 0/100); 24 lines
    not installed``: installed lines that decided no packet, of all installed lines, per
    table (tables in file order); lines not installed (a route to a port outside the
    portmask, EM's other family) counted apart. ``run``'s last line and ``rules hits``'."""
    tables: dict[str, list[int]] = {}
    for rule in rules:
        if rule["installed"]:
            counts = tables.setdefault(rule["table"], [0, 0])
            counts[0] += not rule["packets"]
            counts[1] += 1
    never, total = sum(c[0] for c in tables.values()), sum(c[1] for c in tables.values())
    per_table = ", ".join(f"{table} {c[0]:,}/{c[1]:,}" for table, c in tables.items())
    missing = sum(1 for rule in rules if not rule["installed"])
    return (f"rules: {never:,} of {total:,} installed lines never hit" + (f" ({per_table})" if per_table else "")
            + (f"; {missing:,} line{'s' * (missing != 1)} not installed" if missing else ""))


def format_table(stats: dict) -> str:
    """The terminal view of ``stats.json``."""
    lines = [f"{'port':>4} {'rx':>10} {'tx':>10} {'dropped':>10} {'out':>10} {'tx_bursts':>10}  drops"]
    for port, p in stats["ports"].items():
        bursts = p.get("tx_model", {}).get("tx_burst_calls", "")
        reasons = ", ".join(f"{k}={v}" for k, v in p["drops"].items())
        lines.append(f"{port:>4} {p['rx']:>10} {p['tx']:>10} {p['dropped']:>10} {p['out']:>10} {bursts:>10}  {reasons}")
    t = stats["totals"]
    lines.append(f"{'all':>4} {t['rx']:>10} {t['tx']:>10} {t['dropped']:>10} {t['tx']:>10}")
    if "lcores" in stats:
        for lcore, entry in stats["lcores"]["per_lcore"].items():
            queues = " ".join(f"{p}.{q}" for p, q in entry["rx_queues"])
            lines.append(f"lcore {lcore:>3}: rx {entry['rx']:>10} ({entry['share']:6.1%})  tx {entry['tx']:>10}  "
                         f"TX queue {entry['tx_queue']}  RX queues {queues}")
        lines.append(f"imbalance (busiest lcore's rx / mean): {stats['lcores']['imbalance']:.2f}")
    if stats["stages_ms"]:
        lines.extend(_stage_table(stats))
    setup = ", ".join(f"{SETUP_NAMES.get(k, k)} {format_duration(ms / 1e3)}" for k, ms in stats["setup_ms"].items())
    lines.append(f"{t['rx']} packets in {format_duration(stats['elapsed_seconds'])} = "
                 f"{format_rate(t['rx'], stats['elapsed_seconds'])}" + (f" (one-time: {setup})" if setup else ""))
    if stats.get("trace"):
        trace = stats["trace"]
        lines.append(f"traced {trace['packets']} packets ({trace['limit']}) into {trace['file']}")
    if stats.get("rules") is not None:
        lines.append(rules_summary(stats["rules"]))
    lines.extend(f"warning: {w}" for w in stats["warnings"])
    return "\n".join(lines)


def _add_counts(a: list[int], b: list[int]) -> list[int]:
    """Element-wise sum of two count lists; an empty one counts as zeros."""
    return [x + y for x, y in zip(a, b)] if a and b else list(a or b)


SETUP_NAMES = {"tables": "route tables"}


def _stage_table(stats: dict) -> list[str]:
    """Per stage: its total over the run and its cost per packet, in columns."""
    names = list(stats["stages_ms"])
    widths = [max(len(n), 9) for n in names]
    total = [format_duration(stats["stages_ms"][n] / 1e3) for n in names]
    per_packet = [format_duration(stats["stages_ns_per_packet"][n] / 1e9) for n in names]
    return [f"{row:<12}" + "  ".join(f"{v:>{w}}" for v, w in zip(values, widths))
            for row, values in (("stage", names), ("total", total), ("per packet", per_packet))]


def _with_unit(value: float, units: tuple[tuple[str, float], ...]) -> str:
    """``value`` to three significant digits (more above 999) in the largest unit it
    reaches: ``units`` are (name, scale) from the largest down."""
    value = float(f"{value:.3g}")
    for unit, scale in units:
        if value >= scale or scale == units[-1][1]:
            scaled = value / scale
            decimals = max(0, 2 - math.floor(math.log10(scaled))) if scaled else 0
            return f"{scaled:.{decimals}f} {unit}"


def format_duration(seconds: float) -> str:
    """``1.23 s``, ``45.6 ms``, ``789 µs``, ``12.0 ns``."""
    return _with_unit(seconds, (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)))


def format_rate(packets: int, seconds: float) -> str:
    """Packets per second with a sensible unit: ``27.5 kpps``, ``6.03 Mpps``."""
    return _with_unit(packets / seconds, (("Mpps", 1e6), ("kpps", 1e3), ("pps", 1.0))) if seconds else "- pps"


def write_json_atomic(path: Path, data: dict) -> None:
    with AtomicFile(path) as out:
        out.file.write(json.dumps(data, indent=2).encode() + b"\n")
