/* Binary spikes: folding spike values into the weights (snn_ir.h). */
#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn_ir.h"
#include "snn/base/tensor.h"

/* A diagonal Affine of more inputs than this is refused (its dense weight
 * would be large for what it does). */
#define NC_FOLD_MAX_DIAG 4096

typedef struct fold {
    const nc_snn *s;
    nc_snn *t;
    int *map;      /* old layer id → new layer id */
    int *scaled;   /* old layer id → new id of its inserted scale layer, or -1 */
    float **fac;   /* per old layer: the factor of its new layer's output (IR value = fac ⊙ new value), NULL = 1 */
    int n_scale;
} fold;

/* ---- the factor rules, shared with the NIR writer (export/nir/nir_write.c) ---- */

int nc_snn_factor_channel_uniform(const nc_snn_layer *L, const float *f)
{
    if (!f || L->ndim != 3)
        return 1; /* a 1-D layer's channels are its neurons */
    int64_t hw = L->shape[1] * L->shape[2];
    for (int64_t c = 0; c < L->shape[0]; c++)
        for (int64_t k = 1; k < hw; k++)
            if (f[c * hw + k] != f[c * hw])
                return 0;
    return 1;
}

int nc_snn_takes_factor(const nc_snn *s, int i, int j, const float *fj)
{
    const nc_snn_layer *L = &s->layers[i], *J = &s->layers[j];
    switch (L->kind) {
    case NC_SNN_AFFINE: return 1;
    case NC_SNN_CONV2D: return nc_snn_factor_channel_uniform(J, fj);
    case NC_SNN_POOL2D: return j < i && nc_snn_factor_channel_uniform(J, fj);
    case NC_SNN_MAXPOOL2D: case NC_SNN_SPIKEMAXPOOL2D: {
        /* max commutes only with a positive scale (a spike max pool passes on its inputs' values: a zero
           factor would turn spikes that do not count into ones that do) */
        int positive = 1;
        for (int64_t k = 0; fj && k < nc_snn_layer_size(J); k++)
            positive &= fj[k] > 0.0f;
        return j < i && positive && nc_snn_factor_channel_uniform(J, fj);
    }
    case NC_SNN_FLATTEN: return j < i;
    default: return 0;
    }
}

nc_status nc_snn_out_factor(const nc_snn *s, int i, const float *fj, int takes, int pool_scale, float **out)
{
    const nc_snn_layer *L = &s->layers[i];
    *out = NULL;
    int fail = 0;
    if (nc_snn_kind_is_neuron(L->kind))
        *out = nc_snn_spike_values(L, 0, &fail);
    else if (L->kind == NC_SNN_FLATTEN && takes && fj) {
        int64_t n = nc_snn_layer_size(L);
        if ((*out = nc_malloc((size_t)n * sizeof **out)))
            memcpy(*out, fj, (size_t)n * sizeof **out);
        fail = !*out;
    } else if ((L->kind == NC_SNN_POOL2D || L->kind == NC_SNN_MAXPOOL2D || L->kind == NC_SNN_SPIKEMAXPOOL2D) &&
               ((takes && fj) || (pool_scale && L->scale != 1.0f))) {
        /* per channel: pooling keeps channels, changes H×W */
        const nc_snn_layer *J = &s->layers[L->inputs[0]];
        float scale = pool_scale ? L->scale : 1.0f;
        int64_t hw = L->shape[1] * L->shape[2], hw_in = J->shape[1] * J->shape[2];
        if ((*out = nc_malloc((size_t)nc_snn_layer_size(L) * sizeof **out)))
            for (int64_t c = 0; c < L->shape[0]; c++)
                for (int64_t k = 0; k < hw; k++)
                    (*out)[c * hw + k] = scale * (takes && fj ? fj[c * hw_in] : 1.0f);
        fail = !*out;
    }
    return fail ? nc_errorf(NC_ERR_NOMEM, "out of memory") : NC_OK;
}

