/* The training engine (convert/train/train.h): gradients of every layer kind
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

#include "convert/train/train_internal.h"
#include "snn/ir/snn_ir.h"
#include "snn/base/blas_threads.h"
#include "snn/base/tensor.h"

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

/* A Gather (routing: Swin's windows, roll, padding) between two synaptic
 * layers: its gradient goes back to the element each output read, summed
 * where one element feeds several outputs, nothing from its zeros. */
static void test_grad_gather(void **state)
{
    (void)state;
    uint64_t rng = g_rng; /* the tests after it draw what they drew before it existed */
    g_rng = 7;
    int64_t shape[3] = {2, 3, 3}, gshape[3] = {3, 2, 4}, ix[24];
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.padding = {1, 1}};
    int a = add_conv(s, 0, 2, 3, 3, &p, 0.5f), g, f, id;
    for (int e = 0; e < 24; e++)
        ix[e] = e % 7 == 3 ? -1 : (e * 5) % 18; /* repeats and zeros */
    NC_ASSERT_OK(nc_snn_add_gather(s, a, 3, gshape, ix, "route", &g));
    NC_ASSERT_OK(nc_snn_add_flatten(s, g, NULL, &f));
    int o = add_affine(s, f, 3, 0.3f);
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    grad_check(s, &linear_case);
    nc_snn_free(s);
    g_rng = rng;
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
 * trainable θ, with the spike relaxed to the surrogate's integral; or the
 * first IF layer signed (reset by subtraction), with bursts of up to
 * `signed_spikes` spikes when that is above 1. */
