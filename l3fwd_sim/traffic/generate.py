"""``generate``: write ``DIR/port<N>.pcap`` per input port from a pattern or a stream file,
so that ``l3fwd-sim run DIR -o OUT`` (or TRex, Pktgen, tcpreplay) can replay them::

    from l3fwd_sim.traffic.generate import GenerateOptions, generate
    summary = generate(GenerateOptions(outdir="gen", pattern="IPV4-4STREAMSX8", count=1024))
    summary = generate(GenerateOptions(outdir="gen", streams="flows.toml"))

Data flows one way: pattern or stream file -> ``Traffic`` (streams per port, streams.py)
-> per port, a chunk of positions at a time: which stream sends at each (interleave.py),
each stream's next packets' sizes and field values drawn, their rows stamped by numpy
(stamp.py) -> ``PcapWriter``, or ``PcapngWriter`` with ``--output-format pcapng``
(atomic: temp file renamed on commit). Nothing is held for a whole port, so memory stays bounded by the
chunk size and a count is limited by the disk (checked before writing: ``_check_fits``).

Sizes are given on the wire (64 = the Ethernet minimum, FCS included); a pcap frame is
4 bytes shorter (60), as a capture on a NIC that strips the FCS shows it and as TRex and
tcpreplay expect (the NIC appends the FCS when it sends). Timestamps start at
``START_NS`` and are spaced 1/rate apart; the file uses nanosecond timestamps when
1/rate is not a whole number of microseconds.
"""
from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from .. import hold
from ..capture.location import join
from ..capture.outdir import OutputDir
from ..capture.pcap import PcapWriter
from ..capture.pcapng_writer import PcapngWriter
from ..capture.writers import open_writer, output_format
from ..capture.records import HEAD_BYTES, PCAP_SECONDS
from ..errors import SimError
from ..numbers import check_range
from .field_engine import FCS_BYTES, MIN_WIRE_SIZE
from .interleave import stream_chunks
from .patterns import PatternOptions, pattern_traffic
from .stamp import StreamRenderer
from .streams import DEFAULT_RATE, MAX_COUNT, MAX_SEED, PortTraffic, Traffic, check_rate, load_stream_file

START_NS = 1_700_000_000 * 1_000_000_000    # 2023-11-14 22:13:20 UTC: fixed, so output is reproducible
# purposes of the seeded generators, so each random choice has its own stream of numbers
_ORDER, _PORT_SIZE, _STREAM_SIZE, _FIELD = 1, 2, 3, 4
# With a progress bar, the packets are written in chunks of about 1/_PROGRESS_STEPS of them
# (never larger than asked, nor smaller than _PROGRESS_CHUNK: below that the per-chunk numpy
# calls start to show), so that the bar moves in steps of about 1 % however few chunks the
# default size would make (2 ports of 60,000 packets: two, 50 % each).
_PROGRESS_STEPS, _PROGRESS_CHUNK = 100, 8192
# the least a file takes: its header (pcapng's section and interface blocks are larger, so
# this stays a lower bound) and per packet a 16-byte record header and a 60-byte frame
_FILE_HEADER, _MIN_RECORD = 24, 16 + MIN_WIRE_SIZE - FCS_BYTES


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
    output_format: str = "auto"          # pcap or pcapng (auto: pcap; there are no inputs to follow)


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([seed, *keys])


def load_traffic(opt: GenerateOptions) -> Traffic:
    """The per-port streams the options describe."""
    if (opt.pattern is None) == (opt.streams is None):
        raise SimError("give a PATTERN or --streams FILE (one of them)")
    if opt.seed is not None:
        check_range(opt.seed, "--seed", 0, MAX_SEED)
    rate = opt.rate if opt.rate is None else check_rate(opt.rate, "--rate")
    if opt.streams is not None:
        return load_stream_file(opt.streams, opt.seed, rate)
    pattern = PatternOptions(opt.pattern, opt.ports, opt.count, opt.size, opt.proto, opt.port_map,
                             opt.rule_ipv4, opt.rule_ipv6)
    seed = opt.seed if opt.seed is not None else 1
    traffic = pattern_traffic(pattern, seed, rate if rate is not None else DEFAULT_RATE)
    traffic.rate_from = "--rate" if rate is not None else "the default rate"
    return traffic


