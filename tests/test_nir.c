/* NIR export and import: lossless round trips (IR and bit-identical runs on
 * the CPU reference backend), plain-NIR reading of neuroc's own files and of
 * other tools' files in ../shared/nir-samples, and clear errors on broken
 * files. The .nir files written here are kept in <build>/nir-out/ with a
 * JSON sidecar of the expected NIR graph, for tests/test_nir_interop.sh. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "export/data/h5io.h"
#include "snn/base/alloc.h"
#include "snn/ir/snn_ir.h"
#include "snn/base/tensor.h"

#define NET_OK(expr) NC_ASSERT_OK(expr)
#include "random_nets.h"

static const char *out_path(const char *name)
{
    mkdir(NC_BINARY_DIR "/nir-out", 0755);
    return nc_test_pathf("%s/nir-out/%s", NC_BINARY_DIR, name);
}

static uint32_t rng_state = 12345;
static float urand(void) /* uniform [0, 1), reproducible */
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 16777216.0f;
}

static nc_tensor *rand_tensor(int ndim, const int64_t *shape, float lo, float hi)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, ndim, shape, &t));
    for (int64_t i = 0; i < t->numel; i++)
        nc_f32(t)[i] = lo + (hi - lo) * urand();
    return t;
}

static nc_tensor *vec(int64_t n, const float *v)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &n, v, &t));
    return t;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* ---- the networks ---- */

static const float THETA2[4] = {0.5f, 1.5f, 2.0f, 0.8f};

/* (2,12,12) → conv1 s2 p1 → IF θ .75 (v0 θ/2) → sum pool 2 → conv2 groups 2
 * → IF per-channel θ, reset to zero → conv3 (no bias) + skip from if2 →
 * IF θ 1.25 → avg pool 2 s1 → flatten → fc → readout. */
static nc_snn *build_cnn(void)
{
    nc_snn *s = NULL;
    int64_t in_shape[] = {2, 12, 12};
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &s));
    int id, conv1, if1, pool1, conv2, if2, conv3, add, if3, pool2, flat, fc;
    int64_t w1s[] = {4, 2, 3, 3}, w3s[] = {4, 4, 3, 3}, fcs[] = {10, 16}, four = 4, ten = 10;
    nc_tensor *w1 = rand_tensor(4, w1s, -0.4f, 0.6f), *b1 = rand_tensor(1, &four, 0.0f, 0.2f);
    nc_tensor *w2 = rand_tensor(4, w1s, -0.3f, 0.5f), *b2 = rand_tensor(1, &four, 0.0f, 0.1f);
    nc_tensor *w3 = rand_tensor(4, w3s, -0.3f, 0.4f);
    nc_tensor *wf = rand_tensor(2, fcs, -0.5f, 0.5f), *bf = rand_tensor(1, &ten, -0.1f, 0.1f);
    nc_conv2d_params p1 = {{2, 2}, {1, 1}, {1, 1}, 1}, p2 = {{1, 1}, {1, 1}, {1, 1}, 2}, p3 = {{1, 1}, {1, 1}, {0, 0}, 0};
    float th1 = 0.75f, v1 = 0.375f, th3 = 1.25f;
    nc_tensor *t1 = vec(1, &th1), *vi1 = vec(1, &v1), *t2 = vec(4, THETA2), *t3 = vec(1, &th3);
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, w1, b1, &p1, "conv1", &conv1));
    nc_if_params ip1 = {t1, vi1, NULL, NC_RESET_SUBTRACT, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(s, conv1, &ip1, "if1", &if1));
    int64_t k2[] = {2, 2}, s1[] = {1, 1};
    NC_ASSERT_OK(nc_snn_add_pool2d(s, if1, k2, k2, NULL, 1.0f, "pool1", &pool1));
    NC_ASSERT_OK(nc_snn_add_conv2d(s, pool1, w2, b2, &p2, "conv2", &conv2));
    nc_if_params ip2 = {t2, NULL, NULL, NC_RESET_ZERO, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(s, conv2, &ip2, "if2", &if2));
    NC_ASSERT_OK(nc_snn_add_conv2d(s, if2, w3, NULL, &p3, "conv3", &conv3));
    int from[] = {conv3, if2};
    NC_ASSERT_OK(nc_snn_add_add(s, 2, from, "res", &add));
    nc_if_params ip3 = {t3, NULL, NULL, NC_RESET_SUBTRACT, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(s, add, &ip3, "if3", &if3));
    NC_ASSERT_OK(nc_snn_add_pool2d(s, if3, k2, s1, NULL, 0.25f, "pool2", &pool2));
    NC_ASSERT_OK(nc_snn_add_flatten(s, pool2, "flat", &flat));
    NC_ASSERT_OK(nc_snn_add_affine(s, flat, wf, bf, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "readout", &id));
    nc_tensor *ts[] = {w1, b1, w2, b2, w3, wf, bf, t1, vi1, t2, t3};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    return s;
}

/* (6) → fc1 → IF θ .5 carrying 2.0, v0 .1 → fc2 → IF θ .9 (reset to zero) as the output. */
static nc_snn *build_mlp(void)
{
    nc_snn *s = NULL;
    int64_t six = 6, w1s[] = {8, 6}, w2s[] = {4, 8}, four = 4;
    NC_ASSERT_OK(nc_snn_create(1, &six, &s));
    nc_tensor *w1 = rand_tensor(2, w1s, -0.2f, 0.8f), *w2 = rand_tensor(2, w2s, -0.3f, 0.6f);
    nc_tensor *b2 = rand_tensor(1, &four, 0.0f, 0.1f);
    float th = 0.5f, sv = 2.0f, v0 = 0.1f, th2 = 0.9f;
    nc_tensor *t = vec(1, &th), *svt = vec(1, &sv), *v0t = vec(1, &v0), *t2 = vec(1, &th2);
    int fc1, ifa, fc2, ifb;
    NC_ASSERT_OK(nc_snn_add_affine(s, 0, w1, NULL, "fc1", &fc1));
    nc_if_params pa = {t, v0t, svt, NC_RESET_SUBTRACT, 0, 0}, pb = {t2, NULL, NULL, NC_RESET_ZERO, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(s, fc1, &pa, "if_a", &ifa));
    NC_ASSERT_OK(nc_snn_add_affine(s, ifa, w2, b2, "fc2", &fc2));
    NC_ASSERT_OK(nc_snn_add_if(s, fc2, &pb, "if_b", &ifb));
    nc_tensor *ts[] = {w1, w2, b2, t, svt, v0t, t2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    return s;
}

/* ---- comparing ---- */

static void assert_tensor_same(const nc_tensor *a, const nc_tensor *b, const char *layer, const char *what)
{
    if (!a || !b) {
        if (a || b)
            fail_msg("layer '%s': %s present in only one network", layer, what);
        return;
    }
    if (a->dtype != b->dtype || a->ndim != b->ndim || a->numel != b->numel ||
        memcmp(a->shape, b->shape, (size_t)a->ndim * sizeof a->shape[0]) != 0 ||
        memcmp(a->data, b->data, (size_t)a->numel * nc_dtype_size(a->dtype)) != 0)
        fail_msg("layer '%s': %s differs", layer, what);
}

static void assert_snn_same(const nc_snn *a, const nc_snn *b)
{
    assert_int_equal(a->n_layers, b->n_layers);
    assert_int_equal(a->output, b->output);
    for (int i = 0; i < a->n_layers; i++) {
        const nc_snn_layer *x = &a->layers[i], *y = &b->layers[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->kind, y->kind);
        assert_int_equal(x->n_inputs, y->n_inputs);
        assert_memory_equal(x->inputs, y->inputs, (size_t)x->n_inputs * sizeof(int));
        assert_int_equal(x->ndim, y->ndim);
        assert_memory_equal(x->shape, y->shape, sizeof x->shape);
        assert_tensor_same(x->weight, y->weight, x->name, "weight");
        assert_tensor_same(x->bias, y->bias, x->name, "bias");
        assert_tensor_same(x->threshold, y->threshold, x->name, "threshold");
        assert_tensor_same(x->v_init, y->v_init, x->name, "v_init");
        assert_tensor_same(x->spike_value, y->spike_value, x->name, "spike_value");
        assert_tensor_same(x->tau, y->tau, x->name, "tau");
        assert_tensor_same(x->r, y->r, x->name, "r");
        assert_tensor_same(x->v_leak, y->v_leak, x->name, "v_leak");
        assert_tensor_same(x->tau_syn, y->tau_syn, x->name, "tau_syn");
        assert_tensor_same(x->w_in, y->w_in, x->name, "w_in");
        assert_tensor_same(x->v_reset, y->v_reset, x->name, "v_reset");
        assert_int_equal(x->spike_gt, y->spike_gt);
        assert_int_equal(x->exact, y->exact);
        assert_memory_equal(x->stride, y->stride, sizeof x->stride);
        assert_memory_equal(x->padding, y->padding, sizeof x->padding);
        assert_memory_equal(x->dilation, y->dilation, sizeof x->dilation);
        assert_memory_equal(x->kernel, y->kernel, sizeof x->kernel);
        assert_int_equal(x->groups, y->groups);
        assert_memory_equal(&x->scale, &y->scale, sizeof x->scale);
        assert_int_equal(x->div_taps, y->div_taps);
        assert_memory_equal(x->div_pad, y->div_pad, sizeof x->div_pad);
        assert_int_equal(x->reset, y->reset);
        assert_memory_equal(&x->dt, &y->dt, sizeof x->dt);
        assert_int_equal(x->max_spikes, y->max_spikes);
        assert_int_equal(x->two_sided, y->two_sided);
        assert_int_equal(x->nl.fn, y->nl.fn);
        assert_memory_equal(&x->nl.alpha, &y->nl.alpha, sizeof x->nl.alpha);
        assert_memory_equal(&x->nl.beta, &y->nl.beta, sizeof x->nl.beta);
        assert_memory_equal(&x->nl.eps, &y->nl.eps, sizeof x->nl.eps);
        assert_int_equal(x->nl.axis, y->nl.axis);
        assert_int_equal(x->nl.trans_x, y->nl.trans_x);
        assert_int_equal(x->nl.trans_y, y->nl.trans_y);
    }
}

/* Runs s for T steps on batch `in`, per-step output. Caller frees. */
static nc_tensor *run(const nc_snn *s, const nc_tensor *in, int T)
{
    nc_session_options o;
    memset(&o, 0, sizeof o);
    o.backend = "cpu";
    o.timesteps = T;
    o.per_step = 1;
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    nc_tensor *out = NULL;
    NC_ASSERT_OK(nc_session_run(ss, in, &out));
    nc_session_free(ss);
    return out;
}

static void assert_runs_identical(const nc_snn *a, const nc_snn *b, int n)
{
    const nc_snn_layer *I = &a->layers[0];
    int64_t shape[NC_MAX_DIMS + 1] = {n};
    memcpy(shape + 1, I->shape, (size_t)I->ndim * sizeof shape[0]);
    nc_tensor *in = rand_tensor(I->ndim + 1, shape, 0.0f, 1.0f);
    nc_tensor *ya = run(a, in, 8), *yb = run(b, in, 8);
    assert_int_equal(ya->numel, yb->numel);
    assert_memory_equal(ya->data, yb->data, (size_t)ya->numel * sizeof(float));
    int nonzero = 0;
    for (int64_t i = 0; i < ya->numel; i++)
        nonzero |= nc_f32(ya)[i] != 0.0f;
    assert_true(nonzero); /* the comparison means something only if spikes get through */
    nc_tensor_free(in);
    nc_tensor_free(ya);
    nc_tensor_free(yb);
}

/* ---- sidecars for tests/nir_check.py ---- */

/* Expected NIR graph of build_cnn: node types, field shapes, integer
 * fields, edges, and float values showing the folds (node, field, flat
 * index, value) appended by the test. */
static const char CNN_GRAPH[] =
    "{\"nodes\": {\n"
    " \"input\": {\"type\": \"Input\", \"shapes\": {\"input_type\": [3]}, \"ints\": {\"input_type\": [2, 12, 12]}},\n"
    " \"conv1\": {\"type\": \"Conv2d\", \"shapes\": {\"weight\": [4, 2, 3, 3], \"bias\": [4]},\n"
    "   \"ints\": {\"stride\": [2, 2], \"padding\": [1, 1], \"dilation\": [1, 1], \"groups\": 1, \"input_shape\": [12, 12]}},\n"
    " \"if1\": {\"type\": \"IF\", \"shapes\": {\"r\": [4, 6, 6], \"v_threshold\": [4, 6, 6]}},\n"
    " \"pool1\": {\"type\": \"SumPool2d\", \"ints\": {\"kernel_size\": [2, 2], \"stride\": [2, 2], \"padding\": [0, 0]}},\n"
    " \"conv2\": {\"type\": \"Conv2d\", \"shapes\": {\"weight\": [4, 4, 3, 3], \"bias\": [4]},\n"
    "   \"ints\": {\"stride\": [1, 1], \"padding\": [1, 1], \"groups\": 1, \"input_shape\": [3, 3]}},\n"
    " \"if2\": {\"type\": \"IF\", \"shapes\": {\"r\": [4, 3, 3], \"v_threshold\": [4, 3, 3]}},\n"
    " \"conv3\": {\"type\": \"Conv2d\", \"shapes\": {\"weight\": [4, 4, 3, 3], \"bias\": [4]}, \"ints\": {\"groups\": 1}},\n"
    " \"if2_scale\": {\"type\": \"Scale\", \"shapes\": {\"scale\": [4, 3, 3]}},\n"
    " \"if3\": {\"type\": \"IF\", \"shapes\": {\"r\": [4, 3, 3], \"v_threshold\": [4, 3, 3]}},\n"
    " \"pool2\": {\"type\": \"SumPool2d\", \"ints\": {\"kernel_size\": [2, 2], \"stride\": [1, 1], \"padding\": [0, 0]}},\n"
    " \"flat\": {\"type\": \"Flatten\", \"ints\": {\"start_dim\": 0, \"end_dim\": -1, \"input_type\": [4, 2, 2]}},\n"
    " \"fc\": {\"type\": \"Affine\", \"shapes\": {\"weight\": [10, 16], \"bias\": [10]}},\n"
    " \"output\": {\"type\": \"Output\", \"ints\": {\"output_type\": [10]}}},\n"
    "\"edges\": [[\"input\", \"conv1\"], [\"conv1\", \"if1\"], [\"if1\", \"pool1\"], [\"pool1\", \"conv2\"],\n"
    "  [\"conv2\", \"if2\"], [\"if2\", \"if2_scale\"], [\"if2_scale\", \"conv3\"], [\"conv3\", \"if3\"],\n"
    "  [\"if2_scale\", \"if3\"], [\"if3\", \"pool2\"], [\"pool2\", \"flat\"], [\"flat\", \"fc\"], [\"fc\", \"output\"]],\n";

static const char MLP_GRAPH[] =
    "{\"nodes\": {\n"
    " \"input\": {\"type\": \"Input\", \"ints\": {\"input_type\": [6]}},\n"
    " \"fc1\": {\"type\": \"Affine\", \"shapes\": {\"weight\": [8, 6], \"bias\": [8]}},\n"
    " \"if_a\": {\"type\": \"IF\", \"shapes\": {\"r\": [8], \"v_threshold\": [8]}},\n"
    " \"fc2\": {\"type\": \"Affine\", \"shapes\": {\"weight\": [4, 8], \"bias\": [4]}},\n"
    " \"if_b\": {\"type\": \"IF\", \"shapes\": {\"r\": [4], \"v_threshold\": [4]}},\n"
    " \"if_b_scale\": {\"type\": \"Scale\", \"shapes\": {\"scale\": [4]}},\n"
    " \"output\": {\"type\": \"Output\", \"ints\": {\"output_type\": [4]}}},\n"
    "\"edges\": [[\"input\", \"fc1\"], [\"fc1\", \"if_a\"], [\"if_a\", \"fc2\"], [\"fc2\", \"if_b\"],\n"
    "  [\"if_b\", \"if_b_scale\"], [\"if_b_scale\", \"output\"]],\n";

static void write_sidecar(const char *nir, const char *graph, const char *values)
{
    char path[4200], text[8192];
    snprintf(path, sizeof path, "%s.json", nir);
    snprintf(text, sizeof text, "%s\"values\": [%s]}\n", graph, values);
    write_text(path, text);
}

/* ---- round trips ---- */

static nc_snn *save_and_load(const nc_snn *s, const char *name, int strict)
{
    const char *p = out_path(name);
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    unlink(path);
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = strict;
    NC_ASSERT_OK(nc_snn_save_nir_with(s, path, &so));
    nc_snn *b = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &b));
    return b;
}

