/* nc_convert with nc_convert_options.target_loss (include/neuroc/convert.h):
 * the operating point chosen for the user. The calibration data is split:
 * conversions calibrate on its first rows, and every candidate is run on
 * the held-back rest to max_timesteps; its cost is the least energy at a t
 * whose accuracy is within target_loss points of the ANN there. Options the
 * caller left at their defaults are searched one at a time (coordinate
 * descent, the best value kept before the next option): burst, threshold
 * statistic, per-channel thresholds, bias correction (measured at the best
 * T so far). Each conversion costs a calibration and an SNN run of the
 * held-back samples, so the search is a handful of them, not a grid. With
 * finetune_epochs, the best conversion is then fine-tuned at smaller T
 * (BPTT on the calibration rows): training at the T it will run at lets a
 * network reach at T = 2..4 what conversion alone reaches at 8..16. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convert_report.h"
#include "operating_point.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/json.h"
#include "snn/base/tensor.h"
#include "snn/session/eval.h"

#define HOLDOUT_DEFAULT 2000 /* at most, and half the data at most */
#define HOLDOUT_MIN 100
#define SEARCH_MAX_T 32
#define MAX_CANDIDATES 16
#define POW2_T 13                /* t = 2^k ≤ 4096 */

typedef struct candidate {
    int burst;                   /* 0 = conversion's default */
    nc_threshold_method method;  /* NC_THRESHOLD_DEFAULT = conversion's default */
    double percentile;
    int per_channel, bias_correction, correction_t; /* correction_t: the T of bias correction and of the mse clip */
    int finetune_t;              /* fine-tuned at this T; 0 = not */
    double energy_pow2[POW2_T];  /* J at t = 1, 2, 4, … ≤ max_t (the report's "steps") */
    double loss_pow2[POW2_T];    /* points at those t */
    int t;                       /* least t within the target; 0: none up to max_t */
    double loss, energy;         /* points and J at t (at max_t without one) */
} candidate;

typedef struct search {
    const nc_model *m;
    nc_tensor *calib, *held, *held_labels;  /* views of the caller's data (held_labels may be owned) */
    nc_tensor *calib_labels;     /* the caller's labels of calib (fine-tuning); NULL without labels */
    int labels_owned;
    const nc_convert_options *o;
    nc_convert_options base;
    int max_t;
    const char *backend;
    double ann_accuracy, ann_joules;
    candidate tried[MAX_CANDIDATES];
    int n_tried, planned;
    int search_burst, search_method; /* the caller left them to the search */
    int best;                    /* index into tried, -1 before the first */
    nc_snn *best_snn;
    nc_convert_report *best_report;
} search;

static int feasible(const candidate *c) { return c->t > 0; }

/* a better than b: within the target beats not; then less energy; among
 * those out of reach, less loss at max_t. */
static int better(const candidate *a, const candidate *b)
{
    if (feasible(a) != feasible(b))
        return feasible(a);
    return feasible(a) ? a->energy < b->energy : a->loss < b->loss;
}

/* Rows [r0, r0 + n) of x as a tensor over its buffer. */
static nc_status rows_view(const nc_tensor *x, int64_t r0, int64_t n, nc_tensor **out)
{
    int64_t shape[NC_MAX_DIMS];
    memcpy(shape, x->shape, (size_t)x->ndim * sizeof *shape);
    int64_t per = x->shape[0] ? x->numel / x->shape[0] : 0;
    shape[0] = n;
    size_t esize = nc_dtype_size(x->dtype);
    return nc_tensor_wrap(x->dtype, x->ndim, shape, (char *)x->data + (size_t)(r0 * per) * esize, out);
}

/* The ANN's class for each held-back row, as labels: without the caller's
 * labels, the loss is the SNN's disagreement with the ANN. */
