/* The spiking-network IR behind the public nc_snn handle (include/neuroc/snn.h).
 * Shared by the converter, the NIR reader/writer and every backend. */
#ifndef NC_SNN_SNN_IR_H
#define NC_SNN_SNN_IR_H

#define NC_MAX_BURST 1024 /* nc_if_params.max_spikes */

#include "neuroc/neuroc.h"
#include "snn/base/tensor.h"
#include "layer_kinds.h"

typedef struct nc_snn_layer {
    char *name;
    nc_snn_layer_kind kind;
    int n_inputs;
    /* Ids of the layers read. An id >= this layer's own id is a recurrent
     * edge: it reads that layer's output from the previous step (zero at the
     * first step). Layers are stored so that every other edge goes forward. */
    int *inputs;
    int ndim;                     /* per-sample output shape */
    int64_t shape[NC_MAX_DIMS];

    /* Affine: weight [out, in]; Conv2d: weight [C_out, C_in/groups, kH, kW]. bias [out] or [C_out], always present. */
    nc_tensor *weight, *bias;
    int64_t stride[2], padding[2], dilation[2], groups;
    int64_t kernel[2];            /* Pool2d */
    float scale;                  /* Pool2d: multiplies the window sum */
    /* Pool2d with div_taps: each window's sum is multiplied by 1/(its taps
     * inside the input widened by div_pad[d] on each side) instead of by
     * scale: PyTorch's average of a partial window (ceil_mode, or
     * count_include_pad=False with padding). kernels/window_index.h. */
    int div_taps;
    int64_t div_pad[2];

    /* IF / LIF / CubaLIF: tensors of 1, C or full-shape elements (see nc_snn_param). */
    nc_tensor *threshold, *v_init, *spike_value;
    nc_reset_mode reset;
    /* SignedIF: the most spikes (of either sign) a neuron sends in one step;
     * 0 or 1: one (nc_snn_layer_burst) */
    int max_spikes;
    /* LIF / CubaLIF (NIR semantics), time step dt in seconds; r is also an
     * IF's input resistance (NULL = 1: neuroc's IF) and an Integrator's. LI,
     * CubaLI and Integrator use tau, r, v_leak, tau_syn, w_in likewise. */
    nc_tensor *tau, *r, *v_leak, *tau_syn, *w_in;
    double dt;
    /* NIR's own neuron semantics (nc_nir_options; other tools' files):
     * spike_gt: a spike when m > θ (NIR's test) instead of m >= θ;
     * v_reset: with NC_RESET_ZERO, the value the membrane takes after a
     * spike (NULL = 0); exact: the leaks (LIF, CubaLIF, LI, CubaLI) are
     * integrated exactly over dt for an input held over the step,
     * v += (1 − e^(−dt/τ))·(v_leak − v + r·I), instead of forward Euler's
     * dt/τ. All 0 / NULL in converted networks: DESIGN §3 as ever.
     * Threshold layers use threshold (and spike_gt); Scale layers weight
     * (1, C or full size, a per-neuron factor); Delay layers kernel[0] (the
     * delay in steps, one for the layer). */
    int spike_gt;
    nc_tensor *v_reset;
    int exact;
    /* with NC_RESET_SUBTRACT: snntorch's subtraction (reset_delay=False),
     * whose test of a membrane left above θ by the last step is m − θ > θ */
    int pretest_sub;
    /* SignedIF: its net count may go negative (nc_if_params.two_sided);
     * the backends start the count at nc_snn_net0 so that the one kernel
     * (nc_signed_if_step, whose negative spikes need a count above 0)
     * runs both kinds */
    int two_sided;
    /* Gather: int64 [size]: output element e is input element index[e] of
     * the same sample, or 0 where index[e] is -1 */
    nc_tensor *index;
    /* Nonlinear: the function and its parameters (axis made non-negative) */
    nc_nonlinear_params nl;
    /* A NIR graph's several Input or Output nodes (nir_read.c), so that they
     * are written back as nodes of their own (nc_snn_output_at):
     * NC_IO_INPUT_PART on a Reshape of layer 0, one Input node (its name
     * the node's); NC_IO_OUTPUT_FLAT on the Reshape flattening an output
     * part; NC_IO_OUTPUTS on the Concat that joins them into the network's
     * output, part_names[k] the Output node of its input k. */
    int io_part;
    char **part_names;
} nc_snn_layer;
enum { NC_IO_INPUT_PART = 1, NC_IO_OUTPUT_FLAT = 2, NC_IO_OUTPUTS = 3 };

