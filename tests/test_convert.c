/* ANN → SNN conversion (nc_convert): BN folding, the QCFS pattern, the
 * first layer's exact spike counts, refusals, MaxPool, Clip, binary spikes,
 * calibration statistics, and accuracy of the shipped examples. Fixtures:
 * tests/fixtures/convert/ (scripts/make_convert_fixtures.py, real PyTorch
 * exports) and examples/. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/calibrate.h"
#include "convert/convert_graph.h"
#include "convert/ann/ann_exec.h"
#include "convert/ann/model.h"
#include "snn/base/json_read.h"
#include "snn/ir/snn_ir.h"

static nc_model *load(const char *rel)
{
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(rel), NULL, &m));
    return m;
}

/* The first n rows of x as a new tensor. */
static nc_tensor *rows(const nc_tensor *x, int64_t n)
{
    int64_t shape[NC_MAX_DIMS];
    memcpy(shape, nc_tensor_shape(x), sizeof shape);
    shape[0] = n;
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, nc_tensor_ndim(x), shape, nc_tensor_data_const(x), &t));
    return t;
}

/* Every value of the ANN on x (the caller frees with free_all). */
static nc_tensor **ann_all(const nc_model *m, const nc_tensor *x)
{
    nc_tensor **all = calloc((size_t)m->g->n_values, sizeof *all);
    nc_tensor *outs[8] = {0};
    const nc_tensor *ins[1] = {x};
    assert_non_null(all);
    NC_ASSERT_OK(nc_graph_execute(m->g, ins, outs, all, NULL));
    for (int i = 0; i < m->g->n_outputs; i++)
        nc_tensor_free(outs[i]);
    return all;
}

static void free_all(const nc_model *m, nc_tensor **all)
{
    for (int v = 0; v < m->g->n_values; v++)
        nc_tensor_free(all[v]);
    free(all);
}

/* The tensor of the first output of the ANN node named `node`. */
static const nc_tensor *node_out(const nc_model *m, nc_tensor **all, const char *node)
{
    for (int i = 0; i < m->g->n_nodes; i++)
        if (strcmp(m->g->nodes[i].name, node) == 0)
            return all[m->g->nodes[i].outputs[0]];
    fail_msg("no node '%s'", node);
    return NULL;
}

/* Runs s on x for T steps recording `layer`; returns its trace of `kind`. */
static nc_tensor *trace(const nc_snn *s, const nc_tensor *x, int T, const char *layer, nc_trace_kind kind)
{
    const char *rec[1] = {layer};
    nc_session_options o = {.timesteps = T, .record = rec, .n_record = 1};
    nc_session *ss = NULL;
    nc_tensor *y = NULL, *tr = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    NC_ASSERT_OK(nc_session_trace(ss, layer, kind, &tr));
    nc_tensor_free(y);
    nc_session_free(ss);
    return tr;
}

static const nc_snn_layer *layer_named(const nc_snn *s, const char *name)
{
    int id = nc_snn_find_layer(s, name);
    if (id < 0)
        fail_msg("no SNN layer '%s'", name);
    return &s->layers[id];
}

/* The calibrated clip of an IF layer's neuron i: θ times the most spikes a
 * step (conversion divides the clip by its burst, default 2). */
static double clip_of(const nc_snn_layer *I, int64_t i)
{
    return (double)nc_f32(I->threshold)[i % I->threshold->numel] * nc_snn_layer_burst(I);
}

static int count_kind(const nc_snn *s, nc_snn_layer_kind k)
{
    int n = 0;
    for (int i = 0; i < s->n_layers; i++)
        n += s->layers[i].kind == k;
    return n;
}

/* The report's IF layers with threshold rule `rule`. */
static int count_rule(const nc_convert_report *r, nc_threshold_rule rule)
{
    int n = 0;
    for (int i = 0; i < nc_convert_report_num_layers(r); i++) {
        nc_convert_layer_info L;
        NC_ASSERT_OK(nc_convert_report_layer(r, i, &L));
        n += L.rule == rule;
    }
    return n;
}

/* The report's IF layers whose bias (which = 0) or potential (1) correction ran. */
static int count_corrected(const nc_convert_report *r, int which)
{
    int n = 0;
    for (int i = 0; i < nc_convert_report_num_layers(r); i++) {
        nc_convert_layer_info L;
        NC_ASSERT_OK(nc_convert_report_layer(r, i, &L));
        n += !isnan(which ? L.potential_shift : L.bias_shift);
    }
    return n;
}

static int has_note(const nc_convert_report *r, const char *text)
{
    for (size_t i = 0; i < nc_convert_report_num_notes(r); i++)
        if (strstr(nc_convert_report_note(r, i), text))
            return 1;
    return 0;
}

static nc_convert_summary summary_of(const nc_convert_report *r)
{
    nc_convert_summary S;
    NC_ASSERT_OK(nc_convert_report_summary(r, &S));
    return S;
}

static nc_convert_layer_info report_layer(const nc_convert_report *r, const char *name)
{
    for (int i = 0; i < nc_convert_report_num_layers(r); i++) {
        nc_convert_layer_info L;
        NC_ASSERT_OK(nc_convert_report_layer(r, i, &L));
        if (strcmp(L.name, name) == 0)
            return L;
    }
    fail_msg("no layer '%s' in the report", name);
    nc_convert_layer_info none = {0};
    return none;
}

/* The report's JSON holds what the accessors give: read back with the
 * library's JSON reader, each "layers" entry and the summary agree. */
static void check_report_json(const nc_convert_report *r)
{
    const char *text = nc_convert_report_json(r);
    nc_json_doc *d = NULL;
    NC_ASSERT_OK(nc_json_parse(text, strlen(text), "report", 0, 0, &d));
    const nc_json_value *root = nc_json_root(d), *layers = nc_json_get(d, root, "layers");
    assert_non_null(layers);
    assert_int_equal(layers->n, nc_convert_report_num_layers(r));
    int i = 0;
    for (const nc_json_value *e = nc_json_first(d, layers); e; e = nc_json_next(d, e), i++) {
        nc_convert_layer_info L;
        NC_ASSERT_OK(nc_convert_report_layer(r, i, &L));
        assert_string_equal(nc_json_get(d, e, "name")->str, L.name);
        assert_true(nc_json_get(d, e, "neurons")->num == (double)L.neurons);
        static const char *rules[] = {"calibration", "clip", "qcfs"};
        assert_string_equal(nc_json_get(d, e, "rule")->str, rules[L.rule]);
        assert_string_equal(nc_json_get(d, e, "source")->str, L.source);
        const nc_json_value *th = nc_json_get(d, e, "threshold");
        if (L.threshold_channels == 1) {
            assert_true(th->type == NC_JSON_NUMBER && (float)th->num == (float)L.threshold_min);
        } else {
            assert_true(nc_json_get(d, th, "channels")->num == (double)L.threshold_channels);
            assert_true((float)nc_json_get(d, th, "min")->num == (float)L.threshold_min);
            assert_true((float)nc_json_get(d, th, "max")->num == (float)L.threshold_max);
        }
        assert_int_equal(nc_json_get(d, e, "threshold_before_finetune") != NULL, L.finetuned);
        assert_int_equal(nc_json_get(d, e, "bias_correction_mean_shift") != NULL, !isnan(L.bias_shift));
        assert_int_equal(nc_json_get(d, e, "potential_correction_mean_shift") != NULL, !isnan(L.potential_shift));
        assert_int_equal(nc_json_get(d, e, "activation_max") != NULL, !isnan(L.activation_max));
        assert_int_equal(nc_json_get(d, e, "ann_nodes")->n, L.n_ann_nodes);
    }
    nc_convert_summary S = summary_of(r);
    const nc_json_value *cal = nc_json_get(d, root, "calibration"), *snn = nc_json_get(d, root, "snn");
    if (S.if_layers_data_free > 0)
        assert_true(nc_json_get(d, cal, "data_free")->num == 1);
    else if (S.calib_samples == 0)
        assert_int_equal(cal->type, NC_JSON_NULL);
    else
        assert_true(nc_json_get(d, cal, "samples_used")->num == (double)S.calib_samples);
    assert_true(nc_json_get(d, snn, "layers")->num == S.layers);
    assert_true(nc_json_get(d, snn, "if_layers")->num == S.if_layers);
    assert_true(nc_json_get(d, snn, "scale_layers")->num == S.scale_layers);
    assert_string_equal(nc_json_get(d, snn, "readout")->str, S.readout);
    assert_int_equal(nc_json_get(d, root, "warnings")->n, (int)nc_convert_report_num_warnings(r));
    assert_int_equal(nc_json_get(d, root, "notes")->n, (int)nc_convert_report_num_notes(r));
    nc_json_doc_free(d);
}