static nc_status ann_labels(search *S)
{
    int64_t n = S->held->shape[0], chunk = 256;
    nc_tensor *lab = NULL;
    nc_status st = nc_tensor_create(NC_DTYPE_I64, 1, &n, &lab);
    for (int64_t r0 = 0; st == NC_OK && r0 < n; r0 += chunk) {
        int64_t k = n - r0 < chunk ? n - r0 : chunk;
        nc_tensor *bx = NULL, *y = NULL;
        if ((st = rows_view(S->held, r0, k, &bx)) != NC_OK)
            break;
        const nc_tensor *in[1] = {bx};
        st = nc_model_run(S->m, in, 1, &y, 1);
        nc_tensor_free(bx);
        if (st == NC_OK && (y->dtype != NC_DTYPE_F32 || y->ndim < 1 || y->shape[0] != k || y->numel % k))
            st = nc_errorf(NC_ERR_SHAPE, "the ANN's output 0 is not one row of class scores per sample");
        for (int64_t i = 0; st == NC_OK && i < k; i++)
            ((int64_t *)lab->data)[r0 + i] = nc_eval_argmax(nc_f32(y) + i * (y->numel / k), y->numel / k);
        nc_tensor_free(y);
    }
    if (st != NC_OK) {
        nc_tensor_free(lab);
        return st;
    }
    S->held_labels = lab;
    S->labels_owned = 1;
    return NC_OK;
}

static void candidate_options(const search *S, const candidate *c, nc_convert_options *o)
{
    *o = S->base;
    o->burst = c->burst;
    o->method = c->method;
    o->percentile = c->percentile;
    o->per_channel = c->per_channel;
    o->bias_correction = c->bias_correction;
    if ((c->bias_correction || c->method == NC_THRESHOLD_MSE) && !S->o->timesteps && c->correction_t)
        o->timesteps = c->correction_t;
}

/* Scores c from an evaluation of its network on the held-back rows. */
static nc_status score(search *S, candidate *c, const nc_eval_result *r)
{
    if (S->best < 0) { /* the first run measured the ANN */
        S->ann_accuracy = S->labels_owned ? 1.0 : nc_eval_result_ann_accuracy(r);
        nc_eval_cost cost;
        nc_status st = nc_eval_result_cost(r, &cost);
        if (st != NC_OK)
            return st;
        S->ann_joules = cost.ann_joules;
    }
    for (int k = 0; k < POW2_T && (1 << k) <= S->max_t; k++) {
        nc_eval_cost cost;
        nc_status st = nc_eval_result_cost_at(r, 1 << k, &cost);
        if (st != NC_OK)
            return st;
        c->energy_pow2[k] = cost.snn_joules;
        c->loss_pow2[k] = 100.0 * (S->ann_accuracy - nc_eval_result_accuracy_at(r, 1 << k));
    }
    c->t = 0;
    for (int t = 1; t <= S->max_t; t++) {
        double loss = 100.0 * (S->ann_accuracy - nc_eval_result_accuracy_at(r, t));
        if (t < S->max_t && loss > S->o->target_loss)
            continue;
        nc_eval_cost cost;
        nc_status st = nc_eval_result_cost_at(r, t, &cost);
        if (st != NC_OK)
            return st;
        c->loss = loss;
        c->energy = cost.snn_joules;
        if (loss <= S->o->target_loss)
            c->t = t;
        break; /* energy only grows with t: the first t within the target is the cheapest */
    }
    return NC_OK;
}

/* BPTT at T on the calibration rows, with the recipe that brought the
 * shipped CNN within a point of its ANN at T = 4 in one epoch
 * (docs/accuracy.md): a higher rate than nc_snn_finetune's cautious
 * default, thresholds trained, a narrow surrogate, the reset detached. */
static nc_status finetune(const search *S, nc_snn *snn, int t)
{
    nc_finetune_options fo;
    nc_finetune_options_init(&fo);
    fo.timesteps = t;
    fo.epochs = S->o->finetune_epochs;
    fo.lr = S->o->finetune_lr > 0 ? S->o->finetune_lr : 3e-3f;
    fo.train_thresholds = 1;
    fo.surrogate_width = 0.5f;
    fo.detach_reset = 1;
    fo.energy_weight = S->o->finetune_energy_weight;
    fo.batch = S->o->qcfs_batch ? S->o->qcfs_batch : 64;
    fo.seed = S->o->seed;
    fo.threads = S->o->threads;
    fo.dist = S->o->dist;
    fo.progress = S->o->progress;
    fo.progress_user = S->o->progress_user;
    nc_status st = nc_snn_finetune(snn, S->calib, S->calib_labels, NULL, NULL, &fo);
    if (st != NC_OK)
        nc_error_prefix("fine-tuning at T = %d", t);
    return st;
}

