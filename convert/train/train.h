/* The training engine over the SNN IR (issues: conversion, BPTT).
 *
 * One engine, two modes over the same graph (Affine, Conv2d, Pool2d,
 * MaxPool2d, Flatten, Add, Concat, IF, Readout):
 *  - NC_TRAIN_QCFS: the ANN view of a converted network: every IF layer acts
 *    as the QCFS activation h(z) = λ·clip(floor(z·L/λ + 1/2)/L, 0, 1) with
 *    λ = its threshold (per layer or per channel); straight-through floor,
 *    ∂h/∂λ as in DESIGN §3. The loss is cross-entropy on the readout's input.
 *    An IF layer with an explicit spike value sv or v(0) acts as
 *    sv·clip(floor(z·L/λ + v0/λ)/L, 0, 1) (what its SNN computes with T = L);
 *    those tensors stay fixed while λ trains. The reset mode is ignored.
 *  - NC_TRAIN_BPTT: the SNN unrolled over T steps (DESIGN §3 IF dynamics,
 *    direct input) with a surrogate spike derivative; the loss is the
 *    cross-entropy of the readout input averaged over the T steps.
 * Weights, biases and (optionally) thresholds of `s` are updated in place.
 */
#ifndef NC_CONVERT_TRAIN_H
#define NC_CONVERT_TRAIN_H

#include "neuroc/neuroc.h"

typedef enum nc_train_mode { NC_TRAIN_QCFS = 0, NC_TRAIN_BPTT = 1 } nc_train_mode;

typedef struct nc_train_options {
    nc_train_mode mode;
    int levels;              /* QCFS L; 0 = 8 */
    int timesteps;           /* BPTT T; 0 = 4 */
    int epochs;              /* 0 = 1 */
    int batch;               /* 0 = 64 */
    float lr;                /* Adam; 0 = 1e-3 */
    float weight_decay;
    int train_thresholds;    /* λ/θ trainable: 0 = the mode's default (QCFS yes, BPTT no), > 0 yes, < 0 no */
    uint64_t seed;           /* mini-batch shuffling */
    nc_progress_fn progress;
    void *progress_user;
    /* Added with the engine; 0 means the default for each. */
    int optimizer;           /* 0 = Adam (β 0.9/0.999, ε 1e-8), 1 = SGD with momentum */
    float momentum;          /* SGD; 0 = 0.9 */
    float grad_clip;         /* clip the global gradient norm to this; 0 = off */
    int cosine;              /* learning-rate schedule: 0 = cosine over all steps, < 0 = constant */
    int surrogate;           /* BPTT spike derivative: 0 triangle, 1 rectangle, 2 sigmoid, 3 atan */
    float surrogate_width;   /* BPTT: γ as a fraction of each IF layer's mean θ; 0 = 1 */
    int detach_reset;        /* BPTT: no gradient through the reset term */
    int threads;             /* OpenMP threads for the element-wise layers; 0 = 1 (BLAS
                                threads are OpenBLAS's own setting); results do not depend on it */
    /* Resuming a schedule across calls (nc_snn_finetune runs one epoch per
     * call): the cosine schedule is taken at lr_step0 + step of lr_total_steps
     * steps; lr_total_steps 0 = this call's own steps (and lr_step0 ignored). */
    int64_t lr_step0, lr_total_steps;
    /* An optimiser carried across calls (Adam's moments and step count survive
     * from one epoch to the next): NULL = one of this call's own. An empty one
     * (zeroed) is set up by the first call; later calls take it over as it is,
     * and must train the same parameters (same network, same trainable set). */
    struct nc_optim *optim;
    /* A process group training data parallel (NULL = one process): `batch`
     * is per rank, each global batch of size·batch shuffled samples is cut
     * into contiguous shares, gradients are summed across ranks (scaled by
     * share/global batch, so they are the global batch's mean) before any
     * clipping and the step; the loss statistics are global. Weights are
     * compared across ranks (hash) after every step. */
    const nc_dist *dist;
    /* BPTT: weight λ of an energy term added to the loss (0 = none):
     * λ × (energy of the spikes' synaptic additions over the T steps) /
     * (energy of the ANN's multiply-adds over the same synapses), from each
     * neuron's fan-out (nc_snn_event_fanout). */
    float energy_weight;
} nc_train_options;

/* Filled by nc_train_ex: means over the last epoch (running, while the
 * weights changed). */
typedef struct nc_train_stats {
    int64_t steps;
    double loss, accuracy;
} nc_train_stats;

/* Trains s on x (N, *input) float32 with int64 labels (N) in [0, classes).
 * The weight decay applies to weights only (not biases or thresholds);
 * thresholds are kept >= NC_TRAIN_MIN_THRESHOLD. Deterministic for a seed
 * (with a fixed number of BLAS threads). Progress: "epoch e/E loss … acc …",
 * done/total batches of the epoch. */
nc_status nc_train(nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_train_options *o);
nc_status nc_train_ex(nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_train_options *o,
                      nc_train_stats *stats);

#define NC_TRAIN_MIN_THRESHOLD 1e-3f

/* Mean cross-entropy loss and accuracy of the BPTT view of s (the SNN run
 * by the engine for T steps, logits = the readout input averaged over t). */
nc_status nc_bptt_evaluate(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int timesteps,
                           double *loss, double *accuracy);
/* The same shared by a process group: each rank scores a share of the
 * batches; the accuracy is exact, the loss a sum of doubles across ranks. */
nc_status nc_bptt_evaluate_dist(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int timesteps,
                                const nc_dist *dist, double *loss, double *accuracy);

/* Mean cross-entropy loss and accuracy of the QCFS ANN view of s on (x, labels). */
nc_status nc_qcfs_evaluate(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int levels,
                           double *loss, double *accuracy);

/* The readout of the QCFS ANN view of s (thresholds as they are, before
 * any bursts) on x, each IF layer's output quantised as T steps with bursts
 * of bursts[k] quantise it (T·bursts[k] levels; T levels in the layers
 * `single` marks, by id, which send one spike a step; NULL: none), or with
 * bursts[k] = 0 not quantised (the rate limit): out is float32 (n, N,
 * classes). Refused where the engine cannot run the network (two-sided
 * SignedIF layers, Reshape layers). */
nc_status nc_snn_quantised_readouts(const nc_snn *s, const nc_tensor *x, int T, const int *bursts, int n,
                                    const char *single, nc_tensor **out);

#endif
