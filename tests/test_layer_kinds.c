/* The layer-kind table of the IR (snn/ir/layer_kinds.h), nc_snn_mark_static
 * and the neuron-parameter expansion, checked against what the reference
 * backend does with every kind the builders make. */
#include <math.h>
#include <string.h>

#include "testutil.h"

#define NET_OK NC_ASSERT_OK
#define NC_TESTS_NO_ONNX
#include "random_nets.h"
#include "snn/base/alloc.h"
#include "snn/ir/snn_ir.h"

static void test_table_rows(void **state)
{
    (void)state;
    for (int k = 0; k < NC_SNN_N_KINDS; k++) {
        const nc_snn_kind_traits *K = nc_snn_kind((nc_snn_layer_kind)k);
        assert_string_not_equal(K->name, "unknown");
        assert_string_equal(nc_snn_kind_name((nc_snn_layer_kind)k), K->name);
        for (int j = 0; j < k; j++)
            assert_string_not_equal(nc_snn_kind((nc_snn_layer_kind)j)->name, K->name);
        /* the columns' meanings imply each other */
        if (K->neuron)
            assert_true(K->spiking && K->integrates && !K->stateless && !K->synaptic);
        if (K->synaptic || K->view)
            assert_true(K->stateless);
        if (K->synaptic)
            assert_true(K->counts_synops && K->nir_node);
        if (K->nir_node)
            assert_true(K->nir);
        if (K->neuron || K->leaky)
            assert_true(K->membrane && K->same_shape);
        if (K->current)
            assert_true(K->leaky);
        if (K->membrane)
            assert_true(K->integrates && !K->stateless);
        if (K->window || K->multi_input)
            assert_false(K->window && K->multi_input);
    }
    /* the new traits, kind by kind (what the backends' former lists said) */
    assert_true(nc_snn_kind(NC_SNN_LI)->membrane && nc_snn_kind(NC_SNN_INTEGRATOR)->membrane &&
                !nc_snn_kind(NC_SNN_INTEGRATOR)->leaky && !nc_snn_kind(NC_SNN_READOUT)->membrane);
    assert_true(nc_snn_kind(NC_SNN_CUBALIF)->current && nc_snn_kind(NC_SNN_CUBALI)->current &&
                !nc_snn_kind(NC_SNN_LIF)->current);
    assert_true(nc_snn_kind(NC_SNN_POOL2D)->window && nc_snn_kind(NC_SNN_MAXPOOL2D)->window &&
                nc_snn_kind(NC_SNN_SPIKEMAXPOOL2D)->window && !nc_snn_kind(NC_SNN_CONV2D)->window);
    assert_true(nc_snn_kind(NC_SNN_ADD)->multi_input && nc_snn_kind(NC_SNN_CONCAT)->multi_input &&
                !nc_snn_kind(NC_SNN_AFFINE)->multi_input);
    assert_int_equal(NC_SNN_N_KINDS, NC_SNN_GATHER + 1);
    /* routing: no state, no synapse, no NIR node */
    assert_true(nc_snn_kind(NC_SNN_GATHER)->stateless && !nc_snn_kind(NC_SNN_GATHER)->counts_synops &&
                !nc_snn_kind(NC_SNN_GATHER)->nir && !nc_snn_kind(NC_SNN_GATHER)->view);
    assert_false(nc_snn_kind(NC_SNN_NONLINEAR)->stateless || nc_snn_kind(NC_SNN_NONLINEAR)->nir); /* state: input sums */
    assert_string_equal(nc_snn_kind((nc_snn_layer_kind)NC_SNN_N_KINDS)->name, "unknown");
    assert_string_equal(nc_snn_kind_name((nc_snn_layer_kind)-1), "unknown");
    assert_false(nc_snn_kind((nc_snn_layer_kind)NC_SNN_N_KINDS)->stateless);
    /* what the code relies on, kind by kind */
    assert_true(nc_snn_kind_is_neuron(NC_SNN_IF) && nc_snn_kind_is_neuron(NC_SNN_LIF) &&
                nc_snn_kind_is_neuron(NC_SNN_CUBALIF));
    assert_false(nc_snn_kind_is_neuron(NC_SNN_READOUT) || nc_snn_kind_is_spiking(NC_SNN_INPUT));
    assert_true(nc_snn_kind(NC_SNN_READOUT)->integrates && nc_snn_kind(NC_SNN_READOUT)->stateless);
    assert_false(nc_snn_kind(NC_SNN_INPUT)->stateless);
    assert_true(nc_snn_kind(NC_SNN_FLATTEN)->view && nc_snn_kind(NC_SNN_READOUT)->view);
    assert_false(nc_snn_kind(NC_SNN_CONCAT)->nir || nc_snn_kind(NC_SNN_MAXPOOL2D)->nir);
    /* spikes, but counts for state: neither a neuron nor stateless */
    assert_true(nc_snn_kind_is_spiking(NC_SNN_SPIKEMAXPOOL2D) && !nc_snn_kind(NC_SNN_SPIKEMAXPOOL2D)->stateless);
    assert_false(nc_snn_kind_is_neuron(NC_SNN_SPIKEMAXPOOL2D) || nc_snn_kind(NC_SNN_SPIKEMAXPOOL2D)->integrates);
    assert_false(nc_snn_kind(NC_SNN_ADD)->nir_node || nc_snn_kind(NC_SNN_READOUT)->nir_node);
    assert_true(nc_snn_kind_is_synaptic(NC_SNN_AFFINE) && nc_snn_kind_is_synaptic(NC_SNN_CONV2D));
    assert_true(nc_snn_kind(NC_SNN_POOL2D)->counts_synops && !nc_snn_kind(NC_SNN_MAXPOOL2D)->counts_synops);
}

