/* Writes a spiking network as NIR (DESIGN §4), readable by nir.read 1.0.x.
 *
 * Binary spikes. Internally a neuron's spike carries its spike value (θ by
 * default); NIR spikes are 1. Each layer therefore has a factor m (per
 * neuron): IR value = m ⊙ NIR value. m is the spike value after a neuron,
 * is carried through Flatten, and through a Pool2d when uniform per channel
 * (times the pool's scale, so an average pool becomes a SumPool2d), and is
 * folded into the weight columns (Affine) or input-channel slices (Conv2d)
 * of the synaptic layer that reads it. Where some reader cannot absorb it
 * (an Add, a neuron, the Output, a per-neuron factor before a Conv2d) a NIR
 * `Scale` node is inserted after the layer and every reader reads the Scale
 * node: a Scale that is its neuron's only reader is what the reader turns
 * back into a spike value, so plain-NIR reading keeps the semantics.
 *
 * Add layers have no node: NIR sums several edges into one node, so each
 * input of an Add gets an edge to each reader of the Add. Readouts have no
 * node either: the layer they read feeds the Output node.
 *
 * Two graphs (DESIGN §4). /node, what nir.read and other tools read, is
 * the network's standard form (snn/ir/snn_standard.c), planned apart with
 * grouped weights spelled out; the network's own graph goes in
 * /neuroc/graph (format 4), its synaptic nodes that equal the standard
 * graph's hard links to them, and /neuroc/standard_loss says what /node
 * loses. A network that is its own standard form has one graph, /node
 * (format 3, standard_loss ""). In what follows "the graph" and "NIR node"
 * mean the network's own: /neuroc/graph, or /node in format 3.
 *
 * The root-level group /neuroc (never read by nir.read) makes the round trip
 * lossless, format NC_NIR_NEUROC_FORMAT:
 *   format_version  int64        generator  string      output  int64 (-1 = default)
 *   n_layers        int64        readout    string (only when there is one)
 *   layers/<i>/     one group per IR layer i = 0..n_layers-1, in IR order:
 *     name, kind (nc_snn_kind_name), node (its NIR node, "" for Add/Readout;
 *     a neuroc.<kind> extension node for a layer NIR cannot express)
 *     inputs int64 [n_inputs]    shape int64 [ndim]
 *     Affine/Conv2d, only when the NIR node's weight F differs from the
 *     original W (a fold, or a grouped Conv2d written densely in strict
 *     mode), W, for bit-identical round trips, as one of:
 *     fold_factor  float32 [columns]: the factor folded into F, one per input
 *                  column (Affine: in_features; Conv2d: input channels, all
 *                  groups), and
 *     weight_xor   uint32, W's shape: bits(W) XOR bits(U), U = F with its
 *                  columns divided by fold_factor (nc_snn_scale_inputs, the
 *                  helper that folded them: writer and reader get the same
 *                  U), mostly 0: chunked, shuffle + deflate. The reader
 *                  computes U and XORs. Where F is W's shape and this is
 *                  portable and smaller (put_original).
 *     weight       float32: W itself, otherwise (and in format 1).
 *     groups   Conv2d: int64
 *     scale    Pool2d: float32 scalar
 *     io_part  int64, part_names strings [n_inputs]: the layers that join a
 *              NIR graph's several Input or Output nodes (snn_ir.h), only
 *              there; the standard graph writes those nodes back
 *     threshold, v_init, spike_value, tau, r, v_leak, tau_syn, w_in:
 *              neuron tensors exactly as in the IR (1, C or full size),
 *              each only when set; reset int64; dt float64
 * Everything else (biases, conv and pool geometry) is read from the NIR node.
 *
 * A layer NIR cannot express (nc_snn_layer_nir_expressible: a kind whose
 * `nir` trait is 0, or an average pool with per-window divisors) is a node
 * of type "neuroc.<kind>" in the graph holding all its fields (nir_ext.c),
 * taking its input's factor like any layer of its kind (only in the
 * network's own graph: the standard form has none). The reader tells
 * extension nodes by their type.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/data/h5io.h"
#include "nir_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/atomic_file.h"
#include "snn/base/error.h"
#include "snn/ir/snn_ir.h"

typedef struct wr {
    const nc_snn *s;
    int n;
    char **node;        /* NIR node of each layer; NULL for Add and Readout */
    char **scale_node;  /* Scale node inserted after the layer, or NULL */
    float **m;          /* per-neuron factor (IR = m ⊙ NIR), NULL when all ones */
    unsigned char *scaled; /* factor m of the layer goes through a Scale node */
    nc_tensor **folded; /* Affine/Conv2d weight with the input factor folded in */
    unsigned char *ext; /* layer of a kind NIR cannot express: a neuroc.<kind> node (nir_ext.c) */
    int standard;       /* the plan of /node: grouped weights spelled out, no extension node */
    char **out_node;    /* the Output nodes: one, or a node per part (NC_IO_OUTPUTS) */
    int n_out;
    const char **edges; /* pairs of names owned by the arrays above */
    int64_t n_edges, cap_edges;
} wr;

static void wr_free(wr *w)
{
    for (int i = 0; i < w->n; i++) {
        if (w->node)
            nc_free(w->node[i]);
        if (w->scale_node)
            nc_free(w->scale_node[i]);
        if (w->m)
            nc_free(w->m[i]);
        if (w->folded)
            nc_tensor_free(w->folded[i]);
    }
    nc_free(w->node);
    nc_free(w->scale_node);
    nc_free(w->m);
    nc_free(w->folded);
    nc_free(w->scaled);
    nc_free(w->ext);
    for (int k = 0; w->out_node && k < w->n_out; k++)
        nc_free(w->out_node[k]);
    nc_free(w->out_node);
    nc_free(w->edges);
}

/* ---- names ---- */

