/* Building and inspecting spiking networks (include/neuroc/snn.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "snn_ir.h"

static void layer_clear(nc_snn_layer *L)
{
    nc_free(L->name);
    nc_free(L->inputs);
    nc_tensor *ts[] = {L->weight, L->bias, L->threshold, L->v_init, L->spike_value,
                       L->tau,    L->r,    L->v_leak,    L->tau_syn, L->w_in, L->v_reset, L->index};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    for (int k = 0; L->part_names && k < L->n_inputs; k++)
        nc_free(L->part_names[k]);
    nc_free(L->part_names);
    memset(L, 0, sizeof *L);
}

void nc_snn_free(nc_snn *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->n_layers; i++)
        layer_clear(&s->layers[i]);
    nc_free(s->layers);
    nc_free(s);
}

int nc_snn_find_layer(const nc_snn *s, const char *name)
{
    if (!s || !name)
        return -1;
    for (int i = 0; i < s->n_layers; i++)
        if (strcmp(s->layers[i].name, name) == 0)
            return i;
    return -1;
}

nc_snn_layer *nc_snn_append_unique(nc_snn *s, nc_snn_layer_kind kind, const char *base, int n_inputs)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%.480s", base);
    for (int k = 2; nc_snn_find_layer(s, buf) >= 0; k++)
        snprintf(buf, sizeof buf, "%.480s_%d", base, k);
    return nc_snn_append(s, kind, buf, n_inputs);
}

nc_snn_layer *nc_snn_append(nc_snn *s, nc_snn_layer_kind kind, const char *name, int n_inputs)
{
    char made[64];
    if (!name || !name[0]) {
        snprintf(made, sizeof made, "%s_%d", nc_snn_kind_name(kind), s->n_layers);
        for (char *c = made; *c; c++)
            if (*c >= 'A' && *c <= 'Z')
                *c = (char)(*c - 'A' + 'a');
        name = made;
    }
    if (nc_snn_find_layer(s, name) >= 0) {
        nc_errorf(NC_ERR_INVALID_ARG, "a layer named '%s' already exists", name);
        return NULL;
    }
    if (s->n_layers == s->cap_layers) {
        int cap = s->cap_layers ? 2 * s->cap_layers : 16;
        nc_snn_layer *l = nc_realloc(s->layers, (size_t)cap * sizeof *l);
        if (!l) {
            nc_errorf(NC_ERR_NOMEM, "out of memory adding layer '%s'", name);
            return NULL;
        }
        s->layers = l;
        s->cap_layers = cap;
    }
    nc_snn_layer *L = &s->layers[s->n_layers];
    memset(L, 0, sizeof *L);
    L->kind = kind;
    L->name = nc_strdup(name);
    L->inputs = nc_calloc((size_t)(n_inputs > 0 ? n_inputs : 1), sizeof *L->inputs);
    if (!L->name || !L->inputs) {
        layer_clear(L);
        nc_errorf(NC_ERR_NOMEM, "out of memory adding layer '%s'", name);
        return NULL;
    }
    L->n_inputs = n_inputs;
    L->scale = 1.0f;
    s->n_layers++;
    return L;
}

void nc_snn_pop(nc_snn *s)
{
    if (s->n_layers > 0)
        layer_clear(&s->layers[--s->n_layers]);
}

int64_t nc_snn_layer_size(const nc_snn_layer *L)
{
    int64_t n = 1;
    for (int d = 0; d < L->ndim; d++)
        n *= L->shape[d];
    return n;
}

int64_t nc_snn_layer_channels(const nc_snn_layer *L)
{
    return L->ndim > 0 ? L->shape[0] : 1;
}

float nc_snn_param(const nc_tensor *p, const nc_snn_layer *L, int64_t i, float dflt)
{
    if (!p)
        return dflt;
    const float *v = nc_f32(p);
    if (p->numel == 1)
        return v[0];
    int64_t size = nc_snn_layer_size(L);
    if (p->numel == size)
        return v[i];
    /* per channel: channel of neuron i in a C-major layout */
    int64_t per_c = size / nc_snn_layer_channels(L);
    return v[i / per_c];
}

nc_status nc_snn_check_param(const nc_tensor *p, const nc_snn_layer *L, const char *what)
{
    if (!p)
        return NC_OK;
    if (p->dtype != NC_DTYPE_F32)
        return nc_errorf(NC_ERR_INVALID_ARG, "layer '%s': %s must be float32", L->name, what);
    int64_t n = p->numel, size = nc_snn_layer_size(L), c = nc_snn_layer_channels(L);
    if (n != 1 && n != c && n != size)
        return nc_errorf(NC_ERR_SHAPE,
                         "layer '%s': %s has %lld elements; expected 1, %lld (per channel) or %lld (per neuron)",
                         L->name, what, (long long)n, (long long)c, (long long)size);
    return NC_OK;
}

int nc_snn_output_id(const nc_snn *s)
{
    if (s->output >= 0 && s->output < s->n_layers)
        return s->output;
    for (int i = s->n_layers - 1; i >= 0; i--)
        if (s->layers[i].kind == NC_SNN_READOUT)
            return i;
    return s->n_layers - 1;
}

/* ---- public builders ---- */

