/* Evaluation of spiking networks: accuracy at every t, spike rates, synaptic
 * operations (and the reference backend's counting of them), the JSON report
 * and the SVG chart, on tiny networks worked out by hand. */
#define _XOPEN_SOURCE 700
#include "testutil.h"
#include "snn/ir/snn_ir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static nc_tensor *tensor(int ndim, const int64_t *shape, const float *v)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, ndim, shape, v, &t));
    return t;
}

static nc_tensor *labels_of(int n, const int64_t *v)
{
    int64_t shape[1] = {n};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, shape, v, &t));
    return t;
}

/* input (2) → Affine I → IF(θ = 1, v(0) = 1/2) → Affine I → readout.
 * A neuron with current 1/2 spikes at t = 1, 3, 5, ...; with 1/4 at t = 2, 6,
 * 10, ...; with 0 never. The readout is the running spike count. */
static nc_snn *two_class_net(void)
{
    int64_t in[1] = {2}, ws[2] = {2, 2}, one[1] = {1};
    float eye[4] = {1, 0, 0, 1}, th = 1.0f;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    nc_tensor *w = tensor(2, ws, eye), *theta = tensor(1, one, &th);
    int fc1, sp, fc2, ro;
    NC_ASSERT_OK(nc_snn_add_affine(s, 0, w, NULL, "fc1", &fc1));
    nc_if_params p = {.threshold = theta};
    NC_ASSERT_OK(nc_snn_add_if(s, fc1, &p, "if1", &sp));
    NC_ASSERT_OK(nc_snn_add_affine(s, sp, w, NULL, "fc2", &fc2));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc2, "out", &ro));
    nc_tensor_free(w);
    nc_tensor_free(theta);
    return s;
}

/* Four samples over T = 6 (running counts of class 0 | class 1 → prediction):
 *  A (1/2, 1/4) label 0: 1|0 1|1 2|1 2|1 3|1 3|2 → 0 at every t (ties → 0)
 *  B (1/4, 1/2) label 1: 0|1 1|1 1|2 1|2 1|3 2|3 → right except t = 2
 *  C (0,   1/4) label 1: 0|0 0|1 0|1 0|1 0|1 0|2 → right except t = 1
 *  D (1/2, 1/4) label 1: as A, always wrong
 * Correct: 2 2 3 3 3 3. Spikes: 5 + 5 + 2 + 5 = 17 of 2·6·4 neuron-steps.
 * Synaptic ops: fc1 reads the analog input once per sample: 2·(2 + 2 + 1 + 2)
 * = 14 MACs; fc2 reads spikes: 2 per spike, 34. */
static const float X4[8] = {0.5f, 0.25f, 0.25f, 0.5f, 0.0f, 0.25f, 0.5f, 0.25f};
static const int64_t Y4[4] = {0, 1, 1, 1};

typedef struct prog_log {
    int calls;
    int64_t last_done, last_total;
} prog_log;

static void on_progress(const char *what, int64_t done, int64_t total, void *user)
{
    prog_log *p = user;
    assert_non_null(what);
    assert_true(done <= total);
    p->calls++;
    p->last_done = done;
    p->last_total = total;
}

static nc_eval_result *evaluate_two_class(int batch, prog_log *pl)
{
    nc_snn *s = two_class_net();
    int64_t xs[2] = {4, 2};
    nc_tensor *x = tensor(2, xs, X4), *y = labels_of(4, Y4);
    nc_eval_options o = {.timesteps = 6, .batch = batch, .progress = on_progress, .progress_user = pl};
    nc_eval_result *r = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(s, NULL, x, y, &o, &r));
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_snn_free(s);
    return r;
}

static void test_accuracy_every_step(void **state)
{
    (void)state;
    static const double want[6] = {0.5, 0.5, 0.75, 0.75, 0.75, 0.75};
    for (int batch = 1; batch <= 4; batch++) { /* batches of 1, 2, 3 (+1) and 4 agree */
        prog_log pl = {0};
        nc_eval_result *r = evaluate_two_class(batch, &pl);
        assert_int_equal(nc_eval_result_timesteps(r), 6);
        assert_int_equal(nc_eval_result_samples(r), 4);
        for (int t = 1; t <= 6; t++)
            assert_true(nc_eval_result_accuracy_at(r, t) == want[t - 1]);
        assert_true(nc_eval_result_accuracy_at(r, 0) < 0);
        assert_true(nc_eval_result_accuracy_at(r, 7) < 0);
        assert_true(nc_eval_result_ann_accuracy(r) < 0);
        assert_true(pl.calls >= 2);
        assert_int_equal(pl.last_done, 4);
        assert_int_equal(pl.last_total, 4);
        nc_eval_result_free(r);
    }
}

