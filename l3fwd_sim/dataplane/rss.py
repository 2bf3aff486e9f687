"""RSS: which RX queue of a port a packet lands in, as a NIC would place it
(lcores_and_queues.md, "RSS"). net_pcap itself has no RSS (each queue reads its own
file); this predicts what a real NIC does with the port's traffic.

* Hash: Toeplitz over source address, destination address and, where the fields
  include L4 (l3fwd's ACL mode adds ``RTE_ETH_RSS_UDP | TCP | SCTP`` to ``RTE_ETH_RSS_IP``),
  source port, destination port — all in network byte order, the byte stream DPDK's
  ``rte_softrss`` hashes. Fragments and packets without TCP/UDP/SCTP right after the IP
  header hash the addresses only; anything that is not IPv4 or IPv6 by its EtherType
  (ARP, VLAN-tagged, …), or too short for its fields, goes to queue 0.
* Queue: ``reta[hash % reta_size]``, the redirection table filled round-robin over the
  queues (``reta[i] = i % queues``), as PMDs program it by default.
"""
from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path

import numpy as np

from ..capture.pcap import PcapReader
from ..capture.writers import open_writer
from ..capture.records import HEAD_BYTES
from ..errors import SimError

DEFAULT_KEY = bytes.fromhex("6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa")
RETA_SIZES = (64, 128, 256, 512)
_L4 = np.zeros(256, bool)
_L4[[6, 17, 132]] = True                          # TCP, UDP, SCTP


def parse_rss_key(text: str) -> bytes:
    """``--rss-key``: hex digits (an optional 0x, colons allowed), 40 bytes or more."""
    digits = text.removeprefix("0x").replace(":", "")
    try:
        key = bytes.fromhex(digits)
    except ValueError:
        raise SimError(f"--rss-key {text!r}: not hex") from None
    if len(key) < 40:
        raise SimError(f"--rss-key: {len(key)} bytes; the Toeplitz hash of IPv6 addresses and ports needs 40")
    return key


@functools.lru_cache(maxsize=16)
def toeplitz_tables(key: bytes, length: int) -> np.ndarray:
    """(length, 256) uint32: the hash contribution of byte value v at stream position j
    (the XOR of the key's 32-bit windows at the set bits of v)."""
    if len(key) < length + 4:
        raise SimError(f"--rss-key: {len(key)} bytes; hashing {length} bytes needs at least {length + 4}")
    key_int, key_bits = int.from_bytes(key, "big"), 8 * len(key)
    windows = [(key_int >> (key_bits - 32 - i)) & 0xFFFFFFFF for i in range(8 * length)]
    tables = np.zeros((length, 256), np.uint32)
    values = np.arange(256)
    for j in range(length):
        for k in range(8):                        # bit 7 of a byte comes first in the stream
            tables[j, (values >> (7 - k)) & 1 == 1] ^= np.uint32(windows[8 * j + k])
    tables.flags.writeable = False           # cached: shared by every call with this key and length
    return tables


def toeplitz(stream: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """The Toeplitz hash of each row of ``stream`` ((n, length) bytes)."""
    result = np.zeros(len(stream), np.uint32)
    for j in range(stream.shape[1]):
        result ^= tables[j, stream[:, j]]
    return result


def rss_queues(heads: np.ndarray, caplen: np.ndarray, queues: int, l4: bool, key: bytes,
               reta_size: int = 128) -> np.ndarray:
    """The RX queue of each frame (``heads``: each frame's first bytes, ``caplen`` its length)."""
    queue = np.zeros(len(heads), np.int64)
    ether = heads[:, 12:14].view(">u2")[:, 0]
    reta = np.arange(reta_size) % queues
    for ether_type, addresses, l3, proto_at in ((0x0800, slice(26, 34), 14, 23), (0x86DD, slice(22, 54), 14, 20)):
        family = ether == ether_type
        if ether_type == 0x0800:
            ihl = (heads[:, l3] & 0x0F).astype(np.int64) * 4
            fragment = (heads[:, l3 + 6:l3 + 8].view(">u2")[:, 0] & 0x3FFF) != 0     # MF or an offset
            ports_at = l3 + ihl
            with_l4 = ~fragment & (ihl >= 20)
        else:
            ports_at = np.full(len(heads), 54)
            with_l4 = np.ones(len(heads), bool)
        with_l4 &= _L4[heads[:, proto_at]] & l4        # l3fwd hashes the L4 ports in ACL mode only
        with_l4 &= ports_at + 4 <= np.minimum(caplen, heads.shape[1])
        family &= caplen >= addresses.stop
        for use_l4 in (False, True):
            rows = np.flatnonzero(family & (with_l4 == use_l4))
            if not len(rows):
                continue
            stream = heads[rows, addresses]
            if use_l4:
                at = ports_at[rows, None] + np.arange(4)
                stream = np.concatenate([stream, np.take_along_axis(heads[rows], at, axis=1)], axis=1)
            hashes = toeplitz(stream, toeplitz_tables(key, stream.shape[1]))
            queue[rows] = reta[hashes % reta_size]
    return queue


def split_by_rss(reader: PcapReader, queues: int, l4: bool, key: bytes,
                 reta_size: int) -> tuple[Path, list[Path], list[np.ndarray]]:
    """Write each RX queue's share of the capture ``reader`` reads to a file of its own,
    in a temporary directory (the caller removes it): (directory, one file per queue, per
    queue the record number in the capture of each of its records). Closes ``reader``."""
    directory = Path(tempfile.mkdtemp(prefix="l3fwd-sim-rss-"))
    # in the capture's format: a pcapng share keeps time stamps past 2106
    files = [directory / f"q{q}.{reader.file_format}" for q in range(queues)]
    writers = []
    indices: list[list[np.ndarray]] = [[] for _ in range(queues)]
    try:
        while len(batch := reader.read(65536)):
            if not writers:
                writers = [open_writer(reader.file_format, f, batch.nanosecond, f.stem) for f in files]
            queue = rss_queues(batch.heads, batch.caplen, queues, l4, key, reta_size)
            caplen, wirelen, ts_ns = batch.caplen, batch.wirelen, batch.ts_ns
            frames = memoryview(batch.block)
            for q, writer in enumerate(writers):
                rows = np.flatnonzero(queue == q)
                indices[q].append(batch.first + rows)
                long = rows[caplen[rows] > HEAD_BYTES]
                tails = [frames[o + HEAD_BYTES:o + c] for o, c in zip(batch.offsets[long].tolist(),
                                                                      caplen[long].tolist())]
                writer.write(batch.heads[rows], caplen[rows], wirelen[rows], ts_ns[rows], tails)
        if not writers:
            writers = [open_writer(reader.file_format, f, reader.nanosecond, f.stem) for f in files]
        for writer in writers:
            writer.commit()
    except BaseException:
        for writer in writers:
            writer.abort()
        shutil.rmtree(directory, ignore_errors=True)
        raise
    finally:
        reader.close()
    return directory, files, [np.concatenate(parts) if parts else np.zeros(0, np.int64) for parts in indices]
