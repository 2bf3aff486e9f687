"""``l3fwd-sim testpmd``: every golden run of real dpdk-testpmd byte for byte; each engine
against an oracle written here with scapy (dissect, change the fields testpmd changes,
re-serialise); macswap/5tswap involution properties (hypothesis); port topologies as
config.c maps them; icmpecho replies checked by scapy's own checksums; conservation."""
from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path

import numpy as np
import pytest
from forwarding import GOLDEN, forward_frames, run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6, IPv6ExtHdrHopByHop
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether
from scapy.packet import Raw
from scapy.utils import checksum
from frames import assert_same_records, mixed_frames, read_pcap_frames, write_pcap
from twins import KERNELS

from l3fwd_sim import compiled
from l3fwd_sim.dataplane.inputs import find_inputs
from l3fwd_sim.testpmd.run import FORWARD_MODES
from l3fwd_sim.testpmd.run import TestpmdOptions as Options  # aliased: pytest would collect
from l3fwd_sim.testpmd.run import testpmd_run as run_testpmd  # names starting with test / Test
from l3fwd_sim.testpmd.engines import MACSWAP_SHUFFLE, swap_macs

GOLDEN_TESTPMD = GOLDEN / "testpmd"
GOLDEN_MODES = sorted(p.name.removeprefix("expected-") for p in GOLDEN_TESTPMD.glob("expected-*"))


def port_mac(port: int) -> str:
    return "02:70:63:61:70:%02x" % port


def peer_mac(port: int) -> str:
    return "02:00:00:00:00:%02x" % port


# ---------------------------------------------------------------------------------------
# golden: real dpdk-testpmd v26.07, --port-topology=paired --no-flush-rx, one lcore
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("mode", GOLDEN_MODES)
def test_golden_testpmd(tmp_path, mode, kernels):
    """(With the compiled twins of the capture I/O and with the numpy stages.)"""
    with compiled.using(kernels):
        result = run_cli("testpmd", GOLDEN_TESTPMD / "in", "-o", tmp_path, "--forward-mode", mode, "--quiet")
    assert result.exit_code == 0, result.output
    expected = sorted((GOLDEN_TESTPMD / f"expected-{mode}").glob("port*.pcap"))
    assert sorted(p.name for p in tmp_path.glob("port*.pcap")) == [p.name for p in expected]
    for exp in expected:
        assert_same_records(exp, tmp_path / exp.name, f"{mode}/{exp.name}")
    stats = json.loads((tmp_path / "stats.json").read_text())
    assert stats["totals"]["tx"] == sum(len(read_pcap_frames(p)) for p in expected)


def test_all_golden_modes_are_engines():
    assert set(GOLDEN_MODES) <= set(FORWARD_MODES)


# ---------------------------------------------------------------------------------------
# traffic for the oracles: whole frames scapy re-serialises exactly, sometimes cut short
# ---------------------------------------------------------------------------------------
def _mac(rng):
    return "00:1b:21:%02x:%02x:%02x" % (rng.randrange(256), rng.randrange(256), rng.randrange(256))


def _v4(rng):
    return f"10.{rng.randrange(256)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"


def _v6(rng):
    return f"2001:db8:{rng.randrange(65536):x}::{rng.randrange(1, 65536):x}"


def _l4(rng, kind=None):
    kind = kind or rng.choice(["udp", "tcp"])
    sport, dport = rng.randrange(20000, 30000), rng.randrange(20000, 30000)
    return UDP(sport=sport, dport=dport) if kind == "udp" else TCP(sport=sport, dport=dport, flags="A")


def _echo(rng, dst=None, src=None, code=0, itype=8):
    return IP(src=src or _v4(rng), dst=dst or _v4(rng), ttl=64, id=rng.randrange(65536)) / \
        ICMP(type=itype, code=code, id=rng.randrange(65536), seq=rng.randrange(65536))


def _arp(rng, **kw):
    kw.setdefault("op", 1)
    return ARP(hwsrc=_mac(rng), psrc=_v4(rng), hwdst="00:00:00:00:00:00", pdst=_v4(rng), **kw)


