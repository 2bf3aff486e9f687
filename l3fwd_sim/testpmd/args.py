"""dpdk-testpmd's application options (``app/test-pmd/parameters.c``, v26.07) for a
non-interactive run over net_pcap ports: what ``l3fwd-sim dpdk-testpmd`` takes after
``--``. Options that change what is forwarded are modelled; options of memory, offloads,
statistics or generating engines are accepted and change nothing here; the rest is refused
in one line."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..dataplane.ports import parse_port_mac, parse_portmask
from ..eal.args import getopt_long
from ..errors import SimError
from ..numbers import brief, c_atoi
from .run import FORWARD_MODES, MAX_PKT_BURST, TOPOLOGIES

# testpmd's other engines: real, but generating or checksumming traffic, not modelled here
UNMODELLED_MODES = ("txonly", "flowgen", "csum", "noisy", "recycle_mbufs", "ieee1588", "shared_rxq", "shared-rxq")
_TAKES = ("forward-mode=", "port-topology=", "burst=", "eth-peer=", "rxq=", "txq=", "nb-cores=", "nb-ports=",
          "portmask=")
_FLAGS = ("auto-start", "interactive", "no-flush-rx", "tx-first", "help")
# accepted, no effect on pcap ports (descriptors, pools, NUMA, statistics, offloads, generator settings)
_QUIET = ("rxd=", "txd=", "mbcache=", "total-num-mbufs=", "mbuf-size=", "socket-num=", "port-numa-config=",
          "ring-numa-config=", "stats-period=", "display-xstats=", "coremask=", "max-pkt-len=", "mp-alloc=",
          "txpkts=", "tx-ip=", "tx-udp=", "txonly-flows=", "flowgen-flows=", "flowgen-clones=", "rx-offloads=",
          "tx-offloads=", "txpt=", "txht=", "txwt=", "txfreet=", "txrst=", "rxpt=", "rxht=", "rxwt=", "rxfreet=",
          "numa", "no-numa", "mp-anon", "record-core-cycles", "record-burst-stats", "no-lsc-interrupt",
          "no-rmv-interrupt", "disable-link-check", "rss-ip", "rss-udp", "disable-rss", "enable-rss",
          "txonly-multi-flow", "disable-crc-strip", "enable-rx-cksum", "mlockall", "no-mlockall", "latencystats=",
          "bitrate-stats=")
NOT_INTERACTIVE = ("interactive mode is not modelled: drop -i; without it testpmd starts forwarding by itself, "
                   "as l3fwd-sim does")


@dataclass
class TestpmdArgs:
    """What testpmd's ``launch_args_parse`` leaves, and the lines it printed."""
    forward_mode: str = "io"
    port_topology: str = "paired"
    burst: int = 32
    eth_peer: dict[int, bytes] = field(default_factory=dict)
    rxq: int = 1
    txq: int = 1
    nb_cores: int = 1
    nb_ports: int | None = None
    portmask: int | None = None
    flush_rx: bool = True
    console: list[str] = field(default_factory=list)


def parse_args(argv: list[str], ports: int, max_rxq: int, max_txq: int, forwarding_lcores: int) -> TestpmdArgs:
    """testpmd's options over the words after ``--`` (``ports`` net_pcap ports, whose
    smallest queue counts bound --rxq/--txq; ``forwarding_lcores``: every EAL lcore but
    the main one)."""
    args = TestpmdArgs()
    say = args.console.append
    for opt, value in getopt_long(argv, "ahi", (*_TAKES, *_FLAGS, *_QUIET), "dpdk-testpmd"):
        if opt in ("-i", "--interactive"):
            raise SimError(f"{opt}: {NOT_INTERACTIVE}")
        if opt in ("-a", "--auto-start"):
            say("Auto-start selected")
        elif opt in ("-h", "--help", "--tx-first"):
            raise SimError(f"dpdk-testpmd {opt}: not modelled")
        elif opt == "--forward-mode":
            if value in UNMODELLED_MODES:
                raise SimError(f"--forward-mode={brief(value)}: not modelled (generates or checksums traffic); "
                               f"modelled: {', '.join(FORWARD_MODES)}")
            if value in FORWARD_MODES:
                args.forward_mode = value
                say(f"Set {value} packet forwarding mode")
            else:                                  # set_pkt_forwarding_mode keeps the mode it had
                say(f"Invalid {value} packet forwarding mode")
        elif opt == "--port-topology":
            if value not in TOPOLOGIES:
                raise SimError(f"port-topology {brief(value)} invalid - must be: paired, chained or loop")
            args.port_topology = value
        elif opt == "--burst":
            n = c_atoi(value)
            if n == 0:
                raise SimError(f"--burst={brief(value)}: PMD does not recommend a burst size. Provided value must "
                               f"be between 1 and {MAX_PKT_BURST}")
            if not 0 < n <= MAX_PKT_BURST:
                raise SimError(f"--burst={brief(value)}: burst must be between1 and {MAX_PKT_BURST}")
            args.burst = n
        elif opt == "--eth-peer":
            port, mac = parse_port_mac(value, "--eth-peer")
            args.eth_peer[port] = mac
        elif opt in ("--rxq", "--txq"):
            n, most = c_atoi(value), max_rxq if opt == "--rxq" else max_txq
            if not 0 <= n <= most:
                raise SimError(f"{opt.lstrip('-')} {n} invalid - must be >= 0 && <= {most}")
            if n == 0:
                raise SimError(f"{opt}=0: ports without {opt.lstrip('-')[:2].upper()} queues are not modelled")
            setattr(args, opt.lstrip("-"), n)
        elif opt == "--nb-cores":
            n = c_atoi(value)
            if not 0 < n <= forwarding_lcores:
                raise SimError(f"nb-cores should be > 0 and <= {forwarding_lcores}")
            args.nb_cores = n
        elif opt == "--nb-ports":
            n = c_atoi(value)
            if not 0 < n <= ports:
                raise SimError(f"--nb-ports={brief(value)}: Invalid port {n}")
            args.nb_ports = n
        elif opt == "--portmask":
            args.portmask = parse_portmask(value)
        elif opt == "--no-flush-rx":
            args.flush_rx = False
    return args
