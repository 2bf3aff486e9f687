"""``l3fwd-sim dpdk-testpmd [EAL options] -- [testpmd options]``."""
from __future__ import annotations

import os

from ..testpmd.main import dpdk_testpmd
from .verbatim import VerbatimCommand, print_launch


def main(argv: list[str]) -> None:
    """Run a non-interactive dpdk-testpmd v26.07 command line verbatim: ports from --vdev
    net_pcap (rx_pcap= inputs, tx_pcap= outputs), testpmd's options after --. As the real
    one, it forwards nothing without --no-flush-rx. L3FWD_SIM_STATS=FILE also writes the
    stats JSON."""
    stats, console = dpdk_testpmd(argv, os.environ.get("L3FWD_SIM_STATS"))
    print_launch(console, stats)


command = VerbatimCommand(options_metavar="[EAL options] -- [testpmd options]", name="dpdk-testpmd",
                          callback=main, help=main.__doc__,
                          short_help="Run a dpdk-testpmd command line verbatim (net_pcap vdevs).")
