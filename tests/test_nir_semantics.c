/* NIR's own neuron semantics for other tools' files, through the C API
 * (nc_nir_options, nc_snn_neuron_at): the spec's IF by default (a spike
 * when v > θ, reset to v_reset, v(0) = 0), neuroc's earlier reading on
 * request, the limit meaning of τ = r = ∞, refusals of NaN and of an
 * infinite τ alone, and round trips of such networks through neuroc's own
 * files. Files are written here with HDF5 as another tool would. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <hdf5.h>

#include "export/data/h5io.h"
#include "snn/ir/snn_ir.h"

static const char *out_path(const char *name)
{
    mkdir(NC_BINARY_DIR "/nir-sem", 0755);
    return nc_test_pathf("%s/nir-sem/%s", NC_BINARY_DIR, name);
}

/* Input(n) -> node `type` with float fields -> Output(n), as a peer writes it. */
static void write_one(const char *path, const char *type, int n, int n_fields, const char *const *names,
                      const float *const *values)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    NC_ASSERT_OK(nc_h5_write_string(f, "version", "1.0.8"));
    hid_t g = H5Gcreate2(f, "node", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    NC_ASSERT_OK(nc_h5_write_string(g, "type", "NIRGraph"));
    hid_t nodes = H5Gcreate2(g, "nodes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int64_t one = 1, nn = n;
    const char *io[2][2] = {{"input", "Input"}, {"output", "Output"}};
    for (int k = 0; k < 2; k++) {
        hid_t h = H5Gcreate2(nodes, io[k][0], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        NC_ASSERT_OK(nc_h5_write_string(h, "type", io[k][1]));
        NC_ASSERT_OK(nc_h5_write_i64(h, "shape", 1, &one, &nn));
        H5Gclose(h);
    }
    hid_t h = H5Gcreate2(nodes, "neuron", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    NC_ASSERT_OK(nc_h5_write_string(h, "type", type));
    for (int k = 0; k < n_fields; k++)
        NC_ASSERT_OK(nc_h5_write_f32(h, names[k], 1, &nn, values[k]));
    H5Gclose(h);
    H5Gclose(nodes);
    const char *edges[] = {"input", "neuron", "neuron", "output"};
    NC_ASSERT_OK(nc_h5_write_strings(g, "edges", 2, 2, edges));
    H5Gclose(g);
    H5Fclose(f);
}

/* Runs s for T steps on a constant input x (one sample, n values) and
 * returns the output every step (T × n), on the given backend. */
static nc_tensor *run(const nc_snn *s, const char *backend, int n, const float *x, int T)
{
    nc_session_options o;
    nc_session_options_init(&o);
    o.backend = backend;
    o.timesteps = T;
    o.per_step = 1;
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    int64_t shape[2] = {1, n};
    nc_tensor *in = NULL, *out = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, shape, x, &in));
    NC_ASSERT_OK(nc_session_run(ss, in, &out));
    nc_tensor_free(in);
    nc_session_free(ss);
    return out;
}

static void spikes_at(const nc_tensor *y, const char *want)
{
    char got[256] = "";
    size_t off = 0;
    for (int64_t t = 0; t < y->numel; t++)
        if (nc_f32(y)[t] != 0.0f)
            off += (size_t)snprintf(got + off, sizeof got - off, "%s%lld", off ? " " : "", (long long)t + 1);
    if (strcmp(got, want) != 0)
        fail_msg("spikes at '%s', expected '%s'", got, want);
}

static const char *if_file(void)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s", out_path("if_threshold.nir"));
    float r = 1, th = 1;
    const char *names[] = {"r", "v_threshold"};
    const float *vals[] = {&r, &th};
    write_one(path, "IF", 1, 2, names, vals);
    return path;
}

/* The one-neuron threshold file: 0.5 a step, θ = 1. */
static void test_if_spec_default(void **state)
{
    (void)state;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(if_file(), NULL, &s));
    float x = 0.5f;
    const char *backends[] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++) {
        nc_tensor *y = run(s, backends[b], 1, &x, 8);
        spikes_at(y, "3 6");
        nc_tensor_free(y);
    }
    nc_snn_neuron_info ni;
    NC_ASSERT_OK(nc_snn_neuron_at(s, 1, &ni));
    assert_int_equal(ni.spike_gt, 1);
    assert_int_equal(ni.reset, NC_RESET_ZERO);
    assert_int_equal(ni.v_init_half, 0);
    assert_int_equal(nc_snn_neuron_at(s, 0, &ni), NC_ERR_INVALID_ARG); /* the input */
    nc_snn_free(s);
}