/* nc_snn_append with the reason for a failure as a status. */
static nc_snn_layer *append(nc_snn *s, nc_snn_layer_kind kind, const char *name, int n_inputs,
                            nc_status *st)
{
    if (name && name[0] && nc_snn_find_layer(s, name) >= 0) {
        *st = nc_errorf(NC_ERR_INVALID_ARG, "a layer named '%s' already exists", name);
        return NULL;
    }
    nc_snn_layer *L = nc_snn_append(s, kind, name, n_inputs);
    *st = L ? NC_OK : NC_ERR_NOMEM;
    return L;
}


nc_status nc_snn_create(int ndim, const int64_t *shape, nc_snn **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_create: out is NULL");
    *out = NULL;
    if (ndim < 1 || ndim > NC_MAX_DIMS || !shape)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_create: input rank %d (1..%d expected)", ndim,
                         NC_MAX_DIMS);
    int64_t n;
    if (!nc_numel_checked(ndim, shape, &n) || n == 0)
        return nc_errorf(NC_ERR_SHAPE, "nc_snn_create: input shape has a zero, negative or huge dimension");
    nc_snn *s = nc_calloc(1, sizeof *s);
    if (!s)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    s->output = -1;
    nc_snn_layer *L = nc_snn_append(s, NC_SNN_INPUT, "input", 0);
    if (!L) {
        nc_snn_free(s);
        return NC_ERR_NOMEM;
    }
    L->ndim = ndim;
    memcpy(L->shape, shape, (size_t)ndim * sizeof *shape);
    *out = s;
    return NC_OK;
}

static nc_status check_from(const nc_snn *s, int from, const char *what)
{
    if (!s)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: network is NULL", what);
    if (from < 0 || from >= s->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: no layer with id %d", what, from);
    return NC_OK;
}

static nc_tensor *copy_or_fail(const nc_tensor *t, int *failed)
{
    if (!t)
        return NULL;
    nc_tensor *c = nc_tensor_clone(t);
    if (!c)
        *failed = 1;
    return c;
}

/* Finishes a builder call: the layer built passes the one validation of a
 * layer (snn_validate.c; the builder's own checks above it name the
 * argument at fault), and on failure is removed. */
static nc_status finish(nc_snn *s, nc_status st, int *id)
{
    if (st == NC_OK)
        st = nc_snn_layer_validate(s, s->n_layers - 1, s->n_layers);
    if (st != NC_OK) {
        nc_snn_pop(s);
        return st;
    }
    if (id)
        *id = s->n_layers - 1;
    return NC_OK;
}

nc_status nc_snn_add_affine(nc_snn *s, int from, const nc_tensor *weight, const nc_tensor *bias,
                            const char *name, int *id)
{
    nc_status st = check_from(s, from, "nc_snn_add_affine");
    if (st != NC_OK)
        return st;
    if (!weight || weight->ndim != 2 || weight->dtype != NC_DTYPE_F32)
        return nc_errorf(NC_ERR_SHAPE, "Affine '%s': weight must be a float32 [out, in] matrix",
                         name ? name : "");
    int64_t in = nc_snn_layer_size(&s->layers[from]), n_out = weight->shape[0];
    if (weight->shape[1] != in)
        return nc_errorf(NC_ERR_SHAPE, "Affine '%s': weight is [%lld, %lld] but its input '%s' has %lld neurons",
                         name ? name : "", (long long)n_out, (long long)weight->shape[1],
                         s->layers[from].name, (long long)in);
    if (bias && (bias->numel != n_out || bias->dtype != NC_DTYPE_F32))
        return nc_errorf(NC_ERR_SHAPE, "Affine '%s': bias has %lld elements, expected %lld",
                         name ? name : "", (long long)bias->numel, (long long)n_out);
    nc_status ast;
    nc_snn_layer *L = append(s, NC_SNN_AFFINE, name, 1, &ast);
    if (!L)
        return ast;
    L->inputs[0] = from;
    L->ndim = 1;
    L->shape[0] = n_out;
    int failed = 0;
    L->weight = copy_or_fail(weight, &failed);
    L->bias = bias ? copy_or_fail(bias, &failed) : nc_tensor_new(NC_DTYPE_F32, 1, &n_out);
    if (L->bias && L->bias->ndim != 1)
        nc_tensor_reshape_inplace(L->bias, 1, &n_out);
    return finish(s, failed || !L->bias ? NC_ERR_NOMEM : NC_OK, id);
}

/* Appends a layer of shape (C, H, W) reading `from`. */
static nc_snn_layer *append_chw(nc_snn *s, nc_snn_layer_kind kind, const char *name, int from,
                                int64_t c, int64_t h, int64_t w, nc_status *st)
{
    nc_snn_layer *L = append(s, kind, name, 1, st);
    if (L) {
        L->inputs[0] = from;
        L->ndim = 3;
        L->shape[0] = c;
        L->shape[1] = h;
        L->shape[2] = w;
    }
    return L;
}

/* Geometry beyond this is refused, so that the output-size arithmetic below
 * cannot overflow whatever a file declares. */
#define NC_MAX_GEOMETRY (INT64_C(1) << 24)

static int64_t conv_out(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dil)
{
    if (in > NC_MAX_GEOMETRY || k > NC_MAX_GEOMETRY || stride > NC_MAX_GEOMETRY ||
        pad > NC_MAX_GEOMETRY || dil > NC_MAX_GEOMETRY || k < 1 || stride < 1 || dil < 1)
        return 0;
    int64_t span = dil * (k - 1) + 1;
    if (in + 2 * pad < span)
        return 0;
    return (in + 2 * pad - span) / stride + 1;
}

nc_status nc_snn_add_conv2d(nc_snn *s, int from, const nc_tensor *weight, const nc_tensor *bias,
                            const nc_conv2d_params *p, const char *name, int *id)
{
    nc_status st = check_from(s, from, "nc_snn_add_conv2d");
    if (st != NC_OK)
        return st;
    const nc_snn_layer *X = &s->layers[from];
    const char *nm = name ? name : "";
    if (X->ndim != 3)
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': input '%s' must be (C, H, W), it has rank %d", nm,
                         X->name, X->ndim);
    if (!weight || weight->ndim != 4 || weight->dtype != NC_DTYPE_F32)
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': weight must be float32 [C_out, C_in/groups, kH, kW]", nm);
    nc_conv2d_params d = {{1, 1}, {0, 0}, {1, 1}, 1};
    if (p)
        d = *p;
    for (int i = 0; i < 2; i++) {
        if (d.stride[i] == 0)
            d.stride[i] = 1;
        if (d.dilation[i] == 0)
            d.dilation[i] = 1;
        if (d.stride[i] < 0 || d.dilation[i] < 0 || d.padding[i] < 0)
            return nc_errorf(NC_ERR_INVALID_ARG, "Conv2d '%s': negative stride, dilation or padding", nm);
    }
    if (d.groups == 0)
        d.groups = 1;
    int64_t cout = weight->shape[0];
    if (d.groups < 0 || X->shape[0] % d.groups || cout % d.groups ||
        weight->shape[1] * d.groups != X->shape[0])
        return nc_errorf(NC_ERR_SHAPE,
                         "Conv2d '%s': weight [%lld, %lld, ...] with groups %lld does not fit input '%s' of %lld channels",
                         nm, (long long)cout, (long long)weight->shape[1], (long long)d.groups, X->name,
                         (long long)X->shape[0]);
    if (bias && (bias->numel != cout || bias->dtype != NC_DTYPE_F32))
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': bias has %lld elements, expected %lld", nm,
                         (long long)bias->numel, (long long)cout);
    int64_t oh = conv_out(X->shape[1], weight->shape[2], d.stride[0], d.padding[0], d.dilation[0]);
    int64_t ow = conv_out(X->shape[2], weight->shape[3], d.stride[1], d.padding[1], d.dilation[1]);
    if (oh <= 0 || ow <= 0)
        return nc_errorf(NC_ERR_SHAPE, "Conv2d '%s': kernel larger than the padded input", nm);
    nc_status ast;
    nc_snn_layer *L = append_chw(s, NC_SNN_CONV2D, name, from, cout, oh, ow, &ast);
    if (!L)
        return ast;
    memcpy(L->stride, d.stride, sizeof L->stride);
    memcpy(L->padding, d.padding, sizeof L->padding);
    memcpy(L->dilation, d.dilation, sizeof L->dilation);
    L->groups = d.groups;
    int failed = 0;
    L->weight = copy_or_fail(weight, &failed);
    L->bias = bias ? copy_or_fail(bias, &failed) : nc_tensor_new(NC_DTYPE_F32, 1, &cout);
    if (L->bias && L->bias->ndim != 1)
        nc_tensor_reshape_inplace(L->bias, 1, &cout);
    return finish(s, failed || !L->bias ? NC_ERR_NOMEM : NC_OK, id);
}

