/* The cpu-fast kernels with AVX-512F (16 floats a vector, masked tails).
 * Compiled for AVX-512 whatever the build's baseline; used only after the
 * CPU check (nc_fast_kernels_select). Multiplies and adds stay separate
 * instructions, so results equal the reference's. */
#include <string.h>

#include "fast_kernels.h"
#include "kernels/nonlinear.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,popcnt")
#endif

static inline __m512 axpy16(__m512 y, const float *w, __m512 a)
{
    return _mm512_add_ps(y, _mm512_mul_ps(_mm512_loadu_ps(w), a));
}

static inline void axpy_avx512(float *y, const float *w, float a, int64_t n)
{
    __m512 va = _mm512_set1_ps(a);
    int64_t k = 0;
    for (; k + 32 <= n; k += 32) {
        __m512 y0 = axpy16(_mm512_loadu_ps(y + k), w + k, va);
        __m512 y1 = axpy16(_mm512_loadu_ps(y + k + 16), w + k + 16, va);
        _mm512_storeu_ps(y + k, y0);
        _mm512_storeu_ps(y + k + 16, y1);
    }
    for (; k + 16 <= n; k += 16)
        _mm512_storeu_ps(y + k, axpy16(_mm512_loadu_ps(y + k), w + k, va));
    if (k < n) {
        __mmask16 m = (__mmask16)((1u << (n - k)) - 1);
        __m512 yv = _mm512_maskz_loadu_ps(m, y + k), wv = _mm512_maskz_loadu_ps(m, w + k);
        _mm512_mask_storeu_ps(y + k, m, _mm512_add_ps(yv, _mm512_mul_ps(wv, va)));
    }
}

#define FAST_AXPY axpy_avx512
#define FAST_FN(name) name##_avx512
#include "fast_scatter_impl.h"
#include "fast_nonlinear_impl.h"

/* The taps t < 9 whose accumulator a0 − rel[t] lies in [lo, hi). */
static inline unsigned band_mask(int64_t a0, const int64_t *rel, int64_t lo, int64_t hi)
{
    unsigned m = 0;
    for (int t = 0; t < 9; t++)
        m |= (unsigned)(a0 - rel[t] >= lo && a0 - rel[t] < hi) << t;
    return m;
}

/* 3×3 stride-1 convolutions with 16 or 32 output channels a group (KG): the
 * nine taps' weights of the current input channel stay in registers over
 * all of that channel's events, so an interior event costs one load, one
 * multiply, one add and one store per output vector. Same arithmetic and
 * order as conv_body. */
static inline __attribute__((always_inline)) int64_t conv3x3_avx512(const nc_fast_conv *g, const float *wt,
                                                                  const int32_t *idx, const float *val,
                                                                  int64_t n, float *acc, const int KG)
{
    const int64_t HW = g->HW, *rel = g->rel;
    int64_t ops = 0, e = 0;
    while (e < n) {
        int64_t c = idx[e] / HW, base = c * HW, end = base + HW;
        const float *wch = wt + c * g->wc;
        float *ach = acc + (c / g->cg) * KG;
        __m512 w0[9], w1[9];
#pragma GCC unroll 9
        for (int t = 0; t < 9; t++) {
            w0[t] = _mm512_loadu_ps(wch + t * KG);
            w1[t] = KG == 32 ? _mm512_loadu_ps(wch + t * KG + 16) : w0[t];
        }
        for (; e < n && idx[e] < end; e++) {
            int64_t p = idx[e] - base, a0 = g->a0[p];
            unsigned mask = g->tap_mask[p];
            if (a0 - rel[8] < g->a_lo || a0 >= g->a_hi) { /* not all inside the band of rows */
                if (a0 < g->a_lo || a0 - rel[8] >= g->a_hi)
                    continue;
                mask &= band_mask(a0, rel, g->a_lo, g->a_hi);
            }
            __m512 va = _mm512_set1_ps(val[e]);
            ops += (int64_t)__builtin_popcount(mask) * KG;
#pragma GCC unroll 9
            for (int t = 0; t < 9; t++) {
                if (!(mask >> t & 1)) /* a tap outside the output (borders) */
                    continue;
                float *d = ach + (a0 - rel[t]);
                _mm512_storeu_ps(d, _mm512_add_ps(_mm512_loadu_ps(d), _mm512_mul_ps(w0[t], va)));
                if (KG == 32)
                    _mm512_storeu_ps(d + 16, _mm512_add_ps(_mm512_loadu_ps(d + 16), _mm512_mul_ps(w1[t], va)));
            }
        }
    }
    return ops;
}