static void test_if_old_reading(void **state)
{
    (void)state;
    nc_nir_options o;
    nc_nir_options_init(&o);
    o.reset = NC_RESET_SUBTRACT;
    o.spike = NC_SPIKE_GE;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(if_file(), &o, &s));
    float x = 0.5f;
    nc_tensor *y = run(s, "cpu", 1, &x, 8);
    spikes_at(y, "2 4 6 8");
    nc_tensor_free(y);
    nc_snn_neuron_info ni;
    NC_ASSERT_OK(nc_snn_neuron_at(s, 1, &ni));
    assert_int_equal(ni.spike_gt, 0);
    assert_int_equal(ni.reset, NC_RESET_SUBTRACT);
    nc_snn_free(s);
    o.spike = (nc_spike_test)7;
    assert_int_equal(nc_snn_load_nir(if_file(), &o, &s), NC_ERR_INVALID_ARG);
    nc_nir_options_init(&o);
    o.integration = (nc_integration)9;
    assert_int_equal(nc_snn_load_nir(if_file(), &o, &s), NC_ERR_INVALID_ARG);
}

/* r = 2 and v_reset = −0.5: v = 1, 2 (> 1.5: spike, −0.5), 0.5, 1.5, 2.5 (spike), ... */
static void test_if_r_vreset(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s", out_path("if_r.nir"));
    float r = 2, th = 1.5f, vr = -0.5f;
    const char *names[] = {"r", "v_threshold", "v_reset"};
    const float *vals[] = {&r, &th, &vr};
    write_one(path, "IF", 1, 3, names, vals);
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &s));
    float x = 0.5f;
    nc_tensor *y = run(s, "cpu", 1, &x, 8);
    spikes_at(y, "2 5 8");
    nc_tensor_free(y);
    /* saved by neuroc and read back: the same semantics, from /neuroc */
    char p2[4096];
    snprintf(p2, sizeof p2, "%s", out_path("if_r_rt.nir"));
    NC_ASSERT_OK(nc_snn_save_nir(s, p2));
    nc_snn *b = NULL;
    nc_nir_options o;
    nc_nir_options_init(&o);
    o.reset = NC_RESET_SUBTRACT; /* ignored: neuroc's file says what it runs */
    NC_ASSERT_OK(nc_snn_load_nir(p2, &o, &b));
    y = run(b, "cpu-fast", 1, &x, 8);
    spikes_at(y, "2 5 8");
    nc_tensor_free(y);
    nc_snn_free(b);
    nc_snn_free(s);
}

/* snntorch's β = 1: τ = r = ∞ is v += I, never NaN */
static void test_lif_infinite_limit(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s", out_path("lif_inf.nir"));
    float tau = INFINITY, r = INFINITY, vl = 0, th = 1;
    const char *names[] = {"tau", "r", "v_leak", "v_threshold"};
    const float *vals[] = {&tau, &r, &vl, &th};
    write_one(path, "LIF", 1, 4, names, vals);
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &s));
    float x = 0.4f;
    nc_tensor *y = run(s, "cpu", 1, &x, 8); /* 0.4, 0.8, 1.2 (spike), 0.4, ... */
    spikes_at(y, "3 6");
    nc_tensor_free(y);
    nc_snn_neuron_info ni;
    NC_ASSERT_OK(nc_snn_neuron_at(s, 1, &ni));
    assert_int_equal(ni.limit_params, 1);
    nc_snn_free(s);

    r = 2; /* an infinite τ alone: refused, naming file and node */
    write_one(path, "LIF", 1, 4, names, vals);
    s = (nc_snn *)0x1;
    assert_int_equal(nc_snn_load_nir(path, NULL, &s), NC_ERR_MODEL);
    assert_null(s);
    assert_non_null(strstr(nc_last_error(), "lif_inf.nir"));
    assert_non_null(strstr(nc_last_error(), "node 'neuron'"));
    assert_non_null(strstr(nc_last_error(), "infinite tau"));
    tau = NAN;
    write_one(path, "LIF", 1, 4, names, vals);
    assert_int_equal(nc_snn_load_nir(path, NULL, &s), NC_ERR_MODEL);
    assert_non_null(strstr(nc_last_error(), "'tau' holds NaN"));
}

