/* The data-set batch iterator (include/neuroc/batches.h): the one place that
 * decides which samples a batch holds, how a process group shares the
 * batches, the padding of the last batch, the shuffling of training and the
 * progress of the pass. Every loop over a data set in the library (eval,
 * calibration and the corrections, training, the Loihi simulator) and
 * `neuroc run` walk it, so their shards agree. */
#include <string.h>

#include "neuroc/batches.h"

#include "kernels/hash.h"
#include "snn/base/alloc.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

#define DEFAULT_BATCH 64

struct nc_batches {
    const nc_tensor *x, *labels;
    nc_batches_options o;  /* defaults filled in */
    int64_t n;             /* samples iterated: the first n rows of x */
    size_t row_bytes;      /* one sample of x */
    int64_t per;           /* elements of a sample of x */
    int64_t gb;            /* NC_BATCHES_SHARD_WITHIN: the global batch */
    int64_t lo, hi;        /* the other shards: this rank's positions [lo, hi) */
    int64_t n_batches;     /* of this rank's pass */
    int64_t total;         /* samples of this rank's pass */
    int64_t next;          /* batches handed out in this pass */
    int64_t done;          /* their samples */
    int ended;             /* the pass's last call has been made */
    int64_t *perm;         /* shuffled: position → row of the data */
    uint64_t rng;          /* splitmix64 state, continued from pass to pass */
    int64_t *label_buf;    /* shuffled with labels: the batch's labels */
};

static void shuffle(nc_batches *it)
{
    /* Fisher–Yates from the end, as the trainer has always drawn it */
    for (int64_t i = it->n - 1; i > 0; i--) {
        int64_t j = (int64_t)(nc_splitmix_mix(it->rng += 0x9E3779B97F4A7C15ull) % (uint64_t)(i + 1));
        int64_t t = it->perm[i];
        it->perm[i] = it->perm[j];
        it->perm[j] = t;
    }
}

/* ⌈a / b⌉ for a >= 0, b > 0, without overflowing for a batch near 2^63. */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* This rank's share of the pass: batches and samples. */
static void plan(nc_batches *it)
{
    int64_t n = it->n, B = it->o.batch;
    const nc_dist *d = it->o.dist;
    if (it->o.shard == NC_BATCHES_SHARD_WITHIN) {
        int64_t gb;
        if (!nc_mul_i64(B, nc_dist_size(d), &gb) || gb > n)
            gb = n;
        it->gb = gb;
        it->n_batches = gb > 0 ? ceil_div(n, gb) : 0;
        /* every global batch is full but perhaps the last */
        int64_t lo, hi, last = n - (it->n_batches - 1) * gb;
        it->total = 0;
        if (it->n_batches > 1) {
            nc_dist_share(d, gb, &lo, &hi);
            it->total = (it->n_batches - 1) * (hi - lo);
        }
        if (it->n_batches > 0) {
            nc_dist_share(d, last, &lo, &hi);
            it->total += hi - lo;
        }
    } else if (it->o.shard == NC_BATCHES_SHARD_SAMPLES) {
        nc_dist_share(d, n, &it->lo, &it->hi);
        it->n_batches = ceil_div(it->hi - it->lo, B);
        it->total = it->hi - it->lo;
    } else {
        /* a contiguous run of the single-process batches, so that a batch
         * holds the same samples (and Poisson noise) in any group */
        int64_t b0, b1;
        nc_dist_share(d, ceil_div(n, B), &b0, &b1);
        it->lo = b0 * B < n ? b0 * B : n;
        it->hi = b1 * B < n ? b1 * B : n;
        it->n_batches = b1 - b0;
        it->total = it->hi - it->lo;
    }
}

