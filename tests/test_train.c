/* The training engine (convert/train.h): gradients of every layer kind
 * against central finite differences, the QCFS λ gradient, BPTT through
 * time, the optimiser, and short training runs.
 *
 * Gradient checks: the loss is Σ r·logits for a fixed random r, so the
 * output gradient is r and every layer's backward is exercised. The forward
 * runs in float and the checker sums the loss in double; with a step of
 * 1e-2 (linear layers: exact up to rounding) or 1e-3 (relaxed neurons), an
 * analytic gradient a and a numeric one d agree when
 * |a − d| <= 2e-3 + 1e-2·max(|a|, |d|). The neuron checks use the relaxed
 * forward (QCFS: floor → identity, h̃ = λ·clip(z/λ, 0, 1); BPTT: the spike
 * replaced by the integral of its surrogate), whose exact gradient is what
 * the straight-through / surrogate backward computes. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/train_internal.h"
#include "snn/snn_ir.h"
#include "snn/tensor.h"

static uint64_t g_rng = 42;

static float urand(float lo, float hi)
{
    return lo + (hi - lo) * (float)(nc_splitmix64(&g_rng) >> 40) * (1.0f / 16777216.0f);
}

static nc_tensor *rand_tensor(int ndim, const int64_t *shape, float lo, float hi)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, ndim, shape, &t));
    float *d = nc_tensor_data(t);
    for (int64_t i = 0; i < nc_tensor_numel(t); i++)
        d[i] = urand(lo, hi);
    return t;
}

static nc_tensor *const_tensor(int64_t n, float v)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 1, &n, &t));
    float *d = nc_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        d[i] = v;
    return t;
}

static int add_affine(nc_snn *s, int from, int64_t out, float scale)
{
    int64_t in = nc_snn_layer_size(&s->layers[from]), ws[2] = {out, in};
    nc_tensor *w = rand_tensor(2, ws, -scale, scale), *b = rand_tensor(1, &out, -scale, scale);
    int id;
    NC_ASSERT_OK(nc_snn_add_affine(s, from, w, b, NULL, &id));
    nc_tensor_free(w);
    nc_tensor_free(b);
    return id;
}

static int add_conv(nc_snn *s, int from, int64_t cout, int64_t kh, int64_t kw, const nc_conv2d_params *p,
                    float scale)
{
    int64_t cin = s->layers[from].shape[0], groups = p && p->groups ? p->groups : 1;
    int64_t ws[4] = {cout, cin / groups, kh, kw};
    nc_tensor *w = rand_tensor(4, ws, -scale, scale), *b = rand_tensor(1, &cout, -scale, scale);
    int id;
    NC_ASSERT_OK(nc_snn_add_conv2d(s, from, w, b, p, NULL, &id));
    nc_tensor_free(w);
    nc_tensor_free(b);
    return id;
}

static int add_if(nc_snn *s, int from, nc_tensor *th, nc_tensor *sv, nc_tensor *v0)
{
    nc_if_params p = {.threshold = th, .spike_value = sv, .v_init = v0};
    int id;
    NC_ASSERT_OK(nc_snn_add_if(s, from, &p, NULL, &id));
    nc_tensor_free(th);
    nc_tensor_free(sv);
    nc_tensor_free(v0);
    return id;
}

/* MaxPool2d has no public builder yet: append it directly (Pool2d geometry). */
static int add_maxpool(nc_snn *s, int from, int64_t k, int64_t stride, int64_t pad)
{
    const nc_snn_layer *X = &s->layers[from];
    int64_t C = X->shape[0], OH = (X->shape[1] + 2 * pad - k) / stride + 1, OW = (X->shape[2] + 2 * pad - k) / stride + 1;
    nc_snn_layer *L = nc_snn_append(s, NC_SNN_MAXPOOL2D, NULL, 1);
    assert_non_null(L);
    L->inputs[0] = from;
    L->ndim = 3;
    L->shape[0] = C, L->shape[1] = OH, L->shape[2] = OW;
    L->kernel[0] = L->kernel[1] = k;
    L->stride[0] = L->stride[1] = stride;
    L->padding[0] = L->padding[1] = pad;
    return s->n_layers - 1;
}

