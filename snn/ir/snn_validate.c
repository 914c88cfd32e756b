/* One validation of a layer of the IR (nc_snn_layer_validate, snn_ir.h):
 * the invariants the public builders keep (snn.c), which the NIR readers
 * (export/nir: a layer read from a file) and the builders alike check here,
 * the kind's traits (layer_kinds.h) saying which rules apply. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "snn/base/error.h"
#include "snn_ir.h"

/* Output size of a window over `in` (NIR's arithmetic: no overflow guard
 * here beyond the callers' limits). */
static int64_t window_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil)
{
    int64_t span = dil * (k - 1) + 1;
    if (in + 2 * pad < span)
        return 0;
    return (in + 2 * pad - span) / stride + 1;
}

static nc_status positive(const nc_tensor *t, const char *layer, const char *what)
{
    for (int64_t k = 0; t && k < t->numel; k++)
        if (!(nc_f32(t)[k] > 0.0f))
            return nc_errorf(NC_ERR_MODEL, "layer '%s': %s must be positive", layer, what);
    return NC_OK;
}

/* Each of the named neuron tensors of L has 1, C or full-size elements. */
static nc_status check_params(const nc_snn_layer *L, nc_tensor *const *ts, const char *const *names, size_t n)
{
    nc_status st = NC_OK;
    for (size_t k = 0; st == NC_OK && k < n; k++)
        st = nc_snn_check_param(ts[k], L, names[k]);
    return st;
}

static void same_shape(nc_snn_layer *L, const nc_snn_layer *X)
{
    L->ndim = X->ndim;
    memcpy(L->shape, X->shape, sizeof L->shape);
}

static nc_status check_affine(nc_snn_layer *L, const nc_snn_layer *X)
{
    const nc_tensor *W = L->weight;
    int64_t xsize = nc_snn_layer_size(X);
    if (!W || W->ndim != 2)
        return nc_errorf(NC_ERR_SHAPE, "Affine '%s': weight has rank %d; expected 2 ([out, in])", L->name,
                         W ? W->ndim : 0);
    if (W->shape[1] != xsize)
        return nc_errorf(NC_ERR_SHAPE, "Affine '%s': weight is [%lld, %lld] but its input '%s' has %lld values",
                         L->name, (long long)W->shape[0], (long long)W->shape[1], X->name, (long long)xsize);
    if (!L->bias || L->bias->numel != W->shape[0])
        return nc_errorf(NC_ERR_SHAPE, "Affine '%s': bias must have %lld elements", L->name, (long long)W->shape[0]);
    nc_tensor_reshape_inplace(L->bias, 1, &W->shape[0]);
    L->ndim = 1;
    L->shape[0] = W->shape[0];
    return NC_OK;
}

static nc_status check_conv2d(nc_snn_layer *L, const nc_snn_layer *X)
{
    const nc_tensor *W = L->weight;
    if (!W || W->ndim != 4)
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': weight has rank %d; expected 4 ([C_out, C_in/groups, kH, kW])",
                         L->name, W ? W->ndim : 0);
    if (X->ndim != 3)
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': input '%s' must be (C, H, W), it has rank %d", L->name, X->name,
                         X->ndim);
    int64_t cout = W->shape[0], g = L->groups;
    for (int k = 0; k < 2; k++)
        if (L->stride[k] < 1 || L->dilation[k] < 1 || L->padding[k] < 0)
            return nc_errorf(NC_ERR_MODEL, "Conv2d '%s': stride and dilation must be >= 1, padding >= 0", L->name);
    if (g < 1 || X->shape[0] % g || cout % g || W->shape[1] * g != X->shape[0])
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': weight [%lld, %lld, ...] with groups %lld does not fit input "
                         "'%s' of %lld channels", L->name, (long long)cout, (long long)W->shape[1], (long long)g,
                         X->name, (long long)X->shape[0]);
    if (!L->bias || L->bias->numel != cout)
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': bias must have %lld elements", L->name, (long long)cout);
    nc_tensor_reshape_inplace(L->bias, 1, &cout);
    int64_t oh = window_out(X->shape[1], W->shape[2], L->stride[0], L->padding[0], L->dilation[0]);
    int64_t ow = window_out(X->shape[2], W->shape[3], L->stride[1], L->padding[1], L->dilation[1]);
    if (oh <= 0 || ow <= 0)
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': kernel larger than the padded input", L->name);
    L->ndim = 3;
    L->shape[0] = cout;
    L->shape[1] = oh;
    L->shape[2] = ow;
    return NC_OK;
}

/* Pooling windows (the WINDOW kinds): sum pooling may pad as far as it
 * likes, max pooling less than a kernel (a window of padding alone has no
 * maximum). */