/* save_and_load, and the network read back must be a's, computing the same
 * bit for bit on n samples. */
static nc_snn *roundtrip(const nc_snn *a, const char *name, int strict, int n)
{
    nc_snn *b = save_and_load(a, name, strict);
    assert_snn_same(a, b);
    assert_runs_identical(a, b, n);
    return b;
}

static void test_roundtrip_cnn(void **state)
{
    (void)state;
    nc_snn *a = build_cnn();
    nc_snn *b = roundtrip(a, "cnn.nir", 1, 3);

    /* the NIR side: folds as in nir_write.c, checked again from Python. conv2
     * (groups 2) is written densely in the standard graph: output channel 0 sees
     * input channels 0-1 only. if2 also feeds the residual sum, so it goes through a Scale
     * node and conv3 keeps its weights. */
    const nc_snn_layer *c2 = &a->layers[nc_snn_find_layer(a, "conv2")];
    const nc_snn_layer *c3 = &a->layers[nc_snn_find_layer(a, "conv3")];
    const nc_snn_layer *fc = &a->layers[nc_snn_find_layer(a, "fc")];
    char values[1024];
    snprintf(values, sizeof values,
             "[\"conv2\", \"weight\", 0, %.9g], [\"conv2\", \"weight\", 18, 0], [\"conv2\", \"weight\", 45, %.9g],"
             " [\"conv2\", \"weight\", 90, %.9g],"
             " [\"conv3\", \"weight\", 9, %.9g], [\"fc\", \"weight\", 0, %.9g],"
             " [\"if2_scale\", \"scale\", 9, %.9g], [\"if1\", \"v_threshold\", 0, %.9g],"
             " [\"if2\", \"v_threshold\", 18, %.9g],"
             " [\"if1\", \"r\", 5, 1], [\"conv3\", \"bias\", 0, 0]",
             (double)(nc_f32(c2->weight)[0] * 0.75f), (double)(nc_f32(c2->weight)[27] * 0.75f),
             (double)(nc_f32(c2->weight)[36] * 0.75f),
             (double)nc_f32(c3->weight)[9],
             (double)(nc_f32(fc->weight)[0] * (0.25f * 1.25f)), (double)THETA2[1],
             /* the standard graph's IF: v > θ⁻ is m >= θ (snn_portable.c) */
             (double)nextafterf(0.75f, 0.0f), (double)nextafterf(2.0f, 0.0f));
    write_sidecar(out_path("cnn.nir"), CNN_GRAPH, values);
    nc_snn_free(a);
    nc_snn_free(b);
}

static void test_roundtrip_mlp(void **state)
{
    (void)state;
    nc_snn *a = build_mlp();
    nc_snn *b = roundtrip(a, "mlp.nir", 0, 4);
    const nc_snn_layer *fc2 = &a->layers[nc_snn_find_layer(a, "fc2")];
    char values[512];
    snprintf(values, sizeof values, "[\"fc2\", \"weight\", 3, %.9g], [\"if_b_scale\", \"scale\", 2, %.9g]",
             (double)(nc_f32(fc2->weight)[3] * 2.0f), (double)0.9f);
    write_sidecar(out_path("mlp.nir"), MLP_GRAPH, values);
    nc_snn_free(a);
    nc_snn_free(b);
}

/* The same network saved twice, more than a second apart, gives the same
 * bytes: HDF5 keeps no modification times in neuroc's files, so a .nir
 * can be compared or hashed (the Python package's tests compare its files
 * with the program's). */
static char *file_bytes(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    char *b = malloc((size_t)*len);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)*len, f), (size_t)*len);
    fclose(f);
    return b;
}

static void test_same_bytes(void **state)
{
    (void)state;
    nc_snn *a = build_mlp();
    char p1[512], p2[512];
    snprintf(p1, sizeof p1, "%s", out_path("same_1.nir"));
    snprintf(p2, sizeof p2, "%s", out_path("same_2.nir"));
    NC_ASSERT_OK(nc_snn_save_nir(a, p1));
    nanosleep(&(struct timespec){.tv_sec = 1, .tv_nsec = 100000000}, NULL); /* times have 1 s resolution */
    NC_ASSERT_OK(nc_snn_save_nir(a, p2));
    long n1, n2;
    char *b1 = file_bytes(p1, &n1), *b2 = file_bytes(p2, &n2);
    assert_int_equal(n1, n2);
    assert_memory_equal(b1, b2, (size_t)n1);
    free(b1);
    free(b2);
    remove(p1);
    remove(p2);
    nc_snn_free(a);
}

/* The same file read as plain NIR (its /neuroc group deleted): binary
 * spikes, the Scale node becomes if2's spike value, the two edges into if3
 * become an Add. */