static int64_t conv_regs_avx512(const nc_fast_conv *g, const float *wt, const int32_t *idx, const float *val,
                                int64_t n, float *acc)
{
    if (g->tap_mask && g->kh == 3 && g->kw == 3 && g->kg == 32)
        return conv3x3_avx512(g, wt, idx, val, n, acc, 32);
    if (g->tap_mask && g->kh == 3 && g->kw == 3 && g->kg == 16)
        return conv3x3_avx512(g, wt, idx, val, n, acc, 16);
    return conv_avx512(g, wt, idx, val, n, acc);
}

/* One IF step on the neurons of mask `live` among 16; returns the spikes. */
static inline unsigned if16(float *v, const float *cur, const float *theta, int reset_zero, __mmask16 live)
{
    __m512 th = _mm512_maskz_loadu_ps(live, theta);
    __m512 m = _mm512_add_ps(_mm512_maskz_loadu_ps(live, v), _mm512_maskz_loadu_ps(live, cur));
    __mmask16 s = _mm512_mask_cmp_ps_mask(live, m, th, _CMP_GE_OQ);
    __m512 after = reset_zero ? _mm512_setzero_ps() : _mm512_sub_ps(m, th);
    _mm512_mask_storeu_ps(v, live, _mm512_mask_blend_ps(s, m, after));
    return (unsigned)s;
}

static int64_t if_flat_avx512(float *v, const float *cur, const float *theta, int64_t n, int reset_zero,
                              uint64_t *bits)
{
    int64_t count = 0;
    for (int64_t k = 0; k < n; k += 64) {
        uint64_t word = 0;
        for (int j = 0; j < 4 && k + 16 * j < n; j++) {
            int64_t left = n - k - 16 * j;
            __mmask16 live = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
            word |= (uint64_t)if16(v + k + 16 * j, cur + k + 16 * j, theta + k + 16 * j, reset_zero, live)
                    << (16 * j);
        }
        bits[k >> 6] = word;
        count += __builtin_popcountll(word);
    }
    return count;
}

/* Spikes are gathered into one 64-bit word per channel over blocks of 64
 * positions (a masked OR of the position's bit into the words of the
 * channels that spiked), so no branch depends on where the spikes are. */
#define CL_BLOCK 512

/* acc[0..16) |= bit for the lanes set in m. */
static inline void or_bits16(uint64_t *acc, unsigned m, __m512i bit)
{
    __m512i a0 = _mm512_loadu_si512(acc), a1 = _mm512_loadu_si512(acc + 8);
    _mm512_storeu_si512(acc, _mm512_mask_or_epi64(a0, (__mmask8)m, a0, bit));
    _mm512_storeu_si512(acc + 8, _mm512_mask_or_epi64(a1, (__mmask8)(m >> 8), a1, bit));
}

/* if_cl for NC = 16, 32 or 64 channels (a constant): the words being
 * gathered stay in registers and every vector is whole. */