/* The net count a two-sided SignedIF starts from: far above 0, so that it
 * never limits a negative spike (2^30: a run would need 2^30 more negative
 * than positive spikes of one neuron to reach 0). */
#define NC_TWO_SIDED_NET0 (INT32_C(1) << 30)
static inline int32_t nc_snn_net0(const nc_snn_layer *L) { return L->two_sided ? NC_TWO_SIDED_NET0 : 0; }

struct nc_snn {
    int n_layers, cap_layers;
    nc_snn_layer *layers;
    int output;                   /* -1 = default (readout, else the last layer) */
    int timesteps;                /* the operating T conversion chose; 0 = none */
};

/* Nonlinear layers (nonlinear.c): inputs of function fn (2 for Mul and
 * MatMul, else 1); 1 for the element-wise ones (Sigmoid .. GELUTanh); the
 * function named `name` (nc_nonlinear_fn_name) or -1; and the check of a
 * Nonlinear layer's function and shapes, which sets its shape (and makes
 * its axis non-negative). */
int nc_nonlinear_fn_inputs(nc_nonlinear_fn fn);
int nc_nonlinear_fn_is_elementwise(nc_nonlinear_fn fn);
int nc_nonlinear_fn_from_name(const char *name);
nc_status nc_snn_check_nonlinear(const nc_snn *s, nc_snn_layer *L);
/* A MatMul layer's m, k, n (x is (…, m, k), or (…, k, m) with trans_x; y
 * (…, k, n), or (…, n, k) with trans_y). */
void nc_nl_matmul_dims(const nc_snn_layer *L, const nc_snn_layer *X, const nc_snn_layer *Y, int64_t *m, int64_t *k,
                       int64_t *n);

/* Appends a zeroed layer with a unique name (copied; made up if NULL) and
 * `n_inputs` input slots; returns it or NULL (error set). Pointers into
 * s->layers are invalidated by the next call. */
/* 1 if layer id's output carries bursts (a SignedIF with max_spikes > 1
 * or two-sided, or a Concat, Gather or SpikeMaxPool2d of one: a spiking max
 * pool of bursts sends bursts), -1 out of memory. */
int nc_snn_reads_bursts(const nc_snn *s, int id);
/* A SpikeMaxPool2d named `name` reading layer `from`: refused (naming both)
 * where `from` carries a two-sided SignedIF's spikes, whose counts go below
 * zero; bursts are counted in units of their single spike
 * (kernels/window_index.h). */
nc_status nc_snn_check_spikemax_input(const nc_snn *s, int from, const char *name);

/* The spikes a SignedIF neuron of L may send in one step (1 for any other). */
static inline int nc_snn_layer_burst(const nc_snn_layer *L) { return L->max_spikes > 1 ? L->max_spikes : 1; }

nc_snn_layer *nc_snn_append(nc_snn *s, nc_snn_layer_kind kind, const char *name, int n_inputs);
/* nc_snn_append under `base`, or base_2, base_3, ... when it is taken (a
 * long base is cut). */
nc_snn_layer *nc_snn_append_unique(nc_snn *s, nc_snn_layer_kind kind, const char *base, int n_inputs);
/* Removes the last layer (used to undo a failed builder call). */
void nc_snn_pop(nc_snn *s);

/* Checks layer id of s (its inputs among the `total` layers s will hold,
 * recurrent ones only into an Add; its fields by its kind's rules) and sets
 * its shape from its first forward input, as the public builders make it:
 * the one check of a layer, which the builders (snn.c) and the NIR readers
 * (export/nir) both run. A Pool2d's or max pool's shape may keep the one
 * partial window of ceil mode it holds; a Reshape keeps its shape. The
 * error names the layer. */
nc_status nc_snn_layer_validate(nc_snn *s, int id, int total);

/* 1 if NIR can express layer L: its kind's `nir` trait (layer_kinds.h),
 * except a Pool2d with per-window divisors (div_taps; NIR's SumPool2d has
 * one scale). The NIR writer stores a layer it cannot express as a neuroc.<kind>
 * extension node, and strict mode refuses it; the reader checks the same. */
int nc_snn_layer_nir_expressible(const nc_snn_layer *L);

/* Neurons in one sample of layer L, and the number of channels (shape[0], or 1 for rank 0). */
int64_t nc_snn_layer_size(const nc_snn_layer *L);
int64_t nc_snn_layer_channels(const nc_snn_layer *L);
/* Value of a neuron parameter tensor p (1, C or full-size) for neuron i of L. */
float nc_snn_param(const nc_tensor *p, const nc_snn_layer *L, int64_t i, float dflt);
/* Every layer's weight, bias and threshold finite (a threshold may be
 * +inf: never fires); else NC_ERR_MODEL naming `src`, the layer, the
 * tensor and the index (snn_finite.c). */
