"""The compiled twins: one C extension, built at install from the .c files that live
beside the Python modules they twin (l3fwd_sim/compiled.h lists them). It is optional:
without a C compiler the install goes on and the numpy stages run (compiled.py)."""
from setuptools import Extension, setup

SOURCES = ["l3fwd_sim/compiled.c", "l3fwd_sim/capture/records.c", "l3fwd_sim/capture/pcapng.c", "l3fwd_sim/tables/acl.c",
           "l3fwd_sim/l3fwd/multi.c", "l3fwd_sim/l3fwd/simple.c",
           "l3fwd_sim/dataplane/lcore.c", "l3fwd_sim/dataplane/polling.c", "l3fwd_sim/dataplane/rss.c",
           "l3fwd_sim/dataplane/stats.c", "l3fwd_sim/dataplane/tx.c", "l3fwd_sim/dataplane/jsonlines.c",
           "l3fwd_sim/l3fwd/trace.c", "l3fwd_sim/graph/walks.c"]
HEADERS = ["l3fwd_sim/compiled.h", "l3fwd_sim/capture/records.h", "l3fwd_sim/tables/lpm.h", "l3fwd_sim/l3fwd/path.h",
           "l3fwd_sim/tables/hash.h"]

setup(ext_modules=[Extension("l3fwd_sim._compiled", SOURCES, depends=HEADERS, optional=True,
                             extra_compile_args=["-O2", "-std=c11", "-Wall", "-Wno-unused-parameter"])])