static inline __attribute__((always_inline)) int64_t if_cl_regs(float *v, float *cur, const float *theta,
                                                              int theta_full, int64_t HW, const int NC,
                                                              int reset_zero, uint64_t *bits, const int32_t *pwin,
                                                              uint32_t *cnt, const float *refill)
{
    const __m512i one = _mm512_set1_epi32(1);
    const __m512 zero = _mm512_setzero_ps();
    int64_t count = 0, wpc = (HW + 63) >> 6;
    for (int64_t p0 = 0; p0 < HW; p0 += 64) {
        int64_t pend = p0 + 64 < HW ? p0 + 64 : HW;
        __m512i acc[8];
#pragma GCC unroll 8
        for (int k = 0; k < NC / 8; k++)
            acc[k] = _mm512_setzero_si512();
        for (int64_t p = p0; p < pend; p++) {
            __m512i bit = _mm512_set1_epi64((long long)(UINT64_C(1) << (p - p0)));
            int64_t row = p * NC;
            const float *th = theta + (theta_full ? row : 0);
            uint32_t *cw = pwin && pwin[p] >= 0 ? cnt + (int64_t)pwin[p] * NC : NULL;
#pragma GCC unroll 4
            for (int c = 0; c < NC; c += 16) {
                __m512 t = _mm512_loadu_ps(th + c);
                __m512 m = _mm512_add_ps(_mm512_loadu_ps(v + row + c), _mm512_loadu_ps(cur + row + c));
                if (refill)
                    _mm512_storeu_ps(cur + row + c, _mm512_loadu_ps(refill + c));
                __mmask16 s = _mm512_cmp_ps_mask(m, t, _CMP_GE_OQ);
                _mm512_storeu_ps(v + row + c, _mm512_mask_blend_ps(s, m, reset_zero ? zero : _mm512_sub_ps(m, t)));
                acc[c / 8] = _mm512_mask_or_epi64(acc[c / 8], (__mmask8)s, acc[c / 8], bit);
                acc[c / 8 + 1] = _mm512_mask_or_epi64(acc[c / 8 + 1], (__mmask8)(s >> 8), acc[c / 8 + 1], bit);
                count += __builtin_popcount((unsigned)s);
                if (cw) {
                    __m512i k = _mm512_loadu_si512(cw + c);
                    _mm512_storeu_si512(cw + c, _mm512_mask_add_epi32(k, s, k, one));
                }
            }
        }
        uint64_t w[64];
#pragma GCC unroll 8
        for (int k = 0; k < NC / 8; k++)
            _mm512_storeu_si512(w + 8 * k, acc[k]);
        for (int c = 0; c < NC; c++)
            bits[c * wpc + (p0 >> 6)] = w[c];
    }
    return count;
}

static int64_t if_cl_avx512(float *v, float *cur, const float *theta, int theta_full, int64_t HW, int64_t C,
                            int reset_zero, uint64_t *bits, const int32_t *pwin, uint32_t *cnt, const float *refill)
{
    if (C == 16)
        return if_cl_regs(v, cur, theta, theta_full, HW, 16, reset_zero, bits, pwin, cnt, refill);
    if (C == 32)
        return if_cl_regs(v, cur, theta, theta_full, HW, 32, reset_zero, bits, pwin, cnt, refill);
    if (C == 64)
        return if_cl_regs(v, cur, theta, theta_full, HW, 64, reset_zero, bits, pwin, cnt, refill);
    uint64_t acc[CL_BLOCK + 16];
    const __m512i one = _mm512_set1_epi32(1);
    int64_t count = 0, wpc = (HW + 63) >> 6;
    for (int64_t c0 = 0; c0 < C; c0 += CL_BLOCK) {
        int64_t cn = C - c0 < CL_BLOCK ? C - c0 : CL_BLOCK;
        for (int64_t p0 = 0; p0 < HW; p0 += 64) {
            int64_t pend = p0 + 64 < HW ? p0 + 64 : HW;
            memset(acc, 0, (size_t)((cn + 15) & ~(int64_t)15) * sizeof *acc);
            for (int64_t p = p0; p < pend; p++) {
                __m512i bit = _mm512_set1_epi64((long long)(UINT64_C(1) << (p - p0)));
                int64_t row = p * C + c0;
                const float *th = theta + (theta_full ? row : c0);
                uint32_t *cw = pwin && pwin[p] >= 0 ? cnt + (int64_t)pwin[p] * C + c0 : NULL;
                for (int64_t c = 0; c < cn; c += 16) {
                    __mmask16 live = cn - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cn - c)) - 1);
                    unsigned m = if16(v + row + c, cur + row + c, th + c, reset_zero, live);
                    if (refill)
                        _mm512_mask_storeu_ps(cur + row + c, live, _mm512_maskz_loadu_ps(live, refill + c0 + c));
                    or_bits16(acc + c, m, bit);
                    count += __builtin_popcount(m);
                    if (cw) {
                        __m512i k = _mm512_maskz_loadu_epi32(live, cw + c);
                        _mm512_mask_storeu_epi32(cw + c, live, _mm512_mask_add_epi32(k, (__mmask16)m, k, one));
                    }
                }
            }
            for (int64_t c = 0; c < cn; c++)
                bits[(c0 + c) * wpc + (p0 >> 6)] = acc[c];
        }
    }
    return count;
}

