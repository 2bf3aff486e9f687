"""``l3fwd-sim`` command line: parse options, call the library, print."""
from __future__ import annotations

import functools
import json
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import click

from .capture.writers import OUTPUT_FORMATS
from .capture.location import as_location
from .dataplane.inputs import find_inputs, find_rx_queues
from .dataplane.ports import MAX_PORTS, parse_port_mac, parse_portmask
from .dataplane.rss import parse_rss_key
from .dataplane.stats import format_duration, format_rate, format_table
from .errors import SimError
from .numbers import parse_int
from .l3fwd.routing import MAX_ACL_RULE_NUM
from .l3fwd.run import LOOKUPS, PIPELINES, RunOptions, run
from .testpmd.run import FORWARD_MODES, TOPOLOGIES, TestpmdOptions, testpmd_run
from .traffic.streams import MAX_COUNT, MAX_SEED


class _Interrupted(Exception):
    """Ctrl-C during a command, kept away from click (which prints an empty line first)."""


class _Terminated(BaseException):
    """SIGTERM or SIGHUP: unwinds like Ctrl-C, so every output and temporary file is
    cleaned up on the way out (a BaseException: no ``except Exception`` stops it)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_stopping: list[int] = []          # the stop signal being handled, once one arrived


def _on_signal(signum, frame):
    """Stop the command by unwinding, once: later signals (the watcher's resends, a
    second Ctrl-C) must not interrupt the clean-up."""
    if _stopping:
        return
    _stopping.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise _Terminated(signum)


@contextmanager
def _stop_signals():
    """Ctrl-C, SIGTERM and SIGHUP go to :func:`_on_signal` while the command runs (the
    previous handlers are put back after it). Python runs a handler only between
    bytecodes, so a signal arriving just before a blocking read (a FIFO with no data
    yet) would wait for the next byte. Python's C-level handler also writes the signal
    number to a wakeup pipe; a watcher thread (the signals blocked in it, so that they go
    to the main thread) reads it and sends the signal to the main thread again every
    50 ms until the handler has run: each resend interrupts the read (EINTR)."""
    _stopping.clear()
    previous = {signum: signal.signal(signum, _on_signal) for signum in _STOP_SIGNALS}
    old_wakeup = signal.set_wakeup_fd(_watcher(), warn_on_full_buffer=False)
    try:
        yield
    finally:
        signal.set_wakeup_fd(old_wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@functools.cache
def _watcher() -> int:
    """Start the watcher thread (once per process); the write end of its pipe."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    os.register_at_fork(after_in_child=lambda: signal.set_wakeup_fd(-1))   # a --jobs worker's are its own
    main = threading.get_ident()

    def watch():
        while True:
            signum = os.read(read_end, 1)[0]
            while signum in _STOP_SIGNALS and not _stopping:
                signal.pthread_kill(main, signum)
                time.sleep(0.05)

    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)        # inherited by the watcher only
    threading.Thread(target=watch, name="stop-signals", daemon=True).start()
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)
    return write_end


class _Group(click.Group):
    """Bad usage and library errors end in one line on stderr and exit status 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise _Interrupted() from None

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            with _stop_signals():
                return super().main(*args, **kwargs)
        except click.exceptions.Exit as done:
            sys.exit(done.exit_code)
        except click.ClickException as err:
            click.echo(f"l3fwd-sim: {err.format_message()}", err=True)
            sys.exit(2)
        except SimError as err:
            click.echo(f"l3fwd-sim: {err}", err=True)
            sys.exit(2)
        except (KeyboardInterrupt, click.exceptions.Abort, _Interrupted):
            click.echo("l3fwd-sim: interrupted; no partial output was left", err=True)
            sys.exit(130)
        except _Terminated as err:
            click.echo(f"l3fwd-sim: stopped by {signal.Signals(err.signum).name}; no partial output was left",
                       err=True)
            sys.exit(128 + err.signum)
        except OSError as err:
            click.echo(f"l3fwd-sim: {err.filename or ''}: {err.strerror}", err=True)
            sys.exit(2)


class _OutputDirType(click.ParamType):
    """``-o DIR``: a path or an fsspec URL (kept whole: ``Path`` would fold its ``//``);
    an empty string is an error, not the current directory."""
    name = "directory"

    def convert(self, value, param, ctx):
        if isinstance(value, Path):
            return value
        if not value:
            self.fail("an empty string; name a directory", param, ctx)
        return as_location(value)


_OUTPUT_DIR = _OutputDirType()


@click.group(cls=_Group)
@click.version_option(package_name="l3fwd-sim")
def main():
    """Simulate DPDK's dpdk-l3fwd on pcap files, byte for byte."""


@main.command("compare")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--max-diffs", type=int, default=5, show_default=True,
              help="Differences to describe in detail (fields, hexdump), over all ports.")
