"""``capture/merge.py``: a port's TX queues as one capture. The oracle is the merge as
the documentation defines it, done by brute force: each step takes the queue head with
the earliest time stamp (ties: the lower queue). Checked on queues written by this
package's own writers, out of time order and with ties, both formats, both kernels (the
compiled pass against the numpy definition, byte for byte): complete files, and queues
merged in steps as they fill (any schedule of sends, steps and lcores ending); and on
whole runs whose TX queues are not in time order and whose frames repeat, every
queue's order kept in ``port<N>.pcap`` — written from memory, byte for byte the merge of
the ``--per-queue`` files."""
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
from l3fwd_sim.capture.merge import LcoreQueues, TxQueueMerge, merge_tx_queues, places, time_key
from l3fwd_sim.capture.time_floor import NONE_LEFT
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


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(counts=st.lists(st.integers(0, 30), min_size=1, max_size=4), spread=st.sampled_from([1, 3, 10**6]),
       seed=st.integers(0, 2**32), fmt=st.sampled_from(["pcap", "pcapng"]))
def test_merge_in_steps_as_queues_fill_is_the_whole_merge(tmp_path, counts, spread, seed, fmt):
    """Records sent in random pieces, queues closing at random, a step after any send,
    each open queue's floor at most the earliest time stamp it has still to send: what
    the steps write, in order, is the merge of the complete queues (a step that wrote
    past an open queue that is empty where its next record could come first would put
    a record before one sent later that precedes it) — also when, between steps,
    another merge takes over what one holds (``--jobs``: the next chunk's process)."""
    rng = random.Random(seed)
    queues = [[(rng.randbytes(rng.choice([0, 14, 60, 100, 1514])), T0 + rng.randrange(spread) * 1000)
               for _ in range(n)] for n in counts]
    paths = [tmp_path / f"q{q}.{fmt}" for q in range(len(queues))]
    for path, records in zip(paths, queues):
        write_queue(path, records, fmt)
    bodies = [path.read_bytes() for path in paths]
    starts = [_record_starts(body, fmt) for body in bodies]
    want = head_merge(queues)
    written = {}
    for choice in KERNELS:
        with compiled.using(choice):
            merge = _merge(len(queues), fmt == "pcapng")
            sent, out, sources, state = [0] * len(queues), [], [], None
            steps = random.Random(seed + 1)
            while True:
                closed = [not merge.open[q] or state is not None and not state[1][q] for q in range(len(queues))]
                if all(closed) and state is None:
                    break
                q = steps.randrange(len(queues))
                if not closed[q]:
                    take = steps.randrange(0, 4)
                    records = starts[q][sent[q]:sent[q] + take + 1]
                    if take and len(records) > 1:
                        merge.queues[q].write(bodies[q][records[0]:records[-1]])
                        sent[q] += len(records) - 1
                    elif sent[q] == len(queues[q]):
                        merge.close(q)
                if state is not None:                 # what the merge before held goes before what came since
                    merge.take_over(state)
                    state = None
                for f, records in enumerate(queues):  # an open queue's floor: at most its earliest record to come
                    later = [t for _, t in records[sent[f]:]]
                    floor = min(later) - steps.choice([0, 0, 1000, 10**9]) if later else NONE_LEFT
                    merge.floor[f] = time_key(max(floor, 0), fmt == "pcapng", True) if later else NONE_LEFT
                data, n, source = merge.step()
                out.append(bytes(data))
                sources.append(source)
                if steps.random() < 0.2:              # --jobs: the next chunk's process takes over
                    _, state = merge.plan()
                    data, n, source = merge.step()
                    out.append(bytes(data))
                    sources.append(source)
                    merge = _merge(len(queues), fmt == "pcapng", steps.choice([0, 16, 1 << 12]))
            written[choice] = b"".join(out)
            placed = places(sources, len(queues))
        merged = [queues[q][i] for q, i in want]
        assert _frames(written[choice], fmt) == [f for f, _ in merged]
        for q, got in enumerate(placed):
            assert got.tolist() == [k for k, (qq, _) in enumerate(want) if qq == q]
    assert written["compiled"] == written["numpy"]


