/*
 * inspector.session._measure: the figures of one Content, in C.
 *
 * ``measure(content, record_id, is_tool_result, usage)`` returns exactly the
 * tuple ``inspector.session.figures.content_figures`` returns for the same
 * arguments, or None when the content has a shape this code does not handle
 * (the Python function then measures it).  Python stays the definition; this
 * is its fast path for the shapes Gemini CLI writes on nearly every turn:
 *
 *   {"role": str, "parts": [...]} whose parts are each one of
 *     {"text": str}
 *     {"text": str, "thought": true}
 *     {"functionResponse": {..str values.., "response": {"output": str}}}
 *     any other object without text, thought, functionResponse, inlineData or
 *     fileData keys (a function call, executable code, ...) made only of
 *     strings, booleans, null, integers within 2**53, lists and objects.
 *
 * Anything else (a float, a big integer, media, a nested or odd function
 * response, a bare value where a part belongs) returns None.
 *
 * Lengths are JavaScript's: UTF-16 code units, with JSON.stringify's escapes
 * (\" \\ \b \t \n \f \r, \u00XX for other control characters, \uDXXX for a
 * lone surrogate).  Estimates are counted in quarter tokens as tokens.py does.
 *
 * tests/test_measure.py checks this against the Python definition on
 * generated contents; the differential tests check both against Node.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>

#define UNHANDLED (-1)
#define MAX_DEPTH 200
#define MAX_CHARS_FOR_FULL_HEURISTIC 100000
#define SAFE_INTEGER (1LL << 53)

/* Labels of turn_kind, in the order they are first seen in a turn. */
enum { L_TEXT, L_THOUGHT, L_CALL, L_RESULT, L_OTHER, L_COUNT };
static const char *const LABELS[L_COUNT] = {"text", "thought", "tool call", "tool result", "other"};

static PyObject *k_role, *k_parts, *k_text, *k_thought, *k_function_call, *k_function_response, *k_response,
    *k_output, *k_id, *k_name, *k_inline_data, *k_file_data, *s_user, *s_model, *s_unknown_tool, *s_empty;
static PyObject *shared_names; /* figures._SHARED: one object per role and tool name */
static PyObject *kinds;        /* label sequence code -> the kind string, made once */

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

/* JSON.stringify(text).length */
static Py_ssize_t string_json_len(PyObject *text) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    Py_ssize_t total = n + 2;
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = data;
        for (Py_ssize_t i = 0; i < n; i++) total += escape_extra[p[i]];
        return total;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c < 0x100) {
            total += escape_extra[c];
        } else if (c > 0xFFFF) {
            total += 1; /* two UTF-16 units */
        } else if (is_high(c) && i + 1 < n && is_low(PyUnicode_READ(kind, data, i + 1))) {
            i++; /* a pair written as two code points: one character in JavaScript, two units */
        } else if (is_high(c) || is_low(c)) {
            total += 5; /* a lone surrogate: \udxxx */
        }
    }
    return total;
}

/* (UTF-16 length, ASCII characters) of a string. */
static void string_units(PyObject *text, Py_ssize_t *units, Py_ssize_t *ascii) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_IS_ASCII(text)) {
        *units = *ascii = n;
        return;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t low = 0, astral = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        low += c < 0x80;
        astral += c > 0xFFFF;
    }
    *units = n + astral;
    *ascii = low;
}

static Py_ssize_t utf16_len(PyObject *text) {
    Py_ssize_t units, ascii;
    string_units(text, &units, &ascii);
    return units;
}

/* tokens.text_quarters */
static Py_ssize_t text_quarters(PyObject *text) {
    Py_ssize_t units, ascii;
    string_units(text, &units, &ascii);
    if (units == ascii || units > MAX_CHARS_FOR_FULL_HEURISTIC) return units;
    return ascii + 6 * (units - ascii);
}

static Py_ssize_t decimal_len(long long value) {
    Py_ssize_t len = value < 0 ? 2 : 1;
    unsigned long long rest = value < 0 ? 0ULL - (unsigned long long)value : (unsigned long long)value;
    while (rest >= 10) {
        rest /= 10;
        len++;
    }
    return len;
}

