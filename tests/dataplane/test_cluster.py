"""``run --cluster``: chunks as Dask tasks on a LocalCluster of 2 worker processes.

The oracle is ``--jobs 1`` on the same inputs: the outputs byte for byte, the counters
and the TX model's counters, over uneven port lengths, odd bursts and many chunks (a
chunk is one super-burst of ``chunk_packets``); pcapng and gzip inputs (read through
instead of sought) too. Who gets in: a malformed address is one line; a ``tls://`` cluster
(certificates made by openssl here) serves its CA's clients and no one else; ``local:N``
listens on loopback only."""
from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
import signal
import subprocess
import sys
import threading
import time

import pytest
from forwarding import simulate
from frames import mixed_frames, write_pcap
from refusals import BIG, assert_refused
from scapy.layers.l2 import Ether
from scapy.utils import wrpcapng

from l3fwd_sim import RunOptions, SimError, find_inputs, run
from l3fwd_sim.capture.offline import open_offline
from l3fwd_sim.dataplane import cluster as cluster_module

distributed = pytest.importorskip("distributed")

COUNTERS = ("ports", "totals", "drops", "rules", "rules_never_hit")   # the rule hit counters too


@pytest.fixture(scope="module")
def scheduler():
    """One LocalCluster for the module: its scheduler's address, as --cluster takes it."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=50) as local:
        yield local.scheduler_address


def counters(stats: dict) -> dict:
    return {key: stats[key] for key in COUNTERS}


INPUTS = {0: mixed_frames(21, 0, 300), 1: mixed_frames(21, 1, 170), 3: mixed_frames(21, 3, 45)}


@pytest.mark.parametrize("pipeline,lookup", [("multi", "lpm"), ("simple", "lpm"), ("multi", "em"),
                                             ("simple", "em"), ("multi", "fib"), ("simple", "fib")])
def test_cluster_output_is_that_of_one_process(tmp_path, scheduler, pipeline, lookup):
    options = dict(portmask=0xF, pipeline=pipeline, lookup=lookup, rx_burst=7, tx_burst=5, chunk_packets=40)
    want, want_stats = simulate(tmp_path / "one", INPUTS, **options)
    got, got_stats = simulate(tmp_path / "cluster", INPUTS, cluster=scheduler, **options)
    assert got == want
    assert counters(got_stats) == counters(want_stats)
    assert not list((tmp_path / "cluster" / "out").glob(".*"))       # no chunk files left


def test_local_cluster_and_every_input_format(tmp_path):
    """``local:2`` starts its own cluster; a pcapng and a gzip'd input are read from their
    start by each chunk task, a classic one sought; the files are identical to --jobs 1."""
    write_pcap(tmp_path / "a.pcap", INPUTS[0])
    write_pcap(tmp_path / "b.pcap", INPUTS[1])
    (tmp_path / "b.pcap.gz").write_bytes(gzip.compress((tmp_path / "b.pcap").read_bytes()))
    packets = [Ether(frame) for frame in INPUTS[3] * 3]
    for i, packet in enumerate(packets):
        packet.time = 1_700_000_000 + i / 1000
    wrpcapng(str(tmp_path / "c.pcapng"), packets)
    inputs = {0: tmp_path / "a.pcap", 1: tmp_path / "b.pcap.gz", 2: tmp_path / "c.pcapng"}
    options = dict(inputs=inputs, portmask=0xF, rx_burst=9, chunk_packets=64, output_format="pcap")
    one = run(RunOptions(outdir=tmp_path / "one", **options))
    many = run(RunOptions(outdir=tmp_path / "many", cluster="local:2", **options))
    assert counters(many) == counters(one)
    for port in range(4):
        assert (tmp_path / "many" / f"port{port}.pcap").read_bytes() == (tmp_path / "one" / f"port{port}.pcap").read_bytes()


def test_index_finds_each_chunk_start(tmp_path):
    """The index pass's offsets are where chunk k's records start: a reader sought there
    reads what a reader reading through reads."""
    path = tmp_path / "a.pcap"
    write_pcap(path, INPUTS[0])
    index = cluster_module.index_capture(path, 64)
    assert index.records == 300 and len(index.starts) == 4
    through = open_offline(path)
    through.read(64)
    for k, offset in enumerate(index.starts, 1):
        sought = open_offline(path)
        sought.seek_record(offset, 64 * k)
        got, want = sought.read(64), through.read(64)
        assert got.rows.tobytes() == want.rows.tobytes() and got.first == want.first == 64 * k
        sought.close()
    through.close()


def test_a_failing_chunk_ends_the_run_with_its_line_and_no_outputs(tmp_path, scheduler):
    write_pcap(tmp_path / "a.pcap", INPUTS[0])
    reader = open_offline(tmp_path / "a.pcap")
    reader.read(200)
    at = reader.position + 8                        # record 200's captured length: inside a later chunk
    reader.close()
    damaged = bytearray((tmp_path / "a.pcap").read_bytes())
    damaged[at:at + 4] = (10**6).to_bytes(4, "little")
    (tmp_path / "bad.pcap").write_bytes(bytes(damaged))
    with pytest.raises(SimError, match="bad.pcap: .*captured length"):
        run(RunOptions(inputs={0: tmp_path / "bad.pcap"}, outdir=tmp_path / "out", cluster=scheduler,
                       chunk_packets=32))
    assert not (tmp_path / "out").exists()


def test_cluster_refusals(tmp_path, monkeypatch):
    write_pcap(tmp_path / "a.pcap", INPUTS[0])
    base = dict(inputs={0: tmp_path / "a.pcap"}, outdir=tmp_path / "out")
    for options, words in ((dict(cluster="local:2", jobs=2), "give one"),
                           (dict(cluster="local:0"), "1..64"),
                           (dict(cluster="local:2", config="(0,0,0),(0,1,1)"), "RSS")):
        with pytest.raises(SimError, match=words):
            run(RunOptions(**base, **options))
    monkeypatch.setitem(sys.modules, "distributed", None)           # the [cluster] extra not installed
    with pytest.raises(SimError, match=r"--cluster needs Dask: pip install 'l3fwd-sim\[cluster\]'"):
        run(RunOptions(**base, cluster="local:2"))
    assert not (tmp_path / "out").exists()


def test_a_killed_worker_is_retried_and_the_output_is_the_same(tmp_path, scheduler):
    """SIGKILL one worker process once some chunks are done: Dask runs its tasks again
    elsewhere (or on the restarted worker), and the result is still --jobs 1's."""
    inputs = {port: mixed_frames(31, port, 1500) for port in range(2)}
    options = dict(portmask=0x3, rx_burst=16, chunk_packets=32)
    want, want_stats = simulate(tmp_path / "one", inputs, **options)
    with distributed.Client(scheduler) as client:
        victim = next(iter(client.run(os.getpid).values()))
    chunks = tmp_path / "cluster" / "out"

    def kill_when_under_way():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if sum(1 for _ in chunks.glob(".l3fwd-sim.*/.chunks/*/port0.pcap")) >= 5:
                os.kill(victim, signal.SIGKILL)
                return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_when_under_way)
    killer.start()
    got, got_stats = simulate(tmp_path / "cluster", inputs, cluster=scheduler, **options)
    killer.join()
    with pytest.raises(ProcessLookupError):
        os.kill(victim, 0)                       # it was killed while the run went on
    assert got == want and counters(got_stats) == counters(want_stats)


