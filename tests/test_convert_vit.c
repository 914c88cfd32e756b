/* A one-block torchvision VisionTransformer, exported by PyTorch at opsets
 * 13 and 17, and a two-stage torchvision ConvNeXt
 * (scripts/make_vit_fixtures.py), converted with default
 * options (convert/convert_tokens.c): the ANN equals torch, the token
 * tensors stay views (attention's Reshape/Transpose over heads add no
 * data movement), LayerNorm, Softmax, GELU and the two attention products
 * are Nonlinear layers; ConvNeXt's channels-last permutes around its
 * LayerNorms cost nothing (a LayerNorm over the channels of a (C, H, W)
 * layer, Linear layers as 1×1 Conv2d); the SNN's readout equals the ANN's logits on
 * the reference backend (its values are graded: expectation compensation
 * is exact for a constant input). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/ir/snn_ir.h"

static int count_fn(const nc_snn *s, nc_nonlinear_fn fn)
{
    int n = 0;
    for (int i = 0; i < s->n_layers; i++)
        n += s->layers[i].kind == NC_SNN_NONLINEAR && s->layers[i].nl.fn == fn;
    return n;
}

/* The model in `file` converted with graded Nonlinear outputs (the ANN checked
 * against torch's logits in `torch_file`); its ANN logits on x in *ann_y. */
static nc_snn *convert_checked(const char *file, const char *torch_file, nc_tensor **ann_y)
{
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(file), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/vit/x.npy"), *torch_y = nc_test_load_f32(torch_file);
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, ann_y, 1));
    assert_true(nc_test_mean_gap(*ann_y, torch_y, 1) < 1e-5); /* ANN == torch */
    nc_convert_options co;
    nc_convert_options_init(&co);
    co.nonlinear_graded = 1; /* exact at every T: the structure is what these cases check (test_vit_spiking: spikes) */
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, NULL));
    nc_tensor_free(torch_y);
    nc_tensor_free(x);
    nc_model_free(m);
    return s;
}

/* The SNN's readout on the reference backend equals the ANN's logits at T = 1 and 8. */
static void check_equal(const char *name, const nc_snn *s, const nc_tensor *ann_y)
{
    nc_tensor *x = nc_test_load_f32("tests/fixtures/vit/x.npy");
    for (int T = 1; T <= 8; T *= 8) {
        nc_session_options o = {.backend = "cpu", .timesteps = T};
        nc_session *ss = NULL;
        nc_tensor *y = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &y));
        double gap = nc_test_mean_gap(y, ann_y, T), cos = nc_test_centred_cosine(y, ann_y, T);
        printf("%s: T = %d: mean |SNN/T − ANN| %.3g, centred cosine %.6f\n", name, T, gap, cos);
        assert_true(cos > 0.9999);
        assert_true(gap < 1e-4);
        nc_tensor_free(y);
        nc_session_free(ss);
    }
    nc_tensor_free(x);
}

static void check_vit(const char *file)
{
    nc_tensor *ann_y = NULL;
    nc_snn *s = convert_checked(file, "tests/fixtures/vit/y.npy", &ann_y);
    /* ln_1, ln_2, the final ln; Q·Kᵀ and A·V; one Softmax, one GELU */
    assert_int_equal(count_fn(s, NC_NL_LAYERNORM), 3);
    assert_int_equal(count_fn(s, NC_NL_MATMUL), 2);
    assert_int_equal(count_fn(s, NC_NL_SOFTMAX), 1);
    assert_int_equal(count_fn(s, NC_NL_GELU), 1);
    /* the tokens are (C, 1, N): 32 channels, 16 patches and the class token;
     * the MLP's Linear layers are 1×1 Conv2d over them, the heads' Reshape
     * and Transpose views */
    int mlp = 0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind == NC_SNN_CONV2D && L->weight->shape[2] == 1 && L->weight->shape[3] == 1 && L->groups == 1) {
            assert_int_equal(L->shape[1], 1);
            assert_int_equal(L->shape[2], 17);
            mlp += L->shape[0] == 64;
        }
        if (L->kind == NC_SNN_NONLINEAR && L->nl.fn == NC_NL_SOFTMAX) { /* scores (heads, N, N), over the keys */
            assert_int_equal(L->shape[0], 4);
            assert_int_equal(L->shape[1], 17);
            assert_int_equal(L->nl.axis, 2);
        }
    }
    assert_int_equal(mlp, 1);
    check_equal(file, s, ann_y);
    nc_snn_free(s);
    nc_tensor_free(ann_y);
}

