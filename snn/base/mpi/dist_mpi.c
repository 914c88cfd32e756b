/* The MPI implementation of a process group (include/neuroc/mpi.h):
 * collectives on a duplicate of the caller's communicator, with
 * MPI_ERRORS_RETURN so that failures come back as statuses.
 *
 * Built only when CMake finds MPI, and never into libneuroc: it goes into
 * libneuroc_mpi (for C programs that bring their own MPI) and into the
 * program's MPI module (cli/mpi/), which the neuroc program loads only under
 * mpirun. It therefore includes public headers only and makes its group
 * through nc_dist_create (<neuroc/dist.h>); the core stays free of MPI. */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

#include "neuroc/dist.h"
#include "neuroc/mpi.h"

/* Largest element count handed to one MPI call (counts are ints). */
#define CHUNK ((int64_t)1 << 28)

static MPI_Comm comm_of(const nc_dist *d) { return *(const MPI_Comm *)nc_dist_impl(d); }

static nc_status mpi_fail(int rank, int size, const char *call, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        len = 0;
    msg[len] = 0;
    return nc_dist_errorf(NC_ERR_DEVICE, "%s failed on rank %d of %d: %s", call, rank, size,
                          len ? msg : "unknown MPI error");
}

static nc_status group_fail(const nc_dist *d, const char *call, int rc)
{
    return mpi_fail(nc_dist_rank(d), nc_dist_size(d), call, rc);
}

static MPI_Datatype mpi_type(nc_dist_type t, size_t *size)
{
    switch (t) {
    case NC_DIST_I64: *size = 8; return MPI_INT64_T;
    case NC_DIST_U64: *size = 8; return MPI_UINT64_T;
    case NC_DIST_F64: *size = 8; return MPI_DOUBLE;
    default: *size = 4; return MPI_FLOAT;
    }
}

static nc_status mpi_allreduce(const nc_dist *d, void *buf, int64_t n, nc_dist_type t, nc_dist_op op)
{
    size_t esize;
    MPI_Datatype dt = mpi_type(t, &esize);
    MPI_Op mop = op == NC_DIST_MAX ? MPI_MAX : op == NC_DIST_MIN ? MPI_MIN : MPI_SUM;
    /* A float sum depends on its order, and MPI_Allreduce may order it
     * differently on different ranks: reduce on rank 0 and broadcast, so
     * every rank gets the same bits (the weights then stay identical). */
    int ordered = op == NC_DIST_SUM && (t == NC_DIST_F32 || t == NC_DIST_F64);
    int rank = nc_dist_rank(d);
    MPI_Comm c = comm_of(d);
    for (int64_t k = 0; k < n; k += CHUNK) {
        int cnt = (int)(n - k < CHUNK ? n - k : CHUNK);
        char *p = (char *)buf + (size_t)k * esize;
        int rc;
        if (ordered) {
            rc = MPI_Reduce(rank == 0 ? MPI_IN_PLACE : p, p, cnt, dt, mop, 0, c);
            if (rc != MPI_SUCCESS)
                return group_fail(d, "MPI_Reduce", rc);
            rc = MPI_Bcast(p, cnt, dt, 0, c);
            if (rc != MPI_SUCCESS)
                return group_fail(d, "MPI_Bcast", rc);
        } else if ((rc = MPI_Allreduce(MPI_IN_PLACE, p, cnt, dt, mop, c)) != MPI_SUCCESS) {
            return group_fail(d, "MPI_Allreduce", rc);
        }
    }
    return NC_OK;
}

static nc_status mpi_allgatherv(const nc_dist *d, const void *send, void *recv, const int64_t *bytes)
{
    int size = nc_dist_size(d), rank = nc_dist_rank(d);
    int *counts = calloc((size_t)size, sizeof *counts), *displs = calloc((size_t)size, sizeof *displs);
    nc_status st = NC_OK;
    if (!counts || !displs)
        st = nc_dist_errorf(NC_ERR_NOMEM, "out of memory");
    int64_t off = 0;
    for (int r = 0; st == NC_OK && r < size; r++) {
        if (bytes[r] < 0 || bytes[r] > INT_MAX || off > INT_MAX)
            st = nc_dist_errorf(NC_ERR_LIMIT, "gathering %lld bytes from rank %d: more than one MPI call can move",
                                (long long)bytes[r], r);
        counts[r] = (int)bytes[r];
        displs[r] = (int)off;
        off += bytes[r];
    }
    if (st == NC_OK) {
        int rc = MPI_Allgatherv(send ? send : MPI_IN_PLACE, counts[rank], MPI_BYTE, recv, counts, displs, MPI_BYTE,
                                comm_of(d));
        if (rc != MPI_SUCCESS)
            st = group_fail(d, "MPI_Allgatherv", rc);
    }
    free(counts);
    free(displs);
    return st;
}

/* The duplicate communicator; after MPI_Finalize it is gone with MPI. */
static void mpi_release(void *impl)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Comm_free((MPI_Comm *)impl);
    free(impl);
}

static const nc_dist_ops MPI_OPS = {"mpi", mpi_allreduce, mpi_allgatherv, mpi_release};

nc_status nc_dist_from_mpi_comm(MPI_Comm comm, nc_dist **out)
{
    if (!out)
        return nc_dist_errorf(NC_ERR_INVALID_ARG, "nc_dist_from_mpi_comm: out is NULL");
    *out = NULL;
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return nc_dist_errorf(NC_ERR_INVALID_ARG, "nc_dist_from_mpi_comm: MPI is not initialised (call MPI_Init "
                                                  "first) or already finalised");
    MPI_Comm *c = malloc(sizeof *c);
    if (!c)
        return nc_dist_errorf(NC_ERR_NOMEM, "out of memory");
    int rank = 0, size = 1;
    int rc = MPI_Comm_dup(comm, c);
    if (rc != MPI_SUCCESS) {
        free(c);
        return mpi_fail(rank, size, "MPI_Comm_dup", rc);
    }
    MPI_Comm_set_errhandler(*c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(*c, &rank);
    MPI_Comm_size(*c, &size);
    nc_status st = nc_dist_create(&MPI_OPS, c, rank, size, out);
    if (st != NC_OK) {
        MPI_Comm_free(c);
        free(c);
    }
    return st;
}
