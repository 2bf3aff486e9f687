/*
 * l3fwd_sim._compiled: the Python face of the compiled twins (compiled.h). Each
 * function here takes numpy arrays through the buffer protocol (no numpy headers are
 * needed to build it), checks their shapes and item sizes, releases the GIL and calls
 * the twin. l3fwd_sim/compiled.py decides whether this module is used at all.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>

#include "capture/records.h"
#include "compiled.h"

#define MAX_VIEWS 128
#define MAX_SOURCES 4096

/* The buffers one call holds, released together whatever happens. */
struct views {
    Py_buffer view[MAX_VIEWS];
    int n;
};

static void release(struct views *v)
{
    while (v->n > 0)
        PyBuffer_Release(&v->view[--v->n]);
}

static Py_buffer *take(struct views *v, PyObject *obj, int writable, Py_ssize_t itemsize, int ndim,
                       const char *what)
{
    if (v->n == MAX_VIEWS) {
        PyErr_SetString(PyExc_RuntimeError, "too many arrays in one call");
        return NULL;
    }
    Py_buffer *b = &v->view[v->n];
    if (PyObject_GetBuffer(obj, b, (writable ? PyBUF_WRITABLE : 0) | PyBUF_STRIDES | PyBUF_FORMAT) < 0)
        return NULL;
    v->n++;
    if (b->itemsize != itemsize || b->ndim != ndim) {
        PyErr_Format(PyExc_TypeError, "%s: expected %d-d items of %zd bytes, got %d-d items of %zd",
                     what, ndim, itemsize, b->ndim, b->itemsize);
        return NULL;
    }
    if (b->shape[ndim - 1] > 1 && b->strides[ndim - 1] != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: its last axis is not contiguous", what);
        return NULL;
    }
    return b;
}

/* A 1-d contiguous array of `itemsize`-byte items; its length in *len if asked. */
static void *vec(struct views *v, PyObject *obj, int writable, Py_ssize_t itemsize, Py_ssize_t *len,
                 const char *what)
{
    Py_buffer *b = take(v, obj, writable, itemsize, 1, what);
    if (b == NULL)
        return NULL;
    if (len)
        *len = b->shape[0];
    return b->buf;
}

/* A 2-d array of bytes whose rows are contiguous (a strided view of a buffer will do). */
static uint8_t *mat(struct views *v, PyObject *obj, int writable, Py_ssize_t *rows, Py_ssize_t *cols,
                    Py_ssize_t *stride, const char *what)
{
    Py_buffer *b = take(v, obj, writable, 1, 2, what);
    if (b == NULL)
        return NULL;
    *rows = b->shape[0];
    *cols = b->shape[1];
    *stride = b->strides[0];
    return b->buf;
}

static int check_length(Py_ssize_t got, Py_ssize_t want, const char *what)
{
    if (got < want) {
        PyErr_Format(PyExc_ValueError, "%s: %zd items, at least %zd needed", what, got, want);
        return 0;
    }
    return 1;
}

/* The array arguments of a call, as a table (one shape for every function here): each
 * row names the argument (in messages), says whether it is a vector (VEC: 1-d, items of
 * `itemsize` bytes) or a matrix of bytes (MAT: 2-d, rows contiguous), whether it is
 * written, where its data pointer goes and where its length (rows) goes, for a matrix
 * where its columns and row stride go, and the length it must reach: an earlier row's
 * (its index; -1: none) and at least `min`. take_arrays takes objs[i] by row i, in order. */
enum { VEC, MAT };
struct array_arg {
    const char *name;
    int kind, writable;
    Py_ssize_t itemsize;
    void *data;                     /* the address of the caller's pointer */
    Py_ssize_t *len, *cols, *stride;
    int at_least;
    Py_ssize_t min;
};
#define VEC_ARG(name, writable, itemsize, data, len, at_least) \
    {name, VEC, writable, itemsize, (void *)(data), len, NULL, NULL, at_least, 0}
#define VEC_MIN(name, writable, itemsize, data, min) \
    {name, VEC, writable, itemsize, (void *)(data), NULL, NULL, NULL, -1, min}
#define MAT_ARG(name, writable, data, rows, cols, stride, at_least) \
    {name, MAT, writable, 1, (void *)(data), rows, cols, stride, at_least, 0}
#define ARGS(table) (int)(sizeof(table) / sizeof(table)[0])

