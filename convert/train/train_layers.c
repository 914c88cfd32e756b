/* Forward and backward of each layer kind on whole batches (see
 * train_internal.h for the layout). Affine and Conv2d go through OpenBLAS;
 * the rest are plain loops. Backward functions accumulate (+=) into input
 * and parameter gradients, so a layer read by several others gets the sum. */
#include "snn/base/blas.h"
#include <math.h>
#include <string.h>

#include "kernels/neuron.h"
#include "train_internal.h"

/* tr_sgemm's blocks: at most this many, of at least this many columns or rows */
#define GEMM_BLOCKS 8
#define GEMM_BLOCK_MIN 128

/* C = op(A)·op(B) + beta·C (row-major, alpha 1) cut into blocks of columns
 * of C (else rows) that the threads share. The blocks depend on the sizes
 * alone, so the result does not depend on the thread count. With more than
 * one thread nc_train_ex runs OpenBLAS single-threaded inside them: its
 * spinning workers and OpenMP's took turns on the cores (a third of
 * ResNet-18's fine-tuning time went to sched_yield and spinning). */
static void tr_sgemm(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                     const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    int by_cols = n >= 2 * GEMM_BLOCK_MIN || m < 2 * GEMM_BLOCK_MIN;
    int64_t len = by_cols ? n : m;
    /* up to GEMM_BLOCKS blocks of a multiple of 16, none under the minimum */
    int64_t bl = (len + GEMM_BLOCKS - 1) / GEMM_BLOCKS;
    bl = (bl + 15) / 16 * 16;
    if (bl < GEMM_BLOCK_MIN)
        bl = GEMM_BLOCK_MIN;
    int64_t blocks = (len + bl - 1) / bl;
    NC_OMP("omp parallel for schedule(dynamic, 1) num_threads(nc_tr_threads) if (blocks > 1 && nc_tr_threads > 1)")
    for (int64_t i = 0; i < blocks; i++) {
        int64_t lo = i * bl, w = len - lo < bl ? len - lo : bl;
        if (by_cols)
            nc_sgemm(CblasRowMajor, ta, tb, (int)m, (int)w, (int)k, 1.0f, a, (int)lda,
                     tb == CblasNoTrans ? b + lo : b + lo * ldb, (int)ldb, beta, c + lo, (int)ldc);
        else
            nc_sgemm(CblasRowMajor, ta, tb, (int)w, (int)n, (int)k, 1.0f,
                     ta == CblasNoTrans ? a + lo * lda : a + lo, (int)lda, b, (int)ldb, beta, c + lo * ldc, (int)ldc);
    }
}

void nc_tr_geom_of(const nc_snn_layer *L, const nc_snn_layer *X, nc_tr_geom *g)
{
    memset(g, 0, sizeof *g);
    g->C = X->shape[0], g->H = X->shape[1], g->W = X->shape[2];
    g->K = L->shape[0], g->OH = L->shape[1], g->OW = L->shape[2];
    g->sh = L->stride[0], g->sw = L->stride[1], g->ph = L->padding[0], g->pw = L->padding[1];
    if (L->kind == NC_SNN_CONV2D) {
        g->kh = L->weight->shape[2], g->kw = L->weight->shape[3];
        g->dh = L->dilation[0], g->dw = L->dilation[1], g->groups = L->groups;
    } else {
        g->kh = L->kernel[0], g->kw = L->kernel[1];
        g->dh = g->dw = 1, g->groups = 1;
    }
}

/* ---- Affine ---- */

void nc_tr_affine_fwd(const float *W, const float *b, const float *x, float *y, int64_t rows,
                      int64_t in, int64_t out)
{
    for (int64_t r = 0; r < rows; r++)
        memcpy(y + r * out, b, (size_t)out * sizeof *y);
    tr_sgemm(CblasNoTrans, CblasTrans, rows, out, in, x, in, W, in, 1.0f, y, out);
}

