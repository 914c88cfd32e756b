/* The Loihi-style simulator: the integer neuron arithmetic against Lava's
 * own test vectors, overflow at the 24-bit limits, the two-compartment
 * emulation of subtraction, one step of latency a hop, bit-exact agreement
 * with the float network where quantisation is exact, determinism across
 * runs and thread counts, mapping onto cores, counters and energy, the
 * parameter file, and refusals. */
#define _XOPEN_SOURCE 700
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/loihi_fixed.h"

/* ---------------------------------------------------------------- arithmetic */

#define VTH_OFF NC_LF_VTH_MAX /* a threshold the tests never reach */

/* Lava: du = dv = 0, bias 2·2^6, vth 8 → spikes at steps 4 and 9 (from 0). */
static void test_lava_bias_spikes(void **state)
{
    (void)state;
    int32_t u = 0, v = 0;
    for (int t = 0; t < 12; t++) {
        int f = nc_lf_step(&u, &v, 0, 0, 0, nc_lf_bias(2, 6), 8, NC_LF_RESET_ZERO);
        assert_int_equal(f & NC_LF_SPIKE, t == 4 || t == 9 ? NC_LF_SPIKE : 0);
    }
}

/* Lava: an impulse a_in = 128 with du = 2047 → u = 8192, 4096, ..., 64. */
static void test_lava_current_decay(void **state)
{
    (void)state;
    int32_t u = 0, v = 0, un = 0, vn = 0;
    for (int t = 0; t < 8; t++) {
        nc_lf_step(&u, &v, t == 0 ? 64 * 128 : 0, 2047, 0, 0, VTH_OFF, NC_LF_RESET_ZERO);
        nc_lf_step(&un, &vn, t == 0 ? -64 * 128 : 0, 2047, 0, 0, VTH_OFF, NC_LF_RESET_ZERO);
        assert_int_equal(u, 8192 >> t);
        assert_int_equal(un, -(8192 >> t)); /* truncation toward zero is symmetric */
    }
}

/* Lava: an impulse with du = 0, dv = 2048 → v = 8192, 12286, 14331, ... */
static void test_lava_voltage_decay(void **state)
{
    (void)state;
    static const int32_t want[8] = {8192, 12286, 14331, 15351, 15859, 16111, 16235, 16295};
    int32_t u = 0, v = 0, un = 0, vn = 0;
    for (int t = 0; t < 8; t++) {
        nc_lf_step(&u, &v, t == 0 ? 64 * 128 : 0, 0, 2048, 0, VTH_OFF, NC_LF_RESET_ZERO);
        nc_lf_step(&un, &vn, t == 0 ? -64 * 128 : 0, 0, 2048, 0, VTH_OFF, NC_LF_RESET_ZERO);
        assert_int_equal(v, want[t]);
        assert_int_equal(vn, -want[t]);
    }
}

/* Lava: bias_mant 4095, bias_exp 5 → v = 131040 after one step. */
static void test_lava_bias_exponent(void **state)
{
    (void)state;
    int32_t u = 0, v = 0;
    nc_lf_step(&u, &v, 0, 4095, 0, nc_lf_bias(4095, 5), VTH_OFF, NC_LF_RESET_ZERO);
    assert_int_equal(v, 131040);
    int32_t m;
    int e;
    assert_int_equal(nc_lf_bias_encode(131040, 7, &m, &e), 0);
    assert_int_equal(m, 4095);
    assert_int_equal(e, 5);
    assert_int_equal(nc_lf_bias_encode(-8191, 7, &m, &e), 0); /* rounds half away: -2048·4 */
    assert_true(m == -2048 && e == 2);
    assert_int_equal(nc_lf_bias_encode(4095 * 128 + 1000, 7, &m, &e), 1); /* clipped */
    assert_true(m == 4095 && e == 7);
}

static void test_helpers_never_shift_negatives(void **state)
{
    (void)state;
    assert_true(nc_lf_rtz_shift(-5, 1) == -2);
    assert_true(nc_lf_rtz_shift(5, 1) == 2);
    assert_true(nc_lf_rtz_shift(-1, 12) == 0);
    assert_true(nc_lf_scale_pow2(-3, 2) == -12);
    assert_true(nc_lf_scale_pow2(-7, -1) == -3);
    assert_true(nc_lf_weight(-128, 7) == -128 * 128 * 64);
    assert_true(nc_lf_weight(127, -1) == 63 * 64);
}

/* u lives in Lava's (−2^23, 2^23]: it wraps by 2^24 beyond; v saturates at
 * ±(2^23 − 1). */
static void test_overflow(void **state)
{
    (void)state;
    const int32_t U = 1 << 23;
    int32_t u = 0;
    assert_int_equal(nc_lf_u_step(&u, U, 4095), 0);
    assert_int_equal(u, U);
    u = 0;
    assert_int_equal(nc_lf_u_step(&u, U + 1, 4095), 1);
    assert_int_equal(u, -U + 1);
    u = 0;
    assert_int_equal(nc_lf_u_step(&u, -U + 1, 4095), 0);
    assert_int_equal(u, -U + 1);
    u = 0;
    assert_int_equal(nc_lf_u_step(&u, -U, 4095), 1);
    assert_int_equal(u, U);
    u = U; /* du = 0 keeps 4095/4096 of u, then the input pushes it over */
    assert_int_equal(nc_lf_u_step(&u, 64 * 100, 0), 1);
    assert_int_equal(u, (int32_t)(U - 2048 + 6400 - (1 << 24)));
    assert_int_equal(nc_lf_wrap24(3 * (int64_t)U), U);
    assert_int_equal(nc_lf_wrap24(-5 * (int64_t)U), U);

    int32_t v = U - 10;
    assert_int_equal(nc_lf_v_step(&v, 100, 0, 0), 1);
    assert_int_equal(v, U - 1);
    v = -U + 10;
    assert_int_equal(nc_lf_v_step(&v, -100, 0, 0), 1);
    assert_int_equal(v, -U + 1);
    v = 0;
    assert_int_equal(nc_lf_v_step(&v, U, 0, (int64_t)U), 1); /* u and bias together */
    assert_int_equal(v, U - 1);
    /* a saturated membrane with the largest threshold still fires */
    u = 0, v = U - 1;
    int f = nc_lf_step(&u, &v, 0, 4095, 0, 0, NC_LF_VTH_MAX, NC_LF_RESET_SUBTRACT);
    assert_true(f & NC_LF_SPIKE);
    assert_int_equal(v, U - 1 - 64 * NC_LF_VTH_MAX);
}

