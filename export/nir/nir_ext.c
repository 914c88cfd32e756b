/* neuroc extension nodes: a layer NIR cannot express (nc_snn_layer_nir_expressible:
 * a kind whose `nir` trait is 0 in snn/ir/layer_kinds.c, MaxPool2d, Concat,
 * ..., or an average pool with per-window divisors) is written as a
 * node of type "neuroc.<kind name>" inside the NIR graph, so the graph keeps
 * its edges through it, and holds the layer's fields generically, read back
 * bit for bit from the same list. A new kind with nir 0 round-trips without
 * code here.
 *
 * Why in the graph and not only in /neuroc with a placeholder: nir.read
 * 1.0.x refuses any node type it does not know (and an empty subgraph
 * placeholder fails its type inference), so no placeholder keeps such a
 * file readable by other tools; a namespaced node at least says what the
 * layer is and where it sits. Files for other tools use strict mode.
 *
 * Datasets of an extension node group:
 *   type      "neuroc.<kind>"        shape     int64 [ndim] (the layer's output)
 *   kernel, stride, padding, dilation int64 [2]     groups  int64
 *   scale     float32 scalar         reset int64 (nc_reset_mode)   dt float64
 *   weight, bias, threshold, v_init, spike_value, tau, r, v_leak, tau_syn,
 *   w_in, v_reset  float32, each only when the layer has it
 *   max_spikes     int64 scalar, a SignedIF's bursts, only when > 1
 *   two_sided      int64 (1), a SignedIF whose net count may go below zero, only when set
 *   function  string (nc_nonlinear_fn_name), alpha, beta, eps float32
 *             scalars, axis, trans_x, trans_y int64: a Nonlinear layer's
 *             function (nc_nonlinear_params), only for one, all of them
 *   spike_gt, exact  int64 (1), only when set
 *   index     int64 [size], a Gather's index map (-1: a zero), only for one
 *   div_taps  int64 (1)   div_pad int64 [2]   only for a Pool2d with
 *             per-window divisors (snn_ir.h), which a SumPool2d cannot hold
 * The reader needs every field but those last ones and `shape`, reads them
 * when present: `shape` says whether a pool has a ceil-mode partial window
 * (nc_snn_pool_pad_end), which the reader's checks (nir_finish_layer) allow.
 * The layer's name, inputs and order are in /neuroc/layers/<i> as for every
 * layer; a file without that group cannot be read (the node is named). */
#include <stdio.h>
#include <string.h>

#include "nir_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"

static const char *const PAIRS[] = {"kernel", "stride", "padding", "dilation"};
static const char *const TENSORS[] = {"weight", "bias", "threshold", "v_init", "spike_value",
                                      "tau", "r", "v_leak", "tau_syn", "w_in", "v_reset"};
enum { N_PAIRS = 4, N_TENSORS = 11 };

static int64_t *pair_of(nc_snn_layer *L, int k)
{
    int64_t *p[N_PAIRS] = {L->kernel, L->stride, L->padding, L->dilation};
    return p[k];
}

static nc_tensor **tensor_of(nc_snn_layer *L, int k)
{
    nc_tensor **p[N_TENSORS] = {&L->weight, &L->bias, &L->threshold, &L->v_init, &L->spike_value,
                                &L->tau, &L->r, &L->v_leak, &L->tau_syn, &L->w_in, &L->v_reset};
    return p[k];
}

int nir_ext_type(const char *type)
{
    return strncmp(type, NC_NIR_EXT_PREFIX, sizeof NC_NIR_EXT_PREFIX - 1) == 0;
}

nc_status nir_ext_node(hid_t f, const char *nodes, const char *node, int *ext)
{
    char loc[600];
    *ext = 0;
    /* a missing node, or one without a type, is reported where it is read */
    if (snprintf(loc, sizeof loc, "%s/%s", nodes, node) >= (int)sizeof loc || !nc_h5_is_group(f, loc))
        return NC_OK;
    hid_t g = H5Gopen2(f, loc, H5P_DEFAULT);
    if (g < 0)
        return NC_OK;
    char *type = NULL;
    nc_status st = nc_h5_exists(g, "type") ? nc_h5_read_string(g, "type", &type) : NC_OK;
    *ext = type && nir_ext_type(type);
    nc_free(type);
    H5Gclose(g);
    return st;
}