static void test_spikes_and_synops(void **state)
{
    (void)state;
    prog_log pl = {0};
    nc_eval_result *r = evaluate_two_class(3, &pl);
    assert_int_equal(nc_eval_result_num_layers(r), 5);
    nc_eval_layer_stats L;
    NC_ASSERT_OK(nc_eval_result_layer(r, 2, &L));
    assert_string_equal(L.name, "if1");
    assert_int_equal(L.kind, NC_SNN_IF);
    assert_int_equal(L.neurons, 2);
    assert_int_equal(L.spikes, 17);
    assert_true(fabs(L.spike_rate - 17.0 / 48.0) < 1e-12);
    NC_ASSERT_OK(nc_eval_result_layer(r, 1, &L));
    assert_string_equal(L.name, "fc1");
    assert_int_equal(L.macs, 1); /* reads the analog input */
    assert_true(L.synops == 14.0 / 4.0);
    NC_ASSERT_OK(nc_eval_result_layer(r, 3, &L));
    assert_int_equal(L.macs, 0); /* reads IF spikes */
    assert_true(L.synops == 34.0 / 4.0);
    assert_int_equal(nc_eval_result_layer(r, 5, &L), NC_ERR_INVALID_ARG);

    nc_eval_cost c;
    NC_ASSERT_OK(nc_eval_result_cost(r, &c));
    assert_true(c.synaptic_adds == 8.5);
    assert_true(c.synaptic_macs == 3.5);
    assert_true(c.ann_macs < 0 && c.ann_joules < 0);
    assert_true(fabs(c.energy_per_synop - 0.9e-12) < 1e-24);
    assert_true(fabs(c.energy_per_mac - 4.6e-12) < 1e-24);
    assert_true(fabs(c.snn_joules - (8.5 * 0.9e-12 + 3.5 * 4.6e-12)) < 1e-24);
    assert_non_null(strstr(c.energy_source, "Horowitz"));

    const char *j = nc_eval_result_json(r);
    assert_non_null(strstr(j, "\"samples\": 4"));
    assert_non_null(strstr(j, "\"timesteps\": 6"));
    assert_non_null(strstr(j, "\"spike_rate\": 0.354166667"));
    assert_non_null(strstr(j, "\"spikes\": 17"));
    assert_non_null(strstr(j, "\"synops\": 34"));
    assert_non_null(strstr(j, "\"synops\": 14"));
    assert_non_null(strstr(j, "\"synops_per_inference\": 12"));
    assert_non_null(strstr(j, "\"synaptic_adds_per_inference\": 8.5"));
    assert_non_null(strstr(j, "\"synaptic_macs_per_inference\": 3.5"));
    assert_non_null(strstr(j, "\"evidence\": \"estimate\""));
    assert_non_null(strstr(j, "ISSCC 2014"));
    assert_non_null(strstr(j, "\"ann\": null"));
    /* every t, in order */
    assert_non_null(strstr(j, "\"snn\": [\n      0.5,\n      0.5,\n      0.75,\n      0.75,\n      0.75,\n"
                              "      0.75\n    ]"));
    assert_non_null(strstr(j, "\"snn_correct\": [\n      2,\n      2,\n      3,"));

    char path[] = "/tmp/nc_test_eval_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    NC_ASSERT_OK(nc_eval_result_write_svg(r, path));
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char head[5] = {0};
    assert_int_equal(fread(head, 1, 4, f), 4);
    fclose(f);
    assert_string_equal(head, "<svg");
    unlink(path);
    /* a folder that does not exist: an I/O error, no file */
    assert_int_equal(nc_eval_result_write_svg(r, "/nonexistent-dir/x.svg"), NC_ERR_IO);
    nc_eval_result_free(r);
    nc_eval_result_free(NULL);
}

/* The cost of stopping after t steps, on the network worked out above: fc2
 * adds 2 per if1 spike, and if1 spikes 3, 4, 3, 0, 3, 4 times over the four
 * samples at t = 1..6; fc1's 14 MACs (the static analog input) are all at
 * t = 1. The last entry is the run's total, in the API and the JSON, for
 * every batch size. */
