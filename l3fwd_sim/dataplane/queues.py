"""RX queues and lcores: l3fwd's ``--config "(port,queue,lcore),..."`` (lcores_and_queues.md).

* Each tuple gives RX queue ``queue`` of ``port`` to ``lcore``; an lcore polls its
  queues in the order their tuples appear, one ``rx_burst`` each, round after round.
* A port's queue ids must appear in order 0, 1, 2, … (``get_port_n_rx_queues``); its
  number of RX queues is its number of tuples.
* The lcores of a run are exactly those named. Every enabled port gets one TX queue per
  lcore, numbered in ascending lcore id; an lcore sends only on its own queue.

Without ``--config`` one lcore (0) polls queue 0 of every enabled port with an input, in
ascending port order — what l3fwd-sim has always modelled.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import SimError
from .ports import MAX_PORTS

MAX_LCORE_PARAMS = 1024          # tuples
MAX_QUEUES_PER_PORT = 1024       # RTE_MAX_QUEUES_PER_PORT: what the parser takes
MAX_RX_QUEUE_PER_PORT = 128      # what check_lcore_params takes
MAX_RX_QUEUE_PER_LCORE = 16
MAX_LCORE = 128                  # RTE_MAX_LCORE
_NUMBER = re.compile(r"\s*[+]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")


@dataclass(frozen=True)
class RxQueue:
    """One ``(port, queue, lcore)`` tuple."""
    port: int
    queue: int
    lcore: int


def _strtoul(text: str, limit: int) -> int | None:
    """``strtoul(text, &end, 0)`` as ``parse_config`` checks it: some digits (anything
    after them is ignored, as in C), value at most ``limit``; else None."""
    match = _NUMBER.match(text)
    if not match:
        return None
    digits = match.group(1)
    value = int(digits, 8) if digits.startswith("0") and len(digits) > 1 and digits[1] not in "xX" else int(digits, 0)
    return value if value <= limit else None


def parse_config(text: str) -> list[RxQueue]:
    """``--config`` as l3fwd's ``parse_config`` reads it; "Invalid config" otherwise."""
    tuples = []
    rest = text
    while (start := rest.find("(")) >= 0:
        end = rest.find(")", start)
        if end < 0 or end - start - 1 >= 256:
            raise SimError(f"--config {text!r}: Invalid config (unbalanced or too long '(...)')")
        fields = rest[start + 1:end].split(",")
        values = [_strtoul(f, limit) for f, limit in zip(fields, (MAX_PORTS, MAX_QUEUES_PER_PORT, MAX_LCORE))]
        if len(fields) != 3 or None in values:
            raise SimError(f"--config {text!r}: Invalid config (each tuple is (port,queue,lcore): numbers "
                           f"up to {MAX_PORTS}, {MAX_QUEUES_PER_PORT} and {MAX_LCORE}; got "
                           f"{rest[start:end + 1]!r})")
        if len(tuples) >= MAX_LCORE_PARAMS:
            raise SimError(f"--config: exceeded max number of lcore params: {MAX_LCORE_PARAMS}")
        tuples.append(RxQueue(*values))
        rest = rest[end + 1:]
    if not tuples:
        raise SimError(f"--config {text!r}: Invalid config (no (port,queue,lcore) tuple)")
    return tuples


@dataclass
class Lcores:
    """The lcores of a run: per lcore its RX queues in polling order and its TX queue id."""
    rx: dict[int, list[RxQueue]]       # lcore id -> its queues, in --config order
    queues: dict[int, int]             # port -> number of RX queues

    @property
    def ids(self) -> list[int]:
        return sorted(self.rx)

    def tx_queue(self, lcore: int) -> int:
        """The TX queue ``lcore`` sends on, on every port: its rank among the lcores."""
        return self.ids.index(lcore)


def lcores_of(config: list[RxQueue], portmask: int) -> Lcores:
    """``check_lcore_params``, ``check_port_config``, ``get_port_n_rx_queues`` and
    ``init_lcore_rx_queues`` over ``config``: l3fwd's one-line errors, or the lcores."""
    queues: dict[int, int] = {}
    rx: dict[int, list[RxQueue]] = {}
    for q in config:
        if q.queue >= MAX_RX_QUEUE_PER_PORT:
            raise SimError(f"--config: invalid queue number: {q.queue}")
        if not portmask >> q.port & 1:
            raise SimError(f"--config: port {q.port} is not enabled in port mask 0x{portmask:x}")
    for q in config:
        if q.queue != queues.get(q.port, 0):
            raise SimError(f"--config: queue ids of the port {q.port} must be in sequence and must start with 0 "
                           f"(queue {q.queue} where {queues.get(q.port, 0)} was due)")
        queues[q.port] = q.queue + 1
        if len(rx.setdefault(q.lcore, [])) >= MAX_RX_QUEUE_PER_LCORE:
            raise SimError(f"--config: error: too many queues ({len(rx[q.lcore]) + 1}) for lcore: {q.lcore}")
        rx[q.lcore].append(q)
    return Lcores(rx, queues)


def default_config(ports: list[int]) -> list[RxQueue]:
    """One lcore polling queue 0 of each of ``ports``, ascending."""
    return [RxQueue(port, 0, 0) for port in sorted(ports)]
