"""l3fwd_sim.capture.outdir: a run's outputs are put in place as a set, or not at all.

The oracle is the directory's contents (names, kinds, bytes) before and after: a
publish that fails at any point — each rename in turn made to fail — must leave exactly
what was there; one that succeeds leaves the new set, other people's files and nothing
stale of ours."""
from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from l3fwd_sim.capture import atomic as atomic_module
from l3fwd_sim.capture import outdir as outdir_module
from l3fwd_sim.capture.atomic import AtomicFile, create_new
from l3fwd_sim.capture.outdir import OWN_NAME, OutputDir
from l3fwd_sim.errors import SimError

OURS = ["port0.pcap", "port1.pcap", "port7.pcap", "port2.q1.pcap", "port3.pcapng", "stats.json", "trace.jsonl"]
THEIRS = ["notes.txt", "port0.pcap.bak", "portx.pcap", "stats.json~", "run.log"]


def snapshot(directory: Path) -> dict:
    """Every entry: bytes of a file, "dir" for a directory (hidden ones included)."""
    return {p.name: ("dir" if p.is_dir() else p.read_bytes()) for p in directory.iterdir()}


def test_own_names_are_exactly_what_runs_write():
    assert all(OWN_NAME.fullmatch(name) for name in OURS)
    assert not any(OWN_NAME.fullmatch(name) for name in THEIRS)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(old=st.sets(st.sampled_from(OURS)), new=st.sets(st.sampled_from(OURS), min_size=1),
       theirs=st.sets(st.sampled_from(THEIRS)), fail_at=st.integers(0, 30) | st.none())
def test_publish_is_all_or_nothing(tmp_path_factory, old, new, theirs, fail_at):
    """Old outputs, other files, a new set; the k-th rename fails (or none does)."""
    out = tmp_path_factory.mktemp("out")
    for name in old | theirs:
        (out / name).write_bytes(f"old {name}".encode())
    before = snapshot(out)
    calls = {"n": 0}
    real_rename = os.rename

    def rename(source, target):
        calls["n"] += 1
        if calls["n"] - 1 == fail_at:
            raise OSError(28, "No space left on device")
        real_rename(source, target)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(outdir_module.os, "rename", rename)
        staged = OutputDir(out)
        for name in new:
            (staged.stage / name).write_bytes(f"new {name}".encode())
        renames = len(old) + len(new)                 # every old output moved aside, new ones moved in
        if fail_at is not None and fail_at < renames:
            with pytest.raises(SimError, match="nothing was changed"):
                staged.publish()
            assert snapshot(out) == before
            return
        staged.publish()
    after = snapshot(out)
    assert after == {**{n: f"new {n}".encode() for n in new}, **{n: f"old {n}".encode() for n in theirs}}


def test_a_directory_in_the_way_changes_nothing(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "port0.pcap").write_bytes(b"old")
    (out / "port1.pcap").mkdir()
    before = snapshot(out)
    staged = OutputDir(out)
    for name in ("port0.pcap", "port1.pcap", "stats.json"):
        (staged.stage / name).write_bytes(b"new")
    with pytest.raises(SimError, match=r"port1\.pcap: is a directory"):
        staged.publish()
    assert snapshot(out) == before


def test_failure_inside_the_block_discards_and_names_the_output(tmp_path):
    """A message about a staged file names the output; the staging directory and a
    directory the run created are gone."""
    out = tmp_path / "new" / "out"
    with pytest.raises(SimError) as err:
        with OutputDir(out) as staged:
            raise SimError(f"{staged.stage / 'port0.pcap'}: cannot write: No space left on device")
    assert str(err.value) == f"{out / 'port0.pcap'}: cannot write: No space left on device"
    assert not (tmp_path / "new").exists()


def test_an_existing_directory_is_kept_with_what_it_held(tmp_path):
    (tmp_path / "keep.txt").write_text("x")
    with pytest.raises(KeyboardInterrupt):
        with OutputDir(tmp_path):
            raise KeyboardInterrupt
    assert snapshot(tmp_path) == {"keep.txt": b"x"}


def test_output_directory_errors(tmp_path, monkeypatch):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(SimError, match="afile: is a file, not a directory"):
        OutputDir(tmp_path / "afile")
    with pytest.raises(SimError, match="cannot create output directory: Not a directory"):
        OutputDir(tmp_path / "afile" / "sub")

    real_mkdir = os.mkdir

    def refuse(path, *args, **kwargs):           # the staging directory only
        if ".l3fwd-sim." in str(path):
            raise PermissionError(13, "Permission denied")
        return real_mkdir(path, *args, **kwargs)
    monkeypatch.setattr(outdir_module.os, "mkdir", refuse)
    with pytest.raises(SimError) as err:
        OutputDir(tmp_path / "ro")
    assert str(err.value) == f"{tmp_path / 'ro'}: cannot write into the output directory: Permission denied"
    assert not (tmp_path / "ro").exists()


@pytest.mark.parametrize("exists", [False, True])
def test_a_signal_just_after_the_stage_is_made_leaves_nothing(tmp_path, monkeypatch, exists):
    """A stop signal's handler raises at the first bytecode after mkdir returned (found by
    tests/test_faults.py under load: SIGHUP as the staging directory appeared): the
    staging directory and a directory the run created go, what was there stays."""
    out = tmp_path / "out"
    if exists:
        out.mkdir()
        (out / "keep.txt").write_text("x")
    before = snapshot(out) if exists else None
    real_mkdir = os.mkdir

    def mkdir_then_signal(path, *args, **kwargs):
        real_mkdir(path, *args, **kwargs)
        if ".l3fwd-sim." in str(path):
            raise KeyboardInterrupt
    monkeypatch.setattr(outdir_module.os, "mkdir", mkdir_then_signal)
    with pytest.raises(KeyboardInterrupt):
        OutputDir(out)
    assert (snapshot(out) == before) if exists else not out.exists()


