"""``l3fwd-sim generate`` — the traffic-generator side (TRex, pktgen): named patterns,
TOML stream files, a field engine, scapy-built templates stamped by numpy."""
