/* neuroc bench: inference speed of a spiking network on each backend and
 * batch size: images/s, synaptic events/s, spike density per layer, peak
 * memory. A .onnx model is converted in memory first. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cli.h"

const char CMD_BENCH_HELP[] =
    "usage: neuroc bench MODEL.nir|MODEL.onnx [--backend cpu,cpu-fast] [-T 8]\n"
    "                    [--batch 1,64] [--threads N] [--data X] [--min-time S]\n"
    "                    [--encoding direct|poisson] [--json F]\n"
    "                    [--no-scale] [--mean M1,.. --std S1,..]\n"
    "                    [conversion options, for a .onnx model]\n"
    "\n"
    "Measures how fast a spiking network runs: for every backend and batch size\n"
    "it runs T steps on a batch repeatedly for at least --min-time seconds (after\n"
    "one untimed run that builds the backend's plan) and reports images per\n"
    "second, synaptic events per second (the multiply-adds and additions driven\n"
    "by non-zero inputs, as nc_session_synops counts them), the spike density of\n"
    "every spiking layer (spikes per neuron per step) and the process's peak\n"
    "resident memory so far (getrusage), and the CPU time (user + system, all\n"
    "threads) per image, which busy machines distort less than wall-clock time.\n"
    "A .onnx model is converted in memory first, calibrated on --calib or --data.\n"
    "\n"
    "      --backend B,..   backends to compare (default cpu,cpu-fast); the first\n"
    "                       is the baseline of the speed-up column\n"
    "  -T, --timesteps T    steps per inference (default 8)\n"
    "  -b, --batch B,..     batch sizes (default 1,64)\n"
    "      --threads N      OpenMP threads (default: OMP_NUM_THREADS, else all\n"
    "                       cores)\n"
    "  -d, --data X         input samples (.npy, IDX, or file.h5:/dataset), used\n"
    "                       in order and repeated to fill a batch; default: random\n"
    "                       uniform values in [0,1) (fixed seed)\n"
    "      --min-time S     seconds to time each configuration (default 1)\n"
    "      --encoding E     direct (default) or poisson\n"
    "      --json F         the measurements as JSON as well (F = -: on standard\n"
    "                       output, the table then on stderr)\n"
    "  -v, --verbose        also time every layer: one more run per configuration,\n"
    "                       profiled (cpu, cpu-fast), after the timed ones; prints\n"
    "                       each layer's CPU microseconds per image, its share and\n"
    "                       its synaptic events per second\n" CLI_DATA_OPTS_HELP
    "\n"
    "Conversion options (a .onnx model; see 'neuroc convert --help'):\n"
    "      --calib DATA     calibration samples (default: --data; required for a\n"
    "                       .onnx model when there is no --data)\n"
    "      --convert-T T  --levels L  --threshold pN|max|mse  --per-channel\n"
    "      --count-zeros  --calib-samples N  --reset subtract|zero  --v0 half|zero\n"
    "      --binary-spikes  --signed-spikes | --plain-spikes  --burst B  --graded-nonlinear\n      --maxpool spikes|currents|average\n"
    "      --keep-avgpool\n"
    "\n"
    "Times are wall-clock; machines are noisy, so compare backends within one\n"
    "run (the speed-up column) rather than across runs.\n";

typedef struct bench_cfg {
    const char *backend;
    int batch;
    double images_s, synops_s, synops_image, seconds, cpu_image;
    int runs;
    long peak_kib;
    double *density; /* per layer; < 0 for layers that do not spike */
    double *layer_s; /* --verbose: per layer, CPU seconds per image in the profiled run; else NULL */
    double *layer_ops; /* --verbose: per layer, synaptic events per image */
} bench_cfg;

/* User + system CPU seconds of the process so far (all threads). */
static double cpu_s(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

static long peak_rss_kib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_maxrss : -1;
}

/* Splits "a,b,c" in place into at most max parts. */
static int split_list(char *s, const char **out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
        if (*tok)
            out[n++] = tok;
    return n;
}

/* Captures cpu-fast's notes of its plan: which kernels and blocks it chose,
 * and (at batch 1) how its team shares a sample. Warnings are printed. */
static char g_kernels[128], g_team[128];
static void log_cb(nc_log_level level, const char *msg, void *user)
{
    (void)user;
    if (level <= NC_LOG_WARN) {
        fprintf(stderr, "neuroc: %s\n", msg);
        return;
    }
    if (strncmp(msg, "cpu-fast: ", 10) == 0)
        snprintf(strstr(msg, " kernels, ") ? g_kernels : g_team, sizeof g_kernels, "%s", msg + 10);
}

