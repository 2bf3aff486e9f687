"""The dataplane's compiled twins as Python calls them (``twins.h``): the polling merge
(``polling.c``), RSS (``rss.c``), the counters (``stats.c``), the TX model's runs
(``tx.c``), a whole super-burst of an lcore's main loop (``lcore.c``) and trace lines
(``jsonlines.c``). Each function checks what the C takes on trust — one table of
:class:`~l3fwd_sim.compiled.Array` rows each — then calls it; the numpy code they twin
is the definition (:mod:`l3fwd_sim.compiled`). The application's path reaches
``lcore.c`` as a :class:`LcorePath`: the dataplane knows no application."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..capture.records import RECORD_ROW
from ..capture.twins import UNITS, record_format_init
from ..compiled import Array, View, binding, need, pointers, take, take_each
from .ports import MAX_PORTS


# ------------------------------------------------------------ polling.c

_RECORDS = Array("records", "uint8_t", matrix=True)
_BATCH = (Array("rows", "uint8_t", True, matrix=True), *(Array(name, "int64_t", True, "rows") for name in
                                                          ("caplen", "in_port", "burst", "source_id", "source_row")))


def _queue_records(queues: list, places: int, max_width: int) -> tuple[object, list[View], int]:
    """``struct queue_records`` per (records, port, place): the C array, its views, and
    the records in all."""
    views = take_each(_RECORDS, (records for records, _, _ in queues))
    need(all(16 <= v.cols <= max_width for v in views) and all(0 <= place < places for _, _, place in queues),
         "queues: records narrower than a record header or wider than a row, or a place outside the queues")
    ffi, _ = binding()
    q = ffi.new("struct queue_records[]", [
        {"records": v.ptr, "stride": v.stride, "width": v.cols, "count": v.len, "port": port, "place": place}
        for v, (_, port, place) in zip(views, queues)] or 1)
    return q, views, sum(v.len for v in views)


def merge_rounds(queues: list, rx_burst: int, places: int, first_round: int, batch: tuple) -> int:
    """polling._merge: the queues' records (records, port, place) in polling order into
    ``batch`` (rows, caplen, in_port, burst, source_id, source_row)."""
    rows, *columns = take(_BATCH, *batch)
    need(rows.stride == rows.cols == RECORD_ROW, "merge_rounds: rows must be contiguous rows of 80 bytes")
    q, _views, total = _queue_records(queues, places, rows.cols)
    need(rx_burst >= 1 and rows.len >= total, f"rows: {rows.len} items, at least {total} needed")
    ffi, lib = binding()
    merged = ffi.new("struct merged *", {"rows": rows.ptr, "width": rows.cols,
                                         **{spec.name: c.ptr for spec, c in zip(_BATCH[1:], columns)}})
    return lib.merge_rounds(q, len(queues), rx_burst, places, first_round, 0, lib.rounds_of(q, len(queues), rx_burst),
                            merged)


# ------------------------------------------------------------ rss.c

_RSS = (Array("tables", "uint32_t", at_least=36 * 256), Array("reta", "int64_t"))


def _rss(rss: tuple) -> tuple[object, list[View]]:
    """``struct rss`` of (l4, Toeplitz tables, reta)."""
    l4, *arrays = rss
    views = tables, reta = take(_RSS, *arrays)
    need(reta.len >= 1 and not reta.len & (reta.len - 1), "rss: the redirection table's size is not a power of 2")
    ffi, _ = binding()
    rss = ffi.new("struct rss *", {"tables": tables.ptr, "reta": reta.ptr, "reta_size": reta.len, "l4": bool(l4)})
    return rss, views


_INDEX = (Array("buf", "uint8_t"), Array("offsets", "int64_t", True), Array("caplen", "uint32_t", True, "offsets"),
          Array("queue", "uint8_t", True, "offsets"), Array("ts", "uint64_t", True, "offsets"))


def rss_index(rss: tuple, buf, pos: int, end: int, max_caplen: int, snap: int, offsets, caplen, queue,
              ts) -> tuple[int, int, bool]:
    """rss.index_capture's walk: up to len(offsets) records -> (records, pos after, stop)"""
    r, _keep = _rss(rss)
    b, o, c, q, t = take(_INDEX, buf, offsets, caplen, queue, ts)
    need(0 <= pos <= end <= b.len, "rss_index: a range outside the buffer")
    ffi, lib = binding()
    after, stop = ffi.new("int64_t *"), ffi.new("int *")
    n = lib.rss_index(r, b.ptr, pos, end, o.len, max_caplen, snap, o.ptr, c.ptr, q.ptr, t.ptr, after, stop)
    return n, after[0], bool(stop[0])


