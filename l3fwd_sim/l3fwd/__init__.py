"""dpdk-l3fwd (``examples/l3fwd``): packet-type parsing (``ptype``), RFC 1812 checks
(``rfc1812``), rule files (``rules``) and route setup (``routing``, ``em``), the two
forwarding paths (``simple``, ``multi``, chosen in ``pipelines``) and ``run``. The
default rule files dpdk-l3fwd builds in are shipped as ``routes/*.cfg``."""
