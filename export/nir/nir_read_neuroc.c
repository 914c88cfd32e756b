/* The lossless half of the NIR reader: rebuilds the network from the
 * /neuroc group neuroc writes (layout in nir_write.c), taking biases and
 * conv/pool geometry from the NIR nodes it names and everything NIR cannot
 * say (original weights, v(0), reset, spike values, pool scale, names,
 * order, output) from the group itself. A layer NIR cannot express (a kind
 * whose `nir` trait is 0, or a node whose type is neuroc.<kind>: an average
 * pool with divisors) takes all its fields from its extension node
 * (nir_ext.c); that it is one must agree with nc_snn_layer_nir_expressible. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "nir_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"

static nc_snn_layer_kind kind_from_name(const char *name, int *ok)
{
    *ok = 1;
    for (int k = NC_SNN_INPUT; k < NC_SNN_N_KINDS; k++)
        if (strcmp(nc_snn_kind_name((nc_snn_layer_kind)k), name) == 0)
            return (nc_snn_layer_kind)k;
    *ok = 0;
    return NC_SNN_INPUT;
}

/* Optional float tensor dataset of /neuroc/layers/<i>. */
static nc_status opt_tensor(hid_t g, const char *name, nc_tensor **dst)
{
    if (!nc_h5_exists(g, name))
        return NC_OK;
    nc_tensor *t;
    nc_status st = nc_h5_read_f32(g, name, &t);
    if (st == NC_OK) {
        nc_tensor_free(*dst);
        *dst = t;
    }
    return st;
}

/* The original weight of a layer whose NIR weight is folded (nir_write.c):
 * that weight's input columns divided by fold_factor, its bits XOR
 * weight_xor. L is complete and checked, L->weight the NIR weight. */
static nc_status unfold_weight(hid_t gi, nc_snn_layer *L)
{
    if (L->kind != NC_SNN_AFFINE && L->kind != NC_SNN_CONV2D)
        return nc_errorf(NC_ERR_MODEL, "'weight_xor' on a layer of kind %s, which has no weight",
                         nc_snn_kind_name(L->kind));
    if (nc_h5_exists(gi, "weight"))
        return nc_errorf(NC_ERR_MODEL, "both 'weight' and 'weight_xor': one original weight only");
    nc_tensor *W = L->weight, *f = NULL;
    int64_t groups = L->kind == NC_SNN_CONV2D ? L->groups : 1, cols = W->shape[1] * groups, shape[NC_MAX_DIMS];
    uint32_t *x = NULL;
    int nd = 0;
    char a[160], b[160];
    nc_status st = nc_h5_read_f32(gi, "fold_factor", &f);
    if (st == NC_OK && (f->ndim != 1 || f->numel != cols))
        st = nc_errorf(NC_ERR_SHAPE, "'fold_factor' has shape %s; the weight %s has %lld input columns",
                       nc_shape_str(f->ndim, f->shape, a, sizeof a), nc_shape_str(W->ndim, W->shape, b, sizeof b),
                       (long long)cols);
    for (int64_t c = 0; st == NC_OK && c < cols; c++)
        if (!isfinite(nc_f32(f)[c]) || nc_f32(f)[c] == 0.0f)
            st = nc_errorf(NC_ERR_MODEL, "'fold_factor' [%lld] is %g: a factor is finite and nonzero", (long long)c,
                           (double)nc_f32(f)[c]);
    if (st == NC_OK)
        st = nc_h5_read_u32(gi, "weight_xor", &nd, shape, &x);
    if (st == NC_OK && (nd != W->ndim || memcmp(shape, W->shape, (size_t)nd * sizeof shape[0]) != 0))
        st = nc_errorf(NC_ERR_SHAPE, "'weight_xor' has shape %s, the weight %s", nc_shape_str(nd, shape, a, sizeof a),
                       nc_shape_str(W->ndim, W->shape, b, sizeof b));
    if (st == NC_OK) {
        nc_snn_scale_inputs(W, L->kind, groups, nc_f32(f), 1, 1);
        nir_xor_words(W->data, x, W->numel);
    }
    nc_tensor_free(f);
    nc_free(x);
    return st;
}

/* io_part and part_names of a layer joining a NIR graph's several Input
 * or Output nodes (snn_ir.h), when the record has them. */
