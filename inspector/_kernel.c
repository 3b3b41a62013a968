/*
 * inspector._kernel: how JavaScript measures a string, in one pass, a line count, and packed values.
 *
 * measure_string(text) -> (units, ascii, json_len)
 *   units:    text.length in JavaScript (UTF-16 code units; a character beyond
 *             U+FFFF is two, and so is a surrogate pair Python holds as two
 *             code points);
 *   ascii:    how many of those units are ASCII (tokens.text_quarters counts
 *             them at a quarter token, the others at a token and a half);
 *   json_len: JSON.stringify(text).length (quotes, \" \\ \b \t \n \f \r,
 *             \u00XX for the other control characters, \uDXXX for a lone
 *             surrogate).
 *
 * count_newlines(data, start, stop) -> data.count(b"\n", start, stop), with memchr.
 *
 * pack_sized(values) -> (data, lengths): the values packed for a packed column
 *             (session/packed.py), one after the other in data, each one's byte
 *             length in lengths (an array("I")'s bytes): value k's bytes are
 *             what marshal.loads reads back as it, and () takes none;
 * sum_sized(lengths, start, stop) -> sum(lengths[start:stop]) of an array("I"),
 *             for 0 <= start <= stop (where a run of packed values starts);
 * unpack_sized(data, lengths) -> the values of one chunk of a packed column,
 *             one after the other in data: value k is the marshal.loads of its
 *             lengths[k] bytes, or () where it takes none; lengths is an
 *             array("I").
 *
 * Nothing else is here: which strings a turn holds and how they add up is
 * Python (session/history.py builds turns, session/figures.py measures them).
 * The Python definitions are jsjson.py_string_measures, bytes.count,
 * packed.py_pack_sized, sum and packed.py_unpack_sized; tests/test_kernel.py checks
 * this file against them.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <marshal.h>
#include <stdint.h>
#include <string.h>

/* Extra JSON characters an ASCII/Latin-1 character costs: 1 for \" \\ and the
   short escapes, 5 for \u00XX. */
static unsigned char escape_extra[256];

static void init_escape_table(void) {
    for (int c = 0; c < 0x20; c++) escape_extra[c] = 5;
    escape_extra['\b'] = escape_extra['\t'] = escape_extra['\n'] = escape_extra['\f'] = escape_extra['\r'] = 1;
    escape_extra['"'] = escape_extra['\\'] = 1;
}

static inline int is_high(Py_UCS4 c) { return c >= 0xD800 && c <= 0xDBFF; }
static inline int is_low(Py_UCS4 c) { return c >= 0xDC00 && c <= 0xDFFF; }

typedef struct {
    Py_ssize_t units, ascii, json_len;
} Measures;

/* One pass over ``text`` (a str): its Measures. */
static void measure(PyObject *text, Measures *out) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t escaped = n, ascii = 0, astral = 0;
    if (kind == PyUnicode_1BYTE_KIND) { /* ASCII or Latin-1: one UTF-16 unit each */
        const Py_UCS1 *p = data;
        for (Py_ssize_t i = 0; i < n; i++) escaped += escape_extra[p[i]];
        if (PyUnicode_IS_ASCII(text))
            ascii = n;
        else
            for (Py_ssize_t i = 0; i < n; i++) ascii += p[i] < 0x80;
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c < 0x80) {
                ascii++;
                escaped += escape_extra[c];
            } else if (c > 0xFFFF) {
                astral++;
                escaped += 1; /* written as is: two UTF-16 units */
            } else if (is_high(c) && i + 1 < n && is_low(PyUnicode_READ(kind, data, i + 1))) {
                i++; /* a pair held as two code points: one character in JavaScript, two units */
            } else if (is_high(c) || is_low(c)) {
                escaped += 5; /* a lone surrogate: \udxxx */
            }
        }
    }
    out->units = n + astral;
    out->ascii = ascii;
    out->json_len = escaped + 2;
}

static int need_str(PyObject *text, const char *function) {
    if (PyUnicode_Check(text)) return 0;
    PyErr_Format(PyExc_TypeError, "%s(text): text must be a str", function);
    return -1;
}

