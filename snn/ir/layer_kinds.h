/* What each layer kind of the IR is (nc_snn_layer_kind, include/neuroc/snn.h):
 * one list (NC_SNN_KIND_LIST below) that generates the count check, the
 * names and the traits, and that the backends, the formats, the simulator
 * and the tools ask instead of each listing kinds in a switch of their own.
 * A new kind is its enumerator in the public enum (before
 * NC_SNN_KIND_COUNT) and its row here; the build fails when the two
 * disagree (layer_kinds.c). tests/test_layer_kinds.c checks the rows
 * against what the reference backend does. */
#ifndef NC_SNN_LAYER_KINDS_H
#define NC_SNN_LAYER_KINDS_H

#include "neuroc/neuroc.h"

/* Number of layer kinds (the public enum's count, checked against the list). */
#define NC_SNN_N_KINDS ((int)NC_SNN_KIND_COUNT)

/* The traits, one bit each (the columns of the list):
 *  NEURON      a membrane per neuron that spikes (IF, LIF, CubaLIF, SignedIF)
 *  SPIKING     its output is spikes: 0 or the neuron's spike value
 *  INTEGRATES  sums its input over time: the neurons and the readout (a chip's compartments)
 *  STATELESS   its output is a function of its inputs at the same step, so it is constant
 *              over time when they all are (nc_snn_mark_static)
 *  SYNAPTIC    has a weight and a bias (Affine, Conv2d)
 *  SYNOPS      the reference backend counts synaptic operations for it
 *  VIEW        its output is its one input's value unchanged (Flatten, Readout)
 *  NIR         NIR can express it (nc_snn_save_nir); else a neuroc.<name> extension node
 *  NIR_NODE    it is a NIR node of its own (an Add becomes edges, a Readout the Output's input)
 *  MEMBRANE    carries a membrane v from step to step (the neurons, LI, CubaLI, Integrator)
 *  LEAKY       its membrane leaks with time constant tau over dt (LIF, CubaLIF, LI, CubaLI)
 *  CURRENT     a synaptic current with tau_syn and w_in before the membrane (CubaLIF, CubaLI)
 *  WINDOW      pools kernel × kernel windows (kernel, stride, padding) of one (C, H, W) input
 *  MULTI_INPUT reads two or more inputs (Add, Concat); every other kind but Input reads one
 *  SAME_SHAPE  its output has its input's shape (the neurons, NIR's per-neuron kinds, Readout) */
enum {
    NC_K_NEURON = 1 << 0,
    NC_K_SPIKING = 1 << 1,
    NC_K_INTEGRATES = 1 << 2,
    NC_K_STATELESS = 1 << 3,
    NC_K_SYNAPTIC = 1 << 4,
    NC_K_SYNOPS = 1 << 5,
    NC_K_VIEW = 1 << 6,
    NC_K_NIR = 1 << 7,
    NC_K_NIR_NODE = 1 << 8,
    NC_K_MEMBRANE = 1 << 9,
    NC_K_LEAKY = 1 << 10,
    NC_K_CURRENT = 1 << 11,
    NC_K_WINDOW = 1 << 12,
    NC_K_MULTI_INPUT = 1 << 13,
    NC_K_SAME_SHAPE = 1 << 14,
};
/* the traits of a NIR neuron node, and of a shape-keeping stateless one */
#define NC_K_NIR_EXPRESSED (NC_K_NIR | NC_K_NIR_NODE)
#define NC_K_SPIKING_NEURON (NC_K_NEURON | NC_K_SPIKING | NC_K_INTEGRATES | NC_K_MEMBRANE | NC_K_SAME_SHAPE)
#define NC_K_PER_NEURON (NC_K_STATELESS | NC_K_SAME_SHAPE)

/* The list: X(enumerator, name, traits). Rows in the enum's order. The name
 * is nc_snn_kind_name's and the /neuroc NIR group stores it. A Readout is
 * stateless here: its value at a step is its input's (the reference copies
 * it); the sum over time is the run's output, not the layer's state. A
 * SpikeMaxPool2d spikes but is no neuron: its state is spike counts, not a
 * membrane. LI, CubaLI and Integrator carry a membrane but do not spike:
 * not NEURON (reports count spiking neurons), INTEGRATES. NIR's other node
 * types are written as NIR nodes of their own; a Reshape is an extension
 * node (NIR's Flatten only merges dimensions). */
