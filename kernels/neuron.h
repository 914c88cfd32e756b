/* Per-element neuron math, shared by the CPU backends and the CUDA kernels
 * (compiled as C and as CUDA), so the arithmetic is tested without a GPU. */
#ifndef NC_KERNELS_NEURON_H
#define NC_KERNELS_NEURON_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define NC_HD __host__ __device__ __forceinline__
#else
#define NC_HD static inline
#endif

/* One IF step (DESIGN §3): m = v + I; spike if m >= θ; reset by subtracting θ
 * or to zero. Updates *v and returns 1 on a spike. */
NC_HD int nc_if_step(float *v, float current, float theta, int reset_zero)
{
    float m = *v + current;
    int s = m >= theta;
    *v = s ? (reset_zero ? 0.0f : m - theta) : m;
    return s;
}

/* One step of a signed IF neuron (DESIGN §3): m = v + I; +1 if m >= θ;
 * −1 if m < 0 while its net count *n is positive; v = m − s·θ. With burst
 * B > 1 it may send up to B spikes of either sign in one step: s =
 * floor(m/θ) clipped to [1, B] when m >= θ, to [−min(n, B), −1] when m < 0
 * and n > 0, so the count follows the cumulative input in steps of θ while
 * one step carries up to B·θ. Updates *v and *n and returns s. */
NC_HD int nc_signed_if_step(float *v, int32_t *n, float current, float theta, int burst)
{
    float m = *v + current;
    int s = m >= theta ? 1 : (m < 0.0f && *n > 0 ? -1 : 0);
    if (s > 0 && burst > 1) {
        float q = floorf(m / theta);
        s = q >= (float)burst ? burst : (q > 1.0f ? (int)q : 1);
    } else if (s < 0 && burst > 1 && *n > 1) {
        int most = *n < burst ? *n : burst;
        float q = floorf(m / theta);
        s = q <= -(float)most ? -most : (q < -1.0f ? (int)q : -1);
    }
    *v = s == 1 ? m - theta : (s == -1 ? m + theta : (s ? m - (float)s * theta : m));
    *n += s;
    return s;
}

/* One forward-Euler step of NIR's LIF: τ·dv/dt = (v_leak − v) + r·I; spike
 * if v >= θ, then v = 0 (NIR's default v_reset) or v − θ. */
NC_HD int nc_lif_step(float *v, float current, float dt_over_tau, float v_leak, float r,
                      float theta, int reset_zero)
{
    float m = *v + dt_over_tau * ((v_leak - *v) + r * current);
    int s = m >= theta;
    *v = s ? (reset_zero ? 0.0f : m - theta) : m;
    return s;
}

/* NIR's CubaLIF synaptic current: τ_syn·dI/dt = −I + w_in·x. */
NC_HD float nc_cuba_syn_step(float *i_syn, float x, float dt_over_tau_syn, float w_in)
{
    *i_syn = *i_syn + dt_over_tau_syn * (w_in * x - *i_syn);
    return *i_syn;
}

#endif
