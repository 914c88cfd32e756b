/* Signed IF neurons (NC_SNN_SIGNED_IF, DESIGN §3): the net spike count
 * follows max(0, floor((v(0) + Σ I)/θ)) at every step, negative spikes take
 * spikes back, spiking max pooling follows signed counts down as well as
 * up, the cpu and cpu-fast backends agree bit for bit, conversion with
 * signed_spikes converges faster than plain IF on the shipped ResNet, the
 * NIR round trip is exact, and what cannot run it says so. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static nc_tensor *vec(int64_t n, const float *v)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &n, v, &t));
    return t;
}

/* Runs s on x (a series when x has rank 1 + the input's + 1) recording
 * layer `rec`'s spikes; returns the output, the trace in *spk. */
static nc_tensor *run_rec(const nc_snn *s, const char *backend, const nc_tensor *x, int T, const char *rec,
                          nc_tensor **spk)
{
    const char *r[] = {rec};
    nc_session_options o = {.backend = backend, .timesteps = T, .record = rec ? r : NULL, .n_record = rec ? 1 : 0};
    nc_session *ss = NULL;
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    if (spk)
        NC_ASSERT_OK(nc_session_trace(ss, rec, NC_TRACE_SPIKES, spk));
    nc_session_free(ss);
    return y;
}

static void assert_same(const nc_tensor *a, const nc_tensor *b)
{
    assert_int_equal(nc_tensor_numel(a), nc_tensor_numel(b));
    assert_memory_equal(nc_tensor_data_const(a), nc_tensor_data_const(b),
                        (size_t)nc_tensor_numel(a) * sizeof(float));
}

/* Runs layer `name` of s on the series x (T steps of N currents I, θ = 1)
 * on cpu and cpu-fast, checking after every step that each neuron's spikes
 * (whole numbers in [−B, B]) add up to max(0, floor(1/2 + Σ I)) and that the
 * two backends agree; counts spikes of more than one (*bursts) and negative
 * ones (*negative) over both. Returns the cpu output. */
static nc_tensor *expect_counts(const nc_snn *s, const char *name, const nc_tensor *x, const float *I, int T, int N,
                                int B, int *bursts, int *negative)
{
    static const char *backends[] = {"cpu", "cpu-fast"};
    nc_tensor *first = NULL;
    *bursts = *negative = 0;
    for (int b = 0; b < 2; b++) {
        nc_tensor *spk = NULL;
        nc_tensor *y = run_rec(s, backends[b], x, T, name, &spk);
        const float *sp = nc_tensor_data_const(spk);
        for (int n = 0; n < N; n++) {
            double u = 0.5;
            int count = 0;
            for (int t = 0; t < T; t++) {
                float sv = sp[t * N + n];
                assert_true(sv == floorf(sv) && sv >= (float)-B && sv <= (float)B);
                *bursts += fabsf(sv) > 1.0f;
                *negative += sv < 0.0f;
                count += (int)sv;
                u += I[t * N + n];
                int want = u < 0 ? 0 : (int)floor(u);
                if (count != want)
                    fail_msg("%s: neuron %d, step %d: net count %d, expected %d", backends[b], n, t + 1, count,
                             want);
            }
        }
        if (b == 0)
            first = y;
        else {
            assert_same(first, y);
            nc_tensor_free(y);
        }
        nc_tensor_free(spk);
    }
    return first;
}

/* 4 neurons fed currents (multiples of 1/8, |I| < θ, so exact) that rise
 * and fall: after every step each neuron's net count is
 * max(0, floor((θ/2 + Σ I)/θ)), and negative spikes happen. */
