/* neuroc eval: accuracy of a spiking network at every timestep against its
 * ANN, spike rates, synaptic operations and an energy estimate; a .onnx
 * model is converted in memory first. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char CMD_EVAL_HELP[] =
    "usage: neuroc eval MODEL.nir|MODEL.onnx --data X --labels Y [-T 64]\n"
    "                   [--backend cpu|cpu-fast] [--batch B] [--limit N] [--report R.json]\n"
    "                   [--plot ACC.svg] [--ann MODEL.onnx] [--encoding direct|poisson]\n"
    "                   [--seed S] [--no-scale] [--mean M1,.. --std S1,..]\n"
    "                   [conversion options, for a .onnx model]\n"
    "\n"
    "Runs a spiking network on labelled data for T steps and reports its accuracy\n"
    "after every step t (the prediction at t is the argmax of the readout summed\n"
    "over steps 1..t), the ANN's accuracy on the same data, spike rates per layer,\n"
    "synaptic operations per inference against the ANN's multiply-accumulates,\n"
    "and an energy estimate. A .onnx model is converted in memory (the ANN it\n"
    "came from is then the comparison); a .nir model is compared with --ann.\n"
    "\n"
    "  -d, --data X       samples (.npy, IDX, or file.h5:/dataset)\n"
    "  -l, --labels Y     their integer labels (.npy or IDX)\n"
    "  -T, --timesteps T  steps to run (default: the network's operating T, set by\n"
    "                     convert --target-loss, else 64); accuracy is reported at\n"
    "                     t = 1, 2, 4, ... and T, and at every t in the report\n"
    "      --backend B    cpu (the reference backend, the oracle; default) or\n"
    "                     cpu-fast (event-driven, vectorised; same results)\n"
    "  -b, --batch B      samples per run (default 64)\n"
    "  -n, --limit N      evaluate the first N samples only\n"
    "      --report F     everything as JSON (accuracy at every t, per-layer spike\n"
    "                     rates and synaptic ops, MACs, energy with its source);\n"
    "                     F = -: on standard output (the rest goes to stderr)\n"
    "      --plot F       an SVG chart: accuracy against t with the ANN as a line,\n"
    "                     and spike rates per layer as bars\n"
    "      --ann M        the ANN (.onnx) to compare a .nir network with\n"
    "      --encoding E   direct (the analog input is the current every step;\n"
    "                     default) or poisson (spikes with p = clamp(x, 0, 1))\n"
    "      --seed S       seed for poisson encoding and fine-tuning (default 0)\n"
    "      --nir-reset M  other tools' NIR files (neuroc's own carry their semantics):\n"
    "                     after a spike spec (default: v = v_reset, NIR's), zero\n"
    "                     (the same), subtract (v -= v_threshold) or subtract-snntorch\n"
    "                     (snntorch's reset_delay=False: a v left above θ is tested as m − θ)\n"
    "      --nir-spike S  their spike test: gt (default: v > v_threshold, NIR's) or ge\n"
    "      --dt SECONDS   their time step: LIF/CubaLIF/LI/CubaLI leaks, Delay (1e-4)\n"
    "      --integration M  of their leaks: euler (default) or exact (exponential)\n" CLI_DATA_OPTS_HELP
    "\n"
    "Conversion options (a .onnx model; see 'neuroc convert --help'):\n"
    "      --calib DATA   calibration samples (default: --data)\n"
    "      --convert-T T  the T the conversion targets (mse clip; default 8)\n"
    "      --levels L  --threshold pN|max|mse  --per-channel  --count-zeros\n"
    "      --calib-samples N  --reset subtract|zero  --v0 half|zero\n"
    "      --binary-spikes  --signed-spikes | --plain-spikes  --burst B  --graded-nonlinear\n      --maxpool spikes|currents|average  --bias-correction\n"
    "      --keep-avgpool\n"
    "      --potential-correction  --correction-rounds N\n"
    "      --qcfs-epochs N  --lr X  --qcfs-batch B\n"
    "      --calib-labels Y  labels of --calib for fine-tuning (default: --labels\n"
    "                     when --calib is --data)\n"
    "\n"
    "Energy is an estimate from per-operation CMOS figures (45 nm, Horowitz,\n"
    "ISSCC 2014): 0.9 pJ a synaptic op on a spike (a float add), 4.6 pJ one on a\n"
    "graded value and an ANN MAC (a float multiply-add). Graded: the analog input,\n"
    "bursts of k spikes in a step (--burst), any current or sum. It is given for\n"
    "every t (stopping after t steps) and leaves out memory, data movement and\n"
    "neuron updates: it is not a chip measurement. With an ANN, the operating\n"
    "point line names the first t within 0.5 points of it.\n"
    "\n"
    "Under mpirun (an MPI build) every rank evaluates a contiguous share of the\n"
    "batches and rank 0 prints and writes the single-process result.\n"
    "\n"
    "Progress is shown on stderr when it is a terminal.\n";

typedef struct eval_args {
    const char *data, *labels, *timesteps, *backend, *batch, *limit, *report, *plot, *ann;
    const char *encoding, *calib_labels;
    cli_nir_opts nir;
} eval_args;

/* "12.3 µJ": joules with an SI prefix. */
static char *joules(double j, char *buf, size_t len)
{
    static const char *unit[] = {"pJ", "nJ", "\xC2\xB5J", "mJ", "J"};
    double v = j * 1e12;
    int k = 0;
    while (fabs(v) >= 1000.0 && k < 4) {
        v /= 1000.0;
        k++;
    }
    snprintf(buf, len, "%.3g %s", v, unit[k]);
    return buf;
}

