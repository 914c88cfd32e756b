/* The default burst is chosen per network (convert/convert_bursts.c): a
 * deep network whose quantisation errors add up over its layers gets finer
 * levels, a shallow one keeps NC_DEFAULT_BURST, and an explicit burst is
 * kept as asked. The deep fixture (scripts/make_deep_fixture.py: 73 ReLUs in
 * series, random weights) is what torchvision's RegNet and MnasNet are at
 * T = 32 in small (docs/zoo.md). */
#include "testutil.h"

#include <stdio.h>

#include "snn/ir/snn_ir.h"

/* The bursts of the SignedIF layers: all equal (returned), else fails. */
static int uniform_burst(const nc_snn *s)
{
    int B = -1;
    for (int i = 0; i < s->n_layers; i++) {
        if (s->layers[i].kind != NC_SNN_SIGNED_IF)
            continue;
        int b = nc_snn_layer_burst(&s->layers[i]);
        if (B < 0)
            B = b;
        assert_int_equal(b, B);
    }
    assert_true(B > 0);
    return B;
}

static double cosine_at(const nc_snn *s, const nc_tensor *x, const nc_tensor *ann_y, int T)
{
    nc_tensor *y = nc_test_run(s, "cpu-fast", x, T);
    double c = nc_test_centred_cosine(y, ann_y, T);
    nc_tensor_free(y);
    return c;
}

static void test_deep_gets_finer_levels(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/deep/deep.onnx"), NULL, &m));
    nc_tensor *calib = nc_test_load_f32("tests/fixtures/deep/calib.npy");
    nc_tensor *x = nc_test_load_f32("tests/fixtures/deep/x.npy"), *ann_y = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann_y, 1));

    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, calib, NULL, NULL, &s, NULL));
    int B = uniform_burst(s);
    double c32 = cosine_at(s, x, ann_y, 32);

    nc_convert_options o;
    nc_convert_options_init(&o);
    o.burst = NC_DEFAULT_BURST; /* what the default was for every network */
    nc_snn *s2 = NULL;
    NC_ASSERT_OK(nc_convert(m, calib, NULL, &o, &s2, NULL));
    int B2 = uniform_burst(s2);
    double c32_2 = cosine_at(s2, x, ann_y, 32);
    printf("deep fixture, centred cosine at T = 32: default (bursts of %d) %.4f, --burst %d %.4f\n", B, c32, B2,
           c32_2);
    assert_int_equal(B2, NC_DEFAULT_BURST);
    assert_true(B > NC_DEFAULT_BURST && B <= 64);
    assert_true(c32_2 < 0.9);
    assert_true(c32 >= 0.95);
    nc_snn_free(s2);
    nc_snn_free(s);
    nc_tensor_free(ann_y);
    nc_tensor_free(x);
    nc_tensor_free(calib);
    nc_model_free(m);
}

/* Three spiking layers in series: the default burst is fine enough. */
static void test_shallow_keeps_default(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/zoo/cat_bn.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/zoo/x.npy");
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    assert_int_equal(uniform_burst(s), NC_DEFAULT_BURST);
    nc_snn_free(s);
    nc_tensor_free(x);
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_gets_finer_levels),
        cmocka_unit_test(test_shallow_keeps_default),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
