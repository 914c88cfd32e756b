/* Linear and normalisation ops of the reference forward pass: Conv (im2col
 * + SGEMM), Gemm, MatMul and inference-mode BatchNormalization. */
#include "snn/base/blas.h"
#include <limits.h>
#include <math.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "ann_ops.h"
#include "ann_ops_util.h"
#include "snn/base/error.h"

/* CBLAS takes int sizes (Debian's OpenBLAS is the 32-bit-int build). */
static nc_status blas_dims_ok(int64_t a, int64_t b, int64_t c)
{
    if (a > INT_MAX || b > INT_MAX || c > INT_MAX)
        return nc_errorf(NC_ERR_LIMIT, "matrix dimensions %lld x %lld x %lld exceed the BLAS int range",
                         (long long)a, (long long)b, (long long)c);
    return NC_OK;
}

static int shape_only(const nc_exec_ctx *ctx)
{
    return ctx && ctx->shape_only;
}

/* ---- Conv ---- */

/* Unfolds one group's input planes x [Cg, in...] into col [Cg*K, P]: row
 * (c, kd, kh, kw) holds, for each output position, the input value under
 * that kernel tap (zero in the padding). */
static void im2col(const float *x, int64_t cg, const nc_spatial *sp, float *col)
{
    const int64_t *in = sp->in, *k = sp->k, *s = sp->stride, *dl = sp->dil, *pb = sp->pad_b;
    const int64_t *out = sp->out;
    int64_t in_plane = nc_sp_prod(in);
    for (int64_t c = 0; c < cg; c++)
        for (int64_t a = 0; a < k[0]; a++)
            for (int64_t b = 0; b < k[1]; b++)
                for (int64_t e = 0; e < k[2]; e++) {
                    const float *xc = x + c * in_plane;
                    for (int64_t od = 0; od < out[0]; od++) {
                        int64_t id = od * s[0] - pb[0] + a * dl[0];
                        for (int64_t oh = 0; oh < out[1]; oh++) {
                            int64_t ih = oh * s[1] - pb[1] + b * dl[1];
                            int row_ok = id >= 0 && id < in[0] && ih >= 0 && ih < in[1];
                            const float *xr = xc + (id * in[1] + ih) * in[2];
                            for (int64_t ow = 0; ow < out[2]; ow++) {
                                int64_t iw = ow * s[2] - pb[2] + e * dl[2];
                                *col++ = row_ok && iw >= 0 && iw < in[2] ? xr[iw] : 0.0f;
                            }
                        }
                    }
                }
}

static nc_status conv_check(const nc_tensor *x, const nc_tensor *w, const nc_tensor *b, int64_t group)
{
    char b1[160], b2[160];
    nc_status st;
    if ((st = nc_require_f32(x, "input X")) != NC_OK || (st = nc_require_f32(w, "weight W")) != NC_OK ||
        (b && (st = nc_require_f32(b, "bias B")) != NC_OK))
        return st;
    if (w->ndim != x->ndim || x->ndim < 3)
        return nc_errorf(NC_ERR_SHAPE, "input X %s and weight W %s must both be [N, C, ...] of the same "
                         "rank (at least 3)", nc_shape_str(x->ndim, x->shape, b1, sizeof b1),
                         nc_shape_str(w->ndim, w->shape, b2, sizeof b2));
    int64_t c_in;
    if (group < 1 || !nc_mul_i64(w->shape[1], group, &c_in))
        return nc_errorf(NC_ERR_MODEL, "attribute group = %lld is invalid", (long long)group);
    if (c_in != x->shape[1] || w->shape[0] % group != 0)
        return nc_errorf(NC_ERR_SHAPE, "input X %s has %lld channels but weight W %s with group %lld "
                         "expects %lld input channels and a multiple of %lld output channels",
                         nc_shape_str(x->ndim, x->shape, b1, sizeof b1), (long long)x->shape[1],
                         nc_shape_str(w->ndim, w->shape, b2, sizeof b2), (long long)group,
                         (long long)c_in, (long long)group);
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
        return nc_errorf(NC_ERR_SHAPE, "bias B %s does not match the %lld output channels of weight W %s",
                         nc_shape_str(b->ndim, b->shape, b1, sizeof b1), (long long)w->shape[0],
                         nc_shape_str(w->ndim, w->shape, b2, sizeof b2));
    return NC_OK;
}