/* Converts and scores candidate c; keeps its network when it is the best. */
static nc_status try_candidate(search *S, candidate c)
{
    if (S->n_tried == MAX_CANDIDATES)
        return NC_OK;
    nc_convert_options o;
    candidate_options(S, &c, &o);
    nc_snn *snn = NULL;
    nc_convert_report *rep = NULL;
    nc_eval_result *r = NULL;
    nc_status st = nc_convert(S->m, S->calib, NULL, &o, &snn, &rep);
    if (st == NC_OK && c.finetune_t)
        st = finetune(S, snn, c.finetune_t);
    if (st == NC_OK) {
        nc_eval_options eo;
        nc_eval_options_init(&eo);
        eo.backend = S->backend;
        eo.timesteps = S->max_t;
        eo.dist = S->o->dist;
        st = nc_snn_evaluate(snn, S->best < 0 ? S->m : NULL, S->held, S->held_labels, &eo, &r);
    }
    if (st == NC_OK)
        st = score(S, &c, r);
    nc_eval_result_free(r);
    if (st == NC_OK) {
        S->tried[S->n_tried] = c;
        if (S->best < 0 || better(&c, &S->tried[S->best])) {
            S->best = S->n_tried;
            nc_snn_free(S->best_snn);
            nc_convert_report_free(S->best_report);
            S->best_snn = snn, S->best_report = rep;
            snn = NULL, rep = NULL;
        }
        S->n_tried++;
    }
    nc_snn_free(snn);
    nc_convert_report_free(rep);
    if (S->o->progress)
        S->o->progress("operating point search", S->n_tried, S->planned, S->o->progress_user);
    return st;
}

/* The backend the candidates run on: cpu-fast where this build has it. */
static const char *search_backend(void)
{
    for (int i = 0; i < nc_backend_count(); i++) {
        nc_backend_info bi;
        if (nc_backend_get_info(i, &bi) == NC_OK && bi.available && strcmp(bi.name, "cpu-fast") == 0)
            return "cpu-fast";
    }
    return "cpu";
}

/* The validation rows: the calibration samples' shape and type, labelled
 * one per row where labels come with them. */
static nc_status check_validation(const nc_tensor *calib, const nc_convert_options *o)
{
    const nc_tensor *v = o->validation, *vl = o->validation_labels;
    if (!v) {
        if (vl)
            return nc_errorf(NC_ERR_INVALID_ARG, "validation labels without validation samples");
        return NC_OK;
    }
    if (o->holdout_samples)
        return nc_errorf(NC_ERR_INVALID_ARG, "validation samples replace the held-back calibration rows: give "
                         "them or a number of rows to hold back (%lld), not both", (long long)o->holdout_samples);
    int same = v->dtype == calib->dtype && v->ndim == calib->ndim;
    for (int i = 1; same && i < v->ndim; i++)
        same = v->shape[i] == calib->shape[i];
    if (!same || v->shape[0] < 1)
        return nc_errorf(NC_ERR_SHAPE, "validation samples must be rows shaped as the calibration samples, "
                         "at least one");
    if (vl && (vl->dtype != NC_DTYPE_I64 || vl->numel != v->shape[0]))
        return nc_errorf(NC_ERR_SHAPE, "validation labels must be int64, one per validation sample (%lld), not "
                         "%lld", (long long)v->shape[0], (long long)vl->numel);
    return NC_OK;
}

