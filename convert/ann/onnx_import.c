/* ONNX ModelProto → nc_graph → nc_model. Everything read from the file is
 * checked before use; every error names the file and the node or tensor. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "graph_prepare.h"
#include "onnx_import.h"
#include "onnx/onnx.pb-c.h"
#include "onnx_tensor.h"
#include "pb_nesting.h"
#include "snn/base/alloc.h"
#include "ann_ops.h"
#include "snn/base/error.h"
#include "snn/base/finite.h"
#include "model.h"

#define NC_OPSET_MIN 7
#define NC_OPSET_MAX 21
#define NC_IR_VERSION_MAX 10 /* the IR version of opsets 21 and 22 (ONNX 1.16, 1.17) */

/* Models older than opset 7 are accepted when each of their ops computes
 * what it computes at opset 7: from opset `since` on (ONNX's operator
 * changelog). GlobalAveragePool and MaxPool have not changed since opset 1.
 * AveragePool-7 only added count_include_pad (default: v1's behaviour) and
 * Gemm-7 only dropped `broadcast` (always on), so every valid older model
 * means the same. Add-6 broadcast along an `axis`, BatchNormalization-6 and
 * Dropout-6 train unless is_test: those changed at 7, as do ops not listed. */
static const struct {
    const char *op;
    int since;
} k_since_at_7[] = {
    {"Conv", 1},     {"MatMul", 1},   {"MaxPool", 1},     {"GlobalAveragePool", 1},
    {"AveragePool", 1}, {"Gemm", 6},
    {"Pad", 2},      {"Relu", 6},     {"Clip", 6},        {"LeakyRelu", 6},
    {"Floor", 6},    {"Softmax", 1},  {"LogSoftmax", 1},  {"Identity", 1},
    {"Flatten", 1},  {"Reshape", 5},  {"Squeeze", 1},     {"Unsqueeze", 1},
    {"Concat", 4},   {"Shape", 1},    {"Gather", 1},      {"Slice", 1},
    {"Cast", 6},
    {"Transpose", 1}, {"Sigmoid", 6},  {"HardSigmoid", 6}, {"Sqrt", 6},
    {"Tanh", 6},
    {"ReduceMean", 1}, {"Not", 1},
};

static int since_at_7(const char *op)
{
    for (size_t i = 0; i < sizeof k_since_at_7 / sizeof k_since_at_7[0]; i++)
        if (strcmp(k_since_at_7[i].op, op) == 0)
            return k_since_at_7[i].since;
    return NC_OPSET_MIN;
}

typedef struct importer {
    const char *src;        /* file or buffer name, for messages */
    nc_onnx_tensor_ctx tctx;
    nc_graph *g;
    int *slots;             /* open-addressing map name → value index (-1 empty) */
    size_t n_slots;
    int describe_only;      /* keep unsupported nodes (def NULL) rather than refuse */
} importer;

/* ------------------------------------------------------------ name map */