/* Σ over groups of `group` consecutive neurons (a channel: its plane; a
 * neuron: 1) of |mean ANN activation a clipped to [0, θ] − mean SNN output
 * rate·θ over T steps| of IF layer `layer` (per-layer θ), over x's samples. */
static double mean_error(const nc_snn *net, const nc_tensor *x, const nc_tensor *a, int T, const char *layer,
                         int64_t group)
{
    const nc_snn_layer *I = layer_named(net, layer);
    float th = ((const float *)I->threshold->data)[0];
    nc_tensor *spk = trace(net, x, T, layer, NC_TRACE_SPIKES);
    const float *av = nc_tensor_data_const(a), *sv = nc_tensor_data_const(spk);
    int64_t n = nc_tensor_numel(a), size = nc_snn_layer_size(I);
    double err = 0;
    for (int64_t g = 0; g < size; g += group) {
        double ann = 0, snn = 0;
        for (int64_t i = 0; i < n; i++) {
            if ((i % size) / group != g / group)
                continue;
            ann += av[i] < 0 ? 0 : (av[i] > th ? th : av[i]);
            for (int t = 0; t < T; t++)
                snn += sv[t * n + i] * th / T;
        }
        err += fabs(ann - snn);
    }
    nc_tensor_free(spk);
    return err;
}

/* ---------------------------------------------------------------- BN folding */

/* The SNN's first synaptic layer at step 1 (its output is the ANN's BN
 * output, BN folded in) against the ANN. */
static void expect_folded(const char *model, const char *snn_layer, const char *bn_node)
{
    nc_model *m = load(model);
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    nc_tensor **all = ann_all(m, x);
    const nc_tensor *ref = node_out(m, all, bn_node);
    nc_tensor *tr = trace(s, x, 1, snn_layer, NC_TRACE_MEMBRANE);
    assert_int_equal(nc_tensor_numel(tr), nc_tensor_numel(ref));
    const float *a = nc_tensor_data_const(ref), *b = nc_tensor_data_const(tr);
    double worst = 0.0;
    for (int64_t i = 0; i < nc_tensor_numel(ref); i++) {
        double d = fabs((double)a[i] - b[i]) / fmax(1.0, fabs(a[i]));
        worst = d > worst ? d : worst;
    }
    if (!(worst < 1e-5))
        fail_msg("%s: BN folding changes '%s' by %g", model, bn_node, worst);
    nc_tensor_free(tr);
    free_all(m, all);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_model_free(m);
}

static void test_bn_folding(void **state)
{
    (void)state;
    /* BN at the input folds forward into conv1, bn1 back into it */
    expect_folded("tests/fixtures/convert/bn.onnx", "/conv1/Conv", "/bn1/BatchNormalization");
    expect_folded("tests/fixtures/convert/mlp_bn.onnx", "/net/net.1/Gemm", "/net/net.2/BatchNormalization");

    /* no layer is left for any of the four BatchNormalization nodes */
    nc_model *m = load("tests/fixtures/convert/bn.onnx");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    /* (the average pool after the first IF layer folds into conv2: test_convert_poolfold.c) */
    static const nc_snn_layer_kind want[] = {NC_SNN_INPUT, NC_SNN_CONV2D, NC_SNN_SIGNED_IF,
                                             NC_SNN_CONV2D, NC_SNN_SIGNED_IF,NC_SNN_FLATTEN, NC_SNN_AFFINE,
                                             NC_SNN_SIGNED_IF, NC_SNN_AFFINE, NC_SNN_READOUT};
    assert_int_equal(s->n_layers, sizeof want / sizeof want[0]);
    for (int i = 0; i < s->n_layers; i++)
        assert_int_equal(s->layers[i].kind, want[i]);
    assert_int_equal(nc_snn_output_layer(s), s->n_layers - 1);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* ---------------------------------------------------------------- QCFS */

static void expect_qcfs(const char *model, int L, const float lam[3])
{
    nc_model *m = load(model);
    nc_snn *s = NULL;
    nc_convert_report *r = NULL;
    /* no calibration data: every threshold comes from the pattern */
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, NULL, &s, &r));
    static const char *names[3] = {"/act1", "/act2", "/act3"};
    for (int k = 0; k < 3; k++) {
        const nc_snn_layer *I = layer_named(s, names[k]);
        assert_int_equal(I->kind, NC_SNN_SIGNED_IF);
        assert_int_equal(I->threshold->numel, 1);
        float got = ((const float *)I->threshold->data)[0];
        if (memcmp(&got, &lam[k], sizeof got) != 0)
            fail_msg("%s: θ of %s is %.9g, λ is %.9g", model, names[k], (double)got, (double)lam[k]);
    }
    assert_int_equal(count_kind(s, NC_SNN_SIGNED_IF), 3);
    assert_int_equal(count_rule(r, NC_THRESHOLD_RULE_QCFS), 3);
    assert_int_equal(summary_of(r).levels, L);
    for (int k = 0; k < 3; k++)
        assert_int_equal(report_layer(r, names[k]).levels, L);
    check_report_json(r);

    /* With T = L, v(0) = θ/2 and a constant current, the first IF layer
     * emits exactly the QCFS ANN's level: h·L/λ spikes. */
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_tensor **all = ann_all(m, x);
    const nc_tensor *h = node_out(m, all, "/act1/Mul_1");
    nc_tensor *tr = trace(s, x, L, "/act1", NC_TRACE_SPIKES);
    int64_t n = nc_tensor_numel(h);
    assert_int_equal(nc_tensor_numel(tr), (int64_t)L * n);
    const float *sp = nc_tensor_data_const(tr), *hv = nc_tensor_data_const(h);
    for (int64_t i = 0; i < n; i++) {
        double count = 0;
        for (int t = 0; t < L; t++)
            count += sp[(int64_t)t * n + i];
        assert_int_equal((int64_t)count, (int64_t)lrint(hv[i] * L / lam[0]));
    }
    nc_tensor_free(tr);
    free_all(m, all);
    nc_tensor_free(x);
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_model_free(m);
}

static void test_qcfs_pattern(void **state)
{
    (void)state;
    /* tests/fixtures/convert/qcfs.json: λ as PyTorch stored them */
    static const float lam8[3] = {1.2345678f, 0.777f, 2.5f}, lam4[3] = {0.9876543f, 1.5f, 3.25f};
    expect_qcfs("tests/fixtures/convert/qcfs.onnx", 8, lam8);
    /* straight-through floor y + (floor(y) − y), clip after the floor, L = 4 */
    expect_qcfs("tests/fixtures/convert/qcfs_ste.onnx", 4, lam4);
}

/* ---------------------------------------------------------------- spike counts */

/* The first IF layer reads a constant current z (direct input), starts at
 * θ/2 and resets by subtraction: after T steps it has fired
 * clip(floor((T·z + θ/2)/θ), 0, B·T) times, exactly (B spikes a step at
 * most). */
