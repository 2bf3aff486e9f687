"""l3fwd's TX buffering, modelled for its counters.

Per-port output order never depends on it (a direct send happens only when the port's
buffer is empty, and a flush empties it in order; design-notes §1), so the writers take
packets in processing order and this model only counts what DPDK would do:
``rte_eth_tx_burst`` calls, packets sent directly vs through the per-port buffer.

* simple path, ``send_single_packet``: append to the port's buffer; when it holds
  ``rx_burst`` packets (v25.11+), send them.
* multi path, ``send_packetsx4`` per run of same-port packets: a run of at least
  ``tx_burst`` packets goes out directly if the buffer is empty; otherwise it is
  appended, and a buffer that becomes exactly full (``MAX_PKT_BURST`` = 512) is sent.
* drain: every non-empty buffer is sent (l3fwd does it every ~100 µs; here at the end).
"""
from __future__ import annotations

import numpy as np

from .. import compiled
from . import twins

MAX_PKT_BURST = 512


class TxModel:
    """The per-port TX buffers of one lcore, counted: for each port its buffer's length
    and the ``tx_bursts`` (``rte_eth_tx_burst`` calls), ``direct`` and ``buffered``
    packets and ``runs`` (``send_packetsx4`` calls) so far. ``tx.c`` twins
    :meth:`send_runs`."""

    COUNTERS = ("len", "tx_bursts", "direct", "buffered", "runs")

    def __init__(self, ports: list[int], rx_burst: int, tx_burst: int):
        self.ports = list(ports)
        self.rx_burst = rx_burst
        self.tx_burst = tx_burst
        self._counts = np.zeros((len(self.COUNTERS), max(self.ports, default=-1) + 1), np.int64)
        self._len, self._tx_bursts, self._direct, self._buffered, self._runs = self._counts

    def _per_port(self, counter: np.ndarray) -> dict[int, int]:
        return {port: int(counter[port]) for port in self.ports}

    @property
    def tx_bursts(self) -> dict[int, int]:
        return self._per_port(self._tx_bursts)

    @property
    def direct(self) -> dict[int, int]:
        return self._per_port(self._direct)

    @property
    def buffered(self) -> dict[int, int]:
        return self._per_port(self._buffered)

    @property
    def runs(self) -> dict[int, int]:
        return self._per_port(self._runs)

    def send_single(self, counts: dict[int, int]) -> None:
        """``send_single_packet`` for ``counts[port]`` consecutive packets per port."""
        for port, n in counts.items():
            total = self._len[port] + n
            self._tx_bursts[port] += total // self.rx_burst
            self._len[port] = total % self.rx_burst
            self._buffered[port] += n

    def send_runs(self, run_ports: np.ndarray, run_lens: np.ndarray, single: np.ndarray | None = None) -> None:
        """``send_packetsx4`` for each run, in order — or, where ``single`` is set,
        ``send_single_packet`` for each of the run's packets (ACL mode's bursts with drops)."""
        if not len(run_ports):
            return
        if compiled.enabled():
            twins.send_runs((*self._counts, self.rx_burst, self.tx_burst), np.ascontiguousarray(run_ports, np.int64),
                        np.ascontiguousarray(run_lens, np.int64),
                        None if single is None else np.ascontiguousarray(single, np.uint8))
            return
        if single is not None and single.any():
            starts = np.flatnonzero(np.diff(single.astype(np.int8), prepend=-1))
            for start, end in zip(starts.tolist(), np.append(starts[1:], len(single)).tolist()):
                if single[start]:
                    counts = np.bincount(run_ports[start:end], run_lens[start:end]).astype(np.int64)
                    self.send_single({port: int(n) for port, n in enumerate(counts.tolist()) if n})
                else:
                    self.send_runs(run_ports[start:end], run_lens[start:end])
            return
        order = np.argsort(run_ports.astype(np.int16), kind="stable")      # radix: runs per port, in order
        bounds = np.flatnonzero(np.diff(run_ports[order], prepend=-1, append=-1))
        for start, end in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            self._send_port_runs(int(run_ports[order[start]]), run_lens[order[start:end]])

    def _send_port_runs(self, port: int, lens: np.ndarray) -> None:
        """The runs of one port, in phases rather than one by one. While the buffer is
        empty, runs of at least ``tx_burst`` go out directly; the first shorter run is
        buffered, and from then on every run is appended — the buffer holds the running
        sum modulo 512 and is sent at each multiple — until that sum is a multiple of
        512 again (empty buffer). Prefix sums and, per residue modulo 512, the sorted run
        indices find each phase's end with one binary search."""
        cap = MAX_PKT_BURST
        total = np.cumsum(lens)
        residue = (total % cap).astype(np.int16)
        by_residue = np.argsort(residue, kind="stable")                    # radix sort
        group = np.searchsorted(residue[by_residue], np.arange(cap + 1)).tolist()
        small = np.flatnonzero(lens < self.tx_burst)
        n = len(total)

        def before(i: int) -> int:
            return int(total[i - 1]) if i else 0

        length, bursts, direct, i = int(self._len[port]), 0, 0, 0
        while i < n:
            if length == 0:                          # direct sends up to the next short run
                s = int(np.searchsorted(small, i))
                nxt = int(small[s]) if s < len(small) else n
                bursts += nxt - i
                direct += before(nxt) - before(i)
                i = nxt
                if i == n:
                    break
            base = before(i) - length                # buffer after run j: (total[j] - base) % cap
            lo, hi = group[base % cap], group[base % cap + 1]
            pos = lo + int(np.searchsorted(by_residue[lo:hi], i))
            end = int(by_residue[pos]) if pos < hi else n - 1
            bursts += (int(total[end]) - base) // cap
            length = (int(total[end]) - base) % cap
            i = end + 1
        self._len[port] = length
        self._runs[port] += n
        self._tx_bursts[port] += bursts
        self._direct[port] += direct
        self._buffered[port] += int(total[-1]) - direct

    @classmethod
    def total(cls, models: list["TxModel"]) -> "TxModel":
        """The counters of several lcores' TX buffers added up per port."""
        total = cls(models[0].ports, models[0].rx_burst, models[0].tx_burst)
        for model in models:
            total._counts += model._counts
        return total

    def drain(self) -> None:
        """Send every buffer that holds packets."""
        self._tx_bursts += self._len > 0
        self._len[:] = 0


