/* The data-set batch iterator (include/neuroc/batches.h). Checks that
 *  - under every shard and group size (ranks faked: the shares need only a
 *    rank and a size) every sample is handed out exactly once, each rank's
 *    share is the one the data-parallel paths have always taken (whole
 *    batches aligned to the single-process ones; n·r/size samples; each
 *    global batch cut in rank order, every rank walking every batch), and
 *    the count and sample totals agree with what is handed out;
 *  - padding fills the last batch with zero rows, in nc_batches_copy and
 *    nc_batches_tensor alike, in the data's dtype, with a sample reshaped;
 *  - progress goes 0 .. total of this rank's share, one call a batch and
 *    one at the end;
 *  - shuffling is the trainer's Fisher–Yates over splitmix64, the same for
 *    a seed whatever the batch size, the next permutation after a rewind,
 *    with labels and rows gathered through it;
 *  - bad arguments fail cleanly, with *out NULL; NULL is safe everywhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snn/base/dist.h"
#include "testutil.h"

static nc_tensor *f32_rows(int64_t n, int64_t per)
{
    int64_t shape[2] = {n, per};
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 2, shape, &t));
    float *d = nc_tensor_data(t);
    for (int64_t i = 0; i < n * per; i++)
        d[i] = (float)(i + 1); /* no zeros: padding is recognisable */
    return t;
}

static nc_tensor *i64_labels(int64_t n)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_I64, 1, &n, &t));
    int64_t *d = nc_tensor_data(t);
    for (int64_t i = 0; i < n; i++)
        d[i] = 1000 + i;
    return t;
}

/* ---- shares */

static void check_shard(int64_t n, int64_t batch, int size, nc_batches_shard shard)
{
    int *seen = calloc((size_t)(n ? n : 1), sizeof *seen);
    int64_t within_batches = -1, next_lo = 0;
    for (int r = 0; r < size; r++) {
        nc_dist d = {.rank = r, .size = size};
        nc_batches_options o = {.batch = batch, .samples = n, .dist = &d, .shard = shard};
        nc_batches *it = NULL;
        NC_ASSERT_OK(nc_batches_create(NULL, NULL, &o, &it));
        nc_batch b;
        int64_t k = 0, samples = 0, lo, hi;
        nc_dist_share_of(n, r, size, &lo, &hi);
        while (nc_batches_next(it, &b)) {
            assert_int_equal(b.index, k++);
            assert_true(b.count >= 0 && b.count <= batch);
            assert_int_equal(b.padded, b.count);
            assert_null(b.rows);
            assert_null(b.data);
            assert_null(b.labels);
            for (int64_t i = b.first; i < b.first + b.count; i++) {
                assert_true(i >= 0 && i < n);
                seen[i]++;
            }
            samples += b.count;
            if (shard == NC_BATCHES_SHARD_BATCHES) {
                /* the single-process batch k' = first / batch, whole */
                assert_int_equal(b.first % batch, 0);
                assert_int_equal(b.count, n - b.first < batch ? n - b.first : batch);
                assert_int_equal(b.first, next_lo); /* contiguous, in rank order */
                next_lo += b.count;
            } else if (shard == NC_BATCHES_SHARD_SAMPLES) {
                assert_int_equal(b.first, lo + (k - 1) * batch);
                assert_true(b.first + b.count <= hi);
            } else {
                /* the share of global batch k of min(size·batch, n) samples */
                int64_t gb = batch * size < n ? batch * size : n, l, h;
                assert_int_equal(b.global_first, (k - 1) * gb);
                assert_int_equal(b.global_count, n - b.global_first < gb ? n - b.global_first : gb);
                nc_dist_share_of(b.global_count, r, size, &l, &h);
                assert_int_equal(b.first, b.global_first + l);
                assert_int_equal(b.count, h - l);
            }
            if (shard != NC_BATCHES_SHARD_WITHIN) {
                assert_int_equal(b.global_first, b.first);
                assert_int_equal(b.global_count, b.count);
            }
        }
        assert_int_equal(nc_batches_count(it), k);
        assert_int_equal(nc_batches_samples(it), samples);
        if (shard == NC_BATCHES_SHARD_SAMPLES)
            assert_int_equal(samples, hi - lo);
        if (shard == NC_BATCHES_SHARD_WITHIN) {
            /* every rank takes part in every step */
            if (within_batches >= 0)
                assert_int_equal(k, within_batches);
            within_batches = k;
        }
        assert_int_equal(nc_batches_next(it, &b), 0); /* stays over */
        nc_batches_free(it);
    }
    for (int64_t i = 0; i < n; i++)
        if (seen[i] != 1)
            fail_msg("n %lld batch %lld size %d shard %d: sample %lld handed out %d times", (long long)n,
                     (long long)batch, size, (int)shard, (long long)i, seen[i]);
    if (shard == NC_BATCHES_SHARD_BATCHES)
        assert_int_equal(next_lo, n);
    free(seen);
}

