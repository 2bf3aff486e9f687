"""l3fwd-sim: DPDK's dpdk-l3fwd (and dpdk-testpmd) forwarding, simulated on pcap files.

Public API (each function returns plain dicts, as ``--json`` prints them)::

    run(RunOptions(inputs=find_inputs(["pcaps"]), outdir="out"))      # l3fwd-sim run
    testpmd_run(TestpmdOptions(inputs=..., outdir=..., forward_mode="macswap"))
    generate(GenerateOptions(outdir="gen", pattern="IPV4-4STREAMSX8"))  # l3fwd-sim generate
    compare("out-a", "out-b", CompareOptions(unordered=True))          # l3fwd-sim compare
    lookup(LookupOptions(keys=["198.18.1.7"]))                         # l3fwd-sim lookup
    Lpm4, Lpm6, ExactMatchTable       # rte_lpm / rte_lpm6 / rte_hash semantics
    SimError                          # bad input; str() is a one-line message

``generate`` and ``compare`` (and their options) are imported on first use: they load
scapy, which a forwarding run never needs.
"""
from .dataplane.inputs import find_inputs
from .errors import SimError
from .l3fwd.lookup import LookupOptions, lookup
from .l3fwd.run import RunOptions, run
from .tables.hash import ExactMatchTable
from .tables.lpm import Lpm4, Lpm6
from .testpmd.run import TestpmdOptions, testpmd_run

_LAZY = {"generate": "traffic.generate", "GenerateOptions": "traffic.generate",
         "compare": "diff.compare", "CompareOptions": "diff.compare"}

__all__ = ["run", "RunOptions", "find_inputs", "testpmd_run", "TestpmdOptions", "generate", "GenerateOptions",
           "compare", "CompareOptions", "lookup", "LookupOptions", "Lpm4", "Lpm6", "ExactMatchTable", "SimError"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _LAZY:
        from importlib import import_module
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