/* Exact integration: v += (1 − e^(−dt/τ))·(r·I − v) against Euler's dt/τ. */
static void test_lif_exact(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s", out_path("li.nir"));
    float tau = 2e-3f, r = 1, vl = 0;
    const char *names[] = {"tau", "r", "v_leak"};
    const float *vals[] = {&tau, &r, &vl};
    write_one(path, "LI", 1, 3, names, vals);
    nc_nir_options o;
    nc_nir_options_init(&o);
    o.dt = 1e-3;
    o.integration = NC_INTEGRATION_EXACT;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, &o, &s));
    float x = 1.0f;
    nc_tensor *y = run(s, "cpu", 1, &x, 3);
    double a = -expm1(-0.5), v = 0;
    for (int t = 0; t < 3; t++) {
        v += a * (1.0 - v);
        assert_true(fabs(nc_f32(y)[t] - v) < 1e-6);
    }
    nc_tensor_free(y);
    nc_snn_free(s);
    o.integration = NC_INTEGRATION_EULER; /* Euler at dt/τ = 0.5: 0.5, 0.75, 0.875 */
    NC_ASSERT_OK(nc_snn_load_nir(path, &o, &s));
    y = run(s, "cpu", 1, &x, 3);
    assert_true(fabsf(nc_f32(y)[0] - 0.5f) < 1e-6f && fabsf(nc_f32(y)[1] - 0.75f) < 1e-6f && fabsf(nc_f32(y)[2] - 0.875f) < 1e-6f);
    nc_tensor *z = run(s, "cpu-fast", 1, &x, 3); /* the same bits on cpu-fast */
    assert_memory_equal(nc_f32(y), nc_f32(z), 3 * sizeof(float));
    nc_tensor_free(z);
    nc_tensor_free(y);
    nc_snn_free(s);
}


/* The portable form: NIR's IF with θ⁻, reset to zero, v(0) fed by a pulse
 * (exact) or dropped; input 0.3 a step, θ = 1, v(0) = θ/2 = 0.5. */
static void test_portable(void **state)
{
    (void)state;
    int64_t one = 1;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, &one, &s));
    nc_tensor *th = NULL;
    float theta = 1.0f;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &one, &theta, &th));
    nc_if_params p = {.threshold = th};
    int id;
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "if", &id));
    NC_ASSERT_OK(nc_snn_set_output(s, id));
    float x = 0.3f;
    nc_tensor *y = run(s, "cpu", 1, &x, 10); /* 0.8, 1.1 (v 0.1), 0.4, 0.7, 1.0 (>=: v 0), 0.3, ... */
    spikes_at(y, "2 5 9");
    nc_tensor_free(y);
    nc_portable_options po = {.v0 = NC_PORTABLE_V0_PULSE};
    nc_snn *q = NULL;
    int pulses = 0;
    NC_ASSERT_OK(nc_snn_make_portable(s, &po, &q, &pulses));
    assert_int_equal(pulses, 1);
    const char *backends[] = {"cpu", "cpu-fast"};
    for (int b = 0; b < 2; b++) { /* 0.8, 1.1 (spike, v 0), 0.3, 0.6, 0.9, 1.2 (spike), 0.3, ... */
        y = run(q, backends[b], 1, &x, 10);
        spikes_at(y, "2 6 10");
        nc_tensor_free(y);
    }
    /* written strictly and read back as another tool's file: the same run */
    char path[4096];
    snprintf(path, sizeof path, "%s", out_path("portable.nir"));
    nc_nir_save_options so;
    nc_nir_save_options_init(&so);
    so.strict = 1;
    NC_ASSERT_OK(nc_snn_save_nir_with(q, path, &so));
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(f >= 0 && H5Ldelete(f, "neuroc", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    nc_snn *r = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &r));
    y = run(r, "cpu", 1, &x, 10);
    spikes_at(y, "2 6 10");
    nc_tensor_free(y);
    nc_snn_free(r);
    nc_snn_free(q);
    po.v0 = NC_PORTABLE_V0_DROP; /* 0.3, 0.6, 0.9, 1.2 (spike), ... */
    NC_ASSERT_OK(nc_snn_make_portable(s, &po, &q, &pulses));
    y = run(q, "cpu", 1, &x, 10);
    spikes_at(y, "4 8");
    nc_tensor_free(y);
    nc_snn_free(q);
    po.v0 = (nc_portable_v0)5;
    assert_int_equal(nc_snn_make_portable(s, &po, &q, NULL), NC_ERR_INVALID_ARG);
    nc_tensor_free(th);
    nc_snn_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_if_spec_default),    cmocka_unit_test(test_if_old_reading),
        cmocka_unit_test(test_if_r_vreset),        cmocka_unit_test(test_lif_infinite_limit),
        cmocka_unit_test(test_lif_exact),          cmocka_unit_test(test_portable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
