"""``l3fwd-sim dpdk-l3fwd [EAL options] -- [l3fwd options]``."""
from __future__ import annotations

import os

from ..l3fwd.main import dpdk_l3fwd
from ..l3fwd.routing import MISSING_RULE_FILES
from .verbatim import VerbatimCommand, print_launch, split_release


def main(argv: list[str]) -> None:
    """Run a dpdk-l3fwd command line verbatim: ports from --vdev net_pcap (rx_pcap=
    inputs, tx_pcap= outputs), lcores from -l/--lcores/-c, l3fwd's options after --.
    --dpdk 22.11|23.11|24.11|25.11|26.07 first (or L3FWD_SIM_DPDK) picks the release
    (default 26.07). L3FWD_SIM_PIPELINE=simple|multi picks the build (default multi,
    x86); L3FWD_SIM_STATS=FILE also writes the stats JSON."""
    dpdk, argv = split_release(argv)
    launch = dpdk_l3fwd(argv, os.environ.get("L3FWD_SIM_PIPELINE", "multi"), os.environ.get("L3FWD_SIM_STATS"), dpdk)
    print_launch(launch.console, launch.stats, (MISSING_RULE_FILES,))


command = VerbatimCommand(options_metavar="[--dpdk VERSION] [EAL options] -- [l3fwd options]", name="dpdk-l3fwd",
                          callback=main, help=main.__doc__,
                          short_help="Run a dpdk-l3fwd command line verbatim (net_pcap vdevs).")