class _Draws:
    """Per-packet values of one stream (or of one port's positions), handed out in packet
    order a chunk at a time: ``draw(n, rng, start)`` is a SizeSpec's ``wire_sizes`` or a
    FieldVar's ``offsets``. Random values come from ``rng`` in turn, so chunks of any size
    give the same values as one call."""

    def __init__(self, draw, rng: np.random.Generator):
        self.draw, self.rng, self.done = draw, rng, 0

    def take(self, n: int) -> np.ndarray:
        values = self.draw(n, self.rng, self.done)
        self.done += n
        return values


@dataclass
class _StreamState:
    """What a stream's packets on one port need, before any is drawn."""
    renderer: StreamRenderer
    header: int                           # bytes of headers: no frame is shorter
    layer_names: str
    sizes: _Draws | None                  # None: the port's sizes by position
    fields: list                          # [(slot, base, _Draws of offsets)]
    variants: list                        # [(slot, each variant's value: _rows of its (K, width) bytes)]


def _stream_state(port: int, s: int, stream, port_size, seed: int) -> _StreamState:
    """``s`` numbers the stream among the port's streams with every variant counted as a
    stream of its own, so its random numbers are those of the streams it stands for."""
    header = len(stream.template.header)
    size = port_size or stream.size
    renderer = StreamRenderer(stream.template, max(size.max_wire - FCS_BYTES, header))
    sizes = None if port_size else _Draws(stream.size.wire_sizes, _rng(seed, port, _STREAM_SIZE, s))
    fields = [(stream.template.slots[name], var.min, _Draws(var.offsets, _rng(seed, port, _FIELD, s, v)))
              for v, (name, var) in enumerate(stream.fields)]
    variants = [(stream.template.slots[name], _rows(values))
                for name, values in (stream.variants.values.items() if stream.variants else ())]
    return _StreamState(renderer, header, stream.template.layer_names, sizes, fields, variants)


def _rows(values: np.ndarray) -> np.ndarray:
    """(K, width) bytes as an array whose ``take(i, axis=0)`` gathers rows fast: one
    integer per row (width 1, 2, 4 or 8), or rows of 8-byte words (16: an IPv6 address);
    numpy's fancy indexing of narrow uint8 rows is many times slower."""
    values = np.ascontiguousarray(values, np.uint8)
    width = values.shape[1]
    if width in (1, 2, 4, 8):
        return values.view(f"u{width}").reshape(len(values))
    return values.view("u8") if width % 8 == 0 else values


def _gather(rows: np.ndarray, at: np.ndarray, width: int) -> np.ndarray:
    """Rows ``at`` of a :func:`_rows` array, as (n, width) bytes."""
    return rows.take(at, axis=0).view(np.uint8).reshape(len(at), width)


def _render(state: _StreamState, wire: np.ndarray | None, n: int, warnings: list[str],
            variant: np.ndarray | None = None):
    """(rows, frame lengths, tails of the long rows) of the stream's next ``n`` packets;
    ``wire``: their sizes on the wire when the port gives them; ``variant``: the variant
    each packet belongs to (streams with variants)."""
    if wire is None:
        wire = state.sizes.take(n)
    if (wire - FCS_BYTES < state.header).any():
        note = (f"{state.layer_names}: sizes below {state.header + FCS_BYTES} bytes on the wire are "
                f"raised to {state.header + FCS_BYTES} (its headers take {state.header} bytes)")
        if note not in warnings:
            warnings.append(note)
    frame_len = np.maximum(wire - FCS_BYTES, state.header)
    r = state.renderer
    if not state.fields and not state.variants and (frame_len == frame_len[0]).all():   # the same bytes n times
        one = r.render(frame_len[:1], {})
        return np.broadcast_to(one, (n, one.shape[1])), frame_len, r.tails(one, frame_len[:1]) * n
    raw = {slot: _gather(values, variant, slot.width) for slot, values in state.variants}
    rows = r.render(frame_len, {slot: (base, draws.take(n)) for slot, base, draws in state.fields}, raw)
    return rows, frame_len, r.tails(rows, frame_len)


