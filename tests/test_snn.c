/* Golden tests of the IF semantics (DESIGN §3) on the CPU reference backend. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static nc_tensor *vec(int n, const float *v)
{
    int64_t shape[1] = {n};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, shape, v, &t));
    return t;
}

static nc_tensor *scalar1(float v) { return vec(1, &v); }

/* input (1) → Affine w=1 → IF(θ, v0, reset); returns the network, IF id in *if_id. */
static nc_snn *one_neuron(float theta, float v0, nc_reset_mode reset, int *if_id)
{
    int64_t in_shape[1] = {1}, wshape[2] = {1, 1};
    float one = 1.0f;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in_shape, &s));
    nc_tensor *w = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, wshape, &one, &w));
    int fc;
    NC_ASSERT_OK(nc_snn_add_affine(s, 0, w, NULL, "fc", &fc));
    nc_tensor *th = scalar1(theta), *vi = scalar1(v0);
    nc_if_params p = {.threshold = th, .v_init = vi, .reset = reset};
    NC_ASSERT_OK(nc_snn_add_if(s, fc, &p, "if", if_id));
    nc_tensor_free(w);
    nc_tensor_free(th);
    nc_tensor_free(vi);
    return s;
}

/* Runs the one-neuron net on a time series of currents and returns the spike train. */
static void spike_train(nc_snn *s, const float *current, int T, float *spikes)
{
    const char *rec[] = {"if"};
    nc_session_options o = {.backend = "cpu", .record = rec, .n_record = 1};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    int64_t shape[3] = {T, 1, 1};
    nc_tensor *x = NULL, *y = NULL, *tr = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 3, shape, current, &x));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    NC_ASSERT_OK(nc_session_trace(ss, "if", NC_TRACE_SPIKES, &tr));
    assert_int_equal(nc_tensor_numel(tr), T);
    memcpy(spikes, nc_tensor_data(tr), (size_t)T * sizeof(float));
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_tensor_free(tr);
    nc_session_free(ss);
}

static void expect_spikes_at(const float *spikes, int T, const int *steps, int n)
{
    for (int t = 1; t <= T; t++) {
        int want = 0;
        for (int k = 0; k < n; k++)
            want |= steps[k] == t;
        if ((spikes[t - 1] != 0.0f) != want)
            fail_msg("step %d: spike %g, expected %d", t, spikes[t - 1], want);
    }
}

static void test_constant_input(void **state)
{
    (void)state;
    int id;
    nc_snn *s = one_neuron(1.0f, 0.5f, NC_RESET_SUBTRACT, &id);
    float I[12], sp[12];
    for (int t = 0; t < 12; t++)
        I[t] = 0.25f;
    /* v: .75, 1.0→0, .25, .5, .75, 1.0→0, ... */
    spike_train(s, I, 12, sp);
    int want[] = {2, 6, 10};
    expect_spikes_at(sp, 12, want, 3);
    nc_snn_free(s);
}

static void test_ramp_input(void **state)
{
    (void)state;
    int id;
    nc_snn *s = one_neuron(1.0f, 0.0f, NC_RESET_SUBTRACT, &id);
    float I[8], sp[8];
    for (int t = 0; t < 8; t++)
        I[t] = 0.125f * (float)(t + 1);
    /* m: .125, .375, .75, 1.25→.25, .875, 1.625→.625, 1.5→.5, 1.5→.5 */
    spike_train(s, I, 8, sp);
    int want[] = {4, 6, 7, 8};
    expect_spikes_at(sp, 8, want, 4);
    nc_snn_free(s);
}

static void test_negative_input(void **state)
{
    (void)state;
    int id;
    nc_snn *s = one_neuron(1.0f, 0.5f, NC_RESET_SUBTRACT, &id);
    float I[6] = {-0.25f, -0.25f, -0.25f, 1.0f, 0.5f, 0.25f}, sp[6];
    /* m: .25, 0, -.25, .75, 1.25→.25, .5 */
    spike_train(s, I, 6, sp);
    int want[] = {5};
    expect_spikes_at(sp, 6, want, 1);
    nc_snn_free(s);
}

