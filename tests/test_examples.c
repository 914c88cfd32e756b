/* The shipped example models and the opset-variant CNNs, run through the whole
 * import + reference-forward path and compared with PyTorch's own outputs
 * (fixtures written by examples/train_fashion.py and examples/train_zoo.py, so
 * no torch is needed). */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TOL 1e-4f
#define IMG 784 /* 1 x 28 x 28 */

static nc_tensor *load(const char *rel, nc_dtype want)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_data_load(nc_test_src(rel), want, &t));
    return t;
}

static nc_model *load_model(const char *rel)
{
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src(rel), NULL, &m));
    return m;
}

static nc_tensor *run(const nc_model *m, const nc_tensor *x)
{
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_model_run(m, &x, 1, &y, 1));
    assert_non_null(y);
    assert_int_equal(nc_tensor_dtype(y), NC_DTYPE_F32);
    return y;
}

/* The first n images of x ([N,1,28,28]) as a new tensor. */
static nc_tensor *first_rows(const nc_tensor *x, int64_t n)
{
    int64_t shape[4] = {n, 1, 28, 28};
    nc_tensor *t = NULL;
    assert_true(n <= nc_tensor_shape(x)[0]);
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, shape, nc_tensor_data_const(x), &t));
    return t;
}

static int64_t argmax(const float *row, int64_t n)
{
    int64_t best = 0;
    for (int64_t j = 1; j < n; j++)
        if (row[j] > row[best])
            best = j;
    return best;
}

/* got must be [rows, classes] and match the first `rows` rows of want: every
 * value within TOL and the same argmax per row. */
static void assert_logits_match(const char *what, const nc_tensor *got, const nc_tensor *want,
                                int64_t rows)
{
    assert_int_equal(nc_tensor_ndim(got), 2);
    assert_int_equal(nc_tensor_ndim(want), 2);
    int64_t classes = nc_tensor_shape(want)[1];
    assert_int_equal(nc_tensor_shape(got)[0], rows);
    assert_int_equal(nc_tensor_shape(got)[1], classes);
    const float *g = nc_tensor_data_const(got), *w = nc_tensor_data_const(want);
    float worst = 0;
    int64_t worst_at = 0;
    for (int64_t i = 0; i < rows * classes; i++) {
        float d = fabsf(g[i] - w[i]);
        if (!(d <= worst)) { /* also catches NaN */
            worst = isnan(d) ? INFINITY : d;
            worst_at = i;
        }
    }
    if (!(worst <= TOL))
        fail_msg("%s: max |neuroc - torch| = %g at row %lld col %lld (got %g, want %g)", what,
                 (double)worst, (long long)(worst_at / classes), (long long)(worst_at % classes),
                 (double)g[worst_at], (double)w[worst_at]);
    for (int64_t r = 0; r < rows; r++) {
        int64_t a = argmax(g + r * classes, classes), b = argmax(w + r * classes, classes);
        if (a != b)
            fail_msg("%s: row %lld: argmax %lld, torch says %lld", what, (long long)r, (long long)a,
                     (long long)b);
    }
    print_message("%s: %lld rows, max abs diff %.3g\n", what, (long long)rows, (double)worst);
}

static void check_io(const nc_model *m, int64_t batch)
{
    nc_value_info in, out;
    assert_int_equal(nc_model_num_inputs(m), 1);
    assert_int_equal(nc_model_num_outputs(m), 1);
    NC_ASSERT_OK(nc_model_input(m, 0, &in));
    NC_ASSERT_OK(nc_model_output(m, 0, &out));
    assert_string_equal(in.name, "input");
    assert_string_equal(out.name, "logits");
    assert_int_equal(in.dtype, NC_DTYPE_F32);
    assert_int_equal(in.ndim, 4);
    assert_int_equal(in.shape[0], batch); /* -1 when symbolic */
    assert_int_equal(in.shape[1], 1);
    assert_int_equal(in.shape[2], 28);
    assert_int_equal(in.shape[3], 28);
    assert_int_equal(out.ndim, 2);
    assert_int_equal(out.shape[0], batch);
    assert_int_equal(out.shape[1], 10);
}

/* ------------------------------------------------------------ example models */

