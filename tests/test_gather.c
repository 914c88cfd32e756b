/* The Gather layer kind (NC_SNN_GATHER: routing by an index map, what the
 * converter makes of Swin's windows, roll, padding and patch merging):
 * its output is its input's elements by the map, zeros where the map says
 * -1, spikes in and the same spikes out, on the reference and cpu-fast
 * backends bit for bit; bad maps are refused naming the layer; events
 * through it reach the synapses of its reader as often as the map repeats
 * them; a .nir file keeps it (neuroc.Gather); the Loihi simulator refuses
 * it by name; the converter's index maps (convert/convert_route.h). */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include "convert/convert_route.h"
#include "snn/base/alloc.h"
#include "snn/ir/snn_ir.h"

enum { IN_C = 2, IN_H = 3, IN_W = 4, IN_N = IN_C * IN_H * IN_W, OUT_N = 30, BATCH = 3 };

/* Output e reads input (7·e) mod 24, every fifth a zero: elements repeat, some are never read. */
static void route_map(int64_t *ix)
{
    for (int e = 0; e < OUT_N; e++)
        ix[e] = e % 5 == 2 ? -1 : (7 * e) % IN_N;
}

/* input (2, 3, 4) → IF (θ = 0.5); then, where gather, → Gather (3, 2, 5); → readout */
static nc_snn *spiking_net(int gather, int *if_id, int *g_id)
{
    int64_t in[3] = {IN_C, IN_H, IN_W}, out[3] = {3, 2, 5}, one = 1, ix[OUT_N];
    float th = 0.5f;
    nc_snn *s = NULL;
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, &one, &th, &t));
    nc_if_params p = {.threshold = t};
    int id, last;
    NC_ASSERT_OK(nc_snn_add_if(s, 0, &p, "spikes", &last));
    nc_tensor_free(t);
    *if_id = last;
    route_map(ix);
    if (gather)
        NC_ASSERT_OK(nc_snn_add_gather(s, last, 3, out, ix, "route", &last));
    *g_id = last;
    NC_ASSERT_OK(nc_snn_add_readout(s, last, "ro", &id));
    NC_ASSERT_OK(nc_snn_set_output(s, id));
    return s;
}

static nc_tensor *inputs(void)
{
    int64_t shape[4] = {BATCH, IN_C, IN_H, IN_W};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 4, shape, &x));
    for (int64_t i = 0; i < nc_tensor_numel(x); i++)
        ((float *)nc_tensor_data(x))[i] = (float)((i * 37) % 23) / 16.0f; /* rates 0 .. 1.4 of θ = 0.5 */
    return x;
}

/* The gathered network's readout is the plain one's spike counts moved by
 * the map, zeros where it says -1; cpu-fast equals the reference bit for bit. */
static void test_routes_spikes(void **state)
{
    (void)state;
    int a_if, a_g, b_if, b_g;
    nc_snn *plain = spiking_net(0, &a_if, &a_g), *routed = spiking_net(1, &b_if, &b_g);
    nc_tensor *x = inputs();
    const int T = 9;
    nc_tensor *counts = nc_test_run(plain, "cpu", x, T), *ref = nc_test_run(routed, "cpu", x, T),
              *fast = nc_test_run(routed, "cpu-fast", x, T);
    assert_int_equal(nc_tensor_numel(ref), BATCH * OUT_N);
    int64_t ix[OUT_N];
    route_map(ix);
    const float *c = nc_tensor_data(counts), *r = nc_tensor_data(ref);
    int spikes = 0;
    for (int n = 0; n < BATCH; n++)
        for (int e = 0; e < OUT_N; e++) {
            float want = ix[e] < 0 ? 0.0f : c[n * IN_N + ix[e]];
            spikes += want != 0.0f;
            assert_true(r[n * OUT_N + e] == want);
        }
    assert_true(spikes > BATCH * OUT_N / 3); /* the check saw spikes, not only zeros */
    assert_memory_equal(nc_tensor_data(fast), r, (size_t)(BATCH * OUT_N) * sizeof(float));
    nc_tensor_free(counts);
    nc_tensor_free(ref);
    nc_tensor_free(fast);
    nc_tensor_free(x);
    nc_snn_free(plain);
    nc_snn_free(routed);
}