static void test_reset_to_zero(void **state)
{
    (void)state;
    int id;
    float I[6] = {0.75f, 0.75f, 0.75f, 0.75f, 0.75f, 0.75f}, sp[6];
    nc_snn *s = one_neuron(1.0f, 0.0f, NC_RESET_ZERO, &id);
    spike_train(s, I, 6, sp); /* .75, 1.5→0, .75, 1.5→0, ... */
    int want_zero[] = {2, 4, 6};
    expect_spikes_at(sp, 6, want_zero, 3);
    nc_snn_free(s);
    s = one_neuron(1.0f, 0.0f, NC_RESET_SUBTRACT, &id);
    spike_train(s, I, 6, sp); /* .75, 1.5→.5, 1.25→.25, 1.0→0, .75, 1.5→.5 */
    int want_sub[] = {2, 3, 4, 6};
    expect_spikes_at(sp, 6, want_sub, 4);
    nc_snn_free(s);
}

/* With θ = λ, v(0) = θ/2 and T = L, a layer's mean output for constant input z
 * is the QCFS activation λ·clip(floor(z·L/λ + 1/2)/L, 0, 1), exactly. */
static void test_qcfs_equivalence(void **state)
{
    (void)state;
    const float lambda = 2.0f;
    const int L = 8, n = 257;
    float z[257];
    for (int i = 0; i < n; i++)
        z[i] = -1.0f + (float)i / 64.0f; /* -1 .. 3 in steps of 1/64: exact in float */
    int64_t in_shape[1] = {n}, wshape[2] = {n, n};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in_shape, &s));
    nc_tensor *w = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, wshape, &w));
    float *wd = nc_tensor_data(w);
    for (int i = 0; i < n; i++)
        wd[i * n + i] = 1.0f;
    int fc, ifl, ro, out_fc;
    NC_ASSERT_OK(nc_snn_add_affine(s, 0, w, NULL, "fc", &fc));
    nc_tensor *th = scalar1(lambda);
    nc_if_params p = {.threshold = th}; /* v_init NULL = θ/2, spike value θ */
    NC_ASSERT_OK(nc_snn_add_if(s, fc, &p, "if", &ifl));
    NC_ASSERT_OK(nc_snn_add_affine(s, ifl, w, NULL, "identity", &out_fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, out_fc, "readout", &ro));
    assert_int_equal(nc_snn_output_layer(s), ro);
    nc_session_options o = {.timesteps = L};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    int64_t xs[2] = {1, n};
    nc_tensor *x = NULL, *y = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, xs, z, &x));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    const float *sum = nc_tensor_data(y);
    for (int i = 0; i < n; i++) {
        float q = floorf(z[i] * (float)L / lambda + 0.5f) / (float)L;
        q = lambda * (q < 0 ? 0 : (q > 1 ? 1 : q));
        float mean = sum[i] / (float)L;
        if (mean != q)
            fail_msg("z=%g: SNN mean %g, QCFS %g", z[i], mean, q);
    }
    int64_t spikes;
    NC_ASSERT_OK(nc_session_spike_count(ss, ifl, &spikes));
    assert_true(spikes > 0);
    nc_tensor_free(w);
    nc_tensor_free(th);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_session_free(ss);
    nc_snn_free(s);
}

