"""``compare``: do two sets of pcaps hold the same packets, and if not, exactly where not?

Library entry points (``l3fwd-sim compare A B`` is a thin layer over them)::

    from l3fwd_sim.diff.compare import CompareOptions, compare_paths
    report = compare_paths("out", "golden/expected-01", CompareOptions(ignore=("IP.ttl",)))
    report.equal            # True / False
    report.ports            # [PortReport(port=0, packets_a=.., matched=.., modified=.., ...)]
    report.differences      # the first ``max_diffs`` differences, fields named by scapy
    print(report.format_text()); json.dumps(report.to_dict())

``compare_paths`` takes two pcap files or two directories of ``port<N>.pcap`` (the layout
``run`` writes and the golden directories use); ``compare_dirs``/``compare_files`` are
the two cases. A is the reference: a packet of A that B lacks is *missing*, a packet only
B has is *extra*.

What is compared, per port, modelled on the peers in ../shared/reference/peers.md
(p4c STF expectations and PTF masks, TRex ``compare_caps``, pcap_diff, Wireshark's
Compare): each packet's captured bytes and wire length; timestamps only with
``timestamps`` (DPDK's net_pcap stamps transmit time, so real outputs never match a
simulation's input-time stamps), then within ``ts_tolerance``; fields named in
``ignore`` are masked out first (fields.py says what a name covers). File headers
(µs or ns precision, snaplen) are not compared; a ns and a µs stamp compare as times.
Frames are compared as stored, whatever their link type (PPP, Cisco HDLC, 802.11, ...):
nothing is converted to Ethernet, as ``run`` converts raw IP or PPP, and nothing refused.
Two captures of different link types hold different packets even where the bytes agree:
every such pair is *modified* (field ``linktype``) and the port has a note.

How packets are paired (``unordered=False``, the default): each packet becomes a 64-bit
SipHash digest of its (masked) bytes and wire length; ``align.align`` pairs equal
digests along a longest common subsequence, so one inserted or deleted packet is one
*extra* or *missing* packet and all later packets still match (where packets repeat,
unpaired ones are slid along runs of identical frames to face each other). Then:

* a packet of A left unpaired whose exact copy is also left unpaired in B is
  *reordered* (it is there, at another place);
* between two consecutive paired packets, the unpaired packets of A and of B are paired
  in order: each such pair is *modified* (the field-level differences are reported),
  the surplus on one side *missing* or *extra*;
* with ``timestamps``, a paired packet whose stamps differ by more than the tolerance
  is *modified* too (field ``frame.time``).

With ``unordered=True`` each port is a multiset: the k-th copy of a packet in A pairs
with the k-th copy in B wherever they are; leftovers are paired in order as modified,
the surplus missing/extra. For every port: packets_a = matched + reordered + modified +
missing and packets_b = matched + reordered + modified + extra.

Equal captures never reach scapy or the digests: same lengths and one numpy comparison
of all frame bytes (as 64-bit words) settle it. A port file present on one side only is
a difference (all its packets missing or extra), not an error; a file that cannot be
read as a pcap is an error (``SimError``). Each port's two captures are held in memory
(about the size of the files) while that port is compared.
"""
from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from ..capture.linktypes import ETHERNET, link_name
from ..capture.offline import open_offline
from ..capture.reading import Reading
from ..dataplane.inputs import find_inputs
from ..errors import SimError
from .align import align
from .fields import (RECORD_FIELDS, MaskCache, check_field_name, field_differences, fixed_field_masks, layer_stack,
                     summary)

_BATCH = 1 << 18
BY_LAYERS_LIMIT = 10_000              # differing packets dissected for ``by_layers``
_WORD = 8
_LEN_SALT = np.uint64(0x9E3779B97F4A7C15)   # mixes the wire length into a digest