void nc_tr_affine_bwd(const float *W, const float *x, const float *dy, float *dx, float *dW,
                      float *db, int64_t rows, int64_t in, int64_t out)
{
    tr_sgemm(CblasTrans, CblasNoTrans, out, in, rows, dy, out, x, in, 1.0f, dW, in);
    for (int64_t o = 0; o < out; o++) {
        double acc = 0.0;
        for (int64_t r = 0; r < rows; r++)
            acc += dy[r * out + o];
        db[o] += (float)acc;
    }
    if (dx)
        tr_sgemm(CblasNoTrans, CblasNoTrans, rows, in, out, dy, out, W, in, 1.0f, dx, in);
}

/* ---- Conv2d ----
 * A chunk of nb rows of group g is unfolded into col [cg·kh·kw, nb·OH·OW]
 * (the columns of one row side by side), so one GEMM per group covers the
 * chunk; its result tmp [kg, nb·OH·OW] is scattered to NCHW. */

/* Output positions o in [lo, hi) whose input index o·s − p + k·d lies in [0, n). */
static void valid_range(int64_t n, int64_t out, int64_t s, int64_t p, int64_t off, int64_t *lo,
                        int64_t *hi)
{
    /* need o·s >= p − off and o·s <= n − 1 + p − off */
    int64_t a = p - off, b = n - 1 + p - off;
    int64_t l = a <= 0 ? 0 : (a + s - 1) / s;
    int64_t h = b < 0 ? 0 : b / s + 1;
    *lo = l < out ? l : out;
    *hi = h < out ? h : out;
    if (*hi < *lo)
        *hi = *lo;
}

/* add = 0: col = im2col(x); add = 1: x += col2im(col). x points at row 0
 * of the chunk. Threads take whole rows, so col2im's sums do not race. */
static void unfold(const nc_tr_geom *g, float *x, int64_t nb, int64_t grp, float *col, int add)
{
    int64_t cg = g->C / g->groups, OHW = g->OH * g->OW, M = nb * OHW, HW = g->H * g->W;
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(nb * cg * OHW * g->kh * g->kw))")
    for (int64_t n = 0; n < nb; n++)
        for (int64_t c = 0; c < cg; c++) {
            float *xc = x + (n * g->C + grp * cg + c) * HW;
            for (int64_t i = 0; i < g->kh; i++) {
                int64_t ohl, ohh;
                valid_range(g->H, g->OH, g->sh, g->ph, i * g->dh, &ohl, &ohh);
                for (int64_t j = 0; j < g->kw; j++) {
                    int64_t owl, owh;
                    valid_range(g->W, g->OW, g->sw, g->pw, j * g->dw, &owl, &owh);
                    float *dst = col + ((c * g->kh + i) * g->kw + j) * M + n * OHW;
                    if (!add)
                        memset(dst, 0, (size_t)OHW * sizeof *dst);
                    for (int64_t oh = ohl; oh < ohh; oh++) {
                        /* input index of output column ow: base + ow·sw */
                        int64_t base = (oh * g->sh - g->ph + i * g->dh) * g->W - g->pw + j * g->dw;
                        float *d = dst + oh * g->OW;
                        if (add) {
                            for (int64_t ow = owl; ow < owh; ow++)
                                xc[base + ow * g->sw] += d[ow];
                        } else if (g->sw == 1) {
                            memcpy(d + owl, xc + base + owl, (size_t)(owh - owl) * sizeof *d);
                        } else {
                            for (int64_t ow = owl; ow < owh; ow++)
                                d[ow] = xc[base + ow * g->sw];
                        }
                    }
                }
            }
        }
}

static int64_t conv_chunk(const nc_tr_geom *g, int64_t rows, int64_t work_n)
{
    int64_t ckk = g->C / g->groups * g->kh * g->kw, kg = g->K / g->groups, OHW = g->OH * g->OW;
    int64_t per_row = (ckk + kg) * OHW;
    int64_t nb = work_n / per_row;
    if (nb > rows)
        nb = rows;
    return nb < 1 ? 1 : nb;
}

