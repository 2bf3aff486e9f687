"""Outputs are written under a temporary name in their directory and renamed into place,
so an interrupted run never leaves a half-written file."""
from __future__ import annotations

import os
import secrets
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, TypeVar

from ..errors import SimError

T = TypeVar("T")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def create_new(directory: Path, prefix: str, suffix: str, make: Callable[[Path], T]) -> tuple[Path, T]:
    """A new entry ``<prefix><random><suffix>`` in ``directory``, made by ``make(path)``
    (``os.mkdir``, or ``os.open`` with ``O_EXCL``: it raises FileExistsError when the name
    is taken), and what ``make`` returned. As ``mkstemp``/``mkdtemp`` do, with one thing
    more: a stop signal's handler raises at the first bytecode after the system call
    returns, before the caller knows the name; here that is still inside this function,
    which then removes what it made, so an interrupted run leaves nothing behind."""
    while True:
        path = Path(directory) / f"{prefix}{secrets.token_hex(6)}{suffix}"
        try:
            return path, make(path)
        except FileExistsError:
            continue
        except BaseException:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            raise


@contextmanager
def naming(path: Path, doing: str = "cannot write"):
    """An OSError inside (a full disk, an I/O error) becomes one line naming ``path``:
    a failed ``write()`` carries no file name of its own."""
    try:
        yield
    except OSError as err:
        raise SimError(f"{path}: {doing}: {err.strerror or err}") from None


class Committable:
    """The one shape of commit-or-abort: ``with output:`` commits it when the block ends
    normally and aborts it (no temporary file left) when anything is raised inside —
    Ctrl-C, a full disk — or by the commit itself."""

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is not None:
            self.abort()
            return
        try:
            self.commit()
        except BaseException:
            self.abort()
            raise


class _NamedFile:
    """The temporary file, buffered, with every failure reported under the output's name."""

    def __init__(self, file, path: Path):
        self._file = file
        self.path = path

    def write(self, data) -> None:
        with naming(self.path):
            self._file.write(data)

    def writelines(self, parts) -> None:
        with naming(self.path):
            self._file.writelines(parts)

    def flush(self) -> None:
        with naming(self.path):
            self._file.flush()

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        with naming(self.path):
            self._file.close()

    def discard(self) -> None:
        """Close without caring whether the buffered bytes can still be written."""
        try:
            self._file.close()                   # the descriptor is closed even when the flush fails
        except OSError:
            pass


def _open_new(path: Path):
    """A new file, its descriptor owned by a file object at once: however a signal
    interrupts what follows, the descriptor is closed once, by that object."""
    return os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), "wb",
                     buffering=1 << 20)                 # big writes go straight through; small ones batch


class AtomicFile(Committable):
    """``file`` is open for binary writing; ``commit()`` renames it to ``path``,
    ``abort()`` removes it. Permissions follow the umask like a plain ``open``. Every
    failure is one line naming ``path`` (SimError)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        with naming(self.path, "cannot create"):
            self._tmp, file = create_new(self.path.parent, f".{self.path.name}.", ".tmp", _open_new)
        try:
            os.fchmod(file.fileno(), 0o666 & ~_umask())
            self.file = _NamedFile(file, self.path)
        except BaseException:
            file.close()
            self._tmp.unlink(missing_ok=True)
            raise

    def commit(self) -> None:
        self.file.close()
        # Renaming over an existing file makes ext4 flush the new data first
        # (auto_da_alloc); removing the old one first keeps the commit cheap. The path
        # still only ever shows a complete file, or none for that instant.
        with naming(self.path, "cannot commit"):
            self.path.unlink(missing_ok=True)
            os.replace(self._tmp, self.path)

    def finish(self) -> Path:
        """Close the complete temporary file without putting it in place, and name it: for
        a caller that puts several files in place at once (``outdir.publish_files``).
        ``abort()`` still removes it for as long as it has not been moved."""
        self.file.close()
        return self._tmp

    def abort(self) -> None:
        """Remove the temporary file, whatever state it is in (never raises for it)."""
        self.file.discard()
        self._tmp.unlink(missing_ok=True)