static int take_arrays(struct views *v, PyObject *const *objs, const struct array_arg *a, int n)
{
    for (int i = 0; i < n; i++) {
        Py_ssize_t rows = 0, cols = 0, stride = 0;
        void *data = a[i].kind == VEC ? vec(v, objs[i], a[i].writable, a[i].itemsize, &rows, a[i].name)
                                      : mat(v, objs[i], a[i].writable, &rows, &cols, &stride, a[i].name);
        if (data == NULL)
            return 0;
        *(void **)a[i].data = data;
        if (a[i].len)
            *a[i].len = rows;
        if (a[i].kind == MAT && a[i].cols)
            *a[i].cols = cols;
        if (a[i].kind == MAT && a[i].stride)
            *a[i].stride = stride;
        if ((a[i].at_least >= 0 && !check_length(rows, *a[a[i].at_least].len, a[i].name))
            || !check_length(rows, a[i].min, a[i].name))
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------ capture */

/* The end of a walk over records: the buffers released, (records, position after them,
 * whether the walk stopped at one it cannot take). */
static PyObject *walked(struct views *v, int64_t n, int64_t after, int stopped)
{
    release(v);
    return Py_BuildValue("LLO", (long long)n, (long long)after, stopped ? Py_True : Py_False);
}

static PyObject *py_scan_records(PyObject *self, PyObject *args)
{
    PyObject *buf_o, *out_o, *headers_o;
    long long pos, end, limit, max_caplen;
    int big_endian;
    if (!PyArg_ParseTuple(args, "OLLLpLOO", &buf_o, &pos, &end, &limit, &big_endian, &max_caplen, &out_o,
                          &headers_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t size, out_len, rows, cols, stride;
    const uint8_t *buf;
    int64_t *out;
    const struct array_arg a[] = {VEC_ARG("buf", 0, 1, &buf, &size, -1), VEC_ARG("out", 1, 8, &out, &out_len, -1)};
    if (!take_arrays(&v, (PyObject *[]){buf_o, out_o}, a, ARGS(a)))
        goto fail;
    uint8_t *headers = NULL;                    /* None: the records are only counted (a skip) */
    if (headers_o != Py_None) {
        if (!(headers = mat(&v, headers_o, 1, &rows, &cols, &stride, "headers")) || !check_length(cols, 16, "headers' rows"))
            goto fail;
    } else {
        rows = limit;
        stride = 0;
    }
    if (pos < 0 || end > size || limit > out_len || limit > rows) {
        PyErr_SetString(PyExc_ValueError, "scan_records: a range outside its arrays");
        goto fail;
    }
    int64_t after, n;
    int bad;
    Py_BEGIN_ALLOW_THREADS
    n = scan_records(buf, pos, end, limit, big_endian, max_caplen, out, headers, stride, &after, &bad);
    Py_END_ALLOW_THREADS
    return walked(&v, n, after, bad);
fail:
    release(&v);
    return NULL;
}

/* walk_rows(buf, pos, end, limit, big_endian, max_caplen, snap, out, rows) -> (n, pos, bad, frame bytes) */
static PyObject *py_walk_rows(PyObject *self, PyObject *args)
{
    PyObject *buf_o, *out_o, *rows_o;
    long long pos, end, limit, max_caplen, snap;
    int big_endian;
    if (!PyArg_ParseTuple(args, "OLLLpLLOO", &buf_o, &pos, &end, &limit, &big_endian, &max_caplen, &snap, &out_o,
                          &rows_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t size, out_len, rows, cols, stride;
    const uint8_t *buf;
    int64_t *out;
    uint8_t *row;
    const struct array_arg a[] = {VEC_ARG("buf", 0, 1, &buf, &size, -1), VEC_ARG("out", 1, 8, &out, &out_len, -1),
                                  MAT_ARG("rows", 1, &row, &rows, &cols, &stride, -1)};
    if (!take_arrays(&v, (PyObject *[]){buf_o, out_o, rows_o}, a, ARGS(a)))
        goto fail;
    if (cols != ROW_BYTES || pos < 0 || end > size || limit > out_len || limit > rows || snap < 0) {
        PyErr_SetString(PyExc_ValueError, "walk_rows: rows of 80 bytes, and a range inside the arrays");
        goto fail;
    }
    int64_t after, bytes, n;
    int bad;
    Py_BEGIN_ALLOW_THREADS
    n = walk_rows(buf, pos, end, limit, big_endian, max_caplen, snap, out, row, stride, &after, &bad, &bytes);
    Py_END_ALLOW_THREADS
    release(&v);
    return Py_BuildValue("LLOL", (long long)n, (long long)after, bad ? Py_True : Py_False, (long long)bytes);
fail:
    release(&v);
    return NULL;
}

static PyObject *py_scan_blocks(PyObject *self, PyObject *args)
{
    PyObject *buf_o, *out_o;
    long long pos, end;
    if (!PyArg_ParseTuple(args, "OLLO", &buf_o, &pos, &end, &out_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t size, out_len;
    const uint8_t *buf;
    int64_t *out;
    const struct array_arg a[] = {VEC_ARG("buf", 0, 1, &buf, &size, -1), VEC_ARG("out", 1, 8, &out, &out_len, -1)};
    if (!take_arrays(&v, (PyObject *[]){buf_o, out_o}, a, ARGS(a)))
        goto fail;
    if (pos < 0 || end > size || out_len < (end - pos) / 12) {
        PyErr_SetString(PyExc_ValueError, "scan_blocks: a range outside its arrays");
        goto fail;
    }
    int64_t n;
    Py_BEGIN_ALLOW_THREADS
    n = scan_blocks(buf, pos, end, out);
    Py_END_ALLOW_THREADS
    release(&v);
    return PyLong_FromLongLong(n);
fail:
    release(&v);
    return NULL;
}

/* walk_blocks(buf, pos, end, limit, big_endian, libpcap, (section, snap, units, scale, tsoffset), offsets, owner,
 * rows) -> (packets, pos, frame bytes, skipped_from, stop) */
static PyObject *py_walk_blocks(PyObject *self, PyObject *args)
{
    PyObject *buf_o, *section_o, *snap_o, *units_o, *scale_o, *tsoffset_o, *offsets_o, *owner_o, *rows_o;
    long long pos, end, limit;
    int big_endian, libpcap;
    if (!PyArg_ParseTuple(args, "OLLLpp(OOOOO)OOO", &buf_o, &pos, &end, &limit, &big_endian, &libpcap, &section_o,
                          &snap_o, &units_o, &scale_o, &tsoffset_o, &offsets_o, &owner_o, &rows_o))
        return NULL;
    struct views v = {.n = 0};
    struct pcapng_walk w = {.pos = pos, .end = end, .limit = limit, .big_endian = big_endian, .libpcap = libpcap};
    Py_ssize_t size, interfaces, n_units, n_scale, n_tsoffset, n_offsets, n_owner, rows, cols;
    const struct array_arg a[] = {
        VEC_ARG("buf", 0, 1, &w.buf, &size, -1), VEC_ARG("section", 0, 8, &w.interfaces.section,
                                                         &w.interfaces.section_size, -1),
        VEC_ARG("snap", 0, 8, &w.interfaces.snap, &interfaces, -1), VEC_ARG("units", 0, 8, &w.interfaces.units, &n_units, -1),
        VEC_ARG("scale", 0, 8, &w.interfaces.scale, &n_scale, -1),
        VEC_ARG("tsoffset", 0, 8, &w.interfaces.tsoffset, &n_tsoffset, -1),
        VEC_ARG("offsets", 1, 8, &w.offsets, &n_offsets, -1), VEC_ARG("owner", 1, 8, &w.owner, &n_owner, -1),
        MAT_ARG("rows", 1, &w.rows, &rows, &cols, &w.row_stride, -1)};
    if (!take_arrays(&v, (PyObject *[]){buf_o, section_o, snap_o, units_o, scale_o, tsoffset_o, offsets_o, owner_o,
                                        rows_o}, a, ARGS(a)))
        goto fail;
    int ok = pos >= 0 && end <= size && pos <= end && limit >= 0 && limit <= n_offsets && limit <= n_owner
             && limit <= rows && cols == ROW_BYTES && n_units == interfaces
             && n_scale == interfaces && n_tsoffset == interfaces;
    for (Py_ssize_t k = 0; ok && k < w.interfaces.section_size; k++)
        ok = w.interfaces.section[k] >= 0 && w.interfaces.section[k] < interfaces;
    for (Py_ssize_t k = 0; ok && k < interfaces; k++)
        ok = w.interfaces.units[k] > 0 && w.interfaces.snap[k] >= 0 && w.interfaces.scale[k] >= 0
             && (!w.interfaces.scale[k] || w.interfaces.scale[k] * w.interfaces.units[k] == 1000000000);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "walk_blocks: rows of 80 bytes, a range inside the buffer, and interfaces "
                        "of one size");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    walk_blocks(&w);
    Py_END_ALLOW_THREADS
    release(&v);
    return Py_BuildValue("LLLLi", (long long)w.n, (long long)w.pos, (long long)w.frame_bytes,
                         (long long)w.skipped_from, (int)w.stop);
fail:
    release(&v);
    return NULL;
}

static PyObject *py_gather_windows(PyObject *self, PyObject *args)
{
    PyObject *buf_o, *starts_o, *widths_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOOO", &buf_o, &starts_o, &widths_o, &out_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t size, n, n_widths, rows, cols, stride;
    const uint8_t *buf;
    const int64_t *starts, *widths;
    uint8_t *out;
    const struct array_arg a[] = {VEC_ARG("buf", 0, 1, &buf, &size, -1), VEC_ARG("starts", 0, 8, &starts, &n, -1),
                                  VEC_ARG("widths", 0, 8, &widths, &n_widths, 1),
                                  MAT_ARG("out", 1, &out, &rows, &cols, &stride, 1)};
    if (!take_arrays(&v, (PyObject *[]){buf_o, starts_o, widths_o, out_o}, a, ARGS(a)))
        goto fail;
    for (Py_ssize_t i = 0; i < n; i++)
        if (starts[i] < 0 || widths[i] < 0 || starts[i] + (widths[i] < cols ? widths[i] : cols) > size) {
            PyErr_SetString(PyExc_ValueError, "gather_windows: a window past the buffer");
            goto fail;
        }
    Py_BEGIN_ALLOW_THREADS
    gather_windows(buf, starts, widths, n, out, stride, cols);
    Py_END_ALLOW_THREADS
    release(&v);
    Py_RETURN_NONE;
fail:
    release(&v);
    return NULL;
}

static PyObject *py_concat_ranges(PyObject *self, PyObject *args)
{
    PyObject *buf_o, *starts_o, *lengths_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOOO", &buf_o, &starts_o, &lengths_o, &out_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t size, n, n_lengths, out_len;
    const uint8_t *buf;
    const int64_t *starts, *lengths;
    uint8_t *out;
    const struct array_arg a[] = {VEC_ARG("buf", 0, 1, &buf, &size, -1), VEC_ARG("starts", 0, 8, &starts, &n, -1),
                                  VEC_ARG("lengths", 0, 8, &lengths, &n_lengths, 1),
                                  VEC_ARG("out", 1, 1, &out, &out_len, -1)};
    if (!take_arrays(&v, (PyObject *[]){buf_o, starts_o, lengths_o, out_o}, a, ARGS(a)))
        goto fail;
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (starts[i] < 0 || lengths[i] < 0 || starts[i] + lengths[i] > size) {
            PyErr_SetString(PyExc_ValueError, "concat_ranges: a range past the buffer");
            goto fail;
        }
        total += lengths[i];
    }
    if (!check_length(out_len, total, "out"))
        goto fail;
    Py_BEGIN_ALLOW_THREADS
    concat_ranges(buf, starts, lengths, n, out);
    Py_END_ALLOW_THREADS
    release(&v);
    Py_RETURN_NONE;
fail:
    release(&v);
    return NULL;
}

static PyObject *py_pack_rows(PyObject *self, PyObject *args)
{
    PyObject *rows_o, *widths_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOO", &rows_o, &widths_o, &out_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t rows, cols, stride, n, out_len;
    const uint8_t *data;
    const int64_t *widths;
    uint8_t *out;
    const struct array_arg a[] = {MAT_ARG("rows", 0, &data, &rows, &cols, &stride, -1),
                                  VEC_ARG("widths", 0, 8, &widths, &n, -1), VEC_ARG("out", 1, 1, &out, &out_len, -1)};
    if (!take_arrays(&v, (PyObject *[]){rows_o, widths_o, out_o}, a, ARGS(a)) || !check_length(rows, n, "rows"))
        goto fail;
    int64_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (widths[i] < 0 || widths[i] > cols) {
            PyErr_SetString(PyExc_ValueError, "pack_rows: a width past its row");
            goto fail;
        }
        total += widths[i];
    }
    if (!check_length(out_len, total, "out"))
        goto fail;
    Py_BEGIN_ALLOW_THREADS
    pack_rows(data, stride, widths, n, out);
    Py_END_ALLOW_THREADS
    release(&v);
    Py_RETURN_NONE;
fail:
    release(&v);
    return NULL;
}

/* Time-stamp ticks per second of a row or an output: ns or µs. */
static int units_ok(long long units)
{
    if (units != 1000000000 && units != 1000000) {
        PyErr_SetString(PyExc_ValueError, "time stamps in ns or µs only");
        return 0;
    }
    return 1;
}

/* record_format = (pcapng, units) */
static int format_of(PyObject *tuple, struct record_format *f)
{
    long long units;
    if (!PyArg_ParseTuple(tuple, "pL", &f->pcapng, &units) || !units_ok(units))
        return 0;
    f->units = units;
    return 1;
}

/* packets = (rows, caplen, in_port, sources, source_id, source_row); sources: a list of
 * (block, offsets, row units) per source, or None when no frame is longer than a row's head. */
struct packets_args {
    struct packets p;
    const uint8_t *blocks[MAX_SOURCES];
    const int64_t *offsets[MAX_SOURCES];
    int64_t row_units[MAX_SOURCES];
    const int64_t *numbers[MAX_SOURCES];      /* a traced queue's record numbers (lcore_step's trace) */
    Py_ssize_t block_size[MAX_SOURCES], offsets_len[MAX_SOURCES], sources;
};

static int packets_of(struct views *v, PyObject *tuple, int writable, struct packets_args *a)
{
    PyObject *rows_o, *caplen_o, *in_port_o, *sources_o, *source_id_o, *source_row_o;
    if (!PyArg_ParseTuple(tuple, "OOOOOO", &rows_o, &caplen_o, &in_port_o, &sources_o, &source_id_o,
                          &source_row_o))
        return 0;
    Py_ssize_t rows, cols, stride, n, n_in_port;
    struct packets *p = &a->p;
    p->rows = mat(v, rows_o, writable, &rows, &cols, &stride, "rows");
    p->caplen = p->rows ? vec(v, caplen_o, 0, 8, &n, "caplen") : NULL;
    p->in_port = p->caplen ? vec(v, in_port_o, 0, 8, &n_in_port, "in_port") : NULL;
    if (p->in_port == NULL || !check_length(rows, n, "rows") || !check_length(n_in_port, n, "in_port")
        || !check_length(cols, 16 + 64, "a row"))
        return 0;
    p->stride = stride;
    p->head = cols - 16;
    p->n = n;
    p->blocks = a->blocks;
    p->offsets = a->offsets;
    p->row_units = a->row_units;
    p->source_id = p->source_row = NULL;
    a->sources = 0;
    if (sources_o == Py_None)
        return 1;
    PyObject *list = PySequence_Fast(sources_o, "sources: a sequence of (block, offsets, row units)");
    if (list == NULL)
        return 0;
    a->sources = PySequence_Fast_GET_SIZE(list);
    if (a->sources > MAX_SOURCES) {
        PyErr_SetString(PyExc_ValueError, "too many sources");
        Py_DECREF(list);
        return 0;
    }
    for (Py_ssize_t s = 0; s < a->sources; s++) {
        PyObject *block_o, *offsets_o;
        long long units;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(list, s), "OOL", &block_o, &offsets_o, &units)
            || !(a->blocks[s] = vec(v, block_o, 0, 1, &a->block_size[s], "block"))
            || !(a->offsets[s] = vec(v, offsets_o, 0, 8, &a->offsets_len[s], "offsets"))
            || !units_ok(units)) {
            Py_DECREF(list);
            return 0;
        }
        a->row_units[s] = units;
    }
    Py_DECREF(list);
    Py_ssize_t n_id, n_row;
    p->source_id = vec(v, source_id_o, 0, 8, &n_id, "source_id");
    p->source_row = p->source_id ? vec(v, source_row_o, 0, 8, &n_row, "source_row") : NULL;
    return p->source_row && check_length(n_id, n, "source_id") && check_length(n_row, n, "source_row");
}

/* Every frame longer than a row's head lies wholly in its source's block. */
static int check_tails(const struct packets_args *a)
{
    const struct packets *p = &a->p;
    for (int64_t i = 0; i < p->n; i++) {
        if (p->caplen[i] < 0) {
            PyErr_SetString(PyExc_ValueError, "a negative captured length");
            return 0;
        }
        if (p->caplen[i] <= p->head)
            continue;
        int64_t s = p->source_id ? p->source_id[i] : -1, r = p->source_row ? p->source_row[i] : -1;
        if (s < 0 || s >= a->sources || r < 0 || r >= a->offsets_len[s] || p->offsets[s][r] < 0
            || p->offsets[s][r] + p->caplen[i] > a->block_size[s]) {
            PyErr_SetString(PyExc_ValueError, "a frame outside its source's block");
            return 0;
        }
    }
    return 1;
}

static int dest_ok(const int64_t *dest, int64_t n, int64_t ports)
{
    for (int64_t i = 0; i < n; i++)
        if (dest[i] >= ports) {
            PyErr_SetString(PyExc_ValueError, "a destination past the ports given");
            return 0;
        }
    return 1;
}

/* scatter_records(packets, dest, (pcapng, units), out, bytes, count, start): per port its bytes,
 * packets and where its records start in out */
static PyObject *py_scatter_records(PyObject *self, PyObject *args)
{
    PyObject *packets_o, *dest_o, *format_o, *out_o, *bytes_o, *count_o, *start_o;
    struct record_format format;
    if (!PyArg_ParseTuple(args, "OOOOOOO", &packets_o, &dest_o, &format_o, &out_o, &bytes_o, &count_o, &start_o)
        || !format_of(format_o, &format))
        return NULL;
    struct views v = {.n = 0};
    struct packets_args *a = PyMem_Malloc(sizeof *a);
    if (a == NULL)
        return PyErr_NoMemory();
    Py_ssize_t n_dest, out_len, ports, n_count, n_start;
    int64_t *dest, *bytes, *count, *start;
    uint8_t *out;
    const struct array_arg arrays[] = {VEC_ARG("dest", 0, 8, &dest, &n_dest, -1), VEC_ARG("out", 1, 1, &out, &out_len, -1),
                                       VEC_ARG("bytes", 1, 8, &bytes, &ports, -1),
                                       VEC_ARG("count", 1, 8, &count, &n_count, 2),
                                       VEC_ARG("start", 1, 8, &start, &n_start, 2)};
    if (!packets_of(&v, packets_o, 0, a)
        || !take_arrays(&v, (PyObject *[]){dest_o, out_o, bytes_o, count_o, start_o}, arrays, ARGS(arrays))
        || !check_length(n_dest, a->p.n, "dest") || !dest_ok(dest, a->p.n, ports) || !check_tails(a))
        goto fail;
    int64_t total;
    Py_BEGIN_ALLOW_THREADS
    total = port_bytes(&a->p, dest, ports, &format, bytes, count);
    Py_END_ALLOW_THREADS
    if (!check_length(out_len, total + ports * ROW_SLACK, "out") || a->p.head != ROW_BYTES - 16 || a->sources < 1) {
        PyErr_SetString(PyExc_ValueError, "scatter_records: 80-byte rows, and room for the records and a row more");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    scatter_records(&a->p, dest, ports, &format, bytes, start, out);
    Py_END_ALLOW_THREADS
    release(&v);
    PyMem_Free(a);
    return PyLong_FromLongLong(total);
fail:
    release(&v);
    PyMem_Free(a);
    return NULL;
}

/* ------------------------------------------------------------ tables */

/* lpm = (tbl24, tbl24_rule, tbl8, tbl8_rule, payload_mask, key_bytes, default_hop, default_rule) */
static int lpm_of(struct views *v, PyObject *tuple, struct lpm_table *t)
{
    PyObject *tbl24_o, *tbl24_rule_o, *tbl8_o, *tbl8_rule_o;
    unsigned long payload_mask;
    int key_bytes;
    long long default_hop, default_rule;
    if (!PyArg_ParseTuple(tuple, "OOOOkiLL", &tbl24_o, &tbl24_rule_o, &tbl8_o, &tbl8_rule_o, &payload_mask,
                          &key_bytes, &default_hop, &default_rule))
        return 0;
    Py_ssize_t n24, n24r, n8, n8r;
    if (!(t->tbl24 = vec(v, tbl24_o, 0, 4, &n24, "tbl24")) || !(t->tbl24_rule = vec(v, tbl24_rule_o, 0, 4, &n24r, "tbl24_rule"))
        || !(t->tbl8 = vec(v, tbl8_o, 0, 4, &n8, "tbl8")) || !(t->tbl8_rule = vec(v, tbl8_rule_o, 0, 4, &n8r, "tbl8_rule")))
        return 0;
    if (n24 != 1 << 24 || n24r != n24 || n8r != n8 || (key_bytes != 4 && key_bytes != 16)
        || (uint64_t)payload_mask * 256 + 255 >= (uint64_t)1 << 40) {
        PyErr_SetString(PyExc_ValueError, "an LPM table of an unexpected shape");
        return 0;
    }
    t->payload_mask = (uint32_t)payload_mask;
    t->key_bytes = key_bytes;
    t->default_hop = default_hop;
    t->default_rule = default_rule;
    return 1;
}

/* em = (keys, ports, rules): the slot arrays */
static int em_of(struct views *v, PyObject *tuple, struct em_table *t)
{
    PyObject *keys_o, *ports_o, *rules_o;
    if (!PyArg_ParseTuple(tuple, "OOO", &keys_o, &ports_o, &rules_o))
        return 0;
    Py_buffer *keys = take(v, keys_o, 0, 8, 2, "keys");
    Py_ssize_t slots, n_rules;
    if (keys == NULL || !(t->ports = vec(v, ports_o, 0, 8, &slots, "ports"))
        || !(t->rules = vec(v, rules_o, 0, 8, &n_rules, "rules")))
        return 0;
    if (slots < 1 || (slots & (slots - 1)) || keys->shape[0] != slots || n_rules != slots
        || keys->strides[0] != keys->shape[1] * 8 || (keys->shape[1] != 2 && keys->shape[1] != 5)) {
        PyErr_SetString(PyExc_ValueError, "an exact-match table of an unexpected shape");
        return 0;
    }
    t->keys = keys->buf;
    t->words = (int)keys->shape[1];
    t->mask = (uint64_t)slots - 1;
    return 1;
}

/* acl = (rules, chunk_size, fields, chunk_tables, table_field, starts, starts_at, index, index_at,
 *        shift, words, words_at, summary, rows_at): AclTable._flatten's arrays */
static int acl_of(struct views *v, PyObject *tuple, struct acl_table *t)
{
    PyObject *o[11];
    long long rules, chunk_size;
    int fields;
    if (!PyArg_ParseTuple(tuple, "LLiOOOOOOOOOOO", &rules, &chunk_size, &fields, &o[0], &o[1], &o[2], &o[3], &o[4],
                          &o[5], &o[6], &o[7], &o[8], &o[9], &o[10]))
        return 0;
    Py_ssize_t n_chunk_tables;
    if (!(t->chunk_tables = vec(v, o[0], 0, 8, &n_chunk_tables, "chunk_tables"))
        || !(t->table_field = vec(v, o[1], 0, 8, NULL, "table_field"))
        || !(t->starts = vec(v, o[2], 0, 8, NULL, "starts")) || !(t->starts_at = vec(v, o[3], 0, 8, NULL, "starts_at"))
        || !(t->index = vec(v, o[4], 0, 4, NULL, "index")) || !(t->index_at = vec(v, o[5], 0, 8, NULL, "index_at"))
        || !(t->shift = vec(v, o[6], 0, 8, NULL, "shift")) || !(t->words = vec(v, o[7], 0, 8, NULL, "words"))
        || !(t->words_at = vec(v, o[8], 0, 8, NULL, "words_at")) || !(t->summary = vec(v, o[9], 0, 8, NULL, "summary"))
        || !(t->rows_at = vec(v, o[10], 0, 8, NULL, "rows_at")))
        return 0;
    if (n_chunk_tables < 1 || fields < 1 || fields > 64 || chunk_size != 4096) {
        PyErr_SetString(PyExc_ValueError, "an ACL table of an unexpected shape");
        return 0;
    }
    t->rules = rules;
    t->chunk_size = chunk_size;
    t->chunks = n_chunk_tables - 1;
    t->fields = fields;
    return 1;
}

static PyObject *py_acl_classify(PyObject *self, PyObject *args)
{
    PyObject *table_o, *columns_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOO", &table_o, &columns_o, &out_o))
        return NULL;
    struct views v = {.n = 0};
    struct acl_table t;
    Py_buffer *columns;
    Py_ssize_t n;
    int64_t *out;
    if (!acl_of(&v, table_o, &t) || !(columns = take(&v, columns_o, 0, 8, 2, "columns"))
        || !(out = vec(&v, out_o, 1, 8, &n, "out")))
        goto fail;
    if (columns->shape[0] != t.fields || columns->shape[1] != n || columns->strides[0] != n * 8) {
        PyErr_SetString(PyExc_ValueError, "acl_classify: columns must be (fields, keys), contiguous");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    acl_classify_columns(&t, columns->buf, n, out);
    Py_END_ALLOW_THREADS
    release(&v);
    Py_RETURN_NONE;
fail:
    release(&v);
    return NULL;
}

/* ------------------------------------------------------------ l3fwd */

/* routes = (lookup, table4, table6, eth_header, table codes (code4, code6), acl_actions, acl_lines,
 * portmask); the tables as lpm_of / em_of / acl_of take them; acl_actions and acl_lines: a
 * pair of arrays (None outside ACL mode) */
static int routes_of(struct views *v, PyObject *tuple, struct routes *r)
{
    PyObject *t4, *t6, *eth_o, *actions_o, *lines_o;
    int lookup, code4, code6;
    unsigned long enabled;
    if (!PyArg_ParseTuple(tuple, "iOOO(ii)OOk", &lookup, &t4, &t6, &eth_o, &code4, &code6, &actions_o, &lines_o,
                          &enabled))
        return 0;
    r->enabled = (uint32_t)enabled;            /* ports past 31 are never enabled (ports.is_enabled) */
    Py_ssize_t eth_len;
    if (!(r->eth_header = vec(v, eth_o, 0, 1, &eth_len, "eth_header")) || !check_length(eth_len, 32 * 12, "eth_header"))
        return 0;
    r->lookup = lookup;
    r->table_code[0] = (uint8_t)code4;
    r->table_code[1] = (uint8_t)code6;
    PyObject *tables[2] = {t4, t6};
    for (int f = 0; f < 2; f++) {
        switch (lookup) {
        case LOOKUP_LPM:
        case LOOKUP_FIB:
            if (!lpm_of(v, tables[f], &r->lpm[f]))
                return 0;
            if (r->lpm[f].key_bytes != (f ? 16 : 4)) {
                PyErr_SetString(PyExc_ValueError, "an LPM table of the other family");
                return 0;
            }
            break;
        case LOOKUP_EM:
            if (!em_of(v, tables[f], &r->em[f]))
                return 0;
            if (r->em[f].words != (f ? 5 : 2)) {
                PyErr_SetString(PyExc_ValueError, "an exact-match table of the other family");
                return 0;
            }
            break;
        case LOOKUP_ACL: {
            PyObject *action_o, *line_o;
            Py_ssize_t n_action = 0, n_line = 0;
            if (!acl_of(v, tables[f], &r->acl[f]) || !(action_o = PySequence_GetItem(actions_o, f)))
                return 0;
            r->acl_action[f] = vec(v, action_o, 0, 8, &n_action, "acl actions");
            Py_DECREF(action_o);
            if (!r->acl_action[f] || !(line_o = PySequence_GetItem(lines_o, f)))
                return 0;
            r->acl_line[f] = vec(v, line_o, 0, 8, &n_line, "acl lines");
            Py_DECREF(line_o);
            if (!r->acl_line[f] || !check_length(n_action, r->acl[f].rules, "acl actions")
                || !check_length(n_line, r->acl[f].rules, "acl lines"))
                return 0;
            if (r->acl[f].fields != (f ? 11 : 5)) {
                PyErr_SetString(PyExc_ValueError, "an ACL table of the other family");
                return 0;
            }
            for (int64_t k = 0; k < r->acl[f].rules; k++)
                if (r->acl_action[f][k] >= 32 || (r->acl_action[f][k] < 0 && r->acl_action[f][k] != ACL_DENY_ACTION)) {
                    PyErr_SetString(PyExc_ValueError, "an ACL action that is neither a port nor a deny");
                    return 0;
                }
            break;
        }
        default:
            PyErr_SetString(PyExc_ValueError, "unknown lookup");
            return 0;
        }
    }
    return 1;
}

/* forward_multi or forward_simple(packets, routes, verdicts); verdicts = (dest, reason, table,
 * rule, next_hop), the last three None unless tracing */
static PyObject *forward_path(PyObject *args, void (*forward)(const struct packets *, const struct routes *,
                                                              struct verdicts *))
{
    PyObject *packets_o, *routes_o, *dest_o, *reason_o, *table_o, *rule_o, *next_hop_o;
    if (!PyArg_ParseTuple(args, "OO(OOOOO)", &packets_o, &routes_o, &dest_o, &reason_o, &table_o, &rule_o,
                          &next_hop_o))
        return NULL;
    struct views v = {.n = 0};
    struct packets_args *a = PyMem_Malloc(sizeof *a);
    struct routes *r = PyMem_Malloc(sizeof *r);
    if (a == NULL || r == NULL) {
        PyMem_Free(a);
        PyMem_Free(r);
        return PyErr_NoMemory();
    }
    struct verdicts out = {NULL, NULL, NULL, NULL, NULL};
    Py_ssize_t n_dest, n_reason, n_table, n_rule, n_next_hop;
    if (!packets_of(&v, packets_o, 1, a) || !routes_of(&v, routes_o, r)
        || !(out.dest = vec(&v, dest_o, 1, 8, &n_dest, "dest"))
        || !(out.reason = vec(&v, reason_o, 1, 1, &n_reason, "reason"))
        || !check_length(n_dest, a->p.n, "dest") || !check_length(n_reason, a->p.n, "reason"))
        goto fail;
    if (table_o != Py_None) {
        if (!(out.table = vec(&v, table_o, 1, 1, &n_table, "table")) || !(out.rule = vec(&v, rule_o, 1, 8, &n_rule, "rule"))
            || !(out.next_hop = vec(&v, next_hop_o, 1, 8, &n_next_hop, "next_hop"))
            || !check_length(n_table, a->p.n, "table") || !check_length(n_rule, a->p.n, "rule")
            || !check_length(n_next_hop, a->p.n, "next_hop"))
            goto fail;
    }
    for (int64_t i = 0; i < a->p.n; i++)
        if (a->p.in_port[i] < 0 || a->p.in_port[i] >= 32) {
            PyErr_SetString(PyExc_ValueError, "an input port outside 0..31");
            goto fail;
        }
    Py_BEGIN_ALLOW_THREADS
    forward(&a->p, r, &out);
    Py_END_ALLOW_THREADS
    release(&v);
    PyMem_Free(a);
    PyMem_Free(r);
    Py_RETURN_NONE;
fail:
    release(&v);
    PyMem_Free(a);
    PyMem_Free(r);
    return NULL;
}

static PyObject *py_forward_multi(PyObject *self, PyObject *args)
{
    return forward_path(args, forward_multi);
}

static PyObject *py_forward_simple(PyObject *self, PyObject *args)
{
    return forward_path(args, forward_simple);
}

/* ------------------------------------------------------------ graph */

/* graph_walks(packets, (burst, queues, places, oversize, mbuf_data_room),
 *             (lpm4, lpm6, route_port4, route_port6, eth_header, tx_port),
 *             (counters, edges, state, new_edges), (ptype, reason, next_hop, dest, sent, tx_calls))
 * packets as packets_of takes them, the LPM tables as lpm_of; counters: (nodes, 4) per node
 * (size, calls, objs, realloc_count), edges (nodes, nodes), state the five of struct
 * graph_state, new_edges room for nodes x nodes pairs. Returns (sent, tx calls, new edges). */
static PyObject *py_graph_walks(PyObject *self, PyObject *args)
{
    PyObject *packets_o, *burst_o, *places_o, *lpm_o[2], *route_o[2], *eth_o, *tx_o, *counters_o, *edges_o, *state_o,
        *new_o, *out_o[6];
    long long queues, oversize, room;
    if (!PyArg_ParseTuple(args, "O(OLOLL)(OOOOOO)(OOOO)(OOOOOO)", &packets_o, &burst_o, &queues, &places_o, &oversize,
                          &room, &lpm_o[0], &lpm_o[1], &route_o[0], &route_o[1], &eth_o, &tx_o, &counters_o, &edges_o,
                          &state_o, &new_o, &out_o[0], &out_o[1], &out_o[2], &out_o[3], &out_o[4], &out_o[5]))
        return NULL;
    struct views v = {.n = 0};
    struct packets_args *a = PyMem_Malloc(sizeof *a);
    if (a == NULL)
        return PyErr_NoMemory();
    struct graph_walks g = {.queues = queues, .oversize = oversize, .mbuf_data_room = room};
    Py_ssize_t n_burst, n_places, n_tx, n_routes[2], n_new, n_ptype, n_reason, n_hop, n_dest, n_sent, n_calls;
    Py_buffer *counters, *edges;
    const struct array_arg arrays[] = {
        VEC_ARG("burst", 0, 8, &g.burst, &n_burst, -1), VEC_ARG("places", 0, 8, &g.places, &n_places, -1),
        VEC_ARG("route_port4", 0, 8, &g.route_port[0], &n_routes[0], -1),
        VEC_ARG("route_port6", 0, 8, &g.route_port[1], &n_routes[1], -1),
        VEC_MIN("eth_header", 0, 1, &g.eth_header, 32 * 12), VEC_ARG("tx_port", 0, 8, &g.tx_port, &n_tx, -1),
        VEC_MIN("state", 1, 8, &g.state, sizeof(struct graph_state) / 8),
        VEC_ARG("new_edges", 1, 8, &g.new_edges, &n_new, -1), VEC_ARG("ptype", 1, 1, &g.ptype, &n_ptype, -1),
        VEC_ARG("reason", 1, 1, &g.reason, &n_reason, -1), VEC_ARG("next_hop", 1, 8, &g.next_hop, &n_hop, -1),
        VEC_ARG("dest", 1, 8, &g.dest, &n_dest, -1), VEC_ARG("sent", 1, 8, &g.sent, &n_sent, -1),
        VEC_ARG("tx_calls", 1, 8, &g.tx_calls, &n_calls, -1)};
    if (!packets_of(&v, packets_o, 1, a) || !lpm_of(&v, lpm_o[0], &g.lpm[0]) || !lpm_of(&v, lpm_o[1], &g.lpm[1])
        || !take_arrays(&v, (PyObject *[]){burst_o, places_o, route_o[0], route_o[1], eth_o, tx_o, state_o, new_o,
                                           out_o[0], out_o[1], out_o[2], out_o[3], out_o[4], out_o[5]},
                        arrays, ARGS(arrays))
        || !(counters = take(&v, counters_o, 1, 8, 2, "counters")) || !(edges = take(&v, edges_o, 1, 8, 2, "edges")))
        goto fail;
    g.rows = a->p.rows;
    g.stride = a->p.stride;
    g.caplen = a->p.caplen;
    g.n = a->p.n;
    g.sources = n_places;
    g.tx_nodes = n_tx;
    g.routes[0] = n_routes[0];
    g.routes[1] = n_routes[1];
    g.node = counters->buf;
    g.edges = edges->buf;
    const int64_t nodes = NODE_FIRST_TX + g.tx_nodes + g.sources;
    if (g.lpm[0].key_bytes != 4 || g.lpm[1].key_bytes != 16) {
        PyErr_SetString(PyExc_ValueError, "graph_walks: an LPM table of the other family");
        goto fail;
    }
    if (counters->shape[0] != nodes || counters->shape[1] != 4 || counters->strides[0] != 4 * 8
        || edges->shape[0] != nodes || edges->shape[1] != nodes || edges->strides[0] != nodes * 8
        || !check_length(n_new, 2 * nodes * nodes, "new_edges")) {
        PyErr_SetString(PyExc_ValueError, "graph_walks: counters (nodes, 4) and edges (nodes, nodes), contiguous");
        goto fail;
    }
    if (!check_length(n_burst, g.n, "burst") || !check_length(n_ptype, g.n, "ptype")
        || !check_length(n_reason, g.n, "reason") || !check_length(n_hop, g.n, "next_hop")
        || !check_length(n_dest, g.n, "dest") || !check_length(n_sent, g.n, "sent"))
        goto fail;
    int ok = queues >= 1 && (g.n == 0 || g.burst[0] >= 0);
    for (int64_t p = 1; p < g.n && ok; p++)
        ok = g.burst[p] >= g.burst[p - 1];
    for (int64_t s = 0; s < g.sources && ok; s++)
        ok = g.places[s] >= -1 && g.places[s] < queues;
    for (int64_t t = 0; t < g.tx_nodes && ok; t++)
        ok = g.tx_port[t] >= 0 && g.tx_port[t] < 32;
    const int64_t specs[3] = {g.state->cls_spec, g.state->rewrite_spec[0], g.state->rewrite_spec[1]};
    for (int k = 0; k < 3 && ok; k++)
        ok = specs[k] >= 0 && specs[k] < NODE_FIRST_TX + g.tx_nodes;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "graph_walks: burst ids not ascending, or a place, TX port or speculated "
                                          "node out of range");
        goto fail;
    }
    const int64_t walks = g.n ? g.burst[g.n - 1] / queues - g.burst[0] / queues + 1 : 0;
    if (!check_length(n_calls, walks * g.tx_nodes, "tx_calls"))
        goto fail;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = graph_walks(&g);
    Py_END_ALLOW_THREADS
    if (rc == -2) {
        PyErr_NoMemory();
        goto fail;
    }
    if (rc < 0) {
        PyErr_SetString(PyExc_ValueError, "graph_walks: a route to a port without an ethdev_tx node");
        goto fail;
    }
    release(&v);
    PyMem_Free(a);
    return Py_BuildValue("LLL", (long long)g.sent_count, (long long)g.tx_call_count, (long long)g.new_edge_count);
fail:
    release(&v);
    PyMem_Free(a);
    return NULL;
}

/* ------------------------------------------------------------ dataplane */

/* merge_rounds(queues, rx_burst, place count, first_round, (rows, caplen, in_port, burst, source_id,
 * source_row)); queues: (records, port, place) per source, in polling order */
static PyObject *py_merge_rounds(PyObject *self, PyObject *args)
{
    PyObject *queues_o, *rows_o, *o[5];
    long long rx_burst, places, first_round;
    if (!PyArg_ParseTuple(args, "OLLL(OOOOOO)", &queues_o, &rx_burst, &places, &first_round, &rows_o, &o[0], &o[1],
                          &o[2], &o[3], &o[4]))
        return NULL;
    struct views v = {.n = 0};
    struct queue_records *q = NULL;
    PyObject *list = PySequence_Fast(queues_o, "queues: a sequence of (records, port, place)");
    if (list == NULL)
        return NULL;
    Py_ssize_t sources = PySequence_Fast_GET_SIZE(list), rows, width, stride, len;
    q = PyMem_Calloc((size_t)(sources > 0 ? sources : 1), sizeof *q);
    if (q == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    struct merged out;
    out.rows = mat(&v, rows_o, 1, &rows, &width, &stride, "rows");
    if (out.rows == NULL)
        goto fail;
    if (stride != width || width != ROW_BYTES) {
        PyErr_SetString(PyExc_ValueError, "merge_rounds: rows must be contiguous rows of 80 bytes");
        goto fail;
    }
    out.width = width;
    int64_t **column[5] = {&out.caplen, &out.in_port, &out.burst, &out.source_id, &out.source_row};
    for (int k = 0; k < 5; k++)
        if (!(*column[k] = vec(&v, o[k], 1, 8, &len, "a batch column")) || !check_length(len, rows, "a batch column"))
            goto fail;
    int64_t total = 0;
    for (Py_ssize_t s = 0; s < sources; s++) {
        PyObject *records_o;
        long long port, place;
        Py_ssize_t n, w, st;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(list, s), "OLL", &records_o, &port, &place)
            || !(q[s].records = mat(&v, records_o, 0, &n, &w, &st, "records")))
            goto fail;
        if (w < 16 || w > width || place < 0 || place >= places) {
            PyErr_SetString(PyExc_ValueError, "merge_rounds: records wider than a row, or a place outside the queues");
            goto fail;
        }
        q[s].stride = st;
        q[s].width = w;
        q[s].count = n;
        q[s].port = port;
        q[s].place = place;
        total += n;
    }
    if (rx_burst < 1 || !check_length(rows, total, "rows"))
        goto fail;
    int64_t merged;
    Py_BEGIN_ALLOW_THREADS
    merged = merge_rounds(q, sources, rx_burst, places, first_round, 0, rounds_of(q, sources, rx_burst), &out);
    Py_END_ALLOW_THREADS
    Py_DECREF(list);
    PyMem_Free(q);
    release(&v);
    return PyLong_FromLongLong(merged);
fail:
    Py_DECREF(list);
    PyMem_Free(q);
    release(&v);
    return NULL;
}

/* count_packets(in_port, reason, dest, rx, drops (ports x reasons), flows (ports x (1 + ports))) */
static PyObject *py_count_packets(PyObject *self, PyObject *args)
{
    PyObject *in_port_o, *reason_o, *dest_o, *rx_o, *drops_o, *flows_o;
    if (!PyArg_ParseTuple(args, "OOOOOO", &in_port_o, &reason_o, &dest_o, &rx_o, &drops_o, &flows_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t n, n_reason, n_dest, n_rx;
    const int64_t *in_port, *dest;
    const uint8_t *reason;
    int64_t *rx;
    Py_buffer *drops, *flows;
    const struct array_arg a[] = {VEC_ARG("in_port", 0, 8, &in_port, &n, -1),
                                  VEC_ARG("reason", 0, 1, &reason, &n_reason, 0), VEC_ARG("dest", 0, 8, &dest, &n_dest, 0),
                                  VEC_ARG("rx", 1, 8, &rx, &n_rx, -1)};
    if (!take_arrays(&v, (PyObject *[]){in_port_o, reason_o, dest_o, rx_o}, a, ARGS(a))
        || !(drops = take(&v, drops_o, 1, 8, 2, "drops")) || !(flows = take(&v, flows_o, 1, 8, 2, "flows")))
        goto fail;
    int64_t reasons = drops->shape[1], width = flows->shape[1];
    if (drops->shape[0] != n_rx || drops->strides[0] != reasons * 8 || flows->shape[0] != n_rx
        || flows->strides[0] != width * 8) {
        PyErr_SetString(PyExc_ValueError, "count_packets: drops and flows must be (rx ports, ...), contiguous");
        goto fail;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (in_port[i] < 0 || in_port[i] >= n_rx || reason[i] >= reasons || dest[i] < -1 || dest[i] + 1 >= width) {
            PyErr_SetString(PyExc_ValueError, "count_packets: a port or reason outside the counters");
            goto fail;
        }
    Py_BEGIN_ALLOW_THREADS
    count_packets(in_port, reason, dest, n, reasons, rx, drops->buf, flows->buf, width);
    Py_END_ALLOW_THREADS
    release(&v);
    Py_RETURN_NONE;
fail:
    release(&v);
    return NULL;
}

static PyObject *py_same_port_runs(PyObject *self, PyObject *args)
{
    PyObject *dest_o, *burst_o, *ports_o, *lens_o;
    if (!PyArg_ParseTuple(args, "OOOO", &dest_o, &burst_o, &ports_o, &lens_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t n, n_burst, n_ports, n_lens;
    const int64_t *dest, *burst;
    int64_t *run_ports, *run_lens;
    const struct array_arg a[] = {VEC_ARG("dest", 0, 8, &dest, &n, -1), VEC_ARG("burst", 0, 8, &burst, &n_burst, 0),
                                  VEC_ARG("run_ports", 1, 8, &run_ports, &n_ports, 0),
                                  VEC_ARG("run_lens", 1, 8, &run_lens, &n_lens, 0)};
    if (!take_arrays(&v, (PyObject *[]){dest_o, burst_o, ports_o, lens_o}, a, ARGS(a))) {
        release(&v);
        return NULL;
    }
    int64_t runs;
    Py_BEGIN_ALLOW_THREADS
    runs = same_port_runs(dest, burst, n, run_ports, run_lens);
    Py_END_ALLOW_THREADS
    release(&v);
    return PyLong_FromLongLong(runs);
}

/* send_runs((len, tx_bursts, direct, buffered, runs, rx_burst, tx_burst), run_ports, run_lens, single or None) */
static PyObject *py_send_runs(PyObject *self, PyObject *args)
{
    PyObject *ports_o, *lens_o, *single_o, *c[5];
    long long rx_burst, tx_burst;
    if (!PyArg_ParseTuple(args, "(OOOOOLL)OOO", &c[0], &c[1], &c[2], &c[3], &c[4], &rx_burst, &tx_burst, &ports_o,
                          &lens_o, &single_o))
        return NULL;
    struct views v = {.n = 0};
    struct tx_counters tx = {.rx_burst = rx_burst, .tx_burst = tx_burst};
    int64_t **field[5] = {&tx.len, &tx.tx_bursts, &tx.direct, &tx.buffered, &tx.runs};
    Py_ssize_t ports = -1, n, n_lens, len;
    for (int k = 0; k < 5; k++) {
        if (!(*field[k] = vec(&v, c[k], 1, 8, &len, "a TX counter")))
            goto fail;
        ports = ports < 0 || len < ports ? len : ports;
    }
    const int64_t *run_ports, *run_lens;
    const uint8_t *single = NULL;
    Py_ssize_t n_single;
    if (!(run_ports = vec(&v, ports_o, 0, 8, &n, "run_ports")) || !(run_lens = vec(&v, lens_o, 0, 8, &n_lens, "run_lens"))
        || !check_length(n_lens, n, "run_lens") || !dest_ok(run_ports, n, ports))
        goto fail;
    if (single_o != Py_None && (!(single = vec(&v, single_o, 0, 1, &n_single, "single")) || !check_length(n_single, n, "single")))
        goto fail;
    if (rx_burst < 1) {
        PyErr_SetString(PyExc_ValueError, "send_runs: rx_burst < 1");
        goto fail;
    }
    for (Py_ssize_t r = 0; r < n; r++)
        if (run_ports[r] < 0) {
            PyErr_SetString(PyExc_ValueError, "send_runs: a run of a negative port");
            goto fail;
        }
    Py_BEGIN_ALLOW_THREADS
    send_runs(&tx, run_ports, run_lens, single, n);
    Py_END_ALLOW_THREADS
    release(&v);
    Py_RETURN_NONE;
fail:
    release(&v);
    return NULL;
}

/* lcore_step(queues, tails, (rx_burst, places, first_round), pipeline, routes, step_drops,
 *            (oversize, mbuf_data_room), (rx, drops, out), (run_port, run_len, run_single),
 *            (data, capacity, bytes, packets), (rows, caplen, in_port, burst, source_id, source_row, dest, reason))
 * queues as merge_rounds takes them; tails: (block, offsets) per queue; pipeline: its index in
 * PIPELINES; routes as forward_multi takes them; step_drops: a bytes object by reason code, or
 * None. Returns (received, runs). */
static void l3fwd_multi(const struct packets *p, const void *app, struct verdicts *v)
{
    forward_multi(p, app, v);
}

static void l3fwd_simple(const struct packets *p, const void *app, struct verdicts *v)
{
    forward_simple(p, app, v);
}

#define PIPELINE_NAMES "multi", "simple"
static forward_fn *const PIPELINES[] = {l3fwd_multi, l3fwd_simple};

/* lcore_step's trace: (columns, limit, rx_queue, first_index, numbers, lcore, first_burst,
 * sent, received_at, table, rule, next_hop) — the trace records to fill as
 * trace.TraceRecords' columns (rx_port, rx_queue, lcore, tx_port, index, burst, tx_index,
 * rule, next_hop, caplen, table, reason, head), trace.BurstTracer's state, and scratch of
 * the sub-burst's size. */
static int trace_of(struct views *v, PyObject *obj, struct lcore_trace *t, struct packets_args *a, Py_ssize_t sources,
                    int64_t places, Py_ssize_t sub)
{
    PyObject *c[13], *rx_queue_o, *first_o, *numbers_o, *sent_o, *o[4];
    long long limit, lcore, first_burst;
    Py_ssize_t len, n_first, rows, cols, stride;
    if (!PyArg_ParseTuple(obj, "(OOOOOOOOOOOOO)LOOOLLOOOOO", &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7],
                          &c[8], &c[9], &c[10], &c[11], &c[12], &limit, &rx_queue_o, &first_o, &numbers_o, &lcore,
                          &first_burst, &sent_o, &o[0], &o[1], &o[2], &o[3]))
        return 0;
    struct trace_columns *r = &t->r;
    const struct array_arg columns[] = {
        VEC_MIN("rx_port", 1, 2, &r->rx_port, limit), VEC_MIN("rx_queue", 1, 2, &r->rx_queue, limit),
        VEC_MIN("lcore", 1, 2, &r->lcore, limit), VEC_MIN("tx_port", 1, 2, &r->tx_port, limit),
        VEC_MIN("index", 1, 8, &r->index, limit), VEC_MIN("burst", 1, 8, &r->burst, limit),
        VEC_MIN("tx_index", 1, 8, &r->tx_index, limit), VEC_MIN("rule", 1, 8, &r->rule, limit),
        VEC_MIN("next_hop", 1, 8, &r->next_hop, limit), VEC_MIN("caplen", 1, 4, &r->caplen, limit),
        VEC_MIN("table", 1, 1, &r->table, limit), VEC_MIN("reason", 1, 1, &r->reason, limit),
        MAT_ARG("trace heads", 1, &r->head, &rows, &cols, &stride, -1)};
    const struct array_arg state[] = {
        VEC_MIN("rx_queue", 0, 8, &t->rx_queue, places), VEC_ARG("first_index", 0, 8, &t->first_index, &n_first, -1),
        VEC_ARG("sent", 1, 8, &t->sent, &t->sent_ports, -1), VEC_MIN("received_at", 1, 8, &t->received_at, sub),
        VEC_MIN("table", 1, 1, &t->table, sub), VEC_MIN("rule", 1, 8, &t->rule, sub),
        VEC_MIN("next_hop", 1, 8, &t->next_hop, sub)};
    if (!take_arrays(v, c, columns, ARGS(columns)) || !check_length(rows, limit, "trace heads") || cols != TRACE_HEAD
        || stride != TRACE_HEAD || !take_arrays(v, (PyObject *[]){rx_queue_o, first_o, sent_o, o[0], o[1], o[2], o[3]},
                                                state, ARGS(state))
        || !check_length(n_first, sources, "first_index")) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "lcore_step: trace heads of an unexpected shape");
        return 0;
    }
    PyObject *numbers = PySequence_Fast(numbers_o, "numbers: per source, an array or None");
    if (numbers == NULL)
        return 0;
    int ok = PySequence_Fast_GET_SIZE(numbers) == sources && limit >= 0;
    for (Py_ssize_t k = 0; ok && k < sources; k++) {
        PyObject *each = PySequence_Fast_GET_ITEM(numbers, k);
        a->numbers[k] = NULL;
        if (each != Py_None)
            ok = (a->numbers[k] = vec(v, each, 0, 8, &len, "numbers")) != NULL && check_length(len, a->offsets_len[k], "numbers");
    }
    Py_DECREF(numbers);
    if (!ok) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "lcore_step: a trace's numbers of an unexpected size");
        return 0;
    }
    t->numbers = (const int64_t *const *)a->numbers;
    t->limit = limit, t->filled = 0, t->lcore = lcore, t->first_burst = first_burst;
    return 1;
}

/* hits.RuleHits.compiled_args and the scratch notes: (packets, bytes, base, counted,
 * table, rule, next_hop) */
static int hits_of(struct views *v, PyObject *obj, struct rule_hits *h, Py_ssize_t sub)
{
    PyObject *o[7];
    Py_ssize_t n_packets, n_bytes, n_base, n_counted;
    if (!PyArg_ParseTuple(obj, "OOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6]))
        return 0;
    const struct array_arg a[] = {
        VEC_ARG("hits packets", 1, 8, &h->packets, &n_packets, -1), VEC_ARG("hits bytes", 1, 8, &h->bytes, &n_bytes, -1),
        VEC_ARG("hits base", 0, 8, &h->base, &n_base, -1), VEC_ARG("counted reasons", 0, 1, &h->counted, &n_counted, -1),
        VEC_MIN("table", 1, 1, &h->table, sub), VEC_MIN("rule", 1, 8, &h->rule, sub),
        VEC_MIN("next_hop", 1, 8, &h->next_hop, sub)};
    if (!take_arrays(v, o, a, ARGS(a)))
        return 0;
    if (n_bytes != n_packets || n_counted != 256) {
        PyErr_SetString(PyExc_ValueError, "lcore_step: hit counters of an unexpected size");
        return 0;
    }
    h->size = n_packets;
    h->tables = n_base;
    return 1;
}

static PyObject *py_lcore_step(PyObject *self, PyObject *args)
{
    PyObject *queues_o, *tails_o, *routes_o, *step_o, *c[3], *r[3], *data_o, *bytes_o, *packets_o, *format_o, *m[8];
    PyObject *trace_o = Py_None, *hits_o = Py_None;
    long long rx_burst, places, first_round, oversize, room, capacity;
    int pipeline;
    if (!PyArg_ParseTuple(args, "OO(LLL)iOO(LL)(OOO)(OOO)(OLOOO)(OOOOOOOO)|OO", &queues_o, &tails_o, &rx_burst, &places,
                          &first_round, &pipeline, &routes_o, &step_o, &oversize, &room, &c[0], &c[1], &c[2], &r[0],
                          &r[1], &r[2], &data_o, &capacity, &bytes_o, &packets_o, &format_o, &m[0], &m[1], &m[2], &m[3],
                          &m[4], &m[5], &m[6], &m[7], &trace_o, &hits_o))
        return NULL;
    if (pipeline < 0 || pipeline >= (int)(sizeof PIPELINES / sizeof *PIPELINES)) {
        PyErr_SetString(PyExc_ValueError, "lcore_step: unknown pipeline");
        return NULL;
    }
    struct views v = {.n = 0};
    struct lcore_step *s = PyMem_Calloc(1, sizeof *s);
    struct packets_args *a = PyMem_Calloc(1, sizeof *a);
    struct routes *routes = PyMem_Malloc(sizeof *routes);
    struct queue_records *q = NULL;
    PyObject *queues = PySequence_Fast(queues_o, "queues: a sequence of (records, port, place)");
    PyObject *tails = queues ? PySequence_Fast(tails_o, "tails: a sequence of (block, offsets, row units)") : NULL;
    if (s == NULL || a == NULL || routes == NULL || tails == NULL) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto fail;
    }
    Py_ssize_t sources = PySequence_Fast_GET_SIZE(queues);
    if (PySequence_Fast_GET_SIZE(tails) != sources || sources > MAX_SOURCES || rx_burst < 1) {
        PyErr_SetString(PyExc_ValueError, "lcore_step: one (block, offsets) per queue, at most 4096 queues");
        goto fail;
    }
    if (!(q = PyMem_Calloc((size_t)(sources > 0 ? sources : 1), sizeof *q)))
        goto fail;
    int64_t received = 0;
    for (Py_ssize_t k = 0; k < sources; k++) {
        PyObject *records_o, *block_o, *offsets_o;
        long long port, place, units;
        Py_ssize_t n, w, st;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(queues, k), "OLL", &records_o, &port, &place)
            || !(q[k].records = mat(&v, records_o, 0, &n, &w, &st, "records"))
            || !PyArg_ParseTuple(PySequence_Fast_GET_ITEM(tails, k), "OOL", &block_o, &offsets_o, &units)
            || !(a->blocks[k] = vec(&v, block_o, 0, 1, &a->block_size[k], "block"))
            || !(a->offsets[k] = vec(&v, offsets_o, 0, 8, &a->offsets_len[k], "offsets")) || !units_ok(units))
            goto fail;
        a->row_units[k] = units;
        if (w < 16 || w > 80 || place < 0 || place >= places || port < 0 || port >= 32 || a->offsets_len[k] < n) {
            PyErr_SetString(PyExc_ValueError, "lcore_step: a queue's records, port or place out of range");
            goto fail;
        }
        q[k].stride = st;
        q[k].width = w;
        q[k].count = n;
        q[k].port = port;
        q[k].place = place;
        received += n;
    }
    if (!routes_of(&v, routes_o, routes))
        goto fail;
    Py_ssize_t n_rx, n_runs, n_lens, n_single, ports, n_packets, data_len, sub, stride;
    Py_buffer *drops, *flows;
    const struct array_arg counted[] = {
        VEC_ARG("rx", 1, 8, &s->counts.rx, &n_rx, -1), VEC_ARG("run_port", 1, 8, &s->runs.port, &n_runs, -1),
        VEC_ARG("run_len", 1, 8, &s->runs.len, &n_lens, -1), VEC_ARG("run_single", 1, 1, &s->runs.single, &n_single, -1),
        VEC_ARG("data", 1, 1, &s->out.data, &data_len, -1), VEC_ARG("bytes", 1, 8, &s->out.bytes, &ports, -1),
        VEC_ARG("packets", 1, 8, &s->out.packets, &n_packets, -1),
        MAT_ARG("rows", 1, &s->sub.rows, &sub, &s->sub.width, &stride, -1)};
    if (!take_arrays(&v, (PyObject *[]){c[0], r[0], r[1], r[2], data_o, bytes_o, packets_o, m[0]}, counted,
                     ARGS(counted))
        || !(drops = take(&v, c[1], 1, 8, 2, "drops")) || !(flows = take(&v, c[2], 1, 8, 2, "flows"))
        || !format_of(format_o, &s->out.format))
        goto fail;
    const struct array_arg scratch[] = {
        VEC_MIN("caplen", 1, 8, &s->sub.caplen, sub), VEC_MIN("in_port", 1, 8, &s->sub.in_port, sub),
        VEC_MIN("burst", 1, 8, &s->sub.burst, sub), VEC_MIN("source_id", 1, 8, &s->sub.source_id, sub),
        VEC_MIN("source_row", 1, 8, &s->sub.source_row, sub), VEC_MIN("dest", 1, 8, &s->dest, sub),
        VEC_MIN("reason", 1, 1, &s->reason, sub)};
    if (!take_arrays(&v, m + 1, scratch, ARGS(scratch)))
        goto fail;
    s->counts.reasons = drops->shape[1];
    s->counts.drops = drops->buf;
    s->counts.flows = flows->buf;
    s->counts.flow_width = flows->shape[1];
    if (drops->shape[0] != n_rx || drops->strides[0] != s->counts.reasons * 8 || n_rx < 32
        || flows->shape[0] != n_rx || flows->strides[0] != s->counts.flow_width * 8 || s->counts.flow_width < 33
        || oversize < 1 || oversize >= s->counts.reasons || s->counts.reasons < 7 || n_lens < n_runs || n_single < n_runs
        || n_runs < received || ports < 32 || n_packets < ports || capacity < 1
        || s->sub.width != ROW_BYTES || stride != ROW_BYTES || sub < rx_burst * sources) {
        PyErr_SetString(PyExc_ValueError, "lcore_step: counters, runs, outputs or sub-burst of an unexpected size");
        goto fail;
    }
    Py_ssize_t n_step = 0;
    if (step_o != Py_None) {
        if (!(s->step_drops = vec(&v, step_o, 0, 1, &n_step, "step_drops")) || !check_length(n_step, s->counts.reasons, "step_drops"))
            goto fail;
    }
    if (trace_o != Py_None && !trace_of(&v, trace_o, &s->trace, a, sources, places, sub))
        goto fail;
    if (hits_o != Py_None && !hits_of(&v, hits_o, &s->hits, sub))
        goto fail;
    s->q = q;
    s->sources = sources;
    s->blocks = a->blocks;
    s->block_bytes = a->block_size;
    s->offsets = a->offsets;
    s->row_units = a->row_units;
    s->rx_burst = rx_burst;
    s->places = places;
    s->first_round = first_round;
    s->forward = PIPELINES[pipeline];
    s->app = routes;
    s->oversize = oversize;
    s->mbuf_data_room = room;
    s->out.capacity = capacity;
    s->out.ports = data_len / capacity;        /* the TX ports that have a part */
    s->sub_packets = sub;
    int64_t got;
    Py_BEGIN_ALLOW_THREADS
    got = lcore_step(s);
    Py_END_ALLOW_THREADS
    if (got < 0) {
        PyErr_SetString(PyExc_ValueError, "lcore_step: a record past its port's output, or a frame outside its block");
        goto fail;
    }
    PyObject *result = Py_BuildValue("LLL", (long long)got, (long long)s->runs.n, (long long)s->trace.filled);
    Py_DECREF(queues);
    Py_DECREF(tails);
    release(&v);
    PyMem_Free(q);
    PyMem_Free(s);
    PyMem_Free(a);
    PyMem_Free(routes);
    return result;
fail:
    Py_XDECREF(queues);
    Py_XDECREF(tails);
    release(&v);
    PyMem_Free(q);
    PyMem_Free(s);
    PyMem_Free(a);
    PyMem_Free(routes);
    return NULL;
}

/* ------------------------------------------------------------ rss, merge */

/* A port's RSS, (l4, tables, reta), as struct rss. */
static int rss_of(struct views *v, PyObject *obj, struct rss *r)
{
    PyObject *tables_o, *reta_o;
    Py_ssize_t table_len, reta_size;
    if (!PyArg_ParseTuple(obj, "pOO", &r->l4, &tables_o, &reta_o)
        || !(r->tables = vec(v, tables_o, 0, 4, &table_len, "tables")) || !check_length(table_len, 36 * 256, "tables")
        || !(r->reta = vec(v, reta_o, 0, 8, &reta_size, "reta")))
        return 0;
    if (reta_size < 1 || (reta_size & (reta_size - 1))) {
        PyErr_SetString(PyExc_ValueError, "rss: the redirection table's size is not a power of 2");
        return 0;
    }
    r->reta_size = reta_size;
    return 1;
}

/* rss_index((l4, tables, reta), buf, pos, end, max_caplen, snap, offsets, caplen, queue, ts) -> (n, pos, stop):
 * up to len(offsets) records */
static PyObject *py_rss_index(PyObject *self, PyObject *args)
{
    PyObject *rss_o, *buf_o, *offsets_o, *caplen_o, *queue_o, *ts_o;
    long long pos, end, max_caplen, snap;
    if (!PyArg_ParseTuple(args, "OOLLLLOOOO", &rss_o, &buf_o, &pos, &end, &max_caplen, &snap, &offsets_o, &caplen_o,
                          &queue_o, &ts_o))
        return NULL;
    struct views v = {.n = 0};
    struct rss r;
    Py_ssize_t size, n;
    const uint8_t *buf;
    int64_t *offsets;
    uint32_t *caplen;
    uint8_t *queue;
    uint64_t *ts;
    const struct array_arg a[] = {VEC_ARG("buf", 0, 1, &buf, &size, -1), VEC_ARG("offsets", 1, 8, &offsets, &n, -1),
                                  VEC_ARG("caplen", 1, 4, &caplen, NULL, 1), VEC_ARG("queue", 1, 1, &queue, NULL, 1),
                                  VEC_ARG("ts", 1, 8, &ts, NULL, 1)};
    if (!rss_of(&v, rss_o, &r) || !take_arrays(&v, (PyObject *[]){buf_o, offsets_o, caplen_o, queue_o, ts_o}, a,
                                               ARGS(a)))
        goto fail;
    if (pos < 0 || end > size || pos > end) {
        PyErr_SetString(PyExc_ValueError, "rss_index: a range outside the buffer");
        goto fail;
    }
    int64_t after, got;
    int stop;
    Py_BEGIN_ALLOW_THREADS
    got = rss_index(&r, buf, pos, end, n, max_caplen, snap, offsets, caplen, queue, ts, &after, &stop);
    Py_END_ALLOW_THREADS
    return walked(&v, got, after, stop);
fail:
    release(&v);
    return NULL;
}

/* rss_queues((l4, tables, reta), records, out) */
static PyObject *py_rss_queues(PyObject *self, PyObject *args)
{
    PyObject *rss_o, *records_o, *out_o;
    if (!PyArg_ParseTuple(args, "OOO", &rss_o, &records_o, &out_o))
        return NULL;
    struct views v = {.n = 0};
    struct rss r;
    Py_ssize_t n, width, stride, out_len;
    const uint8_t *records;
    int64_t *out;
    const struct array_arg a[] = {MAT_ARG("records", 0, &records, &n, &width, &stride, -1),
                                  VEC_ARG("out", 1, 8, &out, &out_len, 0)};
    if (!rss_of(&v, rss_o, &r) || !take_arrays(&v, (PyObject *[]){records_o, out_o}, a, ARGS(a)))
        goto fail;
    if (width < 16 || width > ROW_BYTES) {
        PyErr_SetString(PyExc_ValueError, "rss_queues: records narrower than a record header or wider than a row");
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    rss_queues(&r, records, stride, width, n, out);
    Py_END_ALLOW_THREADS
    release(&v);
    Py_RETURN_NONE;
fail:
    release(&v);
    return NULL;
}

/* merge_queues(queues, positions, carry, floor, open, pcapng, out, source) -> (records, bytes,
 * bad queue or -1): positions[f] (int64, moved on) is where what is left of queues[f]
 * starts; carry[f] (uint64, moved on), floor[f] (uint64), open[f] (uint8) as struct
 * queue_file; out None: records counted, not copied */
static PyObject *py_merge_queues(PyObject *self, PyObject *args)
{
    PyObject *files_o, *positions_o, *carry_o, *floor_o, *open_o, *out_o, *source_o;
    int pcapng;
    if (!PyArg_ParseTuple(args, "O!OOOOpOO", &PyList_Type, &files_o, &positions_o, &carry_o, &floor_o, &open_o,
                          &pcapng, &out_o, &source_o))
        return NULL;
    struct views v = {.n = 0};
    struct queue_file q[MAX_TX_QUEUES];
    Py_ssize_t k = PyList_GET_SIZE(files_o), npos, ncarry, nfloor, nopen, capacity, room;
    int64_t *positions;
    uint64_t *carry;
    const uint64_t *floor;
    const uint8_t *open;
    uint8_t *out, *source;
    const struct array_arg a[] = {VEC_ARG("positions", 1, 8, &positions, &npos, -1),
                                  VEC_ARG("carry", 1, 8, &carry, &ncarry, -1), VEC_ARG("floor", 0, 8, &floor, &nfloor, -1),
                                  VEC_ARG("open", 0, 1, &open, &nopen, -1), VEC_ARG("source", 1, 1, &source, &room, -1)};
    if (!take_arrays(&v, (PyObject *[]){positions_o, carry_o, floor_o, open_o, source_o}, a, ARGS(a))
            || !check_length(npos, k, "positions") || !check_length(ncarry, k, "carry")
            || !check_length(nfloor, k, "floor") || !check_length(nopen, k, "open"))
        goto fail;
    out = NULL;                                 /* None: the records are only counted */
    capacity = INT64_MAX;
    if (out_o != Py_None && !(out = vec(&v, out_o, 1, 1, &capacity, "out")))
        goto fail;
    if (k > MAX_TX_QUEUES || k > MAX_VIEWS - 6) {
        PyErr_SetString(PyExc_ValueError, "merge_queues: too many queues");
        goto fail;
    }
    for (Py_ssize_t f = 0; f < k; f++) {
        Py_ssize_t size;
        if ((q[f].data = vec(&v, PyList_GET_ITEM(files_o, f), 0, 1, &size, "file")) == NULL)
            goto fail;
        q[f].size = size;
        q[f].pos = positions[f];
        q[f].open = open[f] != 0;
        q[f].carry = carry[f];
        q[f].floor = floor[f];
        if (q[f].pos < 0 || q[f].pos > size) {
            PyErr_SetString(PyExc_ValueError, "merge_queues: a position outside its file");
            goto fail;
        }
    }
    int64_t n, used = 0, bad = -1;
    Py_BEGIN_ALLOW_THREADS
    n = merge_queues(q, k, pcapng, out, capacity, source, room, &used, &bad);
    Py_END_ALLOW_THREADS
    for (Py_ssize_t f = 0; f < k; f++) {
        positions[f] = q[f].pos;
        carry[f] = q[f].carry;
    }
    release(&v);
    return Py_BuildValue("LLL", (long long)(n < 0 ? 0 : n), (long long)used, (long long)(n < 0 ? bad : -1));
fail:
    release(&v);
    return NULL;
}

/* comment_blocks(blocks, text, starts, ends, out, pos, k) -> (bytes, next pos, next k); bytes -1:
 * blocks is not one EPB per comment */
static PyObject *py_comment_blocks(PyObject *self, PyObject *args)
{
    PyObject *data_o, *text_o, *starts_o, *ends_o, *out_o;
    long long pos, k;
    if (!PyArg_ParseTuple(args, "OOOOOLL", &data_o, &text_o, &starts_o, &ends_o, &out_o, &pos, &k))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t size, tn, n, ne, capacity;
    const uint8_t *data, *text;
    const int64_t *starts, *ends;
    uint8_t *out;
    const struct array_arg a[] = {VEC_ARG("blocks", 0, 1, &data, &size, -1), VEC_ARG("text", 0, 1, &text, &tn, -1),
                                  VEC_ARG("starts", 0, 8, &starts, &n, -1), VEC_ARG("ends", 0, 8, &ends, &ne, 2),
                                  VEC_ARG("out", 1, 1, &out, &capacity, -1)};
    if (!take_arrays(&v, (PyObject *[]){data_o, text_o, starts_o, ends_o, out_o}, a, ARGS(a)))
        goto fail;
    int ok = k >= 0 && k <= n && pos >= 0 && pos <= size;
    for (Py_ssize_t i = 0; ok && i < n; i++)
        ok = starts[i] >= 0 && starts[i] <= ends[i] && ends[i] <= tn && ends[i] - starts[i] <= 0xFFFF;
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "comment_blocks: a comment outside its text");
        goto fail;
    }
    int64_t next = k, at = pos, used;
    Py_BEGIN_ALLOW_THREADS
    used = comment_blocks(data, size, text, starts, ends, n, out, capacity, &at, &next);
    Py_END_ALLOW_THREADS
    release(&v);
    return Py_BuildValue("LLL", (long long)used, (long long)at, (long long)next);
fail:
    release(&v);
    return NULL;
}

