"""Captures written by hand with ``struct``: classic pcap records and pcapng blocks in
either byte order, and a hypothesis strategy of whole pcapng files with the records a
reader must find in them. What the tests put in is the oracle: nothing here uses the
package."""
from __future__ import annotations

import random
import struct

from hypothesis import strategies as st

MAX_CAPLEN = 262144                    # libpcap's MAXIMUM_SNAPLEN


def pad4(data: bytes) -> bytes:
    return data + bytes(-len(data) % 4)


def classic(records, order="<", nano=True, linktype=1, snaplen=MAX_CAPLEN) -> bytes:
    """records: (frame, wirelen, ts_ns) or (frame, wirelen, ts_ns, caplen_field)."""
    out = [struct.pack(order + "IHHiIII", 0xA1B23C4D if nano else 0xA1B2C3D4, 2, 4, 0, 0, snaplen, linktype)]
    for frame, wire, ts, *cap in records:
        sec, frac = divmod(ts, 10**9)
        out.append(struct.pack(order + "IIII", sec, frac if nano else frac // 1000,
                               cap[0] if cap else len(frame), wire) + frame)
    return b"".join(out)


class Ng:
    """pcapng blocks in one byte order."""

    def __init__(self, order="<"):
        self.o = order

    def opt(self, code: int, value: bytes) -> bytes:
        return struct.pack(self.o + "HH", code, len(value)) + pad4(value)

    def opts(self, *options: bytes) -> bytes:
        return b"".join(options) + (struct.pack(self.o + "HH", 0, 0) if options else b"")

    def block(self, btype: int, body: bytes) -> bytes:
        length = 12 + len(pad4(body))
        return struct.pack(self.o + "II", btype, length) + pad4(body) + struct.pack(self.o + "I", length)

    def shb(self, major=1, minor=0, options=()) -> bytes:
        body = struct.pack(self.o + "IHHq", 0x1A2B3C4D, major, minor, -1) + self.opts(*options)
        return self.block(0x0A0D0D0A, body)

    def idb(self, linktype=1, snaplen=0, tsresol=None, tsoffset=None, name=None, options=()) -> bytes:
        named = []
        if name is not None:
            named.append(self.opt(2, name.encode()))
        if tsresol is not None:
            named.append(self.opt(9, bytes([tsresol])))
        if tsoffset is not None:
            named.append(self.opt(14, struct.pack(self.o + "q", tsoffset)))
        named += [*options, self.opt(12, b"Linux")]          # if_os: an option the reader skips
        return self.block(1, struct.pack(self.o + "HHI", linktype, 0, snaplen) + self.opts(*named))

    def epb(self, ifid: int, ticks: int, data: bytes, wire=None, cap=None, comment=False, options=()) -> bytes:
        body = struct.pack(self.o + "IIIII", ifid, ticks >> 32, ticks & 0xFFFFFFFF,
                           len(data) if cap is None else cap, len(data) if wire is None else wire) + pad4(data)
        if comment:
            options = [self.opt(1, b"a comment"), self.opt(2, struct.pack(self.o + "I", 1)), *options]
        return self.block(6, body + self.opts(*options))

    def pb(self, ifid: int, ticks: int, data: bytes, wire=None) -> bytes:
        body = struct.pack(self.o + "HHIIII", ifid, 0, ticks >> 32, ticks & 0xFFFFFFFF, len(data),
                           len(data) if wire is None else wire)
        return self.block(2, body + pad4(data))

    def spb(self, data: bytes, wire=None) -> bytes:
        return self.block(3, struct.pack(self.o + "I", len(data) if wire is None else wire) + pad4(data))


# if_tsresol option value -> ticks per second (None: no option, µs)
UNITS = {None: 10**6, 3: 10**3, 6: 10**6, 9: 10**9, 12: 10**12, 0x80 | 10: 2**10, 0x80 | 20: 2**20,
         0x80 | 32: 2**32}


def to_ns(ticks: int, units: int, tsoffset: int = 0) -> int:
    """libpcap's scaling: whole seconds plus the fraction, rounded down, in ns."""
    return ticks * 10**9 // units + tsoffset * 10**9