static nc_status check_window(nc_snn_layer *L, const nc_snn_layer *X)
{
    const char *what = nc_snn_kind_name(L->kind);
    int sum = L->kind == NC_SNN_POOL2D;
    if (X->ndim != 3)
        return nc_errorf(NC_ERR_SHAPE, "%s '%s': input '%s' must be (C, H, W)", what, L->name, X->name);
    for (int k = 0; k < 2; k++)
        if (L->kernel[k] < 1 || L->stride[k] < 1 || L->padding[k] < 0 || (!sum && L->padding[k] >= L->kernel[k]))
            return nc_errorf(NC_ERR_MODEL, "%s '%s': kernel and stride must be >= 1, padding >= 0%s", what, L->name,
                             !sum ? " and smaller than the kernel" : "");
    for (int k = 0; k < 2; k++)
        if (L->kernel[k] > INT32_MAX || L->stride[k] > INT32_MAX || L->padding[k] > INT32_MAX)
            return nc_errorf(NC_ERR_MODEL, "%s '%s': kernel, stride or padding beyond %d", what, L->name, INT32_MAX);
    /* the counted padding of per-window divisors: within the padding (nc_snn_add_pool2d_div) */
    for (int k = 0; k < 2; k++)
        if ((L->div_taps && (L->div_pad[k] < 0 || L->div_pad[k] > L->padding[k])) ||
            (!L->div_taps && L->div_pad[k] != 0))
            return nc_errorf(NC_ERR_MODEL, "%s '%s': div_pad (%lld, %lld) must be in [0, padding (%lld, %lld)] "
                             "with per-window divisors, 0 without", what, L->name, (long long)L->div_pad[0],
                             (long long)L->div_pad[1], (long long)L->padding[0], (long long)L->padding[1]);
    int64_t out[2];
    for (int k = 0; k < 2; k++) {
        int64_t in = X->shape[k + 1];
        if ((out[k] = window_out(in, L->kernel[k], L->stride[k], L->padding[k], 1)) <= 0)
            return nc_errorf(NC_ERR_SHAPE, "%s '%s': kernel larger than the padded input", what, L->name);
        /* One more window than floor mode, where the layer's shape says so
         * (a builder's, an extension node's): the ceil-mode partial window
         * the builders allow, extra end padding in (0, stride) that starts
         * inside the input or the leading padding. */
        int partial_ok = !sum || L->div_taps;
        int64_t start = (out[k] - 1) * L->stride[k]; /* <= in + 2·padding − kernel */
        int64_t rest = in + 2 * L->padding[k] - L->kernel[k] - start; /* in [0, stride) */
        if (partial_ok && L->ndim == 3 && L->shape[k + 1] == out[k] + 1 && rest > 0 &&
            L->stride[k] < in + L->padding[k] - start)
            out[k]++;
    }
    L->ndim = 3;
    L->shape[0] = X->shape[0];
    L->shape[1] = out[0];
    L->shape[2] = out[1];
    return NC_OK;
}

static nc_status check_reshape(const nc_snn_layer *L, const nc_snn_layer *X)
{
    int64_t n = 1, xsize = nc_snn_layer_size(X);
    for (int d = 0; d < L->ndim; d++)
        n = L->shape[d] >= 0 && (L->shape[d] == 0 || n <= INT64_MAX / L->shape[d]) ? n * L->shape[d] : -1;
    if (L->ndim < 1 || n < 0 || L->kernel[0] < 0 || L->kernel[1] != 0 || L->kernel[0] > xsize - n)
        return nc_errorf(NC_ERR_SHAPE, "Reshape '%s': values %lld to %lld of the %lld of '%s'", L->name,
                         (long long)L->kernel[0], (long long)(L->kernel[0] + n), (long long)xsize, X->name);
    return NC_OK;
}

/* Every index within the input or -1 (a zero), one per output element. */
static nc_status check_gather(const nc_snn_layer *L, const nc_snn_layer *X)
{
    int64_t n = 1, xsize = nc_snn_layer_size(X);
    for (int d = 0; d < L->ndim; d++)
        n = L->shape[d] >= 0 && (L->shape[d] == 0 || n <= INT64_MAX / L->shape[d]) ? n * L->shape[d] : -1;
    if (L->ndim < 1 || n < 0 || !L->index || L->index->dtype != NC_DTYPE_I64 || L->index->numel != n)
        return nc_errorf(NC_ERR_SHAPE, "Gather '%s': its index map must hold one int64 per output element (%lld)",
                         L->name, (long long)n);
    for (int64_t e = 0; e < n; e++) {
        int64_t k = nc_i64(L->index)[e];
        if (k < -1 || k >= xsize)
            return nc_errorf(NC_ERR_SHAPE, "Gather '%s': index %lld of element %lld is outside the %lld values of '%s'",
                             L->name, (long long)k, (long long)e, (long long)xsize, X->name);
    }
    return NC_OK;
}

