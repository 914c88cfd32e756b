/* NumPy .npy files: header parsing (versions 1.0, 2.0, 3.0) and writing.
 *
 * Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
 * The header is a Python dict literal with exactly the keys 'descr',
 * 'fortran_order' and 'shape'; we parse it with a small tokenizer rather than
 * pattern matching so that key order and spacing do not matter. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snn/base/alloc.h"
#include "snn/base/atomic_file.h"
#include "data_io.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

/* numpy itself refuses headers over 10000 bytes by default; allow more, but
 * not so much that a corrupt length makes us allocate gigabytes. */
#define NPY_MAX_HEADER (1 << 20)

static const unsigned char NPY_MAGIC[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

int nc_npy_is_magic(const unsigned char magic[4]) { return memcmp(magic, NPY_MAGIC, 4) == 0; }

/* ---------------------------------------------------------------- header dict */

typedef struct {
    const char *s, *end;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->s < c->end && (*c->s == ' ' || *c->s == '\t' || *c->s == '\n' || *c->s == '\r'))
        c->s++;
}

static int accept(cursor *c, char ch)
{
    skip_ws(c);
    if (c->s < c->end && *c->s == ch) {
        c->s++;
        return 1;
    }
    return 0;
}

/* A quoted Python string without escapes (none of the keys or descrs need them). */
static int parse_str(cursor *c, char *out, size_t cap)
{
    skip_ws(c);
    if (c->s >= c->end || (*c->s != '\'' && *c->s != '"'))
        return 0;
    char q = *c->s++;
    size_t n = 0;
    while (c->s < c->end && *c->s != q) {
        if (*c->s == '\\' || n + 1 >= cap)
            return 0;
        out[n++] = *c->s++;
    }
    if (c->s >= c->end)
        return 0;
    c->s++;
    out[n] = '\0';
    return 1;
}

static int parse_word(cursor *c, const char *w)
{
    skip_ws(c);
    size_t n = strlen(w);
    if ((size_t)(c->end - c->s) >= n && memcmp(c->s, w, n) == 0) {
        c->s += n;
        return 1;
    }
    return 0;
}

/* (d0, d1, ...) with an optional trailing comma; Python 2 files may write 3L. */
static nc_status parse_shape(cursor *c, nc_data_header *h)
{
    if (!accept(c, '('))
        return nc_errorf(NC_ERR_PARSE, "npy header: 'shape' is not a tuple");
    h->ndim = 0;
    for (;;) {
        if (accept(c, ')'))
            return NC_OK;
        skip_ws(c);
        if (c->s >= c->end || *c->s < '0' || *c->s > '9')
            return nc_errorf(NC_ERR_PARSE, "npy header: 'shape' holds something other than "
                                           "non-negative integers");
        int64_t v = 0;
        while (c->s < c->end && *c->s >= '0' && *c->s <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return nc_errorf(NC_ERR_PARSE, "npy header: a dimension in 'shape' overflows");
            v = v * 10 + (*c->s++ - '0');
        }
        if (c->s < c->end && *c->s == 'L')
            c->s++;
        if (h->ndim == NC_MAX_DIMS)
            return nc_errorf(NC_ERR_LIMIT, "npy header: more than %d dimensions", NC_MAX_DIMS);
        h->shape[h->ndim++] = v;
        if (!accept(c, ',')) {
            if (accept(c, ')'))
                return NC_OK;
            return nc_errorf(NC_ERR_PARSE, "npy header: expected ',' or ')' in 'shape'");
        }
    }
}

/* '<f4' and friends → element format. Little-endian only (DESIGN: the
 * reader takes what numpy writes on every common machine). */
static nc_status parse_descr(const char *d, nc_elem_format *f)
{
    if (strlen(d) >= sizeof f->name)
        return nc_errorf(NC_ERR_UNSUPPORTED, "npy dtype '%.32s' is not supported", d);
    memset(f, 0, sizeof *f);
    snprintf(f->name, sizeof f->name, "%s", d);
    char order = d[0];
    if (order != '<' && order != '>' && order != '|' && order != '=')
        return nc_errorf(NC_ERR_PARSE, "npy header: malformed dtype '%s'", d);
    char kind = d[1];
    if (kind == 'O')
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "npy dtype '%s' is an object array (pickled Python objects); save a "
                         "numeric array instead", d);
    int size = 0;
    for (const char *p = d + 2; *p; p++) {
        if (*p < '0' || *p > '9' || size > 1000)
            return nc_errorf(NC_ERR_UNSUPPORTED, "npy dtype '%s' is not supported", d);
        size = size * 10 + (*p - '0');
    }
    int ok = 0;
    switch (kind) {
    case 'f': ok = size == 4 || size == 8; f->kind = NC_ELEM_FLOAT; break;
    case 'i': ok = size == 1 || size == 2 || size == 4 || size == 8; f->kind = NC_ELEM_INT; break;
    case 'u': ok = size == 1 || size == 2 || size == 4; f->kind = NC_ELEM_UINT; break;
    case 'b': ok = size == 1; f->kind = NC_ELEM_BOOL; break;
    default: break;
    }
    if (!ok)
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "npy dtype '%s' is not supported (neuroc reads float32/64, int8..int64, "
                         "uint8..uint32 and bool)", d);
    if (size > 1 && order != '<')
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "npy dtype '%s' is not little-endian; convert with "
                         "a.astype(a.dtype.newbyteorder('<'))", d);
    f->size = size;
    return NC_OK;
}