static nc_status read_io_part(hid_t gi, nc_snn_layer *L)
{
    double v = 0;
    nc_status st;
    if (nc_h5_exists(gi, "io_part") && (st = nc_h5_read_f64_scalar(gi, "io_part", &v)) != NC_OK)
        return st;
    int want = L->kind == NC_SNN_CONCAT ? NC_IO_OUTPUTS : L->kind == NC_SNN_RESHAPE ? -1 : 0;
    if (v != 0 && !(want < 0 ? v == NC_IO_INPUT_PART || v == NC_IO_OUTPUT_FLAT : v == want))
        return nc_errorf(NC_ERR_MODEL, "io_part %g on a %s layer", v, nc_snn_kind_name(L->kind));
    L->io_part = (int)v;
    /* what the writer relies on: an input part reads the joined input (layer 0) */
    if (L->io_part == NC_IO_INPUT_PART && L->inputs[0] != 0)
        return nc_errorf(NC_ERR_MODEL, "an input part (io_part %d) must read layer 0, not %d", NC_IO_INPUT_PART,
                         L->inputs[0]);
    if (L->io_part != NC_IO_OUTPUTS)
        return NC_OK;
    int nd;
    int64_t shape[NC_MAX_DIMS], n = 0;
    char **names = NULL;
    if ((st = nc_h5_read_strings(gi, "part_names", &nd, shape, &n, &names)) != NC_OK)
        return st;
    if (n != L->n_inputs) {
        nc_h5_free_strings(names, n);
        return nc_errorf(NC_ERR_MODEL, "%lld part_names for %d inputs", (long long)n, L->n_inputs);
    }
    if (!(L->part_names = nc_calloc((size_t)n, sizeof *L->part_names)))
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; st == NC_OK && k < n; k++)
        if (!(L->part_names[k] = nc_strdup(names[k])))
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    nc_h5_free_strings(names, n);
    return st;
}

