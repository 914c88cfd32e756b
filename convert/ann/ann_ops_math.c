/* Smooth activations, powers and roots, mean reductions and layer
 * normalisation: the ops of EfficientNet (Sigmoid gates), MobileNetV3
 * (HardSwish, HardSigmoid) and transformer blocks (Erf or Tanh for GELU, ReduceMean,
 * Pow, Sqrt, LayerNormalization), plus Transpose. Semantics follow the ONNX
 * operator specs; float32 throughout (int64 where the spec allows and shape
 * arithmetic may need it). */
#include "ann_ops.h"

#include <math.h>
#include <string.h>

#include "ann_broadcast.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"

static nc_status new_out(nc_dtype dt, int ndim, const int64_t *shape, nc_tensor **o)
{
    *o = nc_tensor_new(dt, ndim, shape);
    return *o ? NC_OK : nc_tensor_new_failure(dt, ndim, shape);
}

static int skip_float(const nc_exec_ctx *ctx, const nc_tensor *t)
{
    return ctx && ctx->shape_only && t->dtype == NC_DTYPE_F32;
}

static nc_status need_f32(const nc_tensor *const *in, int n_in, int i, const char *op,
                          const char *what)
{
    if (i >= n_in || !in[i])
        return nc_errorf(NC_ERR_MODEL, "%s: input '%s' is missing", op, what);
    if (in[i]->dtype != NC_DTYPE_F32)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: input '%s' has data type %s; only float32 is "
                                             "supported", op, what, nc_dtype_name(in[i]->dtype));
    return NC_OK;
}

/* ------------------------------------------------------------ unary maps */

typedef enum { U_SIGMOID, U_HARDSIGMOID, U_HARDSWISH, U_ERF, U_SQRT, U_TANH } unop;

static const char *const k_unop_names[] = {"Sigmoid", "HardSigmoid", "HardSwish", "Erf", "Sqrt", "Tanh"};

