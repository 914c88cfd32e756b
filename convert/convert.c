/* nc_convert (include/neuroc/convert.h): ANN graph → SNN structure
 * (convert_graph.c), thresholds from calibration (calibrate.c), optional
 * QCFS fine-tuning (train.c), optional binary spikes (convert_fold.c), and
 * the report (convert_report.c). */
#include <math.h>
#include <string.h>

#include "snn/base/finite.h"
#include "calibrate.h"
#include "convert_bursts.h"
#include "convert_graph.h"
#include "convert_report.h"
#include "operating_point.h"
#include "convert/train/train.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "convert/ann/model.h"
#include "snn/base/tensor.h"
#include "snn/ir/snn_ir.h"

/* From this many IF layers on, conversion notes that signed spikes converge
 * faster (the shipped 5-layer ResNet: 87.8 % against 55.5 % at T = 32). */
#define DEEP_IF_LAYERS 5

#define NC_CALIB_BATCH 64

/* The defaults fill_defaults gives zero fields, written out (levels stays
 * 0: "8, or what the QCFS pattern says"). */
void nc_convert_options_init(nc_convert_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->method = NC_THRESHOLD_DEFAULT;
    o->spikes = NC_SPIKES_DEFAULT;
    o->percentile = 99.9;
    o->timesteps = 8;
    o->calib_samples = 1000;
    o->reset = NC_RESET_SUBTRACT;
    o->maxpool = NC_MAXPOOL_SPIKES;
    o->qcfs_lr = 1e-3f;
    o->qcfs_batch = 64;
    o->correction_rounds = 1;
}

static nc_status fill_defaults(const nc_convert_options *opt, nc_convert_options *o)
{
    memset(o, 0, sizeof *o);
    if (opt)
        *o = *opt;
    else
        o->maxpool = NC_MAXPOOL_SPIKES; /* NULL means nc_convert_options_init's defaults */
    if (o->percentile == 0.0)
        o->percentile = 99.9;
    if (o->timesteps == 0)
        o->timesteps = 8;
    if (o->calib_samples == 0)
        o->calib_samples = 1000;
    if (o->qcfs_lr == 0.0f)
        o->qcfs_lr = 1e-3f;
    if (o->qcfs_batch == 0)
        o->qcfs_batch = 64;
    if (o->correction_rounds == 0)
        o->correction_rounds = 1;
    if (!(o->percentile > 0.0 && o->percentile <= 100.0))
        return nc_errorf(NC_ERR_INVALID_ARG, "percentile %g is outside (0, 100]", o->percentile);
    if (o->spikes != NC_SPIKES_DEFAULT && o->spikes != NC_SPIKES_SIGNED && o->spikes != NC_SPIKES_PLAIN)
        return nc_errorf(NC_ERR_INVALID_ARG, "unknown spike kind %d", (int)o->spikes);
    if (o->spikes == NC_SPIKES_SIGNED && o->reset == NC_RESET_ZERO)
        return nc_errorf(NC_ERR_INVALID_ARG, "signed spikes need the subtractive reset (a negative spike gives "
                         "back the θ a spike took): use plain spikes with the reset to zero");
    /* the default is signed, unless the reset to zero asks for the plain neuron */
    if (o->spikes == NC_SPIKES_DEFAULT)
        o->spikes = o->reset == NC_RESET_ZERO ? NC_SPIKES_PLAIN : NC_SPIKES_SIGNED;
    /* a default burst of 0 is resolved once the graph is known (convert_bursts.c) */
    if (o->burst == 0 && (o->spikes != NC_SPIKES_SIGNED || o->qcfs_epochs > 0))
        o->burst = 1;
    if (o->burst < 0 || o->burst > 1024)
        return nc_errorf(NC_ERR_INVALID_ARG, "burst %d is outside [1, 1024]", o->burst);
    if (o->burst > 1 && o->spikes != NC_SPIKES_SIGNED)
        return nc_errorf(NC_ERR_INVALID_ARG, "bursts (burst %d) are for signed spikes; plain IF neurons send one "
                         "spike a step", o->burst);
    if (o->burst > 1 && o->qcfs_epochs > 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "QCFS fine-tuning does not train bursts (burst %d)", o->burst);
    if (o->method == NC_THRESHOLD_DEFAULT)
        o->method = o->spikes == NC_SPIKES_SIGNED ? NC_THRESHOLD_MAX : NC_THRESHOLD_PERCENTILE;
    if (o->method != NC_THRESHOLD_PERCENTILE && o->method != NC_THRESHOLD_MAX && o->method != NC_THRESHOLD_MSE)
        return nc_errorf(NC_ERR_INVALID_ARG, "unknown threshold method %d", (int)o->method);
    if (o->maxpool != NC_MAXPOOL_CURRENTS && o->maxpool != NC_MAXPOOL_AVERAGE && o->maxpool != NC_MAXPOOL_SPIKES)
        return nc_errorf(NC_ERR_INVALID_ARG, "unknown maxpool mode %d", (int)o->maxpool);
    if (o->reset != NC_RESET_DEFAULT && o->reset != NC_RESET_SUBTRACT && o->reset != NC_RESET_ZERO)
        return nc_errorf(NC_ERR_INVALID_ARG, "unknown reset mode %d", (int)o->reset);
    if (o->timesteps < 0 || o->timesteps > 1000000 || o->levels < 0 || o->levels > 65536 ||
        o->calib_samples < 0 || o->qcfs_epochs < 0 || o->qcfs_batch < 0 || !(o->qcfs_lr > 0.0f) ||
        o->correction_rounds < 0 || o->correction_rounds > 1000)
        return nc_errorf(NC_ERR_INVALID_ARG, "conversion options out of range (timesteps %d, levels %d, "
                         "calibration samples %lld, QCFS epochs %d, batch %d, lr %g, correction rounds %d)",
                         o->timesteps, o->levels, (long long)o->calib_samples, o->qcfs_epochs, o->qcfs_batch,
                         (double)o->qcfs_lr, o->correction_rounds);
    return NC_OK;
}