BUILDERS = [
    lambda rng: IP(src=_v4(rng), dst=_v4(rng)) / _l4(rng),
    lambda rng: IPv6(src=_v6(rng), dst=_v6(rng)) / _l4(rng),
    lambda rng: IPv6(src=_v6(rng), dst=_v6(rng)) / IPv6ExtHdrHopByHop() / _l4(rng),   # no ext walk
    lambda rng: IPv6(src=_v6(rng), dst=_v6(rng)) / ICMPv6EchoRequest(),
    lambda rng: IP(src=_v4(rng), dst=_v4(rng), options=IPOption(b"\x01" * 4 * rng.randint(1, 10))) / _l4(rng),
    lambda rng: IP(src=_v4(rng), dst=_v4(rng), proto=17, frag=rng.randint(1, 999)) / Raw(rng.randbytes(12)),
    lambda rng: IP(src=_v4(rng), dst=_v4(rng), proto=47) / Raw(rng.randbytes(8)),
    lambda rng: _echo(rng),
    lambda rng: _echo(rng, dst="224.0.0.%d" % rng.randrange(256), src="10.0.0.%d" % rng.randrange(256)),
    lambda rng: _echo(rng, dst="239.1.2.3"),                    # not 224.x: testpmd does not see multicast
    lambda rng: _echo(rng, itype=0),                            # echo reply: freed
    lambda rng: _echo(rng, code=1),                             # echo request, code 1: freed
    lambda rng: _arp(rng),
    lambda rng: _arp(rng, op=2),
    lambda rng: _arp(rng, hwtype=6),
    lambda rng: Dot1Q(vlan=rng.randrange(4096)) / IP(src=_v4(rng), dst=_v4(rng)) / _l4(rng),
    lambda rng: Dot1Q(vlan=rng.randrange(4096)) / _echo(rng),
    lambda rng: Dot1Q(vlan=rng.randrange(4096)) / _arp(rng),
    lambda rng: Dot1Q(vlan=rng.randrange(4096)) / IPv6(src=_v6(rng), dst=_v6(rng)) / _l4(rng),
    lambda rng: Dot1AD(vlan=rng.randrange(4096)) / Dot1Q(vlan=rng.randrange(4096)) /
    IP(src=_v4(rng), dst=_v4(rng)) / _l4(rng),
    lambda rng: Dot1AD(vlan=7) / Dot1Q(vlan=8) / IPv6(src=_v6(rng), dst=_v6(rng)) / _l4(rng),   # ports past byte 64
    lambda rng: Dot1Q(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / IPv6(src=_v6(rng), dst=_v6(rng)) / _l4(rng),
    lambda rng: Dot1AD(vlan=5) / _echo(rng),                    # icmpecho steps over 0x8100 only
    lambda rng: Raw(rng.randbytes(46)),                         # unknown EtherType (set below)
]


def oracle_frames(seed: int, in_port: int, n: int) -> list[tuple[bytes, int]]:
    """(whole frame, captured length) pairs; one in five is cut short at a random length."""
    rng = random.Random(f"testpmd/{seed}/{in_port}")
    out = []
    while len(out) < n:
        build = rng.choice(BUILDERS)
        inner = build(rng)
        ether = Ether(dst=port_mac(in_port) if rng.random() < 0.7 else _mac(rng), src=_mac(rng))
        if isinstance(inner, Raw):
            ether.type = rng.choice([0x88B5, 0x88CC, 0x9000])
        pkt = ether / inner
        size = rng.choice([60, 64, 65, 90, 200, 300])
        if len(pkt) < size:
            pkt = pkt / Raw(rng.randbytes(size - len(pkt)))
        frame = bytes(pkt)
        if bytes(Ether(frame)) != frame:                    # the oracle relies on exact re-serialisation
            continue
        cut = len(frame) if rng.random() < 0.8 else rng.randrange(0, len(frame))
        out.append((frame, cut))
    return out


# ---------------------------------------------------------------------------------------
# the oracles: (whole frame) -> (reply/forwarded whole frame or None, drop reason, need);
# the engine's output for a frame cut at ``cut`` is the whole result cut at ``cut`` when
# ``cut >= need``, else the frame is dropped as truncated.
# ---------------------------------------------------------------------------------------
def _tags(pkt):
    """(layer after the VLAN/QinQ tags, their byte length)."""
    layer, length = pkt.payload, 14
    while isinstance(layer, Dot1Q):                # Dot1AD is a Dot1Q in scapy
        layer, length = layer.payload, length + 4
    return layer, length


def oracle_io(frame, tx):
    return frame, None, 0


def oracle_mac(frame, tx, peers=None, macs=None):
    pkt = Ether(frame)
    pkt.dst = (peers or {}).get(tx, peer_mac(tx))
    pkt.src = (macs or {}).get(tx, port_mac(tx))
    return bytes(pkt), None, 12


def oracle_macswap(frame, tx):
    pkt = Ether(frame)
    pkt.dst, pkt.src = pkt.src, pkt.dst
    return bytes(pkt), None, 12


def _swap_ports(l4):
    if isinstance(l4, (TCP, UDP)):
        l4.sport, l4.dport = l4.dport, l4.sport
    else:                                          # a later fragment: testpmd swaps its first 4 bytes anyway
        l4.load = l4.load[2:4] + l4.load[0:2] + l4.load[4:]


def oracle_5tswap(frame, tx):
    pkt = Ether(frame)
    pkt.dst, pkt.src = pkt.src, pkt.dst
    l3, l3_at = _tags(pkt)
    need = l3_at
    if isinstance(l3, IP):
        l3.src, l3.dst = l3.dst, l3.src
        need = l3_at + 20
        if l3.proto in (6, 17):
            _swap_ports(l3.payload)
            need = l3_at + 4 * l3.ihl + 4
    elif isinstance(l3, IPv6):
        l3.src, l3.dst = l3.dst, l3.src
        need = l3_at + 40
        if l3.nh in (6, 17):
            _swap_ports(l3.payload)
            need = l3_at + 44
    return bytes(pkt), None, need


def oracle_icmpecho(frame, tx, macs=None):
    pkt = Ether(frame)
    l3, l3_at = (pkt[Dot1Q].payload, 18) if pkt.type == 0x8100 else (pkt.payload, 14)
    mine = (macs or {}).get(tx, port_mac(tx))
    if isinstance(l3, ARP):
        if (l3.hwtype, l3.ptype, l3.hwlen, l3.plen) != (1, 0x0800, 6, 4):
            return None, "arp_unsupported", l3_at + 8
        if l3.op != 1:
            return None, "arp_not_request", l3_at + 8
        sender_hw = l3.hwsrc
        pkt.dst, pkt.src = pkt.src, mine
        l3.op, l3.hwdst, l3.hwsrc = 2, sender_hw, mine
        l3.psrc, l3.pdst = l3.pdst, l3.psrc
        return bytes(pkt), None, l3_at + 28
    if not isinstance(l3, IP):
        return None, "not_arp_or_ipv4", l3_at
    if l3.proto != 1:
        return None, "not_icmp_echo_request", l3_at + 10
    assert l3.ihl == 5, "the oracle models the ICMP header right after a 20-byte IPv4 header"
    icmp = l3[ICMP]
    if icmp.type != 8:
        return None, "not_icmp_echo_request", l3_at + 21
    if icmp.code != 0:
        return None, "not_icmp_echo_request", l3_at + 22
    pkt.dst, pkt.src = pkt.src, pkt.dst
    if l3.dst.startswith("224."):
        source = [int(x) for x in l3.src.split(".")]
        source[3] = (source[3] & ~3) | (2 if source[3] & 3 == 1 else 1)
        l3.dst, l3.src = l3.src, ".".join(map(str, source))
        l3.chksum = None
    else:
        l3.src, l3.dst = l3.dst, l3.src
    icmp.type, icmp.chksum = 0, None
    reply = Ether(bytes(pkt))
    if reply[IP].chksum == 0:                      # ipv4_hdr_cksum never sends 0
        reply[IP].chksum = 0xFFFF
    return bytes(reply), None, l3_at + 24


def oracle_rxonly(frame, tx):
    return None, "rxonly", 0                       # received and freed, whatever it holds


ORACLES = {"io": oracle_io, "mac": oracle_mac, "macswap": oracle_macswap, "5tswap": oracle_5tswap,
           "icmpecho": oracle_icmpecho, "rxonly": oracle_rxonly}


def paired(ports):
    return {p: ports[i ^ 1] if (i ^ 1) < len(ports) else p for i, p in enumerate(ports)}


def expected_outputs(mode, inputs, tx_of, oracle=None):
    """Per TX port, the frames the oracle says leave there, in order; and the drops."""
    oracle = oracle or ORACLES[mode]
    outs = {p: [] for p in tx_of.values()}
    drops = {}
    for port, frames in inputs.items():
        tx = port if mode == "icmpecho" else tx_of[port]
        for frame, cut in frames:
            result, reason, need = oracle(frame, tx)
            if cut < need:
                reason = "truncated"
            if reason:
                drops[reason] = drops.get(reason, 0) + 1
            else:
                outs[tx].append(result[:cut])
    return outs, drops


def simulate(tmp_path, inputs: dict[int, list[bytes]], **options):
    return forward_frames(tmp_path, inputs, lambda paths, outdir: run_testpmd(Options(inputs=paths, outdir=outdir,
                                                                                      **options)))


ORACLE_INPUTS = {port: oracle_frames(1, port, 150) for port in range(4)}


@pytest.mark.parametrize("mode", FORWARD_MODES)
def test_engine_against_scapy_oracle(tmp_path, mode):
    got, stats = simulate(tmp_path, {p: [f[:cut] for f, cut in fr] for p, fr in ORACLE_INPUTS.items()},
                          forward_mode=mode, burst=7)
    want, drops = expected_outputs(mode, ORACLE_INPUTS, paired([0, 1, 2, 3]))
    for port in want:
        first_diff = next((i for i, (a, b) in enumerate(zip(want[port], got[port])) if a != b), None)
        assert (len(got[port]), first_diff) == (len(want[port]), None), f"port {port}"
    assert {k: v for k, v in stats["drops"].items() if v} == drops


def test_eth_peer_and_port_mac_overrides(tmp_path):
    peers, macs = {1: "aa:bb:cc:dd:ee:01"}, {0: "02:12:34:56:78:9a", 1: "02:12:34:56:78:9b"}
    inputs = {p: ORACLE_INPUTS[p][:60] for p in (0, 1)}
    raw = {p: [f[:cut] for f, cut in fr] for p, fr in inputs.items()}
    as_bytes = {p: bytes.fromhex(m.replace(":", "")) for p, m in peers.items()}
    mac_bytes = {p: bytes.fromhex(m.replace(":", "")) for p, m in macs.items()}
    for mode, oracle in (("mac", lambda f, tx: oracle_mac(f, tx, peers, macs)),
                         ("icmpecho", lambda f, tx: oracle_icmpecho(f, tx, macs))):
        got, _ = simulate(tmp_path / mode, raw, forward_mode=mode, eth_peer=as_bytes, port_mac=mac_bytes)
        want, _ = expected_outputs(mode, inputs, {0: 1, 1: 0}, oracle)
        assert got == want, mode


def test_icmpecho_replies_are_valid(tmp_path):
    """Every echo reply verifies: scapy recomputes the IP and ICMP checksums to the values
    testpmd's incremental update (or ipv4_hdr_cksum, for 224.x) put there."""
    whole = {p: [f for f, cut in fr if cut == len(f)] for p, fr in ORACLE_INPUTS.items()}   # checksums span all
    got, _ = simulate(tmp_path, whole, forward_mode="icmpecho")
    replies = [Ether(f) for frames in got.values() for f in frames if ICMP in Ether(f)]
    assert len(replies) > 20
    for reply in replies:
        assert reply[ICMP].type == 0 and reply[ICMP].code == 0
        fresh = reply.copy()
        fresh[IP].chksum, fresh[ICMP].chksum = None, None
        fresh = Ether(bytes(fresh))
        assert (reply[IP].chksum, reply[ICMP].chksum) == (fresh[IP].chksum, fresh[ICMP].chksum)
    assert any(r[IP].src.startswith("10.0.0.") and r[IP].dst.startswith("10.0.0.") for r in replies)  # 224.x


def test_icmpecho_reads_icmp_at_20_bytes_whatever_the_ihl(tmp_path):
    """icmpecho.c: ``icmp_h = ip_h + sizeof(struct rte_ipv4_hdr)``: with options, the
    "ICMP header" is the options' first bytes."""
    pkt = Ether(dst=port_mac(0), src="00:1b:21:00:00:01") / \
        IP(src="10.0.0.1", dst="10.0.0.2", options=IPOption(b"\x01" * 4)) / ICMP(type=8) / Raw(bytes(20))
    nops = bytes(pkt)
    fake = nops[:34] + bytes.fromhex("08001234") + nops[38:]      # option bytes that look like an echo request
    got, stats = simulate(tmp_path, {0: [nops, fake]}, forward_mode="icmpecho")
    assert stats["drops"]["not_icmp_echo_request"] == 1
    (reply,) = got[0]
    want = bytearray(fake)
    want[0:12] = fake[6:12] + fake[0:6]
    want[26:34] = fake[30:34] + fake[26:30]
    want[34] = 0                                        # "type" 8 -> 0 in the option bytes
    total = (~0x3412 & 0xFFFF) + 0xFFF7                 # bytes 12 34 as an x86 uint16_t load sees them
    total = (total & 0xFFFF) + (total >> 16)
    value = ~((total & 0xFFFF) + (total >> 16)) & 0xFFFF
    want[36:38] = value.to_bytes(2, "little")
    assert reply == bytes(want)


def test_icmpecho_multicast_header_checksum_zero_is_sent_as_ffff(tmp_path):
    """ipv4_hdr_cksum returns 0xFFFF where the one's complement checksum is 0."""
    reply_header = IP(src="10.0.0.6", dst="10.0.0.5", ttl=1, proto=1, id=0, len=46, chksum=0)
    ip_id = checksum(bytes(reply_header))           # makes the reply header's sum 0xFFFF
    request = Ether(dst=port_mac(0), src="00:1b:21:00:00:01") / IP(src="10.0.0.5", dst="224.0.0.1", ttl=1, id=ip_id) / \
        ICMP(type=8) / Raw(bytes(18))
    got, _ = simulate(tmp_path, {0: [bytes(request)]}, forward_mode="icmpecho")
    (reply,) = [Ether(f) for f in got[0]]
    assert (reply[IP].src, reply[IP].dst, reply[IP].chksum) == ("10.0.0.6", "10.0.0.5", 0xFFFF)
    assert checksum(bytes(reply[IP])[:20]) == 0                  # still verifies: 0xFFFF is -0


# ---------------------------------------------------------------------------------------
# properties on random frames
# ---------------------------------------------------------------------------------------
def _run_frames(frames: list[bytes], mode: str) -> list[bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        got, _ = simulate(Path(tmp), {0: frames}, forward_mode=mode, port_topology="loop")
    return got[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(min_size=0, max_size=120), min_size=1, max_size=30))
def test_macswap_twice_is_identity_and_touches_only_the_macs(frames):
    once = _run_frames(frames, "macswap")
    kept = [f for f in frames if len(f) >= 12]          # shorter frames are dropped as truncated
    assert len(once) == len(kept)
    for before, after in zip(kept, once):
        assert after[:6] == before[6:12] and after[6:12] == before[:6] and after[12:] == before[12:]
    assert _run_frames(once, "macswap") == kept


def test_swap_macs_is_the_seed_patch_shuffle():
    """_mm_shuffle_epi8 with _mm_set_epi8(15, 14, 13, 12, 5, 4, 3, 2, 1, 0, 11, 10, 9, 8, 7, 6):
    byte i of the result is byte mask[i] of the load, mask listed from byte 0 up."""
    mask_high_to_low = [15, 14, 13, 12, 5, 4, 3, 2, 1, 0, 11, 10, 9, 8, 7, 6]
    frames = np.random.default_rng(1).integers(0, 256, (50, 64), dtype=np.uint8)
    shuffled = frames.copy()
    shuffled[:, :16] = frames[:, mask_high_to_low[::-1]]
    swap_macs(frames)
    assert (frames == shuffled).all() and (MACSWAP_SHUFFLE == mask_high_to_low[::-1]).all()


ETHER_TYPES = [0x8100, 0x88A8, 0x0800, 0x86DD, 0x0806, 0x1234]


@st.composite
def layered_frames(draw):
    """Random bytes with random tag stacks and L3/L4 types where 5tswap looks."""
    # a stack of VLAN/QinQ tags, then the EtherType 5tswap dispatches on (a non-tag type
    # earlier in the list would end the stack there, over bytes this sets up as L3)
    types = draw(st.lists(st.sampled_from(ETHER_TYPES[:2]), max_size=3)) + [draw(st.sampled_from(ETHER_TYPES))]
    body = bytearray(draw(st.binary(min_size=120, max_size=160)))
    for i, ether_type in enumerate(types):
        body[12 + 4 * i: 14 + 4 * i] = ether_type.to_bytes(2, "big")
    l3 = 14 + 4 * (len(types) - 1)
    body[l3] = draw(st.sampled_from([0x45, 0x46, 0x4F, 0x65]))    # IHL < 5: see test_5tswap_ihl_below_5
    body[l3 + 9] = body[l3 + 6] = draw(st.sampled_from([6, 17, 1]))
    return bytes(body[: draw(st.integers(0, len(body)))])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(layered_frames(), min_size=1, max_size=20))
