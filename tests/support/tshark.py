"""Wireshark's own dissector as an oracle (the Debian package ``tshark``): what a user
sees of a capture in Wireshark, read field by field."""
from __future__ import annotations

import shutil
import subprocess

import pytest

TSHARK = shutil.which("tshark")
needs_tshark = pytest.mark.skipif(TSHARK is None, reason="tshark not installed: apt-get install tshark "
                                                         "(.ci/run installs it)")


def fields(path, *names: str, display_filter: str | None = None) -> list[list[str]]:
    """Per packet of ``path``, the values of the fields ``names`` (``frame.comment``,
    ``frame.interface_name``) as ``tshark -T fields`` prints them."""
    command = [TSHARK, "-r", str(path), "-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"]
    for name in names:
        command += ["-e", name]
    if display_filter:
        command += ["-Y", display_filter]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return [line.split("\t") for line in done.stdout.splitlines()]