void nc_snn_scale_inputs(nc_tensor *w, nc_snn_layer_kind kind, int64_t groups, const float *f, int64_t stride,
                         int divide)
{
    float *d = nc_f32(w);
    int64_t rows = w->shape[0], cols = w->shape[1];
    int64_t kk = kind == NC_SNN_AFFINE ? 1 : w->shape[2] * w->shape[3];
    int64_t per_group = kind == NC_SNN_AFFINE || groups < 1 ? rows : rows / groups;
    for (int64_t o = 0; o < rows; o++)
        for (int64_t c = 0; c < cols; c++) {
            float m = f[((o / per_group) * cols + c) * stride], *p = d + (o * cols + c) * kk;
            if (divide)
                for (int64_t t = 0; t < kk; t++)
                    p[t] /= m;
            else
                for (int64_t t = 0; t < kk; t++)
                    p[t] *= m;
        }
}

void nc_snn_fold_factor(nc_tensor *w, nc_snn_layer_kind kind, int64_t groups, const nc_snn_layer *X, const float *m)
{
    nc_snn_scale_inputs(w, kind, groups, m, kind == NC_SNN_AFFINE ? 1 : X->shape[1] * X->shape[2], 0);
}

/* ---- the folded copy of a network ---- */

static nc_status name_with(const fold *F, const char *base, const char *suffix, char *buf, size_t len)
{
    snprintf(buf, len, "%.200s%s", base, suffix);
    for (int k = 2; nc_snn_find_layer(F->t, buf) >= 0; k++)
        snprintf(buf, len, "%.200s%s_%d", base, suffix, k);
    return NC_OK;
}

/* The new id holding old layer j's IR value (its factor applied): a scale
 * layer is inserted after it the first time one is needed. */
static nc_status scaled_id(fold *F, int j, int *id)
{
    const nc_snn_layer *J = &F->s->layers[j];
    if (!F->fac[j]) {
        *id = F->map[j];
        return NC_OK;
    }
    if (F->scaled[j] >= 0) {
        *id = F->scaled[j];
        return NC_OK;
    }
    char name[256];
    name_with(F, J->name, "_scale", name, sizeof name);
    nc_status st;
    nc_tensor *w = NULL;
    if (J->ndim == 3) {
        if (!nc_snn_factor_channel_uniform(J, F->fac[j]))
            return nc_errorf(NC_ERR_UNSUPPORTED, "binary spikes: layer '%s' has spike values that differ within "
                             "a channel, which no scale layer can take", J->name);
        int64_t C = J->shape[0], hw = J->shape[1] * J->shape[2], shape[4] = {C, 1, 1, 1};
        if (!(w = nc_tensor_new(NC_DTYPE_F32, 4, shape)))
            return NC_ERR_NOMEM;
        for (int64_t c = 0; c < C; c++)
            nc_f32(w)[c] = F->fac[j][c * hw];
        nc_conv2d_params p = {{1, 1}, {0, 0}, {1, 1}, C};
        st = nc_snn_add_conv2d(F->t, F->map[j], w, NULL, &p, name, id);
    } else {
        int64_t n = nc_snn_layer_size(J), shape[2] = {n, n};
        if (J->ndim != 1 || n > NC_FOLD_MAX_DIAG)
            return nc_errorf(NC_ERR_UNSUPPORTED, "binary spikes: layer '%s' (%lld neurons) would need a scale "
                             "layer; keep spike values θ instead", J->name, (long long)n);
        if (!(w = nc_tensor_new(NC_DTYPE_F32, 2, shape)))
            return NC_ERR_NOMEM;
        for (int64_t i = 0; i < n; i++)
            nc_f32(w)[i * n + i] = F->fac[j][i];
        st = nc_snn_add_affine(F->t, F->map[j], w, NULL, name, id);
    }
    nc_tensor_free(w);
    if (st == NC_OK) {
        F->scaled[j] = *id;
        F->n_scale++;
    }
    return st;
}

