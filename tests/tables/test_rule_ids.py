"""Rule ids beside next hops: every lookup of Lpm4 / Lpm6 (scalar ``lookup_rule``, bulk
``lookup_bulk(..., rules=True)``, exact ``rule``) and of the exact-match table must name
the rule whose next hop it returns, through overrides (a re-added prefix: the later id),
deletes (the covering rule takes over, its id with it), tbl8 groups folded back into
their parent, and bulk ``build()``.

Oracles, independent of the tables: a brute-force scan over the live rule set (the
longest matching prefix, its current next hop and id) and, for IPv4, pytricia.
"""
from __future__ import annotations

import numpy as np
import pytricia
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from l3fwd_sim.l3fwd.em import KEY_WORDS, em_table, rule_key
from l3fwd_sim.l3fwd.rules import EmRule
from l3fwd_sim.tables.hash import ExactMatchTable
from l3fwd_sim.tables.lpm import Lpm4, Lpm6

PROPS = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MAX_ID = 2**32 - 1
NH_MAX = {32: 2**24 - 1, 128: 2**21 - 1}


# --------------------------------------------------------------------------- oracle


class RuleSet:
    """The live rules as {(masked prefix, depth): (next hop, rule id)}; a re-added prefix
    replaces its next hop and id. ``lookup`` scans every rule (no cleverness)."""

    def __init__(self, bits: int):
        self.bits = bits
        self.rules: dict[tuple[int, int], tuple[int, int]] = {}
        self.seen: set[tuple[int, int]] = set()      # every prefix ever added, live or not

    def key(self, ip: int, depth: int) -> tuple[int, int]:
        return ip >> (self.bits - depth) << (self.bits - depth), depth

    def add(self, ip, depth, nh, rule):
        self.rules[self.key(ip, depth)] = (nh, rule)
        self.seen.add(self.key(ip, depth))

    def delete(self, ip, depth):
        del self.rules[self.key(ip, depth)]

    def lookup(self, ip: int) -> tuple[int | None, int | None]:
        best, answer = -1, (None, None)
        for (prefix, depth), value in self.rules.items():
            shift = self.bits - depth
            if ip >> shift == prefix >> shift and depth > best:
                best, answer = depth, value
        return answer

    def probes(self) -> set[int]:
        """First and last address of every prefix ever added and their neighbours."""
        top = 2**self.bits - 1
        out = {0, top}
        for prefix, depth in self.seen:
            last = prefix | ((1 << (self.bits - depth)) - 1)
            out.update({prefix, last, (prefix - 1) & top, (last + 1) & top})
        return out


def as_keys(bits: int, ips):
    if bits == 32:
        return np.array(ips, np.uint32)
    return np.frombuffer(b"".join(ip.to_bytes(16, "big") for ip in ips), np.uint8).reshape(-1, 16)


def check(lpm, oracle: RuleSet, extra=(), pyt=None):
    """lookup_rule, lookup_bulk(rules=True) and rule() against the oracle (and pytricia)."""
    probes = sorted(oracle.probes() | set(extra))
    want = [oracle.lookup(p) for p in probes]
    got = [lpm.lookup_rule(p) for p in probes]
    bad = [(hex(p), w, g) for p, w, g in zip(probes, want, got) if w != g]
    assert not bad, f"lookup_rule (probe, want, got): {bad[:5]}"
    nhs, ids = lpm.lookup_bulk(as_keys(oracle.bits, probes), -7, rules=True)
    assert nhs.dtype == np.int64 and ids.dtype == np.int64
    want_nh = [-7 if w[0] is None else w[0] for w in want]
    want_id = [-1 if w[1] is None else w[1] for w in want]
    assert nhs.tolist() == want_nh
    assert ids.tolist() == want_id
    assert lpm.lookup_bulk(as_keys(oracle.bits, probes), -7).tolist() == want_nh   # rules=False: same hops
    for prefix, depth in oracle.seen:
        assert lpm.rule(prefix, depth) == oracle.rules.get((prefix, depth), (None, None))
    assert len(lpm) == len(oracle.rules)
    if pyt is not None:
        assert [pyt.get(p, (None, None)) for p in probes] == want