/* Layer i from its /neuroc group gi and its NIR node (if any). */
static nc_status neuroc_layer(rd *R, hid_t f, const char *nodes, hid_t gi, int i, int total, nc_snn **sp)
{
    char *name = NULL, *kname = NULL, *node = NULL;
    nc_tensor *inputs = NULL, *shape = NULL;
    nnode nd;
    memset(&nd, 0, sizeof nd);
    nc_status st;
    int ok;
    if ((st = nc_h5_read_string(gi, "name", &name)) != NC_OK || (st = nc_h5_read_string(gi, "kind", &kname)) != NC_OK ||
        (st = nc_h5_read_string(gi, "node", &node)) != NC_OK || (st = nc_h5_read_i64(gi, "inputs", &inputs)) != NC_OK ||
        (st = nc_h5_read_i64(gi, "shape", &shape)) != NC_OK)
        goto done;
    nc_snn_layer_kind kind = kind_from_name(kname, &ok);
    if (!ok) {
        st = nc_errorf(NC_ERR_UNSUPPORTED, "node '%s': unknown layer kind '%s' (an extension of another neuroc "
                       "version?)", node, kname);
        goto done;
    }
    /* a neuroc.<kind> node (nir_ext.c): every layer of a kind NIR cannot
       express, and the others NIR cannot (an average pool with divisors),
       which the node's type tells; checked against the layer read below */
    int ext = !nc_snn_kind(kind)->nir;
    if (!ext && node[0] && (st = nir_ext_node(f, nodes, node, &ext)) != NC_OK)
        goto done;
    if ((i == 0) != (kind == NC_SNN_INPUT)) {
        st = nc_errorf(NC_ERR_MODEL, "layer kind '%s' at position %d", kname, i);
        goto done;
    }
    if (shape->ndim != 1 || shape->numel < 1 || shape->numel > NC_MAX_DIMS || inputs->ndim != 1 ||
        inputs->numel > 1000000 || (kind != NC_SNN_INPUT && inputs->numel < 1) ||
        (!nc_snn_kind(kind)->multi_input && inputs->numel > (kind == NC_SNN_NONLINEAR ? 2 : 1))) {
        st = nc_errorf(NC_ERR_MODEL, "bad 'shape' or 'inputs'");
        goto done;
    }
    if (ext && !node[0]) {
        st = nc_errorf(NC_ERR_MODEL, "a %s layer needs its extension node", kname);
        goto done;
    }
    if (node[0] && !ext) {
        int is_graph = 0;
        hid_t gnodes = nc_h5_is_group(f, nodes) ? H5Gopen2(f, nodes, H5P_DEFAULT) : H5I_INVALID_HID;
        st = gnodes < 0 ? nc_errorf(NC_ERR_PARSE, "no '/%s' group", nodes) : nir_load_node(gnodes, node, node, &nd, &is_graph);
        if (gnodes >= 0)
            H5Gclose(gnodes);
        if (st == NC_OK && (is_graph || (kind != NC_SNN_INPUT && nir_layer_kind(nd.kind) != kind)))
            st = nc_errorf(NC_ERR_MODEL, "NIR node '%s' does not hold a %s layer", node, kname);
        if (st != NC_OK)
            goto done;
    } else if (!node[0] && nc_snn_kind(kind)->nir_node) {
        st = nc_errorf(NC_ERR_MODEL, "a %s layer needs a NIR node", kname);
        goto done;
    }
    if (kind == NC_SNN_INPUT) {
        if ((st = nc_snn_create((int)shape->numel, nc_i64(shape), sp)) != NC_OK)
            goto done;
        nc_free((*sp)->layers[0].name);
        (*sp)->layers[0].name = name;
        name = NULL;
        goto done;
    }
    nc_snn *s = *sp;
    /* fails for a name used twice (the file's fault) or out of memory */
    int taken = nc_snn_find_layer(s, name) >= 0;
    nc_snn_layer *L = nc_snn_append(s, kind, name, (int)inputs->numel);
    if (!L) {
        st = taken ? NC_ERR_MODEL : NC_ERR_NOMEM;
        goto done;
    }
    for (int64_t k = 0; k < inputs->numel; k++) {
        int64_t in = nc_i64(inputs)[k];
        L->inputs[k] = in >= 0 && in < INT32_MAX ? (int)in : -1;
    }
    if (ext)
        st = nir_ext_read(f, nodes, node, L);
    else if (node[0] && (st = nir_apply_node(R, &nd, s, L)) == NC_OK) {
        /* the lossless values replace what plain NIR says */
        if ((st = opt_tensor(gi, "weight", &L->weight)) != NC_OK)
            goto done;
        if (kind == NC_SNN_CONV2D) {
            double groups;
            if ((st = nc_h5_read_f64_scalar(gi, "groups", &groups)) != NC_OK)
                goto done;
            if (!(groups >= 1 && groups <= 1e9 && groups == floor(groups))) {
                st = nc_errorf(NC_ERR_PARSE, "layer '%s': groups %g is not a whole number from 1 to 10^9", L->name,
                               groups);
                goto done;
            }
            L->groups = (int64_t)groups;
        }
        if (kind == NC_SNN_POOL2D) {
            double scale;
            if ((st = nc_h5_read_f64_scalar(gi, "scale", &scale)) != NC_OK)
                goto done;
            L->scale = (float)scale;
        }
        if (nir_has_neuron_fields(kind)) {
            nc_tensor **ts[] = {&L->threshold, &L->v_init, &L->spike_value, &L->tau, &L->r, &L->v_leak, &L->tau_syn, &L->w_in,
                                &L->v_reset};
            double flag = 0;
            L->spike_gt = L->exact = L->pretest_sub = 0;
            if (nc_h5_exists(gi, "pretest_sub") && (st = nc_h5_read_f64_scalar(gi, "pretest_sub", &flag)) == NC_OK)
                L->pretest_sub = flag != 0;
            if (nc_h5_exists(gi, "spike_gt") && (st = nc_h5_read_f64_scalar(gi, "spike_gt", &flag)) == NC_OK)
                L->spike_gt = flag != 0;
            if (st == NC_OK && nc_h5_exists(gi, "exact") && (st = nc_h5_read_f64_scalar(gi, "exact", &flag)) == NC_OK)
                L->exact = flag != 0;
            if (st == NC_OK && nc_h5_exists(gi, "delay_steps") &&
                (st = nc_h5_read_f64_scalar(gi, "delay_steps", &flag)) == NC_OK)
                L->kernel[0] = flag >= 0 && flag <= 1e6 ? (int64_t)flag : -1;
            if (st != NC_OK)
                goto done;
            for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
                nc_tensor_free(*ts[k]);
                *ts[k] = NULL;
            }
            double reset;
            if ((st = opt_tensor(gi, "threshold", &L->threshold)) != NC_OK ||
                (st = opt_tensor(gi, "v_init", &L->v_init)) != NC_OK ||
                (st = opt_tensor(gi, "spike_value", &L->spike_value)) != NC_OK ||
                (st = opt_tensor(gi, "tau", &L->tau)) != NC_OK || (st = opt_tensor(gi, "r", &L->r)) != NC_OK ||
                (st = opt_tensor(gi, "v_leak", &L->v_leak)) != NC_OK ||
                (st = opt_tensor(gi, "tau_syn", &L->tau_syn)) != NC_OK ||
                (st = opt_tensor(gi, "w_in", &L->w_in)) != NC_OK ||
                (st = opt_tensor(gi, "v_reset", &L->v_reset)) != NC_OK ||
                (st = nc_h5_read_f64_scalar(gi, "reset", &reset)) != NC_OK ||
                (st = nc_h5_read_f64_scalar(gi, "dt", &L->dt)) != NC_OK)
                goto done;
            L->reset = reset == 1.0 ? NC_RESET_ZERO : reset == 0.0 ? NC_RESET_SUBTRACT : (nc_reset_mode)-1;
        }
    }
    if (st == NC_OK)
        st = read_io_part(gi, L);
    if (st != NC_OK || (st = nir_finish_layer(s, i, total)) != NC_OK ||
        (!ext && nc_h5_exists(gi, "weight_xor") && (st = unfold_weight(gi, L)) != NC_OK))
        goto done;
    if (ext && nc_snn_layer_nir_expressible(L)) {
        st = nc_errorf(NC_ERR_MODEL, "node '%s' is an extension node, but NIR can express this %s layer "
                       "(neuroc writes a NIR node for it)", node, kname);
        goto done;
    }
    int same = L->ndim == shape->numel;
    for (int d = 0; same && d < L->ndim; d++)
        same = L->shape[d] == nc_i64(shape)[d];
    if (!same)
        st = nc_errorf(NC_ERR_SHAPE, "shape differs from the one recorded");