@dataclass
class CompareOptions:
    timestamps: bool = False          # compare record timestamps too
    ts_tolerance: float = 0.0         # with timestamps: |ts_a - ts_b| <= this (seconds) is equal
    ignore: tuple[str, ...] = ()      # field names to mask (fields.py)
    unordered: bool = False           # each port as a multiset
    max_diffs: int = 5                # differences described in detail, over all ports
    by_layers: bool = False           # count the differing packets by kind and layer stack

    def validate(self) -> None:
        if self.max_diffs < 0:
            raise SimError(f"--max-diffs {self.max_diffs}: must be 0 or more")
        if not (math.isfinite(self.ts_tolerance) and self.ts_tolerance >= 0):
            raise SimError(f"--ts-tolerance {self.ts_tolerance}: must be a number of seconds >= 0")
        for name in self.ignore:
            if name == "frame.cap_len":
                raise SimError("--ignore frame.cap_len: frames of different lengths never compare equal")
            check_field_name(name)


# ---------------------------------------------------------------------------------------
# reading: a whole capture as one flat byte array
# ---------------------------------------------------------------------------------------
@dataclass
class Capture:
    """All records of one pcap: frame k is ``data[starts[k]:starts[k] + caplen[k]]``.
    ``data`` is zero-padded to a multiple of 8 bytes (compared as 64-bit words)."""
    path: Path
    data: np.ndarray
    starts: np.ndarray
    caplen: np.ndarray
    wirelen: np.ndarray
    ts_ns: np.ndarray
    linktype: int = ETHERNET          # a pcapng's: its first interface's

    def __len__(self) -> int:
        return len(self.caplen)

    def frame(self, k: int) -> bytes:
        start = int(self.starts[k])
        return self.data[start:start + int(self.caplen[k])].tobytes()


def load_capture(path: str | Path) -> Capture:
    """Read a whole capture, frames as stored (SimError if it is not one, or damaged)."""
    reader = open_offline(path, Reading.AS_STORED)
    try:
        data = np.zeros(Path(path).stat().st_size + _WORD, np.uint8)   # grown if gzip'd
        fill = 0
        caplen, wirelen, ts_ns = [], [], []
        while True:
            batch = reader.read(_BATCH)
            if not len(batch):
                break
            need = fill + int(batch.caplen.sum()) + _WORD
            if need > len(data):
                grown = np.zeros(max(need, 2 * len(data)), np.uint8)
                grown[:fill] = data[:fill]
                data = grown
            fill = _gather(batch, data, fill)
            caplen.append(batch.caplen.copy())
            wirelen.append(batch.wirelen.copy())
            ts_ns.append(batch.ts_ns.copy())
        if reader.truncated_at is not None:
            raise SimError(f"{path}: offset {reader.truncated_at}: the last record is cut short "
                           "(truncated file); compare needs complete captures")
    finally:
        reader.close()

    def cat(parts):
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)

    caplen_all = cat(caplen)
    starts = np.zeros(len(caplen_all), np.int64)
    np.cumsum(caplen_all[:-1], out=starts[1:])
    padded = -(-fill // _WORD) * _WORD
    linktype = ETHERNET if reader.linktype is None else reader.linktype      # None: a pcapng without interfaces
    return Capture(Path(path), data[:padded], starts, caplen_all, cat(wirelen), cat(ts_ns), linktype)


def _gather(batch, out: np.ndarray, fill: int) -> int:
    """Copy the batch's frames (``block[offset:offset + caplen]``) back to back into
    ``out[fill:]``. In a classic pcap the frames of a batch are usually 16 bytes apart
    (the record headers between them): then one strided copy when all frames have one
    length, one boolean selection otherwise; frame by frame for anything else (pcapng)."""
    off, cap = batch.offsets, batch.caplen
    n, total = len(cap), int(cap.sum())
    first, last_end = int(off[0]), int(off[-1] + cap[-1])
    if n > 1 and not np.array_equal(off[1:], off[:-1] + cap[:-1] + 16):
        for start, length in zip(off.tolist(), cap.tolist()):
            out[fill:fill + length] = batch.block[start:start + length]
            fill += length
        return fill
    if (cap == cap[0]).all():
        width = int(cap[0])
        rows = np.ndarray((n, width), np.uint8, batch.block, first, (width + 16, 1))
        out[fill:fill + total].reshape(n, width)[:] = rows
    else:
        keep = np.ones(last_end - first, bool)
        keep[((off[1:] - 16 - first)[:, None] + np.arange(16)).ravel()] = False
        out[fill:fill + total] = batch.block[first:last_end][keep]
    return fill + total


# ---------------------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------------------
@dataclass
class PortReport:
    port: int | None                  # None when two files are compared
    file_a: str | None                # None: no such port file on that side
    file_b: str | None
    packets_a: int = 0
    packets_b: int = 0
    matched: int = 0
    reordered: int = 0
    modified: int = 0
    missing: int = 0
    extra: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def equal(self) -> bool:
        return (self.file_a is not None and self.file_b is not None
                and self.matched == self.packets_a == self.packets_b)


@dataclass
class FieldDiff:
    field: str                        # "IP.ttl", "frame.time", "layers", "bytes[60:64]"
    a: str | None                     # None: absent in A
    b: str | None


@dataclass
class Difference:
    port: int | None
    kind: str                         # modified | missing | extra | reordered
    index_a: int | None               # packet index in A's file, from 0
    index_b: int | None
    fields: list[FieldDiff] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)   # differing byte offsets
    summary_a: str | None = None
    summary_b: str | None = None
    frame_a: bytes | None = None      # kept for the hexdump; not in to_dict()
    frame_b: bytes | None = None
    ignored_offsets: list[int] = field(default_factory=list)
    trace: dict | None = None         # with --explain: the trace lines behind it (explain.py)


