/*
 * inspector.session._measure: the figures of a message's turns, in C.
 *
 * ``measure_message(message)`` returns exactly the tuple
 * ``inspector.session.figures.message_figures`` returns, computed from the
 * record without building its turns, or None for a shape it leaves to Python
 * (the user's text, thoughts, model text, tool calls and their string or
 * functionResponse results are handled; see the comments below).
 * ``count_newlines`` counts lines with memchr for the readers.
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
 * generated contents and messages; the differential tests check both
 * against Node.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
#include <string.h>

#define UNHANDLED (-1)
#define MAX_DEPTH 200
#define MAX_CHARS_FOR_FULL_HEURISTIC 100000
#define SAFE_INTEGER (1LL << 53)

/* Labels of turn_kind, in the order they are first seen in a turn. */
enum { L_TEXT, L_THOUGHT, L_CALL, L_RESULT, L_OTHER, L_COUNT };
static const char *const LABELS[L_COUNT] = {"text", "thought", "tool call", "tool result", "other"};

static PyObject *k_role, *k_parts, *k_text, *k_thought, *k_function_call, *k_function_response, *k_response,
    *k_output, *k_id, *k_name, *k_inline_data, *k_file_data, *s_user, *s_model, *s_unknown_tool, *s_empty;
static PyObject *k_type, *k_content, *k_thoughts, *k_tool_calls, *k_tokens, *k_subject, *k_description, *k_args,
    *k_result, *s_gemini, *s_undefined, *s_null;
static PyObject *usage_keys[6]; /* figures.USAGE_KEYS */
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

/* One string as the figures need it: UTF-16 units, ASCII characters, and the
   length of its JSON.stringify text without the quotes. */
typedef struct {
    Py_ssize_t units, ascii, escaped;
} Text;

/* A string's Text, in one pass. */
static void text_of(PyObject *text, Text *out) {
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t escaped = n, ascii = 0, astral = 0;
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *p = data; /* ASCII or Latin-1: one UTF-16 unit each */
        int all_ascii = PyUnicode_IS_ASCII(text);
        for (Py_ssize_t i = 0; i < n; i++) escaped += escape_extra[p[i]];
        for (Py_ssize_t i = 0; i < n && !all_ascii; i++) ascii += p[i] < 0x80;
        if (all_ascii) ascii = n;
    } else {
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_UCS4 c = PyUnicode_READ(kind, data, i);
            if (c < 0x80) {
                ascii++;
                escaped += escape_extra[c];
            } else if (c > 0xFFFF) {
                astral++;
                escaped += 1; /* two UTF-16 units */
            } else if (is_high(c) && i + 1 < n && is_low(PyUnicode_READ(kind, data, i + 1))) {
                i++; /* a pair written as two code points: one character in JavaScript, two units */
            } else if (is_high(c) || is_low(c)) {
                escaped += 5; /* a lone surrogate: \udxxx */
            }
        }
    }
    out->units = n + astral;
    out->ascii = ascii;
    out->escaped = escaped;
}

/* JSON.stringify(text).length */
static Py_ssize_t string_json_len(PyObject *text) {
    Text found;
    text_of(text, &found);
    return found.escaped + 2;
}

/* text.length in JavaScript */
static Py_ssize_t utf16_len(PyObject *text) {
    Text found;
    text_of(text, &found);
    return found.units;
}

/* tokens.text_quarters */
static inline Py_ssize_t quarters_of(const Text *text) {
    if (text->units > MAX_CHARS_FOR_FULL_HEURISTIC) return text->units;
    return text->ascii + 6 * (text->units - text->ascii);
}

