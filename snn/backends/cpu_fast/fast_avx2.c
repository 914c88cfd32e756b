/* The cpu-fast kernels with AVX2 (8 floats a vector). Compiled for AVX2
 * whatever the build's baseline; the backend calls them only after checking
 * the CPU (nc_fast_kernels_select). Multiplies and adds stay separate
 * instructions (no FMA is enabled), so results equal the reference's. */
#include <string.h>

#include "fast_kernels.h"
#include "kernels/nonlinear.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx2,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,popcnt")
#endif

static inline void axpy_avx2(float *y, const float *w, float a, int64_t n)
{
    __m256 va = _mm256_set1_ps(a);
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m256 y0 = _mm256_add_ps(_mm256_loadu_ps(y + k), _mm256_mul_ps(_mm256_loadu_ps(w + k), va));
        __m256 y1 = _mm256_add_ps(_mm256_loadu_ps(y + k + 8), _mm256_mul_ps(_mm256_loadu_ps(w + k + 8), va));
        __m256 y2 = _mm256_add_ps(_mm256_loadu_ps(y + k + 16), _mm256_mul_ps(_mm256_loadu_ps(w + k + 16), va));
        __m256 y3 = _mm256_add_ps(_mm256_loadu_ps(y + k + 24), _mm256_mul_ps(_mm256_loadu_ps(w + k + 24), va));
        _mm256_storeu_ps(y + k, y0);
        _mm256_storeu_ps(y + k + 8, y1);
        _mm256_storeu_ps(y + k + 16, y2);
        _mm256_storeu_ps(y + k + 24, y3);
    }
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_ps(y + k, _mm256_add_ps(_mm256_loadu_ps(y + k), _mm256_mul_ps(_mm256_loadu_ps(w + k), va)));
    for (; k < n; k++)
        y[k] += w[k] * a;
}

#define FAST_AXPY axpy_avx2
#define FAST_FN(name) name##_avx2
#include "fast_scatter_impl.h"
#include "fast_nonlinear_impl.h"

/* One IF step on 8 neurons; returns the spike mask (bit j = lane j). */
static inline int if8(float *v, const float *cur, const float *theta, int reset_zero)
{
    __m256 th = _mm256_loadu_ps(theta);
    __m256 m = _mm256_add_ps(_mm256_loadu_ps(v), _mm256_loadu_ps(cur));
    __m256 s = _mm256_cmp_ps(m, th, _CMP_GE_OQ);
    __m256 after = reset_zero ? _mm256_setzero_ps() : _mm256_sub_ps(m, th);
    _mm256_storeu_ps(v, _mm256_blendv_ps(m, after, s));
    return _mm256_movemask_ps(s);
}

static inline int if1(float *v, float cur, float theta, int reset_zero)
{
    float m = *v + cur;
    int s = m >= theta;
    *v = s ? (reset_zero ? 0.0f : m - theta) : m;
    return s;
}

static int64_t if_flat_avx2(float *v, const float *cur, const float *theta, int64_t n, int reset_zero,
                            uint64_t *bits)
{
    int64_t count = 0, k = 0;
    for (; k + 64 <= n; k += 64) {
        uint64_t word = 0;
        for (int j = 0; j < 8; j++)
            word |= (uint64_t)if8(v + k + 8 * j, cur + k + 8 * j, theta + k + 8 * j, reset_zero) << (8 * j);
        bits[k >> 6] = word;
        count += __builtin_popcountll(word);
    }
    if (k < n) {
        uint64_t word = 0;
        for (int64_t b = 0; k + b < n; b++)
            word |= (uint64_t)if1(v + k + b, cur[k + b], theta[k + b], reset_zero) << b;
        bits[k >> 6] = word;
        count += __builtin_popcountll(word);
    }
    return count;
}

/* Spikes are gathered into one 64-bit word per channel over blocks of 64
 * positions (a vector OR of the position's bit into the words of the
 * channels that spiked), so no branch depends on where the spikes are. */
#define CL_BLOCK 512