/* A Gather of the network's input itself (a channels-last input routed
 * channels first): its values by the map on both backends, per sample. */
static void test_routes_input(void **state)
{
    (void)state;
    int64_t in[3] = {IN_C, IN_H, IN_W}, out[3] = {3, 2, 5}, ix[OUT_N];
    nc_snn *s = NULL;
    int g, id;
    NC_ASSERT_OK(nc_snn_create(3, in, &s));
    route_map(ix);
    NC_ASSERT_OK(nc_snn_add_gather(s, 0, 3, out, ix, "route_in", &g));
    NC_ASSERT_OK(nc_snn_add_readout(s, g, "ro", &id));
    nc_tensor *x = inputs(), *ref = nc_test_run(s, "cpu", x, 2), *fast = nc_test_run(s, "cpu-fast", x, 2);
    const float *xv = nc_tensor_data(x), *r = nc_tensor_data(ref);
    for (int n = 0; n < BATCH; n++)
        for (int e = 0; e < OUT_N; e++)
            assert_true(r[n * OUT_N + e] == (ix[e] < 0 ? 0.0f : 2.0f * xv[n * IN_N + ix[e]]));
    assert_memory_equal(nc_tensor_data(fast), r, (size_t)(BATCH * OUT_N) * sizeof(float));
    nc_tensor_free(x);
    nc_tensor_free(ref);
    nc_tensor_free(fast);
    nc_snn_free(s);
}

/* A map with an index outside the input, or of the wrong length, is refused naming the layer; nothing is added. */
static void test_bad_maps(void **state)
{
    (void)state;
    int if_id, g;
    nc_snn *s = spiking_net(0, &if_id, &g);
    int n = nc_snn_num_layers(s), id = -1;
    int64_t ix[OUT_N], out[1] = {OUT_N};
    route_map(ix);
    ix[4] = IN_N; /* one past the end */
    assert_int_equal(nc_snn_add_gather(s, if_id, 1, out, ix, "bad", &id), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "Gather 'bad': index 24 of element 4"));
    ix[4] = -2;
    assert_int_equal(nc_snn_add_gather(s, if_id, 1, out, ix, "bad", &id), NC_ERR_SHAPE);
    assert_int_equal(nc_snn_add_gather(s, if_id, 1, out, NULL, "bad", &id), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_snn_num_layers(s), n);
    nc_snn_free(s);
}

/* An IF's events reach the Affine reading the Gather once per output that
 * reads them (unit events: additions), none where the map never reads them. */
static void test_event_fanout(void **state)
{
    (void)state;
    int if_id, g, fl, aff;
    nc_snn *s = spiking_net(1, &if_id, &g);
    int64_t ws[2] = {5, OUT_N};
    nc_tensor *w = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, ws, &w));
    NC_ASSERT_OK(nc_snn_add_flatten(s, g, "fl", &fl));
    NC_ASSERT_OK(nc_snn_add_affine(s, fl, w, NULL, "fc", &aff));
    nc_tensor_free(w);
    char *macs = nc_calloc((size_t)nc_snn_num_layers(s), 1);
    assert_non_null(macs);
    nc_snn_mark_macs(s, 0, NC_ENCODING_DIRECT, macs);
    assert_int_equal(macs[aff], 0); /* spikes through the Gather: additions */
    int fail = 0;
    int32_t *fan = nc_snn_event_fanout(s, macs, if_id, &fail);
    assert_non_null(fan);
    int64_t ix[OUT_N];
    route_map(ix);
    for (int e = 0; e < IN_N; e++) {
        int reads = 0;
        for (int o = 0; o < OUT_N; o++)
            reads += ix[o] == e;
        assert_int_equal(fan[e], 5 * reads);
    }
    nc_free(fan);
    nc_free(macs);
    nc_snn_free(s);
}

