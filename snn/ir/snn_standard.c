/* The standard form of a spiking network (DESIGN §4): the best that plain
 * NIR (nir 1.0.x node types, NIR's own neuron semantics) can hold of it,
 * what every .nir file neuroc writes keeps under /node so that every NIR
 * tool opens it. neuroc's exact network goes beside it (nir_write.c).
 *
 * Two passes. The first replaces each layer NIR cannot express:
 *  - Concat (along the first per-sample dimension): exactly, as one 1×1
 *    Conv2d (or Affine) per input placing its channels at their offset,
 *    summed by an Add (NIR sums the edges into a node);
 *  - Reshape to one dimension: exactly, a Flatten;
 *  - the Reshapes and the Concat that join a NIR graph's several Input or
 *    Output nodes (io_part): kept, the writer makes them Input and Output
 *    nodes again;
 *  - SignedIF with bursts of up to B: an IF of threshold and spike value
 *    B·θ (the plain IF of the same clip; negative spikes and the finer
 *    steps are lost);
 *  - MaxPool2d, SpikeMaxPool2d: average pooling (NIR has no max);
 *  - an average pool with per-window divisors: one divisor k² for all
 *    windows, ceil mode's extra window as padding;
 *  - Nonlinear (NIR 1.0 has no non-linear node, nor a product of two
 *    activations): the identity, no layer, its readers reading what stands
 *    in for it (nonlinear_stand_in); a layer that would read a MatMul with
 *    nothing to stand in refuses the standard form, naming both;
 * the second is the portable form (snn_portable.c, v(0) dropped: what every
 * peer runs) of the IF layers, other layers copied. What is lost is said in
 * nc_snn_std_loss.text, one line per kind of loss. */
#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn_ir.h"

/* Layers that lost the same thing: their count and first names. */
typedef struct lossy {
    int n;
    char names[160];
} lossy;

static void note(lossy *c, const char *name)
{
    size_t len = strlen(c->names);
    if (c->n++ < 3)
        snprintf(c->names + len, sizeof c->names - len, "%s'%.40s'", len ? ", " : "", name);
    else if (c->n == 4)
        snprintf(c->names + len, sizeof c->names - len, ", ...");
}

static void say(nc_snn_std_loss *loss, const lossy *c, const char *what)
{
    size_t len = strlen(loss->text);
    if (c->n)
        snprintf(loss->text + len, sizeof loss->text - len, "%d layer%s (%s): %s\n", c->n, c->n > 1 ? "s" : "",
                 c->names, what);
}

static nc_tensor *zeros(int ndim, const int64_t *shape)
{
    nc_tensor *t = nc_tensor_new(NC_DTYPE_F32, ndim, shape);
    if (t)
        memset(t->data, 0, (size_t)t->numel * sizeof(float));
    return t;
}

