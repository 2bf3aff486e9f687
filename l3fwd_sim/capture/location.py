"""Where a capture is: a local path, or an fsspec URL (``s3://bucket/day1/port0.pcap``,
``gs://…``, ``file://…``, ``memory://…``) — what ``run --cluster`` reads from object
storage. URLs are kept as text (``Path`` would fold their ``//``); everything that opens,
sizes or lists a capture goes through here. fsspec is imported only for a URL."""
from __future__ import annotations

import io
import os
import stat
from pathlib import Path

from ..errors import SimError
from ..numbers import brief

Location = Path | str        # a local path, or a URL as text


def is_url(location) -> bool:
    return "://" in str(location)


def as_location(text: str | os.PathLike) -> Location:
    """A URL stays text; anything else is a ``Path``. A NUL character is refused here: no
    file name or URL holds one (the system calls would raise ValueError, not OSError)."""
    if "\x00" in str(text):
        raise SimError(f"{brief(str(text))}: a file name cannot hold a NUL character")
    return str(text) if is_url(text) else Path(text)


def _filesystem(url: str):
    try:
        import fsspec
    except ImportError:
        raise SimError(f"{url}: reading URLs needs fsspec: pip install 'l3fwd-sim[cluster]'") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as err:             # an unknown protocol, or its package missing
        raise SimError(f"{url}: {err}") from None


def open_binary(location: Location):
    """The capture opened for buffered binary reading (OSError as ``open`` raises it)."""
    if not is_url(location):
        return open(location, "rb")
    fs, path = _filesystem(str(location))
    try:
        if "memory" in ((fs.protocol,) if isinstance(fs.protocol, str) else fs.protocol):
            # fsspec's memory filesystem hands every opener the one stored file object (only
            # seeked back to 0): two --cluster threads reading an input would share its position
            return io.BufferedReader(io.BytesIO(fs.cat_file(path)), 1 << 20)
        return io.BufferedReader(fs.open(path, "rb"), 1 << 20)
    except FileNotFoundError:
        raise FileNotFoundError(2, "No such file or directory") from None


def size(location: Location) -> int:
    """Bytes in the capture (0 for a pipe)."""
    if not is_url(location):
        return Path(location).stat().st_size
    fs, path = _filesystem(str(location))
    return int(fs.size(path) or 0)


def identity(location: Location) -> tuple[object, bool]:
    """What the capture is, to tell when two inputs are one (a local file's device and
    inode), and whether it can be opened again at will (a regular file, any URL)."""
    if is_url(location):
        return str(location), True
    try:
        info = os.stat(location)
    except OSError as err:
        raise SimError(f"{location}: cannot open: {err.strerror}") from None
    return (info.st_dev, info.st_ino), stat.S_ISREG(info.st_mode)


def list_directory(location: Location) -> list[tuple[str, Location]] | None:
    """(name, location) of each entry of a directory, or None when it is not one."""
    if not is_url(location):
        path = Path(location)
        return [(p.name, p) for p in sorted(path.iterdir())] if path.is_dir() else None
    fs, path = _filesystem(str(location))
    if not fs.isdir(path):
        return None
    base = str(location).rstrip("/")
    return [(name, f"{base}/{name}") for name in sorted(Path(entry).name for entry in fs.ls(path, detail=False))]


def exists(location: Location) -> bool:
    """Whether there is something at ``location`` (a file, a pipe, a directory, an object)."""
    if not is_url(location):
        return os.path.exists(location)
    fs, path = _filesystem(str(location))
    return bool(fs.exists(path))


def join(location: Location, name: str) -> Location:
    return f"{str(location).rstrip('/')}/{name}" if is_url(location) else Path(location) / name


def put(local: Path, url: str) -> None:
    """Upload a local file to ``url`` (an object is written whole or not at all)."""
    fs, path = _filesystem(url)
    fs.makedirs(fs._parent(path), exist_ok=True)          # a filesystem's directories; object stores: nothing
    fs.put_file(str(local), path)


def remove(url: str, recursive: bool = False) -> None:
    fs, path = _filesystem(url)
    if fs.exists(path):
        fs.rm(path, recursive=recursive)


def make_directory(url: str) -> None:
    """What an object store needs of a directory before files go into it (often nothing)."""
    fs, path = _filesystem(url)
    fs.makedirs(path, exist_ok=True)
