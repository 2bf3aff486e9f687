"""Opening a capture file for reading, as libpcap's ``pcap_open_offline`` does: the
first four bytes (after gzip, if the file is compressed) say whether it is pcapng or
classic pcap, and the matching reader takes the already opened file."""
from __future__ import annotations

import os
from pathlib import Path

from .pcap import PcapReader
from .pcapng import PCAPNG_MAGIC, PcapngReader
from .source import Source


def open_offline(path: str | os.PathLike) -> PcapReader:
    """The streaming reader of the capture at ``path``: a :class:`PcapngReader` when it
    starts with a pcapng Section Header Block, else a classic :class:`PcapReader` (which
    refuses, naming the file, whatever is not a pcap)."""
    source = Source(Path(path))
    pcapng = int.from_bytes(source.magic[:4], "little") == PCAPNG_MAGIC
    return (PcapngReader if pcapng else PcapReader)(path, source)