static void expect_first_counts(const char *model, const char *syn, const char *ifl, int T, int per_channel)
{
    nc_model *m = load(model);
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_convert_options o = {.per_channel = per_channel};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &o, &s, NULL));
    const nc_snn_layer *I = layer_named(s, ifl);
    assert_int_equal(I->inputs[0], nc_snn_find_layer(s, syn));
    nc_tensor *z = trace(s, x, 1, syn, NC_TRACE_MEMBRANE), *sp = trace(s, x, T, ifl, NC_TRACE_SPIKES);
    int64_t n = nc_tensor_numel(z), size = nc_snn_layer_size(I);
    const float *zv = nc_tensor_data_const(z), *sv = nc_tensor_data_const(sp);
    int64_t fired = 0, saturated = 0;
    for (int64_t i = 0; i < n; i++) {
        double th = nc_snn_param(I->threshold, I, i % size, 1.0f);
        double want = floor(((double)T * zv[i] + th / 2) / th);
        double most = (double)T * nc_snn_layer_burst(I);
        want = want < 0 ? 0 : (want > most ? most : want);
        double got = 0;
        for (int t = 0; t < T; t++)
            got += sv[(int64_t)t * n + i];
        if (got != want)
            fail_msg("%s: neuron %lld: z = %.9g, θ = %.9g: %g spikes, expected %g", model, (long long)i,
                     (double)zv[i], th, got, want);
        fired += got > 0;
        saturated += got == (double)T * nc_snn_layer_burst(I);
    }
    assert_true(fired > n / 10); /* the case is not trivial */
    assert_true(saturated < n);
    nc_tensor_free(z);
    nc_tensor_free(sp);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_model_free(m);
}

static void test_first_layer_counts(void **state)
{
    (void)state;
    expect_first_counts("tests/fixtures/convert/mlp_bn.onnx", "/net/net.1/Gemm", "/net/net.3/Relu", 16, 0);
    expect_first_counts("tests/fixtures/convert/bn.onnx", "/conv1/Conv", "/Relu", 13, 1);
}

/* ---------------------------------------------------------------- refusals */

static void test_refusals(void **state)
{
    (void)state;
    nc_model *m = load("tests/fixtures/convert/leaky.onnx");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_snn *s = (nc_snn *)1;
    nc_convert_report *r = (nc_convert_report *)1;
    assert_int_equal(nc_convert(m, x, NULL, NULL, &s, &r), NC_ERR_UNSUPPORTED);
    assert_null(s);
    assert_null(r);
    const char *e = nc_last_error();
    assert_non_null(strstr(e, "leaky.onnx"));
    assert_non_null(strstr(e, "node '/act/LeakyRelu' (LeakyRelu)"));
    assert_non_null(strstr(e, "not convertible to IF neurons"));
    nc_model_free(m);

    /* Sigmoid, which no IF neuron computes, converts into a Nonlinear layer
     * (tests/test_convert_nonlinear.c), its output spiking again before the Gemm */
    m = load("tests/fixtures/convert/sigmoid.onnx");
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    int sig = nc_snn_find_layer(s, "/act/Sigmoid");
    assert_true(sig > 0);
    nc_snn_layer_info L;
    NC_ASSERT_OK(nc_snn_layer_at(s, sig, &L));
    assert_int_equal(L.kind, NC_SNN_NONLINEAR);
    assert_int_equal(L.nonlinear.fn, NC_NL_SIGMOID);
    NC_ASSERT_OK(nc_snn_layer_at(s, sig + 1, &L));
    assert_true(L.kind == NC_SNN_SIGNED_IF && L.two_sided);
    nc_snn_free(s);
    nc_model_free(m);

    /* data of the wrong shape is refused (a network no data-free rule reaches:
     * test_data_free) */
    m = load("tests/fixtures/convert/mlp_bn.onnx");
    nc_tensor *flat = NULL;
    int64_t shape[2] = {4, 64};
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, shape, &flat));
    assert_int_equal(nc_convert(m, flat, NULL, NULL, &s, NULL), NC_ERR_SHAPE);
    assert_null(s);
    nc_convert_options o = {.percentile = 101};
    assert_int_equal(nc_convert(m, x, NULL, &o, &s, NULL), NC_ERR_INVALID_ARG);
    nc_convert_options q = {.qcfs_epochs = 1};
    assert_int_equal(nc_convert(m, x, NULL, &q, &s, NULL), NC_ERR_INVALID_ARG); /* no labels */
    assert_non_null(strstr(nc_last_error(), "labels"));
    assert_int_equal(nc_convert(NULL, x, NULL, NULL, &s, NULL), NC_ERR_INVALID_ARG);
    nc_tensor_free(flat);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* Border layouts that need more than one scale or padding per layer. */
static void test_border_layouts(void **state)
{
    (void)state;
    /* average pools whose border windows average fewer inputs: per-window divisors */
    static const char *partial[] = {"avgpool_pad.onnx", "avgpool_ceil.onnx"};
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    for (size_t k = 0; k < sizeof partial / sizeof partial[0]; k++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/convert/%s", partial[k]);
        nc_model *m = load(path);
        nc_snn *s = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
        assert_int_equal(count_kind(s, NC_SNN_POOL2D), 1);
        for (int i = 0; i < s->n_layers; i++)
            if (s->layers[i].kind == NC_SNN_POOL2D)
                assert_true(s->layers[i].div_taps);
        nc_snn_free(s);
        nc_model_free(m);
    }

    /* a BN's shift before a zero-padded Conv cannot fold into it: the BN is a
     * 1×1 depthwise Conv2d of its own (tests/test_convert_zoo.c has more) */
    nc_model *m = load("tests/fixtures/convert/bn_pad.onnx");
    nc_snn *s = NULL;
    nc_convert_report *r = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, &r));
    assert_int_equal(s->layers[1].kind, NC_SNN_CONV2D);
    assert_int_equal(s->layers[1].groups, 1);
    assert_int_equal(s->layers[1].weight->shape[2], 1);
    assert_int_equal(s->layers[2].kind, NC_SNN_CONV2D);
    assert_int_equal(s->layers[2].padding[0], 1);
    assert_true(has_note(r, "1×1 depthwise layer"));
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_model_free(m);

    /* a final Softmax is dropped with a note: the readout reads the last Affine */
    m = load("tests/fixtures/convert/softmax.onnx");
    s = NULL;
    r = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, &r));
    const nc_snn_layer *out = &s->layers[nc_snn_output_layer(s)];
    assert_int_equal(out->kind, NC_SNN_READOUT);
    assert_int_equal(s->layers[out->inputs[0]].kind, NC_SNN_AFFINE);
    assert_true(has_note(r, "the final Softmax '/1/Softmax' was dropped"));
    assert_int_equal(nc_convert_report_num_warnings(r), 0);
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_model_free(m);
    nc_tensor_free(x);
}

/* ---------------------------------------------------------------- MaxPool, Clip */