/* L: the QCFS pattern's, when the model has one (a differing --levels is
 * ignored with a warning), else the option's (default 8). */
static nc_status choose_levels(nc_cgraph *cg, const nc_convert_options *o, int *levels)
{
    int pattern = 0;
    for (int i = 0; i < cg->n_sites; i++)
        if (cg->sites[i].rule == NC_THETA_QCFS) {
            if (pattern && cg->sites[i].levels != pattern)
                return nc_strlist_addf(&cg->warnings, "the model's QCFS layers use different L (%d and %d); "
                                       "fine-tuning uses %d", pattern, cg->sites[i].levels, pattern);
            pattern = cg->sites[i].levels;
        }
    *levels = pattern ? pattern : (o->levels ? o->levels : 8);
    if (pattern && o->levels && o->levels != pattern)
        return nc_strlist_addf(&cg->warnings, "the model's QCFS layers use L = %d; levels = %d is ignored",
                               pattern, o->levels);
    return NC_OK;
}

static nc_status finetune(nc_cgraph *cg, const nc_tensor *calib, const nc_tensor *labels,
                          const nc_convert_options *o, int levels)
{
    if (!calib || !labels)
        return nc_errorf(NC_ERR_INVALID_ARG, "QCFS fine-tuning (%d epochs) needs calibration data and labels",
                         o->qcfs_epochs);
    if (labels->dtype != NC_DTYPE_I64 || labels->numel != calib->shape[0])
        return nc_errorf(NC_ERR_SHAPE, "labels must be int64, one per calibration sample (%lld), not %lld",
                         (long long)calib->shape[0], (long long)labels->numel);
    for (int i = 0; i < cg->n_sites; i++) {
        nc_if_site *site = &cg->sites[i];
        const nc_tensor *th = cg->snn->layers[site->layer].threshold;
        if (!(site->theta0 = nc_malloc((size_t)th->numel * sizeof(float))))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        memcpy(site->theta0, th->data, (size_t)th->numel * sizeof(float));
        site->n_theta0 = th->numel;
    }
    nc_train_options to = {0};
    to.mode = NC_TRAIN_QCFS;
    to.levels = levels;
    to.epochs = o->qcfs_epochs;
    to.batch = o->qcfs_batch;
    to.lr = o->qcfs_lr;
    to.seed = o->seed;
    to.progress = o->progress;
    to.progress_user = o->progress_user;
    to.dist = o->dist;
    nc_status st = nc_train(cg->snn, calib, labels, &to);
    if (st != NC_OK && st != NC_ERR_NOMEM)
        nc_error_prefix("QCFS fine-tuning");
    return st;
}