static int name_taken(const wr *w, const char *name)
{
    for (int i = 0; i < w->n; i++)
        if ((w->node[i] && strcmp(w->node[i], name) == 0) ||
            (w->scale_node[i] && strcmp(w->scale_node[i], name) == 0))
            return 1;
    for (int k = 0; w->out_node && k < w->n_out; k++)
        if (w->out_node[k] && strcmp(w->out_node[k], name) == 0)
            return 1;
    return 0;
}

/* NIR node names must be [A-Za-z0-9_]+ and unique: other characters become
 * '_', and a clash gets a numeric suffix. */
static char *make_name(const wr *w, const char *base, const char *suffix)
{
    char buf[256];
    size_t n = 0;
    for (const char *c = base; *c && n < 200; c++) {
        int ok = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');
        buf[n++] = ok ? *c : '_';
    }
    if (n == 0) {
        memcpy(buf, "layer", 5);
        n = 5;
    }
    snprintf(buf + n, sizeof buf - n, "%s", suffix);
    char cand[300];
    snprintf(cand, sizeof cand, "%s", buf);
    for (int k = 2; name_taken(w, cand); k++)
        snprintf(cand, sizeof cand, "%s_%d", buf, k);
    char *r = nc_strdup(cand);
    if (!r)
        nc_errorf(NC_ERR_NOMEM, "out of memory");
    return r;
}

/* ---- factors and folding ---- */

static int all_ones(const float *a, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (a[i] != 1.0f)
            return 0;
    return 1;
}

/* 1 if layer i can take its input j's factor into its own NIR node
 * (snn_ir.h: the rules of nc_snn_fold_spike_values). */
static int can_absorb(const wr *w, int i, int j)
{
    return nc_snn_takes_factor(w->s, i, j, w->m[j]);
}

/* 1 if every reader of layer j can absorb its factor: then no Scale node. */
static int all_readers_absorb(const wr *w, int j)
{
    const nc_snn *s = w->s;
    int out = nc_snn_output_id(s);
    if (out == j || (s->layers[out].kind == NC_SNN_READOUT && s->layers[out].inputs[0] == j))
        return 0;
    for (int i = 0; i < w->n; i++)
        for (int k = 0; k < s->layers[i].n_inputs; k++)
            if (s->layers[i].inputs[k] == j && !can_absorb(w, i, j))
                return 0;
    return 1;
}

static int absorbs(const wr *w, int i, int j)
{
    return !w->scaled[j] && can_absorb(w, i, j);
}

static nc_status compute_factors(wr *w)
{
    const nc_snn *s = w->s;
    for (int i = 0; i < w->n; i++) {
        const nc_snn_layer *L = &s->layers[i];
        int64_t size = nc_snn_layer_size(L);
        int j = L->n_inputs > 0 ? L->inputs[0] : 0;
        float *m = NULL;
        /* a Pool2d becomes a SumPool2d: its scale joins the factor (an
           extension node holds the scale and divisors and applies them) */
        nc_status st = nc_snn_out_factor(s, i, w->m[j], L->n_inputs > 0 && absorbs(w, i, j), !w->ext[i], &m);
        if (st != NC_OK)
            return st;
        if (!m)
            continue;
        if (all_ones(m, size)) {
            nc_free(m);
            m = NULL;
        }
        w->m[i] = m;
        w->scaled[i] = m && !all_readers_absorb(w, i);
    }
    return NC_OK;
}

/* Affine columns times the input factor. */
static nc_status fold_affine(wr *w, int i, const float *m)
{
    const nc_snn_layer *L = &w->s->layers[i];
    nc_tensor *W = nc_tensor_clone(L->weight);
    if (!W)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_snn_fold_factor(W, L->kind, 1, &w->s->layers[L->inputs[0]], m);
    w->folded[i] = W;
    return NC_OK;
}

/* Conv2d weight as NIR gets it: the input-channel slices times the input
 * factor m (or none). In strict mode grouped weights are first spelled out
 * densely (zeros between the groups, groups = 1), because nir.read 1.0.x
 * takes a Conv2d's input channels as weight.shape[1] (input_shape is
 * required) and its type check then rejects compact grouped weights;
 * otherwise they stay compact (a depthwise layer's file is its weights'
 * size), which nir.read accepts with type_check=False. */
static nc_status fold_conv(wr *w, int i, const float *m)
{
    const nc_snn_layer *L = &w->s->layers[i], *X = &w->s->layers[L->inputs[0]];
    const nc_tensor *W = L->weight;
    if (!w->standard || L->groups <= 1) {
        nc_tensor *F = nc_tensor_clone(W);
        if (!F)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        nc_snn_fold_factor(F, NC_SNN_CONV2D, L->groups, X, m);
        w->folded[i] = F;
        return NC_OK;
    }
    int64_t cout = W->shape[0], cin_g = W->shape[1], kk = W->shape[2] * W->shape[3];
    int64_t G = L->groups, cin = cin_g * G, cout_g = cout / G;
    int64_t shape[4] = {cout, cin, W->shape[2], W->shape[3]};
    nc_tensor *D = nc_tensor_new(NC_DTYPE_F32, 4, shape);
    if (!D)
        return nc_errorf(NC_ERR_NOMEM, "layer '%s': out of memory spelling out grouped weights", L->name);
    float *d = nc_f32(D);
    for (int64_t co = 0; co < cout; co++)
        for (int64_t ci = 0; ci < cin_g; ci++)
            memcpy(d + (co * cin + (co / cout_g) * cin_g + ci) * kk, nc_f32(W) + (co * cin_g + ci) * kk,
                   (size_t)kk * sizeof *d);
    if (m) /* after spelling out: the zeros between groups take the factor too */
        nc_snn_fold_factor(D, NC_SNN_CONV2D, 1, X, m);
    w->folded[i] = D;
    return NC_OK;
}