#define NC_SNN_KIND_LIST(X)                                                                              \
    X(NC_SNN_INPUT, "Input", NC_K_NIR_EXPRESSED)                                                         \
    X(NC_SNN_AFFINE, "Affine", NC_K_STATELESS | NC_K_SYNAPTIC | NC_K_SYNOPS | NC_K_NIR_EXPRESSED)       \
    X(NC_SNN_CONV2D, "Conv2d", NC_K_STATELESS | NC_K_SYNAPTIC | NC_K_SYNOPS | NC_K_NIR_EXPRESSED)       \
    X(NC_SNN_POOL2D, "Pool2d", NC_K_STATELESS | NC_K_SYNOPS | NC_K_WINDOW | NC_K_NIR_EXPRESSED)         \
    X(NC_SNN_FLATTEN, "Flatten", NC_K_STATELESS | NC_K_VIEW | NC_K_NIR_EXPRESSED)                       \
    X(NC_SNN_ADD, "Add", NC_K_STATELESS | NC_K_MULTI_INPUT | NC_K_NIR)                                  \
    X(NC_SNN_CONCAT, "Concat", NC_K_STATELESS | NC_K_MULTI_INPUT)                                       \
    X(NC_SNN_IF, "IF", NC_K_SPIKING_NEURON | NC_K_NIR_EXPRESSED)                                        \
    X(NC_SNN_LIF, "LIF", NC_K_SPIKING_NEURON | NC_K_LEAKY | NC_K_NIR_EXPRESSED)                         \
    X(NC_SNN_CUBALIF, "CubaLIF", NC_K_SPIKING_NEURON | NC_K_LEAKY | NC_K_CURRENT | NC_K_NIR_EXPRESSED)  \
    X(NC_SNN_READOUT, "Readout", NC_K_INTEGRATES | NC_K_PER_NEURON | NC_K_VIEW | NC_K_NIR)              \
    X(NC_SNN_MAXPOOL2D, "MaxPool2d", NC_K_STATELESS | NC_K_WINDOW)                                      \
    /* spikes out, counts carried from step to step */                                                  \
    X(NC_SNN_SPIKEMAXPOOL2D, "SpikeMaxPool2d", NC_K_SPIKING | NC_K_WINDOW)                              \
    /* an IF whose spikes may be negative: NIR has no such neuron */                                    \
    X(NC_SNN_SIGNED_IF, "SignedIF", NC_K_SPIKING_NEURON)                                                \
    X(NC_SNN_LI, "LI", NC_K_INTEGRATES | NC_K_MEMBRANE | NC_K_LEAKY | NC_K_SAME_SHAPE | NC_K_NIR_EXPRESSED) \
    X(NC_SNN_CUBALI, "CubaLI",                                                                          \
      NC_K_INTEGRATES | NC_K_MEMBRANE | NC_K_LEAKY | NC_K_CURRENT | NC_K_SAME_SHAPE | NC_K_NIR_EXPRESSED) \
    X(NC_SNN_INTEGRATOR, "Integrator", NC_K_INTEGRATES | NC_K_MEMBRANE | NC_K_SAME_SHAPE | NC_K_NIR_EXPRESSED) \
    X(NC_SNN_THRESHOLD, "Threshold", NC_K_PER_NEURON | NC_K_NIR_EXPRESSED)                              \
    X(NC_SNN_SCALE, "Scale", NC_K_PER_NEURON | NC_K_NIR_EXPRESSED)                                      \
    X(NC_SNN_DELAY, "Delay", NC_K_SAME_SHAPE | NC_K_NIR_EXPRESSED)                                      \
    X(NC_SNN_RESHAPE, "Reshape", NC_K_STATELESS | NC_K_VIEW)                                             \
    /* expectation compensation: state (input sums), graded output; its ops are counted (MatMul, Mul) */ \
    X(NC_SNN_NONLINEAR, "Nonlinear", NC_K_SYNOPS)                                                       \
    /* routes values by an index map: no synapse, so no ops (spikes in, the same spikes out) */          \
    X(NC_SNN_GATHER, "Gather", NC_K_STATELESS)

typedef struct nc_snn_kind_traits {
    const char *name;        /* nc_snn_kind_name ("IF", "Conv2d", ...) */
    unsigned neuron : 1;     /* NC_K_NEURON, and so on: the list's traits above */
    unsigned spiking : 1;
    unsigned integrates : 1;
    unsigned stateless : 1;
    unsigned synaptic : 1;
    unsigned counts_synops : 1;
    unsigned view : 1;
    unsigned nir : 1;
    unsigned nir_node : 1;
    unsigned membrane : 1;
    unsigned leaky : 1;
    unsigned current : 1;
    unsigned window : 1;
    unsigned multi_input : 1;
    unsigned same_shape : 1;
} nc_snn_kind_traits;

/* A set of kinds as bits (what a backend runs, snn/run/backend.h). */
#define NC_KIND_BIT(k) (UINT64_C(1) << (int)(k))
#define NC_ALL_KINDS (NC_KIND_BIT(NC_SNN_N_KINDS) - 1)

/* The row of kind k; a value outside the enum gets an all-zero row named
 * "unknown". Never NULL. */
const nc_snn_kind_traits *nc_snn_kind(nc_snn_layer_kind k);

/* An IF neuron, plain or signed: spikes carry θ, v(0) = θ/2 by default. */
int nc_snn_kind_is_if(nc_snn_layer_kind k);

static inline int nc_snn_kind_is_spiking(nc_snn_layer_kind k) { return nc_snn_kind(k)->spiking; }
static inline int nc_snn_kind_is_synaptic(nc_snn_layer_kind k) { return nc_snn_kind(k)->synaptic; }

#endif