/* Add (same shapes) and Concat (same but for the channels). Recurrent
 * inputs are checked once every layer has its shape (the NIR reader's
 * nir_check_recurrent). */
static nc_status check_multi(const nc_snn *s, int id, nc_snn_layer *L, const nc_snn_layer *X)
{
    int64_t channels = 0;
    for (int k = 0; k < L->n_inputs; k++) {
        if (L->inputs[k] >= id)
            continue;
        const nc_snn_layer *B = &s->layers[L->inputs[k]];
        int same = B->ndim == X->ndim;
        for (int d = L->kind == NC_SNN_ADD ? 0 : 1; same && d < X->ndim; d++)
            same = B->shape[d] == X->shape[d];
        if (!same || (L->kind == NC_SNN_CONCAT && X->ndim < 1))
            return nc_errorf(NC_ERR_SHAPE, "%s '%s': inputs '%s' and '%s' have different shapes",
                             nc_snn_kind_name(L->kind), L->name, X->name, B->name);
        channels += B->shape[0];
    }
    same_shape(L, X);
    if (L->kind == NC_SNN_CONCAT)
        L->shape[0] = channels;
    return NC_OK;
}

/* Threshold, Scale, Delay: per-neuron, no membrane. */
static nc_status check_per_neuron(nc_snn_layer *L, const nc_snn_layer *X)
{
    same_shape(L, X);
    if (L->kind == NC_SNN_SCALE && !L->weight)
        return nc_errorf(NC_ERR_MODEL, "Scale '%s': no scale", L->name);
    if (L->kind == NC_SNN_THRESHOLD && !L->threshold)
        return nc_errorf(NC_ERR_MODEL, "Threshold '%s': no threshold", L->name);
    if (L->kind == NC_SNN_DELAY && (L->kernel[0] < 0 || L->kernel[0] > 1000000))
        return nc_errorf(NC_ERR_MODEL, "Delay '%s': %lld steps (0 to 1e6)", L->name, (long long)L->kernel[0]);
    nc_tensor *const ts[] = {L->weight, L->threshold};
    static const char *const names[] = {"scale", "threshold"};
    return check_params(L, ts, names, 2);
}

/* The leaky kinds' time constants over a positive dt. */
static nc_status check_leak(const nc_snn_layer *L)
{
    nc_status st;
    if (!(L->dt > 0))
        return nc_errorf(NC_ERR_MODEL, "layer '%s': dt must be positive", L->name);
    if ((st = positive(L->tau, L->name, "tau")) != NC_OK)
        return st;
    return positive(L->tau_syn, L->name, "tau_syn");
}

/* LI, CubaLI, Integrator: a membrane that does not spike. */
static nc_status check_integrator(nc_snn_layer *L, const nc_snn_layer *X)
{
    same_shape(L, X);
    nc_tensor *const ts[] = {L->tau, L->r, L->v_leak, L->v_init, L->tau_syn, L->w_in};
    static const char *const names[] = {"tau", "r", "v_leak", "v_init", "tau_syn", "w_in"};
    nc_status st = check_params(L, ts, names, 6);
    if (st != NC_OK || L->kind == NC_SNN_INTEGRATOR)
        return st;
    return check_leak(L);
}

/* The spiking neurons (IF, SignedIF, LIF, CubaLIF). */
static nc_status check_neuron(nc_snn_layer *L, const nc_snn_layer *X)
{
    nc_status st;
    same_shape(L, X);
    if (L->reset != NC_RESET_SUBTRACT && L->reset != NC_RESET_ZERO)
        return nc_errorf(NC_ERR_MODEL, "layer '%s': unknown reset mode %d", L->name, (int)L->reset);
    if (nc_snn_kind_is_if(L->kind) && !L->threshold)
        return nc_errorf(NC_ERR_MODEL, "IF '%s': no threshold", L->name);
    if (L->kind == NC_SNN_SIGNED_IF && L->reset != NC_RESET_SUBTRACT)
        return nc_errorf(NC_ERR_MODEL, "SignedIF '%s': signed spikes need the subtractive reset", L->name);
    nc_tensor *const ts[] = {L->threshold, L->v_init, L->spike_value, L->tau, L->r,
                             L->v_leak,    L->tau_syn, L->w_in,      L->v_reset};
    static const char *const names[] = {"threshold", "v_init", "spike_value", "tau", "r",
                                        "v_leak",    "tau_syn", "w_in",       "v_reset"};
    if ((st = check_params(L, ts, names, 9)) != NC_OK)
        return st;
    if (L->kind == NC_SNN_SIGNED_IF && nc_snn_layer_nir_semantics(L))
        return nc_errorf(NC_ERR_MODEL, "SignedIF '%s': NIR neuron semantics do not apply to signed spikes", L->name);
    if (L->two_sided && L->kind != NC_SNN_SIGNED_IF)
        return nc_errorf(NC_ERR_MODEL, "layer '%s' (%s): two-sided counts belong to a SignedIF", L->name,
                         nc_snn_kind_name(L->kind));
    if (L->kind == NC_SNN_SIGNED_IF && (st = positive(L->spike_value, L->name, "spike values")) != NC_OK)
        return st;
    if (nc_snn_kind_is_if(L->kind))
        return positive(L->threshold, L->name, "thresholds");
    return check_leak(L);
}

