/* Every options struct's nc_*_options_init gives the defaults its header
 * documents, and running with them gives exactly what NULL options give
 * (model loading, conversion, sessions, evaluation, NIR loading,
 * fine-tuning, the Loihi simulator, limits). */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static nc_tensor *first_rows(const char *rel, nc_dtype want, int64_t n)
{
    nc_tensor *all = NULL, *t = NULL;
    NC_ASSERT_OK(nc_data_load(nc_test_src(rel), want, &all));
    int64_t shape[NC_MAX_DIMS];
    memcpy(shape, nc_tensor_shape(all), (size_t)nc_tensor_ndim(all) * sizeof *shape);
    shape[0] = n;
    NC_ASSERT_OK(nc_tensor_create_from(nc_tensor_dtype(all), nc_tensor_ndim(all), shape, nc_tensor_data_const(all),
                                       &t));
    nc_tensor_free(all);
    return t;
}

static void assert_same_tensor(const nc_tensor *a, const nc_tensor *b)
{
    assert_int_equal(nc_tensor_numel(a), nc_tensor_numel(b));
    assert_int_equal(nc_tensor_dtype(a), nc_tensor_dtype(b));
    assert_memory_equal(nc_tensor_data_const(a), nc_tensor_data_const(b), (size_t)nc_tensor_numel(a) * 4);
}

static void test_documented_values(void **state)
{
    (void)state;
    nc_session_options so;
    nc_session_options_init(&so);
    assert_string_equal(so.backend, "cpu");
    assert_int_equal(so.timesteps, 1);
    assert_true(so.cuda_dense_threshold == 0.25f);
    nc_convert_options co;
    nc_convert_options_init(&co);
    assert_int_equal(co.timesteps, 8);
    assert_true(co.percentile == 99.9);
    assert_int_equal(co.calib_samples, 1000);
    assert_int_equal(co.levels, 0);
    assert_int_equal(co.reset, NC_RESET_SUBTRACT);
    nc_eval_options eo;
    nc_eval_options_init(&eo);
    assert_int_equal(eo.timesteps, 64);
    assert_int_equal(eo.batch, 64);
    nc_finetune_options fo;
    nc_finetune_options_init(&fo);
    assert_int_equal(fo.timesteps, 4);
    assert_int_equal(fo.epochs, 3);
    assert_int_equal(fo.optimizer, NC_OPTIMIZER_ADAM);
    nc_loihi_options lo;
    nc_loihi_options_init(&lo);
    assert_int_equal(lo.timesteps, 64);
    assert_int_equal(lo.reset, NC_RESET_DEFAULT);
    assert_int_equal(lo.weight_bits, 8);
    nc_loihi_run_options ro;
    nc_loihi_run_options_init(&ro);
    assert_int_equal(ro.timesteps, 32);
    nc_nir_options no;
    nc_nir_options_init(&no);
    assert_true(no.dt == 1e-4);
    nc_load_options lopt;
    nc_load_options_init(&lopt);
    assert_int_equal(lopt.max_tensor_elems, INT64_C(1) << 31);
    nc_batches_options bo;
    nc_batches_options_init(&bo);
    assert_int_equal(bo.batch, 64);
    assert_int_equal(bo.shard, NC_BATCHES_SHARD_BATCHES);
    assert_int_equal(bo.pad, 0);
    assert_int_equal(bo.shuffle, 0);
    nc_portable_options po;
    nc_portable_options_init(&po);
    assert_int_equal(po.v0, NC_PORTABLE_V0_DROP);
    assert_int_equal(po.timesteps, 0);
    assert_true(po.threshold_scale == 1.0f); /* what 0 means */
    /* NULL is a no-op */
    nc_portable_options_init(NULL);
    nc_batches_options_init(NULL);
    nc_session_options_init(NULL);
    nc_convert_options_init(NULL);
    nc_eval_options_init(NULL);
    nc_finetune_options_init(NULL);
    nc_loihi_options_init(NULL);
    nc_loihi_run_options_init(NULL);
    nc_nir_options_init(NULL);
    nc_load_options_init(NULL);
    nc_limits_init(NULL);

    nc_limits a, b;
    nc_set_limits(NULL);
    nc_limits_current(&a);
    nc_limits_init(&b);
    assert_true(a.max_tensor_bytes == b.max_tensor_bytes && a.max_model_bytes == b.max_model_bytes &&
                a.max_string_len == b.max_string_len && a.max_graph_depth == b.max_graph_depth &&
                a.isolate_hdf5 == b.isolate_hdf5 && a.hdf5_timeout_s == b.hdf5_timeout_s);
    assert_int_equal(b.max_tensor_bytes, INT64_C(4) << 30);
    assert_int_equal(b.hdf5_timeout_s, 60);
    nc_limits small = {.max_string_len = 10};
    nc_set_limits(&small);
    nc_limits_init(&b); /* the defaults, not what is in force */
    assert_int_equal(b.max_string_len, 65536);
    nc_set_limits(NULL);
}

