"""``compare --write DIR``: the packets that differ, as two pcapng files to open in Wireshark.

``DIR/a.pcapng`` holds the packets of A that take part in a difference, ``DIR/b.pcapng``
those of B: a modified or reordered pair in both files (A's bytes in one, B's in the
other), a missing packet in ``a.pcapng`` only, an extra one in ``b.pcapng`` only. Every
difference is written, not only the ``max_diffs`` the report describes. Each packet keeps
its bytes, wire length and time stamp (interfaces stamp in ns, which holds a µs or ns
stamp exactly) and carries the difference as its comment (``opt_comment``, Wireshark's
``frame.comment``), one line in the report's words::

    port 2, packet A[41] modified in B[41]: IP.ttl 38→39, IP.chksum 0x3412→0x3312
    port 0, packet B[13] extra (not in A)

With the causes ``compare --explain`` found (``explained``, a report :func:`~.explain.
explain_report` has explained), each comment goes on with its difference's cause, as the
report words it (:func:`~.causes.one_line`)::

    port 0, packet B[13] extra (not in A) · cause: unknown_ptype in A (D1) — A: dropped:
    unknown_ptype; B: no lookup: sent back out of the input port

Fields are named by scapy for the pairs the report describes and the first
``NAMED_PAIRS`` other distinct modified pairs (about 2 ms a pair; a pair that repeats, as
in a stream of identical frames, is named once), then as the differing byte ranges
(``bytes[22:23] 40→3f``), as compare names them without scapy: there ``--ignore``d
fields are not left out.

Each file has one section (its comment says which packets it holds and which two
captures were compared) and one interface per port compared, in port order (interface
k is the same port in both files), named ``port<N>`` (two files: after the file, its
stem), with that side's link type (the other side's when the port file is on one side
only); a port's packets follow its interface in index order. Equal captures give two
files without packets. Text from the inputs (file names, field values) is escaped to one
printable line (``text.printable``).

Both files are written under temporary names in DIR (created if missing) and put in
place together when the comparison is complete (``outdir.publish_files``): both or
neither, whatever fails. Other files in DIR are never touched.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..capture.atomic import AtomicFile
from ..text import printable
from ..capture.outdir import make_output_directory, publish_files, remove_created
from ..capture.pcapng_writer import interface_block, packet_block, section_header
from ..errors import SimError
from .compare import CompareOptions, PortDifferences, Report, compare_paths, field_changes
from .fields import field_differences
from .report import one_line

NAMED_PAIRS = 1000      # distinct modified pairs whose fields scapy names (~2 ms each)
SIDES = ("a", "b")


def write_differences(a: str | Path, b: str | Path, directory: str | Path,
                      options: CompareOptions | None = None, explained: Report | None = None) -> Report:
    """:func:`~l3fwd_sim.diff.compare.compare_paths`, writing every differing packet
    into ``directory``/a.pcapng and b.pcapng (see the module's doc); ``explained``: a
    report of the same comparison with its causes (``explain_report``), for the comments."""
    options = options or CompareOptions()
    files = DifferenceFiles(Path(directory), str(a), str(b), options, explained)
    try:
        report = compare_paths(a, b, options, each_port=files.add)
        files.publish()
    except BaseException:
        files.discard()
        raise
    return report


class DifferenceFiles:
    """The two files being written: ``add`` each port's differences, then ``publish()``
    (both put in place) or ``discard()`` (neither, and DIR removed if made for them)."""

    def __init__(self, directory: Path, a: str, b: str, options: CompareOptions, explained: Report | None = None):
        """``explained``: the same comparison, its causes found (``explain_report``): each
        comment goes on with its difference's."""
        targets = {side: directory / f"{side}.pcapng" for side in SIDES}
        _refuse_inputs(targets.values(), (a, b))
        self.options = options
        self.explained = explained
        self._listed = {listed.port: listed for listed in explained.listed} if explained is not None else {}
        self._created = make_output_directory(directory)
        self._files: dict[str, AtomicFile] = {}
        self._interfaces = 0
        self._frame_fields = _FrameFields(NAMED_PAIRS)
        try:
            for side, other in zip(SIDES, reversed(SIDES)):
                self._files[side] = AtomicFile(targets[side])
                self._files[side].file.write(section_header(printable(
                    f"l3fwd-sim compare --write: the packets of {side.upper()} that differ from {other.upper()}; "
                    f"A: {a}, B: {b}")))
        except BaseException:
            self.discard()
            raise

    def add(self, found: PortDifferences) -> None:
        """One port: its interface in both files, then its differing packets."""
        for d in found.differences[found.described:]:
            if d.kind == "modified":
                d.fields = field_changes(found.cap_a, found.cap_b, d.index_a, d.index_b, self.options,
                                         self._frame_fields)
        comments = [printable(one_line(d) if cause is None else f"{one_line(d)} · cause: {cause.one_line()}")
                    for d, cause in zip(found.differences, self._causes(found))]
        for side, cap, other in (("a", found.cap_a, found.cap_b), ("b", found.cap_b, found.cap_a)):
            known = cap or other            # a port file on one side only: the other's link type
            name = f"port{found.port}" if found.port is not None else printable(known.path.stem)
            out = self._files[side].file
            out.write(interface_block(name, nanosecond=True, linktype=known.linktype))
            records = sorted((index, comment) for d, comment in zip(found.differences, comments)
                             if (index := d.index_a if side == "a" else d.index_b) is not None)
            if records:
                rows = np.array([index for index, _ in records], np.int64)
                out.writelines(packet_block(self._interfaces, ticks, wirelen, cap.frame(index), comment)
                               for (index, comment), ticks, wirelen
                               in zip(records, cap.ts_ns[rows].tolist(), cap.wirelen[rows].tolist()))
        self._interfaces += 1

    def _causes(self, found: PortDifferences) -> list:
        """The cause of each of the port's differences (None: not known): the explained
        report's, which listed the very same differences, in the same order."""
        mine = self._listed.get(found.port)
        if mine is None or found.listed is None or not all(
                np.array_equal(getattr(mine, name), getattr(found.listed, name))
                for name in ("kinds", "index_a", "index_b")):
            return [None] * len(found.differences)
        return [self.explained.cause_list[i] for i in self.explained.cause_ids[found.port].tolist()]

    def publish(self) -> None:
        publish_files({file.finish(): file.path for file in self._files.values()})

    def discard(self) -> None:
        for file in self._files.values():
            file.abort()
        remove_created(self._created)


class _FrameFields:
    """``field_differences`` of the frames of a modified pair: by scapy's names for the
    first ``limit`` distinct pairs (kept, for the pairs that repeat), by byte range after."""

    def __init__(self, limit: int):
        self._named: dict[tuple, list] = {}
        self._limit = limit

    def __call__(self, frame_a: bytes, frame_b: bytes, ignore, linktypes) -> list:
        key = (frame_a, frame_b, linktypes)
        found = self._named.get(key)
        if found is None:
            if len(self._named) >= self._limit:
                return field_differences(frame_a, frame_b, ignore, linktypes, dissect=False)
            found = self._named[key] = field_differences(frame_a, frame_b, ignore, linktypes)
        return found


def _refuse_inputs(targets, inputs) -> None:
    """A compared file named a.pcapng or b.pcapng in DIR would be replaced: refuse it
    before anything is read or written."""
    for target in targets:
        for path in inputs:
            if target.is_file() and os.path.exists(path) and os.path.samefile(target, path):
                raise SimError(f"{target}: an input of this compare, which --write would replace; "
                               "choose another directory")
