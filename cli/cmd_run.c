/* neuroc run: the ANN forward pass over a data file, in chunks, with an
 * optional output file and accuracy against labels. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char CMD_RUN_HELP[] =
    "usage: neuroc run MODEL.onnx --input X [--output Y.npy] [--labels L]\n"
    "                  [--batch N] [--no-scale] [--mean M1,.. --std S1,..]\n"
    "       neuroc run MODEL.nir --input X [-T 32] [--output Y.npy] [--labels L]\n"
    "                  [--backend cpu|cpu-fast|cuda] [--per-step] [--encoding direct|poisson]\n"
    "                  [--cuda-strategy auto|event|dense|sparse] [--verbose]\n"
    "                  [--seed S] [--record SPIKES.npy --layer NAME] [--rate-limit]\n"
    "                  [--nir-reset spec|zero|subtract|subtract-snntorch] [--nir-spike gt|ge]\n"
    "                  [--dt S] [--integration euler|exact] [--batch N] [--raw-input]\n"
    "\n"
    "Runs an ONNX model's ANN forward pass (CPU reference path), or a spiking\n"
    "network (.nir) for T steps, on the samples in X.\n"
    "\n"
    "  -i, --input X      input data: .npy (float32/64, uint8, int) or IDX\n"
    "                     (gzip-compressed or not, as MNIST/Fashion-MNIST ship).\n"
    "                     The first dimension is the sample; each sample is\n"
    "                     reshaped to the model's input shape when the number\n"
    "                     of values agrees (e.g. [N,28,28] -> [N,1,28,28]).\n"
    "                     For a .nir model X may also be a time series\n"
    "                     (T, N, *input_shape), e.g. event frames; T then comes\n"
    "                     from the file.\n"
    "      --raw-input    uint8 input is normally scaled by 1/255 into [0,1], as\n"
    "                     torchvision's ToTensor does; this flag feeds the raw\n"
    "                     0..255 values instead. --no-scale is the same.\n"
    "      --mean M1,M2,.. --std S1,S2,..\n"
    "                     normalise each channel (dimension 1 of the model input)\n"
    "                     after scaling: x = (x - mean) / std; one value or one\n"
    "                     per channel\n"
    "  -o, --output Y     write output 0 for all samples to Y (.npy); the file\n"
    "                     appears complete or not at all. For a .nir model: the\n"
    "                     output layer summed over the T steps, (N, *out), or\n"
    "                     every step with --per-step, (T, N, *out). Y = -: the\n"
    "                     .npy on standard output (what run prints goes to stderr).\n"
    "                     A .nir graph of several Output nodes: each also in\n"
    "                     Y.<node name>.npy, in its own shape\n"
    "  -l, --labels L     integer class labels (.npy or IDX), one per sample;\n"
    "                     prints the accuracy of argmax over output 0's last\n"
    "                     dimension, e.g. 'accuracy: 0.8731 (8731/10000)'.\n"
    "  -b, --batch N      samples per forward pass (default 256). A model with a\n"
    "                     fixed batch size uses that size; the last chunk is\n"
    "                     padded and the padding dropped.\n"
    "\n"
    "Spiking networks (.nir):\n"
    "  -T, --timesteps T  steps for a static input (default: the network's operating T,\n"
    "                     set by convert --target-loss, else 32)\n"
    "      --backend B    cpu (the reference backend, the oracle; default),\n"
    "                     cpu-fast (event-driven, vectorised; same results) or\n"
    "                     cuda (NVIDIA GPU; cuda:STRATEGY sets --cuda-strategy)\n"
    "      --cuda-strategy S\n"
    "                     how the cuda backend computes Affine and Conv2d layers:\n"
    "                     event (sparse spike events; the cpu results bit for\n"
    "                     bit), dense (cuBLAS GEMM), sparse (cuSPARSE SpMM,\n"
    "                     Affine only) or auto (default: dense where the input\n"
    "                     density measured in the first batch reaches the\n"
    "                     threshold, else event); per layer: auto,fc1=event\n"
    "      --cuda-threshold D   auto's density threshold (default 0.25)\n"
    "      --cuda-precision P   fp32 (default), tf32 or bf16 for dense GEMMs\n"
    "  -v, --verbose      the library's notes on stderr, e.g. the cuda strategy\n"
    "                     chosen for each layer\n"
    "      --per-step     output every step instead of the sum\n"
    "      --rate-limit   output what readout/T approaches as T grows, with no\n"
    "                     steps: each IF a ReLU clipped at its threshold (for a\n"
    "                     converted network, the clipped ANN calibration defines)\n"
    "      --encoding E   direct (the analog input is the current every step;\n"
    "                     default) or poisson (spikes with p = clamp(x, 0, 1))\n"
    "      --seed S       seed for poisson encoding (default 0)\n"
    "      --record F --layer NAME\n"
    "                     write the spikes of layer NAME, (T, N, *shape), to F\n"
    "                     (.npy; F = -: standard output)\n"
    "      --nir-reset M  other tools' NIR files (neuroc's own carry their semantics):\n"
    "                     after a spike spec (default: v = v_reset, NIR's), zero\n"
    "                     (the same), subtract (v -= v_threshold) or subtract-snntorch\n"
    "                     (snntorch's reset_delay=False: a v left above θ is tested as m − θ)\n"
    "      --nir-spike S  their spike test: gt (default: v > v_threshold, NIR's) or ge\n"
    "      --dt SECONDS   their time step: LIF/CubaLIF/LI/CubaLI leaks, Delay (1e-4)\n"
    "      --integration M  of their leaks: euler (default) or exact (exponential)\n"
    "\n"
    "Progress is shown on stderr when it is a terminal.\n";

#define DEFAULT_BATCH 256

static int parse_batch(const char *s, int64_t *out)
{
    if (!s) {
        *out = DEFAULT_BATCH;
        return 1;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || end == s || v < 1 || v > (1LL << 30))
        return 0;
    *out = v;
    return 1;
}

/* Collects output 0 of every chunk into one tensor of n rows. */
typedef struct collector {
    nc_tensor *all;
    size_t row_bytes;
} collector;