nc_status nc_op_conv(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                     int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    const nc_tensor *x = in[0], *w = in[1], *bias = n_in > 2 ? in[2] : NULL;
    if (!x || !w)
        return nc_errorf(NC_ERR_MODEL, "inputs X and W are required");
    int64_t group = nc_attr_int(n, "group", 1);
    nc_status st;
    nc_spatial sp;
    if ((st = conv_check(x, w, bias, group)) != NC_OK ||
        (st = nc_spatial_parse(n, x, w->shape + 2, 0, &sp)) != NC_OK)
        return st;
    int64_t shape[2 + NC_SP_MAX];
    shape[0] = x->shape[0];
    shape[1] = w->shape[0];
    for (int i = 0; i < sp.nsp; i++)
        shape[2 + i] = sp.out[NC_SP_MAX - sp.nsp + i];
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, x->ndim, shape);
    if (!y)
        return nc_tensor_new_failure(NC_DTYPE_F32, x->ndim, shape);
    out[0] = y;
    if (shape_only(ctx) || y->numel == 0)
        return NC_OK;

    int64_t cg = w->shape[1], mg = w->shape[0] / group;
    int64_t kk = cg * nc_sp_prod(sp.k), p = nc_sp_prod(sp.out), in_plane = nc_sp_prod(sp.in);
    /* A 1x1 kernel with unit stride and no padding reads the input as is. */
    int direct = nc_sp_prod(sp.k) == 1 && nc_sp_prod(sp.stride) == 1;
    for (int i = 0; i < NC_SP_MAX && direct; i++)
        direct = sp.pad_b[i] == 0 && sp.pad_e[i] == 0;
    float *col = NULL;
    int64_t col_n;
    if ((st = blas_dims_ok(mg, p, kk)) != NC_OK)
        goto fail;
    if (!direct) {
        if (!nc_mul_i64(kk, p, &col_n) || (uint64_t)col_n > SIZE_MAX / sizeof *col ||
            !(col = nc_malloc((size_t)col_n * sizeof *col))) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory for a %lld x %lld im2col buffer", (long long)kk,
                           (long long)p);
            goto fail;
        }
    }
    const float *xp = nc_f32(x), *wp = nc_f32(w);
    float *yp = nc_f32(y);
    /* an empty input (no channel, or no position, the output all padding): every tap reads a zero, and
       x holds no data to point into */
    int empty = x->numel == 0;
    if (empty)
        memset(yp, 0, (size_t)y->numel * sizeof *yp);
    for (int64_t b = 0; b < x->shape[0] && !empty; b++)
        for (int64_t g = 0; g < group; g++) {
            const float *xg = xp + (b * x->shape[1] + g * cg) * in_plane;
            if (!direct)
                im2col(xg, cg, &sp, col);
            nc_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)mg, (int)p, (int)kk, 1.0f,
                        wp + g * mg * kk, (int)kk, direct ? xg : col, (int)p, 0.0f,
                        yp + (b * w->shape[0] + g * mg) * p, (int)p);
        }
    if (bias)
        for (int64_t b = 0; b < x->shape[0]; b++)
            for (int64_t m = 0; m < w->shape[0]; m++) {
                float *ym = yp + (b * w->shape[0] + m) * p;
                for (int64_t i = 0; i < p; i++)
                    ym[i] += nc_f32(bias)[m];
            }
    nc_free(col);
    return NC_OK;