/* JSON.stringify(value).length, or UNHANDLED (floats, big integers, other types). */
static Py_ssize_t json_len(PyObject *value, int depth) {
    if (PyUnicode_CheckExact(value)) return string_json_len(value);
    if (value == Py_None || value == Py_True) return 4;
    if (value == Py_False) return 5;
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow || number > SAFE_INTEGER || number < -SAFE_INTEGER) return UNHANDLED;
        return decimal_len(number);
    }
    if (depth >= MAX_DEPTH) return UNHANDLED;
    if (PyDict_CheckExact(value)) {
        Py_ssize_t size = PyDict_GET_SIZE(value);
        if (size == 0) return 2;
        Py_ssize_t total = 1 + 2 * size; /* braces, commas, colons */
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (!PyUnicode_CheckExact(key)) return UNHANDLED;
            Py_ssize_t sub = json_len(item, depth + 1);
            if (sub < 0) return UNHANDLED;
            total += string_json_len(key) + sub;
        }
        return total;
    }
    if (PyList_CheckExact(value)) {
        Py_ssize_t size = PyList_GET_SIZE(value);
        if (size == 0) return 2;
        Py_ssize_t total = size + 1; /* brackets, commas */
        for (Py_ssize_t i = 0; i < size; i++) {
            Py_ssize_t sub = json_len(PyList_GET_ITEM(value, i), depth + 1);
            if (sub < 0) return UNHANDLED;
            total += sub;
        }
        return total;
    }
    return UNHANDLED;
}

/* dict[key] or NULL (missing or JSON null, as Python's ``get`` sees both). */
static inline PyObject *field(PyObject *dict, PyObject *key) {
    PyObject *found = PyDict_GetItemWithError(dict, key);
    return found == Py_None ? NULL : found;
}

static inline int first_key_is(PyObject *dict, PyObject *key) {
    Py_ssize_t pos = 0;
    PyObject *first, *item;
    return PyDict_Next(dict, &pos, &first, &item) && PyUnicode_CheckExact(first) && PyUnicode_Compare(first, key) == 0;
}

/* A tuple of ``count`` new references (stolen; NULL if any is NULL, all released). */
static PyObject *tuple_of(int count, ...) {
    va_list items;
    va_start(items, count);
    PyObject *tuple = PyTuple_New(count);
    int failed = tuple == NULL;
    for (int i = 0; i < count; i++) {
        PyObject *item = va_arg(items, PyObject *);
        if (item == NULL) failed = 1;
        if (tuple != NULL)
            PyTuple_SET_ITEM(tuple, i, item);
        else
            Py_XDECREF(item);
    }
    va_end(items);
    if (failed) Py_CLEAR(tuple); /* releases the items it holds (NULL slots are skipped) */
    return tuple;
}

/* figures.shared(): a new reference. */
static PyObject *shared(PyObject *name) {
    PyObject *found = PyDict_SetDefault(shared_names, name, name);
    Py_XINCREF(found);
    return found;
}

/* figures._key(value) for a dict: (id, name), a new reference. */
static PyObject *call_key(PyObject *value) {
    PyObject *ident = field(value, k_id);
    PyObject *name = field(value, k_name);
    PyObject *shared_name = name != NULL && PyUnicode_CheckExact(name) ? shared(name) : Py_NewRef(name ? name : Py_None);
    if (shared_name == NULL) return NULL;
    PyObject *key = PyTuple_Pack(2, ident ? ident : Py_None, shared_name);
    Py_DECREF(shared_name);
    return key;
}

/* The plain function response part {"functionResponse": fr}: its JSON length,
   quarters and (part, True, tool, tokens, length, True) figures; 0 if not plain. */
