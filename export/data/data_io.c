/* nc_data_load: opens a data file, recognises npy or IDX by its first bytes
 * (never by its name), checks every size the header claims against the file
 * before allocating, then decodes the elements into the wanted dtype.
 * "file.h5:/path" names a dataset in an HDF5 file (data_h5.c). */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snn/base/alloc.h"
#include "data_io.h"
#include "snn/base/error.h"
#include "snn/base/finite.h"
#include "snn/base/input_file.h"
#include "snn/base/tensor.h"


nc_status nc_reader_read(nc_data_reader *r, void *buf, size_t n, const char *what)
{
    unsigned char *p = buf;
    size_t left = n;
    while (left) {
        unsigned chunk = left > (1u << 30) ? (1u << 30) : (unsigned)left;
        int got = gzread(r->gz, p, chunk);
        if (got < 0) {
            int zerr = 0;
            const char *msg = gzerror(r->gz, &zerr), *sep = strstr(msg, ">: ");
            if (strncmp(msg, "<fd:", 4) == 0 && sep) /* zlib's name for a stream opened by descriptor */
                msg = sep + 3;
            if (zerr == Z_ERRNO)
                return nc_errorf(NC_ERR_IO, "read error: %s", strerror(errno));
            return nc_errorf(NC_ERR_PARSE, "corrupt gzip data in %s: %s", what, msg);
        }
        r->pos += got;
        if (got == 0)
            return nc_errorf(NC_ERR_PARSE, "truncated file: it ends after %lld bytes, inside the %s",
                             (long long)r->pos, what);
        p += got;
        left -= (size_t)got;
    }
    return NC_OK;
}

static uint64_t load_bits(const unsigned char *p, int size, int big_endian)
{
    uint64_t v = 0;
    for (int b = 0; b < size; b++)
        v |= (uint64_t)p[big_endian ? size - 1 - b : b] << (8 * b);
    return v;
}

static int64_t as_signed(uint64_t v, int size)
{
    if (size < 8 && (v >> (8 * size - 1)) & 1)
        v |= ~(uint64_t)0 << (8 * size);
    int64_t s;
    memcpy(&s, &v, sizeof s);
    return s;
}

static double as_double(uint64_t v, int size)
{
    if (size == 4) {
        uint32_t u = (uint32_t)v;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &v, sizeof d);
    return d;
}

/* Decodes n elements of format f at src into dst[off..off+n) of dtype `to`. */
static void decode(const nc_elem_format *f, const unsigned char *src, size_t n, nc_dtype to,
                   void *dst, size_t off)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t bits = load_bits(src + i * (size_t)f->size, f->size, f->big_endian);
        if (to == NC_DTYPE_U8) {
            ((uint8_t *)dst)[off + i] = f->kind == NC_ELEM_BOOL ? bits != 0 : (uint8_t)bits;
        } else if (to == NC_DTYPE_I64) {
            int64_t v = f->kind == NC_ELEM_INT ? as_signed(bits, f->size)
                        : f->kind == NC_ELEM_BOOL ? (bits != 0)
                                                  : (int64_t)bits;
            ((int64_t *)dst)[off + i] = v;
        } else {
            float v;
            switch (f->kind) {
            case NC_ELEM_FLOAT: v = (float)as_double(bits, f->size); break;
            case NC_ELEM_INT: v = (float)as_signed(bits, f->size); break;
            case NC_ELEM_BOOL: v = bits != 0; break;
            default: v = (float)bits; break;
            }
            ((float *)dst)[off + i] = v;
        }
    }
}

nc_status nc_data_pick_dtype(const nc_elem_format *f, nc_dtype want, nc_dtype *out)
{
    int is_u8 = (f->kind == NC_ELEM_UINT || f->kind == NC_ELEM_BOOL) && f->size == 1;
    switch ((int)want) {
    case 0:
        *out = f->kind == NC_ELEM_FLOAT ? NC_DTYPE_F32 : is_u8 ? NC_DTYPE_U8 : NC_DTYPE_I64;
        return NC_OK;
    case NC_DTYPE_F32:
        *out = NC_DTYPE_F32;
        return NC_OK;
    case NC_DTYPE_I64:
        if (f->kind == NC_ELEM_FLOAT)
            return nc_errorf(NC_ERR_UNSUPPORTED, "holds floating-point data (%s); integer data "
                                                 "(e.g. class labels) was expected", f->name);
        *out = NC_DTYPE_I64;
        return NC_OK;
    case NC_DTYPE_U8:
        if (!is_u8)
            return nc_errorf(NC_ERR_UNSUPPORTED, "holds %s data; uint8 was expected", f->name);
        *out = NC_DTYPE_U8;
        return NC_OK;
    }
    return nc_errorf(NC_ERR_INVALID_ARG, "nc_data_load: unknown dtype %d requested", (int)want);
}

