/* Nonlinear layers (NC_SNN_NONLINEAR, expectation compensation): for every
 * function, the outputs summed over steps 1..t equal t·f(mean input up to
 * t) at every t for inputs that change from step to step; products (Mul
 * with broadcasting, MatMul) of two inputs likewise; LayerNorm and Softmax
 * along an axis; a two-sided SignedIF counts below zero; the builder's and
 * the validation's errors name the layer. Expected values are computed
 * here in double, independently of kernels/nonlinear.h. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/nonlinear.h" /* nc_nl_expf, nc_nl_erff: their accuracy */

enum { T = 24 };

/* Deterministic inputs in [−3, 3] that change every step. */
static float input_at(int t, int64_t k) { return (float)(((t * 7 + k * 13 + (t * k) % 5) % 61) - 30) / 10.0f; }

static double f_ref(nc_nonlinear_fn fn, double x)
{
    switch (fn) {
    case NC_NL_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case NC_NL_SILU: return x / (1.0 + exp(-x));
    case NC_NL_TANH: return tanh(x);
    case NC_NL_HARDSIGMOID: return fmin(fmax(0.2 * x + 0.5, 0.0), 1.0);
    case NC_NL_HARDSWISH: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case NC_NL_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case NC_NL_GELU_TANH: return 0.5 * x * (1.0 + tanh(sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    default: return NAN;
    }
}

/* The per-step outputs of s's output layer for the series x (T, 1, ...). */
static float *run_steps(const nc_snn *s, const float *x, const char *layer, int64_t out_size)
{
    nc_snn_layer_info in;
    NC_ASSERT_OK(nc_snn_layer_at(s, 0, &in));
    int64_t xs[2 + NC_MAX_DIMS] = {T, 1};
    memcpy(xs + 2, in.shape, (size_t)in.ndim * sizeof *xs);
    nc_tensor *xt = NULL, *tr = NULL, *y = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2 + in.ndim, xs, x, &xt));
    const char *rec[] = {layer};
    nc_session_options o = {.backend = "cpu", .record = rec, .n_record = 1};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, xt, &y));
    NC_ASSERT_OK(nc_session_trace(ss, layer, NC_TRACE_MEMBRANE, &tr)); /* a non-neuron layer's output */
    assert_int_equal(nc_tensor_numel(tr), T * out_size);
    float *out = malloc((size_t)(T * out_size) * sizeof *out);
    memcpy(out, nc_tensor_data_const(tr), (size_t)(T * out_size) * sizeof *out);
    nc_tensor_free(tr);
    nc_tensor_free(y);
    nc_tensor_free(xt);
    nc_session_free(ss);
    return out;
}

/* Sum of the outputs to t against t·expect(t) (tolerance relative to t). */
static void check_totals(const float *out, int64_t size, const double *expect_per_t, const char *what)
{
    for (int64_t k = 0; k < size; k++) {
        double sum = 0;
        for (int t = 1; t <= T; t++) {
            sum += out[(t - 1) * size + k];
            double want = t * expect_per_t[(t - 1) * size + k];
            if (fabs(sum - want) > 2e-5 * t * (1.0 + fabs(want / t)))
                fail_msg("%s: element %lld at t = %d: outputs sum to %.7g, t·f(mean) = %.7g", what, (long long)k, t,
                         sum, want);
        }
    }
}

/* Input (8) → Nonlinear f, for each element-wise f. */
static void test_elementwise_totals_follow_the_mean(void **state)
{
    (void)state;
    enum { N_IN = 8 };
    float x[T * N_IN];
    for (int t = 0; t < T; t++)
        for (int k = 0; k < N_IN; k++)
            x[t * N_IN + k] = input_at(t, k);
    for (int fn = NC_NL_SIGMOID; fn <= NC_NL_GELU_TANH; fn++) {
        int64_t shape[1] = {N_IN};
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_snn_create(1, shape, &s));
        nc_nonlinear_params p = {.fn = (nc_nonlinear_fn)fn, .alpha = 0.2f, .beta = 0.5f};
        int from = 0, id;
        NC_ASSERT_OK(nc_snn_add_nonlinear(s, 1, &from, &p, "f", &id));
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(s, id, &L));
        assert_int_equal(L.kind, NC_SNN_NONLINEAR);
        assert_int_equal(L.nonlinear.fn, fn);
        assert_string_equal(nc_snn_kind_name(L.kind), "Nonlinear");
        float *out = run_steps(s, x, "f", N_IN);
        double want[T * N_IN], sum[N_IN] = {0};
        for (int t = 0; t < T; t++)
            for (int k = 0; k < N_IN; k++) {
                sum[k] += x[t * N_IN + k];
                want[t * N_IN + k] = f_ref((nc_nonlinear_fn)fn, sum[k] / (t + 1));
            }
        check_totals(out, N_IN, want, nc_nonlinear_fn_name((nc_nonlinear_fn)fn));
        /* the output is graded: at t = 1 it is f(x) itself */
        assert_true(fabs(out[3] - f_ref((nc_nonlinear_fn)fn, x[3])) < 1e-5);
        free(out);
        nc_snn_free(s);
    }
}