_QUEUES = (Array("records", "uint8_t", matrix=True), Array("out", "int64_t", True, "records"))


def rss_queues(rss: tuple, records, out) -> None:
    """rss.rss_queues: each record's RX queue."""
    _, lib = binding()
    r, _keep = _rss(rss)
    rec, o = take(_QUEUES, records, out)
    need(16 <= rec.cols <= RECORD_ROW, "rss_queues: records narrower than a record header or wider than a row")
    lib.rss_queues(r, rec.ptr, rec.stride, rec.cols, rec.len, o.ptr)


# ------------------------------------------------------------ stats.c, tx.c

_COUNTERS = (Array("drops", "int64_t", True, matrix=True), Array("flows", "int64_t", True, matrix=True))


def _counters(rx: View, drops, flows) -> tuple[View, View]:
    """The run's drops (RX ports x reasons) and flows (RX ports x (1 + TX ports)),
    contiguous, a row per RX port of ``rx``."""
    d, f = take(_COUNTERS, drops, flows)
    need(d.len == rx.len and d.stride == d.cols * 8 and f.len == rx.len and f.stride == f.cols * 8,
         "drops and flows must be (rx ports, ...), contiguous")
    return d, f


_COUNT = (Array("in_port", "int64_t"), Array("reason", "uint8_t", at_least="in_port"),
          Array("dest", "int64_t", at_least="in_port"), Array("rx", "int64_t", True))


def count_packets(in_port, reason, dest, rx, drops, flows) -> None:
    """stats.RunStats.count"""
    _, lib = binding()
    i, r, d, x = take(_COUNT, in_port, reason, dest, rx)
    dr, fl = _counters(x, drops, flows)
    n = i.len
    need(not n or i.array.min() >= 0 and i.array.max() < x.len and r.array[:n].max() < dr.cols
         and d.array[:n].min() >= -1 and d.array[:n].max() + 1 < fl.cols,
         "count_packets: a port or reason outside the counters")
    lib.count_packets(i.ptr, r.ptr, d.ptr, n, dr.cols, x.ptr, dr.ptr, fl.ptr, fl.cols)


_RUNS = (Array("dest", "int64_t"), Array("burst", "int64_t", at_least="dest"),
         Array("run_ports", "int64_t", True, "dest"), Array("run_lens", "int64_t", True, "dest"))


def same_port_runs(dest, burst, run_ports, run_lens) -> int:
    """tx.same_port_runs"""
    _, lib = binding()
    d, b, p, n = take(_RUNS, dest, burst, run_ports, run_lens)
    return lib.same_port_runs(d.ptr, b.ptr, d.len, p.ptr, n.ptr)


_TX = tuple(Array(name, "int64_t", True) for name in ("len", "tx_bursts", "direct", "buffered", "runs"))
_SENT = (Array("run_ports", "int64_t"), Array("run_lens", "int64_t", at_least="run_ports"))
_SINGLE = (Array("single", "uint8_t"),)


def send_runs(tx: tuple, run_ports, run_lens, single) -> None:
    """tx.TxModel.send_runs; tx: the TX counters per port (len, tx_bursts, direct,
    buffered, runs), rx_burst, tx_burst; single: per run, send_single_packet (None: none)"""
    *counters, rx_burst, tx_burst = tx
    counts = take(_TX, *counters)
    ports = min(c.len for c in counts)
    p, n = take(_SENT, run_ports, run_lens)
    need(not p.len or p.array.min() >= 0 and p.array.max() < ports, "send_runs: a run of a port outside 0..ports")
    need(rx_burst >= 1, "send_runs: rx_burst < 1")
    ffi, lib = binding()
    one = ffi.NULL
    if single is not None:
        s, = take(_SINGLE, single)
        need(s.len >= p.len, f"single: {s.len} items, at least {p.len} needed")
        one = s.ptr
    c = ffi.new("struct tx_counters *", {spec.name: v.ptr for spec, v in zip(_TX, counts)}
                | {"rx_burst": rx_burst, "tx_burst": tx_burst})
    lib.send_runs(c, p.ptr, n.ptr, one, p.len)


# ------------------------------------------------------------ lcore.c

class LcorePath(NamedTuple):
    """An application's path as ``lcore.c`` runs it: its ``forward_fn``, its tables
    (``app``, a C pointer, and ``keep``, what it points into), and the drops that make
    a burst's TX calls ``send_single_packet`` per packet (by reason; None: none)."""
    forward: object
    app: object
    keep: object
    step_drops: np.ndarray | None


