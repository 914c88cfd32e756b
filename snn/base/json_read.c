/* The JSON reader (json_read.h): recursive descent over the whole text into
 * one array of values, with the strings decoded into one buffer. Both are
 * bounded by the text's length (a value takes at least one byte of it, a
 * decoded string no more bytes than its quoted source), and the recursion
 * by max_depth, so no input can make it allocate or recurse beyond that. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_read.h"
#include "alloc.h"
#include "input_file.h"

struct nc_json_doc {
    char *name;
    nc_json_value *v;
    int n, cap;
    char *strings;        /* decoded strings and keys, each NUL-terminated; allocated
                             once at the text's length + 1, so pointers into it stay valid */
    size_t n_str;
};

typedef struct parser {
    nc_json_doc *d;
    const char *s;
    size_t i, len;
    int max_depth;
    size_t line_start;    /* offset of the current line's first byte */
    int line;
} parser;

static int col_of(const parser *p, size_t at) { return (int)(at - p->line_start) + 1; }

static nc_status fail_at(const parser *p, size_t at, const char *what)
{
    /* the line of `at` (at is never before the current line's start) */
    return nc_errorf(NC_ERR_PARSE, "%s:%d:%d: %s", p->d->name, p->line, col_of(p, at), what);
}

static nc_status fail(const parser *p, const char *what)
{
    if (p->i >= p->len)
        return nc_errorf(NC_ERR_PARSE, "%s:%d:%d: %s (the text ends here: truncated?)", p->d->name, p->line,
                         col_of(p, p->i), what);
    return fail_at(p, p->i, what);
}

static void skip_ws(parser *p)
{
    while (p->i < p->len) {
        char c = p->s[p->i];
        if (c == '\n') {
            p->line++;
            p->line_start = p->i + 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            return;
        }
        p->i++;
    }
}

static int new_value(parser *p, nc_json_type t)
{
    nc_json_doc *d = p->d;
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        nc_json_value *nv = nc_realloc(d->v, (size_t)cap * sizeof *nv);
        if (!nv)
            return -1;
        d->v = nv;
        d->cap = cap;
    }
    nc_json_value *v = &d->v[d->n];
    memset(v, 0, sizeof *v);
    v->type = t;
    v->child = v->next = -1;
    v->line = p->line;
    v->col = col_of(p, p->i);
    return d->n++;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s[k];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return 0;
    }
    *out = v;
    return 1;
}

/* Appends code point cp as UTF-8 (cp < 0x110000). */
static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A string at p->i (the opening quote), decoded into the document's
 * buffer; *off is where it starts there. The decoded bytes never exceed
 * the source's (\uXXXX: 6 bytes → at most 3; a pair: 12 → 4). */
static nc_status parse_string(parser *p, size_t *off)
{
    size_t start = p->i;
    p->i++; /* the quote */
    char *o = p->d->strings + p->d->n_str;
    size_t k = 0;
    for (;;) {
        if (p->i >= p->len)
            return fail_at(p, start, "unterminated string (the text ends inside it: truncated?)");
        unsigned char c = (unsigned char)p->s[p->i];
        if (c == '"') {
            p->i++;
            break;
        }
        if (c < 0x20)
            return fail(p, "a control character inside a string (write it as an escape)");
        if (c != '\\') {
            o[k++] = (char)c;
            p->i++;
            continue;
        }
        if (p->i + 1 >= p->len)
            return fail_at(p, start, "unterminated string (the text ends inside it: truncated?)");
        char e = p->s[p->i + 1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            static const char map[] = "\"\\/\b\f\n\r\t";
            o[k++] = map[simple - "\"\\/bfnrt"];
            p->i += 2;
            continue;
        }
        if (e != 'u')
            return fail(p, "an unknown escape in a string");
        unsigned cp, lo;
        if (p->i + 6 > p->len || !hex4(p->s + p->i + 2, &cp))
            return fail(p, "\\u needs four hexadecimal digits");
        p->i += 6;
        if (cp >= 0xD800 && cp < 0xDC00) { /* a high surrogate: its low half must follow */
            if (p->i + 6 > p->len || p->s[p->i] != '\\' || p->s[p->i + 1] != 'u' || !hex4(p->s + p->i + 2, &lo) ||
                lo < 0xDC00 || lo >= 0xE000)
                return fail(p, "a \\u surrogate without its pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p->i += 6;
        } else if (cp >= 0xDC00 && cp < 0xE000) {
            return fail(p, "a \\u surrogate without its pair");
        }
        if (cp == 0)
            return fail(p, "\\u0000 in a string (neuroc's strings cannot hold NUL)");
        k += put_utf8(o + k, cp);
    }
    o[k] = '\0';
    *off = p->d->n_str;
    p->d->n_str += k + 1;
    return NC_OK;
}

/* RFC 8259's number grammar, then strtod on the checked token. */
static nc_status parse_number(parser *p, double *out)
{
    size_t b = p->i, i = p->i;
    const char *s = p->s;
#define DIGIT(j) ((j) < p->len && s[j] >= '0' && s[j] <= '9')
    if (i < p->len && s[i] == '-')
        i++;
    if (!DIGIT(i))
        return fail(p, "expected a value");
    if (s[i] == '0')
        i++;
    else
        while (DIGIT(i))
            i++;
    if (i < p->len && s[i] == '.') {
        i++;
        if (!DIGIT(i))
            return fail_at(p, i, "a digit must follow the decimal point");
        while (DIGIT(i))
            i++;
    }
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < p->len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (!DIGIT(i))
            return fail_at(p, i, "a digit must follow the exponent");
        while (DIGIT(i))
            i++;
    }
#undef DIGIT
    char tmp[64];
    if (i - b >= sizeof tmp)
        return fail(p, "a number of more than 63 characters");
    memcpy(tmp, s + b, i - b);
    tmp[i - b] = '\0';
    errno = 0;
    double v = strtod(tmp, NULL);
    if (!isfinite(v))
        return fail(p, "a number out of the range of a double");
    *out = v;
    p->i = i;
    return NC_OK;
}

