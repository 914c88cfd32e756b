/* The portable cpu-fast kernels (plain C loops the compiler may vectorize
 * for the baseline instruction set), and the choice between the versions. */
#include <stdlib.h>
#include <string.h>

#include "fast_kernels.h"
#include "kernels/nonlinear.h"
#include "kernels/neuron.h"

static inline void axpy_generic(float *y, const float *w, float a, int64_t n)
{
    for (int64_t k = 0; k < n; k++)
        y[k] += w[k] * a;
}

#define FAST_AXPY axpy_generic
#define FAST_FN(name) name##_generic
#include "fast_scatter_impl.h"
#include "fast_nonlinear_impl.h"

static int64_t affine_generic(const float *wt, int64_t out, const int32_t *idx, const float *val, int64_t n,
                              float *y)
{
    for (int64_t e = 0; e < n; e++)
        axpy_generic(y, wt + (int64_t)idx[e] * out, val[e], out);
    return n * out;
}

static int64_t if_flat_generic(float *v, const float *cur, const float *theta, int64_t n, int reset_zero,
                               uint64_t *bits)
{
    int64_t count = 0;
    for (int64_t w = 0; w * 64 < n; w++) {
        uint64_t word = 0;
        int64_t end = n - w * 64 < 64 ? n - w * 64 : 64;
        for (int64_t b = 0; b < end; b++) {
            int64_t k = w * 64 + b;
            word |= (uint64_t)nc_if_step(&v[k], cur[k], theta[k], reset_zero) << b;
        }
        bits[w] = word;
        count += __builtin_popcountll(word);
    }
    return count;
}

static int64_t if_cl_generic(float *v, float *cur, const float *theta, int theta_full, int64_t HW, int64_t C,
                             int reset_zero, uint64_t *bits, const int32_t *pwin, uint32_t *cnt,
                             const float *refill)
{
    int64_t count = 0, wpc = (HW + 63) / 64;
    memset(bits, 0, (size_t)(C * wpc) * sizeof *bits);
    for (int64_t p = 0; p < HW; p++) {
        uint32_t *cw = pwin && pwin[p] >= 0 ? cnt + (int64_t)pwin[p] * C : NULL;
        for (int64_t c = 0; c < C; c++) {
            int64_t k = p * C + c;
            int s = nc_if_step(&v[k], cur[k], theta[theta_full ? k : c], reset_zero);
            if (refill)
                cur[k] = refill[c];
            bits[c * wpc + (p >> 6)] |= (uint64_t)s << (p & 63);
            count += s;
            if (cw)
                cw[c] += (uint32_t)s;
        }
    }
    return count;
}

static int64_t nz_cl_generic(const uint32_t *cnt, int64_t n, int64_t C, const uint32_t *chmask, uint64_t *nz)
{
    int64_t sum = 0, wpc = (n + 63) / 64;
    memset(nz, 0, (size_t)(C * wpc) * sizeof *nz);
    for (int64_t o = 0; o < n; o++)
        for (int64_t c = 0; c < C; c++) {
            uint32_t k = cnt[o * C + c];
            nz[c * wpc + (o >> 6)] |= (uint64_t)(k != 0) << (o & 63);
            sum += k & chmask[c];
        }
    return sum;
}

const nc_fast_kernels nc_fast_generic = {
    .name = "generic",
    .conv = conv_generic,
    .affine = affine_generic,
    .if_flat = if_flat_generic,
    .if_cl = if_cl_generic,
    .nz_cl = nz_cl_generic,
    .signed_if = nc_fast_signed_if_scalar,
    .signed_burst = nc_fast_signed_burst_scalar,
    .pool_cl = nc_fast_pool_cl_generic,
    .dw_cl = nc_fast_dw_cl_generic,
    .compact = nc_fast_compact_generic,
    .nl_sum = nl_sum_generic,
    .nl_emit = nl_emit_generic,
    .nl_elem = nl_elem_generic,
    .nl_rows = nl_rows_generic,
    .count_spikes = nc_fast_count_spikes_generic,
    .umax = nc_fast_umax_generic,
    .ne_mask64 = nc_fast_ne_mask64_generic,
};

#if defined(__x86_64__) && defined(__GNUC__)
static int cpu_has(const char *isa)
{
    __builtin_cpu_init();
    if (strcmp(isa, "avx2") == 0)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt");
    if (strcmp(isa, "avx512") == 0)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("popcnt");
    return 0;
}
#else
static int cpu_has(const char *isa)
{
    (void)isa;
    return 0;
}
#endif

const nc_fast_kernels *nc_fast_kernels_select(const char *want)
{
    const nc_fast_kernels *avx512 = cpu_has("avx512") ? nc_fast_avx512() : NULL;
    const nc_fast_kernels *avx2 = cpu_has("avx2") ? nc_fast_avx2() : NULL;
    if (!want)
        return avx512 ? avx512 : avx2 ? avx2 : &nc_fast_generic;
    if (strcmp(want, "generic") == 0)
        return &nc_fast_generic;
    if (strcmp(want, "avx2") == 0)
        return avx2;
    if (strcmp(want, "avx512") == 0)
        return avx512;
    return NULL;
}