static void test_threshold_strict_and_resets(void **state)
{
    (void)state;
    int32_t u = 0, v = 10 * 64 - 5;
    assert_int_equal(nc_lf_step(&u, &v, 0, 4095, 0, 5, 10, NC_LF_RESET_ZERO) & NC_LF_SPIKE, 0); /* v = vth·64 */
    assert_int_equal(v, 640);
    assert_true(nc_lf_step(&u, &v, 0, 4095, 0, 5, 10, NC_LF_RESET_ZERO) & NC_LF_SPIKE);
    assert_int_equal(v, 0);
    v = 640;
    assert_true(nc_lf_step(&u, &v, 0, 4095, 0, 7, 10, NC_LF_RESET_SUBTRACT) & NC_LF_SPIKE);
    assert_int_equal(v, 7);
}

/* The two-compartment emulation fires exactly when the subtracting neuron
 * does, for any input (within range). */
static void test_two_compartment_matches_subtract(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    int32_t u1 = 0, v1 = 300, u2 = 0, v2 = 300;
    int prev = 0, spikes = 0;
    for (int t = 0; t < 5000; t++) {
        seed = seed * 1664525u + 1013904223u;
        int64_t in = 64 * ((int64_t)(seed >> 20) - 1400); /* mostly below, sometimes above threshold */
        int a = nc_lf_step(&u1, &v1, in, 4095, 0, 64 * 3, 1000, NC_LF_RESET_SUBTRACT) & NC_LF_SPIKE;
        int b = nc_lf_two_comp_step(&u2, &v2, in, prev, 4095, 0, 64 * 3, 1000) & NC_LF_SPIKE;
        assert_int_equal(a, b);
        prev = b;
        spikes += a != 0;
    }
    assert_true(spikes > 100);
}

/* ---------------------------------------------------------------- networks */

static nc_tensor *tensor(int ndim, const int64_t *shape, const float *v)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, ndim, shape, v, &t));
    return t;
}

static nc_tensor *scalar(float v)
{
    int64_t one[1] = {1};
    return tensor(1, one, &v);
}

static int g_signed;             /* add_if makes signed IF layers */
static int g_burst = 1;          /* ... sending up to this many spikes a step */
static float g_fc1_bias = 0.125f; /* conv_net's fc1 bias */

static int add_if(nc_snn *s, int from, float theta, float v0, nc_reset_mode reset, const char *name)
{
    nc_tensor *th = scalar(theta), *v = scalar(v0);
    nc_if_params p = {.threshold = th, .v_init = v, .reset = reset, .signed_spikes = g_signed,
                       .max_spikes = g_signed ? g_burst : 0};
    int id;
    NC_ASSERT_OK(nc_snn_add_if(s, from, &p, name, &id));
    nc_tensor_free(th);
    nc_tensor_free(v);
    return id;
}

static int add_affine(nc_snn *s, int from, int out, int in, const float *w, const float *b, const char *name)
{
    int64_t ws[2] = {out, in}, bs[1] = {out};
    nc_tensor *W = tensor(2, ws, w), *B = b ? tensor(1, bs, b) : NULL;
    int id;
    NC_ASSERT_OK(nc_snn_add_affine(s, from, W, B, name, &id));
    nc_tensor_free(W);
    nc_tensor_free(B);
    return id;
}

/* input (1,4,4) → conv 2×3×3 (±1, pad 1) → IF θ = 1 → avg pool 2×2 →
 * flatten → affine 3×8 (±1, 0; bias 1/8) → IF θ = 1 → affine 2×3 (±1) →
 * readout. Every weight and the thresholds are exact in 8-bit mantissas and
 * v(0) = 0.3 keeps membranes away from ties with the threshold, so the chip
 * computes the float network exactly, one step later a hop. */
static nc_snn *conv_net(nc_reset_mode reset)
{
    int64_t in[3] = {1, 4, 4}, ws[4] = {2, 1, 3, 3};
    float cw[18];
    for (int i = 0; i < 18; i++)
        cw[i] = (i * 7 % 5) < 3 ? 1.0f : -1.0f;
    float f1[24], fb[3] = {g_fc1_bias, g_fc1_bias, g_fc1_bias}, f2[6] = {1, -1, 1, -1, 1, 1};
    for (int i = 0; i < 24; i++)
        f1[i] = (i * 5 % 7) < 3 ? 1.0f : ((i * 5 % 7) < 5 ? -1.0f : 0.0f);
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    nc_tensor *W = tensor(4, ws, cw);
    nc_conv2d_params cp = {.padding = {1, 1}};
    int conv, pool, fl;
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, W, NULL, &cp, "conv", &conv));
    nc_tensor_free(W);
    int if1 = add_if(s, conv, 1.0f, 0.3f, reset, "if1");
    int64_t k[2] = {2, 2}, zero[2] = {0, 0};
    NC_ASSERT_OK(nc_snn_add_pool2d(s, if1, k, k, zero, 0.25f, "pool", &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, "flat", &fl));
    int fc1 = add_affine(s, fl, 3, 8, f1, fb, "fc1");
    int if2 = add_if(s, fc1, 1.0f, 0.3f, reset, "if2");
    int fc2 = add_affine(s, if2, 2, 3, f2, NULL, "fc2"), ro;
    NC_ASSERT_OK(nc_snn_add_readout(s, fc2, "readout", &ro));
    return s;
}

