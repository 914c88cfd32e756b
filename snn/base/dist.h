/* The library's view of a group of processes (nc_dist, include/neuroc/neuroc.h):
 * a rank, a size and a few collectives behind function pointers, so that
 * nothing in the library sees MPI (libneuroc_mpi, snn/base/mpi/, makes an
 * MPI group through nc_dist_create). A NULL group is one process:
 * every helper below then does nothing (a reduction over one rank is the
 * identity), which is the single-process implementation.
 *
 * Collectives must be called by every rank in the same order. Functions
 * that reduce after local work that can fail pass their status through the
 * same reduction (nc_dist_agree), so one rank's failure ends the call on
 * every rank instead of leaving the others waiting. */
#ifndef NC_SNN_DIST_H
#define NC_SNN_DIST_H

#include <stdint.h>

#include "neuroc/dist.h"
#include "neuroc/neuroc.h"

/* The ops table and the types of its collectives are public
 * (<neuroc/dist.h>, nc_dist_create), so MPI code outside the library builds
 * on the public API alone; the group itself is only seen here. */
struct nc_dist {
    int rank, size;
    const nc_dist_ops *ops;
    void *impl;
};

/* Rows [*lo, *hi) of n that this rank takes: contiguous, n·r/size to
 * n·(r+1)/size, so the shares differ by at most one. */
void nc_dist_share(const nc_dist *d, int64_t n, int64_t *lo, int64_t *hi);
/* The same for rank r of `size`. */
void nc_dist_share_of(int64_t n, int r, int size, int64_t *lo, int64_t *hi);

nc_status nc_dist_sum_i64(const nc_dist *d, int64_t *v, int64_t n);
nc_status nc_dist_sum_f64(const nc_dist *d, double *v, int64_t n);
nc_status nc_dist_sum_f32(const nc_dist *d, float *v, int64_t n);
nc_status nc_dist_max_f64(const nc_dist *d, double *v, int64_t n);

/* Collective: *failed on every rank becomes the number of ranks that
 * passed a non-zero failed. Returns NC_OK unless the collective itself
 * fails. */
nc_status nc_dist_agree(const nc_dist *d, int *failed);
/* Collective after local work that returned `st`: st itself (and its
 * message) on a rank that failed; on the others the first failing rank's
 * status with "<what> failed on rank K of N: <its message>"; NC_OK when
 * every rank succeeded. `what` names the work ("evaluation"). A rank that
 * fails before the group's next collective calls this instead of
 * returning, where the others call it too, so that all ranks fail
 * together rather than leave the others waiting. */
nc_status nc_dist_agree_status(const nc_dist *d, nc_status st, const char *what);
/* The second half of nc_dist_agree_status, for a caller that learnt the
 * number of failed ranks `failed` from a reduction of its own: collective
 * when failed > 0 (every rank knows it, so every rank calls it). */
nc_status nc_dist_fail_together(const nc_dist *d, nc_status st, int64_t failed, const char *what);

/* Collective: checks that every rank has the same n hashes; on a mismatch
 * returns NC_ERR_INVALID_ARG on every rank naming what[i] and the first
 * rank that differs from rank 0. */
nc_status nc_dist_check_same(const nc_dist *d, const uint64_t *hash, const char *const *what, int n);

/* The GPU (of `count`) this process uses: NEUROC_CUDA_DEVICE when set,
 * else the node-local rank a launcher exports (Open MPI, MPICH/Hydra,
 * MVAPICH, Slurm) modulo count, so ranks on one node spread over its GPUs;
 * else 0. */
int nc_dist_device_for_process(int count);

/* FNV-1a, 64 bits, continued from h (start with NC_HASH_INIT). */
#define NC_HASH_INIT 0xcbf29ce484222325ull
uint64_t nc_hash_bytes(uint64_t h, const void *data, size_t n);
/* dtype, shape and contents of a tensor (NULL hashes as nothing). */
uint64_t nc_hash_tensor(uint64_t h, const nc_tensor *t);

#endif
