"""``python -m l3fwd_sim``: the ``l3fwd-sim`` command."""
from .cli import entry

entry()
