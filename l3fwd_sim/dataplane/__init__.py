"""What l3fwd and testpmd share (EAL/ethdev's part): ports and the portmask, which
capture each RX port reads, the lcore's polling order and main loop, the TX buffering
model, statistics, and ``--jobs``."""