static void test_cost_every_step(void **state)
{
    (void)state;
    static const double adds[6] = {1.5, 3.5, 5, 5, 6.5, 8.5};
    for (int batch = 1; batch <= 4; batch += 3) {
        prog_log pl = {0};
        nc_eval_result *r = evaluate_two_class(batch, &pl);
        nc_eval_cost c, total;
        for (int t = 1; t <= 6; t++) {
            NC_ASSERT_OK(nc_eval_result_cost_at(r, t, &c));
            assert_true(c.synaptic_adds == adds[t - 1]);
            assert_true(c.synaptic_macs == 3.5);
            assert_true(fabs(c.snn_joules - (adds[t - 1] * 0.9e-12 + 3.5 * 4.6e-12)) < 1e-24);
        }
        NC_ASSERT_OK(nc_eval_result_cost(r, &total));
        assert_memory_equal(&c, &total, sizeof c);
        assert_int_equal(nc_eval_result_cost_at(r, 0, &c), NC_ERR_INVALID_ARG);
        assert_int_equal(nc_eval_result_cost_at(r, 7, &c), NC_ERR_INVALID_ARG);
        const char *j = nc_eval_result_json(r);
        assert_non_null(strstr(j, "\"synaptic_adds\": [\n      1.5,\n      3.5,\n      5,\n      5,\n      6.5,\n"
                                  "      8.5\n    ]"));
        assert_non_null(strstr(j, "\"synaptic_macs\": [\n      3.5,\n      3.5,"));
        assert_non_null(strstr(j, "\"energy_j\": [\n      1.745e-11,"));
        assert_non_null(strstr(j, "\"ann_j\": null"));
        nc_eval_result_free(r);
    }
}

/* input (1) → Affine → SignedIF (θ = 1, v(0) = 1/2, up to B spikes a step)
 * → Affine (2 outputs) → readout, input 1.5. With B = 4 the neuron sends 2,
 * 1, 2, 1 spikes at t = 1..4 (m = 2, 1.5, 2, 1.5): a burst of 2 is one
 * graded event whose 2 synaptic ops multiply its payload, a single spike's 2
 * ops add; with B = 1 it sends 1 a step, all additions. fc1 reads the
 * analog input: 1 MAC, at t = 1. */
static nc_eval_result *evaluate_burst(int B, const char *backend)
{
    int64_t in[1] = {1}, w1s[2] = {1, 1}, w2s[2] = {2, 1}, one[1] = {1}, xs[2] = {1, 1};
    float w1 = 1.0f, w2[2] = {1, -1}, th = 1.0f, xv = 1.5f;
    int64_t lab = 0;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    nc_tensor *t1 = tensor(2, w1s, &w1), *t2 = tensor(2, w2s, w2), *theta = tensor(1, one, &th);
    int fc1, sp, fc2, ro;
    NC_ASSERT_OK(nc_snn_add_affine(s, 0, t1, NULL, "fc1", &fc1));
    nc_if_params p = {.threshold = theta, .signed_spikes = 1, .max_spikes = B};
    NC_ASSERT_OK(nc_snn_add_if(s, fc1, &p, "sif", &sp));
    NC_ASSERT_OK(nc_snn_add_affine(s, sp, t2, NULL, "fc2", &fc2));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc2, "out", &ro));
    nc_tensor *x = tensor(2, xs, &xv), *y = labels_of(1, &lab);
    nc_eval_options o = {.timesteps = 4, .backend = backend};
    nc_eval_result *r = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(s, NULL, x, y, &o, &r));
    nc_tensor_free(t1);
    nc_tensor_free(t2);
    nc_tensor_free(theta);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_snn_free(s);
    return r;
}

static void test_graded_spikes_are_macs(void **state)
{
    (void)state;
    static const double adds[2][4] = {{2, 4, 6, 8}, {0, 2, 2, 4}}, macs[2][4] = {{1, 1, 1, 1}, {3, 3, 5, 5}};
    static const char *backends[2] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++)
        for (int burst = 0; burst < 2; burst++) {
            nc_eval_result *r = evaluate_burst(burst ? 4 : 1, backends[b]);
            nc_eval_cost c;
            for (int t = 1; t <= 4; t++) {
                NC_ASSERT_OK(nc_eval_result_cost_at(r, t, &c));
                if (c.synaptic_adds != adds[burst][t - 1] || c.synaptic_macs != macs[burst][t - 1])
                    fail_msg("%s, bursts of up to %d, t = %d: %g additions + %g multiply-adds, expected %g + %g",
                             backends[b], burst ? 4 : 1, t, c.synaptic_adds, c.synaptic_macs, adds[burst][t - 1],
                             macs[burst][t - 1]);
            }
            assert_true(fabs(c.snn_joules - (c.synaptic_adds * 0.9e-12 + c.synaptic_macs * 4.6e-12)) < 1e-24);
            nc_eval_layer_stats L;
            NC_ASSERT_OK(nc_eval_result_layer(r, 2, &L)); /* the bursts' share of fc2's ops, on the neuron */
            assert_string_equal(L.name, "sif");
            assert_true(L.burst_synops == (burst ? 4.0 : 0.0));
            NC_ASSERT_OK(nc_eval_result_layer(r, 3, &L));
            assert_int_equal(L.macs, 0); /* fc2 adds but for the bursts */
            assert_true(L.synops == 8.0);
            if (burst)
                assert_non_null(strstr(nc_eval_result_json(r), "\"burst_synops_per_inference\": 4"));
            nc_eval_result_free(r);
        }
}

