"""A capture file opened for reading, once: seen through gzip when it starts with
gzip's magic bytes, its first bytes peeked so that the right reader can be chosen (the
input may be a pipe, so nothing is read twice)."""
from __future__ import annotations

import zlib

from ..errors import SimError
from .location import Location, open_binary

_GZIP_MAGIC = b"\x1f\x8b"


class Gunzip:
    """Decompressed bytes of a gzip file (members one after another, zero padding
    after the last one allowed, as gzip itself reads them). Unlike ``gzip.GzipFile``
    it keeps every byte decompressed before the data ends early (``cut`` is then set)
    or turns out to be damaged (``zlib.error``)."""

    _STEP = 1 << 20

    def __init__(self, raw):
        self._raw = raw
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)   # gzip wrapper: header and CRC checked
        self._input = b""
        self._out = memoryview(b"")
        self.cut = False

    def _more(self) -> bytes:
        """The next decompressed piece; b"" at the end of the data."""
        while True:
            if self._inflate.eof:                        # a member ended: another one, padding or the end
                self._input = (self._inflate.unused_data + self._input).lstrip(b"\0")
                while not self._input:
                    chunk = self._raw.read(1 << 16)
                    if not chunk:
                        return b""
                    self._input = chunk.lstrip(b"\0")
                self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            if not self._input:
                self._input = self._raw.read(1 << 16)
                if not self._input:
                    self.cut = True                      # no end-of-stream marker
                    return b""
            out = self._inflate.decompress(self._input, self._STEP)
            self._input = self._inflate.unconsumed_tail
            if out:
                return out

    def readinto(self, view) -> int:
        if not self._out:
            self._out = memoryview(self._more())
        n = min(len(view), len(self._out))
        view[:n] = self._out[:n]
        self._out = self._out[n:]
        return n

    def peek(self, n: int) -> bytes:
        while len(self._out) < n:
            more = self._more()
            if not more:
                break
            self._out = memoryview(bytes(self._out) + more)
        return bytes(self._out[:n])

    def close(self) -> None:
        self._out = memoryview(b"")


class Source:
    """The open file, seen through gzip when it starts with gzip's magic bytes."""

    def __init__(self, path: Location):
        self.path = path
        try:
            self.raw = open_binary(path)
            self.gzip = self.raw.peek(2)[:2] == _GZIP_MAGIC
        except OSError as err:
            raise SimError(f"{path}: cannot open: {err.strerror}") from None
        self.file = Gunzip(self.raw) if self.gzip else self.raw
        try:
            self.magic = self.file.peek(6)[:6]
        except (OSError, zlib.error) as err:
            self.close()
            raise SimError(f"{path}: not a readable gzip file ({err})") from None

    @property
    def cut(self) -> bool:
        """The compressed data ended before its end-of-stream marker."""
        return self.gzip and self.file.cut

    def close(self) -> None:
        self.file.close()
        self.raw.close()