static void test_maxpool(void **state)
{
    (void)state;
    nc_model *m = load("tests/fixtures/convert/maxpool.onnx");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_snn *s = NULL;
    nc_convert_report *r = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, &r));
    /* Conv → MaxPool2d (currents) → IF: the pool moved before the neuron */
    static const nc_snn_layer_kind want[] = {NC_SNN_INPUT,   NC_SNN_CONV2D,  NC_SNN_MAXPOOL2D, NC_SNN_SIGNED_IF,
                                             NC_SNN_FLATTEN, NC_SNN_AFFINE,  NC_SNN_READOUT};
    assert_int_equal(s->n_layers, sizeof want / sizeof want[0]);
    for (int i = 0; i < s->n_layers; i++)
        assert_int_equal(s->layers[i].kind, want[i]);
    assert_int_equal(nc_convert_report_num_warnings(r), 1);
    const char *w = nc_convert_report_warning(r, 0);
    assert_non_null(strstr(w, "MaxPool '/pool/MaxPool'"));
    assert_non_null(strstr(w, "does not commute with rate coding"));
    check_report_json(r);
    assert_string_equal(nc_convert_report_warning(r, 5), "");

    /* max commutes with ReLU: relu(max of currents) at step 1 is the ANN's MaxPool output */
    nc_tensor **all = ann_all(m, x);
    const nc_tensor *ref = node_out(m, all, "/pool/MaxPool");
    nc_tensor *tr = trace(s, x, 1, s->layers[2].name, NC_TRACE_MEMBRANE);
    assert_int_equal(nc_tensor_numel(tr), nc_tensor_numel(ref));
    for (int64_t i = 0; i < nc_tensor_numel(ref); i++)
        assert_float_equal(fmax(0.0, ((const float *)nc_tensor_data_const(tr))[i]),
                           ((const float *)nc_tensor_data_const(ref))[i], 1e-6);
    nc_tensor_free(tr);
    free_all(m, all);

    /* NIR has no max pooling: average pooling in the standard graph, a
       neuroc extension node in the exact one; strict mode refuses the approximation */
    char path[4096];
    snprintf(path, sizeof path, "%s/test_convert_maxpool.nir", NC_BINARY_DIR);
    NC_ASSERT_OK(nc_snn_save_nir(s, path));
    remove(path);
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = 1;
    assert_int_equal(nc_snn_save_nir_with(s, path, &so), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "max pooling is average pooling"));
    nc_snn_free(s);
    nc_convert_report_free(r);

    /* --maxpool average: an average pool of the spikes, saved as NIR (kept:
     * by default it folds into the Gemm after it, test_convert_poolfold.c) */
    nc_convert_options o = {.maxpool = NC_MAXPOOL_AVERAGE, .keep_avgpool = 1};
    NC_ASSERT_OK(nc_convert(m, x, NULL, &o, &s, &r));
    assert_int_equal(count_kind(s, NC_SNN_MAXPOOL2D), 0);
    assert_int_equal(s->layers[3].kind, NC_SNN_POOL2D);
    assert_float_equal(s->layers[3].scale, 0.25, 0);
    assert_int_equal(nc_convert_report_num_warnings(r), 1);
    assert_non_null(strstr(nc_convert_report_warning(r, 0), "replaced by average pooling"));
    NC_ASSERT_OK(nc_snn_save_nir(s, path));
    remove(path);
    nc_snn_free(s);
    nc_convert_report_free(r);
    nc_tensor_free(x);
    nc_model_free(m);
}

static nc_tensor *run_sum(const nc_snn *s, const nc_tensor *x, int T);

/* Mean |readout / T − ANN logits| of s over x. */
static double logit_error(const nc_snn *s, const nc_tensor *x, const nc_tensor *logits, int T)
{
    nc_tensor *y = run_sum(s, x, T);
    const float *a = nc_tensor_data_const(logits), *b = nc_tensor_data_const(y);
    int64_t n = nc_tensor_numel(logits);
    assert_int_equal(nc_tensor_numel(y), n);
    double err = 0;
    for (int64_t i = 0; i < n; i++)
        err += fabs(b[i] / T - a[i]);
    nc_tensor_free(y);
    return err / (double)n;
}

/* Conv-ReLU-MaxPool-Conv-ReLU-MaxPool-Linear: by default the first MaxPool
 * pools the input's currents (constant: exact) and the second, of spikes,
 * is a SpikeMaxPool2d whose readout approaches the ANN's logits as T grows;
 * --maxpool currents pools the second's spike-driven currents and does not
 * converge. Thresholds at the maximum: no clipping error. */
static void test_spike_maxpool(void **state)
{
    (void)state;
    nc_model *m = load("tests/fixtures/convert/maxpool2.onnx");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_tensor **all = ann_all(m, x);
    const nc_tensor *logits = node_out(m, all, "/7/Gemm");
    double err[2][2];
    for (int mode = 0; mode < 2; mode++) {
        nc_convert_options o;
        nc_convert_options_init(&o);
        assert_int_equal(o.maxpool, NC_MAXPOOL_SPIKES);
        o.method = NC_THRESHOLD_MAX;
        if (mode)
            o.maxpool = NC_MAXPOOL_CURRENTS;
        nc_snn *s = NULL;
        nc_convert_report *r = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, &o, &s, &r));
        assert_int_equal(count_kind(s, NC_SNN_MAXPOOL2D), mode ? 2 : 1);
        assert_int_equal(count_kind(s, NC_SNN_SPIKEMAXPOOL2D), mode ? 0 : 1);
        assert_int_equal(s->layers[2].kind, NC_SNN_MAXPOOL2D); /* before the first IF either way */
        assert_int_equal(nc_convert_report_num_warnings(r), 2);
        assert_non_null(strstr(nc_convert_report_warning(r, 0), "exact"));
        assert_null(strstr(nc_convert_report_warning(r, 1), "exact"));
        assert_non_null(strstr(nc_convert_report_warning(r, 1), mode ? "overshoots" : "SpikeMaxPool2d"));
        check_report_json(r);
        err[mode][0] = logit_error(s, x, logits, 16);
        err[mode][1] = logit_error(s, x, logits, 256);
        print_message("maxpool %s: mean |readout/T - logit| %.4f at T = 16, %.4f at T = 256\n",
                      mode ? "currents" : "spikes", err[mode][0], err[mode][1]);
        nc_snn_free(s);
        nc_convert_report_free(r);
    }
    assert_true(err[0][1] < 0.25 * err[0][0]);
    assert_true(err[0][1] < 0.25 * err[1][1]);
    /* binary spikes: θ passes through the pool into the Linear's weights, the spikes stay the same */
    nc_convert_options ob;
    nc_convert_options_init(&ob);
    nc_snn *sv = NULL, *sb = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &ob, &sv, NULL));
    ob.binary_spikes = 1;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &ob, &sb, NULL));
    assert_int_equal(sb->n_layers, sv->n_layers); /* no scale layer inserted */
    assert_int_equal(count_kind(sb, NC_SNN_SPIKEMAXPOOL2D), 1);
    nc_tensor *yv = run_sum(sv, x, 16), *yb = run_sum(sb, x, 16);
    for (int64_t i = 0; i < nc_tensor_numel(yv); i++)
        assert_float_equal(((const float *)nc_tensor_data_const(yb))[i],
                           ((const float *)nc_tensor_data_const(yv))[i], 1e-4);
    nc_tensor_free(yv);
    nc_tensor_free(yb);
    nc_snn_free(sb);
    /* QCFS fine-tuning trains rates, where the pool is the max of its inputs' rates */
    int64_t n = 16, lab[16];
    for (int i = 0; i < 16; i++)
        lab[i] = i % 10;
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, &n, lab, &y));
    nc_convert_options oq = {.maxpool = NC_MAXPOOL_SPIKES, .qcfs_epochs = 1, .qcfs_batch = 8};
    nc_convert_report *rq = NULL;
    NC_ASSERT_OK(nc_convert(m, x, y, &oq, &sb, &rq));
    assert_int_equal(count_kind(sb, NC_SNN_SPIKEMAXPOOL2D), 1);
    assert_true(report_layer(rq, "/4/Relu").finetuned);
    for (int i = 0; i < nc_convert_report_num_layers(rq); i++) { /* QCFS trains one spike a step: no bursts */
        nc_convert_layer_info L;
        NC_ASSERT_OK(nc_convert_report_layer(rq, i, &L));
        assert_int_equal(L.max_spikes, 1);
    }
    nc_convert_report_free(rq);
    nc_snn_free(sb);
    nc_finetune_options fo;
    nc_finetune_options_init(&fo);
    fo.timesteps = 4;
    fo.epochs = 1;
    NC_ASSERT_OK(nc_snn_finetune(sv, x, y, NULL, NULL, &fo)); /* BPTT trains through the pool too (test_train) */
    nc_tensor_free(y);
    nc_snn_free(sv);
    /* NULL options are the defaults too */
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    assert_int_equal(count_kind(s, NC_SNN_SPIKEMAXPOOL2D), 1);
    nc_snn_free(s);
    free_all(m, all);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* The IF layer a spiking max pool reads sends bursts like the others (the
 * pool counts them in spikes): maxpool2.onnx with bursts of 4 gives
 * /4/Relu (read by the SpikeMaxPool2d) bursts of 4 too, and its readout at
 * T = 32 is closer to the ANN's logits than with one spike a step there
 * (as the converter left it before: that layer's bursts undone, θ back to
 * its clip) or everywhere; the default (measured) burst gives every
 * SignedIF the same bursts. */
