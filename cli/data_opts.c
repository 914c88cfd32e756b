/* Data options shared by convert, eval and run: scaling of uint8 images,
 * per-channel normalisation, labels, the first N samples, and atomic text
 * output for reports. */
#define _XOPEN_SOURCE 700

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define MAX_CHANNELS 4096

/* "0.5,0.25" → values; returns the count, or -1 on bad text. */
static int parse_list(const char *s, double *v, int max)
{
    int n = 0;
    const char *p = s;
    for (;;) {
        char *end;
        errno = 0;
        double x = strtod(p, &end);
        if (end == p || errno || !isfinite(x) || n >= max)
            return -1;
        v[n++] = x;
        if (*end == '\0')
            return n;
        if (*end != ',')
            return -1;
        p = end + 1;
    }
}

int cli_data_opts_check(const char *cmd, const data_opts *d)
{
    double v[MAX_CHANNELS];
    int nm = 0, ns = 0;
    if (d->mean && (nm = parse_list(d->mean, v, MAX_CHANNELS)) < 0)
        return cli_usage_error(cmd, "--mean must be numbers separated by commas, not '%s'", d->mean);
    if (d->std) {
        if ((ns = parse_list(d->std, v, MAX_CHANNELS)) < 0)
            return cli_usage_error(cmd, "--std must be numbers separated by commas, not '%s'", d->std);
        for (int i = 0; i < ns; i++)
            if (!(v[i] > 0))
                return cli_usage_error(cmd, "--std values must be positive, not '%s'", d->std);
    }
    if (d->mean && d->std && nm != ns && nm != 1 && ns != 1)
        return cli_usage_error(cmd, "--mean has %d values and --std %d; give one value or one per "
                                    "channel for each", nm, ns);
    return CLI_OK;
}

/* Channels of the model input (its dimension 1), 1 for a rank-1 input. */
static int64_t model_channels(const nc_value_info *in)
{
    return in->ndim >= 2 && in->shape[1] > 0 ? in->shape[1] : 1;
}

int cli_normalize(const char *cmd, const data_opts *d, const nc_value_info *in, nc_tensor *t)
{
    if (!d->mean && !d->std)
        return CLI_OK;
    double mean[MAX_CHANNELS], stdv[MAX_CHANNELS];
    int nm = d->mean ? parse_list(d->mean, mean, MAX_CHANNELS) : 1;
    int ns = d->std ? parse_list(d->std, stdv, MAX_CHANNELS) : 1;
    if (!d->mean)
        mean[0] = 0.0;
    if (!d->std)
        stdv[0] = 1.0;
    if (nm < 1 || ns < 1)
        return cli_data_opts_check(cmd, d);
    int64_t C = model_channels(in), numel = nc_tensor_numel(t);
    if ((nm != 1 && nm != C) || (ns != 1 && ns != C))
        return cli_usage_error(cmd, "--mean/--std give %d/%d values but the model input '%s' has %lld "
                                    "channel(s) (its dimension 1)", nm, ns, in->name, (long long)C);
    /* A row is one sample of the model input; its channels are consecutive blocks. */
    int64_t per = 1;
    int known = 1;
    for (int i = 1; i < in->ndim; i++) {
        if (in->shape[i] < 0)
            known = 0;
        else
            per *= in->shape[i];
    }
    if (!known || in->ndim < 1)
        per = nc_tensor_ndim(t) >= 1 && nc_tensor_shape(t)[0] > 0 ? numel / nc_tensor_shape(t)[0] : numel;
    if (per < 1 || per % C || numel % per)
        return cli_failf(NC_ERR_SHAPE, "the data (%lld values) is not made of samples of %lld values in "
                                       "%lld channels", (long long)numel, (long long)per, (long long)C);
    int64_t inner = per / C;
    float *x = nc_tensor_data(t);
    for (int64_t i = 0; i < numel; i++) {
        int64_t c = (i % per) / inner;
        double m = mean[nm == 1 ? 0 : c], s = stdv[ns == 1 ? 0 : c];
        x[i] = (float)(((double)x[i] - m) / s);
    }
    return CLI_OK;
}