/* The 64-bit lanes (lo: 4 lanes, hi: the next 4) of the bits of m that are set, as all-ones. */
static inline __m256i lanes64(int m, int hi)
{
    const __m256i l = hi ? _mm256_set_epi64x(128, 64, 32, 16) : _mm256_set_epi64x(8, 4, 2, 1);
    return _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x(m), l), l);
}

/* acc[0..8) |= bit where m has the lane's bit. */
static inline void or_bits8(uint64_t *acc, int m, __m256i bit)
{
    __m256i *a = (__m256i *)(void *)acc;
    _mm256_storeu_si256(a, _mm256_or_si256(_mm256_loadu_si256(a), _mm256_and_si256(lanes64(m, 0), bit)));
    _mm256_storeu_si256(a + 1, _mm256_or_si256(_mm256_loadu_si256(a + 1), _mm256_and_si256(lanes64(m, 1), bit)));
}

static int64_t if_cl_avx2(float *v, float *cur, const float *theta, int theta_full, int64_t HW, int64_t C,
                          int reset_zero, uint64_t *bits, const int32_t *pwin, uint32_t *cnt, const float *refill)
{
    uint64_t acc[CL_BLOCK + 8];
    const __m256i l32 = _mm256_set_epi32(128, 64, 32, 16, 8, 4, 2, 1), one = _mm256_set1_epi32(1);
    int64_t count = 0, wpc = (HW + 63) >> 6;
    for (int64_t c0 = 0; c0 < C; c0 += CL_BLOCK) {
        int64_t cn = C - c0 < CL_BLOCK ? C - c0 : CL_BLOCK;
        for (int64_t p0 = 0; p0 < HW; p0 += 64) {
            int64_t pend = p0 + 64 < HW ? p0 + 64 : HW;
            memset(acc, 0, (size_t)((cn + 15) & ~(int64_t)15) * sizeof *acc);
            for (int64_t p = p0; p < pend; p++) {
                __m256i bit = _mm256_set1_epi64x((long long)(UINT64_C(1) << (p - p0)));
                int64_t row = p * C + c0, c = 0;
                const float *th = theta + (theta_full ? row : c0);
                uint32_t *cw = pwin && pwin[p] >= 0 ? cnt + (int64_t)pwin[p] * C + c0 : NULL;
                for (; c + 8 <= cn; c += 8) {
                    int m = if8(v + row + c, cur + row + c, th + c, reset_zero);
                    if (refill)
                        _mm256_storeu_ps(cur + row + c, _mm256_loadu_ps(refill + c0 + c));
                    or_bits8(acc + c, m, bit);
                    count += __builtin_popcount((unsigned)m);
                    if (cw) {
                        __m256i s = _mm256_and_si256(_mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(m), l32), l32), one);
                        __m256i *d = (__m256i *)(void *)(cw + c);
                        _mm256_storeu_si256(d, _mm256_add_epi32(_mm256_loadu_si256(d), s));
                    }
                }
                for (; c < cn; c++) {
                    int s = if1(v + row + c, cur[row + c], th[c], reset_zero);
                    if (refill)
                        cur[row + c] = refill[c0 + c];
                    acc[c] |= (uint64_t)s << (p - p0);
                    count += s;
                    if (cw)
                        cw[c] += (uint32_t)s;
                }
            }
            for (int64_t c = 0; c < cn; c++)
                bits[(c0 + c) * wpc + (p0 >> 6)] = acc[c];
        }
    }
    return count;
}