static void test_plain_read_of_own_file(void **state)
{
    (void)state;
    nc_snn *a = build_cnn();
    char path[4096];
    snprintf(path, sizeof path, "%s", out_path("cnn_plain.nir"));
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = 1;
    NC_ASSERT_OK(nc_snn_save_nir_with(a, path, &so));
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    assert_true(H5Ldelete(f, "neuroc", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    nc_snn *b = NULL;
    nc_nir_options opt = {.reset = NC_RESET_ZERO};
    NC_ASSERT_OK(nc_snn_load_nir(path, &opt, &b));
    static const nc_snn_layer_kind kinds[] = {NC_SNN_INPUT, NC_SNN_CONV2D, NC_SNN_IF,   NC_SNN_POOL2D,
                                              NC_SNN_CONV2D, NC_SNN_IF,    NC_SNN_CONV2D, NC_SNN_ADD,
                                              NC_SNN_IF,    NC_SNN_POOL2D, NC_SNN_FLATTEN, NC_SNN_AFFINE};
    assert_int_equal(b->n_layers, sizeof kinds / sizeof kinds[0]);
    for (int i = 0; i < b->n_layers; i++)
        assert_int_equal(b->layers[i].kind, kinds[i]);
    assert_int_equal(nc_snn_output_id(b), b->n_layers - 1);
    const nc_snn_layer *if1 = &b->layers[nc_snn_find_layer(b, "if1")];
    const nc_snn_layer *if2 = &b->layers[nc_snn_find_layer(b, "if2")];
    assert_int_equal(if1->reset, NC_RESET_ZERO);
    assert_true(nc_snn_param(if1->spike_value, if1, 0, -1) == 1.0f);
    assert_true(nc_snn_param(if1->v_init, if1, 0, -1) == 0.0f);
    for (int c = 0; c < 4; c++) /* the Scale node, per neuron */
        assert_true(nc_snn_param(if2->spike_value, if2, c * 9 + 4, -1) == THETA2[c]);
    const nc_snn_layer *sum = &b->layers[7];
    assert_int_equal(sum->n_inputs, 2);
    assert_int_equal(sum->inputs[0] + sum->inputs[1], nc_snn_find_layer(b, "conv3") + nc_snn_find_layer(b, "if2"));
    /* the folded average pool: SumPool2d with scale 1, 1/4·θ3 in fc */
    assert_true(b->layers[9].scale == 1.0f);
    const nc_snn_layer *c2 = &b->layers[4]; /* groups 2 comes back spelled out densely (strict) */
    assert_int_equal(c2->groups, 1);
    assert_int_equal(c2->weight->shape[1], 4);
    const nc_snn_layer *fa = &a->layers[nc_snn_find_layer(a, "fc")], *fb = &b->layers[11];
    assert_true(nc_f32(fb->weight)[5] == nc_f32(fa->weight)[5] * 0.3125f);
    nc_snn_free(a);
    nc_snn_free(b);
}

/* ---- layers NIR cannot express: neuroc.<kind> extension nodes ---- */

static void expect_error(const char *path, nc_status want, const char *needle1, const char *needle2);

/* (2,8,8) → conv a → IF → max pool 2 (pad 1, s 2) → conv → IF → flatten →
 * fc → readout. Max pooling has no NIR node. */
static nc_snn *build_pool_net(int spiking)
{
    nc_snn *s = NULL;
    int64_t in_shape[] = {2, 8, 8}, wa[] = {3, 2, 3, 3}, wb[] = {4, 3, 3, 3}, fcs[] = {5, 4}, three = 3, four = 4;
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &s));
    nc_tensor *w1 = rand_tensor(4, wa, -0.3f, 0.7f), *b1 = rand_tensor(1, &three, 0.0f, 0.2f);
    nc_tensor *w2 = rand_tensor(4, wb, -0.3f, 0.6f), *b2 = rand_tensor(1, &four, 0.0f, 0.1f);
    nc_tensor *wf = rand_tensor(2, fcs, -0.5f, 0.5f);
    float th1 = 0.6f, th2 = 0.9f;
    nc_tensor *t1 = vec(1, &th1), *t2 = vec(1, &th2);
    nc_conv2d_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    int id, c1, i1, mp, c2, i2, fl, fc;
    int64_t k[] = {2, 2}, pad[] = {1, 1};
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, w1, b1, &p, "conv1", &c1));
    nc_if_params ip1 = {t1, NULL, NULL, NC_RESET_SUBTRACT, 0, 0}, ip2 = {t2, NULL, NULL, NC_RESET_ZERO, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(s, c1, &ip1, "if1", &i1));
    if (spiking)
        NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, i1, k, k, pad, "pool", &mp));
    else
        NC_ASSERT_OK(nc_snn_add_maxpool2d(s, i1, k, k, pad, "pool", &mp));
    NC_ASSERT_OK(nc_snn_add_conv2d(s, mp, w2, b2, &p, "conv2", &c2));
    NC_ASSERT_OK(nc_snn_add_if(s, c2, &ip2, "if2", &i2));
    int64_t k2[] = {3, 3};
    NC_ASSERT_OK(nc_snn_add_pool2d(s, i2, k2, NULL, NULL, 1.0f / 9.0f, "avg", &id));
    NC_ASSERT_OK(nc_snn_add_flatten(s, id, "flat", &fl));
    NC_ASSERT_OK(nc_snn_add_affine(s, fl, wf, NULL, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "readout", &id));
    nc_tensor *ts[] = {w1, b1, w2, b2, wf, t1, t2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    return s;
}

static nc_snn *build_maxpool(void) { return build_pool_net(0); }

/* (2,6,6) → conv a, conv b → IF each → concat(if_a, if_b, if_a) → conv →
 * IF → flatten → fc → readout. */
static nc_snn *build_concat(void)
{
    nc_snn *s = NULL;
    int64_t in_shape[] = {2, 6, 6}, wa[] = {3, 2, 3, 3}, wc[] = {2, 9, 3, 3}, fcs[] = {4, 72}, three = 3, two = 2;
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &s));
    nc_tensor *w1 = rand_tensor(4, wa, -0.3f, 0.7f), *w2 = rand_tensor(4, wa, -0.2f, 0.8f);
    nc_tensor *b1 = rand_tensor(1, &three, 0.0f, 0.2f), *w3 = rand_tensor(4, wc, -0.2f, 0.5f);
    nc_tensor *b3 = rand_tensor(1, &two, 0.0f, 0.1f), *wf = rand_tensor(2, fcs, -0.5f, 0.5f);
    float th1 = 0.7f, th2 = 1.1f;
    nc_tensor *t1 = vec(1, &th1), *t2 = vec(1, &th2);
    nc_conv2d_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    int id, ca, cb, ia, ib, cat, c3, i3, fl, fc;
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, w1, b1, &p, "conv_a", &ca));
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, w2, NULL, &p, "conv_b", &cb));
    nc_if_params ip1 = {t1, NULL, NULL, NC_RESET_SUBTRACT, 0, 0}, ip2 = {t2, NULL, NULL, NC_RESET_SUBTRACT, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(s, ca, &ip1, "if_a", &ia));
    NC_ASSERT_OK(nc_snn_add_if(s, cb, &ip2, "if_b", &ib));
    int from[] = {ia, ib, ia};
    NC_ASSERT_OK(nc_snn_add_concat(s, 3, from, "cat", &cat));
    NC_ASSERT_OK(nc_snn_add_conv2d(s, cat, w3, b3, &p, "conv3", &c3));
    NC_ASSERT_OK(nc_snn_add_if(s, c3, &ip1, "if3", &i3));
    NC_ASSERT_OK(nc_snn_add_flatten(s, i3, "flat", &fl));
    NC_ASSERT_OK(nc_snn_add_affine(s, fl, wf, NULL, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "readout", &id));
    nc_tensor *ts[] = {w1, w2, b1, w3, b3, wf, t1, t2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    return s;
}

/* The type of a node of the graph other tools read (/node) or, with
 * exact, of neuroc's own graph (/neuroc/graph). */
static char *graph_node_type(const char *path, int exact, const char *node)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    char loc[256], *type = NULL;
    snprintf(loc, sizeof loc, "%s/nodes/%s", exact ? "neuroc/graph" : "node", node);
    hid_t g = H5Gopen2(f, loc, H5P_DEFAULT);
    assert_true(g >= 0);
    NC_ASSERT_OK(nc_h5_read_string(g, "type", &type));
    H5Gclose(g);
    H5Fclose(f);
    return type;
}

/* 1 if the file's graph has the edge a → b. */
static int has_edge(const char *path, const char *a, const char *b)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    char **e = NULL;
    int nd = 0, found = 0;
    int64_t shape[NC_MAX_DIMS], n = 0;
    NC_ASSERT_OK(nc_h5_read_strings(f, "node/edges", &nd, shape, &n, &e));
    for (int64_t k = 0; k + 1 < n; k += 2)
        found |= strcmp(e[k], a) == 0 && strcmp(e[k + 1], b) == 0;
    nc_h5_free_strings(e, n);
    H5Fclose(f);
    return found;
}

static void assert_dir_empty(const char *dir)
{
    DIR *d = opendir(dir); /* nothing left behind, not even a temporary */
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            fail_msg("left behind: %s", e->d_name);
    closedir(d);
}

/* Strict mode refuses a network whose standard graph would approximate a
 * layer, naming the layer and what it loses, and writes nothing. */
static void expect_strict_refusal(const nc_snn *s, const char *name, const char *layer, const char *loss)
{
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s", out_path(name));
    mkdir(dir, 0755);
    snprintf(path, sizeof path, "%s/x.nir", dir);
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    assert_int_equal(so.strict, 0);
    so.strict = 1;
    assert_int_equal(nc_snn_save_nir_with(s, path, &so), NC_ERR_UNSUPPORTED);
    char want[128];
    snprintf(want, sizeof want, "'%s'", layer);
    if (!strstr(nc_last_error(), want) || !strstr(nc_last_error(), loss) || !strstr(nc_last_error(), "strict mode"))
        fail_msg("'%s' does not say \"%s\" and \"%s\"", nc_last_error(), want, loss);
    assert_dir_empty(dir);
    /* refused before the file is touched: even an unwritable place says so */
    assert_int_equal(nc_snn_save_nir_with(s, "/nonexistent-dir/x.nir", &so), NC_ERR_UNSUPPORTED);
}

static void test_roundtrip_maxpool(void **state)
{
    (void)state;
    nc_snn *a = build_maxpool();
    nc_snn *b = roundtrip(a, "maxpool.nir", 0, 3);
    char *type = graph_node_type(out_path("maxpool.nir"), 1, "pool");
    assert_string_equal(type, "neuroc.MaxPool2d");
    nc_free(type);
    /* what other tools read: average pooling in its place, edges kept */
    type = graph_node_type(out_path("maxpool.nir"), 0, "pool");
    assert_string_equal(type, "SumPool2d");
    nc_free(type);
    assert_true(has_edge(out_path("maxpool.nir"), "if1", "pool"));
    assert_true(has_edge(out_path("maxpool.nir"), "pool", "conv2"));
    expect_strict_refusal(a, "maxpool_strict", "pool", "max pooling is average pooling");
    write_text(nc_test_pathf("%s.json", out_path("maxpool.nir")), "{\"type_check\": true}\n");
    nc_snn_free(a);
    nc_snn_free(b);
}

/* A kind added after the extension nodes (SpikeMaxPool2d) round-trips with
 * no NIR code of its own: the generic neuroc.<kind> node carries it. */
static void test_roundtrip_spike_maxpool(void **state)
{
    (void)state;
    nc_snn *a = build_pool_net(1);
    nc_snn *b = roundtrip(a, "spikemax.nir", 0, 3);
    char *type = graph_node_type(out_path("spikemax.nir"), 1, "pool");
    assert_string_equal(type, "neuroc.SpikeMaxPool2d");
    nc_free(type);
    expect_strict_refusal(a, "spikemax_strict", "pool", "max pooling is average pooling");
    nc_snn_free(a);
    nc_snn_free(b);
}

/* Spiking max pools of bursts (a SignedIF of max_spikes 4 into a pool, a
 * pool of a pool, a pool of a Concat of bursts and single spikes): the
 * exact graph carries the bursts on the SignedIF nodes, and the network
 * read back runs the same, bit for bit. */
static void test_roundtrip_spike_maxpool_bursts(void **state)
{
    (void)state;
    nc_snn *a = net_spike_maxpool_bursts(4, NULL);
    nc_snn *b = roundtrip(a, "spikemax_bursts.nir", 0, 3);
    nc_snn_free(a);
    nc_snn_free(b);
}