/* Every kind the builders make, static and time-varying paths through
 * each stateless kind. ids[] gets the layers; *n their number. */
enum { X_IN, X_C1, X_MP, X_I1, X_P1, X_P2, X_CAT, X_CAT2, X_ADD, X_ADD2, X_FL, X_FL2, X_A1, X_I2, X_A2,
       X_RO, X_RS, X_SMP, X_N };
static const int g_static[X_N] = {[X_IN] = 1, [X_C1] = 1, [X_MP] = 1, [X_P2] = 1, [X_CAT2] = 1,
                                  [X_ADD2] = 1, [X_FL2] = 1, [X_RS] = 1};

static nc_snn *every_kind(int *ids)
{
    int64_t in[3] = {2, 8, 8}, k2[2] = {2, 2};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    ids[X_IN] = 0;
    ids[X_C1] = net_conv(s, 0, 4, 3, 1, 1, 1, 1, 0.8f);                      /* 4 × 8 × 8 */
    NC_ASSERT_OK(nc_snn_add_maxpool2d(s, ids[X_C1], k2, k2, NULL, "mp", &ids[X_MP])); /* 4 × 4 × 4 */
    ids[X_I1] = net_if(s, ids[X_MP], 1, 0, NC_RESET_SUBTRACT, 0.4f);
    ids[X_P1] = net_pool(s, ids[X_I1], 2, 2, 0);                               /* 4 × 2 × 2 */
    ids[X_P2] = net_pool(s, ids[X_MP], 2, 2, 0);
    int cat[2] = {ids[X_P1], ids[X_P2]}, cat2[2] = {ids[X_P2], ids[X_P2]};
    NC_ASSERT_OK(nc_snn_add_concat(s, 2, cat, "cat", &ids[X_CAT]));            /* 8 × 2 × 2 */
    NC_ASSERT_OK(nc_snn_add_concat(s, 2, cat2, "cat2", &ids[X_CAT2]));
    int add[2] = {ids[X_CAT], ids[X_CAT2]}, add2[2] = {ids[X_CAT2], ids[X_CAT2]};
    NC_ASSERT_OK(nc_snn_add_add(s, 2, add, "add", &ids[X_ADD]));
    NC_ASSERT_OK(nc_snn_add_add(s, 2, add2, "add2", &ids[X_ADD2]));
    NC_ASSERT_OK(nc_snn_add_flatten(s, ids[X_ADD], "fl", &ids[X_FL]));
    NC_ASSERT_OK(nc_snn_add_flatten(s, ids[X_ADD2], "fl2", &ids[X_FL2]));
    ids[X_A1] = net_affine(s, ids[X_FL], 6, 0.8f);
    ids[X_I2] = net_if(s, ids[X_A1], 0, 0, NC_RESET_ZERO, 0.3f);
    ids[X_A2] = net_affine(s, ids[X_I2], 4, 0.8f);
    NC_ASSERT_OK(nc_snn_add_readout(s, ids[X_A2], "ro", &ids[X_RO]));
    NC_ASSERT_OK(nc_snn_add_readout(s, ids[X_FL2], "rs", &ids[X_RS]));
    NC_ASSERT_OK(nc_snn_add_spike_maxpool2d(s, ids[X_I1], k2, k2, NULL, "smp", &ids[X_SMP])); /* 4 × 2 × 2 */
    NC_ASSERT_OK(nc_snn_set_output(s, ids[X_RO]));
    return s;
}

