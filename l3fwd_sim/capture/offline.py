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
from .reading import NotACapture, Reading
from .source import Source


def open_offline(path: str | os.PathLike, reading: Reading = Reading.ETHERNET) -> PcapReader:
    """The streaming reader of the capture at ``path``: a :class:`PcapngReader` when it
    starts with a pcapng Section Header Block, else a classic :class:`PcapReader` (which
    refuses, naming the file, whatever is not a pcap). ``reading``: how the records are
    handed over (``reading.py``); with ``Reading.LIBPCAP`` a file libpcap cannot open
    raises :class:`NotACapture`."""
    source = Source(as_location(path))
    if reading is Reading.LIBPCAP and source.gzip:
        source.close()
        raise NotACapture(path, "unknown file format", "gzip-compressed: libpcap cannot read it (unknown file format)")
    pcapng = int.from_bytes(source.magic[:4], "little") == PCAPNG_MAGIC
    try:
        return (PcapngReader if pcapng else PcapReader)(path, source, reading)
    except NotACapture:
        raise
    except SimError as err:
        if reading is Reading.LIBPCAP:           # the header libpcap reads first is not a capture's
            raise NotACapture(path, "unknown file format", str(err).removeprefix(f"{path}: ")) from None
        raise


class OpenCaptures:
    """The inputs of a run, each opened once up front — so that a bad one fails the run
    before any output exists — and handed to the first reader that asks for it. A pipe,
    FIFO or ``/dev/stdin`` can be read only once, so one that is given twice is refused,
    and so is one when every process must open the inputs again (``reopen``: the option
    that makes them, ``--jobs N`` or ``--cluster``). ``input_bytes``: their total size,
    as ``stat`` tells it before anything is read (a pipe or a URL counts as large)."""

    def __init__(self, paths, reopen: str | None = None, reading: Reading = Reading.ETHERNET):
        self._open: dict[tuple[int, int], PcapReader] = {}
        self.reading = reading
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
                self._open[key] = open_offline(path, reading)
                self.input_bytes += size(path) if regular and not is_url(path) else 1 << 62
        except BaseException:
            self.close()
            raise
        self.nanosecond = any(reader.nanosecond for reader in self._open.values())
        self.file_formats = [reader.file_format for reader in self._open.values()]   # for --output-format auto
        self._opened = list(self._open.values())     # every reader, taken or not: for conveniences()

    def take(self, path: str | os.PathLike) -> PcapReader:
        """The reader of ``path``: the one opened up front the first time, a new one after."""
        reader = self._open.pop(identity(as_location(path))[0], None)
        return reader if reader is not None else open_offline(path, self.reading)

    def conveniences(self) -> list[str]:
        """What reading the inputs took of ``Reading.ETHERNET`` beyond libpcap, one line
        each (``reading.py``), as far as they were read in this process."""
        return list(dict.fromkeys(line for reader in self._opened for line in reader.conveniences))

    def close(self) -> None:
        """Close the readers no one took."""
        for reader in self._open.values():
            reader.close()
        self._open.clear()