static void test_shards_cover_once(void **state)
{
    (void)state;
    static const int64_t ns[] = {1, 2, 5, 7, 64, 100, 257};
    static const int64_t batches[] = {1, 3, 8, 64, 100, 1000};
    static const int sizes[] = {1, 2, 3, 5, 8};
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++)
        for (size_t b = 0; b < sizeof batches / sizeof *batches; b++)
            for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++)
                for (int s = NC_BATCHES_SHARD_BATCHES; s <= NC_BATCHES_SHARD_WITHIN; s++)
                    check_shard(ns[a], batches[b], sizes[c], (nc_batches_shard)s);
}

/* The shares the data-parallel paths have taken since they were written:
 * 10 samples, batch 4, 2 ranks. */
static void test_shards_known(void **state)
{
    (void)state;
    static const struct {
        nc_batches_shard shard;
        int rank;
        int64_t first[3], count[3];
        int n;
    } want[] = {
        {NC_BATCHES_SHARD_BATCHES, 0, {0}, {4}, 1},         /* batches 0 | 1, 2 */
        {NC_BATCHES_SHARD_BATCHES, 1, {4, 8}, {4, 2}, 2},
        {NC_BATCHES_SHARD_SAMPLES, 0, {0, 4}, {4, 1}, 2},   /* samples 0..4 | 5..9 */
        {NC_BATCHES_SHARD_SAMPLES, 1, {5, 9}, {4, 1}, 2},
        {NC_BATCHES_SHARD_WITHIN, 0, {0, 8}, {4, 1}, 2},    /* global batches of 8, 2 */
        {NC_BATCHES_SHARD_WITHIN, 1, {4, 9}, {4, 1}, 2},
    };
    for (size_t w = 0; w < sizeof want / sizeof *want; w++) {
        nc_dist d = {.rank = want[w].rank, .size = 2};
        nc_batches_options o = {.batch = 4, .samples = 10, .dist = &d, .shard = want[w].shard};
        nc_batches *it = NULL;
        NC_ASSERT_OK(nc_batches_create(NULL, NULL, &o, &it));
        nc_batch b;
        int k = 0;
        while (nc_batches_next(it, &b)) {
            assert_true(k < want[w].n);
            assert_int_equal(b.first, want[w].first[k]);
            assert_int_equal(b.count, want[w].count[k]);
            k++;
        }
        assert_int_equal(k, want[w].n);
        nc_batches_free(it);
    }
}

/* ---- padding and copies */