/* Every event a burst (input 5 at θ = 1: 4 or 5 spikes a step of up to 8):
 * the ops the bursts caused, counted by the neuron from its fan-out
 * (nc_snn_event_fanout), are all the ops of the layers reading them: a
 * strided, padded, dilated, grouped Conv2d directly, and an Affine through a
 * Flatten. On both CPU backends. */
static void test_burst_fanout_exact(void **state)
{
    (void)state;
    int64_t in[3] = {4, 7, 6}, one[1] = {1}, xs[4] = {2, 4, 7, 6};
    float th = 1.0f, x[2 * 4 * 7 * 6];
    for (int i = 0; i < 2 * 4 * 7 * 6; i++)
        x[i] = 5.0f;
    static const char *backends[2] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++) {
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_snn_create(3, in, &s));
        nc_tensor *theta = tensor(1, one, &th);
        nc_if_params p = {.threshold = theta, .signed_spikes = 1, .max_spikes = 8};
        int sif, cv, fl, fc, ro;
        NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "sif", &sif));
        int64_t ws[4] = {6, 2, 3, 2};
        float w[6 * 2 * 3 * 2];
        for (int i = 0; i < 6 * 2 * 3 * 2; i++)
            w[i] = (float)(i % 5) - 2.0f;
        nc_tensor *wt = tensor(4, ws, w);
        nc_conv2d_params cp = {{2, 1}, {1, 2}, {1, 2}, 2};
        NC_ASSERT_OK(nc_snn_add_conv2d(s, sif, wt, NULL, &cp, "conv", &cv));
        NC_ASSERT_OK(nc_snn_add_flatten(s, sif, "flat", &fl));
        int64_t fs[2] = {3, 4 * 7 * 6};
        float fw[3 * 4 * 7 * 6];
        for (int i = 0; i < 3 * 4 * 7 * 6; i++)
            fw[i] = 0.01f * (float)(i % 7);
        nc_tensor *fwt = tensor(2, fs, fw);
        NC_ASSERT_OK(nc_snn_add_affine(s, fl, fwt, NULL, "fc", &fc));
        NC_ASSERT_OK(nc_snn_add_readout(s, fc, "out", &ro));
        nc_tensor *xt = tensor(4, xs, x), *y = NULL;
        nc_session_options o = {.backend = backends[b], .timesteps = 3, .count_steps = 1};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, xt, &y));
        int64_t conv_ops = 0, fc_ops = 0, bursts = 0, at;
        for (int t = 0; t < 3; t++) {
            NC_ASSERT_OK(nc_session_burst_ops_step(ss, sif, t, &at));
            bursts += at;
            NC_ASSERT_OK(nc_session_burst_ops_step(ss, cv, t, &at));
            assert_int_equal(at, 0);
        }
        NC_ASSERT_OK(nc_session_synops(ss, cv, &conv_ops));
        NC_ASSERT_OK(nc_session_synops(ss, fc, &fc_ops));
        assert_true(conv_ops > 0 && fc_ops == 2 * 3 * 3 * 4 * 7 * 6);
        if (bursts != conv_ops + fc_ops)
            fail_msg("%s: the bursts caused %lld ops, their readers did %lld + %lld", backends[b],
                     (long long)bursts, (long long)conv_ops, (long long)fc_ops);
        assert_int_equal(nc_session_burst_ops_step(ss, sif, 3, &at), NC_ERR_INVALID_ARG);
        nc_session_free(ss);
        nc_tensor_free(y);
        nc_tensor_free(xt);
        nc_tensor_free(wt);
        nc_tensor_free(fwt);
        nc_tensor_free(theta);
        nc_snn_free(s);
    }
}

/* A spiking max pool of bursts sends bursts: a SignedIF of up to 8 spikes
 * (input 5 at θ = 1: 5 a step) feeds a 2×2 SpikeMaxPool2d, whose count then
 * grows by 5 a step, each event a burst; the ops they cause in the Conv2d
 * reading the pool, counted by the pool from its fan-out, are all that
 * conv's ops (multiply-adds in the estimate), and the SignedIF's own
 * bursts reach no synapse. On both CPU backends. */