_LCORE = (Array("rx", "int64_t", True, MAX_PORTS), Array("run_port", "int64_t", True),
          Array("run_len", "int64_t", True, "run_port"), Array("run_single", "uint8_t", True, "run_port"),
          Array("data", "uint8_t", True), Array("bytes", "int64_t", True, MAX_PORTS),
          Array("packets", "int64_t", True, "bytes"), Array("rows", "uint8_t", True, matrix=True),
          *(Array(name, "int64_t", True, "rows") for name in ("caplen", "in_port", "burst", "source_id",
                                                              "source_row", "dest")),
          Array("reason", "uint8_t", True, "rows"))
_TAIL_BLOCK = Array("block", "uint8_t")
_TAIL_OFFSETS = Array("offsets", "int64_t")
_STEP_DROPS = (Array("step_drops", "uint8_t"),)
_TRACE_COLUMNS = (*(Array(name, "int16_t", True) for name in ("rx_port", "rx_queue", "lcore", "tx_port")),
                  *(Array(name, "int64_t", True) for name in ("index", "burst", "tx_index", "rule", "next_hop")),
                  Array("caplen", "int32_t", True), Array("table", "uint8_t", True), Array("reason", "uint8_t", True),
                  Array("head", "uint8_t", True, matrix=True))
_TRACE_STATE = (Array("rx_queue", "int64_t"), Array("first_index", "int64_t"), Array("sent", "int64_t", True),
                Array("received_at", "int64_t", True), Array("table", "uint8_t", True),
                Array("rule", "int64_t", True), Array("next_hop", "int64_t", True))
_NUMBERS = (Array("numbers", "int64_t"),)
_HITS = (Array("packets", "int64_t", True), Array("bytes", "int64_t", True, "packets"), Array("base", "int64_t"),
         Array("counted", "uint8_t", at_least=256), Array("table", "uint8_t", True), Array("rule", "int64_t", True),
         Array("next_hop", "int64_t", True))


def lcore_step(queues: list, tails: list, polling: tuple, path: LcorePath, rx_drop: tuple, counts: tuple, runs: tuple,
               out: tuple, sub_burst: tuple, trace: tuple | None = None, hits: tuple | None = None) -> tuple:
    """lcore.main_loop over one super-burst, by ``lcore.c``.

    queues: (records, port, place) per RX queue, in polling order; tails: (block,
    offsets, row units) per queue; polling: (rx_burst, places, first_round); rx_drop:
    (the oversize drop's code, the mbuf's data room); counts: (rx, drops, flows); runs:
    (port, len, single) per TX call; out: (data, capacity, bytes, packets, (pcapng,
    units)); sub_burst: scratch (rows, caplen, in_port, burst, source_id, source_row,
    dest, reason); trace: the trace columns (trace.TraceRecords' in field order), then
    limit, rx_queue, first_index, numbers, lcore, first_burst, sent, received_at, table,
    rule, next_hop; hits: (packets, bytes, base, counted, table, rule, next_hop).
    Returns (received, TX calls, packets traced)."""
    ffi, lib = binding()
    rx_burst, places, first_round = polling
    oversize, room = rx_drop
    data, capacity, out_bytes, out_packets, format_ = out
    need(len(tails) == len(queues) and rx_burst >= 1, "lcore_step: one (block, offsets) per queue")
    q, q_views, received = _queue_records(queues, places, RECORD_ROW)
    need(all(0 <= port < MAX_PORTS for _, port, _ in queues), "lcore_step: a queue's port out of range")
    blocks = take_each(_TAIL_BLOCK, (block for block, _, _ in tails))
    offsets = take_each(_TAIL_OFFSETS, (offsets for _, offsets, _ in tails))
    need(all(units in UNITS for *_, units in tails) and all(o.len >= v.len for o, v in zip(offsets, q_views)),
         "lcore_step: a queue's offsets shorter than its records, or time stamps not in ns or µs")
    views = take(_LCORE, counts[0], *runs, data, out_bytes, out_packets, *sub_burst)
    rx, run_port, run_len, run_single, data_v, bytes_v, packets_v, rows = views[:8]
    drops, flows = _counters(rx, *counts[1:])
    sub = rows.len
    need(drops.cols >= 7 and 1 <= oversize < drops.cols and flows.cols >= MAX_PORTS + 1 and run_port.len >= received
         and capacity >= 1 and rows.cols == RECORD_ROW and rows.stride == RECORD_ROW and sub >= rx_burst * len(queues),
         "lcore_step: counters, runs, outputs or sub-burst of an unexpected size")
    step = None
    if path.step_drops is not None:
        step, = take(_STEP_DROPS, path.step_drops)
        need(step.len >= drops.cols, f"step_drops: {step.len} items, at least {drops.cols} needed")
    caplen, in_port, burst, source_id, source_row, dest, reason = views[8:]
    keep = [pointers("uint8_t", blocks), pointers("int64_t", offsets),
            ffi.new("ssize_t[]", [block.len for block in blocks]), ffi.new("int64_t[]", [units for *_, units in tails])]
    init = {"q": q, "sources": len(queues), "blocks": keep[0], "offsets": keep[1], "block_bytes": keep[2],
            "row_units": keep[3], "rx_burst": rx_burst, "places": places, "first_round": first_round,
            "forward": path.forward, "app": path.app, "step_drops": step.ptr if step else ffi.NULL,
            "oversize": oversize, "mbuf_data_room": room,
            "counts": {"rx": rx.ptr, "drops": drops.ptr, "flows": flows.ptr, "reasons": drops.cols,
                       "flow_width": flows.cols},
            "runs": {"port": run_port.ptr, "len": run_len.ptr, "single": run_single.ptr},
            "out": {"data": data_v.ptr, "capacity": capacity, "ports": data_v.len // capacity, "bytes": bytes_v.ptr,
                    "packets": packets_v.ptr, "format": record_format_init(format_)},
            "sub": {"rows": rows.ptr, "width": rows.cols, "caplen": caplen.ptr, "in_port": in_port.ptr,
                    "burst": burst.ptr, "source_id": source_id.ptr, "source_row": source_row.ptr},
            "dest": dest.ptr, "reason": reason.ptr, "sub_packets": sub}
    if trace is not None:
        init["trace"], traced = _trace(trace, offsets, places, sub)
        keep.append(traced)
    if hits is not None:
        init["hits"] = _hits(hits, sub)
    s = ffi.new("struct lcore_step *", init)
    got = lib.lcore_step(s)
    need(got >= 0, "lcore_step: a record past its port's output, or a frame outside its block")
    return got, s.runs.n, s.trace.filled


