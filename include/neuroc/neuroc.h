/*
 * neuroc — convert trained ANNs (ONNX) into spiking networks and run them.
 *
 * Conventions (DESIGN §5):
 *  - Every fallible call returns an nc_status and hands its result through a
 *    final `**out`, which is set to NULL on failure.
 *  - nc_last_error() holds the detail of the last failure on the calling
 *    thread (file, node, op, opset, what was expected).
 *  - `*_free(NULL)` is a no-op. Options structs are taken by const pointer;
 *    NULL means defaults, and so does a zero field. Every options struct
 *    has `nc_<struct>_init(&o)`, which fills it with those defaults written
 *    out (the header of each struct lists them): start from it, change the
 *    fields you need.
 *  - Names: `nc_<object>_<noun>` reads a fact of an object
 *    (nc_model_layer, nc_eval_result_cost), `nc_<object>_<verb>` acts on it
 *    (nc_session_run); process-wide settings are nc_set_<noun> /
 *    nc_<noun>_current. Layers are indexed by `int` everywhere (0-based,
 *    the nc_*_num_layers count is an int too).
 *  - The library never prints; messages go to the log callback, if any.
 *  - Old names of renamed functions remain as deprecated inline aliases in
 *    <neuroc/deprecated.h> (included here) and will be removed in 0.2.
 */
#ifndef NEUROC_NEUROC_H
#define NEUROC_NEUROC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define NC_API
#else
#define NC_API __attribute__((visibility("default")))
#endif

/* Marks an old name kept for source compatibility; the message names its
 * replacement. Define NC_NO_DEPRECATED before including neuroc to hide the
 * old names altogether. */
#if defined(__GNUC__) || defined(__clang__)
#define NC_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define NC_DEPRECATED(msg)
#endif

#define NC_MAX_DIMS 8

/* ---------------------------------------------------------------- status */

typedef enum nc_status {
    NC_OK = 0,
    NC_ERR_INVALID_ARG,          /* NULL or out-of-range argument from the caller */
    NC_ERR_NOMEM,                /* an allocation failed */
    NC_ERR_IO,                   /* a file could not be opened, read or written */
    NC_ERR_PARSE,                /* a file is truncated, corrupt or of the wrong format */
    NC_ERR_UNSUPPORTED,          /* an op, attribute, data type or feature neuroc lacks */
    NC_ERR_SHAPE,                /* shapes that do not match or cannot be resolved */
    NC_ERR_MODEL,                /* a structurally invalid model (cycle, missing value) */
    NC_ERR_LIMIT,                /* an input exceeds a size limit */
    NC_ERR_BACKEND_UNAVAILABLE,  /* the backend was not built or has no device */
    NC_ERR_DEVICE,               /* a device (CUDA, cuBLAS, cuSPARSE) or MPI call failed */
    NC_ERR_INTERNAL              /* a bug in neuroc: please report it */
} nc_status;

/* A static string naming the category of `s`. Never NULL. */
NC_API const char *nc_status_str(nc_status s);

/* Detail of the last failure on this thread; "" if none. The string is owned
 * by the library and valid until the next neuroc call on this thread. */
NC_API const char *nc_last_error(void);

/* Library version, e.g. "0.1.0". Static string. */
NC_API const char *nc_version(void);

/* Features compiled in, e.g. "cpu blas cuda". Static string. */
NC_API const char *nc_build_features(void);

typedef enum nc_log_level {
    NC_LOG_ERROR = 0,
    NC_LOG_WARN = 1,
    NC_LOG_INFO = 2,
    NC_LOG_DEBUG = 3
} nc_log_level;

/* Receives the library's warnings and notes. `msg` is valid only during the
 * call. The callback is process-wide; pass NULL to silence the library. */
typedef void (*nc_log_fn)(nc_log_level level, const char *msg, void *user);
NC_API void nc_set_log_callback(nc_log_fn fn, void *user);

/* ---------------------------------------------------------------- memory and limits */

/* The functions every allocation of the library goes through. `user` is
 * passed back on each call. malloc_fn and realloc_fn return NULL on failure
 * (neuroc then fails the call with NC_ERR_NOMEM and frees what it took);
 * they are never asked for 0 bytes. free_fn is never given NULL. */