static int g_in_max = 64; /* conv_inputs' largest value, in 64ths */

/* n samples of 16 inputs, multiples of 1/64 in [0, g_in_max/64]. */
static nc_tensor *conv_inputs(int n, uint32_t seed)
{
    float *x = malloc((size_t)n * 16 * sizeof *x);
    for (int i = 0; i < n * 16; i++) {
        seed = seed * 1664525u + 1013904223u;
        x[i] = (float)((seed >> 24) % (uint32_t)(g_in_max + 1)) / 64.0f;
    }
    int64_t shape[4] = {n, 1, 4, 4};
    nc_tensor *t = tensor(4, shape, x);
    free(x);
    return t;
}

static nc_tensor *labels_of(int n)
{
    int64_t *y = malloc((size_t)n * sizeof *y), shape[1] = {n};
    for (int i = 0; i < n; i++)
        y[i] = i % 2;
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, shape, y, &t));
    free(y);
    return t;
}

static nc_loihi_result *run_net(const nc_snn *s, const nc_loihi_options *o, const nc_tensor *x, int T, int threads)
{
    nc_loihi_net *net = NULL;
    NC_ASSERT_OK(nc_loihi_compile(s, o, &net));
    nc_loihi_run_options ro = {.timesteps = T, .extra_steps = -1, .threads = threads};
    nc_loihi_result *r = NULL;
    nc_tensor *y = labels_of((int)nc_tensor_shape(x)[0]);
    NC_ASSERT_OK(nc_loihi_run(net, x, y, &ro, &r));
    nc_tensor_free(y);
    nc_loihi_net_free(net);
    return r;
}

static double readout_scale(const nc_snn *s, const nc_loihi_options *o)
{
    nc_loihi_net *net = NULL;
    NC_ASSERT_OK(nc_loihi_compile(s, o, &net));
    nc_loihi_layer_info L;
    NC_ASSERT_OK(nc_loihi_net_layer(net, nc_loihi_net_num_layers(net) - 1, &L));
    assert_string_equal(L.kind, "readout");
    assert_true(L.scale_min == L.scale_max);
    assert_int_equal(L.weights_clipped, 0);
    nc_loihi_net_free(net);
    return L.scale_min;
}

/* The chip's readout at step t + latency is the float readout summed over
 * t steps (times the readout's scale), for every t and sample. */
static void expect_matches_float(const nc_snn *s, const nc_loihi_options *o)
{
    const int N = 6, T = 12;
    nc_tensor *x = conv_inputs(N, 7);
    nc_session_options so = {.timesteps = T, .per_step = 1};
    nc_session *ss = NULL;
    nc_tensor *fy = NULL, *cy = NULL;
    NC_ASSERT_OK(nc_session_create(s, &so, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &fy));
    nc_loihi_result *r = run_net(s, o, x, T, 1);
    int lat = nc_loihi_result_steps_run(r) - T;
    assert_int_equal(lat, 2);
    NC_ASSERT_OK(nc_loihi_result_readout(r, &cy));
    assert_int_equal(nc_tensor_shape(cy)[0], T + lat);
    const float *f = nc_tensor_data_const(fy);
    const int64_t *c = nc_tensor_data_const(cy);
    double scale = readout_scale(s, o);
    int nonzero = 0;
    for (int n = 0; n < N; n++)
        for (int k = 0; k < 2; k++) {
            double sum = 0;
            for (int step = 0; step < lat; step++) /* nothing arrives before the pipeline fills */
                assert_true(c[((int64_t)step * N + n) * 2 + k] == 0);
            for (int t = 0; t < T; t++) {
                sum += f[((int64_t)t * N + n) * 2 + k];
                double chip = (double)c[((int64_t)(t + lat) * N + n) * 2 + k] / scale;
                if (chip != sum)
                    fail_msg("sample %d class %d t %d: chip %g, float %g", n, k, t + 1, chip, sum);
                nonzero += sum != 0;
            }
        }
    assert_true(nonzero > N * T / 2);
    nc_tensor_free(cy);
    nc_tensor_free(fy);
    nc_session_free(ss);
    nc_loihi_result_free(r);
    nc_tensor_free(x);
}

static void test_exact_against_float(void **state)
{
    (void)state;
    nc_snn *s = conv_net(NC_RESET_SUBTRACT);
    nc_loihi_options l2 = {.target = NC_LOIHI_2}, l1 = {.target = NC_LOIHI_1, .reset = NC_RESET_SUBTRACT},
                     pl = {.target = NC_LOIHI_2, .per_layer_scale = 1};
    expect_matches_float(s, &l2);
    expect_matches_float(s, &l1); /* the two-compartment emulation, exactly */
    expect_matches_float(s, &pl);
    nc_snn_free(s);
}

/* Signed IF layers on Loihi 2 (graded spikes of payload ±1): the chip's
 * readout is the float network's exactly, and that network's negative
 * spikes matter (its readout differs from the plain one's). Loihi 1 and the
 * reset to zero refuse them by name. */
