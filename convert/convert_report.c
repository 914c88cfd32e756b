/* The conversion report as JSON (convert_report.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "convert_report.h"
#include "calibrate.h"
#include "snn/base/json.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

/* The facts of the JSON, as C values for nc_convert_report_layer and
 * nc_convert_report_summary (so programs need not parse the JSON). Every
 * string is the report's own copy. */
typedef struct report_layer {
    nc_convert_layer_info info;  /* name and ann_nodes point at the two below */
    char *name;
    char **nodes;
} report_layer;

struct nc_convert_report {
    char *json;
    char **warnings;
    size_t n_warnings;
    char **notes;
    size_t n_notes;
    report_layer *layers;
    int n_layers;
    nc_convert_summary summary;  /* readout points at readout_name */
    char *readout_name;
    nc_operating_point op;       /* op.timesteps 0: no search */
};

static void free_strings(char **s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        nc_free(s[i]);
    nc_free(s);
}

void nc_convert_report_free(nc_convert_report *r)
{
    if (!r)
        return;
    free_strings(r->warnings, r->n_warnings);
    free_strings(r->notes, r->n_notes);
    for (int i = 0; r->layers && i < r->n_layers; i++) {
        nc_free(r->layers[i].name);
        free_strings(r->layers[i].nodes, (size_t)r->layers[i].info.n_ann_nodes);
    }
    nc_free(r->layers);
    nc_free(r->readout_name);
    nc_free(r->json);
    nc_free(r);
}

const char *nc_convert_report_json(const nc_convert_report *r)
{
    return r && r->json ? r->json : "{}";
}

size_t nc_convert_report_num_warnings(const nc_convert_report *r)
{
    return r ? r->n_warnings : 0;
}

const char *nc_convert_report_warning(const nc_convert_report *r, size_t i)
{
    return r && i < r->n_warnings ? r->warnings[i] : "";
}

size_t nc_convert_report_num_notes(const nc_convert_report *r)
{
    return r ? r->n_notes : 0;
}

const char *nc_convert_report_note(const nc_convert_report *r, size_t i)
{
    return r && i < r->n_notes ? r->notes[i] : "";
}

int nc_convert_report_num_layers(const nc_convert_report *r)
{
    return r ? r->n_layers : 0;
}

nc_status nc_convert_report_layer(const nc_convert_report *r, int i, nc_convert_layer_info *out)
{
    if (!r || !out || i < 0 || i >= r->n_layers)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_convert_report_layer: no layer %d", i);
    *out = r->layers[i].info;
    return NC_OK;
}

nc_status nc_convert_report_operating_point(const nc_convert_report *r, nc_operating_point *out)
{
    if (!r || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_convert_report_operating_point: NULL argument");
    if (r->op.timesteps == 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "the conversion searched no operating point (no target loss)");
    *out = r->op;
    return NC_OK;
}

nc_status nc_convert_report_set_operating_point(nc_convert_report *r, const nc_operating_point *op,
                                                const char *json)
{
    /* the report's JSON is one object: the search's goes in before its closing brace */
    size_t n = strlen(r->json), k = strlen(json);
    while (n && r->json[n - 1] != '}')
        n--;
    while (k && (json[k - 1] == '\n' || json[k - 1] == ' '))
        k--;
    static const char key[] = ",\"operating_point\":";
    if (!n)
        return nc_errorf(NC_ERR_INTERNAL, "the conversion report is not a JSON object");
    char *t = nc_malloc(n + sizeof key + k + 1);
    if (!t)
        return nc_errorf(NC_ERR_NOMEM, "out of memory writing the conversion report");
    memcpy(t, r->json, n - 1);
    memcpy(t + n - 1, key, sizeof key - 1);
    memcpy(t + n - 1 + sizeof key - 1, json, k);
    memcpy(t + n - 1 + sizeof key - 1 + k, "}\n", 3);
    nc_free(r->json);
    r->json = t;
    r->op = *op;
    return NC_OK;
}

/* Offset of the closing ']' of the report's top-level "warnings" array, or
 * 0 where it has none (the JSON is the report's own: well formed). */
static size_t warnings_end(const char *s)
{
    static const char key[] = "\"warnings\"";
    int depth = 0, in_string = 0, in_list = 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        if (in_string) {
            if (c == '\\' && s[i + 1])
                i++;
            else if (c == '"')
                in_string = 0;
        } else if (c == '"') {
            if (depth == 1 && strncmp(s + i, key, sizeof key - 1) == 0)
                in_list = 1;
            in_string = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (in_list && depth == 2 && c == ']')
                return i;
            depth--;
        }
    }
    return 0;
}

