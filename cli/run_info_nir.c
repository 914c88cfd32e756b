/* The spiking-network halves of `neuroc info` and `neuroc run` (.nir files):
 * shared code of two commands, not a command of its own. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_info_snn(const char *path, const nc_nir_options *nopt)
{
    nc_snn *s = NULL;
    nc_status st = nc_snn_load_nir(path, nopt, &s);
    if (st != NC_OK)
        return cli_fail(st);
    size_t n = nc_snn_num_layers(s);
    int out_id = nc_snn_output_layer(s);
    printf("spiking network: %s\n\n", path);
    printf("%3s  %-24s  %-21s  %-20s  %-16s  %10s  %9s\n", "#", "name", "kind", "inputs", "shape",
           "params", "neurons");
    int64_t total_params = 0, total_neurons = 0;
    for (size_t i = 0; i < n; i++) {
        nc_snn_layer_info L;
        if ((st = nc_snn_layer_at(s, (int)i, &L)) != NC_OK) {
            nc_snn_free(s);
            return cli_fail(st);
        }
        char ins[64] = "", sh[200], kind[64];
        size_t off = 0;
        for (int k = 0; k < L.n_inputs && off < sizeof ins; k++)
            off += (size_t)snprintf(ins + off, sizeof ins - off, "%s%d%s", k ? "," : "", L.inputs[k],
                                    L.inputs[k] >= (int)i ? "(t-1)" : "");
        int spiking = nc_snn_kind_is_neuron(L.kind);
        int64_t neurons = 1;
        for (int d = 0; d < L.ndim; d++)
            neurons *= L.shape[d];
        if (spiking)
            total_neurons += neurons;
        total_params += L.params;
        char nb[32] = "-";
        if (spiking)
            snprintf(nb, sizeof nb, "%lld", (long long)neurons);
        printf("%3zu  %-24.24s  %-21s  %-20.20s  %-16s  %10lld  %9s%s\n", i, L.name,
               cli_kind_label(&L, kind, sizeof kind), ins, cli_shape(L.ndim, L.shape, sh, sizeof sh),
               (long long)L.params, nb, (int)i == out_id ? "  <- output" : "");
    }
    char hp[32], sh_buf[200];
    printf("\ntotal: %zu layers, %lld spiking neurons, %lld params (%s)\n", n, (long long)total_neurons,
           (long long)total_params, cli_human(total_params, hp, sizeof hp));
    if (nc_snn_timesteps(s) > 0)
        printf("operating T: %d (eval and run use it without -T)\n", nc_snn_timesteps(s));
    for (int k = 0; nc_snn_num_outputs(s) > 1 && k < nc_snn_num_outputs(s); k++) {
        nc_snn_output_info o;
        if (nc_snn_output_at(s, k, &o) == NC_OK)
            printf("%s '%s' %s: values %lld..%lld of the output layer\n", k ? "        " : "\noutputs:",
                   o.name, cli_shape(o.ndim, o.shape, sh_buf, sizeof sh_buf), (long long)o.offset,
                   (long long)(o.offset + o.size - 1));
    }
    cli_print_nir_semantics(s);
    printf("\n");
    cli_print_nir_graphs(path);
    nc_snn_free(s);
    return CLI_OK;
}

/* Copies `used` samples starting at row0 between a (T, n_a, row) and a
 * (T, n_b, row) layout, for T steps (T = 1 for plain (N, row) tensors). */
static void copy_rows(float *dst, int64_t dst_n, int64_t dst_row0, const float *src, int64_t src_n,
                      int64_t src_row0, int64_t T, int64_t used, int64_t row)
{
    for (int64_t t = 0; t < T; t++)
        memcpy(dst + (t * dst_n + dst_row0) * row, src + (t * src_n + src_row0) * row,
               (size_t)(used * row) * sizeof(float));
}

