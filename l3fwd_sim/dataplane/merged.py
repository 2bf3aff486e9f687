"""Several lcores, one output per port: the lcores take turns, a super-burst each, and
every port's TX queues (one per lcore, ``dpdk/lcores_and_queues.md``) are merged as
they fill (``capture/merge.py``), so ``port<N>.pcap`` is written once, straight from
memory — no per-queue file is written and read again. What a queue holds between turns
is what waits for a slower queue; the turns keep the lcores abreast, so that is about a
super-burst.

With ``--jobs`` the turns are dealt out in chunks to the processes, the merges handed
on with the token (``jobs.py``). The per-queue files (``port<N>.q<K>.pcap``, what real
dpdk-l3fwd's ``tx_pcap`` files hold) are written by the lcores one after another
instead (``--per-queue``, ``--no-merge``, ``dpdk-l3fwd``): ``lcore.forward_all``, then
the files' merge.
"""
from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from ..capture.atomic import Committable
from ..capture.merge import LcoreQueues, TxQueueMerge, places, time_key
from ..capture.time_floor import NONE_LEFT
from ..capture.writers import PortOutputs
from .lcore import Lcore, LcoreTrace, bursts, open_readers, report_inputs
from .polling import receive
from .stats import RunStats

HANDED_ON = 1 << 18                  # --jobs: room before a TX queue's chunk for what the chunk before left waiting
                                     # (most waits are a few kB; a bigger one is moved in, not lost)


class MergedPorts(Committable):
    """A run's ``port<N>`` files (``files``), each the merge of the port's TX queues
    (queue k: the k-th lcore's); with ``placed``, each queue record's place in its
    port's file is kept (:meth:`places`: what trace lines and annotations point to).
    ``headroom``: see ``merge.LcoreQueues`` (``HANDED_ON``)."""

    def __init__(self, outdir: Path, tx_ports: list[int], lcores: int, nanosecond: bool, output_format: str,
                 placed: bool = False, headroom: int = 0):
        self._outdir, self._format, self._nanosecond = Path(outdir), output_format, nanosecond
        self.tx_ports, self.lcores = tx_ports, lcores
        self.lcore_queues = [LcoreQueues(max(tx_ports, default=-1) + 1, headroom) for _ in range(lcores)]
        self.merges = {port: TxQueueMerge([each.queues[port] for each in self.lcore_queues], output_format == "pcapng")
                       for port in tx_ports}
        self.sources: dict[int, list] | None = {port: [] for port in tx_ports} if placed else None
        self.files = PortOutputs(self._outdir, tx_ports, nanosecond, f"port{{port}}.{output_format}", output_format)

    def queue_outputs(self, k: int) -> PortOutputs:
        """Lcore ``k``'s outputs: its TX queue of every port, in memory."""
        return PortOutputs(self._outdir, self.tx_ports, self._nanosecond, f"port{{port}}.q{k}.{self._format}",
                           self._format, self.lcore_queues[k])

    def close(self, k: int) -> None:
        """Lcore ``k`` sends no more."""
        for merge in self.merges.values():
            merge.close(k)

    def set_floors(self, readers: list) -> None:
        """Before a step: for each lcore that may still send and has a TX queue with
        nothing waiting, the earliest time stamp its RX queues (``readers[k]``: (port,
        reader) each) may still hand over — the merge need not wait for what it sends
        next where the records waiting are earlier (``capture/time_floor.py``)."""
        for k, queues in enumerate(readers):
            if any(merge.open[k] and not merge.queues[k].waiting for merge in self.merges.values()):
                floors = [reader.time_floor() for _, reader in queues]
                key = time_key(None if None in floors else min(floors, default=NONE_LEFT), self._format == "pcapng",
                               self._nanosecond)
                for merge in self.merges.values():
                    merge.floor[k] = key

    def step(self) -> None:
        """Write every record whose place is certain."""
        self.write(self.take())

    def take(self) -> dict[int, tuple]:
        """Per port, the records whose place is certain: (bytes, how many, each one's
        queue), valid until the next step."""
        taken = {port: merge.step() for port, merge in self.merges.items()}
        if self.sources is not None:
            for port, (_, n, source) in taken.items():
                if n:
                    self.sources[port].append(source)
        return taken

    def write(self, taken: dict[int, tuple], at: dict[int, int] | None = None) -> None:
        """Append what ``take`` took (``--jobs``: write it at file offsets ``at``)."""
        for port, (data, n, _) in taken.items():
            if n:
                self.files.writers[port].write_parts([data], n, None if at is None else at[port])

    def places(self) -> dict[int, list]:
        """Per port, per TX queue: the place in the port's file of each of its records
        (``sources``: per port, the queue of each record taken, in order)."""
        return {port: places(each, self.lcores) for port, each in self.sources.items()}

    def commit(self) -> None:
        self.files.commit()

    def abort(self) -> None:
        self.files.abort()


def forward_merged(lcores: list[Lcore], ports: MergedPorts, outdir: Path, stats: list[RunStats], tx: list) -> list:
    """Forward the ``lcores`` in turns, a super-burst each, lcore k counting into
    ``stats[k]`` and ``tx[k]``, into ``ports`` (committed only if everything went
    well); returns each lcore's trace spools (``lcore.forward_all``)."""
    traces: list[LcoreTrace] = []
    try:
        with ExitStack() as stack:
            loops, readers = {}, []
            for k, lcore in enumerate(lcores):
                traces.append(LcoreTrace(lcore, outdir))
                readers.append(stack.enter_context(open_readers(lcore.inputs, lcore.captures)))
                loops[k] = bursts(lcore, receive(readers[k], lcore.rx_burst, lcore.chunk_packets),
                                  ports.queue_outputs(k), stats[k], tx[k], trace=traces[k].tracer)
            while loops:
                for k, loop in list(loops.items()):
                    if next(loop, StopIteration) is StopIteration:
                        report_inputs(readers[k], stats[k])
                        ports.close(k)
                        del loops[k]
                ports.set_floors(readers)
                ports.step()
        ports.commit()
        return [trace.finish(each) for trace, each in zip(traces, stats)]
    except BaseException:
        ports.abort()
        for trace in traces:
            trace.abort()
        raise