static void bptt_check_as(nc_surrogate sg, nc_reset_mode reset, int signed_spikes)
{
    int64_t shape[1] = {4};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    int a = add_affine(s, 0, 5, 0.8f);
    nc_if_params ip = {.threshold = const_tensor(5, 0.6f), .reset = reset, .signed_spikes = signed_spikes > 0,
                       .max_spikes = signed_spikes > 1 ? signed_spikes : 0};
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

static void bptt_check(nc_surrogate sg, nc_reset_mode reset) { bptt_check_as(sg, reset, 0); }

static void test_grad_bptt(void **state)
{
    (void)state;
    bptt_check_as(NC_SURROGATE_SIGMOID, NC_RESET_SUBTRACT, 1);
    bptt_check_as(NC_SURROGATE_ATAN, NC_RESET_SUBTRACT, 1);
    bptt_check_as(NC_SURROGATE_SIGMOID, NC_RESET_SUBTRACT, 3); /* bursts */
    bptt_check_as(NC_SURROGATE_ATAN, NC_RESET_SUBTRACT, 2);
    bptt_check(NC_SURROGATE_SIGMOID, NC_RESET_SUBTRACT);
    bptt_check(NC_SURROGATE_ATAN, NC_RESET_SUBTRACT);
    bptt_check(NC_SURROGATE_SIGMOID, NC_RESET_ZERO);
    bptt_check(NC_SURROGATE_ATAN, NC_RESET_ZERO);
}

static void test_surrogates(void **state)
{
    (void)state;
    nc_surrogate kinds[4] = {NC_SURROGATE_TRIANGLE, NC_SURROGATE_RECTANGLE, NC_SURROGATE_SIGMOID, NC_SURROGATE_ATAN};
    for (int k = 0; k < 4; k++) {
        float w = 0.5f;
        double area = 0.0, h = 1e-4;
        for (double x = -200.0; x < 200.0; x += h * (fabs(x) < 5 ? 1.0 : 100.0))
            area += nc_tr_surrogate(kinds[k], (float)x, w) * h * (fabs(x) < 5 ? 1.0 : 100.0);
        /* atan's tails are heavy: 1 − (2/π)·atan(π·α·200/2) is about 1e-3 */
        assert_true(fabs(area - 1.0) < 2e-3);
        assert_true(fabsf(nc_tr_surrogate(kinds[k], 0.0f, w) - 1.0f / w) < 1e-5f);
    }
    assert_float_equal(nc_tr_surrogate(NC_SURROGATE_TRIANGLE, 0.25f, 0.5f), 0.25f / 0.25f, 1e-6);
    assert_float_equal(nc_tr_surrogate(NC_SURROGATE_TRIANGLE, 0.6f, 0.5f), 0.0f, 0.0);
    assert_float_equal(nc_tr_surrogate(NC_SURROGATE_RECTANGLE, 0.3f, 0.5f), 0.0f, 0.0);
    /* the triangle with BPTT relaxed too (a C¹ smooth step) */
    bptt_check(NC_SURROGATE_TRIANGLE, NC_RESET_SUBTRACT);
}

/* A Nonlinear layer of function fn from a (and b: Mul). */
static int add_nl(nc_snn *s, nc_nonlinear_fn fn, int a, int b)
{
    nc_nonlinear_params p = {.fn = fn, .alpha = 1.0f / 6.0f, .beta = 0.5f};
    int from[2] = {a, b}, id;
    NC_ASSERT_OK(nc_snn_add_nonlinear(s, fn == NC_NL_MUL ? 2 : 1, from, &p, NULL, &id));
    return id;
}

/* in (4) → affine 5 → IF → Nonlinear fn → two-sided SignedIF → affine 3,
 * times (Nonlinear Mul, broadcast) a gate Sigmoid(affine 1 of the input),
 * constant over time → readout: the element-wise function and Mul through
 * time, a constant Nonlinear and a constant factor, the two-sided gates. */
static nc_snn *nonlinear_net_as(nc_nonlinear_fn fn, int signed_spikes)
{
    int64_t shape[1] = {4};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    nc_if_params ip = {.threshold = const_tensor(5, 0.5f)};
    for (int i = 0; i < 5; i++)
        nc_f32(ip.threshold)[i] = 0.4f + 0.1f * (float)i;
    int n1, sif, id;
    NC_ASSERT_OK(nc_snn_add_if(s, add_affine(s, 0, 5, 0.8f), &ip, NULL, &n1));
    nc_tensor_free((nc_tensor *)ip.threshold);
    nc_if_params two = {.threshold = const_tensor(1, 0.3f), .signed_spikes = signed_spikes};
    NC_ASSERT_OK(nc_snn_add_if(s, add_nl(s, fn, n1, 0), &two, NULL, &sif));
    nc_tensor_free((nc_tensor *)two.threshold);
    int gate = add_nl(s, NC_NL_SIGMOID, add_affine(s, 0, 1, 0.8f), 0);
    int m = add_nl(s, NC_NL_MUL, add_affine(s, sif, 3, 0.8f), gate);
    NC_ASSERT_OK(nc_snn_add_readout(s, m, NULL, &id));
    return s;
}

static nc_snn *nonlinear_net(nc_nonlinear_fn fn) { return nonlinear_net_as(fn, NC_SIGNED_TWO_SIDED); }

/* BPTT through Nonlinear layers of every element-wise function and Mul,
 * and the two-sided SignedIF, against finite differences (relaxed spikes);
 * QCFS through them (f of rates);
 * the functions BPTT does not differentiate, and QCFS's two-sided IF, are
 * refused naming the layer. */
static void test_grad_nonlinear(void **state)
{
    (void)state;
    for (int fn = NC_NL_SIGMOID; fn <= NC_NL_GELU_TANH; fn++) {
        nc_snn *s = nonlinear_net((nc_nonlinear_fn)fn);
        gcase gc = {.c = {.mode = NC_TRAIN_BPTT, .T = 4, .relaxed = 1, .train_thresholds = 1,
                          .sg = NC_SURROGATE_SIGMOID, .sg_width = 1.0f},
                    .N = 2, .x_lo = -1.0f, .x_hi = 1.5f, .eps = 1e-3};
        g_checked = 0;
        grad_check(s, &gc);
        assert_true(g_checked > 40);
        nc_snn_free(s);
        /* QCFS, on rates (f of them), after a one-sided IF */
        s = nonlinear_net_as((nc_nonlinear_fn)fn, 0);
        gcase qc = {.c = {.mode = NC_TRAIN_QCFS, .levels = 8, .relaxed = 1, .train_thresholds = 1}, .N = 2,
                    .x_lo = -1.0f, .x_hi = 1.5f, .eps = 1e-3};
        grad_check(s, &qc);
        nc_snn_free(s);
    }
    nc_snn *s = nonlinear_net(NC_NL_SILU);
    nc_tr_net *net = NULL;
    nc_tr_config q = {.mode = NC_TRAIN_QCFS, .levels = 8};
    assert_int_equal(nc_tr_net_create(s, &q, 2, &net), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "two-sided"));
    int id, last = (int)nc_snn_num_layers(s) - 1;
    nc_nonlinear_params sm = {.fn = NC_NL_SOFTMAX, .axis = 0};
    NC_ASSERT_OK(nc_snn_add_nonlinear(s, 1, &last, &sm, "attn_softmax", &id));
    NC_ASSERT_OK(nc_snn_add_readout(s, id, NULL, &id));
    nc_tr_config b = {.mode = NC_TRAIN_BPTT, .T = 2, .sg_width = 1.0f};
    assert_int_equal(nc_tr_net_create(s, &b, 2, &net), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "'attn_softmax' is Nonlinear Softmax"));
    assert_null(net);
    nc_snn_free(s);
}

/* The engine's SNN forward (BPTT mode, hard spikes) against the CPU
 * reference backend: the time-averaged readout times T is the session's
 * summed output. */