/* The batch: rows of x in order, repeated to fill it (random if x is NULL). */
static nc_tensor *make_batch(const nc_snn *s, const nc_tensor *x, int batch)
{
    nc_snn_layer_info in;
    if (nc_snn_layer_at(s, 0, &in) != NC_OK)
        return NULL;
    int64_t shape[NC_MAX_DIMS + 1], per = 1;
    shape[0] = batch;
    for (int d = 0; d < in.ndim; d++) {
        shape[d + 1] = in.shape[d];
        per *= in.shape[d];
    }
    nc_tensor *t = NULL;
    if (nc_tensor_create(NC_DTYPE_F32, in.ndim + 1, shape, &t) != NC_OK)
        return NULL;
    float *d = nc_tensor_data(t);
    if (!x) {
        uint64_t z = 0x2545F4914F6CDD1Dull;
        for (int64_t k = 0; k < batch * per; k++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            d[k] = (float)(z >> 40) * (1.0f / 16777216.0f);
        }
        return t;
    }
    int64_t rows = nc_tensor_shape(x)[0];
    const float *src = nc_tensor_data_const(x);
    for (int64_t b = 0; b < batch; b++)
        memcpy(d + b * per, src + (b % rows) * per, (size_t)per * sizeof *d);
    return t;
}

/* --verbose: one profiled run (nc_session_options.profile), per layer. */
static int profile_one(const nc_snn *s, const nc_tensor *x, int T, nc_encoding enc, bench_cfg *c)
{
    nc_session_options o = {.backend = c->backend, .timesteps = T, .encoding = enc, .profile = 1};
    nc_session *ss = NULL;
    nc_tensor *in = make_batch(s, x, c->batch), *y = NULL;
    nc_status st = in ? nc_session_create(s, &o, &ss) : NC_ERR_NOMEM;
    if (st == NC_OK)
        st = nc_session_run(ss, in, &y);
    for (int i = 0; st == NC_OK && i < nc_snn_num_layers(s); i++) {
        int64_t ops = 0;
        st = nc_session_layer_seconds(ss, i, &c->layer_s[i]);
        if (st == NC_OK)
            st = nc_session_synops(ss, i, &ops);
        c->layer_s[i] /= c->batch;
        c->layer_ops[i] = (double)ops / c->batch;
    }
    nc_tensor_free(y);
    nc_tensor_free(in);
    nc_session_free(ss);
    return st == NC_OK ? CLI_OK : cli_fail(st);
}

/* Times one backend at one batch size. */
static int bench_one(const nc_snn *s, const nc_tensor *x, int T, nc_encoding enc, double min_time, bench_cfg *c)
{
    size_t nl = nc_snn_num_layers(s);
    nc_session_options o = {.backend = c->backend, .timesteps = T, .encoding = enc};
    nc_session *ss = NULL;
    nc_tensor *in = make_batch(s, x, c->batch), *y = NULL;
    nc_status st = in ? nc_session_create(s, &o, &ss) : NC_ERR_NOMEM;
    if (st == NC_OK)
        st = nc_session_run(ss, in, &y); /* builds the plan */
    nc_tensor_free(y);
    y = NULL;
    double t0 = cli_now_s(), c0 = cpu_s(), t = 0;
    int runs = 0;
    while (st == NC_OK && (t < min_time || runs < 2)) {
        st = nc_session_run(ss, in, &y);
        nc_tensor_free(y);
        y = NULL;
        runs++;
        t = cli_now_s() - t0;
    }
    if (st != NC_OK) {
        nc_tensor_free(in);
        nc_session_free(ss);
        return cli_fail(st);
    }
    int64_t synops = 0;
    for (size_t i = 0; i < nl; i++) {
        int64_t ops = 0, spikes = 0;
        nc_snn_layer_info L;
        nc_session_synops(ss, (int)i, &ops);
        nc_session_spike_count(ss, (int)i, &spikes);
        nc_snn_layer_at(s, (int)i, &L);
        synops += ops;
        int64_t neurons = 1;
        for (int d = 0; d < L.ndim; d++)
            neurons *= L.shape[d];
        int spiking = nc_snn_kind_is_neuron(L.kind);
        c->density[i] = spiking ? (double)spikes / ((double)neurons * T * c->batch) : -1.0;
    }
    c->cpu_image = (cpu_s() - c0) / ((double)runs * c->batch);
    c->runs = runs;
    c->seconds = t;
    c->images_s = (double)runs * c->batch / t;
    c->synops_image = (double)synops / c->batch;
    c->synops_s = (double)synops * runs / t;
    c->peak_kib = peak_rss_kib();
    nc_tensor_free(in);
    nc_session_free(ss);
    return c->layer_s ? profile_one(s, x, T, enc, c) : CLI_OK;
}

