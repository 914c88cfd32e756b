/*
 * Using neuroc from C: load an ONNX model, describe it, run it on a batch of
 * images from a .npy file and print the predicted class of the first rows.
 *
 * Build against an installed neuroc:
 *     cc c_api_example.c $(pkg-config --cflags --libs neuroc) -o c_api_example
 * Run (from the source tree):
 *     ./c_api_example examples/models/mlp.onnx examples/data/fmnist_test_x.npy
 *
 * Every neuroc call returns an nc_status; on failure nc_status_str() names the
 * kind of error and nc_last_error() says what went wrong and where.
 */
#include <stdint.h>
#include <stdio.h>

#include <neuroc/neuroc.h>

#define SHOW_ROWS 8

/* Prints why `what` failed; returns 0 so callers can write `ok = check(...)`. */
static int check(nc_status st, const char *what)
{
    if (st == NC_OK)
        return 1;
    fprintf(stderr, "c_api_example: %s failed: %s: %s\n", what, nc_status_str(st),
            nc_last_error());
    return 0;
}

static const char *dtype_name(nc_dtype dt)
{
    switch (dt) {
    case NC_DTYPE_F32: return "float32";
    case NC_DTYPE_U8: return "uint8";
    case NC_DTYPE_I64: return "int64";
    }
    return "?";
}

/* "name: float32 [batch, 1, 28, 28]"; a symbolic dimension prints as "?". */
static void print_value(const char *kind, const nc_value_info *v)
{
    printf("  %s %s: %s [", kind, v->name, dtype_name(v->dtype));
    for (int d = 0; d < v->ndim; d++) {
        if (v->shape[d] < 0)
            printf("%s?", d ? ", " : "");
        else
            printf("%s%lld", d ? ", " : "", (long long)v->shape[d]);
    }
    printf("]\n");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODEL.onnx IMAGES.npy\n", argv[0]);
        return 2;
    }
    printf("neuroc %s (%s)\n", nc_version(), nc_build_features());

    /* Everything we own starts NULL so the single cleanup path below can free
     * it whatever happened: the *_free functions accept NULL. */
    nc_model *model = NULL;
    nc_tensor *images = NULL, *logits = NULL;
    int ok = 0;

    /* NULL options: default limits, external data next to the model file. */
    if (!check(nc_model_load_onnx(argv[1], NULL, &model), "loading the model"))
        goto done;

    printf("%s:\n", argv[1]);
    for (size_t i = 0; i < nc_model_num_inputs(model); i++) {
        nc_value_info v;
        if (!check(nc_model_input(model, i, &v), "nc_model_input"))
            goto done;
        print_value("input ", &v);
    }
    for (size_t i = 0; i < nc_model_num_outputs(model); i++) {
        nc_value_info v;
        if (!check(nc_model_output(model, i, &v), "nc_model_output"))
            goto done;
        print_value("output", &v);
    }
    printf("  %d layers\n", nc_model_num_layers(model));

    /* The models are trained on pixels scaled to [0,1]; the .npy already holds
     * float32 in that range. Ask for float32 whatever the file stores. */
    if (!check(nc_data_load(argv[2], NC_DTYPE_F32, &images), "loading the images"))
        goto done;

    /* One input, one output. The caller keeps the input and owns the output. */
    const nc_tensor *inputs[1] = {images};
    if (!check(nc_model_run(model, inputs, 1, &logits, 1), "running the model"))
        goto done;

    if (nc_tensor_ndim(logits) != 2) {
        fprintf(stderr, "c_api_example: expected [batch, classes] logits, got %d dimensions\n",
                nc_tensor_ndim(logits));
        goto done;
    }
    int64_t rows = nc_tensor_shape(logits)[0], classes = nc_tensor_shape(logits)[1];
    const float *y = nc_tensor_data_const(logits);
    printf("ran %lld images; predicted classes of the first %d:\n", (long long)rows, SHOW_ROWS);
    for (int64_t r = 0; r < rows && r < SHOW_ROWS; r++) {
        const float *row = y + r * classes;
        int64_t best = 0;
        for (int64_t c = 1; c < classes; c++)
            if (row[c] > row[best])
                best = c;
        printf("  image %lld: class %lld (logit %.3f)\n", (long long)r, (long long)best,
               (double)row[best]);
    }
    ok = 1;

done:
    nc_tensor_free(logits);
    nc_tensor_free(images);
    nc_model_free(model);
    return ok ? 0 : 1;
}
