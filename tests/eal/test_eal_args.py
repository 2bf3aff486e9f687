"""The EAL part of a real command line and l3fwd's own option parsers, against
independent oracles: lcore sets rendered every way EAL takes them, net_pcap devargs,
and C's own ``strtoul``/``atoi`` (libc through ctypes) for l3fwd's number parsing."""
from __future__ import annotations

import ctypes
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from l3fwd_sim.eal.args import parse_eal, split_argv
from l3fwd_sim.eal.net_pcap import MAX_QUEUES, parse_vdev
from l3fwd_sim.errors import SimError
from l3fwd_sim.l3fwd.args import (parse_args, parse_link_speed, parse_mbcache, parse_pkt_burst,
                                  parse_queue_size)
from l3fwd_sim.numbers import c_atoi, c_strtoul

LIBC = ctypes.CDLL(None)
LIBC.strtoul.restype = ctypes.c_ulong
LIBC.strtoul.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int]
LIBC.atoi.argtypes = [ctypes.c_char_p]
lcore_sets = st.sets(st.integers(0, 127), min_size=1, max_size=20)


def ranges(lcores: set[int]) -> list[tuple[int, int]]:
    """Runs of consecutive ids."""
    runs: list[list[int]] = []
    for lcore in sorted(lcores):
        if runs and runs[-1][1] == lcore - 1:
            runs[-1][1] = lcore
        else:
            runs.append([lcore, lcore])
    return [tuple(r) for r in runs]


@settings(max_examples=150, deadline=None)
@given(lcore_sets, st.data())
def test_lcores_every_spelling(lcores, data):
    """-l LIST, -c MASK and --lcores MAP (groups, @cpus) name the same lcores."""
    listed = ",".join(f"{a}-{b}" if a != b else f"{a}" for a, b in data.draw(st.permutations(ranges(lcores))))
    mask = hex(sum(1 << lc for lc in lcores))
    groups = [f"({a}-{b})@(0,1)" if a != b else f"{a}@{a % 2}" for a, b in ranges(lcores)]
    spellings = [["-l", listed], [f"-l{listed}"], ["-c", mask], ["-c", mask[2:]], [f"--lcores={','.join(groups)}"],
                 ["--lcores", listed]]
    for argv in spellings:
        assert parse_eal(argv).lcores == sorted(lcores), argv


def test_lcores_default_and_refusals():
    assert parse_eal([]).lcores == list(range(min(os.cpu_count(), 128)))   # EAL: every CPU
    for argv, needle in [(["-l", "3-1"], "invalid core list"), (["-l", "0,x"], "invalid core list"),
                         (["-l", "128"], "invalid core list"), (["-c", "0x0"], "no lcore"), (["-c", "xyz"], "coremask"),
                         (["--lcores", "(1-2@0"], "invalid lcore map"), (["-l", "0", "-c", "1"], "give one"),
                         (["--main-lcore", "3", "-l", "0-1"], "not one of the enabled lcores"),
                         (["-b", "0000:00:01.0"], "PCI devices"), (["--huge-unlink=x"], "doesn't allow an argument"),
                         (["stray"], "unexpected argument"), (["-n"], "requires an argument")]:
        with pytest.raises(SimError, match=needle):
            parse_eal(argv)


BIG = "9" * 5000


@pytest.mark.parametrize("argv,needle", [
    (["-l", BIG], "invalid core list"), (["-l", f"0-{BIG}"], "invalid core list"),
    (["--lcores", f"({BIG})@0"], "invalid core list"), (["-l", "0", "--main-lcore", BIG], "not one of the enabled"),
])
def test_lcores_with_5000_digits_refused(argv, needle):
    """More digits than Python's int() converts: one line, not a ValueError (found by
    tests/fuzz/test_fuzz_options.py); leading zeros are still read as C reads them."""
    with pytest.raises(SimError, match=needle):
        parse_eal(argv)
    eal = parse_eal(["-l", "0" * 5000 + "1", "--main-lcore", "0" * 5000 + "1"])
    assert (eal.lcores, eal.main_lcore) == ([1], 1)


def test_quiet_eal_options_accepted():
    argv = ["-l", "0", "-n", "4", "-m", "4096", "--no-huge", "--no-pci", "--no-telemetry", "--file-prefix=x",
            "--log-level", "lib.eal:debug", "--in-memory", "--proc-type", "primary", "--huge-dir", "/mnt",
            "--socket-mem=1024", "-d", "librte_net_pcap.so"]
    assert parse_eal(argv).lcores == [0]


def test_split_argv():
    assert split_argv(["-l", "0", "--", "-p", "1", "--", "x"]) == (["-l", "0"], ["-p", "1", "--", "x"])
    assert split_argv(["-l", "0"]) == (["-l", "0"], [])


names = st.lists(st.from_regex(r"[a-z0-9_./]{1,12}", fullmatch=True), max_size=MAX_QUEUES)