/* ------------------------------------------------------------ traces */

/* A 1-d array of integers of 1, 2, 4 or 8 bytes, native order, any stride; at least n of them. */
static int int_column_of(struct views *v, PyObject *obj, Py_ssize_t n, struct int_column *c, const char *what)
{
    if (v->n == MAX_VIEWS) {
        PyErr_SetString(PyExc_RuntimeError, "too many arrays in one call");
        return 0;
    }
    Py_buffer *b = &v->view[v->n];
    if (PyObject_GetBuffer(obj, b, PyBUF_STRIDES | PyBUF_FORMAT) < 0)
        return 0;
    v->n++;
    const char *format = b->format ? b->format : "B";
    if (*format == '<' || *format == '=' || *format == '@')
        format++;
    if (b->ndim != 1 || !*format || format[1] || !strchr("bBhHiIlLqQ", *format)
        || (b->itemsize != 1 && b->itemsize != 2 && b->itemsize != 4 && b->itemsize != 8)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a 1-d array of integers", what);
        return 0;
    }
    c->data = b->buf;
    c->stride = b->strides[0];
    c->size = (int)b->itemsize;
    c->is_signed = strchr("bhilq", *format) != NULL;
    return check_length(b->shape[0], n, what);
}

/* A choice's texts: bytes, and offsets (k + 1 of them, rising, inside the bytes). */
static int choice_of(struct views *v, PyObject *bytes_o, PyObject *offsets_o, struct line_piece *piece)
{
    Py_ssize_t size, n_offsets;
    if (!(piece->bytes = vec(v, bytes_o, 0, 1, &size, "texts"))
        || !(piece->offsets = vec(v, offsets_o, 0, 8, &n_offsets, "offsets")))
        return 0;
    piece->texts = n_offsets - 1;
    piece->width = 0;
    for (Py_ssize_t k = 0; k < piece->texts; k++) {
        int64_t len = piece->offsets[k + 1] - piece->offsets[k];
        piece->width = len > piece->width ? len : piece->width;
        if (piece->offsets[k] < 0 || len < 0 || piece->offsets[k + 1] > size) {
            PyErr_SetString(PyExc_ValueError, "render_lines: a choice's offsets outside its texts");
            return 0;
        }
    }
    return 1;
}

