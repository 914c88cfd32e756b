/* Making and freeing a group of processes (<neuroc/dist.h>): the only
 * constructor, so that MPI code outside the library (libneuroc_mpi, the
 * program's MPI module) makes groups through the public API alone. */
#include <stdarg.h>
#include <stdio.h>

#include "alloc.h"
#include "dist.h"
#include "error.h"

nc_status nc_dist_create(const nc_dist_ops *ops, void *impl, int rank, int size, nc_dist **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_dist_create: out is NULL");
    *out = NULL;
    if (!ops || !ops->allreduce || !ops->allgatherv)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_dist_create: the ops table needs allreduce and allgatherv");
    if (size < 1 || rank < 0 || rank >= size)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_dist_create: rank %d of a group of %d", rank, size);
    nc_dist *d = nc_calloc(1, sizeof *d);
    if (!d)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    *d = (nc_dist){.rank = rank, .size = size, .ops = ops, .impl = impl};
    *out = d;
    return NC_OK;
}

void nc_dist_free(nc_dist *d)
{
    if (!d)
        return;
    if (d->ops && d->ops->release)
        d->ops->release(d->impl);
    nc_free(d);
}

void *nc_dist_impl(const nc_dist *d) { return d ? d->impl : NULL; }

nc_status nc_dist_errorf(nc_status st, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return nc_errorf(st, "%s", msg);
}
