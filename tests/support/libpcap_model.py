"""A small model of what libpcap 1.10 hands net_pcap, written from libpcap's documented
behaviour (``sf-pcap.c``, ``sf-pcapng.c``, pcap-savefile(5)) and the capture_edges golden
runs of real dpdk-l3fwd — not from l3fwd-sim's readers — and a hypothesis strategy of
captures built with the edits users' captures have: records cut by a snaplen, records
longer than the file's snaplen, a file cut inside its last record, other link types,
pcapng interface sequences (a second interface of another link type or snaplen, a new
section, packets naming interfaces that were never described), gzip.

:func:`libpcap_capture` draws ``(file bytes, Expected)``: what a run of the file through
net_pcap receives — each record libpcap reads, as (captured length, bytes), and how many
reads fail (``pcap_next_ex`` returning -1: net_pcap's RX errors) — or that libpcap cannot
open it at all."""
from __future__ import annotations

import gzip
import random
from dataclasses import dataclass, field

from handmade import MAX_CAPLEN, Ng, classic
from hypothesis import strategies as st

ETHERNET = 1
# LINKTYPE_ -> DLT_ where they differ on Linux (pcap-common.c's linktype_to_dlt)
DLT = {100: 11, 101: 12, 102: 15, 103: 16, 106: 19}
LINKTYPES = (1, 1, 1, 0, 9, 101, 104, 113, 228, 229, 276, 147)      # 147: a user type nobody converts
MBUF = 2048                                                          # net_pcap's RX drop above it


def adjusted(snaplen: int) -> int:
    """``pcap_adjust_snapshot``: 0 or too large means the maximum."""
    return snaplen if 0 < snaplen <= MAX_CAPLEN else MAX_CAPLEN


@dataclass
class Expected:
    """What net_pcap receives of a capture."""
    opens: bool = True                                          # False: pcap_open_offline fails (probe fails)
    records: list[tuple[int, bytes]] = field(default_factory=list)   # (caplen, frame) of each record read
    errors: int = 0                                             # packets whose read fails: net_pcap's RX errors
    cut: bool = False                                           # the file ends inside its last record
    beyond: bool = False        # run converts a link type, reads gzip or an interface libpcap rejects

    @property
    def received(self) -> list[tuple[int, bytes]]:
        """The records an mbuf holds (the rest: net_pcap's RX drop of frames over 2048)."""
        return [(cap, data) for cap, data in self.records if cap <= MBUF]


def _frame(rng: random.Random) -> bytes:
    size = rng.choice([14, 20, 34, 54, 60, 64, 100, 300, 1514, 2048, 2049, 3000])
    return rng.randbytes(size)


@st.composite
def classic_capture(draw) -> tuple[bytes, Expected]:
    rng = random.Random(draw(st.integers(0, 2**32)))
    snaplen = draw(st.sampled_from([0, 40, 64, 96, 1500, 65535, MAX_CAPLEN, MAX_CAPLEN + 1, 2**32 - 1]))
    linktype = draw(st.sampled_from(LINKTYPES))
    records, want = [], Expected(beyond=linktype not in (ETHERNET, 147))
    for i in range(draw(st.integers(0, 12))):
        frame = _frame(rng)
        stored = frame[:rng.choice([len(frame), len(frame), 54, 96])]            # tcpdump -s: cut when captured
        records.append((stored, len(frame), 10**18 + i))
        cap = min(len(stored), adjusted(snaplen))                                # sf-pcap.c: cut to the snaplen
        want.records.append((cap, stored[:cap]))
    data = classic(records, draw(st.sampled_from("<>")), draw(st.booleans()), linktype, snaplen)
    if records and draw(st.booleans()):                                  # the file ends inside its last record
        data = data[:len(data) - draw(st.integers(1, len(records[-1][0]) + 15))]
        want.records.pop()
        want.cut = True
    return data, want


@st.composite
def pcapng_capture(draw) -> tuple[bytes, Expected]:
    rng = random.Random(draw(st.integers(0, 2**32)))
    ng = Ng(draw(st.sampled_from("<>")))
    want = Expected()
    out = [ng.shb()]
    first = None                        # (linktype, adjusted snaplen) of the file's first interface
    described = 0                       # interfaces libpcap added in this section (ifcount)
    given = 0                           # IDBs in this section, as the file numbers them
    for _ in range(draw(st.integers(1, 20))):
        kind = draw(st.sampled_from(["idb", "epb", "epb", "epb", "pb", "spb", "shb"]))
        if first is None and kind != "idb":
            kind = "idb"                # a packet before any IDB: libpcap refuses to open (not drawn here)
        if kind == "shb":
            out.append(ng.shb())
            described = given = 0
        elif kind == "idb":
            linktype = draw(st.sampled_from((1, 1, 1, 101, 113)))
            snaplen = draw(st.sampled_from([0, 0, 128, 65535, MAX_CAPLEN]))
            out.append(ng.idb(linktype, snaplen))
            given += 1
            if first is None:
                first = (linktype, adjusted(snaplen))
                described += 1
            elif DLT.get(first[0], first[0]) == linktype and adjusted(snaplen) == first[1]:
                described += 1
            else:                       # rejected (a read error, but no packet): the next IDB takes its number
                want.beyond = True
            if linktype != ETHERNET:
                want.beyond = True
        else:
            frame = _frame(rng)
            ifid = 0 if kind == "spb" else rng.randrange(given + 1)       # now and then one never described
            if kind == "spb":
                cap = min(len(frame), first[1])
                out.append(ng.spb(frame[:cap], len(frame)))
            else:
                stored = frame[:rng.choice([len(frame), 60, 200])]
                cap = len(stored)
                out.append(ng.epb(ifid, 10**15, stored, len(frame)) if kind == "epb" else
                           ng.pb(ifid, 10**15, stored, len(frame)))
            if ifid >= described or (kind != "spb" and cap > first[1]):
                want.errors += 1        # sf-pcapng.c: no IDB for it, or captured beyond the snaplen
            else:
                want.records.append((cap, frame[:cap]))
    return b"".join(out), want


@st.composite
def libpcap_capture(draw) -> tuple[bytes, Expected]:
    data, want = draw(st.one_of(classic_capture(), pcapng_capture()))
    if draw(st.integers(0, 5)) == 0:    # gzip: libpcap's "unknown file format"
        return gzip.compress(data, mtime=0), Expected(opens=False, beyond=True)
    return data, want