/* The rules of L's kind, given its first forward input X. */
static nc_status check_kind(const nc_snn *s, int id, nc_snn_layer *L, const nc_snn_layer *X)
{
    const nc_snn_kind_traits *K = nc_snn_kind(L->kind);
    if (K->window)
        return check_window(L, X);
    if (K->multi_input)
        return check_multi(s, id, L, X);
    if (K->neuron)
        return check_neuron(L, X);
    if (K->membrane)
        return check_integrator(L, X);
    switch (L->kind) {
    case NC_SNN_AFFINE: return check_affine(L, X);
    case NC_SNN_CONV2D: return check_conv2d(L, X);
    case NC_SNN_RESHAPE: return check_reshape(L, X);
    case NC_SNN_GATHER: return check_gather(L, X);
    case NC_SNN_FLATTEN:
        L->ndim = 1;
        L->shape[0] = nc_snn_layer_size(X);
        return NC_OK;
    case NC_SNN_READOUT: same_shape(L, X); return NC_OK;
    case NC_SNN_NONLINEAR: return nc_snn_check_nonlinear(s, L);
    case NC_SNN_SCALE: case NC_SNN_THRESHOLD: case NC_SNN_DELAY: return check_per_neuron(L, X);
    default:
        return nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s': a %s layer read from NIR cannot be checked", L->name,
                         nc_snn_kind_name(L->kind));
    }
}

nc_status nc_snn_layer_validate(nc_snn *s, int id, int total)
{
    nc_snn_layer *L = &s->layers[id];
    int fwd = -1;
    for (int k = 0; k < L->n_inputs; k++) {
        if (L->inputs[k] < 0 || L->inputs[k] >= total)
            return nc_errorf(NC_ERR_MODEL, "layer '%s': input %d does not exist", L->name, L->inputs[k]);
        if (L->inputs[k] >= id && L->kind != NC_SNN_ADD)
            return nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s' (%s): recurrent inputs are only supported into a sum",
                             L->name, nc_snn_kind_name(L->kind));
        if (fwd < 0 && L->inputs[k] < id)
            fwd = L->inputs[k];
    }
    if (L->kind == NC_SNN_INPUT)
        return NC_OK;
    if ((L->div_taps || L->div_pad[0] || L->div_pad[1]) && L->kind != NC_SNN_POOL2D)
        return nc_errorf(NC_ERR_MODEL, "layer '%s' (%s): per-window divisors belong to a Pool2d", L->name,
                         nc_snn_kind_name(L->kind));
    if (fwd < 0)
        return nc_errorf(NC_ERR_MODEL, "layer '%s' has no input from an earlier layer", L->name);
    nc_status st;
    if (L->kind == NC_SNN_SPIKEMAXPOOL2D && (st = nc_snn_check_spikemax_input(s, fwd, L->name)) != NC_OK)
        return st;
    if (L->max_spikes && (L->kind != NC_SNN_SIGNED_IF || L->max_spikes < 2 || L->max_spikes > NC_MAX_BURST))
        return nc_errorf(NC_ERR_MODEL, "layer '%s' (%s): max_spikes %d: bursts of 2 to %d spikes belong to a "
                         "SignedIF", L->name, nc_snn_kind_name(L->kind), L->max_spikes, NC_MAX_BURST);
    /* a pooling kind NIR cannot express (an extension node) without its window, or with a weight or
     * more inputs than one: not what any builder makes */
    const nc_snn_kind_traits *K = nc_snn_kind(L->kind);
    if (K->window && !K->nir && ((!L->kernel[0] && !L->kernel[1]) || L->weight || L->n_inputs != 1))
        return nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s': a %s layer read from NIR cannot be checked", L->name,
                         nc_snn_kind_name(L->kind));
    return check_kind(s, id, L, &s->layers[fwd]);
}