fail:
    nc_tensor_free(y);
    out[0] = NULL;
    return st;
}

/* ---- Gemm ---- */

nc_status nc_op_gemm(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                     int n_out, const nc_exec_ctx *ctx)
{
    (void)n_out;
    const nc_tensor *a = in[0], *b = in[1], *c = n_in > 2 ? in[2] : NULL;
    char b1[160], b2[160];
    if (!a || !b)
        return nc_errorf(NC_ERR_MODEL, "inputs A and B are required");
    nc_status st;
    if ((st = nc_require_f32(a, "input A")) != NC_OK || (st = nc_require_f32(b, "input B")) != NC_OK ||
        (c && (st = nc_require_f32(c, "input C")) != NC_OK))
        return st;
    int64_t ta = nc_attr_int(n, "transA", 0), tb = nc_attr_int(n, "transB", 0);
    float alpha = nc_attr_float(n, "alpha", 1.0f), beta = nc_attr_float(n, "beta", 1.0f);
    if (ta != 0 && ta != 1)
        return nc_errorf(NC_ERR_UNSUPPORTED, "attribute transA = %lld (expected 0 or 1)", (long long)ta);
    if (tb != 0 && tb != 1)
        return nc_errorf(NC_ERR_UNSUPPORTED, "attribute transB = %lld (expected 0 or 1)", (long long)tb);
    if (a->ndim != 2 || b->ndim != 2)
        return nc_errorf(NC_ERR_SHAPE, "inputs A %s and B %s must be matrices",
                         nc_shape_str(a->ndim, a->shape, b1, sizeof b1),
                         nc_shape_str(b->ndim, b->shape, b2, sizeof b2));
    int64_t m = a->shape[ta ? 1 : 0], k = a->shape[ta ? 0 : 1];
    int64_t kb = b->shape[tb ? 1 : 0], nn = b->shape[tb ? 0 : 1];
    if (k != kb)
        return nc_errorf(NC_ERR_SHAPE, "A %s (transA=%lld) and B %s (transB=%lld) have inner dims %lld and %lld",
                         nc_shape_str(2, a->shape, b1, sizeof b1), (long long)ta,
                         nc_shape_str(2, b->shape, b2, sizeof b2), (long long)tb, (long long)k,
                         (long long)kb);
    /* C broadcasts one way to [M, N]: a stride of 0 repeats it. */
    int64_t c_rs = 0, c_cs = 0;
    if (c) {
        int64_t cr = c->ndim == 2 ? c->shape[0] : 1;
        int64_t cc = c->ndim >= 1 ? c->shape[c->ndim - 1] : 1;
        if (c->ndim > 2 || (cr != 1 && cr != m) || (cc != 1 && cc != nn))
            return nc_errorf(NC_ERR_SHAPE, "C %s does not broadcast to the output [%lld, %lld]",
                             nc_shape_str(c->ndim, c->shape, b1, sizeof b1), (long long)m, (long long)nn);
        c_rs = cr == 1 ? 0 : cc;
        c_cs = cc == 1 ? 0 : 1;
    }
    int64_t shape[2] = {m, nn};
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, 2, shape);
    if (!y)
        return nc_tensor_new_failure(NC_DTYPE_F32, 2, shape);
    out[0] = y;
    if (shape_only(ctx) || y->numel == 0)
        return NC_OK;
    if ((st = blas_dims_ok(m, nn, k)) != NC_OK) {
        nc_tensor_free(y);
        out[0] = NULL;
        return st;
    }
    float *yp = nc_f32(y);
    if (k > 0)
        nc_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                    (int)m, (int)nn, (int)k, alpha, nc_f32(a), (int)a->shape[1], nc_f32(b),
                    (int)b->shape[1], 0.0f, yp, (int)nn);
    if (c && c->numel)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++)
                yp[i * nn + j] += beta * nc_f32(c)[i * c_rs + j * c_cs];
    return NC_OK;
}

