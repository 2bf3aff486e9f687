"""dpdk-testpmd (``app/test-pmd``): the run loop and its forwarding engines — io, mac,
macswap (``engines``), 5tswap (``five_tuple_swap``), icmpecho — on the shared dataplane."""