static void text_add(Text *sum, const Text *more) {
    sum->units += more->units;
    sum->ascii += more->ascii;
    sum->escaped += more->escaped;
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

/* ---- one turn, part by part ----------------------------------------------------------------- */

/* What content_figures gathers while it walks a turn's parts. */
typedef struct {
    Py_ssize_t quarters;
    Py_ssize_t parts_size; /* the parts' JSON lengths, without brackets and commas */
    Py_ssize_t count;      /* parts so far: the next part's index */
    int has_response, has_call, label_count;
    int labels[L_COUNT];
    PyObject *calls, *answers, *responses; /* lists of tuples */
} Turn;

#define HANDLED 1
#define LEFT_TO_PYTHON 0
#define FAILED (-1)

static int turn_start(Turn *turn) {
    memset(turn, 0, sizeof(*turn));
    turn->calls = PyList_New(0);
    turn->answers = PyList_New(0);
    turn->responses = PyList_New(0);
    return turn->calls && turn->answers && turn->responses ? HANDLED : FAILED;
}

static void turn_release(Turn *turn) {
    Py_CLEAR(turn->calls);
    Py_CLEAR(turn->answers);
    Py_CLEAR(turn->responses);
}

static void turn_part_done(Turn *turn, int label, Py_ssize_t size) {
    turn->parts_size += size;
    turn->count++;
    for (int k = 0; k < turn->label_count; k++)
        if (turn->labels[k] == label) return;
    turn->labels[turn->label_count++] = label;
}

/* Append a new reference to one of the turn's lists (released either way). */
static int append_new(PyObject *list, PyObject *item) {
    if (item == NULL) return FAILED;
    int failed = PyList_Append(list, item) < 0;
    Py_DECREF(item);
    return failed ? FAILED : HANDLED;
}

/* {"text": text} */
static void turn_text(Turn *turn, const Text *text) {
    turn->quarters += quarters_of(text);
    turn_part_done(turn, L_TEXT, 11 + text->escaped); /* {"text":"..."} */
}

/* {"text": text, "thought": true} */
static void turn_thought(Turn *turn, const Text *text) {
    turn->quarters += quarters_of(text);
    turn_part_done(turn, L_THOUGHT, 26 + text->escaped); /* {"text":"...","thought":true} */
}

/* A plain function response: {"functionResponse": {<keys with text values>, "response": {"output": output}}}.
   ``keys_size``: the JSON length of those other keys and values (with their colons, not commas);
   ``keys``: how many there are; ``key_of``: the dict holding its id and name. */
static int turn_plain_response(Turn *turn, PyObject *key_of, Py_ssize_t keys, Py_ssize_t keys_size, PyObject *output) {
    Text out;
    text_of(output, &out);
    Py_ssize_t response_json = 13 + out.escaped;            /* {"output":"..."} */
    Py_ssize_t fr_json = 2 + keys + keys_size + 11 + response_json; /* braces, commas, "response": */
    PyObject *name = field(key_of, k_name);
    PyObject *tool = name != NULL ? shared(name) : Py_NewRef(s_unknown_tool);
    if (tool == NULL) return FAILED;
    if (append_new(turn->responses, tuple_of(6, PyLong_FromSsize_t(turn->count), Py_NewRef(Py_True), tool,
                                             PyLong_FromSsize_t(quarters_of(&out) / 4), PyLong_FromSsize_t(out.units),
                                             Py_NewRef(Py_True))) < 0 ||
        append_new(turn->answers, call_key(key_of)) < 0)
        return FAILED;
    turn->quarters += (name != NULL ? utf16_len(name) : 0) + response_json;
    turn->has_response = 1;
    turn_part_done(turn, L_RESULT, 21 + fr_json); /* {"functionResponse":...} */
    return HANDLED;
}

/* A function call part (JSON length ``size``), truthy in JavaScript: its (id, name) ``key`` (a new
   reference); ``empty``: its value is empty, which Python's truthiness labels "other". */
static int turn_call_part(Turn *turn, PyObject *key, int empty, Py_ssize_t size) {
    if (append_new(turn->calls, key) < 0) return FAILED;
    turn->has_call = 1;
    turn->quarters += size; /* neither text, tool result nor media: its JSON length */
    turn_part_done(turn, empty ? L_OTHER : L_CALL, size);
    return HANDLED;
}

/* A part holding a function call whose value is ``call`` (JSON length ``size`` for the whole part). */
static int turn_call(Turn *turn, PyObject *call, Py_ssize_t size) {
    if (PyDict_CheckExact(call)) return turn_call_part(turn, call_key(call), PyDict_GET_SIZE(call) == 0, size);
    if (PyList_CheckExact(call))
        return turn_call_part(turn, PyTuple_Pack(2, Py_None, Py_None), PyList_GET_SIZE(call) == 0, size);
    return LEFT_TO_PYTHON; /* truthiness of other values: leave it to Python */
}

/* One part as the history holds it (a bare string stands for {"text": string}). */
static int turn_part(Turn *turn, PyObject *part) {
    Text text;
    if (PyUnicode_CheckExact(part)) {
        text_of(part, &text);
        turn_text(turn, &text);
        return HANDLED;
    }
    if (!PyDict_CheckExact(part)) return LEFT_TO_PYTHON;
    Py_ssize_t size = PyDict_GET_SIZE(part);
    PyObject *value = field(part, k_text);
    if (value != NULL && PyUnicode_CheckExact(value)) {
        text_of(value, &text);
        if (size == 1) {
            turn_text(turn, &text);
        } else if (size == 2 && PyDict_GetItemWithError(part, k_thought) == Py_True && first_key_is(part, k_text)) {
            turn_thought(turn, &text);
        } else {
            return PyErr_Occurred() ? FAILED : LEFT_TO_PYTHON;
        }
        return HANDLED;
    }
    if (PyErr_Occurred()) return FAILED;
    PyObject *fr = field(part, k_function_response);
    if (fr != NULL) {
        if (size != 1 || !PyDict_CheckExact(fr)) return LEFT_TO_PYTHON;
        PyObject *response = field(fr, k_response);
        if (response == NULL || !PyDict_CheckExact(response) || PyDict_GET_SIZE(response) != 1) return LEFT_TO_PYTHON;
        PyObject *output = field(response, k_output);
        if (output == NULL || !PyUnicode_CheckExact(output)) return LEFT_TO_PYTHON;
        Py_ssize_t keys = 0, keys_size = 0, pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(fr, &pos, &key, &item)) {
            if (PyUnicode_CheckExact(key) && PyUnicode_Compare(key, k_response) == 0) continue;
            if (!PyUnicode_CheckExact(key) || !PyUnicode_CheckExact(item)) return LEFT_TO_PYTHON;
            keys++;
            keys_size += string_json_len(key) + 1 + string_json_len(item);
        }
        return turn_plain_response(turn, fr, keys, keys_size, output);
    }
    PyObject *const excluded[] = {k_text, k_thought, k_function_response, k_inline_data, k_file_data};
    int odd = has_any(part, excluded, 5);
    if (odd) return odd < 0 ? FAILED : LEFT_TO_PYTHON;
    Py_ssize_t part_size = json_len(part, 0);
    if (part_size < 0) return LEFT_TO_PYTHON;
    PyObject *call = field(part, k_function_call);
    if (call != NULL) return turn_call(turn, call, part_size);
    turn->quarters += part_size;
    turn_part_done(turn, L_OTHER, part_size);
    return HANDLED;
}

