/* ShuffleNet v2's patterns (scripts/make_shuffle_fixtures.py, torchvision's
 * own InvertedResidual blocks): x.chunk(2, 1) as two channel Slices, the
 * channel shuffle Reshape → Transpose(0, 2, 1, 3, 4) → Reshape, and
 * x.mean([2, 3]). The ANN equals torch, conversion with the defaults
 * succeeds, the selections fold into the Convs that read them (a 1×1
 * selection Conv2d only before other readers), and the SNN's readout
 * approaches the ANN as T grows, the same on cpu and cpu-fast. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/ir/snn_ir.h"

static nc_tensor *run_snn(const nc_snn *s, const char *backend, const nc_tensor *x, int T)
{
    return nc_test_run(s, backend, x, T);
}

/* 1 if layer L is a 1×1 Conv2d whose weight has one 1 per output channel, zeros elsewhere. */
static int is_selection(const nc_snn_layer *L)
{
    if (L->kind != NC_SNN_CONV2D || L->kernel[0] > 1 || L->weight->shape[2] != 1 || L->weight->shape[3] != 1)
        return 0;
    int64_t K = L->weight->shape[0], C = L->weight->shape[1];
    const float *w = nc_tensor_data_const(L->weight), *b = nc_tensor_data_const(L->bias);
    for (int64_t k = 0; k < K; k++) {
        int ones = 0;
        for (int64_t j = 0; j < C; j++) {
            if (w[k * C + j] != 0.0f && w[k * C + j] != 1.0f)
                return 0;
            ones += w[k * C + j] == 1.0f;
        }
        if (ones != 1 || b[k] != 0.0f)
            return 0;
    }
    return 1;
}

static void test_shuffle_block(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/shuffle/shuffle.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/shuffle/x.npy"), *torch_y = nc_test_load_f32("tests/fixtures/shuffle/y.npy");
    nc_tensor *ann_y = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann_y, 1));
    assert_true(nc_test_mean_gap(ann_y, torch_y, 1) < 1e-5); /* ANN == torch */

    nc_convert_options co;
    nc_convert_options_init(&co);
    nc_snn *s = NULL;
    nc_convert_report *rep = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, &rep));
    int shuffle_notes = 0; /* one note for the three shuffles */
    for (size_t i = 0; i < nc_convert_report_num_notes(rep); i++)
        shuffle_notes += strstr(nc_convert_report_note(rep, i), "channel shuffles") != NULL;
    assert_int_equal(shuffle_notes, 1);
    nc_convert_report_free(rep);
    /* 3 shuffles and 3 chunks (6 Slices): the Convs reading them absorb
     * them; selection layers remain only before the identity halves' Concats
     * (2), the stride-2 block's depthwise Conv (1) and the final pool (1) */
    int n_sel = 0;
    for (int i = 0; i < s->n_layers; i++)
        n_sel += is_selection(&s->layers[i]);
    assert_int_equal(n_sel, 4);

    nc_tensor *y16 = run_snn(s, "cpu", x, 16), *y256 = run_snn(s, "cpu", x, 256);
    nc_tensor *fast = run_snn(s, "cpu-fast", x, 256);
    double g16 = nc_test_mean_gap(y16, ann_y, 16), g256 = nc_test_mean_gap(y256, ann_y, 256);
    printf("shuffle: mean |SNN/T − ANN| at T = 16: %.4g, T = 256: %.4g\n", g16, g256);
    assert_true(g256 < 0.5 * g16);
    assert_true(g256 < 0.01);
    assert_int_equal(nc_tensor_numel(fast), nc_tensor_numel(y256));
    assert_memory_equal(nc_tensor_data_const(fast), nc_tensor_data_const(y256),
                        (size_t)nc_tensor_numel(y256) * sizeof(float)); /* bit for bit */
    nc_tensor_free(y16);
    nc_tensor_free(y256);
    nc_tensor_free(fast);
    nc_snn_free(s);
    nc_tensor_free(ann_y);
    nc_tensor_free(torch_y);
    nc_tensor_free(x);
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shuffle_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
