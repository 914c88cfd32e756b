/* Groups of processes (dist.h): the helpers every distributed path uses,
 * and the single-process behaviour of a NULL group (making and freeing one:
 * dist_group.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "dist.h"
#include "error.h"
#include "tensor.h"

int nc_dist_rank(const nc_dist *d) { return d ? d->rank : 0; }
int nc_dist_size(const nc_dist *d) { return d ? d->size : 1; }

void nc_dist_share_of(int64_t n, int r, int size, int64_t *lo, int64_t *hi)
{
    /* n·r/size without overflowing for n up to 2^63/size */
    int64_t q = n / size, rem = n % size;
    *lo = q * r + (rem * r) / size;
    *hi = q * (r + 1) + (rem * (r + 1)) / size;
}

void nc_dist_share(const nc_dist *d, int64_t n, int64_t *lo, int64_t *hi)
{
    nc_dist_share_of(n, nc_dist_rank(d), nc_dist_size(d), lo, hi);
}

static nc_status reduce(const nc_dist *d, void *v, int64_t n, nc_dist_type t, nc_dist_op op)
{
    if (!d || d->size <= 1 || n <= 0)
        return NC_OK;
    return d->ops->allreduce(d, v, n, t, op);
}

nc_status nc_dist_sum_i64(const nc_dist *d, int64_t *v, int64_t n) { return reduce(d, v, n, NC_DIST_I64, NC_DIST_SUM); }
nc_status nc_dist_sum_f64(const nc_dist *d, double *v, int64_t n) { return reduce(d, v, n, NC_DIST_F64, NC_DIST_SUM); }
nc_status nc_dist_sum_f32(const nc_dist *d, float *v, int64_t n) { return reduce(d, v, n, NC_DIST_F32, NC_DIST_SUM); }
nc_status nc_dist_max_f64(const nc_dist *d, double *v, int64_t n) { return reduce(d, v, n, NC_DIST_F64, NC_DIST_MAX); }

nc_status nc_dist_agree(const nc_dist *d, int *failed)
{
    int64_t f = *failed != 0;
    nc_status st = nc_dist_sum_i64(d, &f, 1);
    *failed = (int)f;
    return st;
}

/* Bytes of the failing rank's message the others get (64 words). */
#define NC_DIST_MSG 512

nc_status nc_dist_fail_together(const nc_dist *d, nc_status st, int64_t failed, const char *what)
{
    if (!d || d->size <= 1 || failed <= 0)
        return st;
    /* the first rank that failed: the smallest rank among them */
    int64_t first = st != NC_OK ? d->rank : d->size;
    nc_status cs = reduce(d, &first, 1, NC_DIST_I64, NC_DIST_MIN);
    /* its status and message; only it adds non-zero words, so the integer
     * sum is its bytes exactly */
    uint64_t v[1 + NC_DIST_MSG / 8];
    memset(v, 0, sizeof v);
    if (cs == NC_OK && d->rank == first) {
        v[0] = (uint64_t)st;
        snprintf((char *)(v + 1), NC_DIST_MSG, "%s", nc_last_error());
    }
    if (cs == NC_OK)
        cs = reduce(d, v, 1 + NC_DIST_MSG / 8, NC_DIST_U64, NC_DIST_SUM);
    if (st != NC_OK)
        return st; /* its own message stays */
    if (cs != NC_OK)
        return cs;
    char msg[NC_DIST_MSG];
    memcpy(msg, v + 1, sizeof msg);
    msg[sizeof msg - 1] = '\0';
    nc_status code = v[0] > NC_OK && v[0] <= NC_ERR_INTERNAL ? (nc_status)v[0] : NC_ERR_INTERNAL;
    if (failed > 1)
        return nc_errorf(code, "%s failed on rank %lld of %d (and on %lld more): %s", what, (long long)first,
                         d->size, (long long)(failed - 1), msg);
    return nc_errorf(code, "%s failed on rank %lld of %d: %s", what, (long long)first, d->size, msg);
}

nc_status nc_dist_agree_status(const nc_dist *d, nc_status st, const char *what)
{
    if (!d || d->size <= 1)
        return st;
    int failed = st != NC_OK;
    nc_status cs = nc_dist_agree(d, &failed);
    if (cs != NC_OK)
        return st != NC_OK ? st : cs;
    return nc_dist_fail_together(d, st, failed, what);
}

nc_status nc_dist_check_same(const nc_dist *d, const uint64_t *hash, const char *const *what, int n)
{
    if (!d || d->size <= 1 || n <= 0)
        return NC_OK;
    int64_t *bytes = nc_calloc((size_t)d->size, sizeof *bytes);
    uint64_t *all = nc_calloc((size_t)d->size * (size_t)n, sizeof *all);
    if (!bytes || !all) {
        nc_free(bytes);
        nc_free(all);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    for (int r = 0; r < d->size; r++)
        bytes[r] = (int64_t)n * (int64_t)sizeof *hash;
    nc_status st = d->ops->allgatherv(d, hash, all, bytes);
    for (int r = 1; st == NC_OK && r < d->size; r++)
        for (int i = 0; st == NC_OK && i < n; i++)
            if (all[(size_t)r * n + i] != all[i])
                st = nc_errorf(NC_ERR_INVALID_ARG,
                               "not the same on every rank: %s (rank %d's hash %016llx, rank 0's %016llx); every "
                               "rank must be given the same",
                               what[i], r, (unsigned long long)all[(size_t)r * n + i], (unsigned long long)all[i]);
    nc_free(bytes);
    nc_free(all);
    return st;
}

uint64_t nc_hash_bytes(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t nc_hash_tensor(uint64_t h, const nc_tensor *t)
{
    if (!t)
        return nc_hash_bytes(h, "-", 1);
    h = nc_hash_bytes(h, &t->dtype, sizeof t->dtype);
    h = nc_hash_bytes(h, &t->ndim, sizeof t->ndim);
    h = nc_hash_bytes(h, t->shape, (size_t)t->ndim * sizeof *t->shape);
    return nc_hash_bytes(h, t->data, (size_t)t->numel * nc_dtype_size(t->dtype));
}

int nc_dist_device_for_process(int count)
{
    static const char *const vars[] = {"NEUROC_CUDA_DEVICE", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                       "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
    if (count <= 1)
        return 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long r = v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && r >= 0)
            return (int)(r % count);
    }
    return 0;
}
