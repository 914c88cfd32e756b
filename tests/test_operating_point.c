/* The operating point search (nc_convert_options.target_loss,
 * convert/operating_point.c) on the shipped CNN and 256 Fashion-MNIST test
 * images (128 calibrate, 128 held back): what the report says it measured
 * is what the network returned does on the held-back rows when evaluated
 * again (loss at the chosen T, energy), the network carries that T (and
 * keeps it through a .nir), the options the caller set stay as set, and a
 * search that cannot be made is refused naming why. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct data {
    nc_model *m;
    nc_tensor *x, *y;       /* 256 rows */
    nc_tensor *held, *held_y; /* views of the last 128 */
} data;

static void load(data *d)
{
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("examples/models/cnn.onnx"), NULL, &d->m));
    d->x = nc_test_load_f32("examples/data/fmnist_test_x.npy");
    NC_ASSERT_OK(nc_data_load(nc_test_src("examples/data/fmnist_test_y.npy"), NC_DTYPE_I64, &d->y));
    const int64_t *xs = nc_tensor_shape(d->x);
    assert_int_equal(xs[0], 256);
    int64_t shape[NC_MAX_DIMS], per = nc_tensor_numel(d->x) / 256, n = 128;
    memcpy(shape, xs, (size_t)nc_tensor_ndim(d->x) * sizeof *shape);
    shape[0] = 128;
    NC_ASSERT_OK(nc_tensor_wrap(NC_DTYPE_F32, nc_tensor_ndim(d->x), shape, (float *)nc_tensor_data(d->x) + 128 * per,
                                &d->held));
    NC_ASSERT_OK(nc_tensor_wrap(NC_DTYPE_I64, 1, &n, (int64_t *)nc_tensor_data(d->y) + 128, &d->held_y));
}

static void unload(data *d)
{
    nc_tensor_free(d->held);
    nc_tensor_free(d->held_y);
    nc_tensor_free(d->x);
    nc_tensor_free(d->y);
    nc_model_free(d->m);
}

/* A conversion with a search, and what the search chose. */
static void convert_searched(const data *d, const nc_convert_options *o, const nc_tensor *labels, nc_snn **s,
                             nc_convert_report **rep, nc_operating_point *op)
{
    NC_ASSERT_OK(nc_convert(d->m, d->x, labels, o, s, rep));
    NC_ASSERT_OK(nc_convert_report_operating_point(*rep, op));
}

/* The network the search returned, evaluated again on the held-back rows:
 * its loss at the operating T and its energy are the report's. */
static void check_against_eval(const data *d, const nc_snn *s, const nc_operating_point *op)
{
    nc_eval_options eo;
    nc_eval_options_init(&eo);
    eo.backend = "cpu"; /* the search ran cpu-fast: bit-identical */
    eo.timesteps = op->timesteps;
    nc_eval_result *r = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(s, d->m, d->held, d->held_y, &eo, &r));
    double loss = 100.0 * (nc_eval_result_ann_accuracy(r) - nc_eval_result_accuracy_at(r, op->timesteps));
    nc_eval_cost c;
    NC_ASSERT_OK(nc_eval_result_cost_at(r, op->timesteps, &c));
    print_message("operating point: T = %d, loss %.3f (eval: %.3f), energy %.4g J = %.3f x ANN (eval: %.4g J), "
                  "burst %d, %d candidates\n", op->timesteps, op->loss, loss, op->snn_joules, op->energy_ratio,
                  c.snn_joules, op->burst, op->candidates);
    assert_true(fabs(loss - op->loss) < 1e-9);
    assert_true(fabs(c.snn_joules - op->snn_joules) <= 1e-9 * c.snn_joules);
    assert_true(fabs(c.ann_joules - op->ann_joules) <= 1e-9 * c.ann_joules);
    assert_true(fabs(op->energy_ratio - op->snn_joules / op->ann_joules) < 1e-12);
    nc_eval_result_free(r);
}

static void test_search_with_labels(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    nc_convert_options_init(&o);
    o.target_loss = 1.0;
    o.max_timesteps = 8;
    o.holdout_samples = 128;
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    nc_operating_point op;
    convert_searched(&d, &o, d.y, &s, &rep, &op);
    assert_int_equal(op.holdout_samples, 128);
    assert_int_equal(op.labelled, 1);
    assert_true(op.timesteps >= 1 && op.timesteps <= 8);
    assert_int_equal(nc_snn_timesteps(s), op.timesteps);
    /* burst (4 more), threshold (2), per channel, bias correction */
    assert_int_equal(op.candidates, 9);
    assert_true(op.feasible);
    assert_true(op.loss <= 1.0);
    check_against_eval(&d, s, &op);
    /* the report's JSON has it, and so does a .nir of the network */
    const char *json = nc_convert_report_json(rep);
    assert_non_null(strstr(json, "\"operating_point\":{"));
    assert_non_null(strstr(json, "\"candidates\":"));
    char path[64];
    snprintf(path, sizeof path, "/tmp/nc_op_%d.nir", (int)getpid());
    NC_ASSERT_OK(nc_snn_save_nir(s, path));
    nc_snn *back = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &back));
    assert_int_equal(nc_snn_timesteps(back), op.timesteps);
    unlink(path);
    nc_snn_free(back);
    nc_snn_free(s);
    nc_convert_report_free(rep);
    unload(&d);
}