/* 1 if layer id's values carry those of a SignedIF with bursts (max_spikes
 * > 1, or any two-sided one when two_sided), through Concats, Gathers and
 * spiking max pools (whose events are bursts of their inputs' units); -1
 * out of memory. Forwards over layers 0..id. */
static int carries_signed_if(const nc_snn *s, int id, int two_sided)
{
    char *b = nc_calloc((size_t)id + 1, 1);
    if (!b)
        return -1;
    for (int i = 0; i <= id; i++) {
        const nc_snn_layer *L = &s->layers[i];
        b[i] = L->kind == NC_SNN_SIGNED_IF && (two_sided ? L->two_sided : L->max_spikes > 1 || L->two_sided);
        int passes = L->kind == NC_SNN_CONCAT || L->kind == NC_SNN_GATHER || L->kind == NC_SNN_SPIKEMAXPOOL2D;
        for (int k = 0; passes && k < L->n_inputs; k++)
            b[i] |= L->inputs[k] < i && b[L->inputs[k]];
    }
    int r = b[id];
    nc_free(b);
    return r;
}

int nc_snn_reads_bursts(const nc_snn *s, int id) { return carries_signed_if(s, id, 0); }

nc_status nc_snn_check_spikemax_input(const nc_snn *s, int from, const char *name)
{
    int r = carries_signed_if(s, from, 1);
    if (r < 0)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (!r)
        return NC_OK;
    return nc_errorf(NC_ERR_UNSUPPORTED, "SpikeMaxPool2d '%s': its input '%s' carries a two-sided SignedIF's spikes, "
                     "whose counts go below zero; a spiking max pool counts from zero", name, s->layers[from].name);
}