static nc_snn *small_cnn(int with_add, int signed_spikes)
{
    int64_t shape[3] = {1, 6, 6};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.padding = {1, 1}};
    int c = add_conv(s, 0, 3, 3, 3, &p, 0.6f);
    nc_if_params ip = {.threshold = const_tensor(3, 0.5f), .signed_spikes = signed_spikes > 0,
                       .max_spikes = signed_spikes > 1 ? signed_spikes : 0};
    nc_f32(ip.threshold)[1] = 0.4f;
    int n1;
    NC_ASSERT_OK(nc_snn_add_if(s, c, &ip, NULL, &n1));
    nc_tensor_free((nc_tensor *)ip.threshold);
    int64_t k[2] = {2, 2};
    int pool, f, id;
    NC_ASSERT_OK(nc_snn_add_pool2d(s, n1, k, NULL, NULL, 0.25f, NULL, &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, NULL, &f));
    int a = add_affine(s, f, 8, 0.8f);
    nc_if_params ip2 = {.threshold = const_tensor(1, 0.3f), .signed_spikes = signed_spikes > 0,
                        .max_spikes = signed_spikes > 1 ? signed_spikes : 0};
    int n2;
    NC_ASSERT_OK(nc_snn_add_if(s, a, &ip2, NULL, &n2));
    nc_tensor_free((nc_tensor *)ip2.threshold);
    int o = add_affine(s, n2, 4, 0.8f);
    if (with_add) {
        /* a constant branch from the input joins a time-varying one */
        int f0;
        NC_ASSERT_OK(nc_snn_add_flatten(s, 0, NULL, &f0));
        int b = add_affine(s, f0, 4, 0.2f);
        int from[2] = {o, b};
        NC_ASSERT_OK(nc_snn_add_add(s, 2, from, NULL, &o));
    }
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    return s;
}

static void test_bptt_forward_matches_backend(void **state)
{
    (void)state;
    /* 2, 3: signed spikes; 4, 5: bursts of up to 3; 6: nonlinear_net */
    for (int with_add = 0; with_add < 7; with_add++) {
        nc_snn *s = small_cnn(with_add & 1, with_add < 4 ? with_add >> 1 : 3);
        int N = 5, T = 6;
        int64_t xs[4] = {N, 1, 6, 6}, flat[2] = {N, 4};
        if (with_add == 6) { /* Nonlinear layers and a two-sided SignedIF */
            nc_snn_free(s);
            s = nonlinear_net(NC_NL_GELU);
        }
        nc_tensor *x = with_add == 6 ? rand_tensor(2, flat, 0.0f, 1.0f) : rand_tensor(4, xs, 0.0f, 1.0f), *out = NULL;
        nc_session_options so = {.backend = "cpu", .timesteps = T};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &so, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &out));
        nc_tr_config c = {.mode = NC_TRAIN_BPTT, .T = T, .sg_width = 1.0f};
        nc_tr_net *net = NULL;
        NC_ASSERT_OK(nc_tr_net_create(s, &c, N, &net));
        nc_tr_forward(net, nc_f32(x), N);
        float logits[5 * 4];
        nc_tr_logits(net, logits);
        const float *ref = nc_tensor_data(out);
        for (int i = 0; i < nc_tensor_numel(out); i++)
            assert_true(fabsf(logits[i] * (float)T - ref[i]) < 1e-4f * (1.0f + fabsf(ref[i])));
        nc_tr_net_free(net);
        nc_session_free(ss);
        nc_tensor_free(x);
        nc_tensor_free(out);
        nc_snn_free(s);
    }
}

/* ---- BPTT through a spiking max pool ---- */

/* Input → Conv → SignedIF (bursts of up to `burst`) → SpikeMaxPool2d →
 * Flatten → Affine → Readout. */
static nc_snn *spikemax_net(int burst)
{
    int64_t shape[3] = {1, 6, 6};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.padding = {1, 1}};
    int c = add_conv(s, 0, 3, 3, 3, &p, 0.6f);
    nc_if_params ip = {.threshold = const_tensor(3, 0.3f), .signed_spikes = 1, .max_spikes = burst};
    nc_f32(ip.threshold)[1] = 0.2f;
    int n1, pool, f, id;
    NC_ASSERT_OK(nc_snn_add_if(s, c, &ip, NULL, &n1));
    nc_tensor_free((nc_tensor *)ip.threshold);
    int64_t k[2] = {2, 2};
    NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, n1, k, k, NULL, NULL, &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, NULL, &f));
    NC_ASSERT_OK(nc_snn_add_readout(s, add_affine(s, f, 4, 0.8f), NULL, &id));
    return s;
}

/* (a) the engine's forward is the cpu reference backend's run, with one
 * spike a step and with bursts; (b) the gradient reaches the pool's input
 * only at each step's winner: zero at every (step, input) that never won,
 * non-zero at some that did; (c) BPTT training lowers the loss. */