typedef struct nc_allocator {
    void *(*malloc_fn)(size_t size, void *user);
    void *(*realloc_fn)(void *p, size_t size, void *user);
    void (*free_fn)(void *p, void *user);
    void *user;
} nc_allocator;

/* Replaces the library's allocator (copied; the caller keeps `a`); NULL,
 * or a struct with a NULL function, restores malloc/realloc/free.
 * Process-wide and not synchronised: call it while no other thread is
 * inside neuroc and while no neuroc object made with the previous allocator
 * is alive (memory is freed by the allocator in force at the time).
 * Not covered: HDF5's own allocations (NIR and .h5 data reading) and the
 * CUDA runtime's, which cannot be redirected; protobuf-c's (ONNX parsing)
 * are. */
NC_API void nc_set_allocator(const nc_allocator *a);

/* Bounds on what a file may make neuroc allocate or follow. A field <= 0
 * means its default (nc_limits_init writes them out). Files exceeding a limit fail with NC_ERR_LIMIT naming
 * the file and the tensor, string or graph. */
typedef struct nc_limits {
    int64_t max_tensor_bytes; /* one tensor read from a file (ONNX, NIR, npy, IDX, HDF5); default 4 GiB */
    int64_t max_model_bytes;  /* a model file plus its external data / all its weights; default 16 GiB */
    int64_t max_string_len;   /* one name or string in a model file; default 65536 bytes */
    int max_graph_depth;      /* nesting of NIR subgraphs; default 64 */
    /* HDF5 (1.10) itself can crash, loop or allocate gigabytes on some
     * corrupt files, whatever neuroc checks. With isolate_hdf5 > 0 every
     * HDF5 file (.nir, file.h5:/dataset) is first read in a child process
     * (POSIX fork) with a time limit and a cap on its address space; a
     * file that kills, stalls or exhausts the child fails with NC_ERR_PARSE
     * naming it, and the caller's process is never exposed to it. Off by
     * default in the library (it forks); the neuroc program turns it on. */
    int isolate_hdf5;
    int hdf5_timeout_s;       /* the child's time limit; default 60 s */
} nc_limits;

/* Sets the limits (copied; NULL restores the defaults). Process-wide and
 * not synchronised, like nc_set_allocator: set them before other threads
 * use the library. */
NC_API void nc_set_limits(const nc_limits *lim);
/* The limits in force, defaults filled in. */
NC_API void nc_limits_current(nc_limits *out);
/* The default limits: 4 GiB, 16 GiB, 65536, 64, isolate_hdf5 0, 60 s. */
NC_API void nc_limits_init(nc_limits *out);

/* ---------------------------------------------------------------- tensors */

/* Values match ONNX's TensorProto.DataType where they overlap. */
typedef enum nc_dtype {
    NC_DTYPE_F32 = 1,
    NC_DTYPE_U8 = 2,
    NC_DTYPE_I64 = 7
} nc_dtype;
/* nc_data_load's `want` for "keep the file's type". No tensor has it, so it
 * is not an enumerator (switches over a tensor's dtype need no case). */
#define NC_DTYPE_NATIVE ((nc_dtype)0)

/* A dense, C-ordered host tensor. Opaque; owned by whoever created it. */
typedef struct nc_tensor nc_tensor;

/* New zero-filled tensor. The caller owns *out and frees it with
 * nc_tensor_free. ndim may be 0 (a scalar). */
NC_API nc_status nc_tensor_create(nc_dtype dtype, int ndim, const int64_t *shape,
                                  nc_tensor **out);
/* New tensor holding a copy of `data` (numel elements of dtype). */
NC_API nc_status nc_tensor_create_from(nc_dtype dtype, int ndim, const int64_t *shape,
                                       const void *data, nc_tensor **out);
/* A tensor over the caller's buffer, without a copy: `data` holds numel
 * elements of dtype in C order, aligned to the element size, and must stay
 * valid (and, while the library reads it, unchanged) until the tensor is
 * freed; nc_tensor_free then frees the tensor, never the buffer. For
 * programs and bindings (Python's numpy arrays) that hold their data
 * already. NULL data only when numel is 0. The caller owns *out. */
NC_API nc_status nc_tensor_wrap(nc_dtype dtype, int ndim, const int64_t *shape, void *data,
                                nc_tensor **out);