static void test_roundtrip_concat(void **state)
{
    (void)state;
    nc_snn *a = build_concat();
    nc_snn *b = roundtrip(a, "concat.nir", 0, 3); /* inputs in order, if_a twice */
    char *type = graph_node_type(out_path("concat.nir"), 1, "cat");
    assert_string_equal(type, "neuroc.Concat");
    nc_free(type);
    /* other tools read it exactly: one placement convolution per input,
       summed (if_a twice: two of them) */
    const char *path = out_path("concat.nir");
    for (int k = 0; k < 3; k++) {
        char part[32];
        snprintf(part, sizeof part, "cat_part%d", k);
        type = graph_node_type(path, 0, part);
        assert_string_equal(type, "Conv2d");
        nc_free(type);
        assert_true(has_edge(path, part, "conv3"));
    }
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = 1; /* nothing lost: strict mode writes it */
    NC_ASSERT_OK(nc_snn_save_nir_with(a, out_path("concat_strict.nir"), &so));
    char loss[1024];
    NC_ASSERT_OK(nc_snn_nir_standard(a, NULL, loss, sizeof loss));
    assert_null(strstr(loss, "'cat'"));
    /* the sum of placements is the concatenation bit for bit (no neurons
       here, whose NIR semantics differ) */
    nc_snn *c = NULL, *std = NULL;
    int64_t in_shape[] = {2, 6, 6}, wa[] = {3, 2, 3, 3}, wc[] = {2, 5, 3, 3}, fcs[] = {4, 72};
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &c));
    nc_tensor *w1 = rand_tensor(4, wa, -0.3f, 0.7f), *w3 = rand_tensor(4, wc, -0.2f, 0.5f);
    nc_tensor *wf = rand_tensor(2, fcs, -0.5f, 0.5f);
    nc_conv2d_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    int ca, cat, id;
    NC_ASSERT_OK(nc_snn_add_conv2d(c, 0, w1, NULL, &p, "conv_a", &ca));
    int from[] = {0, ca};
    NC_ASSERT_OK(nc_snn_add_concat(c, 2, from, "cat", &cat));
    NC_ASSERT_OK(nc_snn_add_conv2d(c, cat, w3, NULL, &p, "conv3", &id));
    NC_ASSERT_OK(nc_snn_add_flatten(c, id, "flat", &id));
    NC_ASSERT_OK(nc_snn_add_affine(c, id, wf, NULL, "fc", &id));
    NC_ASSERT_OK(nc_snn_add_readout(c, id, "readout", &id));
    NC_ASSERT_OK(nc_snn_nir_standard(c, &std, loss, sizeof loss));
    assert_string_equal(loss, "");
    assert_int_equal(std->layers[nc_snn_find_layer(std, "cat")].kind, NC_SNN_ADD);
    assert_runs_identical(c, std, 3);
    nc_snn_free(c);
    nc_snn_free(std);
    nc_tensor_free(w1);
    nc_tensor_free(w3);
    nc_tensor_free(wf);
    write_text(nc_test_pathf("%s.json", path), "{\"type_check\": true}\n");
    nc_snn_free(a);
    nc_snn_free(b);
}

/* Nonlinear layers of every function and the two-sided SignedIF after
 * them (net_nonlinear) round-trip exactly through neuroc.Nonlinear and
 * neuroc.SignedIF nodes (function, alpha, beta, eps, axis, trans_x,
 * trans_y; two_sided); the standard graph (/node, for other tools) has
 * the identity in their place, which strict mode refuses naming them. A
 * file's unknown function is refused by name. */
static void test_roundtrip_nonlinear(void **state)
{
    (void)state;
    for (int fn = 0; fn < NC_NL_COUNT; fn++) {
        nc_snn *a = net_nonlinear((nc_nonlinear_fn)fn);
        char name[64];
        snprintf(name, sizeof name, "nonlinear_%s.nir", nc_nonlinear_fn_name((nc_nonlinear_fn)fn));
        nc_snn *b = roundtrip(a, name, 0, 3);
        int nl = -1;
        for (int i = 0; i < a->n_layers; i++)
            nl = a->layers[i].kind == NC_SNN_NONLINEAR && nl < 0 ? i : nl;
        assert_true(nl > 0 && (int)b->layers[nl].nl.fn == fn);
        assert_true(nc_hash_snn(a) == nc_hash_snn(b));
        if (fn == NC_NL_MATMUL) { /* the hash sees which factor is read transposed */
            uint64_t h = nc_hash_snn(a);
            a->layers[nl].nl.trans_y = !a->layers[nl].nl.trans_y;
            assert_true(nc_hash_snn(a) != h);
            a->layers[nl].nl.trans_y = !a->layers[nl].nl.trans_y;
        }
        char *type = graph_node_type(out_path(name), 1, a->layers[nl].name);
        assert_string_equal(type, "neuroc.Nonlinear");
        nc_free(type);
        /* the standard graph: no such node; what read it reads its stand-in */
        char loss[1024];
        nc_snn *std = NULL;
        NC_ASSERT_OK(nc_snn_nir_standard(a, &std, loss, sizeof loss));
        assert_non_null(strstr(loss, "Nonlinear layers are the identity there"));
        for (int i = 0; i < std->n_layers; i++)
            assert_int_not_equal(std->layers[i].kind, NC_SNN_NONLINEAR);
        nc_snn_free(std);
        snprintf(name, sizeof name, "nonlinear_strict_%d", fn);
        expect_strict_refusal(a, name, a->layers[nl].name, "Nonlinear layers are the identity");
        nc_snn_free(a);
        nc_snn_free(b);
    }
    /* hostile: a function this neuroc does not know */
    char path[4096];
    snprintf(path, sizeof path, "%s", out_path("nonlinear_unknown.nir"));
    nc_snn *a = net_nonlinear(NC_NL_SILU);
    NC_ASSERT_OK(nc_snn_save_nir(a, path));
    int nl = -1;
    for (int i = 0; i < a->n_layers; i++)
        nl = a->layers[i].kind == NC_SNN_NONLINEAR && nl < 0 ? i : nl;
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    char loc[256];
    snprintf(loc, sizeof loc, "neuroc/graph/nodes/%s/function", a->layers[nl].name);
    assert_true(H5Ldelete(f, loc, H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_string(f, loc, "Swish2"));
    H5Fclose(f);
    expect_error(path, NC_ERR_UNSUPPORTED, a->layers[nl].name, "unknown function 'Swish2'");
    nc_snn_free(a);
}

/* Turns a file of /neuroc format 4 into what neuroc wrote before it
 * (format 3): the exact network under /node, neuroc.<kind> nodes and all,
 * no standard graph, no standard_loss. */
static void as_format3(hid_t f)
{
    if (!nc_h5_is_group(f, "neuroc/graph"))
        return;
    assert_true(H5Ldelete(f, "node", H5P_DEFAULT) >= 0);
    assert_true(H5Lmove(f, "neuroc/graph", f, "node", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    assert_true(H5Ldelete(f, "neuroc/standard_loss", H5P_DEFAULT) >= 0);
    assert_true(H5Ldelete(f, "neuroc/format_version", H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_i64_scalar(f, "neuroc/format_version", 3));
}

/* The network build() makes written to out_path(name) (path, n) in the
 * layout of format 3 (as_format3: the reader's checks of the exact graph
 * are the same in both), opened to be broken; *li gets the index of
 * `layer` when asked. */
static hid_t fresh_copy(nc_snn *(*build)(void), const char *name, char *path, size_t n, const char *layer, int *li)
{
    nc_snn *a = build();
    if (li)
        *li = nc_snn_find_layer(a, layer);
    snprintf(path, n, "%s", out_path(name));
    NC_ASSERT_OK(nc_snn_save_nir(a, path));
    nc_snn_free(a);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    as_format3(f);
    return f;
}

/* A file written before the standard graph (format 3: the exact network
 * under /node, with neuroc.<kind> nodes) reads as the same network as the
 * file of today; nc_nir_file_info_read tells them apart. */
static void test_format3_reads(void **state)
{
    (void)state;
    nc_snn *a = build_maxpool(), *now = NULL, *old = NULL;
    const char *path_now = out_path("format4.nir"), *path_old = out_path("format3.nir");
    NC_ASSERT_OK(nc_snn_save_nir(a, path_now));
    NC_ASSERT_OK(nc_snn_save_nir(a, path_old));
    hid_t f = H5Fopen(path_old, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0);
    as_format3(f);
    H5Fclose(f);
    char *type = graph_node_type(path_old, 0, "pool");
    assert_string_equal(type, "neuroc.MaxPool2d");
    nc_free(type);
    NC_ASSERT_OK(nc_snn_load_nir(path_now, NULL, &now));
    NC_ASSERT_OK(nc_snn_load_nir(path_old, NULL, &old));
    assert_snn_same(a, now);
    assert_snn_same(a, old);
    assert_runs_identical(now, old, 3);
    nc_nir_file_info info;
    NC_ASSERT_OK(nc_nir_file_info_read(path_now, &info));
    assert_int_equal(info.neuroc_format, 4);
    assert_int_equal(info.exact_graph, 1);
    assert_int_equal(info.loss_known, 1);
    assert_non_null(strstr(info.standard_loss, "'pool'"));
    assert_non_null(strstr(info.standard_loss, "max pooling is average pooling"));
    assert_non_null(strstr(info.standard_loss, "IF neurons are NIR's IF"));
    NC_ASSERT_OK(nc_nir_file_info_read(path_old, &info));
    assert_int_equal(info.neuroc_format, 3);
    assert_int_equal(info.exact_graph, 0);
    assert_int_equal(info.loss_known, 0);
    /* without /neuroc, the standard graph as plain NIR: what other tools read */
    f = H5Fopen(path_now, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, "neuroc", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    nc_snn *plain = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path_now, NULL, &plain));
    assert_int_equal(plain->layers[nc_snn_find_layer(plain, "pool")].kind, NC_SNN_POOL2D);
    NC_ASSERT_OK(nc_nir_file_info_read(path_now, &info));
    assert_int_equal(info.neuroc_format, 0);
    nc_snn_free(plain);
    nc_snn_free(a);
    nc_snn_free(now);
    nc_snn_free(old);
}

static long file_size(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return (long)st.st_size;
}

/* A depthwise convolution (128 channels, 3×3): neuroc's own graph keeps it
 * compact with its groups; the standard graph spells it out densely
 * (nir.read 1.0.x's type check takes weight.shape[1] as the input
 * channels), so nir.read opens the file with its type checks. */
static void test_depthwise_compact(void **state)
{
    (void)state;
    enum { C = 128 };
    nc_snn *a = NULL;
    int64_t in_shape[] = {C, 4, 4}, ws[] = {C, 1, 3, 3}, c = C, fcs[] = {3, C * 16};
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &a));
    nc_tensor *w = rand_tensor(4, ws, -0.2f, 0.9f), *bias = rand_tensor(1, &c, 0.0f, 0.1f);
    nc_tensor *wf = rand_tensor(2, fcs, -0.1f, 0.1f);
    float th = 0.5f;
    nc_tensor *t = vec(1, &th);
    nc_conv2d_params p = {{1, 1}, {1, 1}, {1, 1}, C};
    int id, dw, ifl, fl, fc;
    NC_ASSERT_OK(nc_snn_add_conv2d(a, 0, w, bias, &p, "dw", &dw));
    nc_if_params ip = {t, NULL, NULL, NC_RESET_SUBTRACT, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(a, dw, &ip, "if1", &ifl));
    NC_ASSERT_OK(nc_snn_add_conv2d(a, ifl, w, bias, &p, "dw2", &dw)); /* takes if1's θ into its weights */
    NC_ASSERT_OK(nc_snn_add_if(a, dw, &ip, "if2", &ifl));
    NC_ASSERT_OK(nc_snn_add_flatten(a, ifl, "flat", &fl));
    NC_ASSERT_OK(nc_snn_add_affine(a, fl, wf, NULL, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(a, fc, "readout", &id));
    nc_snn *b = roundtrip(a, "depthwise.nir", 0, 2);
    long dense = (long)C * C * 9 * 4;
    print_message("depthwise: %ld bytes (one dense conv: %ld)\n", file_size(out_path("depthwise.nir")), dense);
    hid_t f = H5Fopen(out_path("depthwise.nir"), H5F_ACC_RDONLY, H5P_DEFAULT);
    int nd = 0;
    int64_t shape[NC_MAX_DIMS];
    double g = 0;
    NC_ASSERT_OK(nc_h5_shape(f, "neuroc/graph/nodes/dw2/weight", &nd, shape)); /* neuroc's: compact */
    assert_int_equal(shape[1], 1);
    NC_ASSERT_OK(nc_h5_read_f64_scalar(f, "neuroc/graph/nodes/dw2/groups", &g));
    assert_true(g == C);
    NC_ASSERT_OK(nc_h5_shape(f, "node/nodes/dw2/weight", &nd, shape)); /* other tools': dense */
    assert_int_equal(shape[1], C);
    NC_ASSERT_OK(nc_h5_read_f64_scalar(f, "node/nodes/dw2/groups", &g));
    assert_true(g == 1);
    H5Fclose(f);
    write_text(nc_test_pathf("%s.json", out_path("depthwise.nir")),
               "{\"nodes\": {\n"
               " \"input\": {\"type\": \"Input\"}, \"if1\": {\"type\": \"IF\"}, \"if2\": {\"type\": \"IF\"},\n"
               " \"dw\": {\"type\": \"Conv2d\", \"shapes\": {\"weight\": [128, 128, 3, 3]}, \"ints\": {\"groups\": 1}},\n"
               " \"dw2\": {\"type\": \"Conv2d\", \"shapes\": {\"weight\": [128, 128, 3, 3]}, \"ints\": {\"groups\": 1}},\n"
               " \"flat\": {\"type\": \"Flatten\"}, \"fc\": {\"type\": \"Affine\"}, \"output\": {\"type\": \"Output\"}},\n"
               "\"edges\": [[\"input\", \"dw\"], [\"dw\", \"if1\"], [\"if1\", \"dw2\"], [\"dw2\", \"if2\"],\n"
               "  [\"if2\", \"flat\"], [\"flat\", \"fc\"], [\"fc\", \"output\"]]}\n");
    /* read as plain NIR (without /neuroc) it is the dense convolution */
    f = H5Fopen(out_path("depthwise.nir"), H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Ldelete(f, "neuroc", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    nc_snn *pl = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(out_path("depthwise.nir"), NULL, &pl));
    assert_int_equal(pl->layers[1].groups, 1);
    assert_int_equal(pl->layers[1].weight->shape[1], C);
    nc_snn_free(pl);
    /* the dense spelling is mostly zeros, deflated: the file stays far
       below even one dense convolution's float32 size */
    assert_true(file_size(out_path("depthwise.nir")) < dense);
    /* strict mode: nothing approximated, written */
    nc_snn *d = save_and_load(a, "depthwise_strict.nir", 1);
    assert_snn_same(a, d);
    unlink(out_path("depthwise_strict.nir"));
    nc_snn_free(d);
    nc_tensor *ts[] = {w, bias, wf, t};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    nc_snn_free(a);
    nc_snn_free(b);
}

/* (8,6,6) → conv1 → IF per-channel θ → conv2 (groups 4) → IF per-channel
 * θ → dw (depthwise 7×7) → IF per-channel θ → flatten → fc → readout:
 * conv2, dw and fc fold their input's θ, weights large enough for the
 * compressed original (nir_write.c: fold_factor, weight_xor). */
enum { XC = 64 };
static nc_snn *build_xor_net(void)
{
    nc_snn *s = NULL;
    int64_t in_shape[] = {8, 6, 6}, w1s[] = {XC, 8, 3, 3}, w2s[] = {XC, XC / 4, 3, 3}, wds[] = {XC, 1, 7, 7};
    int64_t fcs[] = {100, XC * 36}, c = XC;
    rng_state = 777; /* the same network every time (the hostile copies) */
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &s));
    nc_tensor *w1 = rand_tensor(4, w1s, -0.3f, 0.5f), *w2 = rand_tensor(4, w2s, -0.2f, 0.3f);
    nc_tensor *wd = rand_tensor(4, wds, -0.1f, 0.2f), *wf = rand_tensor(2, fcs, -0.1f, 0.1f);
    nc_tensor *b = rand_tensor(1, &c, 0.0f, 0.1f);
    nc_tensor *th[3];
    for (int k = 0; k < 3; k++)
        th[k] = rand_tensor(1, &c, 0.3f, 2.0f);
    nc_conv2d_params p1 = {{1, 1}, {1, 1}, {1, 1}, 1}, p2 = {{1, 1}, {1, 1}, {1, 1}, 4};
    nc_conv2d_params pd = {{1, 1}, {3, 3}, {1, 1}, XC};
    int id, prev;
    const char *convs[] = {"conv1", "conv2", "dw"}, *ifs[] = {"if1", "if2", "if3"};
    nc_tensor *ws[] = {w1, w2, wd};
    const nc_conv2d_params *ps[] = {&p1, &p2, &pd};
    prev = 0;
    for (int k = 0; k < 3; k++) {
        nc_if_params ip = {th[k], NULL, NULL, NC_RESET_SUBTRACT, 0, 0};
        NC_ASSERT_OK(nc_snn_add_conv2d(s, prev, ws[k], b, ps[k], convs[k], &id));
        NC_ASSERT_OK(nc_snn_add_if(s, id, &ip, ifs[k], &prev));
    }
    NC_ASSERT_OK(nc_snn_add_flatten(s, prev, "flat", &id));
    NC_ASSERT_OK(nc_snn_add_affine(s, id, wf, NULL, "fc", &id));
    NC_ASSERT_OK(nc_snn_add_readout(s, id, "readout", &id));
    nc_tensor *ts[] = {w1, w2, wd, wf, b, th[0], th[1], th[2]};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    return s;
}

/* Bytes of the float data of a network's NIR graph: weights (grouped ones
 * spelled out when dense), biases, an IF's r and v_threshold. */
static long graph_bytes(const nc_snn *s, int dense)
{
    long n = 0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        long groups = dense && L->kind == NC_SNN_CONV2D ? (long)L->groups : 1;
        n += 4 * ((L->weight ? L->weight->numel * groups : 0) + (L->bias ? L->bias->numel : 0) +
                  (L->kind == NC_SNN_IF ? 2 * nc_snn_layer_size(L) : 0));
    }
    return n;
}