static nc_status check_request(const nc_tensor *calib, const nc_tensor *labels, const nc_convert_options *o)
{
    if (!(o->target_loss > 0 && o->target_loss <= 100))
        return nc_errorf(NC_ERR_INVALID_ARG, "target loss %g is outside (0, 100] accuracy points", o->target_loss);
    if (!calib)
        return nc_errorf(NC_ERR_INVALID_ARG, "a target loss needs calibration data (--calib): the candidates "
                         "are measured on held-back samples of it");
    if (o->qcfs_epochs > 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "a target loss searches conversions without QCFS fine-tuning; "
                         "leave out --qcfs-epochs");
    if (o->finetune_epochs < 0 || !(o->finetune_lr >= 0) || !isfinite(o->finetune_lr) ||
        !(o->finetune_energy_weight >= 0) || !isfinite(o->finetune_energy_weight))
        return nc_errorf(NC_ERR_INVALID_ARG, "fine-tuning epochs %d, learning rate %g or energy weight %g out of "
                         "range", o->finetune_epochs, (double)o->finetune_lr, (double)o->finetune_energy_weight);
    int max_t = o->max_timesteps ? o->max_timesteps : SEARCH_MAX_T;
    if (o->finetune_timesteps < 0 || o->finetune_timesteps > max_t)
        return nc_errorf(NC_ERR_INVALID_ARG, "fine-tuning T %d is outside 1..%d, the search's largest T",
                         o->finetune_timesteps, max_t);
    if (o->finetune_epochs > 0 && !labels)
        return nc_errorf(NC_ERR_INVALID_ARG, "fine-tuning in the search needs the calibration samples' labels "
                         "(--labels)");
    if (o->max_timesteps < 0 || o->max_timesteps > 4096 || o->holdout_samples < 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "search options out of range (max timesteps %d, held-back "
                         "samples %lld)", o->max_timesteps, (long long)o->holdout_samples);
    if (labels && (labels->dtype != NC_DTYPE_I64 || labels->numel != calib->shape[0]))
        return nc_errorf(NC_ERR_SHAPE, "labels must be int64, one per calibration sample (%lld), not %lld",
                         (long long)calib->shape[0], (long long)labels->numel);
    return check_validation(calib, o);
}

/* Validation data: every calibration row calibrates (and fine-tunes), the
 * validation rows score. */
static nc_status validation_data(search *S, const nc_tensor *calib, const nc_tensor *labels)
{
    const nc_convert_options *o = S->o;
    nc_status st = rows_view(calib, 0, calib->shape[0], &S->calib);
    if (st == NC_OK)
        st = rows_view(o->validation, 0, o->validation->shape[0], &S->held);
    if (st == NC_OK && labels)
        st = nc_tensor_wrap(NC_DTYPE_I64, 1, &calib->shape[0], labels->data, &S->calib_labels);
    if (st == NC_OK && o->validation_labels)
        st = nc_tensor_wrap(NC_DTYPE_I64, 1, &o->validation->shape[0], o->validation_labels->data,
                            &S->held_labels);
    else if (st == NC_OK)
        st = ann_labels(S);
    return st;
}

static nc_status split_data(search *S, const nc_tensor *calib, const nc_tensor *labels)
{
    if (S->o->validation)
        return validation_data(S, calib, labels);
    int64_t n = calib->shape[0];
    int64_t held = S->o->holdout_samples ? S->o->holdout_samples : (n / 2 < HOLDOUT_DEFAULT ? n / 2 : HOLDOUT_DEFAULT);
    if (held < HOLDOUT_MIN || n - held < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "a target loss needs at least %d held-back samples and one to "
                         "calibrate on: %lld calibration samples, %lld held back", HOLDOUT_MIN, (long long)n,
                         (long long)held);
    nc_status st = rows_view(calib, 0, n - held, &S->calib);
    if (st == NC_OK)
        st = rows_view(calib, n - held, held, &S->held);
    if (st == NC_OK && labels) {
        int64_t one = held, rest = n - held;
        st = nc_tensor_wrap(NC_DTYPE_I64, 1, &one, (int64_t *)labels->data + (n - held), &S->held_labels);
        if (st == NC_OK)
            st = nc_tensor_wrap(NC_DTYPE_I64, 1, &rest, labels->data, &S->calib_labels);
    } else if (st == NC_OK) {
        st = ann_labels(S);
    }
    return st;
}

static const char *method_label(const candidate *c, char *buf, size_t n)
{
    if (c->method == NC_THRESHOLD_PERCENTILE)
        snprintf(buf, n, "p%g", c->percentile);
    else
        snprintf(buf, n, "%s", c->method == NC_THRESHOLD_MAX ? "max" : c->method == NC_THRESHOLD_MSE ? "mse"
                                                                                                  : "default");
    return buf;
}