static size_t hash_str(const char *s)
{
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static int map_find(const importer *im, const char *name)
{
    if (!im->n_slots)
        return -1;
    for (size_t i = hash_str(name) & (im->n_slots - 1);; i = (i + 1) & (im->n_slots - 1)) {
        int v = im->slots[i];
        if (v < 0 || strcmp(im->g->values[v].name, name) == 0)
            return v;
    }
}

static void map_put(importer *im, int v)
{
    size_t i = hash_str(im->g->values[v].name) & (im->n_slots - 1);
    while (im->slots[i] >= 0)
        i = (i + 1) & (im->n_slots - 1);
    im->slots[i] = v;
}

/* Adds a value named `name`; returns its index, or -1 (NC_ERR_NOMEM set). */
static int add_value(importer *im, const char *name)
{
    if ((size_t)im->g->n_values + 1 > im->n_slots / 2) {
        size_t n = im->n_slots ? im->n_slots * 2 : 256;
        int *s = nc_malloc(n * sizeof *s);
        if (!s) {
            nc_errorf(NC_ERR_NOMEM, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            s[i] = -1;
        nc_free(im->slots);
        im->slots = s;
        im->n_slots = n;
        for (int v = 0; v < im->g->n_values; v++)
            map_put(im, v);
    }
    int v = nc_graph_add_value(im->g, name);
    if (v < 0) {
        nc_errorf(NC_ERR_NOMEM, "out of memory");
        return -1;
    }
    map_put(im, v);
    return v;
}

static int get_value(importer *im, const char *name)
{
    int v = map_find(im, name);
    return v >= 0 ? v : add_value(im, name);
}

static int is_graph_input(const nc_graph *g, int v)
{
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == v)
            return 1;
    return 0;
}

/* ------------------------------------------------------------ values */

static nc_status add_initializers(importer *im, const Onnx__GraphProto *gp)
{
    if (gp->n_sparse_initializer)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: sparse initializers are not supported", im->src);
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const Onnx__TensorProto *tp = gp->initializer[i];
        if (!tp->name || !*tp->name)
            return nc_errorf(NC_ERR_PARSE, "%s: initializer #%zu has no name", im->src, i);
        if (map_find(im, tp->name) >= 0)
            return nc_errorf(NC_ERR_MODEL, "%s: initializer '%s' appears twice", im->src, tp->name);
        nc_tensor *t;
        nc_status st = nc_onnx_tensor_decode(tp, NULL, &im->tctx, &t);
        if (st != NC_OK) {
            nc_error_prefix("%s", im->src);
            return st;
        }
        int v = add_value(im, tp->name);
        if (v < 0) {
            nc_tensor_free(t);
            return NC_ERR_NOMEM;
        }
        nc_graph_set_constant(im->g, v, t);
    }
    return NC_OK;
}

/* Dtype and declared shape of a graph input or output. */
static nc_status read_value_info(importer *im, const Onnx__ValueInfoProto *vi, int v, const char *kind)
{
    nc_value *val = &im->g->values[v];
    const Onnx__TypeProto *tp = vi->type;
    if (!tp) /* no type at all: leave dtype/shape to inference */
        return NC_OK;
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: graph %s '%s' is not a tensor (sequence, map, ...)",
                         im->src, kind, val->name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (tt->has_elem_type && tt->elem_type != 0 && !nc_onnx_map_dtype(tt->elem_type, &val->dtype))
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "%s: graph %s '%s' has data type %s, which neuroc does not support",
                         im->src, kind, val->name, nc_onnx_dtype_name(tt->elem_type));
    if (!tt->shape)
        return NC_OK;
    if (tt->shape->n_dim > NC_MAX_DIMS)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: graph %s '%s' has %zu dimensions; neuroc supports up to %d",
                         im->src, kind, val->name, tt->shape->n_dim, NC_MAX_DIMS);
    val->ndim = (int)tt->shape->n_dim;
    for (int d = 0; d < val->ndim; d++) {
        const Onnx__TensorShapeProto__Dimension *dim = tt->shape->dim[d];
        int fixed = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                    dim->dim_value >= 0;
        val->shape[d] = fixed ? dim->dim_value : -1; /* dim_param or unset: symbolic */
    }
    return NC_OK;
}

static nc_status add_inputs(importer *im, const Onnx__GraphProto *gp)
{
    im->g->inputs = nc_calloc(gp->n_input + 1, sizeof *im->g->inputs);
    if (!im->g->inputs)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !*vi->name)
            return nc_errorf(NC_ERR_PARSE, "%s: graph input #%zu has no name", im->src, i);
        int v = map_find(im, vi->name);
        if (v >= 0 && im->g->values[v].constant)
            continue; /* an initializer listed as input (IR < 4): a weight, not a feed */
        if (v >= 0)
            return nc_errorf(NC_ERR_MODEL, "%s: graph input '%s' appears twice", im->src, vi->name);
        if ((v = add_value(im, vi->name)) < 0)
            return NC_ERR_NOMEM;
        im->g->inputs[im->g->n_inputs++] = v;
        nc_status st = read_value_info(im, vi, v, "input");
        if (st != NC_OK)
            return st;
    }
    return NC_OK;
}

static nc_status add_outputs(importer *im, const Onnx__GraphProto *gp)
{
    if (gp->n_output == 0)
        return nc_errorf(NC_ERR_MODEL, "%s: the graph has no outputs", im->src);
    im->g->outputs = nc_calloc(gp->n_output, sizeof *im->g->outputs);
    if (!im->g->outputs)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        int v = vi->name && *vi->name ? map_find(im, vi->name) : -1;
        if (v < 0)
            return nc_errorf(NC_ERR_MODEL, "%s: graph output '%s' is not computed by any node", im->src,
                             vi->name ? vi->name : "");
        im->g->outputs[im->g->n_outputs++] = v;
        if (!im->g->values[v].constant && !is_graph_input(im->g, v)) {
            nc_status st = read_value_info(im, vi, v, "output");
            if (st != NC_OK)
                return st;
        }
    }
    return NC_OK;
}