@st.composite
def pcapng_files(draw, linktypes=(1,)):
    """(file bytes, expected [(frame, wirelen, ts_ns)]): sections in both byte orders,
    several interfaces (if_tsresol, if_tsoffset, snaplen), EPB / PB / SPB, skipped blocks.
    Interfaces of a link type other than Ethernet (``linktypes``) are converted by the
    reader, so their expected records are not listed: give those only to a differential
    test."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    out, want = [], []
    for _ in range(draw(st.integers(1, 3))):
        ng = Ng(draw(st.sampled_from("<>")))
        out.append(ng.shb(minor=draw(st.sampled_from([0, 2]))))
        ifaces = []
        for _ in range(draw(st.integers(0, 3))):
            tsresol = draw(st.sampled_from(list(UNITS)))
            tsoffset = draw(st.sampled_from([None, 0, 7, 1000]))
            snaplen = draw(st.sampled_from([0, 0, 65535, 40]))
            linktype = draw(st.sampled_from(linktypes))
            out.append(ng.idb(linktype, snaplen, tsresol, tsoffset, rng.choice([None, "eth0"])))
            ifaces.append((UNITS[tsresol], tsoffset or 0, snaplen or MAX_CAPLEN))
        ticks = {}
        for _ in range(draw(st.integers(0, 25))):
            kind = draw(st.sampled_from(["epb", "epb", "epb", "pb", "spb", "skip"]))
            if kind == "skip" or not ifaces:
                btype = rng.choice([4, 5, 10, 0x00000BAD, 0x40000BAD, 0x12345])
                out.append(ng.block(btype, rng.randbytes(rng.randrange(0, 40))))
                continue
            data = rng.randbytes(rng.choice([0, 1, 13, 14, 39, 40, 41, 60, 64, 65, 200]))
            if kind == "spb":
                units, off, snap = ifaces[0]
                wire = len(data)
                cap = min(wire, snap)
                out.append(ng.spb(data[:cap], wire))
                want.append((data[:cap], wire, to_ns(0, units, off)))
                continue
            ifid = rng.randrange(len(ifaces))
            units, off, snap = ifaces[ifid]
            # from 1970 + a few days (64-bit picosecond ticks end in 1970) to 2020, up to 5 s apart
            base = min(1_600_000_000, 2**62 // units // 10**9 * 10**9)
            ticks[ifid] = ticks.get(ifid, base * units) + rng.randrange(5 * units)
            wire = len(data) + rng.choice([0, 0, 4, 1000])
            if kind == "pb":
                out.append(ng.pb(ifid, ticks[ifid], data, wire))
            else:
                out.append(ng.epb(ifid, ticks[ifid], data, wire, comment=rng.random() < 0.3))
            want.append((data[:snap], wire, to_ns(ticks[ifid], units, off)))    # libpcap: caplen cut to snaplen
    return b"".join(out), want


def head_merge(queues: list[list]) -> list[tuple[int, int]]:
    """The merge of a port's TX queues (``queues[k]``: queue k's records, each with its
    time stamp second), by brute force: (queue, place) of each record out, each step the
    earliest head, ties to the lower queue."""
    heads, out = [0] * len(queues), []
    while True:
        waiting = [(queue[heads[q]][1], q) for q, queue in enumerate(queues) if heads[q] < len(queue)]
        if not waiting:
            return out
        _, q = min(waiting)
        out.append((q, heads[q]))
        heads[q] += 1


def valid_capture(kind: str, rng: random.Random) -> bytes:
    """A capture of 30 records to damage: classic pcap (either byte order, µs or ns, a few
    link types and snaplens) or pcapng (two interfaces, every packet block, a second
    section)."""
    t0 = 1_700_000_000 * 10**9
    recs = [(rng.randbytes(rng.choice([0, 14, 60, 64, 100])), rng.randrange(200), t0 + i) for i in range(30)]
    if kind == "pcap":
        return classic(recs, rng.choice("<>"), rng.random() < 0.5, linktype=rng.choice([1, 113, 0x24000001]),
                       snaplen=rng.choice([0, 64, MAX_CAPLEN]))
    ng = Ng(rng.choice("<>"))
    out = [ng.shb(), ng.idb(tsresol=rng.choice(list(UNITS)), linktype=rng.choice([1, 1, 101])), ng.idb(snaplen=64)]
    for i, (f, w, t) in enumerate(recs):
        ticks = (i + 1) * 1000                # valid at every resolution
        out.append([ng.epb(i % 2, ticks, f, w), ng.spb(f, w), ng.pb(0, ticks, f), ng.block(5, bytes(12))][i % 4])
        if i == 15:
            out.append(ng.shb() + ng.idb())
    return b"".join(out)


def damage(data: bytes, edits, seed: int) -> bytes:
    """``data`` after ``edits``: (op, where, blob) with op one of flip, cut, insert,
    delete, word (a plausible-looking length or type field written at ``where``)."""
    data = bytearray(data)
    for op, where, blob in edits:
        at = where % (len(data) + 1)
        if op == "flip" and at < len(data):
            data[at] ^= blob[0] or 1
        elif op == "cut":
            del data[at:]
        elif op == "insert":
            data[at:at] = blob
        elif op == "delete":
            del data[at:at + len(blob)]
        elif op == "word":
            data[at:at + 4] = struct.pack(random.Random(where).choice("<>") + "I",
                                          random.Random(seed).choice([0, 12, 16, 28, 65535, MAX_CAPLEN + 1, 2**32 - 1]))
    return bytes(data)


EDITS = st.lists(st.tuples(st.sampled_from(["flip", "cut", "insert", "delete", "word"]), st.integers(0, 10**6),
                           st.binary(min_size=1, max_size=8)), min_size=1, max_size=4)