/* ---- MatMul ---- */

nc_status nc_op_matmul(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                       int n_out, const nc_exec_ctx *ctx)
{
    (void)n; (void)n_in; (void)n_out;
    const nc_tensor *a = in[0], *b = in[1];
    char b1[160], b2[160];
    nc_status st;
    if (!a || !b)
        return nc_errorf(NC_ERR_MODEL, "inputs A and B are required");
    if ((st = nc_require_f32(a, "input A")) != NC_OK || (st = nc_require_f32(b, "input B")) != NC_OK)
        return st;
    if (a->ndim < 1 || b->ndim < 1)
        return nc_errorf(NC_ERR_SHAPE, "MatMul of a scalar: A %s, B %s",
                         nc_shape_str(a->ndim, a->shape, b1, sizeof b1),
                         nc_shape_str(b->ndim, b->shape, b2, sizeof b2));
    /* numpy: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; the added dim
     * is dropped from the result. */
    int64_t m = a->ndim == 1 ? 1 : a->shape[a->ndim - 2], k = a->shape[a->ndim - 1];
    int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    int64_t nn = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    if (k != kb)
        return nc_errorf(NC_ERR_SHAPE, "A %s and B %s have inner dims %lld and %lld",
                         nc_shape_str(a->ndim, a->shape, b1, sizeof b1),
                         nc_shape_str(b->ndim, b->shape, b2, sizeof b2), (long long)k, (long long)kb);
    int ba = a->ndim > 2 ? a->ndim - 2 : 0, bb = b->ndim > 2 ? b->ndim - 2 : 0;
    int nb = ba > bb ? ba : bb;
    int64_t bshape[NC_MAX_DIMS], sa[NC_MAX_DIMS], sb[NC_MAX_DIMS];
    int64_t stride_a = m * k, stride_b = k * nn; /* elements per batch matrix */
    for (int d = nb - 1; d >= 0; d--) {
        int da = d - (nb - ba), db = d - (nb - bb);
        int64_t ea = da >= 0 ? a->shape[da] : 1, eb = db >= 0 ? b->shape[db] : 1;
        if (ea != eb && ea != 1 && eb != 1)
            return nc_errorf(NC_ERR_SHAPE, "batch dims of A %s and B %s do not broadcast",
                             nc_shape_str(a->ndim, a->shape, b1, sizeof b1),
                             nc_shape_str(b->ndim, b->shape, b2, sizeof b2));
        bshape[d] = ea == 1 ? eb : ea;
        sa[d] = ea == 1 ? 0 : stride_a;
        sb[d] = eb == 1 ? 0 : stride_b;
        stride_a *= ea;
        stride_b *= eb;
    }
    int64_t shape[NC_MAX_DIMS];
    int nd = 0;
    for (int d = 0; d < nb; d++)
        shape[nd++] = bshape[d];
    if (a->ndim > 1)
        shape[nd++] = m;
    if (b->ndim > 1)
        shape[nd++] = nn;
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, nd, shape);
    if (!y)
        return nc_tensor_new_failure(NC_DTYPE_F32, nd, shape);
    out[0] = y;
    if (shape_only(ctx) || y->numel == 0)
        return NC_OK;
    int64_t batches = y->numel / (m * nn);
    /* When B is one matrix shared by every batch, the batches of A stack into
     * one tall product. */
    int shared_b = 1;
    for (int d = 0; d < nb; d++)
        shared_b &= sb[d] == 0;
    int64_t rows = shared_b ? m * batches : m, loops = shared_b ? 1 : batches;
    if ((st = blas_dims_ok(rows, nn, k)) != NC_OK) {
        nc_tensor_free(y);
        out[0] = NULL;
        return st;
    }
    if (k == 0)
        return NC_OK;
    int64_t idx[NC_MAX_DIMS] = {0};
    for (int64_t i = 0; i < loops; i++) {
        int64_t oa = 0, ob = 0;
        for (int d = 0; d < nb; d++) {
            oa += idx[d] * sa[d];
            ob += idx[d] * sb[d];
        }
        nc_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)nn, (int)k, 1.0f,
                    nc_f32(a) + oa, (int)k, nc_f32(b) + ob, (int)nn, 0.0f, nc_f32(y) + i * m * nn,
                    (int)nn);
        for (int d = nb - 1; d >= 0; d--) {
            if (++idx[d] < bshape[d])
                break;
            idx[d] = 0;
        }
    }
    return NC_OK;
}

