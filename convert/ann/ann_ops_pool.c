/* Pooling and padding ops of the reference forward pass, and the spatial
 * attribute parsing that Conv shares (ann_ops_util.h). */
#include <math.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "ann_ops.h"
#include "ann_ops_util.h"
#include "snn/base/error.h"

/* Attribute values beyond these are refused before any arithmetic, so that
 * output-size formulas cannot overflow int64. */
#define SP_ATTR_LIMIT ((int64_t)1 << 20)
#define SP_DIM_LIMIT ((int64_t)1 << 40)

/* Copies an optional INTS attribute of exactly `count` values into dst
 * (right-aligned in NC_SP_MAX slots); leaves dst alone when absent. */
static nc_status sp_ints(const nc_node *n, const char *name, int count, int64_t lo,
                         int64_t *dst, int *present)
{
    const nc_attr *a = nc_node_attr(n, name);
    *present = 0;
    if (!a)
        return NC_OK;
    if (a->type != NC_ATTR_INTS || a->n != count)
        return nc_errorf(NC_ERR_MODEL, "attribute %s must hold %d integers (has %d)", name, count,
                         a->type == NC_ATTR_INTS ? a->n : 1);
    for (int i = 0; i < count; i++)
        if (a->ints[i] < lo || a->ints[i] > SP_ATTR_LIMIT)
            return nc_errorf(NC_ERR_MODEL, "attribute %s[%d] = %lld is out of range [%lld, %lld]", name,
                             i, (long long)a->ints[i], (long long)lo, (long long)SP_ATTR_LIMIT);
    memcpy(dst, a->ints, (size_t)count * sizeof *dst);
    *present = 1;
    return NC_OK;
}

