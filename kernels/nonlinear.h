/* The math of a Nonlinear layer (NC_SNN_NONLINEAR, include/neuroc/snn.h),
 * shared by the CPU backends and the CUDA kernels (compiled as C and as
 * CUDA) so that every backend computes the same floats.
 *
 * Expectation compensation: the layer keeps the sum S_t of each input over
 * steps 1..t and the last cumulative output P_{t−1} = (t−1)·f(S_{t−1}/(t−1));
 * at step t it computes P_t = t·f(S_t/t) and emits P_t − P_{t−1}. The sum of
 * its outputs is P_t itself, so the layer is exact in the mean at every t.
 * P is recomputed from S each step (never accumulated from outputs), so
 * rounding does not build up over a long run. */
#ifndef NC_KERNELS_NONLINEAR_H
#define NC_KERNELS_NONLINEAR_H

#include "neuroc/neuroc.h" /* nc_nonlinear_fn */
#include <string.h>

#include "neuron.h"        /* NC_HD, math.h, stdint.h */

/* The float whose bits are u. */
NC_HD float nc_nl_bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* e^x, and erf(x) below, in float arithmetic alone: no table, no fused
 * multiply-add, no branch (both sides of a choice are computed, then one
 * is selected), so that the C library's expf and erff, whose floats differ
 * between libraries, CPUs and the GPU, are out of the picture: the reference
 * backend, cpu-fast's vector kernels (each lane the same operations) and the
 * CUDA kernels (compiled with --fmad=false) compute the same float, and
 * cpu-fast's loops vectorise. Accuracy against exp and erf in double
 * (tests/test_nonlinear.c, on samples of all floats): e^x within 1.1 ulp
 * (glibc's expf 0.5), erf within 3 ulp (2.67 seen; glibc's erff 0.92).
 *
 * e^x: x = n·ln2 + r, |r| <= ln2/2 (n rounded by adding and subtracting
 * 1.5·2^23; ln2 in two parts, the first with 15 significant bits so that
 * n·ln2_hi is exact), e^r = 1 + r + r²·q(r) with q of degree 4 fitted
 * (Chebyshev) to (e^r − 1 − r)/r², times 2^n as two powers of two (each a
 * normal float, so a result below 2^−126 rounds once). x clamped to
 * [−104, 89]: 0 and +inf beyond; NaN passes. */
NC_HD float nc_nl_expf(float x)
{
    float xc = x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x;
    xc = xc == xc ? xc : 0.0f;
    float n = (xc * 1.44269504f + 12582912.0f) - 12582912.0f;
    float r = (xc - n * 0.693145751953125f) - n * 1.42860677e-06f;
    float q = 0.5f + r * (0.166665763f + r * (0.0416664667f + r * (0.00836317521f + r * 0.00139336463f)));
    float p = 1.0f + (r + (r * r) * q);
    int32_t ni = (int32_t)n, h = ni / 2;
    float y = p * nc_nl_bits_float((uint32_t)(h + 127) << 23) * nc_nl_bits_float((uint32_t)(ni - h + 127) << 23);
    return x == x ? y : x;
}

/* erf(x): for |x| < 1, x·P(x²) with P of degree 6 fitted to erf(x)/x; from
 * 1 on, 1 − e^(h(|x|) − x²) with h of degree 8 in |x| − 2.5 fitted to
 * log erfc(x) + x² on [1, 4] (|x| clamped to 4: erfc(4) < 2^−25, so the
 * result is 1); the sign of x (erf(−0) = −0). */
NC_HD float nc_nl_erff(float x)
{
    float a = fabsf(x), u = a * a;
    float small = 7.93349391e-05f; /* Horner, highest power first */
    small = -0.000803484698f + u * small;
    small = 0.00519121857f + u * small;
    small = -0.0268553998f + u * small;
    small = 0.112836257f + u * small;
    small = -0.376126289f + u * small;
    small = a * (1.12837923f + u * small);
    float ac = a < 1.0f ? 1.0f : a > 4.0f ? 4.0f : a, t = ac - 2.5f;
    float h = 1.6140616e-06f;
    h = -1.33093899e-05f + t * h;
    h = 7.73944266e-05f + t * h;
    h = -0.000420144555f + t * h;
    h = 0.00216516037f + t * h;
    h = -0.0108585171f + t * h;
    h = 0.0561063588f + t * h;
    h = -0.352680683f + t * h;
    h = -1.55681527f + t * h;
    float big = 1.0f - nc_nl_expf(h - ac * ac);
    return copysignf(a < 1.0f ? small : big, x);
}

/* f(x) of the element-wise functions (NC_NL_SIGMOID .. NC_NL_GELU_TANH);
 * the formulas of the ONNX operators the ANN side runs (e^x and erf as
 * above; tanh the C library's). */
NC_HD float nc_nl_elem(int fn, float x, float alpha, float beta)
{
    switch (fn) {
    case NC_NL_SIGMOID: return 1.0f / (1.0f + nc_nl_expf(-x));
    case NC_NL_SILU: return x / (1.0f + nc_nl_expf(-x));
    case NC_NL_TANH: return tanhf(x);
    case NC_NL_HARDSIGMOID: return fminf(fmaxf(alpha * x + beta, 0.0f), 1.0f);
    case NC_NL_HARDSWISH: return x * fminf(fmaxf(x / 6.0f + 0.5f, 0.0f), 1.0f);
    case NC_NL_GELU: return 0.5f * x * (1.0f + nc_nl_erff(x * 0.70710678118654752f));
    case NC_NL_GELU_TANH:
        return 0.5f * x * (1.0f + tanhf(0.79788456080286536f * (x + 0.044715f * x * x * x)));
    default: return 0.0f;
    }
}