/* The factor synaptic layer i folds into its weight, or NULL. */
static const float *fold_of(const wr *w, int i)
{
    int j = w->s->layers[i].inputs[0];
    return w->m[j] && absorbs(w, i, j) ? w->m[j] : NULL;
}

static nc_status fold_weights(wr *w)
{
    const nc_snn *s = w->s;
    for (int i = 0; i < w->n; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind != NC_SNN_AFFINE && L->kind != NC_SNN_CONV2D)
            continue;
        const float *m = fold_of(w, i);
        nc_status st = NC_OK;
        if (L->kind == NC_SNN_AFFINE && m)
            st = fold_affine(w, i, m);
        else if (L->kind == NC_SNN_CONV2D && (m || (L->groups > 1 && w->standard)))
            st = fold_conv(w, i, m);
        if (st != NC_OK)
            return st;
    }
    return NC_OK;
}

/* ---- edges ---- */

/* An edge a → b. Twice the same edge is an error, except into an extension
 * node (a Concat of one input twice): its inputs, in order and with
 * repeats, are in /neuroc, the graph's one edge shows the connection. */
static nc_status add_edge(wr *w, const char *a, const char *b, int dup_ok)
{
    for (int64_t e = 0; e < w->n_edges; e++)
        if (strcmp(w->edges[2 * e], a) == 0 && strcmp(w->edges[2 * e + 1], b) == 0)
            return dup_ok ? NC_OK : nc_errorf(NC_ERR_UNSUPPORTED,
                             "'%s' would reach '%s' twice (an Add summing the same input twice): NIR "
                             "cannot express that", a, b);
    if (w->n_edges == w->cap_edges) {
        int64_t cap = w->cap_edges ? 2 * w->cap_edges : 32;
        const char **e = nc_realloc(w->edges, (size_t)cap * 2 * sizeof *e);
        if (!e)
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        w->edges = e;
        w->cap_edges = cap;
    }
    w->edges[2 * w->n_edges] = a;
    w->edges[2 * w->n_edges + 1] = b;
    w->n_edges++;
    return NC_OK;
}

/* Edges carrying layer j's output into node `dst`, whose layer takes j's
 * factor if `absorb`. An Add contributes one edge per input. */
static nc_status connect(wr *w, int j, int absorb, const char *dst, int dup_ok, int depth)
{
    const nc_snn_layer *J = &w->s->layers[j];
    if (depth > NC_NIR_MAX_DEPTH)
        return nc_errorf(NC_ERR_LIMIT, "Add layers nested deeper than %d at '%s'", NC_NIR_MAX_DEPTH,
                         J->name);
    if (J->kind == NC_SNN_ADD) {
        for (int k = 0; k < J->n_inputs; k++) {
            nc_status st = connect(w, J->inputs[k], 0, dst, dup_ok, depth + 1);
            if (st != NC_OK)
                return st;
        }
        return NC_OK;
    }
    if (w->standard && J->io_part == NC_IO_OUTPUT_FLAT) /* an output's flattening: the Output node has the shape */
        return connect(w, J->inputs[0], 0, dst, dup_ok, depth + 1);
    if (!w->node[j])
        return nc_errorf(NC_ERR_UNSUPPORTED, "layer '%s' (%s) cannot feed other layers in NIR", J->name,
                         nc_snn_kind_name(J->kind));
    if (absorb || !w->scaled[j])
        return add_edge(w, w->node[j], dst, dup_ok);
    if (!w->scale_node[j]) {
        if (!(w->scale_node[j] = make_name(w, w->node[j], "_scale")))
            return NC_ERR_NOMEM;
        nc_status st = add_edge(w, w->node[j], w->scale_node[j], 0);
        if (st != NC_OK)
            return st;
    }
    return add_edge(w, w->scale_node[j], dst, dup_ok);
}

/* Decides every node, name, factor, folded weight and edge before any file
 * is touched, so unsupported networks fail without side effects. */
