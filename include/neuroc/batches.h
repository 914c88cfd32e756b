/*
 * neuroc — walking a data set in batches: the iterator behind evaluation,
 * calibration, fine-tuning, the Loihi simulator and `neuroc run`, for
 * programs that feed nc_model_run or nc_session_run themselves.
 * Included by <neuroc/neuroc.h>; the conventions of DESIGN §5 hold.
 *
 * It hands out which samples each batch holds (positions, counts, padding,
 * labels); it neither runs anything nor owns the data. Under a process
 * group (nc_dist) every rank gets its share exactly as the library's own
 * data-parallel paths cut it, so a program that scores its batches and sums
 * over the group gets what one process gets, and a batch given
 * nc_batch_seed(seed, batch.first) as its Poisson seed sees the noise it
 * sees in `neuroc eval`, whatever the group's size.
 *
 *     nc_batches *it = NULL;
 *     nc_batches_options bo = {.batch = 64, .dist = dist};
 *     nc_status st = nc_batches_create(x, labels, &bo, &it);
 *     nc_batch b;
 *     while (st == NC_OK && nc_batches_next(it, &b)) {
 *         nc_tensor *in = NULL;
 *         st = nc_batches_tensor(it, &b, 0, NULL, &in);  // (b.padded, *sample)
 *         ... run `in`, score its first b.count rows against b.labels ...
 *         nc_tensor_free(in);
 *     }
 *     nc_batches_free(it);
 */
/* The umbrella header first: it includes every public header in the order
 * their types need, this one among them, so this header stands alone. */
#include "neuroc/neuroc.h"

#ifndef NEUROC_BATCHES_H
#define NEUROC_BATCHES_H

#ifdef __cplusplus
extern "C" {
#endif

/* How a process group shares the batches (all alike for one process). */
typedef enum nc_batches_shard {
    /* Each rank a contiguous run of whole batches: batch k holds samples
     * [k·batch, (k+1)·batch) whatever the group's size (evaluation,
     * calibration, the layer-wise corrections). */
    NC_BATCHES_SHARD_BATCHES = 0,
    /* Each rank a contiguous run of samples (n·r/size to n·(r+1)/size), cut
     * into batches from its start: per-sample work gathered in rank order
     * (the Loihi simulator). */
    NC_BATCHES_SHARD_SAMPLES = 1,
    /* Every rank walks every global batch of min(size·batch, n) samples and
     * takes its contiguous share of each, so that all ranks take one step
     * per global batch (data-parallel training). A rank's share may be
     * empty (count 0) when a batch has fewer samples than ranks. */
    NC_BATCHES_SHARD_WITHIN = 2
} nc_batches_shard;

/* Zeroed options are the defaults. */
typedef struct nc_batches_options {
    int64_t batch;           /* samples per batch (NC_BATCHES_SHARD_WITHIN: per rank); 0 = 64 */
    int64_t samples;         /* the first `samples` samples of the data; 0 = all */
    int pad;                 /* every batch is fed as `batch` rows, the last filled up with
                                zero rows (models with a fixed batch size) */
    const nc_dist *dist;     /* NULL = one process */
    nc_batches_shard shard;
    /* A fresh permutation of the samples for every pass: Fisher–Yates over
     * splitmix64 from `seed`, continued from pass to pass (pass p is the
     * same for a seed whatever the batch size or group). */
    int shuffle;
    uint64_t seed;
    /* Called by nc_batches_next with the samples of the batches handed out
     * before it (0 first, all of them when the pass ends) of this rank's
     * pass, under the name `what` (NULL = "batches"). */
    nc_progress_fn progress;
    const char *what;
    void *progress_user;
} nc_batches_options;

/* Defaults (nc_batches_options_init): batch 64, all samples, no padding,
 * one process, NC_BATCHES_SHARD_BATCHES, no shuffling, no progress. A
 * zeroed struct, or NULL options, mean the same. NULL o is a no-op. */
NC_API void nc_batches_options_init(nc_batches_options *o);

/* One batch. Pointers are into the data, the labels or the iterator, valid
 * until the next nc_batches_next, nc_batches_rewind or nc_batches_free (and
 * while the data and labels live). */
typedef struct nc_batch {
    int64_t index;           /* 0, 1, ... within this rank's pass */
    int64_t first;           /* position of its first sample: the sample's row in the data,
                                or its place in the permutation when shuffled */
    int64_t count;           /* its samples on this rank */
    int64_t padded;          /* rows to feed: `batch` with pad, else count */
    /* NC_BATCHES_SHARD_WITHIN: the global batch this is a share of (for
     * weighting a mean); otherwise first and count again. */
    int64_t global_first, global_count;
    const int64_t *rows;     /* shuffled: the count rows of the data it holds; NULL otherwise
                                (rows first .. first + count - 1) */
    const void *data;        /* not shuffled: its first row in the data (count rows follow);
                                NULL when shuffled or without data */
    const int64_t *labels;   /* its count labels; NULL without labels */
} nc_batch;

/* An iterator over a data set. Keeps pointers to x and labels (the caller
 * keeps both alive and unchanged while it iterates, and frees them). */
typedef struct nc_batches nc_batches;

/* x: the data, (N, *sample), any dtype; NULL to iterate positions only
 * (options.samples then says how many). labels: NULL or int64 with one
 * value per sample iterated (at least `samples`). The first pass is ready
 * (shuffled where asked). The caller owns *out. */
NC_API nc_status nc_batches_create(const nc_tensor *x, const nc_tensor *labels, const nc_batches_options *opt,
                                   nc_batches **out);
NC_API void nc_batches_free(nc_batches *it); /* NULL is a no-op */

/* The next batch of this rank's pass into *b: 1, or 0 when the pass is
 * over (and for a NULL iterator). Reports progress first (see options). */
NC_API int nc_batches_next(nc_batches *it, nc_batch *b);
/* Starts the next pass (an epoch): reshuffled when shuffling. */
NC_API void nc_batches_rewind(nc_batches *it);

/* Batches and samples of this rank's pass. */
NC_API int64_t nc_batches_count(const nc_batches *it);
NC_API int64_t nc_batches_samples(const nc_batches *it);

/* The batch's rows, b->padded of them (zeros after the first b->count),
 * into dst (b->padded × the elements of a sample, in x's dtype). */
NC_API nc_status nc_batches_copy(const nc_batches *it, const nc_batch *b, void *dst);
/* The same as a new tensor (b->padded, *sample_shape), owned by the caller;
 * sample_shape NULL: x's own per-sample shape. The sample shape must hold
 * as many elements as x's samples do. */
NC_API nc_status nc_batches_tensor(const nc_batches *it, const nc_batch *b, int sample_ndim,
                                   const int64_t *sample_shape, nc_tensor **out);

#ifdef __cplusplus
}
#endif

#endif /* NEUROC_BATCHES_H */
