"""Lookup tables with DPDK's observable semantics: ``rte_lpm`` / ``rte_lpm6`` / ``rte_fib``
(``lpm``) and ``rte_hash`` exact match (``hash``). They know nothing of packets or
rule files: l3fwd fills and queries them."""
