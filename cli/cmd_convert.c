/* neuroc convert: an ONNX ANN → a spiking network (.nir), calibrated on the
 * user's data, with a JSON report. The option parsing is shared with eval. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char CMD_CONVERT_HELP[] =
    "usage: neuroc convert MODEL.onnx [--calib DATA] [-o MODEL.nir] [--report REPORT.json]\n"
    "                      [-T 8] [--levels 8] [--threshold p99.9|p99.99|pN|max|mse]\n"
    "                      [--per-channel] [--count-zeros] [--calib-samples N]\n"
    "                      [--reset subtract|zero] [--v0 half|zero] [--binary-spikes]\n"
    "                      [--signed-spikes | --plain-spikes] [--burst B]\n"
    "                      [--bias-correction] [--potential-correction]\n"
    "                      [--correction-rounds N]\n"
    "                      [--maxpool spikes|currents|average]\n"
    "                      [--qcfs-epochs N --labels Y [--lr X] [--batch B] [--seed S]]\n"
    "                      [--finetune-epochs N --labels Y [--train X] [--finetune-lr X]]\n"
    "                      [--no-scale] [--mean M1,.. --std S1,..]\n"
    "\n"
    "Converts a trained ANN (ONNX, ReLU / Clip / QCFS activations) into a spiking\n"
    "network of integrate-and-fire neurons and writes it as NIR. BatchNorm is\n"
    "folded, each activation becomes an IF layer whose threshold comes from the\n"
    "calibration data (or from a Clip / QCFS pattern), the last layer a readout.\n"
    "\n"
    "  -o, --output F     the spiking network (.nir); written complete or not at all\n"
    "                     (default: the model's base name with .nir, here)\n"
    "      --nir-strict   refuse to write a network whose standard NIR graph (/node,\n"
    "                     what other tools read) would approximate a layer: signed\n"
    "                     spikes, max pooling, per-window divisors (by default they\n"
    "                     are approximated there, the exact network kept for neuroc\n"
    "                     in the same file; the loss is printed); plain spikes\n"
    "      --portable     write the portable form (implies --nir-strict): NIR's own IF\n"
    "                     (spike when v > θ, reset to 0, v(0) = 0) that other tools run\n"
    "                     as neuroc does; the reset to zero costs accuracy (docs/nir.md)\n"
    "      --v0 M         with --portable, the old v(0): drop (default), spread (over\n"
    "                     -T steps of bias) or pulse (see neuroc export --help)\n"
    "      --threshold-scale S  with --portable, thresholds times S (see neuroc export)\n"
    "      --calib DATA   calibration samples (.npy, IDX, or file.h5:/dataset); without\n"
    "                     them, data-free: thresholds from Clip / QCFS patterns and\n"
    "                     from the BatchNorm statistics before each ReLU (--threshold\n"
    "                     of the rectified Gaussian N(beta, gamma^2); max = p99.9999),\n"
    "                     carried through the layers; where no BatchNorm lies before a\n"
    "                     ReLU, from the input taken as N(0, 1) a channel carried the\n"
    "                     same way (a warning names those layers: --calib fits better)\n"
    "      --report F     what conversion did, as JSON (thresholds, warnings)\n"
    "  -T, --timesteps T  the T the network is meant for (the mse clip; default 8)\n"
    "      --levels L     QCFS quantisation levels (default 8, or what a QCFS\n"
    "                     pattern in the model says)\n"
    "      --threshold M  how thresholds are calibrated: pN, the N-th percentile of\n"
    "                     the activations (p99.9, p99.99, any N in (0, 100]);\n"
    "                     max; or mse, the clip that minimises the\n"
    "                     error of the T-step quantised output. Default: max with\n"
    "                     signed spikes (they take back the spikes of a slow\n"
    "                     start), p99.9 with plain ones\n"
    "      --per-channel  a threshold per channel instead of per layer\n"
    "      --count-zeros  percentiles over all activations, zeros included\n"
    "                     (default: over the positive ones)\n"
    "      --calib-samples N  samples used for calibration (default 1000, or all)\n"
    "      --reset M      subtract (v -= threshold after a spike; default) or zero\n"
    "      --v0 V         initial membrane: half (threshold/2; default) or zero\n"
    "      --binary-spikes  spikes carry 1 and thresholds fold into the next weights\n"
    "      --signed-spikes  (the default) neurons also send negative spikes to take\n"
    "                     back the ones their cumulative input no longer supports\n"
    "                     (count = ReLU of the summed input / threshold): deep\n"
    "                     networks converge in far fewer steps; runs on cpu,\n"
    "                     cpu-fast and cuda, NIR extension nodes only\n"
    "      --plain-spikes  the plain IF neuron other tools and the Loihi simulator\n"
    "                     run (the default with --nir-strict, --portable or\n"
    "                     --reset zero); it keeps the spikes it fired while its\n"
    "                     input was still positive: slower in deep networks\n"
    "      --burst B      signed spikes: up to B spikes a step (default 2; 1 with\n"
    "                     --qcfs-epochs or QCFS patterns, exact at T = L with one\n"
    "                     spike a step); each threshold is its clip / B, so the\n"
    "                     rate code is B times finer at the same T (IF layers read\n"
    "                     by spiking max pools keep 1); cpu, cpu-fast, cuda, BPTT\n"
    "                     and the Loihi 2 simulator take it, not QCFS fine-tuning\n"
    "      --bias-correction  after calibration, run the SNN on the calibration data\n"
    "                     for T steps and add each channel's mean error (ANN\n"
    "                     activation - SNN rate x threshold) to the bias feeding\n"
    "                     it, layer by layer (Li et al. 2021); helps deep and\n"
    "                     residual networks at small T\n"
    "      --potential-correction  after calibration (and bias correction), run\n"
    "                     the SNN for T steps and shift each neuron's initial\n"
    "                     membrane v0 by T x its mean error (ANN activation - SNN\n"
    "                     rate x threshold) on the calibration data, layer by\n"
    "                     layer (Li et al. 2021): per neuron, so it also fixes\n"
    "                     errors at borders; helps most at small T\n"
    "      --correction-rounds N  repeat each correction N times per layer, each\n"
    "                     measuring the error again (default 1; 2 helps at T < 8)\n"
    "      --maxpool M    spikes (default: a MaxPool of spikes becomes SpikeMaxPool2d,\n"
    "                     whose rate is the max of its inputs' rates; one of the\n"
    "                     analog input's currents pools them as below, exactly),\n"
    "                     currents (max-pool the currents before the neuron:\n"
    "                     exact on the input's, overshoots on spikes) or average\n"
    "                     (replace MaxPool by average pooling)\n"
    "      --qcfs-epochs N  fine-tune the QCFS ANN for N epochs first (needs --labels)\n"
    "  -l, --labels Y     labels of the calibration samples (npy or IDX)\n"
    "      --lr X         Adam learning rate for fine-tuning (default 1e-3)\n"
    "  -b, --batch B      fine-tuning batch size (default 64); --qcfs-batch is the same\n"
    "      --seed S       seed for fine-tuning (default 0)\n"
    "      --finetune-epochs N  after conversion, fine-tune the SNN with BPTT at -T\n"
    "                     for N epochs (as 'neuroc finetune': Adam, triangle\n"
    "                     surrogate, batch --batch or 64) on --train X with\n"
    "                     --labels Y, or on all the calibration samples\n"
    "      --train X      training samples for --finetune-epochs; --labels then\n"
    "                     are theirs (not with --qcfs-epochs)\n"
    "      --finetune-lr X  peak learning rate of SNN fine-tuning (default 1e-4)\n" CLI_DATA_OPTS_HELP
    "\n"
    "Progress is shown on stderr when it is a terminal.\n";

/* ---------------------------------------------------------------- options */