/* Bytes HDF5 stores for dataset loc of f. */
static long storage(hid_t f, const char *loc)
{
    hid_t d = H5Dopen2(f, loc, H5P_DEFAULT);
    assert_true(d >= 0);
    long n = (long)H5Dget_storage_size(d);
    H5Dclose(d);
    return n;
}

/* A folded layer's original weight is stored as fold_factor and the
 * compressed weight_xor, not a second float32 copy, and reads back bit
 * for bit: grouped and depthwise Conv2d, an Affine after a Flatten. */
static void test_roundtrip_xor(void **state)
{
    (void)state;
    nc_snn *a = build_xor_net();
    nc_snn *b = roundtrip(a, "xor.nir", 0, 2);
    const char *path = out_path("xor.nir");
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    char loc[64];
    snprintf(loc, sizeof loc, "neuroc/layers/%d/weight", nc_snn_find_layer(a, "conv1"));
    assert_false(nc_h5_exists(f, loc)); /* no fold, nothing to keep */
    const char *folded[] = {"conv2", "dw", "fc"};
    const int64_t cols[] = {XC, XC, XC * 36};
    long weights = 0;
    for (int k = 0; k < 3; k++) {
        int li = nc_snn_find_layer(a, folded[k]);
        const nc_tensor *W = a->layers[li].weight;
        snprintf(loc, sizeof loc, "neuroc/layers/%d/weight", li);
        assert_false(nc_h5_exists(f, loc));
        int nd = 0;
        int64_t shape[NC_MAX_DIMS];
        snprintf(loc, sizeof loc, "neuroc/layers/%d/fold_factor", li);
        NC_ASSERT_OK(nc_h5_shape(f, loc, &nd, shape));
        assert_int_equal(nd, 1);
        assert_int_equal(shape[0], cols[k]);
        snprintf(loc, sizeof loc, "neuroc/layers/%d/weight_xor", li);
        NC_ASSERT_OK(nc_h5_shape(f, loc, &nd, shape));
        assert_int_equal(nd, W->ndim);
        assert_memory_equal(shape, W->shape, (size_t)nd * sizeof shape[0]);
        /* the factor and the compressed difference: a fraction of a copy */
        long stored = storage(f, loc) + (long)cols[k] * 4, bytes = (long)W->numel * 4;
        print_message("%s: original in %ld bytes (float32: %ld)\n", folded[k], stored, bytes);
        assert_true(stored < bytes / 4);
        weights += bytes;
    }
    /* neuroc's graph links to the standard graph's nodes where they are the
       same (conv1, fc: what IF neurons read; conv2 and dw are dense there) */
    const char *linked[] = {"conv1", "fc"};
    long shared = 0;
    for (int k = 0; k < 2; k++) {
        hid_t d1 = H5Dopen2(f, nc_test_pathf("node/nodes/%s/weight", linked[k]), H5P_DEFAULT);
        hid_t d2 = H5Dopen2(f, nc_test_pathf("neuroc/graph/nodes/%s/weight", linked[k]), H5P_DEFAULT);
        assert_true(d1 >= 0 && d2 >= 0);
        assert_true(H5Dget_offset(d1) == H5Dget_offset(d2));
        shared += (long)H5Dget_storage_size(d1);
        H5Dclose(d1);
        H5Dclose(d2);
    }
    H5Fclose(f);
    /* the file is about what the two graphs hold, the linked nodes once;
       with the folded weights twice (the NIR node's, the original's) it
       would be 1.7 times neuroc's graph */
    nc_snn *std = NULL;
    NC_ASSERT_OK(nc_snn_nir_standard(a, &std, NULL, 0));
    long graph = graph_bytes(a, 0), std_graph = graph_bytes(std, 1);
    nc_snn_free(std);
    long size = file_size(path);
    print_message("xor.nir: %ld bytes; the NIR graph's data %ld, the standard graph's %ld, shared %ld, of it folded "
                  "weights %ld\n", size, graph, std_graph, shared, weights);
    assert_true(size < std_graph + graph - shared + graph / 4);
    write_text(nc_test_pathf("%s.json", path),
               "{\"nodes\": {\n"
               " \"input\": {\"type\": \"Input\"}, \"if1\": {\"type\": \"IF\"}, \"if2\": {\"type\": \"IF\"},\n"
               " \"if3\": {\"type\": \"IF\"}, \"conv1\": {\"type\": \"Conv2d\"},\n"
               " \"conv2\": {\"type\": \"Conv2d\", \"shapes\": {\"weight\": [64, 64, 3, 3]},\n"
               "   \"ints\": {\"groups\": 1}},\n"
               " \"dw\": {\"type\": \"Conv2d\", \"shapes\": {\"weight\": [64, 64, 7, 7]}, \"ints\": {\"groups\": 1}},\n"
               " \"flat\": {\"type\": \"Flatten\"}, \"fc\": {\"type\": \"Affine\"},\n"
               " \"output\": {\"type\": \"Output\"}},\n"
               "\"edges\": [[\"input\", \"conv1\"], [\"conv1\", \"if1\"], [\"if1\", \"conv2\"], [\"conv2\", \"if2\"],\n"
               "  [\"if2\", \"dw\"], [\"dw\", \"if3\"], [\"if3\", \"flat\"], [\"flat\", \"fc\"],\n"
               "  [\"fc\", \"output\"]]}\n");
    nc_snn_free(a);
    nc_snn_free(b);
}