/* opset 13: LayerNorm as ReduceMean → Sub → Pow → ReduceMean → Add → Sqrt → Div;
 * and with binary spikes (the network is rebuilt: its Reshape and
 * Nonlinear layers are copied) */
static void test_vit_opset13(void **state)
{
    (void)state;
    check_vit("tests/fixtures/vit/vit1.onnx");
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/vit/vit1.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/vit/x.npy"), *ann_y = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann_y, 1));
    nc_convert_options co;
    nc_convert_options_init(&co);
    co.binary_spikes = 1;
    co.nonlinear_graded = 1;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, &co, &s, NULL));
    check_equal("vit1 (binary spikes)", s, ann_y);
    nc_snn_free(s);
    nc_tensor_free(ann_y);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* opset 17: LayerNormalization nodes */
static void test_vit_opset17(void **state)
{
    (void)state;
    check_vit("tests/fixtures/vit/vit1_op17.onnx");
}

/* ConvNeXt: Transpose to channels last, LayerNorm, Linear, GELU, Linear,
 * layer scale, Transpose back; the LayerNorms of the stem, the
 * downsampling and the classifier likewise */
static void test_convnext(void **state)
{
    (void)state;
    nc_tensor *ann_y = NULL;
    nc_snn *s = convert_checked("tests/fixtures/vit/convnext.onnx", "tests/fixtures/vit/y_convnext.npy", &ann_y);
    assert_int_equal(count_fn(s, NC_NL_LAYERNORM), 5);
    assert_int_equal(count_fn(s, NC_NL_GELU), 2);
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        assert_int_not_equal(L->kind, NC_SNN_RESHAPE); /* the permutes are views of (C, H, W) layers */
        if (L->kind == NC_SNN_NONLINEAR)
            assert_int_equal(L->nl.axis, 0); /* LayerNorm over the channels, GELU's axis unused */
    }
    check_equal("convnext", s, ann_y);
    nc_snn_free(s);
    nc_tensor_free(ann_y);
}

/* Element-wise functions and gates on tokens: SiLU (Sigmoid · x) and a
 * product of two Linear layers are Nonlinear Mul layers, HardSwish
 * (HardSigmoid · x at opset 13) likewise; the mean over the tokens a Pool2d */
static void test_token_gates(void **state)
{
    (void)state;
    nc_tensor *ann_y = NULL;
    nc_snn *s = convert_checked("tests/fixtures/vit/tokmix.onnx", "tests/fixtures/vit/y_tokmix.npy", &ann_y);
    assert_int_equal(count_fn(s, NC_NL_MUL), 3);
    assert_int_equal(count_fn(s, NC_NL_SIGMOID), 2);
    assert_int_equal(count_fn(s, NC_NL_HARDSIGMOID), 2);
    int pool = 0;
    for (int i = 0; i < s->n_layers; i++)
        pool += s->layers[i].kind == NC_SNN_POOL2D && s->layers[i].kernel[1] == 16;
    assert_int_equal(pool, 1);
    check_equal("tokmix", s, ann_y);
    nc_snn_free(s);
    nc_tensor_free(ann_y);
}

/* Single-head attention: products of (N, C) values with no head axis
 * (laid out (1, ·, ·), so the 1/√d scale is a layer of one channel) */
static void test_one_head(void **state)
{
    (void)state;
    nc_tensor *ann_y = NULL;
    nc_snn *s = convert_checked("tests/fixtures/vit/onehead.onnx", "tests/fixtures/vit/y_onehead.npy", &ann_y);
    assert_int_equal(count_fn(s, NC_NL_MATMUL), 2);
    assert_int_equal(count_fn(s, NC_NL_SOFTMAX), 1);
    check_equal("onehead", s, ann_y);
    nc_snn_free(s);
    nc_tensor_free(ann_y);
}