static int collect(collector *c, const nc_tensor *y, int64_t fed, int64_t used, int64_t row0,
                   int64_t n, int single_chunk)
{
    char ys[200];
    int nd = nc_tensor_ndim(y);
    const int64_t *sh = nc_tensor_shape(y);
    size_t es = cli_dtype_size(nc_tensor_dtype(y));
    if (nd < 1 || sh[0] != fed) {
        if (single_chunk && fed == used && !c->all) {
            /* Not batch-major, but there is nothing to concatenate. */
            nc_status st = nc_tensor_create_from(nc_tensor_dtype(y), nd, sh,
                                                 nc_tensor_data_const(y), &c->all);
            return st == NC_OK ? CLI_OK : cli_fail(st);
        }
        return cli_failf(NC_ERR_SHAPE, "output 0 has shape %s for a chunk of %lld samples; its "
                                       "first dimension is not the batch, so chunks cannot be "
                                       "joined (try --batch %lld)",
                         cli_shape(nd, sh, ys, sizeof ys), (long long)fed, (long long)n);
    }
    if (!c->all) {
        int64_t shape[NC_MAX_DIMS];
        memcpy(shape, sh, (size_t)nd * sizeof *sh);
        shape[0] = n;
        nc_status st = nc_tensor_create(nc_tensor_dtype(y), nd, shape, &c->all);
        if (st != NC_OK)
            return cli_fail(st);
        c->row_bytes = fed ? (size_t)nc_tensor_numel(y) / (size_t)fed * es : 0;
    }
    const int64_t *as = nc_tensor_shape(c->all);
    int same = nc_tensor_dtype(y) == nc_tensor_dtype(c->all) && nd == nc_tensor_ndim(c->all);
    for (int i = 1; same && i < nd; i++)
        same = sh[i] == as[i];
    if (!same)
        return cli_failf(NC_ERR_SHAPE, "output 0 changed shape between chunks (now %s)",
                         cli_shape(nd, sh, ys, sizeof ys));
    if (used && c->row_bytes)
        memcpy((char *)nc_tensor_data(c->all) + (size_t)row0 * c->row_bytes,
               nc_tensor_data_const(y), (size_t)used * c->row_bytes);
    return CLI_OK;
}