/* The TurnFigures tuple (content_figures' result) for the parts walked so far. */
static PyObject *turn_figures(Turn *turn, PyObject *role, PyObject *record_id, PyObject *is_tool_result,
                              PyObject *usage) {
    Py_ssize_t parts_json = turn->parts_size + (turn->count ? turn->count + 1 : 2);
    int is_user = PyUnicode_Compare(role, s_user) == 0;
    int is_model = !is_user && PyUnicode_Compare(role, s_model) == 0;
    return tuple_of(12, Py_NewRef(record_id), shared(role), Py_NewRef(is_tool_result),
                    PyLong_FromSsize_t(turn->quarters),
                    PyLong_FromSsize_t(18 + string_json_len(role) + parts_json), /* {"role":...,"parts":[...]} */
                    Py_NewRef(is_user && !turn->has_response ? Py_True : Py_False),
                    Py_NewRef(is_model && !turn->has_call ? Py_True : Py_False),
                    kind_of(turn->labels, turn->label_count), PyList_AsTuple(turn->responses), Py_NewRef(usage),
                    PyList_AsTuple(turn->calls), PyList_AsTuple(turn->answers));
}

/* content_figures(content, ...) for {"role": str, "parts": [...]}: a tuple, None if unhandled, NULL on error. */
static PyObject *measure_content(PyObject *content, PyObject *record_id, PyObject *is_tool_result,
                                 PyObject *usage) {
    if (!PyDict_CheckExact(content) || PyDict_GET_SIZE(content) != 2 || !first_key_is(content, k_role))
        Py_RETURN_NONE;
    PyObject *role = field(content, k_role);
    PyObject *parts = field(content, k_parts);
    if (role == NULL || !PyUnicode_CheckExact(role) || parts == NULL || !PyList_CheckExact(parts))
        Py_RETURN_NONE;
    Turn turn;
    PyObject *result = NULL;
    if (turn_start(&turn) < 0) goto done;
    int found = HANDLED;
    for (Py_ssize_t j = 0; j < PyList_GET_SIZE(parts) && found == HANDLED; j++) {
        PyObject *part = PyList_GET_ITEM(parts, j);
        /* a bare string is not a text part here (unlike in a message's content) */
        found = PyUnicode_CheckExact(part) ? LEFT_TO_PYTHON : turn_part(&turn, part);
    }
    if (found == LEFT_TO_PYTHON)
        result = Py_NewRef(Py_None);
    else if (found == HANDLED)
        result = turn_figures(&turn, role, record_id, is_tool_result, usage);
done:
    turn_release(&turn);
    return result;
}

