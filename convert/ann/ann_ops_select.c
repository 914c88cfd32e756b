/* Broadcasting selections: Equal, Where, Expand and ConstantOfShape, which
 * PyTorch exports around `expand` (a ViT's class token: Expand(token,
 * Where(Equal(shape, -1), ones, shape))) and masks. Booleans are int64 0/1,
 * as every integer in neuroc's graphs (onnx_tensor.c). Integer outputs are
 * computed even in a shape-only pass; float ones only get their shape. */
#include "ann_ops.h"

#include <string.h>

#include "ann_broadcast.h"
#include "snn/base/error.h"

static nc_status new_out(nc_dtype dt, int ndim, const int64_t *shape, nc_tensor **o)
{
    *o = nc_tensor_new(dt, ndim, shape);
    return *o ? NC_OK : nc_tensor_new_failure(dt, ndim, shape);
}

static int skip_data(const nc_exec_ctx *ctx, const nc_tensor *t)
{
    return ctx && ctx->shape_only && t->dtype == NC_DTYPE_F32;
}

static nc_status need_inputs(const char *op, const nc_tensor *const *in, int n_in, int need)
{
    for (int i = 0; i < need; i++)
        if (i >= n_in || !in[i])
            return nc_errorf(NC_ERR_MODEL, "%s: input %d is missing", op, i);
    return NC_OK;
}

static nc_status numeric(const char *op, const nc_tensor *t)
{
    if (t->dtype == NC_DTYPE_F32 || t->dtype == NC_DTYPE_I64)
        return NC_OK;
    return nc_errorf(NC_ERR_UNSUPPORTED, "%s: input of type %s is not supported (float32 or an integer type)", op,
                     nc_dtype_name(t->dtype));
}

/* Element strides of an input of shape `shape` (nd dims) broadcast to the
 * output's `ond` dims: right-aligned, 0 where the input's dim is 1. */
static void bcast_strides(int nd, const int64_t *shape, int ond, const int64_t *oshape, int64_t *st)
{
    int64_t s = 1;
    for (int d = ond - 1; d >= 0; d--) {
        int i = d - (ond - nd);
        int64_t dim = i >= 0 ? shape[i] : 1;
        st[d] = dim == oshape[d] && dim != 1 ? s : 0;
        s *= dim;
    }
}

/* The offset in an input with strides st of output element e (C order). */
static int64_t bcast_offset(int64_t e, int ond, const int64_t *oshape, const int64_t *st)
{
    int64_t off = 0;
    for (int d = ond - 1; d >= 0; d--) {
        off += e % oshape[d] * st[d];
        e /= oshape[d];
    }
    return off;
}

static nc_status bcast_error(const char *op, int k, const nc_tensor *const *t)
{
    char s[3][160];
    for (int i = 0; i < k; i++)
        nc_shape_str(t[i]->ndim, t[i]->shape, s[i], sizeof s[i]);
    return nc_errorf(NC_ERR_SHAPE, "%s: shapes %s, %s%s%s cannot be broadcast together", op, s[0], s[1],
                     k > 2 ? ", " : "", k > 2 ? s[2] : "");
}

nc_status nc_op_equal(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out,
                      const nc_exec_ctx *ctx)
{
    (void)n, (void)n_out, (void)ctx;
    nc_status st = need_inputs("Equal", in, n_in, 2);
    if (st != NC_OK || (st = numeric("Equal", in[0])) != NC_OK || (st = numeric("Equal", in[1])) != NC_OK)
        return st;
    if (in[0]->dtype != in[1]->dtype)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Equal of %s and %s: mixed input types are not supported",
                         nc_dtype_name(in[0]->dtype), nc_dtype_name(in[1]->dtype));
    nc_bcast bc;
    if (!nc_bcast_init(&bc, in[0]->ndim, in[0]->shape, in[1]->ndim, in[1]->shape))
        return bcast_error("Equal", 2, in);
    nc_tensor *o;
    if ((st = new_out(NC_DTYPE_I64, bc.ndim, bc.shape, &o)) != NC_OK)
        return st;
    int f = in[0]->dtype == NC_DTYPE_F32;
    /* a float comparison in a shape-only pass has no data to compare: all unequal */
    int known = !(f && ctx && ctx->shape_only);
    for (int64_t i = 0; i < o->numel; i++, nc_bcast_next(&bc))
        nc_i64(o)[i] = known && (f ? nc_f32(in[0])[bc.oa] == nc_f32(in[1])[bc.ob]
                                   : nc_i64(in[0])[bc.oa] == nc_i64(in[1])[bc.ob]);
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_where(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out,
                      const nc_exec_ctx *ctx)
{
    (void)n, (void)n_out;
    nc_status st = need_inputs("Where", in, n_in, 3);
    if (st != NC_OK || (st = numeric("Where", in[1])) != NC_OK || (st = numeric("Where", in[2])) != NC_OK)
        return st;
    if (in[0]->dtype != NC_DTYPE_I64)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Where: the condition has type %s, not bool",
                         nc_dtype_name(in[0]->dtype));
    if (in[1]->dtype != in[2]->dtype)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Where of %s and %s: mixed input types are not supported",
                         nc_dtype_name(in[1]->dtype), nc_dtype_name(in[2]->dtype));
    int64_t s[3][NC_MAX_DIMS];
    nc_bcast cx, all; /* numpy's rule over three shapes: (cond with X) with Y */
    if (!nc_bcast_init(&cx, in[0]->ndim, in[0]->shape, in[1]->ndim, in[1]->shape) ||
        !nc_bcast_init(&all, cx.ndim, cx.shape, in[2]->ndim, in[2]->shape))
        return bcast_error("Where", 3, in);
    int ond = all.ndim;
    const int64_t *oshape = all.shape;
    nc_tensor *o;
    if ((st = new_out(in[1]->dtype, ond, oshape, &o)) != NC_OK)
        return st;
    if (skip_data(ctx, o)) {
        out[0] = o;
        return NC_OK;
    }
    for (int i = 0; i < 3; i++)
        bcast_strides(in[i]->ndim, in[i]->shape, ond, oshape, s[i]);
    size_t es = nc_dtype_size(o->dtype);
    for (int64_t e = 0; e < o->numel; e++) {
        int pick = nc_i64(in[0])[bcast_offset(e, ond, oshape, s[0])] ? 1 : 2;
        memcpy((char *)o->data + e * es, (const char *)in[pick]->data + bcast_offset(e, ond, oshape, s[pick]) * es,
               es);
    }
    out[0] = o;
    return NC_OK;
}

