"""``--cluster``: one run's chunks as Dask tasks, output byte-identical to ``--jobs 1``.

The split is ``--jobs``' (``jobs.py``): the polling rounds cut into chunks of equal
length, each one super-burst, forwarded independently. Here each chunk is a task:

1. an index task per input reads it once and notes the file offset of every chunk's
   first record, so that a chunk task seeks there instead of reading what comes before
   (uncompressed classic pcap; pcapng and gzip inputs are read from their start);
2. a chunk task forwards its rounds with the ordinary single-process loop into port
   files (and a trace spool) of its own, in a scratch area every worker reaches (inside
   the run's staging directory, or under the output URL), and returns its counters and
   its TX calls;
3. the client concatenates each port's chunk files in chunk order behind one file
   header, replays the TX calls in chunk order into the one TX model and adds the
   counters up — as ``--jobs`` does — renders the trace from the spools, and the output
   set is put in place as usual.

Several lcores (``--config``) run their chunks in turn, on one client.

Dask retries a task whose worker died; a chunk task writes its files atomically, so a
retried chunk leaves exactly one set. The cluster is the one at ``tcp://host:port`` or
``tls://host:port`` (with the cluster's CA and this client's certificate and key), or
``local:N`` (a LocalCluster of N worker processes here, listening on loopback only). A
Dask scheduler runs the pickled functions of whoever connects: an address Dask cannot
parse, reach or start is one line, never a traceback.
"""
from __future__ import annotations

import shutil
import ssl
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from .. import hold
from ..capture.location import Location, is_url, join, open_binary, put, remove
from ..capture.offline import open_offline
from ..capture.writers import PortOutputs
from ..errors import SimError
from ..numbers import brief
from ..text import printable
from .lcore import Lcore, main_loop, open_readers, report_inputs
from .polling import receive, skip_records
from .stats import RunStats
from .trace import BurstTracer, Describe, Spool
from .tx import TxLog, TxModel

EXTRA = "pip install 'l3fwd-sim[cluster]'"
LOOPBACK = "127.0.0.1"       # where local:N listens: reachable from this machine only
TLS_OPTIONS = ("--tls-ca-file", "--tls-cert", "--tls-key")   # the cluster's CA, this client's certificate and key
SPOOL = "trace.spool"        # a chunk's trace records, beside its port files


@dataclass
class CaptureIndex:
    """What a chunk task needs to find its records in one input."""
    records: int                 # records in the capture
    starts: list[int] | None     # file offset of record k × chunk_records, k >= 1 (None: not seekable)


def index_capture(path: Location, chunk_records: int) -> CaptureIndex:
    """Read a capture once (a task of its own): its record count and each chunk's start."""
    reader = open_offline(path)
    try:
        starts = [] if reader.seekable else None
        while len(reader.read(chunk_records - reader.records_read % chunk_records)):
            if starts is not None and reader.records_read % chunk_records == 0:
                starts.append(reader.position)
        return CaptureIndex(reader.records_read, starts)
    finally:
        reader.close()


def forward_chunk(lcore: Lcore, chunk: int, rounds: int, indexes: list[CaptureIndex], scratch: Location,
                  stats: RunStats) -> tuple[int, RunStats, TxLog, Spool | None]:
    """Forward polling rounds ``chunk × rounds`` .. ``+ rounds`` into ``scratch/<chunk>/``
    (port files, and when tracing the chunk's trace spool). A URL: written here first,
    then uploaded."""
    if is_url(scratch):
        with tempfile.TemporaryDirectory(prefix="l3fwd-sim-chunk-") as local:
            done = forward_chunk(lcore, chunk, rounds, indexes, Path(local), stats)
            for path in sorted((Path(local) / f"{chunk:09d}").iterdir()):
                if not path.name.startswith("."):
                    put(path, join(scratch, f"{chunk:09d}/{path.name}"))
            if done[3]:
                done[3].path = join(scratch, f"{chunk:09d}/{SPOOL}")
            return done
    directory = Path(scratch) / f"{chunk:09d}"
    directory.mkdir(parents=True, exist_ok=True)
    first = chunk * rounds * lcore.rx_burst            # each queue's first record of the chunk
    stats, log = stats.empty_like(), TxLog()
    tracing, spool, tracer = lcore.tracing, None, None
    outputs = PortOutputs(directory, lcore.tx_ports, lcore.nanosecond, lcore.output_name, lcore.output_format)
    try:
        if tracing:
            spool = Spool(directory / SPOOL)
            spool.path.write_bytes(b"")                # a retried chunk starts its spool again
            tracer = BurstTracer(tracing.limit, tracing.lcore, tracing.rx_queues, lcore.tx_ports, spool.append,
                                 chunk * rounds * len(lcore.inputs))
        with open_readers(lcore.inputs) as readers:
            for (_, reader), index in zip(readers, indexes):
                _start_at(reader, index, first, rounds * lcore.rx_burst)
            main_loop(lcore, receive(readers, lcore.rx_burst, lcore.chunk_packets, (0, rounds)), outputs, stats, log,
                      trace=tracer)
            if (chunk + 1) * rounds * lcore.rx_burst >= max(index.records for index in indexes):
                report_inputs(readers, stats)        # the last chunk read every input to its end
        outputs.commit()
        if tracer:
            spool.end_chunk(chunk, tracer.traced, tracer.sent)
            stats.traced += tracer.traced
    except BaseException:
        outputs.abort()
        raise
    return chunk, stats, log, spool


