/* The layer-kind table (layer_kinds.h) and the facts derived from it alone:
 * which layers are static in a run, neuron parameters per neuron. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn_ir.h"

#define NC_K_ROW(id, nm, t)                                                                              \
    [id] = {.name = nm,                                                                                  \
            .neuron = !!((t)&NC_K_NEURON),                                                               \
            .spiking = !!((t)&NC_K_SPIKING),                                                             \
            .integrates = !!((t)&NC_K_INTEGRATES),                                                       \
            .stateless = !!((t)&NC_K_STATELESS),                                                         \
            .synaptic = !!((t)&NC_K_SYNAPTIC),                                                           \
            .counts_synops = !!((t)&NC_K_SYNOPS),                                                        \
            .view = !!((t)&NC_K_VIEW),                                                                   \
            .nir = !!((t)&NC_K_NIR),                                                                     \
            .nir_node = !!((t)&NC_K_NIR_NODE),                                                           \
            .membrane = !!((t)&NC_K_MEMBRANE),                                                           \
            .leaky = !!((t)&NC_K_LEAKY),                                                                 \
            .current = !!((t)&NC_K_CURRENT),                                                             \
            .window = !!((t)&NC_K_WINDOW),                                                               \
            .multi_input = !!((t)&NC_K_MULTI_INPUT),                                                     \
            .same_shape = !!((t)&NC_K_SAME_SHAPE)},

static const nc_snn_kind_traits g_kinds[NC_SNN_N_KINDS] = {NC_SNN_KIND_LIST(NC_K_ROW)};

/* The list and the public enum agree: one row per enumerator, in order (a
 * row's position is its enumerator's value), so a kind added to one and
 * not the other, or out of order, does not build. */
#define NC_K_ONE(id, nm, t) +1
_Static_assert(0 NC_SNN_KIND_LIST(NC_K_ONE) == NC_SNN_KIND_COUNT,
               "NC_SNN_KIND_LIST (snn/ir/layer_kinds.h) needs one row per nc_snn_layer_kind");
_Static_assert(NC_SNN_KIND_COUNT < 64, "NC_KIND_BIT sets of kinds hold 63 kinds");
#define NC_K_POS(id, nm, t) NC_K_POS_##id,
enum { NC_SNN_KIND_LIST(NC_K_POS) };
#define NC_K_IN_ORDER(id, nm, t) _Static_assert((int)NC_K_POS_##id == (int)id, #id " is out of order in NC_SNN_KIND_LIST");
NC_SNN_KIND_LIST(NC_K_IN_ORDER)

static const nc_snn_kind_traits g_unknown = {.name = "unknown"};

const nc_snn_kind_traits *nc_snn_kind(nc_snn_layer_kind k)
{
    int i = (int)k;
    return i >= 0 && i < NC_SNN_N_KINDS && g_kinds[i].name ? &g_kinds[i] : &g_unknown;
}

const char *nc_snn_kind_name(nc_snn_layer_kind k) { return nc_snn_kind(k)->name; }
int nc_snn_kind_is_neuron(nc_snn_layer_kind k) { return nc_snn_kind(k)->neuron; }
int nc_snn_kind_is_if(nc_snn_layer_kind k) { return k == NC_SNN_IF || k == NC_SNN_SIGNED_IF; }

void nc_snn_mark_signed(const nc_snn *s, char *is_signed)
{
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        int passes = L->kind == NC_SNN_SPIKEMAXPOOL2D || L->kind == NC_SNN_FLATTEN || L->kind == NC_SNN_CONCAT ||
                     L->kind == NC_SNN_GATHER;
        is_signed[i] = L->kind == NC_SNN_SIGNED_IF;
        for (int k = 0; passes && k < L->n_inputs; k++)
            if (L->inputs[k] < i && is_signed[L->inputs[k]])
                is_signed[i] = 1;
    }
}

void nc_snn_mark_static(const nc_snn *s, int series, nc_encoding enc, char *is_static)
{
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind == NC_SNN_INPUT) {
            is_static[i] = !series && enc == NC_ENCODING_DIRECT;
            continue;
        }
        is_static[i] = nc_snn_kind(L->kind)->stateless;
        for (int k = 0; k < L->n_inputs; k++) /* a recurrent input changes from step to step */
            if (L->inputs[k] >= i || !is_static[L->inputs[k]])
                is_static[i] = 0;
    }
}

float *nc_snn_param_expand(const nc_tensor *p, const nc_snn_layer *L, float dflt, int channel_last, int *fail)
{
    int64_t n = nc_snn_layer_size(L), C = nc_snn_layer_channels(L), HW = n / C;
    float *a = nc_malloc((size_t)n * sizeof *a);
    if (!a) {
        *fail = 1;
        return NULL;
    }
    for (int64_t c = 0; c < C; c++)
        for (int64_t q = 0; q < HW; q++)
            a[channel_last ? q * C + c : c * HW + q] = nc_snn_param(p, L, c * HW + q, dflt);
    return a;
}

/* Unset (or NaN) entries take the kind's default: an IF spike carries θ and
 * its membrane starts at θ/2; LIF and CubaLIF spikes are 1, v(0) = 0. */
