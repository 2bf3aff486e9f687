"""dpdk-l3fwd-graph (``examples/l3fwd-graph``) on DPDK's graph and node libraries
(``lib/graph``, ``lib/node``): its options (``args``), built-in routes (``routes``), the
nodes (``nodes``: pkt_cls, ip4/ip6 lookup and rewrite, ethdev_tx, pkt_drop), a worker's
graph and its walks (``walk``, twinned by ``walks.c``), the node statistics
(``stats``), ``--pcap-enable``'s trace (``pcap_trace``), the run (``run``) and the
verbatim command line (``main``)."""
