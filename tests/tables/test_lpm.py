"""Tests for l3fwd_sim.tables.lpm: DPDK test_lpm.c / test_lpm6.c cases (as listed in
shared/reference/dpdk/test_lpm_cases.md), property tests against a brute-force
ipaddress oracle, and cross-checks against pytricia."""

import ipaddress

import numpy as np
import pytest
import pytricia
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from l3fwd_sim.tables.lpm import Lpm4, Lpm6, LpmError

MAX = 2**32 - 1  # defv of rte_lpm_lookupx4 in test_lpm.c


def IP(a, b, c, d):
    return a << 24 | b << 16 | c << 8 | d


def x4(lpm, ips):
    """rte_lpm_lookupx4 with defv = UINT32_MAX, lanes hop[0..3]."""
    return lpm.lookup_bulk(np.array([ip & MAX for ip in ips], np.uint32), MAX).tolist()


def V6(text):
    return int(ipaddress.IPv6Address(text))


def v6_array(ints):
    return np.frombuffer(b"".join(i.to_bytes(16, "big") for i in ints), np.uint8).reshape(-1, 16)


# --------------------------------------------------------------------------- rte_lpm


def test_lpm_test3_add_bad_args():
    lpm = Lpm4()
    for depth in (0, 33):
        with pytest.raises(LpmError):
            lpm.add(IP(0, 0, 0, 0), depth, 100)
    for nh in (-1, 2**24):
        with pytest.raises(LpmError):
            lpm.add(IP(0, 0, 0, 0), 24, nh)
    lpm.add(IP(0, 0, 0, 0), 24, 2**24 - 1)  # the 24-bit next hop maximum is fine
    assert lpm.lookup(0) == 2**24 - 1 and len(lpm) == 1


def test_lpm_test4_delete_bad_args():
    lpm = Lpm4()
    for depth in (0, 33):
        with pytest.raises(LpmError):
            lpm.delete(IP(0, 0, 0, 0), depth)


def test_lpm_test6_add_lookup_delete_24():
    lpm = Lpm4()
    lpm.add(0, 24, 100)
    assert lpm.lookup(0) == 100
    lpm.delete(0, 24)
    assert lpm.lookup(0) is None


def test_lpm_test7_32_and_x4():
    lpm = Lpm4()
    ip = IP(0, 0, 0, 0)
    lpm.add(ip, 32, 100)
    assert lpm.lookup(ip) == 100
    assert x4(lpm, [ip, ip - 0x100, ip + 0x100, ip]) == [100, MAX, MAX, 100]
    lpm.delete(ip, 32)
    assert lpm.lookup(ip) is None


def test_lpm_test8_all_depths():
    lpm = Lpm4()
    ip1, ip2 = IP(127, 255, 255, 255), IP(128, 0, 0, 0)
    for depth in range(1, 33):
        lpm.add(ip2, depth, depth)
        assert lpm.lookup(ip1) is None
        assert lpm.lookup(ip2) == depth
        assert x4(lpm, [ip1, ip2, ip1, ip2]) == [MAX, depth, MAX, depth]
    for depth in range(32, 0, -1):
        lpm.delete(ip2, depth)
        assert lpm.lookup(ip1) is None
        if depth > 1:
            assert lpm.lookup(ip2) == depth - 1
            assert x4(lpm, [ip2, ip2, ip1, ip1]) == [depth - 1, depth - 1, MAX, MAX]
        else:
            assert lpm.lookup(ip2) is None
            assert x4(lpm, [ip2, ip2, ip1, ip1]) == [MAX] * 4
    assert len(lpm) == 0 and lpm.tbl8_groups_used == 0


def test_lpm_test9_overlaps():
    lpm = Lpm4()
    ip = IP(128, 0, 0, 0)
    # (a)
    lpm.add(ip, 24, 100)
    assert lpm.lookup(ip) == 100
    lpm.delete(ip, 24)
    assert lpm.lookup(ip) is None
    lpm.delete_all()
    # (b)
    lpm.add(ip, 23, 100)
    assert lpm.lookup(ip) == 100
    lpm.add(ip, 24, 101)
    assert lpm.lookup(ip) == 101
    lpm.delete(ip, 24)
    lpm.delete(ip, 23)
    assert lpm.lookup(ip) is None
    lpm.delete_all()
    # (c)
    lpm.add(ip, 32, 100)
    assert lpm.lookup(ip) == 100
    ip5 = IP(128, 0, 0, 5)
    lpm.add(ip5, 32, 101)
    assert lpm.lookup(ip5) == 101
    lpm.delete(ip5, 32)
    assert lpm.lookup(ip5) is None
    assert lpm.lookup(ip) == 100
    lpm.delete(ip, 32)
    assert lpm.lookup(ip) is None
    lpm.delete_all()
    # (d)
    lpm.add(ip, 25, 101)
    assert lpm.lookup(ip) == 101
    lpm.add(ip5, 32, 102)
    assert lpm.lookup(ip5) == 102
    lpm.delete(ip5, 32)
    assert lpm.lookup(ip5) == 101  # falls back to the /25
    lpm.delete(ip, 25)
    assert lpm.lookup(ip) is None


