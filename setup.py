"""The compiled twins' one build description: the extension ``l3fwd_sim._compiled``, bound
by cffi (API mode, out of line) from each package's kernels — the ``.c`` files beside the
Python they twin — and the ``twins.h`` that declares them, which cffi reads as it is.
It is optional: without a C compiler the install goes on and the numpy stages run
(``l3fwd_sim/compiled.py``). The Python face of each package's twins, with its checks,
is that package's ``twins.py``."""
import re
from pathlib import Path

from cffi import FFI
from setuptools import setup

PACKAGE = Path("l3fwd_sim")
# Lower packages first: a package's twins.h includes only those of packages below it.
KERNELS = {"capture": ["records.c", "pcapng.c"],
           "tables": ["acl.c"],
           "dataplane": ["polling.c", "rss.c", "stats.c", "tx.c", "lcore.c", "jsonlines.c"],
           "l3fwd": ["multi.c", "simple.c", "trace.c"],
           "graph": ["walks.c"]}
HEADERS = ["capture/records.h", "tables/lpm.h", "tables/hash.h", "l3fwd/path.h"]    # the kernels' own inline parts
INTEGER_DEFINE = re.compile(r"#define \w+ \d+\b")


def declarations(header: Path) -> str:
    """``header`` as cffi's ``cdef`` takes it: of the preprocessor only integer constants."""
    return "\n".join(m.group(0) if (m := INTEGER_DEFINE.match(line)) else "" if line.startswith("#") else line
                     for line in header.read_text().splitlines())


def twins() -> FFI:
    ffi = FFI()
    for package in KERNELS:
        ffi.cdef(declarations(PACKAGE / package / "twins.h"))
    ffi.set_source("l3fwd_sim._compiled", "".join(f'#include "{package}/twins.h"\n' for package in KERNELS),
                   sources=[str(PACKAGE / package / c) for package, files in KERNELS.items() for c in files],
                   depends=[str(PACKAGE / h) for h in HEADERS] + [str(PACKAGE / p / "twins.h") for p in KERNELS],
                   include_dirs=[str(PACKAGE)], extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wno-unused-parameter"])
    return ffi


extension = twins().distutils_extension("build/cffi", verbose=False)
extension.optional = True
setup(ext_modules=[extension])