/* ------------------------------------------------------------ nodes */

/* Prefixes the current message with the node's context. */
static nc_status node_error(const importer *im, const char *name, const char *op, nc_status st)
{
    nc_error_prefix("%s: node '%s' (%s, opset %lld)", im->src, name, op, (long long)im->g->opset);
    return st;
}

static int attr_kind(const Onnx__AttributeProto *ap)
{
    if (ap->has_type)
        return ap->type;
    /* IR version 1 had no type field: infer it from the field in use. */
    if (ap->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (ap->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (ap->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (ap->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (ap->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    if (ap->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* Messages start with "attribute '<name>'"; the caller adds the node. */
static nc_status copy_attr(importer *im, const Onnx__AttributeProto *ap, nc_attr *a)
{
    const char *name = ap->name ? ap->name : "";
    if (!(a->name = nc_strdup(name)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    switch (attr_kind(ap)) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        a->type = NC_ATTR_FLOAT;
        a->f = ap->f;
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        a->type = NC_ATTR_INT;
        a->i = ap->i;
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        a->type = NC_ATTR_STRING;
        if (!(a->s = nc_malloc(ap->s.len + 1)))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        if (ap->s.len)
            memcpy(a->s, ap->s.data, ap->s.len);
        a->s[ap->s.len] = '\0';
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        a->type = NC_ATTR_FLOATS;
        if (ap->n_floats > INT_MAX)
            return nc_errorf(NC_ERR_LIMIT, "attribute '%s' has too many values", name);
        a->n = (int)ap->n_floats;
        if (a->n && !(a->floats = nc_malloc((size_t)a->n * sizeof *a->floats)))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        if (a->n)
            memcpy(a->floats, ap->floats, (size_t)a->n * sizeof *a->floats);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        a->type = NC_ATTR_INTS;
        if (ap->n_ints > INT_MAX)
            return nc_errorf(NC_ERR_LIMIT, "attribute '%s' has too many values", name);
        a->n = (int)ap->n_ints;
        if (a->n && !(a->ints = nc_malloc((size_t)a->n * sizeof *a->ints)))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        if (a->n)
            memcpy(a->ints, ap->ints, (size_t)a->n * sizeof *a->ints);
        break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        if (!ap->t)
            return nc_errorf(NC_ERR_PARSE, "attribute '%s' is a tensor without a value", name);
        a->type = NC_ATTR_TENSOR;
        nc_status st = nc_onnx_tensor_decode(ap->t, name, &im->tctx, &a->t);
        if (st != NC_OK) {
            nc_error_prefix("attribute '%s'", name);
            return st;
        }
        break;
    }
    default:
        a->type = NC_ATTR_OTHER;
        break;
    }
    return NC_OK;
}

/* A Constant node becomes a constant value straight away. */
static nc_status add_constant(importer *im, const Onnx__NodeProto *np, const char *name)
{
    if (np->n_output < 1 || !np->output[0] || !*np->output[0])
        return nc_errorf(NC_ERR_MODEL, "%s: Constant node '%s' has no output", im->src, name);
    if (np->n_attribute != 1)
        return nc_errorf(NC_ERR_MODEL, "%s: Constant node '%s' must have exactly one attribute, not %zu",
                         im->src, name, np->n_attribute);
    const Onnx__AttributeProto *ap = np->attribute[0];
    const char *an = ap->name ? ap->name : "";
    nc_attr a = {0};
    nc_status st = copy_attr(im, ap, &a);
    if (st != NC_OK) {
        nc_attr_clear(&a);
        return node_error(im, name, "Constant", st);
    }
    nc_tensor *t = NULL;
    int64_t len = a.n;
    if (strcmp(an, "value") == 0 && a.type == NC_ATTR_TENSOR) {
        t = a.t;
        a.t = NULL;
    } else if (strcmp(an, "value_float") == 0 && a.type == NC_ATTR_FLOAT) {
        if ((t = nc_tensor_new(NC_DTYPE_F32, 0, NULL)))
            nc_f32(t)[0] = a.f;
    } else if (strcmp(an, "value_int") == 0 && a.type == NC_ATTR_INT) {
        if ((t = nc_tensor_new(NC_DTYPE_I64, 0, NULL)))
            nc_i64(t)[0] = a.i;
    } else if (strcmp(an, "value_floats") == 0 && a.type == NC_ATTR_FLOATS) {
        if ((t = nc_tensor_new(NC_DTYPE_F32, 1, &len)) && len)
            memcpy(t->data, a.floats, (size_t)len * sizeof(float));
    } else if (strcmp(an, "value_ints") == 0 && a.type == NC_ATTR_INTS) {
        if ((t = nc_tensor_new(NC_DTYPE_I64, 1, &len)) && len)
            memcpy(t->data, a.ints, (size_t)len * sizeof(int64_t));
    } else {
        nc_attr_clear(&a);
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "%s: node '%s' (Constant, opset %lld): attribute '%s' is not supported "
                         "(numeric value, value_float(s) or value_int(s) only)",
                         im->src, name, (long long)im->g->opset, an);
    }
    nc_attr_clear(&a);
    if (!t)
        return node_error(im, name, "Constant", NC_ERR_NOMEM);
    int v = get_value(im, np->output[0]);
    if (v < 0) {
        nc_tensor_free(t);
        return NC_ERR_NOMEM;
    }
    nc_value *val = &im->g->values[v];
    if (val->constant || is_graph_input(im->g, v)) {
        nc_tensor_free(t);
        return nc_errorf(NC_ERR_MODEL, "%s: Constant node '%s' writes '%s', which is already defined",
                         im->src, name, val->name);
    }
    nc_graph_set_constant(im->g, v, t);
    return NC_OK;
}

static int is_default_domain(const char *d)
{
    return !d || !*d || strcmp(d, "ai.onnx") == 0;
}

/* Value indices for a node's input or output names ("" → -1). Trailing
 * omitted names are dropped, so counts compare with the op's limits. */
static nc_status map_names(importer *im, char **names, size_t n, int **idx, int *count)
{
    while (n > 0 && (!names[n - 1] || !*names[n - 1]))
        n--;
    if (n > 4096)
        return nc_errorf(NC_ERR_LIMIT, "%zu inputs or outputs", n);
    *count = (int)n;
    if (!(*idx = nc_malloc((n + 1) * sizeof **idx)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (!names[i] || !*names[i]) {
            (*idx)[i] = -1;
        } else if (((*idx)[i] = get_value(im, names[i])) < 0) {
            return NC_ERR_NOMEM;
        }
    }
    return NC_OK;
}

static nc_status add_node(importer *im, const Onnx__NodeProto *np, size_t index)
{
    const char *op = np->op_type ? np->op_type : "";
    char synth[96], ops[512];
    const char *name = np->name;
    if (!name || !*name) {
        snprintf(synth, sizeof synth, "%.60s_%zu", op, index);
        name = synth;
    }
    int foreign = !is_default_domain(np->domain);
    if (foreign && !im->describe_only)
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "%s: node '%s' (%s, domain '%s'): unsupported op; neuroc supports only the "
                         "default ONNX domain: %s",
                         im->src, name, op, np->domain, nc_op_supported_list(ops, sizeof ops));
    if (!foreign && strcmp(op, "Constant") == 0)
        return add_constant(im, np, name);
    const nc_op_def *def = foreign ? NULL : nc_op_lookup(op);
    if (!def && !im->describe_only)
        return nc_errorf(NC_ERR_UNSUPPORTED, "%s: node '%s' (%s, opset %lld): unsupported op; neuroc supports: %s",
                         im->src, name, op, (long long)im->g->opset, nc_op_supported_list(ops, sizeof ops));

    if (def && im->g->opset < NC_OPSET_MIN && im->g->opset < since_at_7(op))
        return nc_errorf(NC_ERR_UNSUPPORTED,
                         "%s: node '%s' (%s, opset %lld): %s changed at opset %d; neuroc supports "
                         "opsets %d to %d, and older models only where their ops are unchanged "
                         "(re-export with torch.onnx.export(..., opset_version=17))",
                         im->src, name, op, (long long)im->g->opset, op, since_at_7(op),
                         NC_OPSET_MIN, NC_OPSET_MAX);

    nc_node n = {0};
    nc_status st = NC_OK;
    n.def = def;
    n.opset = im->g->opset;
    if (!(n.name = nc_strdup(name)) || !(n.op_type = nc_strdup(op))) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    if ((st = map_names(im, np->input, np->n_input, &n.inputs, &n.n_inputs)) != NC_OK ||
        (st = map_names(im, np->output, np->n_output, &n.outputs, &n.n_outputs)) != NC_OK)
        goto fail;
    if (def && n.n_inputs > def->max_inputs) {
        st = nc_errorf(NC_ERR_UNSUPPORTED, "%d inputs given; neuroc's %s takes at most %d", n.n_inputs,
                       op, def->max_inputs);
        goto fail;
    }
    if (def && n.n_inputs < def->min_inputs) {
        st = nc_errorf(NC_ERR_MODEL, "%d inputs given; %s needs at least %d", n.n_inputs, op,
                       def->min_inputs);
        goto fail;
    }
    if (n.n_outputs < 1) {
        st = nc_errorf(NC_ERR_MODEL, "the node has no output");
        goto fail;
    }
    if (np->n_attribute > 4096) {
        st = nc_errorf(NC_ERR_LIMIT, "%zu attributes", np->n_attribute);
        goto fail;
    }
    if (np->n_attribute && !(n.attrs = nc_calloc(np->n_attribute, sizeof *n.attrs))) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < np->n_attribute; i++) {
        n.n_attrs++;
        if ((st = copy_attr(im, np->attribute[i], &n.attrs[i])) != NC_OK)
            goto fail;
    }
    nc_node *slot = nc_graph_add_node(im->g);
    if (!slot) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto fail;
    }
    *slot = n;
    return NC_OK;
fail:
    nc_node_clear(&n);
    return node_error(im, name, op, st);
}

/* Outputs beyond what an implementation produces (Dropout's mask, MaxPool's
 * indices, BatchNormalization's training statistics) are fine while nothing
 * reads them; they are then dropped. */
static nc_status check_extra_outputs(importer *im)
{
    nc_graph *g = im->g;
    char *used = nc_calloc((size_t)g->n_values + 1, 1);
    if (!used)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < g->n_nodes; i++)
        for (int j = 0; j < g->nodes[i].n_inputs; j++)
            if (g->nodes[i].inputs[j] >= 0)
                used[g->nodes[i].inputs[j]] = 1;
    for (int i = 0; i < g->n_outputs; i++)
        used[g->outputs[i]] = 1;
    nc_status st = NC_OK;
    for (int i = 0; i < g->n_nodes && st == NC_OK; i++) {
        nc_node *n = &g->nodes[i];
        if (!n->def) /* an unsupported node kept for description: its outputs stay */
            continue;
        int produced = strcmp(n->op_type, "Dropout") == 0 ? 1 : n->def->max_outputs;
        for (int o = produced; o < n->n_outputs && st == NC_OK; o++) {
            int v = n->outputs[o];
            if (v >= 0 && used[v])
                st = nc_errorf(NC_ERR_UNSUPPORTED,
                               "%s: node '%s' (%s, opset %lld): output %d ('%s') is used, but neuroc "
                               "computes only the first %d output(s) of %s",
                               g->source, n->name, n->op_type, (long long)n->opset, o,
                               g->values[v].name, produced, n->op_type);
        }
        if (n->n_outputs > produced)
            n->n_outputs = produced;
    }
    nc_free(used);
    return st;
}

/* ------------------------------------------------------------ model */

static nc_status find_opset(const importer *im, const Onnx__ModelProto *mp, int64_t *opset)
{
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
        if (!is_default_domain(os->domain))
            continue;
        *opset = os->has_version ? os->version : 1;
        if (*opset < 1 || *opset > NC_OPSET_MAX) /* < 7: checked per node */
            return nc_errorf(NC_ERR_UNSUPPORTED,
                             "%s: the model uses opset %lld of the default ONNX domain; neuroc "
                             "supports opsets %d to %d (re-export with torch.onnx.export(..., "
                             "opset_version=17))",
                             im->src, (long long)*opset, NC_OPSET_MIN, NC_OPSET_MAX);
        return NC_OK;
    }
    return nc_errorf(NC_ERR_UNSUPPORTED, "%s: the model imports no opset of the default ONNX domain",
                     im->src);
}

/* Every name and string neuroc keeps or prints must be within the string
 * limit; checked in one pass before anything is copied. */
static nc_status check_str(const importer *im, const char *kind, const char *s, size_t len)
{
    if (!s)
        return NC_OK;
    nc_status st = nc_check_string_len(kind, len);
    if (st != NC_OK)
        nc_error_prefix("%s", im->src);
    return st;
}

static nc_status check_strings(const importer *im, const Onnx__GraphProto *gp)
{
    nc_status st = NC_OK;
#define CHECK(kind, str) \
    if ((st = check_str(im, kind, str, (str) ? strlen(str) : 0)) != NC_OK) \
        return st
    for (size_t i = 0; i < gp->n_initializer; i++)
        CHECK("an initializer name", gp->initializer[i]->name);
    for (size_t i = 0; i < gp->n_input; i++)
        CHECK("a graph input name", gp->input[i]->name);
    for (size_t i = 0; i < gp->n_output; i++)
        CHECK("a graph output name", gp->output[i]->name);
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        CHECK("a node name", np->name);
        CHECK("an op type", np->op_type);
        CHECK("a domain", np->domain);
        for (size_t j = 0; j < np->n_input; j++)
            CHECK("a node input name", np->input[j]);
        for (size_t j = 0; j < np->n_output; j++)
            CHECK("a node output name", np->output[j]);
        for (size_t j = 0; j < np->n_attribute; j++) {
            const Onnx__AttributeProto *ap = np->attribute[j];
            CHECK("an attribute name", ap->name);
            if ((st = check_str(im, "a string attribute", "", ap->s.len)) != NC_OK)
                return st;
            if (ap->t)
                CHECK("a tensor name", ap->t->name);
        }
    }
#undef CHECK
    return NC_OK;
}

static nc_status build_graph(importer *im, const Onnx__ModelProto *mp)
{
    if (!mp->has_ir_version || !mp->graph)
        return nc_errorf(NC_ERR_PARSE, "%s: not an ONNX model (no ir_version or no graph)", im->src);
    if (mp->ir_version > NC_IR_VERSION_MAX)
        nc_log(NC_LOG_WARN, "%s: ONNX IR version %lld is newer than any neuroc knows (up to %d): read as "
               "IR %d, so what the newer version added is not understood", im->src, (long long)mp->ir_version,
               NC_IR_VERSION_MAX, NC_IR_VERSION_MAX);
    const Onnx__GraphProto *gp = mp->graph;
    nc_status st = check_strings(im, gp);
    if (st != NC_OK)
        return st;
    st = find_opset(im, mp, &im->g->opset);
    if (st != NC_OK)
        return st;
    if ((st = add_initializers(im, gp)) != NC_OK || (st = add_inputs(im, gp)) != NC_OK)
        return st;
    for (size_t i = 0; i < gp->n_node; i++)
        if ((st = add_node(im, gp->node[i], i)) != NC_OK)
            return st;
    if ((st = add_outputs(im, gp)) != NC_OK)
        return st;
    return check_extra_outputs(im);
}

static nc_status freeze_inputs(importer *im, const nc_tensor *const *frozen, int n)
{
    nc_graph *g = im->g;
    if (n > g->n_inputs)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: %d inputs to freeze, but the model has %d", im->src, n,
                         g->n_inputs);
    int k = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        int v = g->inputs[i];
        const nc_tensor *t = i < n ? frozen[i] : NULL;
        if (!t) {
            g->inputs[k++] = v;
            continue;
        }
        const nc_value *val = &g->values[v];
        int ok = t->dtype == val->dtype && (val->ndim < 0 || val->ndim == t->ndim);
        for (int d = 0; ok && val->ndim > 0 && d < val->ndim; d++)
            ok = val->shape[d] < 0 || val->shape[d] == t->shape[d];
        if (!ok) {
            char b1[160], b2[160];
            return nc_errorf(NC_ERR_SHAPE, "%s: input '%s' is %s %s; the value to freeze is %s %s",
                             im->src, val->name, nc_dtype_name(val->dtype),
                             nc_shape_str(val->ndim < 0 ? 0 : val->ndim, val->shape, b1, sizeof b1),
                             nc_dtype_name(t->dtype), nc_shape_str(t->ndim, t->shape, b2, sizeof b2));
        }
        nc_tensor *c = nc_tensor_clone(t);
        if (!c)
            return NC_ERR_NOMEM;
        nc_graph_set_constant(g, v, c);
    }
    g->n_inputs = k;
    return NC_OK;
}

