/* Element-wise arithmetic (numpy broadcasting) and activations. */
#include "ann_ops.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "ann_broadcast.h"
#include "snn/base/error.h"

/* A new output tensor, with the status that tells why it could not be made. */
static nc_status new_out(nc_dtype dt, int ndim, const int64_t *shape, nc_tensor **o)
{
    *o = nc_tensor_new(dt, ndim, shape);
    return *o ? NC_OK : nc_tensor_new_failure(dt, ndim, shape);
}

/* Float outputs only need their shape in a shape-only pass. */
static int skip_float(const nc_exec_ctx *ctx, const nc_tensor *t)
{
    return ctx && ctx->shape_only && t->dtype == NC_DTYPE_F32;
}

static nc_status need_input(const nc_tensor *t, const char *what)
{
    if (!t)
        return nc_errorf(NC_ERR_MODEL, "input '%s' is missing", what);
    return NC_OK;
}

static nc_status need_dtype(const nc_tensor *t, int allow_i64)
{
    if (t->dtype == NC_DTYPE_F32 || (allow_i64 && t->dtype == NC_DTYPE_I64))
        return NC_OK;
    return nc_errorf(NC_ERR_UNSUPPORTED, "input of type %s is not supported (expected float32%s)",
                     nc_dtype_name(t->dtype), allow_i64 ? " or int64" : "");
}

/* ------------------------------------------------------------ binary ops */

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV } binop;

static const char *binop_name(binop op)
{
    static const char *names[] = {"Add", "Sub", "Mul", "Div"};
    return names[op];
}

static float f32_apply(binop op, float a, float b)
{
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    }
    return 0.0f;
}

/* Two's-complement wrap-around like numpy, done in unsigned arithmetic
 * because signed overflow is undefined in C. Division truncates toward zero,
 * which is what ONNX's reference (numpy divide, cast back) gives. */
static int i64_apply(binop op, int64_t a, int64_t b, int64_t *r)
{
    switch (op) {
    case OP_ADD: *r = (int64_t)((uint64_t)a + (uint64_t)b); return 1;
    case OP_SUB: *r = (int64_t)((uint64_t)a - (uint64_t)b); return 1;
    case OP_MUL: *r = (int64_t)((uint64_t)a * (uint64_t)b); return 1;
    case OP_DIV:
        if (b == 0) {
            *r = 0;
            return 0;
        }
        *r = (a == INT64_MIN && b == -1) ? INT64_MIN : a / b;
        return 1;
    }
    return 0;
}

static nc_status binary(binop op, const nc_tensor *const *in, int n_in, nc_tensor **out,
                        const nc_exec_ctx *ctx)
{
    if (n_in < 2 || !in[0] || !in[1])
        return nc_errorf(NC_ERR_MODEL, "%s needs two inputs", binop_name(op));
    const nc_tensor *a = in[0], *b = in[1];
    nc_status st;
    if ((st = need_dtype(a, 1)) != NC_OK || (st = need_dtype(b, 1)) != NC_OK)
        return st;
    if (a->dtype != b->dtype)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s of %s and %s: mixed input types are not supported",
                         binop_name(op), nc_dtype_name(a->dtype), nc_dtype_name(b->dtype));
    nc_bcast bc;
    if (!nc_bcast_init(&bc, a->ndim, a->shape, b->ndim, b->shape)) {
        char sa[160], sb[160];
        return nc_errorf(NC_ERR_SHAPE, "%s: shapes %s and %s cannot be broadcast together",
                         binop_name(op), nc_shape_str(a->ndim, a->shape, sa, sizeof sa),
                         nc_shape_str(b->ndim, b->shape, sb, sizeof sb));
    }
    nc_tensor *o;
    if ((st = new_out(a->dtype, bc.ndim, bc.shape, &o)) != NC_OK)
        return st;
    if (skip_float(ctx, o)) {
        out[0] = o;
        return NC_OK;
    }
    if (o->dtype == NC_DTYPE_F32) {
        const float *pa = nc_f32(a), *pb = nc_f32(b);
        float *po = nc_f32(o);
        for (int64_t i = 0; i < o->numel; i++, nc_bcast_next(&bc))
            po[i] = f32_apply(op, pa[bc.oa], pb[bc.ob]);
    } else {
        const int64_t *pa = nc_i64(a), *pb = nc_i64(b);
        int64_t *po = nc_i64(o);
        /* A shape-only pass feeds zero-filled graph inputs, so a zero divisor
         * there is a placeholder, not an error: the real run checks it. */
        int lenient = ctx && ctx->shape_only;
        for (int64_t i = 0; i < o->numel; i++, nc_bcast_next(&bc))
            if (!i64_apply(op, pa[bc.oa], pb[bc.ob], &po[i]) && !lenient) {
                nc_tensor_free(o);
                return nc_errorf(NC_ERR_INVALID_ARG, "%s: integer division by zero",
                                 binop_name(op));
            }
    }
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_add(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                    int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out;
    return binary(OP_ADD, in, n_in, out, ctx);
}