static void test_signed_spikes_on_loihi2(void **state)
{
    (void)state;
    g_signed = 1;
    g_fc1_bias = -0.375f; /* if2 falls between if1's spikes: negative spikes */
    nc_snn *s = conv_net(NC_RESET_SUBTRACT);
    g_signed = 0;
    nc_snn *plain = conv_net(NC_RESET_SUBTRACT);
    g_fc1_bias = 0.125f;
    nc_loihi_options l2 = {.target = NC_LOIHI_2}, pl = {.target = NC_LOIHI_2, .per_layer_scale = 1};
    expect_matches_float(s, &l2);
    expect_matches_float(s, &pl);
    nc_tensor *x = conv_inputs(6, 7), *ys = NULL, *yp = NULL;
    nc_session_options so = {.timesteps = 12};
    nc_session *a = NULL, *b = NULL;
    NC_ASSERT_OK(nc_session_create(s, &so, &a));
    NC_ASSERT_OK(nc_session_create(plain, &so, &b));
    NC_ASSERT_OK(nc_session_run(a, x, &ys));
    NC_ASSERT_OK(nc_session_run(b, x, &yp));
    assert_true(memcmp(nc_tensor_data_const(ys), nc_tensor_data_const(yp), 12 * sizeof(float)) != 0);
    nc_loihi_net *net = NULL;
    nc_loihi_options l1 = {.target = NC_LOIHI_1, .reset = NC_RESET_SUBTRACT}, z = {.target = NC_LOIHI_2,
                                                                                 .reset = NC_RESET_ZERO};
    assert_int_equal(nc_loihi_compile(s, &l1, &net), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "'if1' (SignedIF)"));
    assert_non_null(strstr(nc_last_error(), "--plain-spikes"));
    assert_int_equal(nc_loihi_compile(s, &z, &net), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "subtractive reset"));
    assert_null(net);
    nc_tensor_free(ys);
    nc_tensor_free(yp);
    nc_session_free(a);
    nc_session_free(b);
    nc_tensor_free(x);
    nc_snn_free(plain);
    nc_snn_free(s);
}

/* Bursts on Loihi 2 (graded spikes of payload up to ±B): the chip's readout
 * is the float network's exactly for B = 2 and 3, and the bursts matter
 * (each readout differs from the single-spike network's). The host codes
 * the first layer's currents as biases of 13-bit mantissas, which round
 * large currents; inputs of at most 1/2 keep that rounding below the
 * membranes' distance from a tie (with one spike a step, the large currents
 * it touches fire every step anyway). */
static void test_bursts_on_loihi2(void **state)
{
    (void)state;
    g_in_max = 32;
    nc_tensor *x = conv_inputs(6, 7), *y1 = NULL;
    nc_session_options so = {.timesteps = 12};
    g_signed = 1;
    g_fc1_bias = -0.375f;
    nc_snn *one = conv_net(NC_RESET_SUBTRACT);
    nc_session *a = NULL;
    NC_ASSERT_OK(nc_session_create(one, &so, &a));
    NC_ASSERT_OK(nc_session_run(a, x, &y1));
    for (int B = 2; B <= 3; B++) {
        g_burst = B;
        nc_snn *s = conv_net(NC_RESET_SUBTRACT);
        nc_loihi_options l2 = {.target = NC_LOIHI_2}, pl = {.target = NC_LOIHI_2, .per_layer_scale = 1};
        expect_matches_float(s, &l2);
        expect_matches_float(s, &pl);
        nc_session *b = NULL;
        nc_tensor *yb = NULL;
        NC_ASSERT_OK(nc_session_create(s, &so, &b));
        NC_ASSERT_OK(nc_session_run(b, x, &yb));
        assert_true(memcmp(nc_tensor_data_const(y1), nc_tensor_data_const(yb), 12 * sizeof(float)) != 0);
        nc_tensor_free(yb);
        nc_session_free(b);
        nc_snn_free(s);
    }
    g_burst = 1;
    g_signed = 0;
    g_fc1_bias = 0.125f;
    g_in_max = 64;
    nc_tensor_free(y1);
    nc_session_free(a);
    nc_snn_free(one);
    nc_tensor_free(x);
}

/* One step a hop: input → IF → IF → readout. Each IF fires on its first
 * input (0.4 + 1 > 1), so the first spike of layer 1 is at step 1, of layer
 * 2 at step 2, and the readout's u first changes at step 3. */
static void test_latency_one_step_a_hop(void **state)
{
    (void)state;
    int64_t in[1] = {1};
    float one = 1.0f;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    int a = add_affine(s, 0, 1, 1, &one, NULL, "a");
    int i1 = add_if(s, a, 1.0f, 0.4f, NC_RESET_SUBTRACT, "if1");
    int b = add_affine(s, i1, 1, 1, &one, NULL, "b");
    int i2 = add_if(s, b, 1.0f, 0.4f, NC_RESET_SUBTRACT, "if2");
    int c = add_affine(s, i2, 1, 1, &one, NULL, "c"), ro;
    NC_ASSERT_OK(nc_snn_add_readout(s, c, "out", &ro));
    int64_t xs[2] = {1, 1};
    nc_tensor *x = tensor(2, xs, &one), *cy = NULL;
    nc_loihi_options o = {.target = NC_LOIHI_2};
    nc_loihi_net *net = NULL;
    NC_ASSERT_OK(nc_loihi_compile(s, &o, &net));
    nc_loihi_mapping m;
    NC_ASSERT_OK(nc_loihi_net_mapping(net, &m));
    assert_int_equal(m.latency_steps, 2);
    nc_loihi_layer_info L;
    NC_ASSERT_OK(nc_loihi_net_layer(net, 1, &L));
    assert_int_equal(L.depth, 1);
    NC_ASSERT_OK(nc_loihi_net_layer(net, 2, &L));
    assert_int_equal(L.depth, 2);
    NC_ASSERT_OK(nc_loihi_net_layer(net, 3, &L));
    assert_int_equal(L.depth, 3);
    double scale = L.scale_min;
    nc_loihi_run_options run = {.timesteps = 4, .extra_steps = 0};
    nc_loihi_result *r = NULL;
    NC_ASSERT_OK(nc_loihi_run(net, x, NULL, &run, &r));
    NC_ASSERT_OK(nc_loihi_result_readout(r, &cy));
    const int64_t *v = nc_tensor_data_const(cy);
    assert_true(v[0] == 0 && v[1] == 0);
    assert_true((double)v[2] == scale && (double)v[3] == 2 * scale); /* one spike each step from step 3 */
    assert_true(nc_loihi_result_accuracy_at(r, 1) < 0); /* no labels */
    nc_tensor_free(cy);
    nc_loihi_result_free(r);
    nc_loihi_net_free(net);
    nc_tensor_free(x);
    nc_snn_free(s);
}