nc_status nc_spatial_parse(const nc_node *n, const nc_tensor *x, const int64_t *kernel,
                           int allow_ceil, nc_spatial *sp)
{
    char b1[160];
    int nsp = x->ndim - 2, present;
    if (nsp < 1 || nsp > NC_SP_MAX)
        return nc_errorf(NC_ERR_UNSUPPORTED, "input of shape %s: only 1-D, 2-D and 3-D spatial inputs "
                         "([N, C, ...] of rank 3 to 5) are supported",
                         nc_shape_str(x->ndim, x->shape, b1, sizeof b1));
    memset(sp, 0, sizeof *sp);
    sp->nsp = nsp;
    int off = NC_SP_MAX - nsp;
    for (int i = 0; i < NC_SP_MAX; i++)
        sp->in[i] = sp->k[i] = sp->stride[i] = sp->dil[i] = sp->out[i] = 1;
    nc_status st;

    int64_t ks[NC_SP_MAX];
    if ((st = sp_ints(n, "kernel_shape", nsp, 1, ks, &present)) != NC_OK)
        return st;
    if (kernel) {
        for (int i = 0; i < nsp; i++) {
            if (kernel[i] < 1 || kernel[i] > SP_ATTR_LIMIT)
                return nc_errorf(NC_ERR_SHAPE, "kernel dimension %d is %lld", i, (long long)kernel[i]);
            if (present && ks[i] != kernel[i])
                return nc_errorf(NC_ERR_SHAPE, "kernel_shape %s does not match the weight's spatial dims %s",
                                 nc_shape_str(nsp, ks, b1, sizeof b1),
                                 nc_shape_str(nsp, kernel, (char[160]){0}, 160));
        }
        memcpy(sp->k + off, kernel, (size_t)nsp * sizeof *kernel);
    } else {
        if (!present)
            return nc_errorf(NC_ERR_MODEL, "attribute kernel_shape is required");
        memcpy(sp->k + off, ks, (size_t)nsp * sizeof *ks);
    }
    if ((st = sp_ints(n, "strides", nsp, 1, sp->stride + off, &present)) != NC_OK ||
        (st = sp_ints(n, "dilations", nsp, 1, sp->dil + off, &present)) != NC_OK)
        return st;
    int64_t pads[2 * NC_SP_MAX] = {0};
    if ((st = sp_ints(n, "pads", 2 * nsp, 0, pads, &present)) != NC_OK)
        return st;

    int ceil_mode = 0;
    if (allow_ceil) {
        int64_t c = nc_attr_int(n, "ceil_mode", 0);
        if (c != 0 && c != 1)
            return nc_errorf(NC_ERR_UNSUPPORTED, "attribute ceil_mode = %lld (expected 0 or 1)", (long long)c);
        ceil_mode = (int)c;
    }
    const char *ap = nc_attr_str(n, "auto_pad", "NOTSET");
    int mode; /* 0 explicit pads, 1 VALID, 2 SAME_UPPER, 3 SAME_LOWER */
    if (strcmp(ap, "NOTSET") == 0)
        mode = 0;
    else if (strcmp(ap, "VALID") == 0)
        mode = 1;
    else if (strcmp(ap, "SAME_UPPER") == 0)
        mode = 2;
    else if (strcmp(ap, "SAME_LOWER") == 0)
        mode = 3;
    else
        return nc_errorf(NC_ERR_UNSUPPORTED, "attribute auto_pad = \"%s\" (expected NOTSET, VALID, "
                         "SAME_UPPER or SAME_LOWER)", ap);

    for (int i = 0; i < nsp; i++) {
        int j = off + i;
        int64_t in = x->shape[2 + i];
        if (in > SP_DIM_LIMIT)
            return nc_errorf(NC_ERR_LIMIT, "spatial dimension %lld is too large", (long long)in);
        sp->in[j] = in;
        int64_t s = sp->stride[j], dk = (sp->k[j] - 1) * sp->dil[j] + 1;
        if (mode >= 2) {
            /* SAME: as many outputs as ceil(in / stride), padding split with
             * the odd element at the end (UPPER) or the start (LOWER). */
            int64_t o = (in + s - 1) / s;
            int64_t total = (o - 1) * s + dk - in;
            if (total < 0)
                total = 0;
            sp->pad_b[j] = mode == 2 ? total / 2 : total - total / 2;
            sp->pad_e[j] = total - sp->pad_b[j];
            sp->out[j] = o;
            continue;
        }
        if (mode == 0) {
            sp->pad_b[j] = pads[i];
            sp->pad_e[j] = pads[nsp + i];
        }
        int64_t span = in + sp->pad_b[j] + sp->pad_e[j] - dk;
        if (span < 0)
            return nc_errorf(NC_ERR_SHAPE, "input %s with pads %lld+%lld is smaller than the dilated "
                             "kernel (%lld) in spatial dim %d",
                             nc_shape_str(x->ndim, x->shape, b1, sizeof b1), (long long)sp->pad_b[j],
                             (long long)sp->pad_e[j], (long long)dk, i);
        int64_t o = span / s + 1;
        if (ceil_mode && mode == 0) {
            o = (span + s - 1) / s + 1;
            /* As in PyTorch and ONNX: a last window that would start inside
             * the end padding is dropped. */
            if ((o - 1) * s >= in + sp->pad_b[j])
                o--;
        }
        sp->out[j] = o;
    }
    return NC_OK;
}

/* Output shape [N, C, out...] for a geometry. */
static void sp_out_shape(const nc_tensor *x, int64_t channels, const nc_spatial *sp, int64_t *shape)
{
    shape[0] = x->shape[0];
    shape[1] = channels;
    for (int i = 0; i < sp->nsp; i++)
        shape[2 + i] = sp->out[NC_SP_MAX - sp->nsp + i];
}

/* Window taps of output position o along one dim: tap t reads input index
 * first + t*dil. `valid` counts taps inside the input, `padded` those inside
 * the padded input (PyTorch's divisor for count_include_pad). */