@click.option("--timestamps", is_flag=True, help="Compare record timestamps too (ignored by default).")
@click.option("--ts-tolerance", type=float, metavar="SECONDS",
              help="Timestamps this close are equal (implies --timestamps; default 0).")
@click.option("--ignore", multiple=True, metavar="FIELD",
              help="Mask a field before comparing: scapy's name (IP.ttl, Ether.src, UDP.dport) or "
                   "frame.len / frame.time. Repeatable.")
@click.option("--unordered", is_flag=True, help="Compare each port as a multiset of packets.")
@click.option("--by-layers", is_flag=True,
              help="Also count the differing packets by kind and layer stack (Ether/Dot1Q/IP/UDP).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout.")
@click.option("--explain", is_flag=True, help="For each difference described, print the trace lines (run --trace) "
              "of its input packet in both runs: A/trace.jsonl and B/trace.jsonl, or --traces.")
@click.option("--traces", nargs=2, type=click.Path(path_type=Path), metavar="TRACE_A TRACE_B",
              help="The two runs' trace files (implies --explain).")
def compare_command(a, b, max_diffs, timestamps, ts_tolerance, ignore, unordered, by_layers, as_json, explain,
                    traces):
    """Compare two pcap files, or two directories of port<N>.pcap (A is the reference).

    Exit status 0 when equal, 1 when they differ, 2 on error."""
    from .diff.compare import CompareOptions, compare_paths
    report = compare_paths(a, b, CompareOptions(
        timestamps=timestamps or ts_tolerance is not None,
        ts_tolerance=ts_tolerance or 0.0,
        ignore=tuple(ignore),
        unordered=unordered,
        max_diffs=max_diffs,
        by_layers=by_layers,
    ))
    if explain or traces:
        from .diff.explain import explain_report
        explain_report(report, *(traces or ()))
    click.echo(json.dumps(report.to_dict(), indent=2) if as_json else report.format_text())
    sys.exit(0 if report.equal else 1)


def _print_stats(stats: dict, quiet: bool, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(stats, indent=2))
    elif not quiet:
        for warning in stats["warnings"]:
            click.echo(f"l3fwd-sim: warning: {warning}", err=True)
        click.echo(format_table({**stats, "warnings": []}))


def _progress_printer(quiet: bool):
    if quiet or not sys.stderr.isatty():
        return None
    state = {"shown": -1}

    def show(done: int, total: int):
        percent = 100 * done // max(total, 1)
        if percent != state["shown"]:
            state["shown"] = percent
            bar = "#" * (percent // 4)
            click.echo(f"\r[{bar:<25}] {percent:3d}%", err=True, nl=percent >= 100)
    return show


def _lookup_method(lookup: str | None, lpm_flag: bool, em_flag: bool) -> str:
    """``--lookup``, ``-L`` or ``-E`` (default lpm); naming two methods is an error."""
    chosen = {mode for mode, given in (("lpm", lpm_flag), ("em", em_flag), (lookup, lookup)) if given}
    if len(chosen) > 1:
        raise SimError("-L, -E and --lookup select one lookup method each; give only one (as in l3fwd)")
    return chosen.pop() if chosen else "lpm"


def _output_format_option(auto: str):
    """``--output-format`` of a command whose ``auto`` means ``auto``."""
    return click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="auto", show_default=True,
                        help=f"Output files: classic pcap (port<N>.pcap) or pcapng (port<N>.pcapng, 64-bit time "
                             f"stamps: past 2106 too); auto = {auto}.")


_INPUTS_AUTO = "pcapng when every input is pcapng, else pcap"