@pytest.mark.parametrize("trace", ["all", 100])
def test_cluster_trace_is_that_of_one_process(tmp_path, scheduler, trace):
    """``--trace`` with ``--cluster``: each chunk task spools its packets' records, the
    client renders them in chunk order — trace.jsonl byte for byte that of --jobs 1."""
    options = dict(portmask=0xF, lookup="em", rx_burst=7, tx_burst=5, chunk_packets=40, trace=trace)
    simulate(tmp_path / "one", INPUTS, **options)
    _, stats = simulate(tmp_path / "cluster", INPUTS, cluster=scheduler, **options)
    want = (tmp_path / "one" / "out" / "trace.jsonl").read_bytes()
    assert (tmp_path / "cluster" / "out" / "trace.jsonl").read_bytes() == want
    assert stats["trace"]["packets"] == want.count(b"\n") == (515 if trace == "all" else 100)


def test_fsspec_urls_as_inputs_and_outputs(tmp_path, scheduler):
    """Inputs and output directories as fsspec URLs: ``file://`` on the process workers;
    ``memory://`` (one process's memory) on a cluster of threads and without one. The
    outputs are those of the same run on local paths; at an output URL our stale objects
    of an earlier run go and others stay."""
    fsspec = pytest.importorskip("fsspec")
    local = tmp_path / "in"
    local.mkdir()
    for port in (0, 1):
        write_pcap(local / f"port{port}.pcap", INPUTS[port])
    options = dict(portmask=0x3, rx_burst=7, chunk_packets=40, trace="all")
    want = run(RunOptions(inputs=find_inputs([str(local)]), outdir=tmp_path / "want", **options))
    names = ["port0.pcap", "port1.pcap", "trace.jsonl"]
    memory = fsspec.filesystem("memory")
    base = f"/{tmp_path.name}"
    for port in (0, 1):
        memory.pipe(f"{base}/in/port{port}.pcap", (local / f"port{port}.pcap").read_bytes())
    for name in ("port7.pcap", "notes.txt"):                   # an earlier run's output, and the user's
        memory.pipe(f"{base}/out-memory/{name}", b"earlier")
    (tmp_path / "out-file").mkdir()
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0",
                                  silence_logs=50) as threads:
        for name, inputs, outdir, address in (
                ("file", f"file://{local}", f"file://{tmp_path}/out-file", scheduler),
                ("memory", f"memory://{base}/in", f"memory://{base}/out-memory", threads.scheduler_address),
                ("memory-one-process", f"memory://{base}/in", f"memory://{base}/out-one", None)):
            got = run(RunOptions(inputs=find_inputs([inputs]), outdir=outdir, cluster=address, **options))
            assert counters(got) == counters(want), name
            assert got["options"]["inputs"]["0"] == f"{inputs}/port0.pcap"
            fs, path = fsspec.core.url_to_fs(outdir)
            for file in names:
                assert fs.cat_file(f"{path}/{file}") == (tmp_path / "want" / file).read_bytes(), (name, file)
            assert not [p for p in fs.ls(path, detail=False) if Path(p).name.startswith(".")]   # no scratch left
    assert sorted(Path(p).name for p in memory.ls(f"{base}/out-memory", detail=False)) == \
        sorted(["notes.txt", "stats.json", *names])
    with pytest.raises(SimError, match="memory://nothing/port0.pcap: cannot open: No such file"):
        run(RunOptions(inputs={0: "memory://nothing/port0.pcap"}, outdir=tmp_path / "none"))