def test_5tswap_twice_is_identity(frames):
    """Nothing 5tswap parses is something it swaps, so a second pass undoes the first and
    forwards everything the first one did: the result is the input minus the truncated
    frames, in order."""
    once = _run_frames(frames, "5tswap")
    twice = _run_frames(once, "5tswap")
    assert len(twice) == len(once)
    rest = iter(frames)
    assert all(any(f == g for g in rest) for f in twice)      # an ordered subsequence of the input
    assert all(f in twice for f in frames if len(f) >= 26 + 60 + 4)   # 4 tags, IHL 15, ports: never truncated


def test_5tswap_deep_tag_stacks(tmp_path):
    """Headers past the first 64 bytes (QinQ + IPv6 is already there), past 256 (a stack
    of 70 tags), and frames cut one byte before and right at the last byte 5tswap uses."""
    rng = random.Random(5)
    frames = []
    for tags in (2, 12, 70):
        for l3 in (IP(src=_v4(rng), dst=_v4(rng)), IPv6(src=_v6(rng), dst=_v6(rng))):
            stack = Ether(dst=_mac(rng), src=_mac(rng))
            for i in range(tags):
                stack = stack / (Dot1AD(vlan=i) if i % 2 else Dot1Q(vlan=i))
            frames.append(bytes(stack / l3 / _l4(rng) / Raw(bytes(30))))
    inputs = {0: []}
    for frame in frames:
        need = oracle_5tswap(frame, 0)[2]
        inputs[0] += [(frame, len(frame)), (frame, need - 1), (frame, need)]
    got, stats = simulate(tmp_path, {0: [f[:cut] for f, cut in inputs[0]]}, forward_mode="5tswap",
                          port_topology="loop")
    want, drops = expected_outputs("5tswap", inputs, {0: 0})
    assert got[0] == want[0] and drops == {"truncated": len(frames)}