static int plain_response(PyObject *fr, Py_ssize_t index, Py_ssize_t *part_json, Py_ssize_t *quarters,
                          PyObject **figures) {
    if (!PyDict_CheckExact(fr) || PyDict_GET_SIZE(fr) == 0) return 0;
    PyObject *response = field(fr, k_response);
    if (response == NULL || !PyDict_CheckExact(response) || PyDict_GET_SIZE(response) != 1) return 0;
    PyObject *output = field(response, k_output);
    if (output == NULL || !PyUnicode_CheckExact(output)) return 0;
    Py_ssize_t response_json = 11 + string_json_len(output); /* {"output":...} */
    Py_ssize_t fr_json = 1 + 2 * PyDict_GET_SIZE(fr);
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(fr, &pos, &key, &value)) {
        if (PyUnicode_CheckExact(key) && PyUnicode_Compare(key, k_response) == 0) {
            fr_json += 10 + response_json; /* "response": */
        } else if (PyUnicode_CheckExact(key) && PyUnicode_CheckExact(value)) {
            fr_json += string_json_len(key) + string_json_len(value);
        } else {
            return 0;
        }
    }
    PyObject *name = field(fr, k_name);
    Py_ssize_t output_units, output_ascii;
    string_units(output, &output_units, &output_ascii);
    Py_ssize_t output_quarters = output_units == output_ascii || output_units > MAX_CHARS_FOR_FULL_HEURISTIC
                                     ? output_units
                                     : output_ascii + 6 * (output_units - output_ascii);
    PyObject *tool = name != NULL ? shared(name) : Py_NewRef(s_unknown_tool);
    if (tool == NULL) return -1;
    *figures = tuple_of(6, PyLong_FromSsize_t(index), Py_NewRef(Py_True), tool,
                        PyLong_FromSsize_t(output_quarters / 4), PyLong_FromSsize_t(output_units), Py_NewRef(Py_True));
    if (*figures == NULL) return -1;
    *part_json = 21 + fr_json; /* {"functionResponse":...} */
    *quarters = (name != NULL ? utf16_len(name) : 0) + response_json;
    return 1;
}

/* The kind string for a sequence of labels (each label at most once). */
static PyObject *kind_of(const int *labels, int count) {
    if (count == 0) return Py_NewRef(s_empty);
    long code = 0;
    for (int i = 0; i < count; i++) code = code * (L_COUNT + 1) + labels[i] + 1;
    PyObject *key = PyLong_FromLong(code);
    if (key == NULL) return NULL;
    PyObject *found = PyDict_GetItemWithError(kinds, key);
    if (found != NULL || PyErr_Occurred()) {
        Py_DECREF(key);
        Py_XINCREF(found);
        return found;
    }
    char text[64] = "";
    for (int i = 0; i < count; i++) {
        if (i) strcat(text, "+");
        strcat(text, LABELS[labels[i]]);
    }
    PyObject *made = PyUnicode_FromString(text);
    if (made == NULL || PyDict_SetItem(kinds, key, made) < 0) Py_CLEAR(made);
    Py_DECREF(key);
    return made;
}

static int has_any(PyObject *part, PyObject *const *keys, int count) {
    for (int i = 0; i < count; i++) {
        int found = PyDict_Contains(part, keys[i]);
        if (found) return found; /* 1, or -1 on error */
    }
    return 0;
}

