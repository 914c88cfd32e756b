/* The data side of `neuroc run`, shared by its two halves, the ANN's
 * (cmd_run.c) and the spiking network's (run_info_nir.c): the input samples in
 * the model's dtype and shape, the labels, the accuracy. A file of its own
 * so that neither half calls into the other's file for them. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <string.h>

#include "cli.h"

/* uint8 → [0,1] floats unless raw; other data is converted as is. */
static int load_scaled(const run_args *a, const nc_value_info *in, nc_tensor **out)
{
    nc_tensor *raw = NULL;
    nc_status st = nc_data_load(a->input, in->dtype == NC_DTYPE_F32 ? 0 : in->dtype, &raw);
    if (st != NC_OK)
        return cli_fail(st);
    if (in->dtype != NC_DTYPE_F32) {
        *out = raw;
        return CLI_OK;
    }
    st = cli_to_f32(raw, a->raw_input, out);
    return st == NC_OK ? CLI_OK : cli_fail(st);
}

/* Then --mean/--std (data_opts.c), for float models. */
int cli_load_input(const run_args *a, const nc_value_info *in, nc_tensor **out)
{
    int rc = load_scaled(a, in, out);
    if (rc != CLI_OK || in->dtype != NC_DTYPE_F32)
        return rc;
    data_opts d = {.no_scale = a->raw_input, .mean = a->mean, .std = a->std};
    if ((rc = cli_normalize("run", &d, in, *out)) != CLI_OK) {
        nc_tensor_free(*out);
        *out = NULL;
    }
    return rc;
}

/* Views the data as n samples of the model's per-sample shape. */
int cli_fit_samples(const run_args *a, const nc_value_info *in, nc_tensor *t, samples *s)
{
    char ds[200], ms[200];
    int nd = nc_tensor_ndim(t);
    const int64_t *dshape = nc_tensor_shape(t);
    cli_shape(nd, dshape, ds, sizeof ds);
    cli_shape(in->ndim, in->shape, ms, sizeof ms);
    if (in->ndim < 1)
        return cli_failf(NC_ERR_UNSUPPORTED, "model input '%s' is a scalar; run feeds batches of "
                                             "samples", in->name);
    s->t = t;
    s->sample_ndim = in->ndim - 1;
    int symbolic = 0;
    s->per = 1;
    for (int i = 1; i < in->ndim; i++) {
        s->sample[i - 1] = in->shape[i];
        if (in->shape[i] < 0)
            symbolic = 1;
        else
            s->per *= in->shape[i];
    }
    int64_t numel = nc_tensor_numel(t);
    int64_t per_data = 1;
    for (int i = 1; i < nd; i++)
        per_data *= dshape[i]; /* cannot overflow: the product of all dims fits */
    if (symbolic) {
        /* Only the file can say what the free dimensions are. */
        int ok = nd == in->ndim;
        for (int i = 1; ok && i < nd; i++)
            ok = in->shape[i] < 0 || in->shape[i] == dshape[i];
        if (!ok)
            return cli_failf(NC_ERR_SHAPE, "input %s has shape %s but model input '%s' is %s",
                             a->input, ds, in->name, ms);
        memcpy(s->sample, dshape + 1, (size_t)(nd - 1) * sizeof *dshape);
        s->per = per_data;
        s->n = dshape[0];
    } else if (nd >= 1 && per_data == s->per) {
        s->n = dshape[0];
    } else if (numel == s->per) {
        s->n = 1; /* a single sample without a batch dimension */
    } else {
        return cli_failf(NC_ERR_SHAPE,
                         "input %s has shape %s (%lld values per sample) but model input '%s' is "
                         "%s (%lld values per sample)",
                         a->input, ds, (long long)(nd ? per_data : numel), in->name, ms,
                         (long long)s->per);
    }
    if (s->n == 0)
        return cli_failf(NC_ERR_SHAPE, "input %s has shape %s: no samples", a->input, ds);
    return CLI_OK;
}

int cli_check_labels(const run_args *a, int64_t n, int64_t classes, nc_tensor **out)
{
    return cli_load_labels(a->labels, n, a->input, classes, out);
}

int cli_accuracy(const nc_tensor *y, const nc_tensor *labels, const char *labels_path)
{
    char ys[200];
    int nd = nc_tensor_ndim(y);
    int64_t n = nc_tensor_numel(labels);
    int64_t classes = nd ? nc_tensor_shape(y)[nd - 1] : 0;
    if (nc_tensor_dtype(y) != NC_DTYPE_F32 || classes < 1 || nc_tensor_numel(y) != n * classes)
        return cli_failf(NC_ERR_SHAPE, "output 0 (%s %s) is not one row of class scores per label",
                         cli_dtype_name(nc_tensor_dtype(y)),
                         cli_shape(nd, nc_tensor_shape(y), ys, sizeof ys));
    const float *v = nc_tensor_data_const(y);
    const int64_t *l = nc_tensor_data_const(labels);
    int rc = cli_check_label_range(labels, classes, labels_path); /* a symbolic output: known only now */
    if (rc != CLI_OK)
        return rc;
    int64_t correct = 0;
    for (int64_t i = 0; i < n; i++) {
        const float *r = v + i * classes;
        int64_t best = 0;
        for (int64_t j = 1; j < classes; j++)
            if (r[j] > r[best])
                best = j;
        correct += best == l[i];
    }
    printf("accuracy: %.4f (%lld/%lld)\n", (double)correct / (double)n, (long long)correct,
           (long long)n);
    return CLI_OK;
}
