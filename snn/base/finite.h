/* The one finiteness check for data tensors: weights, biases, thresholds,
 * input and calibration samples. NaN or ±Inf there makes a network compute
 * garbage (or a dead layer) with exit 0, so they are refused by name. */
#ifndef NC_SNN_FINITE_H
#define NC_SNN_FINITE_H

#include "tensor.h"

enum {
    NC_FINITE_SAMPLES = 1,  /* dimension 0 counts samples: data, not a model's tensor */
    NC_FINITE_POS_INF = 2,  /* +inf has a meaning (a threshold that never fires) */
};

/* NC_OK if every element of float tensor `t` is finite (other dtypes and
 * NULL pass). Else NC_ERR_MODEL for a model's tensor:
 * "<what> holds NaN at index 17 (of 288 values)", or NC_ERR_INVALID_ARG
 * for data (NC_FINITE_SAMPLES):
 * "<what>: sample 3 holds +inf at index 12 (of 784 values a sample)".
 * `what` names the file and tensor. */
nc_status nc_check_finite(const nc_tensor *t, const char *what, int flags);

#endif