static nc_status plan(wr *w)
{
    const nc_snn *s = w->s;
    int n = w->n = s->n_layers;
    w->node = nc_calloc((size_t)n, sizeof *w->node);
    w->scale_node = nc_calloc((size_t)n, sizeof *w->scale_node);
    w->m = nc_calloc((size_t)n, sizeof *w->m);
    w->folded = nc_calloc((size_t)n, sizeof *w->folded);
    w->scaled = nc_calloc((size_t)n, 1);
    w->ext = nc_calloc((size_t)n, 1);
    if (!w->node || !w->scale_node || !w->m || !w->folded || !w->scaled || !w->ext)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    int out = nc_snn_output_id(s);
    /* the standard graph writes a NIR graph's several Input and Output nodes back as they were:
       each input part an Input node (the joined input has none), each output part an Output node */
    int split_in = 0, split_out = w->standard && s->layers[out].io_part == NC_IO_OUTPUTS;
    for (int i = 0; w->standard && i < n; i++)
        split_in |= s->layers[i].io_part == NC_IO_INPUT_PART;
    for (int i = 0; i < n; i++) {
        const nc_snn_layer *L = &s->layers[i];
        w->ext[i] = !nc_snn_layer_nir_expressible(L) && !(w->standard && L->io_part);
        if (w->ext[i] && w->standard) /* the standard form has none (snn_standard.c) */
            return nc_errorf(NC_ERR_INTERNAL, "layer '%s' (%s) in the standard NIR graph", L->name,
                             nc_snn_kind_name(L->kind));
        for (int k = 0; k < L->n_inputs; k++)
            if (s->layers[L->inputs[k]].kind == NC_SNN_READOUT)
                return nc_errorf(NC_ERR_UNSUPPORTED,
                                 "readout '%s' feeds layer '%s': NIR can only express a readout as the output",
                                 s->layers[L->inputs[k]].name, L->name);
        if (L->kind == NC_SNN_READOUT && i != out)
            return nc_errorf(NC_ERR_UNSUPPORTED, "readout '%s' is not the network's output", L->name);
        int io_node = w->standard && L->io_part == NC_IO_INPUT_PART;
        if ((!w->ext[i] && !nc_snn_kind(L->kind)->nir_node && !io_node) || (i == 0 && split_in) ||
            (w->standard && L->io_part && !io_node)) /* an Add is edges, a Readout the Output's input */
            continue;
        if (!(w->node[i] = make_name(w, L->name, "")))
            return NC_ERR_NOMEM;
    }
    w->n_out = split_out ? s->layers[out].n_inputs : 1;
    if (!(w->out_node = nc_calloc((size_t)w->n_out, sizeof *w->out_node)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int k = 0; k < w->n_out; k++)
        if (!(w->out_node[k] = make_name(w, split_out ? s->layers[out].part_names[k] : "output", "")))
            return NC_ERR_NOMEM;
    nc_status st;
    if ((st = compute_factors(w)) != NC_OK || (st = fold_weights(w)) != NC_OK)
        return st;
    for (int i = 1; i < n; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (!w->node[i] || (w->standard && L->io_part == NC_IO_INPUT_PART)) /* an Input node reads nothing */
            continue;
        for (int k = 0; k < L->n_inputs; k++)
            if ((st = connect(w, L->inputs[k], absorbs(w, i, L->inputs[k]), w->node[i], w->ext[i], 0)) != NC_OK)
                return st;
    }
    if (s->layers[out].kind == NC_SNN_READOUT)
        out = s->layers[out].inputs[0];
    for (int k = 0; split_out && k < w->n_out; k++)
        if ((st = connect(w, s->layers[out].inputs[k], 0, w->out_node[k], 0, 0)) != NC_OK)
            return st;
    return split_out ? NC_OK : connect(w, out, 0, w->out_node[0], 0, 0);
}

/* ---- writing ---- */

static nc_status put_tensor(hid_t g, const char *name, const nc_tensor *t)
{
    return nc_h5_write_f32(g, name, t->ndim, t->shape, nc_f32(t));
}

/* A synaptic weight of the standard graph that is mostly zeros (grouped
 * weights spelled out, a Concat's placement convolutions: a dense copy
 * would be the square of the channels) is deflated, which nir.read reads
 * as any dataset; others as they are (the same bytes as before). */
static nc_status put_weight(const wr *w, hid_t g, const nc_tensor *W)
{
    int64_t zeros = 0;
    for (int64_t k = 0; w->standard && W->numel >= 4096 && k < W->numel; k++)
        zeros += nc_f32(W)[k] == 0.0f;
    if (2 * zeros > W->numel && W->ndim >= 1 && nc_h5_deflate_avail())
        return nc_h5_write_f32_deflate(g, "weight", W->ndim, W->shape, nc_f32(W));
    return put_tensor(g, "weight", W);
}

static nc_status put_full(hid_t g, const char *name, const nc_tensor *t, const nc_snn_layer *L,
                          float dflt)
{
    int fail = 0;
    float *a = nc_snn_param_expand(t, L, dflt, 0, &fail);
    if (!a)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_status st = nc_h5_write_f32(g, name, L->ndim, L->shape, a);
    nc_free(a);
    return st;
}

static nc_status put_pair(hid_t g, const char *name, const int64_t v[2])
{
    int64_t two = 2;
    return nc_h5_write_i64(g, name, 1, &two, v);
}

static nc_status write_node_fields(const wr *w, int i, hid_t g)
{
    const nc_snn_layer *L = &w->s->layers[i];
    const nc_snn_layer *X = L->n_inputs > 0 ? &w->s->layers[L->inputs[0]] : NULL;
    const nc_tensor *W = w->folded[i] ? w->folded[i] : L->weight;
    nc_status st = NC_OK;
    int64_t nd = L->ndim;
    if (w->ext[i])
        return nir_ext_write(L, g);
    if (w->standard && L->io_part == NC_IO_INPUT_PART) /* one of several Input nodes */
        return (st = nc_h5_write_string(g, "type", "Input")) == NC_OK ? nc_h5_write_i64(g, "shape", 1, &nd, L->shape) : st;
    switch (L->kind) {
    case NC_SNN_INPUT:
        if ((st = nc_h5_write_string(g, "type", "Input")) == NC_OK)
            st = nc_h5_write_i64(g, "shape", 1, &nd, L->shape);
        break;
    case NC_SNN_AFFINE:
        if ((st = nc_h5_write_string(g, "type", "Affine")) == NC_OK && (st = put_weight(w, g, W)) == NC_OK)
            st = put_tensor(g, "bias", L->bias);
        break;
    case NC_SNN_CONV2D:
        if ((st = nc_h5_write_string(g, "type", "Conv2d")) == NC_OK &&
            (st = put_pair(g, "input_shape", X->shape + 1)) == NC_OK &&
            (st = put_weight(w, g, W)) == NC_OK && (st = put_pair(g, "stride", L->stride)) == NC_OK &&
            (st = put_pair(g, "padding", L->padding)) == NC_OK &&
            (st = put_pair(g, "dilation", L->dilation)) == NC_OK &&
            (st = nc_h5_write_i64_scalar(g, "groups", X->shape[0] / W->shape[1])) == NC_OK)
            st = put_tensor(g, "bias", L->bias);
        break;
    case NC_SNN_POOL2D:
        if ((st = nc_h5_write_string(g, "type", "SumPool2d")) == NC_OK &&
            (st = put_pair(g, "kernel_size", L->kernel)) == NC_OK && (st = put_pair(g, "stride", L->stride)) == NC_OK)
            st = put_pair(g, "padding", L->padding);
        break;
    case NC_SNN_FLATTEN: {
        int64_t xd = X->ndim;
        if ((st = nc_h5_write_string(g, "type", "Flatten")) == NC_OK &&
            (st = nc_h5_write_i64_scalar(g, "start_dim", 0)) == NC_OK &&
            (st = nc_h5_write_i64_scalar(g, "end_dim", -1)) == NC_OK)
            st = nc_h5_write_i64(g, "input_type", 1, &xd, X->shape);
        break;
    }
    case NC_SNN_IF:
        if ((st = nc_h5_write_string(g, "type", "IF")) == NC_OK && (st = put_full(g, "r", L->r, L, 1.0f)) == NC_OK)
            st = put_full(g, "v_threshold", L->threshold, L, 1.0f);
        break;
    case NC_SNN_LI:
        if ((st = nc_h5_write_string(g, "type", "LI")) == NC_OK && (st = put_full(g, "tau", L->tau, L, 1.0f)) == NC_OK &&
            (st = put_full(g, "r", L->r, L, 1.0f)) == NC_OK)
            st = put_full(g, "v_leak", L->v_leak, L, 0.0f);
        break;
    case NC_SNN_CUBALI:
        if ((st = nc_h5_write_string(g, "type", "CubaLI")) == NC_OK &&
            (st = put_full(g, "tau_mem", L->tau, L, 1.0f)) == NC_OK &&
            (st = put_full(g, "tau_syn", L->tau_syn, L, 1.0f)) == NC_OK &&
            (st = put_full(g, "r", L->r, L, 1.0f)) == NC_OK && (st = put_full(g, "v_leak", L->v_leak, L, 0.0f)) == NC_OK)
            st = put_full(g, "w_in", L->w_in, L, 1.0f);
        break;
    case NC_SNN_INTEGRATOR:
        if ((st = nc_h5_write_string(g, "type", "I")) == NC_OK)
            st = put_full(g, "r", L->r, L, 1.0f);
        break;
    case NC_SNN_THRESHOLD:
        if ((st = nc_h5_write_string(g, "type", "Threshold")) == NC_OK)
            st = put_full(g, "threshold", L->threshold, L, 0.0f);
        break;
    case NC_SNN_SCALE:
        if ((st = nc_h5_write_string(g, "type", "Scale")) == NC_OK)
            st = put_full(g, "scale", L->weight, L, 1.0f);
        break;
    case NC_SNN_DELAY: {
        float d = (float)((double)L->kernel[0] * L->dt);
        nc_tensor *t = NULL;
        int64_t one = 1;
        if ((st = nc_tensor_create_from(NC_DTYPE_F32, 1, &one, &d, &t)) == NC_OK &&
            (st = nc_h5_write_string(g, "type", "Delay")) == NC_OK)
            st = put_full(g, "delay", t, L, 0.0f);
        nc_tensor_free(t);
        break;
    }
    case NC_SNN_LIF:
        if ((st = nc_h5_write_string(g, "type", "LIF")) == NC_OK && (st = put_full(g, "tau", L->tau, L, 1.0f)) == NC_OK &&
            (st = put_full(g, "r", L->r, L, 1.0f)) == NC_OK && (st = put_full(g, "v_leak", L->v_leak, L, 0.0f)) == NC_OK)
            st = put_full(g, "v_threshold", L->threshold, L, 1.0f);
        break;
    case NC_SNN_CUBALIF:
        if ((st = nc_h5_write_string(g, "type", "CubaLIF")) == NC_OK &&
            (st = put_full(g, "tau_mem", L->tau, L, 1.0f)) == NC_OK &&
            (st = put_full(g, "tau_syn", L->tau_syn, L, 1.0f)) == NC_OK &&
            (st = put_full(g, "r", L->r, L, 1.0f)) == NC_OK && (st = put_full(g, "v_leak", L->v_leak, L, 0.0f)) == NC_OK &&
            (st = put_full(g, "v_threshold", L->threshold, L, 1.0f)) == NC_OK)
            st = put_full(g, "w_in", L->w_in, L, 1.0f);
        break;
    default:
        st = nc_errorf(NC_ERR_INTERNAL, "layer '%s' of kind %s has no NIR node", L->name, nc_snn_kind_name(L->kind));
    }
    /* NIR's v_reset only where it is not 0 (nir 1.0.x before 1.0.5 refuses the field) */
    if (st == NC_OK && L->v_reset && L->reset == NC_RESET_ZERO &&
        (L->kind == NC_SNN_IF || L->kind == NC_SNN_LIF || L->kind == NC_SNN_CUBALIF))
        st = put_full(g, "v_reset", L->v_reset, L, 0.0f);
    return st;
}

static nc_status write_scale_node(const wr *w, int j, hid_t g)
{
    const nc_snn_layer *L = &w->s->layers[j];
    nc_status st = nc_h5_write_string(g, "type", "Scale");
    return st == NC_OK ? nc_h5_write_f32(g, "scale", L->ndim, L->shape, w->m[j]) : st;
}

/* Creates group `name` under parent, runs fn-like code through a switch. */
static hid_t new_group(hid_t parent, const char *name)
{
    /* no modification times in the file: the same network gives the same bytes */
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    hid_t g = gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0
                  ? H5Gcreate2(parent, name, H5P_DEFAULT, gcpl, H5P_DEFAULT)
                  : H5I_INVALID_HID;
    if (gcpl >= 0)
        H5Pclose(gcpl);
    if (g < 0)
        nc_errorf(NC_ERR_IO, "could not create group '%s'", name);
    return g;
}

static int same_tensor(const nc_tensor *a, const nc_tensor *b)
{
    return a && b && a->ndim == b->ndim && memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]) == 0 &&
           memcmp(a->data, b->data, (size_t)a->numel * sizeof(float)) == 0;
}