def _trace_count(text: str | None) -> int | str | None:
    """``--trace N|all``."""
    if text is None or text == "all":
        return text
    if not (text.isascii() and text.isdigit() and len(text) <= 18):
        raise SimError(f"--trace {text!r}: give a number of packets or 'all'")
    return int(text)


@main.command("run")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", "outdir", required=True, type=_OUTPUT_DIR,
              help="Output directory: port<N>.pcap per enabled port, stats.json.")
@click.option("-p", "--portmask", help="Hex mask of enabled ports (default: ports with an input).")
@click.option("--lookup", type=click.Choice(LOOKUPS), help="Lookup method (default lpm; acl needs both rule files).")
@click.option("-L", "lpm_flag", is_flag=True, help="Same as --lookup lpm (legacy l3fwd flag).")
@click.option("-E", "em_flag", is_flag=True, help="Same as --lookup em (legacy l3fwd flag).")
@click.option("--ipv6", is_flag=True, help="l3fwd's --ipv6: EM installs the IPv6 flows instead of the IPv4 ones.")
@click.option("--pipeline", type=click.Choice(PIPELINES), default="multi", show_default=True,
              help="simple = DPDK's per-packet path; multi = x86 multi-buffer path.")
@click.option("--rule_ipv4", "--rule-ipv4", "rule_ipv4", type=click.Path(path_type=Path),
              help="IPv4 rule file (used only with --rule_ipv6, as in l3fwd).")
@click.option("--rule_ipv6", "--rule-ipv6", "rule_ipv6", type=click.Path(path_type=Path),
              help="IPv6 rule file (used only with --rule_ipv4, as in l3fwd).")
@click.option("--eth-dest", "eth_dest", multiple=True, metavar="PORT,MAC",
              help="Destination MAC for packets sent out of PORT (default 02:00:00:00:00:PORT).")
@click.option("--port-mac", "port_mac", multiple=True, metavar="PORT,MAC",
              help="MAC address of PORT, written as source MAC (default 02:70:63:61:70:PORT).")
@click.option("--rx-burst", type=int, default=32, show_default=True, help="Packets per rx burst (1..512).")
@click.option("--tx-burst", type=int, default=32, show_default=True, help="Direct-send threshold (1..512).")
@click.option("--max-pkt-len", type=int, help="l3fwd's --max-pkt-len (64..9600); above 2048 l3fwd cannot start "
              "over net_pcap. Frames over 2048 bytes are dropped on receive either way.")
@click.option("--alg", help="l3fwd's --alg: rte_acl's classify method (no effect on results).")
@click.option("--config", "config", metavar='"(PORT,QUEUE,LCORE),..."',
              help="l3fwd's --config: which lcore polls which RX queue, in order (default: one lcore, "
                   "queue 0 of every port with input). Inputs port<N>.q<Q>.pcap (or N.Q=FILE) feed RX queue Q.")
@click.option("--rss-key", metavar="HEX", help="Toeplitz key for spreading a port's capture over its RX "
              "queues (default the common 40-byte 6d5a56da...beac01fa).")
@click.option("--reta-size", type=int, default=128, show_default=True, help="RSS redirection table entries.")
@click.option("--jobs", type=int, default=1, show_default=True,
              help="Processes for one run (output identical to --jobs 1).")
@click.option("--cluster", metavar="ADDRESS|local:N",
              help="Run the chunks as Dask tasks: on the scheduler at ADDRESS (tcp://host:8786), or on a "
                   "LocalCluster of N worker processes (needs the [cluster] extra; output identical).")
@click.option("--trace", metavar="N|all", help="Write OUTDIR/trace.jsonl: what happened to each of the first N "
              "received packets (per lcore), or to every packet.")