/* Input (2, 3, 4) ⊙ its 3×4 mean (2, 1, 1): a squeeze-excitation gate. */
static void test_mul_broadcasts_a_gate(void **state)
{
    (void)state;
    enum { C = 2, H = 3, W = 4, SZ = C * H * W };
    int64_t shape[3] = {C, H, W};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    int64_t k[2] = {H, W}, st[2] = {1, 1}, pad[2] = {0, 0};
    int pool, id;
    NC_ASSERT_OK(nc_snn_add_pool2d(s, 0, k, st, pad, 1.0f / (H * W), "gate", &pool));
    nc_nonlinear_params p = {.fn = NC_NL_MUL};
    int from[2] = {0, pool};
    NC_ASSERT_OK(nc_snn_add_nonlinear(s, 2, from, &p, "se", &id));
    float x[T * SZ];
    for (int t = 0; t < T; t++)
        for (int e = 0; e < SZ; e++)
            x[t * SZ + e] = input_at(t, e);
    float *out = run_steps(s, x, "se", SZ);
    double want[T * SZ], sum[SZ] = {0};
    for (int t = 0; t < T; t++) {
        for (int e = 0; e < SZ; e++)
            sum[e] += x[t * SZ + e];
        for (int e = 0; e < SZ; e++) {
            double g = 0;
            for (int j = 0; j < H * W; j++)
                g += sum[(e / (H * W)) * H * W + j];
            want[t * SZ + e] = (sum[e] / (t + 1)) * (g / (H * W) / (t + 1));
        }
    }
    check_totals(out, SZ, want, "Mul");
    free(out);

    int bad_from[2] = {pool, 0}; /* (2, 1, 1) ⊙ (2, 3, 4): the first input sets the shape */
    assert_int_equal(nc_snn_add_nonlinear(s, 2, bad_from, &p, "wrong_way", &id), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "wrong_way"));
    assert_non_null(strstr(nc_last_error(), "broadcast"));
    nc_snn_free(s);
}

/* Input (2, 4, 4): x·x per leading index (an attention score's product of
 * two activations), with either factor read transposed. */
static void test_matmul_of_two_activations(void **state)
{
    (void)state;
    enum { B = 2, M = 4, SZ = B * M * M };
    float x[T * SZ];
    for (int t = 0; t < T; t++)
        for (int e = 0; e < SZ; e++)
            x[t * SZ + e] = input_at(t, e) / 2;
    for (int tr = 0; tr < 3; tr++) {
        int tx = tr == 1, ty = tr == 2;
        int64_t shape[3] = {B, M, M};
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_snn_create(3, shape, &s));
        nc_nonlinear_params p = {.fn = NC_NL_MATMUL, .trans_x = tx, .trans_y = ty};
        int from[2] = {0, 0}, id;
        NC_ASSERT_OK(nc_snn_add_nonlinear(s, 2, from, &p, "qk", &id));
        float *out = run_steps(s, x, "qk", SZ);
        double want[T * SZ], sum[SZ] = {0};
        for (int t = 0; t < T; t++) {
            for (int e = 0; e < SZ; e++)
                sum[e] += x[t * SZ + e];
            for (int b = 0; b < B; b++)
                for (int i = 0; i < M; i++)
                    for (int j = 0; j < M; j++) {
                        double acc = 0;
                        for (int q = 0; q < M; q++) {
                            double a = sum[b * M * M + (tx ? q * M + i : i * M + q)] / (t + 1);
                            double c = sum[b * M * M + (ty ? j * M + q : q * M + j)] / (t + 1);
                            acc += a * c;
                        }
                        want[t * SZ + (b * M + i) * M + j] = acc;
                    }
        }
        check_totals(out, SZ, want, tr == 0 ? "MatMul" : tr == 1 ? "MatMul xT" : "MatMul yT");
        free(out);
        nc_snn_free(s);
    }
}