/* A warning added after the report was built goes into its JSON too. */
static nc_status json_add_warning(nc_convert_report *r, const char *text)
{
    size_t end = r->json ? warnings_end(r->json) : 0;
    if (!end)
        return NC_OK;
    nc_json j;
    nc_json_init(&j);
    nc_json_string(&j, NULL, text);
    char *item = nc_json_take(&j);
    size_t open = end;
    while (open && r->json[open - 1] != '[' && (r->json[open - 1] == ' ' || r->json[open - 1] == '\n'))
        open--;
    int empty = open && r->json[open - 1] == '[';
    size_t n = strlen(r->json), k = item ? strlen(item) : 0;
    while (k && (item[k - 1] == '\n' || item[k - 1] == ' ')) /* the writer ends a top-level value with a newline */
        item[--k] = '\0';
    char *t = item ? nc_malloc(n + k + 16) : NULL;
    if (!t) {
        nc_free(item);
        return nc_errorf(NC_ERR_NOMEM, "out of memory writing the conversion report");
    }
    /* [ ..."last"<here>\n  ] */
    snprintf(t, n + k + 16, "%.*s%s\n    %s\n  %s", (int)open, r->json, empty ? "" : ",", item, r->json + end);
    nc_free(item);
    nc_free(r->json);
    r->json = t;
    return NC_OK;
}

