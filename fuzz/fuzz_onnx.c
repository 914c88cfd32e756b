/* ONNX import from memory: parse, validate, shape inference, constant
 * folding. A model that loads is also described layer by layer (the path
 * `neuroc info` takes) and, if its inputs are small, run once on zeros, so
 * that hostile attributes (pads, strides, axes) reach the op kernels. */
#include "fuzz_util.h"

#include <stdlib.h>
#include <string.h>

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

/* Nesting mode: an input "NEST" d1 d0 k f1..fk g1..gm is not a model but a
 * recipe for one: the message fields g1..gm (field numbers, outermost
 * first) repeated (d1·256 + d0) times inside the fields f1..fk of a
 * ModelProto. Mutating the recipe explores deep nesting along every path,
 * which byte-level mutation of a real model never reaches: protobuf-c
 * recursed without a bound on such files (issue 33). NULL if not a recipe. */
static size_t varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        p[n++] = (uint8_t)(v | 0x80);
    p[n++] = (uint8_t)v;
    return n;
}

static uint8_t *nested_model(const uint8_t *data, size_t size, size_t *out_size)
{
    enum { MAX_LEVELS = 60000 }; /* 20000 If levels: several times what crashed */
    if (size < 7 || memcmp(data, "NEST", 4) != 0)
        return NULL;
    size_t depth = (size_t)data[4] << 8 | data[5], k = data[6];
    if (7 + k >= size)
        return NULL;
    const uint8_t *prefix = data + 7, *cycle = prefix + k;
    size_t m = size - 7 - k, levels = k + depth * m;
    if (levels > MAX_LEVELS)
        levels = MAX_LEVELS;
    /* body[l]: bytes inside level l (0 outermost), computed innermost first */
    size_t *body = malloc((levels + 1) * sizeof *body);
    if (!body)
        return NULL;
    uint8_t scratch[10];
    body[levels] = 0;
    for (size_t l = levels; l-- > 0;) {
        uint8_t f = l < k ? prefix[l] : cycle[(l - k) % m];
        body[l] = body[l + 1] + varint_put(scratch, (uint64_t)f << 3 | 2) + varint_put(scratch, body[l + 1]);
    }
    size_t len = body[0];
    uint8_t *buf = malloc(len ? len : 1);
    for (size_t l = 0, at = 0; buf && l < levels; l++) {
        uint8_t f = l < k ? prefix[l] : cycle[(l - k) % m];
        at += varint_put(buf + at, (uint64_t)f << 3 | 2);
        at += varint_put(buf + at, body[l + 1]);
    }
    free(body);
    *out_size = len;
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_fuzz_set_limits();
    size_t nested_size = 0;
    uint8_t *nested = nested_model(data, size, &nested_size);
    if (nested) {
        data = nested;
        size = nested_size;
    }
    nc_model *m = NULL;
    if (nc_model_load_onnx_memory(data, size, "fuzz.onnx", NULL, &m) == NC_OK) {
        nc_layer_info li;
        for (int i = 0; i < nc_model_num_layers(m); i++)
            nc_model_layer(m, i, &li);
        run_on_zeros(m);
        nc_model_free(m);
    }
    free(nested);
    return 0;
}