static nc_status fold_layer(fold *F, int i)
{
    const nc_snn_layer *L = &F->s->layers[i];
    for (int k = 0; k < L->n_inputs; k++)
        if (L->inputs[k] >= i)
            return nc_errorf(NC_ERR_UNSUPPORTED, "binary spikes: layer '%s' has a recurrent input", L->name);
    int j = L->n_inputs > 0 ? L->inputs[0] : 0;
    const nc_snn_layer *J = &F->s->layers[j];
    const float *fj = F->fac[j];
    nc_status st = NC_OK;
    int id = -1, from;
    int takes = nc_snn_takes_factor(F->s, i, j, fj);
    switch (L->kind) {
    case NC_SNN_AFFINE: case NC_SNN_CONV2D: {
        if (!takes) { /* a per-neuron factor before a Conv2d */
            if ((st = scaled_id(F, j, &from)) != NC_OK)
                return st;
            fj = NULL;
        } else {
            from = F->map[j];
        }
        nc_tensor *w = nc_tensor_clone(L->weight);
        if (!w)
            return NC_ERR_NOMEM;
        if (fj)
            nc_snn_fold_factor(w, L->kind, L->groups, J, fj);
        if (L->kind == NC_SNN_AFFINE) {
            st = nc_snn_add_affine(F->t, from, w, L->bias, L->name, &id);
        } else {
            nc_conv2d_params p = {{L->stride[0], L->stride[1]}, {L->padding[0], L->padding[1]},
                                  {L->dilation[0], L->dilation[1]}, L->groups};
            st = nc_snn_add_conv2d(F->t, from, w, L->bias, &p, L->name, &id);
        }
        nc_tensor_free(w);
        break;
    }
    case NC_SNN_POOL2D: case NC_SNN_MAXPOOL2D: case NC_SNN_SPIKEMAXPOOL2D: case NC_SNN_FLATTEN:
        if (!takes && (st = scaled_id(F, j, &from)) != NC_OK)
            return st;
        if (takes)
            from = F->map[j];
        if (L->kind == NC_SNN_POOL2D && L->div_taps) {
            int64_t pe[2];
            nc_snn_pool_pad_end(F->s, i, pe);
            st = nc_snn_add_pool2d_div(F->t, from, L->kernel, L->stride, L->padding, pe, L->div_pad, L->name, &id);
        } else if (L->kind == NC_SNN_POOL2D)
            st = nc_snn_add_pool2d(F->t, from, L->kernel, L->stride, L->padding, L->scale, L->name, &id);
        else if (L->kind == NC_SNN_MAXPOOL2D) {
            int64_t pe[2];
            nc_snn_pool_pad_end(F->s, i, pe); /* a ceil-mode pool keeps its partial window */
            st = nc_snn_add_maxpool2d_ceil(F->t, from, L->kernel, L->stride, L->padding, pe, L->name, &id);
        } else if (L->kind == NC_SNN_SPIKEMAXPOOL2D) {
            int64_t pe[2];
            nc_snn_pool_pad_end(F->s, i, pe);
            st = nc_snn_add_spike_maxpool2d_ceil(F->t, from, L->kernel, L->stride, L->padding, pe, L->name, &id);
        }
        else
            st = nc_snn_add_flatten(F->t, from, L->name, &id);
        /* the pool's scale stays in the layer: the factor passes unscaled */
        if (st == NC_OK)
            st = nc_snn_out_factor(F->s, i, fj, takes, 0, &F->fac[i]);
        break;
    case NC_SNN_ADD: case NC_SNN_CONCAT: case NC_SNN_NONLINEAR: {
        /* a Nonlinear layer's function needs its inputs' own values: scaled back where they carry a factor */
        int *from_ids = nc_calloc((size_t)L->n_inputs, sizeof *from_ids);
        if (!from_ids)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        for (int k = 0; st == NC_OK && k < L->n_inputs; k++)
            st = scaled_id(F, L->inputs[k], &from_ids[k]);
        if (st == NC_OK)
            st = L->kind == NC_SNN_ADD      ? nc_snn_add_add(F->t, L->n_inputs, from_ids, L->name, &id)
                 : L->kind == NC_SNN_CONCAT ? nc_snn_add_concat(F->t, L->n_inputs, from_ids, L->name, &id)
                                            : nc_snn_add_nonlinear(F->t, L->n_inputs, from_ids, &L->nl, L->name, &id);
        nc_free(from_ids);
        break;
    }
    case NC_SNN_READOUT:
        if ((st = scaled_id(F, j, &from)) == NC_OK)
            st = nc_snn_add_readout(F->t, from, L->name, &id);
        break;
    case NC_SNN_RESHAPE: /* a view (a transformer's tokens): its input's values, scaled where they carry a factor */
        if ((st = scaled_id(F, j, &from)) == NC_OK)
            st = nc_snn_add_reshape(F->t, from, L->ndim, L->shape, L->kernel[0], L->name, &id);
        break;
    case NC_SNN_GATHER: /* routing: its input's values, scaled where they carry a factor */
        if ((st = scaled_id(F, j, &from)) == NC_OK)
            st = nc_snn_add_gather(F->t, from, L->ndim, L->shape, nc_i64(L->index), L->name, &id);
        break;
    case NC_SNN_IF: case NC_SNN_SIGNED_IF: {
        if (nc_snn_layer_nir_semantics(L)) {
            char what[160];
            return nc_errorf(NC_ERR_UNSUPPORTED, "binary spikes: IF layer '%s' has NIR neuron semantics (%s) "
                             "that DESIGN §3's IF lacks", L->name, nc_snn_nir_semantics_what(L, what, sizeof what));
        }
        if ((st = scaled_id(F, j, &from)) != NC_OK)
            return st;
        float one = 1.0f;
        int64_t one_shape = 1;
        nc_tensor *sv;
        if ((st = nc_tensor_create_from(NC_DTYPE_F32, 1, &one_shape, &one, &sv)) != NC_OK)
            return st;
        nc_if_params p = {L->threshold, L->v_init, sv, L->reset, L->kind != NC_SNN_SIGNED_IF ? 0 : L->two_sided ? NC_SIGNED_TWO_SIDED : 1,
                          L->max_spikes};
        st = nc_snn_add_if(F->t, from, &p, L->name, &id);
        nc_tensor_free(sv);
        if (st == NC_OK) /* its spikes are 1 now: the factor is the old spike value */
            st = nc_snn_out_factor(F->s, i, NULL, 0, 0, &F->fac[i]);
        break;
    }
    default:
        return nc_errorf(NC_ERR_UNSUPPORTED, "binary spikes: layer '%s' (%s) is not supported", L->name,
                         nc_snn_kind_name(L->kind));
    }
    if (st == NC_OK)
        F->map[i] = id;
    return st;
}