/* ---- one message, straight to its turns' figures --------------------------------------------- */

/* ECMAScript WhiteSpace and LineTerminator: what trim() removes (jsjson.JS_WHITESPACE). */
static inline int is_js_space(Py_UCS4 c) {
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
           c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000 || c == 0xFEFF;
}

#define LONGEST_PREFIX 17 /* "<session_context>" */

/* The first code points of the user's text with leading whitespace removed, as
   history.is_ignored_user_content reads them. */
typedef struct {
    Py_UCS4 seen[LONGEST_PREFIX];
    int length;
} Head;

static void head_add(Head *head, PyObject *text) {
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    for (Py_ssize_t i = 0; i < n && head->length < LONGEST_PREFIX; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (head->length == 0 && is_js_space(c)) continue;
        head->seen[head->length++] = c;
    }
}

static int head_starts_with(const Head *head, const char *prefix) {
    int n = (int)strlen(prefix);
    if (head->length < n) return 0;
    for (int i = 0; i < n; i++)
        if (head->seen[i] != (Py_UCS4)(unsigned char)prefix[i]) return 0;
    return 1;
}

/* is_ignored_user_content: 1 ignored, 0 kept, UNREAD for content it does not read. */
#define UNREAD (-1)
static int user_content_ignored(PyObject *content) {
    Head head = {{0}, 0};
    if (PyUnicode_CheckExact(content)) {
        head_add(&head, content);
    } else {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content) && head.length < LONGEST_PREFIX; i++) {
            PyObject *part = PyList_GET_ITEM(content, i);
            if (PyUnicode_CheckExact(part)) {
                head_add(&head, part);
                continue;
            }
            if (!PyDict_CheckExact(part) || PyDict_GET_SIZE(part) != 1) return UNREAD;
            PyObject *text = field(part, k_text);
            if (text == NULL || !PyUnicode_CheckExact(text)) return UNREAD;
            head_add(&head, text);
        }
    }
    return head.length == 0 || head_starts_with(&head, "/") || head_starts_with(&head, "?") ||
           head_starts_with(&head, "<session_context>") || head_starts_with(&head, "<hook_context>");
}