static void test_count_follows_cumulative_input(void **state)
{
    (void)state;
    enum { T = 48, N = 4 };
    int64_t in[1] = {N};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    float th = 1.0f;
    nc_tensor *tt = vec(1, &th);
    nc_if_params p = {.threshold = tt, .signed_spikes = 1};
    int id;
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "sif", &id));
    nc_tensor_free(tt);
    nc_snn_layer_info L;
    NC_ASSERT_OK(nc_snn_layer_at(s, id, &L));
    assert_int_equal(L.kind, NC_SNN_SIGNED_IF);
    assert_string_equal(nc_snn_kind_name(L.kind), "SignedIF");

    float I[T * N];
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) /* positive first, then negative on average (n = 0, 1) */
            I[t * N + n] = (float)(((t * (3 + n) + n) % 15) - 7 - (t > T / 2 ? 2 * (n < 2) : -1)) / 8.0f;
    int64_t xs[3] = {T, 1, N};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 3, xs, I, &x));
    int bursts, negative;
    nc_tensor *first = expect_counts(s, "sif", x, I, T, N, 1, &bursts, &negative);
    assert_true(negative > 3);
    nc_tensor_free(first);
    nc_tensor_free(x);
    nc_snn_free(s);

    /* the builder's rules: subtractive reset, positive spike values */
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    tt = vec(1, &th);
    float neg = -1.0f;
    nc_tensor *sv = vec(1, &neg);
    nc_if_params bad = {.threshold = tt, .reset = NC_RESET_ZERO, .signed_spikes = 1};
    assert_int_equal(nc_snn_add_if(s, 0, &bad, "z", &id), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "subtractive reset"));
    nc_if_params bad2 = {.threshold = tt, .spike_value = sv, .signed_spikes = 1};
    assert_int_equal(nc_snn_add_if(s, 0, &bad2, "n", &id), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "positive spike"));
    nc_tensor_free(tt);
    nc_tensor_free(sv);
    nc_snn_free(s);
}

/* Two SignedIF layers (2 × 2 × 2 each, θ per channel) concatenated (as
 * SqueezeNet's Fire modules are) under a 2 × 2 spiking max pool: every step
 * the pool's count is the largest net count of its window, going down when
 * the max does, each spike carrying ±θ of its channel; the same on cpu and
 * cpu-fast. */
static void test_spike_maxpool_follows_signed_counts(void **state)
{
    (void)state;
    enum { T = 40, C = 2, HW = 4, CC = 2 * C };
    int64_t in[3] = {C, 2, 2}, k[2] = {2, 2};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    float th[CC] = {0.5f, 1.0f, 0.75f, 1.25f};
    nc_tensor *ta = vec(C, th), *tb = vec(C, th + C);
    nc_if_params pa = {.threshold = ta, .signed_spikes = 1}, pb = {.threshold = tb, .signed_spikes = 1};
    int sif[2], cat, mp;
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &pa, "sifa", &sif[0]));
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &pb, "sifb", &sif[1]));
    NC_ASSERT_OK(nc_snn_add_concat(s, 2, sif, "cat", &cat));
    NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, cat, k, k, NULL, "smp", &mp));
    nc_tensor_free(ta);
    nc_tensor_free(tb);
    float I[T * C * HW];
    for (int t = 0; t < T; t++)
        for (int i = 0; i < C * HW; i++) /* up for 20 steps, then down */
            I[t * C * HW + i] = (t < 20 ? 1.0f : -1.0f) * (float)(1 + (i * 5 + t) % 4) / 8.0f;
    int64_t xs[5] = {T, 1, C, 2, 2};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 5, xs, I, &x));
    nc_tensor *y[2], *spk[2][2], *pool = NULL, *pool_spk = NULL;
    static const char *backends[] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++) {
        const char *rec[] = {"sifa", "sifb", "smp"};
        nc_session_options o = {.backend = backends[b], .timesteps = T, .record = rec, .n_record = 3};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &y[b]));
        NC_ASSERT_OK(nc_session_trace(ss, "sifa", NC_TRACE_SPIKES, &spk[b][0]));
        NC_ASSERT_OK(nc_session_trace(ss, "sifb", NC_TRACE_SPIKES, &spk[b][1]));
        if (b == 0) {
            NC_ASSERT_OK(nc_session_trace(ss, "smp", NC_TRACE_MEMBRANE, &pool));
            NC_ASSERT_OK(nc_session_trace(ss, "smp", NC_TRACE_SPIKES, &pool_spk));
        }
        nc_session_free(ss);
    }
    assert_same(y[0], y[1]);
    assert_same(spk[0][0], spk[1][0]);
    assert_same(spk[0][1], spk[1][1]);
    const float *v = nc_tensor_data_const(pool), *ps = nc_tensor_data_const(pool_spk);
    int cin[CC * HW] = {0}, cout[CC] = {0}, down = 0;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < CC; c++) {
            const float *sp = nc_tensor_data_const(spk[0][c / C]);
            int m = 0;
            for (int q = 0; q < HW; q++) {
                cin[c * HW + q] += (int)sp[t * C * HW + (c % C) * HW + q];
                m = cin[c * HW + q] > m ? cin[c * HW + q] : m;
            }
            float val = v[t * CC + c];
            assert_true(val == 0.0f || val == th[c] || val == -th[c]);
            assert_true(ps[t * CC + c] == (float)((val > 0.0f) - (val < 0.0f)));
            cout[c] += (val > 0.0f) - (val < 0.0f);
            down += val < 0.0f;
            if (cout[c] != m)
                fail_msg("channel %d, step %d: pool count %d, max of the inputs' %d", c, t + 1, cout[c], m);
        }
    assert_true(down > 8);
    for (int b = 0; b < 2; b++) {
        nc_tensor_free(y[b]);
        nc_tensor_free(spk[b][0]);
        nc_tensor_free(spk[b][1]);
    }
    nc_tensor_free(pool);
    nc_tensor_free(pool_spk);
    nc_tensor_free(x);
    nc_snn_free(s);
}

