/* Per-element math of the neurons with NIR's own semantics (nir 1.0.8's
 * docstrings; other tools' files, export/nir/nir_read.c): IF with an input
 * resistance, a spike when v > θ and a reset to v_reset; LIF, CubaLIF, LI,
 * CubaLI and Integrator, with forward Euler or exact integration of the
 * leak. Shared by the cpu and cpu-fast backends (snn/ir/snn_ir.h says
 * which layers use it: nc_snn_layer_nir_semantics and the new kinds). For a
 * neuron that uses none of this the result equals kernels/neuron.h's bit
 * for bit (same operations in the same order). */
#ifndef NC_KERNELS_NIR_NEURON_H
#define NC_KERNELS_NIR_NEURON_H

#include <math.h>

#include "neuron.h"

/* One step of the membrane: m = v + d with
 *   d = r·I                        (leaky 0: IF, Integrator)
 *   d = a·((v_leak − v) + r·I)     (leaky 1: LIF, CubaLIF, LI, CubaLI;
 *                                   a = dt/τ, or 1 − e^(−dt/τ) exact)
 *   d = I                          (leaky 1 with r = ∞ and a = 0: the limit
 *                                   τ = r = ∞ with r/τ = 1/dt, what snntorch
 *                                   writes for β = 1)
 * then a spike when m > θ (gt) or m >= θ, and v = v_reset (reset_zero) or
 * m − θ after it. θ = +∞ never spikes (LI, CubaLI, Integrator). */
/* (pretest: see below) */
NC_HD int nc_nir_neuron_step(float *v, float cur, int leaky, float a, float r, float v_leak, float theta,
                             float v_reset, int gt, int reset_zero, int pretest)
{
    /* pretest (snntorch's subtraction with reset_delay=False): a membrane
     * left above θ by the last step is tested as m − θ (the new v is m − θ·s
     * all the same) */
    float pre = pretest && *v > theta ? theta : 0.0f;
    float d;
    if (!leaky)
        d = r * cur;
    else if (isinf(r))
        d = cur;
    else
        d = a * ((v_leak - *v) + r * cur);
    float m = *v + d, mt = pre != 0.0f ? m - pre : m;
    int s = gt ? mt > theta : mt >= theta;
    *v = s ? (reset_zero ? v_reset : m - theta) : m;
    return s;
}

/* The synaptic current of CubaLIF / CubaLI: I += a_syn·(w_in·x − I)
 * (a_syn = dt/τ_syn or 1 − e^(−dt/τ_syn)); I += x in the limit τ_syn =
 * w_in = ∞ (snntorch's α = 1). */
NC_HD float nc_nir_syn_step(float *i_syn, float x, float a_syn, float w_in)
{
    if (isinf(w_in))
        *i_syn = *i_syn + x;
    else
        *i_syn = *i_syn + a_syn * (w_in * x - *i_syn);
    return *i_syn;
}

#endif
