/*
 * neuroc — a Loihi-style fixed-point chip simulator: quantisation of a
 * spiking network into Loihi parameters, bit-accurate integer neuron cores
 * (DESIGN §3), mapping onto cores and chips, operation counters, and energy
 * and latency estimates from published per-operation figures.
 * Included by <neuroc/neuroc.h>; the conventions of DESIGN §5 hold.
 *
 * Pipeline: nc_loihi_compile (quantise + map) → nc_loihi_run (simulate on
 * data, count) → accessors and JSON reports. Every estimate carries its
 * source and evidence grade; none is a measurement on a chip.
 */
/* The umbrella header first: it includes every public header in the order
 * their types need, this one among them, so this header stands alone. */
#include "neuroc/neuroc.h"

#ifndef NEUROC_SIM_H
#define NEUROC_SIM_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nc_loihi_target {
    NC_LOIHI_2 = 0, /* default */
    NC_LOIHI_1 = 1
} nc_loihi_target;

/* The reset mode (nc_loihi_options.reset) is nc_reset_mode (<neuroc/snn.h>). */

typedef enum nc_loihi_input {
    NC_LOIHI_INPUT_DEFAULT = 0, /* bias */
    /* The host computes the first synaptic layer on the analog input (W·x + b)
     * once per sample and writes it as each neuron's bias (13-bit mantissa and
     * exponent): exact to 13 bits, but those MACs are off-chip. */
    NC_LOIHI_INPUT_BIAS = 1,
    /* An input layer sends the analog input as graded spikes every step: an
     * 8-bit payload (the input range split into 255 steps, or ±127 when the
     * input can be negative), weighted by 8-bit synapses on chip (Loihi 2).
     * The product of an 8-bit payload, an 8-bit weight and the factor 64 of
     * the activation leaves the first layer's weights only a few bits of the
     * 24-bit current, so this costs accuracy. */
    NC_LOIHI_INPUT_GRADED = 2
} nc_loihi_input;

/* Defaults (nc_loihi_options_init): NC_LOIHI_2, the target's native reset,
 * bias-coded input, weight_bits 8, headroom_bits 4, a scale per channel,
 * timesteps 64, input range [0, 1], no calibration samples (256 at most
 * when given), built-in parameters, neurons_per_core 0 (the parameter
 * file's). */
typedef struct nc_loihi_options {
    nc_loihi_target target;
    /* NC_RESET_DEFAULT: the target's native neuron (Loihi 1: zero; Loihi 2:
     * subtract, microcoded). NC_RESET_ZERO: v = 0 after a spike.
     * NC_RESET_SUBTRACT: v −= θ; on Loihi 1 emulated with two compartments
     * and a self-inhibiting synapse. */
    nc_reset_mode reset;
    nc_loihi_input input;
    int weight_bits;        /* signed weight mantissa bits, 2..8; 0 = 8 */
    /* Thresholds land near 2^(23 − headroom_bits) so that currents and
     * potentials up to 2^headroom_bits thresholds fit in 24 bits; 0 = 4. */
    int headroom_bits;
    /* 0: each output channel of an IF layer has its own scale (integer units
     * per float unit), so its weights use the whole mantissa range; the
     * threshold, bias and v(0) of each neuron carry that scale (they are per
     * compartment on the chip). 1: one scale a layer. The readout always has
     * one scale, so that its classes compare. */
    int per_layer_scale;
    /* Steps the readout's accumulator is sized for (it must not saturate
     * over this many steps at full input); 0 = 64. */
    int timesteps;
    /* Range of the analog input, for graded input spikes; both 0 = [0, 1]. */
    float input_min, input_max;
    /* Samples (N, *input) on which the float network is run for `timesteps`
     * steps to size the readout's accumulator by the largest summed output
     * seen (with a factor 2 of margin); NULL = size it for every input neuron
     * spiking every step, which can leave few mantissa levels to a readout
     * behind a large pooling window. The caller keeps ownership. */
    const nc_tensor *calib;
    int64_t calib_samples;  /* at most this many of them; 0 = 256 */
    /* A JSON file overriding core limits and energy/latency constants
     * (format: sim/loihi_params.json); NULL = the built-in values. */
    const char *params_path;
    /* Loihi 2 neurons a core (configurable on the chip); 0 = the parameter
     * file's value (8192 by default). */
    int64_t neurons_per_core;
} nc_loihi_options;
NC_API void nc_loihi_options_init(nc_loihi_options *o);