static char *si(double v, char *buf, size_t len)
{
    static const char *pre[] = {"", " k", " M", " G", " T"};
    int k = 0;
    while (v >= 1000.0 && k < 4) {
        v /= 1000.0;
        k++;
    }
    snprintf(buf, len, "%.3g%s", v, pre[k]);
    return buf;
}

static void print_table(const nc_snn *s, bench_cfg *cfg, int n_cfg, int n_backends)
{
    char b1[32], b2[32];
    printf("%-10s %6s %12s %11s %13s %18s %16s %10s\n", "backend", "batch", "images/s", "ms/batch", "CPU ms/image",
           "synaptic events/s", "events/image", "peak RSS");
    for (int k = 0; k < n_cfg; k++) {
        bench_cfg *c = &cfg[k];
        printf("%-10s %6d %12.1f %11.3f %13.4f %18s %16s %7.1f MiB\n", c->backend, c->batch, c->images_s,
               1e3 * c->batch / c->images_s, 1e3 * c->cpu_image, si(c->synops_s, b1, sizeof b1),
               si(c->synops_image, b2, sizeof b2), (double)c->peak_kib / 1024.0);
    }
    if (n_backends > 1) {
        printf("\nspeed-up over %s (images/s ratio):\n", cfg[0].backend);
        for (int k = 0; k < n_cfg; k++) {
            const bench_cfg *base = NULL;
            for (int j = 0; j < n_cfg; j++)
                if (cfg[j].batch == cfg[k].batch && strcmp(cfg[j].backend, cfg[0].backend) == 0)
                    base = &cfg[j];
            if (base && base != &cfg[k])
                printf("  %-10s batch %-6d %8.2fx\n", cfg[k].backend, cfg[k].batch, cfg[k].images_s / base->images_s);
        }
    }
    printf("\nspike density (spikes per neuron per step), first backend:\n");
    printf("  %-32s %10s", "layer", "neurons");
    int n_batch = 0;
    for (int k = 0; k < n_cfg; k++)
        if (strcmp(cfg[k].backend, cfg[0].backend) == 0) {
            char h[24];
            snprintf(h, sizeof h, "batch %d", cfg[k].batch);
            printf(" %10s", h);
            n_batch++;
        }
    putchar('\n');
    for (int i = 0; i < nc_snn_num_layers(s); i++) {
        if (cfg[0].density[i] < 0)
            continue;
        nc_snn_layer_info L;
        nc_snn_layer_at(s, (int)i, &L);
        int64_t neurons = 1;
        for (int d = 0; d < L.ndim; d++)
            neurons *= L.shape[d];
        printf("  %-32.32s %10lld", L.name, (long long)neurons);
        for (int k = 0; k < n_cfg; k++)
            if (strcmp(cfg[k].backend, cfg[0].backend) == 0)
                printf(" %10.4f", cfg[k].density[i]);
        putchar('\n');
    }
    (void)n_batch;
    if (!cfg[0].layer_s)
        return;
    for (int k = 0; k < n_cfg; k++) {
        const bench_cfg *c = &cfg[k];
        double total = 0;
        for (int i = 0; i < nc_snn_num_layers(s); i++)
            total += c->layer_s[i];
        printf("\nCPU time per layer, %s, batch %d (one profiled run; µs per image):\n", c->backend, c->batch);
        printf("  %-32s %-21s %10s %7s %18s\n", "layer", "kind", "µs/image", "share", "synaptic events/s");
        for (int i = 0; i < nc_snn_num_layers(s); i++) {
            nc_snn_layer_info L;
            nc_snn_layer_at(s, i, &L);
            if (c->layer_s[i] < 1e-3 * total && c->layer_ops[i] == 0)
                continue; /* views and trivial layers: under 0.1 % */
            char b[32], kind[64];
            printf("  %-32.32s %-21s %10.1f %6.1f%% %18s\n", L.name, cli_kind_label(&L, kind, sizeof kind),
                   1e6 * c->layer_s[i],
                   total > 0 ? 100.0 * c->layer_s[i] / total : 0.0,
                   c->layer_s[i] > 0 && c->layer_ops[i] > 0 ? si(c->layer_ops[i] / c->layer_s[i], b, sizeof b) : "-");
        }
    }
}