static void print_spike_rates(const nc_snn *s, const int64_t *counts, int64_t T, int64_t N)
{
    size_t n = nc_snn_num_layers(s);
    int any = 0;
    for (size_t i = 0; i < n; i++) {
        nc_snn_layer_info L;
        int64_t count = counts[i];
        if (nc_snn_layer_at(s, (int)i, &L) != NC_OK)
            continue;
        if (!nc_snn_kind_is_neuron(L.kind))
            continue;
        int64_t neurons = 1;
        for (int d = 0; d < L.ndim; d++)
            neurons *= L.shape[d];
        if (!any++)
            printf("spike rates (spikes per neuron per step):\n");
        printf("  %-24s %8.4f  (%lld spikes)\n", L.name, (double)count / (double)(neurons * T * N),
               (long long)count);
    }
}

static void verbose_log(nc_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level <= NC_LOG_INFO)
        fprintf(stderr, "neuroc: %s\n", msg);
}

/* --rate-limit: what readout/T approaches (nc_snn_rate_limit) for the N
 * samples of data, written and scored as a run's output. */
static int run_rate_limit(const run_args *a, const nc_snn *s, const nc_tensor *data, int64_t N,
                          const nc_tensor *labels)
{
    if (a->per_step || a->record || (a->encoding && strcmp(a->encoding, "direct") != 0) || a->backend ||
        a->timesteps)
        return cli_usage_error("run", "--rate-limit runs no steps: it takes no -T, --backend, --per-step, "
                                      "--record or Poisson encoding");
    nc_snn_layer_info in_l;
    nc_snn_layer_at(s, 0, &in_l);
    int64_t xs[NC_MAX_DIMS + 1] = {N};
    memcpy(xs + 1, in_l.shape, (size_t)in_l.ndim * sizeof xs[0]);
    nc_tensor *x = NULL, *y = NULL;
    nc_status st = nc_tensor_create_from(NC_DTYPE_F32, in_l.ndim + 1, xs, nc_tensor_data_const(data), &x);
    if (st == NC_OK)
        st = nc_snn_rate_limit(s, x, &y);
    if (st == NC_OK && a->output)
        st = cli_save_npy(a->output, y);
    int rc = st == NC_OK ? CLI_OK : cli_fail(st);
    if (rc == CLI_OK) {
        printf("ran %lld samples in the rate limit (each IF a ReLU clipped at its threshold)\n", (long long)N);
        if (labels)
            rc = cli_accuracy(y, labels, a->labels);
    }
    nc_tensor_free(x);
    nc_tensor_free(y);
    return rc;
}

/* The run options of a spiking network, checked (a usage error names the bad one). */
typedef struct snn_opts {
    long long T, seed;
    nc_encoding enc;
    int prec;
    double threshold;
} snn_opts;

static int parse_snn_opts(const run_args *a, snn_opts *o)
{
    if (!cli_parse_ll(a->timesteps, 1, 1 << 20, 32, &o->T))
        return cli_usage_error("run", "-T must be a whole number from 1 to 2^20, not '%s'", a->timesteps);
    if (!cli_parse_ll(a->seed, 0, INT64_MAX, 0, &o->seed))
        return cli_usage_error("run", "--seed must be a non-negative whole number, not '%s'", a->seed);
    int rc = cli_parse_encoding("run", a->encoding, &o->enc);
    if (rc != CLI_OK)
        return rc;
    if (!!a->record != !!a->layer)
        return cli_usage_error("run", "--record and --layer go together");
    static const char *const precisions[] = {"fp32", "tf32", "bf16"};
    if ((rc = cli_parse_choice("run", "--cuda-precision", a->cuda_precision, precisions, 3, 0, &o->prec)) != CLI_OK)
        return rc;
    o->threshold = 0;
    if (a->cuda_threshold) {
        char *end;
        errno = 0;
        o->threshold = strtod(a->cuda_threshold, &end);
        if (errno || *end || end == a->cuda_threshold || !(o->threshold > 0 && o->threshold <= 1e6))
            return cli_usage_error("run", "--cuda-threshold must be a positive fraction, not '%s'", a->cuda_threshold);
    }
    return CLI_OK;
}

