"""l3fwd's ACL mode (``l3fwd_acl.c``, acl.md): the fields it gives rte_acl, the
5-tuple it reads at fixed offsets, and what a result means.

* **Fields** (``ipv4_defs`` / ``ipv6_defs``): protocol (BITMASK, 8 bits), source and
  destination address (MASK: one 32-bit field for IPv4, four for IPv6), source and
  destination port (RANGE, 16 bits).
* **Keys**: read at fixed offsets from the L3 header, never following IHL or extension
  headers — IPv4: protocol 9, addresses 12..19, "ports" 20..23; IPv6: next header 6,
  addresses 8..39, "ports" 40..43. So the "ports" of IPv4 with options are option bytes,
  those of ICMP are type·256 + code and the checksum, and so on.
* **Result**: the first matching line of the file (``acl_add_rules`` gives line k
  priority ``RTE_ACL_MAX_PRIORITY - k``): a route line's port, or a deny; no match is a
  miss, and in ACL mode a miss is dropped (not sent back out of the input port).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..dataplane.stats import RX_DROPS
from ..dataplane.tx import account_multi, account_simple
from ..tables.acl import BITMASK, MASK, RANGE, AclField, AclTable
from . import ptype
from .pipelines import REASON_CODE
from .rules import AclRules

FIELDS = {4: [AclField(BITMASK, 8), AclField(MASK, 32), AclField(MASK, 32), AclField(RANGE, 16), AclField(RANGE, 16)],
          6: [AclField(BITMASK, 8), *[AclField(MASK, 32)] * 8, AclField(RANGE, 16), AclField(RANGE, 16)]}
# Frame offsets of the key (L3 at 14): protocol, source address, destination address, "ports".
KEY_AT = {4: (23, 26, 30, 34), 6: (20, 22, 38, 54)}
MISS, DENY = -1, -2                  # actions besides an output port


def _address_fields(words: np.ndarray, length: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An address of ``words`` 32-bit words and its prefix length as per-word MASK
    fields (``parse_ipv6_net``: word i keeps ``clip(length - 32 i, 0, 32)`` bits)."""
    lengths = np.clip(length[:, None] - 32 * np.arange(words.shape[1]), 0, 32)
    return words, lengths


def acl_table(rules: AclRules) -> AclTable:
    """rte_acl's context for one rule file, rules in file (priority) order."""
    src, src_len = _address_fields(rules.src, rules.src_len)
    dst, dst_len = _address_fields(rules.dst, rules.dst_len)
    values = np.column_stack([rules.proto, src, dst, rules.sport[:, 0], rules.dport[:, 0]])
    mask_ranges = np.column_stack([rules.proto_mask, src_len, dst_len, rules.sport[:, 1], rules.dport[:, 1]])
    return AclTable(FIELDS[rules.family], values, mask_ranges)


@dataclass
class AclRoutes:
    """The IPv4 and IPv6 ACL contexts and, per rule, its action (port or ``DENY``) and
    its line in ``files[family]``."""
    v4: AclTable
    v6: AclTable
    action4: np.ndarray
    action6: np.ndarray
    installed: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    lines: dict = field(default_factory=dict)        # family -> line of each rule

    @classmethod
    def from_rules(cls, rules4: AclRules, rules6: AclRules, files: dict | None = None) -> "AclRoutes":
        actions = [np.where(r.port >= 0, r.port, DENY) for r in (rules4, rules6)]
        count = {"ipv4": len(rules4), "ipv6": len(rules6)}
        lines = {r.family: np.array([int(w.rsplit(":", 1)[1]) for w in r.where], np.int64) for r in (rules4, rules6)}
        return cls(acl_table(rules4), acl_table(rules6), *actions, count, files or {}, lines)

    def actions(self, heads: np.ndarray, rows: np.ndarray, family: int, rules: bool = False):
        """Per row of ``heads[rows]`` (frames of ``family``, long enough for the key):
        the output port, ``DENY`` or ``MISS``; with ``rules`` also the deciding rule's
        line (-1 on a miss)."""
        table, action = (self.v4, self.action4) if family == 4 else (self.v6, self.action6)
        rule = table.classify(acl_keys(heads, rows, family))
        result = np.where(rule >= 0, action[rule], MISS)
        if rules:
            return result, np.where(rule >= 0, self.lines[family][rule], -1)
        return result