/* A fresh copy of xor.nir to break; group gets the /neuroc group of `layer`. */
static hid_t broken_xor_copy(const char *name, const char *layer, char *path, size_t n, char *group, size_t gn)
{
    int li;
    hid_t f = fresh_copy(build_xor_net, name, path, n, layer, &li);
    snprintf(group, gn, "neuroc/layers/%d", li);
    return f;
}

/* Replaces dataset `field` of group g of f by n float32 values. */
static void replace_f32(hid_t f, const char *g, const char *field, int ndim, const int64_t *shape, const float *v)
{
    const char *loc = nc_test_pathf("%s/%s", g, field);
    assert_true(H5Ldelete(f, loc, H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_f32(f, loc, ndim, shape, v));
}

/* weight_xor and fold_factor that lie: clear errors naming the file and
 * layer; a file of /neuroc format 1 (the original as a plain `weight`)
 * still reads. */
static void test_xor_hostile(void **state)
{
    (void)state;
    char path[4096], g[64];
    static float fac[XC * 36], zeros[XC * 16 * 9];
    for (int k = 0; k < XC * 36; k++)
        fac[k] = 1.5f;
    int64_t n63 = 63, n64 = XC, wrong[] = {XC, 16, 3, 2};

    hid_t f = broken_xor_copy("xor_shape.nir", "conv2", path, sizeof path, g, sizeof g);
    assert_true(H5Ldelete(f, nc_test_pathf("%s/weight_xor", g), H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_u32_deflate(f, nc_test_pathf("%s/weight_xor", g), 4, wrong, (const uint32_t *)zeros));
    H5Fclose(f);
    expect_error(path, NC_ERR_SHAPE, "layer 'conv2'",
                 "'weight_xor' has shape [64, 16, 3, 2], the weight [64, 16, 3, 3]");

    f = broken_xor_copy("xor_float.nir", "conv2", path, sizeof path, g, sizeof g);
    int64_t w2s[] = {XC, 16, 3, 3};
    replace_f32(f, g, "weight_xor", 4, w2s, zeros);
    H5Fclose(f);
    expect_error(path, NC_ERR_PARSE, "layer 'conv2'", "'weight_xor' is not an integer array");

    f = broken_xor_copy("xor_factor_len.nir", "dw", path, sizeof path, g, sizeof g);
    replace_f32(f, g, "fold_factor", 1, &n63, fac);
    H5Fclose(f);
    expect_error(path, NC_ERR_SHAPE, "layer 'dw'", "'fold_factor' has shape [63]; the weight [64, 1, 7, 7] has 64");

    f = broken_xor_copy("xor_factor_zero.nir", "conv2", path, sizeof path, g, sizeof g);
    fac[5] = 0.0f;
    replace_f32(f, g, "fold_factor", 1, &n64, fac);
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "layer 'conv2'", "'fold_factor' [5] is 0: a factor is finite and nonzero");

    f = broken_xor_copy("xor_factor_nan.nir", "fc", path, sizeof path, g, sizeof g);
    fac[5] = 1.5f;
    fac[100] = nanf("");
    int64_t nfc = XC * 36;
    replace_f32(f, g, "fold_factor", 1, &nfc, fac);
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "layer 'fc'", "'fold_factor' [100] is nan");

    f = broken_xor_copy("xor_no_factor.nir", "fc", path, sizeof path, g, sizeof g);
    assert_true(H5Ldelete(f, nc_test_pathf("%s/fold_factor", g), H5P_DEFAULT) >= 0);
    H5Fclose(f);
    expect_error(path, NC_ERR_PARSE, "layer 'fc'", "'fold_factor' is missing");

    f = broken_xor_copy("xor_and_weight.nir", "conv2", path, sizeof path, g, sizeof g);
    NC_ASSERT_OK(nc_h5_write_f32(f, nc_test_pathf("%s/weight", g), 4, w2s, zeros));
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "layer 'conv2'", "both 'weight' and 'weight_xor'");

    f = broken_xor_copy("xor_on_if.nir", "if2", path, sizeof path, g, sizeof g);
    NC_ASSERT_OK(nc_h5_write_u32_deflate(f, nc_test_pathf("%s/weight_xor", g), 4, wrong, (const uint32_t *)zeros));
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "layer 'if2'", "'weight_xor' on a layer of kind IF");

    /* format 1: every original weight plainly */
    nc_snn *a = build_xor_net(), *b = NULL;
    f = broken_xor_copy("xor_format1.nir", "fc", path, sizeof path, g, sizeof g);
    const char *names[] = {"conv2", "dw", "fc"};
    for (int k = 0; k < 3; k++) {
        const nc_snn_layer *L = &a->layers[nc_snn_find_layer(a, names[k])];
        snprintf(g, sizeof g, "neuroc/layers/%d", nc_snn_find_layer(a, names[k]));
        assert_true(H5Ldelete(f, nc_test_pathf("%s/weight_xor", g), H5P_DEFAULT) >= 0);
        replace_f32(f, g, "fold_factor", L->weight->ndim, L->weight->shape, nc_f32(L->weight));
        assert_true(H5Lmove(f, nc_test_pathf("%s/fold_factor", g), f, nc_test_pathf("%s/weight", g), H5P_DEFAULT,
                            H5P_DEFAULT) >= 0);
    }
    assert_true(H5Ldelete(f, "neuroc/format_version", H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_i64_scalar(f, "neuroc/format_version", 1));
    H5Fclose(f);
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &b));
    assert_snn_same(a, b);
    nc_snn_free(a);
    nc_snn_free(b);
}

/* (2,8,8) → conv → IF → "avgc": average 3×3 s2 p1 in ceil mode, only real
 * inputs counted (count_include_pad=False) → conv → IF → "mpc": ceil-mode
 * max pool 2 s2 → "avgi": average 2×2 s1 p1 counting the padding of rows
 * only → "avg": a plain average (one scale) → flatten → fc → readout. The
 * pools with divisors have no NIR node; the plain one does. */
static nc_snn *build_div_net(void)
{
    nc_snn *s = NULL;
    int64_t in_shape[] = {2, 8, 8}, wa[] = {3, 2, 3, 3}, wb[] = {4, 3, 3, 3}, fcs[] = {5, 36}, three = 3, four = 4;
    NC_ASSERT_OK(nc_snn_create(3, in_shape, &s));
    nc_tensor *w1 = rand_tensor(4, wa, -0.3f, 0.7f), *b1 = rand_tensor(1, &three, 0.0f, 0.2f);
    nc_tensor *w2 = rand_tensor(4, wb, -0.3f, 0.6f), *b2 = rand_tensor(1, &four, 0.0f, 0.1f);
    nc_tensor *wf = rand_tensor(2, fcs, -0.5f, 0.5f);
    float th1 = 0.5f, th2 = 0.7f;
    nc_tensor *t1 = vec(1, &th1), *t2 = vec(1, &th2);
    nc_conv2d_params p = {{1, 1}, {1, 1}, {1, 1}, 1};
    int id, c1, i1, ac, c2, i2, mp, ai, av, fl, fc;
    int64_t k3[] = {3, 3}, k2[] = {2, 2}, s2[] = {2, 2}, s1[] = {1, 1}, p1[] = {1, 1}, p0[] = {0, 0};
    int64_t e1[] = {1, 1}, e0[] = {0, 0}, rows[] = {1, 0};
    NC_ASSERT_OK(nc_snn_add_conv2d(s, 0, w1, b1, &p, "conv1", &c1));
    nc_if_params ip1 = {t1, NULL, NULL, NC_RESET_SUBTRACT, 0, 0}, ip2 = {t2, NULL, NULL, NC_RESET_ZERO, 0, 0};
    NC_ASSERT_OK(nc_snn_add_if(s, c1, &ip1, "if1", &i1));
    NC_ASSERT_OK(nc_snn_add_pool2d_div(s, i1, k3, s2, p1, e1, p0, "avgc", &ac));
    assert_int_equal(s->layers[ac].shape[1], 5); /* floor mode: 4 */
    NC_ASSERT_OK(nc_snn_add_conv2d(s, ac, w2, b2, &p, "conv2", &c2));
    NC_ASSERT_OK(nc_snn_add_if(s, c2, &ip2, "if2", &i2));
    NC_ASSERT_OK(nc_snn_add_maxpool2d_ceil(s, i2, k2, s2, p0, e1, "mpc", &mp));
    assert_int_equal(s->layers[mp].shape[1], 3); /* floor mode: 2 */
    NC_ASSERT_OK(nc_snn_add_pool2d_div(s, mp, k2, s1, p1, e0, rows, "avgi", &ai));
    NC_ASSERT_OK(nc_snn_add_pool2d(s, ai, k2, s1, NULL, 0.25f, "avg", &av));
    NC_ASSERT_OK(nc_snn_add_flatten(s, av, "flat", &fl));
    NC_ASSERT_OK(nc_snn_add_affine(s, fl, wf, NULL, "fc", &fc));
    NC_ASSERT_OK(nc_snn_add_readout(s, fc, "readout", &id));
    nc_tensor *ts[] = {w1, b1, w2, b2, wf, t1, t2};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++)
        nc_tensor_free(ts[i]);
    return s;
}

/* Average pools whose partial windows have their own divisors (ceil mode,
 * count_include_pad=False): NIR's SumPool2d has one scale, so such a layer,
 * and only such a Pool2d, is a neuroc.Pool2d extension node; the round
 * trip keeps divisors, partial windows and outputs bit for bit. */
static void test_roundtrip_pool_div(void **state)
{
    (void)state;
    nc_snn *a = build_div_net();
    nc_snn *b = save_and_load(a, "pool_div.nir", 0);
    assert_snn_same(a, b);
    assert_true(nc_hash_snn(a) == nc_hash_snn(b));
    assert_runs_identical(a, b, 3);
    const char *path = out_path("pool_div.nir");
    const char *nodes[][2] = {{"avgc", "neuroc.Pool2d"}, {"mpc", "neuroc.MaxPool2d"}, {"avgi", "neuroc.Pool2d"},
                              {"avg", "SumPool2d"}}; /* decided per layer, not per kind */
    for (size_t k = 0; k < sizeof nodes / sizeof nodes[0]; k++) {
        char *type = graph_node_type(path, 1, nodes[k][0]);
        assert_string_equal(type, nodes[k][1]);
        nc_free(type);
    }
    assert_true(has_edge(path, "if1", "avgc"));
    assert_true(has_edge(path, "avgc", "conv2"));
    assert_true(has_edge(path, "avgi", "avg"));
    const char *std_nodes[] = {"avgc", "mpc", "avgi", "avg"}; /* other tools: plain sum pools */
    for (size_t k = 0; k < sizeof std_nodes / sizeof std_nodes[0]; k++) {
        char *type = graph_node_type(path, 0, std_nodes[k]);
        assert_string_equal(type, "SumPool2d");
        nc_free(type);
    }
    write_text(nc_test_pathf("%s.json", path), "{\"type_check\": true}\n");
    expect_strict_refusal(a, "pool_div_strict", "avgc", "divisors");
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = 1;
    assert_int_equal(nc_snn_save_nir_with(a, out_path("pool_div_strict/y.nir"), &so), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "divisors"));
    /* without divisors the same kind of layer is plain NIR again */
    nc_snn *c = build_div_net();
    for (int i = 0; i < c->n_layers; i++) {
        nc_snn_layer *L = &c->layers[i];
        assert_int_equal(nc_snn_layer_nir_expressible(L), nc_snn_kind(L->kind)->nir && !L->div_taps);
    }
    nc_snn_free(a);
    nc_snn_free(b);
    nc_snn_free(c);
}