nc_status nc_convert_report_add_warning(nc_convert_report *r, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **w = nc_realloc(r->warnings, (r->n_warnings + 1) * sizeof *w);
    if (!w)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    r->warnings = w;
    if (!(w[r->n_warnings] = nc_strdup(buf)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    r->n_warnings++;
    return json_add_warning(r, buf);
}

nc_status nc_convert_report_summary(const nc_convert_report *r, nc_convert_summary *out)
{
    if (!r || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_convert_report_summary: NULL argument");
    *out = r->summary;
    return NC_OK;
}

static const char *method_name(nc_threshold_method m)
{
    switch (m) {
    case NC_THRESHOLD_MAX: return "max";
    case NC_THRESHOLD_MSE: return "mse";
    default: return "percentile";
    }
}

static const char *rule_name(const nc_if_site *site)
{
    if (site->rule == NC_THETA_QCFS)
        return "qcfs";
    return isinf(site->cap) ? "calibration" : "clip";
}

/* Where a site's θ came from: the report's "source". */
static const char *site_source(const nc_if_site *site)
{
    if (site->rule != NC_THETA_CALIB)
        return rule_name(site);
    switch (site->source) {
    case NC_SOURCE_CLIP: return "clip";
    case NC_SOURCE_BN_STATS: return "bn-stats";
    case NC_SOURCE_PROPAGATED: return "propagated";
    case NC_SOURCE_ASSUMED_INPUT: return "assumed-input";
    default: return "data";
    }
}

static int is_data_free(const nc_if_site *site)
{
    return site->rule == NC_THETA_CALIB && site->source != NC_SOURCE_DATA;
}

/* min, mean and max of θ over its n values (channels). */
static void theta_stats(const float *v, int64_t n, double *lo, double *mean, double *hi)
{
    double l = v[0], h = v[0], sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        l = v[i] < l ? v[i] : l;
        h = v[i] > h ? v[i] : h;
        sum += v[i];
    }
    *lo = l, *hi = h, *mean = n == 1 ? v[0] : sum / (double)n;
}

/* θ of a layer: one number, or min/mean/max over channels. */
static void put_theta(nc_json *j, const char *key, const float *v, int64_t n)
{
    if (n == 1) {
        nc_json_number(j, key, v[0]);
        return;
    }
    double lo, mean, hi;
    theta_stats(v, n, &lo, &mean, &hi);
    nc_json_begin_object(j, key);
    nc_json_int(j, "channels", n);
    nc_json_number(j, "min", lo);
    nc_json_number(j, "mean", mean);
    nc_json_number(j, "max", hi);
    nc_json_end_object(j);
}

static void put_options(nc_json *j, const nc_report_input *in)
{
    const nc_convert_options *o = in->o;
    nc_json_begin_object(j, "options");
    nc_json_string(j, "method", method_name(o->method));
    nc_json_number(j, "percentile", o->percentile);
    nc_json_bool(j, "count_zeros", o->count_zeros);
    nc_json_bool(j, "per_channel", o->per_channel);
    nc_json_int(j, "timesteps", o->timesteps);
    nc_json_int(j, "levels", in->levels);
    nc_json_int(j, "calibration_samples", o->calib_samples);
    nc_json_string(j, "reset", o->reset == NC_RESET_ZERO ? "zero" : "subtract");
    nc_json_string(j, "v_init", o->v_init_zero ? "0" : "theta/2");
    nc_json_bool(j, "binary_spikes", o->binary_spikes);
    nc_json_string(j, "spikes", o->spikes == NC_SPIKES_PLAIN ? "plain" : "signed");
    nc_json_int(j, "burst", o->burst);
    nc_json_string(j, "maxpool", o->maxpool == NC_MAXPOOL_AVERAGE ? "average"
                                 : o->maxpool == NC_MAXPOOL_SPIKES ? "spikes" : "currents");
    nc_json_bool(j, "bias_correction", o->bias_correction);
    nc_json_bool(j, "potential_correction", o->potential_correction);
    nc_json_int(j, "correction_rounds", o->correction_rounds);
    nc_json_int(j, "qcfs_epochs", o->qcfs_epochs);
    if (o->qcfs_epochs > 0) {
        nc_json_number(j, "qcfs_lr", o->qcfs_lr);
        nc_json_int(j, "qcfs_batch", o->qcfs_batch);
        nc_json_int(j, "seed", (int64_t)o->seed);
    }
    nc_json_end_object(j);
}

static void put_calibration(nc_json *j, const nc_report_input *in)
{
    const nc_convert_options *o = in->o;
    int n_calib = 0, n_free = 0;
    for (int i = 0; i < in->cg->n_sites; i++) {
        n_calib += in->cg->sites[i].rule == NC_THETA_CALIB;
        n_free += is_data_free(&in->cg->sites[i]);
    }
    if (in->calib_used <= 0 && n_free == 0) {
        nc_json_null(j, "calibration");
        return;
    }
    char what[160];
    if (n_free > 0) {
        if (o->method == NC_THRESHOLD_MAX)
            snprintf(what, sizeof what, "the 99.9999-th percentile (a Gaussian has no maximum) (%s)",
                     o->count_zeros ? "zeros counted" : "positive values only, zeros not counted");
        else if (o->method == NC_THRESHOLD_MSE)
            snprintf(what, sizeof what, "the clip minimising the squared error of the %d-step quantised "
                     "activation over the modelled distribution", o->timesteps);
        else
            snprintf(what, sizeof what, "the %g-th percentile of the modelled activations (%s)", o->percentile,
                     o->count_zeros ? "zeros counted" : "positive values only, zeros not counted");
        nc_json_begin_object(j, "calibration");
        nc_json_bool(j, "data_free", 1);
        nc_json_int(j, "if_layers_calibrated", n_calib);
        nc_json_string(j, "statistic", what);
        nc_json_string(j, "scope", o->per_channel ? "per channel" : "per layer (the mixture of the channels)");
        nc_json_string(j, "model", "the pre-activation of a BatchNormalization output is N(beta, gamma^2) per "
                       "channel (bn-stats); carried forward as a Gaussian of matched moments through ReLU, Add "
                       "(independent branches), Conv/Gemm (independent inputs), average pooling (variance kept), "
                       "Flatten and a MaxPool moved before the neuron (max of k independent) it is 'propagated'; "
                       "the ReLU output is a rectified Gaussian");
        nc_json_end_object(j);
        return;
    }
    if (n_calib == 0)
        snprintf(what, sizeof what, "none: every threshold comes from the model (Clip or QCFS)");
    else if (o->method == NC_THRESHOLD_MAX)
        snprintf(what, sizeof what, "the largest activation");
    else if (o->method == NC_THRESHOLD_MSE)
        snprintf(what, sizeof what, "the clip minimising the squared error of the %d-step quantised activation "
                 "(Li et al., ICML 2021)", o->timesteps);
    else
        snprintf(what, sizeof what, "the %g-th percentile of the activations (%s)", o->percentile,
                 o->count_zeros ? "zeros counted" : "positive values only, zeros not counted");
    nc_json_begin_object(j, "calibration");
    nc_json_int(j, "samples_used", in->calib_used);
    nc_json_int(j, "batch", in->calib_batch);
    nc_json_int(j, "if_layers_calibrated", n_calib);
    nc_json_bool(j, "bias_correction", o->bias_correction && o->qcfs_epochs == 0);
    nc_json_bool(j, "potential_correction", o->potential_correction && o->qcfs_epochs == 0);
    nc_json_string(j, "statistic", what);
    nc_json_string(j, "scope", o->per_channel ? "per channel" : "per layer");
    nc_json_string(j, "values", "the activation outputs the IF layers replace (after ReLU; after a MaxPool "
                   "moved before the neuron, the pooled activations)");
    nc_json_int(j, "histogram_bins", NC_CALIB_BINS);
    nc_json_string(j, "precision", "percentiles and the MSE clip are exact to one histogram bin (at most "
                   "max/1024); the maximum is exact");
    nc_json_end_object(j);
}

static void put_site(nc_json *j, const nc_report_input *in, const nc_if_site *site)
{
    const nc_snn_layer *L = &in->snn->layers[site->layer];
    nc_json_begin_object(j, NULL);
    nc_json_string(j, "name", L->name);
    nc_json_string(j, "kind", "IF");
    nc_json_int(j, "neurons", nc_snn_layer_size(L));
    nc_json_begin_array(j, "ann_nodes");
    for (int k = 0; k < site->n_nodes; k++)
        nc_json_string(j, NULL, site->nodes[k]);
    nc_json_end_array(j);
    nc_json_string(j, "rule", rule_name(site));
    if (!isinf(site->cap))
        nc_json_number(j, "threshold_cap", site->cap);
    nc_json_string(j, "source", site_source(site));
    if (site->rule == NC_THETA_QCFS)
        nc_json_int(j, "levels", site->levels);
    nc_json_bool(j, "maxpool_before", site->maxpool);
    if (site->two_sided) /* spikes of a Nonlinear layer's signed output: statistics of |x| */
        nc_json_bool(j, "two_sided", 1);
    put_theta(j, "threshold", nc_f32(L->threshold), L->threshold->numel);
    nc_json_int(j, "max_spikes", nc_snn_layer_burst(L)); /* θ is the clip / max_spikes */
    if (site->theta0)
        put_theta(j, "threshold_before_finetune", site->theta0, site->n_theta0);
    if (site->rule == NC_THETA_CALIB && site->n_values > 0) {
        nc_json_number(j, "activation_max", site->act_max);
        nc_json_number(j, "layer_statistic", site->stat);
        nc_json_number(j, "zero_fraction", (double)site->n_zeros / (double)site->n_values);
        if (site->fallback_channels)
            nc_json_int(j, "channels_given_layer_threshold", site->fallback_channels);
    }
    if (is_data_free(site)) {
        nc_json_number(j, "layer_statistic", site->stat);
        if (site->fallback_channels)
            nc_json_int(j, "channels_given_layer_threshold", site->fallback_channels);
    }
    if (!isnan(site->bias_shift))
        nc_json_number(j, "bias_correction_mean_shift", site->bias_shift);
    if (!isnan(site->v0_shift))
        nc_json_number(j, "potential_correction_mean_shift", site->v0_shift);
    nc_json_end_object(j);
}

static nc_threshold_rule public_rule(const nc_if_site *site)
{
    if (site->rule == NC_THETA_QCFS)
        return NC_THRESHOLD_RULE_QCFS;
    return isinf(site->cap) ? NC_THRESHOLD_RULE_CALIBRATION : NC_THRESHOLD_RULE_CLIP;
}

/* The record of one site, as put_site writes it; strings copied. */
static nc_status take_site(const nc_report_input *in, const nc_if_site *site, report_layer *R)
{
    const nc_snn_layer *L = &in->snn->layers[site->layer];
    nc_convert_layer_info *I = &R->info;
    if (!(R->name = nc_strdup(L->name)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    if (site->n_nodes > 0) {
        if (!(R->nodes = nc_calloc((size_t)site->n_nodes, sizeof *R->nodes)))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        for (int k = 0; k < site->n_nodes; k++, I->n_ann_nodes++)
            if (!(R->nodes[k] = nc_strdup(site->nodes[k])))
                return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    I->name = R->name;
    I->ann_nodes = (const char *const *)R->nodes;
    I->neurons = nc_snn_layer_size(L);
    I->rule = public_rule(site);
    I->threshold_cap = isinf(site->cap) ? NAN : site->cap;
    I->levels = site->rule == NC_THETA_QCFS ? site->levels : 0;
    I->maxpool_before = site->maxpool;
    I->threshold_channels = L->threshold->numel;
    theta_stats(nc_f32(L->threshold), L->threshold->numel, &I->threshold_min, &I->threshold_mean,
                &I->threshold_max);
    I->max_spikes = nc_snn_layer_burst(L);
    I->finetuned = site->theta0 != NULL;
    I->threshold_before_min = I->threshold_before_mean = I->threshold_before_max = NAN;
    if (site->theta0) {
        I->threshold_before_channels = site->n_theta0;
        theta_stats(site->theta0, site->n_theta0, &I->threshold_before_min, &I->threshold_before_mean,
                    &I->threshold_before_max);
    }
    I->activation_max = I->layer_statistic = I->zero_fraction = NAN;
    if (site->rule == NC_THETA_CALIB && site->n_values > 0) {
        I->activation_max = site->act_max;
        I->layer_statistic = site->stat;
        I->zero_fraction = (double)site->n_zeros / (double)site->n_values;
        I->fallback_channels = site->fallback_channels;
    }
    if (is_data_free(site)) {
        I->layer_statistic = site->stat;
        I->fallback_channels = site->fallback_channels;
    }
    I->source = site_source(site);
    I->bias_shift = site->bias_shift;
    I->potential_shift = site->v0_shift;
    return NC_OK;
}

static nc_status copy_strings(const nc_strlist *l, char ***out, size_t *n)
{
    if (l->n == 0)
        return NC_OK;
    if (!(*out = nc_calloc((size_t)l->n, sizeof **out)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int i = 0; i < l->n; i++, (*n)++)
        if (!((*out)[i] = nc_strdup(l->s[i])))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
    return NC_OK;
}

/* Everything but the JSON: the C view of the report. */
static nc_status take_facts(const nc_report_input *in, nc_convert_report *r)
{
    const nc_cgraph *cg = in->cg;
    nc_status st;
    if ((st = copy_strings(&cg->warnings, &r->warnings, &r->n_warnings)) != NC_OK ||
        (st = copy_strings(&cg->notes, &r->notes, &r->n_notes)) != NC_OK)
        return st;
    if (cg->n_sites > 0) {
        if (!(r->layers = nc_calloc((size_t)cg->n_sites, sizeof *r->layers)))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        for (int i = 0; i < cg->n_sites; i++, r->n_layers++)
            if ((st = take_site(in, &cg->sites[i], &r->layers[i])) != NC_OK) {
                r->n_layers++; /* freed with the others */
                return st;
            }
    }
    nc_convert_summary *S = &r->summary;
    int n_calib = 0;
    for (int i = 0; i < cg->n_sites; i++) {
        n_calib += cg->sites[i].rule == NC_THETA_CALIB;
        S->if_layers_data_free += is_data_free(&cg->sites[i]);
    }
    if (in->calib_used > 0) {
        S->calib_samples = in->calib_used;
        S->calib_batch = in->calib_batch;
    }
    S->if_layers_calibrated = n_calib;
    S->qcfs_samples = in->train_samples > 0 ? in->train_samples : 0;
    S->levels = in->levels;
    S->layers = in->final_layers;
    S->if_layers = cg->n_sites;
    S->scale_layers = in->n_scale_layers;
    if (!(r->readout_name = nc_strdup(in->snn->layers[cg->readout].name)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    S->readout = r->readout_name;
    return NC_OK;
}

static void put_list(nc_json *j, const char *key, const nc_strlist *l)
{
    nc_json_begin_array(j, key);
    for (int i = 0; i < l->n; i++)
        nc_json_string(j, NULL, l->s[i]);
    nc_json_end_array(j);
}

nc_status nc_convert_report_build(const nc_report_input *in, nc_convert_report **out)
{
    *out = NULL;
    const nc_cgraph *cg = in->cg;
    nc_json j;
    nc_json_init(&j);
    nc_json_begin_object(&j, NULL);
    nc_json_string(&j, "source", in->g->source);
    nc_json_string(&j, "generator", "neuroc");
    nc_json_string(&j, "neuroc_version", nc_version());
    put_options(&j, in);
    put_calibration(&j, in);
    if (in->train_samples > 0) {
        nc_json_begin_object(&j, "qcfs_finetune");
        nc_json_int(&j, "samples", in->train_samples);
        nc_json_int(&j, "epochs", in->o->qcfs_epochs);
        nc_json_int(&j, "levels", in->levels);
        nc_json_end_object(&j);
    } else {
        nc_json_null(&j, "qcfs_finetune");
    }
    nc_json_begin_array(&j, "layers");
    for (int i = 0; i < cg->n_sites; i++)
        put_site(&j, in, &cg->sites[i]);
    nc_json_end_array(&j);
    nc_json_begin_object(&j, "snn");
    nc_json_int(&j, "layers", in->final_layers);
    nc_json_int(&j, "if_layers", cg->n_sites);
    nc_json_string(&j, "readout", in->snn->layers[cg->readout].name);
    nc_json_string(&j, "semantics", "IF neurons, v(0) = theta/2 unless v_init says 0, spikes carry theta unless "
                   "binary_spikes; the readout sums its input over time");
    nc_json_int(&j, "scale_layers", in->n_scale_layers);
    nc_json_end_object(&j);
    put_list(&j, "warnings", &cg->warnings);
    put_list(&j, "notes", &cg->notes);
    nc_json_end_object(&j);

    nc_convert_report *r = nc_calloc(1, sizeof *r);
    if (!r || !(r->json = nc_json_take(&j))) {
        nc_json_free(&j);
        nc_free(r);
        return nc_errorf(NC_ERR_NOMEM, "out of memory writing the conversion report");
    }
    nc_status st = take_facts(in, r);
    if (st != NC_OK) {
        nc_convert_report_free(r);
        return st;
    }
    *out = r;
    return NC_OK;
}