def test_lpm_test10_ranges_updates_absent_deletes():
    lpm = Lpm4()
    ip = IP(128, 0, 0, 0)
    for depth in (16, 25):
        lpm.add(ip, depth, 100)
        assert lpm.lookup(ip) == 100
        lpm.delete(ip, depth)
        assert lpm.lookup(ip) is None
        lpm.delete_all()
    ip10 = IP(128, 0, 0, 10)
    lpm.add(ip, 24, 100)
    lpm.add(ip10, 32, 101)
    assert lpm.lookup(ip10) == 101 and lpm.lookup(ip) == 100
    lpm.delete(ip, 24)
    assert lpm.lookup(ip) is None and lpm.lookup(ip10) == 101
    lpm.delete(ip10, 32)
    assert lpm.lookup(ip10) is None
    lpm.delete_all()
    for depth in (24, 32):  # next-hop update in tbl24, then in tbl8
        lpm.add(ip, depth, 100)
        lpm.add(ip, depth, 101)
        assert lpm.lookup(ip) == 101 and len(lpm) == 1
        lpm.delete(ip, depth)
        assert lpm.lookup(ip) is None
        lpm.delete_all()
    for depth in (24, 32):  # deleting an absent rule fails
        with pytest.raises(LpmError):
            lpm.delete(ip, depth)
        assert lpm.lookup(ip) is None


def test_lpm_test11():
    lpm = Lpm4()
    ip, ip10 = IP(128, 0, 0, 0), IP(128, 0, 0, 10)
    lpm.add(ip, 24, 100)
    lpm.add(ip10, 32, 101)
    assert lpm.lookup(ip10) == 101
    assert lpm.lookup(ip) == 100
    lpm.delete(ip, 24)
    assert lpm.lookup(ip) is None
    lpm.delete(ip10, 32)
    assert lpm.lookup(ip10) is None


def test_lpm_test12_tbl8_alloc_free_no_leak():
    lpm = Lpm4()
    ip = IP(128, 0, 0, 0)
    for _ in range(1000):
        lpm.add(ip, 32, 100)
        assert lpm.lookup(ip) == 100
        assert x4(lpm, [ip - 1, ip, ip + 1, ip]) == [MAX, 100, MAX, 100]
        lpm.delete(ip, 32)
        assert lpm.lookup(ip) is None
        assert lpm.tbl8_groups_used == 0


def test_lpm_test13_extend_contract_around_tbl24_rule():
    lpm = Lpm4()
    ip = IP(128, 0, 0, 0)
    lpm.add(ip, 24, 100)
    assert lpm.lookup(ip) == 100
    for _ in range(1000):
        lpm.add(ip, 32, 101)
        assert lpm.lookup(ip) == 101
        lpm.delete(ip, 32)
        assert lpm.lookup(ip) == 100
        assert lpm.tbl24_entry(ip) == (False, 100)
    lpm.delete(ip, 24)
    assert lpm.lookup(ip) is None


def test_lpm_test14_tbl8_exhaustion():
    lpm = Lpm4(max_tbl8_groups=512)
    for ip in range(0, IP(0, 1, 255, 0) + 1, 256):
        nh = 100 + ip
        lpm.add(ip, 32, nh)
        assert lpm.lookup(ip) == nh
        assert x4(lpm, [ip, ip + 1, ip + 2, ip + 3]) == [nh, MAX, MAX, MAX]
    assert lpm.tbl8_groups_used == 512
    with pytest.raises(LpmError) as exc:
        lpm.add(IP(1, 0, 0, 0), 32, 100)
    assert "\n" not in str(exc.value)
    # the failed add left the table unchanged
    assert lpm.lookup(IP(1, 0, 0, 0)) is None and len(lpm) == 512
    assert lpm.tbl8_groups_used == 512 and lpm.is_rule_present(IP(1, 0, 0, 0), 32) is None
    lpm.add(IP(0, 0, 0, 0), 30, 7)  # a rule inside an existing group needs no new group
    assert lpm.lookup(IP(0, 0, 0, 1)) == 7


def test_lpm_test16_exactly_256_groups():
    lpm = Lpm4(max_tbl8_groups=256)
    added = 0
    for ip in range(0xFFFFFF):
        try:
            lpm.add((ip << 8) + 0xF0, 30, 0)
        except LpmError:
            break
        added += 1
    assert added == 256


