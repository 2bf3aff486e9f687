"""``make fuzz``: share FUZZ_SECONDS among the fuzz targets collected, and say at the
end how many cases each ran."""
from __future__ import annotations

from fuzzing import FUZZ_SECONDS, TALLY


def pytest_collection_modifyitems(session, config, items):
    TALLY.targets = sum(1 for item in items if getattr(getattr(item, "function", None), "fuzz_target", False)) or 1


def pytest_terminal_summary(terminalreporter):
    if not TALLY.cases:
        return
    write = terminalreporter.write_line
    write(f"fuzz cases per target{f' (FUZZ_SECONDS={FUZZ_SECONDS:g})' if FUZZ_SECONDS else ''}:")
    for name, cases in sorted(TALLY.cases.items()):
        write(f"  {name:<45} {cases:>7} cases  {TALLY.seconds.get(name, 0):7.1f} s")
    write(f"  {'total':<45} {sum(TALLY.cases.values()):>7} cases  {sum(TALLY.seconds.values()):7.1f} s")
