/*
 * neuroc — spiking networks: build, load/save as NIR, run on a backend.
 * Included by <neuroc/neuroc.h>; the same conventions hold (DESIGN §5).
 *
 * Semantics (DESIGN §3): discrete time t = 1..T; every layer sees the
 * outputs of its inputs at the same step. An IF neuron integrates
 *   m = v + I;  s = (m >= θ);  v = m − θ·s  (or v = 0 with reset-to-zero)
 * from v(0) (θ/2 by default for converted networks) and emits s times its
 * spike value (θ by default, so residual Adds need no rescaling). A readout
 * layer is non-spiking: it sums its input current over time.
 */
/* The umbrella header first: it includes every public header in the order
 * their types need, this one among them, so this header stands alone. */
#include "neuroc/neuroc.h"

#ifndef NEUROC_SNN_H
#define NEUROC_SNN_H

#ifdef __cplusplus
extern "C" {
#endif

/* A spiking network. Built in code, converted from an ANN, or loaded from
 * NIR; immutable once a session runs it. */
typedef struct nc_snn nc_snn;

typedef enum nc_snn_layer_kind {
    NC_SNN_INPUT = 0,  /* the network's input (static image or event frames) */
    NC_SNN_AFFINE,     /* y = W·x + b, W [out, in] */
    NC_SNN_CONV2D,     /* W [C_out, C_in/groups, kH, kW], NCHW */
    NC_SNN_POOL2D,     /* sum pooling times a scale (1/k² for average pooling) */
    NC_SNN_FLATTEN,    /* (C,H,W) → (C·H·W) */
    NC_SNN_ADD,        /* element-wise sum of two or more inputs */
    NC_SNN_CONCAT,     /* along the channel axis */
    NC_SNN_IF,         /* integrate-and-fire neurons */
    NC_SNN_LIF,        /* leaky integrate-and-fire (NIR LIF), forward Euler with dt */
    NC_SNN_CUBALIF,    /* current-based LIF (NIR CubaLIF), forward Euler with dt */
    NC_SNN_READOUT,    /* non-spiking accumulator of its input over time */
    NC_SNN_MAXPOOL2D,  /* max pooling of currents (a converted MaxPool; not expressible in NIR) */
    NC_SNN_SPIKEMAXPOOL2D, /* max pooling of spike counts: binary spikes at the max of its inputs' rates */
    NC_SNN_SIGNED_IF,  /* IF neurons that also send negative spikes: net count = round(Σ I / θ), at least 0 */
    /* NIR node types read from other tools' files (nir 1.0.8 docstrings;
     * the cpu and cpu-fast backends run them, cuda and the Loihi simulator
     * refuse them by name): */
    NC_SNN_LI,         /* leaky integrator: τ·dv/dt = (v_leak − v) + r·I; outputs v */
    NC_SNN_CUBALI,     /* current-based LI: τ_syn·dI/dt = −I + w_in·x, then as LI; outputs v */
    NC_SNN_INTEGRATOR, /* NIR's I: v += r·x each step; outputs v */
    NC_SNN_THRESHOLD,  /* 1 where x > θ (≥ without spike_gt), else 0; no state */
    NC_SNN_SCALE,      /* x times a factor per neuron (1, C or full size) */
    NC_SNN_DELAY,      /* y(t) = x(t − d), d whole steps (zero before) */
    NC_SNN_RESHAPE,    /* values of its input in another shape (a partial Flatten; Conv1d's (C, L) ↔ (C, 1, L);
                          one of several Input nodes: its part of the network's input) */
    NC_SNN_NONLINEAR,  /* a non-linear function of its inputs' running means, emitted as increments
                          (expectation compensation: nc_snn_add_nonlinear) */
    NC_SNN_GATHER,     /* routing: each output element one element of its input, or 0, by an index map made
                          at conversion (window partition, roll, pad, patch merging: pure data movement) */
    NC_SNN_KIND_COUNT  /* the number of kinds, not a kind: new kinds go above it */
} nc_snn_layer_kind;

/* What a neuron's membrane does after a spike: the one reset enum of IF
 * layers (nc_if_params), conversion (nc_convert_options), NIR loading
 * (nc_nir_options) and the Loihi simulator (nc_loihi_options). */
typedef enum nc_reset_mode {
    /* The context's default: subtraction for IF layers, conversion and NIR;
     * for Loihi the target's native neuron (Loihi 1: zero, Loihi 2: subtract). */
    NC_RESET_DEFAULT = 0,
    NC_RESET_SUBTRACT = 1, /* v = m − θ·s (DESIGN §3); on Loihi 1 two compartments emulate it */
    NC_RESET_ZERO = 2,     /* v = 0 after a spike */
#ifndef NC_NO_DEPRECATED
    /* neuroc 0.1's names for the Loihi simulator (values were 0, 1, 2) */
    NC_LOIHI_RESET_DEFAULT NC_DEPRECATED("use NC_RESET_DEFAULT") = NC_RESET_DEFAULT,
    NC_LOIHI_RESET_ZERO NC_DEPRECATED("use NC_RESET_ZERO") = NC_RESET_ZERO,
    NC_LOIHI_RESET_SUBTRACT NC_DEPRECATED("use NC_RESET_SUBTRACT") = NC_RESET_SUBTRACT
#endif
} nc_reset_mode;

/* Returns the name of a layer kind ("IF", "Conv2d", ...). Static string. */
NC_API const char *nc_snn_kind_name(nc_snn_layer_kind k);
/* 1 for the kinds of spiking neurons, which carry a membrane from step to
 * step (IF, LIF, CubaLIF), else 0: the layers whose spike rates and neuron
 * counts a report shows. From the IR's one table of layer kinds. */
NC_API int nc_snn_kind_is_neuron(nc_snn_layer_kind k);

/* New network with one input layer of per-sample shape `shape` (e.g. {1,28,28}
 * or {784}); the input layer has id 0. The caller owns *out. */
NC_API nc_status nc_snn_create(int ndim, const int64_t *shape, nc_snn **out);
NC_API void nc_snn_free(nc_snn *s);

/* Layer builders. Each appends a layer that reads layer `from` (an id returned
 * earlier), copies the tensors it is given (the caller keeps ownership), and
 * returns the new layer's id in *id. `name` may be NULL (a name is made up);
 * names are unique within a network. Shapes are checked here. */
NC_API nc_status nc_snn_add_affine(nc_snn *s, int from, const nc_tensor *weight,
                                   const nc_tensor *bias, const char *name, int *id);

typedef struct nc_conv2d_params {
    int64_t stride[2], padding[2], dilation[2]; /* 0 means 1 for stride/dilation */
    int64_t groups;                             /* 0 means 1 */
} nc_conv2d_params;
NC_API nc_status nc_snn_add_conv2d(nc_snn *s, int from, const nc_tensor *weight,
                                   const nc_tensor *bias, const nc_conv2d_params *p,
                                   const char *name, int *id);

/* Sum pooling over kernel×kernel windows times `scale` (use 1/(kh·kw) for
 * average pooling; padding counts as zeros). */
NC_API nc_status nc_snn_add_pool2d(nc_snn *s, int from, const int64_t kernel[2],
                                   const int64_t stride[2], const int64_t padding[2], float scale,
                                   const char *name, int *id);
/* Spiking max pooling (NC_SNN_SPIKEMAXPOOL2D) of a layer of spikes: output
 * neuron o's spike count up to step t is the largest count, over its
 * window, of its inputs' spikes, so its rate is the max of its inputs'
 * rates at every t. An input's count is kept in units of its single spike:
 * an input spikes at a step when its value is non-zero, and a SignedIF of
 * bursts (max_spikes B > 1) adds k for a burst of k (its value / its
 * single spike's, rounded) and takes k back for a negative one. When the
 * max moves by d (|d| ≤ B), o sends one event of payload d times the single
 * spike of the first input (window order) at the new max whose count moved
 * that way at that step (θ for an IF layer with per-layer or per-channel
 * θ): with one spike a step, one spike carrying that input's value. Its
 * events are then bursts of its input's bursts: a weighted layer reading it
 * through weights counts the ops of those of |d| ≥ 2 as multiply-adds
 * (nc_session_burst_ops_step). A two-sided SignedIF (counts below zero)
 * cannot be read. Taps in the padding are ignored; padding must be smaller
 * than the kernel. State: a count per input neuron and per output neuron,
 * zero at the start of a run. */
NC_API nc_status nc_snn_add_spike_maxpool2d(nc_snn *s, int from, const int64_t kernel[2],
                                            const int64_t stride[2], const int64_t padding[2],
                                            const char *name, int *id);
NC_API nc_status nc_snn_add_flatten(nc_snn *s, int from, const char *name, int *id);
NC_API nc_status nc_snn_add_add(nc_snn *s, int n_from, const int *from, const char *name, int *id);
NC_API nc_status nc_snn_add_concat(nc_snn *s, int n_from, const int *from, const char *name,
                                   int *id);

/* The functions of a Nonlinear layer (nc_snn_add_nonlinear). */
typedef enum nc_nonlinear_fn {
    NC_NL_SIGMOID = 0, /* 1 / (1 + e^−x) */
    NC_NL_SILU,        /* x·sigmoid(x) (Swish) */
    NC_NL_TANH,
    NC_NL_HARDSIGMOID, /* clip(alpha·x + beta, 0, 1) (PyTorch: 1/6, 1/2; ONNX's defaults: 0.2, 0.5) */
    NC_NL_HARDSWISH,   /* x·clip(x/6 + 1/2, 0, 1) */
    NC_NL_GELU,        /* x·Φ(x) = x/2·(1 + erf(x/√2)) */
    NC_NL_GELU_TANH,   /* x/2·(1 + tanh(√(2/π)·(x + 0.044715·x³))) */
    NC_NL_MUL,         /* x ⊙ y of two inputs of the same rank, y's dimensions equal to x's or 1 (broadcast) */
    NC_NL_LAYERNORM,   /* (x − mean) / √(variance + eps) along `axis`, at each position of the other axes */
    NC_NL_SOFTMAX,     /* e^x / Σ e^x along `axis` */
    NC_NL_MATMUL,      /* x·y over the last two axes: x (…, m, k), y (…, k, n), leading axes equal; either
                          read transposed (trans_x, trans_y), so attention needs no transpose layer */
    NC_NL_COUNT        /* the number of functions, not one */
} nc_nonlinear_fn;

typedef struct nc_nonlinear_params {
    nc_nonlinear_fn fn;
    float alpha, beta; /* NC_NL_HARDSIGMOID */
    float eps;         /* NC_NL_LAYERNORM (> 0) */
    int axis;          /* NC_NL_LAYERNORM, NC_NL_SOFTMAX: an axis of the per-sample shape, negative from the end */
    int trans_x, trans_y; /* NC_NL_MATMUL: x is stored (…, k, m), y (…, n, k) */
} nc_nonlinear_params;

/* A Nonlinear layer (NC_SNN_NONLINEAR) computing f of its inputs' running
 * means by expectation compensation: it keeps the sum S_t of each input
 * over steps 1..t and emits, at step t,
 *     y(t) = t·f(S_t / t) − (t − 1)·f(S_{t−1} / (t − 1)),
 * so its outputs summed to t are exactly t·f(mean input) (up to float
 * rounding): a layer that follows a spiking layer's rates converges to the
 * ANN's function of them, and is exact at t = 1 for a constant input. Its
 * output is graded (not spikes): a SignedIF with two_sided set turns it
 * back into spikes. n_from is 2 for NC_NL_MUL and NC_NL_MATMUL, else 1.
 * State: the input sums and the last t·f per neuron, zero at the start of
 * a run. The cpu, cpu-fast and cuda backends run every function (cpu-fast
 * bit for bit, cuda bit for bit where its expf, erff and tanhf round as
 * the C library's); NIR stores it as a neuroc.Nonlinear extension node,
 * the identity in the standard graph; the Loihi simulator refuses it; BPTT
 * trains the element-wise functions and Mul. */
NC_API nc_status nc_snn_add_nonlinear(nc_snn *s, int n_from, const int *from, const nc_nonlinear_params *p,
                                      const char *name, int *id);
/* The name of f ("SiLU", "LayerNorm", ...); "unknown" outside the enum. Static string. */
NC_API const char *nc_nonlinear_fn_name(nc_nonlinear_fn fn);

/* IF neuron parameters. threshold and v_init are tensors of 1 element (per
 * layer), C elements (per channel, the first dimension of the layer's shape)
 * or the layer's full shape (per neuron); v_init NULL means θ/2, spike_value
 * NULL means θ (1 element, C, or full shape too).
 *
 * signed_spikes (NC_SNN_SIGNED_IF, DESIGN §3; the "signed neuron with
 * memory" of Wang et al., IJCAI 2022): a neuron whose membrane falls below
 * 0 while its net spike count n (positive minus negative spikes so far) is
 * above 0 sends a negative spike (−spike value) and its membrane gains θ.
 * Then n(t) = clip(floor((v(0) + Σ I)/θ), 0, ·): the rate follows the ReLU
 * of the cumulative input, so a neuron whose input is positive early and
 * negative later takes its early spikes back (the plain IF keeps them: the
 * error that makes deep converted networks converge slowly). Needs the
 * subtractive reset and positive thresholds and spike values; state: the
 * membrane and n per neuron. NIR cannot express it (a neuroc.SignedIF
 * extension node); the cpu, cpu-fast and CUDA backends run it and the Loihi
 * simulator refuses it. A converted network has it by default
 * (nc_convert_options.spikes). */
typedef struct nc_if_params {
    const nc_tensor *threshold;
    const nc_tensor *v_init;
    const nc_tensor *spike_value;
    nc_reset_mode reset;
    int signed_spikes;
    /* signed_spikes only: the most spikes a neuron sends in one step (0 or
     * 1: one; at most 1024). s = floor(m/θ) clipped to [1, B] when m >= θ
     * and to [−min(n, B), −1] when m < 0 while n > 0 (DESIGN §3): the count
     * moves in steps of θ while one step carries up to B·θ, so θ can be B
     * times finer than the largest activation with no clipping. A spiking
     * max pool reading such a layer counts its bursts in spikes and sends
     * bursts (nc_snn_add_spike_maxpool2d). */
    int max_spikes;
} nc_if_params;
/* nc_if_params.signed_spikes = NC_SIGNED_TWO_SIDED: a SignedIF whose net
 * count may go below 0, so n(t) = floor((v(0) + Σ I)/θ) over all integers:
 * a neuron that carries a signed value (the output of a Nonlinear layer)
 * as spikes of either sign. */
#define NC_SIGNED_TWO_SIDED 2
NC_API nc_status nc_snn_add_if(nc_snn *s, int from, const nc_if_params *p, const char *name,
                               int *id);
NC_API nc_status nc_snn_add_readout(nc_snn *s, int from, const char *name, int *id);

/* The network's output layer: the readout if there is one, else the last
 * layer added, unless set explicitly. */
NC_API nc_status nc_snn_set_output(nc_snn *s, int id);

typedef struct nc_snn_layer_info {
    const char *name;           /* owned by the network */
    nc_snn_layer_kind kind;
    int n_inputs;
    const int *inputs;          /* ids of the layers it reads; owned by the network */
    int ndim;                   /* per-sample output shape */
    int64_t shape[NC_MAX_DIMS];
    int64_t params;             /* weights + biases + neuron parameters */
    int max_spikes;             /* SignedIF: spikes a step, > 1 for bursts (nc_if_params); else 0 */
    int two_sided;              /* SignedIF: the net count may go negative (NC_SIGNED_TWO_SIDED) */
    nc_nonlinear_params nonlinear; /* Nonlinear: its function (axis non-negative) */
} nc_snn_layer_info;

NC_API int nc_snn_num_layers(const nc_snn *s);
/* Layer `id` (0 .. nc_snn_num_layers − 1). Named _at, not nc_snn_layer,
 * because that names the IR's own layer record inside the library. */
NC_API nc_status nc_snn_layer_at(const nc_snn *s, int id, nc_snn_layer_info *out);
/* Id of the layer named `name`, or -1. */
NC_API int nc_snn_find_layer(const nc_snn *s, const char *name);
NC_API int nc_snn_output_layer(const nc_snn *s);
/* The operating T: the steps a static input runs for when the caller does
 * not say (neuroc eval and run without -T, the Python methods without
 * timesteps). Conversion with nc_convert_options.target_loss sets it to
 * the T it chose; .nir files keep it in /neuroc. 0 = none (the callers'
 * own defaults). */
#define NC_SNN_MAX_TIMESTEPS (1 << 20)
NC_API nc_status nc_snn_set_timesteps(nc_snn *s, int timesteps);
NC_API int nc_snn_timesteps(const nc_snn *s);

/* The network's outputs: 1, or the number of Output nodes of a NIR graph
 * that has several (run together: the output layer holds their values,
 * each flattened, one after another, in the order of the nodes' names;
 * written back to NIR as Output nodes of their own). */
NC_API int nc_snn_num_outputs(const nc_snn *s);
typedef struct nc_snn_output_info {
    const char *name;   /* the Output node's (or the output layer's) name; owned by the network */
    int64_t offset;     /* where its values start in a sample of the output layer */
    int64_t size;       /* how many */
    int ndim;           /* its own shape */
    int64_t shape[NC_MAX_DIMS];
} nc_snn_output_info;
/* Output k (0 .. nc_snn_num_outputs − 1). */
NC_API nc_status nc_snn_output_at(const nc_snn *s, int k, nc_snn_output_info *out);

/* ---------------------------------------------------------------- NIR */

/* The spike test of neurons read from other tools' NIR files. */
typedef enum nc_spike_test {
    NC_SPIKE_DEFAULT = 0, /* NIR's: a spike when v > v_threshold */
    NC_SPIKE_GT = 1,      /* the same, explicitly */
    NC_SPIKE_GE = 2       /* DESIGN §3's m >= θ (neuroc's default before 0.3) */
} nc_spike_test;

/* How LIF, CubaLIF, LI and CubaLI integrate their leak over one step dt. */
typedef enum nc_integration {
    NC_INTEGRATION_EULER = 0, /* forward Euler: v += dt/τ·(v_leak − v + r·I) */
    /* exact for an input held over the step: v += (1 − e^(−dt/τ))·(v_leak −
     * v + r·I), the synaptic current likewise (what sinabs's and snntorch's
     * exponential decays compute) */
    NC_INTEGRATION_EXACT = 1
} nc_integration;

/* Defaults (nc_nir_options_init, or all zero): NIR's semantics. They apply
 * to files of other tools only: a file neuroc wrote keeps the exact
 * semantics its /neuroc group records (DESIGN §3 for converted networks). */
typedef struct nc_nir_options {
    /* After a spike of an IF/LIF/CubaLIF node: NC_RESET_DEFAULT and
     * NC_RESET_ZERO reset to the node's v_reset (0 unless the file says
     * otherwise), as NIR defines it; NC_RESET_SUBTRACT subtracts v_threshold
     * (neuroc's assumption before 0.3, what rate-coded conversions need). */
    nc_reset_mode reset;
    /* Time step in seconds for LIF/CubaLIF/LI/CubaLI dynamics and Delay
     * nodes; 0 = 1e-4. IF and I (Integrator) nodes add r·I each step. */
    double dt;
    nc_spike_test spike;        /* NC_SPIKE_DEFAULT: v > v_threshold */
    nc_integration integration; /* NC_INTEGRATION_EULER by default */
    /* 1 with reset NC_RESET_SUBTRACT: snntorch's subtraction with
     * reset_delay=False, which tests a membrane left above θ by the last
     * step as m − θ > θ ("avoid double reset"); v = m − θ·s as ever */
    int snntorch_subtract;
} nc_nir_options;
NC_API void nc_nir_options_init(nc_nir_options *o);

/* The semantics a neuron (or LI, CubaLI, Integrator, Threshold) layer runs
 * with: what nc_nir_options chose for another tool's file, or what a
 * converted network or neuroc's own file says. */
typedef struct nc_snn_neuron_info {
    int spike_gt;               /* 1: a spike when m > θ; 0: m >= θ */
    nc_reset_mode reset;        /* NC_RESET_SUBTRACT, or NC_RESET_ZERO (to v_reset) */
    int has_v_reset;            /* a v_reset other than 0 */
    int has_r;                  /* an IF's input resistance r other than 1 */
    double dt;                  /* seconds; 0 where unused (IF) */
    nc_integration integration; /* of the leaks */
    int limit_params;           /* some τ, r, τ_syn or w_in is +inf (their limit's meaning) */
    int v_init_half;            /* v(0) = θ/2 (converted IF networks); else v(0) as stored (0 for NIR) */
    int snntorch_subtract;      /* nc_nir_options.snntorch_subtract */
} nc_snn_neuron_info;
/* NC_ERR_INVALID_ARG for a layer that has no neuron semantics. */
NC_API nc_status nc_snn_neuron_at(const nc_snn *s, int id, nc_snn_neuron_info *out);

/* Loads a .nir (HDF5) file written by neuroc or another tool. The caller owns
 * *out. Unsupported node types are an error naming the node. */
NC_API nc_status nc_snn_load_nir(const char *path, const nc_nir_options *opt, nc_snn **out);
/* Defaults (nc_nir_save_options_init): strict 0. */
typedef struct nc_nir_save_options {
    /* 0: every network neuroc can run is saved: /node holds its standard
     * form (nc_snn_nir_standard), where a layer NIR cannot express (signed
     * spikes, max pooling, per-window divisors) is approximated, and the
     * exact network goes beside it. 1: such an approximation is refused
     * (NC_ERR_UNSUPPORTED naming the layers and what they would lose). */
    int strict;
} nc_nir_save_options;
NC_API void nc_nir_save_options_init(nc_nir_save_options *o);

/* Writes `s` as NIR (DESIGN §4): binary spikes with θ folded into the next
 * layer's weights. /node, what every NIR tool reads, holds nir 1.0.x node
 * types only: s's standard form (nc_snn_nir_standard); the /neuroc group
 * (which NIR tools ignore) holds what makes the round trip lossless and,
 * where the standard form differs from s, s's own graph.
 * Written to a temporary file that is renamed when complete. opt NULL means
 * the defaults; nc_snn_save_nir is nc_snn_save_nir_with(s, path, NULL). */
NC_API nc_status nc_snn_save_nir_with(const nc_snn *s, const char *path, const nc_nir_save_options *opt);
NC_API nc_status nc_snn_save_nir(const nc_snn *s, const char *path);

/* The standard form of s: what a .nir file's /node holds (DESIGN §4), the
 * best that plain NIR (nir 1.0.x node types, NIR's neuron semantics)
 * holds of s. Concatenations become placement convolutions (exact), signed
 * IF neurons NIR's IF of threshold B·θ for bursts of B, max pooling
 * average pooling, and IF neurons the portable form's (nc_snn_make_portable,
 * v(0) dropped). `loss` (cap bytes, may be NULL) gets what it loses, a line
 * each, "" for nothing. out may be NULL (the loss only); else the caller
 * owns *out. NC_ERR_UNSUPPORTED naming the layer where no standard form
 * exists (a Reshape that is no Flatten): nc_snn_save_nir then writes s
 * alone as before (neuroc.<Kind> nodes in /node). */
NC_API nc_status nc_snn_nir_standard(const nc_snn *s, nc_snn **out, char *loss, size_t cap);

/* What a .nir file holds for neuroc (nc_nir_file_info_read). */
typedef struct nc_nir_file_info {
    int neuroc_format;  /* format of its /neuroc group (nir_write.c), 0: none neuroc reads (another tool's) */
    int exact_graph;    /* 1: neuroc reads its exact network from /neuroc/graph, other tools /node */
    int loss_known;     /* 1: standard_loss says what /node loses (files since format 4's writer) */
    char standard_loss[4096]; /* a line each, "" for nothing */
} nc_nir_file_info;
/* Reads what *out describes from the file at path; NC_ERR_PARSE for a file
 * that is no HDF5 NIR file. */
NC_API nc_status nc_nir_file_info_read(const char *path, nc_nir_file_info *out);

/* What the portable form does with an IF layer's v(0) (NIR's is 0). */
typedef enum nc_portable_v0 {
    /* v(0) is dropped (what every peer runs) */
    NC_PORTABLE_V0_DROP = 0,
    /* spread over the steps: v(0)/timesteps more bias in the synaptic
     * layer feeding the IF (when it feeds nothing else), so that after T
     * steps the IF has had the same charge */
    NC_PORTABLE_V0_SPREAD = 1,
    /* exact: fed as a current in the first step from a one-shot pulse
     * neuron, an IF that resets to v_reset = −1e30 after its one spike
     * (peers that ignore v_reset, norse 1.1's importer, fire it again) */
    NC_PORTABLE_V0_PULSE = 2
} nc_portable_v0;
/* Defaults (nc_portable_options_init; all zero means the same):
 * NC_PORTABLE_V0_DROP, threshold_scale 1. */
typedef struct nc_portable_options {
    nc_portable_v0 v0;
    int timesteps; /* the T of NC_PORTABLE_V0_SPREAD (>= 1) */
    /* each IF's threshold times this (0 = 1; in (0, 1]): a neuron reset to
     * zero loses the charge above θ that subtraction keeps, about half an
     * input a spike; a lower threshold (the spike still carries θ) makes up
     * for part of it */
    float threshold_scale;
} nc_portable_options;
NC_API void nc_portable_options_init(nc_portable_options *o);
/* The portable form of s (DESIGN §4; docs/nir.md): a network that plain
 * NIR describes completely, so that a tool following NIR's own definitions
 * (an IF spikes when v > v_threshold, resets to v_reset, starts from 0)
 * reproduces neuroc's run of it up to float rounding. Each IF layer of
 * DESIGN §3 becomes NIR's IF: its threshold the next float below θ (m >= θ
 * is m > θ⁻), v(0) = 0 (its old value dropped, spread over T steps of bias
 * or fed by a pulse in the first step: nc_portable_v0; *n_pulses counts the
 * layers compensated), and reset to zero instead of by subtraction (what
 * portability costs in accuracy). Save it with
 * nc_nir_save_options.strict (neuroc convert / export --portable do).
 * NC_ERR_UNSUPPORTED naming the layer for SignedIF, LIF/CubaLIF, layers NIR
 * cannot express and recurrent edges. The caller owns *out; n_pulses may
 * be NULL. */
NC_API nc_status nc_snn_make_portable(const nc_snn *s, const nc_portable_options *opt, nc_snn **out,
                                      int *n_pulses);

/* ---------------------------------------------------------------- backends */

/* One of the backends neuroc knows ("cpu", "cpu-fast", "cuda"), and whether
 * it can run on this machine. */
typedef struct nc_backend_info {
    const char *name;
    int available;      /* 1: a session on it can be created here */
    const char *reason; /* when not available, why (e.g. "neuroc was built
                         * without CUDA ...", "module libneuroc_cuda.so not
                         * found (looked in ...)", "no CUDA device (...)");
                         * "" when available */
} nc_backend_info;

/* The number of backends known, available or not. */
NC_API int nc_backend_count(void);
/* Backend i (0 ≤ i < nc_backend_count()) into *out. The first call for a
 * backend held by a module loads the module and probes for a device; the
 * answer is kept for the life of the process. The strings are static,
 * owned by the library. NC_ERR_INVALID_ARG for an i out of range. */
NC_API nc_status nc_backend_get_info(int i, nc_backend_info *out);

/* ---------------------------------------------------------------- sessions */

typedef enum nc_encoding {
    NC_ENCODING_DIRECT = 0,  /* the analog input is the current at every step */
    NC_ENCODING_POISSON = 1  /* Bernoulli spikes with p = clamp(x, 0, 1) each step */
} nc_encoding;

/* Arithmetic of the cuda backend's dense GEMMs (cuBLAS). FP32 sums in
 * another order than the reference (results differ in the last bits); TF32
 * rounds each input to 10 mantissa bits (relative error 2^-11 per input) and
 * BF16 to 7 bits (2^-8) before multiplying, accumulating in float. */
typedef enum nc_cuda_precision {
    NC_CUDA_FP32 = 0,
    NC_CUDA_TF32 = 1,
    NC_CUDA_BF16 = 2
} nc_cuda_precision;

/* Defaults (nc_session_options_init): backend "cpu", timesteps 1,
 * NC_ENCODING_DIRECT, seed 0, per_step 0, no recorded layers,
 * cuda_strategy NULL ("auto"), cuda_dense_threshold 0.25, NC_CUDA_FP32. */
typedef struct nc_session_options {
    /* "cpu" (reference; default), "cpu-fast" or "cuda"; "cuda:STRATEGY" sets
     * cuda_strategy too (e.g. "cuda:dense"). */
    const char *backend;
    int timesteps;           /* T for static inputs (0 = 1); ignored for time-series input */
    nc_encoding encoding;
    uint64_t seed;           /* for Poisson encoding */
    int per_step;            /* output every step (T, N, ...) instead of the sum */
    /* Layers whose spikes and membrane potentials are recorded, by name. */
    const char *const *record;
    int n_record;
    /* cuda backend only (others ignore these). How each Affine and Conv2d
     * layer is computed: "event" (event-driven kernels; sums in the
     * reference's order, so results equal the cpu backend's bit for bit),
     * "dense" (cuBLAS GEMM), "sparse" (cuSPARSE SpMM of the spikes in CSR;
     * Affine only, Conv2d falls back to event) or "auto" (NULL: dense where
     * the layer's input density, measured in the session's first run, is at
     * least cuda_dense_threshold, else event). Per-layer overrides may
     * follow: "auto,fc1=event,conv1=dense". */
    const char *cuda_strategy;
    float cuda_dense_threshold;       /* 0 = 0.25 (non-zero inputs per input) */
    nc_cuda_precision cuda_precision; /* of the dense GEMMs */
    /* Time every layer (nc_session_layer_seconds) on backends that can
     * (cpu, cpu-fast): a clock read per layer and step, cheap next to the
     * layers' work. */
    int profile;
    /* Count synaptic operations per step as well as per run
     * (nc_session_synops_step), on every backend; on cuda a run then
     * processes one step at a time. */
    int count_steps;
} nc_session_options;
NC_API void nc_session_options_init(nc_session_options *o);

/* A network bound to a backend and a configuration. One thread at a time. */
typedef struct nc_session nc_session;

/* The session keeps a pointer to `s`: free the session first. */
NC_API nc_status nc_session_create(const nc_snn *s, const nc_session_options *opt,
                                   nc_session **out);
NC_API void nc_session_free(nc_session *ss);

/* Runs a batch. `input` is static, (N, *input_shape), fed at every one of T
 * steps, or a time series, (T, N, *input_shape). *output (owned by the
 * caller) is the output layer's value summed over the steps, (N, *out_shape),
 * or per step with per_step, (T, N, *out_shape). An input holding NaN or
 * ±inf is refused naming the sample (dimension 0) and the index. */
NC_API nc_status nc_session_run(nc_session *ss, const nc_tensor *input, nc_tensor **output);

/* The Poisson seed of the runs that follow. Poisson spikes depend on (seed,
 * step, position in the batch), so a data set run in batches should give
 * each batch its own seed, or every batch sees the same noise:
 * nc_batch_seed(seed, first row) is what neuroc eval and run use. */
NC_API nc_status nc_session_set_seed(nc_session *ss, uint64_t seed);
/* A seed for the batch whose first row is `row0` of the data set, derived
 * from the run's seed (splitmix64): the same rows get the same noise on
 * every backend and under mpirun, whatever the batch size of the others. */
NC_API uint64_t nc_batch_seed(uint64_t seed, int64_t row0);

/* Spikes emitted by layer `id` in the last run, summed over batch and time
 * (0 for non-spiking layers). */
NC_API nc_status nc_session_spike_count(const nc_session *ss, int id, int64_t *count);
/* Synaptic operations done by layer `id` in the last run, summed over batch
 * and time: the multiply-accumulates (Affine, Conv2d) or additions (Pool2d)
 * whose input was non-zero, as an event-driven chip does them; 0 for other
 * layers. A layer fed only by a direct-encoded (static) input is computed,
 * and counted, once per sample, not once per step. */
NC_API nc_status nc_session_synops(const nc_session *ss, int id, int64_t *count);
/* Synaptic operations layer `id` did at step `step` (0 .. T - 1) of the last
 * run, summed over the batch: a static layer's are all at step 0. Over the
 * steps they sum to nc_session_synops. Needs
 * nc_session_options.count_steps (else NC_ERR_UNSUPPORTED). */
NC_API nc_status nc_session_synops_step(const nc_session *ss, int id, int step, int64_t *count);
/* Of the synaptic operations at step `step` of the last run, those that
 * layer `id`'s bursts caused (events of a SignedIF with max_spikes > 1 that
 * carry k ≥ 2 spikes, or of a SpikeMaxPool2d of such a layer that carry k ≥
 * 2 units of its input's spike) in the Affine and Conv2d layers reading it directly or
 * through Flatten, Reshape, Delay, Scale or Concat: graded events, whose
 * operations are multiply-adds, not additions. They are counted in those
 * layers' nc_session_synops_step; 0 for other layers. Needs count_steps. */
NC_API nc_status nc_session_burst_ops_step(const nc_session *ss, int id, int step, int64_t *count);
/* Seconds layer `id` took in the last run, summed over the threads (CPU
 * time, so a layer's share of the sum is its share of the work). Needs
 * nc_session_options.profile and a backend that times layers (cpu,
 * cpu-fast): else NC_ERR_UNSUPPORTED. */
NC_API nc_status nc_session_layer_seconds(const nc_session *ss, int id, double *seconds);
typedef enum nc_trace_kind {
    NC_TRACE_SPIKES = 0,   /* 0/1 per neuron and step */
    NC_TRACE_MEMBRANE = 1  /* the membrane potential after the step's update */
} nc_trace_kind;
/* Recorded trace of layer `id` (named in nc_session_options.record) from
 * the last run, shape (T, N, *layer_shape). The caller owns *out. A layer
 * is an int id in every call that takes one (nc_snn_layer_at,
 * nc_session_spike_count, ...); nc_session_trace is the same by name. */
NC_API nc_status nc_session_trace_at(const nc_session *ss, int id, nc_trace_kind kind, nc_tensor **out);
NC_API nc_status nc_session_trace(const nc_session *ss, const char *layer, nc_trace_kind kind,
                                  nc_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* NEUROC_SNN_H */