def _start_at(reader, index: CaptureIndex, first: int, chunk_records: int) -> None:
    """Put ``reader`` at record ``first``: by seeking where the index says, else by
    reading past the records before it."""
    if first == 0:
        return
    if index.starts is not None and first <= index.records:
        k = first // chunk_records - 1
        if k < len(index.starts):
            reader.seek_record(index.starts[k], first)
            return
    skip_records(reader, first)


@contextmanager
def connected(address: str, announce=None, tls: tuple = (None, None, None)):
    """A Dask client of the scheduler at ``address``, or of a LocalCluster of N worker
    processes started for the run (``local:N``, closed after it); ``tls``: the files of
    ``TLS_OPTIONS``, for a ``tls://`` scheduler. ``announce(text)`` is told the
    dashboard's address, when there is one. Whatever Dask raises while parsing the
    address, connecting or starting the LocalCluster is one line naming the address."""
    try:
        from distributed import Client
    except ImportError:
        raise SimError(f"--cluster needs Dask: {EXTRA}") from None
    _check_address(address)
    security = _client_security(address, tls)
    local = _local_cluster(address)
    try:
        try:
            client = Client(local or address, timeout="10s", security=security)
        except Exception as err:                   # OSError, TimeoutError, a TLS handshake refused
            raise _refused(address, f"cannot reach the Dask scheduler ({_dask_says(err)})") from None
        with client:
            if client.dashboard_link and announce:
                announce(f"Dask dashboard: {client.dashboard_link}")
            yield client
    finally:
        if local is not None:
            local.close()


def _check_address(address: str) -> None:
    """``address`` as Dask's ``connect`` checks it before it tries the network
    (``distributed.comm.core.connect``): a scheme it has a comm backend for and, for an IP
    one (tcp, tls, ws, wss), ``host:port``; and no space or control character, which no
    host name holds (Dask would look it up until the connect timeout). Checked before a
    Client exists: a Client whose start fails on its address is left half-open, and
    closing it later (at the interpreter's exit) waits 20 s. ``local:N`` is ours."""
    if not address.isprintable() or any(c.isspace() for c in address):
        raise _refused(address, "not a scheduler address (it holds a space or a control character)")
    if address.startswith("local:"):
        return
    from distributed.comm import registry
    from distributed.comm.addressing import parse_address
    try:
        scheme, loc = parse_address(address)
        backend = registry.get_backend(scheme)
        backend.get_connector()                     # a backend without its library (ucx) fails here
        port = backend.get_address_host_port(loc)[1]
    except NotImplementedError:                     # inproc://: no host and port
        return
    except Exception as err:
        raise _refused(address, f"not a Dask scheduler address ({_dask_says(err)})") from None
    if not 1 <= port <= 65535:
        raise _refused(address, f"port {port} out of range 1..65535")


def _client_security(address: str, tls: tuple):
    """Dask's ``Security`` for a client of the ``tls://`` scheduler at ``address``: the
    cluster's CA, this client's certificate and key (``tls``), every connection encrypted
    and both ends verified against the CA (``distributed.security``, ``require_encryption``);
    None for any other address, which takes no TLS files (``local:N`` listens on loopback
    only)."""
    given = [option for option, path in zip(TLS_OPTIONS, tls) if path is not None]
    if not address.startswith("tls://"):
        if given:
            raise _refused(address, f"{', '.join(given)}: only with a tls:// scheduler address")
        return None
    if len(given) < len(TLS_OPTIONS):
        raise _refused(address, f"a tls:// scheduler takes {', '.join(TLS_OPTIONS)} (the cluster's CA, this "
                                "client's certificate and key)")
    ca_file, cert, key = (str(path) for path in tls)
    _check_tls_files(ca_file, cert, key)
    from distributed.security import Security
    return Security(tls_ca_file=ca_file, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


def _check_tls_files(ca_file: str, cert: str, key: str) -> None:
    """One line naming the file when one cannot be read, or when ``ssl`` cannot load them
    as Dask's TLS connections do: the CA's PEM certificates, this client's PEM certificate
    and its private key. A key under a pass phrase is refused here, not asked for on the
    terminal in the middle of the run."""
    for option, path in zip(TLS_OPTIONS, (ca_file, cert, key)):
        try:
            open(path, "rb").close()
        except OSError as err:
            raise SimError(f"{option} {printable(path)}: cannot read it ({err.strerror})") from None
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    try:
        context.load_verify_locations(cafile=ca_file)
    except ssl.SSLError as err:
        raise SimError(f"--tls-ca-file {printable(ca_file)}: no PEM CA certificate in it ({_dask_says(err)})") from None
    try:
        context.load_cert_chain(cert, key, password=lambda: b"")
    except ssl.SSLError as err:
        raise SimError(f"--tls-cert {printable(cert)}, --tls-key {printable(key)}: not a PEM certificate and its "
                       f"private key without a pass phrase ({_dask_says(err)})") from None


def _local_cluster(address: str):
    """``local:N``: a LocalCluster of N worker processes, every listener it starts (the
    scheduler, its dashboard, the nannies, the workers) bound to loopback; None for a
    scheduler address."""
    if not address.startswith("local:"):
        return None
    from distributed import LocalCluster
    workers = address.removeprefix("local:")
    if not (workers.isascii() and workers.isdigit() and len(workers) <= 2 and 1 <= int(workers) <= 64):
        raise _refused(address, "local:N takes 1..64 worker processes")
    try:
        return LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True, host=LOOPBACK,
                            dashboard_address=f"{LOOPBACK}:0", worker_dashboard_address=None, silence_logs=50)
    except Exception as err:
        raise _refused(address, f"cannot start a LocalCluster ({_dask_says(err)})") from None


