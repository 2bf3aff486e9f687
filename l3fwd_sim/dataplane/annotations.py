"""``--annotate`` and ``--drops``: the decisions inside the captures, for Wireshark.

Both read the run's trace (:mod:`.trace`) of every packet. Its finished records — the
output positions final, as ``trace.jsonl`` gets them — are handed to
:meth:`Annotations.keep` as they come, and kept as compact columns and rendered comment
text (the renderer of the trace lines, :class:`~.jsonlines.Lines`). Once every output
is complete, :meth:`Annotations.finish` writes them — except where the records come as
the packets are forwarded (one lcore in one process, ``inline``): there each output's
writer takes its packets' comments as it appends them (:meth:`Annotations.comments`), and
no output is written twice:

* ``--annotate``: every Enhanced Packet Block of every pcapng output gets an
  ``opt_comment`` (draft-ietf-opsawg-pcapng §3.5, code 1) naming the packet's RX port
  and record number and what decided it — ``rx port 0 #2 · lpm4
  routes/lpm_default_v4.cfg:5 · next hop 2``; a packet without a next hop says what
  l3fwd did with it, ``rx port 0 #0 · lpm4 miss · sent back to port 0`` (``no lookup ·
  sent back to port 0`` for one the path did not look up) — so that Wireshark shows it
  as ``frame.comment``;
* ``--drops``: ``drops.pcapng``, every dropped packet as received (its bytes read again
  from its capture: :func:`read_records`), in processing order, on one interface per
  RX port (``if_name`` ``port<N>``), its comment the reason as ``stats.json`` names it,
  the trace's detail and where it came from: ``rfc1812_invalid: IHL 0 < 5 · rx port 1 #23``.
"""
from __future__ import annotations

import mmap
import os
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ..capture.atomic import AtomicFile
from ..capture.location import as_location, identity
from ..capture.offline import open_offline
from ..capture.pcapng_writer import (COMMENT_PIECE, IDB, SHB, interface_block, packet_block, section_header,
                                     write_commented)
from ..capture.records import HEAD_BYTES
from ..errors import SimError
from ..text import printable
from .jsonlines import LineBuffer, Lines
from .trace import Describe, Records

DROPS_FILE = "drops.pcapng"
SEPARATOR = " · "
# where a sent packet went: to its next hop, or (no next hop: a miss, or no lookup)
# back out of its input port, as l3fwd sends it; the TX port follows
WHERE = (f"{SEPARATOR}next hop ", f"{SEPARATOR}sent back to port ", f"{SEPARATOR}sent to port ")


