/* neuroc convert: an ONNX ANN → a spiking network (.nir), calibrated on the
 * user's data, with a JSON report. Its options are shared with eval and bench (convert_opts.c). */
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
    "                      [--graded-nonlinear]\n"
    "                      [--bias-correction] [--potential-correction]\n"
    "                      [--correction-rounds N]\n"
    "                      [--maxpool spikes|currents|average]\n"
    "                      [--keep-avgpool]\n"
    "                      [--qcfs-epochs N --labels Y [--lr X] [--batch B] [--seed S]]\n"
    "                      [--finetune-epochs N --labels Y [--train X] [--finetune-lr X]\n"
    "                       [--energy-weight X] [--finetune-T N] [-j N]]\n"
    "                      [--target-loss P [--labels Y] [--target-max-T 32]\n"
    "                       [--holdout N | --validation X [--validation-labels Y]]]\n"
    "                      [--no-scale] [--mean M1,.. --std S1,..]\n"
    "\n"
    "Converts a trained ANN (ONNX, ReLU / Clip / QCFS activations) into a spiking\n"
    "network of integrate-and-fire neurons and writes it as NIR. BatchNorm is\n"
    "folded, each activation becomes an IF layer whose threshold comes from the\n"
    "calibration data (or from a Clip / QCFS pattern), the last layer a readout.\n"
    "SiLU, Sigmoid, HardSigmoid, HardSwish, GELU (Erf or Tanh form), Tanh and\n"
    "squeeze-excitation gates (a product of two activations) become Nonlinear\n"
    "layers, followed by signed spikes (see --graded-nonlinear).\n"
    "\n"
    "  -o, --output F     the spiking network (.nir); written complete or not at all\n"
    "                     (a file: HDF5 cannot write to standard output)\n"
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
    "      --report F     what conversion did, as JSON (thresholds, warnings);\n"
    "                     F = -: on standard output (the rest goes to stderr)\n"
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
    "      --burst B      signed spikes: up to B spikes a step (default: 2, or\n"
    "                     the power of two up to 64 a deep network needs: its\n"
    "                     readout quantised as at T = 32 within centred cosine\n"
    "                     0.95 of its rate limit on the calibration data; 1 with\n"
    "                     --qcfs-epochs or QCFS patterns, exact at T = L with one\n"
    "                     spike a step); each threshold is its clip / B, so the\n"
    "                     rate code is B times finer at the same T (IF layers read\n"
    "                     by spiking max pools keep 1); cpu, cpu-fast, cuda, BPTT\n"
    "                     and the Loihi 2 simulator take it, not QCFS fine-tuning\n"
    "      --graded-nonlinear  SiLU, Sigmoid, Tanh, HardSigmoid, HardSwish, GELU\n"
    "                     and products of activations (squeeze-excitation gates)\n"
    "                     become Nonlinear layers (the running mean's f, sent as\n"
    "                     increments; cpu backend); by default a two-sided signed\n"
    "                     IF neuron (threshold from |x| on the calibration data)\n"
    "                     turns their graded output into spikes before a Conv or\n"
    "                     Gemm reads it; with this option the Conv/Gemm reads the\n"
    "                     graded values (multiply-adds, closer to the ANN at small T)\n"
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
    "      --keep-avgpool  keep every average pooling a pooling layer; by default\n"
    "                     one of an IF layer's spikes (a window of at most 5 taps,\n"
    "                     one divisor) read by a Conv, or a Gemm after a flatten,\n"
    "                     folds into it: that layer reads the spikes (additions),\n"
    "                     not their pooled sums (multiply-adds); same values\n"
    "      --target-loss P  choose the operating point: the conversion of least energy\n"
    "                     within P accuracy points of the ANN (e.g. 0.5) at some\n"
    "                     T <= --target-max-T (default 32), measured on the last\n"
    "                     --holdout samples of --calib (default: half, at most 2000)\n"
    "                     against --labels, or against the ANN's own predictions;\n"
    "                     searches what is left at its default, one option at a\n"
    "                     time: --burst (1..16), --threshold (max, p99.99, p99.9),\n"
    "                     --per-channel, --bias-correction. The T found is stored in\n"
    "                     the .nir: eval and run use it when -T is not given\n"
    "      --validation X  score the search's candidates on these samples instead\n"
    "                     of held-back --calib ones (all of --calib then calibrates\n"
    "                     and fine-tunes); give data the ANN did not train on: on\n"
    "                     its own training rows the ANN scores higher than on new\n"
    "                     data, and a fine-tuned candidate looks that much worse\n"
    "      --validation-labels Y  their labels (else: the ANN's predictions)\n"
    "      --qcfs-epochs N  fine-tune the QCFS ANN for N epochs first (needs --labels)\n"
    "  -l, --labels Y     labels of the calibration samples (npy or IDX)\n"
    "      --lr X         Adam learning rate for fine-tuning (default 1e-3)\n"
    "  -b, --batch B      fine-tuning batch size (default 64); --qcfs-batch is the same\n"
    "      --seed S       seed for fine-tuning (default 0)\n"
    "      --finetune-epochs N  after conversion, fine-tune the SNN with BPTT at -T\n"
    "                     for N epochs (as 'neuroc finetune': Adam, triangle\n"
    "                     surrogate, batch --batch or 64) on --train X with\n"
    "                     --labels Y, or on all the calibration samples. With\n"
    "                     --target-loss the search fine-tunes its best conversion\n"
    "                     at T = 1, 2, 4, ... below the T it found (lr 3e-3,\n"
    "                     thresholds trained) on the samples it does not hold\n"
    "                     back, and keeps the first T within the target\n"
    "      --finetune-T N  the search fine-tunes at this T only (a latency you\n"
    "                     need; up to --target-max-T)\n"
    "      --train X      training samples for --finetune-epochs; --labels then\n"
    "                     are theirs (not with --qcfs-epochs)\n"
    "      --finetune-lr X  peak learning rate of SNN fine-tuning (default 1e-4;\n"
    "                     3e-3 in the --target-loss search)\n"
    "      --energy-weight X  fine-tuning adds X x (the spikes' energy / the ANN's\n"
    "                     on the same synapses) to its loss (default 0)\n"
    "  -j, --threads N    threads of fine-tuning's element-wise layers (default 1)\n" CLI_DATA_OPTS_HELP
    "\n"
    "Progress is shown on stderr when it is a terminal.\n";

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
                            int epochs, float lr, cli_progress *prog)
{
    nc_finetune_options o;
    nc_finetune_options_init(&o);
    o.timesteps = co->timesteps ? co->timesteps : 8;
    o.epochs = epochs;
    o.batch = co->qcfs_batch ? co->qcfs_batch : 64;
    o.seed = co->seed;
    if (lr > 0)
        o.lr = lr;
    o.energy_weight = co->finetune_energy_weight;
    o.threads = co->threads;
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

/* --portable: the network with NIR's plain IF neurons in place of *s. */
static int convert_portable(nc_snn **s, const char *v0_mode, const char *timesteps, const char *th_scale)
{
    nc_snn *p = NULL;
    int pulses = 0;
    nc_portable_options po;
    const char *spread_T = v0_mode && strcmp(v0_mode, "spread") == 0 ? timesteps : NULL;
    if (spread_T == NULL && v0_mode && strcmp(v0_mode, "spread") == 0)
        return cli_usage_error("convert", "--v0 spread spreads v(0) over the -T steps the conversion targets: give -T");
    int rc = cli_portable_options("convert", 1, v0_mode, spread_T, th_scale, &po);
    if (rc != CLI_OK)
        return rc;
    nc_status st = nc_snn_make_portable(*s, &po, &p, &pulses);
    if (st != NC_OK)
        return cli_fail(st);
    nc_snn_free(*s);
    *s = p;
    printf("portable: NIR's IF (v > θ⁻, reset to 0, v(0) = 0), v(0) %s (%d layers)\n",
           po.v0 == NC_PORTABLE_V0_PULSE ? "fed by a first-step pulse" : po.v0 ? "spread over T steps" : "dropped",
           po.v0 ? pulses : 0);
    return CLI_OK;
}

/* --report: the conversion report and what the file's standard NIR graph loses. */
static int convert_write_report(const char *report, const nc_convert_report *rep, const char *output)
{
    char *json = cli_report_with_nir(rep ? nc_convert_report_json(rep) : "{}", output);
    int rc = json ? cli_write_text(report, json) : cli_failf(NC_ERR_NOMEM, "out of memory");
    free(json);
    if (rc != CLI_OK)
        return rc;
    printf("wrote %s\n", report);
    return CLI_OK;
}

typedef struct finetune_args {
    const char *train, *epochs, *lr, *energy, *labels, *timesteps;
} finetune_args;

/* --finetune-epochs and what goes with it: fine-tuning after conversion
 * (*n_ft epochs at *lr), or, with --target-loss, inside the search
 * (o->finetune_epochs; *n_ft is then 0). */
static int finetune_options(const finetune_args *a, nc_convert_options *o, long long *n_ft, float *lr)
{
    if (a->epochs && !cli_parse_ll(a->epochs, 0, 1 << 20, 0, n_ft))
        return cli_usage_error("convert", "--finetune-epochs must be a whole number >= 0, not '%s'", a->epochs);
    if (*n_ft > 0 && !a->labels)
        return cli_usage_error("convert", "--finetune-epochs needs --labels (of --train, or of the calibration "
                                          "samples)");
    if (a->lr && (!cli_parse_float(a->lr, 0.0, lr) || !(*lr > 0.0f)))
        return cli_usage_error("convert", "--finetune-lr must be a positive number, not '%s'", a->lr);
    if (a->energy && !cli_parse_float(a->energy, 0.0, &o->finetune_energy_weight))
        return cli_usage_error("convert", "--energy-weight must be a number >= 0, not '%s'", a->energy);
    if (a->energy && !*n_ft)
        return cli_usage_error("convert", "--energy-weight weighs the energy in fine-tuning: give "
                                          "--finetune-epochs");
    long long ft_t = 0;
    if (a->timesteps && !(o->target_loss > 0 && *n_ft > 0))
        return cli_usage_error("convert", "--finetune-T is the one T the --target-loss search fine-tunes at: give "
                                          "--target-loss and --finetune-epochs (without a search, -T is the T)");
    if (a->timesteps && !cli_parse_ll(a->timesteps, 1, 4096, 0, &ft_t))
        return cli_usage_error("convert", "--finetune-T must be a whole number from 1 to 4096, not '%s'",
                               a->timesteps);
    o->finetune_timesteps = (int)ft_t;
    if (o->target_loss > 0 && *n_ft > 0) { /* the search fine-tunes its candidates */
        if (a->train)
            return cli_usage_error("convert", "--train with --target-loss: the search fine-tunes on the calibration "
                                              "samples it does not hold back; leave out --train");
        o->finetune_epochs = (int)*n_ft;
        o->finetune_lr = *lr;
        *n_ft = 0;
    }
    if (a->train && o->qcfs_epochs > 0)
        return cli_usage_error("convert", "--train with --qcfs-epochs: --labels cannot be both the training and "
                                          "the calibration samples' labels");
    return CLI_OK;
}

/* --validation, --validation-labels (the search's scoring rows) and -j. */
static int validation_options(const char *val, const char *val_labels, const char *threads, nc_convert_options *o)
{
    long long v;
    if ((val || val_labels) && !(o->target_loss > 0))
        return cli_usage_error("convert", "--validation is what the operating point search scores on: give "
                                          "--target-loss too");
    if (val_labels && !val)
        return cli_usage_error("convert", "--validation-labels without --validation: they label no samples");
    if (val && o->holdout_samples)
        return cli_usage_error("convert", "--validation replaces the held-back calibration samples: leave out "
                                          "--holdout");
    if (threads && !cli_parse_ll(threads, 1, 1024, 0, &v))
        return cli_usage_error("convert", "--threads wants a number 1..1024, not '%s'", threads);
    o->threads = threads ? (int)v : 0;
    return CLI_OK;
}

int cmd_convert(int argc, char **argv)
{
    convert_args c = {0};
    data_opts d = {0};
    const char *output = NULL, *report = NULL, *labels_path = NULL;
    const char *train_path = NULL, *ft_epochs = NULL, *ft_lr = NULL, *ft_energy = NULL;
    const char *val_path = NULL, *val_labels_path = NULL, *threads = NULL, *ft_t = NULL;
    int nir_strict = 0, portable = 0;
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
        {"--energy-weight", NULL, &ft_energy, NULL},
        {"--validation", NULL, &val_path, NULL},
        {"--validation-labels", NULL, &val_labels_path, NULL},
        {"--threads", "-j", &threads, NULL},
        {"--finetune-T", NULL, &ft_t, NULL},
        CLI_CONVERT_OPTS(c),
        CLI_DATA_OPTS(d),
        {NULL, NULL, NULL, NULL},
    };
    const cli_frame frame = {.cmd = "convert", .help = CMD_CONVERT_HELP, .opts = opts, .nir_out_flag = "-o",
                             .nir_out = &output, .data_out = &report, .one_arg = "expected one model file (.onnx)"};
    const char *model_path;
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &model_path, &rc))
        return rc;
    if (!portable && (v0_mode || th_scale))
        return cli_usage_error("convert", "--v0 and --threshold-scale go with --portable");
    if (!c.calib && labels_path && !train_path)
        return cli_usage_error("convert", "--labels without --calib or --train: they label no samples");
    if (!c.calib && (c.bias_correction || c.potential_correction))
        return cli_usage_error("convert", "--bias-correction and --potential-correction need --calib (they compare "
                                          "the SNN with the ANN on samples)");
    char default_out[4096];
    if (!output && !(output = default_output(model_path, default_out, sizeof default_out)))
        return cli_usage_error("convert", "cannot derive an output name from '%s'; give -o MODEL.nir", model_path);
    nc_convert_options o;
    if ((rc = cli_convert_options("convert", &c, &o)) != CLI_OK || (rc = cli_data_opts_check("convert", &d)))
        return rc;
    /* a file for other tools: their IF neuron, unless signed spikes were asked for (then refused by name) */
    if ((nir_strict || portable) && o.spikes == NC_SPIKES_DEFAULT)
        o.spikes = NC_SPIKES_PLAIN;
    if (o.qcfs_epochs > 0 && !labels_path)
        return cli_usage_error("convert", "--qcfs-epochs needs --labels (the calibration samples' labels)");
    if ((rc = validation_options(val_path, val_labels_path, threads, &o)) != CLI_OK)
        return rc;
    long long n_ft = 0;
    float lr_ft = 0;
    const finetune_args ft = {train_path, ft_epochs, ft_lr, ft_energy, labels_path, ft_t};
    if ((rc = finetune_options(&ft, &o, &n_ft, &lr_ft)) != CLI_OK)
        return rc;
    if ((rc = cli_dist_same_file("model", model_path)) != CLI_OK)
        return rc;

    nc_model *m = NULL;
    nc_tensor *calib = NULL, *labels = NULL, *train = NULL, *val = NULL, *val_labels = NULL;
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
    if ((c.calib && (rc = cli_load_data("convert", c.calib, &d, &in, &calib)) != CLI_OK) ||
        (train_path && n_ft > 0 && (rc = cli_load_data("convert", train_path, &d, &in, &train)) != CLI_OK))
        goto loaded;
    if (labels_path && (rc = cli_load_labels(labels_path, nc_tensor_shape(train ? train : calib)[0],
                                             train ? train_path : c.calib, cli_model_classes(m), &labels)) != CLI_OK)
        goto loaded;
    if (val_path && (rc = cli_load_data("convert", val_path, &d, &in, &val)) != CLI_OK)
        goto loaded;
    if (val_labels_path && (rc = cli_load_labels(val_labels_path, nc_tensor_shape(val)[0], val_path,
                                                 cli_model_classes(m), &val_labels)) != CLI_OK)
        goto loaded;
    o.validation = val, o.validation_labels = val_labels;
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
        (rc = convert_finetune(s, train ? train : calib, labels, &o, (int)n_ft, lr_ft, &prog)) != CLI_OK)
        goto done;
    /* every rank holds the same network; rank 0 writes it */
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = nir_strict || portable;
    if (portable && (rc = convert_portable(&s, v0_mode, c.timesteps, th_scale)) != CLI_OK)
        goto done;
    /* a report that cannot be written stops the command before the model is */
    if (cli_is_root() && ((report && !cli_is_stdout(report) && (st = nc_output_check(report)) != NC_OK) ||
                          (st = nc_snn_save_nir_with(s, output, &so)) != NC_OK)) {
        rc = cli_fail(st);
        goto done;
    }
    printf("wrote %s%s\n", output, output == default_out ? " (no -o given: the model's name, in the current directory)" : "");
    if (cli_is_root())
        cli_print_nir_graphs(output);
    rc = report && cli_is_root() ? convert_write_report(report, rep, output) : CLI_OK;
    if (rc == CLI_OK)
        cli_print_operating_point(rep);
done:
    nc_convert_report_free(rep);
    nc_snn_free(s);
    nc_tensor_free(labels);
    nc_tensor_free(val);
    nc_tensor_free(val_labels);
    nc_tensor_free(train);
    nc_tensor_free(calib);
    nc_model_free(m);
    return rc;
}
