"""l3fwd-sim: DPDK's dpdk-l3fwd (and dpdk-l3fwd-graph, dpdk-testpmd) forwarding, simulated on pcap files.

Public API (each function returns plain dicts, as ``--json`` prints them)::

    run(RunOptions(inputs=find_inputs(["pcaps"]), outdir="out"))      # l3fwd-sim run
    testpmd_run(TestpmdOptions(inputs=..., outdir=..., forward_mode="macswap"))
    generate(GenerateOptions(outdir="gen", pattern="IPV4-4STREAMSX8"))  # l3fwd-sim generate
    compare("out-a", "out-b", CompareOptions(unordered=True))          # l3fwd-sim compare
    lookup(LookupOptions(keys=["198.18.1.7"]))                         # l3fwd-sim lookup
    dpdk_l3fwd(["-l", "0", "--vdev", "net_pcap0,rx_pcap=a,tx_pcap=b", "--", ...])   # l3fwd-sim dpdk-l3fwd
    dpdk_testpmd([...])                                                # l3fwd-sim dpdk-testpmd
    run_graph(GraphOptions(inputs={0: "pcaps/port0.pcap"}, outdir="g"))  # l3fwd-sim run --app graph
    dpdk_l3fwd_graph([...])                                            # l3fwd-sim dpdk-l3fwd-graph
    write_report("out"); write_compare_report(compare(...), "c.html")  # report.html (l3fwd-sim report)
    Lpm4, Lpm6, ExactMatchTable       # rte_lpm / rte_lpm6 / rte_hash semantics
    SimError                          # bad input; str() is a one-line message

Each name is imported on first use (``l3fwd_sim.run`` loads the forwarding code, not
scapy, Dask, Bokeh or the traffic generator), so that importing the package, and
starting the command line, is quick.
"""
from importlib import import_module

_HOMES = {"run": "l3fwd.run", "RunOptions": "l3fwd.run", "find_inputs": "dataplane.inputs",
          "testpmd_run": "testpmd.run", "TestpmdOptions": "testpmd.run",
          "generate": "traffic.generate", "GenerateOptions": "traffic.generate",
          "compare": "diff.compare", "CompareOptions": "diff.compare",
          "lookup": "l3fwd.lookup", "LookupOptions": "l3fwd.lookup",
          "dpdk_l3fwd": "l3fwd.main", "dpdk_testpmd": "testpmd.main",
          "run_graph": "graph.run", "GraphOptions": "graph.run", "dpdk_l3fwd_graph": "graph.main",
          "write_report": "report", "write_compare_report": "report",
          "Lpm4": "tables.lpm", "Lpm6": "tables.lpm", "ExactMatchTable": "tables.hash", "SimError": "errors"}

__all__ = ["run", "RunOptions", "find_inputs", "testpmd_run", "TestpmdOptions", "generate", "GenerateOptions",
           "compare", "CompareOptions", "lookup", "LookupOptions", "dpdk_l3fwd", "dpdk_testpmd",
           "run_graph", "GraphOptions", "dpdk_l3fwd_graph", "write_report", "write_compare_report", "Lpm4", "Lpm6", "ExactMatchTable", "SimError"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _HOMES:
        value = getattr(import_module(f".{_HOMES[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted([*globals(), *__all__])
