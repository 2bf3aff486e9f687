"""``capture/merge.py``: a port's TX-queue files as one capture. The oracle is the merge
as the documentation defines it, done by brute force: each step takes the queue head
with the earliest time stamp (ties: the lower queue). Checked on queues written by this
package's own writers, out of time order and with ties, both formats, both kernels (the
compiled pass against the numpy definition, byte for byte); and on a whole run whose
TX queues are not in time order, every queue's order kept in ``port<N>.pcap``."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from frames import read_pcap_frames
from handmade import head_merge
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import KERNELS

from forwarding import REPO
from l3fwd_sim import RunOptions, compiled, run
from l3fwd_sim.capture.merge import merge_tx_queues
from l3fwd_sim.capture.offline import open_offline
from l3fwd_sim.capture.pcap import PcapWriter
from l3fwd_sim.capture.pcapng_writer import PcapngWriter
from l3fwd_sim.capture.records import HEAD_BYTES

T0 = 1_700_000_000 * 10**9


def write_queue(path, records, fmt: str) -> None:
    frames = [f for f, _ in records]
    heads = np.zeros((len(frames), HEAD_BYTES), np.uint8)
    for i, f in enumerate(frames):
        heads[i, :min(len(f), HEAD_BYTES)] = np.frombuffer(f[:HEAD_BYTES], np.uint8)
    caplen = np.array([len(f) for f in frames], np.int64)
    writer = PcapngWriter(path, True, "port0") if fmt == "pcapng" else PcapWriter(path, True)
    with writer:
        writer.write(heads, caplen, caplen + 4, np.array([t for _, t in records], np.int64),
                     [f[HEAD_BYTES:] for f in frames if len(f) > HEAD_BYTES])


def read_records(path) -> list[tuple[bytes, int]]:
    reader = open_offline(path)
    try:
        batch = reader.read(10**9)
        return [(bytes(batch.block[o:o + c]), int(t)) for o, c, t in zip(batch.offsets, batch.caplen, batch.ts_ns)]
    finally:
        reader.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(counts=st.lists(st.integers(0, 40), min_size=1, max_size=5), spread=st.sampled_from([1, 3, 10**6]),
       seed=st.integers(0, 2**32), fmt=st.sampled_from(["pcap", "pcapng"]))
def test_merge_takes_the_earliest_head_and_keeps_each_queue_in_order(tmp_path, counts, spread, seed, fmt):
    rng = random.Random(seed)
    queues = [[(rng.randbytes(rng.choice([0, 14, 60, 64, 65, 100, 1514])), T0 + rng.randrange(spread) * 1000)
               for _ in range(n)] for n in counts]            # out of time order; few stamps: ties
    paths = [tmp_path / f"port0.q{q}.{fmt}" for q in range(len(queues))]
    for path, records in zip(paths, queues):
        write_queue(path, records, fmt)
    before = [path.read_bytes() for path in paths]
    want = head_merge(queues)
    merged = {}
    for choice in KERNELS:
        target = tmp_path / f"{choice}.{fmt}"
        with compiled.using(choice):
            positions = merge_tx_queues(paths, target, positions=True)
        merged[choice] = target.read_bytes()
        assert read_records(target) == [queues[q][i] for q, i in want]
        for q, places in enumerate(positions):
            assert places.tolist() == [k for k, (qq, _) in enumerate(want) if qq == q]
    assert merged["compiled"] == merged["numpy"]
    assert merged["numpy"].startswith(before[0][:24 if fmt == "pcap" else 64])   # the first queue's header
    assert [path.read_bytes() for path in paths] == before                        # the queue files untouched


@pytest.mark.parametrize("kernels_choice", KERNELS)
def test_port_file_keeps_each_tx_queue_in_order(tmp_path, kernels_choice):
    """The shipped pcaps with two lcores each polling two ports: a queue's records are in
    the order its lcore sent them, which is not time order; port<N>.pcap keeps that
    order for every queue, and holds every record of every queue."""
    config = "(0,0,0),(1,0,1),(2,0,0),(3,0,1)"
    with compiled.using(kernels_choice):
        run(RunOptions(inputs={p: REPO / "pcaps" / f"port{p}.pcap" for p in range(4)}, outdir=tmp_path,
                       config=config))
    out_of_order = 0
    for port in range(4):
        merged = read_pcap_frames(tmp_path / f"port{port}.pcap")
        rest = list(merged)
        for q in range(2):
            queue = read_records(tmp_path / f"port{port}.q{q}.pcap")
            stamps = [t for _, t in queue]
            out_of_order += sum(b < a for a, b in zip(stamps, stamps[1:]))
            places = [k for k, (q2, _) in enumerate(head_merge([read_records(tmp_path / f"port{port}.q{k}.pcap")
                                                                 for k in range(2)])) if q2 == q]
            assert [merged[k] for k in places] == [f for f, _ in queue]
            for f, _ in queue:
                rest.remove(f)
        assert rest == []
    assert out_of_order > 0, "the run's TX queues are all in time order: the test shows nothing"


def test_no_merge_writes_only_the_tx_queue_files(tmp_path):
    """--no-merge: the per-queue files only; a trace line's tx_index is then the place in
    its lcore's TX-queue file (each place once), and --drops still writes drops.pcapng."""
    stats = run(RunOptions(inputs={p: REPO / "pcaps" / f"port{p}.pcap" for p in range(4)}, outdir=tmp_path,
                           config="(0,0,0),(1,0,1),(2,0,0),(3,0,1)", merge=False, trace="all", drops=True))
    assert sorted(p.name for p in tmp_path.glob("port*")) == [f"port{p}.q{q}.pcap" for p in range(4) for q in range(2)]
    assert (tmp_path / "drops.pcapng").is_file()
    queue_of = {int(lcore): entry["tx_queue"] for lcore, entry in stats["lcores"]["per_lcore"].items()}
    placed: dict[tuple[int, int], list[int]] = {}
    for line in (tmp_path / "trace.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["tx_port"] is not None:
            placed.setdefault((record["tx_port"], queue_of[record["lcore"]]), []).append(record["tx_index"])
    for (port, queue), places in placed.items():
        assert sorted(places) == list(range(len(read_pcap_frames(tmp_path / f"port{port}.q{queue}.pcap"))))