static void put_candidate(nc_json *j, const search *S, const candidate *c)
{
    char mb[32];
    nc_json_begin_object(j, NULL);
    nc_json_int(j, "burst", c->burst);
    nc_json_string(j, "threshold", method_label(c, mb, sizeof mb));
    nc_json_bool(j, "per_channel", c->per_channel);
    nc_json_bool(j, "bias_correction", c->bias_correction);
    if (c->finetune_t)
        nc_json_int(j, "finetune_timesteps", c->finetune_t);
    else
        nc_json_null(j, "finetune_timesteps");
    if (c->t)
        nc_json_int(j, "timesteps", c->t);
    else
        nc_json_null(j, "timesteps");
    nc_json_number(j, "loss", c->loss);
    nc_json_number(j, "energy_ratio", S->ann_joules > 0 ? c->energy / S->ann_joules : NAN);
    nc_json_begin_array(j, "steps"); /* the candidate's accuracy and energy along t */
    for (int k = 0; k < POW2_T && (1 << k) <= S->max_t; k++) {
        nc_json_begin_object(j, NULL);
        nc_json_int(j, "t", 1 << k);
        nc_json_number(j, "loss", c->loss_pow2[k]);
        nc_json_number(j, "energy_ratio", S->ann_joules > 0 ? c->energy_pow2[k] / S->ann_joules : NAN);
        nc_json_end_object(j);
    }
    nc_json_end_array(j);
    nc_json_end_object(j);
}

/* Fine-tuned candidates were scored against labels on calibration rows,
 * which the ANN may have trained on while they did not. */
static int finetuned_on_calibration(const search *S)
{
    int any = 0;
    for (int i = 0; i < S->n_tried; i++)
        any |= S->tried[i].finetune_t != 0;
    return any && !S->o->validation && !S->labels_owned;
}

/* The search's record in the chosen conversion's report. */
static nc_status attach(search *S)
{
    const candidate *b = &S->tried[S->best];
    nc_operating_point op = {
        .timesteps = b->t ? b->t : S->max_t,
        .target_loss = S->o->target_loss,
        .loss = b->loss,
        .snn_joules = b->energy,
        .ann_joules = S->ann_joules,
        .energy_ratio = S->ann_joules > 0 ? b->energy / S->ann_joules : NAN,
        .ann_accuracy = S->ann_accuracy,
        .holdout_samples = S->held->shape[0],
        .labelled = !S->labels_owned,
        .feasible = feasible(b),
        .candidates = S->n_tried,
        .burst = b->burst,
        .method = b->method,
        .percentile = b->percentile,
        .per_channel = b->per_channel,
        .bias_correction = b->bias_correction,
        .finetune_timesteps = b->finetune_t,
        .finetune_epochs = b->finetune_t ? S->o->finetune_epochs : 0,
        .validation = S->o->validation != NULL,
    };
    char warning[320] = "";
    if (!op.feasible)
        snprintf(warning, sizeof warning, "no conversion tried is within %g points of the ANN up to T = %d on the "
                 "%s samples: the closest (%.2f points at T = %d) was kept; raise the search's largest T "
                 "or the target", op.target_loss, S->max_t, op.validation ? "validation" : "held-back", op.loss,
                 S->max_t);
    nc_json j;
    nc_json_init(&j);
    nc_json_begin_object(&j, NULL);
    nc_json_int(&j, "timesteps", op.timesteps);
    nc_json_number(&j, "target_loss", op.target_loss);
    nc_json_number(&j, "loss", op.loss);
    nc_json_number(&j, "energy_ratio", op.energy_ratio);
    nc_json_number(&j, "snn_joules", op.snn_joules);
    nc_json_number(&j, "ann_joules", op.ann_joules);
    nc_json_number(&j, "ann_accuracy", op.ann_accuracy);
    nc_json_bool(&j, "feasible", op.feasible);
    if (warning[0])
        nc_json_string(&j, "warning", warning);
    nc_json_int(&j, "holdout_samples", op.holdout_samples);
    nc_json_string(&j, "scored_on", op.validation ? "validation samples" : "held-back calibration samples");
    nc_json_int(&j, "calibration_samples", S->calib->shape[0]);
    nc_json_string(&j, "loss_against", op.labelled ? "labels" : "the ANN's predictions");
    nc_json_string(&j, "backend", S->backend);
    nc_json_int(&j, "max_timesteps", S->max_t);
    nc_json_string(&j, "search", "one option at a time (burst, threshold, per_channel, bias_correction), the "
                   "best kept, then with finetune_epochs the best fine-tuned at T = 1, 2, 4, ... below its T; "
                   "a candidate's cost is its energy at the least t within the target loss");
    nc_json_int(&j, "finetune_epochs", op.finetune_epochs);
    if (op.finetune_timesteps)
        nc_json_int(&j, "finetune_timesteps", op.finetune_timesteps);
    else
        nc_json_null(&j, "finetune_timesteps");
    nc_json_begin_array(&j, "candidates");
    for (int i = 0; i < S->n_tried; i++)
        put_candidate(&j, S, &S->tried[i]);
    nc_json_end_array(&j);
    nc_json_end_object(&j);
    char *text = nc_json_take(&j);
    if (!text)
        return nc_errorf(NC_ERR_NOMEM, "out of memory writing the operating point");
    nc_status st = nc_convert_report_set_operating_point(S->best_report, &op, text);
    nc_free(text);
    if (st == NC_OK && warning[0])
        st = nc_convert_report_add_warning(S->best_report, "%s", warning);
    if (st == NC_OK && finetuned_on_calibration(S))
        st = nc_convert_report_add_warning(
            S->best_report, "the fine-tuned candidates were scored on held-back calibration samples: if the ANN "
            "trained on them, its accuracy there (%.2f %%) is above what it scores on new data, and a fine-tuned "
            "network, which did not train on them, is measured that much short (on the shipped CNN about 2 "
            "points); give validation samples the ANN did not train on (--validation)", 100.0 * S->ann_accuracy);
    return st;
}