static void test_spikemax_burst_fanout(void **state)
{
    (void)state;
    int64_t in[3] = {4, 6, 6}, one[1] = {1}, xs[4] = {2, 4, 6, 6}, k2[2] = {2, 2};
    float th = 1.0f, x[2 * 4 * 6 * 6];
    for (int i = 0; i < 2 * 4 * 6 * 6; i++)
        x[i] = 5.0f;
    static const char *backends[2] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++) {
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_snn_create(3, in, &s));
        nc_tensor *theta = tensor(1, one, &th);
        nc_if_params p = {.threshold = theta, .signed_spikes = 1, .max_spikes = 8};
        int sif, mp, cv, ro;
        NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "sif", &sif));
        NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, sif, k2, k2, NULL, "pool", &mp));
        int64_t ws[4] = {3, 4, 3, 3};
        float w[3 * 4 * 3 * 3];
        for (int i = 0; i < 3 * 4 * 3 * 3; i++)
            w[i] = (float)(i % 5) - 2.0f;
        nc_tensor *wt = tensor(4, ws, w);
        nc_conv2d_params cp = {{1, 1}, {1, 1}, {1, 1}, 1};
        NC_ASSERT_OK(nc_snn_add_conv2d(s, mp, wt, NULL, &cp, "conv", &cv));
        NC_ASSERT_OK(nc_snn_add_readout(s, cv, "out", &ro));
        nc_tensor *xt = tensor(4, xs, x), *y = NULL;
        nc_session_options o = {.backend = backends[b], .timesteps = 3, .count_steps = 1};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, xt, &y));
        int64_t conv_ops = 0, pool_events = 0, bursts = 0, at;
        for (int t = 0; t < 3; t++) {
            NC_ASSERT_OK(nc_session_burst_ops_step(ss, mp, t, &at));
            bursts += at;
            NC_ASSERT_OK(nc_session_burst_ops_step(ss, sif, t, &at));
            assert_int_equal(at, 0);
        }
        NC_ASSERT_OK(nc_session_synops(ss, cv, &conv_ops));
        NC_ASSERT_OK(nc_session_spike_count(ss, mp, &pool_events));
        assert_int_equal(pool_events, 2 * 3 * 4 * 3 * 3); /* an event a step per output */
        assert_true(conv_ops > 0);
        if (bursts != conv_ops)
            fail_msg("%s: the pool's bursts caused %lld ops, the conv reading it did %lld", backends[b],
                     (long long)bursts, (long long)conv_ops);
        char macs[8] = {0}; /* 5 layers */
        nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, macs);
        assert_int_equal(macs[cv], 0); /* additions but for the bursts, counted apart */
        nc_session_free(ss);
        nc_tensor_free(y);
        nc_tensor_free(xt);
        nc_tensor_free(wt);
        nc_tensor_free(theta);
        nc_snn_free(s);
    }
}

/* Poisson input evaluated in batches: every batch gets its own noise
 * (nc_batch_seed of its first row), so the same four samples twice, in two
 * batches of four, do not spike twice as often as once; the session's seed
 * can be set between runs and decides the noise. */
static void test_poisson_noise_per_batch(void **state)
{
    (void)state;
    nc_snn *s = two_class_net();
    float x8[16];
    memcpy(x8, X4, sizeof X4);
    memcpy(x8 + 8, X4, sizeof X4);
    int64_t y8v[8] = {0, 1, 1, 1, 0, 1, 1, 1}, xs4[2] = {4, 2}, xs8[2] = {8, 2};
    nc_tensor *x4 = tensor(2, xs4, X4), *x8t = tensor(2, xs8, x8), *y4 = labels_of(4, Y4), *y8 = labels_of(8, y8v);
    nc_eval_options o = {.timesteps = 16, .batch = 4, .encoding = NC_ENCODING_POISSON, .seed = 11};
    nc_eval_result *r4 = NULL, *r8 = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(s, NULL, x4, y4, &o, &r4));
    NC_ASSERT_OK(nc_snn_evaluate(s, NULL, x8t, y8, &o, &r8));
    nc_eval_layer_stats a, b;
    NC_ASSERT_OK(nc_eval_result_layer(r4, 2, &a));
    NC_ASSERT_OK(nc_eval_result_layer(r8, 2, &b));
    assert_true(a.spikes > 0);
    assert_true(b.spikes != 2 * a.spikes); /* the second batch drew other spikes */

    nc_session_options so = {.timesteps = 16, .encoding = NC_ENCODING_POISSON, .seed = 11};
    nc_session *ss = NULL;
    nc_tensor *o1 = NULL, *o2 = NULL, *o3 = NULL;
    NC_ASSERT_OK(nc_session_create(s, &so, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x4, &o1));
    NC_ASSERT_OK(nc_session_set_seed(ss, nc_batch_seed(11, 4)));
    NC_ASSERT_OK(nc_session_run(ss, x4, &o2));
    NC_ASSERT_OK(nc_session_set_seed(ss, 11));
    NC_ASSERT_OK(nc_session_run(ss, x4, &o3));
    assert_memory_not_equal(nc_tensor_data(o1), nc_tensor_data(o2), 8 * sizeof(float));
    assert_memory_equal(nc_tensor_data(o1), nc_tensor_data(o3), 8 * sizeof(float));
    assert_true(nc_batch_seed(11, 0) != nc_batch_seed(11, 4) && nc_batch_seed(11, 4) == nc_batch_seed(11, 4));
    nc_tensor_free(o1);
    nc_tensor_free(o2);
    nc_tensor_free(o3);
    nc_session_free(ss);
    nc_eval_result_free(r4);
    nc_eval_result_free(r8);
    nc_tensor_free(x4);
    nc_tensor_free(x8t);
    nc_tensor_free(y4);
    nc_tensor_free(y8);
    nc_snn_free(s);
}

