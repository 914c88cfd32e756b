/* The training engine over the SNN IR (issues: conversion, BPTT).
 *
 * One engine, two modes over the same graph (Affine, Conv2d, Pool2d,
 * MaxPool2d, Flatten, Add, Concat, IF, Readout):
 *  - NC_TRAIN_QCFS: the ANN view of a converted network: every IF layer acts
 *    as the QCFS activation h(z) = λ·clip(floor(z·L/λ + 1/2)/L, 0, 1) with
 *    λ = its threshold (per layer or per channel); straight-through floor,
 *    ∂h/∂λ as in DESIGN §3. The loss is cross-entropy on the readout's input.
 *  - NC_TRAIN_BPTT: the SNN unrolled over T steps with a surrogate spike
 *    derivative (a later issue).
 * Weights, biases and (optionally) thresholds of `s` are updated in place.
 */
#ifndef NC_CONVERT_TRAIN_H
#define NC_CONVERT_TRAIN_H

#include "neuroc/neuroc.h"

typedef enum nc_train_mode { NC_TRAIN_QCFS = 0, NC_TRAIN_BPTT = 1 } nc_train_mode;

typedef struct nc_train_options {
    nc_train_mode mode;
    int levels;              /* QCFS L; 0 = 8 */
    int timesteps;           /* BPTT T */
    int epochs;              /* 0 = 1 */
    int batch;               /* 0 = 64 */
    float lr;                /* Adam; 0 = 1e-3 */
    float weight_decay;
    int train_thresholds;    /* λ trainable (QCFS default 1) */
    uint64_t seed;           /* mini-batch shuffling */
    nc_progress_fn progress;
    void *progress_user;
} nc_train_options;

/* Trains s on x (N, *input) with int64 labels (N). */
nc_status nc_train(nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_train_options *o);

/* Mean cross-entropy loss and accuracy of the QCFS ANN view of s on (x, labels). */
nc_status nc_qcfs_evaluate(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int levels,
                           double *loss, double *accuracy);

#endif