static int64_t nz_cl_avx2(const uint32_t *cnt, int64_t n, int64_t C, const uint32_t *chmask, uint64_t *nz)
{
    uint64_t acc[CL_BLOCK + 8];
    int64_t sum = 0, wpc = (n + 63) >> 6;
    for (int64_t c0 = 0; c0 < C; c0 += CL_BLOCK) {
        int64_t cn = C - c0 < CL_BLOCK ? C - c0 : CL_BLOCK;
        for (int64_t o0 = 0; o0 < n; o0 += 64) {
            int64_t oend = o0 + 64 < n ? o0 + 64 : n;
            memset(acc, 0, (size_t)((cn + 15) & ~(int64_t)15) * sizeof *acc);
            for (int64_t o = o0; o < oend; o++) {
                __m256i bit = _mm256_set1_epi64x((long long)(UINT64_C(1) << (o - o0)));
                const uint32_t *row = cnt + o * C + c0;
                int64_t c = 0;
                for (; c + 8 <= cn; c += 8) {
                    __m256i k = _mm256_loadu_si256((const __m256i *)(const void *)(row + c));
                    int m = ~_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(k, _mm256_setzero_si256()))) & 0xFF;
                    or_bits8(acc + c, m, bit);
                    __m256i km = _mm256_and_si256(k, _mm256_loadu_si256((const __m256i *)(const void *)(chmask + c0 + c)));
                    uint32_t t[8];
                    _mm256_storeu_si256((__m256i *)(void *)t, km);
                    sum += (int64_t)t[0] + t[1] + t[2] + t[3] + t[4] + t[5] + t[6] + t[7];
                }
                for (; c < cn; c++) {
                    acc[c] |= (uint64_t)(row[c] != 0) << (o - o0);
                    sum += row[c] & chmask[c0 + c];
                }
            }
            for (int64_t c = 0; c < cn; c++)
                nz[(c0 + c) * wpc + (o0 >> 6)] = acc[c];
        }
    }
    return sum;
}

/* Output chunks stay in registers while every event adds its row, so each
 * output still receives its terms in event order. */
static int64_t affine_avx2(const float *wt, int64_t out, const int32_t *idx, const float *val, int64_t n, float *y)
{
    int64_t o = 0;
    for (; o + 32 <= out; o += 32) {
        __m256 a0 = _mm256_loadu_ps(y + o), a1 = _mm256_loadu_ps(y + o + 8);
        __m256 a2 = _mm256_loadu_ps(y + o + 16), a3 = _mm256_loadu_ps(y + o + 24);
        for (int64_t e = 0; e < n; e++) {
            const float *w = wt + (int64_t)idx[e] * out + o;
            if (e + 4 < n)
                _mm_prefetch((const char *)(wt + (int64_t)idx[e + 4] * out + o), _MM_HINT_T0);
            __m256 va = _mm256_set1_ps(val[e]);
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(w), va));
            a1 = _mm256_add_ps(a1, _mm256_mul_ps(_mm256_loadu_ps(w + 8), va));
            a2 = _mm256_add_ps(a2, _mm256_mul_ps(_mm256_loadu_ps(w + 16), va));
            a3 = _mm256_add_ps(a3, _mm256_mul_ps(_mm256_loadu_ps(w + 24), va));
        }
        _mm256_storeu_ps(y + o, a0);
        _mm256_storeu_ps(y + o + 8, a1);
        _mm256_storeu_ps(y + o + 16, a2);
        _mm256_storeu_ps(y + o + 24, a3);
    }
    for (; o + 8 <= out; o += 8) {
        __m256 a0 = _mm256_loadu_ps(y + o);
        for (int64_t e = 0; e < n; e++)
            a0 = _mm256_add_ps(a0, _mm256_mul_ps(_mm256_loadu_ps(wt + (int64_t)idx[e] * out + o), _mm256_set1_ps(val[e])));
        _mm256_storeu_ps(y + o, a0);
    }
    for (; o < out; o++) {
        float a = y[o];
        for (int64_t e = 0; e < n; e++)
            a += wt[(int64_t)idx[e] * out + o] * val[e];
        y[o] = a;
    }
    return n * out;
}