def _write_port(writer: PcapWriter | PcapngWriter, port: int, pt: PortTraffic, traffic: Traffic, chunk: int,
                progress) -> int:
    """Write one port's packets a chunk at a time, so memory does not grow with the
    count; returns the captured bytes written. The order interleaves streams with every
    variant (``Variants``) counted as a stream of its own; a chunk's packets are then
    rendered stream by stream, a stream's variants together."""
    seed = traffic.seed
    sizes = np.array([len(s.variants) if s.variants is not None else 1 for s in pt.streams], np.int64)
    first = np.cumsum(sizes) - sizes                  # each stream's first number in the interleave
    counts = np.concatenate([s.variants.counts if s.variants is not None else [s.count] for s in pt.streams]
                            or [np.zeros(0, np.int64)]).astype(np.int64)
    owner = np.repeat(np.arange(len(pt.streams), dtype=np.int32), sizes) if len(counts) > len(sizes) else None
    states = [_stream_state(port, int(first[s]), stream, pt.size, seed) for s, stream in enumerate(pt.streams)]
    port_sizes = _Draws(pt.size.wire_sizes, _rng(seed, port, _PORT_SIZE)) if pt.size else None
    total_bytes = done = 0
    for which in stream_chunks(counts, pt.order, pt.group, chunk, _rng(seed, port, _ORDER)):
        n = len(which)
        wire = port_sizes.take(n) if port_sizes else None
        stream_of = owner[which] if owner is not None else which
        present = np.flatnonzero(np.bincount(stream_of, minlength=len(states))) if len(states) > 1 else [0]
        if len(present) == 1:
            s = int(present[0])
            heads, caplen, tails = _render(states[s], wire, n, traffic.warnings,
                                           which - first[s] if states[s].variants else None)
            heads = heads[:, :HEAD_BYTES]
        else:
            heads = np.empty((n, HEAD_BYTES), np.uint8)
            caplen = np.empty(n, np.int64)
            long_at, long_tails = [], []
            for s in present.tolist():
                rows_at = np.flatnonzero(stream_of == s)
                rows, lengths, tails = _render(states[s], None if wire is None else wire[rows_at], len(rows_at),
                                               traffic.warnings,
                                               which[rows_at] - first[s] if states[s].variants else None)
                heads[rows_at] = rows[:, :HEAD_BYTES]
                caplen[rows_at] = lengths
                if tails:
                    long_at.append(rows_at[lengths > HEAD_BYTES])
                    long_tails.extend(tails)
            tails = long_tails
            if len(long_at) > 1:
                by_position = np.argsort(np.concatenate(long_at), kind="stable")
                tails = [long_tails[i] for i in by_position.tolist()]
        writer.write(heads, caplen, caplen, timestamps(done, n, traffic.rate), tails or None)
        total_bytes += int(caplen.sum())
        done += n
        if progress:
            progress(done)
        hold.point()
    return total_bytes


def timestamps(first: int, count: int, rate: float, start_ns: int = START_NS) -> np.ndarray:
    """Packets first..first+count-1, packet i at ``start + i / rate`` seconds, in integer nanoseconds."""
    return start_ns + np.rint(np.arange(first, first + count, dtype=np.float64) * (1e9 / rate)).astype(np.int64)


