"""How a reader hands a capture's records over: three ways, one per kind of caller.

=============  =====================================  =====================================
reading        who reads so                           what it does beyond libpcap
=============  =====================================  =====================================
``ETHERNET``   ``run``, ``testpmd``: the conveniences  gzip'd files read; other link types
               a simulator can offer                  converted to Ethernet; an Ethernet
                                                      FCS removed; pcapng interfaces that
                                                      differ from the first one kept
``AS_STORED``  ``compare``: the bytes as they are     gzip'd files read; every link type
                                                      as stored; pcapng interfaces kept
``LIBPCAP``    ``dpdk-l3fwd``/``dpdk-testpmd``        nothing: what libpcap 1.10 hands
               verbatim: what real net_pcap gets      net_pcap, as the capture_edges golden
                                                      runs show it
=============  =====================================  =====================================

``LIBPCAP`` (``sf-pcap.c``, ``sf-pcapng.c``): a gzip'd file does not open ("unknown file
format"); the link type is never looked at (net_pcap takes every record as an Ethernet
frame) and an FCS stays in the frame; a pcapng interface whose link type or snapshot
length differs from the file's first interface is rejected, and every packet that names
it (or any interface libpcap has no description of) is a read error: ``pcap_next_ex``
returns -1 and net_pcap counts an RX error (:attr:`PcapReader.rx_errors
<l3fwd_sim.capture.pcap.PcapReader.rx_errors>`).

Where ``ETHERNET`` goes beyond libpcap, the reader lists it in ``conveniences``: one line
each, saying what real DPDK would have done, so that a run can say its outputs are not
what real l3fwd transmits.
"""
from __future__ import annotations

import enum

from ..errors import SimError


class Reading(enum.Enum):
    ETHERNET = "ethernet"
    AS_STORED = "as stored"
    LIBPCAP = "libpcap"

    @property
    def converts(self) -> bool:
        """Other link types become Ethernet (or are refused)."""
        return self is Reading.ETHERNET

    @property
    def strips_fcs(self) -> bool:
        """An Ethernet FCS the file's header announces is removed."""
        return self is not Reading.LIBPCAP


class NotACapture(SimError):
    """``pcap_open_offline`` fails on a file that opens but is no capture libpcap reads
    (gzip'd, another format, a damaged header): in a verbatim command line, net_pcap's
    probe of that port fails (``eal/net_pcap.py``). ``reason`` is libpcap's own text."""

    def __init__(self, path, reason: str, detail: str):
        super().__init__(f"{path}: {detail}")
        self.reason = reason
