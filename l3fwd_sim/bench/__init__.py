"""``l3fwd-sim bench``: the 2014 l3fwd experiment re-run in the simulator
(:mod:`.experiment`), and the simulator measured against a plain C forwarder doing the
same work on the same files (:mod:`.c_reference`)."""
from .experiment import (HEADER, SEED_GAIN_PERCENT, BenchOptions, bench, check_options, format_table, plot,
                         write_acl_rules)

__all__ = ["HEADER", "SEED_GAIN_PERCENT", "BenchOptions", "bench", "check_options", "format_table", "plot",
           "write_acl_rules"]
