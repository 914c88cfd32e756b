/* Internal entry points of the ONNX importer beyond the public API. */
#ifndef NC_CONVERT_ONNX_IMPORT_H
#define NC_CONVERT_ONNX_IMPORT_H

#include "snn/base/tensor.h"

/* Loads like nc_model_load_onnx, but graph input i (in the file's order,
 * initializers excluded) becomes the constant frozen[i] where that is
 * non-NULL, so shapes it decides are known at load time (conformance cases
 * feed Reshape's shape or Slice's bounds as inputs). The tensors are copied;
 * dtype and declared dimensions must match (NC_ERR_SHAPE otherwise). The
 * model's inputs are the remaining ones, in order. */
nc_status nc_onnx_load_frozen(const char *path, const nc_load_options *opt,
                              const nc_tensor *const *frozen, int n_frozen, nc_model **out);

#endif