static void test_poisson_is_seeded(void **state)
{
    (void)state;
    int id;
    nc_snn *s = one_neuron(0.5f, 0.0f, NC_RESET_SUBTRACT, &id);
    int64_t xs[2] = {64, 1};
    nc_tensor *x = NULL, *y[3] = {0};
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, xs, &x));
    float *xd = nc_tensor_data(x);
    for (int i = 0; i < 64; i++)
        xd[i] = 0.5f;
    uint64_t seeds[3] = {1, 1, 2};
    for (int k = 0; k < 3; k++) {
        nc_session_options o = {.timesteps = 16, .encoding = NC_ENCODING_POISSON, .seed = seeds[k]};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &y[k]));
        nc_session_free(ss);
    }
    assert_memory_equal(nc_tensor_data(y[0]), nc_tensor_data(y[1]), 64 * sizeof(float));
    assert_memory_not_equal(nc_tensor_data(y[0]), nc_tensor_data(y[2]), 64 * sizeof(float));
    /* the IF passes on its input charge: the output sum is within one θ of the
     * input spike count per neuron, about 64 · 16 · 0.5 */
    double total = 0;
    for (int i = 0; i < 64; i++)
        total += ((float *)nc_tensor_data(y[0]))[i];
    assert_true(total > 0.4 * 64 * 16 && total < 0.6 * 64 * 16);
    for (int k = 0; k < 3; k++)
        nc_tensor_free(y[k]);
    nc_tensor_free(x);
    nc_snn_free(s);
}

static void test_per_step_and_shapes(void **state)
{
    (void)state;
    int id;
    nc_snn *s = one_neuron(1.0f, 0.5f, NC_RESET_SUBTRACT, &id);
    nc_session_options o = {.timesteps = 4, .per_step = 1};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    int64_t xs[2] = {2, 1};
    float xv[2] = {0.25f, 1.0f};
    nc_tensor *x = NULL, *y = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, xs, xv, &x));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    assert_int_equal(nc_tensor_ndim(y), 3);
    assert_int_equal(nc_tensor_shape(y)[0], 4);
    assert_int_equal(nc_tensor_shape(y)[1], 2);
    const float *yd = nc_tensor_data(y);
    /* sample 0: spikes at step 2; sample 1 (I = θ): every step */
    float want[8] = {0, 1, 1, 1, 0, 1, 0, 1}; /* (T, N) layout */
    assert_memory_equal(yd, want, sizeof want);
    nc_tensor_free(y);
    /* wrong shape: a clear error, nothing returned */
    int64_t bad[2] = {2, 3};
    nc_tensor *xb = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, bad, &xb));
    y = (nc_tensor *)0x1;
    assert_int_equal(nc_session_run(ss, xb, &y), NC_ERR_SHAPE);
    assert_null(y);
    assert_non_null(strstr(nc_last_error(), "[2, 3]"));
    nc_tensor_free(xb);
    nc_tensor_free(x);
    nc_session_free(ss);
    nc_snn_free(s);
}

static void test_builder_errors(void **state)
{
    (void)state;
    int64_t in_shape[3] = {2, 4, 4}, wshape[4] = {3, 1, 3, 3}, fshape[2] = {10, 31};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &s));
    nc_tensor *w = NULL, *fw = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 4, wshape, &w));
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, fshape, &fw));
    int id = -7;
    /* weight expects 1 input channel per group: 2 channels need groups = 2, and 3 outputs don't split */
    assert_int_equal(nc_snn_add_conv2d(s, 0, w, NULL, NULL, "c", &id), NC_ERR_SHAPE);
    assert_int_equal(id, -7);
    assert_int_equal(nc_snn_num_layers(s), 1);
    int fl;
    NC_ASSERT_OK(nc_snn_add_flatten(s, 0, "flat", &fl));
    assert_int_equal(nc_snn_add_affine(s, fl, fw, NULL, "fc", &id), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "32"));
    assert_int_equal(nc_snn_add_flatten(s, 0, "flat", &id), NC_ERR_INVALID_ARG); /* duplicate name */
    nc_tensor *bad_th = vec(3, (float[]){1, 1, 1});
    nc_if_params p = {.threshold = bad_th};
    assert_int_equal(nc_snn_add_if(s, 0, &p, "if", &id), NC_ERR_SHAPE);
    assert_int_equal(nc_snn_num_layers(s), 2);
    nc_tensor_free(bad_th);
    nc_tensor_free(w);
    nc_tensor_free(fw);
    nc_snn_free(s);
}