static PyObject *measure_string(PyObject *module, PyObject *text) {
    if (need_str(text, "measure_string") < 0) return NULL;
    Measures found;
    measure(text, &found);
    PyObject *values[3] = {PyLong_FromSsize_t(found.units), PyLong_FromSsize_t(found.ascii),
                           PyLong_FromSsize_t(found.json_len)};
    PyObject *result = values[0] && values[1] && values[2] ? PyTuple_New(3) : NULL;
    if (result == NULL) {
        for (int i = 0; i < 3; i++) Py_XDECREF(values[i]);
        return NULL;
    }
    for (int i = 0; i < 3; i++) PyTuple_SET_ITEM(result, i, values[i]);
    return result;
}

/* The start and stop of a call f(buffer, start, stop): -1 with an error set when it is not one. */
static int range_args(PyObject *const *args, Py_ssize_t nargs, const char *usage, Py_ssize_t *start,
                      Py_ssize_t *stop) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *start = PyLong_AsSsize_t(args[1]);
    *stop = PyLong_AsSsize_t(args[2]);
    return PyErr_Occurred() ? -1 : 0;
}

/* 0 when ``view`` is an array('I')'s (a packed column's lengths), else -1 with a TypeError. */
static int need_lengths(const Py_buffer *view, const char *message) {
    if (view->itemsize == sizeof(unsigned int) && view->format != NULL && strcmp(view->format, "I") == 0) return 0;
    PyErr_SetString(PyExc_TypeError, message);
    return -1;
}

/* data.count(b"\n", start, stop) for 0 <= start <= stop; bytes.count looks at every
   byte, memchr skips ahead (lines of a recording are hundreds of bytes long). */
static PyObject *count_newlines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t start, stop;
    if (range_args(args, nargs, "count_newlines(data, start, stop)", &start, &stop) < 0) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(args[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    if (stop > view.len) stop = view.len;
    if (start < 0 || start > stop) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError, "count_newlines: need 0 <= start <= stop");
        return NULL;
    }
    const char *at = (const char *)view.buf + start;
    const char *end = (const char *)view.buf + stop;
    Py_ssize_t count = 0;
    while (at < end && (at = memchr(at, '\n', (size_t)(end - at))) != NULL) {
        count++;
        at++;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(count);
}

/* ---- Packed values: marshal's format, written and read here for the shapes a packed column holds ----

   A packed value (session/packed.py) is the bytes marshal.loads reads back as the value.  The reader packs
   five values a turn and the passes over a session read them again, so the per-value cost of marshal's own
   entry points (a writer with a table of references, a bytes object, a reader with a list of references)
   was most of it.  Here None, booleans, ints of 32 bits, floats, str, tuples, lists and dicts are written in
   marshal's version 4 codes without references (what marshal itself writes for an object it holds once), so
   marshal.loads reads them back exactly; anything else is left to marshal (PyMarshal_WriteObjectToString),
   and a value this reader does not know (marshal's own bytes, with their references) is read by marshal. */

#define MAX_DEPTH 64 /* deeper values are marshal's (it refuses past 2000) */

typedef struct {
    char *buf;
    Py_ssize_t len, cap;
} Out;

static int out_grow(Out *o, Py_ssize_t more) {
    if (o->len + more <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + more) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *buf = PyMem_Realloc(o->buf, (size_t)cap);
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->buf = buf;
    o->cap = cap;
    return 0;
}

static int out_put(Out *o, const void *bytes, Py_ssize_t n) {
    if (out_grow(o, n) < 0) return -1;
    memcpy(o->buf + o->len, bytes, (size_t)n);
    o->len += n;
    return 0;
}

static int out_code(Out *o, char code, uint32_t n, int small) { /* a code and its 1- or 4-byte count */
    unsigned char head[5] = {(unsigned char)code, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, (n >> 24) & 0xff};
    return out_put(o, head, small ? 2 : 5);
}