def _trace(trace: tuple, offsets: list[View], places: int, sub: int) -> tuple[dict, object]:
    """``struct lcore_trace`` as cffi initialises it, and what must outlive it."""
    ffi, lib = binding()
    columns, limit, rx_queue, first_index, numbers, lcore, first_burst, *state = trace
    c = take(_TRACE_COLUMNS, *columns)
    head = c[-1]
    need(limit >= 0 and all(v.len >= limit for v in c), "lcore_step: trace columns shorter than the trace's limit")
    need(head.cols == lib.TRACE_HEAD and head.stride == lib.TRACE_HEAD,
         "lcore_step: trace heads of an unexpected shape")
    rx_queue, first_index, sent, *scratch = take(_TRACE_STATE, rx_queue, first_index, *state)
    need(rx_queue.len >= places and first_index.len >= len(offsets) and all(v.len >= sub for v in scratch),
         "lcore_step: a trace's queues, sources or scratch of an unexpected size")
    need(len(numbers) == len(offsets), "lcore_step: a trace's numbers of an unexpected size")
    each = [None if n is None else take(_NUMBERS, n)[0] for n in numbers]
    need(all(v is None or v.len >= o.len for v, o in zip(each, offsets)),
         "lcore_step: a trace's numbers of an unexpected size")
    number_ptrs = ffi.new("int64_t *[]", [ffi.NULL if v is None else v.ptr for v in each] or 1)
    received_at, table, rule, next_hop = scratch
    return {"r": {spec.name: v.ptr for spec, v in zip(_TRACE_COLUMNS, c)}, "limit": limit, "lcore": lcore,
            "first_burst": first_burst, "rx_queue": rx_queue.ptr, "first_index": first_index.ptr,
            "numbers": number_ptrs, "sent": sent.ptr, "sent_ports": sent.len, "received_at": received_at.ptr,
            "table": table.ptr, "rule": rule.ptr, "next_hop": next_hop.ptr}, (each, number_ptrs)


def _hits(hits: tuple, sub: int) -> dict:
    """``struct rule_hits`` as cffi initialises it."""
    views = packets, bytes_, base, counted, table, rule, next_hop = take(_HITS, *hits)
    need(all(v.len >= sub for v in views[4:]), "lcore_step: hit counters' scratch of an unexpected size")
    return {"packets": packets.ptr, "bytes": bytes_.ptr, "base": base.ptr, "size": packets.len, "tables": base.len,
            "counted": counted.ptr, "table": table.ptr, "rule": rule.ptr, "next_hop": next_hop.ptr}