/* nz_cl for NC = 16, 32 or 64 channels: words gathered in registers. */
static inline __attribute__((always_inline)) int64_t nz_cl_regs(const uint32_t *cnt, int64_t n, const int NC,
                                                              const uint32_t *chmask, uint64_t *nz)
{
    __m512i sum = _mm512_setzero_si512(), cm[4];
    int64_t wpc = (n + 63) >> 6;
#pragma GCC unroll 4
    for (int c = 0; c < NC; c += 16)
        cm[c / 16] = _mm512_loadu_si512(chmask + c);
    for (int64_t o0 = 0; o0 < n; o0 += 64) {
        int64_t oend = o0 + 64 < n ? o0 + 64 : n;
        __m512i acc[8];
#pragma GCC unroll 8
        for (int k = 0; k < NC / 8; k++)
            acc[k] = _mm512_setzero_si512();
        for (int64_t o = o0; o < oend; o++) {
            __m512i bit = _mm512_set1_epi64((long long)(UINT64_C(1) << (o - o0)));
#pragma GCC unroll 4
            for (int c = 0; c < NC; c += 16) {
                __m512i k = _mm512_loadu_si512(cnt + o * NC + c);
                __mmask16 m = _mm512_test_epi32_mask(k, k);
                acc[c / 8] = _mm512_mask_or_epi64(acc[c / 8], (__mmask8)m, acc[c / 8], bit);
                acc[c / 8 + 1] = _mm512_mask_or_epi64(acc[c / 8 + 1], (__mmask8)(m >> 8), acc[c / 8 + 1], bit);
                sum = _mm512_add_epi32(sum, _mm512_and_si512(k, cm[c / 16]));
            }
        }
        uint64_t w[64];
#pragma GCC unroll 8
        for (int k = 0; k < NC / 8; k++)
            _mm512_storeu_si512(w + 8 * k, acc[k]);
        for (int c = 0; c < NC; c++)
            nz[c * wpc + (o0 >> 6)] = w[c];
    }
    /* 32-bit lanes: each holds at most kk·n counts of one channel group */
    return _mm512_reduce_add_epi64(_mm512_add_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(sum)),
                                                    _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(sum, 1))));
}

static int64_t nz_cl_avx512(const uint32_t *cnt, int64_t n, int64_t C, const uint32_t *chmask, uint64_t *nz)
{
    if (C == 16 && n <= (1 << 16))
        return nz_cl_regs(cnt, n, 16, chmask, nz);
    if (C == 32 && n <= (1 << 16))
        return nz_cl_regs(cnt, n, 32, chmask, nz);
    if (C == 64 && n <= (1 << 16))
        return nz_cl_regs(cnt, n, 64, chmask, nz);
    uint64_t acc[CL_BLOCK + 16];
    __m512i sum = _mm512_setzero_si512();
    int64_t wpc = (n + 63) >> 6;
    for (int64_t c0 = 0; c0 < C; c0 += CL_BLOCK) {
        int64_t cn = C - c0 < CL_BLOCK ? C - c0 : CL_BLOCK;
        for (int64_t o0 = 0; o0 < n; o0 += 64) {
            int64_t oend = o0 + 64 < n ? o0 + 64 : n;
            memset(acc, 0, (size_t)((cn + 15) & ~(int64_t)15) * sizeof *acc);
            for (int64_t o = o0; o < oend; o++) {
                __m512i bit = _mm512_set1_epi64((long long)(UINT64_C(1) << (o - o0)));
                const uint32_t *row = cnt + o * C + c0;
                for (int64_t c = 0; c < cn; c += 16) {
                    __mmask16 live = cn - c >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (cn - c)) - 1);
                    __m512i k = _mm512_maskz_loadu_epi32(live, row + c);
                    or_bits16(acc + c, (unsigned)_mm512_test_epi32_mask(k, k), bit);
                    __m512i km = _mm512_and_si512(k, _mm512_maskz_loadu_epi32(live, chmask + c0 + c));
                    /* widen to 64-bit lanes before summing: no overflow */
                    sum = _mm512_add_epi64(sum, _mm512_cvtepu32_epi64(_mm512_castsi512_si256(km)));
                    sum = _mm512_add_epi64(sum, _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(km, 1)));
                }
            }
            for (int64_t c = 0; c < cn; c++)
                nz[(c0 + c) * wpc + (o0 >> 6)] = acc[c];
        }
    }
    return _mm512_reduce_add_epi64(sum);
}

/* Output chunks stay in registers while every event adds its row, so each
 * output still receives its terms in event order. */