static void test_bptt_spikemax(void **state)
{
    (void)state;
    int N = 5, T = 6;
    int64_t xs[4] = {N, 1, 6, 6};
    for (int burst = 1; burst <= 3; burst += 2) {
        nc_snn *s = spikemax_net(burst);
        nc_tensor *x = rand_tensor(4, xs, -0.5f, 1.0f), *out = NULL;
        nc_session_options so = {.backend = "cpu", .timesteps = T};
        nc_session *ss = NULL;
        NC_ASSERT_OK(nc_session_create(s, &so, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &out));
        nc_tr_config c = {.mode = NC_TRAIN_BPTT, .T = T, .sg_width = 1.0f, .detach_reset = 1};
        nc_tr_net *net = NULL;
        NC_ASSERT_OK(nc_tr_net_create(s, &c, N, &net));
        nc_tr_forward(net, nc_f32(x), N);
        float logits[5 * 4], dl[5 * 4];
        nc_tr_logits(net, logits);
        const float *ref = nc_tensor_data(out);
        for (int i = 0; i < nc_tensor_numel(out); i++)
            assert_true(fabsf(logits[i] * (float)T - ref[i]) < 1e-6f * (1.0f + fabsf(ref[i])));
        /* the pool's events follow its input: some sent, some bursts when burst > 1 */
        const nc_tr_layer *P = &net->l[3], *X = &net->l[2];
        int events = 0, bursts = 0;
        for (int64_t e = 0; e < (int64_t)T * N * P->size; e++) {
            events += P->y[e] != 0.0f;
            bursts += fabsf(P->y[e]) > 0.45f; /* more than twice the largest single spike */
        }
        assert_true(events > 10);
        assert_true(burst == 1 ? bursts == 0 : bursts > 0);

        for (int i = 0; i < N * 4; i++)
            dl[i] = (float)((i * 7) % 5) - 2.0f;
        nc_tr_backward(net, dl);
        char *won = calloc((size_t)(T * N * X->size), 1);
        for (int64_t r = 0; r < (int64_t)T * N; r++)
            for (int64_t o = 0; o < P->size; o++) {
                int32_t w = P->arg[r * P->size + o];
                assert_true(w >= -1 && w < X->size);
                if (w >= 0)
                    won[r * X->size + w] = 1;
            }
        int nonzero = 0, lost = 0;
        for (int64_t e = 0; e < (int64_t)T * N * X->size; e++) {
            if (!won[e])
                assert_true(X->dy[e] == 0.0f);
            nonzero += won[e] && X->dy[e] != 0.0f;
            lost += !won[e];
        }
        assert_true(nonzero > 0 && lost > 0);
        free(won);
        nc_tr_net_free(net);
        nc_session_free(ss);
        nc_tensor_free(x);
        nc_tensor_free(out);
        nc_snn_free(s);
    }

    /* (c) a few steps of BPTT training (nc_snn_finetune's engine) lower the loss */
    int M = 32;
    int64_t ms[4] = {M, 1, 6, 6}, ys[1] = {M};
    nc_tensor *x = rand_tensor(4, ms, 0.0f, 1.0f), *y = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_I64, 1, ys, &y));
    for (int i = 0; i < M; i++) /* the label: where the image is brightest, in quarters */
        ((int64_t *)nc_tensor_data(y))[i] = (nc_f32(x)[i * 36] > 0.5f) + 2 * (nc_f32(x)[i * 36 + 35] > 0.5f);
    nc_snn *s = spikemax_net(3);
    double l0, l1;
    NC_ASSERT_OK(nc_bptt_evaluate(s, x, y, 4, &l0, NULL));
    nc_train_options o = {.mode = NC_TRAIN_BPTT, .timesteps = 4, .epochs = 10, .batch = 8, .lr = 1e-2f, .seed = 1};
    NC_ASSERT_OK(nc_train(s, x, y, &o));
    NC_ASSERT_OK(nc_bptt_evaluate(s, x, y, 4, &l1, NULL));
    assert_true(l1 < 0.9 * l0);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

/* nc_snn_rate_limit: an IF layer is θ·clip(I/θ, 0, 1), computed by hand
 * for an MLP; a signed CNN's readout/T at T = 2048 is close to it (the
 * error of rate coding falls like 1/T); a pool with per-window divisors is
 * refused naming the layer. */
static void test_rate_limit(void **state)
{
    (void)state;
    int64_t shape[1] = {5};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    int a = add_affine(s, 0, 6, 1.0f);
    nc_tensor *th = const_tensor(6, 0.4f);
    int n = add_if(s, a, th, NULL, NULL), b = add_affine(s, n, 3, 1.0f), id;
    NC_ASSERT_OK(nc_snn_add_readout(s, b, NULL, &id));
    int64_t xs[2] = {7, 5};
    nc_tensor *x = rand_tensor(2, xs, -1.0f, 1.0f), *y = NULL;
    NC_ASSERT_OK(nc_snn_rate_limit(s, x, &y));
    const float *W1 = nc_f32(s->layers[a].weight), *b1 = nc_f32(s->layers[a].bias);
    const float *W2 = nc_f32(s->layers[b].weight), *b2 = nc_f32(s->layers[b].bias);
    int clipped = 0;
    for (int r = 0; r < 7; r++)
        for (int o = 0; o < 3; o++) {
            double acc = b2[o];
            for (int j = 0; j < 6; j++) {
                double I = b1[j];
                for (int i = 0; i < 5; i++)
                    I += (double)W1[j * 5 + i] * nc_f32(x)[r * 5 + i];
                clipped += I > 0.4;
                acc += W2[o * 6 + j] * (I < 0 ? 0.0 : I > 0.4 ? 0.4 : I);
            }
            assert_true(fabs(acc - nc_f32(y)[r * 3 + o]) < 1e-5);
        }
    assert_true(clipped > 0); /* the cap is exercised */
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_snn_free(s);

    s = small_cnn(1, 1);
    int64_t cs[4] = {3, 1, 6, 6};
    x = rand_tensor(4, cs, 0.0f, 1.0f);
    nc_tensor *out = NULL;
    NC_ASSERT_OK(nc_snn_rate_limit(s, x, &y));
    nc_session_options so = {.backend = "cpu-fast", .timesteps = 2048};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &so, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &out));
    double scale = 0, err = 0;
    for (int64_t k = 0; k < nc_tensor_numel(y); k++) {
        scale = fmax(scale, fabs(nc_f32(y)[k]));
        err = fmax(err, fabs(nc_f32(out)[k] / 2048.0 - nc_f32(y)[k]));
    }
    print_message("rate limit: |readout/T - limit| %.2g of %.2g at T = 2048\n", err, scale);
    assert_true(scale > 0.05 && err < 0.02 * scale);
    nc_session_free(ss);
    nc_tensor_free(out);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_snn_free(s);

    int64_t in3[3] = {2, 5, 5}, k3[2] = {3, 3}, s2[2] = {2, 2}, p1[2] = {1, 1}, none[2] = {0, 0};
    NC_ASSERT_OK(nc_snn_create(3, in3, &s));
    int pd;
    NC_ASSERT_OK(nc_snn_add_pool2d_div(s, 0, k3, s2, p1, none, none, "partial", &pd));
    NC_ASSERT_OK(nc_snn_add_readout(s, pd, NULL, &id));
    int64_t ps[4] = {1, 2, 5, 5};
    x = rand_tensor(4, ps, 0.0f, 1.0f);
    y = (nc_tensor *)1;
    assert_int_equal(nc_snn_rate_limit(s, x, &y), NC_ERR_UNSUPPORTED);
    assert_null(y);
    assert_non_null(strstr(nc_last_error(), "partial"));
    nc_tensor_free(x);
    nc_snn_free(s);
}