static int parse_threshold(const char *s, nc_convert_options *o)
{
    if (strcmp(s, "max") == 0) {
        o->method = NC_THRESHOLD_MAX;
        return 1;
    }
    if (strcmp(s, "mse") == 0) {
        o->method = NC_THRESHOLD_MSE;
        return 1;
    }
    if (s[0] != 'p' || !s[1])
        return 0;
    char *end;
    errno = 0;
    double p = strtod(s + 1, &end);
    if (errno || *end || !(p > 0 && p <= 100))
        return 0;
    o->method = NC_THRESHOLD_PERCENTILE;
    o->percentile = p;
    return 1;
}

int cli_convert_args_given(const convert_args *a)
{
    return a->timesteps || a->levels || a->threshold || a->calib_samples || a->reset || a->v0 ||
           a->maxpool || a->qcfs_epochs || a->lr || a->qcfs_batch || a->per_channel || a->count_zeros ||
           a->binary_spikes || a->bias_correction || a->potential_correction || a->correction_rounds ||
           a->signed_spikes || a->plain_spikes || a->burst;
}

int cli_convert_options(const char *cmd, const convert_args *a, nc_convert_options *o)
{
    memset(o, 0, sizeof *o);
    long long v;
    if (a->threshold && !parse_threshold(a->threshold, o))
        return cli_usage_error(cmd, "--threshold must be pN (a percentile, 0 < N <= 100, e.g. p99.9), "
                                    "max or mse, not '%s'", a->threshold);
    if (a->timesteps) {
        if (!cli_parse_ll(a->timesteps, 1, 1 << 20, 0, &v))
            return cli_usage_error(cmd, "the conversion's T must be a whole number from 1 to 2^20, not "
                                        "'%s'", a->timesteps);
        o->timesteps = (int)v;
    }
    if (a->levels) {
        if (!cli_parse_ll(a->levels, 1, 1 << 16, 0, &v))
            return cli_usage_error(cmd, "--levels must be a whole number from 1 to 65536, not '%s'",
                                   a->levels);
        o->levels = (int)v;
    }
    if (a->calib_samples) {
        if (!cli_parse_ll(a->calib_samples, 1, INT64_MAX, 0, &v))
            return cli_usage_error(cmd, "--calib-samples must be a positive whole number, not '%s'",
                                   a->calib_samples);
        o->calib_samples = v;
    }
    static const char *const v0_names[] = {"half", "zero"};           /* v_init_zero 0, 1 */
    static const char *const maxpool_names[] = {"spikes", "currents", "average"}; /* nc_maxpool_mode order */
    int choice, rc;
    if ((rc = cli_parse_reset(cmd, "--reset", a->reset, &o->reset)) != CLI_OK)
        return rc;
    if ((rc = cli_parse_choice(cmd, "--v0", a->v0, v0_names, 2, 0, &o->v_init_zero)) != CLI_OK)
        return rc;
    if ((rc = cli_parse_choice(cmd, "--maxpool", a->maxpool, maxpool_names, 3, NC_MAXPOOL_SPIKES,
                               &choice)) != CLI_OK)
        return rc;
    o->maxpool = (nc_maxpool_mode)choice;
    if (a->qcfs_epochs) {
        if (!cli_parse_ll(a->qcfs_epochs, 0, 1 << 20, 0, &v))
            return cli_usage_error(cmd, "--qcfs-epochs must be a whole number >= 0, not '%s'",
                                   a->qcfs_epochs);
        o->qcfs_epochs = (int)v;
    }
    if (a->lr) {
        char *end;
        errno = 0;
        double lr = strtod(a->lr, &end);
        if (errno || *end || end == a->lr || !(lr > 0) || !isfinite(lr))
            return cli_usage_error(cmd, "--lr must be a positive number, not '%s'", a->lr);
        o->qcfs_lr = (float)lr;
    }
    if (a->qcfs_batch) {
        if (!cli_parse_ll(a->qcfs_batch, 1, 1 << 20, 0, &v))
            return cli_usage_error(cmd, "the fine-tuning batch must be a whole number from 1 to 2^20, "
                                        "not '%s'", a->qcfs_batch);
        o->qcfs_batch = (int)v;
    }
    if (a->seed) {
        if (!cli_parse_ll(a->seed, 0, INT64_MAX, 0, &v))
            return cli_usage_error(cmd, "--seed must be a whole number >= 0, not '%s'", a->seed);
        o->seed = (uint64_t)v;
    }
    o->per_channel = a->per_channel;
    o->count_zeros = a->count_zeros;
    o->binary_spikes = a->binary_spikes;
    if (a->signed_spikes && a->plain_spikes)
        return cli_usage_error(cmd, "--signed-spikes and --plain-spikes: choose one");
    o->spikes = a->signed_spikes ? NC_SPIKES_SIGNED : a->plain_spikes ? NC_SPIKES_PLAIN : NC_SPIKES_DEFAULT;
    if (a->burst) {
        if (!cli_parse_ll(a->burst, 1, 1024, 0, &v))
            return cli_usage_error(cmd, "--burst must be a whole number from 1 to 1024, not '%s'", a->burst);
        if (v > 1 && a->plain_spikes)
            return cli_usage_error(cmd, "--burst %lld is for signed spikes, not --plain-spikes", v);
        o->burst = (int)v;
    }
    if (a->correction_rounds) {
        if (!cli_parse_ll(a->correction_rounds, 1, 1000, 0, &v))
            return cli_usage_error(cmd, "--correction-rounds must be a whole number from 1 to 1000, not '%s'",
                                   a->correction_rounds);
        o->correction_rounds = (int)v;
    }
    o->bias_correction = a->bias_correction;
    o->potential_correction = a->potential_correction;
    return CLI_OK;
}