def test_several_lcores_on_a_cluster(tmp_path, scheduler):
    """``--config`` with two lcores: each lcore's chunks run as tasks in turn, its TX
    queue's files are merged as usual — outputs, counters and trace of --jobs 1."""
    options = dict(portmask=0xF, config="(0,0,0),(1,0,1),(3,0,0)", rx_burst=7, chunk_packets=40, trace="all",
                   per_queue=True)
    want, want_stats = simulate(tmp_path / "one", INPUTS, **options)
    got, got_stats = simulate(tmp_path / "cluster", INPUTS, cluster=scheduler, **options)
    assert got == want and counters(got_stats) == counters(want_stats)
    assert got_stats["lcores"] == want_stats["lcores"]
    for name in ("trace.jsonl", "port0.q0.pcap", "port0.q1.pcap"):
        assert (tmp_path / "cluster" / "out" / name).read_bytes() == (tmp_path / "one" / "out" / name).read_bytes()


def test_the_command_line_keeps_output_urls(tmp_path):
    """``-o memory://…`` reaches the library whole (a ``Path`` would fold the ``//`` into a
    local directory ``memory:``), for ``run`` and ``generate``."""
    fsspec = pytest.importorskip("fsspec")
    from click.testing import CliRunner
    from l3fwd_sim.cli import main
    memory = fsspec.filesystem("memory")
    write_pcap(tmp_path / "a.pcap", INPUTS[0])
    runner = CliRunner()
    ran = runner.invoke(main, ["run", f"0={tmp_path / 'a.pcap'}", "-o", f"memory://{tmp_path.name}/run", "--quiet"])
    made = runner.invoke(main, ["generate", "IPV4-CONT-BURST", "--count", "5", "-o", f"memory://{tmp_path.name}/gen",
                                "--quiet"])
    assert ran.exit_code == made.exit_code == 0, ran.output + made.output
    assert sorted(Path(p).name for p in memory.ls(f"/{tmp_path.name}/run", detail=False)) == ["port0.pcap", "stats.json"]
    assert len(memory.ls(f"/{tmp_path.name}/gen", detail=False)) == 4
    assert not Path("memory:").exists()


