"""l3fwd's event mode (``--mode eventdev``, ``l3fwd_event.c``) over net_pcap: it never
forwards a packet, and what it does instead is modelled — its refusals, in their order,
with their messages (event_mode.md, measured on real v26.07).

Event mode sets its ports up in ``l3fwd_eth_dev_port_setup``, not in poll mode's port
loop, and asks every port for RX checksum offload whatever ``--relax-rx-offload`` says;
net_pcap offers none, so ``rte_eth_dev_configure`` fails for the first enabled port.
Before that: the option checks (``args.py``), the rule files (read first of all), and the
event device (``--vdev event_sw0``). Even with that one offload relaxed by a patch, event
mode over net_pcap installs no software packet-type parser (that is per poll-mode RX
queue), so it would be no reference for forwarding either.
"""
from __future__ import annotations

from ..dataplane.ports import PortConfig
from ..eal.args import Eal
from ..eal.net_pcap import CONFIGURE_EINVAL
from ..errors import SimError
from .args import L3fwdArgs
from .routing import load_routes

ENODEV = -19
EVENT_MODE_REFUSED = ("event mode asks every port for RX checksum offload whatever --relax-rx-offload says, and "
                      "net_pcap has none: real l3fwd cannot run --mode eventdev over net_pcap (l3fwd-sim models poll "
                      "mode)")


def event_mode_setup(args: L3fwdArgs, eal: Eal) -> None:
    """``main()`` from ``read_config_files`` to the event ports' configure, as event mode
    runs it: always a refusal."""
    load_routes(args.lookup, PortConfig(args.portmask, args.eth_dest), args.rule_ipv4, args.rule_ipv6, args.ipv6)
    if not eal.eventdevs:
        raise SimError("--mode eventdev: No Eventdev found (add --vdev event_sw0)")
    enabled = [port for port in range(len(eal.vdevs)) if args.portmask >> port & 1]
    if not enabled:                            # no port configured: the Tx adapter set-up panics (SIGABRT)
        raise SimError(f"--mode eventdev: Failed to get Tx adapter port id: {ENODEV} (real l3fwd aborts: -p "
                       f"0x{args.portmask:x} names no existing port){eal.probe_note()}")
    raise SimError(f"Cannot configure device: err={CONFIGURE_EINVAL}, port={enabled[0]} ({EVENT_MODE_REFUSED})")
