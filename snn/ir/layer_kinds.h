/* What each layer kind of the IR is (nc_snn_layer_kind, include/neuroc/snn.h):
 * one table that the backends, the formats, the simulator and the tools ask,
 * instead of each listing kinds in a switch of its own. A new kind gets its
 * row here first (layer_kinds.c); tests/test_layer_kinds.c checks the rows
 * against what the reference backend does. */
#ifndef NC_SNN_LAYER_KINDS_H
#define NC_SNN_LAYER_KINDS_H

#include "neuroc/neuroc.h"

/* Number of layer kinds: the enum's last value + 1 (move it with the enum). */
#define NC_SNN_N_KINDS ((int)NC_SNN_RESHAPE + 1)

typedef struct nc_snn_kind_traits {
    const char *name;        /* nc_snn_kind_name ("IF", "Conv2d", ...); the /neuroc NIR group stores it */
    unsigned neuron : 1;     /* a membrane per neuron, carried from step to step (IF, LIF, CubaLIF) */
    unsigned spiking : 1;    /* its output is spikes: 0 or the neuron's spike value */
    unsigned integrates : 1; /* sums its input over time: the neurons and the readout (a chip's compartments) */
    unsigned stateless : 1;  /* its output is a function of its inputs at the same step, so it is constant
                                over time when they all are (nc_snn_mark_static) */
    unsigned synaptic : 1;   /* has a weight and a bias (Affine, Conv2d) */
    unsigned counts_synops : 1; /* the reference backend counts synaptic operations for it */
    unsigned view : 1;       /* its output is its one input's value unchanged (Flatten, Readout) */
    unsigned nir : 1;        /* NIR can express it (nc_snn_save_nir) */
    unsigned nir_node : 1;   /* it is a NIR node of its own (an Add becomes edges, a Readout the Output's input) */
} nc_snn_kind_traits;

/* The row of kind k; a value outside the enum gets an all-zero row named
 * "unknown". Never NULL. */
const nc_snn_kind_traits *nc_snn_kind(nc_snn_layer_kind k);

/* An IF neuron, plain or signed: spikes carry θ, v(0) = θ/2 by default. */
int nc_snn_kind_is_if(nc_snn_layer_kind k);

static inline int nc_snn_kind_is_spiking(nc_snn_layer_kind k) { return nc_snn_kind(k)->spiking; }
static inline int nc_snn_kind_is_synaptic(nc_snn_layer_kind k) { return nc_snn_kind(k)->synaptic; }

#endif