def v4_text(prefix: int, depth: int) -> str:
    return f"{prefix >> 24}.{prefix >> 16 & 255}.{prefix >> 8 & 255}.{prefix & 255}/{depth}"


# --------------------------------------------------------------------------- strategies


def address(bits: int):
    """Random addresses, and addresses near a few bases (so that prefixes nest, share
    tbl8 groups and sit on group edges)."""
    top = 2**bits - 1
    bases = st.sampled_from([0, top, 1 << (bits - 1), 0x0A000000 << (bits - 32), 0x0A0000FF << (bits - 32),
                             0xC0A80100 << (bits - 32)])
    keep = st.sampled_from([16, 24, 28, 32] if bits == 32 else [16, 24, 32, 48, 64, 100, 120, 128])
    near = st.builds(lambda b, k, r: (b >> (bits - k) << (bits - k)) | (r & (top >> k)),
                     bases, keep, st.integers(0, top))
    return st.one_of(near, near, st.integers(0, top))


def depth(bits: int):
    edges = ([8, 16, 23, 24, 25, 26, 28, 31, 32] if bits == 32 else
             [16, 24, 25, 32, 33, 40, 47, 48, 56, 64, 65, 96, 120, 127, 128])
    return st.one_of(st.sampled_from(edges), st.integers(6, bits), st.just(1) | st.integers(2, 5))


rule_id = st.one_of(st.integers(0, MAX_ID), st.sampled_from([0, 1, 2**31 - 1, 2**31, MAX_ID]))


def ops(bits: int):
    """add (fresh prefix), readd (a prefix added before, live or deleted, with a new next
    hop and id), delete (a live rule)."""
    nh = st.integers(0, NH_MAX[bits])
    add = st.tuples(st.just("add"), address(bits), depth(bits), nh, rule_id)
    readd = st.tuples(st.just("readd"), st.integers(0, 10**6), nh, rule_id)
    delete = st.tuples(st.just("delete"), st.integers(0, 10**6))
    return st.lists(st.one_of(add, add, readd, delete, delete), min_size=1, max_size=24)


def run_ops(lpm, oracle: RuleSet, steps, pyt=None, check_each=True):
    top = 2**oracle.bits - 1
    for step in steps:
        kind = step[0]
        if kind == "add":
            _, ip, d, nh, rid = step
            lpm.add(ip, d, nh, rid)
            oracle.add(ip, d, nh, rid)
        elif kind == "readd" and oracle.seen:
            _, pick, nh, rid = step
            prefix, d = sorted(oracle.seen)[pick % len(oracle.seen)]
            lpm.add(prefix | (pick & (top >> d)), d, nh, rid)           # host bits set: masked away
            oracle.add(prefix, d, nh, rid)
        elif kind == "delete" and oracle.rules:
            prefix, d = sorted(oracle.rules)[step[1] % len(oracle.rules)]
            lpm.delete(prefix, d)
            oracle.delete(prefix, d)
        else:
            continue
        if pyt is not None:
            pyt_sync(pyt, oracle)
        if check_each:
            check(lpm, oracle, pyt=pyt)


def pyt_sync(pyt, oracle: RuleSet):
    """pytricia kept equal to the live rules (its own insert/delete)."""
    live = {v4_text(p, d): v for (p, d), v in oracle.rules.items()}
    for text in [t for t in pyt if t not in live]:
        del pyt[text]
    for text, value in live.items():
        pyt[text] = value


# --------------------------------------------------------------------------- LPM: add / delete sequences


