/* neuroc sim: a spiking network on a simulated Loihi chip: quantisation,
 * fixed-point accuracy at every t against the float network, mapping onto
 * cores and chips, operation counts, energy and latency estimates. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

const char CMD_SIM_HELP[] =
    "usage: neuroc sim MODEL.nir --target loihi1|loihi2 --data X --labels Y [-T 32]\n"
    "                  [--mode reset-zero|subtract] [--input bias|graded]\n"
    "                  [--report R.json] [--limit N] [--weight-bits B] [--headroom H]\n"
    "                  [--params P.json] [--neurons-per-core N] [--threads N]\n"
    "                  [--no-float] [--input-range LO,HI] [--no-scale] [--mean .. --std ..]\n"
    "\n"
    "Quantises a spiking network into Loihi parameters (8-bit weight mantissas with\n"
    "a per-layer exponent, 17-bit thresholds, 13-bit biases), runs it with the\n"
    "chip's integer neuron arithmetic (Lava's bit-accurate model), and reports the\n"
    "float network's accuracy (reference backend) against the fixed-point accuracy\n"
    "at every t, the mapping onto cores and chips, operation counts per layer, and\n"
    "energy and latency per inference from published per-operation figures.\n"
    "\n"
    "  -d, --data X       samples (.npy, IDX, or file.h5:/dataset)\n"
    "  -l, --labels Y     their integer labels (.npy or IDX)\n"
    "      --target T     loihi1 or loihi2 (default loihi2)\n"
    "      --mode M       reset-zero or subtract; default: loihi1 reset-zero (its\n"
    "                     native neuron), loihi2 subtract (a microcoded neuron).\n"
    "                     loihi1 subtract is emulated with two compartments and a\n"
    "                     self-inhibiting synapse of weight -threshold\n"
    "      --input I      bias (default): the host computes the first layer on the\n"
    "                     analog input and writes it as 13-bit biases; graded\n"
    "                     (loihi2 only): the input is sent as 8-bit graded spikes\n"
    "                     every step and the first layer runs on chip, where the\n"
    "                     24-bit current leaves its weights only a few bits\n"
    "  -T, --timesteps T  steps of input the readout integrates (default 32); the\n"
    "                     chip runs T + its pipeline latency (one step a hop)\n"
    "  -n, --limit N      the first N samples only\n"
    "      --report F     everything as JSON: the float evaluation, quantisation,\n"
    "                     mapping, parameters with sources, counts, energy;\n"
    "                     F = -: on standard output (the rest goes to stderr)\n"
    "      --weight-bits B  signed weight mantissa bits, 2..8 (default 8)\n"
    "      --headroom H   thresholds sit near 2^(23-H): room for currents of 2^H\n"
    "                     thresholds in 24 bits (default 4)\n"
    "      --params F     JSON file overriding core limits and energy constants\n"
    "                     (see sim/loihi_params.json)\n"
    "      --neurons-per-core N  Loihi 2 neurons a core (default 8192)\n"
    "      --threads N    simulation threads (results do not depend on it)\n"
    "      --no-float     skip the float network's evaluation\n"
    "      --per-layer-scale  one integer scale a layer (default: one per output\n"
    "                     channel, carried by the per-neuron thresholds)\n"
    "      --calib C      samples whose float readout sizes the chip's readout\n"
    "                     accumulator (the first 256; default: --data)\n"
    "      --input-range LO,HI  range of the input for graded spikes (default:\n"
    "                     that of the data, with LO = 0 unless it is negative)\n" CLI_DATA_OPTS_HELP
    "\n"
    "Energy and latency are pre-silicon estimates (Davies et al., IEEE Micro 2018,\n"
    "Table 2), not measurements; the ANN comparison uses a GPU's peak MAC energy\n"
    "(NVIDIA A100 datasheet). Progress is shown on stderr when it is a terminal.\n";

typedef struct sim_args {
    const char *data, *labels, *timesteps, *limit, *report, *target, *mode, *input, *wbits, *headroom;
    const char *params, *npc, *threads, *range, *calib;
    int no_float, per_layer;
} sim_args;

static char *si(double v, const char *unit, char *buf, size_t len)
{
    static const char *pre[] = {"p", "n", "\xC2\xB5", "m", "", "k"};
    double x = v * 1e12;
    int k = 0;
    while (fabs(x) >= 1000.0 && k < 5) {
        x /= 1000.0;
        k++;
    }
    snprintf(buf, len, "%.3g %s%s", x, pre[k], unit);
    return buf;
}

static char *num(double n, char *buf, size_t len)
{
    if (fabs(n) < 1e4)
        snprintf(buf, len, "%.1f", n);
    else
        cli_human((int64_t)llround(n), buf, len);
    return buf;
}

static void print_net(const nc_loihi_net *net)
{
    char b1[32], b2[32];
    printf("quantisation (weights: mantissa x 2^(6+exp); errors in float units):\n");
    printf("  %-28s %-7s %8s %5s %9s %8s %8s %10s %9s\n", "layer", "kind", "neurons", "wexp", "weights", "clipped",
           "zeroed", "max w err", "θ rel err");
    for (int i = 1; i < nc_loihi_net_num_layers(net); i++) {
        nc_loihi_layer_info L;
        if (nc_loihi_net_layer(net, i, &L) != NC_OK)
            continue;
        printf("  %-28.28s %-7s %8lld %5d %9s %8lld %8lld %10.3g %9.2g\n", L.name, L.kind, (long long)L.neurons,
               L.weight_exp, cli_human(L.weights, b1, sizeof b1), (long long)L.weights_clipped,
               (long long)L.weights_zeroed, L.weight_max_abs_err, L.threshold_max_rel_err);
    }
    printf("\nmapping onto cores:\n");
    printf("  %-28s %8s %8s %6s %10s %10s %8s %8s\n", "layer", "neurons", "compart", "cores", "synapses",
           "words", "in-ax", "out-ax");
    for (int i = 1; i < nc_loihi_net_num_layers(net); i++) {
        nc_loihi_layer_info L;
        if (nc_loihi_net_layer(net, i, &L) != NC_OK)
            continue;
        printf("  %-28.28s %8lld %8lld %6lld %10s %10s %8lld %8lld\n", L.name, (long long)L.neurons,
               (long long)L.compartments, (long long)L.cores, cli_human(L.synapses, b1, sizeof b1),
               cli_human(L.synapse_words, b2, sizeof b2), (long long)L.max_input_axons,
               (long long)L.max_output_axons);
    }
    nc_loihi_mapping m;
    if (nc_loihi_net_mapping(net, &m) == NC_OK)
        printf("  total: %lld cores, %lld chip%s (%lld cores a chip); smallest named system: %s\n"
               "  pipeline latency: %d steps (one a hop)\n",
               (long long)m.cores, (long long)m.chips, m.chips == 1 ? "" : "s", (long long)m.cores_per_chip,
               m.smallest_system, m.latency_steps);
    nc_loihi_system sys[16];
    size_t ns = nc_loihi_net_systems(net, sys, 16);
    for (size_t i = 0; i < ns && i < 16; i++)
        printf("    %-16s %5lld chip%s  %-8s (%s)\n", sys[i].name, (long long)sys[i].chips, sys[i].chips == 1 ? " " : "s",
               sys[i].fits ? "fits" : "too small", sys[i].source);
}

static void print_run(const nc_loihi_result *r, const nc_eval_result *fe)
{
    int T = nc_loihi_result_timesteps(r);
    int64_t n = nc_loihi_result_samples(r);
    printf("\naccuracy after t steps of input (%lld samples):\n", (long long)n);
    printf("  %6s %10s %12s %14s\n", "t", "float SNN", "fixed point", "fixed, chip t");
    for (int t = 1; t <= T; t = t < T && 2 * t > T ? T : 2 * t) {
        printf("  %6d", t);
        if (fe)
            printf(" %9.2f%%", 100.0 * nc_eval_result_accuracy_at(fe, t));
        else
            printf(" %10s", "-");
        double a = nc_loihi_result_accuracy_at(r, t), b = nc_loihi_result_accuracy_at_step(r, t);
        printf(" %11.2f%% %13.2f%%", 100.0 * a, 100.0 * b);
        if (fe)
            printf("   %+6.2f points", 100.0 * (a - nc_eval_result_accuracy_at(fe, t)));
        putchar('\n');
        if (t == T)
            break;
    }
    printf("  (fixed point: the chip's readout after t + latency steps; chip t: after t chip steps)\n");
    printf("  (u-wraps, v-sats: 24-bit current wraps and membrane saturations a sample, summed over steps;\n"
           "   b-clips: neurons whose host-written input current was clipped to the bias range)\n");
    printf("\nper inference (%d chip steps):\n", nc_loihi_result_steps_run(r));
    printf("  %-28s %10s %10s %10s %10s %8s %8s %8s\n", "layer", "synops", "spikes", "messages", "updates",
           "u-wraps", "v-sats", "b-clips");
    char b[6][32];
    for (int i = 0; i < 1 << 20; i++) {
        nc_loihi_counts c;
        if (nc_loihi_result_counts(r, i, &c) != NC_OK)
            break;
        if (i == 0 && c.spikes == 0 && c.synops == 0)
            continue;
        printf("  %-28.28s %10s %10s %10s %10s %8.3g %8.3g %8.3g\n", c.name, num(c.synops, b[0], 32),
               num(c.spikes, b[1], 32), num(c.axon_messages, b[2], 32),
               num(c.active_updates + c.inactive_updates, b[3], 32), c.u_wraps, c.v_saturations, c.bias_clips);
    }
    nc_loihi_cost k;
    if (nc_loihi_result_cost(r, &k) != NC_OK)
        return;
    printf("\nenergy per inference (estimate): %s = synaptic ops %s + neuron updates %s + spikes %s\n",
           si(k.energy_j, "J", b[0], 32), si(k.synop_j, "J", b[1], 32), si(k.update_j, "J", b[2], 32),
           si(k.spike_j, "J", b[3], 32));
    printf("latency per inference (estimate): %s (%s a step; layers packed into the fewest cores)\n",
           si(k.latency_s, "s", b[0], 32), si(k.step_s, "s", b[1], 32));
    printf("  from %s;\n  evidence: %s. Static power and tile hops are not included.\n", k.energy_source,
           k.evidence);
    if (k.host_macs > 0)
        printf("  the host computes %s MACs a sample for the bias-coded input (not included)\n",
               num(k.host_macs, b[0], 32));
    printf("the same network as an ANN: %s MACs = %s on a GPU at %.3g pJ a MAC\n  (%s)\n", num(k.ann_macs, b[0], 32),
           si(k.ann_gpu_j, "J", b[1], 32), k.e_mac_gpu * 1e12, k.gpu_source);
    if (k.ann_gpu_j > 0)
        printf("  chip estimate / GPU figure = %.3g\n", k.energy_j / k.ann_gpu_j);
}

/* {"float_snn": ..., "network": ..., "fixed_point": ...} */
static int write_report(const char *path, const nc_eval_result *fe, const nc_loihi_net *net,
                        const nc_loihi_result *r)
{
    const char *a = fe ? nc_eval_result_json(fe) : "null", *b = nc_loihi_net_json(net), *c = nc_loihi_result_json(r);
    size_t len = strlen(a) + strlen(b) + strlen(c) + 64;
    char *text = malloc(len);
    if (!text)
        return cli_failf(NC_ERR_NOMEM, "out of memory writing %s", path);
    snprintf(text, len, "{\"float_snn\": %s,\n\"network\": %s,\n\"fixed_point\": %s}", a, b, c);
    int rc = cli_write_text(path, text);
    free(text);
    return rc;
}

