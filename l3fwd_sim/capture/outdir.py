"""A run's output directory, all or nothing.

Every output of a run (``port<N>.pcap``, per-queue files, ``stats.json``, the trace) is
written into a hidden staging directory inside the output directory, on the same file
system. Only when the whole set is complete is it put in place: every target is checked
first, then the previous outputs are moved aside, the new ones renamed in, and our own
stale outputs of an earlier run (``port7.pcap`` of a wider portmask, an old trace) go
with the old set. If anything fails — a full disk, a signal, a target that is a
directory — the directory is left holding exactly what it held before, and a directory
the run created is removed again. Files whose names are not ours are never touched.
"""
from __future__ import annotations

import errno
import os
import re
import shutil
import tempfile
from pathlib import Path

from ..errors import SimError
from .atomic import create_new, naming
from .location import as_location, is_url, join, list_directory, make_directory, put, remove

# what a run, testpmd or generate writes: a later run's set replaces all of these
OWN_NAME = re.compile(r"port[0-9]+(?:\.q[0-9]+)?\.pcap(?:ng)?|stats\.json|trace\.jsonl|drops\.pcapng|report\.html")


def _make_directory(path: Path) -> None:
    os.mkdir(path, 0o700)


class OutputDir:
    """``with OutputDir(outdir, inputs) as out:`` write into ``out.stage``, then call
    ``out.publish()``. Leaving the block by an exception discards the staged files, and
    a message naming a staged file names the output instead."""

    def __init__(self, outdir: str | os.PathLike, inputs=()):
        self.path = as_location(outdir)
        if is_url(self.path):                 # object storage: staged here, uploaded by publish()
            self._created = []
            self.stage = Path(tempfile.mkdtemp(prefix="l3fwd-sim-", suffix=".stage"))
            self.scratch = join(self.path, f".{self.stage.name}.chunks")
            return
        self._created = make_output_directory(self.path)
        self.stage = None
        try:
            _refuse_inputs(self.path, inputs)
            with naming(self.path, "cannot write into the output directory"):
                self.stage, _ = create_new(Path(self.path), ".l3fwd-sim.", ".stage", _make_directory)
            self.scratch = self.stage / ".chunks"     # what every --cluster worker reaches: beside the outputs
        except BaseException:
            self.discard()
            raise

    def __enter__(self) -> "OutputDir":
        return self

    def __exit__(self, kind, err, tb) -> None:
        if err is None:
            return
        self.discard()
        if isinstance(err, SimError) and str(self.stage) in str(err):
            raise SimError(str(err).replace(str(self.stage), str(self.path))) from None

    def publish(self) -> None:
        """Put the staged set in place of the previous outputs (see the module's doc)."""
        try:
            self._upload() if is_url(self.path) else self._swap()
        finally:
            shutil.rmtree(self.stage, ignore_errors=True)

    def _upload(self) -> None:
        """An output URL: object stores have no rename, so once the set is complete its
        files are uploaded one by one (each object is written whole), then our stale
        objects removed. A failure part-way leaves some new objects beside old ones: the
        one-line error says so."""
        new = sorted(p.name for p in self.stage.iterdir() if not p.name.startswith("."))
        stale = [name for name, _ in list_directory(self.path) or [] if OWN_NAME.fullmatch(name) and name not in new]
        make_directory(str(self.path))
        for done, name in enumerate(new):
            with naming(join(self.path, name), f"cannot upload ({done} of {len(new)} outputs uploaded)"):
                put(self.stage / name, join(self.path, name))
        for name in stale:
            remove(join(self.path, name))

    def _swap(self) -> None:
        new = sorted(p.name for p in self.stage.iterdir() if not p.name.startswith("."))
        stale = sorted(p.name for p in self.path.iterdir() if OWN_NAME.fullmatch(p.name) and p.name not in new)
        for name in new + stale:
            target = self.path / name
            if target.is_dir() and not target.is_symlink():
                raise SimError(f"{target}: is a directory, so the outputs cannot replace it; nothing was changed")
        replaced = self.stage / ".replaced"
        replaced.mkdir()
        swap_in([(self.stage / name, self.path / name) for name in new] + [(None, self.path / name) for name in stale],
                lambda target: replaced / target.name)


    def discard(self) -> None:
        if self.stage is not None:
            shutil.rmtree(self.stage, ignore_errors=True)
        self._remove_created()

    def _remove_created(self) -> None:
        remove_created(self._created)