/* A Nonlinear layer's function (head comment): by name, so that the
 * file does not depend on the enum's numbering. */
static nc_status write_nonlinear(hid_t g, const nc_nonlinear_params *p)
{
    const float fs[3] = {p->alpha, p->beta, p->eps};
    const char *fnames[3] = {"alpha", "beta", "eps"};
    nc_status st = nc_h5_write_string(g, "function", nc_nonlinear_fn_name(p->fn));
    for (int k = 0; st == NC_OK && k < 3; k++)
        st = nc_h5_write_f32(g, fnames[k], 0, NULL, &fs[k]);
    if (st == NC_OK)
        st = nc_h5_write_i64_scalar(g, "axis", p->axis);
    if (st == NC_OK)
        st = nc_h5_write_i64_scalar(g, "trans_x", p->trans_x);
    if (st == NC_OK)
        st = nc_h5_write_i64_scalar(g, "trans_y", p->trans_y);
    return st;
}

nc_status nir_ext_write(const nc_snn_layer *L, hid_t g)
{
    const int64_t *pairs[N_PAIRS] = {L->kernel, L->stride, L->padding, L->dilation};
    const nc_tensor *tensors[N_TENSORS] = {L->weight, L->bias, L->threshold, L->v_init, L->spike_value,
                                           L->tau, L->r, L->v_leak, L->tau_syn, L->w_in, L->v_reset};
    char type[96];
    snprintf(type, sizeof type, NC_NIR_EXT_PREFIX "%s", nc_snn_kind_name(L->kind));
    int64_t nd = L->ndim, two = 2;
    nc_status st = nc_h5_write_string(g, "type", type);
    if (st == NC_OK)
        st = nc_h5_write_i64(g, "shape", 1, &nd, L->shape);
    for (int k = 0; st == NC_OK && k < N_PAIRS; k++)
        st = nc_h5_write_i64(g, PAIRS[k], 1, &two, pairs[k]);
    if (st == NC_OK)
        st = nc_h5_write_i64_scalar(g, "groups", L->groups);
    if (st == NC_OK)
        st = nc_h5_write_f32(g, "scale", 0, NULL, &L->scale);
    if (st == NC_OK)
        st = nc_h5_write_i64_scalar(g, "reset", (int64_t)L->reset);
    if (st == NC_OK)
        st = nc_h5_write_f64_scalar(g, "dt", L->dt);
    for (int k = 0; st == NC_OK && k < N_TENSORS; k++) {
        const nc_tensor *t = tensors[k];
        if (t)
            st = nc_h5_write_f32(g, TENSORS[k], t->ndim, t->shape, nc_f32(t));
    }
    if (st == NC_OK && L->spike_gt)
        st = nc_h5_write_i64_scalar(g, "spike_gt", 1);
    if (st == NC_OK && L->exact)
        st = nc_h5_write_i64_scalar(g, "exact", 1);
    if (st == NC_OK && L->pretest_sub)
        st = nc_h5_write_i64_scalar(g, "pretest_sub", 1);
    if (st == NC_OK && L->max_spikes > 1)
        st = nc_h5_write_i64_scalar(g, "max_spikes", L->max_spikes);
    if (st == NC_OK && L->two_sided)
        st = nc_h5_write_i64_scalar(g, "two_sided", 1);
    if (st == NC_OK && L->kind == NC_SNN_NONLINEAR)
        st = write_nonlinear(g, &L->nl);
    if (st == NC_OK && L->index)
        st = nc_h5_write_i64(g, "index", 1, &L->index->numel, nc_i64(L->index));
    if (st == NC_OK && L->div_taps && (st = nc_h5_write_i64_scalar(g, "div_taps", L->div_taps)) == NC_OK)
        st = nc_h5_write_i64(g, "div_pad", 1, &two, L->div_pad);
    return st;
}

static nc_status need(hid_t g, const char *name)
{
    return nc_h5_exists(g, name) ? NC_OK : nc_errorf(NC_ERR_PARSE, "dataset '%s' is missing", name);
}

/* The optional integer fields: the output shape, a pool's divisors. Their
 * ranges are checked with the layer's geometry (nir_finish_layer). */