/* Without labels the loss is against the ANN's own predictions; options the
 * caller set are not searched (burst 4, per channel: burst stays 4). */
static void test_search_against_ann_keeps_set_options(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    nc_convert_options_init(&o);
    o.target_loss = 2.0;
    o.max_timesteps = 6;
    o.burst = 4;
    o.per_channel = 1;
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    NC_ASSERT_OK(nc_convert(d.m, d.x, NULL, &o, &s, &rep)); /* default holdout: half, 128 */
    nc_operating_point op;
    NC_ASSERT_OK(nc_convert_report_operating_point(rep, &op));
    assert_int_equal(op.labelled, 0);
    assert_int_equal(op.holdout_samples, 128);
    assert_true(op.ann_accuracy == 1.0);
    assert_int_equal(op.burst, 4);
    assert_int_equal(op.per_channel, 1);
    assert_int_equal(op.candidates, 4); /* start, p99.99, p99.9, bias correction */
    /* the ANN's predictions on the held-back rows as labels: the same loss */
    nc_tensor *pred = NULL, *ann = NULL;
    const nc_tensor *ins[1] = {d.held};
    NC_ASSERT_OK(nc_model_run(d.m, ins, 1, &ann, 1));
    int64_t n = 128;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_I64, 1, &n, &pred));
    for (int i = 0; i < 128; i++) {
        const float *v = (const float *)nc_tensor_data_const(ann) + 10 * i;
        int b = 0;
        for (int k = 1; k < 10; k++)
            b = v[k] > v[b] ? k : b;
        ((int64_t *)nc_tensor_data(pred))[i] = b;
    }
    data dp = d;
    dp.held_y = pred;
    check_against_eval(&dp, s, &op);
    nc_tensor_free(ann);
    nc_tensor_free(pred);
    nc_snn_free(s);
    nc_convert_report_free(rep);
    unload(&d);
}

/* Everything but bias correction set (burst 4, max, per channel, 64
 * calibration rows): a search of two candidates. */
static void two_candidate_options(nc_convert_options *o, double target_loss, int max_t)
{
    nc_convert_options_init(o);
    o->target_loss = target_loss;
    o->max_timesteps = max_t;
    o->burst = 4;
    o->method = NC_THRESHOLD_MAX;
    o->per_channel = 1;
    o->calib_samples = 64;
}

/* Everything but bias correction set: two candidates, T <= 2, 100 rows
 * held back: the whole search path, cheap enough for the sanitizer pass
 * (the two cases above run in the plain pass: test_operating_point_accuracy). */
static void test_two_candidates(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    two_candidate_options(&o, 5.0, 2);
    o.holdout_samples = 100;
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    nc_operating_point op;
    convert_searched(&d, &o, d.y, &s, &rep, &op);
    assert_int_equal(op.candidates, 2); /* as set, then with bias correction */
    assert_int_equal(op.holdout_samples, 100);
    assert_true(op.timesteps >= 1 && op.timesteps <= 2);
    assert_int_equal(nc_snn_timesteps(s), op.timesteps);
    assert_true(op.energy_ratio > 0 && op.snn_joules > 0);
    assert_non_null(strstr(nc_convert_report_json(rep), "\"operating_point\":{"));
    nc_snn_free(s);
    nc_convert_report_free(rep);
    unload(&d);
}

/* Validation data and a target out of reach (two candidates, T = 1): the
 * warning the search adds after the conversion reaches the report's JSON
 * (run under the sanitizers too: it rewrites the JSON text). */
