"""The TX model's counters against a literal, per-burst re-enactment of l3fwd's
``send_packetsx4`` / ``send_single_packet`` with real buffers."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from l3fwd_sim.dataplane.tx import MAX_PKT_BURST, TxModel, same_port_runs

PORTS = [0, 1, 2, 3]


def literal_multi(bursts: list[list[int]], tx_burst: int):
    """Per burst: group consecutive equal destinations, then send_packetsx4 per group."""
    buf = {p: [] for p in PORTS}
    calls = {p: 0 for p in PORTS}
    direct = {p: 0 for p in PORTS}
    for burst in bursts:
        j = 0
        while j < len(burst):
            k = j
            while k < len(burst) and burst[k] == burst[j]:
                k += 1
            port, pkts = burst[j], list(range(j, k))
            j = k
            if port < 0:
                continue                       # BAD_PORT group: freed
            if len(pkts) >= tx_burst and not buf[port]:
                calls[port] += 1
                direct[port] += len(pkts)
                continue
            room = MAX_PKT_BURST - len(buf[port])
            buf[port] += pkts[:room]
            if len(buf[port]) == MAX_PKT_BURST:
                calls[port] += 1
                buf[port] = pkts[room:]
    for port in PORTS:
        calls[port] += bool(buf[port])
    return calls, direct


def literal_simple(bursts: list[list[int]], rx_burst: int):
    buf = {p: 0 for p in PORTS}
    calls = {p: 0 for p in PORTS}
    for burst in bursts:
        for port in burst:
            if port < 0:
                continue
            buf[port] += 1
            if buf[port] == rx_burst:
                calls[port] += 1
                buf[port] = 0
    for port in PORTS:
        calls[port] += bool(buf[port])
    return calls


bursts_strategy = st.lists(st.lists(st.sampled_from([-1, 0, 1, 2, 3]), min_size=1, max_size=64), max_size=60)
skewed_strategy = st.lists(st.lists(st.sampled_from([-1, 0, 0, 0, 0, 1]), min_size=1, max_size=512), max_size=20)


def flatten(bursts):
    dest = np.array([d for b in bursts for d in b], np.int64)
    burst_id = np.array([i for i, b in enumerate(bursts) for _ in b], np.int64)
    return dest, burst_id


@settings(max_examples=200, deadline=None)
@given(bursts=st.one_of(bursts_strategy, skewed_strategy), tx_burst=st.integers(1, 512),
       split=st.integers(0, 60))
def test_multi_tx_counters(bursts, tx_burst, split):
    model = TxModel(PORTS, rx_burst=32, tx_burst=tx_burst)
    # feeding the bursts in two super-bursts gives the same counters as one
    for part in (bursts[:split], bursts[split:]):
        dest, burst_id = flatten(part)
        model.send_runs(*same_port_runs(dest, burst_id))
    model.drain()
    calls, direct = literal_multi(bursts, tx_burst)
    assert model.tx_bursts == calls
    assert model.direct == direct
    dest, _ = flatten(bursts)
    assert {p: model.direct[p] + model.buffered[p] for p in PORTS} == {p: int((dest == p).sum()) for p in PORTS}


@settings(max_examples=100, deadline=None)
@given(bursts=bursts_strategy, rx_burst=st.integers(1, 512))
def test_simple_tx_counters(bursts, rx_burst):
    model = TxModel(PORTS, rx_burst=rx_burst, tx_burst=32)
    for burst in bursts:
        counts = np.bincount([d for d in burst if d >= 0], minlength=4)
        model.send_single({p: int(counts[p]) for p in PORTS if counts[p]})
    model.drain()
    assert model.tx_bursts == literal_simple(bursts, rx_burst)


def test_runs_split_at_burst_boundaries_and_skip_drops():
    dest = np.array([1, 1, -1, 1, 2, 2, 2, 2])
    burst = np.array([0, 0, 0, 0, 0, 0, 1, 1])
    ports, lens = same_port_runs(dest, burst)
    assert ports.tolist() == [1, 1, 2, 2] and lens.tolist() == [2, 1, 2, 2]