static void sp_taps(const nc_spatial *sp, int d, int64_t o, int64_t *first, int64_t *valid,
                    int64_t *padded)
{
    int64_t start = o * sp->stride[d] - sp->pad_b[d];
    *first = start;
    *valid = *padded = 0;
    for (int64_t t = 0; t < sp->k[d]; t++) {
        int64_t p = start + t * sp->dil[d];
        *valid += p >= 0 && p < sp->in[d];
        *padded += p < sp->in[d] + sp->pad_e[d];
    }
}

/* One channel plane of max or average pooling, in the 3-D canonical form. */
static void pool_plane(const float *x, float *y, const nc_spatial *sp, int is_max, int include_pad)
{
    const int64_t *in = sp->in, *k = sp->k, *dl = sp->dil;
    for (int64_t od = 0; od < sp->out[0]; od++) {
        int64_t fd, vd, pd;
        sp_taps(sp, 0, od, &fd, &vd, &pd);
        for (int64_t oh = 0; oh < sp->out[1]; oh++) {
            int64_t fh, vh, ph;
            sp_taps(sp, 1, oh, &fh, &vh, &ph);
            for (int64_t ow = 0; ow < sp->out[2]; ow++) {
                int64_t fw, vw, pw;
                sp_taps(sp, 2, ow, &fw, &vw, &pw);
                float acc = is_max ? -INFINITY : 0.0f;
                for (int64_t a = 0; a < k[0]; a++) {
                    int64_t id = fd + a * dl[0];
                    if (id < 0 || id >= in[0])
                        continue;
                    for (int64_t b = 0; b < k[1]; b++) {
                        int64_t ih = fh + b * dl[1];
                        if (ih < 0 || ih >= in[1])
                            continue;
                        const float *row = x + (id * in[1] + ih) * in[2];
                        for (int64_t c = 0; c < k[2]; c++) {
                            int64_t iw = fw + c * dl[2];
                            if (iw < 0 || iw >= in[2])
                                continue;
                            if (is_max)
                                acc = row[iw] > acc ? row[iw] : acc;
                            else
                                acc += row[iw];
                        }
                    }
                }
                if (!is_max) {
                    int64_t cnt = include_pad ? pd * ph * pw : vd * vh * vw;
                    acc = cnt > 0 ? acc / (float)cnt : 0.0f;
                }
                *y++ = acc;
            }
        }
    }
}