@pytest.mark.parametrize("address,words", [
    ("", "not a Dask scheduler address (missing port number"),
    ("local", "not a Dask scheduler address (missing port number"),
    ("::::", "not a Dask scheduler address (invalid address"),
    ("local:0", "local:N takes 1..64"),
    ("local:x", "local:N takes 1..64"),
    ("local:\u00b2", "local:N takes 1..64"),                 # a digit to str.isdigit, not to int()
    (f"local:{BIG}", "local:N takes 1..64"),
    ("tcp://", "not a Dask scheduler address (missing port number"),
    ("tls://host", "not a Dask scheduler address (missing port number in address 'host')"),
    ("tcp://127.0.0.1:99999", "port 99999 out of range 1..65535"),
    ("nonsense://a:1", "not a Dask scheduler address (unknown address scheme 'nonsense'"),
    ("tcp://host\n:8786", "'tcp://host\\n:8786': not a scheduler address (it holds a space or a control"),
    ("tcp://a b:8786", "not a scheduler address (it holds a space"),
])
def test_a_malformed_cluster_address_is_one_line(tmp_path, cli, monkeypatch, address, words):
    """Whatever Dask makes of an address (a ValueError, a TypeError, a connection that
    times out on a host name with a newline in it) is one line naming the address, exit
    status 2, and no outputs; never a traceback. It is refused before a Client is made
    (one that fails to start on its address is left half-open: closing it at exit waits 20 s)."""
    def no_client(*args, **kwargs):
        raise AssertionError("a Client was made")

    monkeypatch.setattr(distributed, "Client", no_client)
    write_pcap(tmp_path / "a.pcap", INPUTS[0])
    started = time.monotonic()
    assert_refused(cli("run", f"0={tmp_path / 'a.pcap'}", "-o", tmp_path / "out", "--cluster", address),
                   "--cluster ", words)
    assert time.monotonic() - started < 5 and not (tmp_path / "out").exists()


def make_certificates(directory: Path) -> None:
    """With openssl: the cluster's CA (``ca``) and another one (``other``); signed by the
    first, the scheduler's and workers' certificate (``node``) and a client's (``client``);
    by the other, a stranger's (``stranger``). ``NAME.pem`` and ``NAME.key`` each (P-256)."""
    def openssl(*args):
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    for ca in ("ca", "other"):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", f"/CN={ca}", "-keyout", f"{ca}.key", "-out", f"{ca}.pem")
    (directory / "san.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for name, ca in (("node", "ca"), ("client", "ca"), ("stranger", "other")):
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", f"/CN={name}",
                "-keyout", f"{name}.key", "-out", f"{name}.csr")
        openssl("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
                "-days", "2", "-extfile", "san.ext", "-out", f"{name}.pem")


@pytest.fixture(scope="module")
def tls_scheduler(tmp_path_factory):
    """A TLS-only cluster (a scheduler and one worker, in this process) of the ``ca`` of
    :func:`make_certificates`: its address, and the directory of the certificates."""
    certs = tmp_path_factory.mktemp("certs")
    make_certificates(certs)
    node = {f"tls_{role}_{part}": str(certs / f"node.{suffix}")
            for role in ("scheduler", "worker", "client") for part, suffix in (("cert", "pem"), ("key", "key"))}
    security = distributed.security.Security(tls_ca_file=str(certs / "ca.pem"), require_encryption=True, **node)
    with distributed.LocalCluster(protocol="tls", security=security, host="127.0.0.1", n_workers=1,
                                  threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=50) as local:
        yield local.scheduler_address, certs


def tls_options(certs: Path, ca: str = "ca", client: str = "client") -> list[str]:
    return ["--tls-ca-file", certs / f"{ca}.pem", "--tls-cert", certs / f"{client}.pem",
            "--tls-key", certs / f"{client}.key"]


def test_a_tls_cluster_gives_the_output_of_one_process(tmp_path, cli, tls_scheduler):
    """``--cluster tls://…`` with the cluster's CA and a client certificate it signed: the
    port files and counters of a run without ``--cluster``."""
    address, certs = tls_scheduler
    write_pcap(tmp_path / "a.pcap", INPUTS[0])
    write_pcap(tmp_path / "b.pcap", INPUTS[1])
    inputs = [f"0={tmp_path / 'a.pcap'}", f"1={tmp_path / 'b.pcap'}", "-p", "0xf", "--rx-burst", "7", "--quiet"]
    assert cli("run", *inputs, "-o", tmp_path / "one").exit_code == 0
    ran = cli("run", *inputs, "-o", tmp_path / "tls", "--cluster", address, *tls_options(certs))
    assert ran.exit_code == 0, ran.stderr
    stats = {name: json.loads((tmp_path / name / "stats.json").read_text()) for name in ("one", "tls")}
    assert counters(stats["tls"]) == counters(stats["one"])
    for port in range(4):
        name = f"port{port}.pcap"
        assert (tmp_path / "tls" / name).read_bytes() == (tmp_path / "one" / name).read_bytes()