static nc_status parse_value(parser *p, int depth, int *id);

/* An array or object at p->i; children are linked as they come. */
static nc_status parse_container(parser *p, int depth, int id)
{
    int is_obj = p->d->v[id].type == NC_JSON_OBJECT;
    char close = is_obj ? '}' : ']';
    if (depth >= p->max_depth) {
        char what[96];
        snprintf(what, sizeof what, "nesting deeper than %d levels", p->max_depth);
        return fail(p, what);
    }
    p->i++;
    skip_ws(p);
    if (p->i < p->len && p->s[p->i] == close) {
        p->i++;
        return NC_OK;
    }
    int last = -1;
    for (;;) {
        nc_status st;
        size_t key = 0;
        skip_ws(p);
        if (is_obj) {
            if (p->i >= p->len || p->s[p->i] != '"')
                return fail(p, "expected a member name (a string)");
            if ((st = parse_string(p, &key)) != NC_OK)
                return st;
            skip_ws(p);
            if (p->i >= p->len || p->s[p->i] != ':')
                return fail(p, "expected ':' after a member name");
            p->i++;
        }
        int child;
        if ((st = parse_value(p, depth + 1, &child)) != NC_OK)
            return st;
        p->d->v[child].key = is_obj ? p->d->strings + key : NULL;
        if (last < 0)
            p->d->v[id].child = child;
        else
            p->d->v[last].next = child;
        last = child;
        p->d->v[id].n++;
        skip_ws(p);
        if (p->i < p->len && p->s[p->i] == ',') {
            p->i++;
            continue;
        }
        if (p->i < p->len && p->s[p->i] == close) {
            p->i++;
            return NC_OK;
        }
        return fail(p, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static nc_status parse_value(parser *p, int depth, int *id)
{
    skip_ws(p);
    if (p->i >= p->len)
        return fail(p, "expected a value");
    char c = p->s[p->i];
    nc_json_type t = c == '{' ? NC_JSON_OBJECT : c == '[' ? NC_JSON_ARRAY : c == '"' ? NC_JSON_STRING
                   : c == 't' || c == 'f' ? NC_JSON_BOOL : c == 'n' ? NC_JSON_NULL : NC_JSON_NUMBER;
    int k = new_value(p, t);
    if (k < 0)
        return nc_errorf(NC_ERR_NOMEM, "out of memory reading %s", p->d->name);
    *id = k;
    nc_status st = NC_OK;
    if (t == NC_JSON_OBJECT || t == NC_JSON_ARRAY) {
        st = parse_container(p, depth, k);
    } else if (t == NC_JSON_STRING) {
        size_t off;
        if ((st = parse_string(p, &off)) == NC_OK)
            p->d->v[k].str = p->d->strings + off;
    } else if (t == NC_JSON_NUMBER) {
        st = parse_number(p, &p->d->v[k].num);
    } else {
        const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
        size_t l = strlen(lit);
        if (p->len - p->i < l || memcmp(p->s + p->i, lit, l) != 0)
            return fail(p, "expected a value");
        p->d->v[k].num = c == 't';
        p->i += l;
    }
    return st;
}

void nc_json_doc_free(nc_json_doc *d)
{
    if (!d)
        return;
    nc_free(d->name);
    nc_free(d->v);
    nc_free(d->strings);
    nc_free(d);
}

nc_status nc_json_parse(const char *text, size_t len, const char *name, size_t max_bytes, int max_depth,
                        nc_json_doc **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_json_parse: out is NULL");
    *out = NULL;
    if (!name)
        name = "JSON text";
    if (!text && len)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: NULL text", name);
    if (max_bytes == 0)
        max_bytes = NC_JSON_READ_MAX_BYTES;
    if (max_depth <= 0)
        max_depth = NC_JSON_READ_MAX_DEPTH;
    if (max_bytes > (size_t)INT_MAX / 2)
        max_bytes = (size_t)INT_MAX / 2; /* value indices are ints */
    if (len > max_bytes)
        return nc_errorf(NC_ERR_LIMIT, "%s: %zu bytes of JSON, more than the %zu allowed", name, len, max_bytes);
    nc_json_doc *d = nc_calloc(1, sizeof *d);
    if (!d || !(d->name = nc_strdup(name)) || !(d->strings = nc_malloc(len + 1))) {
        nc_json_doc_free(d);
        return nc_errorf(NC_ERR_NOMEM, "out of memory reading %s", name);
    }
    parser p = {d, text ? text : "", 0, len, max_depth, 0, 1};
    int root;
    nc_status st = parse_value(&p, 0, &root);
    if (st == NC_OK) {
        skip_ws(&p);
        if (p.i < p.len)
            st = fail(&p, "text after the JSON value");
    }
    if (st != NC_OK) {
        nc_json_doc_free(d);
        return st;
    }
    *out = d;
    return NC_OK;
}

nc_status nc_json_read_file(const char *path, size_t max_bytes, int max_depth, nc_json_doc **out)
{
    if (!out || !path)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_json_read_file: NULL argument");
    *out = NULL;
    if (max_bytes == 0)
        max_bytes = NC_JSON_READ_MAX_BYTES;
    FILE *f;
    nc_status ost = nc_input_fopen(path, 0, &f, NULL);
    if (ost != NC_OK)
        return ost;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    nc_status st = NC_OK;
    for (;;) {
        if (n == cap) {
            if (cap > max_bytes) { /* read one block past the limit, so an exact fit passes */
                st = nc_errorf(NC_ERR_LIMIT, "%s: more than the %zu bytes a JSON file may have", path, max_bytes);
                break;
            }
            size_t nc = cap ? 2 * cap : 8192;
            char *nb = nc_realloc(buf, nc);
            if (!nb) {
                st = nc_errorf(NC_ERR_NOMEM, "out of memory reading %s", path);
                break;
            }
            buf = nb, cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (st == NC_OK && ferror(f))
        st = nc_errorf(NC_ERR_IO, "%s: read error", path);
    fclose(f);
    if (st == NC_OK)
        st = nc_json_parse(buf, n, path, max_bytes, max_depth, out);
    nc_free(buf);
    return st;
}

const nc_json_value *nc_json_root(const nc_json_doc *d) { return d && d->n ? &d->v[0] : NULL; }

const nc_json_value *nc_json_first(const nc_json_doc *d, const nc_json_value *v)
{
    return d && v && v->child >= 0 ? &d->v[v->child] : NULL;
}

const nc_json_value *nc_json_next(const nc_json_doc *d, const nc_json_value *v)
{
    return d && v && v->next >= 0 ? &d->v[v->next] : NULL;
}

const nc_json_value *nc_json_get(const nc_json_doc *d, const nc_json_value *obj, const char *key)
{
    if (!obj || obj->type != NC_JSON_OBJECT || !key)
        return NULL;
    for (const nc_json_value *m = nc_json_first(d, obj); m; m = nc_json_next(d, m))
        if (strcmp(m->key, key) == 0)
            return m;
    return NULL;
}

const char *nc_json_type_name(nc_json_type t)
{
    switch (t) {
    case NC_JSON_NULL: return "null";
    case NC_JSON_BOOL: return "a boolean";
    case NC_JSON_NUMBER: return "a number";
    case NC_JSON_STRING: return "a string";
    case NC_JSON_ARRAY: return "an array";
    case NC_JSON_OBJECT: return "an object";
    }
    return "?";
}

nc_status nc_json_errorf(const nc_json_doc *d, const nc_json_value *v, nc_status st, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *name = d && d->name ? d->name : "JSON text";
    if (!v)
        return nc_errorf(st, "%s: %s", name, what);
    return nc_errorf(st, "%s:%d:%d: %s", name, v->line, v->col, what);
}
