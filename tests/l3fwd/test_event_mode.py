"""l3fwd's event mode over net_pcap, as real v26.07 runs it (event_mode.md): it never
forwards, and refuses in a fixed order — option checks, rule files, "No Eventdev found",
the first enabled port's configure — while in poll mode ``--vdev event_sw0`` and the
``--event-vector`` options are accepted and change no output byte. Every line of
event_mode.md's table and real_command_lines.md's event refusals, with both kernels
where a run forwards."""
from __future__ import annotations

import pytest
from dpdk_lines import invoke
from forwarding import GOLDEN
from frames import read_pcap_frames
from refusals import assert_refused
from twins import KERNELS

from l3fwd_sim import compiled

MIX = GOLDEN / "mix_default"
ACL = f"--rule_ipv4={GOLDEN / 'acl' / 'acl_v4.cfg'} --rule_ipv6={GOLDEN / 'acl' / 'acl_v6.cfg'}"
CONFIGURE = "Cannot configure device: err=-22, port={port}"


def line(tmp_path, app: str, event_sw: bool = True, ports: int = 2) -> list[str]:
    """A dpdk-l3fwd line over the mix_default inputs, with the software event device
    (and a service core for it, EAL's ``-s``)."""
    argv = ["-l", "0", *(["--vdev", "event_sw0", "-s", "0x2"] if event_sw else [])]
    for port in range(ports):
        argv += ["--vdev", f"net_pcap{port},rx_pcap={MIX / 'in' / f'port{port}.pcap'},"
                           f"tx_pcap={tmp_path / f'port{port}.pcap'}"]
    return argv + ["--", *app.split()]


EVENT = "-p 0x3 --mode eventdev"
REFUSED = [                                  # (application options, event device?, the decisive message)
    (EVENT, True, CONFIGURE.format(port=0)),
    (EVENT + " --parse-ptype --relax-rx-offload", True, CONFIGURE.format(port=0)),
    (EVENT + " --lookup=em", True, CONFIGURE.format(port=0)),
    (EVENT + " --lookup=fib", True, CONFIGURE.format(port=0)),
    *[(EVENT + f" --eventq-sched {sched}", True, CONFIGURE.format(port=0)) for sched in ("atomic", "ordered", "parallel")],
    (EVENT + " --event-eth-rxqs 2", True, CONFIGURE.format(port=0)),
    (EVENT + " --event-vector --event-vector-size 64 --event-vector-tmo 1000", True, CONFIGURE.format(port=0)),
    (EVENT + " --rx-burst 16 --tx-burst 16 --eth-dest 1,aa:bb:cc:dd:ee:ff --max-pkt-len 1500", True,
     CONFIGURE.format(port=0)),
    ("-p 0x2 --mode eventdev", True, CONFIGURE.format(port=1)),            # "Skipping disabled port 0" first
    (f"-p 0xf --mode eventdev --lookup=acl {ACL}", True, CONFIGURE.format(port=0)),   # the rules' ports: 0-3
    (f"{EVENT} --lookup=acl", True, "needs both --rule_ipv4 and --rule_ipv6"),   # rule files come first
    (f"{EVENT} --lookup=acl --rule_ipv4={MIX / 'in' / 'port0.pcap'} --rule_ipv6={MIX / 'in' / 'port1.pcap'}", True,
     "port0.pcap"),
    (EVENT, False, "No Eventdev found"),
    (EVENT + " --config (0,0,0),(1,0,0)", True, "lcore config is not valid when event mode is selected"),
    (EVENT + " --config (0,0,0),(1,0,0)", False, "lcore config is not valid when event mode is selected"),
    ("-p 0xc --mode eventdev", True, "Failed to get Tx adapter port id: -19"),   # only ports that do not exist
    ("-p 0x3 --mode poll --mode eventdev", True, CONFIGURE.format(port=0)),      # the last --mode wins
]


@pytest.mark.parametrize("app,event_sw,needle", REFUSED,
                         ids=lambda v: str(v)[:48] if isinstance(v, str) else None)
def test_event_mode_refused_as_real_l3fwd(tmp_path, app, event_sw, needle):
    """Exit 2 with real l3fwd's decisive message, no tx file created."""
    assert_refused(invoke("dpdk-l3fwd", *line(tmp_path, app, event_sw)), needle)
    assert list(tmp_path.iterdir()) == []


def _poll(tmp_path, name: str, app: str, event_sw: bool = False):
    out = tmp_path / name
    out.mkdir()
    result = invoke("dpdk-l3fwd", *line(out, app, event_sw))
    assert result.exit_code == 0, result.output
    return result, {port: read_pcap_frames(out / f"port{port}.pcap") for port in (0, 1)}


POLL = "-p 0x3 --config (0,0,0),(1,0,0) --parse-ptype --relax-rx-offload"


@pytest.mark.parametrize("kernels", KERNELS)
@pytest.mark.parametrize("extra,event_sw,console", [
    ("", True, None),                                                       # event_sw0 is never opened
    (" --event-vector", False, "vector size set to default (512)"),
    (" --event-vector --event-vector-size 16 --event-vector-tmo 1000", True, "event vectorization is enabled"),
    (" --mode poll", False, None), (" --mode bogus", False, None), (" --mode eventdev --mode poll", True, None),
])
def test_poll_mode_takes_event_options_and_forwards_the_same(tmp_path, kernels, extra, event_sw, console):
    with compiled.using(kernels):
        _, plain = _poll(tmp_path, "plain", POLL)
        result, other = _poll(tmp_path, "other", POLL + extra, event_sw)
    assert other == plain and any(plain.values())
    if console:
        assert console in result.stdout.splitlines()


@pytest.mark.parametrize("extra,needle", [(" --event-eth-rxqs 2", "eth_rx_queues is valid only when event mode"),
                                          (" --eventq-sched atomic", "eventq_sched is valid only when event mode")])
def test_poll_mode_refuses_event_only_options(tmp_path, extra, needle):
    assert_refused(invoke("dpdk-l3fwd", *line(tmp_path, POLL + extra, True)), needle)
