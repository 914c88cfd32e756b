/* The portable form of a spiking network (nc_snn_make_portable,
 * include/neuroc/snn.h): the network that plain NIR describes completely,
 * so that a tool following NIR's own definitions runs what neuroc runs.
 *
 * NIR's IF spikes when v > v_threshold, resets to v_reset and starts from
 * v = 0. A converted network's IF (DESIGN §3) spikes when m >= θ, resets by
 * subtraction and starts from θ/2. Per IF layer:
 *  - the test: m >= θ is m > θ⁻ for θ⁻ the largest float below θ (exact in
 *    float arithmetic), so v_threshold = θ⁻ and spike_gt;
 *  - v(0): a current of v(0) in the first step instead, from a pulse: a
 *    one-neuron-per-position IF fed a constant 1 (a synaptic layer of zero
 *    weights and bias 1 reading the input) that spikes at step 1 and then
 *    resets to v_reset = −1e30, from which it never climbs back; a 1×1
 *    Conv2d (or an Affine) carries v(0) per channel from it into the IF's
 *    input, a sum NIR writes as two edges. v(0) + I(1) is the same float
 *    as 0 + (I(1) + v(0)), and I(t) + 0 is I(t) later, so this is exact;
 *  - the reset: to zero (NIR's), the one difference left: what it costs in
 *    accuracy is measured (docs/nir.md: portable export).
 * Spike values stay: the NIR writer folds them into the next weights. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn_ir.h"

static nc_tensor *clone_or_null(const nc_tensor *t, int *fail)
{
    if (!t)
        return NULL;
    nc_tensor *c = nc_tensor_clone(t);
    *fail |= !c;
    return c;
}

nc_status nc_snn_copy_layer(nc_snn *t, const nc_snn_layer *L, const int *map)
{
    nc_snn_layer *C = nc_snn_append(t, L->kind, L->name, L->n_inputs);
    if (!C)
        return NC_ERR_NOMEM;
    char *name = C->name;
    int *inputs = C->inputs;
    *C = *L;
    C->name = name;
    C->inputs = inputs;
    for (int k = 0; k < L->n_inputs; k++)
        C->inputs[k] = map[L->inputs[k]];
    int fail = 0;
    nc_tensor **ts[] = {&C->weight, &C->bias, &C->threshold, &C->v_init, &C->spike_value, &C->tau,
                        &C->r,      &C->v_leak, &C->tau_syn, &C->w_in, &C->v_reset, &C->index};
    for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
        *ts[k] = clone_or_null(*ts[k], &fail);
    if (L->part_names && !(C->part_names = nc_calloc((size_t)L->n_inputs, sizeof *C->part_names)))
        fail = 1;
    for (int k = 0; C->part_names && k < L->n_inputs; k++)
        fail |= !(C->part_names[k] = nc_strdup(L->part_names[k]));
    return fail ? nc_errorf(NC_ERR_NOMEM, "out of memory") : NC_OK;
}

static nc_tensor *filled(int ndim, const int64_t *shape, float v)
{
    nc_tensor *t = nc_tensor_new(NC_DTYPE_F32, ndim, shape);
    for (int64_t i = 0; t && i < t->numel; i++)
        nc_f32(t)[i] = v;
    return t;
}

/* The pulse for a layer of shape (C, H, W) or (N): a synaptic layer of zero
 * weights and bias 1 reading the input (constant 1 at every position of
 * shape (1, H, W) or (1)), then an IF that spikes once. Returns the IF's id
 * or -1 (no pulse possible for this shape: the input too small). */