@PROPS
@given(steps=ops(32), seed=st.integers(0, 2**32 - 1))
def test_lpm4_rule_ids_follow_adds_and_deletes(steps, seed):
    lpm, oracle, pyt = Lpm4(), RuleSet(32), pytricia.PyTricia(32)
    run_ops(lpm, oracle, steps, pyt)
    rng = np.random.default_rng(seed)
    check(lpm, oracle, rng.integers(0, 2**32, 200).tolist(), pyt)


@PROPS
@given(steps=ops(128), seed=st.integers(0, 2**32 - 1))
def test_lpm6_rule_ids_follow_adds_and_deletes(steps, seed):
    lpm, oracle = Lpm6(), RuleSet(128)
    run_ops(lpm, oracle, steps)
    rng = np.random.default_rng(seed)
    check(lpm, oracle, [int.from_bytes(rng.bytes(16), "big") for _ in range(200)])


@PROPS
@given(bits=st.sampled_from([32, 128]), steps=st.data(), order=st.randoms(use_true_random=False))
def test_rule_ids_while_deleting_everything(bits, steps, order):
    """Deleting all live rules one by one in a random order, each step checked: every
    fold must leave the covering rule's id, and no group is left at the end."""
    lpm, oracle = (Lpm4() if bits == 32 else Lpm6()), RuleSet(bits)
    run_ops(lpm, oracle, steps.draw(ops(bits)), check_each=False)
    live = sorted(oracle.rules)
    order.shuffle(live)
    for prefix, d in live:
        lpm.delete(prefix, d)
        oracle.delete(prefix, d)
        check(lpm, oracle)
    assert lpm.tbl8_groups_used == 0


def IP(a, b, c, d):
    return a << 24 | b << 16 | c << 8 | d


def test_lpm4_fold_keeps_covering_rule_id():
    """A tbl8 group folded back into its tbl24 cell keeps the id of the rule that fills
    it; the deleted deep rule's id never leaks."""
    lpm, oracle = Lpm4(), RuleSet(32)
    for ip, d, nh, rid in [(IP(10, 0, 0, 0), 16, 1, 11), (IP(10, 0, 0, 0), 24, 2, 22),
                           (IP(10, 0, 0, 7), 32, 3, 33), (IP(10, 0, 0, 64), 26, 4, 44)]:
        lpm.add(ip, d, nh, rid)
        oracle.add(ip, d, nh, rid)
    assert lpm.tbl8_groups_used == 1
    assert lpm.lookup_rule(IP(10, 0, 0, 7)) == (3, 33)
    assert lpm.lookup_rule(IP(10, 0, 0, 8)) == (2, 22)
    assert lpm.lookup_rule(IP(10, 0, 0, 64)) == (4, 44)
    lpm.delete(IP(10, 0, 0, 64), 26)
    oracle.delete(IP(10, 0, 0, 64), 26)
    check(lpm, oracle)
    assert lpm.tbl8_groups_used == 1                     # the /32 still needs the group
    lpm.delete(IP(10, 0, 0, 7), 32)
    oracle.delete(IP(10, 0, 0, 7), 32)
    assert lpm.tbl8_groups_used == 0 and lpm.tbl24_entry(IP(10, 0, 0, 7)) == (False, 2)   # folded
    assert lpm.lookup_rule(IP(10, 0, 0, 7)) == (2, 22)
    check(lpm, oracle)
    # a group whose cells all fall back to a /16 folds to the /16's id
    lpm.add(IP(10, 0, 1, 200), 25, 5, 55)
    oracle.add(IP(10, 0, 1, 200), 25, 5, 55)
    assert lpm.tbl8_groups_used == 1 and lpm.lookup_rule(IP(10, 0, 1, 200)) == (5, 55)
    lpm.delete(IP(10, 0, 1, 200), 25)
    oracle.delete(IP(10, 0, 1, 200), 25)
    assert lpm.tbl8_groups_used == 0 and lpm.lookup_rule(IP(10, 0, 1, 200)) == (1, 11)
    check(lpm, oracle)
    # re-adding an existing prefix with another id replaces the id in tbl24 and in a tbl8 group
    lpm.add(IP(10, 0, 0, 9), 32, 6, 66)
    lpm.add(IP(10, 0, 0, 0), 24, 7, 77)
    lpm.add(IP(10, 0, 0, 0), 16, 8, 88)
    for ip, d, nh, rid in [(IP(10, 0, 0, 9), 32, 6, 66), (IP(10, 0, 0, 0), 24, 7, 77), (IP(10, 0, 0, 0), 16, 8, 88)]:
        oracle.add(ip, d, nh, rid)
    assert lpm.lookup_rule(IP(10, 0, 0, 1)) == (7, 77) and lpm.lookup_rule(IP(10, 0, 3, 1)) == (8, 88)
    check(lpm, oracle)
    # same next hop, new id only: still replaced
    lpm.add(IP(10, 0, 0, 0), 24, 7, 78)
    oracle.add(IP(10, 0, 0, 0), 24, 7, 78)
    assert lpm.lookup_rule(IP(10, 0, 0, 1)) == (7, 78) and lpm.rule(IP(10, 0, 0, 0), 24) == (7, 78)
    check(lpm, oracle)