static void test_validation_unreachable(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    two_candidate_options(&o, 0.01, 1);
    o.validation = d.held;
    o.validation_labels = d.held_y;
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    nc_operating_point op;
    convert_searched(&d, &o, d.y, &s, &rep, &op);
    assert_int_equal(op.candidates, 2);
    assert_int_equal(op.validation, 1);
    assert_false(op.feasible);
    assert_int_equal(nc_convert_report_num_warnings(rep), 1);
    const char *json = nc_convert_report_json(rep);
    assert_non_null(strstr(json, "\"scored_on\": \"validation samples\""));
    const char *w = strstr(json, "\"warnings\": [\n    \"no conversion tried is within 0.01 points of the ANN up "
                                 "to T = 1 on the validation samples");
    assert_non_null(w);
    assert_non_null(strstr(w, "\"\n  ],\n  \"notes\""));
    nc_snn_free(s);
    nc_convert_report_free(rep);
    unload(&d);
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* A search with fine-tuning and few conversions: bursts of 1 and p99.9 set
 * (three: as set, per channel, bias correction), T up to 4, one epoch. */
static void finetune_search_options(nc_convert_options *o)
{
    nc_convert_options_init(o);
    o->target_loss = 0.5;
    o->max_timesteps = 4;
    o->holdout_samples = 128;
    o->calib_samples = 128;
    o->burst = 1;
    o->method = NC_THRESHOLD_PERCENTILE;
    o->percentile = 99.9;
    o->finetune_epochs = 1;
}

/* finetune_epochs: after the conversions (bursts of 1 and p99.9 set, so
 * three: as set, per channel, bias correction) the best is fine-tuned at
 * T = 1, 2, 4 below the T found (or up to max_timesteps without one), the
 * smallest first, until one is within the target; a fine-tuned choice
 * evaluates again as reported and says how it was trained. */
static void test_search_finetune(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    finetune_search_options(&o);
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    nc_operating_point op;
    convert_searched(&d, &o, d.y, &s, &rep, &op);
    const char *json = nc_convert_report_json(rep);
    /* one "finetune_timesteps" per candidate, and one for the choice */
    int converted = count(json, "\"finetune_timesteps\": null") - (op.finetune_timesteps == 0);
    int tuned = op.candidates - converted;
    print_message("%d conversions, %d fine-tuned; chosen T = %d, loss %.2f, fine-tuned at %d\n", converted, tuned,
                  op.timesteps, op.loss, op.finetune_timesteps);
    assert_int_equal(converted, 3);
    assert_true(tuned >= 1 && tuned <= 3);
    for (int k = 0, ft = 1; k < tuned; k++, ft *= 2) { /* T = 1, 2, 4 in order */
        char want[64];
        snprintf(want, sizeof want, "\"finetune_timesteps\": %d,", ft);
        assert_int_equal(count(json, want), 1 + (op.finetune_timesteps == ft));
    }
    if (op.finetune_timesteps) {
        assert_true(op.feasible);
        assert_int_equal(op.finetune_epochs, 1);
        check_against_eval(&d, s, &op);
    }
    assert_int_equal(nc_snn_timesteps(s), op.timesteps);
    nc_snn_free(s);
    nc_convert_report_free(rep);
    /* fine-tuning needs labels */
    s = NULL;
    assert_int_equal(nc_convert(d.m, d.x, NULL, &o, &s, NULL), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "labels"));
    assert_null(s);
    unload(&d);
}

/* finetune_timesteps: the search fine-tunes at that T alone; one above
 * the search's largest T is refused. */
static void test_search_finetune_at_t(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    finetune_search_options(&o);
    o.finetune_timesteps = 2;
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    nc_operating_point op;
    convert_searched(&d, &o, d.y, &s, &rep, &op);
    const char *json = nc_convert_report_json(rep);
    int converted = count(json, "\"finetune_timesteps\": null") - (op.finetune_timesteps == 0);
    assert_int_equal(converted, 3);
    assert_int_equal(op.candidates, 4);
    assert_int_equal(count(json, "\"finetune_timesteps\": 2,"), 1 + (op.finetune_timesteps == 2));
    nc_snn_free(s);
    nc_convert_report_free(rep);
    s = NULL;
    o.finetune_timesteps = 8;
    assert_int_equal(nc_convert(d.m, d.x, d.y, &o, &s, NULL), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "largest T"));
    assert_null(s);
    unload(&d);
}

/* A warning of the report that contains `what`, or NULL. */
static const char *warning_with(const nc_convert_report *rep, const char *what)
{
    for (size_t i = 0; i < nc_convert_report_num_warnings(rep); i++)
        if (strstr(nc_convert_report_warning(rep, i), what))
            return nc_convert_report_warning(rep, i);
    return NULL;
}

/* Validation rows in place of held-back ones: the search over the first
 * 128 rows scored on the last 128 given as validation data makes the same
 * choice, fine-tuning included, as the search over all 256 holding back the
 * last 128; only the validation search is free of the warning that the
 * fine-tuned candidates were scored on calibration rows, and it says what
 * it scored on. Validation data of another shape, with labels of another
 * count or beside a held-back count is refused. */