/* Reshapes float32 rows (N, ...) to the model input's per-sample shape when
 * the number of values per sample agrees ([N,28,28] -> [N,1,28,28]). */
static int fit_rows(const char *path, const nc_value_info *in, nc_tensor **t)
{
    char ds[200], ms[200];
    int nd = nc_tensor_ndim(*t);
    const int64_t *sh = nc_tensor_shape(*t);
    int64_t n = nd >= 1 ? sh[0] : 0, numel = nc_tensor_numel(*t), per = 1;
    int open = 0;
    for (int i = 1; i < in->ndim; i++) {
        if (in->shape[i] < 0)
            open = 1;
        else
            per *= in->shape[i];
    }
    cli_shape(nd, sh, ds, sizeof ds);
    cli_shape(in->ndim, in->shape, ms, sizeof ms);
    if (n < 1)
        return cli_failf(NC_ERR_SHAPE, "%s has shape %s: no samples", path, ds);
    if (open) {
        /* only the data can say what the free dimensions are */
        int ok = nd == in->ndim;
        for (int i = 1; ok && i < nd; i++)
            ok = in->shape[i] < 0 || in->shape[i] == sh[i];
        return ok ? CLI_OK
                  : cli_failf(NC_ERR_SHAPE, "%s has shape %s but the model input '%s' is %s", path, ds,
                              in->name, ms);
    }
    if (numel / n != per || numel % n)
        return cli_failf(NC_ERR_SHAPE, "%s has shape %s (%lld values per sample) but the model input "
                                       "'%s' is %s (%lld values per sample)", path, ds,
                         (long long)(numel / n), in->name, ms, (long long)per);
    int same = nd == in->ndim;
    for (int i = 1; same && i < nd; i++)
        same = sh[i] == in->shape[i];
    if (same)
        return CLI_OK;
    int64_t shape[NC_MAX_DIMS];
    shape[0] = n;
    memcpy(shape + 1, in->shape + 1, (size_t)(in->ndim - 1) * sizeof *shape);
    nc_tensor *r = NULL;
    nc_status st = nc_tensor_create_from(NC_DTYPE_F32, in->ndim, shape, nc_tensor_data_const(*t), &r);
    if (st != NC_OK)
        return cli_fail(st);
    nc_tensor_free(*t);
    *t = r;
    return CLI_OK;
}

nc_status cli_to_f32(nc_tensor *raw, int no_scale, nc_tensor **out)
{
    if (nc_tensor_dtype(raw) == NC_DTYPE_F32) {
        *out = raw;
        return NC_OK;
    }
    nc_tensor *f = NULL;
    nc_status st = nc_tensor_create(NC_DTYPE_F32, nc_tensor_ndim(raw), nc_tensor_shape(raw), &f);
    if (st != NC_OK) {
        nc_tensor_free(raw);
        return st;
    }
    int64_t n = nc_tensor_numel(raw);
    float *y = nc_tensor_data(f);
    if (nc_tensor_dtype(raw) == NC_DTYPE_U8) {
        /* torchvision's ToTensor scales images by 1/255 */
        const uint8_t *s = nc_tensor_data(raw);
        float scale = no_scale ? 1.0f : 1.0f / 255.0f;
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)s[i] * scale;
    } else {
        const int64_t *s = nc_tensor_data(raw);
        for (int64_t i = 0; i < n; i++)
            y[i] = (float)s[i];
    }
    nc_tensor_free(raw);
    *out = f;
    return NC_OK;
}

int cli_load_data(const char *cmd, const char *path, const data_opts *d, const nc_value_info *in,
                  nc_tensor **out)
{
    *out = NULL;
    nc_tensor *raw = NULL, *f = NULL;
    nc_status st = nc_data_load(path, NC_DTYPE_NATIVE, &raw);
    if (st != NC_OK)
        return cli_fail(st);
    if ((st = cli_to_f32(raw, d->no_scale, &f)) != NC_OK)
        return cli_fail(st);
    int rc = cli_normalize(cmd, d, in, f);
    if (rc == CLI_OK)
        rc = fit_rows(path, in, &f);
    if (rc != CLI_OK) {
        nc_tensor_free(f);
        return rc;
    }
    *out = f;
    return CLI_OK;
}