static int make_pulse(nc_snn *t, const nc_snn_layer *L, nc_status *st)
{
    const nc_snn_layer *I = &t->layers[0];
    int64_t in_size = nc_snn_layer_size(I);
    nc_snn_layer *S;
    char name[600];
    snprintf(name, sizeof name, "%.500s_v0pulse_in", L->name);
    if (L->ndim == 3 && I->ndim == 3 && I->shape[1] >= L->shape[1] && I->shape[2] >= L->shape[2]) {
        if (!(S = nc_snn_append_unique(t, NC_SNN_CONV2D, name, 1)))
            return *st = NC_ERR_NOMEM, -1;
        int64_t ws[4] = {1, I->shape[0], I->shape[1] - L->shape[1] + 1, I->shape[2] - L->shape[2] + 1}, one = 1;
        S->weight = filled(4, ws, 0.0f);
        S->bias = filled(1, &one, 1.0f);
        S->stride[0] = S->stride[1] = S->dilation[0] = S->dilation[1] = S->groups = 1;
        S->ndim = 3;
        S->shape[0] = 1, S->shape[1] = L->shape[1], S->shape[2] = L->shape[2];
    } else if (L->ndim == 1) {
        int from = 0;
        if (I->ndim != 1) { /* NIR's Affine reads a vector: a Flatten of the input first */
            char fname[600];
            snprintf(fname, sizeof fname, "%.500s_v0pulse_flat", L->name);
            nc_snn_layer *Fl = nc_snn_append_unique(t, NC_SNN_FLATTEN, fname, 1);
            if (!Fl)
                return *st = NC_ERR_NOMEM, -1;
            Fl->inputs[0] = 0;
            Fl->ndim = 1;
            Fl->shape[0] = in_size;
            from = t->n_layers - 1;
        }
        if (!(S = nc_snn_append_unique(t, NC_SNN_AFFINE, name, 1)))
            return *st = NC_ERR_NOMEM, -1;
        S->inputs[0] = from;
        int64_t ws[2] = {1, in_size}, one = 1;
        S->weight = filled(2, ws, 0.0f);
        S->bias = filled(1, &one, 1.0f);
        S->ndim = 1;
        S->shape[0] = 1;
    } else {
        return -1;
    }
    if (S->kind == NC_SNN_CONV2D)
        S->inputs[0] = 0;
    if (!S->weight || !S->bias)
        return *st = nc_errorf(NC_ERR_NOMEM, "out of memory"), -1;
    int src = t->n_layers - 1;
    snprintf(name, sizeof name, "%.500s_v0pulse", L->name);
    nc_snn_layer *P = nc_snn_append_unique(t, NC_SNN_IF, name, 1);
    if (!P)
        return *st = NC_ERR_NOMEM, -1;
    int64_t one = 1;
    P->inputs[0] = src;
    P->ndim = t->layers[src].ndim;
    memcpy(P->shape, t->layers[src].shape, sizeof P->shape);
    P->threshold = filled(1, &one, 0.5f);
    P->v_init = filled(1, &one, 0.0f);
    P->spike_value = filled(1, &one, 1.0f);
    P->v_reset = filled(1, &one, -1e30f); /* −1e30 + 1 is −1e30 in float: it never fires again */
    P->reset = NC_RESET_ZERO;
    P->spike_gt = 1;
    if (!P->threshold || !P->v_init || !P->spike_value || !P->v_reset)
        return *st = nc_errorf(NC_ERR_NOMEM, "out of memory"), -1;
    return t->n_layers - 1;
}

/* θ⁻ per element, v(0) = 0, reset to zero, spike when m > θ⁻. */
static nc_status spec_if(nc_snn_layer *C, float scale)
{
    if (!C->spike_value) { /* the spike keeps carrying the old θ */
        C->spike_value = nc_tensor_clone(C->threshold);
        if (!C->spike_value)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int64_t i = 0; i < C->threshold->numel; i++)
        nc_f32(C->threshold)[i] = nextafterf(nc_f32(C->threshold)[i] * scale, -INFINITY);
    nc_tensor_free(C->v_init);
    int64_t one = 1;
    C->v_init = filled(1, &one, 0.0f);
    nc_tensor_free(C->v_reset);
    C->v_reset = NULL;
    C->reset = NC_RESET_ZERO;
    C->spike_gt = 1;
    return C->v_init ? NC_OK : nc_errorf(NC_ERR_NOMEM, "out of memory");
}