def _refused(address: str, what: str) -> SimError:
    """``--cluster 'ADDRESS': what``, the address as ``repr`` writes it (a newline in it
    stays ``\\n``), cut short past 100 characters: one line."""
    return SimError(f"--cluster {brief(address, 100)}: {what}")


def _dask_says(err: Exception) -> str:
    """Dask's (or ``ssl``'s) own words for ``err``, on one line and at most 160 characters
    (they may quote the whole address)."""
    text = printable(str(err)) or type(err).__name__
    return text if len(text) <= 160 else f"{text[:159]}…"


def run_cluster(lcore: Lcore, client, outdir: Path, scratch: Location, stats: RunStats, tx_model: TxModel,
                notify=None) -> list[Spool]:
    """Forward the chunks of ``lcore``'s inputs as tasks on the cluster of ``client`` into
    ``outdir`` (the staging directory), the chunks' files going to ``scratch`` (a place
    every worker reaches: beside the outputs, or a URL), counting into ``stats`` and
    ``tx_model`` exactly as one process would. ``notify(done, total)`` counts finished
    chunks. Returns the chunks' trace spools (when tracing), rendered by the caller as
    ``--jobs``' are."""
    from distributed import as_completed           # installed: connected() said so

    rounds = max(1, lcore.chunk_packets // (lcore.rx_burst * len(lcore.inputs)))
    chunk_records = rounds * lcore.rx_burst
    futures = []
    try:
        paths = [path for _, path in lcore.inputs]
        indexes = client.gather(client.map(index_capture, paths, chunk_records=chunk_records, pure=False))
        chunks = max(1, -(-max(index.records for index in indexes) // chunk_records))
        task_lcore = replace(lcore, captures=None, progress=None, tracing=lcore.tracing and replace(
            lcore.tracing, describe=Describe(None, None, lcore.tracing.describe.reasons,
                                             lcore.tracing.describe.tables)))   # lines are rendered here
        futures = [client.submit(forward_chunk, task_lcore, chunk, rounds, indexes, scratch, stats, pure=False)
                   for chunk in range(chunks)]
        results = {}
        for done, future in enumerate(as_completed(futures), 1):
            chunk, chunk_stats, log, spool = future.result()
            results[chunk] = (chunk_stats, log, spool)
            if notify:
                notify(done, chunks)
            hold.point()
        spools = []
        for chunk in range(chunks):
            chunk_stats, log, spool = results[chunk]
            stats.merge(chunk_stats)
            log.replay(tx_model)
            if spool:                                  # kept until the trace is rendered, after the chunks go
                local = outdir / f".{lcore.tracing.lcore}.{chunk:09d}.{SPOOL}"
                with open(local, "wb") as copy, open_binary(spool.path) as source:
                    shutil.copyfileobj(source, copy, 1 << 20)
                spools.append(replace(spool, path=local))
        _assemble(lcore, outdir, scratch, chunks)
        return spools
    except BaseException:
        client.cancel(futures)
        raise
    finally:
        if is_url(scratch):
            remove(str(scratch), recursive=True)
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def _assemble(lcore: Lcore, outdir: Path, scratch: Location, chunks: int) -> None:
    """Each port's file: one file header, then every chunk's records in chunk order."""
    with PortOutputs(outdir, lcore.tx_ports, lcore.nanosecond, lcore.output_name, lcore.output_format) as outputs:
        outputs.flush()
        for port, writer in outputs.writers.items():
            name = lcore.output_name.format(port=port)
            for chunk in range(chunks):
                writer.append_file(join(scratch, f"{chunk:09d}/{name}"), writer.header_bytes)