/* The QCFS view is what the SNN computes: with θ = λ, v(0) = θ/2 and T = L,
 * one IF layer's mean output over T steps equals h(z) (DESIGN §3). */
static void test_qcfs_matches_snn(void **state)
{
    (void)state;
    int64_t shape[1] = {7};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    int a = add_affine(s, 0, 9, 1.0f);
    nc_tensor *th = const_tensor(9, 0.8f);
    for (int i = 0; i < 9; i++)
        nc_f32(th)[i] = 0.5f + 0.1f * (float)i;
    int n = add_if(s, a, th, NULL, NULL), id;
    NC_ASSERT_OK(nc_snn_add_readout(s, n, NULL, &id));
    int N = 16, L = 8;
    int64_t xs[2] = {N, 7};
    nc_tensor *x = rand_tensor(2, xs, -1.0f, 1.0f), *out = NULL;
    nc_session_options so = {.backend = "cpu", .timesteps = L};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &so, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &out));
    nc_tr_config c = {.mode = NC_TRAIN_QCFS, .levels = L};
    nc_tr_net *net = NULL;
    NC_ASSERT_OK(nc_tr_net_create(s, &c, N, &net));
    nc_tr_forward(net, nc_f32(x), N);
    float logits[16 * 9];
    nc_tr_logits(net, logits);
    const float *ref = nc_tensor_data(out);
    int nonzero = 0;
    for (int i = 0; i < N * 9; i++) {
        assert_true(fabsf(logits[i] - ref[i] / (float)L) < 1e-5f);
        nonzero += logits[i] > 0.0f;
    }
    assert_true(nonzero > 20); /* the case is not trivially all zero */
    nc_tr_net_free(net);
    nc_session_free(ss);
    nc_tensor_free(x);
    nc_tensor_free(out);
    nc_snn_free(s);
}

/* ---- optimiser ---- */

static void test_optim(void **state)
{
    (void)state;
    nc_optim o;
    float w[3] = {1.0f, -2.0f, 0.5f}, g[3] = {0.5f, -3.0f, 0.0f};
    NC_ASSERT_OK(nc_optim_init(&o, NC_OPTIM_ADAM, 0.0f, 0.0f));
    NC_ASSERT_OK(nc_optim_add(&o, w, g, 3, 1, -INFINITY));
    /* Adam's first step moves each weight by lr·g/(|g| + ε) */
    nc_optim_step(&o, 0.1f);
    assert_float_equal(w[0], 0.9f, 1e-6);
    assert_float_equal(w[1], -1.9f, 1e-6);
    assert_float_equal(w[2], 0.5f, 0.0);
    nc_optim_free(&o);

    /* SGD with momentum 0.9 and L2 weight decay 0.1 on the first parameter only;
     * the second is clamped at its floor */
    float a[1] = {1.0f}, ga[1] = {1.0f}, b[1] = {0.2f}, gb[1] = {1.0f};
    NC_ASSERT_OK(nc_optim_init(&o, NC_OPTIM_SGD, 0.1f, 0.9f));
    NC_ASSERT_OK(nc_optim_add(&o, a, ga, 1, 1, -INFINITY));
    NC_ASSERT_OK(nc_optim_add(&o, b, gb, 1, 0, 0.05f));
    nc_optim_step(&o, 0.1f); /* g = 1 + 0.1·1 = 1.1; v = 1.1; a = 1 − 0.11 */
    assert_float_equal(a[0], 0.89f, 1e-6);
    assert_float_equal(b[0], 0.1f, 1e-6);
    nc_optim_step(&o, 0.1f); /* g = 1 + 0.089 = 1.089; v = 0.99 + 1.089 = 2.079 */
    assert_float_equal(a[0], 0.89f - 0.2079f, 1e-6);
    assert_float_equal(b[0], 0.05f, 1e-6); /* 0.1 − 0.19 clamped */
    /* clipping by the global norm: (3, 4) → norm 5 → scaled to norm 1 */
    ga[0] = 3.0f, gb[0] = 4.0f;
    assert_float_equal(nc_optim_clip(&o, 1.0), 5.0, 1e-9);
    assert_float_equal(ga[0], 0.6f, 1e-6);
    assert_float_equal(gb[0], 0.8f, 1e-6);
    assert_float_equal(nc_optim_clip(&o, 10.0), 1.0, 1e-6); /* below the limit: unchanged */
    assert_float_equal(ga[0], 0.6f, 1e-6);
    nc_optim_free(&o);

    assert_float_equal(nc_cosine_lr(1.0f, 0, 100), 1.0f, 1e-7);
    assert_float_equal(nc_cosine_lr(1.0f, 50, 100), 0.5f, 1e-6);
    assert_float_equal(nc_cosine_lr(1.0f, 100, 100), 0.0f, 1e-6);
}