nc_status nc_convert(const nc_model *m, const nc_tensor *calib, const nc_tensor *labels,
                     const nc_convert_options *opt, nc_snn **out, nc_convert_report **report)
{
    if (out)
        *out = NULL;
    if (report)
        *report = NULL;
    if (!m || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_convert: model or out is NULL");
    if (opt && opt->target_loss != 0)
        return nc_convert_operating_point(m, calib, labels, opt, out, report);
    nc_convert_options o;
    nc_status st = fill_defaults(opt, &o);
    if (st != NC_OK || (st = nc_graph_check_runnable(m->g)) != NC_OK || /* describe_only models */
        (st = nc_check_finite(calib, "calibration data", NC_FINITE_SAMPLES)) != NC_OK)
        return st;
    nc_cgraph cg;
    if ((st = nc_cgraph_build(m->g, &o, &cg)) != NC_OK)
        return st;
    /* the default, signed spikes and calibration data: as fine as the network needs (convert_bursts.c) */
    int by_resolution = o.burst == 0 && nc_default_burst(&cg) == NC_DEFAULT_BURST;
    if (o.burst == 0)
        o.burst = nc_default_burst(&cg);

    int n_calib = 0, levels = 8, n_scale = 0;
    int64_t calib_used = 0;
    nc_snn *folded = NULL;
    for (int i = 0; i < cg.n_sites; i++)
        n_calib += cg.sites[i].rule == NC_THETA_CALIB;
    if (n_calib > 0) {
        nc_calib_options co = {o.method, o.percentile, o.count_zeros, o.per_channel, o.timesteps,
                               o.calib_samples, NC_CALIB_BATCH, o.progress, o.progress_user, o.dist};
        if (!calib) {
            /* data-free: from the BatchNorm statistics (calibrate_datafree.c) */
            if ((st = nc_calibrate_data_free(m->g, &co, cg.snn, cg.sites, cg.n_sites, &cg.warnings)) != NC_OK)
                goto done;
            goto calibrated;
        }
        nc_graph *view = NULL;
        if (cg.n_maxpool && o.maxpool == NC_MAXPOOL_AVERAGE && (st = nc_graph_avgpool_view(m->g, &view)) != NC_OK)
            goto done;
        st = nc_calibrate(view ? view : m->g, calib, &co, cg.snn, cg.sites, cg.n_sites, &cg.warnings);
        nc_graph_view_free(view);
        if (st != NC_OK)
            goto done;
        calib_used = o.calib_samples < calib->shape[0] ? o.calib_samples : calib->shape[0];
    }
calibrated:
    if ((st = choose_levels(&cg, &o, &levels)) != NC_OK)
        goto done;
    if (by_resolution && calib && n_calib > 0 &&
        (st = nc_resolution_burst(&cg, calib, o.burst, &o.burst, &cg.notes)) != NC_OK)
        goto done;
    if ((st = nc_apply_bursts(&cg, o.burst, &cg.notes)) != NC_OK)
        goto done;
    if (o.spikes == NC_SPIKES_PLAIN) { /* where signed neurons pay off (docs/signed-spikes.md): say so */
        int n_if = 0;
        for (int i = 0; i < cg.snn->n_layers; i++)
            n_if += cg.snn->layers[i].kind == NC_SNN_IF;
        if (n_if >= DEEP_IF_LAYERS &&
            (st = nc_strlist_addf(&cg.notes, "%d IF layers: a plain IF neuron keeps the spikes it fired while "
                                  "its input was still positive, and a deep network adds these errors up layer "
                                  "by layer; signed spikes (the default; nc_convert_options.spikes) "
                                  "take them back and converge in far fewer steps", n_if)) != NC_OK)
            goto done;
    }
    if ((o.bias_correction || o.potential_correction) && o.qcfs_epochs > 0) {
        if ((st = nc_strlist_addf(&cg.notes, "bias and potential correction are skipped: after QCFS "
                                  "fine-tuning the ANN no longer describes the network")) != NC_OK)
            goto done;
    } else if (o.bias_correction || o.potential_correction) {
        if (!calib) {
            st = nc_errorf(NC_ERR_INVALID_ARG, "%s correction needs calibration data (--calib): it compares "
                           "the SNN with the ANN on samples; a data-free conversion cannot have it",
                           o.bias_correction && o.potential_correction ? "bias and potential"
                           : o.bias_correction ? "bias" : "potential");
            goto done;
        }
        nc_graph *view = NULL;
        if (cg.n_maxpool && o.maxpool == NC_MAXPOOL_AVERAGE && (st = nc_graph_avgpool_view(m->g, &view)) != NC_OK)
            goto done;
        nc_correct_options co = {o.timesteps, o.calib_samples, o.bias_correction, o.potential_correction,
                                 o.correction_rounds, o.progress, o.progress_user, o.dist};
        st = nc_layer_correct(view ? view : m->g, calib, &co, cg.snn, cg.sites, cg.n_sites, &cg.warnings);
        nc_graph_view_free(view);
        if (st != NC_OK)
            goto done;
        calib_used = o.calib_samples < calib->shape[0] ? o.calib_samples : calib->shape[0];
    }
    if (o.qcfs_epochs > 0 && (st = finetune(&cg, calib, labels, &o, levels)) != NC_OK)
        goto done;
    if (o.binary_spikes && (st = nc_snn_fold_spike_values(cg.snn, &folded, &n_scale)) != NC_OK)
        goto done;
    /* what the model's weights, or folding them, made of it (a BatchNorm variance below -eps: NaN) */
    if ((st = nc_snn_check_finite(folded ? folded : cg.snn, m->g->source)) != NC_OK)
        goto done;
    if (report) {
        nc_report_input in = {m->g, &o, &cg, cg.snn, levels, calib_used, NC_CALIB_BATCH,
                              o.qcfs_epochs > 0 ? calib->shape[0] : 0, n_scale,
                              (int)nc_snn_num_layers(folded ? folded : cg.snn)};
        if ((st = nc_convert_report_build(&in, report)) != NC_OK)
            goto done;
    }
    if (folded) {
        *out = folded;
        folded = NULL;
    } else {
        *out = cg.snn;
        cg.snn = NULL;
    }
done:
    nc_snn_free(folded);
    nc_cgraph_clear(&cg);
    return st;
}