/* A thought record as history._thought_parts turns it into a part. */
static int turn_thought_record(Turn *turn, PyObject *thought) {
    if (!PyDict_CheckExact(thought)) return HANDLED; /* skipped */
    PyObject *subject = field(thought, k_subject);
    PyObject *description = PyDict_GetItemWithError(thought, k_description); /* null counts here */
    if (description == NULL && PyErr_Occurred()) return FAILED;
    Text text;
    if (subject != NULL && PyUnicode_CheckExact(subject) && PyUnicode_GET_LENGTH(subject) > 0) {
        /* "**{subject}** {description}", description as a template literal writes it */
        PyObject *written = description == NULL ? s_undefined : description == Py_None ? s_null : description;
        if (!PyUnicode_CheckExact(written)) return LEFT_TO_PYTHON;
        Text piece;
        text.units = text.ascii = text.escaped = 5; /* "**", "** " */
        text_of(subject, &piece);
        text_add(&text, &piece);
        text_of(written, &piece);
        text_add(&text, &piece);
    } else if (subject == NULL || (PyUnicode_CheckExact(subject) && PyUnicode_GET_LENGTH(subject) == 0)) {
        if (description == NULL || !PyUnicode_CheckExact(description)) return LEFT_TO_PYTHON;
        text_of(description, &text);
    } else {
        return LEFT_TO_PYTHON; /* a subject that is not text */
    }
    turn_thought(turn, &text);
    return HANDLED;
}

/* A toolCalls item as history._call_part turns it into {"functionCall": {id, name, args}}. */
static int turn_call_record(Turn *turn, PyObject *call) {
    PyObject *const keys[] = {k_id, k_name, k_args};
    Py_ssize_t inner = 1, present = 0;
    for (int i = 0; i < 3; i++) {
        PyObject *value = PyDict_GetItemWithError(call, keys[i]);
        if (value == NULL) {
            if (PyErr_Occurred()) return FAILED;
            continue;
        }
        Py_ssize_t size = json_len(value, 1);
        if (size < 0) return LEFT_TO_PYTHON;
        inner += string_json_len(keys[i]) + 1 + size + 1; /* "key":value and a comma (or the closing brace) */
        present++;
    }
    if (!present) inner = 2;
    /* {"functionCall":{...}}: a dict with those keys, so the record's own id and name */
    return turn_call_part(turn, call_key(call), present == 0, 17 + inner);
}

/* A toolCalls item's result as history._response_parts adds it to the tool-result turn. */
static int turn_result_record(Turn *turn, PyObject *call) {
    PyObject *result = field(call, k_result);
    if (result == NULL) return HANDLED; /* falsy: nothing */
    if (PyUnicode_CheckExact(result)) {
        if (PyUnicode_GET_LENGTH(result) == 0) return HANDLED;
        /* {"functionResponse": {id?, name?, "response": {"output": result}}} with the call's id and name */
        Py_ssize_t keys = 0, keys_size = 0;
        PyObject *const copied[] = {k_id, k_name};
        for (int i = 0; i < 2; i++) {
            PyObject *value = PyDict_GetItemWithError(call, copied[i]);
            if (value == NULL) {
                if (PyErr_Occurred()) return FAILED;
                continue;
            }
            if (!PyUnicode_CheckExact(value)) return LEFT_TO_PYTHON;
            keys++;
            keys_size += string_json_len(copied[i]) + 1 + string_json_len(value);
        }
        return turn_plain_response(turn, call, keys, keys_size, result);
    }
    if (PyList_CheckExact(result)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(result); i++) {
            int found = turn_part(turn, PyList_GET_ITEM(result, i));
            if (found != HANDLED) return found;
        }
        return HANDLED;
    }
    if (PyDict_CheckExact(result)) return turn_part(turn, result);
    if (result == Py_False) return HANDLED;
    return LEFT_TO_PYTHON; /* numbers, true: their truthiness is left to Python */
}