def test_lpm6_deep_folds_keep_covering_rule_id():
    """IPv6: deleting a /128 folds ten levels of groups into the /48's cell, deleting
    the /48 folds the rest into the /20's tbl24 cells; each step names the right rule."""
    base = 0x20010DB8_00000000 << 64
    lpm, oracle = Lpm6(), RuleSet(128)
    rules = [(base, 20, 1, 101), (base | 0xAB << 80, 48, 2, 102), (base | 0xAB << 80 | 5, 128, 3, 103),
             (base | 0xAB << 80 | 1 << 72, 64, 4, 104)]
    for ip, d, nh, rid in rules:
        lpm.add(ip, d, nh, rid)
        oracle.add(ip, d, nh, rid)
    host = base | 0xAB << 80 | 5
    assert lpm.lookup_rule(host) == (3, 103) and lpm.lookup_rule(host ^ 1) == (2, 102)
    used = lpm.tbl8_groups_used
    lpm.delete(host, 128)
    oracle.delete(host, 128)
    assert lpm.tbl8_groups_used < used
    assert lpm.lookup_rule(host) == (2, 102)
    check(lpm, oracle)
    lpm.delete(base | 0xAB << 80 | 1 << 72, 64)
    oracle.delete(base | 0xAB << 80 | 1 << 72, 64)
    check(lpm, oracle)
    lpm.delete(base | 0xAB << 80, 48)
    oracle.delete(base | 0xAB << 80, 48)
    assert lpm.tbl8_groups_used == 0
    assert lpm.lookup_rule(host) == (1, 101)
    check(lpm, oracle)
    lpm.delete(base, 20)
    assert lpm.lookup_rule(host) == (None, None)
    assert lpm.lookup_bulk(as_keys(128, [host]), 0, rules=True)[1].tolist() == [-1]


def test_rule_ids_survive_tbl8_growth():
    """More groups than the first tbl8 allocation (16): the ids of the groups written
    before each growth must be carried over, in add() and in build()."""
    rng = np.random.default_rng(5)
    rules = [(IP(10, 0, 0, 0), 8, 1, 4_000_000_000)]
    for n in range(70):                                         # 70 /24s, each with deeper rules
        base = IP(10, n, rng.integers(0, 256), 0)
        rules += [(base | int(rng.integers(0, 256)), int(rng.integers(25, 33)), n, 1000 + 3 * n + k) for k in range(3)]
    base6 = 0x20010DB8 << 96
    rules6 = [(base6, 16, 1, 7)] + [(base6 | n << 90 | int(rng.integers(0, 2**60)), int(rng.integers(40, 129)), n,
                                    2000 + n) for n in range(12)]
    for bits, cls, rs in ((32, Lpm4, rules), (128, Lpm6, rules6)):
        lpm, oracle = cls(), RuleSet(bits)
        for ip, d, nh, rid in rs:
            lpm.add(ip, d, nh, rid)
            oracle.add(ip, d, nh, rid)
        assert lpm.tbl8_groups_used > 16
        check(lpm, oracle)
        check(cls.from_rules(rs), oracle)
        for ip, d, _, _ in rs[1::2]:
            if lpm.rule(ip, d)[0] is not None:
                lpm.delete(ip, d)
                oracle.delete(ip, d)
        check(lpm, oracle)