/* A quantised network mapped onto cores. Immutable after compiling, so
 * several threads may run it. */
typedef struct nc_loihi_net nc_loihi_net;

/* Quantises `s` (IF layers, Affine/Conv2d/Pool2d/Flatten/Add between them,
 * a readout; spike values folded into the next weights) and maps it onto
 * cores. A layer structure the chip cannot hold (MaxPool, Concat, LIF, two
 * synaptic layers in a row, overlapping pooling of spikes, a neuron whose
 * fan-in exceeds a core) is refused naming the layer. The net keeps no
 * pointer to `s`. The caller owns *out. */
NC_API nc_status nc_loihi_compile(const nc_snn *s, const nc_loihi_options *opt, nc_loihi_net **out);
NC_API void nc_loihi_net_free(nc_loihi_net *n);
/* Quantisation, mapping and parameters as JSON (owned by the net). */
NC_API const char *nc_loihi_net_json(const nc_loihi_net *n);

/* One simulated population: an IF layer, the readout, or the input layer
 * of graded spikes (off the neuro cores). Strings are owned by the net. */
typedef struct nc_loihi_layer_info {
    const char *name;
    const char *kind;            /* "input", "IF", "readout" */
    int64_t neurons, compartments;
    int depth;                   /* steps until the input first reaches it */
    double scale_min, scale_max; /* integer units of v per float unit, over its neurons */
    /* quantisation of the synapses into this layer (all connections) */
    int64_t weights;             /* float weights quantised (incl. zeros) */
    int64_t weights_clipped;     /* beyond the mantissa range */
    int64_t weights_zeroed;      /* non-zero weights rounded to 0 */
    double weight_max_abs_err;   /* in float units of the layer's input current */
    int weight_exp;              /* of its main connection (the largest weights) */
    int64_t thresholds_clipped;  /* thresholds outside the 17-bit mantissa */
    double threshold_max_rel_err;
    int64_t biases_clipped;
    double bias_max_abs_err;     /* float units */
    /* mapping */
    int64_t cores;
    int64_t synapses;            /* stored (non-zero) synapses into the layer */
    int64_t synapse_words;       /* 64-bit words (Loihi 1 memory model) */
    int64_t max_input_axons, max_output_axons; /* the largest per core */
} nc_loihi_layer_info;

NC_API int nc_loihi_net_num_layers(const nc_loihi_net *n);
NC_API nc_status nc_loihi_net_layer(const nc_loihi_net *n, int i, nc_loihi_layer_info *out);

typedef struct nc_loihi_mapping {
    int64_t cores;               /* neuro cores in all */
    int64_t chips;               /* at cores_per_chip a chip */
    int64_t cores_per_chip;
    int latency_steps;           /* hops from the input to the readout */
    int64_t host_macs;           /* per sample, for bias-coded input (off-chip) */
    int64_t ann_macs;            /* the same network's MACs as an ANN, per sample */
    /* The smallest named system it fits, e.g. "Kapoho Point", or "none"
     * (static string). */
    const char *smallest_system;
} nc_loihi_mapping;
NC_API nc_status nc_loihi_net_mapping(const nc_loihi_net *n, nc_loihi_mapping *out);

/* A named Intel system of the net's chip generation. Strings are static. */
typedef struct nc_loihi_system {
    const char *name;            /* e.g. "Kapoho Point" */
    int64_t chips;
    int fits;                    /* the mapped network needs no more chips */
    const char *source;
} nc_loihi_system;
/* Up to `cap` systems into out (smallest first); returns how many there are. */
NC_API size_t nc_loihi_net_systems(const nc_loihi_net *n, nc_loihi_system *out, size_t cap);

/* ---------------------------------------------------------------- runs */

/* extra_steps value: run the pipeline latency after T. */
#define NC_LOIHI_EXTRA_LATENCY (-1)