def test_a_tls_cluster_lets_no_one_in(tmp_path, cli, tls_scheduler, monkeypatch):
    """Without the certificates, with a plain ``tcp://`` connection, with a certificate of
    another CA (the scheduler refuses it) or trusting another CA (the client refuses the
    scheduler): one line and exit status 2, at once (not after the 10 s connect timeout).
    The TLS options without a ``tls://`` address, files that cannot be read or are not a
    CA, certificate and key: one line naming them."""
    address, certs = tls_scheduler
    write_pcap(tmp_path / "a.pcap", INPUTS[0])
    (certs / "secret.key").write_bytes(subprocess.run(
        ["openssl", "pkey", "-in", certs / "client.key", "-aes256", "-passout", "pass:secret"],
        check=True, capture_output=True).stdout)
    monkeypatch.chdir(certs)                        # short names in the lines
    tcp = address.replace("tls://", "tcp://")
    named = Path(".")
    for cluster, files, words in (
            (address, [], "a tls:// scheduler takes --tls-ca-file, --tls-cert, --tls-key"),
            (address, ["--tls-ca-file", "ca.pem"], "a tls:// scheduler takes --tls-ca-file"),
            (tcp, [], f"--cluster '{tcp}': cannot reach the Dask scheduler"),
            (address, tls_options(named, client="stranger"), "cannot reach the Dask scheduler"),
            (address, tls_options(named, ca="other", client="stranger"), "cannot reach the Dask scheduler"),
            (tcp, tls_options(named), "--tls-ca-file, --tls-cert, --tls-key: only with a tls:// scheduler"),
            ("local:2", tls_options(named), "'local:2': --tls-ca-file, --tls-cert, --tls-key: only with a tls://"),
            (None, tls_options(named), "--tls-ca-file, --tls-cert, --tls-key: only with --cluster tls://HOST:PORT"),
            ("tls://127.0.0.1", tls_options(named), "not a Dask scheduler address (missing port number"),
            (address, ["--tls-ca-file", "none.pem", *tls_options(named)[2:]],
             "--tls-ca-file none.pem: cannot read it (No such file or directory)"),
            (address, [*tls_options(named)[:4], "--tls-key", "."], "--tls-key .: cannot read it (Is a directory)"),
            (address, ["--tls-ca-file", "client.key", *tls_options(named)[2:]],
             "--tls-ca-file client.key: no PEM CA certificate in it"),
            (address, [*tls_options(named)[:4], "--tls-key", "node.key"],
             "--tls-cert client.pem, --tls-key node.key: not a PEM certificate and its private key"),
            (address, [*tls_options(named)[:4], "--tls-key", "secret.key"], "without a pass phrase")):
        started = time.monotonic()
        assert_refused(cli("run", f"0={tmp_path / 'a.pcap'}", "-o", tmp_path / "out",
                           *(["--cluster", cluster] if cluster else []), *files), words)
        assert time.monotonic() - started < 5, words
        assert not (tmp_path / "out").exists()


def test_local_cluster_listens_on_loopback_only():
    """``local:N`` binds every listener it starts to loopback: its scheduler, dashboard
    (bokeh is installed), nannies and workers; none on another interface."""
    import psutil                                   # comes with distributed

    def listening() -> set:
        processes = [psutil.Process(), *psutil.Process().children(recursive=True)]
        return {(process.pid, connection.laddr) for process in processes
                for connection in process.net_connections(kind="inet") if connection.status == psutil.CONN_LISTEN}

    before = listening()
    with cluster_module.connected("local:2") as client:
        workers = client.run(os.getpid)
        started = listening() - before
        ports = {address.port for _, address in started}
        assert int(client.scheduler.address.rsplit(":", 1)[1]) in ports
        assert int(client.dashboard_link.split(":")[2].split("/")[0]) in ports
        assert set(workers.values()) <= {pid for pid, _ in started}
        assert {address.ip for _, address in started} <= {"127.0.0.1", "::1"}, started