/* ---- the checker ---- */

typedef struct gcase {
    nc_tr_config c;
    int N;
    float x_lo, x_hi;
    double eps;
    const float *x;          /* optional fixed input */
} gcase;

static double loss_of(nc_tr_net *net, const float *x, const float *r, float *logits)
{
    nc_tr_forward(net, x, net->Nmax);
    nc_tr_logits(net, logits);
    double L = 0.0;
    for (int64_t k = 0; k < net->Nmax * net->classes; k++)
        L += (double)r[k] * logits[k];
    return L;
}

static int g_checked;

static void check_one(const char *what, int64_t idx, double a, double d)
{
    double tol = 2e-3 + 1e-2 * fmax(fabs(a), fabs(d));
    if (fabs(a - d) > tol)
        fail_msg("%s[%lld]: analytic %.6g, finite difference %.6g", what, (long long)idx, a, d);
    g_checked++;
}

/* Perturbs each value of v (n floats) and compares with the analytic g. */
static void check_values(nc_tr_net *net, float *x, const float *r, float *logits, float *v, const float *g,
                         int64_t n, double eps, const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        float keep = v[i];
        v[i] = keep + (float)eps;
        double up = loss_of(net, x, r, logits);
        v[i] = keep - (float)eps;
        double dn = loss_of(net, x, r, logits);
        v[i] = keep;
        /* the perturbation actually applied, in float */
        double h = (double)(keep + (float)eps) - (double)(keep - (float)eps);
        check_one(what, i, g[i], (up - dn) / h);
    }
}

static void grad_check(nc_snn *s, const gcase *gc)
{
    nc_tr_config c = gc->c;
    c.input_grad = 1;
    nc_tr_net *net = NULL;
    NC_ASSERT_OK(nc_tr_net_create(s, &c, gc->N, &net));
    int64_t in = net->l[0].size, nx = in * gc->N, nl = net->classes * gc->N;
    float *x = malloc((size_t)nx * sizeof *x), *r = malloc((size_t)nl * sizeof *r);
    float *logits = malloc((size_t)nl * sizeof *logits);
    for (int64_t i = 0; i < nx; i++)
        x[i] = gc->x ? gc->x[i] : urand(gc->x_lo, gc->x_hi);
    for (int64_t i = 0; i < nl; i++)
        r[i] = urand(-1.0f, 1.0f);
    loss_of(net, x, r, logits);
    nc_tr_backward(net, r);
    /* keep copies: the finite-difference forwards leave the gradients alone,
     * but copy anyway so the check cannot read what it writes */
    for (int i = 0; i < net->n; i++) {
        nc_snn_layer *L = &s->layers[i];
        nc_tr_layer *Y = &net->l[i];
        char what[96];
        if (Y->dW) {
            float *gw = malloc((size_t)L->weight->numel * sizeof *gw), *gb = malloc((size_t)L->bias->numel * sizeof *gb);
            memcpy(gw, Y->dW, (size_t)L->weight->numel * sizeof *gw);
            memcpy(gb, Y->db, (size_t)L->bias->numel * sizeof *gb);
            snprintf(what, sizeof what, "%s weight", L->name);
            check_values(net, x, r, logits, nc_f32(L->weight), gw, L->weight->numel, gc->eps, what);
            snprintf(what, sizeof what, "%s bias", L->name);
            check_values(net, x, r, logits, nc_f32(L->bias), gb, L->bias->numel, gc->eps, what);
            free(gw);
            free(gb);
        }
        if (Y->dth) {
            float *gt = malloc((size_t)L->threshold->numel * sizeof *gt);
            memcpy(gt, Y->dth, (size_t)L->threshold->numel * sizeof *gt);
            snprintf(what, sizeof what, "%s threshold", L->name);
            check_values(net, x, r, logits, nc_f32(L->threshold), gt, L->threshold->numel, gc->eps, what);
            free(gt);
        }
    }
    float *gx = malloc((size_t)nx * sizeof *gx);
    memcpy(gx, net->l[0].dy, (size_t)nx * sizeof *gx);
    check_values(net, x, r, logits, x, gx, nx, gc->eps, "input");
    free(gx);
    free(x);
    free(r);
    free(logits);
    nc_tr_net_free(net);
}