/* Defaults (nc_loihi_run_options_init): timesteps 32, no extra steps,
 * threads 0 (OpenMP's default), no progress, one process. */
typedef struct nc_loihi_run_options {
    int timesteps;          /* T; 0 = 32 */
    /* Extra steps run after T so the readout has seen T steps of input
     * (the pipeline latency, one step a hop); NC_LOIHI_EXTRA_LATENCY = that
     * latency, 0 = none. */
    int extra_steps;
    int threads;            /* OpenMP threads; 0 = the default. Results do not depend on it. */
    nc_progress_fn progress;
    void *progress_user;
    /* A process group (nc_dist_from_mpi_comm) sharing the run; NULL = this
     * process alone. Each rank simulates a contiguous share of the samples;
     * the counters (integers) are summed and the readouts gathered, so every
     * rank gets the single-process result bit for bit. */
    const nc_dist *dist;
} nc_loihi_run_options;
NC_API void nc_loihi_run_options_init(nc_loihi_run_options *o);

/* Result of a fixed-point run: readout values, counters, estimates. */
typedef struct nc_loihi_result nc_loihi_result;

/* Runs `n` on x (N, *input) and scores the readout against `labels`
 * (N int64; may be NULL). Deterministic: the same bits on every run and
 * thread count. The result keeps no pointer to `n`. The caller owns *out. */
NC_API nc_status nc_loihi_run(const nc_loihi_net *n, const nc_tensor *x, const nc_tensor *labels,
                              const nc_loihi_run_options *opt, nc_loihi_result **out);
NC_API void nc_loihi_result_free(nc_loihi_result *r);
NC_API int nc_loihi_result_timesteps(const nc_loihi_result *r);  /* T */
NC_API int nc_loihi_result_steps_run(const nc_loihi_result *r);  /* T + extra */
NC_API int64_t nc_loihi_result_samples(const nc_loihi_result *r);
/* Accuracy once the readout has integrated t steps of input: chip step
 * t + latency (when run), 1 ≤ t ≤ T. -1 without labels or out of range. */
NC_API double nc_loihi_result_accuracy_at(const nc_loihi_result *r, int t);
/* Accuracy at chip step t, 1 ≤ t ≤ steps run (pipeline latency included). */
NC_API double nc_loihi_result_accuracy_at_step(const nc_loihi_result *r, int step);
/* The readout's v after every chip step: (steps, N, classes), int64. The
 * caller owns *out. */
NC_API nc_status nc_loihi_result_readout(const nc_loihi_result *r, nc_tensor **out);

/* Counters of one population, averaged per inference (one sample, all steps run). */
typedef struct nc_loihi_counts {
    const char *name;         /* the layer's name, owned by the result */
    double synops;            /* synaptic operations into the layer */
    double spikes;            /* spikes it emitted */
    double axon_messages;     /* spike messages it sent (one per destination core) */
    double active_updates, inactive_updates; /* compartment updates */
    double u_wraps, v_saturations;
    double bias_clips;        /* host-written input currents clipped to the bias range */
} nc_loihi_counts;
/* `layer` indexes the net's layers (nc_loihi_net_layer). */
NC_API nc_status nc_loihi_result_counts(const nc_loihi_result *r, int layer, nc_loihi_counts *out);

typedef struct nc_loihi_cost {
    double energy_j;          /* per inference: the sum of the four parts below */
    double synop_j, update_j, spike_j;
    double static_j;          /* 0: not modelled */
    double latency_s;         /* per inference, all steps run */
    double step_s;            /* mean time a step */
    double host_macs, ann_macs;
    double ann_gpu_j;         /* ann_macs at the GPU-class energy a MAC */
    double e_mac_gpu;         /* joules a MAC, as used */
    const char *energy_source, *gpu_source, *evidence; /* owned by the result */
} nc_loihi_cost;
NC_API nc_status nc_loihi_result_cost(const nc_loihi_result *r, nc_loihi_cost *out);
/* Everything (accuracy at every t and step, counters per layer, energy and
 * latency with sources) as JSON; owned by the result. */
NC_API const char *nc_loihi_result_json(const nc_loihi_result *r);

#ifdef __cplusplus
}
#endif
#endif /* NEUROC_SIM_H */
