"""Opening a capture file for reading, as libpcap's ``pcap_open_offline`` does: the
first four bytes (after gzip, if the file is compressed) say whether it is pcapng or
classic pcap, and the matching reader takes the already opened file. A run opens each
input exactly once (:class:`OpenCaptures`): inputs may be pipes."""
from __future__ import annotations

import os

from ..errors import SimError
from .location import as_location, identity, is_url, size
from .pcap import PcapReader
from .pcapng import PCAPNG_MAGIC, PcapngReader
from .source import Source


def open_offline(path: str | os.PathLike, any_link: bool = False) -> PcapReader:
    """The streaming reader of the capture at ``path``: a :class:`PcapngReader` when it
    starts with a pcapng Section Header Block, else a classic :class:`PcapReader` (which
    refuses, naming the file, whatever is not a pcap). ``any_link``: frames of every
    link type as stored, not converted to Ethernet (what ``compare`` reads)."""
    source = Source(as_location(path))
    pcapng = int.from_bytes(source.magic[:4], "little") == PCAPNG_MAGIC
    return (PcapngReader if pcapng else PcapReader)(path, source, any_link=any_link)


class OpenCaptures:
    """The inputs of a run, each opened once up front — so that a bad one fails the run
    before any output exists — and handed to the first reader that asks for it. A pipe,
    FIFO or ``/dev/stdin`` can be read only once, so one that is given twice is refused,
    and so is one when every process must open the inputs again (``reopen``: the option
    that makes them, ``--jobs N`` or ``--cluster``). ``input_bytes``: their total size,
    as ``stat`` tells it before anything is read (a pipe or a URL counts as large)."""

    def __init__(self, paths, reopen: str | None = None):
        self._open: dict[tuple[int, int], PcapReader] = {}
        self.input_bytes = 0
        try:
            for path in map(as_location, paths):
                key, regular = identity(path)
                if key in self._open:
                    if not regular:
                        raise SimError(f"{path}: a pipe can be read only once, and it is given as more than one input")
                    continue
                if reopen and not regular:
                    raise SimError(f"{path}: not a regular file (a pipe?); with {reopen} every process opens the "
                                   "inputs again: read it in one process")
                self._open[key] = open_offline(path)
                self.input_bytes += size(path) if regular and not is_url(path) else 1 << 62
        except BaseException:
            self.close()
            raise
        self.nanosecond = any(reader.nanosecond for reader in self._open.values())
        self.file_formats = [reader.file_format for reader in self._open.values()]   # for --output-format auto

    def take(self, path: str | os.PathLike) -> PcapReader:
        """The reader of ``path``: the one opened up front the first time, a new one after."""
        reader = self._open.pop(identity(as_location(path))[0], None)
        return reader if reader is not None else open_offline(path)

    def close(self) -> None:
        """Close the readers no one took."""
        for reader in self._open.values():
            reader.close()
        self._open.clear()