/* ---- BatchNormalization (inference) ---- */

nc_status nc_op_batchnorm(const nc_node *n, const nc_tensor *const *in, int n_in, nc_tensor **out,
                          int n_out, const nc_exec_ctx *ctx)
{
    static const char *names[] = {"input X", "scale", "B", "input_mean", "input_var"};
    const nc_tensor *x = in[0];
    char b1[160], b2[160];
    nc_status st;
    for (int i = 0; i < 5; i++) {
        if (i >= n_in || !in[i])
            return nc_errorf(NC_ERR_MODEL, "input %s is required", names[i]);
        if ((st = nc_require_f32(in[i], names[i])) != NC_OK)
            return st;
    }
    int64_t tm = nc_attr_int(n, "training_mode", 0);
    if (tm != 0)
        return nc_errorf(NC_ERR_UNSUPPORTED, "attribute training_mode = %lld: only inference is supported",
                         (long long)tm);
    for (int o = 1; o < n_out; o++)
        if (nc_output_used(n, n_out, o))
            return nc_errorf(NC_ERR_UNSUPPORTED, "output %d (training statistics) is not supported", o);
    if (x->ndim < 2)
        return nc_errorf(NC_ERR_SHAPE, "input X %s has no channel dim",
                         nc_shape_str(x->ndim, x->shape, b1, sizeof b1));
    /* opset < 9: spatial=0 means per-element statistics, the same thing
     * only when there are no spatial dims */
    if (nc_attr_int(n, "spatial", 1) == 0 && x->ndim > 2)
        return nc_errorf(NC_ERR_UNSUPPORTED, "attribute spatial = 0 with spatial dims");
    int64_t ch = x->shape[1];
    for (int i = 1; i < 5; i++)
        if (in[i]->ndim != 1 || in[i]->shape[0] != ch)
            return nc_errorf(NC_ERR_SHAPE, "%s %s does not match the %lld channels of input X %s",
                             names[i], nc_shape_str(in[i]->ndim, in[i]->shape, b1, sizeof b1),
                             (long long)ch, nc_shape_str(x->ndim, x->shape, b2, sizeof b2));
    float eps = nc_attr_float(n, "epsilon", 1e-5f);
    nc_tensor *y = nc_tensor_new(NC_DTYPE_F32, x->ndim, x->shape);
    if (!y)
        return nc_tensor_new_failure(NC_DTYPE_F32, x->ndim, x->shape);
    out[0] = y;
    if (shape_only(ctx) || y->numel == 0)
        return NC_OK;
    int64_t plane = x->numel / (x->shape[0] * ch);
    const float *scale = nc_f32(in[1]), *bias = nc_f32(in[2]), *mean = nc_f32(in[3]), *var = nc_f32(in[4]);
    const float *xp = nc_f32(x);
    float *yp = nc_f32(y);
    for (int64_t b = 0; b < x->shape[0]; b++)
        for (int64_t c = 0; c < ch; c++) {
            /* the order of ONNX's reference and PyTorch: (x - mean) / sqrt(var + eps) * scale + B */
            float den = sqrtf(var[c] + eps);
            int64_t base = (b * ch + c) * plane;
            for (int64_t i = 0; i < plane; i++)
                yp[base + i] = (xp[base + i] - mean[c]) / den * scale[c] + bias[c];
        }
    return NC_OK;
}