static nc_status read_body(nc_data_reader *r, const nc_data_header *h, nc_dtype want,
                           nc_tensor **out)
{
    char sb[200];
    nc_shape_str(h->ndim, h->shape, sb, sizeof sb);
    int64_t numel, bytes;
    if (!nc_numel_checked(h->ndim, h->shape, &numel) ||
        !nc_mul_i64(numel, h->fmt.size, &bytes))
        return nc_errorf(NC_ERR_PARSE, "header declares shape %s, whose size overflows", sb);
    if (!r->compressed && bytes > r->file_size - r->pos)
        return nc_errorf(NC_ERR_PARSE,
                         "truncated data: header declares shape %s of %s (%lld bytes) but only "
                         "%lld bytes follow", sb, h->fmt.name, (long long)bytes,
                         (long long)(r->file_size - r->pos));
    if (!r->compressed && bytes < r->file_size - r->pos)
        return nc_errorf(NC_ERR_PARSE,
                         "header declares shape %s of %s (%lld bytes) but %lld bytes follow; "
                         "the header or the file is wrong", sb, h->fmt.name, (long long)bytes,
                         (long long)(r->file_size - r->pos));
    if (r->compressed && bytes / NC_DEFLATE_MAX_RATIO > r->file_size)
        return nc_errorf(NC_ERR_PARSE,
                         "header declares shape %s of %s (%lld bytes), more than a %lld-byte gzip "
                         "file can hold", sb, h->fmt.name, (long long)bytes, (long long)r->file_size);
    nc_dtype to = NC_DTYPE_F32;
    nc_status st = nc_data_pick_dtype(&h->fmt, want, &to);
    if (st != NC_OK)
        return st;
    if ((st = nc_check_tensor_size("the header", h->ndim, h->shape, nc_dtype_size(to), NULL)) != NC_OK)
        return st;
    nc_tensor *t = nc_tensor_new(to, h->ndim, h->shape);
    if (!t)
        return NC_ERR_NOMEM;
    unsigned char chunk[1 << 16];
    size_t per = sizeof chunk / (size_t)h->fmt.size;
    for (size_t done = 0; done < (size_t)numel && st == NC_OK;) {
        size_t k = (size_t)numel - done < per ? (size_t)numel - done : per;
        st = nc_reader_read(r, chunk, k * (size_t)h->fmt.size, "data");
        if (st == NC_OK)
            decode(&h->fmt, chunk, k, to, t->data, done);
        done += k;
    }
    if (st == NC_ERR_PARSE)
        nc_error_prefix("header declares shape %s of %s (%lld bytes)", sb, h->fmt.name,
                        (long long)bytes);
    if (st == NC_OK && r->compressed) {
        unsigned char extra;
        int got = gzread(r->gz, &extra, 1), zerr = Z_OK;
        gzerror(r->gz, &zerr);
        if (got != 0)
            st = got < 0 ? nc_errorf(NC_ERR_PARSE, "corrupt gzip data after the array")
                         : nc_errorf(NC_ERR_PARSE, "header declares shape %s of %s but more data "
                                                   "follows; the header or the file is wrong",
                                     sb, h->fmt.name);
        else if (zerr != Z_OK) /* zlib reads the CRC-32 and length trailer only at the end */
            st = nc_errorf(NC_ERR_PARSE, "the gzip stream ends without its CRC-32 and length trailer "
                                         "(truncated): the data cannot be verified");
    }
    if (st != NC_OK) {
        nc_tensor_free(t);
        return st;
    }
    *out = t;
    return NC_OK;
}

