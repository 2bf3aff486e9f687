"""``--annotate``'s comments in pcapng blocks (``pcapng_writer.write_commented``): the
writer appending each packet with its comment (``PcapngWriter.comments``) and the
rewrite of a complete file give the same bytes; scapy (an independent pcapng reader)
reads every frame back with its comment; the compiled twin (``records.c``'s
``comment_blocks``, which walks the blocks itself) equals the numpy definition, a small
piece at a time too; blocks that are not one EPB per comment are refused by both."""
from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scapy.utils import RawPcapNgReader

from l3fwd_sim import RunOptions, compiled, find_inputs, run
from l3fwd_sim.capture.pcapng_writer import PcapngWriter, file_header, write_commented
from l3fwd_sim.dataplane.annotations import add_comments
from forwarding import REPO
from test_pcapng_writer import heads_and_tails, packets
from twins import KERNELS, needs_twins

COMMENTS = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\x00"), max_size=40)


def _texts(comments: list[str]):
    """One text and each comment's start and end in it."""
    raw = [c.encode() for c in comments]
    lengths = np.array([len(r) for r in raw], np.int64)
    ends = np.cumsum(lengths)
    return np.frombuffer(b"".join(raw), np.uint8).copy(), ends - lengths, ends


def _plain(path, frames, wire, stamps, comments=None, batch=7):
    """A pcapng as the run writes it, appended ``batch`` packets at a time; with
    ``comments``, each packet with its own as it is appended."""
    writer = PcapngWriter(path, nanosecond=True)
    if comments is not None:
        text, starts, ends = _texts(comments)
        given_so_far = [0]

        def next_comments(n):
            k = given_so_far[0]
            given_so_far[0] += n
            return text, starts[k:k + n], ends[k:k + n]
        writer.comments = next_comments
    heads, caplen, tails = heads_and_tails(frames)
    tail_at = 0
    for at in range(0, len(frames), batch):
        part = slice(at, at + batch)
        long = int((caplen[part] > heads.shape[1]).sum())
        writer.write(heads[part], caplen[part], wire[part], stamps[part], tails[tail_at:tail_at + long] or None)
        tail_at += long
    writer.commit()


@settings(max_examples=60)
@given(seed=st.integers(0, 2**32), n=st.integers(0, 40), comments=st.data())
def test_comments_as_appended_equal_the_rewrite_and_scapy_reads_them(tmp_path_factory, seed, n, comments):
    frames, wire, stamps = packets(seed, n)
    texts = comments.draw(st.lists(COMMENTS, min_size=n, max_size=n))
    directory = tmp_path_factory.mktemp("comments")
    files = {}
    for kernels in KERNELS:
        with compiled.using(kernels):
            inline, rewritten = directory / f"inline-{kernels}.pcapng", directory / f"rewritten-{kernels}.pcapng"
            _plain(inline, frames, wire, stamps, texts)
            _plain(rewritten, frames, wire, stamps)
            add_comments(rewritten, *_texts(texts))
            files[kernels] = inline.read_bytes()
            assert rewritten.read_bytes() == files[kernels]
    assert files["compiled"] == files["numpy"]
    with RawPcapNgReader(str(directory / "inline-compiled.pcapng")) as reader:
        read = list(reader)
    assert [frame for frame, _ in read] == frames
    assert [(meta.comments or [b""])[0].decode() if isinstance(meta.comments, list) else (meta.comments or b"").decode()
            for _, meta in read] == texts


@needs_twins
@settings(max_examples=30)
@given(seed=st.integers(0, 2**32), n=st.integers(1, 30), piece=st.integers(64, 600))
def test_the_compiled_walk_lays_out_a_piece_at_a_time(tmp_path_factory, seed, n, piece):
    """Pieces down to a few blocks each: the blocks are the same as in one piece."""
    frames, wire, stamps = packets(seed, n)
    frames = [f[:200] for f in frames]              # every block fits a piece of 600 bytes ...
    wire = np.maximum(wire, [len(f) for f in frames])
    directory = tmp_path_factory.mktemp("pieces")
    _plain(directory / "plain.pcapng", frames, wire, stamps)
    data = np.fromfile(directory / "plain.pcapng", np.uint8)
    header = len(file_header("port0", True))         # the section header and the interface, as written
    texts = [random.Random(seed + i).choice(["", "a", "rx port 0 #1", "é" * 9]) for i in range(n)]
    out = {}
    for kernels, size in (("numpy", 0), ("compiled", 1 << 20), ("compiled", piece + 300)):   # ... and 300 of comment
        parts = []
        with compiled.using(kernels):
            # a piece is reused by the next call: what is written is taken at once, as a file takes it
            write_commented(lambda part: parts.append(bytes(part)), data[header:], *_texts(texts), "blocks",
                            np.empty(size, np.uint8))
        out[kernels, size] = b"".join(parts)
    assert len(set(out.values())) == 1


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("damage", ["fewer comments", "more comments", "not an EPB", "cut short", "length below 32"])
def test_blocks_not_one_epb_per_comment_are_refused(tmp_path, kernels, damage):
    frames, wire, stamps = packets(5, 6)
    _plain(tmp_path / "plain.pcapng", frames, wire, stamps)
    data = np.fromfile(tmp_path / "plain.pcapng", np.uint8)[len(file_header("port0", True)):].copy()
    n = {"fewer comments": 5, "more comments": 7}.get(damage, 6)
    if damage == "not an EPB":
        data[:4] = [3, 0, 0, 0]                      # a Simple Packet Block's type
    elif damage == "cut short":
        data = data[:-4]
    elif damage == "length below 32":
        data[4:8] = [28, 0, 0, 0]
    with compiled.using(kernels), pytest.raises(AssertionError, match="not one Enhanced Packet Block per comment"):
        write_commented(lambda part: None, data, *_texts(["x"] * n), "blocks", np.empty(1 << 16, np.uint8))


@pytest.mark.parametrize("kernels", KERNELS)
def test_a_run_comments_as_it_forwards_as_the_rewrite_does(tmp_path, kernels):
    """One lcore comments each packet as it is written; ``--jobs 2`` (whose records are
    only known at the end) rewrites the outputs: the same bytes, ``drops.pcapng`` too."""
    inputs = find_inputs([str(REPO / "pcaps")])
    with compiled.using(kernels):
        for name, jobs in (("inline", 1), ("rewritten", 2)):
            run(RunOptions(inputs=inputs, outdir=tmp_path / name, annotate=True, drops=True, jobs=jobs,
                           chunk_packets=64))
    names = sorted(p.name for p in (tmp_path / "inline").glob("*.pcapng"))
    assert len(names) == 5 and names == sorted(p.name for p in (tmp_path / "rewritten").glob("*.pcapng"))
    for name in names:
        assert (tmp_path / "inline" / name).read_bytes() == (tmp_path / "rewritten" / name).read_bytes(), name