NC_API void nc_tensor_free(nc_tensor *t);
NC_API nc_dtype nc_tensor_dtype(const nc_tensor *t);
NC_API int nc_tensor_ndim(const nc_tensor *t);
/* Pointer to ndim dimensions, owned by the tensor. */
NC_API const int64_t *nc_tensor_shape(const nc_tensor *t);
NC_API int64_t nc_tensor_numel(const nc_tensor *t);
/* The element buffer, owned by the tensor (NULL only for numel == 0). */
NC_API void *nc_tensor_data(nc_tensor *t);
NC_API const void *nc_tensor_data_const(const nc_tensor *t);

/* ---------------------------------------------------------------- data files */

/* Reads a .npy file (float32, float64, uint8, int64; C order, little-endian)
 * or an IDX file (optionally gzip-compressed, as Fashion-MNIST ships), or a
 * numeric HDF5 dataset named "file.h5:/path/to/dataset" (any integer or
 * float type, compressed with the filters HDF5 itself has, rank ≤ 8). A path
 * that exists as a file is always read as that file.
 * `want` is the dtype of the returned tensor: NC_DTYPE_F32 converts any
 * numeric data to float32 (values unchanged), NC_DTYPE_I64 accepts integer
 * data only, NC_DTYPE_NATIVE keeps the file's type (float64 becomes float32). The caller
 * owns *out. Data are samples along dimension 0: float data holding NaN or
 * ±inf (also a float64 beyond float32's range) is refused, naming the
 * sample and the index; a path that is not a regular file is refused by
 * what it is. */
NC_API nc_status nc_data_load(const char *path, nc_dtype want, nc_tensor **out);

/* Writes `t` as .npy (float32, uint8 or int64). The file appears complete or
 * not at all: it is written to a temporary file in the same folder, then
 * renamed. */
NC_API nc_status nc_npy_save(const char *path, const nc_tensor *t);

/* Writes len bytes to path atomically: a temporary file in the same folder,
 * synced and renamed, so the file appears complete or not at all and a
 * failure leaves any previous file untouched. The caller keeps `data`. */
NC_API nc_status nc_write_file_atomic(const char *path, const void *data, size_t len);

/* Every writer refuses an output path that exists and is not a regular file
 * (a device, FIFO, directory or symbolic link is never replaced) and one
 * in a folder it cannot create files in. This makes those checks (it
 * creates and removes the temporary file) without writing anything, so a
 * program with several outputs can refuse a bad one before it writes any. */
NC_API nc_status nc_output_check(const char *path);

/* Every reader refuses a path that is not a regular file, by what it is
 * ("x: is a directory; a file was expected"), and never waits on a FIFO.
 * This makes the same check alone: NC_OK if `path` opens as a regular file,
 * else NC_ERR_IO naming it and the cause. */
NC_API nc_status nc_check_input_file(const char *path);

/* Every output (nc_write_file_atomic, nc_npy_save, nc_snn_save_nir) is
 * written as "<path>.tmp.XXXXXX" beside <path> and renamed when complete.
 * This deletes the temporary files of the writes in progress, which then
 * fail. Async-signal-safe: call it from a SIGINT/SIGTERM handler so that an
 * interrupted program leaves no temporary file (the neuroc program does).
 * A process killed outright (SIGKILL) leaves its "*.tmp.*" file behind and
 * the previous <path> intact. */
NC_API void nc_remove_temp_files(void);

/* ---------------------------------------------------------------- ANN models */

/* An imported ANN: immutable after loading, so several threads may run it. */
typedef struct nc_model nc_model;

/* Defaults (nc_load_options_init): max_tensor_elems 2^31,
 * external_data_dir NULL, describe_only 0. */
typedef struct nc_load_options {
    /* Largest number of elements one tensor may declare; 0 = default (2^31).
     * nc_limits' max_tensor_bytes holds as well. */
    int64_t max_tensor_elems;
    /* Folder for external-data tensors; NULL = the model file's folder. */
    const char *external_data_dir;
    /* 1: keep nodes of ops neuroc cannot run (nc_layer_info.supported = 0,
     * shapes after them unknown) instead of refusing the model, so it can be
     * described (neuroc info); nc_model_run and nc_convert then refuse it,
     * naming those nodes. Default 0. */
    int describe_only;
} nc_load_options;
NC_API void nc_load_options_init(nc_load_options *o);

