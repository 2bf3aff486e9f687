"""Independent, deliberately simple per-packet model of dpdk-l3fwd (v26.07).

This is the test oracle of l3fwd-sim.  It must stay independent of the ``l3fwd_sim``
package (it imports nothing from it) and simple enough to be checked by reading:

* longest-prefix match is a brute-force scan over a list of ``ipaddress`` networks;
* exact match is a Python dict keyed by the masked 5-tuple;
* every packet is handled by one straight-line function per lookup mode / pipeline.

References (all under ../shared/reference/dpdk/):
  SEM  = l3fwd_forwarding_semantics.md
  DIFF = path_differences.md
  INT  = lpm_fib_hash_internals.md
  DEF  = default_routes.md
  OPT  = l3fwd_options_and_rule_files.md
  ACL  = acl.md
  LCQ  = lcores_and_queues.md
and ../shared/design-notes.md (DN).

Undefined behaviour in C (reading past the end of a short frame) is replaced by a drop
with reason ``"truncated"``; see ``_min_len`` below for the exact rule (DN §6).
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter

__all__ = [
    "l3fwd_oracle",
    "l3fwd_start_error",
    "parse_rule_file_lpm",
    "parse_rule_file_em",
    "parse_rule_file_acl",
    "DEFAULT_LPM_V4",
    "DEFAULT_LPM_V6",
    "DEFAULT_EM_V4",
    "DEFAULT_EM_V6",
]

RTE_MAX_ETHPORTS = 32

ETHER_IPV4 = 0x0800
ETHER_IPV6 = 0x86DD

# dpdk-l3fwd's mbufs hold RTE_MBUF_DEFAULT_DATAROOM = 2048 bytes and RX scatter is never
# enabled, so net_pcap drops every longer record on receive (LCQ "Jumbo frames").
MBUF_DATA_ROOM = 2048

# ---------------------------------------------------------------------------------------
# Default tables (DEF §A.1-A.4)
# ---------------------------------------------------------------------------------------
DEFAULT_LPM_V4 = [(f"198.18.{n}.0", 24, n) for n in range(16)]
DEFAULT_LPM_V6 = [(f"2001:200:0:{n:x}::", 64, n) for n in range(16)]
# (dst, src, dport, sport, proto, port) -- same field order as an EM rule line (OPT §3)
DEFAULT_EM_V4 = [(f"198.18.{n}.0", f"198.18.{n}.1", 9, 9, 17, n) for n in range(16)]
DEFAULT_EM_V6 = [(f"2001:200:0:{n:x}::", f"2001:200:0:{n:x}::1", 9, 9, 17, n)
                 for n in range(16)]


# ---------------------------------------------------------------------------------------
# Rule files (OPT §3)
# ---------------------------------------------------------------------------------------
def _strtoul0(tok: str) -> int:
    """strtoul(tok, &end, 0) that must consume the whole token (OPT §3)."""
    t = tok.lower()
    if t.startswith("0x"):
        return int(t[2:], 16)
    if len(t) > 1 and t.startswith("0"):
        return int(t[1:], 8)  # leading 0 = octal
    return int(t, 10)


def _rule_lines(path):
    """Yield the token lists of the 'R' lines; '#' in column 0 and blank lines skipped."""
    out = []
    with open(path, "r") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#") or line.strip() == "":
                continue
            if not line.startswith("R"):
                raise ValueError(f"{path}:{lineno}: rule line must start with 'R'")
            out.append(line[1:].split())
    if not out:
        raise ValueError(f"{path}: no rules")
    return out


def parse_rule_file_lpm(path) -> list[tuple[str, int, int]]:
    """``R<addr>/<depth> <port>`` lines -> [(addr, depth, port)] in file order."""
    rules = []
    for toks in _rule_lines(path):
        addr, depth = toks[0].split("/")
        ip = ipaddress.ip_address(addr)
        depth = _strtoul0(depth)
        port = _strtoul0(toks[1])
        if depth > ip.max_prefixlen or port > 255:
            raise ValueError(f"bad LPM rule {toks}")
        rules.append((str(ip), depth, port))
    return rules


def parse_rule_file_em(path) -> list[tuple[str, str, int, int, int, int]]:
    """``R<dst> <src> <dport> <sport> <proto> <port>`` -> [(dst, src, dport, sport, proto, port)]."""
    rules = []
    for toks in _rule_lines(path):
        dst = ipaddress.ip_address(toks[0])
        src = ipaddress.ip_address(toks[1])
        dport, sport, proto, port = (_strtoul0(t) for t in toks[2:6])
        if dport > 0xFFFF or sport > 0xFFFF or proto > 255 or port > 255:
            raise ValueError(f"bad EM rule {toks}")
        rules.append((str(dst), str(src), dport, sport, proto, port))
    return rules


def _acl_ipv6_net(tok: str) -> str:
    """parse_ipv6_net: exactly eight ':'-separated base-16 groups (max 0xffff), '/', a
    base-0 length 0..128.  An empty group reads as 0 (strtoul consumes nothing and stops
    at the ':'), so '::' only gets through where it still makes eight groups (ACL)."""
    addr, slash, length = tok.partition("/")
    groups = addr.split(":")
    if not slash or len(groups) != 8:
        raise ValueError(f"bad IPv6 net {tok!r}")
    value = 0
    for g in groups:
        if not re.fullmatch(r"[0-9A-Fa-f]*", g) or int(g or "0", 16) > 0xFFFF:
            raise ValueError(f"bad IPv6 group {g!r} in {tok!r}")
        value = (value << 16) | int(g or "0", 16)
    length = _strtoul0(length)
    if length > 128:
        raise ValueError(f"bad IPv6 prefix length in {tok!r}")
    return f"{ipaddress.IPv6Address(value)}/{length}"


def _acl_ipv4_net(tok: str) -> str:
    """parse_ipv4_net: strtok on '/' -> inet_pton dotted quad, base-0 length 0..32."""
    parts = [t for t in tok.split("/") if t]
    if len(parts) < 2 or _strtoul0(parts[1]) > 32:
        raise ValueError(f"bad IPv4 net {tok!r}")
    return f"{ipaddress.IPv4Address(parts[0])}/{_strtoul0(parts[1])}"


def _acl_range(lo: str, colon: str, hi: str) -> tuple[int, int]:
    lo, hi = _strtoul0(lo), _strtoul0(hi)
    if colon != ":" or hi > 0xFFFF or lo > hi:
        raise ValueError(f"bad port range {lo} {colon} {hi}")
    return lo, hi


def parse_rule_file_acl(path, family: int) -> list[tuple]:
    """l3fwd's ACL rule file (ACL "Rule files") -> one tuple per rule line, in file order:

        (kind, src_net, dst_net, (sport_lo, sport_hi), (dport_lo, dport_hi),
         (proto, mask), port)

    kind is "@" (deny; port None) or "R" (route to port).  '#' in column 0 and
    whitespace-only lines are skipped; any other line must start with '@' or 'R'.  Fields
    are split on space/tab/newline (strtok); tokens after the 5 (@) or 6 (R) fields are
    never read.  File order is priority order: the first matching line wins.
    """
    parse_net = _acl_ipv4_net if family == 4 else _acl_ipv6_net
    rules = []
    with open(path, "r") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("#") or line.strip() == "":
                continue
            kind = line[0]
            if kind not in "@R":
                raise ValueError(f"{path}:{lineno}: should start with leading char @ or R")
            toks = [t for t in re.split(r"[ \t\n]", line[1:]) if t]
            if len(toks) < (10 if kind == "R" else 9):
                raise ValueError(f"{path}:{lineno}: parse rules error")
            proto, slash, mask = toks[8].partition("/")
            proto, mask = _strtoul0(proto), (_strtoul0(mask) if slash else -1)
            port = _strtoul0(toks[9]) if kind == "R" else None
            if not (0 <= proto <= 255 and 0 <= mask <= 255) or (port or 0) > 0xFFFFFFFF:
                raise ValueError(f"{path}:{lineno}: parse rules error")
            rules.append((kind, parse_net(toks[0]), parse_net(toks[1]),
                          _acl_range(*toks[2:5]), _acl_range(*toks[5:8]), (proto, mask),
                          port))
    if not any(r[0] == "R" for r in rules):
        raise ValueError(f"{path}: Not find any route entries")
    return rules


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------
def _port_enabled(port: int, portmask: int) -> bool:
    # setup_lpm/setup_fib/populate_*_flow: `(1 << if_out) & enabled_port_mask` (DEF intro,
    # SEM §3.4).  Ports >= 32 are never installed (the C shift would be undefined).
    return 0 <= port < 32 and (portmask >> port) & 1 == 1


class _Decider:
    """What a table's last lookup was decided by: (table name, the rule's ordinal in its
    file), or None for a miss — for the per-rule hit counters."""
    name = ""
    last = None

    def decided(self, ordinal):
        self.last = None if ordinal is None else (self.name, ordinal)


class _LPM(_Decider):
    """Brute-force longest prefix match.  A later rule with the same prefix wins."""

    def __init__(self, routes, portmask, allow_depth0, family):
        self.routes = {}  # (network) -> port; dict keeps the overwrite semantics
        self.ordinal = {}  # (network) -> the rule in effect's place in the file (0-based)
        for i, (addr, depth, port) in enumerate(routes):
            if depth == 0 and not allow_depth0:
                # rte_lpm_add / rte_lpm6_add reject depth 0 -> l3fwd exits (OPT §3)
                raise ValueError("depth 0 rejected by rte_lpm/rte_lpm6")
            if not _port_enabled(port, portmask):
                continue
            net = ipaddress.ip_network(f"{addr}/{depth}", strict=False)  # library masks
            if net.version != family:
                raise ValueError(f"route {addr}/{depth} is not IPv{family}")
            self.routes[net] = port
            self.ordinal[net] = i

    def lookup(self, addr_bytes: bytes):
        ip = ipaddress.ip_address(addr_bytes)
        best = None
        for net, port in self.routes.items():
            if ip in net and (best is None or net.prefixlen > best[0]):
                best = (net.prefixlen, port, net)
        self.decided(None if best is None else self.ordinal[best[2]])
        return None if best is None else best[1]


class _EM(_Decider):
    """Exact match on (proto, src, dst, sport, dport) (INT §5).  Later duplicate wins."""

    def __init__(self, flows, portmask):
        self.flows = {}
        self.ordinal = {}
        for i, (dst, src, dport, sport, proto, port) in enumerate(flows):
            if not _port_enabled(port, portmask):
                continue
            key = (proto, ipaddress.ip_address(src).packed,
                   ipaddress.ip_address(dst).packed, sport, dport)
            self.flows[key] = port
            self.ordinal[key] = i

    def lookup(self, key):
        self.decided(self.ordinal.get(key))
        return self.flows.get(key)


class _ACL(_Decider):
    """Brute-force ACL classifier (ACL "Field semantics", "Priority"): the rules in file
    order, the first line matching all five fields wins.  Returns ("R", port),
    ("@", None) or None (no match)."""

    def __init__(self, rules):
        self.rules = [(kind, ipaddress.ip_network(src, strict=False),
                       ipaddress.ip_network(dst, strict=False), sp, dp, pm, port)
                      for kind, src, dst, sp, dp, pm, port in rules]

    def lookup(self, proto, src_bytes, dst_bytes, sport, dport):
        src, dst = ipaddress.ip_address(src_bytes), ipaddress.ip_address(dst_bytes)
        for i, (kind, snet, dnet, (slo, shi), (dlo, dhi), (p, m), port) in enumerate(self.rules):
            if (src in snet and dst in dnet and slo <= sport <= shi and dlo <= dport <= dhi
                    and (proto & m) == (p & m)):
                self.decided(i)
                return kind, port
        self.decided(None)
        return None


# ---------------------------------------------------------------------------------------
# Packet helpers
# ---------------------------------------------------------------------------------------
def _mac(s: str) -> bytes:
    return bytes(int(x, 16) for x in s.split(":"))


def _ethertype(f: bytes) -> int:
    return (f[12] << 8) | f[13]


def _byte(f: bytes, i: int) -> int:
    """Byte i of the frame, 0 if beyond its end (only used for ptype classification of
    frames that are dropped as truncated anyway)."""
    return f[i] if i < len(f) else 0


def _is_valid_ipv4_pkt(f: bytes) -> bool:
    """is_valid_ipv4_pkt (SEM §4.1) with ol_flags == 0 (net_pcap): no checksum check."""
    if len(f) < 20:                       # 1. pkt_len (whole frame) < 20
        return False
    if f[14] >> 4 != 4:                   # 3. version
        return False
    if f[14] & 0x0F < 5:                  # 4. IHL
        return False
    if (f[16] << 8 | f[17]) < 20:         # 5. total length
        return False
    return True


def _rfc1812_process(f: bytearray) -> bool:
    """rfc1812_process (SEM §4.2): TTL-1 + checksum increment always, then validity.
    Returns False when the packet must be dropped."""
    _ttl_and_checksum(f)
    if (f[14] - 0x45) & 0xFF > 10:
        return False
    if f[16] == 0 and f[17] < 20:
        return False
    return True


def _ttl_and_checksum(f: bytearray) -> None:
    """SEM §4.3: ttl = (ttl-1) & 0xff (no expiry); hdr_checksum += 1 as a little-endian
    u16 applied to the big-endian wire field."""
    f[22] = (f[22] - 1) & 0xFF
    v = ((f[24] | (f[25] << 8)) + 1) & 0xFFFF
    f[24] = v & 0xFF
    f[25] = v >> 8


def _mac_rewrite(f: bytearray, port: int, eth_dest, port_mac) -> None:
    """SEM §5: bytes 0..5 := dest MAC of port, 6..11 := MAC of port; rest untouched."""
    f[0:6] = eth_dest[port]
    f[6:12] = port_mac[port]


def _em_ptype(f: bytes):
    """em_parse_ptype (SEM §2). Returns (l3, tcp_or_udp) with l3 in
    {"ipv4", "ipv4_ext", "ipv6", "ipv6_ext", None}."""
    et = _ethertype(f)
    if et == ETHER_IPV4:
        if len(f) < 15:                        # the parser reads IHL at byte 14
            return "truncated", False
        if (_byte(f, 14) & 0x0F) * 4 == 20:   # version nibble not checked
            if len(f) < 24:                    # ... and then the protocol at byte 23
                return "truncated", False
            return "ipv4", _byte(f, 23) in (6, 17)
        return "ipv4_ext", False
    if et == ETHER_IPV6:
        if len(f) < 21:                        # next header at byte 20
            return "truncated", False
        if _byte(f, 20) in (6, 17):
            return "ipv6", True
        return "ipv6_ext", False
    return None, False


def _em_key_v4(f: bytes):
    # INT §5: proto (ip+9 = frame 23), src (26..29), dst (30..33), L4 ports at the
    # fixed offset ip+20 (frame 34..37).  TTL/checksum bytes are masked out.
    return (f[23], bytes(f[26:30]), bytes(f[30:34]),
            f[34] << 8 | f[35], f[36] << 8 | f[37])


def _em_key_v6(f: bytes):
    # INT §5: next header (frame 20), src (22..37), dst (38..53), ports (54..57).
    return (f[20], bytes(f[22:38]), bytes(f[38:54]),
            f[54] << 8 | f[55], f[56] << 8 | f[57])


# ---------------------------------------------------------------------------------------
# Truncation rule (the simulator's documented choice for C undefined behaviour, DN §6)
# ---------------------------------------------------------------------------------------
#   any mode, any frame ............................. < 14 bytes -> "truncated"
#   IPv4 (dst addr at 30..33, TTL/cksum at 22..25) .. < 34 bytes
#   IPv6 (dst addr at 38..53) ....................... < 54 bytes
#   EM IPv4 TCP/UDP key (ports at 34..37) ........... < 38 bytes
#   EM IPv6 TCP/UDP key (ports at 54..57) ........... < 58 bytes
#   ACL IPv4 5-tuple (fixed offsets, "ports" 34..37)  < 38 bytes
#   ACL IPv6 5-tuple ("ports" 54..57) ............... < 58 bytes
# EM mode: em_parse_ptype itself reads IHL (14), then the protocol (23) when IHL == 5,
# or the IPv6 next header (20); a frame ending before the byte it reads is truncated.
# In the simple LPM/EM paths DPDK's own is_valid_ipv4_pkt checks (pkt_len < 20, version,
# IHL, total length) come first and give "rfc1812_invalid"; only a packet passing them is
# then subject to the length rule.  In the multi paths the length rule comes first.
# ACL mode: a non-IP EtherType is "unknown_ptype" before any length check.
MIN_ETH = 14
MIN_IPV4 = 34
MIN_IPV6 = 54
MIN_EM_V4 = 38
MIN_EM_V6 = 58
MIN_ACL_V4 = 38
MIN_ACL_V6 = 58


# ---------------------------------------------------------------------------------------
# Per-packet forwarding: each returns (out_port, None) or (None, drop_reason) and
# modifies the bytearray in place.
# ---------------------------------------------------------------------------------------
class _Ctx:
    def __init__(self, portmask, lpm4, lpm6, em4, em6, acl4, acl6, eth_dest, port_mac):
        self.portmask = portmask
        self.lpm4, self.lpm6, self.em4, self.em6 = lpm4, lpm6, em4, em6
        self.acl4, self.acl6 = acl4, acl6
        self.eth_dest, self.port_mac = eth_dest, port_mac

    def recheck(self, dst, portid):
        # SEM §3.4: "dst >= RTE_MAX_ETHPORTS or dst not enabled => portid"
        if dst >= RTE_MAX_ETHPORTS or not (self.portmask >> dst) & 1:
            return portid
        return dst

    def rewrite(self, f, port):
        _mac_rewrite(f, port, self.eth_dest, self.port_mac)


def _lpm_simple(c: _Ctx, f: bytearray, portid: int):
    """l3fwd_lpm_simple_forward (SEM §3.1, §3.4, §4.1, §5; DIFF D1)."""
    et = _ethertype(f)
    if et == ETHER_IPV4:
        if not _is_valid_ipv4_pkt(f):
            return None, "rfc1812_invalid"
        if len(f) < MIN_IPV4:
            return None, "truncated"
        hop = c.lpm4.lookup(bytes(f[30:34]))
        dst = portid if hop is None else hop
        dst = c.recheck(dst, portid)
        _ttl_and_checksum(f)
        c.rewrite(f, dst)
        return dst, None
    if et == ETHER_IPV6:
        if len(f) < MIN_IPV6:
            return None, "truncated"
        hop = c.lpm6.lookup(bytes(f[38:54]))
        dst = portid if hop is None else hop
        dst = c.recheck(dst, portid)
        c.rewrite(f, dst)          # hop limit untouched
        return dst, None
    return None, "unknown_ptype"   # DIFF D1


def _lpm_multi(c: _Ctx, f: bytearray, portid: int):
    """l3fwd_lpm_send_packets: lookups (no port-mask re-check, SEM §3.4), then
    send_packets_multi: MAC rewrite then rfc1812_process for IPv4 (SEM §4.2)."""
    et = _ethertype(f)
    if et == ETHER_IPV4:
        if len(f) < MIN_IPV4:
            return None, "truncated"
        hop = c.lpm4.lookup(bytes(f[30:34]))
        dst = portid if hop is None else hop
        c.rewrite(f, dst)
        if not _rfc1812_process(f):
            return None, "rfc1812_invalid"
        return dst, None
    if et == ETHER_IPV6:
        if len(f) < MIN_IPV6:
            return None, "truncated"
        hop = c.lpm6.lookup(bytes(f[38:54]))
        dst = portid if hop is None else hop
        c.rewrite(f, dst)
        return dst, None
    c.rewrite(f, portid)           # DIFF D1: non-IP back out of the input port
    return portid, None


def _em_simple(c: _Ctx, f: bytearray, portid: int):
    """l3fwd_em_simple_forward (SEM §3.2; DIFF D1-D4, D9 -- invalid IPv4 is dropped)."""
    l3, l4 = _em_ptype(f)
    if l3 == "truncated":
        return None, "truncated"
    if l3 == "ipv4" and l4:
        if not _is_valid_ipv4_pkt(f):
            return None, "rfc1812_invalid"
        if len(f) < MIN_EM_V4:
            return None, "truncated"
        hop = c.em4.lookup(_em_key_v4(f))
        dst = c.recheck(portid if hop is None else hop, portid)
        _ttl_and_checksum(f)
        c.rewrite(f, dst)
        return dst, None
    if l3 == "ipv6" and l4:
        if len(f) < MIN_EM_V6:
            return None, "truncated"
        hop = c.em6.lookup(_em_key_v6(f))
        dst = c.recheck(portid if hop is None else hop, portid)
        c.rewrite(f, dst)
        return dst, None
    return None, "unknown_ptype" if l3 is None else "not_tcp_udp"


def _em_multi(c: _Ctx, f: bytearray, portid: int):
    """l3fwd_em_send_packets: em_get_dst_port (+ re-check) then send_packets_multi
    (MAC rewrite, rfc1812_process for every packet with the IPv4 ptype bit)."""
    l3, l4 = _em_ptype(f)
    if l3 == "truncated":
        return None, "truncated"
    if l3 in ("ipv4", "ipv4_ext"):
        if l3 == "ipv4" and l4:
            if len(f) < MIN_EM_V4:      # key read comes first in the multi path
                return None, "truncated"
            hop = c.em4.lookup(_em_key_v4(f))
            dst = portid if hop is None else hop
        else:
            if len(f) < MIN_IPV4:       # rfc1812_process touches bytes 14..25
                return None, "truncated"
            dst = portid                # DIFF D2/D3
        dst = c.recheck(dst, portid)
        c.rewrite(f, dst)
        if not _rfc1812_process(f):
            return None, "rfc1812_invalid"
        return dst, None
    if l3 == "ipv6" and l4:
        if len(f) < MIN_EM_V6:
            return None, "truncated"
        hop = c.em6.lookup(_em_key_v6(f))
        dst = c.recheck(portid if hop is None else hop, portid)
        c.rewrite(f, dst)
        return dst, None
    # IPv6 ext / not TCP/UDP (DIFF D4) and non-IP (DIFF D1): back out of the input port
    c.rewrite(f, portid)
    return portid, None


def _fib(c: _Ctx, f: bytearray, portid: int):
    """l3fwd_fib (SEM §3.3, DIFF D10): IPv4 ptype bit -> rte_fib, everything else ->
    rte_fib6 on frame bytes 38..53; no port-mask re-check; send_packets_multi."""
    if _ethertype(f) == ETHER_IPV4:
        if len(f) < MIN_IPV4:
            return None, "truncated"
        hop = c.lpm4.lookup(bytes(f[30:34]))
        dst = portid if hop is None else hop
        c.rewrite(f, dst)
        if not _rfc1812_process(f):
            return None, "rfc1812_invalid"
        return dst, None
    if len(f) < MIN_IPV6:
        return None, "truncated"
    hop = c.lpm6.lookup(bytes(f[38:54]))
    dst = portid if hop is None else hop
    c.rewrite(f, dst)
    return dst, None


def _acl(c: _Ctx, f: bytearray, portid: int):
    """acl_process_pkts + acl_send_packets (ACL "Which packets are classified", "Verdict
    per packet"): the ptype is the EtherType alone; the 5-tuple sits at fixed offsets (no
    IHL, no extension headers); miss or deny drops; a route line forwards, then RFC 1812
    for IPv4 and the MAC rewrite.  No input-port fallback, no port-mask re-check (route
    ports are checked when the rules are loaded).  Both pipelines are the same."""
    et = _ethertype(f)
    if et == ETHER_IPV4:
        if len(f) < MIN_ACL_V4:
            return None, "truncated"
        # IPv4 header at 14: proto +9, src +12, dst +16, "ports" +20..23
        hit = c.acl4.lookup(f[23], bytes(f[26:30]), bytes(f[30:34]),
                            f[34] << 8 | f[35], f[36] << 8 | f[37])
    elif et == ETHER_IPV6:
        if len(f) < MIN_ACL_V6:
            return None, "truncated"
        # IPv6 header at 14: next header +6, src +8, dst +24, "ports" +40..43
        hit = c.acl6.lookup(f[20], bytes(f[22:38]), bytes(f[38:54]),
                            f[54] << 8 | f[55], f[56] << 8 | f[57])
    else:
        return None, "unknown_ptype"    # ARP, VLAN, ... : TYPE_NONE
    if hit is None:
        return None, "acl_miss"
    kind, dst = hit
    if kind == "@":
        return None, "acl_deny"
    c.rewrite(f, dst)
    if et == ETHER_IPV4 and not _rfc1812_process(f):
        return None, "rfc1812_invalid"
    return dst, None


_HANDLERS = {
    ("lpm", "simple"): _lpm_simple,
    ("lpm", "multi"): _lpm_multi,
    ("em", "simple"): _em_simple,
    ("em", "multi"): _em_multi,
    ("fib", "simple"): _fib,   # FIB: both pipelines identical (SEM §3.3)
    ("fib", "multi"): _fib,
    ("acl", "simple"): _acl,   # ACL: one path, same TX result either way (ACL "TX path")
    ("acl", "multi"): _acl,
}


# ---------------------------------------------------------------------------------------
# Start-up checks: options with which dpdk-l3fwd exits before forwarding anything
# ---------------------------------------------------------------------------------------
def l3fwd_start_error(*, portmask: int, lookup: str = "lpm", acl_v4=None, acl_v6=None,
                      max_pkt_len: int | None = None, **_other) -> str | None:
    """Why dpdk-l3fwd (over net_pcap) would exit before forwarding, or None if it starts.

    Takes the keyword arguments of ``l3fwd_oracle`` (the others do not matter here).
    Checked in l3fwd's order: rule files (read_config_files), then the port setup.
    """
    if lookup == "acl":
        # read_config_files_acl: both files required, no built-in rules (ACL "Rule files")
        if acl_v4 is None:
            return "IPv4 rule file not specified"
        if acl_v6 is None:
            return "IPv6 rule file not specified"
        for rules in (acl_v4, acl_v6):
            for kind, *_fields, port in rules:
                if kind == "R" and not _port_enabled(port, portmask):
                    return f"fwd number illegal:{port}"
    if max_pkt_len is not None:
        # config_port_max_pkt_len: RTE_ETHER_MIN_LEN..MAX_JUMBO_PKT_LEN
        if not 64 <= max_pkt_len <= 9600:
            return f"Invalid max packet length: {max_pkt_len}"
        # net_pcap rx_queue_setup: MTU + 14 must fit one mbuf without scatter (LCQ)
        if max_pkt_len > MBUF_DATA_ROOM:
            return ("Rx scatter is disabled and RxQ mbuf pool object size is too small "
                    f"(buf_size={MBUF_DATA_ROOM}, max_rx_pkt_len={max_pkt_len})")
    return None


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------
def l3fwd_oracle(inputs: dict[int, list[bytes]], *, portmask: int, lookup: str = "lpm",
                 pipeline: str = "multi",
                 routes_v4: list[tuple[str, int, int]] | None = None,
                 routes_v6: list[tuple[str, int, int]] | None = None,
                 em_v4: list[tuple[str, str, int, int, int, int]] | None = None,
                 em_v6: list[tuple[str, str, int, int, int, int]] | None = None,
                 acl_v4: list[tuple] | None = None,
                 acl_v6: list[tuple] | None = None,
                 ipv6: bool = False,
                 eth_dest: dict[int, str] | None = None,
                 port_mac: dict[int, str] | None = None,
                 rx_burst: int = 32,
                 max_pkt_len: int | None = None,
                 config: list[tuple[int, int, int]] | None = None,
                 hits: dict | None = None,
                 ) -> tuple[dict, dict[str, int]]:
    """Forward ``inputs`` (input port -> frames) like dpdk-l3fwd.

    Returns ({enabled port: transmitted frames in order}, {drop reason: count}). With
    ``config`` ((port, queue, lcore) tuples as --config gives them), ``inputs`` maps
    (port, RX queue) -> frames and the result maps (port, TX queue) -> frames.
    Inputs on ports outside ``portmask`` are not polled (l3fwd has no RX queue there).
    ``lookup="acl"`` needs both ``acl_v4`` and ``acl_v6`` (``parse_rule_file_acl``).
    Raises ValueError for options with which dpdk-l3fwd would not start
    (``l3fwd_start_error``); ``max_pkt_len`` up to 2048 changes nothing. ``hits``, when
    given, is filled with the per-rule hit counters: (table, the rule's ordinal among its
    file's rules) -> [packets, bytes] for each packet transmitted (or denied by an ACL
    line) whose table lookup that rule decided.
    """
    if (lookup, pipeline) not in _HANDLERS:
        raise ValueError(f"unsupported lookup/pipeline {lookup}/{pipeline}")
    if rx_burst < 1:
        raise ValueError("rx_burst must be >= 1")
    handler = _HANDLERS[(lookup, pipeline)]
    enabled = [p for p in range(RTE_MAX_ETHPORTS) if (portmask >> p) & 1]
    if portmask >> RTE_MAX_ETHPORTS:
        raise ValueError("portmask has ports >= RTE_MAX_ETHPORTS")
    error = l3fwd_start_error(portmask=portmask, lookup=lookup, acl_v4=acl_v4,
                              acl_v6=acl_v6, max_pkt_len=max_pkt_len)
    if error is not None:
        raise ValueError(f"dpdk-l3fwd would exit: {error}")

    eth_dest = eth_dest or {}
    port_mac = port_mac or {}
    dmac = {p: _mac(eth_dest.get(p, "02:00:00:00:00:%02x" % p)) for p in enabled}
    smac = {p: _mac(port_mac.get(p, "02:70:63:61:70:%02x" % p)) for p in enabled}

    lpm4 = lpm6 = em4 = em6 = acl4 = acl6 = None
    if lookup == "acl":
        acl4, acl6 = _ACL(acl_v4), _ACL(acl_v6)
    elif lookup in ("lpm", "fib"):
        lpm4 = _LPM(DEFAULT_LPM_V4 if routes_v4 is None else routes_v4, portmask,
                    allow_depth0=(lookup == "fib"), family=4)
        lpm6 = _LPM(DEFAULT_LPM_V6 if routes_v6 is None else routes_v6, portmask,
                    allow_depth0=(lookup == "fib"), family=6)
    else:
        # Only one family is populated (DEF §A.4, setup_hash): the other table is empty.
        v4 = DEFAULT_EM_V4 if em_v4 is None else em_v4
        v6 = DEFAULT_EM_V6 if em_v6 is None else em_v6
        em4 = _EM([] if ipv6 else v4, portmask)
        em6 = _EM(v6 if ipv6 else [], portmask)
    ctx = _Ctx(portmask, lpm4, lpm6, em4, em6, acl4, acl6, dmac, smac)
    for family, table in ((4, lpm4 or em4 or acl4), (6, lpm6 or em6 or acl6)):
        table.name = f"{lookup}{family}"
    ctx.hits = hits

    out = {p: [] for p in enabled}
    drops = Counter()
    # One lcore, enabled ports with input in ascending order (SEM §1, DN §2); with
    # ``config``, each lcore polls its (port, queue) list in --config order and sends on
    # its own TX queue, numbered by ascending lcore id (LCQ "--config", "TX queues").
    if config is None:
        _poll([(p, inputs[p]) for p in sorted(inputs) if p in out], handler, ctx, rx_burst, out, drops)
        return out, dict(drops)
    lcores = sorted({lcore for _, _, lcore in config})
    per_queue = {}
    for k, lcore in enumerate(lcores):
        lcore_out = {p: [] for p in enabled}
        polled = [(port, inputs.get((port, queue), [])) for port, queue, lc in config if lc == lcore]
        _poll(polled, handler, ctx, rx_burst, lcore_out, drops)
        per_queue.update({(p, k): frames for p, frames in lcore_out.items()})
    return per_queue, dict(drops)


def _poll(sources, handler, ctx, rx_burst, out, drops) -> None:
    """One lcore's main loop over ``sources`` ((port, frames) in polling order): up to
    rx_burst frames of each per round until all are drained. Per output port the
    frames leave in processing order (DN §1). A record longer than the mbuf is read and
    dropped inside eth_pcap_rx's loop (`continue`): it uses up one of the poll's
    rx_burst slots, so that poll returns fewer packets (LCQ "Jumbo frames")."""
    pos = [0] * len(sources)
    while any(pos[i] < len(frames) for i, (_, frames) in enumerate(sources)):
        for i, (p, frames) in enumerate(sources):
            burst = frames[pos[i]:pos[i] + rx_burst]
            pos[i] += len(burst)
            for frame in burst:
                if len(frame) > MBUF_DATA_ROOM:
                    drops["oversize"] += 1
                    continue
                f = bytearray(frame)
                if len(f) < MIN_ETH:
                    drops["truncated"] += 1
                    continue
                for table in (ctx.lpm4, ctx.lpm6, ctx.em4, ctx.em6, ctx.acl4, ctx.acl6):
                    if table is not None:
                        table.last = None
                dst, reason = handler(ctx, f, p)
                if ctx.hits is not None and (dst is not None or reason == "acl_deny"):
                    for table in (ctx.lpm4, ctx.lpm6, ctx.em4, ctx.em6, ctx.acl4, ctx.acl6):
                        if table is not None and table.last is not None:
                            count = ctx.hits.setdefault(table.last, [0, 0])
                            count[0] += 1
                            count[1] += len(frame)
                if dst is None:
                    drops[reason] += 1
                else:
                    out[dst].append(bytes(f))