/* 1 if the synaptic node of layer i of w would be written as twin's node of
 * the same name is (the same weights after folding, bias and geometry):
 * the exact graph then links to the standard graph's node rather than
 * holding the weights twice. */
static int same_node(const wr *w, int i, const wr *twin)
{
    const nc_snn_layer *L = &w->s->layers[i];
    int j = nc_snn_find_layer(twin->s, L->name);
    if (j < 0 || !w->node[i] || !twin->node[j] || strcmp(w->node[i], twin->node[j]) != 0 || w->ext[i] ||
        twin->ext[j] || (L->kind != NC_SNN_AFFINE && L->kind != NC_SNN_CONV2D))
        return 0;
    const nc_snn_layer *M = &twin->s->layers[j];
    const nc_snn_layer *X = &w->s->layers[L->inputs[0]], *Y = &twin->s->layers[M->inputs[0]];
    return M->kind == L->kind && X->ndim == Y->ndim && memcmp(X->shape, Y->shape, sizeof X->shape) == 0 &&
           memcmp(L->stride, M->stride, sizeof L->stride) == 0 && memcmp(L->padding, M->padding, sizeof L->padding) == 0 &&
           memcmp(L->dilation, M->dilation, sizeof L->dilation) == 0 && same_tensor(L->bias, M->bias) &&
           same_tensor(w->folded[i] ? w->folded[i] : L->weight, twin->folded[j] ? twin->folded[j] : M->weight);
}

