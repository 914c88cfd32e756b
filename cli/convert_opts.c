/* The conversion options and the conversion summary that convert, eval and
 * bench share (cli.h: convert_args): in a file of their own so that no
 * command calls into another command's file. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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
           a->signed_spikes || a->plain_spikes || a->burst || a->graded_nonlinear || a->target_loss ||
           a->target_max_t || a->holdout || a->keep_avgpool;
}

/* The operating point search (--target-loss and what it takes). */
static int cli_search_options(const char *cmd, const convert_args *a, nc_convert_options *o)
{
    long long v;
    if (a->target_loss) {
        char *end;
        errno = 0;
        double p = strtod(a->target_loss, &end);
        if (errno || *end || end == a->target_loss || !(p > 0 && p <= 100))
            return cli_usage_error(cmd, "--target-loss must be accuracy points in (0, 100], e.g. 0.5, not '%s'",
                                   a->target_loss);
        o->target_loss = p;
    }
    if ((a->target_max_t || a->holdout) && !a->target_loss)
        return cli_usage_error(cmd, "--%s is for the operating point search: give --target-loss too",
                               a->target_max_t ? "target-max-T" : "holdout");
    if (a->target_max_t) {
        if (!cli_parse_ll(a->target_max_t, 1, 4096, 0, &v))
            return cli_usage_error(cmd, "--target-max-T must be a whole number from 1 to 4096, not '%s'",
                                   a->target_max_t);
        o->max_timesteps = (int)v;
    }
    if (a->holdout) {
        if (!cli_parse_ll(a->holdout, 100, INT64_MAX, 0, &v))
            return cli_usage_error(cmd, "--holdout must be a whole number of samples >= 100, not '%s'", a->holdout);
        o->holdout_samples = v;
    }
    if (a->target_loss && a->qcfs_epochs)
        return cli_usage_error(cmd, "--target-loss searches conversions without QCFS fine-tuning: leave out "
                                    "--qcfs-epochs");
    return CLI_OK;
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
    o->nonlinear_graded = a->graded_nonlinear;
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
    o->keep_avgpool = a->keep_avgpool;
    return cli_search_options(cmd, a, o);
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

void cli_print_operating_point(const nc_convert_report *r)
{
    nc_operating_point op;
    if (!r || nc_convert_report_operating_point(r, &op) != NC_OK)
        return;
    char th[32];
    if (op.method == NC_THRESHOLD_PERCENTILE)
        snprintf(th, sizeof th, "p%g", op.percentile);
    else
        snprintf(th, sizeof th, "%s", op.method == NC_THRESHOLD_MSE ? "mse" : "max");
    char ft[64] = "";
    if (op.finetune_timesteps)
        snprintf(ft, sizeof ft, ", fine-tuned at T = %d (%d epochs)", op.finetune_timesteps, op.finetune_epochs);
    printf("operating point: T = %d, expected loss %.2f points against the ANN (%s, %lld %s samples), "
           "energy %.3f x the ANN's; burst %d, threshold %s%s%s%s; %d conversions tried%s\n",
           op.timesteps, op.loss, op.labelled ? "labels" : "its own predictions", (long long)op.holdout_samples,
           op.validation ? "validation" : "held-back",
           op.energy_ratio, op.burst, th, op.per_channel ? ", per channel" : "",
           op.bias_correction ? ", bias correction" : "", ft, op.candidates,
           op.feasible ? "" : " (none within the target: see the warning)");
}
