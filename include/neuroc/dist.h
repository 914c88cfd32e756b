/*
 * neuroc process groups, for those who implement one: a group (nc_dist,
 * <neuroc/neuroc.h>) is a rank, a size and two collectives behind a table
 * of functions. <neuroc/mpi.h> (libneuroc_mpi) builds its MPI group on this
 * header alone; a test can build one of threads. Users who only hand a
 * group to the library need <neuroc/neuroc.h> and a constructor such as
 * nc_dist_from_mpi_comm, not this header.
 *
 * Every rank of a group must call the collectives in the same order; the
 * library does so. A group of size 1 is never asked to communicate.
 */
#ifndef NEUROC_DIST_H
#define NEUROC_DIST_H

#include "neuroc/neuroc.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nc_dist_type { NC_DIST_I64 = 0, NC_DIST_U64, NC_DIST_F64, NC_DIST_F32 } nc_dist_type;
typedef enum nc_dist_op { NC_DIST_SUM = 0, NC_DIST_MAX, NC_DIST_MIN } nc_dist_op;

/* What a group does. The table must outlive every group made with it
 * (a static const table is the usual choice). Inside the functions,
 * nc_dist_impl(d), nc_dist_rank(d) and nc_dist_size(d) give the group's
 * state; a failure returns a status with a message set by nc_dist_errorf. */
typedef struct nc_dist_ops {
    /* Names the implementation ("mpi"); static string. */
    const char *name;
    /* In place over n elements of `buf` (the caller's; n > 0). Float sums
     * must give the same bits on every rank (reduce to one rank and
     * broadcast the result): the ranks' weights must stay identical. */
    nc_status (*allreduce)(const nc_dist *d, void *buf, int64_t n, nc_dist_type t, nc_dist_op op);
    /* Rank r contributes bytes[r] bytes (bytes has one entry a rank) from
     * `send`; every rank receives all of them, in rank order, into `recv`.
     * send NULL: this rank's part is already in its place in recv. The
     * buffers are the caller's. */
    nc_status (*allgatherv)(const nc_dist *d, const void *send, void *recv, const int64_t *bytes);
    /* Releases `impl`, once, from nc_dist_free; NULL: nothing to release. */
    void (*release)(void *impl);
} nc_dist_ops;

/* A group of `size` processes in which this one is `rank` (0 <= rank <
 * size), whose collectives are ops (both required) on `impl`. The caller
 * keeps ops, which must outlive the group. On success the group owns impl
 * (nc_dist_free hands it to ops->release) and the caller owns *out, freed
 * with nc_dist_free; on failure *out is NULL and impl stays the caller's. */
NC_API nc_status nc_dist_create(const nc_dist_ops *ops, void *impl, int rank, int size, nc_dist **out);
/* The impl given to nc_dist_create (NULL for a NULL group); owned by the
 * group, valid until nc_dist_free. */
NC_API void *nc_dist_impl(const nc_dist *d);
/* For implementations of nc_dist_ops: records the message as this thread's
 * nc_last_error() and returns st, so that `return nc_dist_errorf(...)`
 * reports a failed collective. */
NC_API nc_status nc_dist_errorf(nc_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#ifdef __cplusplus
}
#endif
#endif /* NEUROC_DIST_H */