def test_lpm_test17_less_specific_adds_keep_tbl8():
    lpm = Lpm4()
    a, b, c = IP(10, 10, 10, 2), IP(10, 10, 10, 0), IP(10, 10, 20, 2)
    lpm.add(a, 32, 100)
    h1 = lpm.lookup(a)
    lpm.add(b, 24, 105)
    h2 = lpm.lookup(b)
    lpm.add(c, 25, 111)
    h3 = lpm.lookup(c)
    assert (h1, h2, h3) == (100, 105, 111)
    assert len({h1, h2, h3}) == 3
    assert lpm.lookup(a) == 100 and lpm.lookup(b) == 105


def test_lpm_test18_tbl8_recycling():
    lpm = Lpm4()
    ip = IP(192, 168, 100, 100)
    lpm.add(ip, 28, 1)
    ext, g = lpm.tbl24_entry(ip)
    assert ext
    lpm.add(ip, 23, 2)
    assert lpm.tbl24_entry(ip)[0]
    lpm.delete(ip, 28)
    assert lpm.tbl24_entry(ip) == (False, 2)  # group folded back: all entries are the /23
    lpm.add(ip, 28, 3)
    assert lpm.tbl24_entry(ip) == (True, g)
    lpm.add(ip, 24, 4)
    assert lpm.tbl24_entry(ip)[0]
    lpm.delete(ip, 28)
    assert lpm.tbl24_entry(ip) == (False, 4)
    lpm.add(ip, 28, 5)
    assert lpm.tbl24_entry(ip) == (True, g)
    assert lpm.tbl8_groups_used == 1


def test_lpm_lowest_free_group_reused_first():
    lpm = Lpm4()
    for i in range(4):
        lpm.add(IP(10, 0, i, 1), 32, i)
    assert [lpm.tbl24_entry(IP(10, 0, i, 0)) for i in range(4)] == [(True, i) for i in range(4)]
    lpm.delete(IP(10, 0, 2, 1), 32)
    lpm.delete(IP(10, 0, 1, 1), 32)
    lpm.add(IP(10, 0, 9, 1), 32, 9)
    lpm.add(IP(10, 0, 8, 1), 32, 8)
    assert lpm.tbl24_entry(IP(10, 0, 9, 0)) == (True, 1)
    assert lpm.tbl24_entry(IP(10, 0, 8, 0)) == (True, 2)
    assert lpm.tbl8_groups_used == 4


def test_lpm_same_depth_neighbours_do_not_collapse():
    # Two /25s with the same next hop fill a whole group with one value, but their depth
    # is > 24, so the group must stay (rte_lpm's recycle check needs depth <= 24).
    lpm = Lpm4()
    lpm.add(IP(1, 2, 3, 0), 25, 7)
    lpm.add(IP(1, 2, 3, 128), 25, 7)
    lpm.add(IP(1, 2, 3, 5), 32, 8)
    lpm.delete(IP(1, 2, 3, 5), 32)
    assert lpm.tbl24_entry(IP(1, 2, 3, 0))[0]
    lpm.delete(IP(1, 2, 3, 128), 25)
    assert lpm.lookup(IP(1, 2, 3, 200)) is None and lpm.lookup(IP(1, 2, 3, 1)) == 7
    lpm.delete(IP(1, 2, 3, 0), 25)
    assert lpm.tbl24_entry(IP(1, 2, 3, 0)) == (False, None) and lpm.tbl8_groups_used == 0


def test_lpm_misc_api():
    lpm = Lpm4()
    lpm.add(IP(10, 1, 2, 3), 16, 5)  # host bits are masked off
    assert lpm.is_rule_present(IP(10, 1, 0, 0), 16) == 5
    assert lpm.is_rule_present(IP(10, 1, 9, 9), 16) == 5
    assert lpm.is_rule_present(IP(10, 1, 0, 0), 17) is None
    with pytest.raises(LpmError):
        lpm.is_rule_present(0, 0)
    with pytest.raises(LpmError):
        lpm.add(2**32, 8, 1)
    lpm.add(np.uint32(IP(10, 2, 0, 0)), np.int64(16), np.uint32(6))  # numpy scalars work too
    assert lpm.lookup(np.uint32(IP(10, 2, 3, 4))) == 6
    assert lpm.is_rule_present(IP(10, 2, 0, 0), 16) == 6
    lpm.delete(np.uint32(IP(10, 2, 0, 0)), np.uint8(16))
    ips = np.array([IP(10, 1, 0, 0), IP(11, 0, 0, 0), IP(10, 1, 255, 255), 0], np.uint32)
    ports = np.array([0, 1, 2, 3], np.uint16)
    assert lpm.lookup_bulk(ips, ports).tolist() == [5, 1, 5, 3]  # per-key default
    out = np.full(4, 99, np.int64)
    res = lpm.lookup_bulk(ips, -1, out=out)
    assert res is out and out.tolist() == [5, -1, 5, -1]
    assert lpm.lookup_bulk(np.array([], np.uint32), -1).tolist() == []