int64_t nc_tr_conv_work(const nc_tr_geom *g, int64_t rows)
{
    /* Chunks of about 4M floats keep the GEMMs large and the workspace modest. */
    int64_t ckk = g->C / g->groups * g->kh * g->kw, kg = g->K / g->groups, OHW = g->OH * g->OW;
    int64_t per_row = (ckk + kg) * OHW;
    int64_t nb = (INT64_C(4) << 20) / per_row;
    if (nb > rows)
        nb = rows;
    if (nb < 1)
        nb = 1;
    return nb * per_row;
}

void nc_tr_conv_fwd(const nc_tr_geom *g, const float *W, const float *b, const float *x, float *y,
                    int64_t rows, float *work, int64_t work_n)
{
    int64_t ckk = g->C / g->groups * g->kh * g->kw, kg = g->K / g->groups, OHW = g->OH * g->OW;
    int64_t in_row = g->C * g->H * g->W, out_row = g->K * OHW;
    int64_t nb = conv_chunk(g, rows, work_n);
    for (int64_t r0 = 0; r0 < rows; r0 += nb) {
        int64_t n = rows - r0 < nb ? rows - r0 : nb, M = n * OHW;
        float *col = work, *tmp = work + ckk * M;
        for (int64_t grp = 0; grp < g->groups; grp++) {
            unfold(g, (float *)(x + r0 * in_row), n, grp, col, 0);
            tr_sgemm(CblasNoTrans, CblasNoTrans, kg, M, ckk, W + grp * kg * ckk, ckk, col, M, 0.0f, tmp, M);
            NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(kg * M))")
            for (int64_t k = 0; k < kg; k++) {
                float bk = b[grp * kg + k];
                for (int64_t r = 0; r < n; r++) {
                    float *dst = y + (r0 + r) * out_row + (grp * kg + k) * OHW;
                    const float *src = tmp + k * M + r * OHW;
                    for (int64_t p = 0; p < OHW; p++)
                        dst[p] = src[p] + bk;
                }
            }
        }
    }
}

void nc_tr_conv_bwd(const nc_tr_geom *g, const float *W, const float *x, const float *dy,
                    float *dx, float *dW, float *db, int64_t rows, float *work, int64_t work_n)
{
    int64_t ckk = g->C / g->groups * g->kh * g->kw, kg = g->K / g->groups, OHW = g->OH * g->OW;
    int64_t in_row = g->C * g->H * g->W, out_row = g->K * OHW;
    int64_t nb = conv_chunk(g, rows, work_n);
    for (int64_t r0 = 0; r0 < rows; r0 += nb) {
        int64_t n = rows - r0 < nb ? rows - r0 : nb, M = n * OHW;
        float *col = work, *tmp = work + ckk * M;
        for (int64_t grp = 0; grp < g->groups; grp++) {
            NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(kg * M))")
            for (int64_t k = 0; k < kg; k++) {
                double acc = 0.0;
                for (int64_t r = 0; r < n; r++) {
                    const float *src = dy + (r0 + r) * out_row + (grp * kg + k) * OHW;
                    float *dst = tmp + k * M + r * OHW;
                    for (int64_t p = 0; p < OHW; p++) {
                        dst[p] = src[p];
                        acc += src[p];
                    }
                }
                db[grp * kg + k] += (float)acc;
            }
            unfold(g, (float *)(x + r0 * in_row), n, grp, col, 0);
            tr_sgemm(CblasNoTrans, CblasTrans, kg, ckk, M, tmp, M, col, M, 1.0f, dW + grp * kg * ckk, ckk);
            if (dx) {
                tr_sgemm(CblasTrans, CblasNoTrans, ckk, M, kg, W + grp * kg * ckk, ckk, tmp, M, 0.0f, col, M);
                unfold(g, dx + r0 * in_row, n, grp, col, 1);
            }
        }
    }
}

/* ---- pooling ---- */

/* Without padding every window lies inside the input (the output size
 * guarantees it), so the bounds checks can go. */
static int unpadded(const nc_tr_geom *g) { return g->ph == 0 && g->pw == 0; }