static void test_deterministic_across_threads(void **state)
{
    (void)state;
    nc_snn *s = conv_net(NC_RESET_SUBTRACT);
    nc_tensor *x = conv_inputs(300, 99);
    nc_loihi_options o = {.target = NC_LOIHI_1};
    nc_loihi_result *r[3] = {run_net(s, &o, x, 10, 1), run_net(s, &o, x, 10, 2), run_net(s, &o, x, 10, 2)};
    nc_tensor *t[3];
    for (int k = 0; k < 3; k++)
        NC_ASSERT_OK(nc_loihi_result_readout(r[k], &t[k]));
    for (int k = 1; k < 3; k++) {
        assert_int_equal(nc_tensor_numel(t[k]), nc_tensor_numel(t[0]));
        assert_memory_equal(nc_tensor_data_const(t[k]), nc_tensor_data_const(t[0]),
                            (size_t)nc_tensor_numel(t[0]) * sizeof(int64_t));
        for (size_t l = 0; l < 4; l++) {
            nc_loihi_counts a, b;
            NC_ASSERT_OK(nc_loihi_result_counts(r[0], l, &a));
            NC_ASSERT_OK(nc_loihi_result_counts(r[k], l, &b));
            assert_memory_equal(&a.synops, &b.synops, sizeof a - offsetof(nc_loihi_counts, synops));
        }
        assert_string_equal(nc_loihi_result_json(r[k]), nc_loihi_result_json(r[0]));
    }
    for (int k = 0; k < 3; k++) {
        nc_tensor_free(t[k]);
        nc_loihi_result_free(r[k]);
    }
    nc_tensor_free(x);
    nc_snn_free(s);
}

/* input 1 → affine 1 → IF (θ 1, v(0) 1/4) → affine [1, −1] → readout (2).
 * With x = 1/2 the IF fires at steps 2, 4, 6, 8 of 9 (T = 8 + 1 step of
 * latency): 4 spikes, 4 messages (one core), 8 synaptic ops; its one
 * compartment is active every step (it has a bias); the readout's two are
 * active at steps 3..9 (input, then a current to clear). */
static void test_counters_and_energy(void **state)
{
    (void)state;
    int64_t in[1] = {1};
    float one = 1.0f, w2[2] = {1.0f, -1.0f}, half = 0.5f;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    int a = add_affine(s, 0, 1, 1, &one, NULL, "a");
    int i1 = add_if(s, a, 1.0f, 0.25f, NC_RESET_SUBTRACT, "if1");
    int b = add_affine(s, i1, 2, 1, w2, NULL, "b"), ro;
    NC_ASSERT_OK(nc_snn_add_readout(s, b, "out", &ro));
    int64_t xs[2] = {1, 1};
    nc_tensor *x = tensor(2, xs, &half);
    nc_loihi_options o = {.target = NC_LOIHI_2};
    nc_loihi_result *r = run_net(s, &o, x, 8, 1);
    assert_int_equal(nc_loihi_result_steps_run(r), 9);
    nc_loihi_counts c;
    NC_ASSERT_OK(nc_loihi_result_counts(r, 1, &c));
    assert_string_equal(c.name, "if1");
    assert_true(c.spikes == 4 && c.axon_messages == 4 && c.synops == 0);
    assert_true(c.active_updates == 9 && c.inactive_updates == 0);
    NC_ASSERT_OK(nc_loihi_result_counts(r, 2, &c));
    assert_true(c.synops == 8 && c.spikes == 0);
    assert_true(c.active_updates == 14 && c.inactive_updates == 4);
    NC_ASSERT_OK(nc_loihi_result_counts(r, 0, &c));
    assert_true(c.spikes == 0 && c.synops == 0); /* bias-coded input sends nothing */
    nc_loihi_cost k;
    NC_ASSERT_OK(nc_loihi_result_cost(r, &k));
    double want = 8 * 23.6e-12 + 23 * 81e-12 + 4 * 52e-12 + 4 * 1.7e-12;
    assert_true(fabs(k.energy_j - want) < 1e-18);
    assert_true(fabs(k.synop_j - 8 * 23.6e-12) < 1e-18);
    assert_true(k.latency_s > 9 * 113e-9 && k.latency_s < 9 * 1e-6);
    assert_true(k.host_macs == 1 && k.ann_macs == 3);
    assert_true(fabs(k.ann_gpu_j - 3 * 2.56e-12) < 1e-18);
    assert_non_null(strstr(k.energy_source, "Davies"));
    assert_non_null(strstr(k.evidence, "pre-silicon"));
    assert_non_null(strstr(k.gpu_source, "A100"));
    /* labels 0 for the one sample; class 0 leads once the readout has input */
    assert_true(nc_loihi_result_accuracy_at(r, 8) == 1.0);
    assert_true(nc_loihi_result_accuracy_at_step(r, 9) == 1.0);
    assert_true(nc_loihi_result_accuracy_at(r, 9) < 0);
    const char *json = nc_loihi_result_json(r);
    assert_non_null(strstr(json, "\"accuracy\""));
    assert_non_null(strstr(json, "pre-silicon estimate for Loihi 1, applied to Loihi 2"));
    nc_loihi_result_free(r);
    nc_tensor_free(x);
    nc_snn_free(s);
}

/* input (1, H, W) → conv 1×1 → IF (H·W neurons) → flatten → affine → readout. */
static nc_snn *wide_net(int64_t h, int64_t w, int classes)
{
    int64_t in[3] = {1, h, w}, ws[4] = {1, 1, 1, 1};
    float one = 1.0f;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    nc_tensor *W = tensor(4, ws, &one);
    nc_conv2d_params cp = {0};
    int conv, fl, ro;
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, W, NULL, &cp, "conv", &conv));
    nc_tensor_free(W);
    int sp = add_if(s, conv, 1.0f, 0.5f, NC_RESET_SUBTRACT, "wide");
    NC_ASSERT_OK(nc_snn_add_flatten(s, sp, "flat", &fl));
    int64_t n = h * w;
    float *fw = malloc((size_t)(n * classes) * sizeof *fw);
    for (int64_t i = 0; i < n * classes; i++)
        fw[i] = (i % 3) ? 0.5f : -0.25f;
    int fc = add_affine(s, fl, classes, (int)n, fw, NULL, "fc");
    free(fw);
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "out", &ro));
    return s;
}