@_output_format_option(_INPUTS_AUTO)
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as JSON on stdout.")
def run_command(inputs, outdir, portmask, lookup, lpm_flag, em_flag, ipv6, pipeline, rule_ipv4, rule_ipv6,
                eth_dest, port_mac, rx_burst, tx_burst, max_pkt_len, alg, config, rss_key, reta_size, jobs, cluster,
                trace, output_format, quiet, as_json):
    """Forward INPUT pcaps (a directory of port<N>.pcap, or N=FILE) as dpdk-l3fwd would."""
    lookup = _lookup_method(lookup, lpm_flag, em_flag)
    rx_queues = find_rx_queues(list(inputs))
    options = RunOptions(
        inputs={port: path for (port, queue), path in rx_queues.items() if queue is None},
        queue_inputs={key: path for key, path in rx_queues.items() if key[1] is not None},
        config=config,
        **({"rss_key": parse_rss_key(rss_key)} if rss_key else {}),
        reta_size=reta_size,
        outdir=outdir,
        portmask=None if portmask is None else parse_portmask(portmask),
        lookup=lookup,
        ipv6=ipv6,
        pipeline=pipeline,
        rule_ipv4=rule_ipv4,
        rule_ipv6=rule_ipv6,
        eth_dest=dict(parse_port_mac(x, "--eth-dest") for x in eth_dest),
        port_mac=dict(parse_port_mac(x, "--port-mac") for x in port_mac),
        rx_burst=rx_burst,
        tx_burst=tx_burst,
        max_pkt_len=max_pkt_len,
        alg=alg,
        jobs=jobs,
        cluster=cluster,
        trace=_trace_count(trace),
        output_format=output_format,
        progress=_progress_printer(quiet or as_json),
        announce=None if quiet or as_json else lambda text: click.echo(f"l3fwd-sim: {text}", err=True),
    )
    stats = run(options)
    _print_stats(stats, quiet, as_json)


@main.command("testpmd")
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", "outdir", required=True, type=_OUTPUT_DIR,
              help="Output directory: port<N>.pcap per enabled port, stats.json.")
@click.option("--forward-mode", type=click.Choice(FORWARD_MODES), default="io", show_default=True,
              help="testpmd's forwarding engine.")
@click.option("--port-topology", type=click.Choice(TOPOLOGIES), default="paired", show_default=True,
              help="Which port each port's stream transmits on (icmpecho always replies on the RX port).")
@click.option("--burst", type=int, default=32, show_default=True, help="Packets per rx burst (1..512).")
@click.option("--eth-peer", "eth_peer", multiple=True, metavar="PORT,MAC",
              help="Peer MAC of PORT, the destination mac mode writes (default 02:00:00:00:00:PORT).")
@click.option("--port-mac", "port_mac", multiple=True, metavar="PORT,MAC",
              help="MAC address of PORT (default 02:70:63:61:70:PORT, as net_pcap reports).")
@click.option("-p", "--portmask", help="Hex mask of forwarding ports (default: ports with an input).")
@_output_format_option(_INPUTS_AUTO)
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the stats as JSON on stdout.")
def testpmd_command(inputs, outdir, forward_mode, port_topology, burst, eth_peer, port_mac, portmask,
                    output_format, quiet, as_json):
    """Forward INPUT pcaps (a directory of port<N>.pcap, or N=FILE) as dpdk-testpmd's
    io, mac, macswap, 5tswap or icmpecho engine would."""
    stats = testpmd_run(TestpmdOptions(
        inputs=find_inputs(list(inputs)),
        outdir=outdir,
        forward_mode=forward_mode,
        port_topology=port_topology,
        burst=burst,
        portmask=None if portmask is None else parse_portmask(portmask),
        eth_peer=dict(parse_port_mac(x, "--eth-peer") for x in eth_peer),
        port_mac=dict(parse_port_mac(x, "--port-mac") for x in port_mac),
        output_format=output_format,
        progress=_progress_printer(quiet or as_json),
    ))
    _print_stats(stats, quiet, as_json)


_PATTERN_ONLY = ("ports", "count", "size", "proto", "port_map", "rule_ipv4", "rule_ipv6")


class _Int(click.ParamType):
    """An integer option bounded where it is parsed: out of range, or too long for Python
    to convert, it ends as one line naming the option."""
    name = "integer"

    def __init__(self, low: int, high: int):
        self.low, self.high = low, high

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value                      # a default
        return parse_int(value.strip(), max(param.opts, key=len), self.low, self.high)


@main.command("generate")
@click.argument("pattern", required=False)
@click.option("-o", "--output", "outdir", required=True, type=_OUTPUT_DIR,
              help="Output directory: port<N>.pcap per input port (ready for 'l3fwd-sim run DIR').")