# --------------------------------------------------------------------------- build() vs add() in file order


def rules_list(bits: int):
    """Rules in file order with duplicate prefixes (same prefix and depth, other next hop
    and id; also the same prefix written with other host bits)."""
    rule = st.tuples(address(bits), depth(bits), st.integers(0, NH_MAX[bits]), rule_id)

    def with_duplicates(rules, picks):
        out = list(rules)
        top = 2**bits - 1
        for pick, nh, rid, noise in picks:
            if out:
                ip, d, _, _ = out[pick % len(out)]
                out.insert(pick % (len(out) + 1), (ip ^ (noise & (top >> d)), d, nh, rid))
        return out

    picks = st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, NH_MAX[bits]), rule_id,
                               st.integers(0, 2**bits - 1)), max_size=10)
    return st.builds(with_duplicates, st.lists(rule, max_size=30), picks)


def build_vs_add(bits: int, rules, extra, deletes):
    cls = Lpm4 if bits == 32 else Lpm6
    seq, oracle = cls(), RuleSet(bits)
    for ip, d, nh, rid in rules:
        seq.add(ip, d, nh, rid)
        oracle.add(ip, d, nh, rid)
    built = cls()
    built.build(as_keys(bits, [r[0] for r in rules]),
                np.array([r[1] for r in rules], np.int64), np.array([r[2] for r in rules], np.int64),
                np.array([r[3] for r in rules], np.int64))
    from_rules = cls.from_rules(rules)
    for table in (seq, built, from_rules):
        check(table, oracle, extra)
    assert built.tbl8_groups_used == seq.tbl8_groups_used == from_rules.tbl8_groups_used
    # deletes on the built tables hand over to the covering rule, its id included
    live = sorted(oracle.rules)
    for pick in deletes:
        if not live:
            break
        prefix, d = live.pop(pick % len(live))
        oracle.delete(prefix, d)
        for table in (seq, built, from_rules):
            table.delete(prefix, d)
    for table in (seq, built, from_rules):
        check(table, oracle, extra)


@PROPS
@given(rules=rules_list(32), seed=st.integers(0, 2**32 - 1), deletes=st.lists(st.integers(0, 10**6), max_size=8))
def test_lpm4_build_equals_add_in_file_order(rules, seed, deletes):
    rng = np.random.default_rng(seed)
    build_vs_add(32, rules, rng.integers(0, 2**32, 100).tolist(), deletes)


@PROPS
@given(rules=rules_list(128), seed=st.integers(0, 2**32 - 1), deletes=st.lists(st.integers(0, 10**6), max_size=8))
def test_lpm6_build_equals_add_in_file_order(rules, seed, deletes):
    rng = np.random.default_rng(seed)
    build_vs_add(128, rules, [int.from_bytes(rng.bytes(16), "big") for _ in range(100)], deletes)


