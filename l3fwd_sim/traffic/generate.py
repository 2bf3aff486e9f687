"""``generate``: write ``DIR/port<N>.pcap`` per input port from a pattern or a stream file,
so that ``l3fwd-sim run DIR -o OUT`` (or TRex, Pktgen, tcpreplay) can replay them::

    from l3fwd_sim.traffic.generate import GenerateOptions, generate
    summary = generate(GenerateOptions(outdir="gen", pattern="IPV4-4STREAMSX8", count=1024))
    summary = generate(GenerateOptions(outdir="gen", streams="flows.toml"))

Data flows one way: pattern or stream file -> ``Traffic`` (streams per port, streams.py)
-> per port the interleaving of the streams (which stream, which of its packets, at each
position) -> per chunk of positions, each stream's rows stamped by numpy (stamp.py) ->
``PcapWriter`` (atomic: temp file renamed on commit).

Sizes are given on the wire (64 = the Ethernet minimum, FCS included); a pcap frame is
4 bytes shorter (60), as a capture on a NIC that strips the FCS shows it and as TRex and
tcpreplay expect (the NIC appends the FCS when it sends). Timestamps start at
``START_NS`` and are spaced 1/rate apart; the file uses nanosecond timestamps when
1/rate is not a whole number of microseconds.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..capture.pcap import PcapWriter
from ..capture.records import HEAD_BYTES
from ..errors import SimError
from .field_engine import FCS_BYTES
from .patterns import PatternOptions, pattern_traffic
from .stamp import StreamRenderer
from .streams import DEFAULT_RATE, PortTraffic, Traffic, load_stream_file

START_NS = 1_700_000_000 * 1_000_000_000    # 2023-11-14 22:13:20 UTC: fixed, so output is reproducible
_PORT_FILE = re.compile(r"port(\d+)\.pcap")
# purposes of the seeded generators, so each random choice has its own stream of numbers
_ORDER, _PORT_SIZE, _STREAM_SIZE, _FIELD = 1, 2, 3, 4


@dataclass
class GenerateOptions:
    """Options of ``l3fwd-sim generate``: either ``pattern`` or ``streams`` (a TOML file)."""
    outdir: Path
    pattern: str | None = None
    streams: Path | None = None
    ports: int = 4                       # pattern only
    count: int = 1000                    # packets per port, pattern only
    size: str = "64"                     # on-wire: 64 | A-B | imix, pattern only
    proto: str = "udp"                   # pattern only
    port_map: str | None = None          # --map, CONT-BURST and malformed
    rule_ipv4: Path | None = None
    rule_ipv6: Path | None = None
    rate: float | None = None            # packets per second per port (default 1e6)
    seed: int | None = None              # default 1 (or the stream file's)
    progress: Callable[[int, int], None] | None = None   # called with (packets written, total)
    chunk_packets: int = 65536           # a speed knob: never changes the output


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([seed, *keys])


def load_traffic(opt: GenerateOptions) -> Traffic:
    """The per-port streams the options describe."""
    if (opt.pattern is None) == (opt.streams is None):
        raise SimError("give a PATTERN or --streams FILE (one of them)")
    if opt.seed is not None and opt.seed < 0:
        raise SimError(f"--seed {opt.seed}: must be >= 0")
    if opt.rate is not None and not opt.rate > 0:
        raise SimError(f"--rate {opt.rate}: must be a positive number of packets per second")
    if opt.streams is not None:
        return load_stream_file(opt.streams, opt.seed, opt.rate)
    pattern = PatternOptions(opt.pattern, opt.ports, opt.count, opt.size, opt.proto, opt.port_map,
                             opt.rule_ipv4, opt.rule_ipv6)
    seed = opt.seed if opt.seed is not None else 1
    return pattern_traffic(pattern, seed, opt.rate if opt.rate is not None else DEFAULT_RATE)


def interleave(counts: list[int], order: str, group: int, rng: np.random.Generator | None = None):
    """(stream, index within the stream) of every position of a port, for ``sequence``,
    ``round-robin`` (``group`` packets of each stream in turn; exhausted streams drop
    out) or ``random`` (a seeded shuffle of all the packets)."""
    counts_arr = np.asarray(counts, np.int64)
    total = int(counts_arr.sum())
    starts = np.concatenate([[0], np.cumsum(counts_arr)[:-1]])
    stream_of = np.repeat(np.arange(len(counts), dtype=np.int32), counts_arr)
    index = np.arange(total, dtype=np.int64) - np.repeat(starts, counts_arr)
    if order == "sequence" or len(counts) == 1:
        return stream_of, index
    if order == "round-robin":
        turn = (index // group) * len(counts) + stream_of
        by_turn = np.argsort(turn, kind="stable")
        return stream_of[by_turn], index[by_turn]
    if order == "random":
        stream_of = stream_of[rng.permutation(total)]
        by_stream = np.argsort(stream_of, kind="stable")
        index = np.empty(total, np.int64)
        index[by_stream] = np.arange(total, dtype=np.int64) - np.repeat(starts, counts_arr)
        return stream_of, index
    raise SimError(f"unknown order {order!r}")


@dataclass
class _StreamState:
    """A stream's per-packet data on one port, computed once before the chunks."""
    renderer: StreamRenderer
    frame_len: np.ndarray                 # by index within the stream
    fields: list                          # [(slot, base, offsets by index)]
    constant: bool                        # every packet the same bytes