/* --target, --mode, --input and --input-range into *lo (usage errors name
 * the bad one); *have_range: the input range was given. */
static int sim_target_options(const sim_args *a, nc_loihi_options *lo, int *have_range)
{
    if (!a->target || strcmp(a->target, "loihi2") == 0)
        lo->target = NC_LOIHI_2;
    else if (strcmp(a->target, "loihi1") == 0)
        lo->target = NC_LOIHI_1;
    else
        return cli_usage_error("sim", "--target must be loihi1 or loihi2, not '%s'", a->target);
    if (a->mode && strcmp(a->mode, "reset-zero") == 0)
        lo->reset = NC_RESET_ZERO;
    else if (a->mode && strcmp(a->mode, "subtract") == 0)
        lo->reset = NC_RESET_SUBTRACT;
    else if (a->mode)
        return cli_usage_error("sim", "--mode must be reset-zero or subtract, not '%s'", a->mode);
    if (a->input && strcmp(a->input, "bias") == 0)
        lo->input = NC_LOIHI_INPUT_BIAS;
    else if (a->input && strcmp(a->input, "graded") == 0)
        lo->input = NC_LOIHI_INPUT_GRADED;
    else if (a->input)
        return cli_usage_error("sim", "--input must be bias or graded, not '%s'", a->input);
    if (lo->target == NC_LOIHI_1 && lo->input == NC_LOIHI_INPUT_GRADED)
        return cli_usage_error("sim", "graded spikes need --target loihi2");
    if (lo->target == NC_LOIHI_1 && a->npc)
        return cli_usage_error("sim", "--neurons-per-core applies to loihi2 (loihi1 has 1024 compartments a core)");
    if (a->range) {
        char *end;
        double r0 = strtod(a->range, &end), r1 = *end == ',' ? strtod(end + 1, &end) : NAN;
        if (*end || !(r1 > r0))
            return cli_usage_error("sim", "--input-range takes LO,HI with LO < HI, not '%s'", a->range);
        lo->input_min = (float)r0, lo->input_max = (float)r1;
        *have_range = 1;
    }
    return CLI_OK;
}