@dataclass
class Report:
    a: str
    b: str
    options: CompareOptions
    ports: list[PortReport]
    differences: list[Difference]
    by_layers: list[dict] = field(default_factory=list)   # {"kind", "layers", "packets"}
    by_layers_examined: int = 0       # differing packets dissected for by_layers
    traces: dict | None = None        # with --explain: {"a"/"b": {"path", "lines"}} (explain.py)
    profiles: dict = field(default_factory=dict)   # "a"/"b" -> the DPDK release its stats.json names, where known
    listed: list[Listed] = field(default_factory=list)   # every difference, per port (not in to_dict())
    causes: dict | None = None        # with --explain: the differences by cause (explain.py)
    cause_list: list = field(default_factory=list)   # with --explain: the causes (explain.Cause), as in causes
    cause_ids: dict = field(default_factory=dict)    # with --explain: per port, each listed difference's cause index

    @property
    def equal(self) -> bool:
        return all(p.equal for p in self.ports)

    def totals(self) -> dict:
        keys = ("packets_a", "packets_b", "matched", "reordered", "modified", "missing", "extra")
        return {k: sum(getattr(p, k) for p in self.ports) for k in keys}

    def verdict(self) -> str:
        from .report import verdict
        return verdict(self)

    def format_text(self) -> str:
        from .report import format_report
        return format_report(self)

    def to_dict(self) -> dict:
        from .report import hexdump
        diffs = []
        for d in self.differences:
            item = {k: v for k, v in asdict(d).items()
                    if k not in ("frame_a", "frame_b") and (k != "trace" or v is not None)}
            item["hexdump"] = hexdump(d)
            diffs.append(item)
        out = {"a": self.a, "b": self.b, "equal": self.equal, "verdict": self.verdict(),
               "options": asdict(self.options),
               "ports": [{**asdict(p), "equal": p.equal} for p in self.ports],
               "totals": self.totals(), "differences": diffs}
        if self.options.by_layers:
            out["by_layers"] = self.by_layers
            out["by_layers_examined"] = self.by_layers_examined
        if self.traces is not None:
            out["traces"] = self.traces
        if self.causes is not None:
            out["causes"] = self.causes
        if self.profiles:
            out["profiles"] = self.profiles
        return out


# ---------------------------------------------------------------------------------------
# entry points
# ---------------------------------------------------------------------------------------
def compare_paths(a: str | Path, b: str | Path, options: CompareOptions | None = None,
                  each_port: Callable[[PortDifferences], None] | None = None) -> Report:
    """Two pcap files, or two directories of ``port<N>.pcap``. ``each_port`` is called
    with every difference of each port, in port order, while the port's two captures are
    in memory (``compare --write``, write.py)."""
    a, b = Path(a), Path(b)
    for path in (a, b):
        if not path.exists():
            raise SimError(f"{path}: no such file or directory")
    if a.is_dir() != b.is_dir():
        raise SimError(f"{a if a.is_dir() else b} is a directory but {b if a.is_dir() else a} is not: "
                       "compare two pcap files or two directories of port<N>.pcap")
    return compare_dirs(a, b, options, each_port) if a.is_dir() else compare_files(a, b, options, each_port)