static int64_t cores_of(const nc_snn *s, const nc_loihi_options *o, int64_t *layer1)
{
    nc_loihi_net *net = NULL;
    NC_ASSERT_OK(nc_loihi_compile(s, o, &net));
    nc_loihi_mapping m;
    NC_ASSERT_OK(nc_loihi_net_mapping(net, &m));
    nc_loihi_layer_info L;
    NC_ASSERT_OK(nc_loihi_net_layer(net, 1, &L));
    *layer1 = L.cores;
    assert_true(L.max_output_axons <= 4096);
    nc_loihi_net_free(net);
    return m.cores;
}

static void test_mapping(void **state)
{
    (void)state;
    nc_snn *s = wide_net(50, 50, 10);
    int64_t l1;
    nc_loihi_options o = {.target = NC_LOIHI_1};
    assert_int_equal(cores_of(s, &o, &l1), 4); /* 2500 compartments: 3 cores; the readout 1 */
    assert_int_equal(l1, 3);
    o.reset = NC_RESET_SUBTRACT; /* two compartments a neuron: 512 a core */
    assert_int_equal(cores_of(s, &o, &l1), 6);
    assert_int_equal(l1, 5);
    nc_loihi_options o2 = {.target = NC_LOIHI_2};
    assert_int_equal(cores_of(s, &o2, &l1), 2);
    o2.neurons_per_core = 1000;
    assert_int_equal(cores_of(s, &o2, &l1), 4);

    nc_loihi_net *net = NULL;
    NC_ASSERT_OK(nc_loihi_compile(s, &o, &net));
    nc_loihi_layer_info L;
    NC_ASSERT_OK(nc_loihi_net_layer(net, 2, &L));
    /* readout: 2500 axons, each a list of 10 synapses of 8 + 10 bits = 3 words */
    assert_int_equal(L.synapses, 25000);
    assert_int_equal(L.synapse_words, 7500);
    assert_int_equal(L.max_input_axons, 2500);
    nc_loihi_mapping m;
    NC_ASSERT_OK(nc_loihi_net_mapping(net, &m));
    assert_int_equal(m.chips, 1);
    assert_string_equal(m.smallest_system, "Kapoho Bay");
    assert_int_equal(m.ann_macs, 2500 + 25000);
    assert_non_null(strstr(nc_loihi_net_json(net), "Pohoiki Springs"));
    nc_loihi_system sys[8];
    size_t ns = nc_loihi_net_systems(net, sys, 8);
    assert_true(ns >= 3 && ns <= 8);
    assert_string_equal(sys[0].name, "Kapoho Bay");
    assert_true(sys[0].chips == 2 && sys[0].fits);
    assert_string_equal(sys[ns - 1].name, "Pohoiki Springs");
    assert_true(sys[ns - 1].chips == 768);
    assert_non_null(strstr(nc_loihi_net_json(net), "two-compartment"));
    nc_loihi_net_free(net);
    nc_snn_free(s);

    /* a readout neuron reading 5000 axons cannot sit on a Loihi 1 core */
    s = wide_net(50, 100, 2);
    nc_loihi_options lo1 = {.target = NC_LOIHI_1};
    assert_int_equal(nc_loihi_compile(s, &lo1, &net), NC_ERR_LIMIT);
    assert_null(net);
    assert_non_null(strstr(nc_last_error(), "'out'"));
    assert_non_null(strstr(nc_last_error(), "input axons"));
    nc_snn_free(s);
}

static void test_graded_input(void **state)
{
    (void)state;
    nc_snn *s = conv_net(NC_RESET_SUBTRACT);
    nc_tensor *x = conv_inputs(4, 3);
    nc_loihi_options o = {.target = NC_LOIHI_2, .input = NC_LOIHI_INPUT_GRADED};
    nc_loihi_result *r = run_net(s, &o, x, 6, 0);
    assert_int_equal(nc_loihi_result_steps_run(r), 6 + 3); /* the input layer is a hop too */
    nc_loihi_counts c;
    NC_ASSERT_OK(nc_loihi_result_counts(r, 0, &c));
    assert_true(c.spikes > 0 && c.axon_messages >= c.spikes);
    NC_ASSERT_OK(nc_loihi_result_counts(r, 1, &c));
    assert_true(c.synops > 0);
    nc_loihi_cost k;
    NC_ASSERT_OK(nc_loihi_result_cost(r, &k));
    assert_true(k.host_macs == 0);
    nc_loihi_result_free(r);
    o.target = NC_LOIHI_1;
    nc_loihi_net *net = NULL;
    assert_int_equal(nc_loihi_compile(s, &o, &net), NC_ERR_UNSUPPORTED);
    nc_tensor_free(x);
    nc_snn_free(s);
}