static void test_bad_input(void **state)
{
    (void)state;
    nc_snn *s = two_class_net();
    int64_t xs[2] = {4, 2}, xs3[2] = {2, 3};
    nc_tensor *x = tensor(2, xs, X4), *y = labels_of(4, Y4), *x3 = tensor(2, xs3, X4);
    static const int64_t bad[4] = {0, 1, 2, 1};
    nc_tensor *ybad = labels_of(4, bad), *y3 = labels_of(3, Y4);
    nc_eval_result *r = (nc_eval_result *)1;
    assert_int_equal(nc_snn_evaluate(s, NULL, x, ybad, NULL, &r), NC_ERR_INVALID_ARG);
    assert_null(r);
    assert_non_null(strstr(nc_last_error(), "label 2 of sample 2"));
    assert_int_equal(nc_snn_evaluate(s, NULL, x, y3, NULL, &r), NC_ERR_SHAPE);
    assert_int_equal(nc_snn_evaluate(s, NULL, x3, y, NULL, &r), NC_ERR_SHAPE);
    assert_int_equal(nc_snn_evaluate(NULL, NULL, x, y, NULL, &r), NC_ERR_INVALID_ARG);
    nc_eval_options o = {.backend = "no-such-backend"};
    assert_int_equal(nc_snn_evaluate(s, NULL, x, y, &o, &r), NC_ERR_BACKEND_UNAVAILABLE);
    assert_null(r);
    nc_tensor_free(x);
    nc_tensor_free(x3);
    nc_tensor_free(y);
    nc_tensor_free(ybad);
    nc_tensor_free(y3);
    nc_snn_free(s);
}

/* An ANN (Gemm 4→3 + ReLU, batch fixed at 1) against an SNN on the same
 * data: the ANN's accuracy is scored on its own predictions, three labels
 * right and one wrong, and its MACs are 3·4 per sample. */
static void test_with_ann(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/gemm_relu.onnx"), NULL, &m));
    static const float xv[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, .5f, -1, 2, .25f};
    int64_t labels[4];
    for (int i = 0; i < 4; i++) {
        int64_t s1[2] = {1, 4};
        nc_tensor *xi = tensor(2, s1, xv + 4 * i), *yi = NULL;
        const nc_tensor *in[1] = {xi};
        NC_ASSERT_OK(nc_model_run(m, in, 1, &yi, 1));
        const float *p = nc_tensor_data(yi);
        int64_t best = 0;
        for (int k = 1; k < 3; k++)
            if (p[k] > p[best])
                best = k;
        labels[i] = i == 3 ? (best + 1) % 3 : best;
        nc_tensor_free(xi);
        nc_tensor_free(yi);
    }
    int64_t in[1] = {4}, ws[2] = {3, 4}, xs[2] = {4, 4};
    float w[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    nc_tensor *wt = tensor(2, ws, w), *x = tensor(2, xs, xv), *y = labels_of(4, labels);
    int fc, ro;
    NC_ASSERT_OK(nc_snn_add_affine(s, 0, wt, NULL, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "out", &ro));
    nc_eval_options o = {.timesteps = 2};
    nc_eval_result *r = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(s, m, x, y, &o, &r));
    assert_true(nc_eval_result_ann_accuracy(r) == 0.75);
    nc_eval_cost c;
    NC_ASSERT_OK(nc_eval_result_cost(r, &c));
    assert_true(c.ann_macs == 12.0);
    assert_true(fabs(c.ann_joules - 12 * 4.6e-12) < 1e-24);
    const char *j = nc_eval_result_json(r);
    assert_non_null(strstr(j, "\"ann\": 0.75"));
    assert_non_null(strstr(j, "\"ann_macs_per_inference\": 12"));
    char path[] = "/tmp/nc_test_eval_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    NC_ASSERT_OK(nc_eval_result_write_svg(r, path)); /* no spiking layers: still a chart */
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char svg[1 << 16];
    size_t len = fread(svg, 1, sizeof svg - 1, f);
    fclose(f);
    svg[len] = '\0';
    unlink(path);
    /* the energy panel: the ANN a point at its 12 MACs' 55.2 pJ; fc reads
     * the analog input once, 3 MACs a non-zero input, 3 + 3 + 3 + 12 over
     * the four samples: 5.25 MACs, 24.15 pJ an inference */
    assert_non_null(strstr(svg, "Accuracy against energy"));
    assert_non_null(strstr(svg, "<title>ANN: 75.00 % at 55.2 pJ</title>"));
    assert_non_null(strstr(svg, "at 24.15 pJ</title>"));
    assert_non_null(strstr(j, "\"ann_j\": 5.52e-11"));
    nc_eval_result_free(r);
    nc_tensor_free(wt);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_snn_free(s);
    nc_model_free(m);
}