static float sigmoid(float x)
{
    /* exp of a negative argument only: no overflow for large |x| */
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

static float hard_sigmoid(float x, float alpha, float beta)
{
    float v = alpha * x + beta;
    return v > 1.0f ? 1.0f : (v < 0.0f ? 0.0f : v); /* NaN stays NaN */
}

static nc_status unary(unop op, const nc_node *n, const nc_tensor *const *in, int n_in,
                       nc_tensor **out, const nc_exec_ctx *ctx)
{
    nc_status st = need_f32(in, n_in, 0, k_unop_names[op], "X");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    nc_tensor *o;
    if ((st = new_out(x->dtype, x->ndim, x->shape, &o)) != NC_OK)
        return st;
    out[0] = o;
    if (skip_float(ctx, o))
        return NC_OK;
    /* HardSwish is HardSigmoid with alpha 1/6, beta 1/2, times x */
    float alpha = op == U_HARDSIGMOID ? nc_attr_float(n, "alpha", 0.2f) : 1.0f / 6.0f;
    float beta = op == U_HARDSIGMOID ? nc_attr_float(n, "beta", 0.5f) : 0.5f;
    const float *px = nc_f32(x);
    float *py = nc_f32(o);
    for (int64_t i = 0; i < o->numel; i++) {
        float v = px[i];
        switch (op) {
        case U_SIGMOID: py[i] = sigmoid(v); break;
        case U_HARDSIGMOID: py[i] = hard_sigmoid(v, alpha, beta); break;
        case U_HARDSWISH: py[i] = v * hard_sigmoid(v, alpha, beta); break;
        case U_ERF: py[i] = erff(v); break;
        case U_SQRT: py[i] = sqrtf(v); break;
        case U_TANH: py[i] = tanhf(v); break;
        }
    }
    return NC_OK;
}

#define UNARY_OP(fn, code)                                                                      \
    nc_status fn(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,     \
                 int n_out, const nc_exec_ctx *ctx)                                            \
    {                                                                                          \
        (void)n_out;                                                                           \
        return unary(code, n, in, n_in, out, ctx);                                             \
    }

UNARY_OP(nc_op_sigmoid, U_SIGMOID)
UNARY_OP(nc_op_hardsigmoid, U_HARDSIGMOID)
UNARY_OP(nc_op_hardswish, U_HARDSWISH)
UNARY_OP(nc_op_erf, U_ERF)
UNARY_OP(nc_op_sqrt, U_SQRT)
UNARY_OP(nc_op_tanh, U_TANH)

/* ------------------------------------------------------------ Pow */

/* Element of t at offset i as a double (float32 or int64). */
static double elem(const nc_tensor *t, int64_t i)
{
    return t->dtype == NC_DTYPE_F32 ? (double)nc_f32(t)[i] : (double)nc_i64(t)[i];
}

/* Z = X ^ Y with numpy broadcasting; Z has X's type (the spec's rule since
 * opset 12, which lets Y be of another numeric type). */
nc_status nc_op_pow(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                    int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_out;
    if (n_in < 2 || !in[0] || !in[1])
        return nc_errorf(NC_ERR_MODEL, "Pow needs two inputs");
    const nc_tensor *a = in[0], *b = in[1];
    for (int k = 0; k < 2; k++)
        if (in[k]->dtype != NC_DTYPE_F32 && in[k]->dtype != NC_DTYPE_I64)
            return nc_errorf(NC_ERR_UNSUPPORTED, "Pow: input '%s' has data type %s (expected float32 "
                                                 "or int64)", k ? "Y" : "X", nc_dtype_name(in[k]->dtype));
    nc_bcast bc;
    if (!nc_bcast_init(&bc, a->ndim, a->shape, b->ndim, b->shape)) {
        char sa[160], sb[160];
        return nc_errorf(NC_ERR_SHAPE, "Pow: shapes %s and %s cannot be broadcast together",
                         nc_shape_str(a->ndim, a->shape, sa, sizeof sa),
                         nc_shape_str(b->ndim, b->shape, sb, sizeof sb));
    }
    nc_tensor *o;
    nc_status st = new_out(a->dtype, bc.ndim, bc.shape, &o);
    if (st != NC_OK)
        return st;
    out[0] = o;
    if (skip_float(ctx, o))
        return NC_OK;
    if (o->dtype == NC_DTYPE_F32) {
        float *po = nc_f32(o);
        if (b->dtype == NC_DTYPE_F32)
            for (int64_t i = 0; i < o->numel; i++, nc_bcast_next(&bc))
                po[i] = powf(nc_f32(a)[bc.oa], nc_f32(b)[bc.ob]);
        else
            for (int64_t i = 0; i < o->numel; i++, nc_bcast_next(&bc))
                po[i] = (float)pow((double)nc_f32(a)[bc.oa], (double)nc_i64(b)[bc.ob]);
    } else {
        int64_t *po = nc_i64(o);
        for (int64_t i = 0; i < o->numel; i++, nc_bcast_next(&bc)) {
            double r = pow(elem(a, bc.oa), elem(b, bc.ob));
            /* out-of-range results have no defined value; keep the cast defined */
            po[i] = isfinite(r) && fabs(r) < 9.2e18 ? (int64_t)r : 0;
        }
    }
    return NC_OK;
}

/* ------------------------------------------------------------ ReduceMean */

/* Marks the reduced axes of an r-D input in red[]. */
static nc_status reduce_axes(const nc_node *n, const nc_tensor *const *in, int n_in, int r,
                             char *red, int *noop)
{
    const int64_t *axes = NULL;
    int n_axes = -1;
    *noop = 0;
    if (n->opset >= 18) {
        if (nc_node_attr(n, "axes"))
            return nc_errorf(NC_ERR_MODEL, "ReduceMean from opset 18 takes 'axes' as an input, "
                                           "not an attribute");
        if (n_in > 1 && in[1]) {
            if (in[1]->dtype != NC_DTYPE_I64 || in[1]->ndim > 1)
                return nc_errorf(NC_ERR_MODEL, "ReduceMean: 'axes' must be a 1-D int64 tensor");
            axes = nc_i64(in[1]);
            n_axes = (int)in[1]->numel;
        }
        if (n_axes <= 0 && nc_attr_int(n, "noop_with_empty_axes", 0)) {
            *noop = 1;
            return NC_OK;
        }
    } else {
        if (n_in > 1)
            return nc_errorf(NC_ERR_MODEL, "ReduceMean before opset 18 takes 'axes' as an "
                                           "attribute, not an input");
        n_axes = nc_attr_ints(n, "axes", &axes);
    }
    memset(red, n_axes <= 0, (size_t)(r > 0 ? r : 1)); /* no axes: reduce all */
    for (int k = 0; k < n_axes; k++) {
        int64_t ax = axes[k];
        if (ax < -(int64_t)r || ax >= r)
            return nc_errorf(NC_ERR_MODEL, "ReduceMean: axis %lld is out of range for a %d-D input",
                             (long long)ax, r);
        red[ax < 0 ? ax + r : ax] = 1;
    }
    return NC_OK;
}

nc_status nc_op_reducemean(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                           int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    nc_status st = need_f32(in, n_in, 0, "ReduceMean", "data");
    if (st != NC_OK)
        return st;
    const nc_tensor *x = in[0];
    int r = x->ndim, noop;
    char red[NC_MAX_DIMS + 1];
    if ((st = reduce_axes(n, in, n_in, r, red, &noop)) != NC_OK)
        return st;
    if (noop) {
        out[0] = nc_tensor_clone(x);
        return out[0] ? NC_OK : NC_ERR_NOMEM;
    }
    int keep = nc_attr_int(n, "keepdims", 1) != 0;
    int64_t shape[NC_MAX_DIMS], kshape[NC_MAX_DIMS]; /* result, and result with kept dims */
    int nd = 0;
    for (int d = 0; d < r; d++) {
        kshape[d] = red[d] ? 1 : x->shape[d];
        if (!red[d] || keep)
            shape[nd++] = kshape[d];
    }
    nc_tensor *o;
    if ((st = new_out(NC_DTYPE_F32, nd, shape, &o)) != NC_OK)
        return st;
    out[0] = o;
    if (skip_float(ctx, o) || x->numel == 0) {
        /* the mean of nothing is NaN (0/0), as in numpy */
        for (int64_t i = 0; i < o->numel && !skip_float(ctx, o); i++)
            nc_f32(o)[i] = NAN;
        return NC_OK;
    }
    double *acc = nc_calloc((size_t)o->numel + 1, sizeof *acc);
    if (!acc) {
        nc_tensor_free(o);
        out[0] = NULL;
        return nc_errorf(NC_ERR_NOMEM, "ReduceMean: out of memory");
    }
    /* one pass over x in C order, accumulating into the kept-dims position */
    nc_bcast bc;
    nc_bcast_init(&bc, r, x->shape, r, kshape);
    const float *px = nc_f32(x);
    for (int64_t i = 0; i < x->numel; i++, nc_bcast_next(&bc))
        acc[bc.ob] += px[i];
    double cnt = (double)(x->numel / (o->numel ? o->numel : 1));
    for (int64_t i = 0; i < o->numel; i++)
        nc_f32(o)[i] = (float)(acc[i] / cnt);
    nc_free(acc);
    return NC_OK;
}

/* ------------------------------------------------------------ LayerNormalization */

/* Y = (X - mean) / sqrt(var + epsilon) * Scale + B over the dims from
 * `axis` on; optional outputs Mean and InvStdDev have X's shape with those
 * dims set to 1. Scale and B broadcast unidirectionally to X. */
nc_status nc_op_layernorm(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                          int n_out, const nc_exec_ctx *ctx)
{
    nc_status st;
    if ((st = need_f32(in, n_in, 0, "LayerNormalization", "X")) != NC_OK ||
        (st = need_f32(in, n_in, 1, "LayerNormalization", "Scale")) != NC_OK)
        return st;
    if (n_in > 2 && in[2] && (st = need_f32(in, n_in, 2, "LayerNormalization", "B")) != NC_OK)
        return st;
    const nc_tensor *x = in[0], *scale = in[1], *bias = n_in > 2 ? in[2] : NULL;
    int r = x->ndim;
    int64_t axis = nc_attr_int(n, "axis", -1);
    if (r == 0 || axis < -(int64_t)r || axis >= r)
        return nc_errorf(NC_ERR_MODEL, "LayerNormalization: axis %lld is out of range for a %d-D "
                                       "input", (long long)axis, r);
    if (axis < 0)
        axis += r;
    float eps = nc_attr_float(n, "epsilon", 1e-5f);
    nc_bcast bs, bb;
    const nc_tensor *sb[2] = {scale, bias};
    nc_bcast *bcs[2] = {&bs, &bb};
    for (int k = 0; k < 2; k++) {
        if (!sb[k])
            continue;
        int ok = nc_bcast_init(bcs[k], r, x->shape, sb[k]->ndim, sb[k]->shape) && bcs[k]->ndim == r;
        for (int d = 0; ok && d < r; d++)
            ok = bcs[k]->shape[d] == x->shape[d];
        if (!ok) {
            char s1[160], s2[160];
            return nc_errorf(NC_ERR_SHAPE, "LayerNormalization: '%s' of shape %s does not broadcast "
                                           "to X's shape %s", k ? "B" : "Scale",
                             nc_shape_str(sb[k]->ndim, sb[k]->shape, s1, sizeof s1),
                             nc_shape_str(r, x->shape, s2, sizeof s2));
        }
    }
    int64_t stat_shape[NC_MAX_DIMS], outer = 1, len = 1;
    for (int d = 0; d < r; d++) {
        stat_shape[d] = d < axis ? x->shape[d] : 1;
        if (d < axis)
            outer *= x->shape[d];
        else
            len *= x->shape[d];
    }
    nc_tensor *y = NULL, *mean = NULL, *inv = NULL;
    if ((st = new_out(NC_DTYPE_F32, r, x->shape, &y)) != NC_OK)
        return st;
    if (n_out > 1 && (st = new_out(NC_DTYPE_F32, r, stat_shape, &mean)) != NC_OK)
        goto fail;
    if (n_out > 2 && (st = new_out(NC_DTYPE_F32, r, stat_shape, &inv)) != NC_OK)
        goto fail;
    out[0] = y;
    if (n_out > 1)
        out[1] = mean;
    if (n_out > 2)
        out[2] = inv;
    if (skip_float(ctx, y))
        return NC_OK;
    const float *px = nc_f32(x);
    float *py = nc_f32(y);
    for (int64_t a = 0; a < outer; a++) {
        const float *xs = px + a * len;
        double s = 0.0, ss = 0.0;
        for (int64_t k = 0; k < len; k++)
            s += xs[k];
        double mu = len ? s / (double)len : 0.0;
        for (int64_t k = 0; k < len; k++)
            ss += (xs[k] - mu) * (xs[k] - mu);
        double var = len ? ss / (double)len : 0.0;
        double is = 1.0 / sqrt(var + (double)eps);
        for (int64_t k = 0; k < len; k++)
            py[a * len + k] = (float)((xs[k] - mu) * is);
        if (mean)
            nc_f32(mean)[a] = (float)mu;
        if (inv)
            nc_f32(inv)[a] = (float)is;
    }
    for (int64_t i = 0; i < y->numel; i++, nc_bcast_next(&bs)) {
        py[i] *= nc_f32(scale)[bs.ob];
        if (bias) {
            py[i] += nc_f32(bias)[bb.ob];
            nc_bcast_next(&bb);
        }
    }
    return NC_OK;
fail:
    nc_tensor_free(y);
    nc_tensor_free(mean);
    nc_tensor_free(inv);
    for (int o = 0; o < n_out; o++)
        out[o] = NULL;
    return st;
}

/* ------------------------------------------------------------ Transpose */

/* Pure data movement, any dtype by element size: output dim d is input dim
 * perm[d] (default: the dims reversed). */
nc_status nc_op_transpose(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                          int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    if (n_in < 1 || !in[0])
        return nc_errorf(NC_ERR_MODEL, "Transpose: input 'data' is missing");
    const nc_tensor *x = in[0];
    int r = x->ndim;
    int64_t perm[NC_MAX_DIMS];
    const int64_t *p;
    int np = nc_attr_ints(n, "perm", &p);
    if (np < 0) {
        for (int d = 0; d < r; d++)
            perm[d] = r - 1 - d;
    } else {
        char seen[NC_MAX_DIMS] = {0};
        if (np != r)
            return nc_errorf(NC_ERR_MODEL, "Transpose: 'perm' has %d entries for a %d-D input", np, r);
        for (int d = 0; d < r; d++) {
            if (p[d] < 0 || p[d] >= r || seen[p[d]])
                return nc_errorf(NC_ERR_MODEL, "Transpose: 'perm' is not a permutation of 0..%d", r - 1);
            seen[p[d]] = 1;
            perm[d] = p[d];
        }
    }
    int64_t shape[NC_MAX_DIMS], istride[NC_MAX_DIMS], s = 1;
    for (int d = r - 1; d >= 0; d--) {
        istride[d] = s;
        s *= x->shape[d];
    }
    int64_t st_in[NC_MAX_DIMS]; /* input stride along each output dim */
    for (int d = 0; d < r; d++) {
        shape[d] = x->shape[perm[d]];
        st_in[d] = istride[perm[d]];
    }
    nc_tensor *o;
    nc_status st = new_out(x->dtype, r, shape, &o);
    if (st != NC_OK)
        return st;
    out[0] = o;
    if (skip_float(ctx, o) || o->numel == 0)
        return NC_OK;
    size_t es = nc_dtype_size(x->dtype);
    const char *src = x->data;
    char *dst = o->data;
    int64_t idx[NC_MAX_DIMS] = {0}, off = 0;
    for (int64_t i = 0; i < o->numel; i++) {
        memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
        for (int d = r - 1; d >= 0; d--) { /* odometer over the output */
            off += st_in[d];
            if (++idx[d] < shape[d])
                break;
            off -= st_in[d] * shape[d];
            idx[d] = 0;
        }
    }
    return NC_OK;
}