nc_status nc_batches_create(const nc_tensor *x, const nc_tensor *labels, const nc_batches_options *opt,
                            nc_batches **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_batches_create: out is NULL");
    *out = NULL;
    nc_batches_options o = {0};
    if (opt)
        o = *opt;
    if (o.batch == 0)
        o.batch = DEFAULT_BATCH;
    if (!o.what)
        o.what = "batches";
    if (o.batch < 0 || o.samples < 0 || o.shard < NC_BATCHES_SHARD_BATCHES || o.shard > NC_BATCHES_SHARD_WITHIN)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_batches_create: batch %lld, samples %lld, shard %d: batch and "
                         "samples must be >= 0 and the shard one of nc_batches_shard", (long long)o.batch,
                         (long long)o.samples, (int)o.shard);
    int64_t rows = x ? (x->ndim > 0 ? x->shape[0] : -1) : o.samples;
    if (x && rows < 0)
        return nc_errorf(NC_ERR_SHAPE, "nc_batches_create: the data is a scalar; it needs a first dimension "
                         "of samples");
    if (!x && o.samples == 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_batches_create: without data, options.samples says how many "
                         "samples to iterate");
    int64_t n = o.samples ? o.samples : rows;
    if (n > rows)
        return nc_errorf(NC_ERR_SHAPE, "nc_batches_create: %lld samples asked of data holding %lld",
                         (long long)n, (long long)rows);
    if (labels && (labels->dtype != NC_DTYPE_I64 || labels->numel < n))
        return nc_errorf(NC_ERR_SHAPE, "nc_batches_create: labels must be int64, one per sample (%lld); got %s "
                         "with %lld values", (long long)n, nc_dtype_name(labels->dtype),
                         (long long)labels->numel);
    nc_batches *it = nc_calloc(1, sizeof *it);
    if (!it)
        return nc_errorf(NC_ERR_NOMEM, "out of memory for a batch iterator");
    it->x = x;
    it->labels = labels;
    it->o = o;
    it->n = n;
    if (x && rows > 0) {
        it->per = x->numel / rows;
        it->row_bytes = (size_t)it->per * nc_dtype_size(x->dtype);
    }
    plan(it);
    if (o.shuffle) {
        int64_t lb = o.batch < n ? o.batch : n;
        it->rng = o.seed;
        it->perm = (uint64_t)n <= SIZE_MAX / sizeof *it->perm ? nc_malloc((size_t)(n ? n : 1) * sizeof *it->perm)
                                                               : NULL;
        it->label_buf = labels ? nc_malloc((size_t)(lb ? lb : 1) * sizeof *it->label_buf) : NULL;
        if (!it->perm || (labels && !it->label_buf)) {
            nc_batches_free(it);
            return nc_errorf(NC_ERR_NOMEM, "out of memory shuffling %lld samples", (long long)n);
        }
        for (int64_t i = 0; i < n; i++)
            it->perm[i] = i;
        shuffle(it);
    }
    *out = it;
    return NC_OK;
}

void nc_batches_free(nc_batches *it)
{
    if (!it)
        return;
    nc_free(it->perm);
    nc_free(it->label_buf);
    nc_free(it);
}

int nc_batches_next(nc_batches *it, nc_batch *b)
{
    if (!it || !b || it->ended)
        return 0;
    if (it->o.progress)
        it->o.progress(it->o.what, it->done, it->total, it->o.progress_user);
    if (it->next >= it->n_batches) {
        it->ended = 1;
        return 0;
    }
    int64_t k = it->next++, B = it->o.batch;
    memset(b, 0, sizeof *b);
    b->index = k;
    if (it->o.shard == NC_BATCHES_SHARD_WITHIN) {
        int64_t lo, hi;
        b->global_first = k * it->gb;
        b->global_count = it->n - b->global_first < it->gb ? it->n - b->global_first : it->gb;
        nc_dist_share(it->o.dist, b->global_count, &lo, &hi);
        b->first = b->global_first + lo;
        b->count = hi - lo;
    } else {
        b->first = it->lo + k * B;
        b->count = it->hi - b->first < B ? it->hi - b->first : B;
        b->global_first = b->first;
        b->global_count = b->count;
    }
    b->padded = it->o.pad ? B : b->count;
    it->done += b->count;
    if (it->perm) {
        b->rows = it->perm + b->first;
        for (int64_t i = 0; it->labels && i < b->count; i++)
            it->label_buf[i] = nc_i64(it->labels)[b->rows[i]];
        b->labels = it->labels ? it->label_buf : NULL;
    } else {
        if (it->x)
            b->data = (const char *)it->x->data + (size_t)b->first * it->row_bytes;
        if (it->labels)
            b->labels = nc_i64(it->labels) + b->first;
    }
    return 1;
}

