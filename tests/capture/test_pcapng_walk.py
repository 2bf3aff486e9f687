"""``pcapng.c``'s ``walk_blocks`` (the compiled twin of ``PcapngReader._walk_blocks``)
against its definition: on random pcapng files — sections in both byte orders, several
interfaces of several link types, odd time-stamp resolutions and offsets, every packet
block, skipped blocks, damage — a read with the compiled twins hands over the same
batches (records, rows, time stamps), fails with the same line, and notes the same cut
as a read with ``L3FWD_SIM_KERNELS=numpy``; the compiled walk takes the packet blocks
itself (the definition is left only the blocks it hands back)."""
from __future__ import annotations

import random
import tempfile
from pathlib import Path

import numpy as np
from frames import HUGE
from handmade import EDITS, Ng, damage, pcapng_files, valid_capture
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twins import needs_twins

from l3fwd_sim import compiled
from l3fwd_sim.capture.offline import open_offline
from l3fwd_sim.capture.pcapng import PcapngReader
from l3fwd_sim.capture.reading import Reading
from l3fwd_sim.errors import SimError

pytestmark = needs_twins
PLANS = ([HUGE], [1], [7, 64], [1000, 3])


def quick(max_examples: int):
    return settings(max_examples=max_examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def batches(path: Path, plan, reading: Reading) -> tuple:
    """Every batch's arrays, the error line if one, and the reader's cut and read errors:
    what a read with the kernels of the moment hands over."""
    out, error, cut, i = [], None, None, 0
    try:
        reader = open_offline(path, reading)
    except SimError as err:
        return out, str(err), cut
    try:
        while True:
            want = plan[i % len(plan)]
            i += 1
            b = reader.read(want)
            high = getattr(b, "seconds_high", None)
            out.append((b.caplen.tolist(), b.wirelen.tolist(), b.ts_ns.tolist(), b.heads.tobytes(),
                        [bytes(b.block[o:o + c]) for o, c in zip(b.offsets, b.caplen)],
                        None if high is None else np.asarray(high).tolist()))
            if len(b) < want:
                break
    except SimError as err:
        error = str(err)
    finally:
        cut = (reader.truncated_at, reader.cut_short(), reader.rx_errors)
        reader.close()
    return out, error, cut


def both_ways(data: bytes, plan, reading: Reading = Reading.ETHERNET) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.pcapng"
        path.write_bytes(data)
        with compiled.using("compiled"):
            fast = batches(path, plan, reading)
        with compiled.using("numpy"):
            slow = batches(path, plan, reading)
    assert fast == slow


@quick(150)
@given(case=pcapng_files(linktypes=(1, 1, 101, 113, 276, 0)), plan=st.sampled_from(PLANS))
def test_compiled_walk_reads_random_files_like_the_definition(case, plan):
    both_ways(case[0], plan)


@quick(150)
@given(case=pcapng_files(linktypes=(1, 1, 1, 101, 113)), plan=st.sampled_from(PLANS))
def test_compiled_walk_reads_as_libpcap_like_the_definition(case, plan):
    """As ``dpdk-l3fwd`` verbatim reads: interfaces libpcap rejects, packets of
    undescribed interfaces or captured beyond the snaplen counted as read errors."""
    both_ways(case[0], plan, Reading.LIBPCAP)


@quick(200)
@given(seed=st.integers(0, 2**32), edits=EDITS, plan=st.sampled_from(PLANS))
def test_compiled_walk_reads_damaged_files_like_the_definition(seed, edits, plan):
    both_ways(damage(valid_capture("pcapng", random.Random(seed)), edits, seed), plan)


@quick(100)
@given(order=st.sampled_from("<>"), tsresol=st.sampled_from([0, 9, 12, 19, 0x80 | 1, 0x80 | 30, 0x80 | 63]),
       tsoffset=st.sampled_from([None, -5, 0, 1 << 31, 1 << 32]),
       ticks=st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=20), plan=st.sampled_from(PLANS))
def test_compiled_walk_scales_time_stamps_like_the_definition(order, tsresol, tsoffset, ticks, plan):
    """Every resolution libpcap takes (10^-19 .. 2^-63 s ticks), negative and huge
    offsets, 64-bit tick values: the same nanoseconds, the same seconds past 2106, the
    same refusal of a time before 1970 or after 2262."""
    ng = Ng(order)
    data = ng.shb() + ng.idb(tsresol=tsresol, tsoffset=tsoffset) + b"".join(
        ng.epb(0, t, bytes([k]) * 60) for k, t in enumerate(sorted(ticks)))
    both_ways(data, plan)


def test_the_compiled_walk_takes_the_packet_blocks(tmp_path, monkeypatch):
    """Of a file of 2000 packets in varying sizes, several interfaces and a second
    section, the block-by-block definition is handed only the Section Header and
    Interface Description Blocks."""
    rng = random.Random(5)
    blocks = []
    for section in range(2):
        ng = Ng("<>"[section])
        blocks += [ng.shb(), ng.idb(tsresol=9), ng.idb(101, 96), ng.block(5, bytes(20))]
        blocks += [ng.epb(k % 2, 10**15 + k, rng.randbytes(rng.randrange(40, 300)), comment=k % 5 == 0)
                   if k % 7 else ng.spb(rng.randbytes(60)) for k in range(1000)]
    path = tmp_path / "f.pcapng"
    path.write_bytes(b"".join(blocks))
    taken = []
    definition = PcapngReader._walk_blocks
    monkeypatch.setattr(PcapngReader, "_walk_blocks", lambda self, limit, parts: taken.append(
        definition(self, limit, parts)) or taken[-1])
    with compiled.using("compiled"):
        reader = open_offline(path)
        assert len(reader.read(HUGE)) == 2000
        reader.close()
    assert sum(taken) <= 1 and len(taken) <= 2, taken    # _open; the second section's blocks to its first packet