void nc_tr_pool_fwd(const nc_tr_geom *g, float scale, const float *x, float *y, int64_t rows)
{
    int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
    int fast = unpadded(g);
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * g->C * HW))")
    for (int64_t rc = 0; rc < rows * g->C; rc++) {
        const float *xc = x + rc * HW;
        float *yc = y + rc * OHW;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                float acc = 0.0f;
                if (fast) {
                    const float *xw = xc + oh * g->sh * g->W + ow * g->sw;
                    for (int64_t i = 0; i < g->kh; i++)
                        for (int64_t j = 0; j < g->kw; j++)
                            acc += xw[i * g->W + j];
                } else {
                    for (int64_t i = 0; i < g->kh; i++) {
                        int64_t ih = oh * g->sh - g->ph + i;
                        if (ih < 0 || ih >= g->H)
                            continue;
                        for (int64_t j = 0; j < g->kw; j++) {
                            int64_t iw = ow * g->sw - g->pw + j;
                            if (iw >= 0 && iw < g->W)
                                acc += xc[ih * g->W + iw];
                        }
                    }
                }
                yc[oh * g->OW + ow] = acc * scale;
            }
    }
}

void nc_tr_pool_bwd(const nc_tr_geom *g, float scale, const float *dy, float *dx, int64_t rows)
{
    int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
    int fast = unpadded(g);
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * g->C * HW))")
    for (int64_t rc = 0; rc < rows * g->C; rc++) {
        float *xc = dx + rc * HW;
        const float *yc = dy + rc * OHW;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                float d = yc[oh * g->OW + ow] * scale;
                if (fast) {
                    float *xw = xc + oh * g->sh * g->W + ow * g->sw;
                    for (int64_t i = 0; i < g->kh; i++)
                        for (int64_t j = 0; j < g->kw; j++)
                            xw[i * g->W + j] += d;
                    continue;
                }
                for (int64_t i = 0; i < g->kh; i++) {
                    int64_t ih = oh * g->sh - g->ph + i;
                    if (ih < 0 || ih >= g->H)
                        continue;
                    for (int64_t j = 0; j < g->kw; j++) {
                        int64_t iw = ow * g->sw - g->pw + j;
                        if (iw >= 0 && iw < g->W)
                            xc[ih * g->W + iw] += d;
                    }
                }
            }
    }
}

void nc_tr_maxpool_fwd(const nc_tr_geom *g, const float *x, float *y, int32_t *arg, int64_t rows)
{
    int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * g->C * HW))")
    for (int64_t rc = 0; rc < rows * g->C; rc++) {
        const float *xc = x + rc * HW;
        for (int64_t oh = 0; oh < g->OH; oh++)
            for (int64_t ow = 0; ow < g->OW; ow++) {
                int32_t best = -1;
                for (int64_t i = 0; i < g->kh; i++) {
                    int64_t ih = oh * g->sh - g->ph + i;
                    if (ih < 0 || ih >= g->H)
                        continue;
                    for (int64_t j = 0; j < g->kw; j++) {
                        int64_t iw = ow * g->sw - g->pw + j;
                        int32_t k = (int32_t)(ih * g->W + iw);
                        /* the first maximum wins, as in the reference backends */
                        if (iw >= 0 && iw < g->W && (best < 0 || xc[k] > xc[best]))
                            best = k;
                    }
                }
                int64_t o = rc * OHW + oh * g->OW + ow;
                arg[o] = best;
                y[o] = best < 0 ? 0.0f : xc[best];
            }
    }
}

void nc_tr_maxpool_bwd(const nc_tr_geom *g, const int32_t *arg, const float *dy, float *dx,
                       int64_t rows)
{
    int64_t HW = g->H * g->W, OHW = g->OH * g->OW;
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * g->C * HW))")
    for (int64_t rc = 0; rc < rows * g->C; rc++)
        for (int64_t p = 0; p < OHW; p++) {
            int32_t k = arg[rc * OHW + p];
            if (k >= 0)
                dx[rc * HW + k] += dy[rc * OHW + p];
        }
}

/* ---- QCFS activation ---- */