# ------------------------------------------------------------ jsonlines.c

_TEXT = (Array("a text", "uint8_t"),)
_CHOICE = (Array("texts", "uint8_t"), Array("offsets", "int64_t", at_least=1))
_BLOCK = (Array("a block", "uint8_t", matrix=True),)
_ENDS = (Array("ends", "int64_t", True),)
_OUT = (Array("out", "uint8_t", True),)


def _int_column(values, n: int, what: str) -> tuple[dict, np.ndarray]:
    """``struct int_column`` of a 1-d array of integers of any stride (a record array's field)."""
    a = np.asarray(values)
    need(a.ndim == 1 and a.dtype.kind in "iu" and a.dtype.byteorder in "=|",
         f"{what}: expected a 1-d array of integers")
    need(len(a) >= n, f"{what}: {len(a)} items, at least {n} needed")
    ffi, _ = binding()
    return {"data": ffi.cast("uint8_t *", a.ctypes.data), "stride": a.strides[0], "size": a.itemsize,
            "is_signed": a.dtype.kind == "i"}, a


def render_lines(pieces: list, n: int, out: np.ndarray, ends) -> tuple[np.ndarray, int]:
    """jsonlines.Lines.render: n lines of ``pieces``, each (kind, bytes, offsets,
    numbers): (TEXT, its bytes, None, None), (CHOICE, the texts one after the other,
    their offsets, each line's code), (NUMBER, None, None, the numbers), (BLOCK, the
    (n, w) cells, None, None), written into ``out`` (uint8) or, where it is shorter than
    the most n lines of these pieces take (and LINE_SLACK), into a new array in its
    place (not zeroed: its pages are touched as written); ``ends`` (None or n int64s)
    gets each line's newline's place. Returns (the array written, the bytes written)."""
    need(n >= 0, "render_lines: a negative count of lines")
    ffi, lib = binding()
    c = ffi.new("struct line_piece[]", len(pieces) or 1)
    keep = []
    for piece, (kind, data, offsets, numbers) in zip(c, pieces):
        piece.kind = kind
        if kind == lib.PIECE_TEXT:
            text, = take(_TEXT, data)
            piece.bytes, piece.width = text.ptr, text.len
            keep.append(text)
        elif kind == lib.PIECE_CHOICE:
            texts, starts = take(_CHOICE, data, offsets)
            lengths = np.diff(starts.array)
            need(bool((starts.array[:-1] >= 0).all() and (lengths >= 0).all() and starts.array[-1] <= texts.len),
                 "render_lines: a choice's offsets outside its texts")
            piece.bytes, piece.offsets, piece.texts = texts.ptr, starts.ptr, starts.len - 1
            piece.width = int(lengths.max(initial=0))
            piece.values, column = _int_column(numbers, n, "codes")
            keep += [texts, starts, column]
        elif kind == lib.PIECE_NUMBER:
            piece.values, column = _int_column(numbers, n, "numbers")
            keep.append(column)
        elif kind == lib.PIECE_BLOCK:
            block, = take(_BLOCK, data)
            need(block.len >= n, f"a block: {block.len} items, at least {n} needed")
            piece.bytes, piece.width, piece.stride = block.ptr, block.cols, block.stride
            keep.append(block)
        else:
            raise ValueError(f"render_lines: no piece of kind {kind}")
    bound = n * lib.line_bytes(c, len(pieces)) + lib.LINE_SLACK
    if len(out) < bound:
        out = np.empty(bound, np.uint8)
    o, = take(_OUT, out)
    e = ffi.NULL
    if ends is not None:
        e_, = take(_ENDS, ends)
        need(e_.len >= n, f"ends: {e_.len} items, at least {n} needed")
        e = e_.ptr
    written = lib.render_lines(c, len(pieces), n, o.ptr, e)
    need(written >= 0, "render_lines: a code outside its pool")
    return out, written


_DISTINCT = (Array("rows", "uint8_t", matrix=True), Array("first", "int64_t", True, "rows"),
             Array("inverse", "int64_t", True, "rows"))


def distinct_rows(rows, first, inverse) -> int:
    """jsonlines.distinct: how many distinct rows; first, inverse as np.unique's."""
    r, f, i = take(_DISTINCT, rows, first, inverse)
    size = 16
    while size < 2 * r.len:             # at most half full: short probes
        size *= 2
    slots = np.empty(size, np.int64)
    ffi, lib = binding()
    return lib.distinct_rows(r.ptr, r.stride, r.cols, r.len, f.ptr, i.ptr, ffi.from_buffer("int64_t[]", slots),
                             size - 1)