@click.option("--streams", type=click.Path(path_type=Path), help="TOML stream file, instead of a PATTERN.")
@click.option("--ports", type=_Int(1, MAX_PORTS), default=4, show_default=True, help="Input ports to generate.")
@click.option("--count", type=_Int(0, MAX_COUNT), default=1000, show_default=True, help="Packets per port.")
@click.option("--size", default="64", show_default=True,
              help="Size on the wire (FCS included): N, A-B (uniform random) or imix (64/570/1518 at 7:4:1).")
@click.option("--rate", type=float, help="Packets per second per port; timestamps 1/rate apart [default: 1000000].")
@click.option("--seed", type=_Int(0, MAX_SEED), help="Seed of random patterns, sizes, fields and orders [default: 1].")
@click.option("--proto", type=click.Choice(["udp", "tcp"]), default="udp", show_default=True,
              help="L4 protocol of the patterns.")
@click.option("--map", "port_map", metavar="MAP",
              help="Output port of each input port: 0:1,1:0,... or 1,0,3,2 [default: p -> p^1].")
@click.option("--rule_ipv4", "--rule-ipv4", "rule_ipv4", type=click.Path(path_type=Path),
              help="Choose IPv4 destinations that route as intended under this l3fwd rule file (LPM, EM or ACL).")
@click.option("--rule_ipv6", "--rule-ipv6", "rule_ipv6", type=click.Path(path_type=Path),
              help="The same for IPv6.")