done:
    if (st != NC_OK)
        nc_error_prefix("layer '%s'", name ? name : (*sp && i < (*sp)->n_layers ? (*sp)->layers[i].name : "?"));
    nir_node_clear(&nd);
    nc_free(name);
    nc_free(kname);
    nc_free(node);
    nc_tensor_free(inputs);
    nc_tensor_free(shape);
    return st;
}

nc_status nir_read_neuroc(rd *R, hid_t f, int format, nc_snn **out)
{
    /* from format 4 the layers' nodes are in neuroc's own graph, /node is the standard form */
    const char *nodes = format >= 4 ? "neuroc/graph/nodes" : "node/nodes";
    hid_t g = H5Gopen2(f, "neuroc", H5P_DEFAULT);
    double n_layers = 0, output = -1;
    nc_status st;
    if ((st = nc_h5_read_f64_scalar(g, "n_layers", &n_layers)) != NC_OK ||
        (st = nc_h5_read_f64_scalar(g, "output", &output)) != NC_OK) {
        H5Gclose(g);
        nc_error_prefix("%s: /neuroc", R->path);
        return st;
    }
    double timesteps = 0;
    if (nc_h5_exists(g, "timesteps") && (st = nc_h5_read_f64_scalar(g, "timesteps", &timesteps)) != NC_OK) {
        H5Gclose(g);
        nc_error_prefix("%s: /neuroc", R->path);
        return st;
    }
    if (!(n_layers >= 1 && n_layers <= NC_NIR_MAX_NODES) || !(output >= -1 && output < n_layers) ||
        !(timesteps >= 0 && timesteps <= NC_SNN_MAX_TIMESTEPS && timesteps == (int)timesteps)) {
        H5Gclose(g);
        return nc_errorf(NC_ERR_MODEL, "%s: /neuroc: bad n_layers, output or timesteps", R->path);
    }
    nc_snn *s = NULL;
    for (int i = 0; st == NC_OK && i < (int)n_layers; i++) {
        char name[48];
        snprintf(name, sizeof name, "layers/%d", i);
        if (!nc_h5_is_group(g, name)) {
            st = nc_errorf(NC_ERR_PARSE, "group '%s' is missing", name);
        } else {
            hid_t gi = H5Gopen2(g, name, H5P_DEFAULT);
            st = neuroc_layer(R, f, nodes, gi, i, (int)n_layers, &s);
            H5Gclose(gi);
        }
    }
    H5Gclose(g);
    if (st == NC_OK)
        st = nir_check_recurrent(s);
    if (st != NC_OK) {
        nc_error_prefix("%s: /neuroc", R->path);
        nc_snn_free(s);
        return st;
    }
    s->output = (int)output;
    s->timesteps = (int)timesteps;
    *out = s;
    return NC_OK;
}

/* The format of the file's /neuroc group if this reader understands it, else 0. */
int nir_neuroc_usable(hid_t f)
{
    if (!nc_h5_is_group(f, "neuroc"))
        return 0;
    hid_t g = H5Gopen2(f, "neuroc", H5P_DEFAULT);
    double v = 0;
    int ok = nc_h5_read_f64_scalar(g, "format_version", &v) == NC_OK && v >= NC_NIR_NEUROC_FORMAT_MIN &&
             v <= NC_NIR_NEUROC_FORMAT;
    H5Gclose(g);
    if (!ok) {
        nc_error_clear();
        nc_log(NC_LOG_WARN, "NIR file: /neuroc group of another format version ignored; reading plain NIR");
    }
    return ok ? (int)v : 0;
}