void nc_tr_qcfs_fwd(const nc_tr_qcfs *q, const float *z, float *y, int64_t rows)
{
    float L = (float)q->levels, invL = 1.0f / L;
    int64_t S = q->size;
    const float *lam = q->lam, *sv = q->sv, *shift = q->shift;
    int relaxed = q->relaxed;
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * S))")
    for (int64_t r = 0; r < rows; r++) {
        const float *zr = z + r * S;
        float *yr = y + r * S;
        if (relaxed) {
            float top = q->top > 1.0f ? q->top : 1.0f;
            for (int64_t j = 0; j < S; j++) {
                float u = zr[j] / lam[j];
                yr[j] = sv[j] * (u < 0.0f ? 0.0f : (u > top ? top : u));
            }
            continue;
        }
        NC_OMP("omp simd")
        for (int64_t j = 0; j < S; j++) {
            /* clamping to [0, L] before the floor gives the same h, and on
             * [0, L] the floor is a truncation (much cheaper than floorf) */
            float a = zr[j] / lam[j] * L + shift[j];
            a = a < 0.0f ? 0.0f : (a > L ? L : a);
            yr[j] = sv[j] * ((float)(int32_t)a * invL);
        }
    }
}

/* Columns [j0, j1) of ∂y/∂λ summed over the rows (in row order). */
static void qcfs_dlam(const nc_tr_qcfs *q, const float *z, const float *y, const float *dy, double *dlam,
                      int64_t rows, int64_t j0, int64_t j1)
{
    int64_t S = q->size;
    for (int64_t r = 0; r < rows; r++) {
        const float *zr = z + r * S, *yr = y + r * S, *dr = dy + r * S;
        for (int64_t j = j0; j < j1; j++) {
            float zj = zr[j], lam = q->lam[j], d = dr[j];
            /* y = sv·q(z/λ) with the floor passed straight through:
             * ∂y/∂λ = (y − z)/λ when sv is λ itself (DESIGN §3), and
             * −sv·z/λ² when the spike value is a fixed number; above λ,
             * 1 and 0 respectively; 0 below 0. */
            float g;
            if (q->sv_is_lam)
                g = zj <= 0.0f ? 0.0f : (zj < lam ? (yr[j] - zj) / lam : 1.0f);
            else
                g = zj <= 0.0f || zj >= lam ? 0.0f : -q->sv[j] * zj / (lam * lam);
            dlam[j] += (double)(d * g);
        }
    }
}

void nc_tr_qcfs_bwd(const nc_tr_qcfs *q, const float *z, const float *y, const float *dy,
                    float *dz, double *dlam, int64_t rows)
{
    int64_t S = q->size;
    const float *lam = q->lam, *sv = q->sv;
    if (dz) {
        NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * S))")
        for (int64_t r = 0; r < rows; r++) {
            const float *zr = z + r * S, *dr = dy + r * S;
            float *dzr = dz + r * S;
            NC_OMP("omp simd")
            for (int64_t j = 0; j < S; j++) {
                float zj = zr[j];
                dzr[j] += zj > 0.0f && zj < lam[j] ? dr[j] * sv[j] / lam[j] : 0.0f;
            }
        }
    }
    if (!dlam)
        return;
    /* threads own blocks of neurons, so each sum keeps its order */
    int64_t blocks = (S + 255) / 256;
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(rows * S))")
    for (int64_t b = 0; b < blocks; b++)
        qcfs_dlam(q, z, y, dy, dlam, rows, b * 256, (b + 1) * 256 < S ? (b + 1) * 256 : S);
}

/* ---- loss ---- */

double nc_tr_cross_entropy(const float *logits, const int64_t *labels, int64_t rows,
                           int64_t classes, float *dlogits, int64_t *correct)
{
    double total = 0.0;
    int64_t ok = 0;
    for (int64_t r = 0; r < rows; r++) {
        const float *z = logits + r * classes;
        int64_t best = 0;
        for (int64_t c = 1; c < classes; c++)
            if (z[c] > z[best])
                best = c;
        ok += best == labels[r];
        double mx = z[best], sum = 0.0;
        for (int64_t c = 0; c < classes; c++)
            sum += exp((double)z[c] - mx);
        double lse = mx + log(sum);
        total += lse - z[labels[r]];
        if (dlogits)
            for (int64_t c = 0; c < classes; c++) {
                double p = exp((double)z[c] - lse);
                dlogits[r * classes + c] = (float)((p - (c == labels[r])) / (double)rows);
            }
    }
    if (correct)
        *correct = ok;
    return rows > 0 ? total / (double)rows : 0.0;
}