/* ---------------------------------------------------------------- synops in the reference backend */

/* Runs a time series x (T, 1, *in) through input → layer → readout and
 * returns the layer's synaptic ops; the readout's per-step output in y. */
static int64_t run_series(nc_snn *s, int id, int T, const float *x, int64_t per, float *y, int64_t out)
{
    nc_snn_layer_info in;
    NC_ASSERT_OK(nc_snn_layer_at(s, 0, &in));
    int64_t shape[NC_MAX_DIMS + 2] = {T, 1};
    memcpy(shape + 2, in.shape, (size_t)in.ndim * sizeof *shape);
    nc_tensor *xt = tensor(in.ndim + 2, shape, x), *yt = NULL;
    nc_session_options o = {.per_step = 1};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, xt, &yt));
    assert_int_equal(nc_tensor_numel(yt), T * out);
    memcpy(y, nc_tensor_data(yt), (size_t)(T * out) * sizeof *y);
    int64_t ops = -1;
    NC_ASSERT_OK(nc_session_synops(ss, id, &ops));
    int64_t zero = -1;
    NC_ASSERT_OK(nc_session_synops(ss, 0, &zero));
    assert_int_equal(zero, 0);
    assert_int_equal(nc_session_synops(ss, 99, &zero), NC_ERR_INVALID_ARG);
    (void)per;
    nc_tensor_free(xt);
    nc_tensor_free(yt);
    nc_session_free(ss);
    return ops;
}

static void test_synops_affine(void **state)
{
    (void)state;
    int64_t in[1] = {3}, ws[2] = {4, 3}, bs[1] = {4};
    float w[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, b[4] = {.5f, 0, -1, 2};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    nc_tensor *wt = tensor(2, ws, w), *bt = tensor(1, bs, b);
    int fc, ro;
    NC_ASSERT_OK(nc_snn_add_affine(s, 0, wt, bt, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "out", &ro));
    /* step 1: two non-zero inputs → 2·4 ops; step 2: none; step 3: one → 4 */
    float x[9] = {1, 0, 2, 0, 0, 0, 0, -1, 0}, y[12];
    assert_int_equal(run_series(s, fc, 3, x, 3, y, 4), 12);
    static const float want[12] = {7.5f, 16, 24, 36, .5f, 0, -1, 2, -1.5f, -5, -9, -9};
    for (int k = 0; k < 12; k++)
        assert_true(y[k] == want[k]);
    nc_tensor_free(wt);
    nc_tensor_free(bt);
    nc_snn_free(s);
}

static void test_synops_conv_pool(void **state)
{
    (void)state;
    /* 1×3×3 input, 2 output channels, 2×2 kernel, stride 1, no padding → 2×2×2.
     * Non-zero inputs: (0,0) reaches 1 window, (1,1) 4, (2,1) 2: 7 windows
     * × 2 channels = 14 ops. */
    int64_t in[3] = {1, 3, 3}, ws[4] = {2, 1, 2, 2}, bs[1] = {2};
    float w[8] = {1, 2, 3, 4, -1, 0, 0, 1}, b[2] = {0, 10};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    nc_tensor *wt = tensor(4, ws, w), *bt = tensor(1, bs, b);
    int cv, ro;
    nc_conv2d_params p = {{1, 1}, {0, 0}, {1, 1}, 1};
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, wt, bt, &p, "conv", &cv));
    NC_ASSERT_OK(nc_snn_add_readout(s, cv, "out", &ro));
    float x[9] = {1, 0, 0, 0, 2, 0, 0, 3, 0}, y[8];
    assert_int_equal(run_series(s, cv, 1, x, 9, y, 8), 14);
    /* windows [1 0;0 2] [0 0;2 0] [0 2;0 3] [2 0;3 0]; channel 0 weights
     * [1 2;3 4]: 9 6 16 11; channel 1 [-1 0;0 1] + 10: 11 10 13 8 */
    static const float want[8] = {9, 6, 16, 11, 11, 10, 13, 8};
    for (int k = 0; k < 8; k++)
        if (y[k] != want[k])
            fail_msg("conv output %d: %g, expected %g", k, y[k], want[k]);
    nc_tensor_free(wt);
    nc_tensor_free(bt);
    nc_snn_free(s);

    /* Sum pooling 2×2, stride 2, padding 1 over a 1×2×2 input: each input sits
     * in one window; three are non-zero → 3 ops. */
    int64_t pin[3] = {1, 2, 2}, k[2] = {2, 2}, st[2] = {2, 2}, pad[2] = {1, 1};
    NC_ASSERT_OK(nc_snn_create(3, pin, &s));
    int pl;
    NC_ASSERT_OK(nc_snn_add_pool2d(s, 0, k, st, pad, 0.25f, "pool", &pl));
    NC_ASSERT_OK(nc_snn_add_readout(s, pl, "out", &ro));
    float px[4] = {4, 0, 8, 2}, py[4];
    assert_int_equal(run_series(s, pl, 1, px, 4, py, 4), 3);
    static const float pwant[4] = {1, 0, 2, 0.5f};
    for (int i = 0; i < 4; i++)
        assert_true(py[i] == pwant[i]);
    nc_snn_free(s);
}

