"""One test per row of ../shared/reference/dpdk/path_differences.md that applies to
LPM: the two pipelines differ exactly where DPDK's simple and multi paths differ."""
from __future__ import annotations


import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1Q, Ether
from forwarding import IN_PORT, both

from l3fwd_sim import SimError

TO_PORT1 = "198.18.1.7"


def udp4(**ip):
    return bytes(Ether(src="00:11:22:33:44:55", dst="66:77:88:99:aa:bb") / IP(**{"dst": TO_PORT1, **ip}) / UDP())


@pytest.mark.parametrize("frame", [
    bytes(Ether() / ARP()),
    bytes(Ether() / Dot1Q(vlan=5) / IP(dst=TO_PORT1) / UDP()),
    bytes(Ether(type=0x88B5) / (b"\x00" * 50)),
], ids=["arp", "vlan", "unknown-ethertype"])
def test_d1_non_ip_dropped_by_simple_sent_back_by_multi(tmp_path, frame):
    result = both(tmp_path, [frame])
    out, stats = result["simple"]
    assert all(not frames for frames in out.values())
    assert stats["drops"]["unknown_ptype"] == 1
    out, stats = result["multi"]
    expected = bytes.fromhex("020000000002") + b"\x02pcap\x02" + frame[12:]
    assert out[IN_PORT] == [expected]          # back out of the input port, only MACs rewritten


def test_d5_bad_checksum_forwarded_by_both(tmp_path):
    """net_pcap sets no checksum flags, so neither path verifies the header checksum."""
    frame = bytearray(udp4(ttl=9))
    frame[24] ^= 0x55
    result = both(tmp_path, [bytes(frame)])
    assert result["simple"][0][1] == result["multi"][0][1] != []


def test_d6_frame_shorter_than_20_bytes(tmp_path):
    frame = udp4()[:18]
    result = both(tmp_path, [frame])
    assert result["simple"][1]["drops"]["rfc1812_invalid"] == 1   # is_valid_ipv4_pkt: pkt_len < 20
    assert result["multi"][1]["drops"]["truncated"] == 1          # DPDK would read past the frame


def test_d7_route_to_disabled_port_is_never_installed(tmp_path):
    """l3fwd skips such routes at setup, so the next-less-specific route answers in both
    pipelines (and the simple path's port-mask re-check never fires)."""
    v4, v6 = tmp_path / "v4.cfg", tmp_path / "v6.cfg"
    v4.write_text("R198.18.0.0/16 3\nR198.18.1.0/24 9\n")
    v6.write_text("R2001:db8::/32 1\n")
    result = both(tmp_path, [udp4()], rule_ipv4=v4, rule_ipv6=v6)
    for pipeline in ("simple", "multi"):
        out = result[pipeline][0]
        assert len(out[3]) == 1 and not out[1], pipeline


def test_d8_next_hops_above_255_are_rejected_by_the_rule_grammar(tmp_path):
    v4, v6 = tmp_path / "v4.cfg", tmp_path / "v6.cfg"
    v4.write_text("R198.18.0.0/16 40000\n")
    v6.write_text("R2001:db8::/32 1\n")
    with pytest.raises(SimError, match=r"v4.cfg:1: port"):
        both(tmp_path, [udp4()], rule_ipv4=v4, rule_ipv6=v6)


@pytest.mark.parametrize("ip", [dict(version=5), dict(ihl=4), dict(len=19)], ids=["version", "ihl", "totlen"])
def test_n1_same_rfc1812_drop_set(tmp_path, ip):
    result = both(tmp_path, [udp4(**ip)])
    for pipeline in ("simple", "multi"):
        drops = {k: v for k, v in result[pipeline][1]["drops"].items() if v}
        assert drops == {"rfc1812_invalid": 1}, pipeline


@pytest.mark.parametrize("ttl", [0, 1, 2, 64, 255])
def test_n2_same_ttl_and_checksum_update(tmp_path, ttl):
    frame = udp4(ttl=ttl)
    result = both(tmp_path, [frame])
    sent = result["simple"][0][1]
    assert sent == result["multi"][0][1] and len(sent) == 1
    assert sent[0][22] == (ttl - 1) & 0xFF                       # wraps, never expires
    checksum = int.from_bytes(frame[24:26], "little")
    assert sent[0][24:26] == ((checksum + 1) & 0xFFFF).to_bytes(2, "little")


def test_ipv6_hop_limit_untouched(tmp_path):
    frame = bytes(Ether() / IPv6(dst="2001:200:0:1::5", hlim=1) / UDP())
    result = both(tmp_path, [frame])
    for pipeline in ("simple", "multi"):
        (sent,) = result[pipeline][0][1]
        assert sent[12:] == frame[12:], pipeline