/* ---------------------------------------------------------------- summary */

/* A layer's threshold as the summary shows it: one value, or the range
 * over its channels (from nc_convert_report_layer). */
typedef struct th_entry {
    const char *name;
    double lo, hi;
    int64_t n;
} th_entry;

typedef struct th_list {
    th_entry *e;
    int n;
} th_list;

static int th_collect(const nc_convert_report *r, th_list *out)
{
    int n = nc_convert_report_num_layers(r);
    out->e = NULL, out->n = 0;
    if (n <= 0)
        return 1;
    if (!(out->e = calloc((size_t)n, sizeof *out->e)))
        return 0;
    for (int i = 0; i < n; i++) {
        nc_convert_layer_info L;
        if (nc_convert_report_layer(r, i, &L) != NC_OK || L.threshold_channels < 1 || !L.name[0])
            continue;
        out->e[out->n++] = (th_entry){L.name, L.threshold_min, L.threshold_max, L.threshold_channels};
    }
    return 1;
}

static const th_entry *find_th(const th_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->e[i].name, name) == 0)
            return &l->e[i];
    return NULL;
}

static void th_str(const th_entry *e, char *buf, size_t len)
{
    if (!e)
        snprintf(buf, len, "-");
    else if (e->n == 1)
        snprintf(buf, len, "%.4g", e->lo);
    else
        snprintf(buf, len, "%.4g..%.4g (%lld channels)", e->lo, e->hi, (long long)e->n);
}