/* render_lines(pieces, n, out, ends) -> bytes written: the pieces as jsonlines.Lines holds them,
 * each (kind, bytes, offsets, numbers): (TEXT, its bytes, None, None), (CHOICE, the texts
 * one after the other, their offsets, each line's code), (NUMBER, None, None, the numbers),
 * (BLOCK, the (n, w) cells, None, None); out, a bytearray, is first grown to the most n
 * lines of these pieces can take (and LINE_SLACK); ends, None or n int64s, gets the place of
 * each line's newline. */
static PyObject *py_render_lines(PyObject *self, PyObject *args)
{
    PyObject *pieces_o, *out_o, *ends_o;
    long long n;
    if (!PyArg_ParseTuple(args, "OLO!O", &pieces_o, &n, &PyByteArray_Type, &out_o, &ends_o))
        return NULL;
    PyObject *list = PySequence_Fast(pieces_o, "pieces: a sequence of (kind, bytes, offsets, numbers)");
    if (list == NULL)
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t count = PySequence_Fast_GET_SIZE(list);
    struct line_piece *pieces = PyMem_Calloc((size_t)(count > 0 ? count : 1), sizeof *pieces);
    if (pieces == NULL) {
        PyErr_NoMemory();
        goto fail;
    }
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "render_lines: a negative count of lines");
        goto fail;
    }
    for (Py_ssize_t p = 0; p < count; p++) {
        struct line_piece *piece = &pieces[p];
        PyObject *bytes_o, *offsets_o, *numbers_o;
        int kind;
        Py_ssize_t rows;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(list, p), "iOOO", &kind, &bytes_o, &offsets_o, &numbers_o))
            goto fail;
        piece->kind = kind;
        if (kind == PIECE_TEXT) {
            if (!(piece->bytes = vec(&v, bytes_o, 0, 1, &piece->width, "a text")))
                goto fail;
        } else if (kind == PIECE_CHOICE) {
            if (!choice_of(&v, bytes_o, offsets_o, piece) || !int_column_of(&v, numbers_o, n, &piece->values, "codes"))
                goto fail;
        } else if (kind == PIECE_NUMBER) {
            if (!int_column_of(&v, numbers_o, n, &piece->values, "numbers"))
                goto fail;
        } else if (kind == PIECE_BLOCK) {
            if (!(piece->bytes = mat(&v, bytes_o, 0, &rows, &piece->width, &piece->stride, "a block"))
                || !check_length(rows, n, "a block"))
                goto fail;
        } else {
            PyErr_Format(PyExc_ValueError, "render_lines: no piece of kind %d", kind);
            goto fail;
        }
    }
    int64_t per_line = line_bytes(pieces, count);
    if (n > 0 && per_line > (PY_SSIZE_T_MAX - LINE_SLACK) / n) {
        PyErr_SetString(PyExc_OverflowError, "render_lines: too many lines for one buffer");
        goto fail;
    }
    Py_ssize_t bound = n * per_line + LINE_SLACK;
    if (PyByteArray_GET_SIZE(out_o) < bound && PyByteArray_Resize(out_o, bound) < 0)
        goto fail;
    uint8_t *out = vec(&v, out_o, 1, 1, NULL, "out");
    if (out == NULL)
        goto fail;
    int64_t *ends = NULL;
    Py_ssize_t n_ends;
    if (ends_o != Py_None && (!(ends = vec(&v, ends_o, 1, 8, &n_ends, "ends")) || !check_length(n_ends, n, "ends")))
        goto fail;
    int64_t written;
    Py_BEGIN_ALLOW_THREADS
    written = render_lines(pieces, count, n, out, ends);
    Py_END_ALLOW_THREADS
    if (written < 0) {
        PyErr_SetString(PyExc_ValueError, "render_lines: a code outside its pool");
        goto fail;
    }
    Py_DECREF(list);
    PyMem_Free(pieces);
    release(&v);
    return PyLong_FromLongLong(written);
