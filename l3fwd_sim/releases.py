"""The DPDK releases l3fwd-sim models, and what each changes: one table, read where
behaviour differs (reference: versions.md, measured by running each release's real
dpdk-l3fwd and dpdk-testpmd over net_pcap on the golden inputs).

A profile is an LTS line's newest stable point release as measured — 22.11 (22.11.11,
Debian 12), 23.11 (23.11.7), 24.11 (24.11.6; its burst options are 24.11.4's and later),
25.11 (25.11.2) — or v26.07, the default. Each row of :data:`CHANGES` is one behaviour
that a DPDK commit changed, with the first release that has the new behaviour; a place
that differs asks ``release.has(KEY)``. Everything not in the table is the same in
every release (LPM/EM/FIB forwarding, RFC 1812, MAC rewrite, several lcores, testpmd's
engines).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .errors import SimError

RELEASES = ("22.11", "23.11", "24.11", "25.11", "26.07")
DEFAULT = "26.07"
ENVIRONMENT = "L3FWD_SIM_DPDK"


@dataclass(frozen=True)
class Change:
    """One behaviour a DPDK commit changed: releases from ``since`` on have it."""
    since: str
    commit: str
    what: str


CHANGES = {
    # l3fwd
    "acl_arrival_order": Change("24.11", "aa7c6077c1 (v24.07)",
                                "ACL sends a burst's packets in arrival order; before, each RX burst's IPv4 "
                                "packets went out before its IPv6 ones"),
    "relax_rx_offload_option": Change("23.11", "4b01cabfb0 (v23.11)",
                                      "--relax-rx-offload exists; 22.11 does not know it (its goldens come from a "
                                      "build that always relaxes the Rx offloads, as on a NIC that has them)"),
    "disable_rss_option": Change("23.11", "f9800c32b4 (v23.11)", "--disable-rss exists"),
    "burst_options": Change("24.11", "d5c4897ecf (v24.11), 79375d1015 (v25.11, in 24.11.4)",
                            "--rx-burst and --tx-burst exist, with the 'L3FWD: Using Rx burst' console line"),
    "mbcache_option": Change("24.11", "d9f26e52a5 (v24.11)", "--mbcache exists"),
    "eth_link_speed_option": Change("25.11", "2001c8eaf4 (v25.11)", "--eth-link-speed exists"),
    # net_pcap
    "jumbo_dropped_on_rx": Change("26.07", "net/pcap f28abe77f5 (v26.07)",
                                  "a frame longer than the 2048-byte mbuf is dropped on receive; before, net_pcap "
                                  "chained it, l3fwd forwarded it and net_pcap wrote it whole (cut to 16128 "
                                  "captured bytes above that)"),
    "max_pkt_len_2048": Change("26.07", "net/pcap 3c02489e8b (v26.07)",
                               "--max-pkt-len up to 2048 starts; before, anything above 1518 asks for the Tx "
                               "offload MULTI_SEGS, which net_pcap lacked: Cannot configure device"),
}

# an option a release lacks -> the row that added it
OPTION_ROWS = {"relax-rx-offload": "relax_rx_offload_option", "disable-rss": "disable_rss_option",
               "rx-burst": "burst_options", "tx-burst": "burst_options", "mbcache": "mbcache_option",
               "eth-link-speed": "eth_link_speed_option"}

CHAINED_TX_CAPLEN = 16128     # RTE_ETH_PCAP_SNAPLEN before v26.07: a chained frame's record holds at most this
MULTI_SEG_MAX_PKT_LEN = 1518  # above it, l3fwd before v26.07 asks for RTE_ETH_TX_OFFLOAD_MULTI_SEGS


@dataclass(frozen=True)
class Release:
    """A release profile: what it does, by the rows of :data:`CHANGES`."""
    name: str

    def has(self, key: str) -> bool:
        """Whether this release has the behaviour (or option) of row ``key``."""
        return RELEASES.index(self.name) >= RELEASES.index(CHANGES[key].since)

    def knows(self, option: str) -> bool:
        """Whether l3fwd of this release takes ``--option`` (without its dashes)."""
        return option not in OPTION_ROWS or self.has(OPTION_ROWS[option])

    @property
    def label(self) -> str:
        """How stats, traces and reports name it."""
        return f"DPDK {self.name}"


def release(name: str | None = None) -> Release:
    """The profile ``name`` (None: ``L3FWD_SIM_DPDK``, else the default); one line if unknown."""
    chosen = name if name is not None else os.environ.get(ENVIRONMENT) or DEFAULT
    if chosen not in RELEASES:
        source = "--dpdk" if name is not None else ENVIRONMENT
        raise SimError(f"{source} {chosen!r}: choose one of {', '.join(RELEASES)} (DPDK releases modelled)")
    return Release(chosen)
