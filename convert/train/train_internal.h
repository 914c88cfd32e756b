/* Internals of the training engine (convert/train/train.h): the per-batch network
 * state, the layer kernels (forward and backward on whole batches), and the
 * optimiser. Shared by train.c, train_layers.c, optim.c and the tests.
 *
 * Layout: every layer's activations are `rows` × size floats, C order per
 * row. In QCFS mode a row is a sample (rows = N). In BPTT mode a layer whose
 * value changes over time holds T·N rows, step-major ([t][n]), and a layer
 * whose value is constant over time (the direct-encoded input and the
 * stateless layers fed only by it) holds N rows; the first neuron layer
 * broadcasts such an input over the T steps. Because the graph has no
 * recurrent edges, every layer can run for all T steps before the next one
 * starts, so the synaptic layers see one GEMM over T·N rows. */
#ifndef NC_CONVERT_TRAIN_INTERNAL_H
#define NC_CONVERT_TRAIN_INTERNAL_H

#include <stdint.h>

#include "train.h"
#include "snn/ir/snn_ir.h"

/* OpenMP when the build has it, with nc_tr_threads threads (set by the
 * entry points for the calling thread; 1 = serial). Every parallel loop
 * gives each output element to exactly one thread and keeps each sum in a
 * fixed order, so results do not depend on the thread count. Serial is the
 * default because OpenMP's spinning threads run several times slower than
 * one thread on a machine whose cores are busy with other work. */
#ifdef _OPENMP
#define NC_OMP(x) _Pragma(x)
#else
#define NC_OMP(x)
#endif
extern _Thread_local int nc_tr_threads;
/* Below this many elements a loop is not worth the threads' start-up. */
#define NC_PAR_MIN 32768
#define NC_PAR(work) ((work) > NC_PAR_MIN && nc_tr_threads > 1)

/* ---- layer kernels (train_layers.c) ---- */

/* Geometry of a Conv2d, Pool2d or MaxPool2d over one row. */
typedef struct nc_tr_geom {
    int64_t C, H, W;      /* input */
    int64_t K, OH, OW;    /* output */
    int64_t kh, kw, sh, sw, ph, pw, dh, dw, groups;
} nc_tr_geom;

void nc_tr_geom_of(const nc_snn_layer *L, const nc_snn_layer *X, nc_tr_geom *g);

/* Floats of workspace a conv needs for `rows` rows (at most; it works in chunks). */
int64_t nc_tr_conv_work(const nc_tr_geom *g, int64_t rows);

/* y = x·Wᵀ + b over `rows` rows. */
void nc_tr_affine_fwd(const float *W, const float *b, const float *x, float *y, int64_t rows,
                      int64_t in, int64_t out);
/* dW += dyᵀ·x, db += Σ dy, and dx += dy·W when dx is not NULL. */
void nc_tr_affine_bwd(const float *W, const float *x, const float *dy, float *dx, float *dW,
                      float *db, int64_t rows, int64_t in, int64_t out);

/* Conv2d through im2col and one GEMM per group over a chunk of rows. */
void nc_tr_conv_fwd(const nc_tr_geom *g, const float *W, const float *b, const float *x, float *y,
                    int64_t rows, float *work, int64_t work_n);
void nc_tr_conv_bwd(const nc_tr_geom *g, const float *W, const float *x, const float *dy,
                    float *dx, float *dW, float *db, int64_t rows, float *work, int64_t work_n);

/* Sum pooling times `scale` (padding counts as zeros). */
void nc_tr_pool_fwd(const nc_tr_geom *g, float scale, const float *x, float *y, int64_t rows);
void nc_tr_pool_bwd(const nc_tr_geom *g, float scale, const float *dy, float *dx, int64_t rows);
/* Max pooling; arg receives the input index (within the row) of each
 * maximum, -1 for a window wholly in the padding (output 0). Backward routes
 * each output's gradient to its argmax. */
void nc_tr_maxpool_fwd(const nc_tr_geom *g, const float *x, float *y, int32_t *arg, int64_t rows);
void nc_tr_maxpool_bwd(const nc_tr_geom *g, const int32_t *arg, const float *dy, float *dx,
                       int64_t rows);