/* The weights and biases of the ops that carry them must be finite: a NaN
 * weight ran, converted and exported with exit 0. Other constants may hold
 * infinities on purpose (a Clip bound, an attention mask's -inf). */
static nc_status check_weights(const importer *im)
{
    static const char *const weighted[] = {"Conv", "ConvTranspose", "Gemm", "MatMul", "BatchNormalization"};
    const nc_graph *g = im->g;
    for (int i = 0; i < g->n_nodes; i++) {
        const nc_node *n = &g->nodes[i];
        int w = 0;
        for (size_t k = 0; k < sizeof weighted / sizeof weighted[0]; k++)
            w |= strcmp(n->op_type, weighted[k]) == 0;
        for (int j = 1; w && j < n->n_inputs; j++) {
            const nc_value *v = n->inputs[j] >= 0 ? &g->values[n->inputs[j]] : NULL;
            char what[400];
            snprintf(what, sizeof what, "%s: node '%.150s' (%s): tensor '%.150s'", im->src, n->name, n->op_type,
                     v ? v->name : "");
            nc_status st = v ? nc_check_finite(v->constant, what, 0) : NC_OK;
            if (st != NC_OK)
                return st;
        }
    }
    return NC_OK;
}

/* Takes `dir` (may be NULL) for external data; owns nothing else. */
static nc_status load(const void *data, size_t size, const char *src, const char *dir,
                      const nc_load_options *opt, const nc_tensor *const *frozen, int n_frozen,
                      nc_model **out)
{
    importer im = {0};
    im.src = src;
    im.tctx.data_dir = opt && opt->external_data_dir ? opt->external_data_dir : dir;
    im.tctx.max_elems = opt && opt->max_tensor_elems > 0 ? opt->max_tensor_elems : INT64_C(1) << 31;
    im.describe_only = opt && opt->describe_only;
    int64_t max_model = nc_limits_now().max_model_bytes;
    if ((uint64_t)size > (uint64_t)max_model)
        return nc_errorf(NC_ERR_LIMIT, "%s: %zu bytes exceed the model size limit of %lld bytes "
                         "(nc_limits.max_model_bytes)", src, size, (long long)max_model);
    im.tctx.max_model_bytes = max_model - (int64_t)size;
    nc_status st;
    Onnx__ModelProto *mp = nc_pb_unpack(&onnx__model_proto__descriptor, data, size, src,
                                        "an ONNX model", &st);
    if (!mp)
        return st;
    if (!(im.g = nc_graph_new(src))) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((st = build_graph(&im, mp)) != NC_OK || (st = check_weights(&im)) != NC_OK ||
        (st = freeze_inputs(&im, frozen, n_frozen)) != NC_OK)
        goto done;
    /* The proto is no longer needed: free it before folding allocates. */
    onnx__model_proto__free_unpacked(mp, &nc_onnx_pb_allocator);
    mp = NULL;
    nc_free(im.slots);
    im.slots = NULL;
    if ((st = nc_graph_prepare(im.g)) != NC_OK)
        goto done;
    st = nc_model_from_graph(im.g, out); /* owns the graph from here, even on failure */
    im.g = NULL;
done:
    if (mp)
        onnx__model_proto__free_unpacked(mp, &nc_onnx_pb_allocator);
    nc_free(im.slots);
    nc_graph_free(im.g);
    return st;
}