static const gcase linear_case = {.c = {.mode = NC_TRAIN_QCFS, .levels = 8, .relaxed = 1}, .N = 3,
                                  .x_lo = -1.0f, .x_hi = 1.0f, .eps = 1e-2};

static void test_grad_affine(void **state)
{
    (void)state;
    int64_t shape[1] = {6};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    int a = add_affine(s, 0, 5, 0.5f);
    a = add_affine(s, a, 4, 0.5f);
    int id;
    NC_ASSERT_OK(nc_snn_add_readout(s, a, NULL, &id));
    g_checked = 0;
    grad_check(s, &linear_case);
    assert_int_equal(g_checked, 5 * 6 + 5 + 4 * 5 + 4 + 3 * 6);
    nc_snn_free(s);
}

static void test_grad_conv(void **state)
{
    (void)state;
    int64_t shape[3] = {4, 7, 6};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    /* strided, padded, dilated, grouped, non-square */
    nc_conv2d_params p1 = {.stride = {2, 1}, .padding = {1, 2}, .dilation = {1, 2}, .groups = 2};
    int c1 = add_conv(s, 0, 6, 3, 2, &p1, 0.4f);
    /* stride 1 with padding: the contiguous im2col path */
    nc_conv2d_params p2 = {.padding = {1, 1}};
    int c2 = add_conv(s, c1, 3, 3, 3, &p2, 0.4f);
    /* depthwise */
    nc_conv2d_params p3 = {.groups = 3, .stride = {2, 2}};
    int c3 = add_conv(s, c2, 3, 2, 2, &p3, 0.4f);
    int f, id;
    NC_ASSERT_OK(nc_snn_add_flatten(s, c3, NULL, &f));
    NC_ASSERT_OK(nc_snn_add_readout(s, f, NULL, &id));
    gcase gc = linear_case;
    gc.N = 2;
    grad_check(s, &gc);
    nc_snn_free(s);
}

static void test_grad_pool(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 5, 5};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.padding = {1, 1}};
    int c = add_conv(s, 0, 3, 3, 3, &p, 0.5f);
    int64_t k[2] = {2, 3}, st[2] = {2, 2}, pad[2] = {1, 1};
    int pool, f, id;
    NC_ASSERT_OK(nc_snn_add_pool2d(s, c, k, st, pad, 1.0f / 6.0f, NULL, &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, NULL, &f));
    int a = add_affine(s, f, 4, 0.5f);
    NC_ASSERT_OK(nc_snn_add_readout(s, a, NULL, &id));
    grad_check(s, &linear_case);
    nc_snn_free(s);
}

static void test_grad_maxpool(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 6, 5};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.padding = {1, 1}};
    int c = add_conv(s, 0, 3, 3, 3, &p, 0.5f);
    int mp = add_maxpool(s, c, 3, 2, 1);
    int f, id;
    NC_ASSERT_OK(nc_snn_add_flatten(s, mp, NULL, &f));
    NC_ASSERT_OK(nc_snn_add_readout(s, f, NULL, &id));
    /* a step small against the gaps between window entries, so no argmax flips */
    gcase gc = linear_case;
    gc.eps = 1e-3;
    grad_check(s, &gc);
    nc_snn_free(s);
}

static void test_grad_add_concat(void **state)
{
    (void)state;
    int64_t shape[3] = {2, 3, 3};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.padding = {1, 1}};
    int a = add_conv(s, 0, 2, 3, 3, &p, 0.5f);
    int b = add_conv(s, a, 2, 3, 3, &p, 0.5f);
    int from[3] = {a, b, 0}, sum, cat, f, id;
    /* a residual sum that also reads the input, then a concat reusing a */
    NC_ASSERT_OK(nc_snn_add_add(s, 3, from, NULL, &sum));
    int from2[2] = {sum, a};
    NC_ASSERT_OK(nc_snn_add_concat(s, 2, from2, NULL, &cat));
    NC_ASSERT_OK(nc_snn_add_flatten(s, cat, NULL, &f));
    int o = add_affine(s, f, 3, 0.3f);
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    grad_check(s, &linear_case);
    nc_snn_free(s);
}

