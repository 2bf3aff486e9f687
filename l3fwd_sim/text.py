"""Text from an input, shown to a person: one printable line of UTF-8, whatever it holds.

Every message on stderr, every pcapng comment and name (``opt_comment``, ``if_name``) and
every string of an HTML report that comes from an input (a file name, a rule line, an
option's value, a field dissected from a packet) goes through :func:`printable`. A
newline there would cut a message in two (the CLI promises one line per error) or a
comment in every line-based view (``tshark -T fields``, ``capinfos``), an escape
sequence could drive the reader's terminal, a right-to-left override could make the text
read backwards, and a file name that is not valid UTF-8 (Python hands it over with
surrogate escapes) cannot be written as UTF-8 at all.
"""
from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(value) -> str:
    """``str(value)`` with every character Python's ``str.isprintable`` rejects written as an
    escape, as ``repr`` writes it: ``\\n``, ``\\r``, ``\\t``, else ``\\xNN``, ``\\uNNNN``
    or ``\\UNNNNNNNN``. Those are Unicode's "Other" and "Separator" characters except the
    ASCII space: control characters (C0, DEL, C1), format characters (bidirectional
    overrides, zero-width joiners), surrogates (undecodable bytes of a file name), the
    line and paragraph separators and the other spaces. The result is one line of
    printable, UTF-8-encodable text; printable text comes back unchanged. For display:
    a backslash already in ``text`` is kept as it is, so escaping is not undone exactly."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _NAMED.get(c) or _escape(ord(c)) for c in text)


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