/* The public predicate the CLI and C users ask reads the same rows. */
static void test_public_neuron_predicate(void **state)
{
    (void)state;
    for (int k = 0; k < NC_SNN_N_KINDS; k++)
        assert_int_equal(nc_snn_kind_is_neuron((nc_snn_layer_kind)k), nc_snn_kind((nc_snn_layer_kind)k)->neuron);
    assert_true(nc_snn_kind_is_neuron(NC_SNN_IF) && nc_snn_kind_is_neuron(NC_SNN_LIF) &&
                nc_snn_kind_is_neuron(NC_SNN_CUBALIF));
    assert_false(nc_snn_kind_is_neuron(NC_SNN_READOUT) || nc_snn_kind_is_neuron(NC_SNN_CONV2D) ||
                 nc_snn_kind_is_neuron((nc_snn_layer_kind)999));
}

static void test_mark_static(void **state)
{
    (void)state;
    int ids[X_N];
    nc_snn *s = every_kind(ids);
    int n = (int)nc_snn_num_layers(s);
    assert_int_equal(n, X_N);
    char st[X_N];
    nc_snn_mark_static(s, 0, NC_ENCODING_DIRECT, st);
    for (int i = 0; i < X_N; i++) {
        if (st[ids[i]] != g_static[i])
            fail_msg("layer '%s': static %d, expected %d", s->layers[ids[i]].name, st[ids[i]], g_static[i]);
    }
    /* an input that changes over time: nothing is static */
    for (int series = 0; series < 2; series++) {
        nc_snn_mark_static(s, series, series ? NC_ENCODING_DIRECT : NC_ENCODING_POISSON, st);
        for (int i = 0; i < n; i++)
            assert_int_equal(st[i], 0);
    }
    /* add = cat2 + add2 of the step before (a recurrent edge; same shape):
     * both of its inputs are static, but the value it reads lags a step */
    s->layers[ids[X_ADD]].inputs[0] = ids[X_CAT2];
    s->layers[ids[X_ADD]].inputs[1] = ids[X_ADD2];
    memset(st, 1, sizeof st); /* what a rule reading add2 before it is decided would see */
    nc_snn_mark_static(s, 0, NC_ENCODING_DIRECT, st);
    assert_int_equal(st[ids[X_ADD2]], 1);
    assert_int_equal(st[ids[X_ADD]], 0);
    assert_int_equal(st[ids[X_FL]], 0);
    nc_snn_free(s);
}

/* Which layers' synaptic ops are multiply-adds (the energy estimate): a
 * weighted layer reading graded values (the direct input, max-pooled
 * currents, a sum) multiplies, one reading spikes of payload ±1 adds, a
 * pooling sum adds whatever it reads; a burst is graded; an input spiking
 * (Poisson) is not; a recurrent edge reads its source's kind of events. */
