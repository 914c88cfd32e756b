/* Average poolings of spikes folded into the Conv or Gemm that reads them
 * (convert/convert_poolfold.c). Fixtures: tests/fixtures/poolfold/
 * (scripts/make_poolfold_fixtures.py, real PyTorch exports) and the shipped
 * CNN (examples/models/cnn.onnx: two 2×2 average pools, one before a
 * padded Conv, one before a flattening Gemm). For each fold: the folded
 * layer computes exactly what the pool and the layer computed (the same
 * linear map, run on the same input), its operations become additions, the
 * spiking network's readout matches the one with the pools, and the energy
 * estimate drops; the refusals keep their Pool2d layer. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snn/ir/snn_ir.h"

static nc_snn *convert(const char *model, const char *calib, int keep, nc_convert_report **rep)
{
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(model), NULL, &m));
    nc_tensor *x = nc_test_load_f32(calib);
    nc_convert_options o;
    nc_convert_options_init(&o);
    o.keep_avgpool = keep;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &o, &s, rep));
    nc_tensor_free(x);
    nc_model_free(m);
    return s;
}

static int count_kind(const nc_snn *s, nc_snn_layer_kind k)
{
    int n = 0;
    for (int i = 0; i < s->n_layers; i++)
        n += s->layers[i].kind == k;
    return n;
}

static int count_notes(const nc_convert_report *r, const char *what)
{
    int n = 0;
    for (size_t i = 0; i < nc_convert_report_num_notes(r); i++)
        n += strstr(nc_convert_report_note(r, i), what) != NULL;
    return n;
}

/* Layers first..last of s (Pool2d, Flatten, Conv2d, Affine, each reading
 * the one before) as a network of their own reading x, whose shape is
 * that of first's input: its readout after one step is the linear map
 * itself (a static input is the same every step). */
static nc_tensor *linear_part(const nc_snn *s, int first, int last, const nc_tensor *x)
{
    const nc_snn_layer *In = &s->layers[s->layers[first].inputs[0]];
    nc_snn *t = NULL;
    NC_ASSERT_OK(nc_snn_create(In->ndim, In->shape, &t));
    int from = 0;
    for (int i = first; i <= last; i++) {
        const nc_snn_layer *L = &s->layers[i];
        assert_int_equal(L->inputs[0], i == first ? L->inputs[0] : i - 1);
        nc_conv2d_params cp = {{L->stride[0], L->stride[1]}, {L->padding[0], L->padding[1]},
                               {L->dilation[0], L->dilation[1]}, L->groups};
        switch (L->kind) {
        case NC_SNN_POOL2D:
            assert_false(L->div_taps);
            NC_ASSERT_OK(nc_snn_add_pool2d(t, from, L->kernel, L->stride, L->padding, L->scale, NULL, &from));
            break;
        case NC_SNN_FLATTEN: NC_ASSERT_OK(nc_snn_add_flatten(t, from, NULL, &from)); break;
        case NC_SNN_CONV2D: NC_ASSERT_OK(nc_snn_add_conv2d(t, from, L->weight, L->bias, &cp, NULL, &from)); break;
        case NC_SNN_AFFINE: NC_ASSERT_OK(nc_snn_add_affine(t, from, L->weight, L->bias, NULL, &from)); break;
        default: fail_msg("layer '%s' of kind %s in a linear part", L->name, nc_snn_kind_name(L->kind));
        }
    }
    NC_ASSERT_OK(nc_snn_add_readout(t, from, NULL, &from));
    nc_session_options o = {.backend = "cpu", .timesteps = 1};
    nc_session *ss = NULL;
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_session_create(t, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    nc_session_free(ss);
    nc_snn_free(t);
    return y;
}

/* The first layer of the linear chain that ends at layer i and reads a
 * neuron layer (back through Pool2d and Flatten). */
static int chain_start(const nc_snn *s, int i)
{
    while (s->layers[i].kind != NC_SNN_INPUT) {
        int j = s->layers[i].inputs[0];
        nc_snn_layer_kind k = s->layers[j].kind;
        if (k != NC_SNN_POOL2D && k != NC_SNN_FLATTEN)
            return i;
        i = j;
    }
    return i;
}

/* Random values in [0, 4) of shape (4, layer's shape): spike counts, or anything a linear map takes. */
static nc_tensor *random_input(const nc_snn_layer *L, unsigned seed)
{
    int64_t shape[NC_MAX_DIMS] = {4};
    memcpy(shape + 1, L->shape, (size_t)L->ndim * sizeof *shape);
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, L->ndim + 1, shape, &x));
    float *d = nc_tensor_data(x);
    for (int64_t e = 0; e < nc_tensor_numel(x); e++) {
        seed = seed * 1103515245u + 12345u;
        d[e] = (float)((seed >> 16) % 4096) / 1024.0f;
    }
    return x;
}