# --------------------------------------------------------------------------- rte_lpm6

P8000 = V6("8000::")


def test_lpm6_test4_test5_bad_depths():
    lpm = Lpm6()
    for depth in (0, 129):
        with pytest.raises(LpmError):
            lpm.add(0, depth, 100)
        with pytest.raises(LpmError):
            lpm.delete(0, depth)


def test_lpm6_test9_16_range():
    lpm = Lpm6()
    lpm.add(0, 16, 100)
    ips = [b << 104 for b in range(255)]  # byte[2] = 0..254
    assert all(lpm.lookup(ip) == 100 for ip in ips)
    assert (lpm.lookup_bulk(v6_array(ips), -1) == 100).all()
    lpm.delete(0, 16)
    assert all(lpm.lookup(ip) is None for ip in ips)
    assert (lpm.lookup_bulk(v6_array(ips), -1) == -1).all()


@pytest.mark.parametrize("text, depth", [("::", 24), ("c0c:100::", 128)])
def test_lpm6_test15_test16(text, depth):
    lpm = Lpm6()
    ip = V6(text)
    lpm.add(ip, depth, 100)
    assert lpm.lookup(ip) == 100
    lpm.delete(ip, depth)
    assert lpm.lookup(ip) is None
    assert lpm.tbl8_groups_used == 0