static int count_kind(const nc_snn *s, nc_snn_layer_kind k)
{
    int n = 0;
    for (int i = 0; i < nc_snn_num_layers(s); i++) {
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(s, i, &L));
        n += L.kind == k;
    }
    return n;
}

/* Bursts (max_spikes 3): currents of up to 3θ (multiples of 1/8: exact)
 * that rise and fall; every step's s is in [−3, 3], some |s| > 1, the net
 * count is max(0, floor((θ/2 + Σ I)/θ)) after every step (one step carries
 * up to 3θ, so the count never lags), cpu = cpu-fast, the NIR round trip
 * keeps the bursts, and what cannot take them says so. */
static void test_bursts_follow_cumulative_input(void **state)
{
    (void)state;
    enum { T = 48, N = 4, B = 3 };
    int64_t in[1] = {N};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, in, &s));
    float th = 1.0f;
    nc_tensor *tt = vec(1, &th);
    nc_if_params p = {.threshold = tt, .signed_spikes = 1, .max_spikes = B}, bad = p;
    int id;
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "burst", &id));
    bad.signed_spikes = 0; /* plain IF sends one spike a step */
    assert_int_equal(nc_snn_add_if(s, 0, &bad, "plain", NULL), NC_ERR_INVALID_ARG);
    bad.signed_spikes = 1, bad.max_spikes = 5000;
    assert_int_equal(nc_snn_add_if(s, 0, &bad, "huge", NULL), NC_ERR_INVALID_ARG);
    int64_t k1[2] = {1, 1}, zero[2] = {0, 0};
    int64_t shape3[3] = {N, 1, 1};
    int rs = -1;
    nc_tensor_free(tt);
    float I[T * N];
    for (int t = 0; t < T; t++)
        for (int n = 0; n < N; n++) /* up to ±3θ, positive first, then negative on average */
            I[t * N + n] = (float)(((t * (5 + n) + 3 * n) % 41) - 20 - (t > T / 2 ? 4 : -3)) / 8.0f;
    int64_t xs[3] = {T, 1, N};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 3, xs, I, &x));
    int bursts, negative;
    nc_tensor *first = expect_counts(s, "burst", x, I, T, N, B, &bursts, &negative);
    assert_true(bursts > 3 && negative > 3);
    /* NIR keeps max_spikes (a neuroc.SignedIF attribute) */
    const char *path = nc_test_pathf("%s/burst.nir", NC_BINARY_DIR);
    NC_ASSERT_OK(nc_snn_save_nir(s, path));
    nc_snn *back = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &back));
    nc_tensor *again = run_rec(back, "cpu-fast", x, T, NULL, NULL);
    assert_same(first, again);
    /* a spiking max pool reads bursts (counted in spikes, test_snn), not a two-sided SignedIF's counts,
       which go below zero: the error names both layers */
    nc_snn *p2 = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape3, &p2));
    nc_tensor *t3 = vec(1, &th);
    nc_if_params p3 = {.threshold = t3, .signed_spikes = 1, .max_spikes = 2};
    NC_ASSERT_OK(nc_snn_add_if(p2, 0, &p3, "b", &id));
    NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(p2, id, k1, k1, zero, "smp", &rs));
    p3.signed_spikes = NC_SIGNED_TWO_SIDED;
    NC_ASSERT_OK(nc_snn_add_if(p2, 0, &p3, "two", &id));
    assert_int_equal(nc_snn_add_spike_maxpool2d(p2, id, k1, k1, zero, "smp2", &rs), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "two-sided"));
    assert_non_null(strstr(nc_last_error(), "'smp2'"));
    assert_non_null(strstr(nc_last_error(), "'two'"));
    nc_tensor_free(t3);
    nc_snn_free(p2);
    nc_tensor_free(again);
    nc_snn_free(back);
    nc_tensor_free(first);
    nc_tensor_free(x);
    nc_snn_free(s);
}