/* The turn's figures tuple, None when unhandled, NULL on error. */
static PyObject *measure_content(PyObject *content, PyObject *record_id, PyObject *is_tool_result,
                                 PyObject *usage) {
    if (!PyDict_CheckExact(content) || PyDict_GET_SIZE(content) != 2 || !first_key_is(content, k_role))
        Py_RETURN_NONE;
    PyObject *role = field(content, k_role);
    PyObject *parts = field(content, k_parts);
    if (role == NULL || !PyUnicode_CheckExact(role) || parts == NULL || !PyList_CheckExact(parts))
        Py_RETURN_NONE;

    PyObject *const generic_excluded[] = {k_text, k_thought, k_function_response, k_inline_data, k_file_data};
    Py_ssize_t count = PyList_GET_SIZE(parts);
    Py_ssize_t quarters = 0;
    Py_ssize_t parts_json = count ? 1 + count : 2;
    int has_response = 0, has_call = 0;
    int labels[L_COUNT];
    int label_count = 0;
    PyObject *calls = NULL, *answers = NULL, *responses = NULL, *result = NULL;
    if (!(calls = PyList_New(0)) || !(answers = PyList_New(0)) || !(responses = PyList_New(0))) goto done;

    for (Py_ssize_t j = 0; j < count; j++) {
        PyObject *part = PyList_GET_ITEM(parts, j);
        if (!PyDict_CheckExact(part)) goto unhandled;
        Py_ssize_t size = PyDict_GET_SIZE(part);
        int label;
        PyObject *text = field(part, k_text);
        if (text != NULL && PyUnicode_CheckExact(text)) {
            quarters += text_quarters(text);
            if (size == 1) {
                parts_json += 9 + string_json_len(text); /* {"text":...} */
                label = L_TEXT;
            } else if (size == 2 && PyDict_GetItemWithError(part, k_thought) == Py_True && first_key_is(part, k_text)) {
                parts_json += 24 + string_json_len(text); /* {"text":...,"thought":true} */
                label = L_THOUGHT;
            } else {
                goto unhandled;
            }
        } else if (PyErr_Occurred()) {
            goto done;
        } else {
            PyObject *fr = field(part, k_function_response);
            if (fr != NULL) {
                PyObject *figures = NULL;
                Py_ssize_t part_json = 0, part_quarters = 0;
                int plain = size == 1 ? plain_response(fr, j, &part_json, &part_quarters, &figures) : 0;
                if (plain < 0) goto done;
                if (plain == 0) goto unhandled;
                int appended = PyList_Append(responses, figures);
                Py_DECREF(figures);
                if (appended < 0) goto done;
                PyObject *key = call_key(fr);
                if (key == NULL || PyList_Append(answers, key) < 0) {
                    Py_XDECREF(key);
                    goto done;
                }
                Py_DECREF(key);
                parts_json += part_json;
                quarters += part_quarters;
                has_response = 1;
                label = L_RESULT;
            } else {
                int excluded = has_any(part, generic_excluded, 5);
                if (excluded < 0) goto done;
                if (excluded) goto unhandled;
                Py_ssize_t part_size = json_len(part, 0);
                if (part_size < 0) goto unhandled;
                parts_json += part_size;
                quarters += part_size; /* neither text, tool result nor media: its JSON length */
                PyObject *call = field(part, k_function_call);
                label = L_OTHER;
                if (call != NULL) {
                    /* Truthy in JavaScript (a call), labelled by Python's truthiness (an empty one is "other"). */
                    PyObject *key;
                    if (PyDict_CheckExact(call)) {
                        key = call_key(call);
                        if (PyDict_GET_SIZE(call)) label = L_CALL;
                    } else if (PyList_CheckExact(call)) {
                        key = PyTuple_Pack(2, Py_None, Py_None);
                        if (PyList_GET_SIZE(call)) label = L_CALL;
                    } else {
                        goto unhandled; /* truthiness of other values: leave it to Python */
                    }
                    if (key == NULL || PyList_Append(calls, key) < 0) {
                        Py_XDECREF(key);
                        goto done;
                    }
                    Py_DECREF(key);
                    has_call = 1;
                }
            }
        }
        int seen = 0;
        for (int k = 0; k < label_count; k++) seen |= labels[k] == label;
        if (!seen) labels[label_count++] = label;
    }
    if (PyErr_Occurred()) goto done;

    {
        PyObject *shared_role = shared(role);
        PyObject *kind = kind_of(labels, label_count);
        PyObject *calls_tuple = PyList_AsTuple(calls);
        PyObject *answers_tuple = PyList_AsTuple(answers);
        PyObject *responses_tuple = PyList_AsTuple(responses);
        if (shared_role && kind && calls_tuple && answers_tuple && responses_tuple) {
            int is_user = PyUnicode_Compare(role, s_user) == 0;
            int is_model = !is_user && PyUnicode_Compare(role, s_model) == 0;
            Py_ssize_t json = 18 + string_json_len(role) + parts_json; /* {"role":...,"parts":[...]} */
            result = tuple_of(12, Py_NewRef(record_id), shared_role, Py_NewRef(is_tool_result),
                              PyLong_FromSsize_t(quarters), PyLong_FromSsize_t(json),
                              Py_NewRef(is_user && !has_response ? Py_True : Py_False),
                              Py_NewRef(is_model && !has_call ? Py_True : Py_False), kind, responses_tuple,
                              Py_NewRef(usage), calls_tuple, answers_tuple);
        } else {
            Py_XDECREF(shared_role);
            Py_XDECREF(kind);
            Py_XDECREF(calls_tuple);
            Py_XDECREF(answers_tuple);
            Py_XDECREF(responses_tuple);
        }
    }
    goto done;

unhandled:
    if (!PyErr_Occurred()) result = Py_NewRef(Py_None);
done:
    Py_XDECREF(calls);
    Py_XDECREF(answers);
    Py_XDECREF(responses);
    return result;
}