/* With default options (spikes): a two-sided SignedIF turns each
 * Nonlinear output a synaptic layer reads into spikes, so the ViT runs on
 * spikes, and its readout converges to the ANN's as T grows. */
static void test_vit_spiking(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/vit/vit1.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/vit/x.npy"), *ann = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann, 1));
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    int two_sided = 0;
    for (int i = 0; i < s->n_layers; i++)
        two_sided += s->layers[i].kind == NC_SNN_SIGNED_IF && s->layers[i].two_sided;
    printf("vit1: %d two-sided SignedIF layers\n", two_sided);
    assert_true(two_sided >= 3);
    double cos[2];
    for (int k = 0; k < 2; k++) {
        int T = k ? 128 : 8;
        nc_session_options o = {.backend = "cpu-fast", .timesteps = T};
        nc_session *ss = NULL;
        nc_tensor *y = NULL;
        NC_ASSERT_OK(nc_session_create(s, &o, &ss));
        NC_ASSERT_OK(nc_session_run(ss, x, &y));
        cos[k] = nc_test_centred_cosine(y, ann, T);
        printf("vit1 with spikes: T = %d: centred cosine %.4f\n", T, cos[k]);
        nc_tensor_free(y);
        nc_session_free(ss);
    }
    assert_true(cos[1] > 0.95 && cos[1] > cos[0]);
    nc_snn_free(s);
    nc_tensor_free(ann);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* A Swin network's SNN readout against the ANN at step count T on backend b. */
static double swin_cosine(const char *name, const nc_snn *s, const char *b, const nc_tensor *x, const nc_tensor *ann,
                          int T, nc_tensor **y)
{
    *y = nc_test_run(s, b, x, T);
    double cos = nc_test_centred_cosine(*y, ann, T);
    printf("%s on %s: T = %d: centred cosine %.6f\n", name, b, T, cos);
    return cos;
}

/* A shifted-window Swin block (torchvision's SwinTransformerBlock: window
 * 4, shift 2, on a channels-last (8, 8, 16) input): the ANN equals torch
 * (its attention mask is computed from float values, which the load's
 * shape pass cannot see: it must not be folded from that pass). Converted
 * with default options: its data movement (the channels-last input routed
 * channels first for the LayerNorm's γ, the Pad, the roll's Slice/Concat
 * pairs, the window partition, the attention's windows and heads, the
 * reverse partition and roll, the residual's layout) becomes Gather layers,
 * each chain composed into one (no Gather reads a Gather); the windowed
 * attention is the ordinary attention with the windows as a batch axis, its
 * relative position bias and shift mask constant layers added before the
 * Softmax. The readout converges to the ANN's; cpu-fast equals the
 * reference bit for bit; the .nir file holds the Gathers (neuroc.Gather)
 * and reads back to the same outputs. */
static void test_swin_block(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/vit/swin_block.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/vit/x_swin.npy"), *want = nc_test_load_f32("tests/fixtures/vit/y_swin.npy");
    nc_tensor *ann = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann, 1));
    assert_int_equal(nc_tensor_numel(ann), nc_tensor_numel(want));
    assert_true(nc_test_mean_gap(ann, want, 1) < 1e-5);
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    int gathers = 0, mask_adds = 0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind == NC_SNN_GATHER) {
            gathers++;
            assert_int_not_equal(s->layers[L->inputs[0]].kind, NC_SNN_GATHER); /* chains composed */
        }
        mask_adds += L->kind == NC_SNN_ADD && L->ndim == 4 && L->shape[0] == 4 && L->shape[2] == 16; /* (windows, heads, N, N) */
    }
    printf("swin_block: %d layers, %d Gathers\n", s->n_layers, gathers);
    assert_true(gathers >= 3);
    assert_int_equal(mask_adds, 2); /* the relative position bias, the shift mask */
    assert_int_equal(count_fn(s, NC_NL_SOFTMAX), 1);
    assert_int_equal(count_fn(s, NC_NL_MATMUL), 2);
    nc_tensor *y8 = NULL, *y128 = NULL, *yref = NULL;
    double c8 = swin_cosine("swin_block", s, "cpu-fast", x, ann, 8, &y8),
           c128 = swin_cosine("swin_block", s, "cpu-fast", x, ann, 128, &y128);
    assert_true(c128 > 0.95 && c128 > c8);
    swin_cosine("swin_block", s, "cpu", x, ann, 8, &yref); /* cpu-fast == the reference, bit for bit */
    assert_memory_equal(nc_tensor_data(yref), nc_tensor_data(y8), (size_t)nc_tensor_numel(y8) * sizeof(float));
    char path[512];
    snprintf(path, sizeof path, "%s/test_convert_vit_swin.nir", NC_BINARY_DIR);
    NC_ASSERT_OK(nc_snn_save_nir(s, path));
    nc_snn *back = NULL;
    NC_ASSERT_OK(nc_snn_load_nir(path, NULL, &back));
    assert_int_equal(back->n_layers, s->n_layers);
    nc_tensor *yback = nc_test_run(back, "cpu-fast", x, 8);
    assert_memory_equal(nc_tensor_data(yback), nc_tensor_data(y8), (size_t)nc_tensor_numel(y8) * sizeof(float));
    remove(path);
    nc_tensor_free(yback);
    nc_snn_free(back);
    nc_tensor_free(yref);
    nc_tensor_free(y8);
    nc_tensor_free(y128);
    nc_snn_free(s);
    nc_tensor_free(ann);
    nc_tensor_free(want);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* A two-stage torchvision Swin on 24 px (tests/fixtures/vit/swin_small.onnx):
 * its 6 × 6 tokens padded to 8 × 8 windows (a Gather whose map holds zeros),
 * a shifted block, patch merging's four step-2 Slices Concat-ed (one Gather
 * of 4C channels), stage 2's 3 × 3 tokens padded to one window; default
 * options; the readout converges to the ANN's, cpu-fast = cpu. */
