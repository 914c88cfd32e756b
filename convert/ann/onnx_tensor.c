#define _XOPEN_SOURCE 700
#include "onnx_tensor.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "pb_nesting.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/input_file.h"

/* raw_data is little-endian by definition; decoding it with memcpy is only
 * right on a little-endian host. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "neuroc's ONNX reader assumes a little-endian host"
#endif

#define NC_DEFAULT_MAX_ELEMS (INT64_C(1) << 31)

static void *pb_alloc(void *ud, size_t n)
{
    void *p = nc_malloc(n ? n : 1);
    if (!p && ud)
        *(int *)ud = 1;
    return p;
}

static void pb_free(void *ud, void *p)
{
    (void)ud;
    nc_free(p);
}

ProtobufCAllocator nc_onnx_pb_allocator = {pb_alloc, pb_free, NULL};

void nc_onnx_pb_allocator_init(ProtobufCAllocator *a, int *failed)
{
    *failed = 0;
    *a = nc_onnx_pb_allocator;
    a->allocator_data = failed;
}

int nc_onnx_map_dtype(int32_t t, nc_dtype *out)
{
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        *out = NC_DTYPE_F32;
        return 1;
    /* Integers in supported models are shapes, axes and indices: one wide
     * type keeps every op's integer path single. */
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
        *out = NC_DTYPE_I64;
        return 1;
    }
    return 0;
}

const char *nc_onnx_dtype_name(int32_t t)
{
    static const char *names[] = {"UNDEFINED", "FLOAT",  "UINT8",  "INT8",      "UINT16",
                                  "INT16",     "INT32",  "INT64",  "STRING",    "BOOL",
                                  "FLOAT16",   "DOUBLE", "UINT32", "UINT64",    "COMPLEX64",
                                  "COMPLEX128", "BFLOAT16"};
    if (t >= 0 && (size_t)t < sizeof names / sizeof names[0])
        return names[t];
    return "an unknown data type";
}

/* Bytes per element in raw_data / external data. */
static size_t src_elem_size(int32_t t)
{
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: return 8;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return 4;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return 2;
    default: return 1;
    }
}

/* Little-endian bytes of ONNX type `t` → the tensor's elements. */
static void convert_raw(const uint8_t *src, int32_t t, nc_tensor *dst)
{
    int64_t n = dst->numel;
    if (t == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || t == ONNX__TENSOR_PROTO__DATA_TYPE__INT64) {
        if (n)
            memcpy(dst->data, src, (size_t)n * src_elem_size(t));
        return;
    }
    float *f = nc_f32(dst);
    int64_t *q = nc_i64(dst);
    for (int64_t i = 0; i < n; i++) {
        switch (t) {
        case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: {
            double d;
            memcpy(&d, src + 8 * i, 8);
            f[i] = (float)d;
            break;
        }
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: {
            int32_t v;
            memcpy(&v, src + 4 * i, 4);
            q[i] = v;
            break;
        }
        case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: {
            uint32_t v;
            memcpy(&v, src + 4 * i, 4);
            q[i] = v;
            break;
        }
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: {
            int16_t v;
            memcpy(&v, src + 2 * i, 2);
            q[i] = v;
            break;
        }
        case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: {
            uint16_t v;
            memcpy(&v, src + 2 * i, 2);
            q[i] = v;
            break;
        }
        case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: q[i] = (int8_t)src[i]; break;
        case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: q[i] = src[i] != 0; break;
        default: q[i] = src[i]; break; /* UINT8 */
        }
    }
}