static nc_status load(const char *path, nc_dtype want, nc_tensor **out)
{
    int fd;
    int64_t file_size;
    nc_status ost = nc_input_open(path, 0, &fd, &file_size);
    if (ost != NC_OK)
        return ost;
    nc_data_reader r = {0};
    r.file_size = file_size;
    r.gz = gzdopen(fd, "rb");
    if (!r.gz) {
        close(fd);
        return nc_errorf(NC_ERR_NOMEM, "%s: out of memory opening the file", path);
    }
    unsigned char magic[4];
    nc_status st = nc_reader_read(&r, magic, sizeof magic, "file signature");
    r.compressed = !gzdirect(r.gz);
    nc_data_header h;
    memset(&h, 0, sizeof h);
    int zerr = Z_OK;
    if (st == NC_ERR_PARSE)
        gzerror(r.gz, &zerr);
    if (st == NC_ERR_PARSE && (zerr == Z_OK || zerr == Z_BUF_ERROR)) /* else: corrupt gzip data, said so */
        st = nc_errorf(NC_ERR_PARSE, "not a .npy or IDX file (shorter than 4 bytes)");
    else if (st != NC_OK)
        ;
    else if (nc_npy_is_magic(magic))
        st = nc_npy_read_header(&r, magic, &h);
    else if (nc_idx_is_magic(magic))
        st = nc_idx_read_header(&r, magic, &h);
    else if (nc_h5_is_magic(magic))
        st = nc_data_h5_hint(path);
    else
        st = nc_errorf(NC_ERR_PARSE, "not a .npy or IDX file (it starts with bytes %02x %02x %02x "
                                     "%02x)", magic[0], magic[1], magic[2], magic[3]);
    if (st == NC_OK)
        st = read_body(&r, &h, want, out);
    gzclose(r.gz);
    if (st != NC_OK)
        nc_error_prefix("%s", path);
    return st;
}

/* Splits "file.h5:/a/b" at a ':' followed by '/': the rightmost split whose
 * file part is an existing file, else the rightmost split (so the error
 * names the missing file). Returns the offset of the ':' or -1 if the path
 * has no ":/" at all. */
static ptrdiff_t h5_split(const char *path)
{
    ptrdiff_t last = -1;
    for (const char *p = path + strlen(path); p-- > path;) {
        if (p[0] != ':' || p[1] != '/')
            continue;
        ptrdiff_t at = p - path;
        if (last < 0)
            last = at;
        char *file = nc_malloc((size_t)at + 1);
        if (!file)
            return last;
        memcpy(file, path, (size_t)at);
        file[at] = 0;
        struct stat sb;
        int found = stat(file, &sb) == 0 && S_ISREG(sb.st_mode);
        nc_free(file);
        if (found)
            return at;
    }
    return last;
}

static nc_status load_h5_spec(const char *path, ptrdiff_t at, nc_dtype want, nc_tensor **out)
{
    char *file = nc_malloc((size_t)at + 1);
    if (!file)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    memcpy(file, path, (size_t)at);
    file[at] = 0;
    nc_status st = nc_input_check(file, NULL);
    if (st == NC_OK && (st = nc_data_load_h5(file, path + at + 1, want, out)) != NC_OK)
        nc_error_prefix("%s", path);
    nc_free(file);
    return st;
}

nc_status nc_data_load(const char *path, nc_dtype want, nc_tensor **out)
{
    if (out)
        *out = NULL;
    if (!path || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_data_load: NULL argument");
    if (want != 0 && want != NC_DTYPE_F32 && want != NC_DTYPE_U8 && want != NC_DTYPE_I64)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_data_load: unknown dtype %d requested", (int)want);
    /* A path that exists is a file whatever ':' it holds. */
    struct stat sb;
    ptrdiff_t at = stat(path, &sb) == 0 ? -1 : h5_split(path);
    nc_status st = at >= 0 ? load_h5_spec(path, at, want, out) : load(path, want, out);
    /* inputs, calibration and training samples: NaN or ±inf ran silently */
    if (st == NC_OK && (st = nc_check_finite(*out, path, NC_FINITE_SAMPLES)) != NC_OK) {
        nc_tensor_free(*out);
        *out = NULL;
    }
    return st;
}
