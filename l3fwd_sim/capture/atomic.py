"""Outputs are written under a temporary name in their directory and renamed into place,
so an interrupted run never leaves a half-written file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


class AtomicFile:
    """``file`` is open for binary writing; ``commit()`` renames it to ``path``,
    ``abort()`` removes it. Permissions follow the umask like a plain ``open``."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        os.fchmod(fd, 0o666 & ~_umask())
        self._tmp = Path(tmp)
        self.file = os.fdopen(fd, "wb", buffering=1 << 20)   # big writes go straight through; small ones batch

    def commit(self) -> None:
        self.file.close()
        # Renaming over an existing file makes ext4 flush the new data first
        # (auto_da_alloc); removing the old one first keeps the commit cheap. The path
        # still only ever shows a complete file, or none for that instant.
        self.path.unlink(missing_ok=True)
        os.replace(self._tmp, self.path)

    def abort(self) -> None:
        self.file.close()
        self._tmp.unlink(missing_ok=True)
