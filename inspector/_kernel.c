/*
 * inspector._kernel: how JavaScript measures a string, in one pass, and a line count.
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
 * unpack_sized(data, lengths) -> the values of one chunk of a packed column
 *             (session/packed.py), one after the other in data: value k is the
 *             marshal.loads of its lengths[k] bytes, or () where it takes none;
 *             lengths is an array("I").
 *
 * Nothing else is here: which strings a turn holds and how they add up is
 * Python (session/history.py builds turns, session/figures.py measures them).
 * The Python definitions are jsjson.py_string_measures, bytes.count and
 * packed.py_unpack_sized; tests/test_kernel.py checks this file against them.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <marshal.h>
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

/* data.count(b"\n", start, stop) for 0 <= start <= stop; bytes.count looks at every
   byte, memchr skips ahead (lines of a recording are hundreds of bytes long). */
static PyObject *count_newlines(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "count_newlines(data, start, stop)");
        return NULL;
    }
    Py_ssize_t start = PyLong_AsSsize_t(args[1]);
    Py_ssize_t stop = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred()) return NULL;
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
    if (lengths.itemsize != sizeof(unsigned int) || lengths.format == NULL || strcmp(lengths.format, "I") != 0) {
        PyErr_SetString(PyExc_TypeError, "unpack_sized: lengths must be an array('I')");
        goto done;
    }
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
        PyObject *value = length == 0 ? PyTuple_New(0)
            : PyMarshal_ReadObjectFromString((const char *)data.buf + start, length);
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

static PyMethodDef methods[] = {
    {"measure_string", measure_string, METH_O,
     "measure_string(text): (UTF-16 units, ASCII units, JSON.stringify(text).length)"},
    {"count_newlines", (PyCFunction)(void (*)(void))count_newlines, METH_FASTCALL,
     "count_newlines(data, start, stop): data.count(b'\\n', start, stop), for 0 <= start <= stop"},
    {"unpack_sized", (PyCFunction)(void (*)(void))unpack_sized, METH_FASTCALL,
     "unpack_sized(data, lengths): each value of a packed column's chunk (see session/packed.py)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_kernel", "How JavaScript measures a string, and a line count (see jsjson.py).", -1,
    methods,
};

PyMODINIT_FUNC PyInit__kernel(void) {
    init_escape_table();
    return PyModule_Create(&module_def);
}