static nc_status pool_run(const nc_node *n, const nc_tensor *const *in, nc_tensor **out, int n_out,
                          const nc_exec_ctx *ctx, int is_max)
{
    const nc_tensor *x = in[0];
    nc_status st;
    if (!x)
        return nc_errorf(NC_ERR_MODEL, "input X is required");
    if (is_max && nc_output_used(n, n_out, 1))
        return nc_errorf(NC_ERR_UNSUPPORTED, "the Indices output of MaxPool is not supported");
    /* uint8 max pooling is exact through float, so it shares the float path */
    if (!(is_max && x->dtype == NC_DTYPE_U8) && (st = nc_require_f32(x, "input X")) != NC_OK)
        return st;
    int include_pad = 0;
    if (!is_max) {
        int64_t c = nc_attr_int(n, "count_include_pad", 0);
        if (c != 0 && c != 1)
            return nc_errorf(NC_ERR_UNSUPPORTED, "attribute count_include_pad = %lld (expected 0 or 1)",
                             (long long)c);
        include_pad = (int)c;
    } else {
        int64_t so = nc_attr_int(n, "storage_order", 0);
        if (so != 0 && so != 1)
            return nc_errorf(NC_ERR_UNSUPPORTED, "attribute storage_order = %lld", (long long)so);
    }
    nc_spatial sp;
    if ((st = nc_spatial_parse(n, x, NULL, 1, &sp)) != NC_OK)
        return st;
    int64_t shape[2 + NC_SP_MAX];
    sp_out_shape(x, x->shape[1], &sp, shape);
    nc_tensor *y = nc_tensor_new(x->dtype, x->ndim, shape);
    if (!y)
        return nc_tensor_new_failure(x->dtype, x->ndim, shape);
    out[0] = y;
    if ((ctx && ctx->shape_only) || y->numel == 0)
        return NC_OK;

    int64_t planes = x->shape[0] * x->shape[1];
    int64_t in_plane = nc_sp_prod(sp.in), out_plane = nc_sp_prod(sp.out);
    if (x->dtype == NC_DTYPE_F32) {
        /* An empty input (a zero spatial size, padded into a non-empty
         * output) has no data: every window is padding and reads nothing,
         * but the row arithmetic needs a real pointer (found by fuzz_onnx). */
        static const float no_data = 0.0f;
        const float *xs = in_plane ? nc_f32(x) : &no_data;
        for (int64_t p = 0; p < planes; p++)
            pool_plane(xs + p * in_plane, nc_f32(y) + p * out_plane, &sp, is_max, include_pad);
        return NC_OK;
    }
    float *xf = nc_malloc((size_t)in_plane * sizeof *xf), *yf = nc_malloc((size_t)out_plane * sizeof *yf);
    if (!xf || !yf) {
        nc_free(xf);
        nc_free(yf);
        nc_tensor_free(y);
        out[0] = NULL;
        return nc_errorf(NC_ERR_NOMEM, "out of memory pooling");
    }
    const uint8_t *xu = x->data;
    uint8_t *yu = y->data;
    for (int64_t p = 0; p < planes; p++) {
        for (int64_t i = 0; i < in_plane; i++)
            xf[i] = xu[p * in_plane + i];
        pool_plane(xf, yf, &sp, 1, 0);
        for (int64_t i = 0; i < out_plane; i++)
            yu[p * out_plane + i] = yf[i] > 0 ? (uint8_t)yf[i] : 0; /* -inf: window all padding */
    }
    nc_free(xf);
    nc_free(yf);
    return NC_OK;
}

nc_status nc_op_averagepool(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                            int n_out, const nc_exec_ctx *ctx)
{
    (void)n_in;
    return pool_run(n, in, out, n_out, ctx, 0);
}

nc_status nc_op_maxpool(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                        int n_out, const nc_exec_ctx *ctx)
{
    (void)n_in;
    return pool_run(n, in, out, n_out, ctx, 1);
}

nc_status nc_op_globalaveragepool(const nc_node *n, const nc_tensor *const *in, int n_in,
                                  nc_tensor **out, int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_in; (void)n_out;
    const nc_tensor *x = in[0];
    nc_status st;
    char b[160];
    if (!x)
        return nc_errorf(NC_ERR_MODEL, "input X is required");
    if ((st = nc_require_f32(x, "input X")) != NC_OK)
        return st;
    if (x->ndim < 2)
        return nc_errorf(NC_ERR_SHAPE, "input of shape %s has no channel dim",
                         nc_shape_str(x->ndim, x->shape, b, sizeof b));
    int64_t shape[NC_MAX_DIMS];
    int64_t plane = 1;
    for (int d = 0; d < x->ndim; d++) {
        shape[d] = d < 2 ? x->shape[d] : 1;
        if (d >= 2)
            plane *= x->shape[d];
    }
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, x->ndim, shape);
    if (!y)
        return nc_tensor_new_failure(NC_DTYPE_F32, x->ndim, shape);
    out[0] = y;
    if ((ctx && ctx->shape_only) || plane == 0)
        return NC_OK;
    const float *xp = nc_f32(x);
    for (int64_t p = 0; p < y->numel; p++) {
        double acc = 0.0; /* double: the oracle should not lose bits on big planes */
        for (int64_t i = 0; i < plane; i++)
            acc += xp[p * plane + i];
        nc_f32(y)[p] = (float)(acc / (double)plane);
    }
    return NC_OK;
}

/* ---- Pad ---- */

/* The pads (begins then ends, one per input dim) of a Pad node, from the
 * attribute (opset < 11) or the inputs pads / axes (opset 11+). */