@click.option("--progress", is_flag=True, help="Draw a progress bar on stderr (when it is a terminal).")
@_output_format_option("pcap")
@click.option("--quiet", is_flag=True, help="Print nothing but errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.pass_context
def generate_command(ctx, pattern, outdir, streams, ports, count, size, rate, seed, proto, port_map,
                     rule_ipv4, rule_ipv6, progress, output_format, quiet, as_json):
    """Write test traffic: PATTERN (IPV4-CONT-BURST, IPV6-CONT-BURST, IPV4/IPV6-CONT-BURST,
    IPV4-<K>STREAMSX<G>, IPV6-<K>STREAMSX<G>, random, malformed) or --streams FILE."""
    from .traffic.generate import GenerateOptions, generate  # scapy and numpy set-up only for this command

    if streams is not None:
        given = [name for name in _PATTERN_ONLY
                 if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
        if pattern is not None or given:
            what = f"PATTERN {pattern!r}" if pattern is not None else f"--{given[0].replace('_', '-')}"
            raise SimError(f"--streams takes everything from the stream file; {what} does not apply")
    elif pattern is None:
        raise SimError("generate needs a PATTERN or --streams FILE")
    summary = generate(GenerateOptions(
        outdir=outdir, pattern=pattern, streams=streams, ports=ports, count=count, size=size, proto=proto,
        port_map=port_map, rule_ipv4=rule_ipv4, rule_ipv6=rule_ipv6, rate=rate, seed=seed,
        output_format=output_format, progress=_progress_printer(quiet=not progress or quiet or as_json)))
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    if quiet:
        return
    for warning in summary["warnings"]:
        click.echo(f"l3fwd-sim: warning: {warning}", err=True)
    for port, info in summary["ports"].items():
        click.echo(f"{info['file']}: {info['packets']} packets, {info['bytes']} bytes")
    click.echo(f"{summary['packets']} packets in {format_duration(summary['elapsed_seconds'])} "
               f"({format_rate(summary['packets'], summary['elapsed_seconds'])})")


@main.command("bench")
@click.option("--count", type=_Int(0, MAX_COUNT), default=1_000_000, show_default=True,
              help="Packets per pattern (4 ports; at least 4).")
@click.option("--lookup", "lookups", multiple=True, type=click.Choice(["lpm", "em", "fib"]),
              help="Lookup methods to measure (repeatable; default lpm and em).")
@click.option("-o", "--output", "outdir", type=_OUTPUT_DIR, default=Path("bench-out"),
              show_default=True, help="Keeps the traffic, outputs, bench.json and bench.png.")
@click.option("--jobs", type=int, default=1, show_default=True, help="Processes per run.")
@click.option("--no-testpmd", is_flag=True, help="Skip the testpmd io/macswap comparison.")
@click.option("--no-end-to-end", is_flag=True, help="Skip the imix and --jobs 2 runs.")
@click.option("--acl-rules", type=_Int(0, MAX_ACL_RULE_NUM), multiple=True, metavar="N",
              help="ACL rule-set sizes to measure (repeatable; default 1000 and 10000; 0 skips ACL).")
@click.option("--acl-build", type=_Int(0, MAX_ACL_RULE_NUM), default=100_000, show_default=True,
              help="Rules per family of the ACL build measured for time and peak RSS (0 skips it).")
@click.option("--no-trace", is_flag=True, help="Skip the run --trace all cost measurement.")
@click.option("--no-reference", is_flag=True, help="Skip the C reference forwarder (4x --count 64-byte packets, "
              "--count IMIX packets; built with the system compiler).")
@click.option("--json", "as_json", is_flag=True, help="Print bench.json on stdout.")
def bench_command(count, lookups, outdir, jobs, no_testpmd, no_end_to_end, acl_rules, acl_build, no_trace,
                  no_reference, as_json):
    """Re-run the 2014 l3fwd experiment: five traffic patterns, both pipelines."""
    from .bench import HEADER, BenchOptions, bench, check_options, format_table, plot
    options = BenchOptions(count=count, lookups=tuple(lookups) or ("lpm", "em"), outdir=outdir, jobs=jobs,
                           testpmd=not no_testpmd, end_to_end=not no_end_to_end,
                           acl=tuple(n for n in acl_rules if n) if acl_rules else (1_000, 10_000),
                           acl_build=acl_build, trace=not no_trace, reference=not no_reference,
                           progress=None if as_json else click.echo)
    check_options(options)                    # before the header: a bad option prints nothing else
    if not as_json:
        click.echo(HEADER)
    result = bench(options)
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    click.echo("\n".join(format_table(result).splitlines()[2 + len(result["rows"]):]))
    if plot(result, outdir / "bench.png"):
        click.echo(f"chart: {outdir / 'bench.png'}")
    click.echo(f"results: {outdir / 'bench.json'}")


@main.command("lookup")
@click.argument("keys", nargs=-1, required=True, metavar="KEY...")
@click.option("-p", "--portmask", help="Hex mask of enabled ports (default 0xffffffff: all 32, no route left out).")
@click.option("--lookup", type=click.Choice(LOOKUPS), help="Lookup method (default lpm; acl needs both rule files).")
@click.option("-L", "lpm_flag", is_flag=True, help="Same as --lookup lpm (legacy l3fwd flag).")
@click.option("-E", "em_flag", is_flag=True, help="Same as --lookup em (legacy l3fwd flag).")
@click.option("--ipv6", is_flag=True, help="l3fwd's --ipv6: EM installs the IPv6 flows instead of the IPv4 ones.")
@click.option("--rule_ipv4", "--rule-ipv4", "rule_ipv4", type=click.Path(path_type=Path),
              help="IPv4 rule file (used only with --rule_ipv6, as in l3fwd).")
@click.option("--rule_ipv6", "--rule-ipv6", "rule_ipv6", type=click.Path(path_type=Path),
              help="IPv6 rule file (used only with --rule_ipv4, as in l3fwd).")
@click.option("--port", type=int, metavar="N", help="Input port: where a miss is sent back (default: not resolved).")
@click.option("--json", "as_json", is_flag=True, help="Print the answers as JSON on stdout.")
def lookup_command(keys, portmask, lookup, lpm_flag, em_flag, ipv6, rule_ipv4, rule_ipv6, port, as_json):
    """What `run` does with a packet carrying each KEY, and which rule line decides it:
    a destination address (lpm, fib) or a 5-tuple "udp 198.18.0.1:9 > 198.18.0.0:9" (em, acl)."""
    from .l3fwd.lookup import LookupOptions, format_lookup, lookup as lookup_keys
    report = lookup_keys(LookupOptions(
        keys=list(keys), lookup=_lookup_method(lookup, lpm_flag, em_flag),
        portmask=None if portmask is None else parse_portmask(portmask),
        rule_ipv4=rule_ipv4, rule_ipv6=rule_ipv6, ipv6=ipv6, port=port))
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    for warning in report["warnings"]:
        click.echo(f"l3fwd-sim: warning: {warning}", err=True)
    click.echo(format_lookup(report))
