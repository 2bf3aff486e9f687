"""l3fwd-sim: DPDK's dpdk-l3fwd forwarding, simulated on pcap files.

Public API::

    run(RunOptions(...)) -> dict      # forward, write port<N>.pcap + stats.json
    find_inputs(["dir", "0=file.pcap"]) -> {port: path}
    Lpm4, Lpm6                        # rte_lpm / rte_lpm6 semantics
    SimError                          # bad input; str() is a one-line message
"""
from .errors import SimError
from .lpm import Lpm4, Lpm6
from .simulator import RunOptions, find_inputs, run

__all__ = ["RunOptions", "run", "find_inputs", "Lpm4", "Lpm6", "SimError"]
__version__ = "0.1.0"