static void test_spike_maxpool_bursts(void **state)
{
    (void)state;
    nc_model *m = load("tests/fixtures/convert/maxpool2.onnx");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_tensor **all = ann_all(m, x);
    const nc_tensor *logits = node_out(m, all, "/7/Gemm");
    double err[2];
    for (int k = 0; k < 2; k++) {
        nc_convert_options o;
        nc_convert_options_init(&o);
        o.method = NC_THRESHOLD_MAX;
        o.burst = k ? 4 : 1;
        nc_snn *s = NULL;
        nc_convert_report *r = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, &o, &s, &r));
        assert_int_equal(count_kind(s, NC_SNN_SPIKEMAXPOOL2D), 1);
        assert_int_equal(report_layer(r, "/4/Relu").max_spikes, k ? 4 : 1);
        err[k] = logit_error(s, x, logits, 32);
        print_message("bursts of %d into the spiking max pool: mean |readout/T - logit| %.4f at T = 32\n",
                      o.burst, err[k]);
        if (k) { /* one spike a step into the pool, bursts of 4 elsewhere */
            nc_snn_layer *L = &s->layers[nc_snn_find_layer(s, "/4/Relu")];
            L->max_spikes = 0;
            nc_tensor *ts[3] = {L->threshold, L->v_init, L->spike_value};
            for (int t = 0; t < 3; t++)
                for (int64_t j = 0; ts[t] && j < ts[t]->numel; j++)
                    nc_f32(ts[t])[j] *= 4.0f;
            double single = logit_error(s, x, logits, 32);
            print_message("one spike a step into the pool, bursts of 4 elsewhere: %.4f at T = 32\n", single);
            assert_true(err[1] < 0.5 * single);
        }
        nc_snn_free(s);
        nc_convert_report_free(r);
    }
    assert_true(err[1] < 0.5 * err[0]);
    nc_convert_report *r = NULL;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, &r));
    int B = report_layer(r, "/1/Relu").max_spikes;
    assert_true(B >= 2);
    assert_int_equal(report_layer(r, "/4/Relu").max_spikes, B);
    nc_snn_free(s);
    nc_convert_report_free(r);
    free_all(m, all);
    nc_tensor_free(x);
    nc_model_free(m);
}

static nc_tensor *filled(int ndim, const int64_t *shape, float scale, float offset, unsigned seed);

/* Clip(0, c): c caps θ; without data or statistics θ = c, with data the
 * calibration chooses θ below c when the activations stay small. */
static void test_clip(void **state)
{
    (void)state;
    static const char *models[] = {"tests/fixtures/convert/relu6.onnx", "tests/fixtures/convert/relu6_op9.onnx"};
    for (int k = 0; k < 2; k++) {
        nc_model *m = load(models[k]);
        nc_snn *s = NULL;
        nc_convert_report *r = NULL;
        NC_ASSERT_OK(nc_convert(m, NULL, NULL, NULL, &s, &r)); /* no data, no BN: θ = 6 */
        const nc_snn_layer *I = layer_named(s, "/act/Clip");
        assert_int_equal(I->threshold->numel, 1);
        assert_true(clip_of(I, 0) == 6.0);
        assert_int_equal(count_rule(r, NC_THRESHOLD_RULE_CLIP), 1);
        assert_string_equal(report_layer(r, "/act/Clip").source, "clip");
        assert_true(report_layer(r, "/act/Clip").threshold_cap == 6.0);
        assert_int_equal(summary_of(r).calib_samples, 0);
        assert_int_equal(summary_of(r).calib_batch, 0);
        check_report_json(r);
        nc_convert_report_free(r);
        nc_snn_free(s);

        /* small inputs: activations far below 6, θ is their percentile */
        int64_t shape[4] = {64, 1, 8, 8};
        nc_tensor *x = filled(4, shape, 0.2f, 0.0f, 7u);
        NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, &r));
        I = layer_named(s, "/act/Clip");
        double th = clip_of(I, 0);
        assert_true(th > 0.0 && th < 6.0);
        assert_int_equal(count_rule(r, NC_THRESHOLD_RULE_CLIP), 1);
        assert_string_equal(report_layer(r, "/act/Clip").source, "data");
        assert_true(fabs(report_layer(r, "/act/Clip").layer_statistic - (double)th) <= 1e-6 * th);
        check_report_json(r);
        nc_convert_report_free(r);
        nc_snn_free(s);
        nc_tensor_free(x);

        /* large inputs: the percentile lies at the clip, θ = 6 */
        x = filled(4, shape, 2000.0f, -1000.0f, 7u);
        NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, &r));
        assert_true(clip_of(layer_named(s, "/act/Clip"), 0) == 6.0);
        nc_convert_report_free(r);
        nc_snn_free(s);
        nc_tensor_free(x);
        nc_model_free(m);
    }
}

/* ---------------------------------------------------------------- binary spikes */

static nc_tensor *filled(int ndim, const int64_t *shape, float scale, float offset, unsigned seed)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, ndim, shape, &t));
    float *d = nc_tensor_data(t);
    for (int64_t i = 0; i < nc_tensor_numel(t); i++) {
        seed = seed * 1103515245u + 12345u;
        d[i] = offset + scale * (float)((seed >> 8) & 0xffff) / 65536.0f;
    }
    return t;
}

static nc_tensor *run_sum(const nc_snn *s, const nc_tensor *x, int T) { return nc_test_run(s, NULL, x, T); }

/* A residual net: an IF feeding an Add needs a scale layer once spikes are binary. */
static void test_binary_spikes(void **state)
{
    (void)state;
    int64_t in_shape[3] = {2, 5, 5}, w1[4] = {3, 2, 3, 3}, w2[4] = {3, 3, 3, 3}, c3 = 3, wf[2] = {4, 75};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &s));
    nc_tensor *W1 = filled(4, w1, 1.0f, -0.3f, 1), *W2 = filled(4, w2, 0.8f, -0.4f, 2);
    nc_tensor *Wf = filled(2, wf, 1.0f, -0.5f, 3);
    nc_tensor *th1 = filled(1, &c3, 0.5f, 0.6f, 4), *th2 = NULL;
    float t2 = 0.9f;
    int64_t one = 1;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &one, &t2, &th2));
    nc_conv2d_params p = {.padding = {1, 1}};
    int c1, i1, cv2, add[2], a, i2, pool, fl, fc, ro;
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, W1, NULL, &p, "c1", &c1));
    nc_if_params ip1 = {.threshold = th1};
    NC_ASSERT_OK(nc_snn_add_if(s, c1, &ip1, "i1", &i1));
    NC_ASSERT_OK(nc_snn_add_conv2d(s, i1, W2, NULL, &p, "c2", &cv2));
    add[0] = cv2;
    add[1] = i1;
    NC_ASSERT_OK(nc_snn_add_add(s, 2, add, "add", &a));
    nc_if_params ip2 = {.threshold = th2};
    NC_ASSERT_OK(nc_snn_add_if(s, a, &ip2, "i2", &i2));
    int64_t k[2] = {1, 1};
    NC_ASSERT_OK(nc_snn_add_pool2d(s, i2, k, k, NULL, 1.0f, "pool", &pool));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool, "flat", &fl));
    NC_ASSERT_OK(nc_snn_add_affine(s, fl, Wf, NULL, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "out", &ro));

    nc_snn *b = NULL;
    int n_scale = -1;
    NC_ASSERT_OK(nc_snn_fold_spike_values(s, &b, &n_scale));
    assert_int_equal(n_scale, 1);
    assert_int_equal(b->n_layers, s->n_layers + 1);
    const nc_snn_layer *sc = layer_named(b, "i1_scale");
    assert_int_equal(sc->kind, NC_SNN_CONV2D);
    assert_int_equal(sc->groups, 3);
    for (int i = 0; i < b->n_layers; i++)
        if (b->layers[i].kind == NC_SNN_IF)
            assert_true(((const float *)b->layers[i].spike_value->data)[0] == 1.0f);

    int64_t xs[4] = {3, 2, 5, 5};
    nc_tensor *x = filled(4, xs, 1.0f, 0.0f, 5);
    nc_tensor *ya = run_sum(s, x, 20), *yb = run_sum(b, x, 20);
    for (int64_t i = 0; i < nc_tensor_numel(ya); i++)
        assert_float_equal(((float *)nc_tensor_data(ya))[i], ((float *)nc_tensor_data(yb))[i],
                           1e-4 * fmax(1.0, fabs(((float *)nc_tensor_data(ya))[i])));
    nc_tensor *ts[] = {W1, W2, Wf, th1, th2, x, ya, yb};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    nc_snn_free(b);
    nc_snn_free(s);

    /* through nc_convert: the report counts the scale layers, outputs agree */
    nc_model *m = load("tests/fixtures/convert/bn.onnx");
    nc_tensor *cx = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_convert_options o = {.binary_spikes = 1}, o0 = {0};
    nc_snn *s0 = NULL, *s1 = NULL;
    nc_convert_report *r = NULL;
    NC_ASSERT_OK(nc_convert(m, cx, NULL, &o0, &s0, NULL));
    NC_ASSERT_OK(nc_convert(m, cx, NULL, &o, &s1, &r));
    assert_int_equal(summary_of(r).scale_layers, 0);
    assert_int_equal(s0->n_layers, s1->n_layers);
    nc_tensor *y0 = run_sum(s0, cx, 16), *y1 = run_sum(s1, cx, 16);
    for (int64_t i = 0; i < nc_tensor_numel(y0); i++)
        assert_float_equal(((float *)nc_tensor_data(y0))[i], ((float *)nc_tensor_data(y1))[i],
                           1e-4 * fmax(1.0, fabs(((float *)nc_tensor_data(y0))[i])));
    nc_tensor_free(y0);
    nc_tensor_free(y1);
    nc_convert_report_free(r);
    nc_snn_free(s0);
    nc_snn_free(s1);
    nc_tensor_free(cx);
    nc_model_free(m);
}

