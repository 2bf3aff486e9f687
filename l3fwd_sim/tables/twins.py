"""The tables as the compiled twins read them (``twins.h``): ``struct lpm_table`` over a
StrideTable's own tbl24/tbl8 arrays (``lpm.h`` walks them), ``struct em_table`` over an
ExactMatchTable's slots (``hash.h``), ``struct acl_table`` over an AclTable's flat
arrays (``acl.c``) — views, never copies, checked for the shapes the C assumes — and
``acl.c``'s classification (:meth:`~.acl.AclTable.classify`)."""
from __future__ import annotations

from typing import NamedTuple

from ..compiled import Array, binding, need, take


class Table(NamedTuple):
    """A table's C struct as cffi initialises it (``init``), and the views its pointers
    come from (``keep``: they must outlive the struct's use)."""
    init: dict
    keep: tuple
    rules: int = 0              # ACL: how many rules
    fields: int = 0             # ACL: the fields of a key


_LPM = (Array("tbl24", "uint32_t", at_least=1 << 24), Array("tbl24_rule", "uint32_t", at_least="tbl24"),
        Array("tbl8", "uint32_t"), Array("tbl8_rule", "uint32_t", at_least="tbl8"))


def lpm(arrays: tuple, key_bytes: int) -> Table:
    """``struct lpm_table`` of StrideTable.walk_arrays() (tbl24, tbl24_rule, tbl8,
    tbl8_rule, payload mask, key bytes, default hop, default rule), of a family whose
    keys are ``key_bytes`` long."""
    *tables, payload_mask, key, default_hop, default_rule = arrays
    views = t24, t24r, t8, t8r = take(_LPM, *tables)
    need(t24.len == 1 << 24 and t24r.len == t24.len and t8r.len == t8.len and key in (4, 16)
         and 0 <= payload_mask and payload_mask * 256 + 255 < 1 << 40, "an LPM table of an unexpected shape")
    need(key == key_bytes, "an LPM table of the other family")
    return Table({"tbl24": t24.ptr, "tbl24_rule": t24r.ptr, "tbl8": t8.ptr, "tbl8_rule": t8r.ptr,
                  "payload_mask": payload_mask, "key_bytes": key, "default_hop": default_hop,
                  "default_rule": default_rule}, views)


_EM = (Array("keys", "uint64_t", matrix=True), Array("ports", "int64_t"), Array("rules", "int64_t"))


def em(arrays: tuple, words: int) -> Table:
    """``struct em_table`` of ExactMatchTable.probe_arrays() (the slots' keys, ports and
    rule ids), of a family whose keys are ``words`` 64-bit words."""
    views = keys, ports, rules = take(_EM, *arrays)
    slots = ports.len
    need(slots >= 1 and not slots & (slots - 1) and keys.len == slots and rules.len == slots
         and keys.stride == keys.cols * 8 and keys.cols in (2, 5), "an exact-match table of an unexpected shape")
    need(keys.cols == words, "an exact-match table of the other family")
    return Table({"keys": keys.ptr, "ports": ports.ptr, "rules": rules.ptr, "mask": slots - 1, "words": words},
                 views)


_ACL = (Array("chunk_tables", "int64_t", at_least=1), Array("table_field", "int64_t"), Array("starts", "int64_t"),
        Array("starts_at", "int64_t"), Array("index", "int32_t"), Array("index_at", "int64_t"),
        Array("shift", "int64_t"), Array("words", "uint64_t"), Array("words_at", "int64_t"),
        Array("summary", "uint64_t"), Array("rows_at", "int64_t"))
ACL_CHUNK = 4096                # acl.CHUNK: rules a chunk's tables cover


def acl(arrays: tuple, fields: int | None = None) -> Table:
    """``struct acl_table`` of AclTable.walk_arrays() (rules, chunk size, fields, then
    its flat arrays), of a family whose keys have ``fields`` fields (None: any)."""
    rules, chunk_size, n_fields, *flat = arrays
    views = take(_ACL, *flat)
    need(1 <= n_fields <= 64 and chunk_size == ACL_CHUNK, "an ACL table of an unexpected shape")
    need(fields is None or n_fields == fields, "an ACL table of the other family")
    init = {spec.name: view.ptr for spec, view in zip(_ACL, views)}
    init.update(rules=rules, chunk_size=chunk_size, chunks=views[0].len - 1, fields=n_fields)
    return Table(init, tuple(views), rules=rules, fields=n_fields)


_CLASSIFY = (Array("columns", "int64_t", matrix=True), Array("out", "int64_t", True))


def acl_classify(arrays: tuple, columns, out) -> None:
    """AclTable.classify: the first matching rule of each key (columns: fields x keys)."""
    ffi, lib = binding()
    table = acl(arrays)
    c, o = take(_CLASSIFY, columns, out)
    need(c.len == table.fields and c.cols == o.len and c.stride == o.len * 8,
         "acl_classify: columns must be (fields, keys), contiguous")
    lib.acl_classify_columns(ffi.new("struct acl_table *", table.init), c.ptr, o.len, o.ptr)