def compare(a: str | Path, b: str | Path, options: CompareOptions | None = None) -> dict:
    """:func:`compare_paths` as a plain dict (what ``l3fwd-sim compare --json`` prints)."""
    return compare_paths(a, b, options).to_dict()


def compare_files(a: str | Path, b: str | Path, options: CompareOptions | None = None,
                  each_port: Callable[[PortDifferences], None] | None = None) -> Report:
    return _compare({None: Path(a)}, {None: Path(b)}, str(a), str(b), options, each_port)


def compare_dirs(a: str | Path, b: str | Path, options: CompareOptions | None = None,
                 each_port: Callable[[PortDifferences], None] | None = None) -> Report:
    """Ports are matched by file name; files other than ``port<N>.pcap`` are ignored. A
    side's ``stats.json`` names the DPDK release profile that made it (``profiles``)."""
    report = _compare(find_inputs([str(a)]), find_inputs([str(b)]), str(a), str(b), options, each_port)
    report.profiles = {side: name for side, path in (("a", a), ("b", b)) if (name := _profile(Path(path)))}
    return report


def _profile(directory: Path) -> str | None:
    """The release a run's ``stats.json`` names (runs before profiles existed: none)."""
    try:
        profile = json.loads((directory / "stats.json").read_text())["options"]["dpdk"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return profile if isinstance(profile, str) else None


def _compare(files_a: dict, files_b: dict, a: str, b: str, options: CompareOptions | None, each_port) -> Report:
    opt = options or CompareOptions()
    opt.validate()
    result = Report(a, b, opt, [], [])
    layers: Counter = Counter()
    for port in sorted(set(files_a) | set(files_b), key=lambda p: -1 if p is None else p):
        budget = opt.max_diffs - len(result.differences)
        report, diffs, counts, listed = _compare_port(port, files_a.get(port), files_b.get(port), opt, budget,
                                                      BY_LAYERS_LIMIT - result.by_layers_examined, each_port)
        result.ports.append(report)
        if len(listed.kinds):
            result.listed.append(listed)
        result.differences.extend(diffs)
        layers.update(counts)
        result.by_layers_examined += sum(counts.values())
    result.by_layers = [{"kind": kind, "layers": stack, "packets": n}
                        for (kind, stack), n in sorted(layers.items(), key=lambda kv: (-kv[1], kv[0]))]
    return result


# ---------------------------------------------------------------------------------------
# one port
# ---------------------------------------------------------------------------------------
@dataclass
class _Side:
    cap: Capture
    keys: np.ndarray                  # data with the ignored fixed-offset fields masked
    covered: dict                     # ignored fixed field -> packets masked vectorised


def _side(cap: Capture, opt: CompareOptions) -> _Side:
    names = [n for n in opt.ignore if n not in RECORD_FIELDS]
    if not names:
        return _Side(cap, cap.data, {})
    keys = cap.data.copy()
    if cap.linktype != ETHERNET:      # the fixed offsets are Ethernet's: scapy places every field
        return _Side(cap, keys, {})
    return _Side(cap, keys, fixed_field_masks(keys, cap.starts, cap.caplen, names))


_NONE = np.zeros(0, np.int64)


@dataclass
class _Events:
    """Every packet of a port by what happened to it (index arrays)."""
    matched: tuple = (_NONE, _NONE)   # (A, B) indices
    modified: tuple = (_NONE, _NONE)  # (A, B) indices
    moved: tuple = (_NONE, _NONE)     # (A, B) indices: reordered
    gone: np.ndarray = field(default_factory=lambda: _NONE)     # A indices: missing
    new: np.ndarray = field(default_factory=lambda: _NONE)      # B indices: extra
    new_at: np.ndarray = field(default_factory=lambda: _NONE)   # A position of each extra, for sorting


def _compare_port(port, path_a, path_b, opt: CompareOptions, budget: int, layer_budget: int, each_port):
    report = PortReport(port, str(path_a) if path_a else None, str(path_b) if path_b else None)
    cap_a = load_capture(path_a) if path_a else None
    cap_b = load_capture(path_b) if path_b else None
    report.packets_a = len(cap_a) if cap_a is not None else 0
    report.packets_b = len(cap_b) if cap_b is not None else 0
    if cap_a is None:
        report.notes.append("port file only in B")
        events = _Events(new=np.arange(len(cap_b)), new_at=np.arange(len(cap_b)))
    elif cap_b is None:
        report.notes.append("port file only in A")
        events = _Events(gone=np.arange(len(cap_a)))
    else:
        if cap_a.linktype != cap_b.linktype:
            report.notes.append(f"link types differ: A {_link(cap_a.linktype)}, B {_link(cap_b.linktype)}")
        events = _classify(cap_a, cap_b, opt, report.notes)
    report.matched, report.modified = len(events.matched[0]), len(events.modified[0])
    report.reordered, report.missing, report.extra = len(events.moved[0]), len(events.gone), len(events.new)
    counts = _layer_counts(cap_a, cap_b, events, layer_budget) if opt.by_layers else Counter()
    listed = _order(port, events)
    described = _describe(port, cap_a, cap_b, opt, listed, budget)
    if each_port is not None:
        every = listed.differences()
        every[:len(described)] = described              # the same differences, in the same order
        each_port(PortDifferences(port, cap_a, cap_b, every, len(described), listed))
    return report, described, counts, listed


def _classify(cap_a: Capture, cap_b: Capture, opt: CompareOptions, notes: list[str]) -> _Events:
    side_a, side_b = _side(cap_a, opt), _side(cap_b, opt)
    use_len = "frame.len" not in opt.ignore
    if _all_same(side_a, side_b, use_len):
        events = _Events(matched=(np.arange(len(cap_a)), np.arange(len(cap_b))))
    else:
        ta, tb = _digests(side_a, use_len), _digests(side_b, use_len)
        events = _Events()
        if opt.unordered:
            pairs = _multiset_pairs(ta, tb)
            left_a, left_b = _unpaired(len(ta), pairs[0]), _unpaired(len(tb), pairs[1])
            gap_a, gap_b = np.zeros(len(left_a), np.int64), np.zeros(len(left_b), np.int64)
        else:
            alignment = align(ta, tb)
            if alignment.method != "lcs":
                notes.append(f"too many differences to align exactly; paired by {alignment.method}")
            pairs = (alignment.pairs_a, alignment.pairs_b)
            left_a, left_b = _unpaired(len(ta), pairs[0]), _unpaired(len(tb), pairs[1])
            events.moved, left_a, left_b = _moved(ta, tb, left_a, left_b)
            gap_a, gap_b = np.searchsorted(pairs[0], left_a), np.searchsorted(pairs[1], left_b)
        mod_a, mod_b, events.gone, events.new, new_gap = _pair_in_gaps(left_a, gap_a, left_b, gap_b)
        if opt.unordered or not len(pairs[0]):
            events.new_at = events.new                    # no A position: B order
        else:                                             # first A index after the gap's start
            events.new_at = np.where(new_gap > 0, pairs[0][np.maximum(new_gap - 1, 0)] + 1, 0)
        events.modified, events.matched = _masked_equal(side_a, side_b, (mod_a, mod_b), pairs, opt)
    events.matched, events.modified = _check_timestamps(cap_a, cap_b, events.matched, events.modified, opt)
    return events


def _all_same(a: _Side, b: _Side, use_len: bool) -> bool:
    """The fast path: same record lengths, same (masked) bytes, one numpy pass."""
    if not (a.cap.linktype == b.cap.linktype and np.array_equal(a.cap.caplen, b.cap.caplen)
            and (not use_len or np.array_equal(a.cap.wirelen, b.cap.wirelen))):
        return False
    return bool(np.array_equal(a.keys.view(np.uint64), b.keys.view(np.uint64)))


def _digests(side: _Side, use_len: bool) -> np.ndarray:
    """64-bit SipHash (Python's ``hash``) of each packet's masked bytes, xor its wire
    length: the tokens packets are paired by. Odds of two different packets sharing one
    are about n²/2**64 (1e-8 for a million packets)."""
    cap = side.cap
    view = memoryview(side.keys.tobytes())
    ends = (cap.starts + cap.caplen).tolist()
    digest = np.array([hash(view[s:e]) for s, e in zip(cap.starts.tolist(), ends)], np.int64)
    if use_len:
        digest ^= (cap.wirelen.astype(np.uint64) * _LEN_SALT).view(np.int64)
    return digest ^ hash(("linktype", cap.linktype))     # frames of other link types never pair


def _unpaired(n: int, paired: np.ndarray) -> np.ndarray:
    keep = np.ones(n, bool)
    keep[paired] = False
    return np.flatnonzero(keep)


def _nth_pairs(key_a: np.ndarray, key_b: np.ndarray):
    """(ia, ib): the k-th occurrence of each key in A paired with its k-th occurrence in
    B (occurrences counted in array order), sorted by ia. Vectorised: two sorts."""
    keys = np.concatenate([key_a, key_b])
    side = np.repeat(np.array([0, 1], np.int8), [len(key_a), len(key_b)])
    index = np.concatenate([np.arange(len(key_a)), np.arange(len(key_b))])
    order = np.lexsort((index, side, keys))
    keys, side, index = keys[order], side[order], index[order]
    new_group = np.r_[True, (keys[1:] != keys[:-1]) | (side[1:] != side[:-1])]
    starts = np.flatnonzero(new_group)
    rank = np.arange(len(keys)) - np.repeat(starts, np.diff(np.r_[starts, len(keys)]))
    order = np.lexsort((side, rank, keys))
    keys, side, index, rank = keys[order], side[order], index[order], rank[order]
    hit = (keys[1:] == keys[:-1]) & (rank[1:] == rank[:-1]) & (side[:-1] == 0) & (side[1:] == 1)
    ia, ib = index[:-1][hit], index[1:][hit]
    order = np.argsort(ia, kind="stable")
    return ia[order], ib[order]


def _multiset_pairs(ta: np.ndarray, tb: np.ndarray):
    """The k-th copy of a packet in A with the k-th copy in B, wherever they are."""
    return _nth_pairs(ta, tb)


def _moved(ta, tb, left_a, left_b):
    """Unpaired packets of A with an unpaired identical copy in B: reordered."""
    ia, ib = _nth_pairs(ta[left_a], tb[left_b])
    keep_a = np.ones(len(left_a), bool)
    keep_a[ia] = False
    keep_b = np.ones(len(left_b), bool)
    keep_b[ib] = False
    return (left_a[ia], left_b[ib]), left_a[keep_a], left_b[keep_b]


def _pair_in_gaps(left_a, gap_a, left_b, gap_b):
    """Within each gap between paired packets, pair the leftovers in order."""
    ia, ib = _nth_pairs(gap_a, gap_b)
    gone = np.ones(len(left_a), bool)
    gone[ia] = False
    new = np.ones(len(left_b), bool)
    new[ib] = False
    return left_a[ia], left_b[ib], left_a[gone], left_b[new], gap_b[new]


def _masked_equal(a: _Side, b: _Side, modified, pairs, opt: CompareOptions):
    """Candidate modified pairs whose only differences lie in ignored fields that the
    vectorised masks could not place (other layouts, other fields): dissect the two
    frames, mask the named fields, compare again. Equal ones join the matched pairs."""
    mod_a, mod_b = modified
    names = [n for n in opt.ignore if n not in RECORD_FIELDS]
    if not names or not len(mod_a) or a.cap.linktype != b.cap.linktype:
        return modified, pairs
    need = np.zeros(len(mod_a), bool)
    for name in names:
        covered_a = a.covered.get(name)
        covered_b = b.covered.get(name)
        need |= ~covered_a[mod_a] if covered_a is not None else True
        need |= ~covered_b[mod_b] if covered_b is not None else True
    need &= a.cap.caplen[mod_a] == b.cap.caplen[mod_b]
    if "frame.len" not in opt.ignore:
        need &= a.cap.wirelen[mod_a] == b.cap.wirelen[mod_b]
    same = np.zeros(len(mod_a), bool)
    mask_of = MaskCache(names, linktype=a.cap.linktype)
    for k in np.flatnonzero(need).tolist():
        fa, fb = a.cap.frame(int(mod_a[k])), b.cap.frame(int(mod_b[k]))
        mask = mask_of(fa) & mask_of(fb)
        va, vb = np.frombuffer(fa, np.uint8), np.frombuffer(fb, np.uint8)
        same[k] = np.array_equal(va & mask, vb & mask)
    if same.any():
        pa = np.concatenate([pairs[0], mod_a[same]])
        pb = np.concatenate([pairs[1], mod_b[same]])
        order = np.argsort(pa, kind="stable")
        pairs = (pa[order], pb[order])
    return (mod_a[~same], mod_b[~same]), pairs


def _check_timestamps(cap_a, cap_b, pairs, modified, opt: CompareOptions):
    """With ``timestamps``, paired packets stamped further apart than the tolerance are
    modified (field frame.time)."""
    if not opt.timestamps or "frame.time" in opt.ignore or not len(pairs[0]):
        return pairs, modified
    tolerance = round(opt.ts_tolerance * 1e9)
    late = np.abs(cap_a.ts_ns[pairs[0]] - cap_b.ts_ns[pairs[1]]) > tolerance
    if not late.any():
        return pairs, modified
    mod_a = np.concatenate([modified[0], pairs[0][late]])
    mod_b = np.concatenate([modified[1], pairs[1][late]])
    order = np.argsort(mod_a, kind="stable")
    return (pairs[0][~late], pairs[1][~late]), (mod_a[order], mod_b[order])


KINDS = ("missing", "modified", "reordered", "extra")


def _layer_counts(cap_a, cap_b, events: _Events, limit: int) -> Counter:
    """(kind, layer stack) -> packets, over at most ``limit`` differing packets (A's frame
    for missing, modified and reordered packets, B's for extra ones)."""
    counts: Counter = Counter()
    groups = [("missing", cap_a, events.gone), ("modified", cap_a, events.modified[0]),
              ("reordered", cap_a, events.moved[0]), ("extra", cap_b, events.new)]
    for kind, cap, rows in groups:
        for k in rows[:max(limit - sum(counts.values()), 0)].tolist():
            counts[kind, layer_stack(cap.frame(k), cap.linktype)] += 1
    return counts


@dataclass
class PortDifferences:
    """Every difference of one port, in file order (by A position, then B index), as
    ``compare_paths`` hands them to ``each_port`` while the port's captures are in
    memory (None: no such port file on that side). The first ``described`` are the
    report's own, named and dissected; the others carry their kind and indexes only
    (``field_changes`` names a modified pair's fields)."""
    port: int | None
    cap_a: Capture | None
    cap_b: Capture | None
    differences: list[Difference]
    described: int
    listed: Listed | None = None      # the same differences as arrays


@dataclass
class Listed:
    """Every difference of one port in file order (by A position, then B index), as
    arrays: the kind (an index into ``KINDS``) and the packet indexes in A's and B's
    files (-1: none)."""
    port: int | None
    kinds: np.ndarray
    index_a: np.ndarray
    index_b: np.ndarray

    @staticmethod
    def kind(code: int) -> str:
        """The kind of ``kinds``' code ``code``: ``missing``, ``modified``, ..."""
        return KINDS[code]

    def differences(self, limit: int | None = None) -> list[Difference]:
        """The first ``limit`` (default: all) as :class:`Difference` objects, their kind
        and indexes only."""
        return [Difference(self.port, KINDS[code], None if i < 0 else i, None if j < 0 else j)
                for code, i, j in zip(self.kinds[:limit].tolist(), self.index_a[:limit].tolist(),
                                      self.index_b[:limit].tolist())]


def _order(port, events: _Events) -> Listed:
    """The port's differences in file order (by A position, then B index)."""
    (mod_a, mod_b), (moved_a, moved_b) = events.modified, events.moved
    pos = np.concatenate([events.gone, mod_a, moved_a, events.new_at])
    ib = np.concatenate([np.full(len(events.gone), -1), mod_b, moved_b, events.new])
    kind = np.repeat(np.arange(4), [len(events.gone), len(mod_a), len(moved_a), len(events.new)])
    order = np.lexsort((ib, pos))
    kind, ia, ib = kind[order], pos[order], ib[order]
    ia[kind == 3] = -1                                 # an extra packet: its A position only sorts it
    return Listed(port, kind, ia, ib)


def _describe(port, cap_a, cap_b, opt: CompareOptions, listed: Listed, budget: int) -> list[Difference]:
    """The first ``budget`` differences in file order, dissected and named."""
    if budget <= 0:
        return []
    out = listed.differences(budget)
    for diff in out:
        fa = cap_a.frame(diff.index_a) if diff.index_a is not None else None
        fb = cap_b.frame(diff.index_b) if diff.index_b is not None else None
        diff.frame_a, diff.frame_b = fa, fb
        diff.summary_a = summary(fa, cap_a.linktype) if fa is not None else None
        diff.summary_b = summary(fb, cap_b.linktype) if fb is not None else None
        if diff.kind == "modified":
            _describe_modified(diff, cap_a, cap_b, fa, fb, opt)
    return out


def field_changes(cap_a: Capture, cap_b: Capture, i: int, j: int, opt: CompareOptions,
                  frame_fields: Callable = field_differences) -> list[FieldDiff]:
    """What differs between A[i] and B[j], a modified pair, as the report lists it:
    ``frame.cap_len``, ``linktype``, the frames' fields (``frame_fields(frame_a,
    frame_b, ignore, linktypes)``, by default scapy's names via ``field_differences``),
    ``frame.len``, and with ``timestamps`` ``frame.time``."""
    names = set(opt.ignore)
    fa, fb = cap_a.frame(i), cap_b.frame(j)
    fields = [FieldDiff(*f) for f in frame_fields(fa, fb, names, (cap_a.linktype, cap_b.linktype))]
    if cap_a.linktype != cap_b.linktype:
        fields.insert(0, FieldDiff("linktype", _link(cap_a.linktype), _link(cap_b.linktype)))
    if len(fa) != len(fb):
        fields.insert(0, FieldDiff("frame.cap_len", str(len(fa)), str(len(fb))))
    if "frame.len" not in names and cap_a.wirelen[i] != cap_b.wirelen[j]:
        fields.append(FieldDiff("frame.len", str(int(cap_a.wirelen[i])), str(int(cap_b.wirelen[j]))))
    if opt.timestamps and "frame.time" not in names:
        ta, tb = int(cap_a.ts_ns[i]), int(cap_b.ts_ns[j])
        if abs(ta - tb) > round(opt.ts_tolerance * 1e9):
            fields.append(FieldDiff("frame.time", _stamp(ta), _stamp(tb)))
    return fields


def _describe_modified(diff: Difference, cap_a, cap_b, fa, fb, opt) -> None:
    """The pair's fields, and its differing byte offsets (ignored ones apart) for the hexdump."""
    diff.fields = field_changes(cap_a, cap_b, diff.index_a, diff.index_b, opt)
    names = set(opt.ignore)
    short = min(len(fa), len(fb))
    va, vb = np.frombuffer(fa, np.uint8, short), np.frombuffer(fb, np.uint8, short)
    mask = np.full(short, 0xFF, np.uint8)
    scapy_names = [n for n in names if n not in RECORD_FIELDS]
    if scapy_names:
        mask_a = MaskCache(scapy_names, linktype=cap_a.linktype)
        mask_b = MaskCache(scapy_names, linktype=cap_b.linktype)
        mask &= mask_a(fa)[:short] & mask_b(fb)[:short]
    xor = va ^ vb
    diff.offsets = np.flatnonzero(xor & mask).tolist() + list(range(short, max(len(fa), len(fb))))
    diff.ignored_offsets = np.flatnonzero(xor & ~mask).tolist()


def _link(linktype: int) -> str:
    return f"{link_name(linktype)} ({linktype})"


def _stamp(ns: int) -> str:
    return f"{ns // 1_000_000_000}.{ns % 1_000_000_000:09d}"
