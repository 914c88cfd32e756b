/* cpu-fast's loops of a Nonlinear layer (fast_nonlinear.c), included by
 * each kernel version (fast_generic.c, fast_avx2.c, fast_avx512.c) with
 * FAST_FN naming its functions, so the compiler vectorises them for that
 * instruction set. They compute each element with kernels/nonlinear.h's
 * operations in the reference's order (the loops only run several
 * elements, or several rows, side by side), so every version gives the
 * reference's floats. The files are compiled with loop vectorisation and
 * without trapping math (cmake/core_rooms.cmake), which lets the selects
 * of nc_nl_expf and nc_nl_erff become vector blends; no float changes. */

/* sum[e] += x[e] */
static void FAST_FN(nl_sum)(float *restrict sum, const float *restrict x, int64_t n)
{
    for (int64_t e = 0; e < n; e++)
        sum[e] += x[e];
}

/* The totals y into increments over tot, tot the totals. */
static void FAST_FN(nl_emit)(float *restrict y, float *restrict tot, int64_t n)
{
    for (int64_t e = 0; e < n; e++) {
        float p = y[e];
        y[e] = p - tot[e];
        tot[e] = p;
    }
}

/* One function's totals, fn a constant where it is inlined. */
static inline __attribute__((always_inline)) void FAST_FN(nl_elem_loop)(int fn, float alpha, float beta,
                                                                         const float *restrict S,
                                                                         float *restrict y, int64_t n, float tf)
{
    for (int64_t e = 0; e < n; e++)
        y[e] = tf * nc_nl_elem(fn, S[e] / tf, alpha, beta);
}

/* y[e] = t·f(S[e]/t) of element-wise function fn (nc_nl_elem). */
static void FAST_FN(nl_elem)(int fn, float alpha, float beta, const float *S, float *y, int64_t n, float tf)
{
    switch (fn) {
#define ELEM_CASE(f) case f: FAST_FN(nl_elem_loop)(f, alpha, beta, S, y, n, tf); break;
        ELEM_CASE(NC_NL_SIGMOID)
        ELEM_CASE(NC_NL_SILU)
        ELEM_CASE(NC_NL_TANH)
        ELEM_CASE(NC_NL_HARDSIGMOID)
        ELEM_CASE(NC_NL_HARDSWISH)
        ELEM_CASE(NC_NL_GELU)
        ELEM_CASE(NC_NL_GELU_TANH)
#undef ELEM_CASE
    default: break;
    }
}

/* Rows side by side: the `lanes` rows of len elements (stride inner) that
 * start at S and p, each lane computing nc_nl_row_total's row (a
 * LayerNorm over channels: rows strided, lanes contiguous). */
#define NL_LANES 64
static void FAST_FN(nl_rows_across)(int fn, float eps, const float *restrict S, float *restrict p, int64_t len,
                                    int64_t inner, int64_t lanes, float tf)
{
    float a[NL_LANES], b[NL_LANES];
    for (int64_t l = 0; l < lanes; l++) {
        a[l] = fn == NC_NL_LAYERNORM ? 0.0f : -INFINITY; /* the mean, or the max */
        b[l] = 0.0f;                                     /* the variance, or the sum */
    }
    for (int64_t i = 0; i < len; i++) {
        const float *s = S + i * inner;
        float *q = p + i * inner;
        for (int64_t l = 0; l < lanes; l++) {
            q[l] = s[l] / tf;
            a[l] = fn == NC_NL_LAYERNORM ? a[l] + q[l] : q[l] > a[l] ? q[l] : a[l];
        }
    }
    if (fn == NC_NL_LAYERNORM) {
        for (int64_t l = 0; l < lanes; l++)
            a[l] /= (float)len;
        for (int64_t i = 0; i < len; i++)
            for (int64_t l = 0; l < lanes; l++) {
                float d = p[i * inner + l] - a[l];
                b[l] += d * d;
            }
        for (int64_t l = 0; l < lanes; l++)
            b[l] = 1.0f / sqrtf(b[l] / (float)len + eps);
        for (int64_t i = 0; i < len; i++)
            for (int64_t l = 0; l < lanes; l++)
                p[i * inner + l] = tf * ((p[i * inner + l] - a[l]) * b[l]);
        return;
    }
    for (int64_t i = 0; i < len; i++)
        for (int64_t l = 0; l < lanes; l++) {
            p[i * inner + l] = nc_nl_expf(p[i * inner + l] - a[l]);
            b[l] += p[i * inner + l];
        }
    for (int64_t i = 0; i < len; i++)
        for (int64_t l = 0; l < lanes; l++)
            p[i * inner + l] = tf * (p[i * inner + l] / b[l]);
}

/* One contiguous row of n elements (nc_nl_row_total with stride 1): the
 * element-wise passes vectorised, the sums in order. */
static void FAST_FN(nl_row)(int fn, float eps, const float *restrict S, float *restrict p, int64_t n, int t)
{
    if (fn == NC_NL_LAYERNORM) {
        nc_nl_row_total(fn, eps, S, p, n, 1, t);
        return;
    }
    float tf = (float)t, mx = -INFINITY, sum = 0.0f;
    for (int64_t i = 0; i < n; i++)
        p[i] = S[i] / tf;
    for (int64_t i = 0; i < n; i++)
        mx = p[i] > mx ? p[i] : mx;
    for (int64_t i = 0; i < n; i++)
        p[i] = nc_nl_expf(p[i] - mx);
    for (int64_t i = 0; i < n; i++)
        sum += p[i];
    for (int64_t i = 0; i < n; i++)
        p[i] = tf * (p[i] / sum);
}

/* Every row of a row function of one sample (nc_nl_rows_total). */
static void FAST_FN(nl_rows)(int fn, float eps, const int64_t *shape, int ndim, int axis, const float *S, float *p,
                             int t)
{
    int64_t len = shape[axis], inner = 1, size = 1;
    for (int d = 0; d < ndim; d++) {
        size *= shape[d];
        inner *= d > axis ? shape[d] : 1;
    }
    float tf = (float)t;
    for (int64_t outer = 0; outer < size / (len * inner); outer++) {
        int64_t base = outer * len * inner;
        if (inner == 1) {
            FAST_FN(nl_row)(fn, eps, S + base, p + base, len, t);
            continue;
        }
        for (int64_t in = 0; in < inner; in += NL_LANES)
            FAST_FN(nl_rows_across)(fn, eps, S + base + in, p + base + in, len, inner,
                                    inner - in < NL_LANES ? inner - in : NL_LANES, tf);
    }
}
#undef NL_LANES
