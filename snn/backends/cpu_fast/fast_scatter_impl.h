/* The convolution scatter loop of the cpu-fast kernels, compiled once per
 * instruction set: each fast_*.c file defines FAST_AXPY (y[0..n) += w·a,
 * as a multiply then an add) and FAST_FN (a name suffix) before including
 * this file, so the loop is inlined around that file's vector code. */

/* Input events arrive in ascending flat index c·HW + p, so every output
 * gets its terms in ascending (c, i, j) — the reference's order. (Within
 * one event each output gets one term, so the order of taps is free.)
 * NT (taps of an interior input, 0 = none) and KG are constants in the
 * specialised copies, so the interior taps become straight-line vector code. */
static inline __attribute__((always_inline)) int64_t FAST_FN(conv_body)(const nc_fast_conv *g, const float *wt,
                                                                      const int32_t *idx, const float *val,
                                                                      int64_t n, float *acc, const int NT,
                                                                      const int64_t KG)
{
    int64_t ops = 0, c = 0, base = 0;
    const float *wch = wt;
    float *ach = acc;
    const int64_t HW = g->HW, kh = g->kh, kw = g->kw;
    const int64_t *rel = g->rel, a_lo = g->a_lo, a_hi = g->a_hi;
    for (int64_t e = 0; e < n; e++) {
        int64_t x = idx[e];
        if (x >= base + HW) { /* next non-empty channel */
            c = x / HW;
            base = c * HW;
            wch = wt + c * g->wc;
            ach = acc + (c / g->cg) * KG;
        }
        float a = val[e];
        int64_t p = x - base, ih = g->prow[p], iw = g->pcol[p];
        int nr = g->n_row[ih], nc = g->n_col[iw];
        const nc_fast_tap *R = g->rows + ih * kh, *Q = g->cols + iw * kw;
        /* rows in ascending i: R[0] reaches the last output row, R[nr - 1] the first */
        if (NT && nr * nc == NT && R[0].a_off < a_hi && R[nr - 1].a_off >= a_lo) {
            float *a0 = ach + R[0].a_off + Q[0].a_off;
            for (int t = 0; t < NT; t++)
                FAST_AXPY(a0 - rel[t], wch + t * KG, a, KG);
            ops += (int64_t)NT * KG;
        } else {
            for (int r = 0; r < nr; r++) {
                if (R[r].a_off < a_lo || R[r].a_off >= a_hi)
                    continue;
                const float *wr = wch + R[r].w_off;
                float *ar = ach + R[r].a_off;
                for (int q = 0; q < nc; q++)
                    FAST_AXPY(ar + Q[q].a_off, wr + Q[q].w_off, a, KG);
                ops += (int64_t)nc * KG;
            }
        }
    }
    return ops;
}

static int64_t FAST_FN(conv)(const nc_fast_conv *g, const float *wt, const int32_t *idx, const float *val,
                             int64_t n, float *acc)
{
    if (g->rel && g->kh * g->kw == 9) {
        if (g->kg == 32)
            return FAST_FN(conv_body)(g, wt, idx, val, n, acc, 9, 32);
        if (g->kg == 16)
            return FAST_FN(conv_body)(g, wt, idx, val, n, acc, 9, 16);
        if (g->kg == 64)
            return FAST_FN(conv_body)(g, wt, idx, val, n, acc, 9, 64);
        return FAST_FN(conv_body)(g, wt, idx, val, n, acc, 9, g->kg);
    }
    if (g->kg == 32)
        return FAST_FN(conv_body)(g, wt, idx, val, n, acc, 0, 32);
    if (g->kg == 16)
        return FAST_FN(conv_body)(g, wt, idx, val, n, acc, 0, 16);
    return FAST_FN(conv_body)(g, wt, idx, val, n, acc, 0, g->kg);
}