void nc_portable_options_init(nc_portable_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->v0 = NC_PORTABLE_V0_DROP;
    o->threshold_scale = 1.0f;
}

nc_status nc_snn_make_portable(const nc_snn *s, const nc_portable_options *opt, nc_snn **out, int *n_pulses)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_make_portable: out is NULL");
    *out = NULL;
    if (n_pulses)
        *n_pulses = 0;
    if (!s)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_make_portable: s is NULL");
    nc_portable_options o = {0};
    if (opt)
        o = *opt;
    if (o.v0 != NC_PORTABLE_V0_DROP && o.v0 != NC_PORTABLE_V0_SPREAD && o.v0 != NC_PORTABLE_V0_PULSE)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_make_portable: unknown v0 mode %d", (int)o.v0);
    if (!(o.threshold_scale >= 0 && o.threshold_scale <= 1))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_make_portable: threshold_scale %g is not in (0, 1]",
                         (double)o.threshold_scale);
    if (o.v0 == NC_PORTABLE_V0_SPREAD && !(o.timesteps >= 1))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_make_portable: spreading v(0) needs timesteps >= 1");
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind == NC_SNN_SIGNED_IF || L->kind == NC_SNN_LIF || L->kind == NC_SNN_CUBALIF ||
            !nc_snn_layer_nir_expressible(L))
            return nc_errorf(NC_ERR_UNSUPPORTED, "portable NIR: layer '%s' (%s) %s", L->name,
                             nc_snn_kind_name(L->kind),
                             L->kind == NC_SNN_SIGNED_IF ? "sends negative spikes, which NIR has no neuron for"
                             : nc_snn_kind(L->kind)->neuron ? "is no IF layer (portable export converts IF layers)"
                                                             : "has no NIR node (convert with --maxpool average)");
        for (int k = 0; k < L->n_inputs; k++)
            if (L->inputs[k] >= i)
                return nc_errorf(NC_ERR_UNSUPPORTED, "portable NIR: layer '%s' has a recurrent input", L->name);
    }
    return nc_snn_portable_build(s, &o, 0, out, n_pulses);
}

void nc_snn_remap_late_edges(const nc_snn *s, nc_snn *t, const int *map)
{
    for (int i = 1; i < s->n_layers; i++)
        for (int k = 0; k < s->layers[i].n_inputs; k++)
            if (s->layers[i].inputs[k] >= i)
                t->layers[map[i]].inputs[k] = map[s->layers[i].inputs[k]];
    if (s->output >= 0)
        t->output = map[s->output];
}

