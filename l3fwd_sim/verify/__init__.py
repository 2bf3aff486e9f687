"""``l3fwd-sim verify``: a real dpdk-l3fwd or dpdk-testpmd binary run on a command line
(``real.py``) and the simulator run on the same line (``side.py``), their transmitted
files compared (``verify.py``)."""