/* The shipped ResNet (residual Adds, 5 IF layers) converted with signed
 * spikes: every IF layer is a SignedIF, and at T = 32 its readout is much
 * closer to the ANN than plain IF's (which keeps the early spikes of
 * neurons whose input turns negative); cpu = cpu-fast; the NIR round trip
 * is exact; strict NIR, the Loihi simulator and BPTT refuse it by name. */
static void test_convert_resnet(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("examples/models/resnet.onnx"), NULL, &m));
    nc_tensor *x256 = nc_test_load_f32("examples/data/fmnist_test_x.npy");
    nc_tensor *l256 = nc_test_load_f32("examples/data/resnet_logits.npy");
    int64_t s64[4] = {64, 1, 28, 28}, l64[2] = {64, 10};
    nc_tensor *x = NULL, *logits = NULL; /* the first 64 images: calibration and evaluation */
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, s64, nc_tensor_data_const(x256), &x));
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, l64, nc_tensor_data_const(l256), &logits));
    nc_tensor_free(x256);
    nc_tensor_free(l256);
    double gap[2];
    nc_snn *sig = NULL;
    for (int k = 0; k < 2; k++) {
        nc_convert_options o;
        nc_convert_options_init(&o);
        o.spikes = k ? NC_SPIKES_SIGNED : NC_SPIKES_PLAIN;
        o.method = NC_THRESHOLD_PERCENTILE; /* the same θ for both: the neuron is what differs */
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, &o, &s, NULL));
        assert_int_equal(count_kind(s, k ? NC_SNN_SIGNED_IF : NC_SNN_IF), 5);
        assert_int_equal(count_kind(s, k ? NC_SNN_IF : NC_SNN_SIGNED_IF), 0);
        nc_tensor *y = run_rec(s, "cpu-fast", x, 32, NULL, NULL);
        gap[k] = nc_test_mean_gap(y, logits, 32);
        nc_tensor_free(y);
        if (k)
            sig = s;
        else
            nc_snn_free(s);
    }
    print_message("resnet at T = 32: mean |readout/T - logit| %.4f plain IF, %.4f signed\n", gap[0], gap[1]);
    assert_true(gap[1] < 0.5 * gap[0]);

    int64_t s16[4] = {16, 1, 28, 28};
    nc_tensor *x16 = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, s16, nc_tensor_data_const(x), &x16));
    nc_tensor *a = run_rec(sig, "cpu", x16, 16, NULL, NULL), *b = run_rec(sig, "cpu-fast", x16, 16, NULL, NULL);
    assert_same(a, b);

    const char *path = nc_test_pathf("%s/signed_resnet.nir", NC_BINARY_DIR);
    NC_ASSERT_OK(nc_snn_save_nir(sig, path));
    nc_snn *back = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &back));
    assert_int_equal(count_kind(back, NC_SNN_SIGNED_IF), 5);
    nc_tensor *c = run_rec(back, "cpu-fast", x16, 16, NULL, NULL);
    assert_same(a, c);
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = 1;
    assert_int_not_equal(nc_snn_save_nir_with(sig, nc_test_pathf("%s/signed_strict.nir", NC_BINARY_DIR), &so),
                         NC_OK);
    assert_non_null(strstr(nc_last_error(), "signed IF neurons"));

    nc_loihi_net *net = NULL; /* Loihi 2 (the default target) maps it; Loihi 1 has no signed spike */
    NC_ASSERT_OK(nc_loihi_compile(sig, NULL, &net));
    nc_loihi_net_free(net);
    net = NULL;
    nc_loihi_options l1 = {.target = NC_LOIHI_1};
    assert_int_not_equal(nc_loihi_compile(sig, &l1, &net), NC_OK);
    assert_non_null(strstr(nc_last_error(), "signed spikes"));
    nc_finetune_options fo;
    nc_finetune_options_init(&fo);
    fo.epochs = 1;
    nc_tensor *labels = NULL;
    int64_t n16 = 16;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_I64, 1, &n16, &labels)); /* zeros */
    /* BPTT trains it, and it stays signed */
    int n_signed = 0;
    nc_snn_layer_info li;
    for (int i = 0; i < nc_snn_num_layers(sig); i++)
        n_signed += nc_snn_layer_at(sig, i, &li) == NC_OK && li.kind == NC_SNN_SIGNED_IF;
    assert_true(n_signed > 0);
    NC_ASSERT_OK(nc_snn_finetune(sig, x16, labels, NULL, NULL, &fo));
    for (int i = 0; i < nc_snn_num_layers(sig); i++)
        n_signed -= nc_snn_layer_at(sig, i, &li) == NC_OK && li.kind == NC_SNN_SIGNED_IF;
    assert_int_equal(n_signed, 0);

    nc_tensor_free(labels);
    nc_tensor_free(a);
    nc_tensor_free(b);
    nc_tensor_free(c);
    nc_tensor_free(x16);
    nc_snn_free(back);
    nc_snn_free(sig);
    nc_tensor_free(x);
    nc_tensor_free(logits);
    nc_model_free(m);
}

