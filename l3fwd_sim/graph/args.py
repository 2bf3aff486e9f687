"""dpdk-l3fwd-graph's application options (``examples/l3fwd-graph/main.c``, ``parse_args``,
v26.07; l3fwd_graph.md §2), as the real program reads them, and its start-up checks of
``--config`` (``check_lcore_params``, ``init_lcore_rx_queues``, ``check_port_config``,
``get_port_n_rx_queues``) in its order, each refusal with its own message.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..dataplane.ports import MAX_PORTS, parse_port_mac, parse_portmask
from ..dataplane.queues import MAX_LCORE, MAX_RX_QUEUE_PER_LCORE, MAX_RX_QUEUE_PER_PORT, RxQueue, parse_config
from ..eal.args import getopt_long
from ..errors import SimError
from ..numbers import brief, c_strtoul

PROGRAM = "dpdk-l3fwd-graph"
MODELS = ("rtc", "dispatch")            # WORKER_MODEL_RTC, WORKER_MODEL_MCORE_DISPATCH
PCAP_NUM_CAP_DEFAULT = 1024             # graph_pcap.c: packets captured per graph when not told
NO_MAX_PKT_LEN = (1 << 32) - 1          # parse_max_pkt_len's -1 in a uint32_t: garbage or 0
# lcore_params_array_default: what runs without --config
DEFAULT_CONFIG = "(0,0,2),(0,1,2),(0,2,2),(1,0,2),(1,1,2),(1,2,2),(2,0,2),(3,0,3),(3,1,3)"

_SHORT = "p:P"
_LONG = ("config=", "eth-dest=", "no-numa", "max-pkt-len=", "per-port-pool", "pcap-enable", "pcap-num-cap=",
         "pcap-file-name=", "model=")


@dataclass
class GraphArgs:
    """What ``parse_args`` leaves, and the lines it printed (``console``)."""
    portmask: int = 0
    config: list[RxQueue] = field(default_factory=lambda: parse_config(DEFAULT_CONFIG))
    eth_dest: dict[int, bytes] = field(default_factory=dict)
    max_pkt_len: int | None = None      # None: not given (the port keeps its default MTU)
    pcap_enable: bool = False
    pcap_num_cap: int = PCAP_NUM_CAP_DEFAULT
    pcap_file_name: str | None = None   # None: $HOME/dpdk_graph_pcap_capture
    console: list[str] = field(default_factory=list)


def parse_args(argv: list[str]) -> GraphArgs:
    """l3fwd-graph's ``parse_args`` over the words after ``--``, in order. -P,
    --no-numa and --per-port-pool change nothing on pcap files; --model dispatch only
    warns (the sample is built with ``RTE_GRAPH_MODEL_SELECT = RTC``)."""
    args = GraphArgs()
    say = args.console.append
    for opt, value in getopt_long(argv, _SHORT, _LONG, PROGRAM):
        if opt == "-p":
            try:
                args.portmask = parse_portmask(value)
            except SimError as err:
                raise SimError(f"Invalid portmask: {err}") from None
        elif opt == "--config":
            try:
                args.config = parse_config(value)
                check_lcore_ids(args.config)
            except SimError as err:
                raise SimError(f"Invalid config: {err}") from None
        elif opt == "--eth-dest":
            port, mac = parse_port_mac(value, "Invalid eth-dest:")
            args.eth_dest[port] = mac
        elif opt == "--max-pkt-len":
            length = c_strtoul(value)
            args.max_pkt_len = length or NO_MAX_PKT_LEN
        elif opt == "--per-port-pool":
            say("Per port buffer pool is enabled")
        elif opt == "--pcap-enable":
            say("Packet capture enabled")
            args.pcap_enable = True
        elif opt == "--pcap-num-cap":
            args.pcap_num_cap = c_strtoul(value) or 0
            say(f"Number of packets to capture: {args.pcap_num_cap}")
            args.pcap_num_cap = args.pcap_num_cap or PCAP_NUM_CAP_DEFAULT   # 0: graph_pcap's default
        elif opt == "--pcap-file-name":
            args.pcap_file_name = value[:255]                              # rte_strlcpy into char[256]
            say(f"Pcap file name: {args.pcap_file_name}")
        elif opt == "--model":
            say(f"Use new worker model: {value}")
            if value not in MODELS:
                raise SimError(f"Invalid worker model: {value}")
            if value != "rtc":
                say("Warning: model mismatch, will use the RTE_GRAPH_MODEL_SELECT model")
    return args


def check_config(config: list[RxQueue], portmask: int, lcores: list[int], main_lcore: int,
                 ports: int) -> dict[int, list[RxQueue]]:
    """``check_lcore_params``, ``init_lcore_rx_queues`` and ``check_port_config`` in
    main()'s order: each worker lcore's RX queues in ``--config`` order (lcore id ->
    queues; only lcores that have some). ``ports``: how many ports the EAL probed."""
    for q in config:
        if q.queue >= MAX_RX_QUEUE_PER_PORT:
            raise SimError(f"Invalid queue number: {q.queue} (check_lcore_params() failed)")
        if q.lcore not in lcores:
            raise SimError(f"Error: lcore {q.lcore} is not enabled in lcore mask (check_lcore_params() failed)")
        if q.lcore == main_lcore:
            raise SimError(f"Error: lcore {q.lcore} is main lcore (check_lcore_params() failed: the main lcore "
                           "only prints the graph's statistics; give --config worker lcores)")
    rx: dict[int, list[RxQueue]] = {}
    for q in config:
        if len(rx.setdefault(q.lcore, [])) >= MAX_RX_QUEUE_PER_LCORE:
            raise SimError(f"Error: too many queues ({len(rx[q.lcore]) + 1}) for lcore: {q.lcore} "
                           "(init_lcore_rx_queues() failed)")
        rx[q.lcore].append(q)
    for q in config:
        if not portmask >> q.port & 1:
            raise SimError(f"Port {q.port} is not enabled in port mask (check_port_config() failed: -p "
                           f"0x{portmask:x})")
        if q.port >= ports:
            raise SimError(f"Port {q.port} is not present on the board (check_port_config() failed: {ports} "
                           f"port{'s' if ports != 1 else ''}, one per --vdev)")
    return rx


def rx_queue_count(config: list[RxQueue], port: int) -> int:
    """``get_port_n_rx_queues``: the port's queue ids, in ``--config`` order, must be
    0, 1, 2, ...; their number."""
    expected = 0
    for q in config:
        if q.port == port:
            if q.queue != expected:
                raise SimError(f"Queue ids of the port {port} must be in sequence and must start with 0")
            expected += 1
    return expected


def check_lcore_ids(config: list[RxQueue]) -> None:
    """``parse_config``'s own bound: "Invalid port/lcore id"."""
    for q in config:
        if q.port >= MAX_PORTS or q.lcore >= MAX_LCORE:
            raise SimError(f"Invalid port/lcore id {brief(str((q.port, q.queue, q.lcore)))}")
