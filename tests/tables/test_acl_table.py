"""tables/acl.py: rte_acl's first-match classification against a brute-force scan of the
rule list, on random rule sets (overlaps, /0 and full-length prefixes, ranges, protocol
masks, several 4096-rule chunks); the compiled walk against its numpy twin."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from twins import both, needs_twins
from l3fwd_sim.tables.acl import BITMASK, CHUNK, MASK, RANGE, AclField, AclTable

FIELDS = [AclField(BITMASK, 8), AclField(MASK, 32), AclField(MASK, 32), AclField(RANGE, 16), AclField(RANGE, 16)]
PREFIXES = [0x0A000000, 0xC6120000, 0xC0A80100, 0xFFFFFFFF, 0]


def brute_force(fields, values, mask_ranges, keys) -> list[int]:
    """The first rule whose every field matches, read straight from rte_acl.h's field types."""
    found = []
    for key in keys.tolist():
        for i, (value, mask_range) in enumerate(zip(values.tolist(), mask_ranges.tolist())):
            def ok(field, k, v, m):
                if field.kind == BITMASK:
                    return k & m == v & m
                if field.kind == RANGE:
                    return v <= k <= m
                return m == 0 or k >> (field.bits - m) == v >> (field.bits - m)
            if all(ok(*args) for args in zip(fields, key, value, mask_range)):
                found.append(i)
                break
        else:
            found.append(-1)
    return found


def random_rules(rng, n):
    values, masks = np.zeros((n, 5), np.int64), np.zeros((n, 5), np.int64)
    values[:, 0] = rng.integers(0, 256, n)
    masks[:, 0] = rng.choice([0, 0xFF, 0xFE, 0xF0, 0x80, 0xFB, 0x01], n)
    for f in (1, 2):
        values[:, f] = rng.choice(PREFIXES, n) | rng.integers(0, 1 << 12, n)
        masks[:, f] = rng.choice([0, 1, 8, 16, 20, 24, 31, 32], n)
    for f in (3, 4):
        lo = rng.choice([0, 53, 80, 1024, 65535, 443], n)
        masks[:, f] = np.maximum(lo, rng.choice([0, 80, 1023, 2000, 65535], n))
        values[:, f] = lo
    return values, masks


def random_keys(rng, n):
    keys = np.zeros((n, 5), np.int64)
    keys[:, 0] = rng.choice([0, 1, 6, 17, 21, 58, 132, 255], n)
    for f in (1, 2):
        keys[:, f] = rng.choice(PREFIXES, n) | rng.integers(0, 1 << 12, n)
    for f in (3, 4):
        keys[:, f] = rng.choice([0, 53, 79, 80, 443, 1023, 1024, 2000, 2001, 65535], n)
    return keys


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(1, 300))
def test_first_match_equals_brute_force(seed, rules):
    rng = np.random.default_rng(seed)
    values, masks = random_rules(rng, rules)
    keys = random_keys(rng, 200)
    assert AclTable(FIELDS, values, masks).classify(keys.T).tolist() == brute_force(FIELDS, values, masks, keys)


@pytest.mark.parametrize("rules", [CHUNK - 1, CHUNK + 70, 2 * CHUNK + 1])
def test_chunks_keep_priority_order(rules):
    """Matches in a later chunk lose to any match in an earlier one, and the last
    chunk's padding never matches."""
    rng = np.random.default_rng(rules)
    values, masks = random_rules(rng, rules)
    values[-1], masks[-1] = [0, 0, 0, 0, 0], [0, 0, 0, 0, 65535]      # a catch-all last rule
    keys = random_keys(rng, 150)
    assert AclTable(FIELDS, values, masks).classify(keys.T).tolist() == brute_force(FIELDS, values, masks, keys)


def test_a_rule_set_without_restrictions_matches_rule_zero_and_no_padding():
    wildcard = np.array([[0, 0, 0, 0, 0]] * 70), np.array([[0, 0, 0, 65535, 65535]] * 70)
    assert AclTable(FIELDS, *wildcard).classify(random_keys(np.random.default_rng(1), 5).T).tolist() == [0] * 5
    assert AclTable(FIELDS, np.zeros((0, 5)), np.zeros((0, 5))).classify(np.zeros((5, 3))).tolist() == [-1] * 3


@needs_twins
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 40, 700, CHUNK + 5]))
def test_compiled_walk_equals_numpy_twin(seed, rules):
    rng = np.random.default_rng(seed)
    table = AclTable(FIELDS, *random_rules(rng, rules))
    keys = random_keys(rng, 500)
    (walked, _), (twin, _) = both(table.classify, keys.T)
    assert walked.tolist() == twin.tolist()