static int64_t affine_avx512(const float *wt, int64_t out, const int32_t *idx, const float *val, int64_t n,
                             float *y)
{
    int64_t o = 0;
    for (; o + 128 <= out; o += 128) { /* a whole 512-byte row segment per event */
        __m512 a[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++)
            a[k] = _mm512_loadu_ps(y + o + 16 * k);
        for (int64_t e = 0; e < n; e++) {
            const float *w = wt + (int64_t)idx[e] * out + o;
            if (e + 3 < n) {
                const char *f = (const char *)(wt + (int64_t)idx[e + 3] * out + o);
#pragma GCC unroll 8
                for (int k = 0; k < 8; k++)
                    _mm_prefetch(f + 64 * k, _MM_HINT_T0);
            }
            __m512 va = _mm512_set1_ps(val[e]);
#pragma GCC unroll 8
            for (int k = 0; k < 8; k++)
                a[k] = axpy16(a[k], w + 16 * k, va);
        }
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++)
            _mm512_storeu_ps(y + o + 16 * k, a[k]);
    }
    for (; o + 64 <= out; o += 64) {
        __m512 a0 = _mm512_loadu_ps(y + o), a1 = _mm512_loadu_ps(y + o + 16);
        __m512 a2 = _mm512_loadu_ps(y + o + 32), a3 = _mm512_loadu_ps(y + o + 48);
        for (int64_t e = 0; e < n; e++) {
            const float *w = wt + (int64_t)idx[e] * out + o;
            if (e + 4 < n) {
                const char *f = (const char *)(wt + (int64_t)idx[e + 4] * out + o);
                _mm_prefetch(f, _MM_HINT_T0);
                _mm_prefetch(f + 64, _MM_HINT_T0);
                _mm_prefetch(f + 128, _MM_HINT_T0);
                _mm_prefetch(f + 192, _MM_HINT_T0);
            }
            __m512 va = _mm512_set1_ps(val[e]);
            a0 = axpy16(a0, w, va);
            a1 = axpy16(a1, w + 16, va);
            a2 = axpy16(a2, w + 32, va);
            a3 = axpy16(a3, w + 48, va);
        }
        _mm512_storeu_ps(y + o, a0);
        _mm512_storeu_ps(y + o + 16, a1);
        _mm512_storeu_ps(y + o + 32, a2);
        _mm512_storeu_ps(y + o + 48, a3);
    }
    for (; o < out; o += 16) {
        __mmask16 m = out - o >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (out - o)) - 1);
        __m512 a = _mm512_maskz_loadu_ps(m, y + o);
        for (int64_t e = 0; e < n; e++)
            a = _mm512_add_ps(a, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, wt + (int64_t)idx[e] * out + o),
                                               _mm512_set1_ps(val[e])));
        _mm512_mask_storeu_ps(y + o, m, a);
    }
    return n * out;
}

/* 16 neurons a vector, a masked tail. */
static int64_t signed_if_avx512(float *v, int32_t *net, const float *cur, const float *theta, const float *sv,
                                int64_t n, float *y)
{
    int64_t count = 0;
    const __m512 one = _mm512_set1_ps(1.0f), zero = _mm512_setzero_ps();
    for (int64_t k = 0; k < n; k += 16) {
        __mmask16 live = n - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - k)) - 1);
        __m512 m = _mm512_add_ps(_mm512_maskz_loadu_ps(live, v + k), _mm512_maskz_loadu_ps(live, cur + k));
        __m512 th = _mm512_maskz_loadu_ps(live, theta + k);
        __m512i nk = _mm512_maskz_loadu_epi32(live, net + k);
        __mmask16 up = _mm512_mask_cmp_ps_mask(live, m, th, _CMP_GE_OQ);
        __mmask16 down = _mm512_mask_cmp_ps_mask(live, m, zero, _CMP_LT_OQ) &
                         _mm512_mask_cmpgt_epi32_mask(live, nk, _mm512_setzero_si512());
        __m512 sf = _mm512_mask_blend_ps(down, _mm512_maskz_mov_ps(up, one), _mm512_set1_ps(-1.0f));
        _mm512_mask_storeu_ps(v + k, live, _mm512_sub_ps(m, _mm512_mul_ps(sf, th)));
        _mm512_mask_storeu_epi32(net + k, live, _mm512_add_epi32(nk, _mm512_cvtps_epi32(sf)));
        _mm512_mask_storeu_ps(y + k, live, _mm512_mul_ps(sf, _mm512_maskz_loadu_ps(live, sv + k)));
        count += __builtin_popcount((unsigned)(up | down));
    }
    return count;
}