static void test_mark_macs(void **state)
{
    (void)state;
    int ids[X_N];
    nc_snn *s = every_kind(ids);
    char m[X_N];
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, m);
    for (int i = 0; i < X_N; i++) {
        int want = i == X_C1 || i == X_A1; /* the input's currents; fl = a flattened Add */
        if (m[ids[i]] != want)
            fail_msg("layer '%s': multiply-adds %d, expected %d", s->layers[ids[i]].name, m[ids[i]], want);
    }
    nc_snn_mark_macs(s, 0, NC_ENCODING_POISSON, m);
    assert_int_equal(m[ids[X_C1]], 0);
    nc_snn_mark_macs(s, 1, NC_ENCODING_DIRECT, m); /* a series may be any values */
    assert_int_equal(m[ids[X_C1]], 1);
    nc_snn_layer *I2 = &s->layers[ids[X_I2]];
    I2->kind = NC_SNN_SIGNED_IF; /* single signed spikes are still ±1 */
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, m);
    assert_int_equal(m[ids[X_A2]], 0);
    I2->max_spikes = 3; /* bursts: single spikes add, the backends count the bursts apart */
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, m);
    assert_int_equal(m[ids[X_A2]], 0);
    int fail = 0;
    int32_t *fan = nc_snn_event_fanout(s, m, ids[X_I2], &fail); /* an event of i2 reaches a2's 4 outputs */
    assert_non_null(fan);
    for (int j = 0; j < 6; j++)
        assert_int_equal(fan[j], 4);
    nc_free(fan);
    I2->max_spikes = 0;
    s->layers[ids[X_A1]].inputs[0] = ids[X_I2]; /* a recurrent edge from spikes */
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, m);
    assert_int_equal(m[ids[X_A1]], 0);
    s->layers[ids[X_A1]].inputs[0] = ids[X_FL];
    nc_snn_free(s);

    /* a max pooling of bursts is graded: the largest k of a window */
    int64_t in[3] = {2, 4, 4}, k2[2] = {2, 2};
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    int c1 = net_conv(s, 0, 2, 3, 1, 1, 1, 1, 0.8f), sif = net_if(s, c1, 0, 0, NC_RESET_SUBTRACT, 0.5f), mp;
    s->layers[sif].kind = NC_SNN_SIGNED_IF;
    NC_ASSERT_OK(nc_snn_add_maxpool2d(s, sif, k2, k2, NULL, "mp", &mp));
    int c2 = net_conv(s, mp, 2, 1, 1, 0, 1, 1, 0.8f);
    char m2[8];
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, m2);
    assert_int_equal(m2[c2], 0);
    s->layers[sif].max_spikes = 2;
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, m2);
    assert_int_equal(m2[c2], 1);
    nc_snn_free(s);
}

/* Runs s on the reference, T steps, recording every layer. */
static nc_session *run_ref(const nc_snn *s, int T, const nc_tensor *x)
{
    int n = (int)nc_snn_num_layers(s);
    const char *names[X_N];
    for (int i = 0; i < n; i++)
        names[i] = s->layers[i].name;
    nc_session_options o = {.backend = "cpu", .timesteps = T, .record = names, .n_record = n};
    nc_session *ss = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    nc_tensor_free(y);
    return ss;
}

/* The table says what the reference backend does with each kind: only
 * spiking kinds spike, only counts_synops kinds count, and a layer that
 * nc_snn_mark_static calls static holds one value over the run and is
 * computed (its operations counted) once. */
static void test_reference_agrees(void **state)
{
    (void)state;
    int ids[X_N];
    nc_snn *s = every_kind(ids);
    nc_tensor *x = net_rand_input(s, 0, 2);
    const int T = 6;
    nc_session *ss = run_ref(s, T, x), *one = run_ref(s, 1, x);
    char st[X_N];
    nc_snn_mark_static(s, 0, NC_ENCODING_DIRECT, st);
    for (int i = 0; i < X_N; i++) {
        const nc_snn_layer *L = &s->layers[i];
        const nc_snn_kind_traits *K = nc_snn_kind(L->kind);
        int64_t spikes, ops, ops1;
        NC_ASSERT_OK(nc_session_spike_count(ss, i, &spikes));
        NC_ASSERT_OK(nc_session_synops(ss, i, &ops));
        NC_ASSERT_OK(nc_session_synops(one, i, &ops1));
        if (!K->spiking)
            assert_int_equal(spikes, 0);
        else
            assert_true(spikes > 0);
        if (!K->counts_synops)
            assert_int_equal(ops, 0);
        else
            assert_true(ops > 0);
        if (st[i])
            assert_true(ops == ops1); /* once, not once per step */
        else if (K->counts_synops)
            assert_true(ops > ops1);
        nc_tensor *tr = NULL, *by_id = NULL;
        NC_ASSERT_OK(nc_session_trace(ss, L->name, 1, &tr));
        NC_ASSERT_OK(nc_session_trace_at(ss, i, 1, &by_id)); /* the same layer by its id */
        assert_int_equal(nc_tensor_numel(by_id), nc_tensor_numel(tr));
        assert_memory_equal(nc_tensor_data(by_id), nc_tensor_data(tr), (size_t)nc_tensor_numel(tr) * sizeof(float));
        nc_tensor_free(by_id);
        assert_int_equal(nc_session_trace_at(ss, X_N, 1, &by_id), NC_ERR_INVALID_ARG);
        int64_t step = nc_tensor_numel(tr) / T;
        const float *v = nc_tensor_data(tr);
        int constant = 1;
        for (int t = 1; t < T; t++)
            constant &= memcmp(v, v + t * step, (size_t)step * sizeof *v) == 0;
        if (st[i] && !constant)
            fail_msg("layer '%s' is marked static but its value changes", L->name);
        if (K->neuron)
            assert_false(constant); /* these membranes integrate */
        nc_tensor_free(tr);
    }
    nc_session_free(ss);
    nc_session_free(one);
    nc_tensor_free(x);
    nc_snn_free(s);
}

