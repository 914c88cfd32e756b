/* Nonlinear layers in the training engine: the element-wise functions and
 * Mul (NC_SNN_NONLINEAR, expectation compensation, kernels/nonlinear.h).
 *
 * Forward over a layer's `steps` steps (T in BPTT; 1 for a value constant
 * over time, and in QCFS, where values are rates): the sums S_t of each
 * input, the totals P_t = t·f(S_t/t) with the backends' own functions, and
 * the outputs y_t = P_t − P_{t−1}, so the engine's forward is the cpu
 * backend's. With one step it is f of the input.
 *
 * Backward: with g_t = dL/dy_t, dL/dP_t = g_t − g_{t+1} (g_{T+1} = 0), and
 * dP_t/dS_t = f'(S_t/t) (P = t·f(S/t)); Mul's P_t = S_a·S_b/t has
 * dP_t/dS_a = S_b/t, dP_t/dS_b = S_a/t. An input x_τ enters every S_t with
 * t >= τ, so dL/dx_τ = Σ_{t>=τ} dL/dS_t: a sum from the last step back. A
 * constant input (N rows) gets the sum over τ. The means S_t/t are kept
 * from the forward (m; Mul's second factor's, at each output, in aux). */
#include <math.h>
#include <string.h>

#include "kernels/nonlinear.h"
#include "snn/base/error.h"
#include "train_internal.h"

nc_status nc_tr_nonlinear_check(const nc_snn_layer *L, const char *mode_name)
{
    if (nc_nonlinear_fn_is_elementwise(L->nl.fn) || L->nl.fn == NC_NL_MUL)
        return NC_OK;
    return nc_errorf(NC_ERR_UNSUPPORTED, "%s training: layer '%s' is Nonlinear %s; the engine trains the "
                     "element-wise functions and Mul (no gradient of MatMul, LayerNorm or Softmax yet)", mode_name,
                     L->name, nc_nonlinear_fn_name(L->nl.fn));
}

/* f'(x) of the element-wise functions (nc_nl_elem's formulas); at a kink
 * of the hard ones, the right derivative. */
static float elem_grad(int fn, float x, float alpha, float beta)
{
    switch (fn) {
    case NC_NL_SIGMOID: {
        float s = 1.0f / (1.0f + expf(-x));
        return s * (1.0f - s);
    }
    case NC_NL_SILU: {
        float s = 1.0f / (1.0f + expf(-x));
        return s * (1.0f + x * (1.0f - s));
    }
    case NC_NL_TANH: {
        float t = tanhf(x);
        return 1.0f - t * t;
    }
    case NC_NL_HARDSIGMOID: {
        float z = alpha * x + beta;
        return z >= 0.0f && z < 1.0f ? alpha : 0.0f;
    }
    case NC_NL_HARDSWISH: return x < -3.0f ? 0.0f : x >= 3.0f ? 1.0f : (2.0f * x + 3.0f) / 6.0f;
    case NC_NL_GELU:
        return 0.5f * (1.0f + erff(x * 0.70710678118654752f)) + x * 0.39894228040143268f * expf(-0.5f * x * x);
    case NC_NL_GELU_TANH: {
        const float c = 0.79788456080286536f;
        float t = tanhf(c * (x + 0.044715f * x * x * x));
        return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * 0.044715f * x * x);
    }
    default: return 0.0f;
    }
}

/* Row r (of a layer of `steps` steps) of input X: row r of an input of the
 * same steps, or row r mod N of a constant one. */
static float *row_of(const nc_tr_layer *X, float *base, int64_t r, int N)
{
    return base + (X->steps == 1 ? r % N : r) * X->size;
}

void nc_tr_nonlinear_fwd(nc_tr_net *net, int i)
{
    const nc_snn *s = net->s;
    const nc_snn_layer *L = &s->layers[i];
    nc_tr_layer *Y = &net->l[i];
    const nc_tr_layer *A = &net->l[L->inputs[0]], *B = L->n_inputs > 1 ? &net->l[L->inputs[1]] : NULL;
    const nc_snn_layer *XA = &s->layers[L->inputs[0]], *XB = B ? &s->layers[L->inputs[1]] : NULL;
    int N = net->N, mul = L->nl.fn == NC_NL_MUL;
    int64_t S = Y->size;
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR((int64_t)N * S * Y->steps))")
    for (int64_t n = 0; n < N; n++)
        for (int64_t e = 0; e < S; e++) {
            int64_t be = mul ? nc_nl_broadcast_index(XA->shape, XA->ndim, XB->shape, XB->ndim, e) : 0;
            float sa = 0.0f, sb = 0.0f, last = 0.0f;
            for (int t = 0; t < Y->steps; t++) {
                int64_t r = (int64_t)t * N + n;
                float tf = (float)(t + 1), p;
                sa += row_of(A, A->y, r, N)[e];
                if (mul) {
                    sb += row_of(B, B->y, r, N)[be];
                    p = nc_nl_mul_total(sa, sb, t + 1);
                    Y->aux[r * S + e] = sb / tf;
                } else {
                    p = tf * nc_nl_elem(L->nl.fn, sa / tf, L->nl.alpha, L->nl.beta);
                }
                Y->m[r * S + e] = sa / tf;
                Y->y[r * S + e] = p - last;
                last = p;
            }
        }
}

void nc_tr_nonlinear_bwd(nc_tr_net *net, int i)
{
    const nc_snn *s = net->s;
    const nc_snn_layer *L = &s->layers[i];
    nc_tr_layer *Y = &net->l[i];
    nc_tr_layer *A = &net->l[L->inputs[0]], *B = L->n_inputs > 1 ? &net->l[L->inputs[1]] : NULL;
    const nc_snn_layer *XA = &s->layers[L->inputs[0]], *XB = B ? &s->layers[L->inputs[1]] : NULL;
    int N = net->N, mul = L->nl.fn == NC_NL_MUL;
    int64_t S = Y->size;
    /* serial: a broadcast factor's gradient gathers from many outputs */
    for (int64_t n = 0; n < N; n++)
        for (int64_t e = 0; e < S; e++) {
            int64_t be = mul ? nc_nl_broadcast_index(XA->shape, XA->ndim, XB->shape, XB->ndim, e) : 0;
            float acc_a = 0.0f, acc_b = 0.0f, g_next = 0.0f;
            for (int t = Y->steps - 1; t >= 0; t--) {
                int64_t r = (int64_t)t * N + n;
                float g = Y->dy[r * S + e], dP = g - g_next;
                g_next = g;
                if (mul) {
                    acc_a += dP * Y->aux[r * S + e];
                    acc_b += dP * Y->m[r * S + e];
                } else {
                    acc_a += dP * elem_grad(L->nl.fn, Y->m[r * S + e], L->nl.alpha, L->nl.beta);
                }
                if (A->dy)
                    row_of(A, A->dy, r, N)[e] += acc_a;
                if (B && B->dy)
                    row_of(B, B->dy, r, N)[be] += acc_b;
            }
        }
}