/* LayerNorm over axis 0 (channels, at each position) and Softmax over the last axis of (4, 2, 3). */
static void test_row_functions_along_an_axis(void **state)
{
    (void)state;
    enum { C = 4, H = 2, W = 3, SZ = C * H * W };
    for (int which = 0; which < 2; which++) {
        int64_t shape[3] = {C, H, W};
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_snn_create(3, shape, &s));
        nc_nonlinear_params p = {.fn = which ? NC_NL_SOFTMAX : NC_NL_LAYERNORM, .eps = 1e-5f, .axis = which ? -1 : 0};
        int from = 0, id;
        NC_ASSERT_OK(nc_snn_add_nonlinear(s, 1, &from, &p, "row", &id));
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(s, id, &L));
        assert_int_equal(L.nonlinear.axis, which ? 2 : 0); /* made non-negative */
        float x[T * SZ];
        for (int t = 0; t < T; t++)
            for (int e = 0; e < SZ; e++)
                x[t * SZ + e] = input_at(t, e);
        float *out = run_steps(s, x, "row", SZ);
        double want[T * SZ], sum[SZ] = {0};
        for (int t = 0; t < T; t++) {
            for (int e = 0; e < SZ; e++)
                sum[e] += x[t * SZ + e];
            int len = which ? W : C, stride = which ? 1 : H * W;
            for (int e = 0; e < SZ; e++) {
                int first = which ? e - e % W : e % (H * W); /* the row's first element */
                double m[8], mu = 0, var = 0, mx = -INFINITY, z = 0;
                for (int i = 0; i < len; i++) {
                    m[i] = sum[first + i * stride] / (t + 1);
                    mu += m[i] / len;
                    mx = fmax(mx, m[i]);
                }
                for (int i = 0; i < len; i++) {
                    var += (m[i] - mu) * (m[i] - mu) / len;
                    z += exp(m[i] - mx);
                }
                double me = sum[e] / (t + 1);
                want[t * SZ + e] = which ? exp(me - mx) / z : (me - mu) / sqrt(var + 1e-5);
            }
        }
        check_totals(out, SZ, want, which ? "Softmax" : "LayerNorm");
        free(out);
        nc_snn_free(s);
    }
}

/* A two-sided SignedIF (θ = 1, v(0) = 1/2): net count floor(1/2 + Σ I) at
 * every step, below zero as well; a plain one stops at zero. */
static void test_two_sided_signed_if_counts_below_zero(void **state)
{
    (void)state;
    enum { N_IN = 4 };
    float I[T * N_IN];
    for (int t = 0; t < T; t++)
        for (int k = 0; k < N_IN; k++) /* multiples of 1/8 (exact) in [−1, 6/8], drifting negative */
            I[t * N_IN + k] = (float)(((t * (3 + k) + k) % 15) - 8) / 8.0f;
    for (int two = 0; two < 2; two++) {
        int64_t shape[1] = {N_IN}, one = 1;
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_snn_create(1, shape, &s));
        float th = 1.0f;
        nc_tensor *tt = NULL;
        NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &one, &th, &tt));
        nc_if_params p = {.threshold = tt, .signed_spikes = two ? NC_SIGNED_TWO_SIDED : 1};
        int id;
        NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "sif", &id));
        nc_tensor_free(tt);
        nc_snn_layer_info L;
        NC_ASSERT_OK(nc_snn_layer_at(s, id, &L));
        assert_int_equal(L.two_sided, two);
        int64_t xs[3] = {T, 1, N_IN};
        nc_tensor *x = NULL, *y = NULL, *spk = NULL;
        NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 3, xs, I, &x));
        const char *rec[] = {"sif"};
        nc_session_options o = {.backend = "cpu", .record = rec, .n_record = 1};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &y));
        NC_ASSERT_OK(nc_session_trace(ss, "sif", NC_TRACE_SPIKES, &spk));
        const float *sp = nc_tensor_data_const(spk);
        int below = 0;
        for (int k = 0; k < N_IN; k++) {
            double u = 0.5;
            int count = 0;
            for (int t = 0; t < T; t++) {
                count += (int)sp[t * N_IN + k];
                u += I[t * N_IN + k];
                int want = (int)floor(u);
                if (!two && want < 0)
                    want = 0;
                below += count < 0;
                if (count != want)
                    fail_msg("%s: neuron %d, step %d: net count %d, expected %d", two ? "two-sided" : "signed", k,
                             t + 1, count, want);
            }
        }
        assert_true(two ? below > 4 : below == 0);
        nc_tensor_free(spk);
        nc_tensor_free(y);
        nc_tensor_free(x);
        nc_session_free(ss);
        nc_snn_free(s);
    }
}