static void test_padding(void **state)
{
    (void)state;
    int64_t xs[3] = {10, 2, 3};
    nc_tensor *x = NULL, *y = i64_labels(10);
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 3, xs, &x));
    float *xd = nc_tensor_data(x);
    for (int i = 0; i < 60; i++)
        xd[i] = (float)(i + 1);
    for (int pad = 0; pad <= 1; pad++) {
        nc_batches_options o = {.batch = 4, .pad = pad};
        nc_batches *it = NULL;
        NC_ASSERT_OK(nc_batches_create(x, y, &o, &it));
        assert_int_equal(nc_batches_count(it), 3);
        nc_batch b;
        float buf[4 * 6];
        while (nc_batches_next(it, &b)) {
            int64_t want = b.index < 2 ? 4 : 2;
            assert_int_equal(b.first, b.index * 4);
            assert_int_equal(b.count, want);
            assert_int_equal(b.padded, pad ? 4 : want);
            assert_ptr_equal(b.data, xd + b.first * 6);
            assert_ptr_equal(b.labels, (const int64_t *)nc_tensor_data_const(y) + b.first);
            /* the data's own sample shape, and the same values as (6) */
            nc_tensor *t = NULL, *t6 = NULL;
            int64_t six = 6;
            NC_ASSERT_OK(nc_batches_tensor(it, &b, 0, NULL, &t));
            NC_ASSERT_OK(nc_batches_tensor(it, &b, 1, &six, &t6));
            assert_int_equal(nc_tensor_ndim(t), 3);
            assert_int_equal(nc_tensor_shape(t)[0], b.padded);
            assert_int_equal(nc_tensor_shape(t)[1], 2);
            assert_int_equal(nc_tensor_shape(t)[2], 3);
            assert_int_equal(nc_tensor_ndim(t6), 2);
            assert_int_equal(nc_tensor_shape(t6)[1], 6);
            memset(buf, 0xff, sizeof buf);
            NC_ASSERT_OK(nc_batches_copy(it, &b, buf));
            const float *td = nc_tensor_data_const(t), *t6d = nc_tensor_data_const(t6);
            for (int64_t i = 0; i < b.padded * 6; i++) {
                float v = i < b.count * 6 ? xd[b.first * 6 + i] : 0.0f;
                assert_true(td[i] == v && t6d[i] == v && buf[i] == v);
            }
            nc_tensor_free(t);
            nc_tensor_free(t6);
        }
        /* a sample shape that does not hold 6 values */
        nc_batches_rewind(it);
        assert_int_equal(nc_batches_next(it, &b), 1);
        int64_t five = 5, neg[2] = {-1, -6};
        nc_tensor *t = (nc_tensor *)&t; /* not NULL: the failure must clear it */
        assert_int_equal(nc_batches_tensor(it, &b, 1, &five, &t), NC_ERR_SHAPE);
        assert_null(t);
        assert_int_equal(nc_batches_tensor(it, &b, 2, neg, &t), NC_ERR_SHAPE);
        nc_batches_free(it);
    }
    nc_tensor_free(x);
    nc_tensor_free(y);
}

static void test_other_dtypes(void **state)
{
    (void)state;
    int64_t xs[2] = {3, 2};
    uint8_t u8[6] = {1, 2, 3, 4, 5, 6};
    nc_tensor *x = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_U8, 2, xs, u8, &x));
    nc_batches_options o = {.batch = 2, .pad = 1};
    nc_batches *it = NULL;
    NC_ASSERT_OK(nc_batches_create(x, NULL, &o, &it));
    nc_batch b;
    assert_int_equal(nc_batches_next(it, &b), 1);
    assert_int_equal(nc_batches_next(it, &b), 1); /* the last: sample 2 and a zero row */
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_batches_tensor(it, &b, 0, NULL, &t));
    assert_int_equal(nc_tensor_dtype(t), NC_DTYPE_U8);
    const uint8_t *d = nc_tensor_data_const(t);
    assert_int_equal(d[0], 5);
    assert_int_equal(d[1], 6);
    assert_int_equal(d[2], 0);
    assert_int_equal(d[3], 0);
    nc_tensor_free(t);
    nc_batches_free(it);
    nc_tensor_free(x);
}

/* ---- progress */

typedef struct plog {
    int calls;
    int64_t done[16], total;
    char what[32];
} plog;

static void on_progress(const char *what, int64_t done, int64_t total, void *user)
{
    plog *p = user;
    assert_true(p->calls < 16);
    snprintf(p->what, sizeof p->what, "%s", what);
    p->done[p->calls++] = done;
    if (p->calls > 1)
        assert_int_equal(total, p->total);
    p->total = total;
}

static void test_progress(void **state)
{
    (void)state;
    /* one process: 0, 4, 8, 10 of 10 */
    plog p = {0};
    nc_batches_options o = {.batch = 4, .samples = 10, .progress = on_progress, .what = "calibration",
                            .progress_user = &p};
    nc_batches *it = NULL;
    NC_ASSERT_OK(nc_batches_create(NULL, NULL, &o, &it));
    nc_batch b;
    while (nc_batches_next(it, &b))
        ;
    assert_int_equal(nc_batches_next(it, &b), 0); /* over: no further report */
    assert_int_equal(p.calls, 4);
    assert_int_equal(p.done[0], 0);
    assert_int_equal(p.done[1], 4);
    assert_int_equal(p.done[2], 8);
    assert_int_equal(p.done[3], 10);
    assert_int_equal(p.total, 10);
    assert_string_equal(p.what, "calibration");
    /* a new pass reports from 0 again */
    nc_batches_rewind(it);
    p.calls = 0;
    while (nc_batches_next(it, &b))
        ;
    assert_int_equal(p.calls, 4);
    assert_int_equal(p.done[3], 10);
    nc_batches_free(it);

    /* rank 1 of 2, whole batches of 4: its share is batches 1 and 2
     * (samples 4 .. 9) after rank 0's batch 0 */
    nc_dist d = {.rank = 1, .size = 2};
    memset(&p, 0, sizeof p);
    o.what = NULL;
    o.dist = &d;
    NC_ASSERT_OK(nc_batches_create(NULL, NULL, &o, &it));
    while (nc_batches_next(it, &b))
        ;
    assert_int_equal(p.calls, 3);
    assert_int_equal(p.done[0], 0);
    assert_int_equal(p.done[1], 4);
    assert_int_equal(p.done[2], 6);
    assert_int_equal(p.total, 6);
    assert_string_equal(p.what, "batches");
    nc_batches_free(it);

    /* a share with no batch at all still says where it stands, once */
    nc_dist d3 = {.rank = 0, .size = 3}; /* ranks 1 and 2 take the two */
    memset(&p, 0, sizeof p);
    o.dist = &d3;
    o.samples = 8; /* two batches for three ranks */
    NC_ASSERT_OK(nc_batches_create(NULL, NULL, &o, &it));
    assert_int_equal(nc_batches_next(it, &b), 0);
    assert_int_equal(p.calls, 1);
    assert_int_equal(p.total, 0);
    nc_batches_free(it);
}

