/* The plan of the cpu-fast backend (snn/backends/cpu_fast/backend_cpu_fast.c), shared with
 * its per-step code (fast_steps.c): how each layer holds its value, the
 * tables made at plan time, and one thread's buffers. Private. */
#ifndef NC_KERNELS_FAST_PLAN_H
#define NC_KERNELS_FAST_PLAN_H

#include "fast_kernels.h"
#include "snn/run/backend.h"

/* How a layer's value is held. */
enum { REP_DENSE, REP_SPIKES, REP_COUNTS };

typedef struct fast_layer {
    int view;            /* the layer whose value this is: itself, or for a Flatten or
                            Readout, the layer it passes on (same values, same order) */
    int rep;             /* REP_*, for a layer that is its own view */
    int cl;              /* dense value stored channel-last, [HW][C] (else [C][HW]) */
    int neuron;          /* IF, LIF or CubaLIF */
    int state_cl;        /* neuron state (and its current) channel-last */
    int in_dense;        /* the input's value can be read in place (else materialised into tmp) */
    int64_t size, C, HW; /* per sample; C = channels (shape[0]), HW = size / C */
    /* Spike bitmasks: BC rows of BHW neurons, each row padded to wpc whole
     * words (rank-3 layers: a row per channel; others: one row). Neuron
     * (c, p) is bit p % 64 of word c·wpc + p / 64, so the bits are in the
     * reference's order and IF kernels can fill whole words per channel. */
    int64_t BC, BHW, wpc;
    /* Affine and Conv2d */
    float *wt;
    float *bias_img;     /* Conv2d: the bias at every output, in the output's layout */
    nc_fast_conv conv;
    int32_t *prow, *pcol, *n_row, *n_col; /* also Pool2d of spikes (a_off = output index) */
    nc_fast_tap *rows, *cols;
    int64_t *rel, *a0;   /* Conv2d: see nc_fast_conv */
    uint16_t *tap_mask;
    int32_t *pwin;       /* Pool2d of spikes with disjoint windows: each input's window, or -1 */
    /* Pool2d of spikes: counts kept channel-last, cnt[o·C + c]; vtab[c·kk1 + n] =
     * the pooled value of a window of channel c holding n spikes; chmask[c] =
     * ~0 where channel c's spikes are non-zero (they count as synaptic ops) */
    float *vtab;
    uint32_t *chmask;
    int64_t kk1;
    int fused_pool;      /* IF: the Pool2d whose counts its kernel makes (or -1) */
    int theta_full;      /* theta per neuron; else (a channel-last IF) theta[c] per channel */
    /* A channel-last IF that is the only reader of a Conv2d refills the
     * conv's accumulators with the bias as it reads them (refill_of = the
     * conv), so a conv that runs every step (refilled) skips its own bias
     * copy after the first step. */
    int refill_of, refilled;
    /* neurons: parameters in the state layout; sval (value of a spike) in NCHW order
       (a SignedIF's in the state layout) */
    float *theta, *v0, *dt_tau, *vleak, *r, *dt_tau_syn, *w_in, *sval; /* sval may be theta itself */
    int32_t *fan;        /* SignedIF or SpikeMaxPool2d of bursts: ops an event causes downstream
                            (nc_snn_event_fanout), in the layout of its values */
    float *unit;         /* SpikeMaxPool2d of bursts: its input's single-spike values (nc_snn_spike_units),
                            in the layout it reads them in */
    /* NIR neuron semantics (nc_snn_layer_nir_semantics): the per-neuron
     * loop of kernels/nir_neuron.h, with the reset value per neuron */
    int nir;
    float *vreset;
    int nir_kind;        /* LI, CubaLI, Integrator, Threshold, Scale, Delay, Reshape (fast_nir.c) */
    /* Conv2d, depthwise over a channel-last dense input: a gather per
     * output position, weights as wdw[kh][kw][C] (run_dwconv) */
    int dw;
    float *wdw;
    /* Conv2d 1×1 (any stride, one group) over a channel-last dense input:
     * per output position, the non-zero channels of its input position as
     * the events of an affine layer (run_conv1x1), outputs in registers */
    int pw;
    int32_t *sel;        /* Conv2d 1×1 that only selects channels: output o = input sel[o] (plan_selection) */
    int32_t *bidx;       /* Nonlinear Mul broadcasting its second input: element e of the output reads its
                            element bidx[e] (NULL: the same shape, element e) */
    int scatter;         /* Conv2d that scatters its input's events (not dw, or pw
                            unless merged, or sel): run_conv_block */
    int team;            /* a layer a team of threads may split (plan_paths);
                            whether it does is measured (fast_plan.team_on) */
    int merge_slots;     /* Conv2d whose weights outgrow the cache: one pass over them
                            serves the events of every slot of a block (see fast_ws) */
    int is_static;       /* set per run: output constant over time */
    int is_signed;       /* its spikes may be negative (nc_snn_mark_signed) */
} fast_layer;