/* The whole pipeline twice, once with NULL options and once with the
 * init'd ones: every result is the same, bit for bit. */
static void test_init_equals_null(void **state)
{
    (void)state;
    const char *model = nc_test_src("examples/models/mlp.onnx");
    nc_load_options lopt;
    nc_load_options_init(&lopt);
    nc_model *m0 = NULL, *m1 = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(model, NULL, &m0));
    NC_ASSERT_OK(nc_model_load_onnx(model, &lopt, &m1));
    assert_int_equal(nc_model_num_layers(m0), nc_model_num_layers(m1));
    nc_tensor *x = first_rows("examples/data/fmnist_test_x.npy", NC_DTYPE_F32, 32);
    nc_tensor *y = first_rows("examples/data/fmnist_test_y.npy", NC_DTYPE_I64, 32);

    nc_convert_options co;
    nc_convert_options_init(&co);
    nc_snn *s0 = NULL, *s1 = NULL;
    nc_convert_report *r0 = NULL, *r1 = NULL;
    NC_ASSERT_OK(nc_convert(m0, x, NULL, NULL, &s0, &r0));
    NC_ASSERT_OK(nc_convert(m1, x, NULL, &co, &s1, &r1));
    assert_string_equal(nc_convert_report_json(r0), nc_convert_report_json(r1));

    nc_session_options so;
    nc_session_options_init(&so);
    nc_session *ss0 = NULL, *ss1 = NULL;
    nc_tensor *o0 = NULL, *o1 = NULL;
    NC_ASSERT_OK(nc_session_create(s0, NULL, &ss0));
    NC_ASSERT_OK(nc_session_create(s1, &so, &ss1));
    NC_ASSERT_OK(nc_session_run(ss0, x, &o0));
    NC_ASSERT_OK(nc_session_run(ss1, x, &o1));
    assert_same_tensor(o0, o1);

    nc_eval_options eo;
    nc_eval_options_init(&eo);
    nc_eval_result *e0 = NULL, *e1 = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(s0, m0, x, y, NULL, &e0));
    NC_ASSERT_OK(nc_snn_evaluate(s1, m1, x, y, &eo, &e1));
    assert_string_equal(nc_eval_result_json(e0), nc_eval_result_json(e1));

    /* NIR */
    char path[] = "/tmp/nc_test_options_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    NC_ASSERT_OK(nc_snn_save_nir(s0, path));
    nc_nir_options no;
    nc_nir_options_init(&no);
    nc_snn *n0 = NULL, *n1 = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &n0));
    NC_ASSERT_OK(nc_snn_load_nir(path, &no, &n1));
    unlink(path);
    nc_session *sn0 = NULL, *sn1 = NULL;
    nc_tensor *p0 = NULL, *p1 = NULL;
    NC_ASSERT_OK(nc_session_create(n0, NULL, &sn0));
    NC_ASSERT_OK(nc_session_create(n1, &so, &sn1));
    NC_ASSERT_OK(nc_session_run(sn0, x, &p0));
    NC_ASSERT_OK(nc_session_run(sn1, x, &p1));
    assert_same_tensor(p0, p1);
    assert_same_tensor(o0, p0);

    /* the Loihi simulator (plain spikes: a Loihi spike has no sign) */
    nc_convert_options cp;
    nc_convert_options_init(&cp);
    cp.spikes = NC_SPIKES_PLAIN;
    nc_snn *plain = NULL;
    NC_ASSERT_OK(nc_convert(m0, x, NULL, &cp, &plain, NULL));
    nc_loihi_options lo;
    nc_loihi_options_init(&lo);
    nc_loihi_run_options ro;
    nc_loihi_run_options_init(&ro);
    nc_loihi_net *l0 = NULL, *l1 = NULL;
    NC_ASSERT_OK(nc_loihi_compile(plain, NULL, &l0));
    NC_ASSERT_OK(nc_loihi_compile(plain, &lo, &l1));
    assert_string_equal(nc_loihi_net_json(l0), nc_loihi_net_json(l1));
    nc_loihi_result *q0 = NULL, *q1 = NULL;
    NC_ASSERT_OK(nc_loihi_run(l0, x, y, NULL, &q0));
    NC_ASSERT_OK(nc_loihi_run(l1, x, y, &ro, &q1));
    assert_string_equal(nc_loihi_result_json(q0), nc_loihi_result_json(q1));

    /* fine-tuning: the plan, then one epoch each (epochs set on both) */
    nc_finetune_options fz = {0}, fo;
    nc_finetune_options_init(&fo);
    int b0, b1;
    int64_t by0, by1;
    NC_ASSERT_OK(nc_snn_finetune_plan(s0, NULL, &b0, &by0));
    NC_ASSERT_OK(nc_snn_finetune_plan(s1, &fo, &b1, &by1));
    assert_int_equal(b0, b1);
    assert_int_equal(by0, by1);
    fz.epochs = fo.epochs = 1;
    NC_ASSERT_OK(nc_snn_finetune(s0, x, y, NULL, NULL, &fz));
    NC_ASSERT_OK(nc_snn_finetune(s1, x, y, NULL, NULL, &fo));
    nc_session *st0 = NULL, *st1 = NULL;
    nc_tensor *t0 = NULL, *t1 = NULL;
    NC_ASSERT_OK(nc_session_create(s0, NULL, &st0));
    NC_ASSERT_OK(nc_session_create(s1, NULL, &st1));
    NC_ASSERT_OK(nc_session_run(st0, x, &t0));
    NC_ASSERT_OK(nc_session_run(st1, x, &t1));
    assert_same_tensor(t0, t1);

    nc_tensor *ts[] = {o0, o1, p0, p1, t0, t1, x, y};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    nc_session *sss[] = {ss0, ss1, sn0, sn1, st0, st1};
    for (size_t i = 0; i < sizeof sss / sizeof sss[0]; i++)
        nc_session_free(sss[i]);
    nc_loihi_result_free(q0);
    nc_loihi_result_free(q1);
    nc_loihi_net_free(l0);
    nc_loihi_net_free(l1);
    nc_snn_free(plain);
    nc_eval_result_free(e0);
    nc_eval_result_free(e1);
    nc_snn_free(n0);
    nc_snn_free(n1);
    nc_convert_report_free(r0);
    nc_convert_report_free(r1);
    nc_snn_free(s0);
    nc_snn_free(s1);
    nc_model_free(m0);
    nc_model_free(m1);
}

