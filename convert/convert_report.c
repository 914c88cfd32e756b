/* The conversion report as JSON (convert_report.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convert_report.h"
#include "calibrate.h"
#include "snn/base/json.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

struct nc_convert_report {
    char *json;
    char **warnings;
    size_t n_warnings;
};

void nc_convert_report_free(nc_convert_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_warnings; i++)
        nc_free(r->warnings[i]);
    nc_free(r->warnings);
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

static const char *method_name(nc_threshold_method m)
{
    switch (m) {
    case NC_THRESHOLD_MAX: return "max";
    case NC_THRESHOLD_MSE: return "mse";
    default: return "percentile";
    }
}

static const char *rule_name(nc_theta_rule r)
{
    switch (r) {
    case NC_THETA_CLIP: return "clip";
    case NC_THETA_QCFS: return "qcfs";
    default: return "calibration";
    }
}

/* θ of a layer: one number, or min/mean/max over channels. */
static void put_theta(nc_json *j, const char *key, const float *v, int64_t n)
{
    if (n == 1) {
        nc_json_number(j, key, v[0]);
        return;
    }
    double lo = v[0], hi = v[0], sum = 0.0;
    for (int64_t i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
        sum += v[i];
    }
    nc_json_begin_object(j, key);
    nc_json_int(j, "channels", n);
    nc_json_number(j, "min", lo);
    nc_json_number(j, "mean", sum / (double)n);
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
    nc_json_string(j, "maxpool", o->maxpool == NC_MAXPOOL_AVERAGE ? "average" : "currents");
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
    if (in->calib_used <= 0) {
        nc_json_null(j, "calibration");
        return;
    }
    int n_calib = 0;
    for (int i = 0; i < in->cg->n_sites; i++)
        n_calib += in->cg->sites[i].rule == NC_THETA_CALIB;
    char what[160];
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
    nc_json_string(j, "rule", rule_name(site->rule));
    if (site->rule == NC_THETA_QCFS)
        nc_json_int(j, "levels", site->levels);
    nc_json_bool(j, "maxpool_before", site->maxpool);
    put_theta(j, "threshold", nc_f32(L->threshold), L->threshold->numel);
    if (site->theta0)
        put_theta(j, "threshold_before_finetune", site->theta0, site->n_theta0);
    if (site->rule == NC_THETA_CALIB && site->n_values > 0) {
        nc_json_number(j, "activation_max", site->act_max);
        nc_json_number(j, "layer_statistic", site->stat);
        nc_json_number(j, "zero_fraction", (double)site->n_zeros / (double)site->n_values);
        if (site->fallback_channels)
            nc_json_int(j, "channels_given_layer_threshold", site->fallback_channels);
    }
    if (!isnan(site->bias_shift))
        nc_json_number(j, "bias_correction_mean_shift", site->bias_shift);
    if (!isnan(site->v0_shift))
        nc_json_number(j, "potential_correction_mean_shift", site->v0_shift);
    nc_json_end_object(j);
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
    if (cg->warnings.n) {
        r->warnings = nc_calloc((size_t)cg->warnings.n, sizeof *r->warnings);
        if (!r->warnings) {
            nc_convert_report_free(r);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        for (int i = 0; i < cg->warnings.n; i++, r->n_warnings++)
            if (!(r->warnings[i] = nc_strdup(cg->warnings.s[i]))) {
                nc_convert_report_free(r);
                return nc_errorf(NC_ERR_NOMEM, "out of memory");
            }
    }
    *out = r;
    return NC_OK;
}