void cli_print_conversion(const char *model, const nc_snn *s, const nc_convert_report *r)
{
    th_list th = {0};
    if (r && !th_collect(r, &th))
        th.n = 0; /* out of memory: no thresholds shown */
    size_t n = nc_snn_num_layers(s);
    int n_if = 0, n_signed = 0, n_burst = 0, matched = 0, w = 5;
    int64_t neurons = 0;
    for (size_t i = 0; i < n; i++) {
        nc_snn_layer_info L;
        if (nc_snn_layer_at(s, (int)i, &L) != NC_OK)
            continue;
        int len = (int)strlen(L.name);
        w = len > w ? (len < 48 ? len : 48) : w;
        if (nc_snn_kind_is_neuron(L.kind)) {
            int64_t k = 1;
            for (int d = 0; d < L.ndim; d++)
                k *= L.shape[d];
            neurons += k;
            n_if++;
            n_signed += L.kind == NC_SNN_SIGNED_IF;
            n_burst += L.max_spikes > 1;
        }
    }
    printf("converted %s: %zu layers, %d spiking with %lld neurons\n", model, n, n_if, (long long)neurons);
    printf("  %-3s %-*s %-14s %-16s %s\n", "#", w, "layer", "kind", "shape", "threshold");
    for (size_t i = 0; i < n; i++) {
        nc_snn_layer_info L;
        if (nc_snn_layer_at(s, (int)i, &L) != NC_OK)
            continue;
        char sh[96], tb[64] = "";
        const th_entry *e = find_th(&th, L.name);
        matched += e != NULL;
        if (e || L.kind == NC_SNN_IF || L.kind == NC_SNN_SIGNED_IF)
            th_str(e, tb, sizeof tb);
        char burst[32] = ""; /* θ is the clip / max_spikes */
        if (L.max_spikes > 1)
            snprintf(burst, sizeof burst, ", up to %d a step", L.max_spikes);
        printf("  %-3zu %-*.*s %-14s %-16s %s%s\n", i, w, w, L.name, nc_snn_kind_name(L.kind),
               cli_shape(L.ndim, L.shape, sh, sizeof sh), tb, burst);
    }
    if (!matched && th.n) {
        printf("thresholds:\n");
        for (int i = 0; i < th.n; i++) {
            char tb[64];
            th_str(&th.e[i], tb, sizeof tb);
            printf("  %-*.*s %s\n", w, w, th.e[i].name, tb);
        }
    }
    size_t nw = r ? nc_convert_report_num_warnings(r) : 0, nn = r ? nc_convert_report_num_notes(r) : 0;
    if (nw) {
        printf("warnings:\n");
        for (size_t i = 0; i < nw; i++)
            printf("  - %s\n", nc_convert_report_warning(r, i));
    }
    if (nn) {
        printf("notes:\n");
        for (size_t i = 0; i < nn; i++)
            printf("  - %s\n", nc_convert_report_note(r, i));
    }
    if (n_burst)
        printf("signed spikes in bursts: %d IF layers send up to several spikes a step (cpu, cpu-fast, cuda, BPTT, "
               "Loihi 2 simulation); other NIR tools and Loihi 1 need --plain-spikes\n",
               n_burst);
    else if (n_signed) /* the default since 2026-12: say what it means for the file's readers */
        printf("signed spikes (SignedIF): neuroc runs them (cpu, cpu-fast, cuda, Loihi 2 simulation); other NIR "
               "tools and Loihi 1 need --plain-spikes\n");
    free(th.e);
}