/* ---------------------------------------------------------------- calibration */

static void test_histogram(void **state)
{
    (void)state;
    nc_hist *h = calloc(1, sizeof *h);
    float v[1000];
    for (int i = 0; i < 1000; i++)
        v[i] = (float)(i + 1); /* 1 .. 1000, added in two halves so the range doubles */
    nc_hist_add(h, v, 400);
    nc_hist_add(h, v + 400, 600);
    float zeros[1000] = {0};
    nc_hist_add(h, zeros, 1000);
    assert_int_equal(h->pos, 1000);
    assert_int_equal(h->zeros, 1000);
    assert_true(h->max == 1000.0);
    double bin = h->range / NC_CALIB_BINS;
    assert_true(bin <= 1000.0 / 1024);
    /* positives only: the 99.9th percentile of 1..1000 is 999; with the
     * zeros counted, the 99.9th of 2000 values is 998 */
    assert_float_equal(nc_hist_percentile(h, 99.9, 0), 999.0, bin);
    assert_float_equal(nc_hist_percentile(h, 99.9, 1), 998.0, bin);
    assert_float_equal(nc_hist_percentile(h, 50.0, 1), 0.0, 0.0);
    assert_float_equal(nc_hist_percentile(h, 100.0, 0), 1000.0, 0.0);
    free(h);

    /* every activation is 1.0 (or 0): only c = 1 quantises it exactly */
    h = calloc(1, sizeof *h);
    float ones[64];
    for (int i = 0; i < 64; i++)
        ones[i] = i % 4 ? 1.0f : 0.0f;
    nc_hist_add(h, ones, 64);
    for (int T = 1; T <= 32; T *= 4) /* exact to one bin */
        assert_float_equal(nc_hist_mse_clip(h, T), 1.0, h->range / NC_CALIB_BINS);
    free(h);
}

/* Per-channel thresholds, and the statistics the report states. */
static void test_calibration(void **state)
{
    (void)state;
    nc_model *m = load("tests/fixtures/convert/bn.onnx");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    nc_tensor **all = ann_all(m, x);
    const nc_tensor *a = node_out(m, all, "/Relu"); /* (16, 4, 6, 6) */
    float mx[4] = {0};
    for (int64_t i = 0; i < nc_tensor_numel(a); i++) {
        int c = (int)((i / 36) % 4);
        float v = ((const float *)nc_tensor_data_const(a))[i];
        mx[c] = v > mx[c] ? v : mx[c];
    }
    nc_convert_options o = {.method = NC_THRESHOLD_MAX, .per_channel = 1, .calib_samples = 100};
    nc_snn *s = NULL;
    nc_convert_report *r = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &o, &s, &r));
    const nc_snn_layer *I = layer_named(s, "/Relu");
    assert_int_equal(I->threshold->numel, 4);
    for (int c = 0; c < 4; c++)
        if (mx[c] > 0)
            assert_true(clip_of(I, c) == mx[c]);
    assert_int_equal(summary_of(r).calib_samples, 16);
    nc_convert_layer_info RL = report_layer(r, "/Relu");
    assert_int_equal(RL.rule, NC_THRESHOLD_RULE_CALIBRATION);
    assert_int_equal(RL.threshold_channels, 4);
    assert_true(RL.threshold_max * RL.max_spikes == fmax(fmax(mx[0], mx[1]), fmax(mx[2], mx[3])));
    assert_true(RL.activation_max >= RL.threshold_max);
    assert_true(RL.zero_fraction >= 0 && RL.zero_fraction <= 1);
    check_report_json(r);
    nc_convert_report_free(r);
    nc_snn_free(s);

    /* MSE and percentile thresholds lie in (0, max]; the percentile below the max */
    nc_convert_options om = {.method = NC_THRESHOLD_MSE, .timesteps = 4}, op = {.method = NC_THRESHOLD_PERCENTILE, .percentile = 90};
    nc_snn *sm = NULL, *sp = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &om, &sm, NULL));
    NC_ASSERT_OK(nc_convert(m, x, NULL, &op, &sp, NULL));
    float all_max = fmaxf(fmaxf(mx[0], mx[1]), fmaxf(mx[2], mx[3]));
    float tm = ((const float *)layer_named(sm, "/Relu")->threshold->data)[0];
    float tp = ((const float *)layer_named(sp, "/Relu")->threshold->data)[0];
    assert_true(tm > 0 && tm <= all_max);
    assert_true(tp > 0 && tp < all_max);
    nc_snn_free(sm);
    nc_snn_free(sp);

    /* bias correction brings the first IF layer's per-channel mean output
     * rate·θ over T steps closer to the ANN's clipped activation */
    /* the plain neuron, whose early errors the corrections address */
    nc_convert_options ob = {.timesteps = 8, .bias_correction = 1, .spikes = NC_SPIKES_PLAIN},
                       o0 = {.timesteps = 8, .spikes = NC_SPIKES_PLAIN};
    nc_snn *sb = NULL, *s0 = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &o0, &s0, NULL));
    NC_ASSERT_OK(nc_convert(m, x, NULL, &ob, &sb, &r));
    assert_int_equal(count_corrected(r, 0), 3);
    check_report_json(r);
    double err[2] = {mean_error(s0, x, a, 8, "/Relu", 36), mean_error(sb, x, a, 8, "/Relu", 36)};
    if (!(err[1] < 0.5 * err[0]))
        fail_msg("bias correction: per-channel error %g before, %g after", err[0], err[1]);
    nc_convert_report_free(r);
    nc_snn_free(sb);
    nc_snn_free(s0);

    /* potential correction gives every neuron its own v(0) and brings each
     * neuron's mean output over T steps closer to the ANN's activation, which
     * a per-channel bias cannot do; a second round closes it further */
    for (int T = 4; T <= 8; T += 4) {
        nc_convert_options oz = {.timesteps = T, .spikes = NC_SPIKES_PLAIN},
                           op1 = {.timesteps = T, .potential_correction = 1, .spikes = NC_SPIKES_PLAIN},
                           op2 = {.timesteps = T, .potential_correction = 1, .correction_rounds = 2,
                                  .spikes = NC_SPIKES_PLAIN};
        nc_snn *sz = NULL, *s1 = NULL, *s2 = NULL;
        NC_ASSERT_OK(nc_convert(m, x, NULL, &oz, &sz, NULL));
        NC_ASSERT_OK(nc_convert(m, x, NULL, &op1, &s1, &r));
        NC_ASSERT_OK(nc_convert(m, x, NULL, &op2, &s2, NULL));
        assert_int_equal(count_corrected(r, 1), 3);
        assert_int_equal(count_corrected(r, 0), 0);
        const nc_snn_layer *I = layer_named(s1, "/Relu");
        assert_non_null(I->v_init);
        assert_int_equal(I->v_init->numel, nc_snn_layer_size(I));
        double e[3] = {mean_error(sz, x, a, T, "/Relu", 1), mean_error(s1, x, a, T, "/Relu", 1),
                       mean_error(s2, x, a, T, "/Relu", 1)};
        print_message("potential correction, T = %d: per-neuron error %g, %g after one round, %g after two\n",
                      T, e[0], e[1], e[2]);
        if (!(e[1] < 0.95 * e[0] && e[2] < e[1]))
            fail_msg("potential correction (T = %d): per-neuron error %g before, %g and %g after", T, e[0], e[1],
                     e[2]);
        nc_convert_report_free(r);
        nc_snn_free(sz);
        nc_snn_free(s1);
        nc_snn_free(s2);
    }
    free_all(m, all);
    nc_tensor_free(x);
    nc_model_free(m);

    /* a model with a fixed batch of 4 calibrates in batches of 4 (10 rows: the last padded) */
    m = load("tests/fixtures/opsets/cnn_op13_nofold_fixed.onnx");
    nc_tensor *fx = nc_test_load_f32("examples/data/fmnist_test_x.npy"), *ten = rows(fx, 10);
    NC_ASSERT_OK(nc_convert(m, ten, NULL, NULL, &s, &r));
    assert_int_equal(count_kind(s, NC_SNN_SIGNED_IF), 3);
    assert_int_equal(summary_of(r).calib_samples, 10);
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_tensor_free(ten);
    nc_tensor_free(fx);
    nc_model_free(m);
}