/* The (T, N, *shape) tensor --record --layer fills; *row the layer's size. */
static int make_record(const run_args *a, const nc_snn *s, long long T, int64_t N, nc_tensor **rec, int64_t *row)
{
    int id = nc_snn_find_layer(s, a->layer);
    nc_snn_layer_info rl;
    if (id < 0 || nc_snn_layer_at(s, id, &rl) != NC_OK)
        return cli_failf(NC_ERR_INVALID_ARG, "%s has no layer named '%s' (see neuroc info)", a->model, a->layer);
    int64_t rshape[NC_MAX_DIMS + 2] = {T, N};
    for (int d = 0; d < rl.ndim; d++) {
        rshape[2 + d] = rl.shape[d];
        *row *= rl.shape[d];
    }
    nc_status st = nc_tensor_create(NC_DTYPE_F32, rl.ndim + 2, rshape, rec);
    return st != NC_OK ? cli_fail(st) : CLI_OK;
}

/* Values per sample of a layer. */
static int64_t info_numel(const nc_snn_layer_info *L)
{
    int64_t n = 1;
    for (int d = 0; d < L->ndim; d++)
        n *= L->shape[d];
    return n;
}

/* The output tensor: (N, *out_shape), or (T, N, *out_shape) per step. */
static int make_output(const run_args *a, const nc_snn_layer_info *out_l, long long T, int64_t N, nc_tensor **out)
{
    int64_t oshape[NC_MAX_DIMS + 2];
    int ond = 0;
    if (a->per_step)
        oshape[ond++] = T;
    oshape[ond++] = N;
    for (int d = 0; d < out_l->ndim && ond < NC_MAX_DIMS; d++)
        oshape[ond++] = out_l->shape[d];
    nc_status st = nc_tensor_create(NC_DTYPE_F32, ond, oshape, out);
    return st != NC_OK ? cli_fail(st) : CLI_OK;
}

/* counts[i] += the spikes of layer i in the session's last run. */
static void add_spike_counts(const nc_session *ss, int n_layers, int64_t *counts)
{
    for (int i = 0; i < n_layers; i++) {
        int64_t c = 0;
        nc_session_spike_count(ss, i, &c);
        counts[i] += c;
    }
}

/* The accuracy of the output summed over the steps (it is per step with --per-step). */
static int sum_accuracy(const run_args *a, const nc_tensor *out, long long T, int64_t N, int64_t out_row,
                        const nc_tensor *labels)
{
    const nc_tensor *sum = out;
    nc_tensor *owned = NULL;
    if (a->per_step) {
        int64_t sshape[2] = {N, out_row};
        nc_status st = nc_tensor_create(NC_DTYPE_F32, 2, sshape, &owned);
        if (st != NC_OK)
            return cli_fail(st);
        float *d = nc_tensor_data(owned);
        const float *o = nc_tensor_data_const(out);
        for (int64_t t = 0; t < T; t++)
            for (int64_t e = 0; e < N * out_row; e++)
                d[e] += o[t * N * out_row + e];
        sum = owned;
    }
    int rc = cli_accuracy(sum, labels, a->labels);
    nc_tensor_free(owned);
    return rc;
}

/* Output k of several (nc_snn_output_at) as Y.<name>.npy (Y = the
 * --output path without its .npy): its columns of out (.., total), in its
 * own shape. */
static int save_part(const run_args *a, const nc_snn *s, int k, const nc_tensor *out)
{
    nc_snn_output_info o;
    nc_status st = nc_snn_output_at(s, k, &o);
    if (st != NC_OK)
        return cli_fail(st);
    int nd = nc_tensor_ndim(out), pnd = nd - 1;
    const int64_t *sh = nc_tensor_shape(out);
    int64_t pshape[NC_MAX_DIMS + 2], rows = 1, total = sh[nd - 1];
    for (int d = 0; d < nd - 1; d++)
        rows *= (pshape[d] = sh[d]);
    for (int d = 0; d < o.ndim && pnd < NC_MAX_DIMS + 1; d++)
        pshape[pnd++] = o.shape[d];
    size_t len = strlen(a->output);
    int stem = len > 4 && strcmp(a->output + len - 4, ".npy") == 0 ? (int)len - 4 : (int)len;
    char path[4096];
    if (snprintf(path, sizeof path, "%.*s.%s.npy", stem, a->output, o.name) >= (int)sizeof path)
        return cli_failf(NC_ERR_INVALID_ARG, "--output %s: the name of output '%s' is too long", a->output, o.name);
    nc_tensor *part = NULL;
    if ((st = nc_tensor_create(NC_DTYPE_F32, pnd, pshape, &part)) != NC_OK)
        return cli_fail(st);
    const float *src = nc_tensor_data_const(out);
    float *dst = nc_tensor_data(part);
    for (int64_t r = 0; r < rows; r++)
        memcpy(dst + r * o.size, src + r * total + o.offset, (size_t)o.size * sizeof *dst);
    if ((st = cli_save_npy(path, part)) == NC_OK)
        printf("output '%s': %s\n", o.name, path);
    nc_tensor_free(part);
    return st == NC_OK ? CLI_OK : cli_fail(st);
}