def _merge(queues: int, pcapng: bool, headroom: int = 0) -> TxQueueMerge:
    """A merge of ``queues`` TX queues, each an lcore's (its buffer's part for port 1 of
    two, as a run lays them out)."""
    return TxQueueMerge([LcoreQueues(2, headroom).queues[1] for _ in range(queues)], pcapng)


def _record_starts(data: bytes, fmt: str, first: int | None = None) -> list[int]:
    """Where each record of a queue file's bytes starts, and its end (``first``: where
    the records start; default after the file header)."""
    at = (24 if fmt == "pcap" else _after_header(data)) if first is None else first
    starts = [at]
    while at < len(data):
        length = 16 + int.from_bytes(data[at + 8:at + 12], "little") if fmt == "pcap" else \
            int.from_bytes(data[at + 4:at + 8], "little")
        at += length
        starts.append(at)
    return starts


def _after_header(data: bytes) -> int:
    at = 0
    while at < len(data) and int.from_bytes(data[at:at + 4], "little") != 6:
        at += int.from_bytes(data[at + 4:at + 8], "little")
    return at


def _frames(records: bytes, fmt: str) -> list[bytes]:
    starts = _record_starts(records, fmt, 0)
    if fmt == "pcap":
        return [records[a + 16:b] for a, b in zip(starts, starts[1:])]
    return [records[a + 28:a + 28 + int.from_bytes(records[a + 20:a + 24], "little")] for a in starts[:-1]]


def _repeating_traffic(directory, ports: int = 4, pattern: str = "IPV4-4STREAMSX8") -> None:
    """Each port's capture: a few frames repeated, in bursts of equal time stamps (or
    ``generate``'s other patterns)."""
    from l3fwd_sim.traffic.generate import GenerateOptions, generate
    generate(GenerateOptions(outdir=directory, pattern=pattern, ports=ports, count=1500, size="64", seed=3))


@pytest.mark.parametrize("kernels_choice", KERNELS)
@pytest.mark.parametrize("jobs", [1, 2])
def test_port_file_from_memory_is_the_merge_of_the_queue_files(tmp_path, kernels_choice, jobs):
    """Several lcores over traffic whose frames repeat: port<N>.pcap, merged in memory
    as the lcores go (small super-bursts: many steps), is byte for byte the merge of
    the ``--per-queue`` run's queue files, and an interleaving of them that keeps each
    queue's order (the places the oracle gives)."""
    _repeating_traffic(tmp_path / "in")
    config = "(0,0,0),(0,1,1),(1,0,2),(1,1,0),(2,0,1),(2,1,2),(3,0,0)"
    common = dict(inputs={p: tmp_path / "in" / f"port{p}.pcap" for p in range(4)}, config=config, rx_burst=5,
                  chunk_packets=200, jobs=jobs)
    with compiled.using(kernels_choice):
        memory = run(RunOptions(outdir=tmp_path / "memory", **common))
        files = run(RunOptions(outdir=tmp_path / "files", per_queue=True, **common))
    assert sorted(p.name for p in (tmp_path / "memory").iterdir()) == [*(f"port{p}.pcap" for p in range(4)), "stats.json"]
    assert memory["lcores"] == files["lcores"] and memory["totals"] == files["totals"]
    repeated = 0
    for port in range(4):
        queues = [read_records(tmp_path / "files" / f"port{port}.q{k}.pcap") for k in range(3)]
        frames = [f for queue in queues for f, _ in queue]
        repeated += len(frames) - len(set(frames))
        merged = read_pcap_frames(tmp_path / "memory" / f"port{port}.pcap")
        assert merged == [queues[q][i][0] for q, i in head_merge(queues)]
        assert (tmp_path / "memory" / f"port{port}.pcap").read_bytes() == \
            (tmp_path / "files" / f"port{port}.pcap").read_bytes()
    assert repeated > 100, "no frame repeats: the test shows nothing about telling equal frames apart"


@pytest.mark.parametrize("kernels_choice", KERNELS)
def test_port_file_keeps_each_tx_queue_in_order(tmp_path, kernels_choice):
    """The shipped pcaps with two lcores each polling two ports: a queue's records are in
    the order its lcore sent them, which is not time order; port<N>.pcap keeps that
    order for every queue, and holds every record of every queue."""
    config = "(0,0,0),(1,0,1),(2,0,0),(3,0,1)"
    with compiled.using(kernels_choice):
        run(RunOptions(inputs={p: REPO / "pcaps" / f"port{p}.pcap" for p in range(4)}, outdir=tmp_path,
                       config=config, per_queue=True))
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