/* Concat layer L of s as placement layers and an Add appended to t. */
static nc_status concat_as_sum(nc_snn *t, const nc_snn *s, int i, int *map)
{
    const nc_snn_layer *L = &s->layers[i];
    if (L->ndim != 1 && L->ndim != 3)
        return nc_errorf(NC_ERR_UNSUPPORTED, "Concat '%s' of rank %d: no NIR form", L->name, L->ndim);
    int64_t total = L->shape[0], off = 0;
    int *parts = nc_malloc((size_t)L->n_inputs * sizeof *parts);
    if (!parts)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_status st = NC_OK;
    for (int k = 0; st == NC_OK && k < L->n_inputs; k++) {
        int j = L->inputs[k];
        if (j >= i) {
            st = nc_errorf(NC_ERR_UNSUPPORTED, "Concat '%s' reads a later layer: no NIR form", L->name);
            break;
        }
        const nc_snn_layer *X = &s->layers[j];
        int64_t c = X->shape[0];
        char name[600];
        snprintf(name, sizeof name, "%.500s_part%d", L->name, k);
        nc_snn_layer *P = nc_snn_append_unique(t, L->ndim == 3 ? NC_SNN_CONV2D : NC_SNN_AFFINE, name, 1);
        if (!P) {
            st = NC_ERR_NOMEM;
            break;
        }
        P->inputs[0] = map[j];
        P->ndim = L->ndim;
        memcpy(P->shape, L->shape, sizeof P->shape);
        int64_t ws[4] = {total, c, 1, 1};
        P->weight = zeros(L->ndim == 3 ? 4 : 2, ws);
        P->bias = zeros(1, &total);
        P->stride[0] = P->stride[1] = P->dilation[0] = P->dilation[1] = P->groups = 1;
        if (!P->weight || !P->bias) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
            break;
        }
        for (int64_t q = 0; q < c; q++)
            nc_f32(P->weight)[(off + q) * c + q] = 1.0f;
        off += c;
        parts[k] = t->n_layers - 1;
    }
    nc_snn_layer *A = st == NC_OK ? nc_snn_append_unique(t, NC_SNN_ADD, L->name, L->n_inputs) : NULL;
    if (st == NC_OK && !A)
        st = NC_ERR_NOMEM;
    if (st == NC_OK) {
        memcpy(A->inputs, parts, (size_t)L->n_inputs * sizeof *parts);
        A->ndim = L->ndim;
        memcpy(A->shape, L->shape, sizeof A->shape);
        map[i] = t->n_layers - 1;
    }
    nc_free(parts);
    return st;
}

/* Pool2d C (copied from a max or divisor pool) as NIR's SumPool2d of one
 * scale 1/k²; ceil mode's partial window becomes more padding where some
 * symmetric padding gives the same output shape: at most k/2 (what
 * PyTorch's pools take) if that does, else less than k. 0 if none does. */
static int as_sum_pool(nc_snn_layer *C, const nc_snn_layer *X)
{
    C->kind = NC_SNN_POOL2D;
    C->div_taps = 0;
    C->div_pad[0] = C->div_pad[1] = 0;
    C->scale = 1.0f / (float)(C->kernel[0] * C->kernel[1]);
    if (X->ndim != 3 || C->ndim != 3)
        return 0;
    for (int d = 0; d < 2; d++) {
        int64_t in = X->shape[1 + d], k = C->kernel[d], st = C->stride[d], p = C->padding[d], found = -1;
        const int64_t most[2] = {k / 2, k - 1};
        for (int pass = 0; pass < 2 && found < 0; pass++)
            for (int64_t q = p; st > 0 && found < 0 && q <= most[pass]; q++)
                if (in + 2 * q >= k && (in + 2 * q - k) / st + 1 == C->shape[1 + d])
                    found = q;
        if (found < 0)
            return 0;
        C->padding[d] = found;
    }
    return 1;
}

/* What stands in for Nonlinear layer i in t: the layer of t holding its
 * first input (an element-wise f, LayerNorm, Softmax: f is the identity
 * there, and the IF that follows rectifies, so SiLU, GELU and HardSwish
 * become the ReLU they approach; Mul: its first factor, a gate of 1); a
 * MatMul: the first factor of its output's shape (attention's A·V: V),
 * else none (-1: Q·Kᵀ, which only the A·V it feeds reads). */
static int nonlinear_stand_in(const nc_snn *s, int i, const int *map)
{
    const nc_snn_layer *L = &s->layers[i];
    for (int k = 0; k < L->n_inputs; k++) {
        const nc_snn_layer *X = &s->layers[L->inputs[k]];
        int same = L->inputs[k] < i && map[L->inputs[k]] >= 0 && X->ndim == L->ndim &&
                   memcmp(X->shape, L->shape, (size_t)L->ndim * sizeof L->shape[0]) == 0;
        if (same)
            return map[L->inputs[k]];
        if (L->nl.fn != NC_NL_MATMUL)
            break;
    }
    return -1;
}

