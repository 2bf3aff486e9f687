"""``l3fwd-sim dpdk-l3fwd-graph [EAL options] -- [l3fwd-graph options]``."""
from __future__ import annotations

import os

from ..graph.main import dpdk_l3fwd_graph
from .verbatim import VerbatimCommand, print_launch, split_release


def main(argv: list[str]) -> None:
    """Run a dpdk-l3fwd-graph command line verbatim (DPDK v26.07's examples/l3fwd-graph):
    ports from --vdev net_pcap (one rx_pcap per RX queue, one tx_pcap per EAL lcore),
    the main lcore only prints statistics, worker graph K sends on TX queue K.
    L3FWD_SIM_STATS=FILE also writes the stats JSON (with each node's counters). Only
    v26.07 is modelled: --dpdk (or L3FWD_SIM_DPDK) naming another release is refused."""
    dpdk, argv = split_release(argv)
    launch = dpdk_l3fwd_graph(argv, os.environ.get("L3FWD_SIM_STATS"), dpdk)
    print_launch(launch.console, launch.stats)


command = VerbatimCommand(options_metavar="[--dpdk 26.07] [EAL options] -- [l3fwd-graph options]", name="dpdk-l3fwd-graph",
                          callback=main, help=main.__doc__,
                          short_help="Run a dpdk-l3fwd-graph command line verbatim.")