/* ---- IF neurons unrolled over time (BPTT) ---- */

float nc_tr_surrogate(nc_surrogate kind, float x, float width)
{
    float a = fabsf(x);
    switch (kind) {
    case NC_SURROGATE_RECTANGLE:
        return a < 0.5f * width ? 1.0f / width : 0.0f;
    case NC_SURROGATE_SIGMOID: {
        float k = 4.0f / width, s = 1.0f / (1.0f + expf(-k * x));
        return k * s * (1.0f - s);
    }
    case NC_SURROGATE_ATAN: {
        float alpha = 2.0f / width, u = 1.5707963267948966f * alpha * x;
        return 0.5f * alpha / (1.0f + u * u);
    }
    case NC_SURROGATE_TRIANGLE:
    default:
        return a < width ? (width - a) / (width * width) : 0.0f;
    }
}

/* The spike as a function of x = m − θ: the step, or in relaxed mode (for
 * gradient checks) the integral of the surrogate, a smooth step whose
 * derivative is exactly nc_tr_surrogate. */
static float spike_fn(const nc_tr_if *p, float x)
{
    if (!p->relaxed)
        return x >= 0.0f ? 1.0f : 0.0f;
    float w = p->width;
    switch (p->sg) {
    case NC_SURROGATE_RECTANGLE: {
        float u = x / w + 0.5f;
        return u < 0.0f ? 0.0f : (u > 1.0f ? 1.0f : u);
    }
    case NC_SURROGATE_SIGMOID:
        return 1.0f / (1.0f + expf(-4.0f / w * x));
    case NC_SURROGATE_ATAN:
        return 0.5f + atanf(1.5707963267948966f * (2.0f / w) * x) / 3.14159265358979f;
    case NC_SURROGATE_TRIANGLE:
    default:
        if (x <= -w)
            return 0.0f;
        if (x >= w)
            return 1.0f;
        return x <= 0.0f ? (x + w) * (x + w) / (2.0f * w * w) : 1.0f - (w - x) * (w - x) / (2.0f * w * w);
    }
}

/* v(t) from m(t): reset by subtraction or to zero. With a hard spike this is
 * exactly the reference backend's nc_if_step (m − θ·1, m − θ·0 = m, m·0). */
static inline float after_reset(const nc_tr_if *p, float m, float s, float theta)
{
    return p->reset_zero ? m * (1.0f - s) : m - theta * s;
}

/* One step with the hard spike: nc_if_step's arithmetic, written so the
 * compiler can vectorise it. mp is the previous step's membrane (t > 0). */
static void if_fwd_hard(const nc_tr_if *p, int t, const float *cur, const float *mp, float *mt, float *yt,
                        int64_t N)
{
    int64_t S = p->size;
    const float *theta = p->theta, *v0 = p->v0, *sv = p->sv;
    int reset_zero = p->reset_zero;
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(N * S))")
    for (int64_t n = 0; n < N; n++) {
        const float *c = cur + n * S, *mpn = t > 0 ? mp + n * S : NULL;
        float *mn = mt + n * S, *yn = yt + n * S;
        if (t == 0) {
            NC_OMP("omp simd")
            for (int64_t j = 0; j < S; j++) {
                float m = v0[j] + c[j];
                mn[j] = m;
                yn[j] = sv[j] * (float)(m >= theta[j]);
            }
        } else if (reset_zero) {
            NC_OMP("omp simd")
            for (int64_t j = 0; j < S; j++) {
                float m0 = mpn[j], th = theta[j];
                float m = m0 * (float)(m0 < th) + c[j]; /* m0·1 or 0: exact */
                mn[j] = m;
                yn[j] = sv[j] * (float)(m >= th);
            }
        } else {
            NC_OMP("omp simd")
            for (int64_t j = 0; j < S; j++) {
                float m0 = mpn[j], th = theta[j];
                float m = (m0 - th * (float)(m0 >= th)) + c[j]; /* m0 − θ or m0 − 0: exact */
                mn[j] = m;
                yn[j] = sv[j] * (float)(m >= th);
            }
        }
    }
}