/* The NIRGraph of w as group `name` of parent: /node, or /neuroc/graph,
 * whose nodes that are the same as the standard graph's (twin, its nodes
 * group twin_nodes; or NULL) are hard links to them. */
static nc_status write_graph(const wr *w, hid_t parent, const char *name, const wr *twin, hid_t twin_nodes)
{
    hid_t gnode = new_group(parent, name);
    if (gnode < 0)
        return NC_ERR_IO;
    hid_t gnodes = new_group(gnode, "nodes");
    nc_status st = gnodes < 0 ? NC_ERR_IO : nc_h5_write_string(gnode, "type", "NIRGraph");
    for (int i = 0; st == NC_OK && i < w->n; i++) {
        for (int pass = 0; st == NC_OK && pass < 2; pass++) {
            const char *node = pass == 0 ? w->node[i] : w->scale_node[i];
            if (!node)
                continue;
            if (pass == 0 && twin && same_node(w, i, twin)) {
                if (H5Lcreate_hard(twin_nodes, node, gnodes, node, H5P_DEFAULT, H5P_DEFAULT) < 0)
                    st = nc_errorf(NC_ERR_IO, "could not link node '%s'", node);
                continue;
            }
            hid_t g = new_group(gnodes, node);
            if (g < 0) {
                st = NC_ERR_IO;
                break;
            }
            st = pass == 0 ? write_node_fields(w, i, g) : write_scale_node(w, i, g);
            H5Gclose(g);
            if (st != NC_OK)
                nc_error_prefix("node '%s'", node);
        }
    }
    for (int k = 0; st == NC_OK && k < w->n_out; k++) {
        hid_t g = new_group(gnodes, w->out_node[k]);
        nc_snn_output_info O;
        if ((st = w->n_out > 1 ? nc_snn_output_at(w->s, k, &O) : NC_OK) != NC_OK)
            break;
        if (w->n_out == 1) { /* the output layer's own shape */
            const nc_snn_layer *L = &w->s->layers[nc_snn_output_id(w->s)];
            O.ndim = L->ndim;
            memcpy(O.shape, L->shape, sizeof O.shape);
        }
        int64_t nd = O.ndim;
        st = g < 0 ? NC_ERR_IO : nc_h5_write_string(g, "type", "Output");
        if (st == NC_OK)
            st = nc_h5_write_i64(g, "shape", 1, &nd, O.shape);
        if (g >= 0)
            H5Gclose(g);
    }
    if (st == NC_OK)
        st = nc_h5_write_strings(gnode, "edges", w->n_edges, 2, w->edges);
    if (gnodes >= 0)
        H5Gclose(gnodes);
    H5Gclose(gnode);
    return st;
}

static nc_status put_opt(hid_t g, const char *name, const nc_tensor *t)
{
    return t ? put_tensor(g, name, t) : NC_OK;
}

/* Space HDF5 takes for a chunked dataset beyond its chunks (its chunk
 * index), which a contiguous one does not: about 2-3 KiB. */
#define NC_CHUNK_OVERHEAD 4096

/* The original weight of a layer whose NIR weight F is its fold (head
 * comment): as fold_factor and weight_xor where F is the original's shape
 * (not a densely spelled-out grouped weight), the bits round trip
 * portably, and that is smaller; else plainly as `weight`. Smaller is
 * estimated before writing: shuffle and deflate store a word that does not
 * differ in next to nothing and one that does (by a few ulps: low bits) in
 * at most its 4 bytes. Portably: normal factors, and no subnormal or NaN
 * in the NIR weight or its division, nor a division flushed to zero
 * (flush-to-zero modes and NaN payloads vary between machines). */
static nc_status put_original(const wr *w, int i, hid_t g)
{
    const nc_snn_layer *L = &w->s->layers[i];
    const nc_tensor *W = L->weight, *F = w->folded[i];
    const float *m = fold_of(w, i);
    if (!m || F->ndim != W->ndim || memcmp(F->shape, W->shape, (size_t)W->ndim * sizeof W->shape[0]) != 0 ||
        !nc_h5_deflate_avail())
        return put_tensor(g, "weight", W);
    int64_t groups = L->kind == NC_SNN_CONV2D ? L->groups : 1, cols = W->shape[1] * groups;
    if (cols < 1)
        return put_tensor(g, "weight", W);
    int64_t stride = nc_snn_layer_size(&w->s->layers[L->inputs[0]]) / cols, n = W->numel, differ = 0;
    float *f = nc_malloc((size_t)cols * sizeof *f);
    nc_tensor *U = nc_tensor_clone(F);
    uint32_t *x = nc_malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    nc_status st = NC_OK;
    if (!f || !U || !x) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto done;
    }
    int portable = 1;
    for (int64_t c = 0; c < cols; c++) {
        f[c] = m[c * stride];
        portable &= isnormal(f[c]) != 0;
    }
    if (portable)
        nc_snn_scale_inputs(U, L->kind, groups, f, 1, 1);
    for (int64_t k = 0; portable && k < n; k++) { /* zero, normal or infinite, and a nonzero F no zero U */
        int a = fpclassify(nc_f32(F)[k]), b = fpclassify(nc_f32(U)[k]);
        portable = (a == b && a != FP_SUBNORMAL && a != FP_NAN) || (a == FP_NORMAL && b == FP_INFINITE);
    }
    if (portable) {
        memcpy(x, W->data, (size_t)n * sizeof *x);
        nir_xor_words(x, U->data, n);
        for (int64_t k = 0; k < n; k++)
            differ += x[k] != 0;
    }
    if (!portable || (differ + cols) * 4 + NC_CHUNK_OVERHEAD >= n * 4)
        st = put_tensor(g, "weight", W);
    else if ((st = nc_h5_write_f32(g, "fold_factor", 1, &cols, f)) == NC_OK)
        st = nc_h5_write_u32_deflate(g, "weight_xor", W->ndim, W->shape, x);