/* One thread's buffers (pointers into one arena).
 *
 * A sample runs in blocks of n_slots steps, layer by layer within a block
 * (each layer's steps in order, then the next layer's): the values layers
 * pass on (dense, bits, cnt, nz, in; the events) have one copy per slot,
 * slot[k] being a view of the workspace with slot k's copies and the shared
 * neuron state. A layer then reads its weights for a whole block while they
 * are in cache, not once a step after every other layer's; its outputs for
 * step t are the same as step by step, since no layer reads a later
 * layer's value (cpu-fast runs no recurrent edge). */
typedef struct fast_ws {
    void *arena;
    float **dense;       /* Affine, Conv2d, dense Pool2d, MaxPool2d, Add: the value */
    uint64_t **bits;     /* neurons, Input (Poisson): spikes (see fast_layer.wpc) */
    uint32_t **cnt;      /* Pool2d of spikes: spikes per window, [OHW][C] */
    uint64_t **nz;       /* ... and which windows are not empty (bits as fast_layer.wpc) */
    uint32_t **mcnt;     /* SpikeMaxPool2d: spike counts of its input, then of its outputs */
    float **v, **isyn;   /* neuron state */
    int32_t **net;       /* SignedIF: net spike count per neuron (state layout) */
    float **tmp;         /* materialised input of a neuron, Pool2d, MaxPool2d or SpikeMaxPool2d */
    const float *in;     /* the Input layer's analog value for this sample and step */
    int32_t *ev_idx;     /* events for Affine / Conv2d: a slot's, and in ws[0] of a
                            team (fast_plan.team) each thread's for each slot */
    float *ev_val;
    float *obuf;         /* a layer's value in NCHW order (output, traces) */
    float **ring;        /* Delay: (d + 1) frames of its size, a ring */
    int64_t *ring_pos;   /* Delay: the frame the next step writes */
    float **nl;          /* Nonlinear: its inputs' sums, totals and means (fast_nonlinear.c) */
    struct fast_ws *slot; /* the n_slots views (slot[0] shares these arrays) */
    int64_t ev_cap;      /* events a slot holds */
} fast_ws;

typedef struct fast_plan {
    const nc_snn *s;
    int N, n_ws;
    int n_slots;         /* steps a block (fast_ws) */
    int team;            /* threads that share each sample (fewer samples than
                            threads; fast_layer.team), else 1 */
    /* Which candidates (fast_layer.team) a team splits is measured: the
     * first samples are trials, alternately with none split (mode 0) and
     * all (mode 1), thread 0 timing each layer; then each layer is split
     * where that was clearly faster (nc_fast_team_choose, _learn). */
    struct nc_fast_barrier *bar; /* the team's (nc_fast_team_barrier) */
    char *team_on;       /* [n_layers]: split in this sample */
    double *team_sec;    /* [2][n_layers]: seconds in trials, per mode */
    int team_trials;     /* trial samples done (NC_FAST_TEAM_SAMPLES: decided) */
    const nc_fast_kernels *K;
    fast_layer *L;
    fast_ws *ws;
    int64_t *spk, *ops;  /* [N][n_layers]: per sample, summed into the request after the run */
    double *sec;         /* [N][n_layers]: seconds per layer, when profiled */
    char *is_static;     /* [n_layers]: nc_snn_mark_static's answer for the run, copied into L[i].is_static */
} fast_plan;

/* The most steps a block (fast_plan.n_slots) */
#define NC_FAST_SLOTS_LIMIT 64

/* Bytes a buffer of count elements of elem bytes takes in a workspace's
 * arena: each starts 64-byte aligned (plan_workspace). */