/* The spike of a signed neuron with membrane m and gate g: the hard one is
 * nc_signed_if_step's (+1 if m >= θ; −1 if m < 0 and g). */
/* The gate of a negative spike below the k-th (k = 0: any): a count above
 * k before the step, or always for a two-sided neuron. */
static inline int gate_open(const nc_tr_if *p, float count, int k)
{
    return p->two_sided || count > (float)k;
}

static float signed_spike(const nc_tr_if *p, float m, float theta, float count)
{
    int gate = gate_open(p, count, 0);
    if (p->burst > 1) {
        if (!p->relaxed) {
            float v = 0.0f;
            int32_t n = p->two_sided ? NC_TWO_SIDED_NET0 : (int32_t)count;
            return (float)nc_signed_if_step(&v, &n, m, theta, p->burst); /* the backends' rule */
        }
        float s = 0.0f;
        for (int k = 1; k <= p->burst; k++) {
            s += spike_fn(p, m - (float)k * theta);
            if (gate_open(p, count, k - 1))
                s -= spike_fn(p, -m - (float)(k - 1) * theta);
        }
        return s;
    }
    if (!p->relaxed)
        return (float)((m >= theta) - (gate && m < 0.0f));
    return spike_fn(p, m - theta) - (gate ? spike_fn(p, -m) : 0.0f);
}

/* Its spike from its output (spike values are positive). */
static float signed_of(const nc_tr_if *p, float y, float sv)
{
    if (p->relaxed)
        return y / sv;
    return p->burst > 1 ? roundf(y / sv) : (float)((y > 0.0f) - (y < 0.0f));
}

/* Signed IF forward: v(t) = m(t) − θ·s(t), which with hard spikes is the
 * reference's m − θ, m + θ or m exactly. */
static void if_fwd_signed(const nc_tr_if *p, const float *cur, int static_in, float *m, float *y, int64_t N)
{
    int64_t S = p->size, NS = N * S;
    for (int t = 0; t < p->T; t++) {
        const float *It = cur + (static_in ? 0 : t * NS);
        float *mt = m + t * NS, *yt = y + t * NS;
        NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(NS))")
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < S; j++) {
                int64_t k = n * S + j;
                float th = p->theta[j], v;
                if (t == 0) {
                    v = p->v0[j];
                    p->count[k] = 0.0f;
                } else {
                    v = mt[k - NS] - th * signed_of(p, yt[k - NS], p->sv[j]);
                }
                float mk = v + It[k], s = signed_spike(p, mk, th, p->count[k]);
                mt[k] = mk;
                yt[k] = p->sv[j] * s;
                p->count[k] += s;
            }
    }
}

void nc_tr_if_fwd(const nc_tr_if *p, const float *cur, int static_in, float *m, float *y, int64_t N)
{
    int64_t S = p->size, NS = N * S;
    if (p->signed_spikes) {
        if_fwd_signed(p, cur, static_in, m, y, N);
        return;
    }
    for (int t = 0; t < p->T; t++) {
        const float *It = cur + (static_in ? 0 : t * NS);
        float *mt = m + t * NS, *yt = y + t * NS;
        const float *mp = mt - NS;
        if (!p->relaxed) {
            if_fwd_hard(p, t, It, mp, mt, yt, N);
            continue;
        }
        NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(NS))")
        for (int64_t n = 0; n < N; n++)
            for (int64_t j = 0; j < S; j++) {
                int64_t k = n * S + j;
                float th = p->theta[j], v;
                if (t == 0)
                    v = p->v0[j];
                else
                    v = after_reset(p, mp[k], spike_fn(p, mp[k] - th), th);
                float mk = v + It[k];
                mt[k] = mk;
                yt[k] = p->sv[j] * spike_fn(p, mk - th);
            }
    }
}

/* A signed neuron's count before step t (its gates), summed as the
 * forward summed it. */