static nc_status parse_header_dict(const char *text, size_t len, nc_data_header *h)
{
    cursor c = {text, text + len};
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    char descr[64] = "";
    if (!accept(&c, '{'))
        return nc_errorf(NC_ERR_PARSE, "npy header is not a dict literal");
    while (!accept(&c, '}')) {
        char key[32];
        if (!parse_str(&c, key, sizeof key) || !accept(&c, ':'))
            return nc_errorf(NC_ERR_PARSE, "npy header: expected 'key': value");
        nc_status st = NC_OK;
        if (strcmp(key, "descr") == 0) {
            skip_ws(&c);
            if (c.s < c.end && *c.s == '[')
                return nc_errorf(NC_ERR_UNSUPPORTED, "npy file holds a structured array "
                                                     "(record dtype); save a plain numeric array");
            if (!parse_str(&c, descr, sizeof descr))
                return nc_errorf(NC_ERR_PARSE, "npy header: 'descr' is not a dtype string");
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (parse_word(&c, "True"))
                fortran = 1;
            else if (!parse_word(&c, "False"))
                return nc_errorf(NC_ERR_PARSE, "npy header: 'fortran_order' is not True/False");
            have_order = 1;
        } else if (strcmp(key, "shape") == 0) {
            st = parse_shape(&c, h);
            have_shape = 1;
        } else {
            return nc_errorf(NC_ERR_PARSE, "npy header: unexpected key '%s'", key);
        }
        if (st != NC_OK)
            return st;
        if (!accept(&c, ',')) {
            if (accept(&c, '}'))
                break;
            return nc_errorf(NC_ERR_PARSE, "npy header: expected ',' or '}'");
        }
    }
    skip_ws(&c);
    if (c.s != c.end)
        return nc_errorf(NC_ERR_PARSE, "npy header: text after the dict");
    if (!have_descr || !have_order || !have_shape)
        return nc_errorf(NC_ERR_PARSE, "npy header lacks '%s'",
                         !have_descr ? "descr" : !have_order ? "fortran_order" : "shape");
    nc_status st = parse_descr(descr, &h->fmt);
    if (st != NC_OK)
        return st;
    /* With at most one dimension above 1 both orders are the same bytes. */
    int big_dims = 0;
    for (int i = 0; i < h->ndim; i++)
        big_dims += h->shape[i] > 1;
    if (fortran && big_dims > 1)
        return nc_errorf(NC_ERR_UNSUPPORTED, "npy array is stored in Fortran order; save it with "
                                             "np.save(path, np.ascontiguousarray(a))");
    return NC_OK;
}

nc_status nc_npy_read_header(nc_data_reader *r, const unsigned char magic[4], nc_data_header *h)
{
    unsigned char rest[4];
    nc_status st = nc_reader_read(r, rest, sizeof rest, "npy header");
    if (st != NC_OK)
        return st;
    if (memcmp(rest, NPY_MAGIC + 4, 2) != 0 || memcmp(magic, NPY_MAGIC, 4) != 0)
        return nc_errorf(NC_ERR_PARSE, "bad npy magic (expected \\x93NUMPY)");
    int major = rest[2];
    if (major < 1 || major > 3)
        return nc_errorf(NC_ERR_UNSUPPORTED, "npy format version %d.%d (neuroc reads 1.0-3.0)",
                         major, rest[3]);
    unsigned char lb[4] = {0, 0, 0, 0};
    size_t nlen = major == 1 ? 2 : 4;
    if ((st = nc_reader_read(r, lb, nlen, "npy header length")) != NC_OK)
        return st;
    uint32_t hlen = (uint32_t)lb[0] | (uint32_t)lb[1] << 8 | (uint32_t)lb[2] << 16 |
                    (uint32_t)lb[3] << 24;
    if (hlen > NPY_MAX_HEADER)
        return nc_errorf(NC_ERR_PARSE, "npy header length %u is implausible (over %d bytes)",
                         (unsigned)hlen, NPY_MAX_HEADER);
    if (!r->compressed && (int64_t)hlen > r->file_size - r->pos)
        return nc_errorf(NC_ERR_PARSE, "truncated npy header: it claims %u bytes, the file has "
                                       "%lld left", (unsigned)hlen,
                         (long long)(r->file_size - r->pos));
    char *text = nc_malloc(hlen + 1u);
    if (!text)
        return nc_errorf(NC_ERR_NOMEM, "out of memory reading an npy header");
    st = nc_reader_read(r, text, hlen, "npy header");
    if (st == NC_OK) {
        text[hlen] = '\0';
        st = parse_header_dict(text, hlen, h);
    }
    nc_free(text);
    return st;
}

