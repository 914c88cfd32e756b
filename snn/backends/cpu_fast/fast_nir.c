/* cpu-fast's layers of NIR's other node types (LI, CubaLI, Integrator,
 * Threshold, Scale, Delay, Reshape) and Gather: dense values in the reference's
 * (NCHW) order, each element as the reference computes it
 * (kernels/nir_neuron.h), so results equal the cpu backend's bit for bit.
 * Their input is materialised in NCHW order first (fast_layer.in_dense 0);
 * a Reshape's range of it straight into its value (fast_steps.c,
 * materialize_range), not through that copy. */
#include <math.h>
#include <string.h>

#include "fast_plan.h"
#include "kernels/nir_neuron.h"

int nc_fast_is_nir_kind(nc_snn_layer_kind k)
{
    return k == NC_SNN_LI || k == NC_SNN_CUBALI || k == NC_SNN_INTEGRATOR || k == NC_SNN_THRESHOLD ||
           k == NC_SNN_SCALE || k == NC_SNN_DELAY || k == NC_SNN_RESHAPE || k == NC_SNN_GATHER;
}

int nc_fast_plan_nir(const nc_snn_layer *L, fast_layer *F)
{
    int fail = 0;
    F->rep = REP_DENSE;
    F->cl = 0;
    F->in_dense = 0;
    F->nir_kind = 1;
    switch (L->kind) {
    case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR:
        F->theta = nc_snn_param_expand(NULL, L, INFINITY, 0, &fail);
        F->v0 = nc_snn_v_inits(L, 0, &fail);
        F->vreset = nc_snn_param_expand(NULL, L, 0.0f, 0, &fail);
        F->r = nc_snn_param_expand(L->r, L, 1.0f, 0, &fail);
        if (nc_snn_kind(L->kind)->leaky) {
            F->dt_tau = nc_snn_leak_coefs(L, L->tau, 0, &fail);
            F->vleak = nc_snn_param_expand(L->v_leak, L, 0.0f, 0, &fail);
        }
        if (nc_snn_kind(L->kind)->current) {
            F->dt_tau_syn = nc_snn_leak_coefs(L, L->tau_syn, 0, &fail);
            F->w_in = nc_snn_param_expand(L->w_in, L, 1.0f, 0, &fail);
        }
        break;
    case NC_SNN_THRESHOLD: F->theta = nc_snn_param_expand(L->threshold, L, 0.0f, 0, &fail); break;
    case NC_SNN_SCALE: F->sval = nc_snn_param_expand(L->weight, L, 1.0f, 0, &fail); break;
    default: break;
    }
    return !fail;
}

void nc_fast_nir_step(const nc_snn_layer *L, const fast_layer *F, fast_ws *W, int i)
{
    const float *x = W->tmp[i];
    float *y = W->dense[i];
    int64_t n = F->size;
    switch (L->kind) {
    case NC_SNN_LI: case NC_SNN_CUBALI: case NC_SNN_INTEGRATOR: {
        float *v = W->v[i];
        int leaky = nc_snn_kind(L->kind)->leaky, syn = nc_snn_kind(L->kind)->current;
        for (int64_t k = 0; k < n; k++) {
            float cur = x[k];
            if (syn)
                cur = nc_nir_syn_step(&W->isyn[i][k], cur, F->dt_tau_syn[k], F->w_in[k]);
            nc_nir_neuron_step(&v[k], cur, leaky, leaky ? F->dt_tau[k] : 0.0f, F->r[k], leaky ? F->vleak[k] : 0.0f,
                               F->theta[k], F->vreset[k], L->spike_gt, L->reset == NC_RESET_ZERO, 0);
            y[k] = v[k];
        }
        break;
    }
    case NC_SNN_THRESHOLD:
        for (int64_t k = 0; k < n; k++)
            y[k] = (L->spike_gt ? x[k] > F->theta[k] : x[k] >= F->theta[k]) ? 1.0f : 0.0f;
        break;
    case NC_SNN_SCALE:
        for (int64_t k = 0; k < n; k++)
            y[k] = x[k] * F->sval[k];
        break;
    case NC_SNN_DELAY: { /* the reference's ring of d + 1 frames */
        int64_t d = L->kernel[0], pos = W->ring_pos[i];
        memcpy(W->ring[i] + pos * n, x, (size_t)n * sizeof *x);
        int64_t rpos = (pos + 1) % (d + 1);
        memcpy(y, W->ring[i] + rpos * n, (size_t)n * sizeof *y);
        W->ring_pos[i] = rpos;
        break;
    }
    case NC_SNN_GATHER: { /* routing: element k is input index[k], or 0 */
        const int64_t *ix = nc_i64(L->index);
        for (int64_t k = 0; k < n; k++)
            y[k] = ix[k] < 0 ? 0.0f : x[ix[k]];
        break;
    }
    default: break;
    }
}