def same_port_runs(dest: np.ndarray, burst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximal runs of consecutive packets of one rx burst with the same destination —
    what ``port_groupx4`` and ``GROUP_PORT_STEP`` compute (l3fwd_forwarding_semantics
    §8). Runs of dropped packets (negative ``dest``) are left out: they are freed."""
    if not len(dest):
        return dest[:0], dest[:0]
    if compiled.enabled():
        run_ports, run_lens = np.empty(len(dest), np.int64), np.empty(len(dest), np.int64)
        runs = twins.same_port_runs(np.ascontiguousarray(dest, np.int64), np.ascontiguousarray(burst, np.int64),
                                run_ports, run_lens)
        return run_ports[:runs], run_lens[:runs]
    change = np.empty(len(dest), bool)
    change[0] = True
    np.not_equal(dest[1:], dest[:-1], out=change[1:])
    change[1:] |= burst[1:] != burst[:-1]
    starts = np.flatnonzero(change)
    lens = np.diff(starts, append=len(dest))
    ports = dest[starts]
    keep = ports >= 0
    return ports[keep], lens[keep]


# An ``account(tx, burst, dest, reason)`` function tells the TX model what the path sent:
# each packet's rx burst id, its TX port (-1: dropped) and its drop reason code.

def account_multi(tx, burst: np.ndarray, dest: np.ndarray, reason=None) -> None:
    """The multi path: one ``send_packetsx4`` per same-port run of each rx burst."""
    tx.send_runs(*same_port_runs(dest, burst))


def account_simple(tx, burst: np.ndarray, dest: np.ndarray, reason=None) -> None:
    """The simple path: one ``send_single_packet`` per forwarded packet."""
    counts = np.bincount(dest[dest >= 0])
    tx.send_single({port: int(n) for port, n in enumerate(counts.tolist()) if n})


class TxLog:
    """Stands in for :class:`TxModel` where a range of rounds is forwarded apart (a
    ``--jobs`` worker): records the calls, to be replayed in order into the one model."""

    def __init__(self):
        self.calls: list[tuple] = []

    def send_single(self, counts: dict[int, int]) -> None:
        self.calls.append((TxModel.send_single, counts))

    def send_runs(self, run_ports: np.ndarray, run_lens: np.ndarray, single: np.ndarray | None = None) -> None:
        self.calls.append((TxModel.send_runs, run_ports, run_lens, single))

    def replay(self, model: TxModel) -> None:
        for method, *args in self.calls:
            method(model, *args)