@pytest.mark.parametrize("make", ["file", "directory"])
def test_create_new_removes_what_a_signal_interrupted(tmp_path, make):
    """The same for every temporary name (AtomicFile's file, net_pcap's scratch
    directory): made, then interrupted before the caller knew the name: removed."""
    def make_then_signal(path):
        path.mkdir() if make == "directory" else path.write_bytes(b"")
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        create_new(tmp_path, ".x.", ".tmp", make_then_signal)
    assert list(tmp_path.iterdir()) == []


def test_an_atomic_file_interrupted_as_it_is_created_leaves_nothing(tmp_path, monkeypatch):
    real_open = os.open

    def open_then_signal(*args, **kwargs):
        real_open(*args, **kwargs)
        raise KeyboardInterrupt
    monkeypatch.setattr(atomic_module.os, "open", open_then_signal)
    with pytest.raises(KeyboardInterrupt):
        AtomicFile(tmp_path / "report.html")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []


def test_an_atomic_file_interrupted_once_open_closes_its_descriptor_once(tmp_path, monkeypatch):
    """Interrupted just after its file object took the descriptor: closed once, so a file
    opened next (the same descriptor number) is not closed under it by a second close
    (found by test_faults: testpmd under SIGHUP ended in "Bad file descriptor")."""
    real = atomic_module._NamedFile

    def named_then_signal(*args):
        real(*args)
        raise KeyboardInterrupt
    monkeypatch.setattr(atomic_module, "_NamedFile", named_then_signal)
    with pytest.raises(KeyboardInterrupt):
        AtomicFile(tmp_path / "stats.json")
    with open(tmp_path / "next.bin", "wb") as following:
        gc.collect()                                 # any file object left over is closed now
        following.write(b"x" * 10)
        following.flush()
    assert (tmp_path / "next.bin").read_bytes() == b"x" * 10
    assert [p.name for p in tmp_path.iterdir()] == ["next.bin"]


def test_inputs_named_like_outputs_in_the_output_directory_are_refused(tmp_path):
    (tmp_path / "port2.pcap").write_bytes(b"input")
    (tmp_path / "mine.pcap").write_bytes(b"input")
    OutputDir(tmp_path, [tmp_path / "mine.pcap"]).discard()          # not named like an output: fine
    with pytest.raises(SimError, match="port2.pcap: an input in the output directory"):
        OutputDir(tmp_path, [tmp_path / "port2.pcap"])
    assert snapshot(tmp_path) == {"port2.pcap": b"input", "mine.pcap": b"input"}


def test_odd_output_paths(tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "missing")
    with pytest.raises(SimError, match="dangling: is a symbolic link to nothing"):
        OutputDir(tmp_path / "dangling")
    with pytest.raises(SimError, match="/dev/null: is not a directory"):
        OutputDir("/dev/null")
    assert not (tmp_path / "missing").exists()


# names whose digits are not ASCII: Python's \d matches them, C's isdigit() and l3fwd-sim do not
NOT_OURS = ["port\u0661.pcap", "port\uff11.pcap", "port0.q\u0663.pcap", "port\u0661.pcapng", "port0.q\uff10.pcap"]


def test_non_ascii_digit_names_are_not_ours():
    assert not any(OWN_NAME.fullmatch(name) for name in NOT_OURS)


@pytest.mark.parametrize("command", ["run", "testpmd", "generate"])
def test_a_successful_run_leaves_names_with_non_ascii_digits_untouched(tmp_path, command):
    """port١.pcap (ARABIC-INDIC ONE), port１.pcap (FULLWIDTH ONE), port0.q٣.pcap look like
    stale outputs to a \\d pattern; a successful run, testpmd or generate neither replaces
    nor removes them."""
    from forwarding import run_cli
    from frames import mixed_frames, write_pcap
    write_pcap(tmp_path / "in.pcap", mixed_frames(3, 0, 20))
    out = tmp_path / "out"
    out.mkdir()
    for name in NOT_OURS:
        (out / name).write_bytes(f"theirs {name}".encode())
    (out / "port5.pcap").write_bytes(b"a stale output of ours")
    args = (["generate", "IPV4-CONT-BURST", "--count", "3", "--ports", "2"] if command == "generate"
            else [command, f"0={tmp_path / 'in.pcap'}"])
    result = run_cli(*args, "-o", out, "--quiet")
    assert result.exit_code == 0, result.output
    after = snapshot(out)
    assert {name: after.get(name) for name in NOT_OURS} == {name: f"theirs {name}".encode() for name in NOT_OURS}
    assert "port5.pcap" not in after                         # our own stale output did go
    assert "port0.pcap" in after


def test_a_link_to_itself_named_like_an_output_is_replaced(tmp_path):
    """port0.pcap -> port0.pcap (a loop): checking the inputs against the outputs once
    raised RuntimeError (Path.resolve); it is a stale output like any other."""
    (tmp_path / "port0.pcap").symlink_to("port0.pcap")
    (tmp_path / "in.pcap").write_bytes(b"input")
    staged = OutputDir(tmp_path, [tmp_path / "in.pcap"])
    (staged.stage / "port1.pcap").write_bytes(b"new")
    staged.publish()
    assert snapshot(tmp_path) == {"in.pcap": b"input", "port1.pcap": b"new"}