static void test_search_validation(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    finetune_search_options(&o);
    nc_snn *s = NULL, *sv = NULL;
    nc_convert_report *rep = NULL, *repv = NULL;
    nc_operating_point op, opv;
    convert_searched(&d, &o, d.y, &s, &rep, &op);

    nc_tensor *first = NULL, *first_y = NULL;
    const int64_t *xs = nc_tensor_shape(d.x);
    int64_t shape[NC_MAX_DIMS], n = 128;
    memcpy(shape, xs, (size_t)nc_tensor_ndim(d.x) * sizeof *shape);
    shape[0] = 128;
    NC_ASSERT_OK(nc_tensor_wrap(NC_DTYPE_F32, nc_tensor_ndim(d.x), shape, nc_tensor_data(d.x), &first));
    NC_ASSERT_OK(nc_tensor_wrap(NC_DTYPE_I64, 1, &n, nc_tensor_data(d.y), &first_y));
    o.holdout_samples = 0;
    o.validation = d.held;
    o.validation_labels = d.held_y;
    NC_ASSERT_OK(nc_convert(d.m, first, first_y, &o, &sv, &repv));
    NC_ASSERT_OK(nc_convert_report_operating_point(repv, &opv));
    print_message("held back: T = %d, loss %.2f, fine-tuned at %d; validation: T = %d, loss %.2f, fine-tuned at %d\n",
                  op.timesteps, op.loss, op.finetune_timesteps, opv.timesteps, opv.loss, opv.finetune_timesteps);
    assert_int_equal(op.validation, 0);
    assert_int_equal(opv.validation, 1);
    assert_int_equal(opv.holdout_samples, 128);
    assert_int_equal(opv.candidates, op.candidates);
    assert_int_equal(opv.timesteps, op.timesteps);
    assert_int_equal(opv.finetune_timesteps, op.finetune_timesteps);
    assert_true(opv.loss == op.loss && opv.snn_joules == op.snn_joules);
    assert_non_null(strstr(nc_convert_report_json(repv), "\"scored_on\": \"validation samples\""));
    assert_non_null(strstr(nc_convert_report_json(rep), "\"scored_on\": \"held-back calibration samples\""));
    assert_null(warning_with(repv, "scored on held-back calibration samples"));
    assert_non_null(warning_with(rep, "scored on held-back calibration samples"));
    /* and the report's JSON lists it (added after the conversion wrote it) */
    assert_non_null(strstr(nc_convert_report_json(rep), "fine-tuned candidates were scored on held-back"));
    check_against_eval(&d, sv, &opv);
    nc_snn_free(s);
    nc_snn_free(sv);
    nc_convert_report_free(rep);
    nc_convert_report_free(repv);

    s = NULL;
    o.holdout_samples = 128; /* both */
    assert_int_equal(nc_convert(d.m, first, first_y, &o, &s, NULL), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "validation"));
    o.holdout_samples = 0;
    o.validation_labels = d.y; /* 256 labels for 128 rows */
    assert_int_equal(nc_convert(d.m, first, first_y, &o, &s, NULL), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "validation labels"));
    o.validation_labels = NULL;
    o.validation = d.y; /* not rows of images */
    assert_int_equal(nc_convert(d.m, first, first_y, &o, &s, NULL), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "validation samples"));
    assert_null(s);
    nc_tensor_free(first);
    nc_tensor_free(first_y);
    unload(&d);
}

static void test_refusals(void **state)
{
    (void)state;
    data d = {0};
    load(&d);
    nc_convert_options o;
    nc_convert_options_init(&o);
    o.target_loss = 0.5;
    nc_snn *s = NULL;
    assert_int_equal(nc_convert(d.m, NULL, NULL, &o, &s, NULL), NC_ERR_INVALID_ARG); /* data-free */
    assert_non_null(strstr(nc_last_error(), "calibration data"));
    o.holdout_samples = 50;
    assert_int_equal(nc_convert(d.m, d.x, NULL, &o, &s, NULL), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "held-back"));
    o.holdout_samples = 0;
    o.qcfs_epochs = 1;
    assert_int_equal(nc_convert(d.m, d.x, d.y, &o, &s, NULL), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "QCFS"));
    o.qcfs_epochs = 0;
    o.target_loss = -1;
    assert_int_equal(nc_convert(d.m, d.x, NULL, &o, &s, NULL), NC_ERR_INVALID_ARG);
    assert_null(s);
    /* a conversion without a search has no operating point */
    nc_convert_options_init(&o);
    nc_convert_report *rep = NULL;
    NC_ASSERT_OK(nc_convert(d.m, d.x, NULL, &o, &s, &rep));
    nc_operating_point op;
    assert_int_equal(nc_convert_report_operating_point(rep, &op), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_snn_timesteps(s), 0);
    nc_snn_free(s);
    nc_convert_report_free(rep);
    unload(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_search_with_labels),
        cmocka_unit_test(test_search_against_ann_keeps_set_options),
        cmocka_unit_test(test_search_finetune),
        cmocka_unit_test(test_search_validation),
        cmocka_unit_test(test_search_finetune_at_t),
        cmocka_unit_test(test_two_candidates),
        cmocka_unit_test(test_validation_unreachable),
        cmocka_unit_test(test_refusals),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