def acl_keys(heads: np.ndarray, rows: np.ndarray, family: int) -> np.ndarray:
    """The keys of ``heads[rows]`` as :meth:`AclTable.classify` takes them: one row per
    field of ``FIELDS[family]``."""
    proto_at, src_at, dst_at, ports_at = KEY_AT[family]
    heads = heads[rows, :ports_at + 4]        # one gather of the bytes the key spans (faster than strided reads)
    words = 1 if family == 4 else 4
    columns = np.empty((len(FIELDS[family]), len(heads)), np.int64)
    columns[0] = heads[:, proto_at]
    for i, at in enumerate([src_at + 4 * w for w in range(words)] + [dst_at + 4 * w for w in range(words)]):
        columns[1 + i] = heads[:, at:at + 4].view(">u4")[:, 0]
    for i, at in enumerate((ports_at, ports_at + 2)):
        columns[1 + 2 * words + i] = heads[:, at:at + 2].view(">u2")[:, 0]
    return columns


def classify_burst(routes: AclRoutes, heads: np.ndarray, caplen: np.ndarray, trace=None):
    """``acl_process_pkts``' classification over a burst: the EtherType picks the IPv4
    or IPv6 context, each packet long enough for its key is classified. Returns the
    lpm-style packet type, the packets too short for what is read (``truncated``) and
    each packet's action (``MISS`` where nothing was classified). ``trace``: a
    :class:`~l3fwd_sim.dataplane.hits.Decisions` to note the classifications in."""
    kind = ptype.lpm_ptype_bulk(heads)
    truncated = caplen < ptype.ACL_NEED[kind]
    action = np.full(len(heads), MISS, np.int64)
    for family, l3 in ((4, ptype.IPV4), (6, ptype.IPV6)):
        rows = np.flatnonzero(~truncated & (kind == l3))
        if not len(rows):
            continue
        if trace is None:
            action[rows] = routes.actions(heads, rows, family)
        else:
            action[rows], rule = routes.actions(heads, rows, family, rules=True)
            trace.lookup(rows, f"acl{family}", rule, np.where(action[rows] >= 0, action[rows], -1))
    return kind, truncated, action


# Drops of the classification step, by reason code: a burst with any of them is sent
# packet by packet (the last codes are the port's RX drops, which never reach here).
STEP_DROPS = np.zeros(1 + len(REASON_CODE) + len(RX_DROPS), np.uint8)
STEP_DROPS[[REASON_CODE[r] for r in ("acl_deny", "acl_miss", "unknown_ptype", "truncated")]] = 1


_SEND_GROUP = np.zeros(3, np.int64)               # by lpm ptype class: its place in a burst's sending order
_SEND_GROUP[[ptype.IPV4, ptype.IPV6, ptype.UNKNOWN]] = (0, 1, 2)


def ipv4_first(batch) -> np.ndarray:
    """The order ACL mode hands a super-burst to TX before v24.07 (``releases.py``:
    ``acl_arrival_order``, aa7c6077c1): l3fwd split each RX burst by packet type and
    sent its IPv4 packets, then its IPv6 ones, each group in arrival order; the others
    are dropped. Returns the packets' indexes in that order (bursts keep theirs)."""
    group = _SEND_GROUP[ptype.lpm_ptype_bulk(batch.heads)]      # 0: IPv4, 1: IPv6, 2: neither
    return np.argsort(batch.burst * 3 + group, kind="stable")



def account_acl(tx, burst: np.ndarray, dest: np.ndarray, reason: np.ndarray) -> None:
    """``acl_send_packets`` on x86 (``ACL_SEND_MULTI``): an rx burst in which the ACL
    step dropped nothing goes through ``send_packets_multi`` (same-port runs), any other
    through ``send_packets_single`` (``send_packets_multi`` cannot take BAD_PORT hops).
    Bursts are accounted in order, each stretch of one kind at once."""
    if not len(dest):
        return
    single = np.isin(burst, burst[STEP_DROPS[reason].view(bool)])
    starts = np.flatnonzero(np.diff(single, prepend=~single[0]))
    for start, end in zip(starts.tolist(), np.append(starts[1:], len(dest)).tolist()):
        part = slice(start, end)
        (account_simple if single[start] else account_multi)(tx, burst[part], dest[part])