def test_5tswap_ihl_below_5():
    """5tswap.h takes the L4 header at IHL x 4 bytes even when IHL < 5: with IHL 0 the
    "ports" are the first 4 bytes of the IPv4 header, swapped after the addresses were."""
    pkt = bytearray(bytes(Ether(dst="02:00:00:00:00:01", src="02:00:00:00:00:02") /
                          IP(src="10.0.0.1", dst="10.0.0.2") / UDP(sport=1, dport=2) / Raw(bytes(18))))
    pkt[14] = 0x40                                            # IHL 0
    (got,) = _run_frames([bytes(pkt)], "5tswap")
    want = bytearray(pkt)
    want[0:12] = pkt[6:12] + pkt[0:6]
    want[26:34] = pkt[30:34] + pkt[26:30]
    want[14:18] = pkt[16:18] + pkt[14:16]
    assert got == bytes(want)
    pkt[14] = 0x43                                            # IHL 3: the "ports" are the swapped source address
    (got,) = _run_frames([bytes(pkt)], "5tswap")
    want = bytearray(pkt)
    want[0:12] = pkt[6:12] + pkt[0:6]
    want[26:34] = pkt[30:34] + pkt[26:30]
    want[26:30] = want[28:30] + want[26:28]
    assert got == bytes(want)