static nc_status pad_amounts(const nc_node *n, const nc_tensor *const *in, int n_in, int rank,
                             int64_t *pb, int64_t *pe)
{
    for (int d = 0; d < rank; d++)
        pb[d] = pe[d] = 0;
    if (n->opset < 11) {
        const int64_t *v;
        int cnt = nc_attr_ints(n, "pads", &v);
        if (cnt < 0)
            return nc_errorf(NC_ERR_MODEL, "attribute pads is required");
        if (cnt != 2 * rank)
            return nc_errorf(NC_ERR_MODEL, "attribute pads has %d values for an input of rank %d", cnt, rank);
        for (int d = 0; d < rank; d++) {
            pb[d] = v[d];
            pe[d] = v[rank + d];
        }
        return NC_OK;
    }
    const nc_tensor *p = n_in > 1 ? in[1] : NULL;
    const nc_tensor *ax = n_in > 3 ? in[3] : NULL;
    if (!p)
        return nc_errorf(NC_ERR_MODEL, "input pads is required from opset 11");
    if (p->dtype != NC_DTYPE_I64 || p->ndim > 1)
        return nc_errorf(NC_ERR_MODEL, "input pads must be a 1-D int64 tensor (is %s of rank %d)",
                         nc_dtype_name(p->dtype), p->ndim);
    int axes[NC_MAX_DIMS], n_axes = rank;
    for (int d = 0; d < rank; d++)
        axes[d] = d;
    if (ax) {
        if (ax->dtype != NC_DTYPE_I64 || ax->ndim > 1 || ax->numel > rank)
            return nc_errorf(NC_ERR_MODEL, "input axes must be a 1-D int64 tensor of at most %d values",
                             rank);
        n_axes = (int)ax->numel;
        int seen[NC_MAX_DIMS] = {0};
        for (int i = 0; i < n_axes; i++) {
            int64_t a = nc_i64(ax)[i];
            if (a < -rank || a >= rank)
                return nc_errorf(NC_ERR_MODEL, "axes[%d] = %lld is out of range for rank %d", i,
                                 (long long)a, rank);
            axes[i] = (int)(a < 0 ? a + rank : a);
            if (seen[axes[i]]++)
                return nc_errorf(NC_ERR_MODEL, "axis %d appears twice in axes", axes[i]);
        }
    }
    if (p->numel != 2 * n_axes)
        return nc_errorf(NC_ERR_MODEL, "input pads has %lld values for %d axes", (long long)p->numel,
                         n_axes);
    for (int i = 0; i < n_axes; i++) {
        pb[axes[i]] = nc_i64(p)[i];
        pe[axes[i]] = nc_i64(p)[n_axes + i];
    }
    return NC_OK;
}

/* The fill value, read as a double for float data or an int64 for int64 and
 * uint8 data. */
static nc_status pad_constant(const nc_node *n, const nc_tensor *const *in, int n_in, double *fv,
                              int64_t *iv)
{
    *fv = 0.0;
    *iv = 0;
    if (n->opset < 11) {
        *fv = nc_attr_float(n, "value", 0.0f);
        *iv = (int64_t)*fv;
        return NC_OK;
    }
    const nc_tensor *c = n_in > 2 ? in[2] : NULL;
    if (!c || c->numel == 0)
        return NC_OK;
    if (c->numel != 1)
        return nc_errorf(NC_ERR_MODEL, "input constant_value must be a scalar (has %lld values)",
                         (long long)c->numel);
    switch (c->dtype) {
    case NC_DTYPE_F32: *fv = nc_f32(c)[0]; *iv = (int64_t)*fv; break;
    case NC_DTYPE_I64: *iv = nc_i64(c)[0]; *fv = (double)*iv; break;
    case NC_DTYPE_U8: *iv = ((const uint8_t *)c->data)[0]; *fv = (double)*iv; break;
    }
    return NC_OK;
}

