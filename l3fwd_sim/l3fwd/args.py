"""dpdk-l3fwd's application options (``examples/l3fwd/main.c``, ``parse_args``, v26.07),
as real l3fwd reads them: what ``l3fwd-sim dpdk-l3fwd`` takes after ``--``, and the
checks ``l3fwd-sim run`` applies to the same options.

Each ``parse_*`` below is one of l3fwd's parsers: its refusals (one line, l3fwd's own
message) and what it silently ignores (``--mbcache abc``, ``--mode bogus``) are l3fwd's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..dataplane.ports import parse_port_mac, parse_portmask
from ..eal.args import getopt_long
from ..errors import SimError
from ..releases import CHANGES, OPTION_ROWS, Release, release
from ..numbers import brief, c_atoi, c_strtoul, parse_int

MAX_PKT_BURST = 512                    # l3fwd.h: the largest burst, and the TX buffer
DEFAULT_PKT_BURST = 32
MEMPOOL_CACHE_MAX = 512                # RTE_MEMPOOL_CACHE_MAX_SIZE
QUEUE_SIZE_MAX = 65535                 # UINT16_MAX descriptors
VECTOR_SIZE_DEFAULT = MAX_PKT_BURST    # l3fwd.h
VECTOR_TMO_NS_DEFAULT = 1_000_000      # l3fwd.h: 1E6 ns
LOOKUPS = ("lpm", "em", "fib", "acl")
TWO_LOOKUPS = "Only one lookup mode is allowed at a time!"
DEFAULT_LOOKUP = "Neither ACL, LPM, EM, or FIB selected, defaulting to LPM"

_SHORT = "p:PLE"
_LONG = ("config=", "eth-link-speed=", "rx-queue-size=", "tx-queue-size=", "eth-dest=", "no-numa", "ipv6",
         "max-pkt-len=", "hash-entry-num=", "parse-ptype", "relax-rx-offload", "disable-rss", "per-port-pool",
         "mode=", "eventq-sched=", "event-eth-rxqs=", "lookup=", "event-vector", "event-vector-size=",
         "event-vector-tmo=", "rule_ipv4=", "rule_ipv6=", "alg=", "rx-burst=", "tx-burst=", "mbcache=")


def parse_queue_size(text: str, option: str) -> int:
    """``--rx-queue-size`` / ``--tx-queue-size`` (``parse_queue_size``): 1..65535."""
    name = option.lstrip("-")
    value = c_strtoul(text)
    if value is None or value == 0:
        raise SimError(f"{option} {brief(text)}: Invalid {name}")
    if value > QUEUE_SIZE_MAX:
        raise SimError(f"{option} {brief(text)}: {name} {value if value < 1 << 64 else text} > {QUEUE_SIZE_MAX}")
    return value


def parse_mbcache(text: str) -> int | None:
    """``--mbcache`` (``parse_mbcache_size``): at most 512; a non-number is ignored (None)."""
    value = c_strtoul(text)
    if value is not None and value > MEMPOOL_CACHE_MAX:
        raise SimError(f"--mbcache {brief(text)}: mbcache must be >= 0 and <= {MEMPOOL_CACHE_MAX}")
    return value


def parse_link_speed(text: str) -> None:
    """``--eth-link-speed`` (``atoi``): 10 and 100 Mb/s cannot be forced."""
    if c_atoi(text) in (10, 100):
        raise SimError(f"--eth-link-speed {brief(text)}: Unsupported fixed speed")


def parse_pkt_burst(text: str, rx: bool, current: int) -> tuple[int, str | None]:
    """``--rx-burst`` / ``--tx-burst`` (``parse_pkt_burst``): the burst size and l3fwd's
    message, if it prints one. A non-number is ignored; above 512 or 0 keeps ``current``
    (net_pcap recommends no RX burst size)."""
    value = c_strtoul(text)
    if value is None:
        return current, None
    if value > MAX_PKT_BURST:
        return current, f"User provided burst must be <= {MAX_PKT_BURST}. Using default value {current}"
    if value > 0:
        return value, None
    if rx:
        return current, (f"PMD does not recommend a burst size. Using default value {current}. "
                         f"User provided value must be in [1, {MAX_PKT_BURST}]")
    return current, f"User provided TX burst is 0. Using default value {current}"


def parse_mode(text: str, current: bool) -> bool:
    """``--mode``: whether event mode is selected — ``poll`` and ``eventdev`` say so, any
    other word leaves it as it was (l3fwd ignores it); the last one wins."""
    return {"poll": False, "eventdev": True}.get(text, current)


def check_event_options(event_mode: bool, config: bool, eventq_sched: bool, eth_rx_queues: bool, vector: bool,
                        vector_size: str | None, vector_tmo: str | None) -> list[str]:
    """``parse_args``' checks of the event options once every option is read
    (main.c:1060-1086), in its order; the lines it prints. ``vector_size``/``vector_tmo``:
    the last ``--event-vector-size``/``--event-vector-tmo`` given (``strtol`` into a
    uint16_t, ``strtoull``). In poll mode the vector options are accepted and change
    nothing."""
    if event_mode and config:
        raise SimError("--mode eventdev with --config: lcore config is not valid when event mode is selected")
    if not event_mode and eth_rx_queues:
        raise SimError("--event-eth-rxqs: eth_rx_queues is valid only when event mode is selected")
    if not event_mode and eventq_sched:
        raise SimError("--eventq-sched: eventq_sched is valid only when event mode is selected")
    lines = ["event vectorization is enabled"] if vector else []
    if vector and not c_atoi(vector_size or "0") & 0xFFFF:
        lines.append(f"vector size set to default ({VECTOR_SIZE_DEFAULT})")
    if vector and not c_atoi(vector_tmo or "0"):
        lines.append(f"vector timeout set to default ({VECTOR_TMO_NS_DEFAULT} ns)")
    return lines


def choose_lookup(current: str | None, new: str) -> str:
    """``-E``, ``-L`` and ``--lookup``: one of them, once."""
    if current is not None:
        raise SimError(f"{TWO_LOOKUPS} (-E, -L, --lookup)")
    if new not in LOOKUPS:
        raise SimError(f"--lookup {brief(new)}: Invalid lookup option! Accepted options: acl, em, lpm, fib")
    return new


@dataclass
class L3fwdArgs:
    """What ``parse_args`` leaves: the options that shape a run, and the lines l3fwd
    printed while parsing (``console``)."""
    portmask: int = 0
    lookup: str = "lpm"
    config: str | None = None
    rule_ipv4: str | None = None
    rule_ipv6: str | None = None
    ipv6: bool = False
    max_pkt_len: int | None = None
    alg: str | None = None
    eth_dest: dict[int, bytes] = field(default_factory=dict)
    rx_burst: int = DEFAULT_PKT_BURST
    tx_burst: int = DEFAULT_PKT_BURST
    parse_ptype: bool = False
    relax_rx_offload: bool = False
    disable_rss: bool = False
    event_mode: bool = False               # --mode eventdev: set up by l3fwd/event.py, which refuses as l3fwd does
    console: list[str] = field(default_factory=list)

    def run_options(self) -> dict:
        """The ``RunOptions`` fields these options set."""
        return dict(portmask=self.portmask, lookup=self.lookup, config=self.config, rule_ipv4=self.rule_ipv4,
                    rule_ipv6=self.rule_ipv6, ipv6=self.ipv6, max_pkt_len=self.max_pkt_len, alg=self.alg,
                    eth_dest=self.eth_dest, rx_burst=self.rx_burst, tx_burst=self.tx_burst,
                    parse_ptype=self.parse_ptype, relax_rx_offload=self.relax_rx_offload,
                    disable_rss=self.disable_rss)


def refuse_unknown(options: list[str], dpdk: Release) -> None:
    """An option (without dashes) that l3fwd of release ``dpdk`` does not have: refused
    as its getopt_long refuses it ("Invalid L3FWD parameters"), saying when it came."""
    for option in options:
        if not dpdk.knows(option):
            change = CHANGES[OPTION_ROWS[option]]
            raise SimError(f"dpdk-l3fwd: unrecognized option '--{option}' ({dpdk.label}'s l3fwd has no --{option}: it "
                           f"came with {change.since}, {change.commit})")


def parse_args(argv: list[str], dpdk: Release | None = None) -> L3fwdArgs:
    """l3fwd's ``parse_args`` over the words after ``--``, in order, as release ``dpdk``
    (default: the default profile) has them."""
    dpdk = dpdk or release()
    refuse_unknown([word[2:].partition("=")[0] for word in argv if word.startswith("--")], dpdk)
    args = L3fwdArgs()
    lookup = None
    eventq_sched = eth_rx_queues = vector = False
    vector_size = vector_tmo = None
    say = args.console.append
    known = tuple(name for name in _LONG if dpdk.knows(name.rstrip("=")))
    for opt, value in getopt_long(argv, _SHORT, known, "dpdk-l3fwd"):
        if opt == "-p":
            args.portmask = parse_portmask(value)
        elif opt in ("-E", "-L", "--lookup"):
            lookup = choose_lookup(lookup, {"-E": "em", "-L": "lpm"}.get(opt, value))
        elif opt == "--config":
            args.config = value
        elif opt == "--eth-link-speed":
            parse_link_speed(value)
        elif opt in ("--rx-queue-size", "--tx-queue-size"):
            parse_queue_size(value, opt)
        elif opt in ("--rx-burst", "--tx-burst"):
            rx = opt == "--rx-burst"
            burst, message = parse_pkt_burst(value, rx, args.rx_burst if rx else args.tx_burst)
            setattr(args, "rx_burst" if rx else "tx_burst", burst)
            if message:
                say(f"L3FWD: {message}")
        elif opt == "--mbcache":
            parse_mbcache(value)
        elif opt == "--eth-dest":
            port, mac = parse_port_mac(value, "--eth-dest")
            args.eth_dest[port] = mac
        elif opt == "--ipv6":
            args.ipv6 = True
        elif opt == "--max-pkt-len":
            args.max_pkt_len = parse_int(value, "--max-pkt-len", 0, 1 << 32)
        elif opt == "--hash-entry-num":
            say("Hash entry number will be ignored")
        elif opt == "--parse-ptype":
            say("soft parse-ptype is enabled")
            args.parse_ptype = True
        elif opt == "--relax-rx-offload":
            say("Rx offload is relaxed")
            args.relax_rx_offload = True
        elif opt == "--disable-rss":
            say("RSS is disabled")
            args.disable_rss = True
        elif opt == "--per-port-pool":
            say("per port buffer pool is enabled")
        elif opt == "--mode":
            args.event_mode = parse_mode(value, args.event_mode)
        elif opt == "--eventq-sched":
            eventq_sched = True
        elif opt == "--event-eth-rxqs":
            eth_rx_queues = True
        elif opt == "--event-vector":
            vector = True
        elif opt == "--event-vector-size":
            vector_size = value
        elif opt == "--event-vector-tmo":
            vector_tmo = value
        elif opt == "--rule_ipv4":
            args.rule_ipv4 = value
        elif opt == "--rule_ipv6":
            args.rule_ipv6 = value
        elif opt == "--alg":
            args.alg = value
        # -P (promiscuous) and --no-numa change nothing on pcap files
    args.console += check_event_options(args.event_mode, args.config is not None, eventq_sched, eth_rx_queues,
                                        vector, vector_size, vector_tmo)
    if lookup is None:
        say(DEFAULT_LOOKUP)
    args.lookup = lookup or "lpm"
    if dpdk.has("burst_options"):
        say(f"L3FWD: Using Rx burst {args.rx_burst} Tx burst {args.tx_burst}")
    return args