static void test_refusals(void **state)
{
    (void)state;
    nc_loihi_net *net = (nc_loihi_net *)&net;
    assert_int_equal(nc_loihi_compile(NULL, NULL, &net), NC_ERR_INVALID_ARG);
    assert_null(net);
    nc_loihi_net_free(NULL);
    nc_loihi_result_free(NULL);
    /* max pooling of currents has no synapses on a chip */
    int64_t in[3] = {1, 4, 4}, k[2] = {2, 2}, zero[2] = {0, 0};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    int id = add_if(s, 0, 1.0f, 0.5f, NC_RESET_SUBTRACT, "if");
    int p, fl;
    NC_ASSERT_OK(nc_snn_add_pool2d(s, id, k, (int64_t[2]){1, 1}, zero, 0.25f, "overlap", &p));
    NC_ASSERT_OK(nc_snn_add_flatten(s, p, "fl", &fl));
    float w[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    int a = add_affine(s, fl, 1, 9, w, NULL, "fc"), ro;
    NC_ASSERT_OK(nc_snn_add_readout(s, a, "out", &ro));
    assert_int_equal(nc_loihi_compile(s, NULL, &net), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "'overlap'"));
    nc_snn_free(s);
    /* spiking max pooling is not mapped: refused naming the layer */
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    id = add_if(s, 0, 1.0f, 0.5f, NC_RESET_SUBTRACT, "if");
    NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, id, k, k, zero, "smp", &p));
    NC_ASSERT_OK(nc_snn_add_flatten(s, p, "fl", &fl));
    a = add_affine(s, fl, 1, 4, w, NULL, "fc");
    NC_ASSERT_OK(nc_snn_add_readout(s, a, "out", &ro));
    assert_int_equal(nc_loihi_compile(s, NULL, &net), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "'smp' (SpikeMaxPool2d)"));
    assert_null(net);
    nc_snn_free(s);
    /* a Nonlinear layer and the two-sided SignedIF after it: refused naming
       the layer and why, Loihi 2 with the subtractive reset or not */
    for (int with_nl = 1; with_nl >= 0; with_nl--) {
        int64_t flat[1] = {9};
        NC_ASSERT_OK(nc_snn_create(1, flat, &s));
        id = add_if(s, add_affine(s, 0, 1, 9, w, NULL, "fc0"), 1.0f, 0.5f, NC_RESET_SUBTRACT, "if");
        nc_nonlinear_params silu = {.fn = NC_NL_SILU};
        if (with_nl)
            NC_ASSERT_OK(nc_snn_add_nonlinear(s, 1, &id, &silu, "swish", &id));
        nc_tensor *th = tensor(1, (int64_t[1]){1}, (float[1]){0.5f});
        nc_if_params two = {.threshold = th, .signed_spikes = NC_SIGNED_TWO_SIDED};
        NC_ASSERT_OK(nc_snn_add_if(s, id, &two, "sif", &id));
        nc_tensor_free(th);
        NC_ASSERT_OK(nc_snn_add_readout(s, add_affine(s, id, 1, 1, w, NULL, "fc"), "out", &ro));
        nc_loihi_options l2 = {.target = NC_LOIHI_2, .reset = NC_RESET_SUBTRACT};
        assert_int_equal(nc_loihi_compile(s, &l2, &net), NC_ERR_UNSUPPORTED);
        assert_null(net);
        if (with_nl) {
            assert_non_null(strstr(nc_last_error(), "'swish' (Nonlinear): SiLU"));
            assert_non_null(strstr(nc_last_error(), "no Loihi compartment"));
        } else {
            assert_non_null(strstr(nc_last_error(), "'sif' (SignedIF)"));
            assert_non_null(strstr(nc_last_error(), "two-sided"));
        }
        nc_snn_free(s);
    }
    /* no readout */
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    add_if(s, 0, 1.0f, 0.5f, NC_RESET_SUBTRACT, "last");
    assert_int_equal(nc_loihi_compile(s, NULL, &net), NC_ERR_UNSUPPORTED);
    nc_snn_free(s);
    /* bad options */
    s = conv_net(NC_RESET_SUBTRACT);
    nc_loihi_options o = {.weight_bits = 9};
    assert_int_equal(nc_loihi_compile(s, &o, &net), NC_ERR_INVALID_ARG);
    nc_loihi_options o1 = {.target = NC_LOIHI_1, .neurons_per_core = 100};
    assert_int_equal(nc_loihi_compile(s, &o1, &net), NC_ERR_INVALID_ARG);
    /* wrong data */
    NC_ASSERT_OK(nc_loihi_compile(s, NULL, &net));
    int64_t xs[2] = {2, 15};
    float x[30] = {0};
    nc_tensor *t = tensor(2, xs, x);
    nc_loihi_result *r = (nc_loihi_result *)&r;
    assert_int_equal(nc_loihi_run(net, t, NULL, NULL, &r), NC_ERR_SHAPE);
    assert_null(r);
    nc_tensor_free(t);
    nc_loihi_net_free(net);
    nc_snn_free(s);
}

/* Fewer weight bits: the mantissas shrink and the report says what was lost. */
static void test_quantisation_report(void **state)
{
    (void)state;
    nc_snn *s = wide_net(4, 4, 3);
    nc_loihi_options o = {.target = NC_LOIHI_2, .weight_bits = 2};
    nc_loihi_net *net = NULL;
    NC_ASSERT_OK(nc_loihi_compile(s, &o, &net));
    nc_loihi_layer_info L;
    NC_ASSERT_OK(nc_loihi_net_layer(net, 2, &L));
    /* M = 1: one level each side, at the clip α that minimises the error
     * of 0.5 and −0.25 together */
    assert_int_equal(L.weights, 48);
    assert_true(L.weight_max_abs_err > 0.05 && L.weight_max_abs_err <= 0.25 + 1e-6);
    const char *json = nc_loihi_net_json(net);
    assert_non_null(strstr(json, "\"weights_rounded_to_zero\""));
    assert_non_null(strstr(json, "\"weight_bits\": 2"));
    nc_loihi_net_free(net);
    o.weight_bits = 8;
    NC_ASSERT_OK(nc_loihi_compile(s, &o, &net));
    NC_ASSERT_OK(nc_loihi_net_layer(net, 2, &L));
    assert_int_equal(L.weights_clipped, 0);
    assert_int_equal(L.weights_zeroed, 0);
    assert_true(L.weight_max_abs_err < 0.5 / 127);
    NC_ASSERT_OK(nc_loihi_net_layer(net, 1, &L));
    assert_int_equal(L.thresholds_clipped, 0);
    assert_true(L.threshold_max_rel_err < 1e-4);
    nc_loihi_net_free(net);
    nc_snn_free(s);
}