/* usage_of: the six values when tokens has Gemini CLI's keys in order; 0 if not, -1 on error. */
static int usage_of(PyObject *message, PyObject **usage) {
    PyObject *tokens = field(message, k_tokens);
    if (tokens == NULL || !PyDict_CheckExact(tokens)) {
        *usage = Py_NewRef(Py_None);
        return 1;
    }
    if (PyDict_GET_SIZE(tokens) != 6) return 0;
    PyObject *values[6];
    Py_ssize_t pos = 0;
    PyObject *key;
    for (int i = 0; i < 6; i++) {
        PyDict_Next(tokens, &pos, &key, &values[i]);
        if (!PyUnicode_CheckExact(key) || PyUnicode_Compare(key, usage_keys[i]) != 0) return 0;
    }
    *usage = tuple_of(6, Py_NewRef(values[0]), Py_NewRef(values[1]), Py_NewRef(values[2]), Py_NewRef(values[3]),
                      Py_NewRef(values[4]), Py_NewRef(values[5]));
    return *usage == NULL ? -1 : 1;
}

/* message_figures(message): the figures of the turns a user message becomes. */
static PyObject *measure_user(PyObject *message, PyObject *record_id) {
    PyObject *content = field(message, k_content);
    if (content == NULL || !(PyUnicode_CheckExact(content) || PyList_CheckExact(content))) Py_RETURN_NONE;
    int ignored = user_content_ignored(content);
    if (ignored == UNREAD) Py_RETURN_NONE;
    if (ignored) return PyTuple_New(0);
    Turn turn;
    int found = turn_start(&turn);
    if (found == HANDLED && PyUnicode_CheckExact(content)) {
        found = turn_part(&turn, content);
    } else {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content) && found == HANDLED; i++)
            found = turn_part(&turn, PyList_GET_ITEM(content, i));
    }
    PyObject *out = NULL;
    if (found == LEFT_TO_PYTHON) {
        out = Py_NewRef(Py_None);
    } else if (found == HANDLED) {
        PyObject *figures = turn_figures(&turn, s_user, record_id, Py_False, Py_None);
        out = figures == NULL ? NULL : tuple_of(1, figures);
    }
    turn_release(&turn);
    return out;
}

/* message_figures(message) for a model message: its model turn, and its tool-result turn. */
static PyObject *measure_gemini(PyObject *message, PyObject *record_id) {
    PyObject *content = field(message, k_content);
    PyObject *listed = field(message, k_tool_calls);
    PyObject *thoughts = field(message, k_thoughts);
    Py_ssize_t calls = listed != NULL && PyList_CheckExact(listed) ? PyList_GET_SIZE(listed) : 0;
    if (content != NULL && !PyUnicode_CheckExact(content) && !PyList_CheckExact(content)) Py_RETURN_NONE;
    if (content != NULL && PyList_CheckExact(content)) {
        /* Parts that make the content the whole model turn (a call, a thought) are left to Python. */
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content); i++) {
            PyObject *part = PyList_GET_ITEM(content, i);
            if (PyDict_CheckExact(part) &&
                (PyDict_Contains(part, k_function_call) || PyDict_Contains(part, k_thought)))
                Py_RETURN_NONE;
        }
    }
    for (Py_ssize_t i = 0; i < calls; i++)
        if (!PyDict_CheckExact(PyList_GET_ITEM(listed, i))) Py_RETURN_NONE;
    PyObject *usage = NULL;
    int usage_found = usage_of(message, &usage);
    if (usage_found <= 0) return usage_found < 0 ? NULL : Py_NewRef(Py_None);

    Turn model, results;
    PyObject *first = NULL, *second = NULL, *out = NULL;
    int found = HANDLED;
    if (turn_start(&model) < 0 || turn_start(&results) < 0) goto failed;
    if (thoughts != NULL && PyList_CheckExact(thoughts))
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(thoughts) && found == HANDLED; i++)
            found = turn_thought_record(&model, PyList_GET_ITEM(thoughts, i));
    if (found == HANDLED && content != NULL) {
        if (PyUnicode_CheckExact(content)) {
            if (PyUnicode_GET_LENGTH(content)) found = turn_part(&model, content);
        } else {
            for (Py_ssize_t i = 0; i < PyList_GET_SIZE(content) && found == HANDLED; i++)
                found = turn_part(&model, PyList_GET_ITEM(content, i));
        }
    }
    for (Py_ssize_t i = 0; i < calls && found == HANDLED; i++)
        found = turn_call_record(&model, PyList_GET_ITEM(listed, i));
    for (Py_ssize_t i = 0; i < calls && found == HANDLED; i++)
        found = turn_result_record(&results, PyList_GET_ITEM(listed, i));
    if (found == FAILED) goto failed;
    if (found == LEFT_TO_PYTHON) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    if (model.count == 0) {
        out = PyTuple_New(0);
        goto done;
    }
    first = turn_figures(&model, s_model, record_id, Py_False, usage);
    if (first == NULL) goto failed;
    if (results.count == 0) {
        out = tuple_of(1, first);
        goto done;
    }
    second = turn_figures(&results, s_user, record_id, Py_True, Py_None);
    out = second == NULL ? (Py_DECREF(first), NULL) : tuple_of(2, first, second);
    goto done;