done:
    nc_free(f);
    nc_tensor_free(U);
    nc_free(x);
    return st;
}

static nc_status write_neuroc_layer(const wr *w, int i, hid_t g)
{
    const nc_snn_layer *L = &w->s->layers[i];
    int64_t ni = L->n_inputs, nd = L->ndim, in[1] = {0};
    int64_t *inputs = ni > 0 ? nc_malloc((size_t)ni * sizeof *inputs) : in;
    if (!inputs)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < ni; k++)
        inputs[k] = L->inputs[k];
    nc_status st;
    if ((st = nc_h5_write_string(g, "name", L->name)) == NC_OK &&
        (st = nc_h5_write_string(g, "kind", nc_snn_kind_name(L->kind))) == NC_OK &&
        (st = nc_h5_write_string(g, "node", w->node[i] ? w->node[i] : "")) == NC_OK &&
        (st = nc_h5_write_i64(g, "inputs", 1, &ni, inputs)) == NC_OK)
        st = nc_h5_write_i64(g, "shape", 1, &nd, L->shape);
    if (ni > 0)
        nc_free(inputs);
    if (st == NC_OK && w->folded[i])
        st = put_original(w, i, g);
    if (st == NC_OK && L->kind == NC_SNN_CONV2D)
        st = nc_h5_write_i64_scalar(g, "groups", L->groups);
    if (st == NC_OK && L->kind == NC_SNN_POOL2D)
        st = nc_h5_write_f32(g, "scale", 0, NULL, &L->scale);
    if (st == NC_OK && L->io_part) /* a NIR graph's several Input or Output nodes (snn_ir.h) */
        st = nc_h5_write_i64_scalar(g, "io_part", L->io_part);
    if (st == NC_OK && L->part_names)
        st = nc_h5_write_strings(g, "part_names", L->n_inputs, 1, (const char *const *)L->part_names);
    if (st == NC_OK && nir_has_neuron_fields(L->kind)) {
        if ((st = put_opt(g, "v_reset", L->v_reset)) == NC_OK && L->spike_gt)
            st = nc_h5_write_i64_scalar(g, "spike_gt", 1);
        if (st == NC_OK && L->exact)
            st = nc_h5_write_i64_scalar(g, "exact", 1);
        if (st == NC_OK && L->pretest_sub)
            st = nc_h5_write_i64_scalar(g, "pretest_sub", 1);
        if (st == NC_OK && L->kind == NC_SNN_DELAY)
            st = nc_h5_write_i64_scalar(g, "delay_steps", L->kernel[0]);
    }
    if (st == NC_OK && nir_has_neuron_fields(L->kind)) {
        if ((st = put_opt(g, "threshold", L->threshold)) == NC_OK && (st = put_opt(g, "v_init", L->v_init)) == NC_OK &&
            (st = put_opt(g, "spike_value", L->spike_value)) == NC_OK && (st = put_opt(g, "tau", L->tau)) == NC_OK &&
            (st = put_opt(g, "r", L->r)) == NC_OK && (st = put_opt(g, "v_leak", L->v_leak)) == NC_OK &&
            (st = put_opt(g, "tau_syn", L->tau_syn)) == NC_OK && (st = put_opt(g, "w_in", L->w_in)) == NC_OK &&
            (st = nc_h5_write_i64_scalar(g, "reset", L->reset == NC_RESET_ZERO)) == NC_OK)
            st = nc_h5_write_f64_scalar(g, "dt", L->dt);
    }
    return st;
}

/* /neuroc for the network of w. With a standard graph apart (`exact`),
 * w's own graph goes in /neuroc/graph (format 4); else /node is w's
 * (format 3). `loss`: what /node loses, "" for nothing. */