/* ---------------------------------------------------------------- SpikeMaxPool2d */

/* Runs s on x recording rec[]; returns rec[0]'s value trace, and in
 * *second (if not NULL) the spike trace of the last one. */
static nc_tensor *run_trace(const nc_snn *s, const char *backend, const nc_tensor *x, int T, const char **rec,
                            int n_rec, nc_tensor **second, int64_t *pool_spikes, int pool_id)
{
    nc_session_options o = {.backend = backend, .timesteps = T, .record = rec, .n_record = n_rec};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    nc_tensor *y = NULL, *tr = NULL;
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    NC_ASSERT_OK(nc_session_trace(ss, rec[0], NC_TRACE_MEMBRANE, &tr));
    if (second)
        NC_ASSERT_OK(nc_session_trace(ss, rec[n_rec - 1], NC_TRACE_SPIKES, second));
    NC_ASSERT_OK(nc_session_spike_count(ss, pool_id, pool_spikes));
    nc_tensor_free(y);
    nc_session_free(ss);
    return tr;
}

/* Hand-computed spike trains: 2 × 3 inputs, windows 2 × 2 at stride 1 with
 * one column of padding each side (4 outputs). Each output's count is the
 * largest count in its window at every step; a spike carries the value of
 * the first input (window order) that reached the new max. */
static void test_spike_maxpool_by_hand(void **state)
{
    (void)state;
    enum { T = 6 };
    int64_t in[3] = {1, 2, 3}, k[2] = {2, 2}, st[2] = {1, 1}, pd[2] = {0, 1};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    int id;
    NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, 0, k, st, pd, "smp", &id));
    nc_snn_layer_info L;
    NC_ASSERT_OK(nc_snn_layer_at(s, id, &L));
    assert_int_equal(L.kind, NC_SNN_SPIKEMAXPOOL2D);
    assert_int_equal(L.shape[1] * 10 + L.shape[2], 14);
    assert_string_equal(nc_snn_kind_name(L.kind), "SpikeMaxPool2d");
    /* inputs (row, col): spike value, train */
    static const float val[6] = {1, 2, 1, 0, 3, 1};
    static const int train[6][T] = {{1, 1, 0, 0, 0, 0}, {0, 1, 1, 1, 0, 0}, {0, 0, 0, 0, 1, 1},
                                    {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 1, 0}, {1, 0, 0, 0, 0, 0}};
    float xs[T * 6];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < 6; i++)
            xs[t * 6 + i] = train[i][t] ? val[i] : 0.0f;
    int64_t xshape[5] = {T, 1, 1, 2, 3}; /* a series: (T, N, C, H, W) */
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 5, xshape, xs, &x));
    static const float want[4][T] = {{1, 1, 0, 0, 0, 0}, {1, 1, 0, 2, 0, 0}, {1, 0, 2, 2, 0, 0},
                                     {1, 0, 0, 0, 0, 1}};
    static const char *backends[] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++) {
        const char *rec[] = {"smp"};
        int64_t spikes;
        nc_tensor *spk = NULL;
        nc_tensor *tr = run_trace(s, backends[b], x, T, rec, 1, &spk, &spikes, id);
        assert_int_equal(nc_tensor_numel(tr), T * 4);
        const float *v = nc_tensor_data(tr), *sp = nc_tensor_data(spk);
        for (int t = 0; t < T; t++)
            for (int o = 0; o < 4; o++) {
                if (v[t * 4 + o] != want[o][t])
                    fail_msg("%s: output %d at step %d: %g, expected %g", backends[b], o, t + 1, v[t * 4 + o],
                             want[o][t]);
                assert_true(sp[t * 4 + o] == (want[o][t] != 0.0f)); /* its spike trace: 0/1 */
            }
        assert_int_equal(spikes, 10);
        nc_tensor_free(tr);
        nc_tensor_free(spk);
    }
    nc_tensor_free(x);
    nc_snn_free(s);

    /* padding must leave every window a tap inside the input */
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    int64_t big[2] = {2, 2};
    assert_int_equal(nc_snn_add_spike_maxpool2d(s, 0, k, st, big, NULL, &id), NC_ERR_INVALID_ARG);
    nc_snn_free(s);
}