/* A spiking max pool over T steps (BPTT; train_spikemax.c): the backends'
 * rule (kernels/window_index.h) forward, with the input's single-spike
 * values (unit, NULL: one spike a step) and its sign; cnt holds every
 * sample's counts (N × (input + output size)). win (T·N rows of the
 * output) gets each step's winner, the input index the backward routes
 * that step's gradient to (straight-through, gain 1); dx += it. */
typedef struct nc_tr_spikemax {
    nc_tr_geom g;
    const float *unit;
    int signed_in;
    int T;
    uint32_t *cnt;
} nc_tr_spikemax;
void nc_tr_spikemax_fwd(const nc_tr_spikemax *p, const float *x, int x_static, float *y, int32_t *win, int64_t N);
void nc_tr_spikemax_bwd(const nc_tr_spikemax *p, const int32_t *win, const float *dy, float *dx, int x_static,
                        int64_t N);

/* Per-neuron parameters of an IF layer in the QCFS view. */
typedef struct nc_tr_qcfs {
    int64_t size;          /* neurons per row */
    const float *lam;      /* λ (size) */
    const float *sv;       /* output scale: λ, or the layer's explicit spike value (size) */
    const float *shift;    /* v(0)/λ: 1/2 by default (size) */
    int sv_is_lam;         /* spike value tied to λ (no explicit spike_value) */
    int levels;            /* L */
    int relaxed;           /* floor replaced by the identity (gradient checks) */
    float top;             /* relaxed: the clip's top, a burst layer's B (else 1) */
} nc_tr_qcfs;

/* y = sv·clip(floor(z·L/λ + shift)/L, 0, 1) (relaxed: sv·clip(z/λ, 0, top)). */
void nc_tr_qcfs_fwd(const nc_tr_qcfs *q, const float *z, float *y, int64_t rows);
/* Straight-through backward: dz += dy·(sv/λ)·[0 < z < λ]; dlam (size, double)
 * += dy·∂y/∂λ per neuron when not NULL. */
void nc_tr_qcfs_bwd(const nc_tr_qcfs *q, const float *z, const float *y, const float *dy,
                    float *dz, double *dlam, int64_t rows);

/* Mean cross-entropy of logits (rows × classes) against labels; writes
 * d(loss)/d(logits) into dlogits (may be NULL) and counts correct argmaxes. */
double nc_tr_cross_entropy(const float *logits, const int64_t *labels, int64_t rows,
                           int64_t classes, float *dlogits, int64_t *correct);

/* ---- BPTT neurons (train_layers.c) ---- */

typedef enum nc_surrogate {
    NC_SURROGATE_TRIANGLE = 0,  /* max(0, γ − |x|)/γ² */
    NC_SURROGATE_RECTANGLE = 1, /* [|x| < γ/2]/γ */
    NC_SURROGATE_SIGMOID = 2,   /* k·σ(kx)·(1 − σ(kx)), k = 4/γ */
    NC_SURROGATE_ATAN = 3       /* (α/2)/(1 + (π/2·α·x)²), α = 2/γ */
} nc_surrogate;

/* σ'(x) of a surrogate of width γ: each integrates to 1 and peaks at about 1/γ. */
float nc_tr_surrogate(nc_surrogate kind, float x, float width);

/* Per-neuron parameters of an IF layer unrolled over time. */
typedef struct nc_tr_if {
    int64_t size;
    int T;
    const float *theta, *v0, *sv;  /* per neuron (size) */
    int sv_is_theta, v0_is_half;   /* tied to θ (so θ's gradient reaches them) */
    int reset_zero;
    int detach_reset;              /* no gradient through the reset term */
    nc_surrogate sg;
    float width;                   /* γ, in units of the membrane */
    int relaxed;                   /* spike = the surrogate's integral (gradient checks) */
    /* Signed IF (NC_SNN_SIGNED_IF; reset by subtraction): s = up − down,
     * up = H(m − θ), down = H(−m)·[net count before the step > 0]; the gate
     * is a constant to the gradient. The forward keeps the count in `count`
     * (N·size scratch); the backward reads the spikes from y, the layer's
     * output (T·N rows), and adds up their counts again in the forward's
     * order, so its gates are the forward's. */
    int signed_spikes;
    int two_sided;                 /* NC_SIGNED_TWO_SIDED: every gate open (the count may go below zero) */
    float *count;
    const float *y;
    /* Bursts (max_spikes B > 1): s = up − down with up = Σ_{k=1..B}
     * H(m − kθ) and down = Σ_{k=1..B} H(−m − (k−1)θ)·[count > k−1], which
     * is nc_signed_if_step's s while one step moves m by at most B·θ; both
     * sums' surrogates reach m, up's reaches θ (×k). */
    int burst;
    /* The energy term: its gradient with respect to |s| per neuron (NULL =
     * none), times cost_scale (1/N, the batch mean). */
    const float *spike_cost;
    float cost_scale;
} nc_tr_if;