def _check_fits(traffic: Traffic, outdir: Path, fmt: str) -> None:
    """Refuse up front what cannot be written, rather than fail hours into the writing:
    a port beyond ``MAX_COUNT`` packets, time stamps past what the format holds, files
    larger than the free space of the output's file system."""
    port, busiest = max(traffic.ports.items(), key=lambda item: item[1].count)
    most = busiest.count
    if most > MAX_COUNT:
        raise SimError(f"{traffic.source}: port {port} sends {most:,} packets, more than {MAX_COUNT:,} (2**48) "
                       "per port")
    limit_ns = PCAP_SECONDS * 10**9 if fmt == "pcap" else (1 << 63)
    if most and START_NS + (most - 1) * 1e9 / traffic.rate >= limit_ns:
        span = (most - 1) / traffic.rate
        where = ("past 2106-02-07, the end of a classic pcap's 32-bit seconds; --output-format pcapng goes "
                 "further" if fmt == "pcap" else "past 2262, the end of 64-bit nanosecond time stamps")
        raise SimError(f"{traffic.rate_from} {traffic.rate:g}: port {port}'s {most:,} packets would span "
                       f"{span:.3g} s, {where}; raise the rate or lower the count")
    need = sum(_FILE_HEADER + pt.count * _MIN_RECORD for pt in traffic.ports.values())
    free = shutil.disk_usage(outdir).free
    if need > free:
        raise SimError(f"{outdir}: the output files need at least {need:,} bytes ({len(traffic.ports)} ports, "
                       f"{_MIN_RECORD} bytes or more per packet), and its file system has {free:,} bytes free")


def write_traffic(traffic: Traffic, outdir: Path, progress=None, chunk_packets: int = 65536,
                  fmt: str = "pcap") -> dict:
    """Write ``outdir/port<N>.pcap`` (``fmt`` pcapng: ``.pcapng``) for every port of
    ``traffic``, as one set that replaces an earlier one (``capture/outdir.py``); return
    a summary."""
    started = time.perf_counter()
    check_range(chunk_packets, "chunk_packets", 1, MAX_COUNT)
    with OutputDir(outdir) as out:
        _check_fits(traffic, out.stage, fmt)        # where the files are written first
        summary = _write_ports(traffic, out.stage, progress, chunk_packets, fmt)
        out.publish()
    for entry in summary["ports"].values():
        entry["file"] = str(join(out.path, entry["file"]))
    elapsed = time.perf_counter() - started
    summary.update(elapsed_seconds=elapsed, mpps=summary["packets"] / elapsed / 1e6 if elapsed else 0.0)
    return summary


def _write_ports(traffic: Traffic, outdir: Path, progress, chunk_packets: int, fmt: str) -> dict:
    ports = sorted(traffic.ports)
    period_ns = 1e9 / traffic.rate
    nanosecond = abs(period_ns / 1000 - round(period_ns / 1000)) > 1e-9
    total = sum(pt.count for pt in traffic.ports.values())
    if progress is not None:
        chunk_packets = min(chunk_packets, max(_PROGRESS_CHUNK, -(-total // _PROGRESS_STEPS)))
    done = 0
    summary = {"ports": {}, "rate_pps": traffic.rate, "seed": traffic.seed, "nanosecond_timestamps": nanosecond}
    writers = []
    try:
        for port in ports:
            pt = traffic.ports[port]
            writer = open_writer(fmt, outdir / f"port{port}.{fmt}", nanosecond, f"port{port}")
            writers.append(writer)
            report = None if progress is None else (lambda n, base=done: progress(base + n, total))
            nbytes = _write_port(writer, port, pt, traffic, chunk_packets, report)
            done += pt.count
            summary["ports"][str(port)] = {"file": writer.path.name, "packets": pt.count, "bytes": nbytes,
                                           "streams": {name: count for s in pt.streams
                                                       for name, count in s.packets_by_name()}}
        for writer in writers:
            writer.commit()
    except BaseException:
        for writer in writers:
            writer.abort()
        raise
    summary.update(packets=total, warnings=list(traffic.warnings))
    return summary


def generate(opt: GenerateOptions) -> dict:
    """Generate the pcaps ``opt`` describes; return a summary (per port: file, packets,
    bytes, streams; totals, elapsed seconds, Mpps, warnings)."""
    started = time.perf_counter()
    fmt = output_format(opt.output_format, ())
    traffic = load_traffic(opt)
    summary = write_traffic(traffic, opt.outdir, opt.progress, opt.chunk_packets, fmt)
    summary["elapsed_seconds"] = time.perf_counter() - started
    summary["mpps"] = summary["packets"] / summary["elapsed_seconds"] / 1e6
    return summary