/* Pass one: the layers NIR cannot express replaced (head comment). */
static nc_status approximate(const nc_snn *s, nc_snn *t, nc_snn_std_loss *loss)
{
    int *map = nc_calloc((size_t)s->n_layers, sizeof *map);
    if (!map)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    lossy sif = {0}, burst = {0}, maxp = {0}, divp = {0}, nonl = {0};
    int max_b = 1;
    nc_status st = NC_OK;
    for (int i = 1; st == NC_OK && i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind == NC_SNN_NONLINEAR) {
            map[i] = nonlinear_stand_in(s, i, map);
            note(&nonl, L->name);
            loss->changed++;
            loss->approximated++;
            continue;
        }
        for (int k = 0; k < L->n_inputs; k++)
            if (L->inputs[k] < i && map[L->inputs[k]] < 0) {
                st = nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s' reads Nonlinear '%s' (%s), for which NIR has no "
                               "node and no input of its shape stands in", L->name, s->layers[L->inputs[k]].name,
                               nc_nonlinear_fn_name(s->layers[L->inputs[k]].nl.fn));
                break;
            }
        if (st != NC_OK)
            break;
        /* a NIR graph's several Input or Output nodes: as they are, the writer makes them nodes again */
        loss->changed += L->io_part != 0;
        if (nc_snn_layer_nir_expressible(L) || L->io_part) {
            if ((st = nc_snn_copy_layer(t, L, map)) == NC_OK)
                map[i] = t->n_layers - 1;
            continue;
        }
        loss->changed++;
        if (L->kind == NC_SNN_CONCAT) {
            st = concat_as_sum(t, s, i, map);
            continue;
        }
        if (L->kind == NC_SNN_RESHAPE && L->ndim != 1) {
            st = nc_errorf(NC_ERR_UNSUPPORTED, "Reshape '%s' to rank %d: NIR's Flatten only merges dimensions", L->name,
                           L->ndim);
            break;
        }
        if ((st = nc_snn_copy_layer(t, L, map)) != NC_OK)
            break;
        map[i] = t->n_layers - 1;
        nc_snn_layer *C = &t->layers[t->n_layers - 1];
        const nc_snn_layer *X = &s->layers[L->inputs[0]];
        switch (L->kind) {
        case NC_SNN_RESHAPE: C->kind = NC_SNN_FLATTEN; break;
        case NC_SNN_SIGNED_IF: {
            float b = (float)nc_snn_layer_burst(L);
            C->kind = NC_SNN_IF;
            C->max_spikes = 0;
            C->two_sided = 0; /* NIR's IF: no negative spikes at all */
            for (int64_t k = 0; b > 1 && C->threshold && k < C->threshold->numel; k++)
                nc_f32(C->threshold)[k] *= b;
            for (int64_t k = 0; b > 1 && C->spike_value && k < C->spike_value->numel; k++)
                nc_f32(C->spike_value)[k] *= b;
            nc_tensor_free(C->v_init); /* θ/2 of the new θ, as the plain IF of the same clip */
            C->v_init = NULL;
            note(b > 1 ? &burst : &sif, L->name);
            max_b = b > max_b ? (int)b : max_b;
            loss->approximated++;
            break;
        }
        case NC_SNN_MAXPOOL2D:
        case NC_SNN_SPIKEMAXPOOL2D:
        case NC_SNN_POOL2D:
            if (!as_sum_pool(C, X)) {
                st = nc_errorf(NC_ERR_UNSUPPORTED, "pooling layer '%s': no NIR SumPool2d gives its output shape",
                               L->name);
                break;
            }
            note(L->kind == NC_SNN_POOL2D ? &divp : &maxp, L->name);
            loss->approximated++;
            break;
        default: st = nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s' (%s): no NIR form", L->name, nc_snn_kind_name(L->kind));
        }
    }
    if (st == NC_OK)
        nc_snn_remap_late_edges(s, t, map);
    int out = nc_snn_output_id(s);
    if (st == NC_OK && s->layers[out].kind == NC_SNN_NONLINEAR) { /* its stand-in, not t's last layer */
        t->output = map[out];
        if (map[out] < 0)
            st = nc_errorf(NC_ERR_UNSUPPORTED, "the output, Nonlinear '%s' (MatMul), has no NIR form",
                           s->layers[out].name);
    }
    nc_free(map);
    say(loss, &sif,
        "signed IF neurons are NIR's IF there: no negative spikes (a neuron cannot take back "
        "spikes it sent too early)");
    char what[200];
    snprintf(what, sizeof what,
             "signed IF neurons with bursts (up to %d spikes a step) are NIR's IF of threshold "
             "B·θ there: no negative spikes, one spike a step, B times coarser",
             max_b);
    say(loss, &burst, what);
    say(loss, &maxp, "max pooling is average pooling there (NIR has no max pooling)");
    say(loss, &nonl,
        "Nonlinear layers are the identity there (NIR 1.0 has no non-linear node): an element-wise f, "
        "LayerNorm and Softmax pass their input (the IF after SiLU, GELU, HardSwish makes them ReLU), Mul its "
        "first factor (a gate of 1), MatMul its factor of the output's shape (attention: V), or nothing");
    say(loss, &divp,
        "average pooling with per-window divisors (partial windows average their own taps) "
        "divides every window by k² there (NIR's SumPool2d has one scale)");
    return st;
}