nc_status nc_snn_portable_build(const nc_snn *s, const nc_portable_options *opt, int lenient, nc_snn **out,
                                int *n_pulses)
{
    nc_portable_options o = *opt;
    *out = NULL;
    const nc_snn_layer *I0 = &s->layers[0];
    nc_snn *t = NULL;
    nc_status st = nc_snn_create(I0->ndim, I0->shape, &t);
    int *map = nc_calloc((size_t)s->n_layers, sizeof *map);
    if (st == NC_OK && !map)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (st == NC_OK) {
        nc_free(t->layers[0].name);
        t->layers[0].name = nc_strdup(I0->name);
        if (!t->layers[0].name)
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int i = 1; st == NC_OK && i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        /* lenient (the standard form, snn_standard.c): an IF of another
           tool's semantics stays as it is, its NIR node says what it can */
        if (L->kind != NC_SNN_IF || (lenient && nc_snn_layer_nir_semantics(L))) {
            if ((st = nc_snn_copy_layer(t, L, map)) == NC_OK)
                map[i] = t->n_layers - 1;
            continue;
        }
        if (nc_snn_layer_nir_semantics(L) && !(L->spike_gt && L->reset == NC_RESET_ZERO && !L->v_reset && !L->r)) {
            char what[160];
            st = nc_errorf(NC_ERR_UNSUPPORTED, "portable NIR: IF layer '%s' has semantics (%s) the portable form "
                           "does not convert", L->name, nc_snn_nir_semantics_what(L, what, sizeof what));
            break;
        }
        /* v(0) per neuron; a pulse carries it when it is one per channel and not all 0 */
        int fail = 0, any = 0, uniform = 1;
        float *v0 = L->spike_gt ? NULL : nc_snn_v_inits(L, 0, &fail);
        if (fail) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
            break;
        }
        int64_t n = nc_snn_layer_size(L), C = nc_snn_layer_channels(L), HW = n / C;
        for (int64_t k = 0; v0 && k < n; k++) {
            any |= v0[k] != 0.0f;
            uniform &= v0[k] == v0[(k / HW) * HW];
        }
        int from = map[L->inputs[0]];
        const nc_snn_layer *X = &t->layers[from];
        int readers = 0;
        for (int j = 0; j < s->n_layers; j++)
            for (int k = 0; k < s->layers[j].n_inputs; k++)
                readers += s->layers[j].inputs[k] == L->inputs[0];
        if (v0 && any && uniform && o.v0 == NC_PORTABLE_V0_SPREAD && readers == 1 &&
            (X->kind == NC_SNN_AFFINE || X->kind == NC_SNN_CONV2D) && X->bias && X->bias->numel == C) {
            for (int64_t c = 0; c < C; c++) /* the same charge after T steps */
                nc_f32(t->layers[from].bias)[c] += v0[c * HW] / (float)o.timesteps;
            if (n_pulses)
                ++*n_pulses;
        }
        if (v0 && any && uniform && o.v0 == NC_PORTABLE_V0_PULSE) {
            int p = make_pulse(t, L, &st);
            if (p >= 0) {
                char name[600];
                snprintf(name, sizeof name, "%.500s_v0", L->name);
                nc_snn_layer *V = nc_snn_append_unique(t, L->ndim == 3 ? NC_SNN_CONV2D : NC_SNN_AFFINE, name, 1);
                if (!V)
                    st = NC_ERR_NOMEM;
                else {
                    V->inputs[0] = p;
                    V->ndim = L->ndim;
                    memcpy(V->shape, L->shape, sizeof V->shape);
                    int64_t ws[4] = {C, 1, 1, 1};
                    V->weight = filled(L->ndim == 3 ? 4 : 2, ws, 0.0f);
                    V->bias = filled(1, &C, 0.0f);
                    V->stride[0] = V->stride[1] = V->dilation[0] = V->dilation[1] = V->groups = 1;
                    for (int64_t c = 0; V->weight && c < C; c++)
                        nc_f32(V->weight)[c] = v0[c * HW];
                    if (!V->weight || !V->bias)
                        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
                }
                int vid = t->n_layers - 1;
                snprintf(name, sizeof name, "%.500s_in", L->name);
                nc_snn_layer *A = st == NC_OK ? nc_snn_append_unique(t, NC_SNN_ADD, name, 2) : NULL;
                if (st == NC_OK && !A)
                    st = NC_ERR_NOMEM;
                if (st == NC_OK) {
                    A->inputs[0] = from, A->inputs[1] = vid;
                    A->ndim = L->ndim;
                    memcpy(A->shape, L->shape, sizeof A->shape);
                    from = t->n_layers - 1;
                    if (n_pulses)
                        ++*n_pulses;
                }
            }
        }
        nc_free(v0);
        if (st != NC_OK)
            break;
        if ((st = nc_snn_copy_layer(t, L, map)) != NC_OK)
            break;
        nc_snn_layer *Cl = &t->layers[t->n_layers - 1];
        Cl->inputs[0] = from;
        map[i] = t->n_layers - 1;
        if (!L->spike_gt && (st = spec_if(Cl, o.threshold_scale > 0 ? o.threshold_scale : 1.0f)) != NC_OK)
            break;
    }
    if (st == NC_OK) /* recurrent inputs: lenient only */
        nc_snn_remap_late_edges(s, t, map);
    nc_free(map);
    if (st != NC_OK) {
        nc_snn_free(t);
        return st;
    }
    *out = t;
    return NC_OK;
}