# ---------------------------------------------------------------------------------------
# port topology, burst, conservation, CLI
# ---------------------------------------------------------------------------------------
def _marked(port: int, n: int) -> list[bytes]:
    return [bytes(Ether(dst=port_mac(port), src="00:00:00:00:00:01", type=0x88B5) / Raw(bytes([port, i]) * 23))
            for i in range(n)]


@pytest.mark.parametrize("topology,mapping", [
    ("paired", {0: 2, 2: 0, 3: 5, 5: 3, 6: 6}),      # list indices 0<->1, 2<->3, the odd last one to itself
    ("chained", {0: 2, 2: 3, 3: 5, 5: 6, 6: 0}),
    ("loop", {0: 0, 2: 2, 3: 3, 5: 5, 6: 6}),
])
@pytest.mark.parametrize("mode", ["io", "icmpecho"])
def test_port_topology_with_portmask_gaps(tmp_path, topology, mapping, mode):
    inputs = {p: _marked(p, 5) for p in (0, 2, 3, 5)}          # port 6: enabled, no input
    got, stats = simulate(tmp_path, inputs, port_topology=topology, portmask=0b1101101, forward_mode=mode)
    assert sorted(got) == [0, 2, 3, 5, 6]
    if mode == "io":
        for rx, frames in inputs.items():
            assert got[mapping[rx]] == frames
        assert got[mapping[6]] == []                            # fed by the stream of port 6, which has no input
        assert stats["options"]["streams"] == {str(k): v for k, v in mapping.items()}
    else:                                                       # icmpecho: every reply on its RX port
        assert stats["options"]["streams"] == {str(p): p for p in mapping}
    assert ("pair with itself" in " ".join(stats["warnings"])) == (topology == "paired" and mode == "io")