int cli_take_rows(nc_tensor **t, int64_t n)
{
    int nd = nc_tensor_ndim(*t);
    const int64_t *sh = nc_tensor_shape(*t);
    if (nd < 1 || n >= sh[0])
        return CLI_OK;
    int64_t shape[NC_MAX_DIMS];
    memcpy(shape, sh, (size_t)nd * sizeof *shape);
    shape[0] = n;
    nc_tensor *r = NULL;
    nc_status st = nc_tensor_create_from(nc_tensor_dtype(*t), nd, shape, nc_tensor_data_const(*t), &r);
    if (st != NC_OK)
        return cli_fail(st);
    nc_tensor_free(*t);
    *t = r;
    return CLI_OK;
}

int cli_check_label_range(const nc_tensor *labels, int64_t classes, const char *path)
{
    const int64_t *y = nc_tensor_data_const(labels);
    for (int64_t i = 0; i < nc_tensor_numel(labels); i++) {
        /* a label no class matches: an accuracy would be printed as if it could */
        if (y[i] < 0)
            return cli_failf(NC_ERR_INVALID_ARG, "labels %s: sample %lld has label %lld; class labels are 0, 1, 2, ...",
                             path, (long long)i, (long long)y[i]);
        if (classes > 0 && y[i] >= classes)
            return cli_failf(NC_ERR_INVALID_ARG, "labels %s: sample %lld has label %lld, outside the %lld classes "
                             "of the network's output", path, (long long)i, (long long)y[i], (long long)classes);
    }
    return CLI_OK;
}

int64_t cli_snn_classes(const nc_snn *s)
{
    nc_snn_layer_info li;
    if (nc_snn_layer_at(s, nc_snn_output_layer(s), &li) != NC_OK)
        return 0;
    int64_t n = 1;
    for (int d = 0; d < li.ndim; d++)
        n *= li.shape[d];
    return n;
}

int64_t cli_model_classes(const nc_model *m)
{
    nc_value_info o;
    if (nc_model_num_outputs(m) < 1 || nc_model_output(m, 0, &o) != NC_OK || o.ndim < 1)
        return 0;
    return o.shape[o.ndim - 1] > 0 ? o.shape[o.ndim - 1] : 0; /* symbolic: known only after a run */
}

int cli_load_labels(const char *path, int64_t n, const char *data_path, int64_t classes, nc_tensor **out)
{
    *out = NULL;
    nc_tensor *l = NULL;
    nc_status st = nc_data_load(path, NC_DTYPE_I64, &l);
    if (st != NC_OK)
        return cli_fail(st);
    int rc = CLI_OK;
    if (n >= 0 && nc_tensor_numel(l) != n) {
        char ls[200];
        rc = cli_failf(NC_ERR_SHAPE, "labels %s have shape %s (%lld labels) but %s has %lld samples",
                       path, cli_shape(nc_tensor_ndim(l), nc_tensor_shape(l), ls, sizeof ls),
                       (long long)nc_tensor_numel(l), data_path, (long long)n);
    }
    if (rc == CLI_OK)
        rc = cli_check_label_range(l, classes, path);
    if (rc != CLI_OK) {
        nc_tensor_free(l);
        return rc;
    }
    *out = l;
    return CLI_OK;
}

int cli_write_text(const char *path, const char *text)
{
    size_t len = strlen(text);
    if (cli_is_stdout(path)) {
        int rc = cli_write_stdout(text, len);
        return rc == CLI_OK && (len == 0 || text[len - 1] != '\n') ? cli_write_stdout("\n", 1) : rc;
    }
    if (len > 0 && text[len - 1] == '\n') {
        nc_status st = nc_write_file_atomic(path, text, len);
        return st == NC_OK ? CLI_OK : cli_fail(st);
    }
    /* text files end with a newline */
    char *t = malloc(len + 2);
    if (!t)
        return cli_failf(NC_ERR_NOMEM, "out of memory");
    memcpy(t, text, len);
    t[len] = '\n';
    t[len + 1] = '\0';
    nc_status st = nc_write_file_atomic(path, t, len + 1);
    free(t);
    return st == NC_OK ? CLI_OK : cli_fail(st);
}
