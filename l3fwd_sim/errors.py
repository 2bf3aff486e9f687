"""The one exception type the CLI turns into a one-line message and exit status 2."""


class SimError(Exception):
    """Bad input or option; ``str(err)`` is a complete one-line message for the user,
    naming the file (and line or byte offset) where there is one."""