def swap_in(placements: list[tuple[Path | None, Path]], aside) -> list[Path]:
    """Put a set of files in place, all or nothing: every existing target is renamed to
    ``aside(target)`` (same file system), then every new file renamed onto its target
    (``None``: the target only goes). A failure — a full disk, a signal — renames back
    what was moved and ends in one line; the previous files are then where they were.
    Returns the moved-aside paths, for the caller to remove."""
    moved, placed, target = [], [], Path()
    try:
        for _, target in placements:
            if os.path.lexists(target):
                os.rename(target, aside(target))
                moved.append(target)
        for new, target in placements:
            if new is not None:
                os.rename(new, target)
                placed.append((new, target))
    except BaseException as err:
        _undo([(t, n) for n, t in placed] + [(aside(t), t) for t in moved])
        if isinstance(err, OSError):
            raise SimError(f"{target}: cannot put the output in place: {err.strerror}; nothing was changed") from None
        raise
    return [aside(t) for t in moved]


def publish_files(files: dict[Path, Path]) -> None:
    """Put each staged file (key) at its target path (value), as one all-or-nothing set
    whose targets may lie in several directories (``dpdk-l3fwd``'s ``tx_pcap`` files).
    Each staged file is first moved (or, across file systems, copied) beside its target
    under a hidden name, so that the final renames cannot fail for lack of space."""
    token = f".l3fwd-sim.{os.getpid()}"
    beside: list[tuple[Path, Path]] = []
    try:
        for staged, target in files.items():
            if target.is_dir() and not target.is_symlink():
                raise SimError(f"{target}: is a directory, so the output cannot replace it; nothing was changed")
            near = target.parent / f".{target.name}{token}.new"
            with naming(target, "cannot write the output"):
                try:
                    os.rename(staged, near)
                except OSError as err:
                    if err.errno != errno.EXDEV:
                        raise
                    shutil.copyfile(staged, near)
            beside.append((near, target))
        old = swap_in(beside, lambda target: target.parent / f".{target.name}{token}.old")
    except BaseException:
        for near, _ in beside:
            remove_quietly(near)
        raise
    for path in old:
        remove_quietly(path)


def remove_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass

def make_output_directory(path: Path) -> list[Path]:
    """Create ``path`` and missing parents; the ones created, deepest first (for
    :func:`remove_created`). A file, or anything else that is no directory, is refused."""
    if path.is_file():
        raise SimError(f"{path}: is a file, not a directory; give a directory for the outputs")
    if path.exists() and not path.is_dir():
        raise SimError(f"{path}: is not a directory; give a directory for the outputs")
    if path.is_symlink() and not path.exists():
        raise SimError(f"{path}: is a symbolic link to nothing; give a directory for the outputs")
    missing = [p for p in [path, *path.parents] if not p.exists()]
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise SimError(f"{path}: cannot create output directory: {err.strerror}") from None
    return missing


def remove_created(directories: list[Path]) -> None:
    """Remove the directories :func:`make_output_directory` created, deepest first, as
    long as they are empty (a failed output leaves nothing behind)."""
    for directory in directories:
        try:
            directory.rmdir()
        except OSError:
            break


def _refuse_inputs(outdir: Path, inputs) -> None:
    """An input named like an output in the output directory would be replaced or removed
    as a stale output: refuse it before anything is written."""
    # os.path.realpath, not Path.resolve(): a link to itself (port0.pcap -> port0.pcap) is
    # no input, and resolve() raises RuntimeError on its loop
    ours = {os.path.realpath(p) for p in outdir.iterdir() if OWN_NAME.fullmatch(p.name)}
    for path in inputs:
        if not is_url(path) and os.path.realpath(path) in ours:
            raise SimError(f"{path}: an input in the output directory, which the outputs would overwrite or "
                           "remove; choose another -o")


def _undo(renames: list[tuple[Path, Path]]) -> None:
    """Rename back what was renamed, ignoring what cannot be (best effort after a failure)."""
    for source, target in renames:
        try:
            os.rename(source, target)
        except OSError:
            pass