static void test_builder_errors_name_the_layer(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 4};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    int id, one = 0, two[2] = {0, 0};
    nc_nonlinear_params mul = {.fn = NC_NL_MUL};
    assert_int_equal(nc_snn_add_nonlinear(s, 1, &one, &mul, "m1", &id), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "Mul reads 2 inputs"));
    nc_nonlinear_params ln = {.fn = NC_NL_LAYERNORM, .eps = 0.0f};
    assert_int_equal(nc_snn_add_nonlinear(s, 1, &one, &ln, "ln0", &id), NC_ERR_MODEL);
    assert_non_null(strstr(nc_last_error(), "'ln0'"));
    nc_nonlinear_params sm = {.fn = NC_NL_SOFTMAX, .axis = 3};
    assert_int_equal(nc_snn_add_nonlinear(s, 1, &one, &sm, "sm3", &id), NC_ERR_MODEL);
    assert_non_null(strstr(nc_last_error(), "axis"));
    nc_nonlinear_params mm = {.fn = NC_NL_MATMUL}; /* (2, 3, 4)·(2, 3, 4): k = 4 ≠ 3 */
    assert_int_equal(nc_snn_add_nonlinear(s, 2, two, &mm, "mm", &id), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "'mm'"));
    nc_nonlinear_params unknown = {.fn = NC_NL_COUNT};
    assert_int_equal(nc_snn_add_nonlinear(s, 1, &one, &unknown, "u", &id), NC_ERR_INVALID_ARG);
    assert_string_equal(nc_nonlinear_fn_name(NC_NL_COUNT), "unknown");
    assert_string_equal(nc_nonlinear_fn_name(NC_NL_GELU), "GELU");
    assert_int_equal(nc_snn_num_layers(s), 1); /* nothing half-added */
    nc_snn_free(s);
}

/* The error of f, in units in the last place of the float nearest to the
 * exact d (subnormal ones: 2^−149). */
static double ulp_error(float f, double d)
{
    int e;
    frexp(d, &e);
    double ulp = fmax(ldexp(1.0, e - 24), ldexp(1.0, -149));
    return fabs((double)f - d) / ulp;
}

/* kernels/nonlinear.h's e^x and erf, which every backend computes instead
 * of the C library's: against exp and erf in double on every 251st float
 * (17 million, all exponents and mantissas), e^x within 1.1 ulp over the
 * finite results, erf within 3 ulp (the largest seen, also on every 17th
 * float: 1.03 and 2.67, the latter near x = 0.985, the end of erf's first
 * polynomial; glibc's expf 0.50, erff 0.92);
 * the limits and the special values as the C library's. */
static void test_expf_erff_accuracy(void **state)
{
    (void)state;
    double worst_exp = 0.0, worst_erf = 0.0;
    for (uint64_t u = 0; u < UINT64_C(1) << 32; u += 251) {
        float x;
        uint32_t b = (uint32_t)u;
        memcpy(&x, &b, sizeof x);
        if (isnan(x))
            continue;
        double ex = exp((double)x);
        if (ex < 3.4e38) /* overflow: below */
            worst_exp = fmax(worst_exp, ulp_error(nc_nl_expf(x), ex));
        worst_erf = fmax(worst_erf, ulp_error(nc_nl_erff(x), erf((double)x)));
    }
    printf("nc_nl_expf: max %.3f ulp; nc_nl_erff: max %.3f ulp\n", worst_exp, worst_erf);
    assert_true(worst_exp <= 1.1);
    assert_true(worst_erf <= 3.0);
    assert_true(nc_nl_expf(0.0f) == 1.0f && nc_nl_expf(-INFINITY) == 0.0f && nc_nl_expf(-200.0f) == 0.0f);
    assert_true(isinf(nc_nl_expf(89.0f)) && isinf(nc_nl_expf(INFINITY)) && isnan(nc_nl_expf(NAN)));
    assert_true(nc_nl_expf(88.72f) < INFINITY && nc_nl_expf(-103.0f) > 0.0f); /* the largest, a subnormal */
    assert_true(nc_nl_erff(INFINITY) == 1.0f && nc_nl_erff(-INFINITY) == -1.0f && isnan(nc_nl_erff(NAN)));
    assert_true(nc_nl_erff(-0.0f) == 0.0f && signbit(nc_nl_erff(-0.0f)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_totals_follow_the_mean),
        cmocka_unit_test(test_mul_broadcasts_a_gate),
        cmocka_unit_test(test_matmul_of_two_activations),
        cmocka_unit_test(test_row_functions_along_an_axis),
        cmocka_unit_test(test_two_sided_signed_if_counts_below_zero),
        cmocka_unit_test(test_builder_errors_name_the_layer),
        cmocka_unit_test(test_expf_erff_accuracy),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