/* ---------------------------------------------------------------- fine-tuning */

static nc_status ft_epoch_line(const nc_snn *s, const nc_finetune_epoch *e, void *user)
{
    (void)s;
    cli_progress_end(user);
    printf("fine-tune epoch %d/%d  loss %.4f  acc %.2f%%  batch %d  %.0f samples/s  %.2f s\n", e->epoch, e->epochs,
           e->loss, 100.0 * e->accuracy, e->batch, e->seconds > 0 ? (double)e->samples / e->seconds : 0.0,
           e->seconds);
    fflush(stdout);
    return NC_OK;
}

/* BPTT fine-tuning of the converted network on x/y (`--finetune-epochs`). */
static int convert_finetune(nc_snn *s, const nc_tensor *x, const nc_tensor *y, const nc_convert_options *co,
                            int epochs, const char *lr, cli_progress *prog)
{
    nc_finetune_options o;
    nc_finetune_options_init(&o);
    o.timesteps = co->timesteps ? co->timesteps : 8;
    o.epochs = epochs;
    o.batch = co->qcfs_batch ? co->qcfs_batch : 64;
    o.seed = co->seed;
    if (lr) {
        char *end;
        errno = 0;
        double v = strtod(lr, &end);
        if (errno || *end || end == lr || !(v > 0) || !isfinite(v))
            return cli_usage_error("convert", "--finetune-lr must be a positive number, not '%s'", lr);
        o.lr = (float)v;
    }
    o.progress = cli_progress_cb;
    o.progress_user = prog;
    o.on_epoch = ft_epoch_line;
    o.epoch_user = prog;
    o.dist = co->dist; /* under mpirun: data parallel, batch per rank */
    nc_status st = nc_snn_finetune(s, x, y, NULL, NULL, &o);
    cli_progress_end(prog);
    return st == NC_OK ? CLI_OK : cli_fail(st);
}

/* ---------------------------------------------------------------- command */

/* No -o: the model's base name with .nir, in the current directory (said
 * with the "wrote" line, once it is written: nothing is announced that a
 * later error would leave unwritten). NULL when the name is empty. */
static const char *default_output(const char *model, char *buf, size_t len)
{
    const char *base = strrchr(model, '/');
    base = base ? base + 1 : model;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".onnx") == 0)
        n -= 5;
    if (n == 0 || n + 5 > len)
        return NULL;
    snprintf(buf, len, "%.*s.nir", (int)n, base);
    return buf;
}

