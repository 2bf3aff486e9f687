"""Random l3fwd rule files for the tests: LPM routes biased to the addresses the mixed
traffic uses (frames.py), exact-match flows and their near misses, ACL rule sets."""
from __future__ import annotations

import ipaddress
import random


def random_routes(rng: random.Random, n4: int = 200, n6: int = 100):
    """Random LPM rules biased to the addresses the mixed traffic uses."""
    v4, v6 = [], []
    for _ in range(n4):
        depth = rng.choice([8, 12, 16, 20, 24, 25, 28, 30, 32])
        base = rng.choice([0xC6120000, 0x0A000000, 0xCB007100, rng.getrandbits(32)])
        addr = (base | rng.getrandbits(16)) & (0xFFFFFFFF << (32 - depth))
        v4.append((str(ipaddress.IPv4Address(addr)), depth, rng.randrange(8)))
    for _ in range(n6):
        depth = rng.choice([16, 32, 48, 56, 64, 72, 96, 127, 128])
        base = rng.choice([0x20010200 << 96, rng.getrandbits(128)])
        addr = (base | rng.getrandbits(72)) & (((1 << 128) - 1) << (128 - depth))
        v6.append((str(ipaddress.IPv6Address(addr)), depth, rng.randrange(8)))
    return v4, v6


def write_rules(path, rules):
    path.write_text("".join(f"R{prefix}/{depth} {port}\n" for prefix, depth, port in rules))
    return path


EM_PROTOS = (6, 17)


def random_flows(rng: random.Random, family: int, n: int) -> list[tuple]:
    bits = 32 if family == 4 else 128
    return [(rng.getrandbits(bits), rng.getrandbits(bits), rng.randrange(65536), rng.randrange(65536),
             rng.choice(EM_PROTOS), rng.randrange(8)) for _ in range(n)]


def near_misses(flow: tuple, rng: random.Random, family: int) -> list[tuple]:
    """The flow with exactly one field off."""
    dst, src, dport, sport, proto, port = flow
    bit = rng.randrange(32 if family == 4 else 128)
    return [(dst ^ 1 << bit, src, dport, sport, proto, port), (dst, src ^ 1 << bit, dport, sport, proto, port),
            (dst, src, dport ^ 1, sport, proto, port), (dst, src, dport, sport ^ 0x100, proto, port),
            (dst, src, dport, sport, 23 - proto, port), (src, dst, sport, dport, proto, port)]


def write_em_rules(path, flows, family):
    fmt = ipaddress.IPv4Address if family == 4 else ipaddress.IPv6Address
    path.write_text("".join(f"R{fmt(d)} {fmt(s)} {dp} {sp} {pr:#x} {port}\n" for d, s, dp, sp, pr, port in flows))
    return path


V4_NETS = ["198.18.0.0/16", "198.18.1.0/24", "198.18.2.7/32", "172.16.0.0/12", "172.16.5.0/24", "10.0.0.0/8",
           "0.0.0.0/0", "198.18.0.0/22"]
V6_NETS = ["2001:200::/32", "2001:200:0:1::/64", "2001:db8:ffff::/48", "::/0", "2001:200:0:2::5/128",
           "2001:200::/56"]
PORT_RANGES = ["0 : 65535", "0 : 1023", "1024 : 65535", "53 : 53", "9 : 9", "2048 : 2048", "0 : 0", "80 : 443"]
ACL_PROTOS = ["0/0", "6/0xff", "17/255", "6/0xfe", "1/0xff", "58/0xff", "16/0xf0", "0/0x80", "0x11/0xfb", "0/0xff"]


def _address(net: str, family: int) -> str:
    """``net`` written as l3fwd's ACL grammar wants it (IPv6: eight groups, no ``::``)."""
    network = ipaddress.ip_network(net)
    if family == 4:
        return str(network)
    return network.network_address.exploded + f"/{network.prefixlen}"


def write_acl_rules(path, family: int, rng: random.Random, n: int, ports=(0, 1, 2, 3)):
    nets = V4_NETS if family == 4 else V6_NETS
    lines = []
    for _ in range(n):
        fields = [_address(rng.choice(nets), family), _address(rng.choice(nets), family),
                  rng.choice(PORT_RANGES), rng.choice(PORT_RANGES), rng.choice(ACL_PROTOS)]
        lines.append(("@" + " ".join(fields)) if rng.random() < 0.3 else ("R" + " ".join(fields) + f" {rng.choice(ports)}"))
    lines.append("R" + " ".join([_address(nets[0], family)] * 2 + ["0 : 65535", "0 : 65535", "0/0", str(ports[0])]))
    path.write_text("# random rules\n" + "\n".join(lines) + "\n")
    return path