/* neuroc 0.1's names still compile (deprecated) and reach the new functions. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void test_deprecated_aliases(void **state)
{
    (void)state;
    int64_t shape[1] = {3};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    nc_snn_layer_info a, b;
    NC_ASSERT_OK(nc_snn_get_layer(s, 0, &a));
    NC_ASSERT_OK(nc_snn_layer_at(s, 0, &b));
    assert_string_equal(a.name, b.name);
    assert_int_equal(nc_snn_get_layer(s, 1, &a), NC_ERR_INVALID_ARG);
    nc_snn_free(s);
    nc_limits l;
    nc_get_limits(&l);
    assert_int_equal(l.max_graph_depth, 64);
    assert_int_equal(nc_eval_timesteps(NULL), 0);
    assert_int_equal(nc_eval_num_layers(NULL), 0);
    assert_true(nc_eval_accuracy_at(NULL, 1) < 0);
    nc_eval_layer_stats st;
    assert_int_equal(nc_eval_layer(NULL, 0, &st), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_eval_layer(NULL, (size_t)1 << 40, &st), NC_ERR_INVALID_ARG);
    nc_eval_cost c;
    assert_int_equal(nc_eval_cost_get(NULL, &c), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_loihi_num_layers(NULL), 0);
    nc_loihi_mapping mp;
    assert_int_equal(nc_loihi_mapping_get(NULL, &mp), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_loihi_systems(NULL, NULL, 0), 0);
    assert_true(nc_loihi_accuracy_at(NULL, 1) < 0);
    nc_loihi_reset r = NC_LOIHI_RESET_ZERO;
    assert_int_equal(r, NC_RESET_ZERO);
    assert_int_equal(NC_LOIHI_RESET_SUBTRACT, NC_RESET_SUBTRACT);
    assert_int_equal(NC_LOIHI_RESET_DEFAULT, NC_RESET_DEFAULT);
}
#pragma GCC diagnostic pop

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_documented_values),
        cmocka_unit_test(test_init_equals_null),
        cmocka_unit_test(test_deprecated_aliases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