nc_status nc_snn_check_finite(const nc_snn *s, const char *src);
/* Checks that p has 1, C or full-size elements for L; error names the layer. */
nc_status nc_snn_check_param(const nc_tensor *p, const nc_snn_layer *L, const char *what);

/* Neuron parameter p of L (1, C or full-size; NULL = dflt) for every neuron,
 * in L's channel-major order, or channel-last (index p·C + c of position p,
 * channel c) when channel_last. A new array of nc_snn_layer_size(L) floats
 * (nc_free), or NULL with *fail set to 1 when out of memory (no error set:
 * the caller names the layer). */
float *nc_snn_param_expand(const nc_tensor *p, const nc_snn_layer *L, float dflt, int channel_last, int *fail);
/* As nc_snn_param_expand, the spike value and v(0) of each neuron of a
 * neuron layer with the defaults of DESIGN §3 where unset: an IF spike
 * carries θ and its membrane starts at θ/2; LIF/CubaLIF spikes are 1, v(0) 0. */
float *nc_snn_spike_values(const nc_snn_layer *L, int channel_last, int *fail);
float *nc_snn_v_inits(const nc_snn_layer *L, int channel_last, int *fail);

/* is_static[i] = 1 for the layers whose output cannot change over a run:
 * the input when it is one static image (not a series) encoded directly,
 * and the stateless kinds (layer_kinds.h) all of whose inputs are static
 * and none recurrent. Backends compute such layers once, not every step. */
void nc_snn_mark_static(const nc_snn *s, int series, nc_encoding enc, char *is_static);

/* macs[i] = 1 where layer i's synaptic operations are multiply-accumulates,
 * 0 where they are additions (the energy estimate, snn/session/eval.c). An
 * event of payload ±1 times a per-neuron value (an IF, LIF or CubaLIF
 * spike, a SignedIF's single spike, a Threshold's 0/1, Poisson input) only
 * selects the weights it adds, the value folded into them; a graded value
 * (the analog input, a series input, any current or sum) must be multiplied
 * by each weight. So: a weighted layer (Affine, Conv2d) does MACs unless its
 * input carries such spikes (through views, Delay, Scale, MaxPool2d and
 * Concats of them); a window sum (Pool2d) adds whatever it reads; any other
 * kind that counts synaptic operations computes products, MACs. A SignedIF
 * of bursts sends single spikes (additions) and bursts of k ≥ 2 (graded:
 * multiply-adds, as Loihi 2 multiplies a graded spike's payload); the
 * backends count the ops of the latter apart (nc_snn_event_fanout), and its
 * readers are marked 0 here; so does a SpikeMaxPool2d of bursts (its
 * events of |payload| ≥ 2 units are bursts). A max pooling of currents of
 * bursts is graded. */
void nc_snn_mark_macs(const nc_snn *s, int series, nc_encoding enc, char *macs);
/* For each neuron of layer l (channel-major), the synaptic ops one event of
 * it causes in the weighted layers with macs[r] = 0 (nc_snn_mark_macs) that
 * read it directly or through layers passing values on by index (Flatten,
 * Readout, Reshape, Delay, Scale, Concat), as the backends count them: what
 * a burst's event turns from additions into multiply-adds. A new array of
 * its size (nc_free), or NULL with *fail set when out of memory. */
int32_t *nc_snn_event_fanout(const nc_snn *s, const char *macs, int l, int *fail);

/* For each element of layer l's output (channel-major), the value of one
 * spike of the burst layer (a SignedIF with max_spikes > 1) it carries,
 * through Flatten, Reshape, Gather, Concat and SpikeMaxPool2d (an output
 * takes the first tap of its window inside the input), 0 where it carries
 * no bursts: what a spiking max pool counts bursts in
 * (nc_spike_count_delta). A new array of l's size (nc_free), or NULL where
 * no element carries bursts (*fail untouched) or out of memory (*fail set
 * to 1, no error set). */
float *nc_snn_spike_units(const nc_snn *s, int l, int *fail);

/* is_signed[i] = 1 where layer i's spikes may be negative: a SignedIF, or
 * a SpikeMaxPool2d, Flatten or Concat of one. Spiking max pooling counts
 * them as −1. */
void nc_snn_mark_signed(const nc_snn *s, char *is_signed);