/* The one validation of a layer (nc_snn_layer_validate): every layer the
 * builders make passes it and keeps its shape; a layer broken after it was
 * built is refused, naming it. */
static void test_validate(void **state)
{
    (void)state;
    int ids[X_N];
    nc_snn *s = every_kind(ids);
    for (int i = 1; i < s->n_layers; i++) {
        nc_snn_layer *L = &s->layers[i];
        int ndim = L->ndim;
        int64_t shape[NC_MAX_DIMS];
        memcpy(shape, L->shape, sizeof shape);
        NC_ASSERT_OK(nc_snn_layer_validate(s, i, s->n_layers));
        assert_int_equal(L->ndim, ndim);
        assert_memory_equal(L->shape, shape, sizeof shape);
    }
    nc_snn_layer *C = &s->layers[ids[X_C1]];
    nc_tensor *bias = C->bias;
    C->bias = NULL;
    assert_int_equal(nc_snn_layer_validate(s, ids[X_C1], s->n_layers), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "Conv2d"));
    C->bias = bias;
    s->layers[ids[X_SMP]].inputs[0] = ids[X_SMP]; /* recurrent: only into a sum */
    assert_int_equal(nc_snn_layer_validate(s, ids[X_SMP], s->n_layers), NC_ERR_UNSUPPORTED);
    assert_non_null(strstr(nc_last_error(), "'smp'"));
    s->layers[ids[X_SMP]].inputs[0] = ids[X_I1];
    s->layers[ids[X_P1]].div_pad[0] = 1; /* divisors' padding without divisors */
    assert_int_equal(nc_snn_layer_validate(s, ids[X_P1], s->n_layers), NC_ERR_MODEL);
    nc_snn_free(s);
}

static void test_param_expand(void **state)
{
    (void)state;
    int64_t in[3] = {2, 2, 3};
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    float th[2] = {0.5f, 2.0f}, sv[12];
    for (int k = 0; k < 12; k++)
        sv[k] = (float)k;
    sv[4] = NAN; /* unset: the default */
    int64_t two = 2, twelve = 12;
    nc_tensor *tt, *ts;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &two, th, &tt));
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &twelve, sv, &ts));
    nc_if_params p = {.threshold = tt, .spike_value = ts};
    int id;
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "if", &id));
    const nc_snn_layer *L = &s->layers[id];
    int fail = 0;
    float *cm = nc_snn_param_expand(L->threshold, L, -1.0f, 0, &fail);
    float *cl = nc_snn_param_expand(L->threshold, L, -1.0f, 1, &fail);
    float *dflt = nc_snn_param_expand(NULL, L, 7.0f, 1, &fail);
    float *svs = nc_snn_spike_values(L, 1, &fail), *v0 = nc_snn_v_inits(L, 0, &fail);
    assert_false(fail);
    for (int c = 0; c < 2; c++)
        for (int q = 0; q < 6; q++) {
            assert_true(cm[c * 6 + q] == th[c]);
            assert_true(cl[q * 2 + c] == th[c]);
            assert_true(dflt[q * 2 + c] == 7.0f);
            float want = c * 6 + q == 4 ? th[c] : sv[c * 6 + q]; /* IF default: θ */
            assert_true(svs[q * 2 + c] == want);
            assert_true(v0[c * 6 + q] == th[c] * 0.5f);
        }
    float *bufs[] = {cm, cl, dflt, svs, v0};
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0]; b++)
        nc_free(bufs[b]);
    nc_tensor_free(tt);
    nc_tensor_free(ts);
    nc_snn_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_rows),
        cmocka_unit_test(test_public_neuron_predicate),
        cmocka_unit_test(test_mark_static),
        cmocka_unit_test(test_mark_macs),
        cmocka_unit_test(test_reference_agrees),
        cmocka_unit_test(test_validate),
        cmocka_unit_test(test_param_expand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