/* Unrolled IF over T steps on N samples; cur has T·N rows or N rows
 * (`static_in`: the same current every step). m receives the membrane
 * before the spike test (T·N rows), y the output (T·N rows). */
void nc_tr_if_fwd(const nc_tr_if *p, const float *cur, int static_in, float *m, float *y, int64_t N);
/* Backward through time from dy (T·N rows). dI (may be NULL) += dL/dI (T·N
 * rows, or N rows summed over time when static_in); dtheta (size, double;
 * may be NULL) += dL/dθ per neuron. dv is scratch of N·size floats. */
void nc_tr_if_bwd(const nc_tr_if *p, const float *m, const float *dy, float *dI, int static_in,
                  double *dtheta, float *dv, int64_t N);

/* ---- Nonlinear layers (train_nonlinear.c) ---- */

/* NC_ERR_UNSUPPORTED naming L unless the engine trains its function (the
 * element-wise ones and Mul). */
nc_status nc_tr_nonlinear_check(const nc_snn_layer *L, const char *mode_name);

/* ---- the network over one batch (train.c) ---- */

typedef struct nc_tr_layer {
    int steps;             /* 1 (constant over time) or T */
    int64_t size;          /* neurons per row */
    float *y, *dy;         /* steps·Nmax rows each (dy only when need_grad) */
    float *m;              /* BPTT IF: membrane before the spike test */
    float *dv;             /* BPTT IF: scratch, Nmax rows */
    int32_t *arg;          /* MaxPool2d argmax; BPTT SpikeMaxPool2d: each step's winner */
    uint32_t *cnt;         /* BPTT SpikeMaxPool2d: counts per sample (nc_tr_spikemax) */
    float *unit;           /* BPTT SpikeMaxPool2d: its input's single-spike values (NULL: none) */
    int signed_in;         /* BPTT SpikeMaxPool2d: its input's spikes may be negative */
    float *dW, *db;        /* gradients of weight and bias */
    float *dth;            /* gradient of the threshold tensor */
    double *acc;           /* per-neuron accumulator for dth (size) */
    float *lam, *sv, *aux; /* IF per neuron: λ or θ, spike value, QCFS shift or v(0) */
    float gamma;           /* BPTT surrogate width of this layer */
    float *spike_cost;     /* BPTT with an energy term: ∂(energy term)/∂|s| per neuron, per sample */
    int need_grad;         /* the layer or something before it is trainable */
    nc_tr_geom g;
} nc_tr_layer;

typedef struct nc_tr_config {
    nc_train_mode mode;
    int levels;            /* QCFS L */
    const int *layer_levels; /* QCFS forward: L per layer id (0: levels); NULL: levels everywhere */
    int T;                 /* BPTT steps */
    int relaxed;           /* QCFS floor → identity, BPTT step → surrogate integral (tests) */
    int train_thresholds;
    int input_grad;        /* compute the gradient of the input too (tests) */
    int detach_reset;
    nc_surrogate sg;
    float sg_width;        /* relative to each IF layer's mean θ at creation */
    float energy_weight;   /* nc_train_options.energy_weight */
} nc_tr_config;

typedef struct nc_tr_net {
    nc_snn *s;
    nc_tr_config c;
    int Nmax, N;           /* capacity and current batch */
    int n;                 /* layers run: the output layer and those before it */
    int out_id;
    int64_t classes;
    nc_tr_layer *l;
    float *work;
    int64_t work_n;
} nc_tr_net;