/* IF layers (per-channel θ, spikes carrying θ ≠ 1) under both resets feed
 * a SpikeMaxPool2d: at every step its spike count is the largest count of
 * the IF spikes in each window, and each spike carries the channel's θ. */
static void test_spike_maxpool_counts(void **state)
{
    (void)state;
    enum { T = 40, C = 2, H = 3, W = 3, OH = 2, OW = 2 };
    int64_t in[3] = {C, H, W}, k[2] = {2, 2}, st[2] = {1, 1};
    float th[C] = {0.8f, 1.3f};
    float xin[C * H * W];
    for (int i = 0; i < C * H * W; i++)
        xin[i] = (float)((i * 7) % 11) / 10.0f; /* rates 0 .. 1, a few ties */
    int64_t xshape[4] = {1, C, H, W};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, xshape, xin, &x));
    for (int reset = 0; reset < 2; reset++) {
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_snn_create(3, in, &s));
        nc_tensor *tt = vec(C, th);
        nc_if_params p = {.threshold = tt, .reset = reset ? NC_RESET_ZERO : NC_RESET_SUBTRACT};
        int ifl, mp;
        NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "if", &ifl));
        NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, ifl, k, st, NULL, "smp", &mp));
        nc_tensor_free(tt);
        const char *rec[] = {"smp", "if"};
        nc_tensor *spk = NULL;
        int64_t n_out;
        nc_tensor *tr = run_trace(s, "cpu", x, T, rec, 2, &spk, &n_out, mp);
        const float *v = nc_tensor_data(tr), *sp = nc_tensor_data(spk);
        int cin[C * H * W] = {0}, cout[C * OH * OW] = {0};
        int64_t total = 0;
        for (int t = 0; t < T; t++) {
            for (int i = 0; i < C * H * W; i++)
                cin[i] += sp[t * C * H * W + i] != 0.0f;
            for (int c = 0; c < C; c++)
                for (int oh = 0; oh < OH; oh++)
                    for (int ow = 0; ow < OW; ow++) {
                        int o = (c * OH + oh) * OW + ow, m = 0;
                        float y = v[t * C * OH * OW + o];
                        for (int i = 0; i < 2; i++)
                            for (int j = 0; j < 2; j++)
                                m = cin[(c * H + oh + i) * W + ow + j] > m ? cin[(c * H + oh + i) * W + ow + j] : m;
                        assert_true(y == 0.0f || y == th[c]);
                        cout[o] += y != 0.0f;
                        total += y != 0.0f;
                        if (cout[o] != m)
                            fail_msg("reset %d, output %d, step %d: count %d, max of the inputs' %d", reset, o, t + 1,
                                     cout[o], m);
                    }
        }
        assert_int_equal(total, n_out);
        assert_true(total > T); /* the pools did spike */
        nc_tensor_free(tr);
        nc_tensor_free(spk);
        nc_snn_free(s);
    }
    nc_tensor_free(x);
}

/* A SignedIF of bursts (max_spikes 4, per-channel θ) feeds a
 * SpikeMaxPool2d, its input rising for 20 steps and then falling (bursts
 * taken back): at every step the pool's count, in units of the channel's
 * θ, is the largest count of its window's inputs (their spikes of either
 * sign summed), each of its events carries d·θ for a move d of that max,
 * some of them bursts (|d| ≥ 2) and some negative; cpu-fast runs it bit
 * for bit as the reference. */