/* Typed fields: returns the count the field holds, copying when it matches. */
static size_t convert_typed(const Onnx__TensorProto *tp, nc_tensor *dst, int copy)
{
    int32_t t = tp->data_type;
    int64_t n = dst ? dst->numel : 0;
    switch (t) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT:
        if (copy && n)
            memcpy(dst->data, tp->float_data, (size_t)n * sizeof(float));
        return tp->n_float_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE:
        for (int64_t i = 0; copy && i < n; i++)
            nc_f32(dst)[i] = (float)tp->double_data[i];
        return tp->n_double_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
        if (copy && n)
            memcpy(dst->data, tp->int64_data, (size_t)n * sizeof(int64_t));
        return tp->n_int64_data;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32:
        for (int64_t i = 0; copy && i < n; i++)
            nc_i64(dst)[i] = (int64_t)(uint32_t)tp->uint64_data[i];
        return tp->n_uint64_data;
    default: /* INT32, INT16, INT8, UINT16, UINT8, BOOL all live in int32_data */
        for (int64_t i = 0; copy && i < n; i++)
            nc_i64(dst)[i] = t == ONNX__TENSOR_PROTO__DATA_TYPE__BOOL ? tp->int32_data[i] != 0
                                                                       : tp->int32_data[i];
        return tp->n_int32_data;
    }
}

nc_status nc_onnx_read_file(const char *path, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    FILE *f;
    int64_t len;
    nc_status st = nc_input_fopen(path, 0, &f, &len);
    if (st != NC_OK)
        return st;
    uint8_t *buf = NULL;
    if ((uint64_t)len >= SIZE_MAX || (int64_t)len > nc_limits_now().max_model_bytes) {
        st = nc_errorf(NC_ERR_LIMIT, "%s: the file's %lld bytes exceed the model size limit of %lld "
                       "bytes (nc_limits.max_model_bytes)", path, (long long)len,
                       (long long)nc_limits_now().max_model_bytes);
        goto done;
    }
    buf = nc_malloc((size_t)len + 1);
    if (!buf) {
        st = nc_errorf(NC_ERR_NOMEM, "%s: out of memory reading %lld bytes", path, (long long)len);
        goto done;
    }
    if (len && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        st = ferror(f) ? nc_errorf(NC_ERR_IO, "%s: read error: %s", path, strerror(errno))
                       : nc_errorf(NC_ERR_IO, "%s: the file shrank while it was read", path);
        goto done;
    }
    *data = buf;
    *size = (size_t)len;
    buf = NULL;
done:
    nc_free(buf);
    fclose(f);
    return st;
}

/* Parses a non-negative decimal integer from an external_data value. */
static int parse_u64(const char *s, int64_t *out)
{
    if (!s || !*s)
        return 0;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < 0)
        return 0;
    *out = v;
    return 1;
}

/* Opens the external data file `path` (data_dir/location) only if, with
 * every symbolic link resolved, it lies inside data_dir: a link in the
 * model's folder must not make neuroc read /etc/passwd into a weight. */
static nc_status open_inside(const char *data_dir, const char *path, const char *name, FILE **f,
                             int64_t *size)
{
    *f = NULL;
    char *rdir = realpath(data_dir, NULL), *rfile = rdir ? realpath(path, NULL) : NULL;
    nc_status st;
    if (!rdir || !rfile) {
        st = nc_errorf(NC_ERR_IO, "tensor '%s': cannot open external data file '%s': %s", name,
                       rdir ? path : data_dir, strerror(errno));
        goto done;
    }
    size_t n = strlen(rdir);
    int inside = strncmp(rfile, rdir, n) == 0 && (rfile[n] == '/' || (n == 1 && rdir[0] == '/'));
    if (!inside) {
        st = nc_errorf(NC_ERR_UNSUPPORTED,
                       "tensor '%s': external data file '%s' is '%s', outside the model's folder '%s' "
                       "(through a symbolic link)", name, path, rfile, rdir);
        goto done;
    }
    /* the resolved path has no links left: one put there since is not followed */
    if ((st = nc_input_fopen(rfile, NC_INPUT_NOFOLLOW, f, size)) != NC_OK)
        nc_error_prefix("tensor '%s': external data", name);
done:
    free(rdir);
    free(rfile);
    return st;
}