static float *neuron_expand(const nc_snn_layer *L, int v_init, int channel_last, int *fail)
{
    float *a = nc_snn_param_expand(v_init ? L->v_init : L->spike_value, L, NAN, channel_last, fail);
    if (!a)
        return NULL;
    int64_t n = nc_snn_layer_size(L), C = nc_snn_layer_channels(L), HW = n / C;
    for (int64_t c = 0; c < C; c++)
        for (int64_t q = 0; q < HW; q++) {
            float *x = &a[channel_last ? q * C + c : c * HW + q];
            if (!isnan(*x))
                continue;
            float theta = nc_snn_param(L->threshold, L, c * HW + q, 1.0f);
            if (nc_snn_kind_is_if(L->kind))
                *x = v_init ? theta * 0.5f : theta;
            else
                *x = v_init ? 0.0f : 1.0f;
        }
    return a;
}

float *nc_snn_spike_values(const nc_snn_layer *L, int channel_last, int *fail)
{
    return neuron_expand(L, 0, channel_last, fail);
}

float *nc_snn_v_inits(const nc_snn_layer *L, int channel_last, int *fail)
{
    return neuron_expand(L, 1, channel_last, fail);
}

int nc_snn_layer_nir_semantics(const nc_snn_layer *L)
{
    if (!nc_snn_kind(L->kind)->neuron)
        return 0;
    if (L->spike_gt || L->v_reset || L->exact || L->pretest_sub || (nc_snn_kind_is_if(L->kind) && L->r))
        return 1;
    const nc_tensor *ts[] = {L->tau, L->r, L->tau_syn, L->w_in};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        for (int64_t i = 0; ts[k] && i < ts[k]->numel; i++)
            if (!isfinite(nc_f32(ts[k])[i]))
                return 1;
    return 0;
}

const char *nc_snn_nir_semantics_what(const nc_snn_layer *L, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s", L->spike_gt ? ", a spike when m > θ" : "",
             L->v_reset ? ", reset to v_reset" : "", nc_snn_kind_is_if(L->kind) && L->r ? ", an input resistance r" : "",
             L->exact ? ", exact integration" : L->pretest_sub ? ", snntorch's subtraction" : "",
             !(L->spike_gt || L->v_reset || L->exact || (nc_snn_kind_is_if(L->kind) && L->r)) ? ", an infinite τ or r" : "");
    if (buf[0] == ',')
        memmove(buf, buf + 2, strlen(buf + 2) + 1);
    return buf;
}

float *nc_snn_leak_coefs(const nc_snn_layer *L, const nc_tensor *tau, int channel_last, int *fail)
{
    float *a = nc_snn_param_expand(tau, L, 1.0f, channel_last, fail);
    int64_t n = nc_snn_layer_size(L);
    for (int64_t j = 0; a && j < n; j++) {
        double t = a[j];
        a[j] = isinf(t) ? 0.0f : L->exact ? (float)-expm1(-L->dt / t) : (float)(L->dt / t);
    }
    return a;
}


/* nc_snn_spike_units into u (layer l's size, zeroed): 1 if any element
 * carries bursts, 0 if none, -1 out of memory. */
static int fill_units(const nc_snn *s, int l, float *u)
{
    const nc_snn_layer *L = &s->layers[l];
    int x = L->n_inputs > 0 && L->inputs[0] < l ? L->inputs[0] : -1;
    if (L->kind == NC_SNN_SIGNED_IF) {
        if (nc_snn_layer_burst(L) < 2)
            return 0;
        int fail = 0;
        float *sv = nc_snn_spike_values(L, 0, &fail);
        if (!sv)
            return -1;
        memcpy(u, sv, (size_t)nc_snn_layer_size(L) * sizeof *u);
        nc_free(sv);
        return 1;
    }
    if (L->kind == NC_SNN_FLATTEN && x >= 0)
        return fill_units(s, x, u);
    if (L->kind == NC_SNN_CONCAT) {
        int any = 0;
        int64_t off = 0;
        for (int k = 0; k < L->n_inputs && L->inputs[k] < l; k++) {
            int r = fill_units(s, L->inputs[k], u + off);
            if (r < 0)
                return -1;
            any |= r;
            off += nc_snn_layer_size(&s->layers[L->inputs[k]]);
        }
        return any;
    }
    if (x < 0 || (L->kind != NC_SNN_GATHER && L->kind != NC_SNN_RESHAPE && L->kind != NC_SNN_SPIKEMAXPOOL2D))
        return 0;
    const nc_snn_layer *X = &s->layers[x];
    float *ux = nc_calloc((size_t)nc_snn_layer_size(X), sizeof *ux);
    int r = ux ? fill_units(s, x, ux) : -1;
    int64_t n = nc_snn_layer_size(L);
    for (int64_t e = 0; r > 0 && e < n; e++) {
        int64_t k;
        if (L->kind == NC_SNN_GATHER)
            k = nc_i64(L->index)[e];
        else if (L->kind == NC_SNN_RESHAPE)
            k = L->kernel[0] + e;
        else { /* the first tap of output e's window inside the input */
            int64_t OH = L->shape[1], OW = L->shape[2], c = e / (OH * OW), oh = e / OW % OH, ow = e % OW;
            int64_t ih = oh * L->stride[0] - L->padding[0], iw = ow * L->stride[1] - L->padding[1];
            k = (c * X->shape[1] + (ih > 0 ? ih : 0)) * X->shape[2] + (iw > 0 ? iw : 0);
        }
        u[e] = k < 0 ? 0.0f : ux[k];
    }
    nc_free(ux);
    return r;
}

float *nc_snn_spike_units(const nc_snn *s, int l, int *fail)
{
    float *u = nc_calloc((size_t)nc_snn_layer_size(&s->layers[l]), sizeof *u);
    int r = u ? fill_units(s, l, u) : -1;
    if (r <= 0) {
        nc_free(u);
        u = NULL;
        *fail |= r < 0;
    }
    return u;
}
