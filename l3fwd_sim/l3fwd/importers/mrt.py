"""MRT routing table dumps (RFC 6396): what RouteViews (``rib.*``), RIPE RIS (``bview.*``),
BIRD (``mrtdump``), OpenBGPD (``dump table``) and Quagga/FRR (``dump bgp routes-mrt``) write.

Read: TABLE_DUMP_V2 (type 13: the ``PEER_INDEX_TABLE``, then one ``RIB_IPV4_UNICAST`` /
``RIB_IPV6_UNICAST`` record per prefix holding one entry per peer's path, and RFC 8050's
``_ADDPATH`` variants), the older TABLE_DUMP (type 12: one record per prefix and peer) and
OpenBGPD's ``table-mp`` BGP4MP_ENTRY records (type 16, subtype 2). A prefix's paths are
alternatives: the first in the dump is kept (with ``ports``, the first whose peer, or else
next hop, has a port). Multicast RIBs and RIB_GENERIC records (VPN and other address
families) are counted and left out; BGP4MP update messages are not a table: refused.

TABLE_DUMP_V2 is read with numpy: one Python step per record to find the records (their
lengths chain them), then every field of every record in array operations — the entries
of all records walked side by side, entry k of each at once.
"""
from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

import numpy as np

from ...errors import SimError
from .table import Routes, address_text, canonical_address

TABLE_DUMP, TABLE_DUMP_V2, BGP4MP, BGP4MP_ET = 12, 13, 16, 17
_TYPES = frozenset((11, 12, 13, 16, 17, 32, 33, 48, 49))
_PEER_INDEX_TABLE = 1
_UNICAST = {2: (4, False), 4: (6, False), 8: (4, True), 10: (6, True)}     # subtype -> (family, addpath)
_MULTICAST = frozenset((3, 5, 9, 11))
_GENERIC = frozenset((6, 12))
_BGP4MP_ENTRY = 2
_LENGTH = struct.Struct(">I")


def looks_like_mrt(data: bytes) -> bool:
    """Whether ``data`` starts with an MRT record header of a known type."""
    if len(data) < 12:
        return False
    _, kind, subtype, length = struct.unpack_from(">IHHI", data)
    return kind in _TYPES and subtype < 64 and length < 1 << 24


@dataclass
class _Entries:
    """Candidate paths, one row each, before one per prefix is chosen."""
    record: list[int] = field(default_factory=list)   # index of the record holding it
    family: list[int] = field(default_factory=list)
    key: list[bytes] = field(default_factory=list)
    depth: list[int] = field(default_factory=list)
    peer: list[int] = field(default_factory=list)
    via: list[int] = field(default_factory=list)         # the next hop's code; -1: read it from the span
    span: list[tuple[int, int]] = field(default_factory=list)   # where the path attributes are