/* 1: written; 0: not a shape written here (the caller drops what was written of it); -1: an error. */
static int write_value(Out *o, PyObject *v, int depth) {
    if (depth > MAX_DEPTH) return 0;
    if (v == Py_None) return out_put(o, "N", 1) < 0 ? -1 : 1;
    if (v == Py_True) return out_put(o, "T", 1) < 0 ? -1 : 1;
    if (v == Py_False) return out_put(o, "F", 1) < 0 ? -1 : 1;
    if (PyLong_CheckExact(v)) {
        int overflow;
        long x = PyLong_AsLongAndOverflow(v, &overflow);
        if (overflow || x < INT32_MIN || x > INT32_MAX) return 0; /* marshal's long form */
        return out_code(o, 'i', (uint32_t)(int32_t)x, 0) < 0 ? -1 : 1;
    }
    if (PyFloat_CheckExact(v)) {
        unsigned char bytes[9] = {'g'};
        if (PyFloat_Pack8(PyFloat_AS_DOUBLE(v), (char *)bytes + 1, 1) < 0) return -1;
        return out_put(o, bytes, 9) < 0 ? -1 : 1;
    }
    if (PyUnicode_CheckExact(v)) {
        /* an interned str (figures.shared: tool names, roles) is read back as the same object */
        int interned = PyUnicode_CHECK_INTERNED(v) != 0;
        Py_ssize_t n = PyUnicode_GET_LENGTH(v);
        if (PyUnicode_IS_ASCII(v)) {
            if (n > INT32_MAX) return 0;
            char code = n < 256 ? (interned ? 'Z' : 'z') : (interned ? 'A' : 'a');
            if (out_code(o, code, (uint32_t)n, n < 256) < 0) return -1;
            return out_put(o, PyUnicode_DATA(v), n) < 0 ? -1 : 1;
        }
        PyObject *utf8 = PyUnicode_AsEncodedString(v, "utf8", "surrogatepass"); /* as marshal writes it */
        if (utf8 == NULL) return -1;
        Py_ssize_t size = PyBytes_GET_SIZE(utf8);
        int done = size > INT32_MAX ? 0
            : out_code(o, interned ? 't' : 'u', (uint32_t)size, 0) < 0
              || out_put(o, PyBytes_AS_STRING(utf8), size) < 0 ? -1 : 1;
        Py_DECREF(utf8);
        return done;
    }
    if (PyTuple_CheckExact(v) || PyList_CheckExact(v)) {
        int tuple = PyTuple_CheckExact(v);
        Py_ssize_t n = tuple ? PyTuple_GET_SIZE(v) : PyList_GET_SIZE(v);
        if (n > INT32_MAX) return 0;
        if (out_code(o, tuple ? (n < 256 ? ')' : '(') : '[', (uint32_t)n, tuple && n < 256) < 0) return -1;
        for (Py_ssize_t i = 0; i < n; i++) {
            int done = write_value(o, tuple ? PyTuple_GET_ITEM(v, i) : PyList_GET_ITEM(v, i), depth + 1);
            if (done != 1) return done;
        }
        return 1;
    }
    if (PyDict_CheckExact(v)) {
        if (out_put(o, "{", 1) < 0) return -1;
        Py_ssize_t at = 0;
        PyObject *key, *value;
        while (PyDict_Next(v, &at, &key, &value)) {
            int done = write_value(o, key, depth + 1);
            if (done == 1) done = write_value(o, value, depth + 1);
            if (done != 1) return done;
        }
        return out_put(o, "0", 1) < 0 ? -1 : 1;
    }
    return 0;
}

/* pack_sized(values) -> (data, lengths): every value's packed bytes one after the other, and each one's
   length as an array('I')'s bytes; an empty tuple takes no bytes. */