/* Bursts, as signed_burst_avx2: 16 neurons a vector, a masked tail (whose
 * dead lanes divide by 1). */
static int64_t signed_burst_avx512(float *v, int32_t *net, const float *cur, const float *theta, const float *sv,
                                   int64_t n, int burst, float *y)
{
    int64_t count = 0;
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f), mone = _mm512_set1_ps(-1.0f),
                 bf = _mm512_set1_ps((float)burst);
    const __m512i bi = _mm512_set1_epi32(burst);
    for (int64_t k = 0; k < n; k += 16) {
        __mmask16 live = n - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - k)) - 1);
        __m512 m = _mm512_add_ps(_mm512_maskz_loadu_ps(live, v + k), _mm512_maskz_loadu_ps(live, cur + k));
        __m512 th = _mm512_mask_loadu_ps(one, live, theta + k);
        __m512i nk = _mm512_maskz_loadu_epi32(live, net + k);
        __mmask16 up = _mm512_mask_cmp_ps_mask(live, m, th, _CMP_GE_OQ);
        __mmask16 down = _mm512_mask_cmp_ps_mask(live, m, zero, _CMP_LT_OQ) &
                         _mm512_mask_cmpgt_epi32_mask(live, nk, _mm512_setzero_si512());
        __m512 q = _mm512_roundscale_ps(_mm512_div_ps(m, th), _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
        __m512 most = _mm512_cvtepi32_ps(_mm512_min_epi32(nk, bi));
        __m512 su = _mm512_min_ps(_mm512_max_ps(q, one), bf);
        __m512 sd = _mm512_max_ps(_mm512_min_ps(q, mone), _mm512_sub_ps(zero, most));
        __m512 sf = _mm512_mask_blend_ps(down, _mm512_maskz_mov_ps(up, su), sd);
        _mm512_mask_storeu_ps(v + k, live, _mm512_sub_ps(m, _mm512_mul_ps(sf, th)));
        _mm512_mask_storeu_epi32(net + k, live, _mm512_add_epi32(nk, _mm512_cvtps_epi32(sf)));
        _mm512_mask_storeu_ps(y + k, live, _mm512_mul_ps(sf, _mm512_maskz_loadu_ps(live, sv + k)));
        count += __builtin_popcount((unsigned)(up | down));
    }
    return count;
}

/* 16 channels a vector (a masked tail), the window's taps summed in
 * registers. */
static int64_t pool_cl_avx512(float *y, const float *x, int64_t rows, int64_t cols, int64_t xh, int64_t xw,
                              int64_t C, float scale)
{
    int64_t nz = 0;
    const __m512 zero = _mm512_setzero_ps(), sc = _mm512_set1_ps(scale);
    for (int64_t k = 0; k < C; k += 16) {
        __mmask16 live = C - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (C - k)) - 1);
        __m512 acc = zero;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                __m512 v = _mm512_maskz_loadu_ps(live, x + i * xh + j * xw + k);
                acc = _mm512_add_ps(acc, v);
                nz += __builtin_popcount((unsigned)_mm512_mask_cmp_ps_mask(live, v, zero, _CMP_NEQ_UQ));
            }
        _mm512_mask_storeu_ps(y + k, live, _mm512_mul_ps(acc, sc));
    }
    return nz;
}

static int64_t dw_cl_avx512(float *y, const float *x, const float *w, int64_t rows, int64_t cols, int64_t xh,
                            int64_t xw, int64_t wh, int64_t C)
{
    int64_t nz = 0;
    const __m512 zero = _mm512_setzero_ps();
    for (int64_t k = 0; k < C; k += 16) {
        __mmask16 live = C - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (C - k)) - 1);
        __m512 acc = _mm512_maskz_loadu_ps(live, y + k);
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                __m512 v = _mm512_maskz_loadu_ps(live, x + i * xh + j * xw + k);
                acc = _mm512_add_ps(acc, _mm512_mul_ps(v, _mm512_maskz_loadu_ps(live, w + i * wh + j * C + k)));
                nz += __builtin_popcount((unsigned)_mm512_mask_cmp_ps_mask(live, v, zero, _CMP_NEQ_UQ));
            }
        _mm512_mask_storeu_ps(y + k, live, acc);
    }
    return nz;
}

static inline __mmask16 live16(int64_t n, int64_t k)
{
    return n - k >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << (n - k)) - 1);
}