/* Every synaptic layer of the folded network f that its counterpart in k
 * (the same name) reads through a Pool2d computes the same linear map over
 * the spikes; returns how many there were. Their operations are additions
 * in f, multiply-adds in k. */
static int check_folds_exact(const nc_snn *f, const nc_snn *k)
{
    char *fm = calloc((size_t)f->n_layers, 1), *km = calloc((size_t)k->n_layers, 1);
    assert_true(fm && km);
    nc_snn_mark_macs(f, 0, NC_ENCODING_DIRECT, fm);
    nc_snn_mark_macs(k, 0, NC_ENCODING_DIRECT, km);
    int folds = 0;
    for (int i = 0; i < f->n_layers; i++) {
        const nc_snn_layer *L = &f->layers[i];
        int j = nc_snn_find_layer(k, L->name), ks = j >= 0 ? chain_start(k, j) : -1;
        if ((L->kind != NC_SNN_CONV2D && L->kind != NC_SNN_AFFINE) || j < 0 || ks == j ||
            k->layers[ks].kind != NC_SNN_POOL2D)
            continue;
        int fs = chain_start(f, i);
        assert_int_equal(count_kind(f, NC_SNN_POOL2D) <= count_kind(k, NC_SNN_POOL2D), 1);
        const nc_snn_layer *spikes = &f->layers[f->layers[fs].inputs[0]];
        assert_true(nc_snn_kind_is_spiking(spikes->kind));
        nc_tensor *x = random_input(spikes, 29u + (unsigned)i);
        nc_tensor *yf = linear_part(f, fs, i, x), *yk = linear_part(k, ks, j, x);
        const float *a = nc_tensor_data_const(yf), *b = nc_tensor_data_const(yk);
        double worst = 0, scale = 0;
        assert_int_equal(nc_tensor_numel(yf), nc_tensor_numel(yk));
        for (int64_t e = 0; e < nc_tensor_numel(yf); e++) {
            worst = fmax(worst, fabs((double)a[e] - b[e]));
            scale = fmax(scale, fabs((double)b[e]));
        }
        printf("  %s (%s) reads '%s' directly; max |folded − pooled| %.3g (outputs up to %.3g)\n", L->name,
               nc_snn_kind_name(L->kind), spikes->name, worst, scale);
        assert_true(worst <= 1e-5 * fmax(scale, 1.0));
        assert_int_equal(fm[i], 0); /* additions now */
        assert_int_equal(km[j], 1); /* multiply-adds on pooled sums before */
        nc_tensor_free(x);
        nc_tensor_free(yf);
        nc_tensor_free(yk);
        folds++;
    }
    free(fm);
    free(km);
    return folds;
}

static nc_tensor *run_snn(const nc_snn *s, const nc_tensor *x, int T) { return nc_test_run(s, "cpu", x, T); }

/* Folded and kept: the same readout up to the odd spike that float
 * rounding moves, both approaching the ANN. */
static void check_spiking_same(const char *model, const char *xfile, const nc_snn *f, const nc_snn *k)
{
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(model), NULL, &m));
    nc_tensor *x = nc_test_load_f32(xfile), *ann = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann, 1));
    int T = 128;
    nc_tensor *yf = run_snn(f, x, T), *yk = run_snn(k, x, T);
    double between = 0;
    const float *a = nc_tensor_data_const(yf), *b = nc_tensor_data_const(yk);
    for (int64_t e = 0; e < nc_tensor_numel(yf); e++)
        between += fabs((double)a[e] - b[e]) / T / (double)nc_tensor_numel(yf);
    double gf = nc_test_mean_gap(yf, ann, T), gk = nc_test_mean_gap(yk, ann, T);
    double cf = nc_test_centred_cosine(yf, ann, T);
    printf("  %s at T = %d: mean |folded − kept| / T %.3g; mean gap to the ANN folded %.3g, kept %.3g; "
           "centred cosine folded %.4f\n", model, T, between, gf, gk, cf);
    assert_true(between <= 0.25 * gk + 1e-4);
    assert_true(gf <= 1.5 * gk + 1e-3);
    assert_true(cf > 0.99);
    nc_tensor_free(yf);
    nc_tensor_free(yk);
    nc_tensor_free(ann);
    nc_tensor_free(x);
    nc_model_free(m);
}