/* ---------------------------------------------------------------- writing */

/* Header padded with spaces and a final newline so that the data starts on a
 * 64-byte boundary, as numpy writes it. Returns the total prefix length. */
static size_t npy_header(const nc_tensor *t, char *buf, size_t cap)
{
    const char *descr = t->dtype == NC_DTYPE_F32 ? "<f4" : t->dtype == NC_DTYPE_U8 ? "|u1" : "<i8";
    char shape[NC_MAX_DIMS * 24 + 8];
    size_t off = 0;
    off += (size_t)snprintf(shape + off, sizeof shape - off, "(");
    for (int i = 0; i < t->ndim; i++)
        off += (size_t)snprintf(shape + off, sizeof shape - off, i ? ", %lld" : "%lld",
                                (long long)t->shape[i]);
    snprintf(shape + off, sizeof shape - off, t->ndim == 1 ? ",)" : ")");
    char dict[sizeof shape + 96];
    int dl = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                      descr, shape);
    size_t total = 10 + (size_t)dl + 1;
    total = (total + 63) / 64 * 64;
    if (total > cap || total - 10 > 65535)
        return 0;
    memcpy(buf, NPY_MAGIC, 6);
    buf[6] = 1;
    buf[7] = 0;
    size_t hlen = total - 10;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)dl);
    memset(buf + 10 + dl, ' ', hlen - (size_t)dl - 1);
    buf[total - 1] = '\n';
    return total;
}

/* Element data in little-endian order, encoded explicitly so that the file is
 * the same on any host. */
static int write_data(int fd, const nc_tensor *t)
{
    size_t es = nc_dtype_size(t->dtype);
    if (t->numel == 0)
        return 1;
    if (es == 1)
        return nc_write_all(fd, t->data, (size_t)t->numel);
    unsigned char chunk[1 << 16];
    size_t per = sizeof chunk / es, done = 0, n = (size_t)t->numel;
    const unsigned char *src = t->data;
    while (done < n) {
        size_t k = n - done < per ? n - done : per;
        for (size_t i = 0; i < k; i++) {
            uint64_t v = 0;
            if (es == 4) {
                uint32_t u;
                memcpy(&u, src + (done + i) * 4, 4);
                v = u;
            } else {
                memcpy(&v, src + (done + i) * 8, 8);
            }
            for (size_t b = 0; b < es; b++)
                chunk[i * es + b] = (unsigned char)(v >> (8 * b));
        }
        if (!nc_write_all(fd, chunk, k * es))
            return 0;
        done += k;
    }
    return 1;
}

nc_status nc_npy_write(int fd, const nc_tensor *t, const char *name)
{
    if (fd < 0 || !t || !name)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_npy_write: bad argument");
    if (nc_dtype_size(t->dtype) == 0 || t->ndim < 0 || t->ndim > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_npy_write: tensor of unknown dtype %d", (int)t->dtype);
    char head[1024];
    size_t hl = npy_header(t, head, sizeof head);
    if (!hl)
        return nc_errorf(NC_ERR_INTERNAL, "%s: npy header too long", name);
    if (!nc_write_all(fd, head, hl) || !write_data(fd, t))
        return nc_errorf(NC_ERR_IO, "%s: cannot write: %s", name, strerror(errno));
    return NC_OK;
}

nc_status nc_npy_save(const char *path, const nc_tensor *t)
{
    if (!path || !t)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_npy_save: NULL argument");
    nc_atomic_file af;
    nc_status st = nc_atomic_open(path, &af);
    if (st != NC_OK)
        return st;
    if ((st = nc_npy_write(af.fd, t, path)) != NC_OK) {
        nc_atomic_abort(&af);
        return st;
    }
    return nc_atomic_commit(&af, path);
}
