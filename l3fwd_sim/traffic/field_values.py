"""What a header field of a stream file accepts, read from scapy's description of the field.

scapy stores a value that does not fit a field's bits silently truncated (``vlan = 5000``
goes out as 904) and answers others with messages about its internals ("use RawVal"), so
every value is checked here first, in the user's terms: a number must fit the field's
width (VLAN id 12 bits, flow label 20, fragment offset 13, ports 16, ...), a MAC or IP
address must parse as one (scapy would resolve any other string by DNS), names (flags,
ICMP types) are left to scapy and reported as names it does not know.
"""
from __future__ import annotations

import contextlib
import ipaddress
import logging
import re
from dataclasses import dataclass

from ..errors import SimError
from ..numbers import brief, check_range, parse_int

MAC = re.compile(r"[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}")
_NUMBER = re.compile(r"([0-9]+)|0[xX]([0-9a-fA-F]+)")


class FieldError(ValueError):
    """A bad template or field-variable value; ``path`` is the key path it belongs to
    (e.g. ``("ipv4", "dst")``) so that the caller can point at the offending line."""

    def __init__(self, path: tuple, message: str):
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class FieldKind:
    """``kind`` is mac, ipv4, ipv6, int (``bits`` wide, unsigned), bytes or other."""
    kind: str
    bits: int = 0
    names: str = ""          # flag letters or names a number may be given as

    def describe(self) -> str:
        if self.kind == "int":
            return f"a number of {self.bits} bits" + (f" or flags from {self.names}" if self.names else "")
        return {"mac": "a MAC address xx:xx:xx:xx:xx:xx", "ipv4": "an IPv4 address", "ipv6": "an IPv6 address",
                "bytes": "a string of bytes"}.get(self.kind, "a value scapy can encode")


def field_kind(fld, probe=None) -> FieldKind:
    """The kind of a scapy field (wrappers such as ConditionalField and Emph looked through;
    a field whose type depends on others, as ICMP's ``unused`` on the type, resolved on
    ``probe``: the layer built from the other values)."""
    from scapy import fields
    while isinstance(fld, fields.MultipleTypeField) or hasattr(fld, "fld"):
        if isinstance(fld, fields.MultipleTypeField):     # it answers every attribute, "fld" too
            fld = fld.dflt if probe is None else fld._find_fld_pkt(probe)
        else:
            fld = fld.fld
    if isinstance(fld, fields.MACField):
        return FieldKind("mac")
    if isinstance(fld, fields.IP6Field):
        return FieldKind("ipv6")
    if isinstance(fld, fields.IPField):
        return FieldKind("ipv4")
    if isinstance(fld, fields._StrField):
        return FieldKind("bytes")
    fmt = getattr(fld, "fmt", "")
    if fmt[-1:] in tuple("BHIQ"):                   # bit fields keep sz = bits / 8
        names = getattr(fld, "names", "")
        return FieldKind("int", round(8 * fld.sz), names if isinstance(names, str) else ", ".join(names))
    return FieldKind("other")


def build_layer(cls, layer: str, values: dict):
    """The scapy layer ``cls`` with ``values`` (scapy field names), or FieldError saying
    what is wrong. Fields whose presence or type depends on others (ICMP's ``gw`` and
    ``unused`` on the type) are checked against the layer the other values make."""
    from scapy.fields import MultipleTypeField
    fields = {f.name: f for f in cls.fields_desc}
    checked = {k: check_value(fields[k], layer, k, v) for k, v in values.items()
               if not isinstance(fields[k], MultipleTypeField)}
    probe = _build(cls, layer, checked, fields)
    _check_present(fields, layer, probe, values)
    checked.update({k: check_value(fields[k], layer, k, v, probe) for k, v in values.items() if k not in checked})
    return _build(cls, layer, checked, fields, probe)


def _build(cls, layer: str, values: dict, fields: dict, probe=None):
    with _quiet_scapy():
        try:
            built = cls(**values)
            bytes(built)                    # scapy checks most values only when it builds
            return built
        except Exception:                   # scapy raises assorted types for bad field values
            pass
        for key, value in values.items():   # find the field to blame
            try:
                bytes(cls(**{key: value}))
            except Exception:
                raise blame(fields[key], layer, key, value, probe) from None
    given = ", ".join(f"{layer}.{k}" for k in values)
    raise FieldError((layer,), f"{layer}: these fields cannot be used together: {given}")