static inline uint64_t nc_fast_carve_bytes(int64_t count, size_t elem)
{
    return ((uint64_t)count * elem + 63) & ~(uint64_t)63;
}

/* Elements from one slot's copy of a passed-on value to the next's (they
 * are carved one after another). */
static inline int64_t nc_fast_slot_stride(int64_t count, size_t elem)
{
    return (int64_t)(nc_fast_carve_bytes(count, elem) / elem);
}

/* Index of (c, p) in a dense value of C channels and HW positions. */
static inline int64_t at(int cl, int64_t C, int64_t HW, int64_t c, int64_t p)
{
    return cl ? p * C + c : c * HW + p;
}

/* Runs all T steps of sample n on the buffers W: resets the neurons,
 * computes every layer for each block of steps (static ones at the first
 * step only), writes traces and the output, and leaves the sample's spike
 * and synaptic-op counts in P->spk / P->ops row n. Allocates nothing.
 * Called by every thread of a team of nt (tid 0 .. nt - 1, all with the same
 * W) from inside one parallel region: thread 0 runs the sample and the
 * others join it for the convolutions they split (fast_layer.team);
 * nt = 1 outside a team. */
void nc_fast_run_sample(const fast_plan *P, fast_ws *W, const nc_run_request *q, int n, int tid, int nt);

/* A team's barrier: threads spin, then yield, whatever OMP_WAIT_POLICY
 * says (a team's barriers come every few microseconds; an OpenMP barrier
 * under the passive policy sleeps and costs tens of them to wake from). */
typedef struct nc_fast_barrier {
    unsigned count, gen;
} nc_fast_barrier;
void nc_fast_team_barrier(const fast_plan *P, int nt);

/* Trial samples a team runs with its candidates split and with none, each,
 * and the samples before it decides: those and one to warm up. */
#define NC_FAST_TEAM_TRIALS 3
#define NC_FAST_TEAM_SAMPLES (1 + 2 * NC_FAST_TEAM_TRIALS)

/* The current sample's trial mode: 0 (none split; also the warm-up) or 1
 * (every candidate split), or -1 (no trial: decided, or no team). */
static inline int nc_fast_team_mode(const fast_plan *P)
{
    return P->team > 1 && P->team_trials < NC_FAST_TEAM_SAMPLES ? P->team_trials % 2 : -1;
}

/* Before a sample run by a team (thread 0): sets team_on for it. */
void nc_fast_team_choose(fast_plan *P);
/* After it: counts the trial, and after the last decides team_on. */
void nc_fast_team_learn(fast_plan *P);

/* Points every slot of W at its copy of each passed-on value, or for a
 * layer static in this run (computed once, at step 0 in slot 0) at slot
 * 0's. Once per run, before the samples. */
void nc_fast_bind_slots(const fast_plan *P, fast_ws *W);

/* fast_nir.c: the layers of NIR's other node types. */
int nc_fast_is_nir_kind(nc_snn_layer_kind k);
/* Plans layer L (dense NCHW, input materialised); 0 when out of memory. */
int nc_fast_plan_nir(const nc_snn_layer *L, fast_layer *F);
/* One step of layer i from its materialised input W->tmp[i] into W->dense[i]. */
void nc_fast_nir_step(const nc_snn_layer *L, const fast_layer *F, fast_ws *W, int i);

/* fast_nonlinear.c: Nonlinear layers. Plans layer L (0 when out of
 * memory); the floats it keeps in a workspace (fast_ws.nl); the sums of its
 * input k there (K->nl_sum adds an input's value to them); zeroes its sums
 * and totals at a sample's start; and its step t (1, 2, ...) from the sums into
 * W->dense[i], returning the synaptic ops (the reference's). */
int nc_fast_plan_nonlinear(const nc_snn *s, const nc_snn_layer *L, fast_layer *F);
int64_t nc_fast_nl_floats(const nc_snn *s, const nc_snn_layer *L);
float *nc_fast_nl_sums(const nc_snn *s, const nc_snn_layer *L, const fast_ws *W, int i, int k);
void nc_fast_nl_reset(const nc_snn *s, const nc_snn_layer *L, fast_ws *W, int i);
int64_t nc_fast_nl_step(const fast_plan *P, fast_ws *W, int i, int t);

#endif