failed:
    out = NULL;
done:
    Py_XDECREF(usage);
    turn_release(&model);
    turn_release(&results);
    return out;
}

/* 0 once bind() gave the shared names, else -1 with an error set. */
static int require_bound(void) {
    if (shared_names != NULL) return 0;
    PyErr_SetString(PyExc_RuntimeError, "bind() the shared names first");
    return -1;
}

static PyObject *measure_message(PyObject *module, PyObject *message) {
    if (require_bound() < 0) return NULL;
    if (!PyDict_CheckExact(message)) Py_RETURN_NONE;
    PyObject *kind = field(message, k_type);
    PyObject *record_id = field(message, k_id);
    if (record_id == NULL) record_id = Py_None;
    if (kind != NULL && PyUnicode_CheckExact(kind)) {
        if (PyUnicode_Compare(kind, s_user) == 0) return measure_user(message, record_id);
        if (PyUnicode_Compare(kind, s_gemini) == 0) return measure_gemini(message, record_id);
    }
    if (PyErr_Occurred()) return NULL;
    return PyTuple_New(0); /* info, error, ...: no turns */
}

/* count_newlines(data, start, stop): data.count(b"\n", start, stop) for 0 <= start <= stop, with memchr
   (bytes.count looks at every byte; lines of a recording are hundreds of bytes long). */
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

static PyObject *measure(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "measure(content, record_id, is_tool_result, usage)");
        return NULL;
    }
    if (require_bound() < 0) return NULL;
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
    Text found;
    text_of(text, &found);
    return PyLong_FromSsize_t(quarters_of(&found));
}

static PyMethodDef methods[] = {
    {"measure", (PyCFunction)(void (*)(void))measure, METH_FASTCALL,
     "measure(content, record_id, is_tool_result, usage): content_figures' tuple, or None if unhandled."},
    {"measure_message", measure_message, METH_O,
     "measure_message(message): message_figures' tuple, or None if unhandled."},
    {"bind", bind, METH_O, "bind(shared): the dict of shared role and tool names (figures._SHARED)."},
    {"count_newlines", (PyCFunction)(void (*)(void))count_newlines, METH_FASTCALL,
     "count_newlines(data, start, stop): data.count(b'\\n', start, stop), for 0 <= start <= stop"},
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
        !(s_empty = intern("empty")) || !(kinds = PyDict_New()) || !(k_type = intern("type")) ||
        !(k_content = intern("content")) || !(k_thoughts = intern("thoughts")) ||
        !(k_tool_calls = intern("toolCalls")) || !(k_tokens = intern("tokens")) || !(k_subject = intern("subject")) ||
        !(k_description = intern("description")) || !(k_args = intern("args")) || !(k_result = intern("result")) ||
        !(s_gemini = intern("gemini")) || !(s_undefined = intern("undefined")) || !(s_null = intern("null")))
        return NULL;
    const char *const usage_names[6] = {"input", "output", "cached", "thoughts", "tool", "total"};
    for (int i = 0; i < 6; i++)
        if (!(usage_keys[i] = intern(usage_names[i]))) return NULL;
    return PyModule_Create(&module_def);
}