static char *count(double n, char *buf, size_t len)
{
    if (n < 1e3)
        snprintf(buf, len, "%.1f", n);
    else
        cli_human((int64_t)llround(n), buf, len);
    return buf;
}

/* The first t whose accuracy is within `points` of the ANN's, and what
 * stopping there costs against the ANN: the operating point of the run. */
static void print_operating_point(const nc_eval_result *r, double ann, double points)
{
    int T = nc_eval_result_timesteps(r);
    for (int t = 1; t <= T; t++) {
        double a = nc_eval_result_accuracy_at(r, t);
        nc_eval_cost c;
        if (100.0 * (ann - a) > points || nc_eval_result_cost_at(r, t, &c) != NC_OK)
            continue;
        char b[32];
        printf("operating point: t = %d is within %g points of the ANN (%+.2f) at %s an inference, %.3f x the "
               "ANN's energy\n", t, points, 100.0 * (a - ann), joules(c.snn_joules, b, sizeof b),
               c.ann_joules > 0 ? c.snn_joules / c.ann_joules : NAN);
        return;
    }
    printf("operating point: no t <= %d is within %g points of the ANN\n", T, points);
}

static void print_results(const nc_eval_result *r)
{
    int T = nc_eval_result_timesteps(r);
    int64_t n = nc_eval_result_samples(r);
    double ann = nc_eval_result_ann_accuracy(r);
    if (ann >= 0)
        printf("ANN accuracy: %.2f %% (%lld/%lld)\n", 100.0 * ann, (long long)llround(ann * (double)n),
               (long long)n);
    printf("SNN accuracy after t steps (argmax of the readout summed over steps 1..t), and the energy and\n"
           "synaptic additions + multiply-adds of steps 1..t per inference (estimate, below):\n");
    for (int t = 1; t <= T; t = t < T && 2 * t > T ? T : 2 * t) {
        double a = nc_eval_result_accuracy_at(r, t);
        printf("  t = %-5d %6.2f %% (%lld/%lld)", t, 100.0 * a, (long long)llround(a * (double)n),
               (long long)n);
        if (ann >= 0)
            printf("  %+6.2f points vs the ANN", 100.0 * (a - ann));
        nc_eval_cost c;
        char b[32], b2[32], b3[32];
        if (nc_eval_result_cost_at(r, t, &c) == NC_OK) {
            printf("  %9s", joules(c.snn_joules, b, sizeof b));
            if (c.ann_joules > 0)
                printf(" (%.3f x ANN)", c.snn_joules / c.ann_joules);
            printf(" from %s adds + %s MACs", count(c.synaptic_adds, b2, sizeof b2),
                   count(c.synaptic_macs, b3, sizeof b3));
        }
        putchar('\n');
        if (t == T)
            break;
    }
    if (ann >= 0)
        print_operating_point(r, ann, 0.5);
    int any = 0;
    for (int i = 0; i < nc_eval_result_num_layers(r); i++) {
        nc_eval_layer_stats L;
        if (nc_eval_result_layer(r, i, &L) != NC_OK ||
            !nc_snn_kind_is_neuron(L.kind))
            continue;
        if (!any++)
            printf("spike rates (spikes per neuron per step):\n");
        printf("  %-32.32s %7.4f  (%lld neurons, %.1f spikes per inference)\n", L.name, L.spike_rate,
               (long long)L.neurons, (double)L.spikes / (double)n);
    }
    nc_eval_cost c;
    if (nc_eval_result_cost(r, &c) != NC_OK)
        return;
    char b1[32], b2[32], b3[32];
    double synops = c.synaptic_adds + c.synaptic_macs;
    printf("synaptic operations per inference: %s additions (spikes) + %s multiply-adds (graded values: the\n"
           "  analog input, bursts, currents)\n", count(c.synaptic_adds, b1, sizeof b1),
           count(c.synaptic_macs, b2, sizeof b2));
    if (c.ann_macs >= 0)
        printf("ANN multiply-accumulates per inference: %s (SNN synaptic ops / ANN MACs = %.3f)\n",
               count(c.ann_macs, b3, sizeof b3), c.ann_macs > 0 ? synops / c.ann_macs : NAN);
    printf("energy per inference (estimate): SNN %s", joules(c.snn_joules, b1, sizeof b1));
    if (c.ann_joules >= 0)
        printf(", ANN %s (SNN / ANN = %.3f)", joules(c.ann_joules, b2, sizeof b2),
               c.ann_joules > 0 ? c.snn_joules / c.ann_joules : NAN);
    printf("\n  at %.2g pJ an addition and %.2g pJ a multiply-add: %s.\n"
           "  Arithmetic only (no memory, data movement or neuron updates); not a chip measurement.\n",
           c.energy_per_synop * 1e12, c.energy_per_mac * 1e12, c.energy_source);
}

