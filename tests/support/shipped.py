"""The recorded data the tests ship with (``tests/data``, its README says what each set
is): the runs of real dpdk-l3fwd and dpdk-testpmd v26.07 over net_pcap (``golden``) and
tcpdump's test captures (``tcpdump``). Captures are kept gzip'd where that shrinks them
(``gzip -n -9``: identical captures stay identical blobs); :func:`expanded` lays a set
out once per test process exactly as it was recorded, so that every test reads the
bytes real DPDK read and wrote, and a gzip'd file is never mistaken for the capture."""
from __future__ import annotations

import atexit
import gzip
import shutil
import tempfile
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
_EXPANDED: dict[str, Path] = {}


def expanded(name: str) -> Path:
    """The data set ``tests/data/<name>`` with every ``*.gz`` file decompressed beside
    the rest, in a directory of this process's that is removed at exit."""
    if name not in _EXPANDED:
        source = DATA / name
        if not source.is_dir():
            raise FileNotFoundError(f"{source}: the shipped test data is missing from this checkout")
        root = Path(tempfile.mkdtemp(prefix=f"l3fwd-sim-{name}-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        for path in sorted(source.rglob("*")):
            if path.is_file():
                target = root / path.relative_to(source)
                target.parent.mkdir(parents=True, exist_ok=True)
                if path.suffix == ".gz":
                    with gzip.open(path) as packed, open(target.with_suffix(""), "wb") as out:
                        shutil.copyfileobj(packed, out)
                else:
                    shutil.copyfile(path, target)
        _EXPANDED[name] = root
    return _EXPANDED[name]