/* A random grouped, strided, padded, dilated convolution: outputs equal a
 * dense loop bit for bit (same summation order), and the ops equal the
 * dense loop's count of terms with a non-zero input. */
static void test_conv_matches_dense(void **state)
{
    (void)state;
    enum { C = 4, H = 7, W = 6, K = 6, G = 2, KH = 3, KW = 2 };
    const int64_t sh = 2, sw = 1, ph = 1, pw = 2, dh = 1, dw = 2;
    int64_t in[3] = {C, H, W}, ws[4] = {K, C / G, KH, KW}, bs[1] = {K};
    float w[K * (C / G) * KH * KW], b[K], x[C * H * W];
    unsigned seed = 7;
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        w[i] = (float)(rand_r(&seed) % 2001 - 1000) / 997.0f;
    for (int i = 0; i < K; i++)
        b[i] = (float)(rand_r(&seed) % 200 - 100) / 89.0f;
    for (int i = 0; i < C * H * W; i++)
        x[i] = rand_r(&seed) % 3 ? 0.0f : (float)(rand_r(&seed) % 2001 - 1000) / 311.0f;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    nc_tensor *wt = tensor(4, ws, w), *bt = tensor(1, bs, b);
    nc_conv2d_params p = {{sh, sw}, {ph, pw}, {dh, dw}, G};
    int cv, ro;
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, wt, bt, &p, "conv", &cv));
    NC_ASSERT_OK(nc_snn_add_readout(s, cv, "out", &ro));
    nc_snn_layer_info L;
    NC_ASSERT_OK(nc_snn_layer_at(s, cv, &L));
    int64_t OH = L.shape[1], OW = L.shape[2], n_out = K * OH * OW;
    float *y = malloc((size_t)n_out * sizeof *y);
    assert_non_null(y);
    int64_t ops = run_series(s, cv, 1, x, C * H * W, y, n_out), want_ops = 0;
    int64_t cg = C / G, kg = K / G;
    for (int64_t k = 0; k < K; k++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                float acc = b[k];
                for (int64_t c = 0; c < cg; c++)
                    for (int64_t i = 0; i < KH; i++)
                        for (int64_t j = 0; j < KW; j++) {
                            int64_t ih = oh * sh - ph + i * dh, iw = ow * sw - pw + j * dw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                continue;
                            float xv = x[((k / kg) * cg + c) * H * W + ih * W + iw];
                            acc += w[((k * cg + c) * KH + i) * KW + j] * xv;
                            want_ops += xv != 0.0f;
                        }
                float got = y[(k * OH + oh) * OW + ow];
                if (memcmp(&got, &acc, sizeof acc) != 0)
                    fail_msg("output (%lld,%lld,%lld): %.9g, dense loop %.9g", (long long)k, (long long)oh,
                             (long long)ow, got, acc);
            }
    assert_int_equal(ops, want_ops);
    free(y);
    nc_tensor_free(wt);
    nc_tensor_free(bt);
    nc_snn_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accuracy_every_step), cmocka_unit_test(test_spikes_and_synops),
        cmocka_unit_test(test_cost_every_step),     cmocka_unit_test(test_graded_spikes_are_macs),
        cmocka_unit_test(test_burst_fanout_exact), cmocka_unit_test(test_spikemax_burst_fanout),
        cmocka_unit_test(test_bad_input),           cmocka_unit_test(test_with_ann),
        cmocka_unit_test(test_poisson_noise_per_batch),
        cmocka_unit_test(test_synops_affine),       cmocka_unit_test(test_synops_conv_pool),
        cmocka_unit_test(test_conv_matches_dense),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