int cmd_convert(int argc, char **argv)
{
    convert_args c = {0};
    data_opts d = {0};
    const char *output = NULL, *report = NULL, *labels_path = NULL;
    const char *train_path = NULL, *ft_epochs = NULL, *ft_lr = NULL;
    const char *pos[1];
    int n_pos, nir_strict = 0, portable = 0;
    const char *v0_mode = NULL, *th_scale = NULL;
    cli_opt opts[] = {
        {"--calib", NULL, &c.calib, NULL},
        {"--nir-strict", NULL, NULL, &nir_strict},
        {"--portable", NULL, NULL, &portable},
        {"--v0", NULL, &v0_mode, NULL},
        {"--threshold-scale", NULL, &th_scale, NULL},
        {"--output", "-o", &output, NULL},
        {"--report", NULL, &report, NULL},
        {"--timesteps", "-T", &c.timesteps, NULL},
        {"--labels", "-l", &labels_path, NULL},
        {"--batch", "-b", &c.qcfs_batch, NULL},
        {"--qcfs-batch", NULL, &c.qcfs_batch, NULL},
        {"--train", NULL, &train_path, NULL},
        {"--finetune-epochs", NULL, &ft_epochs, NULL},
        {"--finetune-lr", NULL, &ft_lr, NULL},
        CLI_CONVERT_OPTS(c),
        CLI_DATA_OPTS(d),
        {NULL, NULL, NULL, NULL},
    };
    int rc = cli_parse(argc, argv, opts, pos, 1, &n_pos, CMD_CONVERT_HELP);
    if (rc)
        return rc < 0 ? CLI_OK : rc;
    if (n_pos != 1)
        return cli_usage_error("convert", "expected one model file (.onnx)");
    if (!portable && (v0_mode || th_scale))
        return cli_usage_error("convert", "--v0 and --threshold-scale go with --portable");
    if (!c.calib && labels_path && !train_path)
        return cli_usage_error("convert", "--labels without --calib or --train: they label no samples");
    if (!c.calib && (c.bias_correction || c.potential_correction))
        return cli_usage_error("convert", "--bias-correction and --potential-correction need --calib (they compare "
                                          "the SNN with the ANN on samples)");
    char default_out[4096];
    if (!output && !(output = default_output(pos[0], default_out, sizeof default_out)))
        return cli_usage_error("convert", "cannot derive an output name from '%s'; give -o MODEL.nir", pos[0]);
    nc_convert_options o;
    if ((rc = cli_convert_options("convert", &c, &o)) != CLI_OK || (rc = cli_data_opts_check("convert", &d)))
        return rc;
    /* a file for other tools: their IF neuron, unless signed spikes were asked for (then refused by name) */
    if ((nir_strict || portable) && o.spikes == NC_SPIKES_DEFAULT)
        o.spikes = NC_SPIKES_PLAIN;
    if (o.qcfs_epochs > 0 && !labels_path)
        return cli_usage_error("convert", "--qcfs-epochs needs --labels (the calibration samples' labels)");
    long long n_ft = 0;
    if (ft_epochs && !cli_parse_ll(ft_epochs, 0, 1 << 20, 0, &n_ft))
        return cli_usage_error("convert", "--finetune-epochs must be a whole number >= 0, not '%s'", ft_epochs);
    if (n_ft > 0 && !labels_path)
        return cli_usage_error("convert", "--finetune-epochs needs --labels (of --train, or of the calibration "
                                          "samples)");
    if (train_path && o.qcfs_epochs > 0)
        return cli_usage_error("convert", "--train with --qcfs-epochs: --labels cannot be both the training and "
                                          "the calibration samples' labels");
    const char *model_path = pos[0];
    if ((rc = cli_dist_same_file("model", model_path)) != CLI_OK)
        return rc;

    nc_model *m = NULL;
    nc_tensor *calib = NULL, *labels = NULL, *train = NULL;
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    nc_value_info in;
    cli_progress prog;
    cli_progress_init(&prog);
    nc_status st = nc_model_load_onnx(model_path, NULL, &m);
    if (st != NC_OK) {
        rc = cli_fail(st);
        goto loaded;
    }
    if (nc_model_num_inputs(m) != 1) {
        rc = cli_failf(NC_ERR_UNSUPPORTED, "%s has %zu inputs; conversion takes a model with one",
                       model_path, nc_model_num_inputs(m));
        goto loaded;
    }
    if ((st = nc_model_input(m, 0, &in)) != NC_OK) {
        rc = cli_fail(st);
        goto loaded;
    }
    if (c.calib && ((rc = cli_load_data("convert", c.calib, &d, &in, &calib)) != CLI_OK ||
                    (rc = cli_fit_rows(c.calib, &in, &calib)) != CLI_OK))
        goto loaded;
    if (train_path && n_ft > 0 &&
        ((rc = cli_load_data("convert", train_path, &d, &in, &train)) != CLI_OK ||
         (rc = cli_fit_rows(train_path, &in, &train)) != CLI_OK))
        goto loaded;
    if (labels_path && (rc = cli_load_labels(labels_path, nc_tensor_shape(train ? train : calib)[0],
                                             train ? train_path : c.calib, &labels)) != CLI_OK)
        goto loaded;
loaded:
    /* under mpirun: a file one rank could not read stops every rank here */
    if ((rc = cli_dist_agree(rc)) != CLI_OK)
        goto done;
    o.progress = cli_progress_cb;
    o.progress_user = &prog;
    o.dist = cli_dist();
    if (nc_dist_size(o.dist) > 1 && (o.qcfs_epochs > 0 || n_ft > 0))
        printf("data parallel over %d ranks: batch %d per rank, effective batch %d; learning rate not scaled (the "
               "steps of one process with the effective batch)\n", nc_dist_size(o.dist),
               o.qcfs_batch ? o.qcfs_batch : 64, nc_dist_size(o.dist) * (o.qcfs_batch ? o.qcfs_batch : 64));
    st = nc_convert(m, calib, train ? NULL : labels, &o, &s, &rep);
    cli_progress_end(&prog);
    if (st != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    cli_print_conversion(model_path, s, rep);
    if (n_ft > 0 &&
        (rc = convert_finetune(s, train ? train : calib, labels, &o, (int)n_ft, ft_lr, &prog)) != CLI_OK)
        goto done;
    /* every rank holds the same network; rank 0 writes it */
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = nir_strict || portable;
    if (portable) {
        nc_snn *p = NULL;
        int pulses = 0;
        nc_portable_options po;
        const char *spread_T = v0_mode && strcmp(v0_mode, "spread") == 0 ? c.timesteps : NULL;
        if (spread_T == NULL && v0_mode && strcmp(v0_mode, "spread") == 0) {
            rc = cli_usage_error("convert", "--v0 spread spreads v(0) over the -T steps the conversion targets: give -T");
            goto done;
        }
        if ((rc = cli_portable_options("convert", 1, v0_mode, spread_T, th_scale, &po)) != CLI_OK)
            goto done;
        if ((st = nc_snn_make_portable(s, &po, &p, &pulses)) != NC_OK) {
            rc = cli_fail(st);
            goto done;
        }
        nc_snn_free(s);
        s = p;
        printf("portable: NIR's IF (v > θ⁻, reset to 0, v(0) = 0), v(0) %s (%d layers)\n",
               po.v0 == NC_PORTABLE_V0_PULSE ? "fed by a first-step pulse" : po.v0 ? "spread over T steps" : "dropped",
               po.v0 ? pulses : 0);
    }
    /* a report that cannot be written stops the command before the model is */
    if (cli_is_root() && ((report && (st = nc_output_check(report)) != NC_OK) ||
                          (st = nc_snn_save_nir_with(s, output, &so)) != NC_OK)) {
        rc = cli_fail(st);
        goto done;
    }
    printf("wrote %s%s\n", output, output == default_out ? " (no -o given: the model's name, in the current directory)" : "");
    if (cli_is_root())
        cli_print_nir_graphs(output);
    if (report && cli_is_root()) {
        /* the report states what the file's standard NIR graph loses */
        char *json = cli_report_with_nir(rep ? nc_convert_report_json(rep) : "{}", output);
        rc = json ? cli_write_text(report, json) : cli_failf(NC_ERR_NOMEM, "out of memory");
        free(json);
        if (rc != CLI_OK)
            goto done;
        printf("wrote %s\n", report);
    }
    rc = CLI_OK;
done:
    nc_convert_report_free(rep);
    nc_snn_free(s);
    nc_tensor_free(labels);
    nc_tensor_free(train);
    nc_tensor_free(calib);
    nc_model_free(m);
    return rc;
}
