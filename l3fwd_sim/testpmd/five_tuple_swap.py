"""testpmd's ``5tswap`` engine (app/test-pmd/5tswap.h ``do_5tswap``) over a super-burst.

Per packet, as 5tswap.h does it:

1. swap the destination and source MAC;
2. while the EtherType is 0x8100 (VLAN) or 0x88A8 (QinQ), step over the 4-byte tag and
   take its inner EtherType (the tags are not changed);
3. IPv4: swap the source and destination addresses, the L4 header starts IHL × 4 bytes
   later (whatever the IHL, even < 5; fragments are not looked at); IPv6: swap the
   addresses, the L4 header starts 40 bytes later (next header taken from the fixed
   header, no extension-header walk); any other EtherType: only the MAC swap;
4. UDP (17) or TCP (6): swap the source and destination ports.

No checksum is touched: swapping operands keeps the IPv4 header and the TCP/UDP
pseudo-header sums. The TCP data offset 5tswap also reads only sets ``l4_len`` (mbuf
metadata net_pcap ignores), so it is not required to be in the frame; every byte the
result depends on or that changes is, else the frame is dropped as ``truncated``.

The numpy path works on the first ``HEAD_BYTES`` of each frame. The few frames whose
headers reach further (QinQ + IPv6, long IPv4 options, tag stacks) take the same code on
their whole frame, edited in the reader's buffer like testpmd edits the mbuf.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..capture.batch import PacketBatch
from ..capture.records import HEAD_BYTES
from ..dataplane.ports import PortConfig
from .engines import CODE, ETHER_HDR, be16, swap_halves, swap_macs

ETHER_TYPE_VLAN, ETHER_TYPE_QINQ = 0x8100, 0x88A8
ETHER_TYPE_IPV4, ETHER_TYPE_IPV6 = 0x0800, 0x86DD
IPPROTO_TCP, IPPROTO_UDP = 6, 17
# (first byte from the header start, length of each of the two swapped fields)
IPV4_ADDRS = (12, 4)
IPV6_ADDRS = (8, 16)
L4_PORTS = (0, 2)


@dataclass
class Layout:
    """Where 5tswap finds the headers of each frame in an (n, width) byte array."""
    l3: np.ndarray        # offset of the L3 header, past every VLAN/QinQ tag
    ipv4: np.ndarray      # bool: IPv4 EtherType
    ipv6: np.ndarray      # bool: IPv6 EtherType
    l4: np.ndarray        # offset of the TCP/UDP header; -1 when no ports are swapped
    need: np.ndarray      # the frame must be this long for every byte used to be in it
    beyond: np.ndarray    # bool: a byte to read lies past ``width`` (parsing stopped there)


def _by_offset(rows: np.ndarray, offsets: np.ndarray, n: int):
    """(offset, rows) per distinct offset — nearly always one — so that each group is
    read and written with column slices; all rows in order become ``slice(None)``."""
    if not len(rows):
        return []
    groups = [offsets[0]] if (offsets == offsets[0]).all() else np.unique(offsets)
    out = []
    for offset in groups:
        sel = rows if len(groups) == 1 else rows[offsets == offset]
        out.append((int(offset), slice(None) if len(sel) == n else sel))
    return out


def layout(frames: np.ndarray, caplen: np.ndarray) -> Layout:
    """Parse as 5tswap.h does, reading only bytes below ``need`` (so a decision taken on
    a byte past a short frame's end can only make ``need`` exceed its length)."""
    n, width = frames.shape
    need = np.full(n, ETHER_HDR, np.int64)
    beyond = np.zeros(n, bool)

    def reach(rows: np.ndarray, end: np.ndarray) -> np.ndarray:
        """Note that ``rows`` read up to byte ``end``; return the rows that can."""
        need[rows] = np.maximum(need[rows], end)
        past = end > width
        if past.any():
            beyond[rows[past]] = True
            return rows[~past]
        return rows

    ether_type = be16(frames, slice(None), 12)
    l3 = np.full(n, ETHER_HDR, np.int64)
    tagged = np.flatnonzero((ether_type == ETHER_TYPE_VLAN) | (ether_type == ETHER_TYPE_QINQ))
    while len(tagged):
        tagged = reach(tagged, l3[tagged] + 4)
        ether_type[tagged] = be16(frames, tagged, l3[tagged] + 2)
        l3[tagged] += 4
        inner = ether_type[tagged]
        tagged = tagged[(inner == ETHER_TYPE_VLAN) | (inner == ETHER_TYPE_QINQ)]

    l4 = np.zeros(n, np.int64)
    proto = np.zeros(n, np.uint8)
    v4 = np.flatnonzero(ether_type == ETHER_TYPE_IPV4)
    v4 = reach(v4, l3[v4] + 20)
    for at, rows in _by_offset(v4, l3[v4], n):
        proto[rows] = frames[rows, at + 9]
        l4[rows] = at + (frames[rows, at] & 0x0F).astype(np.int64) * 4     # IHL x 4, whatever the IHL
    v6 = np.flatnonzero(ether_type == ETHER_TYPE_IPV6)
    v6 = reach(v6, l3[v6] + 40)
    for at, rows in _by_offset(v6, l3[v6], n):
        proto[rows] = frames[rows, at + 6]
        l4[rows] = at + 40
    has_ports = np.flatnonzero(((proto == IPPROTO_TCP) | (proto == IPPROTO_UDP)) & ~beyond)
    has_ports = reach(has_ports, l4[has_ports] + 4)
    ports_at = np.full(n, -1, np.int64)
    ports_at[has_ports] = l4[has_ports]
    ipv4 = (ether_type == ETHER_TYPE_IPV4) & ~beyond
    ipv6 = (ether_type == ETHER_TYPE_IPV6) & ~beyond
    return Layout(l3, ipv4, ipv6, ports_at, need, beyond)


def _swap(frames: np.ndarray, rows: np.ndarray, header: np.ndarray, field: tuple) -> None:
    """Exchange the two adjacent fields ``field`` of the header starting at ``header``."""
    first, length = field
    for at, sel in _by_offset(rows, header[rows], len(frames)):
        swap_halves(frames, sel, at + first, length)


def swap(frames: np.ndarray, ok: np.ndarray, where: Layout) -> None:
    """Apply the swaps, in 5tswap.h's order, to the rows ``ok`` (bool) of ``frames``."""
    rows = np.flatnonzero(ok)
    swap_macs(frames, slice(None) if len(rows) == len(frames) else rows)
    _swap(frames, np.flatnonzero(ok & where.ipv4), where.l3, IPV4_ADDRS)
    _swap(frames, np.flatnonzero(ok & where.ipv6), where.l3, IPV6_ADDRS)
    _swap(frames, np.flatnonzero(ok & (where.l4 >= 0)), where.l4, L4_PORTS)


def _swap_in(frames: np.ndarray, caplen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """5tswap on the rows of ``frames`` (each a frame's first bytes); returns which were
    swapped and which need a wider look (headers past the array, frame longer than it)."""
    where = layout(frames, caplen)
    ok = ~where.beyond & (caplen >= where.need)
    swap(frames, ok, where)
    return ok, where.beyond & (caplen > frames.shape[1])


def five_tuple_swap(batch: PacketBatch, dest: np.ndarray, ports: PortConfig) -> np.ndarray:
    """5tswap on the heads; the few frames whose headers reach past them are redone on
    their first LONG_HEADERS bytes, and any still longer (tag stacks) on whole frames."""
    ok, further = _swap_in(batch.heads, batch.caplen)
    reason = np.where(ok, 0, CODE["truncated"]).astype(np.uint8)
    rows, width = np.flatnonzero(further), LONG_HEADERS
    while len(rows):
        chunks = np.array_split(rows, -(-len(rows) * width // WINDOW_BYTES))
        rows = np.concatenate([_swap_windows(batch, chunk, width, reason) for chunk in chunks])
        width = int(batch.caplen[rows].max()) if len(rows) else width
    return reason


LONG_HEADERS = 256           # deeper than any real header stack (QinQ + IPv6, IPv4 options)
WINDOW_BYTES = 16 << 20      # bound on the memory one wider pass takes


def _swap_windows(batch: PacketBatch, rows: np.ndarray, width: int, reason: np.ndarray) -> np.ndarray:
    """5tswap on the first ``width`` bytes of frames ``rows``. Results go back to the
    heads and, past them, into the reader's buffer the batch's tails are taken from
    (owned by this batch until the next read — like testpmd editing the mbuf). Returns
    the rows that need a still wider look."""
    caplen = batch.caplen[rows]
    frames = np.zeros((len(rows), width), np.uint8)
    views = []
    for i, row in enumerate(rows.tolist()):
        source = batch.sources[batch.source_id[row]]
        start = int(source.offsets[batch.source_row[row]])
        view = source.block[start:start + min(int(caplen[i]), width)]
        frames[i, :len(view)] = view
        views.append(view)
    ok, further = _swap_in(frames, caplen)
    reason[rows] = np.where(ok, 0, CODE["truncated"])
    for i in np.flatnonzero(ok).tolist():
        views[i][HEAD_BYTES:] = frames[i, HEAD_BYTES:len(views[i])]
        batch.heads[rows[i]] = frames[i, :HEAD_BYTES]
    return rows[further]
