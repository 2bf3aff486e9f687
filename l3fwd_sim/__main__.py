"""``python -m l3fwd_sim``: the ``l3fwd-sim`` command."""
from .command import entry

entry()
