/* ONNX import from memory: parse, validate, shape inference, constant
 * folding. A model that loads is also described layer by layer (the path
 * `neuroc info` takes) and, if its inputs are small, run once on zeros, so
 * that hostile attributes (pads, strides, axes) reach the op kernels. */
#include "fuzz_util.h"

#include "neuroc/neuroc.h"

#define MAX_INPUTS 8
#define MAX_INPUT_ELEMS 65536

static void run_on_zeros(const nc_model *m)
{
    size_t n = nc_model_num_inputs(m), n_out = nc_model_num_outputs(m);
    if (n > MAX_INPUTS || n_out == 0)
        return;
    nc_tensor *in[MAX_INPUTS] = {0};
    nc_tensor *out = NULL;
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        nc_value_info vi;
        int64_t shape[NC_MAX_DIMS], numel = 1;
        ok = nc_model_input(m, i, &vi) == NC_OK;
        for (int d = 0; ok && d < vi.ndim; d++) {
            shape[d] = vi.shape[d] < 0 ? 1 : vi.shape[d]; /* a symbolic dim: batch of one */
            numel *= shape[d] > 0 ? shape[d] : 1;
            ok = numel <= MAX_INPUT_ELEMS;
        }
        ok = ok && nc_tensor_create(vi.dtype, vi.ndim, shape, &in[i]) == NC_OK;
    }
    if (ok && nc_model_run(m, (const nc_tensor *const *)in, n, &out, 1) == NC_OK)
        nc_tensor_free(out);
    for (size_t i = 0; i < n; i++)
        nc_tensor_free(in[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_fuzz_set_limits();
    nc_model *m = NULL;
    if (nc_model_load_onnx_memory(data, size, "fuzz.onnx", NULL, &m) == NC_OK) {
        nc_layer_info li;
        for (int i = 0; i < nc_model_num_layers(m); i++)
            nc_model_layer(m, i, &li);
        run_on_zeros(m);
        nc_model_free(m);
    }
    return 0;
}