/* The network to evaluate (a .nir, or the .onnx model to convert) and the
 * description of its one input. */
static int eval_load_model(const char *model_path, int is_nir, const nc_nir_options *nopt, nc_snn **s,
                           nc_model **m, nc_value_info *in)
{
    nc_status st;
    if (is_nir) {
        if ((st = nc_snn_load_nir(model_path, nopt, s)) != NC_OK)
            return cli_fail(st);
        cli_snn_input_info(*s, in);
        return CLI_OK;
    }
    if ((st = nc_model_load_onnx(model_path, NULL, m)) != NC_OK)
        return cli_fail(st);
    if (nc_model_num_inputs(*m) != 1)
        return cli_failf(NC_ERR_UNSUPPORTED, "%s has %zu inputs; eval takes a model with one", model_path,
                         nc_model_num_inputs(*m));
    if ((st = nc_model_input(*m, 0, in)) != NC_OK)
        return cli_fail(st);
    return CLI_OK;
}

/* Converts the .onnx model in memory, calibrated on cx (labels cy or NULL). */
static int eval_convert(const char *model_path, const nc_model *m, const nc_tensor *cx, const nc_tensor *cy,
                        nc_convert_options *co, cli_progress *prog, nc_snn **s, nc_convert_report **rep)
{
    co->progress = cli_progress_cb;
    co->progress_user = prog;
    co->dist = cli_dist();
    nc_status st = nc_convert(m, cx, cy, co, s, rep);
    cli_progress_end(prog);
    if (st != NC_OK)
        return cli_fail(st);
    cli_print_conversion(model_path, *s, *rep);
    cli_print_operating_point(*rep);
    putchar('\n');
    return CLI_OK;
}