class _Reader:
    def __init__(self, data: bytes, name: str, source: int, ports: dict | None):
        self.data, self.name, self.source, self.ports = data, name, source, ports
        self.u8 = np.frombuffer(data, np.uint8)
        self.strings: list[str] = []
        self._codes: dict[str, int] = {}
        self.labels: dict[int, str] = {}
        self.ignored: dict[str, int] = {}

    # -- helpers ---------------------------------------------------------------------
    def code(self, text: str) -> int:
        code = self._codes.get(text)
        if code is None:
            code = self._codes[text] = len(self.strings)
            self.strings.append(text)
        return code

    def where(self, record: int) -> str:
        return f"{self.name}: record {record + 1}"

    def be16(self, pos: np.ndarray) -> np.ndarray:
        u8 = self.u8
        pos = np.minimum(pos, len(u8) - 2)
        return u8[pos].astype(np.int64) << 8 | u8[pos + 1]

    def be32(self, pos: np.ndarray) -> np.ndarray:
        return self.be16(pos) << 16 | self.be16(pos + 2)

    def port_of(self, codes: np.ndarray) -> np.ndarray:
        """Each code's port in ``ports`` (-1: none)."""
        table = np.array([self.ports.get(s, -1) for s in self.strings] + [-1], np.int64)
        return table[codes]

    # -- the records ----------------------------------------------------------------
    def records(self) -> np.ndarray:
        """Start of every record: one step per record, each record's length leads to the next."""
        data, n, starts = self.data, len(self.data), []
        append, length = starts.append, _LENGTH.unpack_from
        off = 0
        while off + 12 <= n:
            append(off)
            off += 12 + length(data, off + 8)[0]
        if off != n:
            cut = starts[-1] if off > n else off
            raise SimError(f"{self.name}: offset {cut}: the last MRT record is cut short (a truncated dump?)")
        return np.array(starts, np.int64)

    def read(self) -> Routes:
        starts = self.records()
        if not len(starts):
            raise SimError(f"{self.name}: no MRT record")
        kind, subtype = self.be16(starts + 4), self.be16(starts + 6)
        end = starts + 12 + self.be32(starts + 8)
        rows: list[tuple] = []                         # (record, family, hi, lo, depth, peer, via, paths)
        v2 = kind == TABLE_DUMP_V2
        pits = np.flatnonzero(v2 & (subtype == _PEER_INDEX_TABLE))
        self.peer_tables(starts[pits], end[pits])
        for sub, (family, addpath) in _UNICAST.items():
            recs = np.flatnonzero(v2 & (subtype == sub))
            if len(recs):
                rows.append(self.rib(recs, starts[recs] + 12, end[recs], family, addpath, pits))
        self.count(v2 & np.isin(subtype, list(_MULTICAST)), "multicast RIB records")
        self.count(v2 & np.isin(subtype, list(_GENERIC)), "RIB_GENERIC records (VPN and other address families)")
        entries = _Entries()
        for i in np.flatnonzero(kind == TABLE_DUMP).tolist():
            self.table_dump(i, int(starts[i]) + 12, int(end[i]), int(subtype[i]), entries)
        for i in np.flatnonzero((kind == BGP4MP) & (subtype == _BGP4MP_ENTRY)).tolist():
            self.bgp4mp_entry(i, int(starts[i]) + 12, int(end[i]), entries)
        if entries.record:
            rows.append(self.choose(entries))
        updates = int((((kind == BGP4MP) | (kind == BGP4MP_ET)) & (subtype != _BGP4MP_ENTRY)).sum())
        if not rows:
            what = (f"{updates} BGP4MP records: BGP update messages, not a table (give a RIB dump: "
                    f"TABLE_DUMP_V2, e.g. RouteViews' rib.* or RIPE RIS' bview.*)") if updates else \
                "no RIB record (TABLE_DUMP_V2 RIB_IPV4_UNICAST/RIB_IPV6_UNICAST, TABLE_DUMP)"
            raise SimError(f"{self.name}: {what}")
        self.count((kind != TABLE_DUMP_V2) & (kind != TABLE_DUMP) & ~((kind == BGP4MP) & (subtype == _BGP4MP_ENTRY)),
                   "records of other MRT types (BGP4MP updates, OSPF, IS-IS)")
        return self.routes(rows)

    def count(self, mask: np.ndarray, what: str) -> None:
        if mask.any():
            self.ignored[what] = self.ignored.get(what, 0) + int(mask.sum())

    # -- TABLE_DUMP_V2 ----------------------------------------------------------------
    def peer_tables(self, starts: np.ndarray, ends: np.ndarray) -> None:
        """Read each PEER_INDEX_TABLE into ``self.peer_code``: per table, the code of
        each peer's address (by peer index), then -1."""
        self.peer_code = []
        data = self.data
        for table, (start, end) in enumerate(zip(starts.tolist(), ends.tolist())):
            where = f"{self.name}: peer index table at offset {start}"
            try:
                pos = start + 12 + 4                                   # collector BGP ID
                (name_len,) = struct.unpack_from(">H", data, pos)
                pos += 2 + name_len
                (count,) = struct.unpack_from(">H", data, pos)
                pos += 2
                codes = []
                for _ in range(count):
                    ptype = data[pos]
                    pos += 1 + 4                                       # type, peer BGP ID
                    size = 16 if ptype & 1 else 4
                    address = socket.inet_ntop(socket.AF_INET6 if ptype & 1 else socket.AF_INET, data[pos:pos + size])
                    pos += size
                    asn_size = 4 if ptype & 2 else 2
                    asn = int.from_bytes(data[pos:pos + asn_size], "big")
                    pos += asn_size
                    code = self.code(address)
                    self.labels[code] = f"{address} (AS{asn})"
                    codes.append(code)
                if pos > end:
                    raise ValueError
            except (struct.error, IndexError, ValueError):
                raise SimError(f"{where}: damaged record") from None
            self.peer_code.append(np.array(codes + [-1], np.int64))

    def rib(self, recs, body, end, family, addpath, pits):
        """The rows of RIB_IPV4/IPV6_UNICAST(_ADDPATH) records ``recs``."""
        bits = 32 if family == 4 else 128
        u8 = self.u8
        depth = u8[np.minimum(body + 4, len(u8) - 1)].astype(np.int64)
        nbytes = (depth + 7) >> 3
        count_at = body + 5 + nbytes
        bad = (depth > bits) | (count_at + 2 > end)
        if bad.any():
            raise SimError(f"{self.where(int(recs[np.argmax(bad)]))}: damaged RIB record "
                           f"(prefix length {int(depth[np.argmax(bad)])})")
        keys = np.zeros((len(recs), 16), np.uint8)
        first = 16 - bits // 8
        for k in range(bits // 8):
            present = k < nbytes
            keys[present, first + k] = u8[body[present] + 5 + k]
        count = self.be16(count_at)
        table = np.searchsorted(pits, recs) - 1                  # the peer index table in force
        if (table < 0).any():
            raise SimError(f"{self.where(int(recs[np.argmax(table < 0)]))}: a RIB record before any peer index table")
        entry = count_at + 2
        head = 12 if addpath else 8                              # peer index, time, [path id], attribute length
        chosen_peer = np.full(len(recs), -1, np.int64)
        chosen_via = np.full(len(recs), -1, np.int64)
        active = count > 0
        need_via = self.ports is not None and any(canonical_address(k) and k not in self._codes for k in self.ports)
        k = 0
        while active.any():
            idx = np.flatnonzero(active)
            at = entry[idx]
            attrs = at + head
            attr_end = attrs + self.be16(at + head - 2)
            broken = attr_end > end[idx]
            if broken.any():
                raise SimError(f"{self.where(int(recs[idx[np.argmax(broken)]]))}: damaged RIB entry {k + 1}")
            peer = self.peer_of(table[idx], self.be16(at), recs[idx])
            if k == 0:                                           # the first path: kept unless another has a port
                chosen_peer[idx] = peer
            if self.ports is None:
                break
            port = self.port_of(peer)
            via = np.full(len(idx), -1, np.int64)
            if need_via:
                lacking = port < 0
                via[lacking] = self.next_hops(attrs[lacking], attr_end[lacking], family)
                port[lacking] = self.port_of(via[lacking])
            found = port >= 0
            chosen_peer[idx[found]], chosen_via[idx[found]] = peer[found], via[found]
            if k == 0 and need_via:
                chosen_via[idx[~found]] = via[~found]
            active[idx[found]] = False
            entry[idx] = attr_end
            k += 1
            active &= k < count
        hi, lo = _halves(keys)
        return recs, np.full(len(recs), family), hi, lo, depth, chosen_peer, chosen_via, count

    def peer_of(self, table, index, recs) -> np.ndarray:
        out = np.empty(len(index), np.int64)
        for t in np.unique(table).tolist():
            sel = table == t
            codes = self.peer_code[t]
            bad = index[sel] >= len(codes) - 1
            if bad.any():
                raise SimError(f"{self.where(int(recs[sel][np.argmax(bad)]))}: peer index "
                               f"{int(index[sel][np.argmax(bad)])} is not in the peer index table")
            out[sel] = codes[index[sel]]
        return out

    def next_hops(self, start: np.ndarray, end: np.ndarray, family: int) -> np.ndarray:
        """The code of each path's next hop: its NEXT_HOP attribute (IPv4), else the
        address in MP_REACH_NLRI (RFC 6396 4.3.4: only its next hop length and address,
        or written whole by some); -1 where there is none."""
        u8, n = self.u8, len(start)
        keys = np.zeros((n, 16), np.uint8)
        found = np.zeros(n, np.int8)                         # 0 none, 4 or 6: the next hop's family
        pos = start.copy()
        live = pos + 3 <= end
        while live.any():
            idx = np.flatnonzero(live)
            p = pos[idx]
            flags, kind = u8[np.minimum(p, len(u8) - 1)], u8[np.minimum(p + 1, len(u8) - 1)]
            extended = (flags & 0x10) != 0
            length = np.where(extended, self.be16(p + 2), u8[np.minimum(p + 2, len(u8) - 1)])
            value = p + np.where(extended, 4, 3)
            v4 = (kind == 3) & (length == 4) & (found[idx] != 4)
            if v4.any():
                keys[idx[v4], 12:] = u8[value[v4, None] + np.arange(4)]
                found[idx[v4]] = 4
            mp = (kind == 14) & (length >= 5) & (found[idx] == 0)
            if mp.any():
                at = value[mp]
                whole = u8[at] == 0                              # AFI first: the whole attribute
                nh_len = u8[np.where(whole, at + 3, at)]
                nh = np.where(whole, at + 4, at + 1)
                six = (nh_len == 16) | (nh_len == 32)
                four = nh_len == 4
                rows = idx[mp]
                if six.any():
                    keys[rows[six]] = u8[np.minimum(nh[six, None] + np.arange(16), len(u8) - 1)]
                    found[rows[six]] = 6
                if four.any():
                    keys[rows[four], 12:] = u8[np.minimum(nh[four, None] + np.arange(4), len(u8) - 1)]
                    found[rows[four]] = 4
            pos[idx] = value + length
            live[idx] = pos[idx] + 3 <= end[idx]
        codes = np.full(n, -1, np.int64)
        if (found > 0).any():
            rows = np.flatnonzero(found)
            unique, inverse = np.unique(np.column_stack([found[rows].astype(np.uint8), keys[rows]]), axis=0,
                                        return_inverse=True)
            texts = [self.code(address_text(int(u[0]), u[1:].tobytes())) for u in unique]
            codes[rows] = np.array(texts, np.int64)[inverse.ravel()]
        return codes

    # -- TABLE_DUMP and BGP4MP_ENTRY: one record per prefix and peer ----------------------
    def table_dump(self, record: int, pos: int, end: int, subtype: int, out: _Entries) -> None:
        data = self.data
        size = 4 if subtype == 1 else 16
        if subtype not in (1, 2) or pos + 4 + size + 6 + size + 4 > end:
            raise SimError(f"{self.where(record)}: damaged TABLE_DUMP record")
        af = socket.AF_INET if size == 4 else socket.AF_INET6
        prefix = data[pos + 4:pos + 4 + size]
        depth = data[pos + 4 + size]
        peer_at = pos + 4 + size + 6
        peer = socket.inet_ntop(af, data[peer_at:peer_at + size])
        (asn,) = struct.unpack_from(">H", data, peer_at + size)
        (attr_len,) = struct.unpack_from(">H", data, peer_at + size + 2)
        attrs = peer_at + size + 4
        self._entry(record, 4 if size == 4 else 6, prefix, depth, peer, asn, -1, attrs, attrs + attr_len, end, out)

    def bgp4mp_entry(self, record: int, pos: int, end: int, out: _Entries) -> None:
        # OpenBGPD's mrt_dump_entry_mp, its only writer, puts the local AS and address first,
        # then the peer's (the old draft had the peer's first)
        data = self.data
        try:
            _, asn, _, afi = struct.unpack_from(">HHHH", data, pos)
            size = 4 if afi == 1 else 16
            peer = socket.inet_ntop(socket.AF_INET if afi == 1 else socket.AF_INET6,
                                    data[pos + 8 + size:pos + 8 + 2 * size])
            at = pos + 8 + 2 * size + 2 + 2 + 4                # view, status, time
            afi2, safi, nh_len = struct.unpack_from(">HBB", data, at)
            next_hop = data[at + 4:at + 4 + nh_len]
            at += 4 + nh_len
            depth = data[at]
            prefix = data[at + 1:at + 1 + (depth + 7) // 8]
            at += 1 + (depth + 7) // 8
            (attr_len,) = struct.unpack_from(">H", data, at)
        except (struct.error, IndexError, ValueError):
            raise SimError(f"{self.where(record)}: damaged BGP4MP_ENTRY record") from None
        if safi != 1 or afi2 not in (1, 2):
            self.ignored["BGP4MP_ENTRY records of other address families"] = \
                self.ignored.get("BGP4MP_ENTRY records of other address families", 0) + 1
            return
        size = 4 if afi2 == 1 else 16
        via = -1
        if len(next_hop) in (4, 16, 32):
            via = self.code(socket.inet_ntop(socket.AF_INET if len(next_hop) == 4 else socket.AF_INET6,
                                             next_hop[:16]))
        self._entry(record, 4 if afi2 == 1 else 6, prefix.ljust(size, b"\0"), depth, peer, asn, via,
                    at + 2, at + 2 + attr_len, end, out)

    def _entry(self, record, family, prefix, depth, peer, asn, via, attrs, attrs_end, end, out: _Entries) -> None:
        bits = 32 if family == 4 else 128
        if depth > bits or attrs_end > end:
            raise SimError(f"{self.where(record)}: damaged record (prefix length {depth})")
        code = self.code(peer)
        self.labels[code] = f"{peer} (AS{asn})"
        out.record.append(record)
        out.family.append(family)
        out.key.append(prefix.rjust(16, b"\0") if family == 4 else prefix)
        out.depth.append(depth)
        out.peer.append(code)
        out.via.append(via)
        out.span.append((attrs, attrs_end))

    def choose(self, e: _Entries):
        """One row per prefix of consecutive one-path records: the first path, or the
        first whose peer (else next hop) has a port."""
        n = len(e.record)
        record = np.array(e.record, np.int64)
        family = np.array(e.family, np.int64)
        hi, lo = _halves(np.frombuffer(b"".join(e.key), np.uint8).reshape(n, 16))
        depth = np.array(e.depth, np.int64)
        peer = np.array(e.peer, np.int64)
        spans = np.array(e.span, np.int64).reshape(n, 2)
        via = np.array(e.via, np.int64)
        for fam in (4, 6):
            sel = (family == fam) & (via < 0)
            if sel.any():
                via[sel] = self.next_hops(spans[sel, 0], spans[sel, 1], fam)
        new = np.ones(n, bool)
        new[1:] = (family[1:] != family[:-1]) | (hi[1:] != hi[:-1]) | (lo[1:] != lo[:-1]) | (depth[1:] != depth[:-1])
        starts = np.flatnonzero(new)
        pick = starts.copy()
        if self.ports is not None:
            port = self.port_of(peer)
            port = np.where(port >= 0, port, self.port_of(via))
            candidate = np.where(port >= 0, np.arange(n), n)
            first = np.minimum.reduceat(candidate, starts)
            pick = np.where(first < n, first, starts)
        paths = np.diff(np.append(starts, n))
        return record[starts], family[pick], hi[pick], lo[pick], depth[pick], peer[pick], via[pick], paths

    def routes(self, rows: list[tuple]) -> Routes:
        cols = [np.concatenate([np.asarray(row[i]) for row in rows]) for i in range(8)]
        record, family, hi, lo, depth, peer, via, paths = cols
        order = np.argsort(record, kind="stable")
        record, family, hi, lo, depth, peer, via, paths = (c[order] for c in cols)
        n = len(record)
        return Routes(family.astype(np.int8), hi.astype(np.uint64), lo.astype(np.uint64), depth.astype(np.int16),
                      np.zeros(n, np.int8), via.astype(np.int32), np.full(n, -1, np.int32), peer.astype(np.int32),
                      np.zeros(n, np.int64), np.arange(n, dtype=np.int64), record + 1, np.zeros(n, np.int8),
                      np.full(n, self.source, np.int32), self.strings, paths.astype(np.int32), self.labels)


def _halves(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    halves = np.ascontiguousarray(keys).view(">u8").reshape(-1, 2).astype(np.uint64)
    return halves[:, 0].copy(), halves[:, 1].copy()


def read(data: bytes, name: str, source: int, ports: dict | None = None) -> tuple[Routes, dict[str, int]]:
    """The routes of an MRT dump, one per prefix, and the counts of the records left out
    (by what they are). ``ports``: the explicit port of each peer or next hop address
    (None: the first path of each prefix is kept, whoever its peer)."""
    reader = _Reader(data, name, source, ports)
    return reader.read(), reader.ignored
