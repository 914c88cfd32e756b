/* NIR's Delay node (y_i(t) = x_i(t − delay_i)), whose delay may differ from
 * neuron to neuron. neuroc's Delay layer delays a whole layer by one number
 * of steps, so a node of k different delays becomes, reading the same
 * input, k Delay layers (one per delay) each followed by a Scale of 1 for
 * the neurons of that delay and 0 for the others, summed by an Add named
 * after the node: x·1 + 0 + ... is x exactly, for finite x. The NIR writer
 * writes them back as k Delay and Scale nodes summed by edges, which is
 * the same computation in plain NIR. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nir_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"

static const nc_tensor *delays_of(const nnode *nd)
{
    for (int k = 0; nd->spec && k < MAXF && nd->spec->f[k]; k++)
        if (strcmp(nd->spec->f[k], "delay") == 0)
            return nd->f[k];
    return NULL;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

nc_status nir_delay_steps(const nnode *nd, double dt, int64_t **steps, int64_t *n_steps)
{
    *steps = NULL;
    *n_steps = 0;
    const nc_tensor *d = delays_of(nd);
    int64_t n = d && d->numel > 0 ? d->numel : 1;
    int64_t *s = nc_malloc((size_t)n * sizeof *s);
    if (!s)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t k = 0; k < n; k++) {
        double v = d && d->numel > 0 ? nc_f32(d)[k] : 0.0, q = nearbyint(v / dt);
        if (!(v >= 0) || fabs(q * dt - v) > 1e-6 * (v > dt ? v : dt) || q > 1e6) {
            nc_free(s);
            return nc_errorf(NC_ERR_UNSUPPORTED,
                             "Delay of %g s is not a whole number of steps of dt = %g s (at "
                             "most 1e6; neuroc delays by whole steps: choose dt with --dt)",
                             v, dt);
        }
        s[k] = (int64_t)q;
    }
    qsort(s, (size_t)n, sizeof *s, cmp_i64);
    int64_t m = 0;
    for (int64_t k = 0; k < n; k++)
        if (m == 0 || s[k] != s[m - 1])
            s[m++] = s[k];
    if (m > NC_NIR_MAX_DELAYS) {
        nc_free(s);
        return nc_errorf(NC_ERR_LIMIT, "Delay with %lld different delays (at most %d: a layer each)", (long long)m,
                         NC_NIR_MAX_DELAYS);
    }
    *steps = s;
    *n_steps = m;
    return NC_OK;
}

int64_t nir_delay_count(const nnode *nd, double dt)
{
    int64_t *s = NULL, m = 0;
    if (nir_delay_steps(nd, dt, &s, &m) != NC_OK) {
        nc_error_clear(); /* said again where the node becomes a layer */
        return 1;
    }
    nc_free(s);
    return m;
}

nc_status nir_delay_layers(nc_snn *s, const nnode *nd, double dt, int from, int total)
{
    int64_t *steps = NULL, m = 0;
    nc_status st = nir_delay_steps(nd, dt, &steps, &m);
    const nc_tensor *d = delays_of(nd);
    const nc_snn_layer *X = &s->layers[from];
    int64_t size = nc_snn_layer_size(X);
    if (st == NC_OK && (!d || d->numel != size))
        st = nc_errorf(NC_ERR_SHAPE, "Delay: %lld delays for the %lld values of '%s'", (long long)(d ? d->numel : 0),
                       (long long)size, X->name);
    int *masks = st == NC_OK ? nc_malloc((size_t)m * sizeof *masks) : NULL;
    if (st == NC_OK && !masks)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int64_t j = 0; st == NC_OK && j < m; j++) {
        char name[600];
        snprintf(name, sizeof name, "%.500s.d%lld", nd->name, (long long)steps[j]);
        nc_snn_layer *L = nc_snn_append_unique(s, NC_SNN_DELAY, name, 1);
        if (!L) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
            break;
        }
        L->inputs[0] = from;
        L->kernel[0] = steps[j];
        L->dt = dt;
        if ((st = nir_finish_layer(s, s->n_layers - 1, total)) != NC_OK)
            break;
        snprintf(name, sizeof name, "%.500s.mask%lld", nd->name, (long long)steps[j]);
        nc_snn_layer *M = nc_snn_append_unique(s, NC_SNN_SCALE, name, 1);
        if (!M) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
            break;
        }
        M->inputs[0] = s->n_layers - 2;
        X = &s->layers[from];
        if (!(M->weight = nc_tensor_new(NC_DTYPE_F32, X->ndim, X->shape))) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
            break;
        }
        for (int64_t k = 0; k < size; k++) /* the neuron's delay is steps[j] (whole steps, checked above) */
            nc_f32(M->weight)[k] = nearbyint(nc_f32(d)[k] / dt) == (double)steps[j] ? 1.0f : 0.0f;
        if ((st = nir_finish_layer(s, s->n_layers - 1, total)) != NC_OK)
            break;
        masks[j] = s->n_layers - 1;
    }
    nc_snn_layer *A = st == NC_OK ? nc_snn_append_unique(s, NC_SNN_ADD, nd->name, (int)m) : NULL;
    if (st == NC_OK && !A)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (st == NC_OK) {
        memcpy(A->inputs, masks, (size_t)m * sizeof *masks);
        st = nir_finish_layer(s, s->n_layers - 1, total);
    }
    nc_free(masks);
    nc_free(steps);
    return st;
}