static void test_spike_maxpool_bursts(void **state)
{
    (void)state;
    enum { T = 40, C = 2, H = 3, W = 3, OH = 2, OW = 2, B = 4 };
    int64_t in[3] = {C, H, W}, k[2] = {2, 2}, st[2] = {1, 1};
    float th[C] = {0.3f, 0.45f};
    static float xs[T * C * H * W];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C * H * W; i++)
            xs[t * C * H * W + i] = (float)((i * 7) % 11) / 10.0f * (t < 20 ? 1.0f : -0.7f);
    int64_t xshape[5] = {T, 1, C, H, W};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 5, xshape, xs, &x));
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    nc_tensor *tt = vec(C, th);
    nc_if_params p = {.threshold = tt, .signed_spikes = 1, .max_spikes = B};
    int sif, mp;
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "sif", &sif));
    NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, sif, k, st, NULL, "smp", &mp));
    nc_tensor_free(tt);
    const char *rec[] = {"smp", "sif"};
    nc_tensor *spk = NULL, *spk_fast = NULL;
    int64_t n_out, n_fast;
    nc_tensor *tr = run_trace(s, "cpu", x, T, rec, 2, &spk, &n_out, mp);
    nc_tensor *tr_fast = run_trace(s, "cpu-fast", x, T, rec, 2, &spk_fast, &n_fast, mp);
    assert_int_equal(n_out, n_fast);
    assert_memory_equal(nc_tensor_data(tr), nc_tensor_data(tr_fast), (size_t)(T * C * OH * OW) * sizeof(float));
    const float *v = nc_tensor_data(tr), *sp = nc_tensor_data(spk);
    int cin[C * H * W] = {0}, cout[C * OH * OW] = {0}, bursts = 0, down = 0;
    int64_t events = 0;
    for (int t = 0; t < T; t++) {
        for (int i = 0; i < C * H * W; i++)
            cin[i] += (int)sp[t * C * H * W + i]; /* a SignedIF's spike trace: its spikes this step, signed */
        for (int c = 0; c < C; c++)
            for (int oh = 0; oh < OH; oh++)
                for (int ow = 0; ow < OW; ow++) {
                    int o = (c * OH + oh) * OW + ow, m = 0;
                    for (int i = 0; i < 2; i++)
                        for (int j = 0; j < 2; j++)
                            m = cin[(c * H + oh + i) * W + ow + j] > m ? cin[(c * H + oh + i) * W + ow + j] : m;
                    float y = v[t * C * OH * OW + o];
                    int d = (int)lrintf(y / th[c]);
                    if (y != (float)d * th[c] || d < -B || d > B)
                        fail_msg("output %d, step %d: %g is not d·θ with |d| <= %d", o, t + 1, (double)y, B);
                    cout[o] += d;
                    events += d != 0;
                    bursts += d > 1 || d < -1;
                    down += d < 0;
                    if (cout[o] != m)
                        fail_msg("output %d, step %d: count %d, max of the inputs' %d", o, t + 1, cout[o], m);
                }
    }
    assert_int_equal(events, n_out);
    assert_true(bursts > 0 && down > 0);
    nc_tensor_free(tr);
    nc_tensor_free(tr_fast);
    nc_tensor_free(spk);
    nc_tensor_free(spk_fast);
    nc_tensor_free(x);
    nc_snn_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_constant_input),     cmocka_unit_test(test_ramp_input),
        cmocka_unit_test(test_negative_input),     cmocka_unit_test(test_reset_to_zero),
        cmocka_unit_test(test_qcfs_equivalence),   cmocka_unit_test(test_poisson_is_seeded),
        cmocka_unit_test(test_per_step_and_shapes), cmocka_unit_test(test_builder_errors),
        cmocka_unit_test(test_spike_maxpool_by_hand), cmocka_unit_test(test_spike_maxpool_counts),
        cmocka_unit_test(test_spike_maxpool_bursts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