/* Reads `bytes` bytes of tp's external data into a new buffer. */
static nc_status read_external(const Onnx__TensorProto *tp, const char *name,
                               const nc_onnx_tensor_ctx *ctx, int64_t bytes, uint8_t **data)
{
    *data = NULL;
    const char *loc = NULL;
    int64_t offset = 0, length = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key)
            continue;
        if (strcmp(e->key, "location") == 0)
            loc = e->value;
        else if (strcmp(e->key, "offset") == 0 && !parse_u64(e->value, &offset))
            return nc_errorf(NC_ERR_PARSE, "tensor '%s': bad external-data offset '%s'", name,
                             e->value ? e->value : "");
        else if (strcmp(e->key, "length") == 0 && !parse_u64(e->value, &length))
            return nc_errorf(NC_ERR_PARSE, "tensor '%s': bad external-data length '%s'", name,
                             e->value ? e->value : "");
    }
    if (!loc || !*loc)
        return nc_errorf(NC_ERR_PARSE, "tensor '%s': external data without a location", name);
    /* A model file must not make neuroc read arbitrary files. */
    if (loc[0] == '/' || loc[0] == '\\' || strstr(loc, ".."))
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "tensor '%s': external-data location '%s' leaves the model's folder", name,
                         loc);
    if (!ctx->data_dir)
        return nc_errorf(NC_ERR_IO,
                         "tensor '%s': data is in external file '%s', but the model was loaded "
                         "from memory without external_data_dir",
                         name, loc);
    if (length >= 0 && length != bytes)
        return nc_errorf(NC_ERR_PARSE,
                         "tensor '%s': external-data length %lld does not match the %lld bytes its "
                         "shape needs",
                         name, (long long)length, (long long)bytes);
    size_t plen = strlen(ctx->data_dir) + strlen(loc) + 2;
    char *path = nc_malloc(plen);
    if (!path)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    snprintf(path, plen, "%s/%s", ctx->data_dir, loc);
    uint8_t *buf = NULL;
    FILE *f;
    int64_t flen;
    nc_status st = open_inside(ctx->data_dir, path, name, &f, &flen);
    if (st != NC_OK)
        goto done;
    if (offset > flen || bytes > flen - offset) {
        st = nc_errorf(NC_ERR_PARSE,
                       "tensor '%s': external data file '%s' is too short (needs %lld bytes at "
                       "offset %lld)",
                       name, path, (long long)bytes, (long long)offset);
        goto done;
    }
    if ((uint64_t)bytes >= SIZE_MAX || !(buf = nc_malloc((size_t)bytes + 1))) {
        st = nc_errorf(NC_ERR_NOMEM, "tensor '%s': out of memory for %lld bytes", name,
                       (long long)bytes);
        goto done;
    }
    if (fseeko(f, (off_t)offset, SEEK_SET) != 0 ||
        (bytes && fread(buf, 1, (size_t)bytes, f) != (size_t)bytes)) {
        st = nc_errorf(NC_ERR_PARSE,
                       "tensor '%s': external data file '%s' is too short (needs %lld bytes at "
                       "offset %lld)",
                       name, path, (long long)bytes, (long long)offset);
        goto done;
    }
    *data = buf;
    buf = NULL;
done:
    if (f)
        fclose(f);
    nc_free(buf);
    nc_free(path);
    return st;
}

