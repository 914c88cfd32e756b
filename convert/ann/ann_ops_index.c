/* Index arithmetic: Mod, Range, ScatterND and Not, which PyTorch exports
 * for Swin's shifted-window masks (ids of the regions a window covers,
 * compared to build the attention mask). Booleans are int64 0/1, as every
 * integer in neuroc's graphs. Integer outputs are computed even in a
 * shape-only pass; float ones only get their shape. */
#include "ann_ops.h"

#include <math.h>
#include <string.h>

#include "ann_broadcast.h"
#include "snn/base/error.h"

static nc_status make_out(nc_dtype dt, int ndim, const int64_t *shape, nc_tensor **o)
{
    *o = nc_tensor_new(dt, ndim, shape);
    return *o ? NC_OK : nc_tensor_new_failure(dt, ndim, shape);
}

static nc_status inputs_present(const char *op, const nc_tensor *const *in, int n_in, int need)
{
    for (int i = 0; i < need; i++)
        if (i >= n_in || !in[i])
            return nc_errorf(NC_ERR_MODEL, "%s: input %d is missing", op, i);
    return NC_OK;
}

static int no_data(const nc_exec_ctx *ctx, const nc_tensor *t)
{
    return ctx && ctx->shape_only && t->dtype == NC_DTYPE_F32;
}

/* Mod: integers with the divisor's sign (fmod = 0, Python's %), or C's
 * fmod with the dividend's sign (fmod = 1, the only mode for floats). */
nc_status nc_op_mod(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out,
                    const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = inputs_present("Mod", in, n_in, 2);
    if (st != NC_OK)
        return st;
    int fm = (int)nc_attr_int(n, "fmod", 0);
    nc_dtype dt = in[0]->dtype;
    if (dt != in[1]->dtype || (dt != NC_DTYPE_F32 && dt != NC_DTYPE_I64))
        return nc_errorf(NC_ERR_UNSUPPORTED, "Mod of %s and %s: two float32 or two integer inputs are supported",
                         nc_dtype_name(in[0]->dtype), nc_dtype_name(in[1]->dtype));
    if (dt == NC_DTYPE_F32 && !fm)
        return nc_errorf(NC_ERR_MODEL, "Mod: float inputs need fmod = 1");
    nc_bcast bc;
    if (!nc_bcast_init(&bc, in[0]->ndim, in[0]->shape, in[1]->ndim, in[1]->shape))
        return nc_errorf(NC_ERR_SHAPE, "Mod: the input shapes cannot be broadcast together");
    nc_tensor *o;
    if ((st = make_out(dt, bc.ndim, bc.shape, &o)) != NC_OK)
        return st;
    for (int64_t e = 0; !no_data(ctx, o) && e < o->numel; e++, nc_bcast_next(&bc)) {
        if (dt == NC_DTYPE_F32) {
            nc_f32(o)[e] = fmodf(nc_f32(in[0])[bc.oa], nc_f32(in[1])[bc.ob]);
            continue;
        }
        int64_t a = nc_i64(in[0])[bc.oa], b = nc_i64(in[1])[bc.ob];
        if (ctx && ctx->shape_only && b == 0) { /* an input's data, zeros in a shape-only pass */
            nc_i64(o)[e] = 0;
            continue;
        }
        if (b == 0 || (b == -1 && a == INT64_MIN)) {
            nc_tensor_free(o);
            return nc_errorf(NC_ERR_MODEL, "Mod: integer %lld modulo %lld", (long long)a, (long long)b);
        }
        int64_t r = a % b;
        nc_i64(o)[e] = !fm && r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
    }
    out[0] = o;
    return NC_OK;
}

/* Range(start, limit, delta): start + k·delta for k < max(ceil((limit − start) / delta), 0). */
nc_status nc_op_range(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out,
                      const nc_exec_ctx *ctx)
{
    (void)n, (void)n_out;
    nc_status st = inputs_present("Range", in, n_in, 3);
    if (st != NC_OK)
        return st;
    nc_dtype dt = in[0]->dtype;
    for (int i = 0; i < 3; i++)
        if (in[i]->dtype != dt || in[i]->numel != 1 || (dt != NC_DTYPE_F32 && dt != NC_DTYPE_I64))
            return nc_errorf(NC_ERR_UNSUPPORTED, "Range: start, limit and delta must be scalars of one type, "
                             "float32 or an integer type");
    int f = dt == NC_DTYPE_F32;
    double s = f ? nc_f32(in[0])[0] : (double)nc_i64(in[0])[0], l = f ? nc_f32(in[1])[0] : (double)nc_i64(in[1])[0];
    double d = f ? nc_f32(in[2])[0] : (double)nc_i64(in[2])[0];
    if (ctx && ctx->shape_only && d == 0.0) /* an input's data, zeros in a shape-only pass */
        d = 1.0;
    if (d == 0.0 || !isfinite(s) || !isfinite(l) || !isfinite(d))
        return nc_errorf(NC_ERR_MODEL, "Range: delta is 0, or a bound is not finite");
    double count = ceil((l - s) / d);
    int64_t len = count > 0 ? (int64_t)count : 0;
    if (count > 1e12)
        return nc_errorf(NC_ERR_LIMIT, "Range: %g elements", count);
    nc_tensor *o;
    if ((st = make_out(dt, 1, &len, &o)) != NC_OK)
        return st;
    for (int64_t k = 0; k < len; k++)
        if (f)
            nc_f32(o)[k] = nc_f32(in[0])[0] + (float)k * nc_f32(in[2])[0];
        else
            nc_i64(o)[k] = nc_i64(in[0])[0] + k * nc_i64(in[2])[0];
    out[0] = o;
    return NC_OK;
}