@pytest.mark.parametrize("jobs", [1, 2])
def test_traces_and_annotations_are_the_same_from_memory(tmp_path, jobs):
    """--trace all, --annotate, --drops with several lcores: trace lines (tx_index: the
    place in port<N>.pcapng), comments and drops from the merge in memory (one process,
    or chunks handed on between processes) are those of the --per-queue run, whose
    places come from its queue files."""
    _repeating_traffic(tmp_path / "in", ports=3)
    common = dict(inputs={p: tmp_path / "in" / f"port{p}.pcap" for p in range(3)}, rx_burst=7, chunk_packets=300,
                  config="(0,0,0),(0,1,1),(1,0,1),(2,0,2),(2,1,0)", trace="all", annotate=True, drops=True)
    run(RunOptions(outdir=tmp_path / "files", per_queue=True, **common))
    run(RunOptions(outdir=tmp_path / "memory", jobs=jobs, **common))
    names = sorted(p.name for p in (tmp_path / "memory").iterdir())
    assert names == ["drops.pcapng", "port0.pcapng", "port1.pcapng", "port2.pcapng", "stats.json", "trace.jsonl"]
    for name in names[:-2] + ["trace.jsonl"]:
        assert (tmp_path / "memory" / name).read_bytes() == (tmp_path / "files" / name).read_bytes(), name


@pytest.mark.parametrize("kernels_choice", KERNELS)
@pytest.mark.parametrize("seed", [1, 2])
def test_time_floors_hold_for_captures_out_of_time_order(tmp_path, kernels_choice, seed):
    """Captures whose time stamps jump back and forth (and repeat): the merge in memory
    goes past an empty queue only up to the earliest time stamp its lcore may still
    receive, so port<N>.pcap is still byte for byte the merge of the queue files — with
    RSS's index (ports 0-2) and a plain capture's own walk (port 3) giving the floors.
    In this layout some lcores never send to some ports: their queues stay empty, and
    only the floors let the merge go on before those lcores end."""
    _repeating_traffic(tmp_path / "in", pattern="random")
    rng = np.random.default_rng(seed)
    for port in range(4):
        path = tmp_path / "in" / f"port{port}.pcap"
        data = bytearray(path.read_bytes())
        at = 24
        while at < len(data):
            data[at:at + 8] = np.array([1_700_000_000 + int(rng.integers(0, 50)), int(rng.integers(0, 3))],
                                       "<u4").tobytes()
            at += 16 + int.from_bytes(data[at + 8:at + 12], "little")
        path.write_bytes(bytes(data))
    common = dict(inputs={p: tmp_path / "in" / f"port{p}.pcap" for p in range(4)}, rx_burst=4, chunk_packets=120,
                  config="(0,0,0),(0,1,1),(1,0,2),(1,1,3),(2,0,0),(2,1,1),(3,0,2),(3,1,3)")
    with compiled.using(kernels_choice):
        run(RunOptions(outdir=tmp_path / "memory", **common))
        run(RunOptions(outdir=tmp_path / "files", per_queue=True, **common))
    for port in range(4):
        queues = [read_records(tmp_path / "files" / f"port{port}.q{k}.pcap") for k in range(4)]
        merged = read_pcap_frames(tmp_path / "memory" / f"port{port}.pcap")
        assert merged == [queues[q][i][0] for q, i in head_merge(queues)], port


def test_time_floor_is_the_earliest_time_stamp_still_to_come():
    from l3fwd_sim.capture.time_floor import NONE_LEFT, TimeFloor, time_words
    seconds, fractions = np.array([5, 3, 7, 3, 9]), np.array([0, 9, 1, 2, 0])
    floor = TimeFloor(time_words(seconds, fractions), nanosecond=False)
    want = [min(s * 10**9 + f * 1000 for s, f in zip(seconds[k:], fractions[k:])) for k in range(5)]
    assert [floor.at(k) for k in range(5)] == want and floor.at(5) == NONE_LEFT