/* --output and --record (the spikes of --layer) as .npy files: a network
 * with several outputs (a NIR graph's Output nodes) gets a file for each
 * as well, beside the output layer's (them all, one after another). */
static int save_outputs(const run_args *a, const nc_snn *s, const nc_tensor *out, const nc_tensor *rec)
{
    nc_status st;
    int parts = nc_snn_num_outputs(s), rc = CLI_OK;
    if (a->output && (st = cli_save_npy(a->output, out)) != NC_OK)
        return cli_fail(st);
    for (int k = 0; a->output && parts > 1 && strcmp(a->output, "-") != 0 && rc == CLI_OK && k < parts; k++)
        rc = save_part(a, s, k, out);
    if (rc != CLI_OK)
        return rc;
    if (rec && (st = cli_save_npy(a->record, rec)) != NC_OK)
        return cli_fail(st);
    return CLI_OK;
}

int cli_run_snn(const run_args *a, int64_t batch)
{
    snn_opts opts;
    int rc = parse_snn_opts(a, &opts);
    if (rc != CLI_OK)
        return rc;
    long long T = opts.T;
    if (a->verbose)
        nc_set_log_callback(verbose_log, NULL);
    nc_nir_options nopt;
    if ((rc = cli_nir_options("run", &a->nir, &nopt)) != CLI_OK)
        return rc;

    nc_snn *s = NULL;
    nc_session *ss = NULL;
    nc_batches *it = NULL;
    nc_tensor *data = NULL, *labels = NULL, *out = NULL, *rec = NULL;
    int64_t *counts = NULL;
    nc_status st = nc_snn_load_nir(a->model, &nopt, &s);
    if (st != NC_OK)
        return cli_fail(st);
    if (!a->timesteps && nc_snn_timesteps(s) > 0) /* the operating T conversion chose (--target-loss) */
        T = nc_snn_timesteps(s);
    counts = calloc(nc_snn_num_layers(s), sizeof *counts);
    if (!counts) {
        nc_snn_free(s);
        return cli_failf(NC_ERR_NOMEM, "out of memory");
    }

    nc_snn_layer_info in_l, out_l;
    nc_snn_layer_at(s, 0, &in_l);
    nc_snn_layer_at(s, nc_snn_output_layer(s), &out_l);
    nc_value_info in;
    cli_snn_input_info(s, &in);
    int64_t row = info_numel(&in_l), out_row = info_numel(&out_l), rec_row = 1;

    if ((rc = cli_load_input(a, &in, &data)) != CLI_OK)
        goto done;
    /* A time series (T, N, *shape) or a static batch (N, *shape). */
    int nd = nc_tensor_ndim(data);
    const int64_t *ds = nc_tensor_shape(data);
    int series = nd == in_l.ndim + 2;
    for (int d = 0; series && d < in_l.ndim; d++)
        series = ds[d + 2] == in_l.shape[d];
    int64_t N;
    if (series) {
        T = ds[0];
        N = ds[1];
    } else {
        samples smp = {0};
        if ((rc = cli_fit_samples(a, &in, data, &smp)) != CLI_OK)
            goto done;
        N = smp.n;
    }
    if (T < 1 || N < 1) {
        rc = cli_failf(NC_ERR_SHAPE, "input %s holds no samples or no steps", a->input);
        goto done;
    }
    if (a->labels && (rc = cli_check_labels(a, N, cli_snn_classes(s), &labels)) != CLI_OK)
        goto done;
    if (a->rate_limit) {
        rc = series ? cli_usage_error("run", "--rate-limit takes a static batch, not a time series")
                    : run_rate_limit(a, s, data, N, labels);
        goto done;
    }

    const char *rec_names[1] = {a->layer};
    nc_session_options so = {.backend = a->backend ? a->backend : "cpu", .timesteps = (int)T,
                             .encoding = opts.enc, .seed = (uint64_t)opts.seed, .per_step = a->per_step,
                             .record = a->layer ? rec_names : NULL, .n_record = a->layer ? 1 : 0,
                             .cuda_strategy = a->cuda_strategy, .cuda_dense_threshold = (float)opts.threshold,
                             .cuda_precision = (nc_cuda_precision)opts.prec};
    if ((st = nc_session_create(s, &so, &ss)) != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    int64_t out_T = a->per_step ? T : 1;
    if ((rc = make_output(a, &out_l, T, N, &out)) != CLI_OK)
        goto done;
    if (a->layer && (rc = make_record(a, s, T, N, &rec, &rec_row)) != CLI_OK)
        goto done;

    /* positions only (nc_batches): a time series keeps its samples on axis 1 */
    cli_progress prog;
    cli_progress_init(&prog);
    nc_batches_options bo = {.batch = batch < N ? batch : N, .samples = N, .progress = cli_progress_cb,
                             .what = "run", .progress_user = &prog};
    nc_batch b;
    if ((st = nc_batches_create(NULL, NULL, &bo, &it)) != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    int64_t in_T = series ? T : 1;
    const float *src = nc_tensor_data_const(data);
    while (nc_batches_next(it, &b)) {
        int64_t row0 = b.first, used = b.count;
        int64_t xs[NC_MAX_DIMS + 2];
        int xnd = 0;
        if (series)
            xs[xnd++] = T;
        xs[xnd++] = used;
        for (int d = 0; d < in_l.ndim; d++)
            xs[xnd++] = in_l.shape[d];
        nc_tensor *x = NULL, *y = NULL, *tr = NULL;
        if ((st = nc_tensor_create(NC_DTYPE_F32, xnd, xs, &x)) != NC_OK) {
            rc = cli_fail(st);
            goto done;
        }
        copy_rows(nc_tensor_data(x), used, 0, src, N, row0, in_T, used, row);
        nc_session_set_seed(ss, nc_batch_seed(so.seed, row0));
        st = nc_session_run(ss, x, &y);
        nc_tensor_free(x);
        if (st == NC_OK && rec)
            st = nc_session_trace(ss, a->layer, NC_TRACE_SPIKES, &tr);
        if (st != NC_OK) {
            nc_tensor_free(y);
            cli_progress_end(&prog);
            rc = cli_fail(st);
            goto done;
        }
        copy_rows(nc_tensor_data(out), N, row0, nc_tensor_data(y), used, 0, out_T, used, out_row);
        add_spike_counts(ss, nc_snn_num_layers(s), counts);
        if (tr)
            copy_rows(nc_tensor_data(rec), N, row0, nc_tensor_data(tr), used, 0, T, used, rec_row);
        nc_tensor_free(y);
        nc_tensor_free(tr);
    }
    cli_progress_end(&prog);

    if ((rc = save_outputs(a, s, out, rec)) != CLI_OK)
        goto done;
    printf("ran %lld samples for %lld steps on backend '%s'\n", (long long)N, T, so.backend);
    print_spike_rates(s, counts, T, N);
    if (labels)
        rc = sum_accuracy(a, out, T, N, out_row, labels);
done:
    if (a->verbose)
        nc_set_log_callback(NULL, NULL);
    free(counts);
    nc_tensor_free(rec);
    nc_tensor_free(out);
    nc_tensor_free(labels);
    nc_tensor_free(data);
    nc_batches_free(it);
    nc_session_free(ss);
    nc_snn_free(s);
    return rc;
}
