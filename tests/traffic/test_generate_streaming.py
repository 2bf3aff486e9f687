"""`generate` streams its output: a chunk of packets at a time, so memory does not grow
with the count and the output does not depend on the chunk size.

Oracles: scapy reads the files back (packets, their stream, their varying fields);
plain loops give the stream orders; tracemalloc measures what a run allocates.
"""
from __future__ import annotations

import re
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.layers.inet import IP, UDP
from scapy.utils import rdpcap

from l3fwd_sim.traffic import generate as generate_module
from l3fwd_sim.traffic.generate import GenerateOptions, generate
from l3fwd_sim.traffic.interleave import stream_chunks

# three streams: dport tells the stream, ttl and sport vary, sizes vary per stream
STREAMS = """\
seed = 3
order = "ORDER"
group = 4
[[stream]]
count = 500
size = "64-300"
ipv4 = {}
udp = { dport = 1 }
[[stream.vary]]
field = "ipv4.ttl"
op = "random"
min = 1
max = 255
[[stream]]
count = 173
size = {op = "inc", min = 64, max = 200, step = 3}
ipv4 = {}
udp = { dport = 2 }
[[stream.vary]]
field = "udp.sport"
op = "inc"
min = 1000
max = 1010
[[stream]]
count = 31
size = "imix"
ipv4 = {}
udp = { dport = 3 }
"""


def run(tmp_path: Path, name: str, order: str, chunk: int) -> Path:
    path = tmp_path / f"{order}.toml"
    path.write_text(STREAMS.replace("ORDER", order))
    generate(GenerateOptions(outdir=tmp_path / name, streams=path, chunk_packets=chunk))
    return tmp_path / name / "port0.pcap"


@pytest.mark.parametrize("order", ["sequence", "round-robin", "random"])
def test_chunk_size_does_not_change_output(tmp_path, order):
    """Chunks of 1, 7 and more than the whole port give byte-identical files; scapy reads
    every packet back, each stream's packets in their own order."""
    whole = run(tmp_path, "whole", order, 100_000)
    for chunk in (1, 7):
        assert run(tmp_path, f"c{chunk}", order, chunk).read_bytes() == whole.read_bytes()
    packets = rdpcap(str(whole))
    streams = [p[UDP].dport for p in packets]
    assert Counter(streams) == {1: 500, 2: 173, 3: 31}
    assert [p[UDP].sport for p in packets if p[UDP].dport == 2] == [1000 + i % 11 for i in range(173)]
    assert [len(p) + 4 for p in packets if p[UDP].dport == 2] == [64 + 3 * (i % 46) for i in range(173)]
    assert len({p[IP].ttl for p in packets if p[UDP].dport == 1}) > 100


class _CountingWriter:
    """Wraps a writer to record how many packets each write hands it."""

    def __init__(self, writer, seen: list):
        self.writer, self.seen = writer, seen

    def write(self, heads, *rest, **kwargs):
        self.seen.append(len(heads))
        return self.writer.write(heads, *rest, **kwargs)

    def __getattr__(self, name):
        return getattr(self.writer, name)


def test_output_is_written_in_chunks(tmp_path, monkeypatch):
    seen: list[int] = []
    real = generate_module.open_writer
    monkeypatch.setattr(generate_module, "open_writer", lambda *a, **k: _CountingWriter(real(*a, **k), seen))
    generate(GenerateOptions(outdir=tmp_path / "g", pattern="IPV4-4STREAMSX8", ports=1, count=1000,
                             chunk_packets=64))
    assert sum(seen) == 1000 and max(seen) <= 64 and len(seen) >= 1000 // 64
    assert len(rdpcap(str(tmp_path / "g" / "port0.pcap"))) == 1000


def _peak(tmp_path: Path, order: str, scale: int) -> int:
    """Peak bytes a run of the stream file with every count times ``scale`` allocates
    (a stream file: the LPM tables a pattern checks its destinations with would dwarf the rest)."""
    path = tmp_path / f"{order}-{scale}.toml"
    path.write_text(re.sub(r"count = (\d+)", lambda m: f"count = {int(m.group(1)) * scale}",
                           STREAMS.replace("ORDER", order)))
    tracemalloc.start()
    generate(GenerateOptions(outdir=tmp_path / f"{order}-{scale}", streams=path, chunk_packets=1024))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


@pytest.mark.parametrize("order", ["round-robin", "random"])
def test_memory_does_not_grow_with_the_count(tmp_path, order):
    """Ten times the packets (70,400 instead of 7,040), about the same memory: nothing is
    held per packet of the port (one whole-port array of 8 bytes a packet would add 0.5 MB)."""
    _peak(tmp_path, order, 1)                        # imports, caches
    small, large = _peak(tmp_path, order, 10), _peak(tmp_path, order, 100)
    assert large - small < 400_000, (small, large)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=1, max_size=6).filter(any), st.integers(1, 9),
       st.sampled_from(["sequence", "round-robin", "random"]), st.integers(1, 50))
def test_stream_chunks_do_not_depend_on_the_chunk_size(counts, group, order, chunk):
    def order_with(size):
        pieces = list(stream_chunks(counts, order, group, size, np.random.default_rng([5, 1])))
        assert all(1 <= len(p) <= size for p in pieces)
        return [s for p in pieces for s in p.tolist()]

    got = order_with(chunk)
    assert got == order_with(10_000)
    assert Counter(got) == {s: c for s, c in enumerate(counts) if c}
    if order == "sequence":
        assert got == [s for s, c in enumerate(counts) for _ in range(c)]


def test_random_order_starts_at_once_on_a_huge_port():
    """2 x 2**40 packets in random order: the first chunks come without any per-packet
    array of the whole port (which would need terabytes)."""
    pieces = stream_chunks([1 << 40, 1 << 40], "random", 1, 4096, np.random.default_rng(1))
    first = np.concatenate([next(pieces), next(pieces)])
    assert len(first) == 8192 and 3500 < int((first == 0).sum()) < 4700


def test_random_order_is_a_seeded_permutation():
    a = np.concatenate(list(stream_chunks([300, 200], "random", 1, 64, np.random.default_rng(7))))
    b = np.concatenate(list(stream_chunks([300, 200], "random", 1, 64, np.random.default_rng(8))))
    assert Counter(a.tolist()) == Counter(b.tolist()) == {0: 300, 1: 200}
    assert a.tolist() != b.tolist()
    runs = np.count_nonzero(np.diff(a)) + 1
    assert 180 < runs < 300                                   # well mixed: about 2*300*200/500 = 240 runs
