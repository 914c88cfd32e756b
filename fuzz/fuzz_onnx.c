/* ONNX import from memory: parse, validate, shape inference, constant
 * folding. A model that loads is also described layer by layer (the path
 * `neuroc info` takes). */
#include "fuzz_util.h"

#include "neuroc/neuroc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_fuzz_set_limits();
    nc_model *m = NULL;
    if (nc_model_load_onnx_memory(data, size, "fuzz.onnx", NULL, &m) == NC_OK) {
        nc_layer_info li;
        for (size_t i = 0; i < nc_model_num_layers(m); i++)
            nc_model_layer(m, i, &li);
        nc_model_free(m);
    }
    return 0;
}