/* The first T fine-tuned below a best t of `limit` (0: none): 1, or the
 * caller's finetune_timesteps, which is then the only one. */
static int first_finetune_t(const search *S, int limit)
{
    if (S->o->finetune_epochs <= 0)
        return 0;
    if (S->o->finetune_timesteps)
        return S->o->finetune_timesteps;
    return limit > 1 ? 1 : 0;
}

/* The next T after ft: 2·ft while below limit; 0 when done. */
static int next_finetune_t(const search *S, int ft, int limit)
{
    return S->o->finetune_timesteps || 2 * ft >= limit ? 0 : 2 * ft;
}

/* Fine-tuning rounds below a best t of `limit`. */
static int finetune_rounds(const search *S, int limit)
{
    int n = 0;
    for (int ft = first_finetune_t(S, limit); ft; ft = next_finetune_t(S, ft, limit))
        n++;
    return n;
}

/* The conversion fine-tuning at T starts from: the best conversion's
 * options, but calibrated for T (the clip that minimises the error of the
 * T-step quantised output, NC_THRESHOLD_MSE at T) and sending one spike a
 * step (a burst is a multiply-add at the synapse: the costly code at small
 * T), unless the caller set these. Training keeps roughly its start's spike
 * budget (the energy term trades it down), and it recovers an accurate
 * start, not a starved one: on the shipped CNN at T = 4 the max-threshold
 * conversion (0.1 x the ANN's energy, 65 %) stayed 14–69 points off after
 * one epoch on 10k rows, while the T-calibrated one starts at 91.3 %
 * (0.38 x) (docs/energy.md). */
static candidate finetune_start(const search *S, int ft)
{
    candidate c = S->tried[S->best];
    if (S->search_burst)
        c.burst = 1;
    if (S->search_method)
        c.method = NC_THRESHOLD_MSE;
    c.correction_t = ft; /* the T of the mse clip and of bias correction */
    c.finetune_t = ft;
    return c;
}

/* Fine-tuning at T = 1, 2, 4, … below the best t so far, the smallest T
 * first: the first within the target is the cheapest, as energy grows with
 * T. */
static nc_status finetune_search(search *S)
{
    const candidate best = S->tried[S->best];
    int limit = feasible(&best) ? best.t : S->max_t + 1;
    S->planned = S->n_tried + finetune_rounds(S, limit);
    nc_status st = NC_OK;
    for (int ft = first_finetune_t(S, limit); st == NC_OK && ft; ft = next_finetune_t(S, ft, limit)) {
        st = try_candidate(S, finetune_start(S, ft));
        if (st == NC_OK && feasible(&S->tried[S->n_tried - 1]))
            break;
    }
    return st;
}