/* A fresh copy of pool_div.nir to break; *layer gets avgc's /neuroc index. */
static hid_t broken_div_copy(const char *name, char *path, size_t n, int *layer)
{
    return fresh_copy(build_div_net, name, path, n, "avgc", layer);
}

static void replace_i64(hid_t f, const char *loc, int64_t n, const int64_t *v);

/* Divisor fields that lie: clear errors naming the layer. */
static void test_pool_div_hostile(void **state)
{
    (void)state;
    char path[4096], loc[64];
    int li;
    int64_t big[] = {2, 0}, neg[] = {0, -1}, three[] = {0, 0, 0}, two = 2, far[] = {3, 7, 7};
    hid_t f = broken_div_copy("div_pad_big.nir", path, sizeof path, &li);
    replace_i64(f, "node/nodes/avgc/div_pad", 2, big);
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "Pool2d 'avgc'", "div_pad (2, 0) must be in [0, padding (1, 1)]");

    f = broken_div_copy("div_pad_neg.nir", path, sizeof path, &li);
    replace_i64(f, "node/nodes/avgc/div_pad", 2, neg);
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "Pool2d 'avgc'", "div_pad (0, -1) must be in");

    f = broken_div_copy("div_pad_rank.nir", path, sizeof path, &li);
    replace_i64(f, "node/nodes/avgc/div_pad", 3, three);
    H5Fclose(f);
    expect_error(path, NC_ERR_SHAPE, "extension node 'avgc' (neuroc.Pool2d)", "'div_pad' has 3 values");

    f = broken_div_copy("div_taps_two.nir", path, sizeof path, &li);
    assert_true(H5Ldelete(f, "node/nodes/avgc/div_taps", H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_i64_scalar(f, "node/nodes/avgc/div_taps", two));
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "extension node 'avgc'", "'div_taps' must be 0 or 1");

    /* divisors gone: avgi's counted padding is left without them; avgc
       (no counted padding) would be a pool NIR can hold */
    f = broken_div_copy("div_taps_gone.nir", path, sizeof path, &li);
    assert_true(H5Ldelete(f, "node/nodes/avgi/div_taps", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "Pool2d 'avgi'", "0 without");
    f = broken_div_copy("div_fields_gone.nir", path, sizeof path, &li);
    assert_true(H5Ldelete(f, "node/nodes/avgc/div_taps", H5P_DEFAULT) >= 0);
    assert_true(H5Ldelete(f, "node/nodes/avgc/div_pad", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "node 'avgc' is an extension node, but NIR can express this Pool2d", NULL);

    /* a shape two windows past floor mode is no partial window */
    f = broken_div_copy("div_shape.nir", path, sizeof path, &li);
    replace_i64(f, "node/nodes/avgc/shape", 3, far);
    snprintf(loc, sizeof loc, "neuroc/layers/%d/shape", li);
    replace_i64(f, loc, 3, far);
    H5Fclose(f);
    expect_error(path, NC_ERR_SHAPE, "layer 'avgc'", "shape differs");

    /* divisors on another kind */
    f = broken_div_copy("div_on_max.nir", path, sizeof path, &li);
    NC_ASSERT_OK(nc_h5_write_i64_scalar(f, "node/nodes/mpc/div_taps", 1));
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "layer 'mpc' (MaxPool2d): per-window divisors belong to a Pool2d", NULL);
}

/* A fresh copy of maxpool.nir to break. */
static hid_t broken_copy(const char *name, char *path, size_t n)
{
    return fresh_copy(build_maxpool, name, path, n, NULL, NULL);
}

static void replace_i64(hid_t f, const char *loc, int64_t n, const int64_t *v)
{
    assert_true(H5Ldelete(f, loc, H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_i64(f, loc, 1, &n, v));
}

static void replace_string(hid_t f, const char *loc, const char *v)
{
    assert_true(H5Ldelete(f, loc, H5P_DEFAULT) >= 0);
    NC_ASSERT_OK(nc_h5_write_string(f, loc, v));
}

/* Extension nodes that lie: clear errors naming the node. */
static void test_extension_hostile(void **state)
{
    (void)state;
    char path[4096];
    hid_t f = broken_copy("ext_no_neuroc.nir", path, sizeof path);
    assert_true(H5Ldelete(f, "neuroc", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    expect_error(path, NC_ERR_UNSUPPORTED, "node 'pool' is a neuroc extension node ('neuroc.MaxPool2d'", "/neuroc");

    f = broken_copy("ext_missing_field.nir", path, sizeof path);
    assert_true(H5Ldelete(f, "node/nodes/pool/kernel", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    expect_error(path, NC_ERR_PARSE, "extension node 'pool' (neuroc.MaxPool2d)", "'kernel' is missing");

    int64_t three[] = {2, 2, 2}, big[] = {11, 11}, pad[] = {2, 2}, wrong_shape[] = {3, 9, 9};
    f = broken_copy("ext_kernel_rank.nir", path, sizeof path);
    replace_i64(f, "node/nodes/pool/kernel", 3, three);
    H5Fclose(f);
    expect_error(path, NC_ERR_SHAPE, "extension node 'pool'", "'kernel' has 3 values");

    f = broken_copy("ext_kernel_big.nir", path, sizeof path);
    replace_i64(f, "node/nodes/pool/kernel", 2, big);
    H5Fclose(f);
    expect_error(path, NC_ERR_SHAPE, "MaxPool2d 'pool'", "kernel larger than the padded input");

    f = broken_copy("ext_padding.nir", path, sizeof path);
    replace_i64(f, "node/nodes/pool/padding", 2, pad);
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "MaxPool2d 'pool'", "smaller than the kernel");

    f = broken_copy("ext_shape.nir", path, sizeof path);
    replace_i64(f, "neuroc/layers/3/shape", 3, wrong_shape);
    H5Fclose(f);
    expect_error(path, NC_ERR_SHAPE, "layer 'pool'", "shape differs");

    f = broken_copy("ext_unknown_kind.nir", path, sizeof path);
    replace_string(f, "neuroc/layers/3/kind", "WarpPool2d");
    replace_string(f, "node/nodes/pool/type", "neuroc.WarpPool2d");
    H5Fclose(f);
    expect_error(path, NC_ERR_UNSUPPORTED, "node 'pool': unknown layer kind 'WarpPool2d'", NULL);

    f = broken_copy("ext_wrong_type.nir", path, sizeof path);
    replace_string(f, "node/nodes/pool/type", "neuroc.Concat");
    H5Fclose(f);
    expect_error(path, NC_ERR_MODEL, "node 'pool' is a 'neuroc.Concat'", "'neuroc.MaxPool2d'");
}

/* ---- other tools' files ---- */

static const char *sample(const char *name)
{
    return nc_test_shared(nc_test_pathf("nir-samples/%s", name));
}

#define SAMPLE_OR_SKIP(var, name)                                                       \
    const char *var = sample(name);                                                     \
    if (!var) {                                                                         \
        print_message("../shared is absent: NIR sample %s not available\n", name);     \
        skip();                                                                         \
    }

static void test_sample_cnn_sinabs(void **state)
{
    (void)state;
    SAMPLE_OR_SKIP(path, "cnn_sinabs.nir");
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &s));
    static const nc_snn_layer_kind kinds[] = {
        NC_SNN_INPUT, NC_SNN_CONV2D, NC_SNN_IF,      NC_SNN_CONV2D, NC_SNN_IF, NC_SNN_POOL2D, NC_SNN_CONV2D,
        NC_SNN_IF,    NC_SNN_POOL2D, NC_SNN_FLATTEN, NC_SNN_AFFINE, NC_SNN_IF, NC_SNN_AFFINE, NC_SNN_IF};
    assert_int_equal(s->n_layers, sizeof kinds / sizeof kinds[0]);
    for (int i = 0; i < s->n_layers; i++)
        assert_int_equal(s->layers[i].kind, kinds[i]);
    const nc_snn_layer *c0 = &s->layers[1];
    assert_string_equal(c0->name, "0");
    assert_int_equal(c0->stride[0], 2);
    assert_int_equal(c0->padding[1], 1);
    assert_int_equal(c0->shape[1], 16);
    assert_int_equal(s->layers[9].shape[0], 128);
    assert_int_equal(nc_snn_output_id(s), 13);
    assert_int_equal(s->layers[13].shape[0], 10);
    int64_t in_shape[] = {2, 2, 34, 34};
    nc_tensor *in = rand_tensor(4, in_shape, 0.0f, 1.0f), *out = run(s, in, 8);
    assert_int_equal(out->numel, 8 * 2 * 10);
    nc_tensor_free(in);
    nc_tensor_free(out);
    /* and it survives neuroc's own round trip */
    nc_snn *b = save_and_load(s, "cnn_sinabs_rt.nir", 1);
    assert_snn_same(s, b);
    nc_snn_free(b);
    nc_snn_free(s);
}

static void test_sample_lif_norse(void **state)
{
    (void)state;
    SAMPLE_OR_SKIP(path, "lif_norse.nir");
    nc_snn *s = NULL;
    nc_nir_options opt = {.reset = NC_RESET_SUBTRACT, .dt = 1e-3};
    NC_ASSERT_OK(nc_snn_load_nir(path, &opt, &s));
    assert_int_equal(s->n_layers, 3);
    const nc_snn_layer *L = &s->layers[2];
    assert_int_equal(L->kind, NC_SNN_LIF);
    assert_true(nc_f32(L->tau)[0] == 0.0025f);
    assert_true(nc_f32(L->threshold)[0] == 0.1f);
    assert_true(L->dt == 1e-3);
    int64_t in_shape[] = {1, 1};
    nc_tensor *in = rand_tensor(2, in_shape, 0.5f, 1.0f), *out = run(s, in, 8);
    assert_int_equal(out->numel, 8);
    nc_tensor_free(in);
    nc_tensor_free(out);
    nc_snn_free(s);
}

static void test_sample_braille_recurrent(void **state)
{
    (void)state;
    SAMPLE_OR_SKIP(path, "braille_cubalif_subtract.nir");
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &s));
    int lif = nc_snn_find_layer(s, "lif1.lif"), rec = nc_snn_find_layer(s, "lif1.w_rec");
    assert_true(lif > 0 && rec > lif);
    const nc_snn_layer *L = &s->layers[lif], *sum = &s->layers[L->inputs[0]];
    assert_int_equal(L->kind, NC_SNN_CUBALIF);
    assert_int_equal(sum->kind, NC_SNN_ADD); /* fc1 + the recurrent w_rec */
    assert_int_equal(sum->n_inputs, 2);
    int has_back = 0;
    for (int k = 0; k < 2; k++)
        has_back |= sum->inputs[k] == rec && rec >= L->inputs[0];
    assert_true(has_back);
    assert_int_equal(s->layers[rec].kind, NC_SNN_AFFINE); /* Linear: zero bias */
    assert_true(nc_f32(s->layers[rec].bias)[0] == 0.0f);
    assert_int_equal(s->layers[nc_snn_output_id(s)].kind, NC_SNN_CUBALIF);
    int64_t in_shape[] = {2, 12};
    nc_tensor *in = rand_tensor(2, in_shape, 0.0f, 1.0f), *out = run(s, in, 8);
    assert_int_equal(out->numel, 8 * 2 * 7);
    nc_tensor_free(in);
    nc_tensor_free(out);
    nc_snn *b = save_and_load(s, "braille_rt.nir", 1);
    assert_snn_same(s, b);
    nc_snn_free(b);
    nc_snn_free(s);
}

