/* Loihi-style fixed-point neuron arithmetic (DESIGN §3: Lava's bit-accurate
 * CUBA model, Loihi 1 arithmetic), per element, compiled as C and as CUDA so
 * the CPU simulator and any kernel share one tested definition.
 *
 *   u = wrap24( rtz(u·(4096 − du − 1), 12) + 64·a_in )
 *   v = clamp(  rtz(v·(4096 − dv), 12) + u + bias_mant·2^bias_exp,  ±(2^23 − 1) )
 *   spike if v > vth·64 (strictly); then v = 0 (u keeps its value)
 *
 * Right shifts of negative numbers are implementation-defined in C, so every
 * "shift" here works on magnitudes (sign-magnitude truncation toward zero). */
#ifndef NC_SIM_LOIHI_FIXED_H
#define NC_SIM_LOIHI_FIXED_H

#include <stdint.h>

#if defined(__CUDACC__)
#define NC_HD __host__ __device__ __forceinline__
#elif !defined(NC_HD)
#define NC_HD static inline
#endif

#define NC_LF_DECAY_SHIFT 12                  /* du, dv are fractions of 4096 */
#define NC_LF_ACT_SHIFT 6                     /* a_in and vth are scaled by 64 */
#define NC_LF_UV_MAX ((int64_t)1 << 23)       /* u lives in (−2^23, 2^23] */
#define NC_LF_V_LIMIT (((int64_t)1 << 23) - 1) /* v saturates at ±(2^23 − 1) */
#define NC_LF_VTH_MAX ((1 << 17) - 1)         /* 17-bit threshold mantissa */
#define NC_LF_BIAS_MANT_MAX 4095              /* 13-bit signed bias mantissa */

/* Reset behaviours after a spike: nc_reset_mode's values (<neuroc/snn.h>;
 * written out so this header stands alone for CUDA, checked in
 * sim_report.c), plus the Loihi 1 emulation of subtraction. */
enum {
    NC_LF_RESET_SUBTRACT = 1, /* NC_RESET_SUBTRACT; Loihi 2 microcode: v = v − vth·64 */
    NC_LF_RESET_ZERO = 2,     /* NC_RESET_ZERO; Loihi 1: v = 0 */
    NC_LF_RESET_TWO_COMP = 3  /* Loihi 1 emulation of subtraction (see nc_lf_two_comp_step) */
};

/* x / 2^s rounded toward zero, for |x| < 2^62 and 0 <= s < 63. */
NC_HD int64_t nc_lf_rtz_shift(int64_t x, int s)
{
    return x >= 0 ? (int64_t)((uint64_t)x >> s) : -(int64_t)((uint64_t)(-x) >> s);
}

/* x · 2^e for a signed exponent: a left shift for e >= 0 (done as a multiply,
 * which is defined for negative x), truncation toward zero for e < 0. */
NC_HD int64_t nc_lf_scale_pow2(int64_t x, int e)
{
    return e >= 0 ? x * ((int64_t)1 << e) : nc_lf_rtz_shift(x, -e);
}

/* Wraps into Lava's 24-bit current range (−2^23, 2^23]: Lava subtracts 2^24
 * above 2^23 and adds 2^24 at or below −2^23; this is the same map taken
 * modulo 2^24, so it also holds for sums that overflow more than once. */
NC_HD int32_t nc_lf_wrap24(int64_t x)
{
    const int64_t m = (int64_t)1 << 24;
    int64_t r = x % m;            /* C99: same sign as x, |r| < 2^24 */
    if (r > NC_LF_UV_MAX)
        r -= m;
    else if (r <= -NC_LF_UV_MAX)
        r += m;
    return (int32_t)r;
}

NC_HD int32_t nc_lf_clamp_v(int64_t x)
{
    return (int32_t)(x > NC_LF_V_LIMIT ? NC_LF_V_LIMIT : (x < -NC_LF_V_LIMIT ? -NC_LF_V_LIMIT : x));
}

/* The effective bias bias_mant · 2^bias_exp. */
NC_HD int64_t nc_lf_bias(int32_t mant, int exp) { return nc_lf_scale_pow2(mant, exp); }

/* The weight as it reaches u: 64 · (mantissa · 2^weight_exp). Lava scales
 * the mantissa by 2^weight_exp (truncating toward zero when negative) before
 * the factor 64 of the activation shift. */
NC_HD int64_t nc_lf_weight(int32_t mant, int exp)
{
    return nc_lf_scale_pow2(mant, exp) * ((int64_t)1 << NC_LF_ACT_SHIFT);
}

/* Current update. `input` is 64·a_in, the sum of nc_lf_weight() over the
 * synapses that received a spike (times the payload of graded spikes).
 * Returns 1 when the 24-bit range wrapped. */
NC_HD int nc_lf_u_step(int32_t *u, int64_t input, int du)
{
    int64_t d = nc_lf_rtz_shift((int64_t)*u * (4096 - du - 1), NC_LF_DECAY_SHIFT) + input;
    *u = nc_lf_wrap24(d);
    return d != (int64_t)*u;
}