def _stream_states(port: int, pt: PortTraffic, stream_of: np.ndarray, seed: int,
                   warnings: list[str]) -> list[_StreamState]:
    port_wire = pt.size.wire_sizes(len(stream_of), _rng(seed, port, _PORT_SIZE)) if pt.size else None
    states = []
    for s, stream in enumerate(pt.streams):
        if port_wire is not None:
            wire = port_wire[stream_of == s] if len(pt.streams) > 1 else port_wire
        else:
            wire = stream.size.wire_sizes(stream.count, _rng(seed, port, _STREAM_SIZE, s))
        header = len(stream.template.header)
        raised = int((wire - FCS_BYTES < header).sum())
        if raised:
            note = (f"{stream.template.layer_names}: sizes below {header + FCS_BYTES} bytes on the wire are "
                    f"raised to {header + FCS_BYTES} (its headers take {header} bytes)")
            if note not in warnings:
                warnings.append(note)
        frame_len = np.maximum(wire - FCS_BYTES, header)
        renderer = StreamRenderer(stream.template, int(frame_len.max()) if len(frame_len) else header)
        fields = []
        for v, (name, var) in enumerate(stream.fields):
            offsets = var.offsets(stream.count, _rng(seed, port, _FIELD, s, v))
            fields.append((stream.template.slots[name], var.min, offsets))
        constant = not fields and (len(frame_len) == 0 or (frame_len == frame_len[0]).all())
        states.append(_StreamState(renderer, frame_len, fields, bool(constant)))
    return states


def _render(state: _StreamState, index: np.ndarray):
    """(rows, frame lengths, tails of the long rows) of the stream's packets ``index``."""
    frame_len = state.frame_len[index]
    r = state.renderer
    if state.constant:
        one = r.render(frame_len[:1], {})
        rows = np.broadcast_to(one, (len(index), one.shape[1]))
        tails = r.tails(one, frame_len[:1]) * len(index)
        return rows, frame_len, tails
    fields = {slot: (base, offsets[index]) for slot, base, offsets in state.fields}
    rows = r.render(frame_len, fields)
    return rows, frame_len, r.tails(rows, frame_len)