nc_status nc_onnx_load_frozen(const char *path, const nc_load_options *opt,
                              const nc_tensor *const *frozen, int n_frozen, nc_model **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_load_onnx: out is NULL");
    *out = NULL;
    if (!path)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_load_onnx: path is NULL");
    uint8_t *data;
    size_t size;
    nc_status st = nc_onnx_read_file(path, &data, &size);
    if (st != NC_OK)
        return st;
    char *dir = nc_strdup(path);
    if (!dir) {
        nc_free(data);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    char *slash = strrchr(dir, '/');
    if (slash == dir)
        dir[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(dir, "."); /* path is non-empty here: it was opened */
    st = load(data, size, path, dir, opt, frozen, n_frozen < 0 ? 0 : n_frozen, out);
    nc_free(dir);
    nc_free(data);
    return st;
}

nc_status nc_model_load_onnx_memory(const void *data, size_t size, const char *name,
                                    const nc_load_options *opt, nc_model **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_load_onnx_memory: out is NULL");
    *out = NULL;
    if (!data && size)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_model_load_onnx_memory: data is NULL");
    return load(data ? data : "", size, name ? name : "<memory>", NULL, opt, NULL, 0, out);
}

nc_status nc_model_load_onnx(const char *path, const nc_load_options *opt, nc_model **out)
{
    return nc_onnx_load_frozen(path, opt, NULL, 0, out);
}