/* Loads an ONNX model. The caller owns *out (free with nc_model_free). */
NC_API nc_status nc_model_load_onnx(const char *path, const nc_load_options *opt,
                                    nc_model **out);
/* Same, from a buffer the caller keeps ownership of (it may be freed after
 * the call). `name` is used in error messages; may be NULL. */
NC_API nc_status nc_model_load_onnx_memory(const void *data, size_t size, const char *name,
                                           const nc_load_options *opt, nc_model **out);
NC_API void nc_model_free(nc_model *m);

/* A graph input or output. A dimension of -1 is symbolic (any size). Strings
 * are owned by the model. */
typedef struct nc_value_info {
    const char *name;
    nc_dtype dtype;
    int ndim;
    int64_t shape[NC_MAX_DIMS];
} nc_value_info;

NC_API size_t nc_model_num_inputs(const nc_model *m);
NC_API size_t nc_model_num_outputs(const nc_model *m);
NC_API nc_status nc_model_input(const nc_model *m, size_t i, nc_value_info *out);
NC_API nc_status nc_model_output(const nc_model *m, size_t i, nc_value_info *out);

/* One computing node of the imported graph, with shapes for a batch of one
 * (or the model's fixed batch). Strings are owned by the model. */
typedef struct nc_layer_info {
    const char *name;
    const char *op;       /* ONNX op type, e.g. "Conv" */
    int in_ndim;          /* shape of the first input; -1 when not known (see supported) */
    int64_t in_shape[NC_MAX_DIMS];
    int out_ndim;         /* shape of the first output; -1 when not known */
    int64_t out_shape[NC_MAX_DIMS];
    int64_t params;       /* elements of constant float inputs (weights, biases) */
    int64_t macs;         /* multiply-accumulates for one batch of in_shape */
    int supported;        /* 0: an op neuroc cannot run (loaded with describe_only) */
} nc_layer_info;

NC_API int nc_model_num_layers(const nc_model *m);
NC_API nc_status nc_model_layer(const nc_model *m, int i, nc_layer_info *out);

/* Runs the ANN forward on the CPU reference path. `inputs` has one tensor per
 * graph input, in order (the caller keeps ownership); `outputs` receives
 * n_outputs new tensors that the caller owns, all NULL on failure. n_outputs
 * may be smaller than the model's output count (the first ones are returned).
 * An input holding NaN or ±inf is refused (NC_ERR_INVALID_ARG) naming the
 * sample (dimension 0) and the index. */
NC_API nc_status nc_model_run(const nc_model *m, const nc_tensor *const *inputs, size_t n_inputs,
                              nc_tensor **outputs, size_t n_outputs);

/* ---------------------------------------------------------------- distributed runs */

/* A group of processes that share one evaluation, calibration or
 * fine-tuning, data parallel: each takes a contiguous share of the samples
 * and the counts, statistics and gradients are reduced across the group.
 * Made from the caller's MPI communicator by nc_dist_from_mpi_comm
 * (<neuroc/mpi.h>, in MPI builds only); the options structs take it as
 * `dist`, and NULL there means one process. Every process of the group
 * must make the same calls with the same network and data. */
typedef struct nc_dist nc_dist;
/* Releases the group (not the caller's communicator). NULL is a no-op. */
NC_API void nc_dist_free(nc_dist *d);
/* This process's rank in the group (0 for NULL) and the group's size (1 for NULL). */
NC_API int nc_dist_rank(const nc_dist *d);
NC_API int nc_dist_size(const nc_dist *d);

/* ---------------------------------------------------------------- devices */

/* Number of usable CUDA devices in *count, and makes this process's device
 * current: NEUROC_CUDA_DEVICE when set, else the node-local rank exported by
 * mpirun/srun modulo the count (one GPU per rank), else device 0.
 * NC_ERR_BACKEND_UNAVAILABLE when neuroc was built without CUDA, its CUDA
 * probe module (libneuroc_cuda_probe.so, loaded on the first call; see
 * nc_backend_get_info) cannot be found or loaded, or no device/driver is
 * present (count 0). */
NC_API nc_status nc_cuda_device_count(int *count);

#ifdef __cplusplus
}
#endif

#include "neuroc/snn.h"
#include "neuroc/convert.h"
#include "neuroc/sim.h"
#include "neuroc/batches.h"
#include "neuroc/deprecated.h"

#endif /* NEUROC_NEUROC_H */