def test_lpm6_test17_depths_1_to_16():
    lpm = Lpm6()
    ip1, ip2 = V6("7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), P8000
    for depth in range(1, 17):
        lpm.add(ip2, depth, depth)
        assert lpm.lookup(ip2) == depth and lpm.lookup(ip1) is None
    for depth in range(16, 0, -1):
        lpm.delete(ip2, depth)
        assert lpm.lookup(ip2) == (depth - 1 if depth > 1 else None)
        assert lpm.lookup(ip1) is None


def test_lpm6_test18_overlaps():
    lpm = Lpm6()
    ip, ip5 = P8000, V6("8000:5::")
    lpm.add(ip, 24, 100)  # (a)
    assert lpm.lookup(ip) == 100
    lpm.delete(ip, 24)
    assert lpm.lookup(ip) is None
    lpm.add(ip, 23, 100)  # (b)
    lpm.add(ip, 24, 101)
    assert lpm.lookup(ip) == 101
    lpm.delete(ip, 24)
    lpm.delete(ip, 23)
    assert lpm.lookup(ip) is None
    lpm.add(ip, 32, 100)  # (c)
    lpm.add(ip5, 32, 101)
    assert lpm.lookup(ip5) == 101
    lpm.delete(ip5, 32)
    assert lpm.lookup(ip5) is None and lpm.lookup(ip) == 100
    lpm.delete(ip, 32)
    assert lpm.lookup(ip) is None
    lpm.add(ip, 25, 101)  # (d)
    lpm.add(ip5, 32, 102)
    assert lpm.lookup(ip5) == 102
    lpm.delete(ip5, 32)
    assert lpm.lookup(ip5) == 101  # 8000:5:: lies inside 8000::/25
    lpm.delete(ip, 25)
    assert lpm.lookup(ip) is None
    assert lpm.tbl8_groups_used == 0


def test_lpm6_test19_ranges_updates_absent_deletes():
    lpm = Lpm6()
    ip, ipa = P8000, V6("8000::a")
    for depth in (16, 25):
        lpm.add(ip, depth, 100)
        assert lpm.lookup(ip) == 100
        lpm.delete(ip, depth)
        assert lpm.lookup(ip) is None
    lpm.add(ip, 24, 100)
    lpm.add(ipa, 128, 101)
    assert lpm.lookup(ipa) == 101 and lpm.lookup(ip) == 100
    lpm.delete(ip, 24)
    assert lpm.lookup(ip) is None and lpm.lookup(ipa) == 101
    lpm.delete(ipa, 128)
    assert lpm.lookup(ipa) is None
    for depth in (24, 128):  # next-hop update in tbl24, then in a tbl8
        lpm.add(ip, depth, 100)
        lpm.add(ip, depth, 101)
        assert lpm.lookup(ip) == 101 and len(lpm) == 1
        lpm.delete(ip, depth)
        assert lpm.lookup(ip) is None
    for depth in (24, 128):
        with pytest.raises(LpmError):
            lpm.delete(ip, depth)
        assert lpm.lookup(ip) is None


def test_lpm6_test20():
    lpm = Lpm6()
    ip, ipa = P8000, V6("8000::a")
    lpm.add(ip, 24, 100)
    lpm.add(ipa, 128, 101)
    assert lpm.lookup(ipa) == 101 and lpm.lookup(ip) == 100
    lpm.delete(ip, 24)
    assert lpm.lookup(ip) is None
    lpm.delete(ipa, 128)
    assert lpm.lookup(ipa) is None


def test_lpm6_test21_bulk_lookup():
    lpm = Lpm6()
    ips = [V6(f"8000:0:{i}::") for i in (1, 2, 3, 4)]
    for ip, nh in zip(ips, (100, 101, 102)):
        lpm.add(ip, 48, nh)
    assert lpm.lookup_bulk(v6_array(ips), -1).tolist() == [100, 101, 102, -1]


def test_lpm6_test22_bulk_deletes():
    lpm = Lpm6()
    ips = [V6(f"8000:0:{i}::") for i in range(1, 6)]
    for i, ip in enumerate(ips):
        lpm.add(ip, 48, 101 + i)
    arr = v6_array(ips)
    assert lpm.lookup_bulk(arr, -1).tolist() == [101, 102, 103, 104, 105]
    lpm.delete_bulk(ips[:2], [48, 48])
    assert lpm.lookup_bulk(arr, -1).tolist() == [-1, -1, 103, 104, 105]
    lpm.delete_bulk(ips[2:3], [48])
    assert lpm.lookup_bulk(arr, -1).tolist() == [-1, -1, -1, 104, 105]
    lpm.delete_bulk([ips[3], V6("8000:0:6::")], [48, 48])  # the absent rule is skipped
    assert lpm.lookup_bulk(arr, -1).tolist() == [-1, -1, -1, -1, 105]
    lpm.delete(ips[4], 48)
    assert lpm.lookup_bulk(arr, -1).tolist() == [-1] * 5
    assert len(lpm) == 0 and lpm.tbl8_groups_used == 0


def test_lpm6_test23_repeat_add_delete_128():
    lpm = Lpm6()
    for _ in range(30):
        lpm.add(P8000, 128, 100)
        assert lpm.lookup(P8000) == 100
        assert lpm.tbl8_groups_used == 13  # tbl24 + 13 tbl8 levels
        lpm.delete(P8000, 128)
        assert lpm.lookup(P8000) is None
        assert lpm.tbl8_groups_used == 0


def test_lpm6_test26_less_specific_adds_keep_tbl8():
    lpm = Lpm6()
    a, b, c = V6("a0a:a02::"), V6("a0a:a00::"), V6("a0a:1402::")
    lpm.add(a, 32, 100)
    lpm.add(b, 24, 105)
    lpm.add(c, 25, 111)
    assert [lpm.lookup(x) for x in (a, b, c)] == [100, 105, 111]


def test_lpm6_test27_128_inside_112():
    lpm = Lpm6()
    ip = V6("8080:8080:8080:8080:8080:8080:8080:0")
    lpm.add(ip, 128, 128)
    lpm.add(ip, 112, 112)
    arr = np.repeat(v6_array([ip]), 65536, axis=0)
    arr[:, 14] = np.arange(65536) >> 8
    arr[:, 15] = np.arange(65536) & 0xFF
    res = lpm.lookup_bulk(arr, -1)
    assert res[0] == 128 and (res[1:] == 112).all()
    assert lpm.lookup(ip) == 128 and lpm.lookup(ip + 0xFFFF) == 112


def test_lpm6_test28_max_next_hop():
    lpm = Lpm6()
    lpm.add(0, 16, 0x1FFFFF)
    assert lpm.lookup(0) == 0x1FFFFF
    assert lpm.lookup_bulk(v6_array([0]), -1).tolist() == [0x1FFFFF]
    with pytest.raises(LpmError):
        lpm.add(0, 16, 0x200000)
    assert lpm.lookup(0) == 0x1FFFFF
    lpm.delete(0, 16)
    assert lpm.lookup(0) is None


def test_lpm6_test11_test12_tbl8_exhaustion_on_path():
    lpm = Lpm6(max_tbl8_groups=16)
    lpm.add(0, 128, 1)  # 13 groups
    p = V6("100::")
    for depth in (25, 33, 41):
        lpm.add(p, depth, 2)
        lpm.delete(p, depth)
    with pytest.raises(LpmError):
        lpm.add(p, 49, 2)  # needs 4 more groups
    assert lpm.tbl8_groups_used == 13 and lpm.lookup(p) is None and len(lpm) == 1
    lpm.add(p, 41, 2)
    lpm2 = Lpm6(max_tbl8_groups=16)
    lpm2.add(0, 128, 1)
    lpm2.add(p, 41, 2)
    with pytest.raises(LpmError):
        lpm2.add(p, 49, 3)  # extends an existing path, still one group short
    assert lpm2.lookup(p) == 2


def test_lpm6_test14_256_groups():
    lpm = Lpm6(max_tbl8_groups=256)
    for x in range(256):
        lpm.add(x << 120, 25, 1)
    with pytest.raises(LpmError):
        lpm.add(V6("ff01::"), 25, 1)
    lpm.delete(V6("ff00::"), 25)
    lpm.add(V6("ff01::"), 25, 1)


# --------------------------------------------------------------------------- oracle


class Oracle:
    """Brute-force longest-prefix match over ipaddress networks; a re-added prefix replaces."""

    def __init__(self, bits):
        self.bits = bits
        self.net = ipaddress.IPv4Network if bits == 32 else ipaddress.IPv6Network
        self.addr = ipaddress.IPv4Address if bits == 32 else ipaddress.IPv6Address
        self.rules = {}

    def key(self, ip, depth):
        return self.net((ip, depth), strict=False)

    def add(self, ip, depth, nh):
        self.rules[self.key(ip, depth)] = nh

    def lookup(self, ip):
        a = self.addr(ip)
        best = max((n for n in self.rules if a in n), key=lambda n: n.prefixlen, default=None)
        return None if best is None else self.rules[best]

    def probes(self):
        """First and last address of every prefix, and their neighbours."""
        out = set()
        top = 2**self.bits - 1
        for n in self.rules:
            first, last = int(n.network_address), int(n.broadcast_address)
            out.update({first, last, (first - 1) & top, (last + 1) & top})
        return out

    def groups(self):
        """tbl8 groups one model table needs: per tbl8 level, one per distinct parent
        prefix that has a rule reaching below it (rte_lpm: one per /24 with a > /24)."""
        count = 0
        for boundary in range(24, self.bits, 8):
            count += len({int(n.network_address) >> (self.bits - boundary)
                          for n in self.rules if n.prefixlen > boundary})
        return count


def check_against_oracle(lpm, oracle, extra):
    probes = sorted(oracle.probes() | set(extra))
    expect = [oracle.lookup(p) for p in probes]
    assert [lpm.lookup(p) for p in probes] == expect
    if oracle.bits == 32:
        bulk = lpm.lookup_bulk(np.array(probes, np.uint32), -1)
    else:
        bulk = lpm.lookup_bulk(v6_array(probes), -1)
    assert bulk.tolist() == [-1 if e is None else e for e in expect]
    assert len(lpm) == len(oracle.rules)
    for n, nh in oracle.rules.items():
        assert lpm.is_rule_present(int(n.network_address), n.prefixlen) == nh
    assert lpm.tbl8_groups_used == oracle.groups()


def ops_strategy(bits, edge_depths, nh_max):
    bases = st.sampled_from([0, 2**bits - 1, 1 << (bits - 1), 0xC0A86464 << (bits - 32),
                             0x0A0A0A00 << (bits - 32)])
    addr = st.one_of(
        st.integers(0, 2**bits - 1),
        # near a few bases, so that prefixes nest and share tbl8 groups
        st.builds(lambda b, x, s: b ^ (x >> s), bases, st.integers(0, 2**bits - 1),
                  st.integers(bits // 2, bits)),
    )
    depth = st.one_of(st.sampled_from(edge_depths), st.integers(1, bits))
    op = st.tuples(st.sampled_from(["add", "add", "del", "del?"]), addr, depth,
                   st.integers(0, nh_max), st.integers(0, 10**6))
    return st.lists(op, max_size=40)


def run_ops(lpm, oracle, ops):
    for kind, ip, depth, nh, pick in ops:
        if kind == "add":
            lpm.add(ip, depth, nh)
            oracle.add(ip, depth, nh)
        elif kind == "del" and oracle.rules:
            n = list(oracle.rules)[pick % len(oracle.rules)]
            lpm.delete(int(n.network_address), n.prefixlen)
            del oracle.rules[n]
        elif kind == "del?":  # may be absent
            key = oracle.key(ip, depth)
            if key in oracle.rules:
                lpm.delete(ip, depth)
                del oracle.rules[key]
            else:
                with pytest.raises(LpmError):
                    lpm.delete(ip, depth)


PROPS = settings(max_examples=150, deadline=None,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPS
@given(ops=ops_strategy(32, [1, 8, 24, 25, 32], 2**24 - 1), seed=st.integers(0, 2**32))
def test_lpm4_random_ops_match_oracle(ops, seed):
    lpm, oracle = Lpm4(), Oracle(32)
    run_ops(lpm, oracle, ops)
    rng = np.random.default_rng(seed)
    check_against_oracle(lpm, oracle, rng.integers(0, 2**32, 64).tolist())


@PROPS
@given(ops=ops_strategy(128, [1, 24, 25, 32, 64, 127, 128], 2**21 - 1), seed=st.integers(0, 2**32))
def test_lpm6_random_ops_match_oracle(ops, seed):
    lpm, oracle = Lpm6(), Oracle(128)
    run_ops(lpm, oracle, ops)
    rng = np.random.default_rng(seed)
    extra = [int.from_bytes(rng.bytes(16), "big") for _ in range(64)]
    check_against_oracle(lpm, oracle, extra)


# --------------------------------------------------------------------------- build / bulk


def random_v4_rules(rng, n, dup_fraction=0.1):
    """BGP-ish depth mix; some prefixes repeated with new next hops; deep rules clustered."""
    depths = rng.choice([8, 12, 16, 20, 22, 23, 24, 24, 24, 25, 26, 28, 30, 31, 32], n)
    depths[rng.integers(0, n, 4)] = rng.integers(1, 8, 4)  # a few huge prefixes (slow to paint)
    ips = rng.integers(0, 2**32, n, dtype=np.uint64)
    clustered = rng.random(n) < 0.3  # share a few /24s -> several rules per tbl8 group
    ips[clustered] = (0x0A000000 + rng.integers(0, 64, clustered.sum()) * 256
                      + rng.integers(0, 256, clustered.sum()))
    dup = rng.random(n) < dup_fraction
    src = rng.integers(0, n, dup.sum())
    ips[dup], depths[dup] = ips[src], depths[src]
    nhs = rng.integers(0, 2**24, n)
    return ips.astype(np.uint32), depths, nhs


def v4_probes(rng, ips, depths, n_random):
    ips = ips.astype(np.int64)
    span = (1 << (32 - depths.astype(np.int64)))
    first = ips & ~(span - 1)
    pts = np.concatenate([first, first + span - 1, first + span, first - 1,
                          rng.integers(0, 2**32, n_random)])
    return (pts & MAX).astype(np.uint32)


def test_lpm4_build_equals_sequential_add():
    rng = np.random.default_rng(7)
    ips, depths, nhs = random_v4_rules(rng, 3000)
    seq = Lpm4()
    for ip, d, nh in zip(ips.tolist(), depths.tolist(), nhs.tolist()):
        seq.add(ip, d, nh)
    bulk = Lpm4()
    bulk.build(ips, depths, nhs)
    probes = v4_probes(rng, ips, depths, 50_000)
    assert np.array_equal(seq.lookup_bulk(probes, -1), bulk.lookup_bulk(probes, -1))
    assert len(bulk) == len(seq) < 3000
    assert bulk.tbl8_groups_used == seq.tbl8_groups_used
    for ip, d in zip(ips[:500].tolist(), depths[:500].tolist()):
        assert bulk.is_rule_present(ip, d) == seq.is_rule_present(ip, d)
    # a built table supports further deletes and adds like the sequential one
    for ip, d in list(zip(ips.tolist(), depths.tolist()))[::3]:
        if seq.is_rule_present(ip, d) is not None:
            seq.delete(ip, d)
            bulk.delete(ip, d)
    seq.add(IP(10, 0, 5, 7), 32, 1)
    bulk.add(IP(10, 0, 5, 7), 32, 1)
    assert np.array_equal(seq.lookup_bulk(probes, -1), bulk.lookup_bulk(probes, -1))
    assert bulk.tbl8_groups_used == seq.tbl8_groups_used and len(bulk) == len(seq)


def test_lpm6_build_equals_sequential_add():
    rng = np.random.default_rng(8)
    n = 600
    depths = rng.choice([1, 16, 24, 25, 32, 40, 48, 56, 64, 127, 128], n)
    anyd = rng.random(n) < 0.3
    depths[anyd] = rng.integers(1, 129, anyd.sum())
    keys = rng.integers(0, 256, (n, 16), dtype=np.uint8)
    keys[: n // 2, :4] = [0x20, 0x01, 0x0d, 0xb8]  # half of them share the first 32 bits
    dup = rng.integers(0, n, 60)
    keys[-60:], depths[-60:] = keys[dup], depths[dup]
    nhs = rng.integers(0, 2**21, n)
    ints = [int.from_bytes(k.tobytes(), "big") for k in keys]
    seq = Lpm6()
    oracle = Oracle(128)
    for ip, d, nh in zip(ints, depths.tolist(), nhs.tolist()):
        seq.add(ip, d, nh)
        oracle.add(ip, d, nh)
    bulk = Lpm6.from_rules(zip(ints, depths.tolist(), nhs.tolist()))
    probes = sorted(oracle.probes()) + [int.from_bytes(rng.bytes(16), "big") for _ in range(2000)]
    arr = v6_array(probes)
    assert np.array_equal(seq.lookup_bulk(arr, -1), bulk.lookup_bulk(arr, -1))
    assert len(bulk) == len(seq) == len(oracle.rules)
    assert bulk.tbl8_groups_used == seq.tbl8_groups_used == oracle.groups()
    for ip, d in zip(ints[::2], depths[::2].tolist()):  # deletes on a built table
        if ipaddress.IPv6Network((ip, d), strict=False) in oracle.rules:
            bulk.delete(ip, d)
            del oracle.rules[ipaddress.IPv6Network((ip, d), strict=False)]
    check_against_oracle(bulk, oracle, probes[-200:])


def test_build_errors():
    lpm = Lpm4()
    with pytest.raises(LpmError):
        lpm.build(np.array([1, 2], np.uint32), [8, 33], [1, 1])
    with pytest.raises(LpmError):
        lpm.build(np.array([1], np.uint32), [0], [1])
    with pytest.raises(LpmError):
        lpm.build(np.array([1], np.uint32), [8], [2**24])
    with pytest.raises(LpmError):
        Lpm4.from_rules([(2**32, 8, 1)])
    with pytest.raises(LpmError):
        Lpm6.from_rules([(2**128, 8, 1)])
    assert len(lpm) == 0
    # out of tbl8 groups: the table is left empty
    small = Lpm4(max_tbl8_groups=2)
    with pytest.raises(LpmError):
        small.build(np.array([IP(1, 0, 0, 1), IP(1, 0, 1, 1), IP(1, 0, 2, 1)], np.uint32),
                    [32, 32, 32], [1, 2, 3])
    assert len(small) == 0 and small.tbl8_groups_used == 0 and small.lookup(IP(1, 0, 0, 1)) is None
    small.build(np.array([IP(1, 0, 0, 1), IP(1, 0, 1, 1)], np.uint32), [32, 32], [1, 2])
    assert small.tbl8_groups_used == 2 and small.lookup(IP(1, 0, 1, 1)) == 2
    with pytest.raises(LpmError):  # build() needs an empty table
        small.build(np.array([0], np.uint32), [8], [1])
    assert len(Lpm4.from_rules([])) == 0


def test_from_rules_later_duplicate_wins():
    rules = [(IP(10, 0, 0, 0), 8, 1), (IP(10, 9, 9, 9), 8, 2), (IP(10, 1, 2, 3), 32, 3),
             (IP(10, 1, 2, 3), 32, 4), (IP(10, 1, 2, 0), 24, 5)]
    lpm = Lpm4.from_rules(rules)
    assert len(lpm) == 3
    assert lpm.lookup(IP(10, 0, 0, 0)) == 2
    assert lpm.lookup(IP(10, 1, 2, 3)) == 4
    assert lpm.lookup(IP(10, 1, 2, 4)) == 5
    lpm6 = Lpm6.from_rules([(V6("2001:db8::"), 32, 1), (V6("2001:db8::1"), 32, 2)])
    assert len(lpm6) == 1 and lpm6.lookup(V6("2001:db8::5")) == 2


def to_pytricia_v4(ips, depths, nhs):
    pyt = pytricia.PyTricia(32)
    for ip, d, nh in zip(ips.tolist(), depths.tolist(), nhs.tolist()):
        ip &= ~((1 << (32 - d)) - 1) & MAX
        pyt[f"{ip >> 24}.{ip >> 16 & 255}.{ip >> 8 & 255}.{ip & 255}/{d}"] = nh
    return pyt


def test_lpm4_add_delete_vs_pytricia():
    rng = np.random.default_rng(11)
    ips, depths, nhs = random_v4_rules(rng, 4000)
    lpm = Lpm4()
    for ip, d, nh in zip(ips.tolist(), depths.tolist(), nhs.tolist()):
        lpm.add(ip, d, nh)
    pyt = to_pytricia_v4(ips, depths, nhs)
    probes = v4_probes(rng, ips, depths, 20_000)
    expect = [pyt.get(p, -1) for p in probes.tolist()]
    assert lpm.lookup_bulk(probes, -1).tolist() == expect
    assert len(lpm) == len(pyt)
    # delete every other distinct rule from both
    for prefix in list(pyt)[::2]:
        net = ipaddress.IPv4Network(prefix)
        lpm.delete(int(net.network_address), net.prefixlen)
        del pyt[prefix]
    expect = [pyt.get(p, -1) for p in probes.tolist()]
    assert lpm.lookup_bulk(probes, -1).tolist() == expect
    assert [lpm.lookup(p) for p in probes[:3000].tolist()] == [None if e == -1 else e
                                                                for e in expect[:3000]]


def test_lpm4_200k_from_rules_vs_pytricia():
    rng = np.random.default_rng(12)
    ips, depths, nhs = random_v4_rules(rng, 200_000, dup_fraction=0.02)
    lpm = Lpm4.from_rules(zip(ips.tolist(), depths.tolist(), nhs.tolist()))
    pyt = to_pytricia_v4(ips, depths, nhs)
    assert len(lpm) == len(pyt)
    probes = np.concatenate([rng.integers(0, 2**32, 90_000),
                             v4_probes(rng, ips[:2500], depths[:2500], 0)]).astype(np.uint32)
    expect = np.array([pyt.get(p, -1) for p in probes.tolist()])
    assert np.array_equal(lpm.lookup_bulk(probes, -1), expect)
