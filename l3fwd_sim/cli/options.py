"""What several commands share: option types, the --output-format option, printing
the stats and a progress bar."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from click.core import ParameterSource

from ..capture.location import as_location
from ..capture.writers import OUTPUT_FORMATS
from ..dataplane.stats import format_table
from ..errors import SimError
from ..l3fwd.args import (LOOKUPS, check_event_options, choose_lookup, parse_link_speed, parse_mbcache, parse_mode,
                          parse_queue_size)
from ..l3fwd.event import EVENT_MODE_REFUSED
from ..releases import DEFAULT, ENVIRONMENT, RELEASES
from . import tell


class OutputDirType(click.ParamType):
    """``-o DIR``: a path or an fsspec URL (kept whole: ``Path`` would fold its ``//``);
    an empty string is an error, not the current directory."""
    name = "directory"

    def convert(self, value, param, ctx):
        if isinstance(value, Path):
            return value
        if not value:
            self.fail("an empty string; name a directory", param, ctx)
        return as_location(value)


OUTPUT_DIR = OutputDirType()


def print_stats(stats: dict, quiet: bool, as_json: bool) -> None:
    """The stats as JSON, or the warnings and the table; ``quiet``: only the warnings
    that say input was lost (a record cut short): the outputs lack it."""
    if as_json:
        click.echo(json.dumps(stats, indent=2))
    elif quiet:
        warn_now(stats.get("input_losses", []))
    else:
        for warning in stats["warnings"]:
            tell(f"warning: {warning}")
        click.echo(format_table({**stats, "warnings": []}))


def warn_now(lines: list[str]) -> None:
    """Warnings told at once, whatever ``--quiet`` says: about the inputs (a capture a
    directory holds under another name, left out), what changes the result."""
    for line in lines:
        tell(f"warning: {line}")


class ProgressBar:
    """``[#######                  ]  28%`` on one line of a terminal, redrawn in place
    (``\\r``) whenever ``bar(done, total)`` moves the percentage. The line is ended —
    so that whatever is printed next (a warning, the summary table, an error) starts on
    a fresh line — when ``done`` reaches ``total`` or at :meth:`close`."""

    WIDTH = 25                                   # '#' for every 4 %

    def __init__(self, stream):
        self.stream = stream
        self.shown = -1                          # the percentage on screen; -1: nothing drawn yet
        self.open = False                        # drawn, and its line not ended

    def __call__(self, done: int, total: int) -> None:
        percent = max(0, min(100, 100 * done // max(total, 1)))
        if percent != self.shown:
            self._draw(percent)
        if percent == 100:
            self._end()

    def _draw(self, percent: int) -> None:
        click.echo(f"\r[{'#' * (percent // 4):<{self.WIDTH}}] {percent:3d}%", file=self.stream, nl=False)
        self.shown, self.open = percent, True

    def _end(self) -> None:
        if self.open:
            click.echo("", file=self.stream)
            self.open = False

    def close(self, completed: bool = True) -> None:
        """End the bar's line: at 100 % when the work is done (a caller's last count may
        stop short of its total: ``run`` counts the records, not the files' headers),
        erased when it was not (an error or Ctrl-C then prints where the bar was)."""
        if not self.open:
            return
        if completed:
            self._draw(100)
            self._end()
        else:
            click.echo("\r" + " " * (self.WIDTH + 7) + "\r", file=self.stream, nl=False)
            self.open = False


def progress_printer(quiet: bool, stream=None) -> ProgressBar | None:
    """The progress bar of a command (``run``, ``testpmd``, ``generate``) on ``stream``
    (default stderr), or None when ``quiet`` or the stream is not a terminal. The command
    calls :func:`end_progress` when its work is done, before it prints anything more; if
    the work fails instead, the bar is erased as the command's click context closes
    (before the error is printed)."""
    stream = sys.stderr if stream is None else stream
    if quiet or not stream.isatty():
        return None
    bar = ProgressBar(stream)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(lambda: bar.close(completed=False))    # a no-op once ended
    return bar


def end_progress(bar: ProgressBar | None) -> None:
    """The command's work is done: end its bar (if any) at 100 % on a line of its own."""
    if bar is not None:
        bar.close()


def table_options(portmask_help: str, legacy_flags: bool = True):
    """The options that say which of l3fwd's tables a command builds, as ``run``,
    ``lookup`` and ``rules check`` share them: ``-p/--portmask``, ``--lookup`` (checked by
    :func:`lookup_method`: one line naming the choices), with ``legacy_flags`` l3fwd's
    ``-L``/``-E`` and ``--ipv6``, and ``--rule_ipv4``/``--rule_ipv6`` (also spelled with
    a dash). The command gets ``portmask, lookup, [lpm_flag, em_flag, ipv6,] rule_ipv4,
    rule_ipv6``."""
    options = [click.option("-p", "--portmask", metavar="PORTMASK", help=portmask_help),
               click.option("--lookup", metavar="|".join(LOOKUPS),
                            help="Lookup method (default lpm; acl needs both rule files).")]
    if legacy_flags:
        options += [click.option("-L", "lpm_flag", is_flag=True, help="Same as --lookup lpm (legacy l3fwd flag)."),
                    click.option("-E", "em_flag", is_flag=True, help="Same as --lookup em (legacy l3fwd flag)."),
                    click.option("--ipv6", is_flag=True,
                                 help="l3fwd's --ipv6: EM installs the IPv6 flows instead of the IPv4 ones.")]
    options += [click.option(f"--rule_ipv{family}", f"--rule-ipv{family}", f"rule_ipv{family}",
                             type=click.Path(path_type=Path),
                             help=f"IPv{family} rule file (used only with --rule_ipv{10 - family}, as in l3fwd).")
                for family in (4, 6)]

    def apply(command):
        for option in reversed(options):
            command = option(command)
        return command
    return apply


def lookup_method(lookup: str | None, lpm_flag: bool = False, em_flag: bool = False) -> str:
    """``--lookup``, ``-L`` or ``-E`` (default lpm); naming two is an error, as in l3fwd."""
    chosen = None
    for mode, given in (("lpm", lpm_flag), ("em", em_flag), (lookup, lookup is not None)):
        if given:
            chosen = choose_lookup(chosen, mode)
    return chosen or "lpm"


# l3fwd's options that change nothing on pcap files, or that are checked only: (flag?, help)
_APP_OPTIONS = {
    "-P": (True, "Promiscuous mode (no effect: a pcap port receives every frame)."),
    "--parse-ptype": (True, "Software packet-type parsing (run's ports always parse; needed by dpdk-l3fwd's "
                            "net_pcap vdevs)."),
    "--relax-rx-offload": (True, "Drop RX offloads the port lacks (needed by dpdk-l3fwd's net_pcap vdevs)."),
    "--no-numa": (True, "Disable NUMA awareness (no effect)."),
    "--per-port-pool": (True, "One mbuf pool per port (no effect)."),
    "--disable-rss": (True, "RSS off: a port's whole capture goes to its RX queue 0."),
    "--rx-queue-size": (False, "RX descriptors, 1..65535 (checked; no effect: net_pcap never overruns)."),
    "--tx-queue-size": (False, "TX descriptors, 1..65535 (checked; no effect)."),
    "--mbcache": (False, "Mempool cache size, at most 512 (checked; no effect)."),
    "--hash-entry-num": (False, "Ignored, as l3fwd ignores it since v23.03."),
    "--eth-link-speed": (False, "Forced link speed; 10 and 100 are refused, as l3fwd does (else no effect)."),
    "--mode": (False, "poll (modelled); eventdev is refused, as real l3fwd over net_pcap cannot run it."),
    "--eventq-sched": (False, "Event mode only: refused in poll mode, as l3fwd does."),
    "--event-eth-rxqs": (False, "Event mode only: refused in poll mode, as l3fwd does."),
    "--event-vector": (True, "Event vectorization: accepted in poll mode, no effect (as in l3fwd)."),
    "--event-vector-size": (False, "With --event-vector (no effect in poll mode)."),
    "--event-vector-tmo": (False, "With --event-vector (no effect in poll mode)."),
}


def _param(option: str) -> str:
    return {"-P": "promiscuous"}.get(option, option.lstrip("-").replace("-", "_"))


_APP_METAVARS = {"--eth-link-speed": "MBPS", "--mode": "poll|eventdev", "--eventq-sched": "ordered|atomic|parallel",
                 "--event-vector-tmo": "NS"}       # the others take a number


def l3fwd_app_options(command):
    """Add the dpdk-l3fwd options above to ``command`` (as ``**app`` keyword arguments)."""
    for option, (flag, text) in reversed(_APP_OPTIONS.items()):
        command = click.option(option, _param(option), is_flag=flag, default=False if flag else None,
                               metavar=None if flag else _APP_METAVARS.get(option, "N"), help=text)(command)
    return command


def check_app_options(app: dict, config: bool) -> list[str]:
    """l3fwd's checks of those options (``config``: --config was given); the notes it
    prints. Event mode is refused after them: real l3fwd cannot run it over net_pcap."""
    event_mode = parse_mode(app["mode"], False) if app["mode"] is not None else False
    notes = check_event_options(event_mode, config, app["eventq_sched"] is not None,
                                app["event_eth_rxqs"] is not None, app["event_vector"], app["event_vector_size"],
                                app["event_vector_tmo"])
    if event_mode:
        raise SimError(f"--mode eventdev: {EVENT_MODE_REFUSED}")
    for option in ("--rx-queue-size", "--tx-queue-size"):
        if app[_param(option)] is not None:
            parse_queue_size(app[_param(option)], option)
    if app["mbcache"] is not None:
        parse_mbcache(app["mbcache"])
    if app["eth_link_speed"] is not None:
        parse_link_speed(app["eth_link_speed"])
    return notes + (["Hash entry number will be ignored"] if app["hash_entry_num"] is not None else [])


def dpdk_option(command):
    """``--dpdk VERSION``: the DPDK release whose l3fwd/testpmd to model (releases.py)."""
    return click.option("--dpdk", type=click.Choice(RELEASES), default=None,
                        help=f"DPDK release to model: an LTS line's newest point release or v26.07 (default "
                             f"{DEFAULT}, or {ENVIRONMENT}). docs/releases.md lists what each changes.")(command)


def given_options(names) -> list[str]:
    """Of the options ``names`` (without dashes), those given on the command line."""
    ctx = click.get_current_context()
    return [name for name in names if ctx.get_parameter_source(name.replace("-", "_")) is ParameterSource.COMMANDLINE]


def output_format_option(auto: str):
    """``--output-format`` of a command whose ``auto`` means ``auto``."""
    return click.option("--output-format", type=click.Choice(OUTPUT_FORMATS), default="auto", show_default=True,
                        help=f"Output files: classic pcap (port<N>.pcap) or pcapng (port<N>.pcapng, 64-bit time "
                             f"stamps: past 2106 too); auto = {auto}.")


INPUTS_AUTO = "pcapng when every input is pcapng, else pcap"