/* Inputs to a neuron layer kept away from the kinks at 0 and λ (and from
 * the kinks of the triangle surrogate), so the finite differences see one
 * smooth piece. */
static void away_from(float *x, int64_t n, const float *kinks, int nk, float margin, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++) {
        float v;
        int ok;
        do {
            v = urand(lo, hi);
            ok = 1;
            for (int k = 0; k < nk; k++)
                ok &= fabsf(v - kinks[k]) > margin;
        } while (!ok);
        x[i] = v;
    }
}

static void qcfs_if_check(nc_tensor *th, nc_tensor *sv, float kink)
{
    int64_t shape[3] = {3, 2, 2};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    int n = add_if(s, 0, th, sv, NULL), id;
    NC_ASSERT_OK(nc_snn_add_readout(s, n, NULL, &id));
    float x[4 * 12];
    float kinks[2] = {0.0f, kink};
    away_from(x, 48, kinks, 2, 0.05f, -0.5f, 2.0f);
    gcase gc = {.c = {.mode = NC_TRAIN_QCFS, .levels = 8, .relaxed = 1, .train_thresholds = 1}, .N = 4,
                .eps = 1e-3, .x = x};
    grad_check(s, &gc);
    nc_snn_free(s);
}

static void test_grad_qcfs_relaxed(void **state)
{
    (void)state;
    /* per layer; per channel (λ in 0.9..1.3, kinks kept clear of all); with a fixed spike value */
    qcfs_if_check(const_tensor(1, 1.1f), NULL, 1.1f);
    nc_tensor *pc = const_tensor(3, 1.0f);
    nc_f32(pc)[1] = 0.9f;
    nc_f32(pc)[2] = 1.3f;
    int64_t shape[3] = {3, 2, 2};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    int n = add_if(s, 0, pc, NULL, NULL), id;
    NC_ASSERT_OK(nc_snn_add_readout(s, n, NULL, &id));
    float x[48];
    float kinks[4] = {0.0f, 0.9f, 1.0f, 1.3f};
    away_from(x, 48, kinks, 4, 0.05f, -0.5f, 2.0f);
    gcase gc = {.c = {.mode = NC_TRAIN_QCFS, .levels = 8, .relaxed = 1, .train_thresholds = 1}, .N = 4,
                .eps = 1e-3, .x = x};
    grad_check(s, &gc);
    nc_snn_free(s);
    qcfs_if_check(const_tensor(1, 1.2f), const_tensor(1, 0.7f), 1.2f);
}

/* ∂h/∂z and ∂h/∂λ of the real (quantised) QCFS activation: the three cases
 * of DESIGN §3, by hand. L = 8, λ = 2. */
static void test_qcfs_cases(void **state)
{
    (void)state;
    float lam[5] = {2, 2, 2, 2, 2}, sv[5] = {2, 2, 2, 2, 2}, sh[5] = {0.5f, 0.5f, 0.5f, 0.5f, 0.5f};
    nc_tr_qcfs q = {.size = 5, .lam = lam, .sv = sv, .shift = sh, .sv_is_lam = 1, .levels = 8};
    float z[5] = {-0.5f, 0.3f, 1.1f, 3.0f, 0.0f}, y[5], dy[5] = {1, 1, 1, 1, 1}, dz[5] = {0};
    double dl[5] = {0};
    nc_tr_qcfs_fwd(&q, z, y, 1);
    /* 0.3: floor(1.2 + 0.5) = 1 → 2/8; 1.1: floor(4.4 + 0.5) = 4 → 1; 3 → clipped to λ */
    float want_y[5] = {0.0f, 0.25f, 1.0f, 2.0f, 0.0f};
    for (int i = 0; i < 5; i++)
        assert_float_equal(y[i], want_y[i], 1e-6);
    nc_tr_qcfs_bwd(&q, z, y, dy, dz, dl, 1);
    float want_dz[5] = {0, 1, 1, 0, 0};
    double want_dl[5] = {0.0, (0.25 - 0.3) / 2, (1.0 - 1.1) / 2, 1.0, 0.0};
    for (int i = 0; i < 5; i++) {
        assert_float_equal(dz[i], want_dz[i], 1e-6);
        assert_float_equal(dl[i], want_dl[i], 1e-6);
    }
}