/* The loss of pass two: IF layers turned into NIR's IF, and layers whose
 * semantics their NIR node does not say. */
static void portable_loss(const nc_snn *a, nc_snn_std_loss *loss)
{
    lossy conv = {0}, other = {0};
    for (int i = 0; i < a->n_layers; i++) {
        const nc_snn_layer *L = &a->layers[i];
        if (L->kind == NC_SNN_IF && !nc_snn_layer_nir_semantics(L)) {
            note(&conv, L->name);
            loss->changed++;
        } else if (nc_snn_kind(L->kind)->neuron && L->kind != NC_SNN_IF &&
                   !(L->spike_gt && L->reset == NC_RESET_ZERO && !L->pretest_sub)) {
            note(&other, L->name);
        } else if (L->kind == NC_SNN_IF && !(L->spike_gt && L->reset == NC_RESET_ZERO)) {
            note(&other, L->name);
        }
    }
    say(loss, &conv,
        "IF neurons are NIR's IF there: reset to zero instead of by subtraction, v(0) = 0 instead "
        "of θ/2 (or its calibrated value); the test m >= θ is v > θ⁻, exact");
    say(loss, &other,
        "neurons neuroc runs with a reset or spike test their NIR node does not say (NIR: v > "
        "v_threshold, then v = v_reset)");
}

nc_status nc_snn_standard_form(const nc_snn *s, nc_snn **out, nc_snn_std_loss *loss)
{
    *out = NULL;
    memset(loss, 0, sizeof *loss);
    const nc_snn_layer *I0 = &s->layers[0];
    nc_snn *a = NULL;
    nc_status st = nc_snn_create(I0->ndim, I0->shape, &a);
    if (st == NC_OK) {
        nc_free(a->layers[0].name);
        if (!(a->layers[0].name = nc_strdup(I0->name)))
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    if (st == NC_OK)
        st = approximate(s, a, loss);
    if (st == NC_OK) {
        portable_loss(a, loss);
        nc_portable_options o;
        memset(&o, 0, sizeof o); /* v(0) dropped, thresholds as they are */
        st = nc_snn_portable_build(a, &o, 1, out, NULL);
    }
    nc_snn_free(a);
    if (st != NC_OK) {
        nc_error_prefix("the standard NIR graph");
        memset(loss, 0, sizeof *loss);
    }
    return st;
}