/* The values of each searched option, the caller's own setting kept. */
static nc_status run_search(search *S)
{
    const nc_convert_options *o = S->o;
    static const int bursts[] = {1, 2, 4, 8, 16};
    static const struct { nc_threshold_method m; double p; } methods[] = {
        {NC_THRESHOLD_MAX, 99.9}, {NC_THRESHOLD_PERCENTILE, 99.99}, {NC_THRESHOLD_PERCENTILE, 99.9}};
    int search_burst = S->search_burst = o->burst == 0 && o->spikes != NC_SPIKES_PLAIN && o->reset != NC_RESET_ZERO;
    int search_method = S->search_method = o->method == NC_THRESHOLD_DEFAULT;
    int search_channel = !o->per_channel;
    int search_bias = !o->bias_correction && !o->potential_correction;
    S->planned = 1 + (search_burst ? 4 : 0) + (search_method ? 2 : 0) + search_channel + search_bias +
                 finetune_rounds(S, S->max_t);
    candidate start = {.burst = o->burst, .method = o->method, .percentile = o->percentile ? o->percentile : 99.9,
                       .per_channel = o->per_channel, .bias_correction = o->bias_correction};
    if (search_burst)
        start.burst = NC_DEFAULT_BURST;
    if (search_method)
        start.method = o->spikes == NC_SPIKES_PLAIN || o->reset == NC_RESET_ZERO ? NC_THRESHOLD_PERCENTILE
                                                                                 : NC_THRESHOLD_MAX;
    nc_status st = try_candidate(S, start);
    /* each option's values around the best so far as it was before that option */
    candidate base = S->tried[S->best];
    for (size_t i = 0; st == NC_OK && search_burst && i < sizeof bursts / sizeof *bursts; i++) {
        candidate c = base;
        if (bursts[i] == c.burst)
            continue;
        c.burst = bursts[i];
        st = try_candidate(S, c);
    }
    base = S->tried[S->best];
    for (size_t i = 0; st == NC_OK && search_method && i < sizeof methods / sizeof *methods; i++) {
        candidate c = base;
        if (methods[i].m == c.method && (c.method != NC_THRESHOLD_PERCENTILE || methods[i].p == c.percentile))
            continue;
        c.method = methods[i].m, c.percentile = methods[i].p;
        st = try_candidate(S, c);
    }
    if (st == NC_OK && search_channel) {
        candidate c = S->tried[S->best];
        c.per_channel = 1;
        st = try_candidate(S, c);
    }
    if (st == NC_OK && search_bias) {
        candidate c = S->tried[S->best];
        c.bias_correction = 1;
        c.correction_t = c.t ? c.t : S->max_t;
        st = try_candidate(S, c);
    }
    /* one spike a step is the cheap start for fine-tuning; the thresholds
     * were chosen at the best burst, so convert that choice at bursts of 1 */
    return st == NC_OK ? finetune_search(S) : st;
}

nc_status nc_convert_operating_point(const nc_model *m, const nc_tensor *calib, const nc_tensor *labels,
                                     const nc_convert_options *opt, nc_snn **out, nc_convert_report **report)
{
    nc_status st = check_request(calib, labels, opt);
    if (st != NC_OK)
        return st;
    search S = {.m = m, .o = opt, .best = -1, .backend = search_backend()};
    S.max_t = opt->max_timesteps ? opt->max_timesteps : SEARCH_MAX_T;
    S.base = *opt;
    S.base.target_loss = 0; /* each candidate is a plain conversion */
    S.base.progress = NULL; /* the search reports its own progress */
    if ((st = split_data(&S, calib, labels)) == NC_OK)
        st = run_search(&S);
    if (st == NC_OK)
        st = attach(&S);
    if (st == NC_OK)
        st = nc_snn_set_timesteps(S.best_snn, S.tried[S.best].t ? S.tried[S.best].t : S.max_t);
    if (st == NC_OK) {
        *out = S.best_snn;
        S.best_snn = NULL;
        if (report) {
            *report = S.best_report;
            S.best_report = NULL;
        }
    } else {
        nc_error_prefix("operating point search");
    }
    nc_snn_free(S.best_snn);
    nc_convert_report_free(S.best_report);
    nc_tensor_free(S.calib);
    nc_tensor_free(S.held);
    nc_tensor_free(S.held_labels);
    nc_tensor_free(S.calib_labels);
    return st;
}