nc_status nc_onnx_tensor_decode(const Onnx__TensorProto *tp, const char *what,
                                nc_onnx_tensor_ctx *ctx, nc_tensor **out)
{
    *out = NULL;
    const char *name = tp->name && *tp->name ? tp->name : (what ? what : "?");
    int64_t max_elems = ctx && ctx->max_elems > 0 ? ctx->max_elems : NC_DEFAULT_MAX_ELEMS;
    int32_t t = tp->has_data_type ? tp->data_type : 0;
    nc_dtype dt;
    if (!nc_onnx_map_dtype(t, &dt))
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "tensor '%s' has data type %s, which neuroc does not support (float, "
                         "double, integer and bool only)",
                         name, nc_onnx_dtype_name(t));
    if (tp->n_dims > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_UNSUPPORTED, "tensor '%s' has %zu dimensions; neuroc supports up to %d",
                         name, tp->n_dims, NC_MAX_DIMS);
    int ndim = (int)tp->n_dims;
    int64_t numel;
    if (!nc_numel_checked(ndim, tp->dims, &numel)) {
        char b[200];
        return nc_errorf(NC_ERR_PARSE, "tensor '%s' declares shape %s, negative or overflowing", name,
                         nc_shape_str(ndim, tp->dims, b, sizeof b));
    }
    if (numel > max_elems)
        return nc_errorf(NC_ERR_LIMIT, "tensor '%s' declares %lld elements, more than the limit %lld",
                         name, (long long)numel, (long long)max_elems);
    int64_t src_bytes;
    if (!nc_mul_i64(numel, (int64_t)src_elem_size(t), &src_bytes))
        return nc_errorf(NC_ERR_LIMIT, "tensor '%s' is too large", name);
    char label[160];
    snprintf(label, sizeof label, "tensor '%.120s'", name);
    int64_t bytes;
    nc_status lst = nc_check_tensor_size(label, ndim, tp->dims, nc_dtype_size(dt), &bytes);
    if (lst != NC_OK)
        return lst;
    if (ctx && ctx->max_model_bytes > 0) {
        ctx->total_bytes += bytes;
        if (ctx->total_bytes > ctx->max_model_bytes)
            return nc_errorf(NC_ERR_LIMIT, "tensor '%s': the model's tensors exceed the model size limit "
                             "(nc_limits.max_model_bytes)", name);
    }
    /* The data must be there before the tensor is allocated: a few bytes of
     * file may not make us allocate what their shape claims. */
    char b[200];
    if (!(tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)) {
        uint64_t have = tp->has_raw_data ? tp->raw_data.len : convert_typed(tp, NULL, 0);
        uint64_t need = tp->has_raw_data ? (uint64_t)src_bytes : (uint64_t)numel;
        if (have != need)
            return nc_errorf(NC_ERR_PARSE,
                             "tensor '%s' declares shape %s (%lld elements, %lld bytes of %s) but "
                             "holds %llu %s of data",
                             name, nc_shape_str(ndim, tp->dims, b, sizeof b), (long long)numel,
                             (long long)src_bytes, nc_onnx_dtype_name(t), (unsigned long long)have,
                             tp->has_raw_data ? "bytes" : "elements");
    }

    const uint8_t *raw = NULL;
    uint8_t *ext = NULL;
    int external = tp->has_data_location &&
                   tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    if (external) {
        nc_status st = read_external(tp, name, ctx, src_bytes, &ext);
        if (st != NC_OK)
            return st;
        raw = ext;
    } else if (tp->has_raw_data) {
        raw = tp->raw_data.data;
    }
    nc_tensor *x = nc_tensor_new(dt, ndim, tp->dims);
    if (!x) {
        nc_free(ext);
        nc_error_prefix("tensor '%s'", name);
        return NC_ERR_NOMEM;
    }
    if (external || tp->has_raw_data) {
        convert_raw(raw, t, x);
        nc_free(ext);
    } else {
        convert_typed(tp, x, 1);
    }
    *out = x;
    return NC_OK;
}

nc_status nc_onnx_tensor_load_file(const char *path, nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_onnx_tensor_load_file: out is NULL");
    *out = NULL;
    if (!path)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_onnx_tensor_load_file: path is NULL");
    uint8_t *data;
    size_t size;
    nc_status st = nc_onnx_read_file(path, &data, &size);
    if (st != NC_OK)
        return st;
    Onnx__TensorProto *tp = nc_pb_unpack(&onnx__tensor_proto__descriptor, data, size, path,
                                         "a serialized ONNX TensorProto", &st);
    nc_free(data);
    if (!tp)
        return st;
    char *dir = nc_strdup(path);
    if (!dir) {
        onnx__tensor_proto__free_unpacked(tp, &nc_onnx_pb_allocator);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    nc_onnx_tensor_ctx ctx = {.data_dir = slash == dir ? "/" : dir, .max_elems = 0};
    st = nc_onnx_tensor_decode(tp, "tensor", &ctx, out);
    if (st != NC_OK)
        nc_error_prefix("%s", path);
    nc_free(dir);
    onnx__tensor_proto__free_unpacked(tp, &nc_onnx_pb_allocator);
    return st;
}