static nc_status read_optional(hid_t g, nc_snn_layer *L)
{
    nc_tensor *t = NULL;
    nc_status st = NC_OK;
    if (nc_h5_exists(g, "shape") && (st = nc_h5_read_i64(g, "shape", &t)) == NC_OK) {
        if (t->ndim != 1 || t->numel < 1 || t->numel > NC_MAX_DIMS)
            st = nc_errorf(NC_ERR_SHAPE, "'shape' must hold 1 to %d integers", NC_MAX_DIMS);
        else {
            L->ndim = (int)t->numel;
            memcpy(L->shape, nc_i64(t), (size_t)t->numel * sizeof(int64_t));
        }
        nc_tensor_free(t);
        t = NULL;
    }
    if (st == NC_OK && nc_h5_exists(g, "div_taps") && (st = nc_h5_read_i64(g, "div_taps", &t)) == NC_OK) {
        if (t->numel != 1 || (nc_i64(t)[0] != 0 && nc_i64(t)[0] != 1))
            st = nc_errorf(NC_ERR_MODEL, "'div_taps' must be 0 or 1");
        else
            L->div_taps = (int)nc_i64(t)[0];
        nc_tensor_free(t);
        t = NULL;
    }
    if (st == NC_OK && nc_h5_exists(g, "div_pad") && (st = nc_h5_read_i64(g, "div_pad", &t)) == NC_OK) {
        if (t->numel != 2)
            st = nc_errorf(NC_ERR_SHAPE, "'div_pad' has %lld values; expected 2", (long long)t->numel);
        else
            memcpy(L->div_pad, nc_i64(t), 2 * sizeof(int64_t));
        nc_tensor_free(t);
    }
    return st;
}

/* A Nonlinear layer's function (write_nonlinear); the values' ranges are
 * checked with the layer (nc_snn_check_nonlinear), the integers' here. */
static nc_status read_nonlinear(hid_t g, nc_snn_layer *L)
{
    char *name = NULL;
    nc_status st = need(g, "function");
    if (st == NC_OK && (st = nc_h5_read_string(g, "function", &name)) == NC_OK &&
        (L->nl.fn = (nc_nonlinear_fn)nc_nonlinear_fn_from_name(name)) == (nc_nonlinear_fn)-1)
        st = nc_errorf(NC_ERR_UNSUPPORTED, "unknown function '%.40s' (one of another neuroc version?)", name);
    nc_free(name);
    const char *fnames[3] = {"alpha", "beta", "eps"}, *inames[3] = {"axis", "trans_x", "trans_y"};
    float *fp[3] = {&L->nl.alpha, &L->nl.beta, &L->nl.eps};
    int *ip[3] = {&L->nl.axis, &L->nl.trans_x, &L->nl.trans_y};
    for (int k = 0; st == NC_OK && k < 6; k++) {
        double v = 0;
        if ((st = need(g, k < 3 ? fnames[k] : inames[k - 3])) != NC_OK ||
            (st = nc_h5_read_f64_scalar(g, k < 3 ? fnames[k] : inames[k - 3], &v)) != NC_OK)
            break;
        if (k < 3)
            *fp[k] = (float)v; /* stored as float32: exact */
        else if (v != (double)(int)v || v < (k == 3 ? -NC_MAX_DIMS : 0) || v > (k == 3 ? NC_MAX_DIMS : 1))
            st = nc_errorf(NC_ERR_MODEL, "'%s' is %g: %s", inames[k - 3], v,
                           k == 3 ? "an axis of the layer's shape" : "0 or 1");
        else
            *ip[k - 3] = (int)v;
    }
    return st;
}