/* Sum (scale × window sum) and max pooling share their geometry checks. */
static nc_status add_window(nc_snn *s, nc_snn_layer_kind kind, int from, const int64_t kernel[2],
                            const int64_t stride[2], const int64_t padding[2], const int64_t pad_end[2],
                            const int64_t div_pad[2], float scale, const char *name, int *id)
{
    const char *what = nc_snn_kind_name(kind);
    nc_status st = check_from(s, from, what);
    if (st != NC_OK)
        return st;
    const nc_snn_layer *X = &s->layers[from];
    const char *nm = name ? name : "";
    if (kind == NC_SNN_SPIKEMAXPOOL2D && (st = nc_snn_check_spikemax_input(s, from, nm)) != NC_OK)
        return st;
    if (X->ndim != 3)
        return nc_errorf(NC_ERR_SHAPE, "%s '%s': input '%s' must be (C, H, W)", what, nm, X->name);
    if (!kernel || kernel[0] <= 0 || kernel[1] <= 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s '%s': kernel must be positive", what, nm);
    int64_t st2[2] = {stride ? stride[0] : kernel[0], stride ? stride[1] : kernel[1]};
    int64_t pd[2] = {padding ? padding[0] : 0, padding ? padding[1] : 0};
    if (st2[0] <= 0 || st2[1] <= 0 || pd[0] < 0 || pd[1] < 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s '%s': bad stride or padding", what, nm);
    /* a max-pool window made only of padding would have no maximum */
    if ((kind == NC_SNN_MAXPOOL2D || kind == NC_SNN_SPIKEMAXPOOL2D) && (pd[0] >= kernel[0] || pd[1] >= kernel[1]))
        return nc_errorf(NC_ERR_INVALID_ARG, "%s '%s': padding must be smaller than the kernel", what, nm);
    int64_t pe[2] = {pad_end ? pad_end[0] : 0, pad_end ? pad_end[1] : 0};
    if (pe[0] < 0 || pe[1] < 0 || pe[0] >= st2[0] || pe[1] >= st2[1])
        return nc_errorf(NC_ERR_INVALID_ARG, "%s '%s': extra end padding must be in [0, stride)", what, nm);
    /* the extra end padding (ceil mode) adds at most one partial window */
    int64_t oh = conv_out(X->shape[1] + pe[0], kernel[0], st2[0], pd[0], 1);
    int64_t ow = conv_out(X->shape[2] + pe[1], kernel[1], st2[1], pd[1], 1);
    if (oh <= 0 || ow <= 0)
        return nc_errorf(NC_ERR_SHAPE, "%s '%s': kernel larger than the padded input", what, nm);
    if ((oh - 1) * st2[0] - pd[0] >= X->shape[1] || (ow - 1) * st2[1] - pd[1] >= X->shape[2])
        return nc_errorf(NC_ERR_INVALID_ARG, "%s '%s': the last window would start in the padding", what, nm);
    nc_status ast;
    nc_snn_layer *L = append_chw(s, kind, name, from, X->shape[0], oh, ow, &ast);
    if (!L)
        return ast;
    memcpy(L->kernel, kernel, sizeof L->kernel);
    memcpy(L->stride, st2, sizeof L->stride);
    memcpy(L->padding, pd, sizeof L->padding);
    L->scale = scale;
    if (div_pad) { /* per-window divisors (nc_snn_add_pool2d_div) */
        L->div_taps = 1;
        memcpy(L->div_pad, div_pad, sizeof L->div_pad);
    }
    return finish(s, NC_OK, id);
}

nc_status nc_snn_add_pool2d(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                            const int64_t padding[2], float scale, const char *name, int *id)
{
    return add_window(s, NC_SNN_POOL2D, from, kernel, stride, padding, NULL, NULL, scale, name, id);
}

nc_status nc_snn_add_maxpool2d(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                               const int64_t padding[2], const char *name, int *id)
{
    return add_window(s, NC_SNN_MAXPOOL2D, from, kernel, stride, padding, NULL, NULL, 1.0f, name, id);
}

nc_status nc_snn_add_maxpool2d_ceil(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                                    const int64_t padding[2], const int64_t pad_end[2], const char *name, int *id)
{
    return add_window(s, NC_SNN_MAXPOOL2D, from, kernel, stride, padding, pad_end, NULL, 1.0f, name, id);
}

nc_status nc_snn_add_pool2d_div(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                                const int64_t padding[2], const int64_t pad_end[2], const int64_t div_pad[2],
                                const char *name, int *id)
{
    if (!kernel || !div_pad || div_pad[0] < 0 || div_pad[1] < 0 || (padding && (div_pad[0] > padding[0] ||
                                                                                  div_pad[1] > padding[1])) ||
        (!padding && (div_pad[0] || div_pad[1])))
        return nc_errorf(NC_ERR_INVALID_ARG, "Pool2d '%s': the counted padding must be in [0, padding]",
                         name ? name : "");
    return add_window(s, NC_SNN_POOL2D, from, kernel, stride, padding, pad_end, div_pad,
                      (float)(1.0 / (double)(kernel[0] * kernel[1])), name, id);
}

int nc_snn_layer_nir_expressible(const nc_snn_layer *L)
{
    return nc_snn_kind(L->kind)->nir && !(L->kind == NC_SNN_POOL2D && L->div_taps);
}

int nc_snn_num_outputs(const nc_snn *s)
{
    if (!s || s->n_layers < 1)
        return 0;
    const nc_snn_layer *O = &s->layers[nc_snn_output_id(s)];
    return O->io_part == NC_IO_OUTPUTS ? O->n_inputs : 1;
}

nc_status nc_snn_output_at(const nc_snn *s, int k, nc_snn_output_info *out)
{
    if (!out || k < 0 || k >= nc_snn_num_outputs(s))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_output_at: no output %d", k);
    memset(out, 0, sizeof *out);
    const nc_snn_layer *O = &s->layers[nc_snn_output_id(s)], *P = O;
    if (O->io_part == NC_IO_OUTPUTS) {
        for (int j = 0; j < k; j++)
            out->offset += nc_snn_layer_size(&s->layers[O->inputs[j]]);
        P = &s->layers[O->inputs[k]];
        if (P->io_part == NC_IO_OUTPUT_FLAT) /* the part's own shape */
            P = &s->layers[P->inputs[0]];
        out->name = O->part_names[k];
    } else
        out->name = O->name;
    out->size = nc_snn_layer_size(P);
    out->ndim = P->ndim;
    memcpy(out->shape, P->shape, sizeof out->shape);
    return NC_OK;
}

void nc_snn_pool_pad_end(const nc_snn *s, int i, int64_t pad_end[2])
{
    const nc_snn_layer *L = &s->layers[i], *X = &s->layers[L->inputs[0]];
    for (int d = 0; d < 2; d++) {
        int64_t e = (L->shape[d + 1] - 1) * L->stride[d] + L->kernel[d] - (X->shape[d + 1] + 2 * L->padding[d]);
        pad_end[d] = e > 0 ? e : 0;
    }
}

nc_status nc_snn_add_spike_maxpool2d(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                                     const int64_t padding[2], const char *name, int *id)
{
    return add_window(s, NC_SNN_SPIKEMAXPOOL2D, from, kernel, stride, padding, NULL, NULL, 1.0f, name, id);
}

nc_status nc_snn_add_spike_maxpool2d_ceil(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                                          const int64_t padding[2], const int64_t pad_end[2], const char *name,
                                          int *id)
{
    return add_window(s, NC_SNN_SPIKEMAXPOOL2D, from, kernel, stride, padding, pad_end, NULL, 1.0f, name, id);
}

nc_status nc_snn_add_flatten(nc_snn *s, int from, const char *name, int *id)
{
    nc_status st = check_from(s, from, "nc_snn_add_flatten");
    if (st != NC_OK)
        return st;
    int64_t n = nc_snn_layer_size(&s->layers[from]);
    nc_status ast;
    nc_snn_layer *L = append(s, NC_SNN_FLATTEN, name, 1, &ast);
    if (!L)
        return ast;
    L->inputs[0] = from;
    L->ndim = 1;
    L->shape[0] = n;
    return finish(s, NC_OK, id);
}

nc_status nc_snn_add_reshape(nc_snn *s, int from, int ndim, const int64_t *shape, int64_t offset, const char *name,
                             int *id)
{
    nc_status st = check_from(s, from, "nc_snn_add_reshape");
    if (st != NC_OK)
        return st;
    if (ndim < 1 || ndim > NC_MAX_DIMS || !shape)
        return nc_errorf(NC_ERR_INVALID_ARG, "Reshape '%s': rank %d", name ? name : "", ndim);
    nc_snn_layer *L = append(s, NC_SNN_RESHAPE, name, 1, &st);
    if (!L)
        return st;
    L->inputs[0] = from;
    L->ndim = ndim;
    memcpy(L->shape, shape, (size_t)ndim * sizeof *shape);
    L->kernel[0] = offset;
    return finish(s, NC_OK, id);
}

nc_status nc_snn_add_gather(nc_snn *s, int from, int ndim, const int64_t *shape, const int64_t *index,
                            const char *name, int *id)
{
    nc_status st = check_from(s, from, "nc_snn_add_gather");
    if (st != NC_OK)
        return st;
    if (ndim < 1 || ndim > NC_MAX_DIMS || !shape || !index)
        return nc_errorf(NC_ERR_INVALID_ARG, "Gather '%s': rank %d", name ? name : "", ndim);
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n = shape[d] >= 0 && (shape[d] == 0 || n <= INT64_MAX / shape[d]) ? n * shape[d] : -1;
    if (n < 0)
        return nc_errorf(NC_ERR_SHAPE, "Gather '%s': bad shape", name ? name : "");
    nc_tensor *ix = nc_tensor_new(NC_DTYPE_I64, 1, &n);
    if (!ix)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    memcpy(nc_i64(ix), index, (size_t)n * sizeof *index);
    nc_snn_layer *L = append(s, NC_SNN_GATHER, name, 1, &st);
    if (!L) {
        nc_tensor_free(ix);
        return st;
    }
    L->inputs[0] = from;
    L->ndim = ndim;
    memcpy(L->shape, shape, (size_t)ndim * sizeof *shape);
    L->index = ix;
    return finish(s, NC_OK, id);
}

void nc_snn_drop_unread(nc_snn *s, nc_snn_layer_kind kind, int *map)
{
    int n = s->n_layers, out = nc_snn_output_id(s);
    for (int i = 0; i < n; i++)
        map[i] = i;
    for (int again = 1; again;) { /* last to first: a dropped layer's inputs become unread in the same pass */
        again = 0;
        for (int i = n - 1; i > 0; i--) {
            if (map[i] < 0 || s->layers[i].kind != kind || i == out)
                continue;
            int read = 0;
            for (int r = 0; r < n && !read; r++)
                for (int k = 0; map[r] >= 0 && k < s->layers[r].n_inputs; k++)
                    read |= s->layers[r].inputs[k] == i;
            if (!read) {
                map[i] = -1;
                again = 1;
            }
        }
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (map[i] < 0) {
            layer_clear(&s->layers[i]);
            continue;
        }
        s->layers[m] = s->layers[i];
        map[i] = m++;
    }
    for (int i = 0; i < m; i++)
        for (int k = 0; k < s->layers[i].n_inputs; k++)
            s->layers[i].inputs[k] = map[s->layers[i].inputs[k]];
    if (s->output >= 0)
        s->output = map[s->output];
    s->n_layers = m;
}

static nc_status add_multi(nc_snn *s, nc_snn_layer_kind kind, int n_from, const int *from,
                           const char *name, int *id)
{
    const char *what = kind == NC_SNN_ADD ? "Add" : "Concat";
    if (!s || n_from < 1 || !from)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s '%s': needs at least one input", what, name ? name : "");
    for (int i = 0; i < n_from; i++) {
        nc_status st = check_from(s, from[i], what);
        if (st != NC_OK)
            return st;
    }
    const nc_snn_layer *A = &s->layers[from[0]];
    int64_t channels = 0;
    for (int i = 0; i < n_from; i++) {
        const nc_snn_layer *B = &s->layers[from[i]];
        int same = B->ndim == A->ndim;
        for (int d = kind == NC_SNN_ADD ? 0 : 1; same && d < A->ndim; d++)
            same = A->shape[d] == B->shape[d];
        if (!same || (kind == NC_SNN_CONCAT && A->ndim < 1))
            return nc_errorf(NC_ERR_SHAPE, "%s '%s': inputs '%s' and '%s' have incompatible shapes", what,
                             name ? name : "", A->name, B->name);
        channels += B->ndim ? B->shape[0] : 1;
    }
    nc_status ast;
    nc_snn_layer *L = append(s, kind, name, n_from, &ast);
    if (!L)
        return ast;
    A = &s->layers[from[0]]; /* the append may have moved the array */
    memcpy(L->inputs, from, (size_t)n_from * sizeof *from);
    L->ndim = A->ndim;
    memcpy(L->shape, A->shape, sizeof L->shape);
    if (kind == NC_SNN_CONCAT)
        L->shape[0] = channels;
    return finish(s, NC_OK, id);
}

nc_status nc_snn_add_add(nc_snn *s, int n_from, const int *from, const char *name, int *id)
{
    return add_multi(s, NC_SNN_ADD, n_from, from, name, id);
}

nc_status nc_snn_add_concat(nc_snn *s, int n_from, const int *from, const char *name, int *id)
{
    return add_multi(s, NC_SNN_CONCAT, n_from, from, name, id);
}

nc_status nc_snn_add_nonlinear(nc_snn *s, int n_from, const int *from, const nc_nonlinear_params *p,
                               const char *name, int *id)
{
    const char *nm = name ? name : "";
    if (!s || !p || !from)
        return nc_errorf(NC_ERR_INVALID_ARG, "Nonlinear '%s': needs inputs and parameters", nm);
    if ((int)p->fn < 0 || p->fn >= NC_NL_COUNT)
        return nc_errorf(NC_ERR_INVALID_ARG, "Nonlinear '%s': unknown function %d", nm, (int)p->fn);
    int want = nc_nonlinear_fn_inputs(p->fn);
    if (n_from != want)
        return nc_errorf(NC_ERR_INVALID_ARG, "Nonlinear '%s': %s reads %d input%s, not %d", nm,
                         nc_nonlinear_fn_name(p->fn), want, want > 1 ? "s" : "", n_from);
    for (int i = 0; i < n_from; i++) {
        nc_status st = check_from(s, from[i], "nc_snn_add_nonlinear");
        if (st != NC_OK)
            return st;
    }
    nc_status ast;
    nc_snn_layer *L = append(s, NC_SNN_NONLINEAR, name, n_from, &ast);
    if (!L)
        return ast;
    memcpy(L->inputs, from, (size_t)n_from * sizeof *from);
    L->nl = *p;
    return finish(s, NC_OK, id);
}

nc_status nc_snn_add_if(nc_snn *s, int from, const nc_if_params *p, const char *name, int *id)
{
    nc_status st = check_from(s, from, "nc_snn_add_if");
    if (st != NC_OK)
        return st;
    if (!p || !p->threshold)
        return nc_errorf(NC_ERR_INVALID_ARG, "IF '%s': a threshold is required", name ? name : "");
    if (p->reset != NC_RESET_DEFAULT && p->reset != NC_RESET_SUBTRACT && p->reset != NC_RESET_ZERO)
        return nc_errorf(NC_ERR_INVALID_ARG, "IF '%s': unknown reset mode %d", name ? name : "", (int)p->reset);
    if (p->signed_spikes && p->reset == NC_RESET_ZERO)
        return nc_errorf(NC_ERR_INVALID_ARG, "IF '%s': signed spikes need the subtractive reset (a negative "
                         "spike gives back the θ a spike took)", name ? name : "");
    if (p->max_spikes < 0 || p->max_spikes > NC_MAX_BURST || (p->max_spikes > 1 && !p->signed_spikes))
        return nc_errorf(NC_ERR_INVALID_ARG, "IF '%s': max_spikes %d: bursts are from 1 to %d spikes a step, and "
                         "only for signed spikes", name ? name : "", p->max_spikes, NC_MAX_BURST);
    nc_status ast;
    nc_snn_layer *L = append(s, p->signed_spikes ? NC_SNN_SIGNED_IF : NC_SNN_IF, name, 1, &ast);
    if (!L)
        return ast;
    const nc_snn_layer *X = &s->layers[from];
    L->inputs[0] = from;
    L->ndim = X->ndim;
    memcpy(L->shape, X->shape, sizeof L->shape);
    L->reset = p->reset == NC_RESET_ZERO ? NC_RESET_ZERO : NC_RESET_SUBTRACT; /* the IR never holds DEFAULT */
    L->max_spikes = p->max_spikes > 1 ? p->max_spikes : 0;
    L->two_sided = p->signed_spikes == NC_SIGNED_TWO_SIDED;
    if (p->signed_spikes < 0 || p->signed_spikes > NC_SIGNED_TWO_SIDED)
        return finish(s, nc_errorf(NC_ERR_INVALID_ARG, "IF '%s': signed_spikes %d (0, 1 or NC_SIGNED_TWO_SIDED)",
                                   L->name, p->signed_spikes), id);
    if ((st = nc_snn_check_param(p->threshold, L, "threshold")) != NC_OK ||
        (st = nc_snn_check_param(p->v_init, L, "v_init")) != NC_OK ||
        (st = nc_snn_check_param(p->spike_value, L, "spike_value")) != NC_OK)
        return finish(s, st, id);
    int failed = 0;
    L->threshold = copy_or_fail(p->threshold, &failed);
    L->v_init = copy_or_fail(p->v_init, &failed);
    L->spike_value = copy_or_fail(p->spike_value, &failed);
    if (failed)
        return finish(s, nc_errorf(NC_ERR_NOMEM, "out of memory"), id);
    for (int64_t i = 0; i < L->threshold->numel; i++)
        if (!(nc_f32(L->threshold)[i] > 0.0f))
            return finish(s, nc_errorf(NC_ERR_INVALID_ARG, "IF '%s': thresholds must be positive",
                                       L->name), id);
    for (int64_t i = 0; L->kind == NC_SNN_SIGNED_IF && L->spike_value && i < L->spike_value->numel; i++)
        if (!(nc_f32(L->spike_value)[i] > 0.0f)) /* a spike's sign is its direction */
            return finish(s, nc_errorf(NC_ERR_INVALID_ARG, "IF '%s': signed spikes need positive spike "
                                       "values", L->name), id);
    return finish(s, NC_OK, id);
}

nc_status nc_snn_add_readout(nc_snn *s, int from, const char *name, int *id)
{
    nc_status st = check_from(s, from, "nc_snn_add_readout");
    if (st != NC_OK)
        return st;
    nc_status ast;
    nc_snn_layer *L = append(s, NC_SNN_READOUT, name, 1, &ast);
    if (!L)
        return ast;
    const nc_snn_layer *X = &s->layers[from];
    L->inputs[0] = from;
    L->ndim = X->ndim;
    memcpy(L->shape, X->shape, sizeof L->shape);
    return finish(s, NC_OK, id);
}

nc_status nc_snn_set_output(nc_snn *s, int id)
{
    nc_status st = check_from(s, id, "nc_snn_set_output");
    if (st == NC_OK)
        s->output = id;
    return st;
}

int nc_snn_num_layers(const nc_snn *s) { return s ? s->n_layers : 0; }

int nc_snn_output_layer(const nc_snn *s) { return s ? nc_snn_output_id(s) : -1; }

nc_status nc_snn_set_timesteps(nc_snn *s, int timesteps)
{
    if (!s || timesteps < 0 || timesteps > NC_SNN_MAX_TIMESTEPS)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_set_timesteps: T %d is outside [0, %d]", timesteps,
                         NC_SNN_MAX_TIMESTEPS);
    s->timesteps = timesteps;
    return NC_OK;
}

int nc_snn_timesteps(const nc_snn *s) { return s ? s->timesteps : 0; }

nc_status nc_snn_layer_at(const nc_snn *s, int id, nc_snn_layer_info *out)
{
    if (!s || !out || id < 0 || id >= s->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_layer_at: no layer %d", id);
    const nc_snn_layer *L = &s->layers[id];
    memset(out, 0, sizeof *out);
    out->name = L->name;
    out->kind = L->kind;
    out->n_inputs = L->n_inputs;
    out->inputs = L->inputs;
    out->ndim = L->ndim;
    memcpy(out->shape, L->shape, sizeof out->shape);
    out->max_spikes = L->max_spikes;
    out->two_sided = L->two_sided;
    out->nonlinear = L->nl;
    const nc_tensor *ts[] = {L->weight, L->bias, L->threshold, L->v_init, L->spike_value,
                             L->tau,    L->r,    L->v_leak,    L->tau_syn, L->w_in, L->v_reset}; /* a Gather's map: routing, no parameter */
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        if (ts[i])
            out->params += ts[i]->numel;
    return NC_OK;
}

uint64_t nc_hash_snn(const nc_snn *s)
{
    uint64_t h = NC_HASH_INIT;
    h = nc_hash_bytes(h, &s->n_layers, sizeof s->n_layers);
    h = nc_hash_bytes(h, &s->output, sizeof s->output);
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        /* fields one by one: the struct has padding */
        h = nc_hash_bytes(h, &L->kind, sizeof L->kind);
        h = nc_hash_bytes(h, &L->n_inputs, sizeof L->n_inputs);
        h = nc_hash_bytes(h, L->inputs, (size_t)L->n_inputs * sizeof *L->inputs);
        h = nc_hash_bytes(h, &L->ndim, sizeof L->ndim);
        h = nc_hash_bytes(h, L->shape, (size_t)L->ndim * sizeof *L->shape);
        h = nc_hash_bytes(h, L->stride, sizeof L->stride);
        h = nc_hash_bytes(h, L->padding, sizeof L->padding);
        if (L->div_taps) { /* only then: hashes of other networks stay as they were */
            h = nc_hash_bytes(h, &L->div_taps, sizeof L->div_taps);
            h = nc_hash_bytes(h, L->div_pad, sizeof L->div_pad);
        }
        h = nc_hash_bytes(h, L->dilation, sizeof L->dilation);
        h = nc_hash_bytes(h, &L->groups, sizeof L->groups);
        h = nc_hash_bytes(h, L->kernel, sizeof L->kernel);
        h = nc_hash_bytes(h, &L->scale, sizeof L->scale);
        h = nc_hash_bytes(h, &L->reset, sizeof L->reset);
        h = nc_hash_bytes(h, &L->dt, sizeof L->dt);
        const nc_tensor *ts[] = {L->weight, L->bias, L->threshold, L->v_init, L->spike_value,
                                 L->tau, L->r, L->v_leak, L->tau_syn, L->w_in};
        for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++)
            h = nc_hash_tensor(h, ts[k]);
        if (L->index) /* a Gather's map (only then: other hashes stay as they were) */
            h = nc_hash_tensor(h, L->index);
        if (L->max_spikes > 1) /* only then: other hashes stay as they were */
            h = nc_hash_bytes(h, &L->max_spikes, sizeof L->max_spikes);
        if (L->two_sided)
            h = nc_hash_bytes(h, &L->two_sided, sizeof L->two_sided);
        if (L->kind == NC_SNN_NONLINEAR) { /* field by field: the struct may have padding */
            int fn = (int)L->nl.fn;
            h = nc_hash_bytes(h, &fn, sizeof fn);
            h = nc_hash_bytes(h, &L->nl.alpha, sizeof L->nl.alpha);
            h = nc_hash_bytes(h, &L->nl.beta, sizeof L->nl.beta);
            h = nc_hash_bytes(h, &L->nl.eps, sizeof L->nl.eps);
            h = nc_hash_bytes(h, &L->nl.axis, sizeof L->nl.axis);
            h = nc_hash_bytes(h, &L->nl.trans_x, sizeof L->nl.trans_x);
            h = nc_hash_bytes(h, &L->nl.trans_y, sizeof L->nl.trans_y);
        }
        if (L->spike_gt || L->v_reset || L->exact || L->pretest_sub) { /* only then: other hashes stay as they were */
            h = nc_hash_bytes(h, &L->spike_gt, sizeof L->spike_gt);
            h = nc_hash_bytes(h, &L->exact, sizeof L->exact);
            h = nc_hash_bytes(h, &L->pretest_sub, sizeof L->pretest_sub);
            h = nc_hash_tensor(h, L->v_reset);
        }
    }
    return h;
}