/* Feeds the samples `chunk` at a time (nc_batches). With `pad` (a
 * fixed-batch model) the last chunk is filled up with zero rows, whose
 * outputs are dropped. */
static int run_chunks(const nc_model *m, const samples *s, int64_t chunk, int pad, collector *c)
{
    /* the iterator wants the data as n rows of a sample; one sample may
     * come without its batch dimension, and is copied into one */
    nc_tensor *one = NULL;
    const nc_tensor *x = s->t;
    nc_status st = NC_OK;
    if (nc_tensor_ndim(x) < 1 || nc_tensor_shape(x)[0] != s->n) {
        int64_t shape[NC_MAX_DIMS];
        shape[0] = s->n;
        memcpy(shape + 1, s->sample, (size_t)s->sample_ndim * sizeof *shape);
        st = nc_tensor_create_from(nc_tensor_dtype(x), s->sample_ndim + 1, shape, nc_tensor_data_const(x), &one);
        x = one;
    }
    cli_progress prog;
    cli_progress_init(&prog);
    nc_batches_options bo = {.batch = chunk, .pad = pad, .progress = cli_progress_cb, .what = "run",
                             .progress_user = &prog};
    nc_batches *it = NULL;
    nc_batch b;
    if (st == NC_OK)
        st = nc_batches_create(x, NULL, &bo, &it);
    int rc = st == NC_OK ? CLI_OK : cli_fail(st);
    while (rc == CLI_OK && nc_batches_next(it, &b)) {
        nc_tensor *in = NULL, *y = NULL;
        if ((st = nc_batches_tensor(it, &b, s->sample_ndim, s->sample, &in)) == NC_OK) {
            const nc_tensor *inputs[1] = {in};
            st = nc_model_run(m, inputs, 1, &y, 1);
        }
        nc_tensor_free(in);
        if (st != NC_OK) {
            cli_progress_end(&prog);
            rc = cli_fail(st);
            break;
        }
        rc = collect(c, y, b.padded, b.count, b.first, s->n, nc_batches_count(it) == 1);
        nc_tensor_free(y);
    }
    cli_progress_end(&prog);
    nc_batches_free(it);
    nc_tensor_free(one);
    return rc;
}