static void test_sample_braille_broken_subgraph(void **state)
{
    (void)state;
    SAMPLE_OR_SKIP(path, "braille_cubalif_subgraph.nir");
    nc_snn *s = (nc_snn *)0x1;
    assert_int_equal(nc_snn_load_nir(path, NULL, &s), NC_ERR_MODEL);
    assert_null(s);
    const char *msg = nc_last_error();
    assert_non_null(strstr(msg, "missing node 'lif'"));
    assert_non_null(strstr(msg, "('input', 'lif')"));
    assert_non_null(strstr(msg, "graph 'lif1'"));
}

/* ---- broken and unusual files, written here with HDF5 ---- */

typedef struct mini {
    hid_t f, nodes;
    char path[4096];
} mini;

static void mini_begin(mini *m, const char *name)
{
    snprintf(m->path, sizeof m->path, "%s", out_path(name));
    m->f = H5Fcreate(m->path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(m->f >= 0);
    NC_ASSERT_OK(nc_h5_write_string(m->f, "version", "0.2.0"));
    hid_t g = H5Gcreate2(m->f, "node", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    NC_ASSERT_OK(nc_h5_write_string(g, "type", "NIRGraph"));
    H5Gclose(g);
    m->nodes = H5Gcreate2(m->f, "node/nodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
}

static hid_t mini_node(mini *m, const char *name, const char *type)
{
    hid_t g = H5Gcreate2(m->nodes, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (type)
        NC_ASSERT_OK(nc_h5_write_string(g, "type", type));
    return g;
}

static void mini_io(mini *m, const char *name, const char *type, int64_t n)
{
    hid_t g = mini_node(m, name, type);
    int64_t one = 1;
    NC_ASSERT_OK(nc_h5_write_i64(g, "shape", 1, &one, &n));
    H5Gclose(g);
}

static void mini_affine(mini *m, const char *name, int ndim, const int64_t *wshape)
{
    hid_t g = mini_node(m, name, "Affine");
    float w[64] = {0};
    NC_ASSERT_OK(nc_h5_write_f32(g, "weight", ndim, wshape, w));
    NC_ASSERT_OK(nc_h5_write_f32(g, "bias", 1, wshape, w));
    H5Gclose(g);
}

static void mini_end(mini *m, int n_edges, const char *const *edges)
{
    H5Gclose(m->nodes);
    hid_t g = H5Gopen2(m->f, "node", H5P_DEFAULT);
    NC_ASSERT_OK(nc_h5_write_strings(g, "edges", n_edges, 2, edges));
    H5Gclose(g);
    H5Fclose(m->f);
}

static void expect_error(const char *path, nc_status want, const char *needle1, const char *needle2)
{
    nc_snn *s = (nc_snn *)0x1;
    nc_status st = nc_snn_load_nir(path, NULL, &s);
    if (st != want || !strstr(nc_last_error(), needle1) || (needle2 && !strstr(nc_last_error(), needle2)))
        fail_msg("%s: got %s: '%s'; expected %s mentioning '%s'", path, nc_status_str(st), nc_last_error(),
                 nc_status_str(want), needle1);
    assert_null(s);
    assert_non_null(strstr(nc_last_error(), path)); /* every message names the file */
}

static const char *const IO_EDGES[] = {"input", "fc", "fc", "output"};

static void test_malformed_files(void **state)
{
    (void)state;
    int64_t w2[] = {4, 4}, w3[] = {2, 2, 4};
    mini m;

    mini_begin(&m, "bad_no_type.nir");
    mini_io(&m, "input", "Input", 4);
    H5Gclose(mini_node(&m, "fc", NULL));
    mini_io(&m, "output", "Output", 4);
    mini_end(&m, 2, IO_EDGES);
    expect_error(m.path, NC_ERR_PARSE, "node 'fc'", "'type'");

    mini_begin(&m, "bad_unknown_type.nir");
    mini_io(&m, "input", "Input", 4);
    H5Gclose(mini_node(&m, "fc", "Foo"));
    mini_io(&m, "output", "Output", 4);
    mini_end(&m, 2, IO_EDGES);
    expect_error(m.path, NC_ERR_UNSUPPORTED, "unsupported NIR node type 'Foo' in node 'fc'", NULL);

    mini_begin(&m, "bad_missing_node.nir");
    mini_io(&m, "input", "Input", 4);
    mini_affine(&m, "fc", 2, w2);
    mini_io(&m, "output", "Output", 4);
    const char *const e_missing[] = {"input", "fc", "fc", "nope", "fc", "output"};
    mini_end(&m, 3, e_missing);
    expect_error(m.path, NC_ERR_MODEL, "missing node 'nope'", "('fc', 'nope')");

    mini_begin(&m, "bad_weight_rank.nir");
    mini_io(&m, "input", "Input", 4);
    mini_affine(&m, "fc", 3, w3);
    mini_io(&m, "output", "Output", 4);
    mini_end(&m, 2, IO_EDGES);
    expect_error(m.path, NC_ERR_SHAPE, "node 'fc'", "rank 3");

    mini_begin(&m, "bad_no_input.nir");
    mini_affine(&m, "fc", 2, w2);
    mini_io(&m, "output", "Output", 4);
    const char *const e_noin[] = {"fc", "output"};
    mini_end(&m, 1, e_noin);
    expect_error(m.path, NC_ERR_MODEL, "no Input node", NULL);

    mini_begin(&m, "bad_if_r.nir"); /* IF with a NaN r: refused (r != 1 runs: test_nir_spec.c) */
    mini_io(&m, "input", "Input", 4);
    hid_t g = mini_node(&m, "fc", "IF");
    float r[4] = {1, NAN, 1, 1}, th[4] = {1, 1, 1, 1};
    int64_t four = 4;
    NC_ASSERT_OK(nc_h5_write_f32(g, "r", 1, &four, r));
    NC_ASSERT_OK(nc_h5_write_f32(g, "v_threshold", 1, &four, th));
    H5Gclose(g);
    mini_io(&m, "output", "Output", 4);
    mini_end(&m, 2, IO_EDGES);
    expect_error(m.path, NC_ERR_MODEL, "node 'fc'", "'r' holds NaN");

    mini_begin(&m, "empty_edges.nir"); /* (0,) edges parse; the Output is then unreachable */
    mini_io(&m, "input", "Input", 4);
    mini_io(&m, "output", "Output", 4);
    H5Gclose(m.nodes);
    hsize_t zero = 0;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    hid_t sp = H5Screate_simple(1, &zero, NULL);
    hid_t ds = H5Dcreate2(m.f, "node/edges", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(ds);
    H5Sclose(sp);
    H5Tclose(t);
    H5Fclose(m.f);
    expect_error(m.path, NC_ERR_MODEL, "'output' cannot be reached", NULL);

    char garbage[4096];
    snprintf(garbage, sizeof garbage, "%s", out_path("not_hdf5.nir"));
    write_text(garbage, "this is not HDF5\n");
    expect_error(garbage, NC_ERR_PARSE, "not an HDF5 file", NULL);
    expect_error("/nonexistent/x.nir", NC_ERR_IO, "x.nir", NULL);
}

/* Fixed-length strings (older h5py), float64 and deflate-compressed data. */
static void test_fixed_strings_and_deflate(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s", out_path("fixed_deflate.nir"));
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 8);
    H5Tset_strpad(st, H5T_STR_NULLPAD);
    hid_t scalar = H5Screate(H5S_SCALAR);
#define FIXED(loc, name, text)                                                                   \
    do {                                                                                         \
        char b_[8] = {0};                                                                        \
        memcpy(b_, text, strlen(text) < 8 ? strlen(text) : 8);                                   \
        hid_t d_ = H5Dcreate2(loc, name, st, scalar, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);   \
        H5Dwrite(d_, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, b_);                                   \
        H5Dclose(d_);                                                                            \
    } while (0)
    hid_t node = H5Gcreate2(f, "node", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    FIXED(node, "type", "NIRGraph");
    hid_t nodes = H5Gcreate2(node, "nodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const char *names[] = {"input", "fc", "output"}, *types[] = {"Input", "Linear", "Output"};
    int64_t shapes[] = {3, 0, 2};
    for (int i = 0; i < 3; i++) {
        hid_t g = H5Gcreate2(nodes, names[i], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        FIXED(g, "type", types[i]);
        if (shapes[i]) {
            int64_t one = 1;
            NC_ASSERT_OK(nc_h5_write_i64(g, "shape", 1, &one, &shapes[i]));
        } else {
            hsize_t dims[2] = {2, 3}, chunk[2] = {1, 3};
            double w[6] = {0.5, -1.25, 2, 3, 4.5, -6};
            hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
            H5Pset_chunk(dcpl, 2, chunk);
            H5Pset_deflate(dcpl, 6);
            hid_t sp = H5Screate_simple(2, dims, NULL);
            hid_t d = H5Dcreate2(g, "weight", H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
            H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, w);
            H5Dclose(d);
            H5Sclose(sp);
            H5Pclose(dcpl);
        }
        H5Gclose(g);
    }
    H5Gclose(nodes);
    char edges[4][8] = {"input", "fc", "fc", "output"};
    hsize_t edims[2] = {2, 2};
    hid_t esp = H5Screate_simple(2, edims, NULL);
    hid_t ed = H5Dcreate2(node, "edges", st, esp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ed, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, edges);
    H5Dclose(ed);
    H5Sclose(esp);
    H5Gclose(node);
    H5Sclose(scalar);
    H5Tclose(st);
    H5Fclose(f);
#undef FIXED

    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &s));
    assert_int_equal(s->n_layers, 2);
    const nc_snn_layer *L = &s->layers[1];
    assert_int_equal(L->kind, NC_SNN_AFFINE);
    assert_string_equal(L->name, "fc");
    const float want[6] = {0.5f, -1.25f, 2, 3, 4.5f, -6};
    assert_memory_equal(nc_f32(L->weight), want, sizeof want);
    assert_int_equal(L->shape[0], 2);
    nc_snn_free(s);
}

int main(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the expected failures above need no HDF5 trace */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_cnn),
        cmocka_unit_test(test_roundtrip_mlp),
        cmocka_unit_test(test_same_bytes),
        cmocka_unit_test(test_plain_read_of_own_file),
        cmocka_unit_test(test_roundtrip_maxpool),
        cmocka_unit_test(test_roundtrip_spike_maxpool),
        cmocka_unit_test(test_roundtrip_spike_maxpool_bursts),
        cmocka_unit_test(test_roundtrip_concat),
        cmocka_unit_test(test_roundtrip_nonlinear),
        cmocka_unit_test(test_depthwise_compact),
        cmocka_unit_test(test_roundtrip_xor),
        cmocka_unit_test(test_xor_hostile),
        cmocka_unit_test(test_extension_hostile),
        cmocka_unit_test(test_format3_reads),
        cmocka_unit_test(test_roundtrip_pool_div),
        cmocka_unit_test(test_pool_div_hostile),
        cmocka_unit_test(test_sample_cnn_sinabs),
        cmocka_unit_test(test_sample_lif_norse),
        cmocka_unit_test(test_sample_braille_recurrent),
        cmocka_unit_test(test_sample_braille_broken_subgraph),
        cmocka_unit_test(test_malformed_files),
        cmocka_unit_test(test_fixed_strings_and_deflate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