/* Voltage update (without threshold or reset). Returns 1 when v saturated. */
NC_HD int nc_lf_v_step(int32_t *v, int32_t u, int dv, int64_t bias)
{
    int64_t d = nc_lf_rtz_shift((int64_t)*v * (4096 - dv), NC_LF_DECAY_SHIFT) + u + bias;
    *v = nc_lf_clamp_v(d);
    return d != (int64_t)*v;
}

/* Flags reported by the step functions, for the simulator's counters. */
enum { NC_LF_SPIKE = 1, NC_LF_U_WRAP = 2, NC_LF_V_SAT = 4, NC_LF_NEG = 8 };

/* One step of a single-compartment CUBA neuron with threshold vth·64 and
 * the given reset (zero or subtract). Returns NC_LF_* flags. */
NC_HD int nc_lf_step(int32_t *u, int32_t *v, int64_t input, int du, int dv, int64_t bias, int32_t vth,
                     int reset)
{
    int f = nc_lf_u_step(u, input, du) ? NC_LF_U_WRAP : 0;
    if (nc_lf_v_step(v, *u, dv, bias))
        f |= NC_LF_V_SAT;
    int64_t th = (int64_t)vth * ((int64_t)1 << NC_LF_ACT_SHIFT);
    if (*v > th) {
        f |= NC_LF_SPIKE;
        *v = reset == NC_LF_RESET_SUBTRACT ? (int32_t)(*v - th) : 0;
    }
    return f;
}

/* One step of a signed IF neuron (DESIGN §3) as a Loihi 2 program: the
 * integration of nc_lf_step, then a graded spike whose payload *s is the
 * signed spike count: up to `burst` thresholds' worth while v > vth·64
 * (each strictly above the next threshold, Loihi's comparison), or as many
 * thresholds given back as bring v to at least 0, at most min(net count,
 * burst), when v < 0 while the net count *n is positive. Subtractive reset
 * only; burst 1 is the single ±1 spike. Returns NC_LF_* flags (NC_LF_NEG
 * with NC_LF_SPIKE for a negative payload). */
NC_HD int nc_lf_signed_step(int32_t *u, int32_t *v, int32_t *n, int64_t input, int du, int dv, int64_t bias,
                            int32_t vth, int burst, int *s)
{
    int f = nc_lf_u_step(u, input, du) ? NC_LF_U_WRAP : 0;
    if (nc_lf_v_step(v, *u, dv, bias))
        f |= NC_LF_V_SAT;
    int64_t th = (int64_t)vth * ((int64_t)1 << NC_LF_ACT_SHIFT), k = 0;
    if (*v > th) {
        k = ((int64_t)*v - 1) / th; /* the most thresholds strictly below v */
        k = k < burst ? k : burst;
        f |= NC_LF_SPIKE;
    } else if (*v < 0 && *n > 0) {
        int64_t most = *n < burst ? *n : burst, need = (-(int64_t)*v + th - 1) / th;
        k = -(need < most ? need : most);
        f |= NC_LF_SPIKE | NC_LF_NEG;
    }
    *v = nc_lf_clamp_v((int64_t)*v - k * th);
    *n += (int32_t)k;
    *s = (int)k;
    return f;
}

/* Loihi 1 emulation of reset by subtraction with two compartments: the
 * integrating compartment A (u, v) never spikes and never resets; the
 * spiking compartment B reads A's v through a dendritic join each step,
 * fires when it exceeds vth·64 and sends its spike to the next layer and,
 * through a synapse of weight −vth·64, back to A, where it arrives one step
 * later like any spike. So A's v after step t+1 is v(t) + I(t+1) − θ·s(t):
 * the membrane m of the float IF neuron, and the difference from the
 * single-compartment step is only where the subtraction happens.
 * `prev_spike` is B's spike of the previous step. */
NC_HD int nc_lf_two_comp_step(int32_t *u, int32_t *v, int64_t input, int prev_spike, int du, int dv,
                              int64_t bias, int32_t vth)
{
    int64_t th = (int64_t)vth * ((int64_t)1 << NC_LF_ACT_SHIFT);
    int f = nc_lf_u_step(u, input - (prev_spike ? th : 0), du) ? NC_LF_U_WRAP : 0;
    if (nc_lf_v_step(v, *u, dv, bias))
        f |= NC_LF_V_SAT;
    if (*v > th)
        f |= NC_LF_SPIKE; /* B fires; its own reset does not touch A */
    return f;
}

/* Encodes an integer current as a bias mantissa (13-bit signed) and an
 * exponent in [0, max_exp]: the smallest exponent whose mantissa fits, the
 * mantissa rounded half away from zero, clipped at the largest exponent.
 * Returns 1 when the value had to be clipped. */
NC_HD int nc_lf_bias_encode(int64_t value, int max_exp, int32_t *mant, int *exp)
{
    int64_t a = value < 0 ? -value : value;
    for (int e = 0; e <= max_exp; e++) {
        int64_t half = e > 0 ? ((int64_t)1 << (e - 1)) : 0;
        int64_t m = (a + half) >> e;
        if (m <= NC_LF_BIAS_MANT_MAX) {
            *mant = (int32_t)(value < 0 ? -m : m);
            *exp = e;
            return 0;
        }
    }
    *mant = value < 0 ? -NC_LF_BIAS_MANT_MAX : NC_LF_BIAS_MANT_MAX;
    *exp = max_exp;
    return 1;
}

#endif
