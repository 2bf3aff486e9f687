"""Capture I/O — what DPDK's ``net_pcap`` driver and libpcap do: read pcap/pcapng
(gzip too) into record batches, convert link types to Ethernet, write the per-port
output pcaps atomically. The byte loops (``kernels``) have compiled twins
(``records.c``)."""