static void test_example_model(void **state)
{
    const char *name = *state;
    char path[256];

    snprintf(path, sizeof path, "examples/models/%s.onnx", name);
    nc_model *m = load_model(path);
    check_io(m, -1);

    nc_tensor *x = load("examples/data/fmnist_test_x.npy", NC_DTYPE_F32);
    nc_tensor *labels = load("examples/data/fmnist_test_y.npy", NC_DTYPE_I64);
    snprintf(path, sizeof path, "examples/data/%s_logits.npy", name);
    nc_tensor *want = load(path, NC_DTYPE_F32);
    int64_t n = nc_tensor_shape(x)[0];
    assert_int_equal(n, 256);
    assert_int_equal(nc_tensor_numel(labels), n);

    nc_tensor *y = run(m, x);
    assert_logits_match(name, y, want, n);

    const float *g = nc_tensor_data_const(y);
    const int64_t *lab = nc_tensor_data_const(labels);
    int64_t correct = 0;
    for (int64_t r = 0; r < n; r++)
        correct += argmax(g + r * 10, 10) == lab[r];
    print_message("%s: neuroc accuracy on the first %lld test images: %.2f %%\n", name,
                  (long long)n, 100.0 * (double)correct / (double)n);
    /* The models reach well over 80 % on the full test set. */
    assert_true(correct * 10 > n * 7);

    nc_tensor_free(y);
    nc_tensor_free(want);
    nc_tensor_free(labels);
    nc_tensor_free(x);
    nc_model_free(m);
}

/* ------------------------------------------------------------ opset variants */

static void test_opset_variant(void **state)
{
    const char *name = *state;
    int dynamic = strstr(name, "_dyn") != NULL;
    char path[256];

    snprintf(path, sizeof path, "tests/fixtures/opsets/%s.onnx", name);
    nc_model *m = load_model(path);
    check_io(m, dynamic ? -1 : 4);

    nc_tensor *x = load("tests/fixtures/opsets/input.npy", NC_DTYPE_F32);
    nc_tensor *want = load("tests/fixtures/opsets/expected.npy", NC_DTYPE_F32);
    assert_int_equal(nc_tensor_shape(x)[0], 4);
    assert_int_equal(nc_tensor_numel(x), 4 * IMG);

    nc_tensor *y = run(m, x);
    snprintf(path, sizeof path, "%s batch 4", name);
    assert_logits_match(path, y, want, 4);
    nc_tensor_free(y);

    /* A symbolic batch must really be symbolic: other sizes give the same rows. */
    if (dynamic) {
        const int64_t sizes[] = {1, 3};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            nc_tensor *xs = first_rows(x, sizes[k]);
            y = run(m, xs);
            snprintf(path, sizeof path, "%s batch %lld", name, (long long)sizes[k]);
            assert_logits_match(path, y, want, sizes[k]);
            nc_tensor_free(y);
            nc_tensor_free(xs);
        }
    }

    nc_tensor_free(want);
    nc_tensor_free(x);
    nc_model_free(m);
}

#define EXAMPLE(n) cmocka_unit_test_prestate(test_example_model, (void *)(n))
#define VARIANT(n) cmocka_unit_test_prestate(test_opset_variant, (void *)(n))

int main(void)
{
    const struct CMUnitTest tests[] = {
        EXAMPLE("mlp"),
        EXAMPLE("cnn"),
        EXAMPLE("resnet"),
        /* QCFS activations (Div, Clip, Mul, Add, Floor, Div, Mul): neuroc's
         * float32 path matches PyTorch's bit for bit today; a few values on
         * these images lie within an ulp of a floor step, but simulated
         * rounding changes of 1e-6 (relative, on every pre-activation) still
         * keep all logits within TOL. */
        EXAMPLE("cnn_qcfs"),
        /* Real architectures (examples/train_zoo.py), each starting with a Pad
         * 28x28 -> 32x32: a VGG with max pooling, torchvision's ResNet-18
         * (the largest: about 9.5 G multiply-adds for the 256 images) and a
         * SqueezeNet with Fire modules (Concat) and ceil-mode max pooling. */
        EXAMPLE("vgg"),
        EXAMPLE("resnet18"),
        EXAMPLE("squeezenet"),
        VARIANT("cnn_op9_fold_fixed"),
        VARIANT("cnn_op9_fold_dyn"),
        VARIANT("cnn_op9_nofold_fixed"),
        VARIANT("cnn_op9_nofold_dyn"),
        VARIANT("cnn_op13_fold_fixed"),
        VARIANT("cnn_op13_fold_dyn"),
        VARIANT("cnn_op13_nofold_fixed"),
        VARIANT("cnn_op13_nofold_dyn"),
        VARIANT("cnn_op17_fold_fixed"),
        VARIANT("cnn_op17_fold_dyn"),
        VARIANT("cnn_op17_nofold_fixed"),
        VARIANT("cnn_op17_nofold_dyn"),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