def _check_present(fields: dict, layer: str, probe, keys) -> None:
    """A field given but left out of the header the other values make (``icmp.gw`` on an
    echo request) is an error: scapy would drop its value without a word."""
    from scapy import fields as kinds
    for key in keys:
        fld = fields[key]
        if isinstance(fld, kinds.ConditionalField):
            present = fld._evalcond(probe)
        elif isinstance(fld, kinds.MultipleTypeField):
            chosen = fld._find_fld_pkt(probe)
            present = not (isinstance(chosen, kinds.StrFixedLenField) and chosen.length_from(probe) == 0)
        else:
            present = True
        if not present:
            raise FieldError((layer, key), f"{layer}.{key} is not part of this {layer} header (with the other "
                                           f"values given, e.g. its type, the header has no such field)")


def check_value(fld, layer: str, key: str, value, probe=None):
    """The value to give scapy for ``layer.key``, or FieldError saying what is wrong."""
    kind = field_kind(fld, probe)
    where = (layer, key)
    what = f"{layer}.{key}"
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise FieldError(where, f"{what}: expected {kind.describe()}, got {value!r}")
    if kind.kind == "mac":
        if not (isinstance(value, str) and MAC.fullmatch(value)):
            raise FieldError(where, f"{what}: bad MAC address {_shown(value)} (expected xx:xx:xx:xx:xx:xx)")
        return value
    if kind.kind in ("ipv4", "ipv6"):
        cls = ipaddress.IPv4Address if kind.kind == "ipv4" else ipaddress.IPv6Address
        try:
            return str(cls(value))
        except (ValueError, TypeError):
            raise FieldError(where, f"{what}: bad IPv{kind.kind[-1]} address {_shown(value)}") from None
    if kind.kind == "int":
        try:
            number = _number(value, f"{what} ({kind.bits}-bit field)", (1 << kind.bits) - 1)
        except SimError as err:
            raise FieldError(where, str(err)) from None
        if number is not None:
            return number
    if kind.kind == "bytes" and not isinstance(value, str):
        raise FieldError(where, f"{what}: expected {kind.describe()}, got {value!r}")
    return value                                     # a name (flags, ICMP type): scapy knows them


def blame(fld, layer: str, key: str, value, probe=None) -> FieldError:
    """The error for a value scapy refused to encode, in the user's terms."""
    kind = field_kind(fld, probe)
    if kind.kind == "int" and isinstance(value, str):
        return FieldError((layer, key), f"{layer}.{key}: {_shown(value)} is not a number nor a name scapy knows "
                                        f"for this field (expected {kind.describe()})")
    return FieldError((layer, key), f"{layer}.{key}: cannot encode {_shown(value)} (expected {kind.describe()})")


@contextlib.contextmanager
def _quiet_scapy():
    """scapy logs warnings (an ICMPv6 layer built alone has no checksum) to stderr; a
    command's stderr carries only its own messages."""
    logger = logging.getLogger("scapy")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _number(value, what: str, high: int) -> int | None:
    """An int, or a string holding a decimal or 0x-hex number ("4095", "0xfff"), checked
    against ``0..high``; None for any other string."""
    if isinstance(value, int):
        return check_range(value, what, 0, high)
    if isinstance(value, str) and (number := _NUMBER.fullmatch(value)):
        decimal, hexadecimal = number.groups()
        return parse_int(decimal or hexadecimal, what, 0, high, 10 if decimal else 16, brief(value))
    return None


def _shown(value) -> str:
    return brief(value) if isinstance(value, str) else repr(value)


def parse_field_value(kind: str, value, what: str, high: int) -> int:
    """A field-variable bound as an int in ``0..high``: a number, or a string holding a
    decimal or 0x-hex number or an address of the field's kind."""
    if not isinstance(value, bool) and (number := _number(value, what, high)) is not None:
        return number
    if isinstance(value, str):
        try:
            if kind == "ipv4":
                return int(ipaddress.IPv4Address(value))
            if kind == "ipv6":
                return int(ipaddress.IPv6Address(value))
        except ValueError:
            pass
        if kind == "mac" and MAC.fullmatch(value):
            return int(value.replace(":", ""), 16)
    raise SimError(f"{what}: {_shown(value)} is not a valid {kind} value")