/* The conversion's defaults (NULL options, nc_convert_options_init and a
 * zeroed struct alike): signed spikes in bursts of up to 2 with the max
 * threshold, the same network as asking for them; the reset to zero picks the plain neuron
 * (signed spikes need the subtractive reset), and asking for both fails. */
static void test_default_is_signed_max(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("examples/models/resnet.onnx"), NULL, &m));
    nc_tensor *x256 = nc_test_load_f32("examples/data/fmnist_test_x.npy");
    int64_t s32[4] = {32, 1, 28, 28};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, s32, nc_tensor_data_const(x256), &x));
    nc_tensor_free(x256);
    nc_convert_options init, zero, asked;
    nc_convert_options_init(&init);
    memset(&zero, 0, sizeof zero);
    nc_convert_options_init(&asked);
    asked.spikes = NC_SPIKES_SIGNED;
    asked.method = NC_THRESHOLD_MAX;
    asked.burst = 2;
    const nc_convert_options *opts[] = {NULL, &init, &zero};
    nc_snn *want = NULL;
    nc_convert_report *rw = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &asked, &want, &rw));
    assert_int_equal(count_kind(want, NC_SNN_SIGNED_IF), 5);
    for (int i = 0; i < nc_snn_num_layers(want); i++) {
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(want, i, &L));
        if (L.kind == NC_SNN_SIGNED_IF)
            assert_int_equal(L.max_spikes, 2);
    }
    nc_tensor *yw = run_rec(want, "cpu-fast", x, 8, NULL, NULL);
    for (int k = 0; k < 3; k++) {
        nc_snn *s = NULL;
        nc_convert_report *r = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, opts[k], &s, &r));
        assert_int_equal(count_kind(s, NC_SNN_SIGNED_IF), 5);
        assert_string_equal(nc_convert_report_json(r), nc_convert_report_json(rw));
        assert_non_null(strstr(nc_convert_report_json(r), "\"max\""));
        nc_tensor *y = run_rec(s, "cpu-fast", x, 8, NULL, NULL);
        assert_same(y, yw);
        nc_tensor_free(y);
        nc_convert_report_free(r);
        nc_snn_free(s);
    }
    nc_convert_options rz;
    nc_convert_options_init(&rz);
    rz.reset = NC_RESET_ZERO;
    nc_snn *p = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &rz, &p, NULL));
    assert_int_equal(count_kind(p, NC_SNN_SIGNED_IF), 0);
    assert_int_equal(count_kind(p, NC_SNN_IF), 5);
    nc_snn_free(p);
    rz.spikes = NC_SPIKES_SIGNED;
    assert_int_equal(nc_convert(m, x, NULL, &rz, &p, NULL), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "subtractive reset"));
    assert_null(p);
    nc_tensor_free(yw);
    nc_convert_report_free(rw);
    nc_snn_free(want);
    nc_tensor_free(x);
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_count_follows_cumulative_input),
        cmocka_unit_test(test_spike_maxpool_follows_signed_counts),
        cmocka_unit_test(test_convert_resnet),
        cmocka_unit_test(test_default_is_signed_max),
        cmocka_unit_test(test_bursts_follow_cumulative_input),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