static void test_swin_small(void **state)
{
    (void)state;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("tests/fixtures/vit/swin_small.onnx"), NULL, &m));
    nc_tensor *x = nc_test_load_f32("tests/fixtures/vit/x_swin_small.npy"),
              *want = nc_test_load_f32("tests/fixtures/vit/y_swin_small.npy"), *ann = NULL;
    const nc_tensor *ins[1] = {x};
    NC_ASSERT_OK(nc_model_run(m, ins, 1, &ann, 1));
    assert_true(nc_test_mean_gap(ann, want, 1) < 1e-5);
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_convert(m, x, NULL, NULL, &s, NULL));
    int padded = 0, merged = 0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        if (L->kind != NC_SNN_GATHER)
            continue;
        int zeros = 0;
        for (int64_t e = 0; e < L->index->numel; e++)
            zeros += nc_i64(L->index)[e] < 0;
        padded += zeros > 0;
        merged += L->ndim == 3 && L->shape[0] == 64 && L->shape[1] == 3 && L->shape[2] == 3 &&
                  s->layers[L->inputs[0]].shape[0] == 16; /* 16 channels at 6 × 6 → 64 at 3 × 3 */
    }
    assert_true(padded >= 3); /* stage 1's two blocks, stage 2's */
    assert_int_equal(merged, 1);
    nc_tensor *y8 = NULL, *y64 = NULL, *yref = NULL;
    double c8 = swin_cosine("swin_small", s, "cpu-fast", x, ann, 8, &y8),
           c64 = swin_cosine("swin_small", s, "cpu-fast", x, ann, 64, &y64);
    assert_true(c64 > 0.95 && c64 >= c8);
    swin_cosine("swin_small", s, "cpu", x, ann, 8, &yref);
    assert_memory_equal(nc_tensor_data(yref), nc_tensor_data(y8), (size_t)nc_tensor_numel(y8) * sizeof(float));
    nc_tensor_free(yref);
    nc_tensor_free(y8);
    nc_tensor_free(y64);
    nc_snn_free(s);
    nc_tensor_free(ann);
    nc_tensor_free(want);
    nc_tensor_free(x);
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vit_opset13),
        cmocka_unit_test(test_vit_opset17),
        cmocka_unit_test(test_convnext),
        cmocka_unit_test(test_token_gates),
        cmocka_unit_test(test_one_head),
        cmocka_unit_test(test_vit_spiking),
        cmocka_unit_test(test_swin_block),
        cmocka_unit_test(test_swin_small),
    };
    nc_test_select_cases();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