def test_build_later_duplicate_id_wins():
    rules = [(IP(10, 1, 2, 3), 32, 1, 1), (IP(10, 0, 0, 0), 8, 2, 2), (IP(10, 1, 2, 3), 32, 3, 3),
             (IP(10, 9, 9, 9), 8, 2, 4), (IP(10, 1, 2, 0), 24, 5, 5), (IP(10, 1, 2, 3), 32, 3, 6)]
    built = Lpm4()
    built.build(np.array([r[0] for r in rules], np.uint32), [r[1] for r in rules], [r[2] for r in rules],
                [r[3] for r in rules])
    for lpm in (Lpm4.from_rules(rules), built):
        assert lpm.lookup_rule(IP(10, 1, 2, 3)) == (3, 6)       # same next hop as line 3, but line 6's id
        assert lpm.lookup_rule(IP(10, 200, 0, 0)) == (2, 4)
        assert lpm.lookup_rule(IP(10, 1, 2, 4)) == (5, 5)
        assert lpm.rule(IP(10, 1, 2, 3), 32) == (3, 6) and lpm.rule(IP(10, 0, 0, 0), 8) == (2, 4)
        lpm.delete(IP(10, 1, 2, 3), 32)
        assert lpm.lookup_rule(IP(10, 1, 2, 3)) == (5, 5) and lpm.tbl8_groups_used == 0
        lpm.delete(IP(10, 1, 2, 0), 24)
        assert lpm.lookup_rule(IP(10, 1, 2, 3)) == (2, 4)
    v6 = Lpm6.from_rules([(1 << 127, 1, 1, 10), (1 << 127 | 7, 128, 2, 20), (1 << 127 | 7, 128, 3, 30),
                          (1 << 127 | 9, 1, 4, 40)])
    assert v6.lookup_rule(1 << 127 | 7) == (3, 30) and v6.lookup_rule(1 << 127 | 8) == (4, 40)
    assert v6.lookup_rule(1) == (None, None)
    v6.delete(1 << 127 | 7, 128)
    assert v6.lookup_rule(1 << 127 | 7) == (4, 40) and v6.tbl8_groups_used == 0


# --------------------------------------------------------------------------- exact match


def em_flows(family: int):
    """Flows from a small pool of fields, and repeats of earlier flows with another port."""
    bits = 32 if family == 4 else 128
    addr = st.sampled_from([0, 1, 2**bits - 1, 0xC612_0001 << (bits - 32), 0xC612_0002 << (bits - 32)])
    flow = st.tuples(addr, addr, st.sampled_from([0, 9, 65535]), st.sampled_from([9, 80]),
                     st.sampled_from([6, 17]), st.integers(0, 255))

    def repeat(flows, picks):
        for pick, port in picks:
            if flows:
                flows.insert(pick % (len(flows) + 1), flows[pick % len(flows)][:5] + (port,))
        return flows

    return st.builds(repeat, st.lists(flow, max_size=30),
                     st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=10))


@settings(max_examples=60, deadline=None)
@given(family=st.sampled_from([4, 6]), flows=em_flows(4), flows6=em_flows(6),
       gaps=st.lists(st.integers(1, 5), min_size=40, max_size=40), misses=em_flows(4), misses6=em_flows(6))
def test_em_table_later_line_wins(family, flows, flows6, gaps, misses, misses6):
    flows, misses = (flows, misses) if family == 4 else (flows6, misses6)
    lines = np.cumsum(gaps)[:len(flows)].tolist()
    rules = [EmRule(d, s, dp, sp, pr, port, f"rules.cfg:{line}") for (d, s, dp, sp, pr, port), line
             in zip(flows, lines)]
    table = em_table(rules, family)
    want: dict[tuple, tuple[int, int]] = {}                  # brute force: the last line of each key
    for (d, s, dp, sp, pr, port), line in zip(flows, lines):
        want[(d, s, dp, sp, pr)] = (port, line)
    assert len(table) == len(want)
    queries = [f[:5] for f in flows + misses]
    keys = [rule_key(EmRule(d, s, dp, sp, pr, 0, "q:1"), family) for d, s, dp, sp, pr in queries]
    expect = [want.get(q, (None, None)) for q in queries]
    assert [table.lookup_rule(k) for k in keys] == expect
    assert [table.lookup(k) for k in keys] == [e[0] for e in expect]
    arr = np.array(keys, np.uint64).reshape(-1, KEY_WORDS[family])
    default = np.arange(len(keys), dtype=np.int64) + 1000
    ports, ids = table.lookup_bulk(arr, default, rules=True)
    assert ports.tolist() == [d if e[0] is None else e[0] for e, d in zip(expect, default.tolist())]
    assert ids.tolist() == [-1 if e[1] is None else e[1] for e in expect]
    assert table.lookup_bulk(arr, default).tolist() == ports.tolist()