def test_burst_changes_no_output(tmp_path):
    """Every topology maps RX ports one-to-one onto TX ports, so no TX port interleaves
    two streams: the polling order (--burst) cannot show in any output."""
    inputs = {p: [f[:cut] for f, cut in ORACLE_INPUTS[p]] for p in range(3)}
    runs = [simulate(tmp_path / str(burst), inputs, burst=burst, port_topology="chained",
                     forward_mode="5tswap")[0] for burst in (1, 7, 32, 512)]
    assert all(r == runs[0] for r in runs[1:])


@pytest.mark.parametrize("mode", FORWARD_MODES)
def test_conservation_on_mixed_traffic(tmp_path, mode):
    inputs = {p: mixed_frames(3, p, 200) for p in range(3)}
    got, stats = simulate(tmp_path, inputs, forward_mode=mode)
    totals = stats["totals"]
    assert totals["rx"] == sum(map(len, inputs.values())) == totals["tx"] + totals["dropped"]
    assert totals["dropped"] == sum(stats["drops"].values())
    for port, entry in stats["ports"].items():
        assert entry["rx"] == entry["tx"] + entry["dropped"] == len(inputs[int(port)])
        assert entry["out"] == len(got[int(port)])
    if mode in ("io", "mac", "macswap"):
        assert totals["dropped"] == sum(len(f) < (12 if mode != "io" else 0) for fr in inputs.values() for f in fr)


