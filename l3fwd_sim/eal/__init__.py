"""The EAL part of a real DPDK command line (``[EAL options] -- [app options]``) and the
net_pcap ports it creates: what ``l3fwd-sim dpdk-l3fwd`` and ``dpdk-testpmd`` read before
the application's own options (``eal/args.py``: lcores, ``--vdev``, accepted options;
``eal/net_pcap.py``: the vdev's queues and what the device can and cannot do)."""