def _write_port(writer: PcapWriter, stream_of, index, states, ts_ns, chunk: int, progress) -> int:
    """Write one port's packets in chunks; returns the captured bytes written."""
    total_bytes = 0
    for a in range(0, len(stream_of), chunk):
        b = min(len(stream_of), a + chunk)
        which, idx = stream_of[a:b], index[a:b]
        present = np.unique(which) if len(states) > 1 else [0]
        if len(present) == 1:
            heads, caplen, tails = _render(states[int(present[0])], idx)
            heads = heads[:, :HEAD_BYTES]
        else:
            heads = np.empty((b - a, HEAD_BYTES), np.uint8)
            caplen = np.empty(b - a, np.int64)
            long_at, long_tails = [], []
            for s in present.tolist():
                rows_at = np.flatnonzero(which == s)
                rows, lengths, tails = _render(states[s], idx[rows_at])
                heads[rows_at] = rows[:, :HEAD_BYTES]
                caplen[rows_at] = lengths
                if tails:
                    long_at.append(rows_at[lengths > HEAD_BYTES])
                    long_tails.extend(tails)
            tails = long_tails
            if len(long_at) > 1:
                by_position = np.argsort(np.concatenate(long_at), kind="stable")
                tails = [long_tails[i] for i in by_position.tolist()]
        writer.write(heads, caplen, caplen, ts_ns[a:b], tails or None)
        total_bytes += int(caplen.sum())
        if progress:
            progress(b)
    return total_bytes


def _check_outdir(outdir: Path, ports: list[int]) -> None:
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SimError(f"{outdir}: cannot create output directory: {err.strerror}") from None
    stale = sorted(p.name for p in outdir.iterdir()
                   if (m := _PORT_FILE.fullmatch(p.name)) and int(m.group(1)) not in ports)
    if stale:
        raise SimError(f"{outdir}: already holds {', '.join(stale)}, which this run would not replace and "
                       "'l3fwd-sim run' would read as input; remove it or choose another -o")


def timestamps(count: int, rate: float, start_ns: int = START_NS) -> np.ndarray:
    """Packet i at ``start + i / rate`` seconds, in integer nanoseconds."""
    return start_ns + np.rint(np.arange(count, dtype=np.float64) * (1e9 / rate)).astype(np.int64)


def write_traffic(traffic: Traffic, outdir: Path, progress=None, chunk_packets: int = 65536) -> dict:
    """Write ``outdir/port<N>.pcap`` for every port of ``traffic``; return a summary."""
    started = time.perf_counter()
    outdir = Path(outdir)
    ports = sorted(traffic.ports)
    _check_outdir(outdir, ports)
    period_ns = 1e9 / traffic.rate
    nanosecond = abs(period_ns / 1000 - round(period_ns / 1000)) > 1e-9
    total = sum(pt.count for pt in traffic.ports.values())
    done = 0
    summary = {"ports": {}, "rate_pps": traffic.rate, "seed": traffic.seed, "nanosecond_timestamps": nanosecond}
    writers = []
    try:
        for port in ports:
            pt = traffic.ports[port]
            stream_of, index = interleave([s.count for s in pt.streams], pt.order, pt.group,
                                          _rng(traffic.seed, port, _ORDER))
            states = _stream_states(port, pt, stream_of, traffic.seed, traffic.warnings)
            writer = PcapWriter(outdir / f"port{port}.pcap", nanosecond)
            writers.append(writer)
            report = None if progress is None else (lambda n, base=done: progress(base + n, total))
            nbytes = _write_port(writer, stream_of, index, states, timestamps(len(stream_of), traffic.rate),
                                 chunk_packets, report)
            done += len(stream_of)
            summary["ports"][str(port)] = {"file": str(writer.path), "packets": len(stream_of), "bytes": nbytes,
                                           "streams": {s.name: s.count for s in pt.streams}}
        for writer in writers:
            writer.commit()
    except BaseException:
        for writer in writers:
            writer.abort()
        raise
    elapsed = time.perf_counter() - started
    summary.update(packets=total, elapsed_seconds=elapsed, mpps=total / elapsed / 1e6 if elapsed else 0.0,
                   warnings=list(traffic.warnings))
    return summary


def generate(opt: GenerateOptions) -> dict:
    """Generate the pcaps ``opt`` describes; return a summary (per port: file, packets,
    bytes, streams; totals, elapsed seconds, Mpps, warnings)."""
    started = time.perf_counter()
    traffic = load_traffic(opt)
    summary = write_traffic(traffic, opt.outdir, opt.progress, opt.chunk_packets)
    summary["elapsed_seconds"] = time.perf_counter() - started
    summary["mpps"] = summary["packets"] / summary["elapsed_seconds"] / 1e6
    return summary