/* A Reshape (NC_SNN_RESHAPE) reading layer `from`: its values [offset,
 * offset + size) in the shape shape[0..ndim) (a view: no data moves). The
 * converter's token tensors (convert_tokens.c) change layout with it. */
nc_status nc_snn_add_reshape(nc_snn *s, int from, int ndim, const int64_t *shape, int64_t offset, const char *name,
                             int *id);
/* A Gather (NC_SNN_GATHER) reading layer `from`: output element e (of
 * shape[0..ndim), C order) is element index[e] of `from`'s values, or 0
 * where index[e] is -1 (a Pad's zeros). Pure routing, as axons route
 * spikes on a chip: a gather of spikes is spikes and costs no synaptic
 * operation. The converter's data-movement ops (Pad, Slice of any step,
 * Concat of slices, a Reshape/Transpose no view expresses, roll) compose
 * into one index map (convert_tokens.c). index is copied. */
nc_status nc_snn_add_gather(nc_snn *s, int from, int ndim, const int64_t *shape, const int64_t *index,
                            const char *name, int *id);
/* Removes the layers of kind `kind` that no layer reads and that are not
 * the output, until none is left (the converter's Gathers that a later
 * Gather composed away); map[i] gets layer i's new id, or -1 where it went
 * (map: n_layers entries, the count before). */
void nc_snn_drop_unread(nc_snn *s, nc_snn_layer_kind kind, int *map);
/* Max pooling of currents (a converted MaxPool, NC_SNN_MAXPOOL2D): the
 * largest input in each kernel window, padding ignored (a window's taps
 * outside the input do not count). Internal: NIR cannot express it. */
nc_status nc_snn_add_maxpool2d(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                               const int64_t padding[2], const char *name, int *id);
/* The same with pad_end[d] (in [0, stride)) more padding at the bottom and
 * right, as PyTorch's ceil_mode adds: the output gets the partial window
 * it makes (which must start inside the input or the leading padding). The
 * layer keeps only the larger output shape; every backend already clips a
 * window's taps to the input, so nothing else changes. */
nc_status nc_snn_add_maxpool2d_ceil(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                                    const int64_t padding[2], const int64_t pad_end[2], const char *name, int *id);
/* The same for a SpikeMaxPool2d (its windows clip to the input the same way). */
nc_status nc_snn_add_spike_maxpool2d_ceil(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                                          const int64_t padding[2], const int64_t pad_end[2], const char *name,
                                          int *id);
/* Average pooling with per-window divisors (snn_ir.h: div_taps): extra end
 * padding pad_end (ceil mode) and windows counted within the input widened
 * by div_pad (0: only real inputs count; the padding: count_include_pad).
 * scale is set to 1/(kernel area) and is not used. */
nc_status nc_snn_add_pool2d_div(nc_snn *s, int from, const int64_t kernel[2], const int64_t stride[2],
                                const int64_t padding[2], const int64_t pad_end[2], const int64_t div_pad[2],
                                const char *name, int *id);
/* The extra end padding pooling layer i's output shape implies (0 but for
 * a ceil-mode partial window): what to pass the builder to rebuild it. */
void nc_snn_pool_pad_end(const nc_snn *s, int i, int64_t pad_end[2]);

/* A copy of s whose IF layers emit spikes of value 1, each layer's spike
 * value (θ by default) folded into the weights of the Affine/Conv2d layers
 * that read it, directly or through Flatten, Pool2d and MaxPool2d (max
 * commutes with a positive per-channel scale). Where no synaptic layer
 * takes the factor (an Add, Concat, IF or the readout reads it), a scale
 * layer named "<layer>_scale" is inserted: a 1×1 depthwise Conv2d, or a
 * diagonal Affine for 1-D layers; *n_scale counts them. For networks of
 * Input, Affine, Conv2d, Pool2d, MaxPool2d, Flatten, Add, Concat, IF and
 * Readout layers without recurrent edges (snn_fold.c). The NIR writer folds
 * by the same rules (below) but without changing the network: it inserts
 * NIR Scale nodes instead and handles per-neuron factors. */
nc_status nc_snn_fold_spike_values(const nc_snn *s, nc_snn **out, int *n_scale);

/* The rules of that folding, which the NIR writer shares. A factor f of a
 * layer (one float per neuron, NULL = all ones) says: IR value = f ⊙ its
 * value in the binary-spike network. */