void nc_batches_rewind(nc_batches *it)
{
    if (!it)
        return;
    it->next = 0;
    it->done = 0;
    it->ended = 0;
    if (it->perm)
        shuffle(it);
}

int64_t nc_batches_count(const nc_batches *it) { return it ? it->n_batches : 0; }
int64_t nc_batches_samples(const nc_batches *it) { return it ? it->total : 0; }

static nc_status check_batch(const nc_batches *it, const nc_batch *b, const void *dst, const char *fn)
{
    if (!it || !b || !dst)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: NULL argument", fn);
    if (!it->x)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: the iterator was made without data", fn);
    if (b->first < 0 || b->count < 0 || b->first > it->n - b->count || b->padded < b->count)
        return nc_errorf(NC_ERR_INVALID_ARG, "%s: batch [%lld, +%lld) padded to %lld is not one of this "
                         "iterator's", fn, (long long)b->first, (long long)b->count, (long long)b->padded);
    return NC_OK;
}

/* The batch's count rows into dst (which the caller zeroed or pads). */
static void copy_rows(const nc_batches *it, const nc_batch *b, char *dst)
{
    const char *src = it->x->data;
    if (!it->perm) {
        if (b->count)
            memcpy(dst, src + (size_t)b->first * it->row_bytes, (size_t)b->count * it->row_bytes);
        return;
    }
    for (int64_t i = 0; i < b->count; i++)
        memcpy(dst + (size_t)i * it->row_bytes, src + (size_t)it->perm[b->first + i] * it->row_bytes,
               it->row_bytes);
}

nc_status nc_batches_copy(const nc_batches *it, const nc_batch *b, void *dst)
{
    nc_status st = check_batch(it, b, dst, "nc_batches_copy");
    if (st != NC_OK)
        return st;
    copy_rows(it, b, dst);
    if (b->padded > b->count)
        memset((char *)dst + (size_t)b->count * it->row_bytes, 0, (size_t)(b->padded - b->count) * it->row_bytes);
    return NC_OK;
}

nc_status nc_batches_tensor(const nc_batches *it, const nc_batch *b, int sample_ndim, const int64_t *sample_shape,
                            nc_tensor **out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_batches_tensor: out is NULL");
    *out = NULL;
    nc_status st = check_batch(it, b, out, "nc_batches_tensor");
    if (st != NC_OK)
        return st;
    if (!sample_shape) {
        sample_ndim = it->x->ndim - 1;
        sample_shape = it->x->shape + 1;
    }
    if (sample_ndim < 0 || sample_ndim >= NC_MAX_DIMS)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_batches_tensor: a sample of rank %d", sample_ndim);
    int64_t shape[NC_MAX_DIMS], per = 1;
    int bad = 0;
    shape[0] = b->padded;
    for (int d = 0; d < sample_ndim; d++) {
        shape[d + 1] = sample_shape[d];
        bad |= sample_shape[d] < 0 || !nc_mul_i64(per, sample_shape[d], &per);
    }
    if (bad || per != it->per) {
        char s[160];
        return nc_errorf(NC_ERR_SHAPE, "nc_batches_tensor: a sample of shape %s does not hold the %lld values "
                         "of the data's samples", nc_shape_str(sample_ndim, sample_shape, s, sizeof s),
                         (long long)it->per);
    }
    nc_tensor *t = nc_tensor_new(it->x->dtype, sample_ndim + 1, shape);
    if (!t)
        return nc_tensor_new_failure(it->x->dtype, sample_ndim + 1, shape);
    copy_rows(it, b, t->data); /* the padding rows are the new tensor's zeros */
    *out = t;
    return NC_OK;
}

void nc_batches_options_init(nc_batches_options *o)
{
    if (o)
        *o = (nc_batches_options){.batch = DEFAULT_BATCH, .shard = NC_BATCHES_SHARD_BATCHES};
}
