/* ONNX TensorProto decoding (raw, typed and external data) and the helpers
 * the importer shares with it. No protobuf type leaks out of convert/: the
 * proto structs are only named as incomplete types here. */
#ifndef NC_CONVERT_ONNX_TENSOR_H
#define NC_CONVERT_ONNX_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#include "snn/base/tensor.h"

struct Onnx__TensorProto;
struct ProtobufCAllocator;

typedef struct nc_onnx_tensor_ctx {
    /* Folder that external-data locations are relative to; NULL when the
     * model came from memory without an external_data_dir. */
    const char *data_dir;
    /* Largest element count a tensor may declare (> 0). */
    int64_t max_elems;
    /* Bytes all decoded tensors together may hold (0 = no bound), and the
     * running total: the model size limit beyond the file itself. */
    int64_t max_model_bytes, total_bytes;
} nc_onnx_tensor_ctx;

/* Routes protobuf-c's allocations through nc_malloc/nc_free. */
extern struct ProtobufCAllocator nc_onnx_pb_allocator;
/* The same allocator, setting *failed (cleared here) when an allocation
 * fails: unpack returns NULL both for a malformed file and out of memory. */
void nc_onnx_pb_allocator_init(struct ProtobufCAllocator *a, int *failed);

/* Maps an ONNX TensorProto.DataType to the dtype neuroc keeps it as
 * (float types → F32, integer and bool types → I64); 0 if unsupported. */
int nc_onnx_map_dtype(int32_t onnx_type, nc_dtype *out);
/* "FLOAT16", "STRING", ... for messages. Static string. */
const char *nc_onnx_dtype_name(int32_t onnx_type);

/* Decodes `tp` into a new tensor. `what` names it in messages when the
 * proto has no name. Messages start with "tensor '<name>'"; callers put the
 * file (and node) in front. The caller owns *out. */
nc_status nc_onnx_tensor_decode(const struct Onnx__TensorProto *tp, const char *what,
                                nc_onnx_tensor_ctx *ctx, nc_tensor **out);

/* Reads a serialized TensorProto file (ONNX test data: input_0.pb, ...).
 * External data is looked up next to the file. The caller owns *out. */
nc_status nc_onnx_tensor_load_file(const char *path, nc_tensor **out);

/* Reads a whole file into a new nc_malloc'd buffer (freed with nc_free).
 * NC_ERR_IO naming the path if it cannot be opened or read. */
nc_status nc_onnx_read_file(const char *path, uint8_t **data, size_t *size);

#endif