/* QCFS fine-tuning (the training engine) runs on the calibration data with
 * labels and moves the thresholds; the report keeps both. */
static void test_qcfs_finetune(void **state)
{
    (void)state;
    nc_model *m = load("tests/fixtures/convert/mlp_bn.onnx");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy"), *y = NULL;
    int64_t n = 16, lab[16];
    for (int i = 0; i < 16; i++)
        lab[i] = i % 3;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, &n, lab, &y));
    nc_convert_options o = {.qcfs_epochs = 2, .qcfs_lr = 0.05f, .qcfs_batch = 8, .bias_correction = 1,
                            .potential_correction = 1};
    nc_snn *s = NULL, *s0 = NULL;
    nc_convert_report *r = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s0, NULL));
    NC_ASSERT_OK(nc_convert(m, x, y, &o, &s, &r));
    nc_convert_layer_info FL = report_layer(r, "/net/net.3/Relu");
    assert_true(FL.finetuned);
    assert_int_equal(FL.threshold_before_channels, 1);
    assert_true(FL.threshold_before_min != FL.threshold_min);
    assert_int_equal(summary_of(r).qcfs_samples, 16);
    assert_true(has_note(r, "bias and potential correction are skipped"));
    check_report_json(r);
    const nc_snn_layer *a = layer_named(s0, "/net/net.3/Relu"), *b = layer_named(s, "/net/net.3/Relu");
    assert_true(((const float *)a->threshold->data)[0] != ((const float *)b->threshold->data)[0]);
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_snn_free(s0);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_model_free(m);
}

/* ---------------------------------------------------------------- the examples */

static int argmax(const float *v, int n)
{
    int b = 0;
    for (int i = 1; i < n; i++)
        b = v[i] > v[b] ? i : b;
    return b;
}

static void expect_accuracy(const char *name, const nc_convert_options *o, double margin)
{
    char path[256];
    snprintf(path, sizeof path, "examples/models/%s.onnx", name);
    nc_model *m = load(path);
    nc_tensor *x = nc_test_load_f32("examples/data/fmnist_test_x.npy"), *x64 = rows(x, 64), *y = NULL;
    NC_ASSERT_OK(nc_data_load(nc_test_src("examples/data/fmnist_test_y.npy"), NC_DTYPE_I64, &y));
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x64, NULL, o, &s, NULL));
    nc_tensor *ann = NULL;
    const nc_tensor *ins[1] = {x64};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann, 1));
    nc_tensor *snn = run_sum(s, x64, 32);
    const int64_t *lab = nc_tensor_data_const(y);
    int ca = 0, cs = 0;
    for (int i = 0; i < 64; i++) {
        ca += argmax((const float *)nc_tensor_data_const(ann) + 10 * i, 10) == lab[i];
        cs += argmax((const float *)nc_tensor_data_const(snn) + 10 * i, 10) == lab[i];
    }
    double acc_ann = 100.0 * ca / 64, acc_snn = 100.0 * cs / 64;
    print_message("%s: ANN %.1f %%, SNN (T = 32) %.1f %% on 64 images\n", name, acc_ann, acc_snn);
    if (acc_snn < acc_ann - margin)
        fail_msg("%s: SNN %.1f %% is more than %.0f points below the ANN's %.1f %%", name, acc_snn, margin, acc_ann);
    nc_tensor *ts[] = {x, x64, y, ann, snn};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    nc_snn_free(s);
    nc_model_free(m);
}

static void test_examples(void **state)
{
    (void)state;
    nc_convert_options o = {.timesteps = 32};
    expect_accuracy("mlp", &o, 6);
    expect_accuracy("cnn", &o, 6);
    /* the residual net needs the bias correction at T = 32 (Li et al. 2021) */
    nc_convert_options rb = {.timesteps = 32, .bias_correction = 1};
    expect_accuracy("resnet", &rb, 6);
}

/* Data-free calibration (calibrate_datafree.c) of bn_res.onnx against the
 * analytic rectified-Gaussian percentiles scripts/make_datafree_fixtures.py
 * computed in bn_res.json: from a BN (bn-stats), through an Add with the
 * previous ReLU (propagated), through a MaxPool of 4 (propagated). */
static double ref_num(const nc_json_doc *d, const char *layer, const char *key, int i)
{
    const nc_json_value *v = nc_json_get(d, nc_json_get(d, nc_json_root(d), layer), key);
    assert_non_null(v);
    if (i < 0)
        return v->num;
    const nc_json_value *e = nc_json_first(d, v);
    while (i-- > 0)
        e = nc_json_next(d, e);
    return e->num;
}

static void expect_theta(const nc_snn *s, const char *layer, int64_t c, double want)
{
    const nc_snn_layer *L = layer_named(s, layer);
    double got = clip_of(L, c);
    if (!(fabs(got - want) <= 2e-6 * want))
        fail_msg("data-free θ of %s[%lld] is %.9g, the analytic percentile %.9g", layer, (long long)c, got, want);
}