static float signed_count(const nc_tr_if *p, int t, int64_t k, int64_t NS, float sv)
{
    float count = 0.0f;
    for (int u = 0; u < t; u++)
        count += signed_of(p, p->y[u * NS + k], sv);
    return count;
}

/* One step of the backward for neurons [j0, j1) of every sample. A signed
 * neuron's spike s = up − down moves with m through both surrogates and
 * with θ through up's; v = m − θ·s as with subtraction. */
static void if_bwd_step(const nc_tr_if *p, int t, const float *mt, const float *dyt, float *dIt, double *dtheta,
                        float *dv, int64_t N, int64_t j0, int64_t j1)
{
    int64_t S = p->size;
    for (int64_t n = 0; n < N; n++)
        for (int64_t j = j0; j < j1; j++) {
            int64_t k = n * S + j;
            float th = p->theta[j], mk = mt[k], x = mk - th;
            float s, sg = nc_tr_surrogate(p->sg, x, p->width), sg_m = sg;
            if (p->signed_spikes && p->burst > 1) { /* sg: ∂s/∂θ's −(Σ k·σ'), sg_m: ∂s/∂m */
                s = signed_of(p, p->y[(int64_t)t * N * S + k], p->sv[j]);
                float count = signed_count(p, t, k, N * S, p->sv[j]);
                sg = sg_m = 0.0f;
                for (int lv = 1; lv <= p->burst; lv++) {
                    float up = nc_tr_surrogate(p->sg, mk - (float)lv * th, p->width);
                    sg += (float)lv * up;
                    sg_m += up;
                    if (gate_open(p, count, lv - 1)) {
                        float down = nc_tr_surrogate(p->sg, -mk - (float)(lv - 1) * th, p->width);
                        sg_m += down;
                        sg -= (float)(lv - 1) * down; /* −down moves with θ as +(k−1)·σ' */
                    }
                }
            } else if (p->signed_spikes) {
                s = signed_of(p, p->y[(int64_t)t * N * S + k], p->sv[j]);
                if (gate_open(p, signed_count(p, t, k, N * S, p->sv[j]), 0))
                    sg_m += nc_tr_surrogate(p->sg, -mk, p->width);
            } else {
                s = spike_fn(p, x);
            }
            float dvk = t == p->T - 1 ? 0.0f : dv[k]; /* dL/dv(t) */
            float ds = dyt[k] * p->sv[j];
            if (p->spike_cost) /* the energy term grows with |s|; a silent neuron is pushed as a positive one */
                ds += p->spike_cost[j] * p->cost_scale * (s < 0.0f ? -1.0f : 1.0f);
            if (!p->detach_reset)
                ds += dvk * (p->reset_zero ? -mk : -th);
            float dm = ds * sg_m + dvk * (p->reset_zero ? 1.0f - s : 1.0f);
            if (dIt)
                dIt[k] += dm;
            if (dtheta) {
                double g = -(double)ds * sg;      /* the spike moves with θ */
                if (!p->reset_zero)
                    g -= (double)s * dvk;         /* v = m − θ·s */
                if (p->sv_is_theta)
                    g += (double)dyt[k] * s;      /* a spike carries θ */
                dtheta[j] += g;
            }
            dv[k] = dm;                           /* m = v(t−1) + cur */
        }
}

void nc_tr_if_bwd(const nc_tr_if *p, const float *m, const float *dy, float *dI, int static_in,
                  double *dtheta, float *dv, int64_t N)
{
    int64_t S = p->size, NS = N * S, blocks = (S + 63) / 64;
    /* threads own blocks of neurons: dθ sums and a constant input's
     * gradient (summed over t) keep their order */
    for (int t = p->T - 1; t >= 0; t--) {
        float *dIt = dI ? dI + (static_in ? 0 : t * NS) : NULL;
        NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(NS))")
        for (int64_t b = 0; b < blocks; b++)
            if_bwd_step(p, t, m + t * NS, dy + t * NS, dIt, dtheta, dv, N, b * 64,
                        (b + 1) * 64 < S ? (b + 1) * 64 : S);
    }
    if (dtheta && p->v0_is_half)
        for (int64_t k = 0; k < NS; k++)
            dtheta[k % S] += 0.5 * dv[k];
}