@settings(max_examples=150)
@given(names, names, st.sampled_from(["net_pcap0", "net_pcap17", "eth_pcap3"]), st.randoms())
def test_vdev_queues(rx, tx, name, rand):
    """rx_pcap/tx_pcap in their own order whatever the interleaving; net_pcap's queue
    counts: files, or a dummy/dropping queue per file of the other side."""
    sides = {"rx_pcap": list(rx), "tx_pcap": list(tx)}
    pairs = []                                 # the two lists interleaved at random, each in its order
    while sides["rx_pcap"] or sides["tx_pcap"]:
        key = rand.choice([k for k, files in sides.items() if files])
        pairs.append((key, sides[key].pop(0)))
    text = ",".join([name, *(f"{k}={v}" for k, v in pairs), *(["eof=1"] if rand.random() < 0.3 else [])])
    if not rx and not tx:
        with pytest.raises(SimError, match="No rx or tx queues"):
            parse_vdev(text)
        return
    vdev = parse_vdev(text)
    assert (vdev.name, vdev.rx_pcap, vdev.tx_pcap) == (name, rx, tx)
    assert (vdev.rx_queues, vdev.tx_queues) == (len(rx) or len(tx), len(tx) or len(rx))


@pytest.mark.parametrize("text,needle", [
    ("net_pcap0," + ",".join(f"rx_pcap=f{i}" for i in range(17)), "at most 16"),
    ("net_pcap0,rx_pcap=a,snaplen=100", "snaplen= is not modelled"),
    ("net_pcap0,rx_pcap=a,bogus=1", "unknown argument"),
    ("net_pcap0,rx_pcap=", "names no file"),
    ("net_tap0,iface=x", "only net_pcap devices"),
    ("net_pcap0,rx_iface_in=eth0", "rx_iface_in= is not modelled"),
    ("net_pcap0,rx_pcap=a\x00b", "rx_pcap='a\\\\x00b': a file name cannot hold a NUL character"),   # fuzz: ValueError
    ("net_pcap0,rx_pcap=a,tx_pcap=\x00", "tx_pcap='\\\\x00': a file name cannot hold a NUL character"),
])
def test_vdev_refusals(text, needle):
    with pytest.raises(SimError, match=needle):
        parse_vdev(text)


def _libc_strtoul(text: str) -> int | None:
    """C's ``strtoul(text, &end, 10)`` with the whole text consumed; None otherwise."""
    raw = text.encode()
    end = ctypes.c_char_p()
    value = LIBC.strtoul(raw, ctypes.byref(end), 10)
    consumed = ctypes.cast(end, ctypes.c_void_p).value - ctypes.cast(ctypes.c_char_p(raw), ctypes.c_void_p).value
    return value if raw and consumed == len(raw) else None


numberish = st.one_of(st.integers(0, 10**7).map(str), st.from_regex(r"[ +]?[0-9]{0,6}[a-z]?", fullmatch=True),
                      st.just("99999999999999999999999"))


@settings(max_examples=300)
@given(numberish)
def test_number_parsers_match_libc(text):
    """l3fwd's strtoul(…, 10)-and-whole-text checks and testpmd's atoi, against libc's."""
    ours, theirs = c_strtoul(text), _libc_strtoul(text)
    if theirs is None or ours is None:
        assert ours == theirs or (ours is not None and ours > 1 << 32)
    else:
        assert ours == theirs or (ours > 2**63 and theirs == 2**64 - 1)      # both saturate
    assert c_atoi(text) == LIBC.atoi(text.encode()) or len(text.strip().lstrip("+")) > 9


@settings(max_examples=200)
@given(st.integers(-5, 70000))
def test_queue_size_mbcache_and_bursts(n):
    text = str(n)
    if 1 <= n <= 65535:
        assert parse_queue_size(text, "--rx-queue-size") == n
    else:
        with pytest.raises(SimError, match="rx-queue-size"):
            parse_queue_size(text, "--rx-queue-size")
    if 0 <= n <= 512:
        assert parse_mbcache(text) == n
        assert parse_pkt_burst(text, True, 32) == ((n, None) if n else (32, parse_pkt_burst("0", True, 32)[1]))
    elif n > 512:
        with pytest.raises(SimError, match="mbcache must be >= 0 and <= 512"):
            parse_mbcache(text)
        assert parse_pkt_burst(text, False, 7) == (7, "User provided burst must be <= 512. Using default value 7")
    else:                                       # "-5": no number for strtoul's whole-text check: ignored
        assert parse_mbcache(text) is None
    if n in (10, 100):
        with pytest.raises(SimError, match="Unsupported fixed speed"):
            parse_link_speed(text)
    else:
        parse_link_speed(text)


def test_l3fwd_parse_args_notes_in_order():
    args = parse_args(["-p0x3", "--parse-ptype", "--rx-burst=0", "--tx-burst", "600", "--hash-entry-num", "4",
                       "--disable-rss"])
    assert args.console == ["soft parse-ptype is enabled",
                            "L3FWD: PMD does not recommend a burst size. Using default value 32. "
                            "User provided value must be in [1, 512]",
                            "L3FWD: User provided burst must be <= 512. Using default value 32",
                            "Hash entry number will be ignored", "RSS is disabled",
                            "Neither ACL, LPM, EM, or FIB selected, defaulting to LPM",
                            "L3FWD: Using Rx burst 32 Tx burst 32"]
    assert (args.portmask, args.lookup, args.disable_rss) == (3, "lpm", True)