static PyObject *pack_sized(PyObject *module, PyObject *values) {
    PyObject *seq = PySequence_Fast(values, "pack_sized(values): values must be a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    Out data = {NULL, 0, 0}, lengths = {NULL, 0, 0};
    PyObject *result = NULL;
    if (out_grow(&lengths, count * (Py_ssize_t)sizeof(unsigned int) + 1) < 0) goto done;
    for (Py_ssize_t k = 0; k < count; k++) {
        PyObject *v = PySequence_Fast_GET_ITEM(seq, k);
        Py_ssize_t start = data.len;
        if (!(PyTuple_CheckExact(v) && PyTuple_GET_SIZE(v) == 0)) {
            int done = write_value(&data, v, 0);
            if (done < 0) goto done;
            if (done == 0) { /* marshal's */
                data.len = start;
                PyObject *raw = PyMarshal_WriteObjectToString(v, Py_MARSHAL_VERSION);
                if (raw == NULL) goto done;
                int failed = out_put(&data, PyBytes_AS_STRING(raw), PyBytes_GET_SIZE(raw));
                Py_DECREF(raw);
                if (failed < 0) goto done;
            }
        }
        if (data.len - start > (Py_ssize_t)UINT_MAX) {
            PyErr_SetString(PyExc_OverflowError, "pack_sized: a value of 4 GiB or more");
            goto done;
        }
        unsigned int length = (unsigned int)(data.len - start);
        memcpy(lengths.buf + lengths.len, &length, sizeof length);
        lengths.len += (Py_ssize_t)sizeof length;
    }
    result = Py_BuildValue("(y#y#)", data.buf ? data.buf : "", data.len, lengths.buf, lengths.len);
done:
    PyMem_Free(data.buf);
    PyMem_Free(lengths.buf);
    Py_DECREF(seq);
    return result;
}

typedef struct {
    const unsigned char *at, *end;
} In;

static int in_count(In *in, int small, Py_ssize_t *n) { /* 0 when past the end */
    Py_ssize_t size = small ? 1 : 4;
    if (in->end - in->at < size) return 0;
    const unsigned char *p = in->at;
    *n = small ? p[0] : (Py_ssize_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    in->at += size;
    return 1;
}

/* A value written by write_value; NULL with no error set: not one of its shapes (or cut short), read
   the value with marshal instead. */
static PyObject *read_value(In *in, int depth) {
    if (depth > MAX_DEPTH || in->at >= in->end) return NULL;
    unsigned char code = *in->at++;
    Py_ssize_t n;
    switch (code) {
    case 'N': Py_RETURN_NONE;
    case 'T': Py_RETURN_TRUE;
    case 'F': Py_RETURN_FALSE;
    case 'i':
        if (!in_count(in, 0, &n)) return NULL;
        return PyLong_FromLong((long)(int32_t)(uint32_t)n);
    case 'g': {
        if (in->end - in->at < 8) return NULL;
        double x = PyFloat_Unpack8((const char *)in->at, 1);
        in->at += 8;
        return x == -1.0 && PyErr_Occurred() ? NULL : PyFloat_FromDouble(x);
    }
    case 'z': case 'Z': case 'a': case 'A': case 'u': case 't': {
        if (!in_count(in, code == 'z' || code == 'Z', &n) || in->end - in->at < n) return NULL;
        const char *text = (const char *)in->at;
        in->at += n;
        PyObject *found = code == 'u' || code == 't' ? PyUnicode_DecodeUTF8(text, n, "surrogatepass")
                                                     : PyUnicode_DecodeASCII(text, n, NULL);
        if (found != NULL && (code == 'Z' || code == 'A' || code == 't')) PyUnicode_InternInPlace(&found);
        return found;
    }
    case ')': case '(': case '[': {
        if (!in_count(in, code == ')', &n) || in->end - in->at < n) return NULL; /* (an item takes a byte at least) */
        PyObject *found = code == '[' ? PyList_New(n) : PyTuple_New(n);
        if (found == NULL) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *item = read_value(in, depth + 1);
            if (item == NULL) {
                Py_DECREF(found);
                return NULL;
            }
            if (code == '[')
                PyList_SET_ITEM(found, i, item);
            else
                PyTuple_SET_ITEM(found, i, item);
        }
        return found;
    }
    case '{': {
        PyObject *found = PyDict_New();
        while (found != NULL) {
            if (in->at < in->end && *in->at == '0') {
                in->at++;
                return found;
            }
            PyObject *key = read_value(in, depth + 1);
            PyObject *value = key == NULL ? NULL : read_value(in, depth + 1);
            if (value == NULL || PyDict_SetItem(found, key, value) < 0) Py_CLEAR(found);
            Py_XDECREF(key);
            Py_XDECREF(value);
        }
        return NULL;
    }
    default:
        return NULL; /* marshal's own codes: references, interned text, long ints, ... */
    }
}

/* One packed value of ``length`` bytes at ``bytes``. */
static PyObject *unpack_one(const char *bytes, Py_ssize_t length) {
    In in = {(const unsigned char *)bytes, (const unsigned char *)bytes + length};
    PyObject *value = read_value(&in, 0);
    if (value != NULL && in.at == in.end) return value;
    Py_XDECREF(value);
    if (PyErr_Occurred()) return NULL;
    return PyMarshal_ReadObjectFromString(bytes, length);
}

/* Every value of a packed column's chunk, in one call: a column read in order (the breakdown, the agentic
   pass, masking) made each value through a generator, a slice and a call of marshal.loads. */
static PyObject *unpack_sized(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "unpack_sized(data, lengths)");
        return NULL;
    }
    Py_buffer data, lengths;
    if (PyObject_GetBuffer(args[0], &data, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[1], &lengths, PyBUF_FORMAT) < 0) {
        PyBuffer_Release(&data);
        return NULL;
    }
    PyObject *found = NULL;
    if (need_lengths(&lengths, "unpack_sized: lengths must be an array('I')") < 0) goto done;
    Py_ssize_t count = lengths.len / lengths.itemsize;
    const unsigned int *at = (const unsigned int *)lengths.buf;
    found = PyList_New(count);
    if (found == NULL) goto done;
    Py_ssize_t start = 0;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t length = (Py_ssize_t)at[k];
        if (length > data.len - start) {
            PyErr_SetString(PyExc_ValueError, "unpack_sized: a value past the end of the data");
            Py_CLEAR(found);
            goto done;
        }
        PyObject *value = length == 0 ? PyTuple_New(0) : unpack_one((const char *)data.buf + start, length);
        if (value == NULL) {
            Py_CLEAR(found);
            goto done;
        }
        PyList_SET_ITEM(found, k, value);
        start += length;
    }