static int write_json(const char *path, const char *model, const nc_snn *s, int T, int threads, const char *enc,
                      bench_cfg *cfg, int n_cfg)
{
    size_t cap = 4096 + (size_t)n_cfg * (512 + 2 * 300 * (size_t)nc_snn_num_layers(s)), len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return cli_failf(NC_ERR_NOMEM, "out of memory");
#define OUT(...) len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, __VA_ARGS__)
    OUT("{\"model\": \"");
    for (const char *p = model; *p; p++)
        OUT(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
    OUT("\", \"T\": %d, \"threads\": %d, \"encoding\": \"%s\", \"cpu_fast_kernels\": \"%s\", \"configs\": [", T,
        threads, enc, g_kernels);
    for (int k = 0; k < n_cfg; k++) {
        bench_cfg *c = &cfg[k];
        OUT("%s\n  {\"backend\": \"%s\", \"batch\": %d, \"images_per_s\": %.6g, \"synaptic_events_per_s\": %.6g, "
            "\"synaptic_events_per_image\": %.6g, \"cpu_s_per_image\": %.6g, \"runs\": %d, \"seconds\": %.6g, "
            "\"peak_rss_kib\": %ld, \"spike_density\": {",
            k ? "," : "", c->backend, c->batch, c->images_s, c->synops_s, c->synops_image, c->cpu_image, c->runs,
            c->seconds, c->peak_kib);
        int first = 1;
        for (int i = 0; i < nc_snn_num_layers(s); i++) {
            if (c->density[i] < 0)
                continue;
            nc_snn_layer_info L;
            nc_snn_layer_at(s, (int)i, &L);
            OUT("%s\"", first ? "" : ", ");
            for (const char *p = L.name; *p; p++)
                OUT(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
            OUT("\": %.6g", c->density[i]);
            first = 0;
        }
        OUT("}");
        if (c->layer_s) { /* --verbose */
            OUT(", \"layer_cpu_s_per_image\": {");
            for (int i = 0; i < nc_snn_num_layers(s); i++) {
                nc_snn_layer_info L;
                nc_snn_layer_at(s, (int)i, &L);
                OUT("%s\"", i ? ", " : "");
                for (const char *p = L.name; *p; p++)
                    OUT(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
                OUT("\": %.6g", c->layer_s[i]);
            }
            OUT("}");
        }
        OUT("}");
    }
    OUT("\n]}");
#undef OUT
    int rc = len < cap ? cli_write_text(path, buf) : cli_failf(NC_ERR_LIMIT, "JSON report too long");
    free(buf);
    return rc;
}

typedef struct bench_args {
    const char *data, *backends, *timesteps, *batches, *threads, *min_time, *encoding, *json;
} bench_args;

/* What bench measures: -T, --threads, --min-time, --encoding, the
 * --backend and --batch lists (usage errors name the bad one). */
typedef struct bench_plan {
    long long T, threads;
    double min_time;
    nc_encoding enc;
    char backends_buf[256], batches_buf[256]; /* the lists' words point in here */
    const char *backends[16];
    int nb, nbatch, batches[16];
} bench_plan;

static int bench_read_args(const bench_args *a, bench_plan *p)
{
    long long v;
    p->T = 8;
    p->threads = 0;
    if (a->timesteps && !cli_parse_ll(a->timesteps, 1, 1 << 20, 0, &p->T))
        return cli_usage_error("bench", "-T must be a whole number from 1 to 2^20, not '%s'", a->timesteps);
    if (a->threads && !cli_parse_ll(a->threads, 1, 4096, 0, &p->threads))
        return cli_usage_error("bench", "--threads must be a whole number from 1 to 4096, not '%s'", a->threads);
    p->min_time = 1.0;
    if (a->min_time) {
        char *end;
        errno = 0;
        p->min_time = strtod(a->min_time, &end);
        if (errno || *end || end == a->min_time || !(p->min_time >= 0 && p->min_time <= 3600))
            return cli_usage_error("bench", "--min-time must be seconds from 0 to 3600, not '%s'", a->min_time);
    }
    int rc;
    if ((rc = cli_parse_encoding("bench", a->encoding, &p->enc)) != CLI_OK)
        return rc;
    snprintf(p->backends_buf, sizeof p->backends_buf, "%s", a->backends ? a->backends : "cpu,cpu-fast");
    snprintf(p->batches_buf, sizeof p->batches_buf, "%s", a->batches ? a->batches : "1,64");
    const char *batch_s[16];
    p->nb = split_list(p->backends_buf, p->backends, 16);
    p->nbatch = split_list(p->batches_buf, batch_s, 16);
    if (p->nb < 1)
        return cli_usage_error("bench", "--backend needs at least one backend");
    for (int k = 0; k < p->nbatch; k++) {
        if (!cli_parse_ll(batch_s[k], 1, 1 << 20, 0, &v))
            return cli_usage_error("bench", "--batch takes whole numbers from 1 to 2^20, not '%s'", batch_s[k]);
        p->batches[k] = (int)v;
    }
    if (p->nbatch < 1)
        return cli_usage_error("bench", "--batch needs at least one batch size");
    return CLI_OK;
}

/* Measures every backend at every batch size into cfg (batch-major). */
static int bench_all(const nc_snn *s, const nc_tensor *x, const bench_plan *p, int verbose, bench_cfg *cfg)
{
    for (int k = 0; k < p->nbatch; k++)
        for (int b = 0; b < p->nb; b++) {
            bench_cfg *cc = &cfg[k * p->nb + b];
            cc->backend = p->backends[b];
            cc->batch = p->batches[k];
            cc->density = calloc(nc_snn_num_layers(s), sizeof *cc->density);
            if (verbose) {
                cc->layer_s = calloc(nc_snn_num_layers(s), sizeof *cc->layer_s);
                cc->layer_ops = calloc(nc_snn_num_layers(s), sizeof *cc->layer_ops);
            }
            if (!cc->density || (verbose && (!cc->layer_s || !cc->layer_ops)))
                return cli_failf(NC_ERR_NOMEM, "out of memory");
            int rc = bench_one(s, x, (int)p->T, p->enc, p->min_time, cc);
            if (rc != CLI_OK)
                return rc;
        }
    return CLI_OK;
}

/* The network (a .nir) or the .onnx model to convert, and its input. */
static int bench_load_model(const char *model, int is_nir, nc_snn **s, nc_model **m, nc_value_info *in)
{
    nc_status st;
    if (is_nir) {
        if ((st = nc_snn_load_nir(model, NULL, s)) != NC_OK)
            return cli_fail(st);
        nc_snn_layer_info L;
        nc_snn_layer_at(*s, 0, &L);
        in->name = L.name;
        in->dtype = NC_DTYPE_F32;
        in->ndim = L.ndim + 1;
        in->shape[0] = -1;
        memcpy(in->shape + 1, L.shape, (size_t)L.ndim * sizeof *in->shape);
        return CLI_OK;
    }
    if ((st = nc_model_load_onnx(model, NULL, m)) != NC_OK)
        return cli_fail(st);
    if (nc_model_num_inputs(*m) != 1 || (st = nc_model_input(*m, 0, in)) != NC_OK)
        return cli_failf(NC_ERR_UNSUPPORTED, "%s: bench takes a model with one input", model);
    return CLI_OK;
}

int cmd_bench(int argc, char **argv)
{
    bench_args a = {0};
    convert_args c = {0};
    data_opts d = {0};
    int verbose = 0;
    cli_opt opts[] = {
        {"--data", "-d", &a.data, NULL},
        {"--backend", NULL, &a.backends, NULL},
        {"--timesteps", "-T", &a.timesteps, NULL},
        {"--batch", "-b", &a.batches, NULL},
        {"--threads", NULL, &a.threads, NULL},
        {"--min-time", NULL, &a.min_time, NULL},
        {"--encoding", NULL, &a.encoding, NULL},
        {"--json", NULL, &a.json, NULL},
        {"--verbose", "-v", NULL, &verbose},
        {"--calib", NULL, &c.calib, NULL},
        {"--convert-T", NULL, &c.timesteps, NULL},
        CLI_CONVERT_OPTS(c),
        CLI_DATA_OPTS(d),
        {NULL, NULL, NULL, NULL},
    };
    const cli_frame frame = {.cmd = "bench", .help = CMD_BENCH_HELP, .opts = opts, .data_out = &a.json,
                             .one_arg = "expected one model file (.nir or .onnx)"};
    const char *model;
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &model, &rc))
        return rc;
    bench_plan pl;
    if ((rc = bench_read_args(&a, &pl)) != CLI_OK)
        return rc;
    long long T = pl.T, threads = pl.threads;
    double min_time = pl.min_time;
    nc_encoding enc = pl.enc;
    int nb = pl.nb, nbatch = pl.nbatch, *batches = pl.batches;
    nc_convert_options co;
    if ((rc = cli_convert_options("bench", &c, &co)) != CLI_OK || (rc = cli_data_opts_check("bench", &d)))
        return rc;
    int is_nir = cli_is_nir(model);
    if (is_nir && (cli_convert_args_given(&c) || c.calib))
        return cli_usage_error("bench", "conversion options apply to a .onnx model; %s is a spiking network "
                                        "(.nir)", model);
    if (!is_nir && !a.data && !c.calib)
        return cli_usage_error("bench", "a .onnx model is converted first: give --data or --calib to "
                                        "calibrate it on");
#ifdef _OPENMP
    if (threads > 0)
        omp_set_num_threads((int)threads);
    threads = omp_get_max_threads();
#else
    if (threads > 1)
        fprintf(stderr, "neuroc bench: built without OpenMP; --threads ignored (1 thread)\n");
    threads = 1;
#endif
    nc_set_log_callback(log_cb, NULL);

    nc_model *m = NULL;
    nc_snn *s = NULL;
    nc_tensor *x = NULL, *calib = NULL;
    bench_cfg *cfg = NULL;
    int n_cfg = nb * nbatch;
    nc_value_info in;
    nc_status st;
    memset(&in, 0, sizeof in);
    if ((rc = bench_load_model(model, is_nir, &s, &m, &in)) != CLI_OK)
        goto done;
    if (a.data && (rc = cli_load_data("bench", a.data, &d, &in, &x)) != CLI_OK)
        goto done;
    if (!is_nir) {
        const nc_tensor *cx = x;
        if (c.calib) {
            if ((rc = cli_load_data("bench", c.calib, &d, &in, &calib)) != CLI_OK)
                goto done;
            cx = calib;
        }
        cli_progress prog;
        cli_progress_init(&prog);
        co.progress = cli_progress_cb;
        co.progress_user = &prog;
        st = nc_convert(m, cx, NULL, &co, &s, NULL);
        cli_progress_end(&prog);
        if (st != NC_OK) {
            rc = cli_fail(st);
            goto done;
        }
        printf("converted %s: %d layers\n", model, nc_snn_num_layers(s));
    }
    if (x) {
        int64_t need = 1;
        for (int k = 0; k < nbatch; k++)
            need = batches[k] > need ? batches[k] : need;
        cli_take_rows(&x, need);
    }
    cfg = calloc((size_t)n_cfg, sizeof *cfg);
    if (!cfg) {
        rc = cli_failf(NC_ERR_NOMEM, "out of memory");
        goto done;
    }
    printf("bench %s: T = %lld, %lld thread%s, %s input (%s), at least %.2g s a configuration\n", model, T,
           threads, threads == 1 ? "" : "s", enc == NC_ENCODING_POISSON ? "poisson" : "direct",
           a.data ? a.data : "random", min_time);
    fflush(stdout);
    if ((rc = bench_all(s, x, &pl, verbose, cfg)) != CLI_OK)
        goto done;
    if (g_kernels[0])
        printf("cpu-fast: %s\n", g_kernels);
    if (g_team[0])
        printf("cpu-fast: %s\n", g_team);
    putchar('\n');
    print_table(s, cfg, n_cfg, nb);
    if (a.json && (rc = write_json(a.json, model, s, (int)T, (int)threads,
                                   enc == NC_ENCODING_POISSON ? "poisson" : "direct", cfg, n_cfg)) != CLI_OK)
        goto done;
    rc = CLI_OK;
done:
    nc_set_log_callback(NULL, NULL);
    for (int k = 0; cfg && k < n_cfg; k++) {
        free(cfg[k].density);
        free(cfg[k].layer_s);
        free(cfg[k].layer_ops);
    }
    free(cfg);
    nc_tensor_free(calib);
    nc_tensor_free(x);
    nc_snn_free(s);
    nc_model_free(m);
    return rc;
}