static int run(const run_args *a, int64_t batch, int batch_given)
{
    nc_model *m = NULL;
    nc_tensor *data = NULL, *labels = NULL;
    samples s = {0};
    collector c = {0};
    nc_value_info in;
    int rc;
    nc_status st = nc_model_load_onnx(a->model, NULL, &m);
    if (st != NC_OK)
        return cli_fail(st);
    if (nc_model_num_inputs(m) != 1) {
        rc = cli_failf(NC_ERR_UNSUPPORTED, "%s has %zu inputs; run feeds exactly one", a->model,
                       nc_model_num_inputs(m));
        goto done;
    }
    if ((st = nc_model_input(m, 0, &in)) != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    if ((rc = cli_load_input(a, &in, &data)) != CLI_OK || (rc = cli_fit_samples(a, &in, data, &s)) != CLI_OK)
        goto done;
    if (a->labels && (rc = cli_check_labels(a, s.n, cli_model_classes(m), &labels)) != CLI_OK)
        goto done;
    int64_t chunk = batch;
    int fixed = in.shape[0] > 0;
    if (fixed) {
        if (batch_given && batch != in.shape[0])
            fprintf(stderr, "neuroc: note: %s has a fixed batch size of %lld; using it\n", a->model,
                    (long long)in.shape[0]);
        chunk = in.shape[0];
    } else if (chunk > s.n) {
        chunk = s.n;
    }
    if ((rc = run_chunks(m, &s, chunk, fixed, &c)) != CLI_OK)
        goto done;
    if (a->output && (st = cli_save_npy(a->output, c.all)) != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    if (labels)
        rc = cli_accuracy(c.all, labels, a->labels);
    else if (!a->output) {
        char ys[200];
        nc_value_info out;
        const char *name = nc_model_output(m, 0, &out) == NC_OK ? out.name : "0";
        printf("output %s: %s %s (use --output to save it)\n", name,
               cli_dtype_name(nc_tensor_dtype(c.all)),
               cli_shape(nc_tensor_ndim(c.all), nc_tensor_shape(c.all), ys, sizeof ys));
    }
done:
    nc_tensor_free(c.all);
    nc_tensor_free(labels);
    nc_tensor_free(data);
    nc_model_free(m);
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_args a = {0};
    cli_opt opts[] = {
        {"--input", "-i", &a.input, NULL},   {"--output", "-o", &a.output, NULL},
        {"--labels", "-l", &a.labels, NULL}, {"--batch", "-b", &a.batch, NULL},
        {"--raw-input", NULL, NULL, &a.raw_input}, {"--no-scale", NULL, NULL, &a.raw_input},
        {"--mean", NULL, &a.mean, NULL},           {"--std", NULL, &a.std, NULL},
        {"--timesteps", "-T", &a.timesteps, NULL}, {"--backend", NULL, &a.backend, NULL},
        {"--per-step", NULL, NULL, &a.per_step},   {"--record", NULL, &a.record, NULL},
        {"--layer", NULL, &a.layer, NULL},         {"--encoding", NULL, &a.encoding, NULL},
        {"--seed", NULL, &a.seed, NULL},           CLI_NIR_OPT_ROWS(a.nir),
        {"--cuda-strategy", NULL, &a.cuda_strategy, NULL}, {"--cuda-threshold", NULL, &a.cuda_threshold, NULL},
        {"--cuda-precision", NULL, &a.cuda_precision, NULL}, {"--verbose", "-v", NULL, &a.verbose},
        {"--rate-limit", NULL, NULL, &a.rate_limit},
        {NULL, NULL, NULL, NULL},
    };
    /* run's own order after the frame: its outputs may both be "-", one .npy fits */
    const cli_frame frame = {.cmd = "run", .help = CMD_RUN_HELP, .opts = opts, .one_arg = "expected one model file"};
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &a.model, &rc))
        return rc;
    if (cli_is_stdout(a.output) && cli_is_stdout(a.record))
        return cli_usage_error("run", "--output - and --record -: standard output holds one .npy");
    if ((cli_is_stdout(a.output) || cli_is_stdout(a.record)) && (rc = cli_stdout_for_data()) != CLI_OK)
        return rc;
    data_opts dopt = {.mean = a.mean, .std = a.std};
    if ((rc = cli_data_opts_check("run", &dopt)) != CLI_OK)
        return rc;
    if (!a.input)
        return cli_usage_error("run", "--input is required");
    int64_t batch;
    if (!parse_batch(a.batch, &batch))
        return cli_usage_error("run", "--batch must be a whole number from 1 to 2^30, not '%s'",
                               a.batch);
    if (cli_is_nir(a.model))
        return cli_run_snn(&a, batch);
    if (a.timesteps || a.backend || a.per_step || a.record || a.layer || a.encoding || a.seed ||
        cli_nir_given(&a.nir) || a.cuda_strategy || a.cuda_threshold || a.cuda_precision || a.rate_limit)
        return cli_usage_error("run", "-T, --backend, --per-step, --record, --layer, --encoding, "
                                      "--seed, --nir-reset, --nir-spike, --dt, --integration, "
                                      "--rate-limit and --cuda-* apply to spiking networks (.nir); "
                                      "%s is not one", a.model);
    return run(&a, batch, a.batch != NULL);
}