/* 8 neurons a vector; the tail as the generic kernel. */
static int64_t signed_if_avx2(float *v, int32_t *net, const float *cur, const float *theta, const float *sv,
                              int64_t n, float *y)
{
    int64_t count = 0, k = 0;
    const __m256 zero = _mm256_setzero_ps();
    for (; k + 8 <= n; k += 8) {
        __m256 m = _mm256_add_ps(_mm256_loadu_ps(v + k), _mm256_loadu_ps(cur + k)), th = _mm256_loadu_ps(theta + k);
        __m256i nk = _mm256_loadu_si256((const __m256i *)(net + k));
        __m256i up = _mm256_castps_si256(_mm256_cmp_ps(m, th, _CMP_GE_OQ)); /* −1 where it spikes */
        __m256i down = _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(m, zero, _CMP_LT_OQ)),
                                        _mm256_cmpgt_epi32(nk, _mm256_setzero_si256()));
        __m256i s = _mm256_sub_epi32(down, up); /* +1, −1 or 0 */
        __m256 sf = _mm256_cvtepi32_ps(s);
        _mm256_storeu_ps(v + k, _mm256_sub_ps(m, _mm256_mul_ps(sf, th)));
        _mm256_storeu_si256((__m256i *)(net + k), _mm256_add_epi32(nk, s));
        _mm256_storeu_ps(y + k, _mm256_mul_ps(sf, _mm256_loadu_ps(sv + k)));
        count += __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(up, down))));
    }
    return count + nc_fast_signed_if_scalar(v + k, net + k, cur + k, theta + k, sv + k, n - k, y + k);
}

/* Bursts (nc_signed_if_step): s = clamp(floor(m/θ), 1, B) where m >= θ,
 * clamp(floor(m/θ), −min(net, B), −1) where m < 0 and net > 0, else 0; the
 * division and floor are IEEE-exact as the reference's, and m − s·θ rounds
 * as its m − θ, m + θ and m − (float)s·θ do. 8 neurons a vector. */
static int64_t signed_burst_avx2(float *v, int32_t *net, const float *cur, const float *theta, const float *sv,
                                 int64_t n, int burst, float *y)
{
    int64_t count = 0, k = 0;
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f), mone = _mm256_set1_ps(-1.0f),
                 bf = _mm256_set1_ps((float)burst);
    const __m256i bi = _mm256_set1_epi32(burst);
    for (; k + 8 <= n; k += 8) {
        __m256 m = _mm256_add_ps(_mm256_loadu_ps(v + k), _mm256_loadu_ps(cur + k)), th = _mm256_loadu_ps(theta + k);
        __m256i nk = _mm256_loadu_si256((const __m256i *)(net + k));
        __m256 up = _mm256_cmp_ps(m, th, _CMP_GE_OQ);
        __m256 down = _mm256_and_ps(_mm256_cmp_ps(m, zero, _CMP_LT_OQ),
                                    _mm256_castsi256_ps(_mm256_cmpgt_epi32(nk, _mm256_setzero_si256())));
        __m256 q = _mm256_floor_ps(_mm256_div_ps(m, th));
        __m256 most = _mm256_cvtepi32_ps(_mm256_min_epi32(nk, bi));
        __m256 su = _mm256_min_ps(_mm256_max_ps(q, one), bf);
        __m256 sd = _mm256_max_ps(_mm256_min_ps(q, mone), _mm256_sub_ps(zero, most));
        __m256 sf = _mm256_or_ps(_mm256_and_ps(up, su), _mm256_and_ps(down, sd)); /* θ > 0: not both */
        _mm256_storeu_ps(v + k, _mm256_sub_ps(m, _mm256_mul_ps(sf, th)));
        _mm256_storeu_si256((__m256i *)(net + k), _mm256_add_epi32(nk, _mm256_cvtps_epi32(sf)));
        _mm256_storeu_ps(y + k, _mm256_mul_ps(sf, _mm256_loadu_ps(sv + k)));
        count += __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_or_ps(up, down)));
    }
    return count + nc_fast_signed_burst_scalar(v + k, net + k, cur + k, theta + k, sv + k, n - k, burst, y + k);
}

/* 8 channels a vector, the window's taps summed in registers. */
static int64_t pool_cl_avx2(float *y, const float *x, int64_t rows, int64_t cols, int64_t xh, int64_t xw, int64_t C,
                            float scale)
{
    int64_t nz = 0, k = 0;
    const __m256 zero = _mm256_setzero_ps(), sc = _mm256_set1_ps(scale);
    for (; k + 8 <= C; k += 8) {
        __m256 acc = zero;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                __m256 v = _mm256_loadu_ps(x + i * xh + j * xw + k);
                acc = _mm256_add_ps(acc, v);
                nz += __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v, zero, _CMP_NEQ_UQ)));
            }
        _mm256_storeu_ps(y + k, _mm256_mul_ps(acc, sc));
    }
    return nz + nc_fast_pool_cl_scalar(y, x, rows, cols, xh, xw, C, scale, k);
}