static void count_spikes_avx512(uint32_t *cnt, const float *x, const float *unit, int64_t n, int signed_in)
{
    if (unit) { /* bursts: the scalar rule */
        nc_fast_count_spikes_scalar(cnt, x, unit, n, signed_in, 0);
        return;
    }
    const __m512 zero = _mm512_setzero_ps();
    const __m512i one = _mm512_set1_epi32(1);
    for (int64_t k = 0; k < n; k += 16) {
        __mmask16 live = live16(n, k);
        __m512 v = _mm512_maskz_loadu_ps(live, x + k);
        __m512i c = _mm512_maskz_loadu_epi32(live, cnt + k);
        if (signed_in) {
            c = _mm512_mask_add_epi32(c, _mm512_cmp_ps_mask(v, zero, _CMP_GT_OQ), c, one);
            c = _mm512_mask_sub_epi32(c, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), c, one);
        } else {
            c = _mm512_mask_add_epi32(c, _mm512_cmp_ps_mask(v, zero, _CMP_NEQ_UQ), c, one);
        }
        _mm512_mask_storeu_epi32(cnt + k, live, c);
    }
}

static void umax_avx512(uint32_t *m, const uint32_t *row, int64_t n)
{
    for (int64_t k = 0; k < n; k += 16) {
        __mmask16 live = live16(n, k);
        _mm512_mask_storeu_epi32(m + k, live, _mm512_max_epu32(_mm512_maskz_loadu_epi32(live, m + k),
                                                               _mm512_maskz_loadu_epi32(live, row + k)));
    }
}

static uint64_t ne_mask64_avx512(const uint32_t *a, const uint32_t *b, int64_t n)
{
    uint64_t bits = 0;
    for (int64_t k = 0; k < n; k += 16) {
        __mmask16 live = live16(n, k);
        bits |= (uint64_t)_mm512_mask_cmpneq_epu32_mask(live, _mm512_maskz_loadu_epi32(live, a + k),
                                                        _mm512_maskz_loadu_epi32(live, b + k))
                << k;
    }
    return bits;
}

/* compact: 16 elements a vector (gathered where strided), the non-zero
 * ones' indices and values compressed to the front and stored whole. */
static int64_t compact_avx512(const float *x, int64_t stride, int64_t n, int32_t base, int32_t *idx, float *val)
{
    const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    const __m512i offs = _mm512_mullo_epi32(iota, _mm512_set1_epi32((int)stride));
    int64_t m = 0, k = 0;
    if (stride > INT32_MAX / 16) /* offsets of a gather are 32-bit */
        return nc_fast_compact_scalar(x, stride, n, base, idx, val, 0);
    for (; k + 16 <= n; k += 16) {
        __m512 v = stride == 1 ? _mm512_loadu_ps(x + k) : _mm512_i32gather_ps(offs, x + k * stride, 4);
        __mmask16 nz = _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NEQ_UQ); /* NaN too, as != */
        __m512i id = _mm512_add_epi32(iota, _mm512_set1_epi32(base + (int32_t)k));
        _mm512_storeu_si512(idx + m, _mm512_maskz_compress_epi32(nz, id));
        _mm512_storeu_ps(val + m, _mm512_maskz_compress_ps(nz, v));
        m += __builtin_popcount((unsigned)nz);
    }
    return m + nc_fast_compact_scalar(x, stride, n, base, idx + m, val + m, k);
}

static const nc_fast_kernels kernels_avx512 = {
    .name = "avx512",
    .conv = conv_regs_avx512,
    .affine = affine_avx512,
    .if_flat = if_flat_avx512,
    .if_cl = if_cl_avx512,
    .nz_cl = nz_cl_avx512,
    .signed_if = signed_if_avx512,
    .signed_burst = signed_burst_avx512,
    .pool_cl = pool_cl_avx512,
    .dw_cl = dw_cl_avx512,
    .nl_sum = nl_sum_avx512,
    .nl_emit = nl_emit_avx512,
    .nl_elem = nl_elem_avx512,
    .nl_rows = nl_rows_avx512,
    .count_spikes = count_spikes_avx512,
    .umax = umax_avx512,
    .ne_mask64 = ne_mask64_avx512,
    .compact = compact_avx512,
};

#ifdef __clang__
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

const nc_fast_kernels *nc_fast_avx512(void) { return &kernels_avx512; }

#else
const nc_fast_kernels *nc_fast_avx512(void) { return 0; }
#endif