/* ---- training runs ---- */

typedef struct blobs {
    nc_tensor *x, *y;
} blobs;

/* Four Gaussian-ish blobs in 16 dimensions: separable, not trivially. */
static blobs make_blobs(int N, uint64_t seed)
{
    uint64_t keep = g_rng;
    g_rng = seed;
    float centres[4][16];
    for (int c = 0; c < 4; c++)
        for (int d = 0; d < 16; d++)
            centres[c][d] = urand(-1.0f, 1.0f);
    int64_t xs[2] = {N, 16}, ys[1] = {N};
    blobs b = {NULL, NULL};
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, xs, &b.x));
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_I64, 1, ys, &b.y));
    float *x = nc_tensor_data(b.x);
    int64_t *y = nc_tensor_data(b.y);
    for (int i = 0; i < N; i++) {
        int c = (int)(nc_splitmix64(&g_rng) % 4);
        y[i] = c;
        for (int d = 0; d < 16; d++)
            x[i * 16 + d] = centres[c][d] + urand(-0.9f, 0.9f);
    }
    g_rng = keep;
    return b;
}

static nc_snn *small_mlp(uint64_t seed)
{
    uint64_t keep = g_rng;
    g_rng = seed;
    int64_t shape[1] = {16};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    int a = add_affine(s, 0, 32, 0.3f);
    int n = add_if(s, a, const_tensor(1, 1.0f), NULL, NULL);
    int o = add_affine(s, n, 4, 0.3f), id;
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    g_rng = keep;
    return s;
}

/* OpenBLAS's thread count seen while training (from the progress callback) */
static void blas_threads_seen(const char *what, int64_t done, int64_t total, void *user)
{
    (void)what, (void)done, (void)total;
    int *most = user, now = nc_blas_threads();
    if (now > *most)
        *most = now;
}

static int g_progress_calls;
static void count_progress(const char *what, int64_t done, int64_t total, void *user)
{
    (void)user;
    assert_non_null(what);
    assert_true(strncmp(what, "epoch ", 6) == 0);
    assert_true(done >= 0 && done <= total);
    g_progress_calls++;
}

static void test_train_qcfs_blobs(void **state)
{
    (void)state;
    blobs d = make_blobs(512, 7);
    nc_snn *s = small_mlp(11), *s2 = small_mlp(11);
    double l0, a0, l1, a1;
    NC_ASSERT_OK(nc_qcfs_evaluate(s, d.x, d.y, 4, &l0, &a0));
    nc_train_options o = {.mode = NC_TRAIN_QCFS, .levels = 4, .epochs = 4, .batch = 32, .lr = 3e-3f,
                          .weight_decay = 1e-4f, .seed = 5, .progress = count_progress};
    g_progress_calls = 0;
    nc_train_stats st;
    NC_ASSERT_OK(nc_train_ex(s, d.x, d.y, &o, &st));
    assert_int_equal(g_progress_calls, 4 * (1 + 16));
    assert_int_equal(st.steps, 4 * 16);
    NC_ASSERT_OK(nc_qcfs_evaluate(s, d.x, d.y, 4, &l1, &a1));
    assert_true(l1 < 0.5 * l0);
    assert_true(a1 > a0 + 0.2);
    assert_true(a1 > 0.9);
    /* λ was trained (default in QCFS mode) and stays positive */
    float lam = nc_f32(s->layers[2].threshold)[0];
    assert_true(lam != 1.0f && lam >= NC_TRAIN_MIN_THRESHOLD);
    /* the same seed gives the same weights, bit for bit */
    o.progress = NULL;
    NC_ASSERT_OK(nc_train(s2, d.x, d.y, &o));
    for (int i = 1; i < s->n_layers; i++) {
        nc_snn_layer *A = &s->layers[i], *B = &s2->layers[i];
        if (A->weight)
            assert_memory_equal(A->weight->data, B->weight->data, (size_t)A->weight->numel * sizeof(float));
        if (A->threshold)
            assert_memory_equal(A->threshold->data, B->threshold->data, sizeof(float));
    }
    /* λ frozen on request; SGD with clipping and a constant rate also learns */
    nc_snn *s3 = small_mlp(11);
    nc_train_options o3 = {.mode = NC_TRAIN_QCFS, .levels = 4, .epochs = 3, .batch = 32, .lr = 0.05f,
                           .train_thresholds = -1, .optimizer = 1, .grad_clip = 1.0f, .cosine = -1, .seed = 5};
    NC_ASSERT_OK(nc_train(s3, d.x, d.y, &o3));
    assert_float_equal(nc_f32(s3->layers[2].threshold)[0], 1.0f, 0.0);
    NC_ASSERT_OK(nc_qcfs_evaluate(s3, d.x, d.y, 4, &l1, &a1));
    assert_true(l1 < 0.5 * l0 && a1 > 0.9);
    nc_snn_free(s);
    nc_snn_free(s2);
    nc_snn_free(s3);
    nc_tensor_free(d.x);
    nc_tensor_free(d.y);
}