/* One step of an element-wise function for one neuron: adds x to the sum
 * *S, and returns the increment of t·f(mean) (t = 1, 2, ...; *P the last). */
NC_HD float nc_nl_elem_step(int fn, float alpha, float beta, float *S, float *P, float x, int t)
{
    *S += x;
    float tf = (float)t;
    float p = tf * nc_nl_elem(fn, *S / tf, alpha, beta);
    float y = p - *P;
    *P = p;
    return y;
}

/* Offset in y of element e of x (NC_NL_MUL): y's dimensions right-aligned
 * against x's, each x's or 1 (broadcast). */
NC_HD int64_t nc_nl_broadcast_index(const int64_t *xs, int xnd, const int64_t *ys, int ynd, int64_t e)
{
    int64_t off = 0, stride = 1;
    for (int d = 0; d < ynd; d++) {
        int64_t xd = xs[xnd - 1 - d], yd = ys[ynd - 1 - d];
        if (yd != 1)
            off += (e % xd) * stride;
        e /= xd;
        stride *= yd;
    }
    return off;
}

/* Time-batched backends (cuda): one input element's sums after each of
 * `steps` steps into cum[t·cum_stride] (*S carries the sum from one chunk
 * to the next; x stride 0: a static input) ... */
NC_HD void nc_nl_sum_over_time(float *S, const float *x, int64_t x_stride, float *cum, int64_t cum_stride, int steps)
{
    for (int t = 0; t < steps; t++) {
        *S += x[t * x_stride];
        cum[t * cum_stride] = *S;
    }
}

/* ... and one output's totals t·f at those steps, p[t·stride], turned in
 * place into the increments the layer emits (*last: the total before the
 * first, then the last). */
NC_HD void nc_nl_emit_over_time(float *p, int64_t stride, int steps, float *last)
{
    float prev = *last;
    for (int t = 0; t < steps; t++) {
        float now = p[t * stride];
        p[t * stride] = now - prev;
        prev = now;
    }
    *last = prev;
}

/* The products' cumulative outputs from the input sums: t·(Sx/t)·(Sy/t)
 * for one element (NC_NL_MUL) ... */
NC_HD float nc_nl_mul_total(float sx, float sy, int t)
{
    float tf = (float)t;
    return tf * ((sx / tf) * (sy / tf));
}

/* ... and t·Σ_k (Sx_k/t)(Sy_k/t) for one output of NC_NL_MATMUL: a row of x
 * with stride xs and a column of y with stride ys, k terms in ascending k. */
NC_HD float nc_nl_dot_total(const float *sx, int64_t xs, const float *sy, int64_t ys, int64_t k, int t)
{
    float tf = (float)t, acc = 0.0f;
    for (int64_t j = 0; j < k; j++)
        acc += (sx[j * xs] / tf) * (sy[j * ys] / tf);
    return tf * acc;
}

/* The cumulative outputs t·f(S/t) of one row of n elements (stride st) of
 * a row function (NC_NL_LAYERNORM, NC_NL_SOFTMAX) into p (same stride).
 * LayerNorm: mean and the biased variance of the row, in ascending order,
 * as ONNX's LayerNormalization. Softmax subtracts the row's max first.
 * p holds each mean S/t, then (Softmax) each exponential, until it holds
 * the outputs: one division and one exponential an element, not three and
 * two (the same floats). */
NC_HD void nc_nl_row_total(int fn, float eps, const float *S, float *p, int64_t n, int64_t st, int t)
{
    float tf = (float)t;
    if (fn == NC_NL_LAYERNORM) {
        float mu = 0.0f, var = 0.0f;
        for (int64_t i = 0; i < n; i++) {
            p[i * st] = S[i * st] / tf;
            mu += p[i * st];
        }
        mu /= (float)n;
        for (int64_t i = 0; i < n; i++) {
            float d = p[i * st] - mu;
            var += d * d;
        }
        float inv = 1.0f / sqrtf(var / (float)n + eps);
        for (int64_t i = 0; i < n; i++)
            p[i * st] = tf * ((p[i * st] - mu) * inv);
        return;
    }
    /* NC_NL_SOFTMAX */
    float mx = -INFINITY, sum = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        p[i * st] = S[i * st] / tf;
        mx = p[i * st] > mx ? p[i * st] : mx; /* a select vectorises; fmaxf is a call */
    }
    for (int64_t i = 0; i < n; i++) {
        p[i * st] = nc_nl_expf(p[i * st] - mx);
        sum += p[i * st];
    }
    for (int64_t i = 0; i < n; i++)
        p[i * st] = tf * (p[i * st] / sum);
}

/* Every row of a row function (LayerNorm, Softmax) of one sample: the
 * layer's shape (ndim dimensions) split at `axis` into outer × len × inner,
 * each row of len elements with stride inner (nc_nl_row_total). */
NC_HD void nc_nl_rows_total(int fn, float eps, const int64_t *shape, int ndim, int axis, const float *S, float *p,
                            int t)
{
    int64_t len = shape[axis], inner = 1, size = 1;
    for (int d = 0; d < ndim; d++) {
        size *= shape[d];
        inner *= d > axis ? shape[d] : 1;
    }
    for (int64_t outer = 0; outer < size / (len * inner); outer++)
        for (int64_t in = 0; in < inner; in++) {
            int64_t base = outer * len * inner + in;
            nc_nl_row_total(fn, eps, S + base, p + base, len, inner, t);
        }
}

#endif