/* 1 if f (NULL = ones) is the same over each channel's H×W plane of L. */
int nc_snn_factor_channel_uniform(const nc_snn_layer *L, const float *f);
/* 1 if layer i can take its input j's factor fj: into its weights (Affine;
 * Conv2d when fj is per channel), or by passing it on to its own output
 * (Flatten; Pool2d when per channel; MaxPool2d when per channel and
 * positive; these need j before i). */
int nc_snn_takes_factor(const nc_snn *s, int i, int j, const float *fj);
/* The factor of layer i's output (*out, NULL when ones; nc_free): a
 * neuron's spike values (they become 1), the factor fj of its input passed
 * on by a Flatten or pooling that `takes` it (per channel), times a Pool2d's
 * scale when pool_scale (NIR's SumPool2d leaves the scale to the factor). */
nc_status nc_snn_out_factor(const nc_snn *s, int i, const float *fj, int takes, int pool_scale, float **out);
/* Multiplies (divide 0) or divides (divide 1) the input columns of weight w
 * by a factor per column, in place: an Affine's columns (column c by
 * f[c * stride]), or the input-channel slices of a Conv2d with `groups`
 * groups (weight compact, [C_out, C_in/groups, kH, kW]; input channel c of
 * all C_in by f[c * stride]). Folding (multiplying) and the NIR reader's
 * unfolding (dividing) share it, so both compute the same bits. */
void nc_snn_scale_inputs(nc_tensor *w, nc_snn_layer_kind kind, int64_t groups, const float *f, int64_t stride,
                         int divide);
/* Multiplies weight w of an Affine or Conv2d (as above) reading X by X's
 * factor m (one per neuron of X; a Conv2d takes each channel's first), in
 * place. */
void nc_snn_fold_factor(nc_tensor *w, nc_snn_layer_kind kind, int64_t groups, const nc_snn_layer *X, const float *m);

/* Everything that determines what a network computes: layer kinds,
 * connections, shapes, parameters and neuron tensors (FNV-1a over the
 * fields, snn/base/dist.h's hash; ranks compare it before a collective). */
uint64_t nc_hash_snn(const nc_snn *s);

/* 1 if neuron layer L uses anything of NIR's neuron semantics beyond what
 * DESIGN §3 defines (spike_gt, a v_reset, an IF's r, exact integration, a
 * non-finite τ or r): backends and tools that implement only §3 refuse it
 * and name what (nc_snn_nir_semantics_what). 0 for other layers. */
int nc_snn_layer_nir_semantics(const nc_snn_layer *L);
/* "spike when m > θ, v_reset, ..." for messages; static or buf. */
const char *nc_snn_nir_semantics_what(const nc_snn_layer *L, char *buf, size_t len);

/* The leak coefficient of each neuron of L for time constant tau (L->tau
 * or L->tau_syn, 1, C or full size; NULL = 1): dt/τ (forward Euler) or
 * 1 − e^(−dt/τ) (L->exact), 0 for τ = ∞. As nc_snn_param_expand. */
float *nc_snn_leak_coefs(const nc_snn_layer *L, const nc_tensor *tau, int channel_last, int *fail);

/* The layer whose value the network outputs. */
int nc_snn_output_id(const nc_snn *s);

/* A deep copy of layer L appended to t, its inputs mapped through map
 * (recurrent inputs, not mapped yet, are the caller's). */
nc_status nc_snn_copy_layer(nc_snn *t, const nc_snn_layer *L, const int *map);

/* nc_snn_make_portable after its checks (o validated): lenient 1 (the
 * standard form) copies IF layers of NIR semantics and recurrent edges
 * instead of refusing them; the layers NIR cannot express must be gone. */
/* After a network s was rebuilt as t layer by layer (map: s's layer -> t's),
 * points t's recurrent inputs (an input at or after its layer, which did not
 * exist yet when the layer was built) and its output at their new layers. */
void nc_snn_remap_late_edges(const nc_snn *s, nc_snn *t, const int *map);
nc_status nc_snn_portable_build(const nc_snn *s, const nc_portable_options *o, int lenient, nc_snn **out,
                                int *n_pulses);

/* The standard form of a network (snn_standard.c; DESIGN §4): what a .nir
 * file's /node holds, nir 1.0.x node types only, NIR's own semantics. */
typedef struct nc_snn_std_loss {
    int approximated; /* layers replaced by another computation (strict mode refuses these) */
    int changed;      /* layers rewritten in all (exactly or not): 0 = the network is its own standard form */
    char text[4096];  /* what the standard form loses, one line each ("" when nothing) */
} nc_snn_std_loss;
nc_status nc_snn_standard_form(const nc_snn *s, nc_snn **out, nc_snn_std_loss *loss);

#endif
