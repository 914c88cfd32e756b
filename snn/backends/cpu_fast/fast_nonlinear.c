/* cpu-fast's Nonlinear layers (NC_SNN_NONLINEAR, expectation compensation):
 * the same floats as the reference (backend_cpu_ref.c, run_nonlinear), from
 * the same kernels/nonlinear.h functions in the same order, faster:
 *  - a sample's sums and totals stay in its thread's workspace (fast_ws.nl);
 *  - the loops of the element-wise functions (specialised per function:
 *    the switch of nc_nl_elem leaves the loop), of LayerNorm's and
 *    Softmax's rows and of the sums are the kernel set's (K->nl_*,
 *    fast_nonlinear_impl.h), vectorised for its instruction set: e^x and
 *    erf are kernels/nonlinear.h's own, whose selects become blends;
 *  - Mul reads its broadcast operand through a table made at plan time, not
 *    a division per dimension per element;
 *  - MatMul takes the means once per step (the reference divides each
 *    factor again for every product it enters: the same quotients), then
 *    computes each row of the product as an affine layer whose events are
 *    the row's non-zero means of x and whose weights are the means of y,
 *    [k][n] (K->affine: outputs in registers, vectorised over n). Each
 *    output still adds its k products in ascending k, starting from +0, and
 *    a zero mean's product (±0) left out changes no sum that is never −0.
 * Values are dense, in the reference's (NCHW) order (fast_layer.cl 0). */
#include <string.h>

#include "fast_plan.h"
#include "kernels/nonlinear.h"
#include "snn/base/alloc.h"

/* The floats a Nonlinear layer keeps in a workspace (fast_ws.nl): its
 * inputs' sums, then its last totals, then (MatMul) the means of x as
 * [b][m][k] and of y as [b][k][n]. */
static void nl_layout(const nc_snn *s, const nc_snn_layer *L, int64_t *x, int64_t *y, int64_t *size, int64_t *means)
{
    *x = nc_snn_layer_size(&s->layers[L->inputs[0]]);
    *y = L->n_inputs > 1 ? nc_snn_layer_size(&s->layers[L->inputs[1]]) : 0;
    *size = nc_snn_layer_size(L);
    *means = L->nl.fn == NC_NL_MATMUL ? *x + *y : 0;
}

int64_t nc_fast_nl_floats(const nc_snn *s, const nc_snn_layer *L)
{
    int64_t x, y, size, means;
    nl_layout(s, L, &x, &y, &size, &means);
    return x + y + size + means;
}

float *nc_fast_nl_sums(const nc_snn *s, const nc_snn_layer *L, const fast_ws *W, int i, int k)
{
    return W->nl[i] + (k ? nc_snn_layer_size(&s->layers[L->inputs[0]]) : 0);
}

void nc_fast_nl_reset(const nc_snn *s, const nc_snn_layer *L, fast_ws *W, int i)
{
    int64_t x, y, size, means;
    nl_layout(s, L, &x, &y, &size, &means);
    memset(W->nl[i], 0, (size_t)(x + y + size) * sizeof(float));
}

int nc_fast_plan_nonlinear(const nc_snn *s, const nc_snn_layer *L, fast_layer *F)
{
    F->rep = REP_DENSE;
    F->cl = 0;
    F->in_dense = 0;
    if (L->nl.fn != NC_NL_MUL)
        return 1;
    const nc_snn_layer *X = &s->layers[L->inputs[0]], *Y = &s->layers[L->inputs[1]];
    if (nc_snn_layer_size(Y) == F->size)
        return 1; /* no broadcast: element e of both */
    if (!(F->bidx = nc_malloc((size_t)F->size * sizeof *F->bidx)))
        return 0;
    for (int64_t e = 0; e < F->size; e++)
        F->bidx[e] = (int32_t)nc_nl_broadcast_index(X->shape, X->ndim, Y->shape, Y->ndim, e);
    return 1;
}

/* MatMul's totals into y (see the file comment): the means into mx
 * [b][m][k] and my [b][k][n], then each row as an affine layer. */
static void run_matmul(const fast_plan *P, const nc_snn_layer *L, const float *sx, const float *sy, float *mx,
                       float *my, int32_t *idx, float *val, float *y, int t)
{
    const nc_snn *s = P->s;
    const nc_snn_layer *X = &s->layers[L->inputs[0]], *Y = &s->layers[L->inputs[1]];
    int64_t m, k, n, size = nc_snn_layer_size(L);
    nc_nl_matmul_dims(L, X, Y, &m, &k, &n);
    float tf = (float)t;
    /* element (i, q) of x and (q, j) of y in their stored order */
    int64_t xi = L->nl.trans_x ? 1 : k, xq = L->nl.trans_x ? m : 1, yq = L->nl.trans_y ? 1 : n,
            yj = L->nl.trans_y ? k : 1;
    for (int64_t b = 0; b < size / (m * n); b++) {
        const float *bx = sx + b * m * k, *by = sy + b * k * n;
        float *bmx = mx + b * m * k, *bmy = my + b * k * n;
        for (int64_t i = 0; i < m; i++)
            for (int64_t q = 0; q < k; q++)
                bmx[i * k + q] = bx[i * xi + q * xq] / tf;
        for (int64_t q = 0; q < k; q++)
            for (int64_t j = 0; j < n; j++)
                bmy[q * n + j] = by[q * yq + j * yj] / tf;
        for (int64_t i = 0; i < m; i++) {
            float *row = y + (b * m + i) * n;
            memset(row, 0, (size_t)n * sizeof *row);
            int64_t ne = P->K->compact(bmx + i * k, 1, k, 0, idx, val);
            P->K->affine(bmy, n, idx, val, ne, row);
            for (int64_t j = 0; j < n; j++)
                row[j] = tf * row[j];
        }
    }
}

int64_t nc_fast_nl_step(const fast_plan *P, fast_ws *W, int i, int t)
{
    const nc_snn *s = P->s;
    const nc_snn_layer *L = &s->layers[i];
    const nc_nonlinear_params *p = &L->nl;
    int64_t xs, ys, size, means;
    nl_layout(s, L, &xs, &ys, &size, &means);
    const float *sx = W->nl[i], *sy = W->nl[i] + xs;
    float *tot = W->nl[i] + xs + ys, *y = W->dense[i], tf = (float)t;
    const fast_layer *F = &P->L[i];
    int64_t ops = 0;
    if (nc_nonlinear_fn_is_elementwise(p->fn)) {
        P->K->nl_elem(p->fn, p->alpha, p->beta, sx, y, size, tf);
    } else if (p->fn == NC_NL_MUL) {
        for (int64_t e = 0; e < size; e++)
            y[e] = nc_nl_mul_total(sx[e], sy[F->bidx ? F->bidx[e] : e], t);
        ops = size;
    } else if (p->fn == NC_NL_MATMUL) {
        int64_t m, k, n;
        nc_nl_matmul_dims(L, &s->layers[L->inputs[0]], &s->layers[L->inputs[1]], &m, &k, &n);
        run_matmul(P, L, sx, sy, tot + size, tot + size + xs, W->ev_idx, W->ev_val, y, t);
        ops = size * k;
    } else { /* LayerNorm, Softmax: rows along the axis, as the reference */
        P->K->nl_rows(p->fn, p->eps, L->shape, L->ndim, p->axis, sx, y, t);
    }
    P->K->nl_emit(y, tot, size);
    return ops;
}