nc_status nc_op_sub(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                    int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out;
    return binary(OP_SUB, in, n_in, out, ctx);
}

nc_status nc_op_mul(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                    int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out;
    return binary(OP_MUL, in, n_in, out, ctx);
}

nc_status nc_op_div(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                    int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out;
    return binary(OP_DIV, in, n_in, out, ctx);
}

/* ------------------------------------------------------------ unary ops */

/* A new tensor of x's dtype and shape; *skip tells whether the values may
 * be left out (shape-only pass on a float output). */
static nc_status unary_prepare(const nc_tensor *const *in, int n_in, int allow_i64,
                               const nc_exec_ctx *ctx, nc_tensor **o, int *skip)
{
    nc_status st;
    *o = NULL;
    if ((st = need_input(n_in > 0 ? in[0] : NULL, "X")) != NC_OK)
        return st;
    if ((st = need_dtype(in[0], allow_i64)) != NC_OK)
        return st;
    if ((st = new_out(in[0]->dtype, in[0]->ndim, in[0]->shape, o)) != NC_OK)
        return st;
    *skip = skip_float(ctx, *o);
    return NC_OK;
}

nc_status nc_op_relu(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                     int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out;
    nc_tensor *o;
    int skip;
    nc_status st = unary_prepare(in, n_in, 1, ctx, &o, &skip);
    if (st != NC_OK || skip) {
        out[0] = o;
        return st;
    }
    if (o->dtype == NC_DTYPE_F32) {
        const float *x = nc_f32(in[0]);
        float *y = nc_f32(o);
        for (int64_t i = 0; i < o->numel; i++)
            y[i] = x[i] > 0.0f ? x[i] : (x[i] != x[i] ? x[i] : 0.0f); /* NaN stays NaN */
    } else {
        const int64_t *x = nc_i64(in[0]);
        int64_t *y = nc_i64(o);
        for (int64_t i = 0; i < o->numel; i++)
            y[i] = x[i] > 0 ? x[i] : 0;
    }
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_leakyrelu(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                          int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_tensor *o;
    int skip;
    float alpha = nc_attr_float(n, "alpha", 0.01f);
    nc_status st = unary_prepare(in, n_in, 0, ctx, &o, &skip);
    if (st != NC_OK || skip) {
        out[0] = o;
        return st;
    }
    const float *x = nc_f32(in[0]);
    float *y = nc_f32(o);
    for (int64_t i = 0; i < o->numel; i++)
        y[i] = x[i] < 0.0f ? alpha * x[i] : x[i];
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_floor(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                      int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out;
    nc_tensor *o;
    int skip;
    nc_status st = unary_prepare(in, n_in, 0, ctx, &o, &skip);
    if (st != NC_OK || skip) {
        out[0] = o;
        return st;
    }
    const float *x = nc_f32(in[0]);
    float *y = nc_f32(o);
    for (int64_t i = 0; i < o->numel; i++)
        y[i] = floorf(x[i]);
    out[0] = o;
    return NC_OK;
}

/* A Clip bound given as an optional input (opset 11+): a one-element tensor
 * of the data's type. */
static nc_status clip_bound(const nc_tensor *b, const nc_tensor *x, const char *what, int *has,
                            double *f, int64_t *i)
{
    *has = 0;
    if (!b)
        return NC_OK;
    if (b->numel != 1) {
        char s[160];
        return nc_errorf(NC_ERR_SHAPE, "Clip: '%s' must be a scalar, got shape %s", what,
                         nc_shape_str(b->ndim, b->shape, s, sizeof s));
    }
    if (b->dtype != x->dtype)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Clip: '%s' is %s but the input is %s", what,
                         nc_dtype_name(b->dtype), nc_dtype_name(x->dtype));
    *has = 1;
    if (b->dtype == NC_DTYPE_F32)
        *f = nc_f32(b)[0];
    else
        *i = nc_i64(b)[0];
    return NC_OK;
}

nc_status nc_op_clip(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                     int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st;
    if ((st = need_input(n_in > 0 ? in[0] : NULL, "input")) != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    if ((st = need_dtype(x, 1)) != NC_OK)
        return st;
    int has_lo = 0, has_hi = 0;
    double flo = 0, fhi = 0;
    int64_t ilo = INT64_MIN, ihi = INT64_MAX;
    if (n->opset < 11) {
        if (n_in > 1)
            return nc_errorf(NC_ERR_MODEL, "Clip before opset 11 takes its bounds as attributes, "
                                           "not inputs");
        if (x->dtype != NC_DTYPE_F32)
            return nc_errorf(NC_ERR_UNSUPPORTED, "Clip before opset 11 works on floats only");
        has_lo = nc_node_attr(n, "min") != NULL;
        has_hi = nc_node_attr(n, "max") != NULL;
        flo = nc_attr_float(n, "min", -FLT_MAX);
        fhi = nc_attr_float(n, "max", FLT_MAX);
    } else {
        if ((st = clip_bound(n_in > 1 ? in[1] : NULL, x, "min", &has_lo, &flo, &ilo)) != NC_OK ||
            (st = clip_bound(n_in > 2 ? in[2] : NULL, x, "max", &has_hi, &fhi, &ihi)) != NC_OK)
            return st;
    }
    nc_tensor *o;
    if ((st = new_out(x->dtype, x->ndim, x->shape, &o)) != NC_OK)
        return st;
    out[0] = o;
    if (skip_float(ctx, o))
        return NC_OK;
    /* min first, then max: when min > max every value becomes max (opset 13's rule);
     * NaN passes through as in numpy. */
    if (o->dtype == NC_DTYPE_F32) {
        const float *px = nc_f32(x);
        float *py = nc_f32(o);
        float lo = (float)flo, hi = (float)fhi;
        for (int64_t i = 0; i < o->numel; i++) {
            float v = px[i];
            if (has_lo && v < lo)
                v = lo;
            if (has_hi && v > hi)
                v = hi;
            py[i] = v;
        }
    } else {
        const int64_t *px = nc_i64(x);
        int64_t *py = nc_i64(o);
        for (int64_t i = 0; i < o->numel; i++) {
            int64_t v = px[i];
            if (has_lo && v < ilo)
                v = ilo;
            if (has_hi && v > ihi)
                v = ihi;
            py[i] = v;
        }
    }
    return NC_OK;
}

/* ------------------------------------------------------------ softmax */

static nc_status softmax_common(const nc_node *n, const nc_tensor *const *in, int n_in,
                                nc_tensor **out, const nc_exec_ctx *ctx, int log_variant)
{
    const char *name = log_variant ? "LogSoftmax" : "Softmax";
    nc_tensor *o;
    int skip;
    nc_status st = unary_prepare(in, n_in, 0, ctx, &o, &skip);
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int r = x->ndim;
    /* Before opset 13 the input is coerced to 2-D at `axis` (default 1) and
     * normalised over the whole flattened tail; from 13 on it is normalised
     * along the single axis `axis` (default -1). */
    int legacy = n->opset < 13;
    int64_t axis = nc_attr_int(n, "axis", legacy ? 1 : -1);
    int64_t lo = r == 0 ? -1 : -(int64_t)r, hi = r == 0 ? 0 : (int64_t)r - 1;
    if (axis < lo || axis > hi) {
        nc_tensor_free(o);
        return nc_errorf(NC_ERR_MODEL, "%s: axis %lld is out of range for a %d-D input", name,
                         (long long)axis, r);
    }
    if (axis < 0)
        axis += r;
    if (r == 0)
        axis = 0;
    if (skip || o->numel == 0) {
        out[0] = o;
        return NC_OK;
    }
    int64_t outer = 1, len = 1, inner = 1;
    for (int d = 0; d < r; d++) {
        if (d < axis)
            outer *= x->shape[d];
        else if (d == axis || legacy)
            len *= x->shape[d];
        else
            inner *= x->shape[d];
    }
    const float *px = nc_f32(x);
    float *py = nc_f32(o);
    for (int64_t a = 0; a < outer; a++)
        for (int64_t c = 0; c < inner; c++) {
            const float *xs = px + a * len * inner + c;
            float *ys = py + a * len * inner + c;
            float m = -INFINITY;
            for (int64_t k = 0; k < len; k++)
                if (xs[k * inner] > m)
                    m = xs[k * inner];
            double sum = 0.0;
            for (int64_t k = 0; k < len; k++) {
                float e = expf(xs[k * inner] - m);
                if (!log_variant)
                    ys[k * inner] = e;
                sum += e;
            }
            if (log_variant) {
                float ls = (float)log(sum);
                for (int64_t k = 0; k < len; k++)
                    ys[k * inner] = xs[k * inner] - m - ls;
            } else {
                for (int64_t k = 0; k < len; k++)
                    ys[k * inner] = (float)(ys[k * inner] / sum);
            }
        }
    out[0] = o;
    return NC_OK;
}

nc_status nc_op_softmax(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                        int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    return softmax_common(n, in, n_in, out, ctx, 0);
}

nc_status nc_op_logsoftmax(const nc_node *n, const nc_tensor *const *in, int n_in,
                           nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    return softmax_common(n, in, n_in, out, ctx, 1);
}

/* ------------------------------------------------------------ pass-through */

nc_status nc_op_identity(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                         int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out; (void)ctx;
    nc_status st = need_input(n_in > 0 ? in[0] : NULL, "input");
    if (st != NC_OK)
        return st;
    out[0] = nc_tensor_clone(in[0]);
    return out[0] ? NC_OK : NC_ERR_NOMEM;
}

/* Inference only: the output is the input. */
nc_status nc_op_dropout(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                        int n_out, const nc_exec_ctx *ctx)
{
    (void)ctx;
    nc_status st = need_input(n_in > 0 ? in[0] : NULL, "data");
    if (st != NC_OK)
        return st;
    /* The mask is a bool tensor, which neuroc's tensors cannot hold. */
    if (n_out > 1 && (!n->outputs || n->outputs[1] >= 0))
        return nc_errorf(NC_ERR_UNSUPPORTED, "Dropout: the 'mask' output is not supported "
                                             "(inference only; remove the second output)");
    if (n_in > 2 && in[2]) {
        const nc_tensor *t = in[2];
        int on = 0;
        for (int64_t i = 0; i < t->numel && !on; i++)
            on = t->dtype == NC_DTYPE_F32 ? nc_f32(t)[i] != 0.0f
               : t->dtype == NC_DTYPE_I64 ? nc_i64(t)[i] != 0
                                          : ((const uint8_t *)t->data)[i] != 0;
        /* a ratio of 0 drops nothing even in training mode (Swin's attention
         * dropout, exported with training_mode=true) */
        const nc_tensor *r = n_in > 1 ? in[1] : NULL;
        int zero = r && r->dtype == NC_DTYPE_F32 && r->numel == 1 && nc_f32(r)[0] == 0.0f;
        if (on && !zero)
            return nc_errorf(NC_ERR_UNSUPPORTED, "Dropout: training_mode=true is not supported "
                                                 "(inference only), but with a ratio of 0");
    }
    out[0] = nc_tensor_clone(in[0]);
    return out[0] ? NC_OK : NC_ERR_NOMEM;
}