done:
    PyBuffer_Release(&lengths);
    PyBuffer_Release(&data);
    return found;
}

/* sum(lengths[start:stop]) for an array('I') and 0 <= start <= stop: where a run of a packed column's values
   starts in its block (rows._Block.offset); sum() made an int of every length. */
static PyObject *sum_sized(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t start, stop;
    if (range_args(args, nargs, "sum_sized(lengths, start, stop)", &start, &stop) < 0) return NULL;
    Py_buffer lengths;
    if (PyObject_GetBuffer(args[0], &lengths, PyBUF_FORMAT) < 0) return NULL;
    PyObject *found = NULL;
    Py_ssize_t count = lengths.len / (lengths.itemsize ? lengths.itemsize : 1);
    if (start < 0 || start > stop) {
        PyErr_SetString(PyExc_ValueError, "sum_sized: 0 <= start <= stop");
    } else if (need_lengths(&lengths, "sum_sized: lengths must be an array('I')") == 0) {
        if (stop > count) stop = count;
        const unsigned int *at = (const unsigned int *)lengths.buf;
        unsigned long long total = 0;
        for (Py_ssize_t k = start; k < stop; k++) total += at[k];
        found = PyLong_FromUnsignedLongLong(total);
    }
    PyBuffer_Release(&lengths);
    return found;
}

static PyMethodDef methods[] = {
    {"measure_string", measure_string, METH_O,
     "measure_string(text): (UTF-16 units, ASCII units, JSON.stringify(text).length)"},
    {"count_newlines", (PyCFunction)(void (*)(void))count_newlines, METH_FASTCALL,
     "count_newlines(data, start, stop): data.count(b'\\n', start, stop), for 0 <= start <= stop"},
    {"pack_sized", pack_sized, METH_O,
     "pack_sized(values): (the values packed one after the other, each one's length as array('I') bytes)"},
    {"sum_sized", (PyCFunction)(void (*)(void))sum_sized, METH_FASTCALL,
     "sum_sized(lengths, start, stop): sum(lengths[start:stop]) of an array('I'), for 0 <= start <= stop"},
    {"unpack_sized", (PyCFunction)(void (*)(void))unpack_sized, METH_FASTCALL,
     "unpack_sized(data, lengths): each value of a packed column's chunk (see session/packed.py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_kernel", "How JavaScript measures a string, a line count, and packed values (see jsjson.py, session/packed.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kernel(void) {
    init_escape_table();
    return PyModule_Create(&module_def);
}