static void test_folds(void **state)
{
    (void)state;
    static const struct {
        const char *name, *x;
        int folds;
    } cases[] = {{"overlap", "x12", 2}, {"gap", "x8", 1}, {"mean", "x8", 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char model[128], xfile[128];
        snprintf(model, sizeof model, "tests/fixtures/poolfold/%s.onnx", cases[c].name);
        snprintf(xfile, sizeof xfile, "tests/fixtures/poolfold/%s.npy", cases[c].x);
        printf("%s:\n", cases[c].name);
        nc_convert_report *rf = NULL, *rk = NULL;
        nc_snn *f = convert(model, xfile, 0, &rf), *k = convert(model, xfile, 1, &rk);
        assert_int_equal(count_kind(f, NC_SNN_POOL2D), 0);
        assert_int_equal(count_kind(k, NC_SNN_POOL2D), cases[c].folds);
        assert_int_equal(count_notes(rf, "is folded into"), cases[c].folds);
        assert_int_equal(count_notes(rk, "is folded into") + count_notes(rk, "not folded"), 0);
        assert_int_equal(check_folds_exact(f, k), cases[c].folds);
        check_spiking_same(model, xfile, f, k);
        nc_snn_free(f);
        nc_snn_free(k);
        nc_convert_report_free(rf);
        nc_convert_report_free(rk);
    }
}

/* Poolings that stay: a padding that would read the row the pool drops (a
 * note says so), a 3×3 window (its 9 spikes' additions could cost more than
 * the one multiply-add of their sum), two readers, a pool of the input's
 * currents rather than spikes. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *name, *x;
        int notes;
    } cases[] = {{"odd", "x7", 1}, {"big", "x12", 0}, {"shared", "x12", 0}, {"input", "x12", 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char model[128], xfile[128];
        snprintf(model, sizeof model, "tests/fixtures/poolfold/%s.onnx", cases[c].name);
        snprintf(xfile, sizeof xfile, "tests/fixtures/poolfold/%s.npy", cases[c].x);
        nc_convert_report *r = NULL;
        nc_snn *s = convert(model, xfile, 0, &r);
        assert_int_equal(count_kind(s, NC_SNN_POOL2D), 1);
        assert_int_equal(count_notes(r, "is folded into"), 0);
        assert_int_equal(count_notes(r, "is not folded into"), cases[c].notes);
        if (cases[c].notes)
            assert_non_null(strstr(nc_convert_report_note(r, 0), "zero padding would cover inputs the pooling "
                                                                 "leaves out"));
        nc_snn_free(s);
        nc_convert_report_free(r);
    }
}

/* The shipped CNN: both pools fold (the second Conv becomes 6×6 of stride
 * 2, fc1 reads the second IF layer's spikes), the same maps exactly, and at
 * T = 8 on the 256 shipped test images the same accuracy for less energy. */
static void test_shipped_cnn(void **state)
{
    (void)state;
    const char *model = "examples/models/cnn.onnx", *xfile = "examples/data/fmnist_test_x.npy";
    nc_snn *f = convert(model, xfile, 0, NULL), *k = convert(model, xfile, 1, NULL);
    assert_int_equal(count_kind(f, NC_SNN_POOL2D), 0);
    assert_int_equal(count_kind(k, NC_SNN_POOL2D), 2);
    assert_int_equal(check_folds_exact(f, k), 2);

    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(model), NULL, &m));
    nc_tensor *x = nc_test_load_f32(xfile), *y = NULL;
    NC_ASSERT_OK(nc_data_load(nc_test_src("examples/data/fmnist_test_y.npy"), NC_DTYPE_I64, &y));
    nc_eval_options eo;
    nc_eval_options_init(&eo);
    eo.backend = "cpu-fast";
    eo.timesteps = 8;
    nc_eval_result *ef = NULL, *ek = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(f, m, x, y, &eo, &ef));
    NC_ASSERT_OK(nc_snn_evaluate(k, m, x, y, &eo, &ek));
    nc_eval_cost cf, ck;
    NC_ASSERT_OK(nc_eval_result_cost(ef, &cf));
    NC_ASSERT_OK(nc_eval_result_cost(ek, &ck));
    double af = nc_eval_result_accuracy_at(ef, 8), ak = nc_eval_result_accuracy_at(ek, 8);
    printf("shipped CNN at T = 8: folded %.2f %% at %.3g µJ (%.3g M adds + %.3g M MACs), kept %.2f %% at %.3g µJ "
           "(%.3g M adds + %.3g M MACs)\n", 100 * af, cf.snn_joules * 1e6, cf.synaptic_adds * 1e-6,
           cf.synaptic_macs * 1e-6, 100 * ak, ck.snn_joules * 1e6, ck.synaptic_adds * 1e-6,
           ck.synaptic_macs * 1e-6);
    assert_true(fabs(af - ak) <= 0.02);
    assert_true(cf.snn_joules < 0.6 * ck.snn_joules);
    assert_true(cf.synaptic_adds > ck.synaptic_adds); /* more operations, but additions */
    nc_eval_result_free(ef);
    nc_eval_result_free(ek);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_model_free(m);
    nc_snn_free(f);
    nc_snn_free(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_folds),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_shipped_cnn),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
