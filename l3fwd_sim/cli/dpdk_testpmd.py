"""``l3fwd-sim dpdk-testpmd [EAL options] -- [testpmd options]``."""
from __future__ import annotations

import os

from ..testpmd.main import dpdk_testpmd
from .verbatim import VerbatimCommand, print_launch, split_release


def main(argv: list[str]) -> None:
    """Run a non-interactive dpdk-testpmd command line verbatim: ports from --vdev
    net_pcap (rx_pcap= inputs, tx_pcap= outputs), testpmd's options after --. As the real
    one, it forwards nothing without --no-flush-rx. --dpdk VERSION first (or
    L3FWD_SIM_DPDK) picks the release (default 26.07). L3FWD_SIM_STATS=FILE also writes
    the stats JSON."""
    dpdk, argv = split_release(argv)
    stats, console = dpdk_testpmd(argv, os.environ.get("L3FWD_SIM_STATS"), dpdk)
    print_launch(console, stats)


command = VerbatimCommand(options_metavar="[--dpdk VERSION] [EAL options] -- [testpmd options]", name="dpdk-testpmd",
                          callback=main, help=main.__doc__,
                          short_help="Run a dpdk-testpmd command line verbatim (net_pcap vdevs).")