int cmd_sim(int argc, char **argv)
{
    sim_args a = {0};
    data_opts d = {0};
    cli_opt opts[] = {
        {"--data", "-d", &a.data, NULL},
        {"--labels", "-l", &a.labels, NULL},
        {"--timesteps", "-T", &a.timesteps, NULL},
        {"--limit", "-n", &a.limit, NULL},
        {"--report", NULL, &a.report, NULL},
        {"--target", NULL, &a.target, NULL},
        {"--mode", NULL, &a.mode, NULL},
        {"--input", NULL, &a.input, NULL},
        {"--weight-bits", NULL, &a.wbits, NULL},
        {"--headroom", NULL, &a.headroom, NULL},
        {"--params", NULL, &a.params, NULL},
        {"--neurons-per-core", NULL, &a.npc, NULL},
        {"--threads", NULL, &a.threads, NULL},
        {"--input-range", NULL, &a.range, NULL},
        {"--calib", NULL, &a.calib, NULL},
        {"--no-float", NULL, NULL, &a.no_float},
        {"--per-layer-scale", NULL, NULL, &a.per_layer},
        CLI_DATA_OPTS(d),
        {NULL, NULL, NULL, NULL},
    };
    const cli_frame frame = {.cmd = "sim", .help = CMD_SIM_HELP, .opts = opts, .data_out = &a.report,
                             .one_arg = "expected one spiking network (.nir)",
                             .required = {{&a.data, "--data X and --labels Y are required"},
                                          {&a.labels, "--data X and --labels Y are required"}}};
    const char *path;
    int rc;
    if (!cli_frame_parse(&frame, argc, argv, &path, &rc))
        return rc;
    long long T, limit, wbits, head, npc, threads;
    if (!cli_parse_ll(a.timesteps, 1, 1 << 16, 32, &T))
        return cli_usage_error("sim", "-T must be a whole number from 1 to 65536, not '%s'", a.timesteps);
    if (!cli_parse_ll(a.limit, 1, INT64_MAX, INT64_MAX, &limit))
        return cli_usage_error("sim", "--limit must be a positive whole number, not '%s'", a.limit);
    if (!cli_parse_ll(a.wbits, 2, 8, 8, &wbits))
        return cli_usage_error("sim", "--weight-bits must be 2..8, not '%s'", a.wbits);
    if (!cli_parse_ll(a.headroom, 1, 12, 4, &head))
        return cli_usage_error("sim", "--headroom must be 1..12, not '%s'", a.headroom);
    if (!cli_parse_ll(a.npc, 2, 1 << 20, 0, &npc))
        return cli_usage_error("sim", "--neurons-per-core must be 2..2^20, not '%s'", a.npc);
    if (!cli_parse_ll(a.threads, 1, 1024, 0, &threads))
        return cli_usage_error("sim", "--threads must be 1..1024, not '%s'", a.threads);
    nc_loihi_options lo = {.weight_bits = (int)wbits, .headroom_bits = (int)head, .params_path = a.params,
                           .neurons_per_core = npc, .per_layer_scale = a.per_layer, .timesteps = (int)T + 8};
    int have_range = 0;
    if ((rc = sim_target_options(&a, &lo, &have_range)) != CLI_OK)
        return rc;
    if ((rc = cli_data_opts_check("sim", &d)) != CLI_OK)
        return rc;
    if ((rc = cli_dist_same_file("model", path)) != CLI_OK)
        return rc;
    if ((rc = cli_need_nir("sim", path)) != CLI_OK)
        return rc;

    nc_snn *s = NULL;
    nc_tensor *x = NULL, *y = NULL, *cx = NULL;
    nc_eval_result *fe = NULL;
    nc_loihi_net *net = NULL;
    nc_loihi_result *res = NULL;
    nc_value_info in;
    nc_status st;
    cli_progress prog;
    cli_progress_init(&prog);
    if ((st = nc_snn_load_nir(path, NULL, &s)) != NC_OK) {
        rc = cli_fail(st);
        goto loaded;
    }
    cli_snn_input_info(s, &in);
    if ((rc = cli_load_data("sim", a.data, &d, &in, &x)) != CLI_OK ||
        (rc = cli_load_labels(a.labels, nc_tensor_shape(x)[0], a.data, cli_snn_classes(s), &y)) != CLI_OK ||
        (rc = cli_take_rows(&x, limit)) != CLI_OK || (rc = cli_take_rows(&y, limit)) != CLI_OK)
        goto loaded;
    if (!have_range) {
        const float *xv = nc_tensor_data_const(x);
        float mn = 0, mx = 0;
        for (int64_t i = 0; i < nc_tensor_numel(x); i++) {
            mn = xv[i] < mn ? xv[i] : mn;
            mx = xv[i] > mx ? xv[i] : mx;
        }
        lo.input_min = mn, lo.input_max = mx > mn ? mx : mn + 1;
    }
    if (a.calib && ((rc = cli_load_data("sim", a.calib, &d, &in, &cx)) != CLI_OK ||
                    (rc = cli_take_rows(&cx, 256)) != CLI_OK))
        goto loaded;
loaded:
    /* under mpirun: a file one rank could not read stops every rank here */
    if ((rc = cli_dist_agree(rc)) != CLI_OK)
        goto done;
    lo.calib = cx ? cx : x;
    if ((st = nc_loihi_compile(s, &lo, &net)) != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    int n_signed = 0;
    nc_snn_layer_info li;
    for (int i = 0; i < nc_snn_num_layers(s); i++)
        n_signed += nc_snn_layer_at(s, i, &li) == NC_OK && li.kind == NC_SNN_SIGNED_IF;
    printf("%s on %s (reset: %s, input: %s)\n\n", path, lo.target == NC_LOIHI_1 ? "Loihi 1" : "Loihi 2",
           lo.reset == NC_RESET_ZERO || (lo.reset == NC_RESET_DEFAULT && lo.target == NC_LOIHI_1)
               ? "zero"
               : lo.target == NC_LOIHI_1 ? "subtract, two-compartment emulation"
               : n_signed                ? "subtract, microcoded; signed spikes as graded spikes of payload ±1"
                                         : "subtract, microcoded",
           lo.input != NC_LOIHI_INPUT_GRADED ? "bias-coded by the host"
                                                                                   : "graded spikes");
    print_net(net);
    fflush(stdout);
    if (!a.no_float) {
        nc_eval_options eo = {.timesteps = (int)T, .progress = cli_progress_cb, .progress_user = &prog,
                              .dist = cli_dist()};
        st = nc_snn_evaluate(s, NULL, x, y, &eo, &fe);
        cli_progress_end(&prog);
        if (st != NC_OK) {
            rc = cli_fail(st);
            goto done;
        }
    }
    nc_loihi_run_options ro = {.timesteps = (int)T, .extra_steps = NC_LOIHI_EXTRA_LATENCY, .threads = (int)threads,
                               .progress = cli_progress_cb, .progress_user = &prog, .dist = cli_dist()};
    st = nc_loihi_run(net, x, y, &ro, &res);
    cli_progress_end(&prog);
    if (st != NC_OK) {
        rc = cli_fail(st);
        goto done;
    }
    print_run(res, fe);
    if (a.report && cli_is_root()) { /* every rank holds the whole run; rank 0 writes it */
        if ((rc = write_report(a.report, fe, net, res)) != CLI_OK)
            goto done;
        printf("wrote %s\n", a.report);
    }
    rc = CLI_OK;
done:
    nc_loihi_result_free(res);
    nc_loihi_net_free(net);
    nc_eval_result_free(fe);
    nc_tensor_free(cx);
    nc_tensor_free(y);
    nc_tensor_free(x);
    nc_snn_free(s);
    return rc;
}