def test_em_duplicates_and_misses():
    a, b = (0xC6120001, 0xC6120002)
    rules = [EmRule(a, b, 9, 9, 17, 1, "f:3"), EmRule(b, a, 9, 9, 17, 2, "f:5"), EmRule(a, b, 9, 9, 17, 3, "f:8"),
             EmRule(a, b, 9, 9, 6, 3, "f:9"), EmRule(a, b, 9, 9, 17, 3, "f:12")]
    table = em_table(rules, 4)
    key = rule_key(rules[0], 4)
    assert table.lookup_rule(key) == (3, 12)                  # same port as line 8: still line 12's id
    assert table.lookup_rule(rule_key(rules[1], 4)) == (2, 5)
    assert table.lookup_rule(rule_key(rules[3], 4)) == (3, 9)
    miss = rule_key(EmRule(a, b, 9, 10, 17, 0, "q:1"), 4)
    assert table.lookup_rule(miss) == (None, None)
    ports, ids = table.lookup_bulk(np.array([key, miss, rule_key(rules[1], 4)], np.uint64), np.full(3, -5), rules=True)
    assert ports.tolist() == [3, -5, 2] and ids.tolist() == [12, -1, 5]
    empty = ExactMatchTable(2, {}, {})
    ports, ids = empty.lookup_bulk(np.array([key], np.uint64), np.full(1, -5), rules=True)
    assert ports.tolist() == [-5] and ids.tolist() == [-1] and empty.lookup_rule(key) == (None, None)
    # a flow without an id gets 0; ids are per key, not per insertion slot
    t = ExactMatchTable(1, {(1,): 4, (2,): 5, (3,): 6}, {(2,): 7, (9,): 8})
    assert [t.lookup_rule((k,)) for k in (1, 2, 3, 9)] == [(4, 0), (5, 7), (6, 0), (None, None)]
    ports, ids = t.lookup_bulk(np.array([[3], [2], [1], [9]], np.uint64), np.full(4, -1), rules=True)
    assert ports.tolist() == [6, 5, 4, -1] and ids.tolist() == [0, 7, 0, -1]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 3000), seed=st.integers(0, 2**32 - 1))
def test_em_bulk_matches_scalar_with_collisions(n, seed):
    """Many keys (long probe chains in the open-addressing table): bulk ids = scalar ids."""
    rng = np.random.default_rng(seed)
    keys = rng.integers(0, 2**63, (n, 2), dtype=np.uint64) & np.uint64(0xFFFF)   # small words: duplicates
    tuples = [tuple(k) for k in keys.tolist()]
    flows = {k: i % 256 for i, k in enumerate(tuples)}
    rules = {k: i + 1 for i, k in enumerate(tuples)}        # later duplicate wins in both dicts
    table = ExactMatchTable(2, flows, rules)
    queries = np.concatenate([keys, rng.integers(0, 2**16, (200, 2), dtype=np.uint64)])
    ports, ids = table.lookup_bulk(queries, np.full(len(queries), -1), rules=True)
    expect = [(flows[q], rules[q]) if q in flows else (None, None) for q in map(tuple, queries.tolist())]
    assert ports.tolist() == [-1 if e[0] is None else e[0] for e in expect]
    assert ids.tolist() == [-1 if e[1] is None else e[1] for e in expect]
    assert [table.lookup_rule(tuple(q)) for q in queries.tolist()] == expect