/* Checks that s can be trained in this mode and allocates the state for
 * batches of up to Nmax samples. Keeps a pointer to s (not modified here). */
nc_status nc_tr_net_create(nc_snn *s, const nc_tr_config *c, int Nmax, nc_tr_net **out);
void nc_tr_net_free(nc_tr_net *net);
/* Forward over N ≤ Nmax samples x (N × input size). */
void nc_tr_forward(nc_tr_net *net, const float *x, int N);
/* The logits of the last forward (N × classes), averaged over time in BPTT;
 * into out. */
void nc_tr_logits(const nc_tr_net *net, float *out);
/* Zeroes every gradient, seeds the output layer's gradient with dlogits
 * (N × classes: spread evenly over the steps in BPTT) and backpropagates. */
void nc_tr_backward(nc_tr_net *net, const float *dlogits);
/* Nonlinear layer i over the current batch (train_nonlinear.c): forward
 * into its y, keeping what the backward needs (m, aux); backward from its
 * dy into its inputs' dy. */
void nc_tr_nonlinear_fwd(nc_tr_net *net, int i);
void nc_tr_nonlinear_bwd(nc_tr_net *net, int i);

/* ---- optimiser (optim.c) ---- */

typedef enum nc_optim_kind { NC_OPTIM_ADAM = 0, NC_OPTIM_SGD = 1 } nc_optim_kind;

typedef struct nc_optim_param {
    float *w, *g;          /* values (updated in place) and their gradient */
    float *m, *v;          /* moments (Adam) or velocity (SGD: m) */
    int64_t n;
    int decay;             /* weight decay applies */
    float min_value;       /* clamp after each step (thresholds); -INFINITY = none */
} nc_optim_param;

typedef struct nc_optim {
    nc_optim_kind kind;
    float beta1, beta2, eps, momentum, weight_decay;
    int64_t t;             /* steps taken */
    int n, cap;
    nc_optim_param *p;
    /* Moments to load once the parameters are set up (resuming from a
     * checkpoint; see nc_optim_state_set); not owned. */
    const float *pending;
    int64_t pending_len, pending_steps;
    float *pack;           /* all gradients in one buffer, for nc_optim_allreduce */
} nc_optim;

nc_status nc_optim_init(nc_optim *o, nc_optim_kind kind, float weight_decay, float momentum);
nc_status nc_optim_add(nc_optim *o, float *w, float *g, int64_t n, int decay, float min_value);
void nc_optim_free(nc_optim *o);
/* L2 norm of all gradients (double accumulation). */
double nc_optim_grad_norm(const nc_optim *o);
/* Scales the gradients so their global norm is at most max_norm; returns the norm before. */
double nc_optim_clip(nc_optim *o, double max_norm);
/* One step with learning rate lr: L2 weight decay added to the gradient of
 * decaying parameters (torch.optim semantics), then Adam or SGD with momentum. */
void nc_optim_step(nc_optim *o, float lr);
/* The moments as one flat array (per tensor: m, then v for Adam), for
 * checkpoints: its length, a copy out, and a copy back in (the length must
 * match; NC_ERR_INVALID_ARG naming both otherwise). */
int64_t nc_optim_state_len(const nc_optim *o);
void nc_optim_state_get(const nc_optim *o, float *out);
nc_status nc_optim_state_set(nc_optim *o, const float *in, int64_t len, int64_t steps);
/* Data parallel (dist.h): every gradient times `scale`, summed across the
 * ranks of d in one collective, so every rank holds the same sum. */
nc_status nc_optim_allreduce(nc_optim *o, const nc_dist *d, float scale);
void nc_optim_zero_grad(nc_optim *o);
/* FNV-1a hash of every parameter's values (the weights' fingerprint). */
uint64_t nc_optim_hash(const nc_optim *o);
/* Cosine schedule from lr at step 0 to 0 after `total` steps. */
float nc_cosine_lr(float lr, int64_t step, int64_t total);

/* splitmix64: the engine's own deterministic generator. */
uint64_t nc_splitmix64(uint64_t *state);

#endif
