"""RX queues and lcores: l3fwd's ``--config "(port,queue,lcore),..."`` (lcores_and_queues.md).

* Each tuple gives RX queue ``queue`` of ``port`` to ``lcore``; an lcore polls its
  queues in the order their tuples appear, one ``rx_burst`` each, round after round.
* A port's queue ids must appear in order 0, 1, 2, … (``get_port_n_rx_queues``); its
  number of RX queues is its number of tuples.
* Every enabled port gets one TX queue per EAL lcore, numbered in ascending lcore id; an
  lcore sends only on its own queue. ``run`` has no EAL: its lcores are exactly those
  named; ``dpdk-l3fwd`` takes them from ``-l``/``--lcores``/``-c`` (eal/args.py).

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
    rx: dict[int, list[RxQueue]]       # lcore id -> its queues, in --config order ([] for an idle lcore)
    queues: dict[int, int]             # port -> number of RX queues

    @property
    def ids(self) -> list[int]:
        return sorted(self.rx)

    def tx_queue(self, lcore: int) -> int:
        """The TX queue ``lcore`` sends on, on every port: its rank among the enabled lcores."""
        return self.ids.index(lcore)


def lcores_of(config: list[RxQueue], portmask: int, enabled: list[int] | None = None,
              ports: int | None = None) -> Lcores:
    """``check_lcore_params``, ``init_lcore_rx_queues``, ``check_port_config`` and
    ``get_port_n_rx_queues`` over ``config``, in l3fwd's order: l3fwd's one-line errors,
    or the lcores. ``enabled``: the EAL's lcores (``-l``/``--lcores``/``-c``); every
    one gets a TX queue on every port, idle or not (``nb_txq = rte_lcore_count()``).
    None: the lcores ``config`` names. ``ports``: how many ports exist (the vdevs of a
    verbatim command line); None: any."""
    for q in config:
        if q.queue >= MAX_RX_QUEUE_PER_PORT:
            raise SimError(f"--config: invalid queue number: {q.queue}")
        if enabled is not None and q.lcore not in enabled:
            raise SimError(f"--config: error: lcore {q.lcore} is not enabled in lcore mask")
    rx: dict[int, list[RxQueue]] = {lcore: [] for lcore in enabled or ()}
    for q in config:
        if len(rx.setdefault(q.lcore, [])) >= MAX_RX_QUEUE_PER_LCORE:
            raise SimError(f"--config: error: too many queues ({len(rx[q.lcore]) + 1}) for lcore: {q.lcore}")
        rx[q.lcore].append(q)
    for q in config:
        if not portmask >> q.port & 1:
            raise SimError(f"--config: port {q.port} is not enabled in port mask 0x{portmask:x}")
        if ports is not None and q.port >= ports:
            raise SimError(f"--config: port {q.port} is not present on the board ({ports} port"
                           f"{'s' if ports != 1 else ''}: one per --vdev)")
    queues: dict[int, int] = {}
    for port in sorted({q.port for q in config}):       # per port, as the port loop sets them up
        for q in config:
            if q.port == port:
                if q.queue != queues.get(port, 0):
                    raise SimError(f"--config: queue ids of the port {port} must be in sequence and must start "
                                   f"with 0 (queue {q.queue} where {queues.get(port, 0)} was due)")
                queues[port] = q.queue + 1
    return Lcores(rx, queues)


# l3fwd's own lcore_params_array_default: what dpdk-l3fwd polls when --config is not given
L3FWD_DEFAULT_CONFIG = "(0,0,2),(0,1,2),(0,2,2),(1,0,2),(1,1,2),(1,2,2),(2,0,2),(3,0,3),(3,1,3)"


def default_config(ports: list[int]) -> list[RxQueue]:
    """One lcore polling queue 0 of each of ``ports``, ascending."""
    return [RxQueue(port, 0, 0) for port in sorted(ports)]