class Annotations:
    """What ``--annotate`` and ``--drops`` keep of a run's trace records: the comment of
    each sent packet by (TX port, place in its output), and of each dropped one its
    receive side. ``several_queues``: a port has several RX queues, so a comment names
    the queue too (``rx port 0 queue 1 #17``)."""

    def __init__(self, describe: Describe, annotate: bool, drops: bool, several_queues: bool, inline: bool = False):
        """``inline``: the sent packets' records come before their outputs' writers append
        them, and those take their comments from :meth:`comments`."""
        self.describe, self.annotate, self.drops, self.several_queues = describe, annotate, drops, several_queues
        self.inline = inline
        self._sent = _Comments(("tx_port", "tx_index"))
        self._dropped = _Comments(("rx_port", "rx_queue", "index"))
        self._pending: dict[int, deque] = {}      # inline: per TX port, (text, starts, ends) not yet written
        self._queued: dict[int, int] = {}         # inline: per TX port, comments made so far
        self._rendering = LineBuffer()

    def keep(self, records: Records) -> None:
        """Take finished records (a super-burst's, or a spool's block)."""
        reason = records["reason"]
        if self.annotate and (sent := np.flatnonzero(reason == 0)).size:
            texts, codes = self.describe.decision(_Rows(records, sent))
            lines = self._receive_side(records, sent)
            lines.text(SEPARATOR)
            lines.choice([printable(text) for text in texts], codes)
            lines.choice(WHERE, _where(records, sent))
            lines.number(records["tx_port"][sent])
            if self.inline:
                self._queue(records, sent, lines)
            else:
                self._sent.add(records, sent, lines)
        if self.drops and (dropped := np.flatnonzero(reason != 0)).size:
            texts, codes = self.describe.detail(_Rows(records, dropped))
            lines = Lines(len(dropped))
            lines.choice([printable(name) for name in self.describe.reasons], reason[dropped].astype(np.intp) - 1)
            lines.choice(["", *(f": {printable(text)}" for text in texts)], codes)
            lines.text(SEPARATOR)
            _receive_side(lines, records, dropped, self.several_queues)
            self._dropped.add(records, dropped, lines)

    def _queue(self, records: Records, sent: np.ndarray, lines: Lines) -> None:
        """Keep the comments of ``sent`` for their ports' writers, each port's in the
        order of its output (their ``tx_index``, which must go on from the last)."""
        ends = np.empty(lines.n, np.int64)
        text = np.frombuffer(bytes(lines.render(self._rendering, ends)), np.uint8)
        starts = np.concatenate([[0], ends[:-1] + 1])
        port, index = records["tx_port"][sent], records["tx_index"][sent]
        by_port = np.argsort(port, kind="stable")        # each port's rows in processing order: its output's
        counts = np.bincount(port)
        ends_at = np.cumsum(counts)
        starts_at = ends_at - counts
        for p in np.flatnonzero(ends_at - starts_at).tolist():
            rows = by_port[starts_at[p]:ends_at[p]]
            first = self._queued.get(p, 0)
            if not np.array_equal(index[rows], np.arange(first, first + len(rows))):
                raise AssertionError(f"port {p}: the trace does not place every sent packet once, in order")
            self._queued[p] = first + len(rows)
            self._pending.setdefault(p, deque()).append((text, starts[rows], ends[rows]))

    def comments(self, port: int, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``inline``: the comments of TX port ``port``'s next ``count`` packets, as
        ``write_commented`` takes them (one text, each comment's start and end in it)."""
        pending = self._pending.get(port, deque())
        texts, starts, ends, base, have = [], [], [], 0, 0
        while have < count:
            if not pending:
                raise AssertionError(f"port {port}: a packet written before its trace record")
            text, first, last = pending[0]
            take = min(count - have, len(first))
            texts.append(text)
            starts.append(first[:take] + base)
            ends.append(last[:take] + base)
            base += len(text)
            if take == len(first):
                pending.popleft()
            else:
                pending[0] = text, first[take:], last[take:]
            have += take
        if not texts:
            return np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64)
        return (texts[0] if len(texts) == 1 else np.concatenate(texts)), np.concatenate(starts), np.concatenate(ends)

    def _receive_side(self, records: Records, rows: np.ndarray) -> Lines:
        lines = Lines(len(rows))
        _receive_side(lines, records, rows, self.several_queues)
        return lines

    def finish(self, outputs: dict[int, list[tuple[Path, np.ndarray | None]]], rx_ports: list[int],
               capture_of: Callable[[int, int], Path], nanosecond: bool, drops_at: Path) -> None:
        """Write what was asked for into the complete outputs. ``outputs``: per TX port its
        pcapng files, each with the places its records have in the port's sequence (None:
        all of them, in order — ``port<N>.pcapng``; with several lcores a TX queue's file
        holds some of them); ``capture_of(port, queue)``: the capture an RX queue read
        (record numbers count in it); ``drops_at``: where ``drops.pcapng`` goes."""
        if self.annotate and self.inline:
            if any(self._pending.values()):
                raise AssertionError("--annotate: a trace record of a packet no output holds")
        elif self.annotate:
            sent = self._sent.joined()
            for port, files in outputs.items():
                mine = _in_output_order(port, sent)
                for path, places in files:
                    rows = mine if places is None else mine[places]
                    add_comments(path, sent.text, sent.starts[rows], sent.ends[rows])
        if self.drops:
            write_drops(drops_at, self._dropped.joined(), rx_ports, capture_of, nanosecond)


class _Comments:
    """Comments as one text (a line per comment) and, per comment, the record columns
    ``keys`` it is found by and where its line ends; added a block of records at a time.
    Each block is rendered into one reused buffer and appended to the text: the text's
    pages are touched once (fresh pages cost more than the copy on the project's VM)."""

    def __init__(self, keys: tuple[str, ...]):
        self.keys = keys
        self.text = bytearray()
        self._rendering = LineBuffer()
        self.blocks: list[tuple[dict[str, np.ndarray], np.ndarray]] = []

    def add(self, records: Records, rows: np.ndarray, lines: Lines) -> None:
        ends = np.empty(lines.n, np.int64)
        rendered = lines.render(self._rendering, ends)
        ends += len(self.text)
        self.text += rendered
        self.blocks.append(({key: records[key][rows].astype(np.int64) for key in self.keys}, ends))

    def joined(self) -> "_Joined":
        if not self.blocks:
            empty = np.zeros(0, np.int64)
            return _Joined(np.zeros(0, np.uint8), empty, empty, {key: empty for key in self.keys})
        ends = np.concatenate([block_ends for _, block_ends in self.blocks])
        return _Joined(np.frombuffer(self.text, np.uint8), np.concatenate([[0], ends[:-1] + 1]), ends,
                       {key: np.concatenate([columns[key] for columns, _ in self.blocks]) for key in self.keys})


@dataclass
class _Joined:
    text: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    columns: dict[str, np.ndarray]

    def comment(self, k: int) -> str:
        return bytes(self.text[self.starts[k]:self.ends[k]]).decode()


def _in_output_order(port: int, sent: _Joined) -> np.ndarray:
    """The comments of TX port ``port``'s packets, in the order of its output (each
    place exactly once)."""
    rows = np.flatnonzero(sent.columns["tx_port"] == port)
    order = rows[np.argsort(sent.columns["tx_index"][rows], kind="stable")]
    if not np.array_equal(sent.columns["tx_index"][order], np.arange(len(order))):
        raise AssertionError(f"port {port}: the trace does not place every sent packet once")
    return order


def check_annotations(annotate: bool, drops: bool, trace, output_format: str, inputs) -> None:
    """Refuse what ``--annotate``/``--drops`` cannot do, before anything runs."""
    if annotate and output_format == "pcap":
        raise SimError("--annotate writes each packet's comment into pcapng outputs: leave out --output-format pcap")
    if trace not in (None, "all"):
        raise SimError(f"--trace {trace} with --annotate or --drops: those trace every packet; "
                       "give --trace all or leave --trace out")
    for path in inputs if drops else ():
        if not identity(as_location(path))[1]:
            raise SimError(f"{path}: not a regular file (a pipe?); --drops reads the dropped packets again from "
                           "their capture: give a file")


class _Rows:
    """``records`` at ``rows``, as a describer reads them: each column taken when asked
    for (a decision reads two of them, not the packet heads)."""

    def __init__(self, records: Records, rows: np.ndarray):
        self._records, self._rows = records, rows

    def __getitem__(self, name: str) -> np.ndarray:
        return self._records[name][self._rows]

    def __len__(self) -> int:
        return len(self._rows)


def _where(records: Records, rows: np.ndarray) -> np.ndarray:
    """Per sent record, its index in :data:`WHERE`: 0 it went to its next hop; without a
    next hop (a miss, or no lookup) 1 back out of its input port — what l3fwd does with
    it — or 2 elsewhere (not l3fwd's: a next hop is never printed for a packet without one)."""
    no_hop = records["next_hop"][rows] < 0
    back = records["tx_port"][rows] == records["rx_port"][rows]
    return np.where(no_hop, np.where(back, 1, 2), 0).astype(np.intp)


def _receive_side(lines: Lines, records: Records, rows: np.ndarray, several_queues: bool) -> None:
    """``rx port P #I`` (``rx port P queue Q #I`` with several RX queues)."""
    lines.text("rx port ")
    lines.number(records["rx_port"][rows])
    if several_queues:
        lines.text(" queue ")
        lines.number(records["rx_queue"][rows])
    lines.text(" #")
    lines.number(records["index"][rows])


def add_comments(path: Path, text: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
    """Rewrite the complete pcapng output ``path`` — its Section Header and Interface
    Description Blocks, then one Enhanced Packet Block per packet, as :class:`~l3fwd_sim.
    capture.pcapng_writer.PcapngWriter` writes them — with ``text[starts[k]:ends[k]]`` as
    the ``opt_comment`` of its k-th packet (``write_commented``, from the file mapped into
    memory), atomically."""
    with open(path, "rb") as file:           # the map lives as long as the array over it
        data = np.frombuffer(mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ), np.uint8) \
            if os.fstat(file.fileno()).st_size else np.zeros(0, np.uint8)
    header = _header_bytes(path, data)
    with AtomicFile(path) as out:
        out.file.write(data[:header])
        write_commented(out.file.write, data[header:], text, starts, ends, path, np.empty(COMMENT_PIECE, np.uint8))


def _header_bytes(path: Path, data: np.ndarray) -> int:
    """Where the blocks after the section header and the one interface end."""
    at = 0
    for kind in (SHB, IDB):
        if len(data) < at + 12 or int(data[at:at + 4].view("<u4")[0]) != kind:
            raise AssertionError(f"{path}: not a section header and an interface, as the writer writes them")
        at += int(data[at + 4:at + 8].view("<u4")[0])
    return at


def write_drops(path: Path, dropped: _Joined, rx_ports: list[int], capture_of: Callable[[int, int], Path],
                nanosecond: bool) -> None:
    """``drops.pcapng``: one interface per RX port, then each dropped packet in
    processing order, as its capture holds it, with its comment."""
    port, queue, index = (dropped.columns[key] for key in ("rx_port", "rx_queue", "index"))
    comments = [dropped.comment(k) for k in range(len(port))]
    sources: dict[Path, list[int]] = {}
    for k, (p, q) in enumerate(zip(port.tolist(), queue.tolist())):
        sources.setdefault(capture_of(p, q), []).append(k)
    frames: list = [None] * len(comments)
    for source, rows in sources.items():
        for k, record in zip(rows, read_records(source, index[rows])):
            frames[k] = record
    interface = {p: i for i, p in enumerate(rx_ports)}
    units = 10**9 if nanosecond else 10**6
    with AtomicFile(path) as out:
        out.file.write(section_header())
        for p in rx_ports:
            out.file.write(interface_block(f"port{p}", nanosecond))
        for p, (frame, wirelen, ts_ns), comment in zip(port.tolist(), frames, comments):
            out.file.write(packet_block(interface[p], ts_ns // (10**9 // units), wirelen, frame, comment))


def read_records(path: Path, numbers: np.ndarray, batch: int = 65536) -> list[tuple[bytes, int, int]]:
    """The records ``numbers`` (counting from 0) of the capture ``path`` as (frame as
    the run received it, original length, time stamp in ns), in the order asked."""
    wanted = np.unique(numbers)
    found: dict[int, tuple[bytes, int, int]] = {}
    reader = open_offline(path)
    try:
        while len(found) < len(wanted):
            records = reader.read(batch)
            if not len(records):
                raise AssertionError(f"{path}: ends before record {int(wanted[len(found)])}")
            first, n = records.first, len(records)
            caplen, wirelen, ts_ns = records.caplen, records.wirelen, records.ts_ns
            for number in wanted[(wanted >= first) & (wanted < first + n)].tolist():
                row, cap = number - first, int(caplen[number - first])
                start = int(records.offsets[row])
                frame = bytes(records.rows[row, 16:16 + min(cap, HEAD_BYTES)]) + \
                    bytes(records.block[start + HEAD_BYTES:start + cap])
                found[number] = (frame, int(wirelen[row]), int(ts_ns[row]))
    finally:
        reader.close()
    return [found[number] for number in numbers.tolist()]