nc_status nc_snn_neuron_at(const nc_snn *s, int id, nc_snn_neuron_info *out)
{
    if (!s || !out || id < 0 || id >= s->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_neuron_at: no layer %d", id);
    const nc_snn_layer *L = &s->layers[id];
    memset(out, 0, sizeof *out);
    nc_snn_layer_kind k = L->kind;
    if (!nc_snn_kind_is_neuron(k) && k != NC_SNN_LI && k != NC_SNN_CUBALI && k != NC_SNN_INTEGRATOR &&
        k != NC_SNN_THRESHOLD)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_neuron_at: layer '%s' (%s) is no neuron layer", L->name,
                         nc_snn_kind_name(k));
    out->spike_gt = L->spike_gt;
    out->reset = L->reset == NC_RESET_ZERO ? NC_RESET_ZERO : NC_RESET_SUBTRACT;
    out->has_v_reset = L->v_reset != NULL;
    out->has_r = nc_snn_kind_is_if(k) && L->r;
    out->dt = k == NC_SNN_LIF || k == NC_SNN_CUBALIF || k == NC_SNN_LI || k == NC_SNN_CUBALI ? L->dt : 0.0;
    out->integration = L->exact ? NC_INTEGRATION_EXACT : NC_INTEGRATION_EULER;
    const nc_tensor *ts[] = {L->tau, L->r, L->tau_syn, L->w_in};
    for (size_t j = 0; j < sizeof ts / sizeof ts[0]; j++)
        for (int64_t i = 0; ts[j] && i < ts[j]->numel; i++)
            out->limit_params |= isinf(nc_f32(ts[j])[i]) != 0;
    out->v_init_half = nc_snn_kind_is_if(k) && !L->v_init;
    out->snntorch_subtract = L->pretest_sub;
    return NC_OK;
}