static int64_t dw_cl_avx2(float *y, const float *x, const float *w, int64_t rows, int64_t cols, int64_t xh,
                          int64_t xw, int64_t wh, int64_t C)
{
    int64_t nz = 0, k = 0;
    const __m256 zero = _mm256_setzero_ps();
    for (; k + 8 <= C; k += 8) {
        __m256 acc = _mm256_loadu_ps(y + k);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                __m256 v = _mm256_loadu_ps(x + i * xh + j * xw + k);
                acc = _mm256_add_ps(acc, _mm256_mul_ps(v, _mm256_loadu_ps(w + i * wh + j * C + k)));
                nz += __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_cmp_ps(v, zero, _CMP_NEQ_UQ)));
            }
        _mm256_storeu_ps(y + k, acc);
    }
    return nz + nc_fast_dw_cl_scalar(y, x, w, rows, cols, xh, xw, wh, C, k);
}

static void count_spikes_avx2(uint32_t *cnt, const float *x, const float *unit, int64_t n, int signed_in)
{
    const __m256 zero = _mm256_setzero_ps();
    int64_t k = 0;
    for (; !unit && k + 8 <= n; k += 8) { /* bursts (unit): the scalar rule; a true comparison is −1: subtracting it adds one */
        __m256 v = _mm256_loadu_ps(x + k);
        __m256i c = _mm256_loadu_si256((const __m256i *)(cnt + k));
        if (signed_in)
            c = _mm256_add_epi32(_mm256_sub_epi32(c, _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_GT_OQ))),
                                 _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_LT_OQ)));
        else
            c = _mm256_sub_epi32(c, _mm256_castps_si256(_mm256_cmp_ps(v, zero, _CMP_NEQ_UQ)));
        _mm256_storeu_si256((__m256i *)(cnt + k), c);
    }
    nc_fast_count_spikes_scalar(cnt, x, unit, n, signed_in, k);
}

static void umax_avx2(uint32_t *m, const uint32_t *row, int64_t n)
{
    int64_t k = 0;
    for (; k + 8 <= n; k += 8)
        _mm256_storeu_si256((__m256i *)(m + k), _mm256_max_epu32(_mm256_loadu_si256((const __m256i *)(m + k)),
                                                                 _mm256_loadu_si256((const __m256i *)(row + k))));
    nc_fast_umax_scalar(m, row, n, k);
}

static uint64_t ne_mask64_avx2(const uint32_t *a, const uint32_t *b, int64_t n)
{
    uint64_t bits = 0;
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256i eq = _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(a + k)),
                                        _mm256_loadu_si256((const __m256i *)(b + k)));
        bits |= (uint64_t)(~(unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(eq)) & 0xFFu) << k;
    }
    return bits | nc_fast_ne_mask64_scalar(a, b, n, k);
}

static const nc_fast_kernels kernels_avx2 = {
    .name = "avx2",
    .conv = conv_avx2,
    .affine = affine_avx2,
    .if_flat = if_flat_avx2,
    .if_cl = if_cl_avx2,
    .nz_cl = nz_cl_avx2,
    .signed_if = signed_if_avx2,
    .signed_burst = signed_burst_avx2,
    .pool_cl = pool_cl_avx2,
    .dw_cl = dw_cl_avx2,
    .nl_sum = nl_sum_avx2,
    .nl_emit = nl_emit_avx2,
    .nl_elem = nl_elem_avx2,
    .nl_rows = nl_rows_avx2,
    .count_spikes = count_spikes_avx2,
    .umax = umax_avx2,
    .ne_mask64 = ne_mask64_avx2,
    .compact = nc_fast_compact_generic, /* no compress instruction before AVX-512 */
};

#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

const nc_fast_kernels *nc_fast_avx2(void) { return &kernels_avx2; }

#else
const nc_fast_kernels *nc_fast_avx2(void) { return 0; }
#endif