/* Saved as NIR (a neuroc.Gather node and the layer in /neuroc), read back
 * with the same map and the same outputs; the Loihi simulator refuses it by name. */
static void test_nir_and_loihi(void **state)
{
    (void)state;
    int if_id, g;
    nc_snn *s = spiking_net(1, &if_id, &g);
    char path[4096];
    snprintf(path, sizeof path, "%s/test_gather.nir", NC_BINARY_DIR);
    NC_ASSERT_OK(nc_snn_save_nir(s, path));
    nc_snn *back = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &back));
    remove(path);
    int bg = nc_snn_find_layer(back, "route");
    assert_true(bg >= 0);
    assert_int_equal(back->layers[bg].kind, NC_SNN_GATHER);
    assert_memory_equal(nc_i64(back->layers[bg].index), nc_i64(s->layers[g].index), OUT_N * sizeof(int64_t));
    nc_tensor *x = inputs(), *y0 = nc_test_run(s, "cpu-fast", x, 5), *y1 = nc_test_run(back, "cpu-fast", x, 5);
    assert_memory_equal(nc_tensor_data(y0), nc_tensor_data(y1), (size_t)(BATCH * OUT_N) * sizeof(float));
    nc_loihi_net *ln = NULL;
    assert_int_not_equal(nc_loihi_compile(s, NULL, &ln), NC_OK);
    assert_null(ln);
    printf("loihi: %s\n", nc_last_error());
    assert_non_null(strstr(nc_last_error(), "'route'"));
    nc_tensor_free(x);
    nc_tensor_free(y0);
    nc_tensor_free(y1);
    nc_snn_free(back);
    nc_snn_free(s);
}

/* The converter's maps: a Pad's zeros, a step-2 Slice, a Concat's placing, a layout. */
static void test_route_maps(void **state)
{
    (void)state;
    int64_t in[6] = {10, 11, 12, 13, 14, 15}, is[2] = {2, 3}, out[16];
    int64_t ps[2] = {3, 4}, pstart[2] = {0, -1}, one[2] = {1, 1}; /* pad one column left, a row below and a column right */
    nc_route_window(2, is, ps, pstart, one, in, out);
    const int64_t padded[12] = {-1, 10, 11, 12, -1, 13, 14, 15, -1, -1, -1, -1};
    assert_memory_equal(out, padded, sizeof padded);
    int64_t sq[16], ss[2] = {4, 4}, hs[2] = {2, 2}, start[2] = {1, 0}, two[2] = {2, 2};
    for (int e = 0; e < 16; e++)
        sq[e] = e;
    nc_route_window(2, ss, hs, start, two, sq, out); /* x[1::2, 0::2] */
    const int64_t every2[4] = {4, 6, 12, 14};
    assert_memory_equal(out, every2, sizeof every2);
    int64_t cat[12], ks[2] = {2, 6};
    nc_route_place(2, is, ks, 1, 3, in, cat); /* the right half of a Concat along axis 1 */
    assert_int_equal(cat[3], 10);
    assert_int_equal(cat[5], 12);
    assert_int_equal(cat[9], 13);
    int64_t lay[6], tst[2] = {1, 2}; /* (2, 3) laid out transposed: (3, 2) */
    nc_route_lay(2, is, tst, in, lay);
    const int64_t transposed[6] = {10, 13, 11, 14, 12, 15};
    assert_memory_equal(lay, transposed, sizeof transposed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes_spikes),
        cmocka_unit_test(test_routes_input),
        cmocka_unit_test(test_bad_maps),
        cmocka_unit_test(test_event_fanout),
        cmocka_unit_test(test_nir_and_loihi),
        cmocka_unit_test(test_route_maps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