/* ---- shuffling */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The permutation the trainer drew before the iterator existed: Fisher–Yates
 * from the end, the generator continued from epoch to epoch. */
static void reference_shuffle(int64_t *perm, int64_t n, uint64_t *rng)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(splitmix64(rng) % (uint64_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* The rows of one pass, in order. */
static void pass_rows(nc_batches *it, const nc_tensor *x, const nc_tensor *y, int64_t *rows, int64_t n)
{
    nc_batch b;
    int64_t k = 0;
    float buf[8 * 3];
    while (nc_batches_next(it, &b)) {
        assert_non_null(b.rows);
        assert_null(b.data);
        NC_ASSERT_OK(nc_batches_copy(it, &b, buf));
        for (int64_t i = 0; i < b.count; i++) {
            assert_true(k < n);
            rows[k++] = b.rows[i];
            assert_int_equal(b.labels[i], ((const int64_t *)nc_tensor_data_const(y))[b.rows[i]]);
            for (int c = 0; c < 3; c++)
                assert_true(buf[i * 3 + c] == ((const float *)nc_tensor_data_const(x))[b.rows[i] * 3 + c]);
        }
    }
    assert_int_equal(k, n);
}

static void test_shuffle(void **state)
{
    (void)state;
    enum { N = 37 };
    nc_tensor *x = f32_rows(N, 3), *y = i64_labels(N);
    int64_t ref[N], got[N], other[N];
    for (int64_t i = 0; i < N; i++)
        ref[i] = i;
    uint64_t rng = 42;
    nc_batches_options o = {.batch = 8, .shuffle = 1, .seed = 42};
    nc_batches *it = NULL, *it2 = NULL;
    NC_ASSERT_OK(nc_batches_create(x, y, &o, &it));
    o.batch = 5; /* the batch size does not change the order */
    NC_ASSERT_OK(nc_batches_create(x, y, &o, &it2));
    for (int pass = 0; pass < 3; pass++) {
        reference_shuffle(ref, N, &rng);
        pass_rows(it, x, y, got, N);
        pass_rows(it2, x, y, other, N);
        assert_memory_equal(got, ref, sizeof ref);
        assert_memory_equal(other, ref, sizeof ref);
        nc_batches_rewind(it);
        nc_batches_rewind(it2);
    }
    nc_batches_free(it);
    nc_batches_free(it2);

    /* another seed, another order; still a permutation */
    o.seed = 43;
    NC_ASSERT_OK(nc_batches_create(x, y, &o, &it));
    pass_rows(it, x, y, got, N);
    int seen[N] = {0}, same = 1;
    for (int64_t i = 0; i < N; i++) {
        seen[got[i]]++;
        same &= got[i] == other[i];
    }
    for (int64_t i = 0; i < N; i++)
        assert_int_equal(seen[i], 1);
    assert_false(same);
    nc_batches_free(it);

    /* the training shares: two ranks, each global batch of 2·4 shuffled
     * samples cut in two, together the one-process permutation */
    int64_t two[N];
    int64_t k0 = 0;
    for (int r = 0; r < 2; r++) {
        nc_dist d = {.rank = r, .size = 2};
        nc_batches_options t = {.batch = 4, .shuffle = 1, .seed = 43, .dist = &d, .shard = NC_BATCHES_SHARD_WITHIN};
        NC_ASSERT_OK(nc_batches_create(x, y, &t, &it));
        nc_batch b;
        while (nc_batches_next(it, &b))
            for (int64_t i = 0; i < b.count; i++)
                two[b.first + i] = b.rows[i], k0++;
        nc_batches_free(it);
    }
    assert_int_equal(k0, N);
    assert_memory_equal(two, got, sizeof two);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

/* ---- arguments */

static void test_arguments(void **state)
{
    (void)state;
    nc_tensor *x = f32_rows(4, 2), *y = i64_labels(4), *y3 = i64_labels(3), *xf = f32_rows(4, 1);
    nc_batches *it = (nc_batches *)&it;
    nc_batch b;
    nc_batches_free(NULL);
    nc_batches_rewind(NULL);
    assert_int_equal(nc_batches_next(NULL, &b), 0);
    assert_int_equal(nc_batches_count(NULL), 0);
    assert_int_equal(nc_batches_samples(NULL), 0);
    assert_int_equal(nc_batches_create(x, NULL, NULL, NULL), NC_ERR_INVALID_ARG);

    nc_batches_options neg = {.batch = -1};
    assert_int_equal(nc_batches_create(x, NULL, &neg, &it), NC_ERR_INVALID_ARG);
    assert_null(it);
    nc_batches_options many = {.samples = 5};
    assert_int_equal(nc_batches_create(x, NULL, &many, &it), NC_ERR_SHAPE);
    assert_int_equal(nc_batches_create(x, y3, NULL, &it), NC_ERR_SHAPE); /* a label short */
    assert_int_equal(nc_batches_create(x, xf, NULL, &it), NC_ERR_SHAPE);  /* float labels */
    assert_int_equal(nc_batches_create(NULL, NULL, NULL, &it), NC_ERR_INVALID_ARG);
    assert_null(it);

    /* defaults: batch 64, all samples; the first 3 with samples = 3 */
    NC_ASSERT_OK(nc_batches_create(x, y, NULL, &it));
    assert_int_equal(nc_batches_next(it, &b), 1);
    assert_int_equal(b.count, 4);
    assert_int_equal(nc_batches_copy(it, &b, NULL), NC_ERR_INVALID_ARG);
    nc_batch forged = b;
    forged.count = 5;
    float buf[16];
    assert_int_equal(nc_batches_copy(it, &forged, buf), NC_ERR_INVALID_ARG);
    nc_batches_free(it);
    nc_batches_options three = {.samples = 3};
    NC_ASSERT_OK(nc_batches_create(x, y3, &three, &it));
    assert_int_equal(nc_batches_next(it, &b), 1);
    assert_int_equal(b.count, 3);
    nc_batches_free(it);

    /* a batch near 2^63: one batch of everything, in every shard */
    for (int sh = NC_BATCHES_SHARD_BATCHES; sh <= NC_BATCHES_SHARD_WITHIN; sh++) {
        nc_dist d = {.rank = 2, .size = 3}; /* the rank that takes the one batch */
        nc_batches_options huge = {.batch = INT64_MAX, .samples = 5, .dist = &d, .shard = (nc_batches_shard)sh};
        NC_ASSERT_OK(nc_batches_create(NULL, NULL, &huge, &it));
        assert_int_equal(nc_batches_count(it), 1);
        assert_int_equal(nc_batches_samples(it), sh == NC_BATCHES_SHARD_BATCHES ? 5 : 2); /* else samples 3, 4 */
        nc_batches_free(it);
    }

    /* positions only: no rows to copy */
    nc_batches_options pos = {.samples = 3};
    NC_ASSERT_OK(nc_batches_create(NULL, NULL, &pos, &it));
    assert_int_equal(nc_batches_next(it, &b), 1);
    assert_int_equal(nc_batches_copy(it, &b, buf), NC_ERR_INVALID_ARG);
    nc_tensor *t = NULL;
    assert_int_equal(nc_batches_tensor(it, &b, 0, NULL, &t), NC_ERR_INVALID_ARG);
    assert_null(t);
    nc_batches_free(it);
    nc_tensor_free(x);
    nc_tensor_free(xf);
    nc_tensor_free(y);
    nc_tensor_free(y3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shards_cover_once), cmocka_unit_test(test_shards_known),
        cmocka_unit_test(test_padding),           cmocka_unit_test(test_other_dtypes),
        cmocka_unit_test(test_progress),          cmocka_unit_test(test_shuffle),
        cmocka_unit_test(test_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