fail:
    Py_DECREF(list);
    PyMem_Free(pieces);
    release(&v);
    return NULL;
}

/* distinct_rows(rows, first, inverse) -> how many distinct rows (2-d bytes; first, inverse: n int64s) */
static PyObject *py_distinct_rows(PyObject *self, PyObject *args)
{
    PyObject *rows_o, *first_o, *inverse_o;
    if (!PyArg_ParseTuple(args, "OOO", &rows_o, &first_o, &inverse_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t n, width, stride, n_first, n_inverse;
    const uint8_t *rows;
    int64_t *first, *inverse, *slots = NULL;
    const struct array_arg a[] = {MAT_ARG("rows", 0, &rows, &n, &width, &stride, -1),
                                  VEC_ARG("first", 1, 8, &first, &n_first, 0),
                                  VEC_ARG("inverse", 1, 8, &inverse, &n_inverse, 0)};
    if (!take_arrays(&v, (PyObject *[]){rows_o, first_o, inverse_o}, a, ARGS(a)))
        goto fail;
    int64_t size = 16;
    while (size < 2 * n)                        /* at most half full: short probes */
        size *= 2;
    if (!(slots = PyMem_Malloc((size_t)size * sizeof *slots))) {
        PyErr_NoMemory();
        goto fail;
    }
    int64_t distinct;
    Py_BEGIN_ALLOW_THREADS
    distinct = distinct_rows(rows, stride, width, n, first, inverse, slots, size - 1);
    Py_END_ALLOW_THREADS
    PyMem_Free(slots);
    release(&v);
    return PyLong_FromLongLong(distinct);
fail:
    release(&v);
    return NULL;
}

/* key_texts(table, heads, kinds) -> (texts, width, longest): texts a bytearray of n rows of
 * width bytes (room for the longest text of the kinds the rows have), each key's JSON text
 * NUL-padded; heads at frame offsets (58+ bytes a row); kinds: the key_kind of each table code. */
static PyObject *py_key_texts(PyObject *self, PyObject *args)
{
    PyObject *table_o, *heads_o, *kinds_o;
    if (!PyArg_ParseTuple(args, "OOO", &table_o, &heads_o, &kinds_o))
        return NULL;
    struct views v = {.n = 0};
    Py_ssize_t n, rows, cols, stride, n_kinds;
    const uint8_t *table, *heads, *kinds;
    const struct array_arg a[] = {VEC_ARG("table", 0, 1, &table, &n, -1),
                                  MAT_ARG("heads", 0, &heads, &rows, &cols, &stride, 0),
                                  VEC_ARG("kinds", 0, 1, &kinds, &n_kinds, -1)};
    if (!take_arrays(&v, (PyObject *[]){table_o, heads_o, kinds_o}, a, ARGS(a))
        || !check_length(cols, KEY_FRAME_BYTES, "a head"))
        goto fail;
    static const int64_t longest_of[] = KEY_TEXT_BYTES;
    for (Py_ssize_t k = 0; k < n_kinds; k++)
        if (kinds[k] > KEY_FIVE_TUPLE6) {
            PyErr_SetString(PyExc_ValueError, "key_texts: an unknown key kind");
            goto fail;
        }
    int64_t width = 8;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (table[i] >= n_kinds) {
            PyErr_SetString(PyExc_ValueError, "key_texts: a table code without a kind");
            goto fail;
        }
        if (longest_of[kinds[table[i]]] > width)
            width = (longest_of[kinds[table[i]]] + 7) / 8 * 8;
    }
    PyObject *texts = PyByteArray_FromStringAndSize(NULL, n * width);
    if (texts == NULL)
        goto fail;
    int64_t longest;
    uint8_t *out = (uint8_t *)PyByteArray_AS_STRING(texts);
    Py_BEGIN_ALLOW_THREADS
    longest = key_texts(table, heads, stride, n, kinds, out, width);
    Py_END_ALLOW_THREADS
    release(&v);
    return Py_BuildValue("NLL", texts, (long long)width, (long long)longest);
fail:
    release(&v);
    return NULL;
}

/* ------------------------------------------------------------ the module */

static PyMethodDef methods[] = {
    {"scan_records", py_scan_records, METH_VARARGS, "capture.kernels.scan_records"},
    {"walk_rows", py_walk_rows, METH_VARARGS, "capture.kernels.walk_rows"},
    {"scan_blocks", py_scan_blocks, METH_VARARGS, "capture.kernels.scan_blocks"},
    {"walk_blocks", py_walk_blocks, METH_VARARGS, "capture.pcapng.PcapngReader._walk's packet blocks"},
    {"gather_windows", py_gather_windows, METH_VARARGS, "capture.kernels.gather_windows"},
    {"concat_ranges", py_concat_ranges, METH_VARARGS, "capture.kernels.concat_ranges"},
    {"merge_queues", py_merge_queues, METH_VARARGS, "capture.merge.merge_tx_queues's pass"},
    {"comment_blocks", py_comment_blocks, METH_VARARGS, "dataplane.annotations.add_comments's blocks"},
    {"rss_queues", py_rss_queues, METH_VARARGS, "dataplane.rss.rss_queues"},
    {"rss_index", py_rss_index, METH_VARARGS, "dataplane.rss.index_capture's walk"},
    {"pack_rows", py_pack_rows, METH_VARARGS, "capture.kernels.pack_rows"},
    {"scatter_records", py_scatter_records, METH_VARARGS, "capture.writers: a super-burst grouped by TX port"},
    {"acl_classify", py_acl_classify, METH_VARARGS, "tables.acl.AclTable.classify"},
    {"forward_multi", py_forward_multi, METH_VARARGS, "l3fwd.multi.forward"},
    {"forward_simple", py_forward_simple, METH_VARARGS, "l3fwd.simple.forward"},
    {"lcore_step", py_lcore_step, METH_VARARGS, "dataplane.lcore.main_loop over one super-burst (an l3fwd path)"},
    {"merge_rounds", py_merge_rounds, METH_VARARGS, "dataplane.polling._merge"},
    {"count_packets", py_count_packets, METH_VARARGS, "dataplane.stats.RunStats.count"},
    {"same_port_runs", py_same_port_runs, METH_VARARGS, "dataplane.tx.same_port_runs"},
    {"send_runs", py_send_runs, METH_VARARGS, "dataplane.tx.TxModel.send_runs"},
    {"render_lines", py_render_lines, METH_VARARGS, "dataplane.jsonlines.Lines.render"},
    {"distinct_rows", py_distinct_rows, METH_VARARGS, "dataplane.jsonlines.distinct"},
    {"key_texts", py_key_texts, METH_VARARGS, "l3fwd.trace.key_block"},
    {"graph_walks", py_graph_walks, METH_VARARGS, "graph.run.walk_burst: a super-burst's walks"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    .m_base = PyModuleDef_HEAD_INIT,
    .m_name = "_compiled",
    .m_doc = "l3fwd-sim's compiled twins (compiled.h)",
    .m_size = -1,
    .m_methods = methods,
};

PyMODINIT_FUNC PyInit__compiled(void)
{
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    const char *names[] = {"DROP_REASONS", "LOOKUPS", "PIPELINES", "GRAPH_NODES", "GRAPH_DROP_REASONS"};
    PyObject *values[] = {Py_BuildValue("(ssssss)", DROP_REASON_NAMES),
                          Py_BuildValue("(ssss)", "lpm", "fib", "em", "acl"), Py_BuildValue("(ss)", PIPELINE_NAMES),
                          Py_BuildValue("(ssssss)", GRAPH_NODE_NAMES), Py_BuildValue("(ssss)", GRAPH_DROP_REASON_NAMES)};
    for (int k = 0; k < ARGS(names); k++)
        if (values[k] == NULL || PyModule_AddObject(m, names[k], values[k]) < 0) {
            for (int j = k; j < ARGS(names); j++)        /* PyModule_AddObject took the ones before */
                Py_XDECREF(values[j]);
            Py_DECREF(m);
            return NULL;
        }
    return m;
}