static PyObject *measure(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "measure(content, record_id, is_tool_result, usage)");
        return NULL;
    }
    if (shared_names == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "bind() the shared names first");
        return NULL;
    }
    return measure_content(args[0], args[1], args[2], args[3]);
}

static PyObject *bind(PyObject *module, PyObject *names) {
    if (!PyDict_CheckExact(names)) {
        PyErr_SetString(PyExc_TypeError, "bind(dict)");
        return NULL;
    }
    Py_XSETREF(shared_names, Py_NewRef(names));
    Py_RETURN_NONE;
}

static PyObject *py_string_json_len(PyObject *module, PyObject *text) {
    if (!PyUnicode_CheckExact(text)) {
        PyErr_SetString(PyExc_TypeError, "a str");
        return NULL;
    }
    return PyLong_FromSsize_t(string_json_len(text));
}

static PyObject *py_json_len(PyObject *module, PyObject *value) {
    Py_ssize_t found = json_len(value, 0);
    if (found < 0) Py_RETURN_NONE;
    return PyLong_FromSsize_t(found);
}

static PyObject *py_text_quarters(PyObject *module, PyObject *text) {
    if (!PyUnicode_CheckExact(text)) {
        PyErr_SetString(PyExc_TypeError, "a str");
        return NULL;
    }
    return PyLong_FromSsize_t(text_quarters(text));
}

static PyMethodDef methods[] = {
    {"measure", (PyCFunction)(void (*)(void))measure, METH_FASTCALL,
     "measure(content, record_id, is_tool_result, usage): content_figures' tuple, or None if unhandled."},
    {"bind", bind, METH_O, "bind(shared): the dict of shared role and tool names (figures._SHARED)."},
    {"string_json_len", py_string_json_len, METH_O, "JSON.stringify(text).length"},
    {"json_len", py_json_len, METH_O, "JSON.stringify(value).length, or None where unhandled"},
    {"text_quarters", py_text_quarters, METH_O, "tokens.text_quarters(text)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_measure", "The figures of one Content, in C (see figures.content_figures).", -1,
    methods,
};

static PyObject *intern(const char *text) { return PyUnicode_InternFromString(text); }

PyMODINIT_FUNC PyInit__measure(void) {
    init_escape_table();
    if (!(k_role = intern("role")) || !(k_parts = intern("parts")) || !(k_text = intern("text")) ||
        !(k_thought = intern("thought")) || !(k_function_call = intern("functionCall")) ||
        !(k_function_response = intern("functionResponse")) || !(k_response = intern("response")) ||
        !(k_output = intern("output")) || !(k_id = intern("id")) || !(k_name = intern("name")) ||
        !(k_inline_data = intern("inlineData")) || !(k_file_data = intern("fileData")) ||
        !(s_user = intern("user")) || !(s_model = intern("model")) || !(s_unknown_tool = intern("unknown_tool")) ||
        !(s_empty = intern("empty")) || !(kinds = PyDict_New()))
        return NULL;
    return PyModule_Create(&module_def);
}