nc_status nc_snn_fold_spike_values(const nc_snn *s, nc_snn **out, int *n_scale)
{
    *out = NULL;
    if (n_scale)
        *n_scale = 0;
    const nc_snn_layer *I = &s->layers[0];
    fold F = {s, NULL, NULL, NULL, NULL, 0};
    nc_status st = nc_snn_create(I->ndim, I->shape, &F.t);
    if (st != NC_OK)
        return st;
    int n = s->n_layers;
    F.map = nc_calloc((size_t)n, sizeof *F.map);
    F.scaled = nc_malloc((size_t)n * sizeof *F.scaled);
    F.fac = nc_calloc((size_t)n, sizeof *F.fac);
    if (!F.map || !F.scaled || !F.fac)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int i = 0; st == NC_OK && i < n; i++)
        F.scaled[i] = -1;
    for (int i = 1; st == NC_OK && i < n; i++)
        st = fold_layer(&F, i);
    if (st == NC_OK && s->output >= 0)
        st = nc_snn_set_output(F.t, F.map[s->output]);
    for (int i = 0; F.fac && i < n; i++)
        nc_free(F.fac[i]);
    nc_free(F.fac);
    nc_free(F.map);
    nc_free(F.scaled);
    if (st != NC_OK) {
        nc_snn_free(F.t);
        return st;
    }
    if (n_scale)
        *n_scale = F.n_scale;
    *out = F.t;
    return NC_OK;
}