def test_input_cut_short_is_reported_and_the_rest_forwarded(tmp_path):
    indir = tmp_path / "in"
    indir.mkdir()
    write_pcap(indir / "port0.pcap", _marked(0, 3))
    with open(indir / "port0.pcap", "r+b") as f:
        f.truncate(f.seek(0, 2) - 5)
    stats = run_testpmd(Options(inputs=find_inputs([str(indir)]), outdir=tmp_path / "out", forward_mode="io",
                                port_topology="loop"))
    assert stats["totals"]["tx"] == 2 and read_pcap_frames(tmp_path / "out" / "port0.pcap") == _marked(0, 2)
    assert any("cut short" in w for w in stats["warnings"])


def test_cli_json_and_errors(tmp_path):
    indir = tmp_path / "in"
    indir.mkdir()
    write_pcap(indir / "port0.pcap", _marked(0, 3))
    write_pcap(indir / "port1.pcap", _marked(1, 2))
    result = run_cli("testpmd", indir, "-o", tmp_path / "out", "--forward-mode", "macswap", "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)
    assert stats["options"]["forward_mode"] == "macswap" and stats["totals"]["tx"] == 5
    assert json.loads((tmp_path / "out" / "stats.json").read_text())["totals"] == stats["totals"]
    for args, message in [(["--forward-mode", "flowgen"], "flowgen"),
                          (["--burst", "513"], "--burst 513"),
                          (["--eth-peer", "1,zz"], "--eth-peer"),
                          (["-p", "0x2"], "not in portmask")]:
        result = run_cli("testpmd", indir, "-o", tmp_path / "bad", *args)
        assert result.exit_code == 2 and message in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("mode", ["io", "macswap"])
def test_frames_over_2048_bytes_are_dropped_on_receive(tmp_path, mode):
    """testpmd's default mbufs hold 2048 data bytes (DEFAULT_MBUF_DATA_SIZE) and it
    enables RX scatter only with --enable-scatter: net_pcap drops longer frames, as for
    dpdk-l3fwd."""
    frames = [f + bytes(size - len(f)) for f, size in zip(_marked(0, 6), (60, 2047, 2048, 2049, 9000, 100))]
    got, stats = simulate(tmp_path, {0: frames}, forward_mode=mode, port_topology="loop")
    assert [len(f) for f in got[0]] == [60, 2047, 2048, 100]
    assert stats["drops"]["oversize"] == 2 and stats["totals"]["rx"] == 6
