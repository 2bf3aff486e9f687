"""Text that goes into a capture file's comments and names (pcapng ``opt_comment``,
``if_name``): one line of UTF-8, whatever the input it comes from.

A comment is data written for a person reading it in Wireshark (Packet Comments,
``frame.comment``), and part of it often comes from an input: a file name, a field value
dissected from a packet. A newline there would cut the comment in two in every line-based
view (``tshark -T fields``, ``capinfos``), an escape sequence could drive the reader's
terminal, a right-to-left override could make the text read backwards, and a file name
that is not valid UTF-8 (Python hands it over with surrogate escapes) cannot be written
as UTF-8 at all.
"""
from __future__ import annotations

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """``text`` with every character Python's ``str.isprintable`` rejects written as an
    escape, as ``repr`` writes it: ``\\n``, ``\\r``, ``\\t``, else ``\\xNN``, ``\\uNNNN``
    or ``\\UNNNNNNNN``. Those are Unicode's "Other" and "Separator" characters except the
    ASCII space: control characters (C0, DEL, C1), format characters (bidirectional
    overrides, zero-width joiners), surrogates (undecodable bytes of a file name), the
    line and paragraph separators and the other spaces. The result is one line of
    printable, UTF-8-encodable text; printable text comes back unchanged. For display:
    a backslash already in ``text`` is kept as it is, so escaping is not undone exactly."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _NAMED.get(c) or _escape(ord(c)) for c in text)


def _escape(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