nc_status nc_op_pad(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                    int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out; (void)ctx; /* computed even for shape inference: it is cheap and may feed shapes */
    const nc_tensor *x = in[0];
    if (!x)
        return nc_errorf(NC_ERR_MODEL, "input data is required");
    const char *mode = nc_attr_str(n, "mode", "constant");
    if (strcmp(mode, "constant") != 0)
        return nc_errorf(NC_ERR_UNSUPPORTED, "attribute mode = \"%s\": only \"constant\" padding is "
                         "supported", mode);
    int rank = x->ndim;
    int64_t pb[NC_MAX_DIMS], pe[NC_MAX_DIMS], shape[NC_MAX_DIMS];
    nc_status st;
    if ((st = pad_amounts(n, in, n_in, rank, pb, pe)) != NC_OK)
        return st;
    char b1[160];
    for (int d = 0; d < rank; d++) {
        /* bounded so the sum below cannot overflow; pads this large are nonsense anyway */
        if (pb[d] < -SP_DIM_LIMIT || pb[d] > SP_DIM_LIMIT || pe[d] < -SP_DIM_LIMIT || pe[d] > SP_DIM_LIMIT)
            return nc_errorf(NC_ERR_LIMIT, "pads %lld, %lld for dim %d are too large", (long long)pb[d],
                             (long long)pe[d], d);
        shape[d] = x->shape[d] + pb[d] + pe[d];
        if (shape[d] < 0)
            return nc_errorf(NC_ERR_SHAPE, "pads %lld, %lld crop more than dim %d of input %s",
                             (long long)pb[d], (long long)pe[d], d,
                             nc_shape_str(rank, x->shape, b1, sizeof b1));
    }
    double fv;
    int64_t iv;
    if ((st = pad_constant(n, in, n_in, &fv, &iv)) != NC_OK)
        return st;
    nc_tensor *y = nc_tensor_new(x->dtype, rank, shape);
    if (!y)
        return nc_tensor_new_failure(x->dtype, rank, shape);
    out[0] = y;
    if (y->numel == 0)
        return NC_OK;
    for (int64_t i = 0; i < y->numel; i++)
        switch (y->dtype) {
        case NC_DTYPE_F32: nc_f32(y)[i] = (float)fv; break;
        case NC_DTYPE_I64: nc_i64(y)[i] = iv; break;
        case NC_DTYPE_U8: ((uint8_t *)y->data)[i] = (uint8_t)iv; break;
        }
    if (x->numel == 0)
        return NC_OK;
    if (rank == 0) {
        memcpy(y->data, x->data, nc_dtype_size(x->dtype));
        return NC_OK;
    }

    /* Copy the input row by row (rows along the last dim) into place; a row
     * whose outer index falls outside the output is cropped away. */
    size_t es = nc_dtype_size(x->dtype);
    int last = rank - 1;
    int64_t w_in = x->shape[last], w_out = shape[last];
    int64_t c0 = pb[last] < 0 ? -pb[last] : 0;            /* first input column kept */
    int64_t c1 = w_in < w_out - pb[last] ? w_in : w_out - pb[last]; /* one past the last */
    int64_t idx[NC_MAX_DIMS] = {0};
    int64_t rows = x->numel / w_in;
    for (int64_t r = 0; r < rows; r++) {
        int64_t off = 0;
        int inside = 1;
        for (int d = 0; d < last && inside; d++) {
            int64_t o = idx[d] + pb[d];
            inside = o >= 0 && o < shape[d];
            off = off * shape[d] + o;
        }
        if (inside && c1 > c0)
            memcpy((char *)y->data + (size_t)((off * w_out + c0 + pb[last]) * (int64_t)es),
                   (const char *)x->data + (size_t)((r * w_in + c0) * (int64_t)es),
                   (size_t)(c1 - c0) * es);
        for (int d = last - 1; d >= 0; d--) {
            if (++idx[d] < x->shape[d])
                break;
            idx[d] = 0;
        }
    }
    return NC_OK;
}