/* input (1,8,8) → conv 1×1 → IF (θ 0.1: fires every step) → global average
 * pool → affine [50, −50] → readout. Sized for every neuron spiking, the
 * readout's 8-bit weights fill their range and 64 messages a step for 40
 * steps saturate it; sized on calibration data (the float network's largest
 * summed output, 5 a step), it does not. */
static void test_readout_calibration(void **state)
{
    (void)state;
    int64_t in[3] = {1, 8, 8}, ws[4] = {1, 1, 1, 1}, k[2] = {8, 8}, zero[2] = {0, 0};
    float one = 1.0f, w[2] = {50.0f, -50.0f};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    nc_tensor *W = tensor(4, ws, &one);
    nc_conv2d_params cp = {0};
    int conv, pool, fl, ro;
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, W, NULL, &cp, "conv", &conv));
    nc_tensor_free(W);
    int sp = add_if(s, conv, 0.1f, 0.05f, NC_RESET_SUBTRACT, "if");
    NC_ASSERT_OK(nc_snn_add_pool2d(s, sp, k, k, zero, 1.0f / 64, "gap", &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, "flat", &fl));
    int fc = add_affine(s, fl, 2, 1, w, NULL, "fc");
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "out", &ro));
    float xv[64];
    for (int i = 0; i < 64; i++)
        xv[i] = 1.0f;
    int64_t xs[4] = {1, 1, 8, 8};
    nc_tensor *x = tensor(4, xs, xv);
    nc_loihi_options o = {.target = NC_LOIHI_2};
    nc_loihi_result *r = run_net(s, &o, x, 40, 1);
    nc_loihi_counts c;
    NC_ASSERT_OK(nc_loihi_result_counts(r, 2, &c));
    assert_true(c.v_saturations > 0);
    nc_loihi_result_free(r);
    o.calib = x;
    r = run_net(s, &o, x, 40, 1);
    NC_ASSERT_OK(nc_loihi_result_counts(r, 2, &c));
    assert_true(c.v_saturations == 0);
    nc_tensor *cy = NULL;
    NC_ASSERT_OK(nc_loihi_result_readout(r, &cy));
    const int64_t *v = nc_tensor_data_const(cy);
    int64_t last = (nc_tensor_shape(cy)[0] - 1) * 2;
    assert_true(v[last] > 0 && v[last + 1] == -v[last]);
    nc_tensor_free(cy);
    nc_loihi_result_free(r);
    nc_tensor_free(x);
    nc_snn_free(s);
}

static void test_parameter_file(void **state)
{
    (void)state;
    nc_snn *s = conv_net(NC_RESET_SUBTRACT);
    nc_tensor *x = conv_inputs(3, 5);
    nc_loihi_options o = {.target = NC_LOIHI_1};
    nc_loihi_result *a = run_net(s, &o, x, 6, 1);
    o.params_path = nc_test_src("sim/loihi_params.json");
    nc_loihi_result *b = run_net(s, &o, x, 6, 1);
    nc_loihi_cost ka, kb;
    NC_ASSERT_OK(nc_loihi_result_cost(a, &ka));
    NC_ASSERT_OK(nc_loihi_result_cost(b, &kb));
    assert_true(ka.energy_j == kb.energy_j && ka.latency_s == kb.latency_s && ka.ann_gpu_j == kb.ann_gpu_j);
    nc_loihi_result_free(b);

    char path[] = "/tmp/nc_test_sim_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"common\": {\"e_synop\": {\"value\": 47.2e-12, \"source\": \"doubled\", \"grade\": \"test\"}},\n"
          " \"loihi1\": {\"compartments_per_core\": 2048}}\n",
          f);
    fclose(f);
    o.params_path = path;
    b = run_net(s, &o, x, 6, 1);
    NC_ASSERT_OK(nc_loihi_result_cost(b, &kb));
    assert_true(fabs(kb.synop_j - 2 * ka.synop_j) < 1e-20);
    assert_non_null(strstr(nc_loihi_result_json(b), "doubled"));
    nc_loihi_result_free(b);

    f = fopen(path, "w");
    fputs("{\"loihi1\": {\"compartmens_per_core\": 2048}}", f);
    fclose(f);
    nc_loihi_net *net = NULL;
    assert_int_equal(nc_loihi_compile(s, &o, &net), NC_ERR_PARSE);
    assert_non_null(strstr(nc_last_error(), "compartmens_per_core"));
    f = fopen(path, "w");
    fputs("{\"loihi1\": {\"e_synop\": }", f);
    fclose(f);
    assert_int_equal(nc_loihi_compile(s, &o, &net), NC_ERR_PARSE);
    unlink(path);
    o.params_path = "/nonexistent/params.json";
    assert_int_equal(nc_loihi_compile(s, &o, &net), NC_ERR_IO);
    nc_loihi_result_free(a);
    nc_tensor_free(x);
    nc_snn_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lava_bias_spikes),
        cmocka_unit_test(test_lava_current_decay),
        cmocka_unit_test(test_lava_voltage_decay),
        cmocka_unit_test(test_lava_bias_exponent),
        cmocka_unit_test(test_helpers_never_shift_negatives),
        cmocka_unit_test(test_overflow),
        cmocka_unit_test(test_threshold_strict_and_resets),
        cmocka_unit_test(test_two_compartment_matches_subtract),
        cmocka_unit_test(test_exact_against_float),
        cmocka_unit_test(test_signed_spikes_on_loihi2),
        cmocka_unit_test(test_bursts_on_loihi2),
        cmocka_unit_test(test_latency_one_step_a_hop),
        cmocka_unit_test(test_deterministic_across_threads),
        cmocka_unit_test(test_counters_and_energy),
        cmocka_unit_test(test_mapping),
        cmocka_unit_test(test_graded_input),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_quantisation_report),
        cmocka_unit_test(test_readout_calibration),
        cmocka_unit_test(test_parameter_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