/* The int64 shape input of Expand and ConstantOfShape. */
static nc_status shape_input(const char *op, const nc_tensor *t, int *nd, int64_t *shape)
{
    if (t->dtype != NC_DTYPE_I64 || t->ndim > 1)
        return nc_errorf(NC_ERR_MODEL, "%s: the shape must be a 1-D int64 tensor", op);
    if (t->numel > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_LIMIT, "%s: a shape of %lld dimensions, more than the %d supported", op,
                         (long long)t->numel, NC_MAX_DIMS);
    *nd = (int)t->numel;
    for (int d = 0; d < *nd; d++) {
        shape[d] = nc_i64(t)[d];
        if (shape[d] < 0)
            return nc_errorf(NC_ERR_MODEL, "%s: dimension %d of the shape is %lld", op, d, (long long)shape[d]);
    }
    return NC_OK;
}

nc_status nc_op_expand(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out, int n_out,
                       const nc_exec_ctx *ctx)
{
    (void)n, (void)n_out;
    nc_status st = need_inputs("Expand", in, n_in, 2);
    nc_tensor shape_t = {0};
    if (st != NC_OK || (st = numeric("Expand", in[0])) != NC_OK ||
        (st = shape_input("Expand", in[1], &shape_t.ndim, shape_t.shape)) != NC_OK)
        return st;
    nc_bcast bc;
    if (!nc_bcast_init(&bc, in[0]->ndim, in[0]->shape, shape_t.ndim, shape_t.shape))
        return bcast_error("Expand", 2, (const nc_tensor *const[]){in[0], &shape_t});
    nc_tensor *o;
    if ((st = new_out(in[0]->dtype, bc.ndim, bc.shape, &o)) != NC_OK)
        return st;
    if (!skip_data(ctx, o)) {
        size_t es = nc_dtype_size(o->dtype);
        for (int64_t e = 0; e < o->numel; e++, nc_bcast_next(&bc))
            memcpy((char *)o->data + e * es, (const char *)in[0]->data + bc.oa * es, es);
    }
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_constantofshape(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                                int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = need_inputs("ConstantOfShape", in, n_in, 1);
    int nd;
    int64_t shape[NC_MAX_DIMS];
    if (st != NC_OK || (st = shape_input("ConstantOfShape", in[0], &nd, shape)) != NC_OK)
        return st;
    const nc_attr *a = nc_node_attr(n, "value");
    const nc_tensor *v = a && a->type == NC_ATTR_TENSOR ? a->t : NULL;
    if (a && (!v || v->numel != 1 || (v->dtype != NC_DTYPE_F32 && v->dtype != NC_DTYPE_I64)))
        return nc_errorf(NC_ERR_MODEL, "ConstantOfShape: 'value' must be a one-element float or integer tensor");
    nc_tensor *o;
    if ((st = new_out(v ? v->dtype : NC_DTYPE_F32, nd, shape, &o)) != NC_OK)
        return st;
    if (!skip_data(ctx, o)) {
        size_t es = nc_dtype_size(o->dtype);
        for (int64_t e = 0; e < o->numel; e++)
            if (v)
                memcpy((char *)o->data + e * es, v->data, es);
            else
                nc_f32(o)[e] = 0.0f;
    }
    out[0] = o;
    return NC_OK;
}
