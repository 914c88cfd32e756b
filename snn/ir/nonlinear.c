/* The Nonlinear layer's functions (nc_nonlinear_fn): names, inputs and the
 * shape rules its validation applies (snn_validate.c). The per-step math
 * is kernels/nonlinear.h. */
#include <math.h>
#include <string.h>

#include "snn/base/error.h"
#include "snn_ir.h"

static const char *const g_fn_names[NC_NL_COUNT] = {
    [NC_NL_SIGMOID] = "Sigmoid",         [NC_NL_SILU] = "SiLU",         [NC_NL_TANH] = "Tanh",
    [NC_NL_HARDSIGMOID] = "HardSigmoid", [NC_NL_HARDSWISH] = "HardSwish", [NC_NL_GELU] = "GELU",
    [NC_NL_GELU_TANH] = "GELUTanh",      [NC_NL_MUL] = "Mul",           [NC_NL_LAYERNORM] = "LayerNorm",
    [NC_NL_SOFTMAX] = "Softmax",         [NC_NL_MATMUL] = "MatMul",
};

const char *nc_nonlinear_fn_name(nc_nonlinear_fn fn)
{
    return (int)fn >= 0 && fn < NC_NL_COUNT ? g_fn_names[fn] : "unknown";
}

int nc_nonlinear_fn_from_name(const char *name)
{
    for (int f = 0; name && f < NC_NL_COUNT; f++)
        if (strcmp(g_fn_names[f], name) == 0)
            return f;
    return -1;
}

int nc_nonlinear_fn_inputs(nc_nonlinear_fn fn) { return fn == NC_NL_MUL || fn == NC_NL_MATMUL ? 2 : 1; }

int nc_nonlinear_fn_is_elementwise(nc_nonlinear_fn fn) { return (int)fn >= 0 && fn <= NC_NL_GELU_TANH; }

/* x ⊙ y: y right-aligned against x, each of its dimensions x's or 1. */
static nc_status check_mul(const nc_snn_layer *L, const nc_snn_layer *X, const nc_snn_layer *Y)
{
    int ok = Y->ndim <= X->ndim;
    for (int d = 0; ok && d < Y->ndim; d++) {
        int64_t yd = Y->shape[Y->ndim - 1 - d], xd = X->shape[X->ndim - 1 - d];
        ok = yd == xd || yd == 1;
    }
    if (!ok)
        return nc_errorf(NC_ERR_SHAPE, "Nonlinear '%s' (Mul): '%s' does not broadcast over '%s' (each of its "
                         "dimensions, aligned at the end, must be 1 or the other's)", L->name, Y->name, X->name);
    return NC_OK;
}

void nc_nl_matmul_dims(const nc_snn_layer *L, const nc_snn_layer *X, const nc_snn_layer *Y, int64_t *m, int64_t *k,
                       int64_t *n)
{
    int r = X->ndim;
    *m = X->shape[r - 2 + !!L->nl.trans_x];
    *k = X->shape[r - 1 - !!L->nl.trans_x];
    *n = Y->shape[r - 1 - !!L->nl.trans_y];
}

static nc_status check_matmul(nc_snn_layer *L, const nc_snn_layer *X, const nc_snn_layer *Y)
{
    int r = X->ndim, ok = r >= 2 && Y->ndim == r;
    for (int d = 0; ok && d < r - 2; d++)
        ok = X->shape[d] == Y->shape[d];
    int64_t m, k, n;
    if (ok) {
        nc_nl_matmul_dims(L, X, Y, &m, &k, &n);
        ok = Y->shape[r - 2 + !!L->nl.trans_y] == k;
    }
    if (!ok)
        return nc_errorf(NC_ERR_SHAPE, "Nonlinear '%s' (MatMul): '%s'%s and '%s'%s must be (…, m, k) and (…, k, n) "
                         "with the same leading dimensions", L->name, X->name, L->nl.trans_x ? " transposed" : "",
                         Y->name, L->nl.trans_y ? " transposed" : "");
    L->shape[r - 2] = m;
    L->shape[r - 1] = n;
    return NC_OK;
}

nc_status nc_snn_check_nonlinear(const nc_snn *s, nc_snn_layer *L)
{
    nc_nonlinear_params *p = &L->nl;
    if ((int)p->fn < 0 || p->fn >= NC_NL_COUNT)
        return nc_errorf(NC_ERR_MODEL, "Nonlinear '%s': unknown function %d", L->name, (int)p->fn);
    int want = nc_nonlinear_fn_inputs(p->fn);
    if (L->n_inputs != want)
        return nc_errorf(NC_ERR_MODEL, "Nonlinear '%s': %s reads %d input%s, it has %d", L->name,
                         nc_nonlinear_fn_name(p->fn), want, want > 1 ? "s" : "", L->n_inputs);
    const nc_snn_layer *X = &s->layers[L->inputs[0]];
    L->ndim = X->ndim;
    memcpy(L->shape, X->shape, sizeof L->shape);
    if (p->fn != NC_NL_MATMUL && (p->trans_x || p->trans_y))
        return nc_errorf(NC_ERR_MODEL, "Nonlinear '%s': transposed inputs belong to a MatMul", L->name);
    if (!isfinite(p->alpha) || !isfinite(p->beta))
        return nc_errorf(NC_ERR_MODEL, "Nonlinear '%s': alpha and beta must be finite", L->name);
    switch (p->fn) {
    case NC_NL_MUL: return check_mul(L, X, &s->layers[L->inputs[1]]);
    case NC_NL_MATMUL: return check_matmul(L, X, &s->layers[L->inputs[1]]);
    case NC_NL_LAYERNORM:
    case NC_NL_SOFTMAX:
        if (p->fn == NC_NL_LAYERNORM && (!(p->eps > 0.0f) || !isfinite(p->eps)))
            return nc_errorf(NC_ERR_MODEL, "Nonlinear '%s' (LayerNorm): eps must be positive", L->name);
        if (p->axis < 0)
            p->axis += X->ndim;
        if (p->axis < 0 || p->axis >= X->ndim)
            return nc_errorf(NC_ERR_MODEL, "Nonlinear '%s' (%s): axis out of the %d of '%s'", L->name,
                             nc_nonlinear_fn_name(p->fn), X->ndim, X->name);
        return NC_OK;
    default: return NC_OK;
    }
}