/* ScatterND(data, indices, updates), reduction none, add or mul: a copy of
 * data in which each index tuple (the last axis of indices) addresses a
 * slice that takes (or is combined with) its part of updates. */
nc_status nc_op_scatternd(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out,
                          const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = inputs_present("ScatterND", in, n_in, 3);
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0], *ix = in[1], *up = in[2];
    const char *red = nc_attr_str(n, "reduction", "none");
    int mode = strcmp(red, "none") == 0 ? 0 : strcmp(red, "add") == 0 ? 1 : strcmp(red, "mul") == 0 ? 2 : -1;
    if (mode < 0)
        return nc_errorf(NC_ERR_UNSUPPORTED, "ScatterND: reduction \"%s\" (none, add and mul are supported)", red);
    if (ix->dtype != NC_DTYPE_I64 || ix->ndim < 1 || up->dtype != x->dtype ||
        (x->dtype != NC_DTYPE_F32 && x->dtype != NC_DTYPE_I64))
        return nc_errorf(NC_ERR_UNSUPPORTED, "ScatterND: integer indices and data and updates of one type, "
                         "float32 or an integer type, are supported");
    int k = (int)ix->shape[ix->ndim - 1], q = ix->ndim;
    int ok = k >= 1 && k <= x->ndim && up->ndim == q - 1 + x->ndim - k;
    for (int d = 0; ok && d < q - 1; d++)
        ok = up->shape[d] == ix->shape[d];
    for (int d = k; ok && d < x->ndim; d++)
        ok = up->shape[q - 1 + d - k] == x->shape[d];
    if (!ok)
        return nc_errorf(NC_ERR_SHAPE, "ScatterND: the shapes of data, indices and updates do not fit");
    nc_tensor *o;
    if ((st = make_out(x->dtype, x->ndim, x->shape, &o)) != NC_OK)
        return st;
    if (no_data(ctx, o)) {
        out[0] = o;
        return NC_OK;
    }
    size_t es = nc_dtype_size(x->dtype);
    memcpy(o->data, x->data, (size_t)x->numel * es);
    int64_t slice = 1, n_tuples = ix->numel / k;
    for (int d = k; d < x->ndim; d++)
        slice *= x->shape[d];
    for (int64_t t = 0; t < n_tuples; t++) {
        int64_t off = 0;
        for (int d = 0; d < k; d++) {
            int64_t i = nc_i64(ix)[t * k + d];
            i = i < 0 ? i + x->shape[d] : i;
            if (i < 0 || i >= x->shape[d]) {
                nc_tensor_free(o);
                return nc_errorf(NC_ERR_MODEL, "ScatterND: index %lld out of range for axis %d of size %lld",
                                 (long long)nc_i64(ix)[t * k + d], d, (long long)x->shape[d]);
            }
            off = off * x->shape[d] + i;
        }
        for (int64_t e = 0; e < slice; e++) {
            int64_t di = off * slice + e, ui = t * slice + e;
            if (x->dtype == NC_DTYPE_F32)
                nc_f32(o)[di] = mode == 0 ? nc_f32(up)[ui] : mode == 1 ? nc_f32(o)[di] + nc_f32(up)[ui]
                                                                         : nc_f32(o)[di] * nc_f32(up)[ui];
            else
                nc_i64(o)[di] = mode == 0 ? nc_i64(up)[ui] : mode == 1 ? nc_i64(o)[di] + nc_i64(up)[ui]
                                                                         : nc_i64(o)[di] * nc_i64(up)[ui];
        }
    }
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_not(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out,
                    const nc_exec_ctx *ctx)
{
    (void)n, (void)n_out, (void)ctx;
    nc_status st = inputs_present("Not", in, n_in, 1);
    if (st != NC_OK)
        return st;
    if (in[0]->dtype != NC_DTYPE_I64)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Not: input of type %s, not bool", nc_dtype_name(in[0]->dtype));
    nc_tensor *o;
    if ((st = make_out(NC_DTYPE_I64, in[0]->ndim, in[0]->shape, &o)) != NC_OK)
        return st;
    for (int64_t e = 0; e < o->numel; e++)
        nc_i64(o)[e] = !nc_i64(in[0])[e];
    out[0] = o;
    return NC_OK;
}