/* A small network with every layer kind the QCFS view runs, relaxed. */
static void test_grad_qcfs_network(void **state)
{
    (void)state;
    int64_t shape[3] = {1, 6, 6};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.padding = {1, 1}};
    int c = add_conv(s, 0, 2, 3, 3, &p, 0.6f);
    int n1 = add_if(s, c, const_tensor(2, 0.8f), NULL, NULL);
    int64_t k[2] = {2, 2};
    int pool, f, id;
    NC_ASSERT_OK(nc_snn_add_pool2d(s, n1, k, NULL, NULL, 0.25f, NULL, &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, NULL, &f));
    int a = add_affine(s, f, 5, 0.6f);
    int n2 = add_if(s, a, const_tensor(1, 0.7f), NULL, NULL);
    int o = add_affine(s, n2, 3, 0.6f);
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    gcase gc = {.c = {.mode = NC_TRAIN_QCFS, .levels = 8, .relaxed = 1, .train_thresholds = 1}, .N = 2,
                .x_lo = 0.0f, .x_hi = 1.0f, .eps = 1e-3};
    grad_check(s, &gc);
    nc_snn_free(s);
}

/* BPTT: the IF unrolled over T steps with each surrogate, both resets,
 * trainable θ, with the spike relaxed to the surrogate's integral. */
static void bptt_check(nc_surrogate sg, nc_reset_mode reset)
{
    int64_t shape[1] = {4};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    int a = add_affine(s, 0, 5, 0.8f);
    nc_if_params ip = {.threshold = const_tensor(5, 0.6f), .reset = reset};
    for (int i = 0; i < 5; i++)
        nc_f32(ip.threshold)[i] = 0.5f + 0.1f * (float)i;
    int n1, n2, id;
    NC_ASSERT_OK(nc_snn_add_if(s, a, &ip, NULL, &n1));
    nc_tensor_free((nc_tensor *)ip.threshold);
    int b = add_affine(s, n1, 3, 0.8f);
    nc_if_params ip2 = {.threshold = const_tensor(1, 0.7f), .reset = reset};
    NC_ASSERT_OK(nc_snn_add_if(s, b, &ip2, NULL, &n2));
    nc_tensor_free((nc_tensor *)ip2.threshold);
    /* a sum of time-varying layers and a constant one (broadcast over t) */
    int c = add_affine(s, 0, 3, 0.8f);
    int from[3] = {n2, b, c}, sum;
    NC_ASSERT_OK(nc_snn_add_add(s, 3, from, NULL, &sum));
    int o = add_affine(s, sum, 3, 0.8f);
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    gcase gc = {.c = {.mode = NC_TRAIN_BPTT, .T = 4, .relaxed = 1, .train_thresholds = 1, .sg = sg,
                      .sg_width = 1.0f},
                .N = 2, .x_lo = -1.0f, .x_hi = 1.5f, .eps = 1e-3};
    grad_check(s, &gc);
    nc_snn_free(s);
}

static void test_grad_bptt(void **state)
{
    (void)state;
    bptt_check(NC_SURROGATE_SIGMOID, NC_RESET_SUBTRACT);
    bptt_check(NC_SURROGATE_ATAN, NC_RESET_SUBTRACT);
    bptt_check(NC_SURROGATE_SIGMOID, NC_RESET_ZERO);
    bptt_check(NC_SURROGATE_ATAN, NC_RESET_ZERO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_affine),
        cmocka_unit_test(test_grad_conv),
        cmocka_unit_test(test_grad_pool),
        cmocka_unit_test(test_grad_maxpool),
        cmocka_unit_test(test_grad_add_concat),
        cmocka_unit_test(test_grad_qcfs_relaxed),
        cmocka_unit_test(test_qcfs_cases),
        cmocka_unit_test(test_grad_qcfs_network),
        cmocka_unit_test(test_grad_bptt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