/* The results on stdout, then --report and --plot. */
static int eval_report(const nc_eval_result *res, const eval_args *a)
{
    print_results(res);
    /* every rank holds the whole result; rank 0 writes it */
    if (a->report && cli_is_root()) {
        int rc = cli_write_text(a->report, nc_eval_result_json(res));
        if (rc != CLI_OK)
            return rc;
        printf("wrote %s\n", a->report);
    }
    if (a->plot && cli_is_root()) {
        nc_status st = nc_eval_result_write_svg(res, a->plot);
        if (st != NC_OK)
            return cli_fail(st);
        printf("wrote %s\n", a->plot);
    }
    return CLI_OK;
}

int cmd_eval(int argc, char **argv)
{
    eval_args a = {0};
    convert_args c = {0};
    data_opts d = {0};
    cli_opt opts[] = {
        {"--data", "-d", &a.data, NULL},
        {"--labels", "-l", &a.labels, NULL},
        {"--timesteps", "-T", &a.timesteps, NULL},
        {"--backend", NULL, &a.backend, NULL},
        {"--batch", "-b", &a.batch, NULL},
        {"--limit", "-n", &a.limit, NULL},
        {"--report", NULL, &a.report, NULL},
        {"--plot", NULL, &a.plot, NULL},
        {"--ann", NULL, &a.ann, NULL},
        {"--encoding", NULL, &a.encoding, NULL},
        CLI_NIR_OPT_ROWS(a.nir),
        {"--calib", NULL, &c.calib, NULL},
        {"--convert-T", NULL, &c.timesteps, NULL},
        {"--calib-labels", NULL, &a.calib_labels, NULL},
        {"--qcfs-batch", NULL, &c.qcfs_batch, NULL},
        CLI_CONVERT_OPTS(c),
        CLI_DATA_OPTS(d),
        {NULL, NULL, NULL, NULL},
    };
    const cli_frame frame = {.cmd = "eval", .help = CMD_EVAL_HELP, .opts = opts, .data_out = &a.report,
                             .one_arg = "expected one model file (.nir or .onnx)",
                             .required = {{&a.data, "--data X and --labels Y are required"},
                                          {&a.labels, "--data X and --labels Y are required"}}};
    const char *model_path;
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &model_path, &rc))
        return rc;
    long long T, batch, limit;
    if (!cli_parse_ll(a.timesteps, 1, 1 << 20, 64, &T))
        return cli_usage_error("eval", "-T must be a whole number from 1 to 2^20, not '%s'", a.timesteps);
    if (!cli_parse_ll(a.batch, 1, 1 << 20, 64, &batch))
        return cli_usage_error("eval", "--batch must be a whole number from 1 to 2^20, not '%s'", a.batch);
    if (!cli_parse_ll(a.limit, 1, INT64_MAX, INT64_MAX, &limit))
        return cli_usage_error("eval", "--limit must be a positive whole number, not '%s'", a.limit);
    nc_encoding enc;
    nc_nir_options nopt;
    if ((rc = cli_parse_encoding("eval", a.encoding, &enc)) != CLI_OK ||
        (rc = cli_nir_options("eval", &a.nir, &nopt)) != CLI_OK)
        return rc;
    nc_convert_options co;
    if ((rc = cli_convert_options("eval", &c, &co)) != CLI_OK || (rc = cli_data_opts_check("eval", &d)))
        return rc;
    if ((rc = cli_dist_same_file("model", model_path)) != CLI_OK ||
        (rc = cli_dist_same_file("ANN", a.ann)) != CLI_OK)
        return rc;
    int is_nir = cli_is_nir(model_path);
    if (is_nir && (cli_convert_args_given(&c) || c.calib || a.calib_labels))
        return cli_usage_error("eval", "conversion options apply to a .onnx model; %s is a spiking "
                                       "network (.nir)", model_path);
    if (!is_nir && cli_nir_given(&a.nir))
        return cli_usage_error("eval", "--nir-reset, --nir-spike, --dt and --integration apply to a .nir model; "
                                       "%s is not one", model_path);

    nc_model *m = NULL, *ann_model = NULL;
    nc_snn *s = NULL;
    nc_tensor *x = NULL, *y = NULL, *calib = NULL, *calib_y = NULL;
    const nc_tensor *cx = NULL, *cy = NULL; /* the calibration data and labels */
    int64_t classes = 0;
    nc_convert_report *rep = NULL;
    nc_eval_result *res = NULL;
    nc_value_info in;
    nc_status st;
    cli_progress prog;
    cli_progress_init(&prog);
    if ((rc = eval_load_model(model_path, is_nir, &nopt, &s, &m, &in)) != CLI_OK)
        goto loaded;
    if (a.ann && (st = nc_model_load_onnx(a.ann, NULL, &ann_model)) != NC_OK) {
        rc = cli_fail(st);
        goto loaded;
    }
    classes = s ? cli_snn_classes(s) : cli_model_classes(m);
    if ((rc = cli_load_data("eval", a.data, &d, &in, &x)) != CLI_OK ||
        (rc = cli_load_labels(a.labels, nc_tensor_shape(x)[0], a.data, classes, &y)) != CLI_OK)
        goto loaded;
    /* calibrate on --calib or on all of --data */
    cx = x;
    cy = y;
    if (!is_nir && c.calib) {
        if ((rc = cli_load_data("eval", c.calib, &d, &in, &calib)) != CLI_OK)
            goto loaded;
        cx = calib;
        cy = NULL;
    }
    if (!is_nir && a.calib_labels) {
        if ((rc = cli_load_labels(a.calib_labels, nc_tensor_shape(cx)[0], c.calib ? c.calib : a.data, classes,
                                  &calib_y)) != CLI_OK)
            goto loaded;
        cy = calib_y;
    }
    if (!is_nir && co.qcfs_epochs > 0 && !cy)
        rc = cli_usage_error("eval", "--qcfs-epochs with --calib needs --calib-labels");
    /* the score is then biased: thresholds (and any fine-tuning) saw the test data */
    if (rc == CLI_OK && !is_nir && !c.calib && cli_is_root())
        fprintf(stderr, "neuroc eval: note: calibrating on the evaluation data (%s); give --calib with training "
                        "data for an unbiased score\n", a.data);