/* 256 real Fashion-MNIST images, a tiny CNN with per-channel λ. */
static nc_snn *tiny_cnn(int *if_id)
{
    uint64_t keep = g_rng;
    g_rng = 3;
    int64_t shape[3] = {1, 28, 28};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, shape, &s));
    nc_conv2d_params p = {.stride = {2, 2}, .padding = {1, 1}};
    int c = add_conv(s, 0, 4, 3, 3, &p, 0.5f);
    *if_id = add_if(s, c, const_tensor(4, 0.5f), NULL, NULL);
    int64_t k[2] = {2, 2};
    int pool, f, id;
    NC_ASSERT_OK(nc_snn_add_pool2d(s, *if_id, k, NULL, NULL, 0.25f, NULL, &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, NULL, &f));
    int o = add_affine(s, f, 10, 0.1f);
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    g_rng = keep;
    return s;
}

static void test_train_qcfs_fmnist(void **state)
{
    (void)state;
    nc_tensor *x = NULL, *y = NULL;
    NC_ASSERT_OK(nc_data_load(nc_test_src("examples/data/fmnist_test_x.npy"), NC_DTYPE_F32, &x));
    NC_ASSERT_OK(nc_data_load(nc_test_src("examples/data/fmnist_test_y.npy"), NC_DTYPE_I64, &y));
    int n1;
    nc_snn *s = tiny_cnn(&n1);
    double l0, a0, l1, a1;
    NC_ASSERT_OK(nc_qcfs_evaluate(s, x, y, 8, &l0, &a0));
    nc_train_options opt = {.mode = NC_TRAIN_QCFS, .epochs = 10, .batch = 32, .lr = 1e-2f, .seed = 1};
    NC_ASSERT_OK(nc_train(s, x, y, &opt));
    NC_ASSERT_OK(nc_qcfs_evaluate(s, x, y, 8, &l1, &a1));
    assert_true(l1 < l0 - 1.0);
    assert_true(a1 > a0 + 0.3 && a1 > 0.6);
    for (int ch = 0; ch < 4; ch++)
        assert_true(nc_f32(s->layers[n1].threshold)[ch] >= NC_TRAIN_MIN_THRESHOLD);
    nc_snn_free(s);

    /* the thread count does not change the result (batches large enough
     * for the parallel loops) */
    nc_snn *t1 = tiny_cnn(&n1), *t2 = tiny_cnn(&n1);
    nc_train_options o1 = {.mode = NC_TRAIN_QCFS, .epochs = 1, .batch = 128, .seed = 4, .threads = 1};
    nc_train_options o2 = o1;
    o2.threads = 2;
    int blas_threads = nc_blas_threads(), blas_seen = 0;
    o2.progress = blas_threads_seen, o2.progress_user = &blas_seen;
    NC_ASSERT_OK(nc_train(t1, x, y, &o1));
    NC_ASSERT_OK(nc_train(t2, x, y, &o2));
    /* OpenBLAS ran single-threaded inside the two threads' products, and has its threads back */
    assert_int_equal(blas_seen, 1);
    assert_int_equal(nc_blas_threads(), blas_threads);
    for (int i = 1; i < t1->n_layers; i++) {
        nc_snn_layer *A = &t1->layers[i], *B = &t2->layers[i];
        if (A->weight)
            assert_memory_equal(A->weight->data, B->weight->data, (size_t)A->weight->numel * sizeof(float));
        if (A->threshold)
            assert_memory_equal(A->threshold->data, B->threshold->data, (size_t)A->threshold->numel * sizeof(float));
    }
    nc_snn_free(t1);
    nc_snn_free(t2);
    /* the same for BPTT (threads own blocks of neurons in the IF backward) */
    t1 = tiny_cnn(&n1), t2 = tiny_cnn(&n1);
    o1.mode = o2.mode = NC_TRAIN_BPTT;
    o1.timesteps = o2.timesteps = 3;
    NC_ASSERT_OK(nc_train(t1, x, y, &o1));
    NC_ASSERT_OK(nc_train(t2, x, y, &o2));
    for (int i = 1; i < t1->n_layers; i++) {
        nc_snn_layer *A = &t1->layers[i], *B = &t2->layers[i];
        if (A->weight)
            assert_memory_equal(A->weight->data, B->weight->data, (size_t)A->weight->numel * sizeof(float));
    }
    nc_snn_free(t1);
    nc_snn_free(t2);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

/* BPTT: a step on a fixed batch lowers its loss; three steps are
 * reproducible bit for bit. */
static void test_train_bptt(void **state)
{
    (void)state;
    blobs d = make_blobs(64, 9);
    double losses[2][4];
    for (int run = 0; run < 2; run++) {
        nc_snn *s = small_mlp(13);
        nc_train_options o = {.mode = NC_TRAIN_BPTT, .timesteps = 4, .epochs = 1, .batch = 64, .lr = 1e-2f,
                              .train_thresholds = 1, .seed = 3, .cosine = -1};
        for (int step = 0; step < 4; step++) {
            NC_ASSERT_OK(nc_bptt_evaluate(s, d.x, d.y, 4, &losses[run][step], NULL));
            if (step < 3)
                NC_ASSERT_OK(nc_train(s, d.x, d.y, &o)); /* one batch = one step */
        }
        nc_snn_free(s);
    }
    assert_true(losses[0][1] < losses[0][0]);
    assert_true(losses[0][3] < losses[0][0]);
    assert_memory_equal(losses[0], losses[1], sizeof losses[0]);

    /* several epochs learn the blobs as an SNN at T = 4 */
    blobs big = make_blobs(512, 7);
    nc_snn *s = small_mlp(11);
    double l0, a0, l1, a1;
    NC_ASSERT_OK(nc_bptt_evaluate(s, big.x, big.y, 4, &l0, &a0));
    nc_train_options o = {.mode = NC_TRAIN_BPTT, .timesteps = 4, .epochs = 4, .batch = 32, .lr = 3e-3f,
                          .seed = 2};
    NC_ASSERT_OK(nc_train(s, big.x, big.y, &o));
    NC_ASSERT_OK(nc_bptt_evaluate(s, big.x, big.y, 4, &l1, &a1));
    assert_true(l1 < 0.5 * l0);
    assert_true(a1 > 0.9);
    nc_snn_free(s);
    nc_tensor_free(big.x);
    nc_tensor_free(big.y);
    nc_tensor_free(d.x);
    nc_tensor_free(d.y);
}

/* ---- what the engine refuses ---- */

static void test_errors(void **state)
{
    (void)state;
    blobs d = make_blobs(8, 1);
    nc_train_options o = {.mode = NC_TRAIN_QCFS};
    /* a LIF layer */
    nc_snn *s = small_mlp(1);
    s->layers[2].kind = NC_SNN_LIF;
    assert_int_equal(nc_train(s, d.x, d.y, &o), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "LIF"));
    nc_snn_free(s);
    /* a recurrent edge */
    s = small_mlp(1);
    s->layers[1].inputs[0] = 2;
    assert_int_equal(nc_train(s, d.x, d.y, &o), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "recurrent"));
    nc_snn_free(s);
    s = small_mlp(1);
    /* a label outside the classes */
    nc_i64(d.y)[3] = 4;
    assert_int_equal(nc_train(s, d.x, d.y, &o), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "label 4"));
    double l, a;
    assert_int_equal(nc_qcfs_evaluate(s, d.x, d.y, 8, &l, &a), NC_ERR_INVALID_ARG);
    nc_i64(d.y)[3] = 0;
    /* data of the wrong shape */
    int64_t xs[2] = {8, 15};
    nc_tensor *bad = rand_tensor(2, xs, 0.0f, 1.0f);
    assert_int_equal(nc_train(s, bad, d.y, &o), NC_ERR_SHAPE);
    nc_tensor_free(bad);
    /* bad options */
    nc_train_options ob = {.mode = NC_TRAIN_QCFS, .batch = -1};
    assert_int_equal(nc_train(s, d.x, d.y, &ob), NC_ERR_INVALID_ARG);
    ob = (nc_train_options){.mode = (nc_train_mode)7};
    assert_int_equal(nc_train(s, d.x, d.y, &ob), NC_ERR_INVALID_ARG);
    /* a network whose weights are unchanged by a refused call */
    nc_snn_free(s);
    nc_tensor_free(d.x);
    nc_tensor_free(d.y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grad_affine),
        cmocka_unit_test(test_grad_conv),
        cmocka_unit_test(test_grad_pool),
        cmocka_unit_test(test_grad_maxpool),
        cmocka_unit_test(test_grad_add_concat),
        cmocka_unit_test(test_grad_gather),
        cmocka_unit_test(test_grad_qcfs_relaxed),
        cmocka_unit_test(test_qcfs_cases),
        cmocka_unit_test(test_grad_qcfs_network),
        cmocka_unit_test(test_grad_bptt),
        cmocka_unit_test(test_grad_nonlinear),
        cmocka_unit_test(test_surrogates),
        cmocka_unit_test(test_bptt_forward_matches_backend), cmocka_unit_test(test_bptt_spikemax),
        cmocka_unit_test(test_rate_limit), cmocka_unit_test(test_qcfs_matches_snn),
        cmocka_unit_test(test_optim),
        cmocka_unit_test(test_train_qcfs_blobs),
        cmocka_unit_test(test_train_qcfs_fmnist),
        cmocka_unit_test(test_train_bptt),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