static nc_status read_fields(hid_t g, nc_snn_layer *L)
{
    nc_status st = NC_OK;
    for (int k = 0; st == NC_OK && k < N_PAIRS; k++) {
        nc_tensor *t = NULL;
        if ((st = need(g, PAIRS[k])) != NC_OK || (st = nc_h5_read_i64(g, PAIRS[k], &t)) != NC_OK)
            break;
        if (t->numel != 2)
            st = nc_errorf(NC_ERR_SHAPE, "'%s' has %lld values; expected 2", PAIRS[k], (long long)t->numel);
        else
            memcpy(pair_of(L, k), nc_i64(t), 2 * sizeof(int64_t));
        nc_tensor_free(t);
    }
    const char *scalars[] = {"groups", "reset", "scale", "dt"};
    for (int k = 0; st == NC_OK && k < 4; k++) {
        nc_tensor *t = NULL;
        if ((st = need(g, scalars[k])) != NC_OK)
            break;
        if (k < 2)
            st = nc_h5_read_i64(g, scalars[k], &t);
        else if (k == 2)
            st = nc_h5_read_f32(g, scalars[k], &t);
        else
            st = nc_h5_read_f64_scalar(g, scalars[k], &L->dt);
        if (st == NC_OK && t && t->numel != 1)
            st = nc_errorf(NC_ERR_SHAPE, "'%s' must be a scalar", scalars[k]);
        if (st == NC_OK && k == 0)
            L->groups = nc_i64(t)[0];
        if (st == NC_OK && k == 1) {
            int64_t r = nc_i64(t)[0];
            if (r != NC_RESET_DEFAULT && r != NC_RESET_SUBTRACT && r != NC_RESET_ZERO)
                st = nc_errorf(NC_ERR_MODEL, "unknown reset mode %lld", (long long)r);
            else
                L->reset = (nc_reset_mode)r;
        }
        if (st == NC_OK && k == 2)
            L->scale = nc_f32(t)[0];
        nc_tensor_free(t);
    }
    if (st == NC_OK)
        st = read_optional(g, L);
    const char *flags[4] = {"spike_gt", "exact", "pretest_sub", "two_sided"};
    int *fp[4] = {&L->spike_gt, &L->exact, &L->pretest_sub, &L->two_sided};
    for (int k = 0; st == NC_OK && k < 4; k++) {
        double v = 0;
        if (nc_h5_exists(g, flags[k]) && (st = nc_h5_read_f64_scalar(g, flags[k], &v)) == NC_OK)
            *fp[k] = v != 0;
    }
    double burst = 0; /* its range is checked with the layer (nir_finish_layer) */
    if (st == NC_OK && nc_h5_exists(g, "max_spikes") && (st = nc_h5_read_f64_scalar(g, "max_spikes", &burst)) == NC_OK)
        L->max_spikes = burst >= 2 && burst <= NC_MAX_BURST && burst == (double)(int)burst ? (int)burst : -1;
    for (int k = 0; st == NC_OK && k < N_TENSORS; k++)
        if (nc_h5_exists(g, TENSORS[k])) {
            nc_tensor **dst = tensor_of(L, k);
            nc_tensor_free(*dst);
            *dst = NULL;
            st = nc_h5_read_f32(g, TENSORS[k], dst);
        }
    if (st == NC_OK && L->kind == NC_SNN_NONLINEAR)
        st = read_nonlinear(g, L);
    if (st == NC_OK && L->kind == NC_SNN_GATHER && (st = need(g, "index")) == NC_OK) /* checked with the layer */
        st = nc_h5_read_i64(g, "index", &L->index);
    return st;
}

nc_status nir_ext_read(hid_t f, const char *nodes, const char *node, nc_snn_layer *L)
{
    char want[96];
    snprintf(want, sizeof want, NC_NIR_EXT_PREFIX "%s", nc_snn_kind_name(L->kind));
    hid_t gnodes = nc_h5_is_group(f, nodes) ? H5Gopen2(f, nodes, H5P_DEFAULT) : H5I_INVALID_HID;
    if (gnodes < 0)
        return nc_errorf(NC_ERR_PARSE, "no '/%s' group", nodes);
    nc_status st = NC_OK;
    hid_t g = nc_h5_is_group(gnodes, node) ? H5Gopen2(gnodes, node, H5P_DEFAULT) : H5I_INVALID_HID;
    char *type = NULL;
    if (g < 0)
        st = nc_errorf(NC_ERR_PARSE, "extension node '%s' is missing", node);
    else if ((st = need(g, "type")) == NC_OK && (st = nc_h5_read_string(g, "type", &type)) == NC_OK &&
             strcmp(type, want) != 0)
        st = nc_errorf(NC_ERR_MODEL, "node '%s' is a '%s'; a %s layer needs a '%s' node", node, type,
                       nc_snn_kind_name(L->kind), want);
    if (st == NC_OK && (st = read_fields(g, L)) != NC_OK)
        nc_error_prefix("extension node '%s' (%s)", node, want);
    nc_free(type);
    if (g >= 0)
        H5Gclose(g);
    H5Gclose(gnodes);
    return st;
}