static void test_data_free(void **state)
{
    (void)state;
    static const char *layers[3] = {"/Relu", "/Relu_1", "/Relu_2"}, *refs[3] = {"relu1", "relu2", "relu3"};
    static const char *sources[3] = {"bn-stats", "propagated", "propagated"};
    nc_json_doc *d = NULL;
    NC_ASSERT_OK(nc_json_read_file(nc_test_src("tests/fixtures/convert/bn_res.json"), 0, 0, &d));
    nc_model *m = load("tests/fixtures/convert/bn_res.onnx");
    nc_snn *s = NULL;
    nc_convert_report *r = NULL;
    /* The fixture's references pool /Relu_2's currents before the neuron
     * (--maxpool currents: the max of 4 propagated Gaussians). By default
     * the MaxPool of its spikes comes after the neuron, which then takes
     * bn3's statistics directly. */
    nc_convert_options o;
    nc_convert_options_init(&o);
    o.method = NC_THRESHOLD_PERCENTILE; /* the references are p99.9 */
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &s, &r));
    assert_string_equal(report_layer(r, "/Relu_2").source, "bn-stats");
    assert_int_equal(layer_named(s, "/pool/MaxPool")->kind, NC_SNN_SPIKEMAXPOOL2D);
    nc_convert_report_free(r);
    nc_snn_free(s);
    /* per layer, p99.9 of the positive values (the data path's defaults) */
    o.maxpool = NC_MAXPOOL_CURRENTS;
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &s, &r));
    for (int k = 0; k < 3; k++) {
        expect_theta(s, layers[k], 0, ref_num(d, refs[k], "layer", -1));
        nc_convert_layer_info L = report_layer(r, layers[k]);
        assert_string_equal(L.source, sources[k]);
        assert_int_equal(L.rule, NC_THRESHOLD_RULE_CALIBRATION);
        assert_true(isnan(L.activation_max) && L.layer_statistic > 0);
    }
    assert_int_equal(summary_of(r).if_layers_data_free, 3);
    assert_int_equal(summary_of(r).calib_samples, 0);
    check_report_json(r);
    nc_convert_report_free(r);
    nc_snn_free(s);

    /* counting zeros, and per channel */
    nc_convert_options_init(&o);
    o.method = NC_THRESHOLD_PERCENTILE; /* the references are p99.9 */
    o.maxpool = NC_MAXPOOL_CURRENTS;
    o.count_zeros = 1;
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &s, NULL));
    for (int k = 0; k < 3; k++)
        expect_theta(s, layers[k], 0, ref_num(d, refs[k], "layer_zeros", -1));
    nc_snn_free(s);
    nc_convert_options_init(&o);
    o.method = NC_THRESHOLD_PERCENTILE; /* the references are p99.9 */
    o.maxpool = NC_MAXPOOL_CURRENTS;
    o.per_channel = 1;
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &s, NULL));
    for (int k = 0; k < 3; k++) {
        assert_int_equal(layer_named(s, layers[k])->threshold->numel, 4);
        for (int c = 0; c < 4; c++)
            expect_theta(s, layers[k], c, ref_num(d, refs[k], "channel", c));
    }
    nc_snn_free(s);

    /* max is the 99.9999th percentile; the MSE clip lies below it, above 0 */
    nc_snn *mx = NULL, *p6 = NULL, *ms = NULL;
    nc_convert_options_init(&o);
    o.method = NC_THRESHOLD_PERCENTILE; /* the references are p99.9 */
    o.maxpool = NC_MAXPOOL_CURRENTS;
    o.method = NC_THRESHOLD_MAX;
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &mx, NULL));
    o.method = NC_THRESHOLD_PERCENTILE;
    o.percentile = 99.9999;
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &p6, NULL));
    o.method = NC_THRESHOLD_MSE;
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &ms, NULL));
    for (int k = 0; k < 3; k++) {
        float a = nc_f32(layer_named(mx, layers[k])->threshold)[0];
        float b = nc_f32(layer_named(p6, layers[k])->threshold)[0];
        float c = nc_f32(layer_named(ms, layers[k])->threshold)[0];
        assert_true(a == b && clip_of(layer_named(mx, layers[k]), 0) > ref_num(d, refs[k], "layer", -1));
        assert_true(c > 0.0f && c < a);
    }
    nc_snn_free(mx);
    nc_snn_free(p6);
    nc_snn_free(ms);

    /* corrections need data: refused */
    nc_convert_options_init(&o);
    o.method = NC_THRESHOLD_PERCENTILE; /* the references are p99.9 */
    o.maxpool = NC_MAXPOOL_CURRENTS;
    o.bias_correction = 1;
    assert_int_equal(nc_convert(m, NULL, NULL, &o, &s, NULL), NC_ERR_INVALID_ARG);
    assert_null(s);
    assert_non_null(strstr(nc_last_error(), "bias correction needs calibration data"));

    /* with data, the same model calibrates on it: source "data" */
    nc_tensor *x = nc_test_load_f32("tests/fixtures/convert/x.npy");
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, &r));
    for (int k = 0; k < 3; k++)
        assert_string_equal(report_layer(r, layers[k]).source, "data");
    assert_int_equal(summary_of(r).if_layers_data_free, 0);
    check_report_json(r);
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_model_free(m);
    nc_json_doc_free(d);

    /* through a Linear: mean W·m + c, variance Σ W²·v (bn_mlp.json) */
    NC_ASSERT_OK(nc_json_read_file(nc_test_src("tests/fixtures/convert/bn_mlp.json"), 0, 0, &d));
    m = load("tests/fixtures/convert/bn_mlp.onnx");
    for (int pc = 0; pc < 2; pc++) {
        nc_convert_options_init(&o);
    o.method = NC_THRESHOLD_PERCENTILE; /* the references are p99.9 */
    o.maxpool = NC_MAXPOOL_CURRENTS;
        o.per_channel = pc;
        NC_ASSERT_OK(nc_convert(m, NULL, NULL, &o, &s, &r));
        for (int c = 0; c < (pc ? 6 : 1); c++)
            expect_theta(s, "/Relu", c, ref_num(d, "a", pc ? "channel" : "layer", pc ? c : -1));
        for (int c = 0; c < (pc ? 5 : 1); c++)
            expect_theta(s, "/Relu_1", c, ref_num(d, "b", pc ? "channel" : "layer", pc ? c : -1));
        assert_string_equal(report_layer(r, "/Relu").source, "bn-stats");
        assert_string_equal(report_layer(r, "/Relu_1").source, "propagated");
        nc_convert_report_free(r);
        nc_snn_free(s);
    }
    nc_model_free(m);
    nc_json_doc_free(d);

    /* no BatchNorm (fused at export): thresholds from the input taken as
     * N(0, 1) a channel, carried through the weights; one warning names every
     * such layer and recommends data */
    m = load("examples/models/resnet.onnx");
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, NULL, &s, &r));
    static const char *res[5] = {"/stem/stem.2/Relu", "/block1/Relu", "/block1/Relu_1", "/block2/Relu",
                                 "/block2/Relu_1"};
    const char *w = NULL;
    for (size_t k = 0; k < nc_convert_report_num_warnings(r); k++)
        if (strstr(nc_convert_report_warning(r, k), "no BatchNorm statistics"))
            w = nc_convert_report_warning(r, k);
    assert_non_null(w);
    assert_non_null(strstr(w, "5 IF layers"));
    assert_non_null(strstr(w, "--calib"));
    for (int k = 0; k < 5; k++) {
        char q[64];
        snprintf(q, sizeof q, "'%s'", res[k]);
        assert_non_null(strstr(w, q));
        nc_convert_layer_info L = report_layer(r, res[k]);
        assert_string_equal(L.source, "assumed-input");
        assert_true(L.layer_statistic > 0.0);
    }
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_model_free(m);

    /* the MLP too (Gemm after Flatten of the input) */
    m = load("examples/models/mlp.onnx");
    NC_ASSERT_OK(nc_convert(m, NULL, NULL, NULL, &s, &r));
    assert_string_equal(report_layer(r, "/net/net.2/Relu").source, "assumed-input");
    nc_convert_report_free(r);
    nc_snn_free(s);
    nc_model_free(m);

    /* a channel Slice and shuffle (ShuffleNet's) carry no statistics: one
     * message naming every layer without them */
    m = load("tests/fixtures/shuffle/shuffle.onnx");
    assert_int_equal(nc_convert(m, NULL, NULL, NULL, &s, NULL), NC_ERR_INVALID_ARG);
    const char *e = nc_last_error();
    assert_non_null(strstr(e, "IF layers need calibration data (--calib)"));
    assert_null(s);
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_folding),   cmocka_unit_test(test_qcfs_pattern),
        cmocka_unit_test(test_first_layer_counts), cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_border_layouts),
        cmocka_unit_test(test_maxpool),      cmocka_unit_test(test_spike_maxpool), cmocka_unit_test(test_spike_maxpool_bursts),      cmocka_unit_test(test_clip),
        cmocka_unit_test(test_binary_spikes), cmocka_unit_test(test_histogram),
        cmocka_unit_test(test_calibration),  cmocka_unit_test(test_qcfs_finetune),
        cmocka_unit_test(test_examples),     cmocka_unit_test(test_data_free),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