loaded:
    /* under mpirun: a file one rank could not read stops every rank here */
    if ((rc = cli_dist_agree(rc)) != CLI_OK)
        goto done;

    if (!is_nir && (rc = eval_convert(model_path, m, cx, cy, &co, &prog, &s, &rep)) != CLI_OK)
        goto done;
    if ((rc = cli_take_rows(&x, limit)) != CLI_OK || (rc = cli_take_rows(&y, limit)) != CLI_OK)
        goto done;

    const char *t_note = "";
    if (!a.timesteps && nc_snn_timesteps(s) > 0) { /* the operating T conversion chose (--target-loss) */
        T = nc_snn_timesteps(s);
        t_note = " (the network's operating T)";
    }
    nc_eval_options eo = {.backend = a.backend, .timesteps = (int)T, .batch = (int)batch, .encoding = enc,
                          .seed = co.seed, .progress = cli_progress_cb, .progress_user = &prog,
                          .dist = cli_dist()};
    const nc_model *ann = ann_model ? ann_model : m;
    printf("evaluating %s on %lld samples of %s, T = %lld%s, backend %s%s\n", model_path,
           (long long)nc_tensor_shape(x)[0], a.data, T, t_note, a.backend ? a.backend : "cpu", cli_dist_note());
    fflush(stdout);
    st = nc_snn_evaluate(s, ann, x, y, &eo, &res);
    cli_progress_end(&prog);
    if (st != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    rc = eval_report(res, &a);
done:
    nc_eval_result_free(res);
    nc_convert_report_free(rep);
    nc_tensor_free(calib_y);
    nc_tensor_free(calib);
    nc_tensor_free(y);
    nc_tensor_free(x);
    nc_snn_free(s);
    nc_model_free(ann_model);
    nc_model_free(m);
    return rc;
}