static nc_status write_neuroc(const wr *w, hid_t f, const wr *std, const char *loss)
{
    int exact = std != w;
    hid_t g = new_group(f, "neuroc");
    if (g < 0)
        return NC_ERR_IO;
    hid_t gl = new_group(g, "layers");
    nc_status st = gl < 0 ? NC_ERR_IO
                          : nc_h5_write_i64_scalar(g, "format_version",
                                                   exact ? NC_NIR_NEUROC_FORMAT : NC_NIR_NEUROC_FORMAT_SAME);
    if (st == NC_OK)
        st = nc_h5_write_string(g, "standard_loss", loss);
    if (st == NC_OK && exact) {
        hid_t gn = H5Gopen2(f, "node/nodes", H5P_DEFAULT);
        st = gn < 0 ? nc_errorf(NC_ERR_IO, "could not open '/node/nodes'") : write_graph(w, g, "graph", std, gn);
        if (gn >= 0)
            H5Gclose(gn);
    }
    if (st == NC_OK)
        st = nc_h5_write_string(g, "generator", "neuroc " NEUROC_VERSION);
    if (st == NC_OK)
        st = nc_h5_write_i64_scalar(g, "output", w->s->output);
    if (st == NC_OK)
        st = nc_h5_write_i64_scalar(g, "n_layers", w->n);
    if (st == NC_OK && w->s->timesteps > 0) /* the operating T (nc_snn_timesteps): older readers ignore it */
        st = nc_h5_write_i64_scalar(g, "timesteps", w->s->timesteps);
    int out = nc_snn_output_id(w->s);
    if (st == NC_OK && w->s->layers[out].kind == NC_SNN_READOUT)
        st = nc_h5_write_string(g, "readout", w->s->layers[out].name);
    for (int i = 0; st == NC_OK && i < w->n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%d", i);
        hid_t gi = new_group(gl, name);
        if (gi < 0) {
            st = NC_ERR_IO;
            break;
        }
        st = write_neuroc_layer(w, i, gi);
        H5Gclose(gi);
        if (st != NC_OK)
            nc_error_prefix("/neuroc layer '%s'", w->s->layers[i].name);
    }
    if (gl >= 0)
        H5Gclose(gl);
    H5Gclose(g);
    return st;
}

/* std: the standard graph's plan, for /node; w: the network's, for
 * /neuroc (the same plan when the network is its own standard form). */
static nc_status write_file(const wr *std, const wr *w, const char *loss, const char *tmp)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) < 0) {
        if (fapl >= 0)
            H5Pclose(fapl);
        return nc_errorf(NC_ERR_IO, "HDF5 could not be set up");
    }
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE); /* the root group without times too */
    if (fcpl >= 0 && H5Pset_obj_track_times(fcpl, 0) < 0) {
        H5Pclose(fcpl);
        fcpl = H5I_INVALID_HID;
    }
    errno = 0;
    hid_t f = fcpl >= 0 ? H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, fapl) : H5I_INVALID_HID;
    int err = errno;
    if (fcpl >= 0)
        H5Pclose(fcpl);
    H5Pclose(fapl);
    if (f < 0) /* HDF5's own stack is silenced; errno holds the system's reason where there is one */
        return nc_errorf(NC_ERR_IO, "HDF5 could not create the temporary file '%s': %s", tmp,
                         err ? strerror(err) : "out of memory or an HDF5 error");
    nc_status st = nc_h5_write_string(f, "version", NC_NIR_FILE_VERSION);
    if (st == NC_OK)
        st = write_graph(std, f, "node", NULL, H5I_INVALID_HID);
    if (st == NC_OK)
        st = write_neuroc(w, f, std, loss);
    if (H5Fclose(f) < 0 && st == NC_OK)
        st = nc_errorf(NC_ERR_IO, "could not finish writing '%s'", tmp);
    return st;
}

void nc_nir_save_options_init(nc_nir_save_options *o)
{
    if (o)
        memset(o, 0, sizeof *o);
}

nc_status nc_snn_save_nir(const nc_snn *s, const char *path) { return nc_snn_save_nir_with(s, path, NULL); }

/* The standard form of s (snn_standard.c) and its plan, or, where s is its
 * own, s's plan alone (*std_plan = w). Strict mode refuses a standard form
 * that replaced layers by approximations. */
static nc_status plan_both(const nc_snn *s, int strict, nc_snn **std_net, wr *std, wr *w, nc_snn_std_loss *loss)
{
    nc_status st = nc_snn_standard_form(s, std_net, loss);
    if (st == NC_ERR_UNSUPPORTED && !strict) {
        /* no standard graph (a Reshape NIR's Flatten cannot do): the network
           alone, its extension nodes in /node, as before format 4 */
        snprintf(loss->text, sizeof loss->text, "no standard NIR graph: %s\n", nc_last_error());
        nc_log(NC_LOG_WARN, "%s", loss->text);
        nc_error_clear();
        w->s = s;
        return plan(w);
    }
    if (st != NC_OK)
        return st;
    if (strict && loss->approximated)
        return nc_errorf(NC_ERR_UNSUPPORTED, "strict mode (--nir-strict): the standard NIR graph would lose "
                         "what NIR cannot express:\n%s(without strict mode neuroc keeps its exact network beside "
                         "it)", loss->text);
    w->s = s;
    w->standard = loss->changed == 0; /* /node is w's graph: grouped weights spelled out for nir.read */
    if ((st = plan(w)) != NC_OK || loss->changed == 0)
        return st;
    std->s = *std_net;
    std->standard = 1;
    return plan(std);
}

nc_status nc_snn_save_nir_with(const nc_snn *s, const char *path, const nc_nir_save_options *opt)
{
    if (!s || !path || !path[0] || s->n_layers < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_save_nir: network or path missing");
    wr w, std;
    memset(&w, 0, sizeof w);
    memset(&std, 0, sizeof std);
    nc_snn *std_net = NULL;
    nc_snn_std_loss *loss = nc_calloc(1, sizeof *loss);
    nc_status st = loss ? plan_both(s, opt && opt->strict, &std_net, &std, &w, loss)
                        : nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (st != NC_OK) {
        nc_error_prefix("%s", path);
        goto done;
    }
    /* HDF5 writes the temporary file by name: close our descriptor first. */
    nc_atomic_file af;
    if ((st = nc_atomic_open(path, &af)) != NC_OK)
        goto done;
    close(af.fd);
    af.fd = -1;
    nc_h5_quiet q;
    nc_h5_quiet_begin(&q);
    st = write_file(loss->changed ? &std : &w, &w, loss->text, af.tmp);
    nc_h5_quiet_end(&q);
    if (st == NC_OK) {
        st = nc_atomic_commit(&af, path);
    } else {
        nc_atomic_abort(&af);
        nc_error_prefix("%s", path);
    }
done:
    wr_free(&w);
    wr_free(&std);
    nc_snn_free(std_net);
    nc_free(loss);
    return st;
}
