/* The data-parallel paths (snn/base/dist.h) without MPI: a process group of two
 * threads in this process, whose collectives meet at a barrier, runs the
 * same calls the ranks of `mpirun -np 2` make. Runs in every build (and
 * under the sanitizers). Checks that
 *  - conversion (percentile per channel) and evaluation of the shipped MLP
 *    on the 256 shipped images give each rank the single-process result, the
 *    JSON report byte for byte, while each rank evaluated only its share
 *    (its progress total);
 *  - a rank given other data fails with a clear error on both ranks;
 *  - a rank that fails before a collective ends the other with an error,
 *    not a hang: through the library's status agreement (the other rank
 *    reports "failed on rank 1 of 2: <rank 1's message>"), or, where the
 *    rank returns before any library call, through this test's group
 *    (bad calibration data, labels, label values, a fine-tuning epoch
 *    callback failing on rank 0 only, a missing model file on rank 1);
 *  - the group: ranks in different collectives both fail, naming them;
 *  - fine-tuning 2 ranks x batch 16 equals 1 process x batch 32 (SGD, two
 *    steps) within 1e-6, and the weights moved;
 *  - the shares and the histogram merge: a histogram of half the values
 *    merged with one of the other half is the histogram of all of them. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, setenv */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "convert/calibrate.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "snn/ir/snn_ir.h"
#include "snn/base/tensor.h"
#include "testutil.h"

/* ---- a group of two threads
 *
 * The collectives meet at a barrier of their own that cannot hang: a rank
 * whose thread has returned calls no more collectives, so a collective
 * that would wait for it fails at once ("rank 1 left the group"); the two
 * ranks must be in the same collective (same call, count and type), or
 * both fail naming the two; and a wait longer than RANK_WAIT_S (a
 * deadlock the rules above miss) fails too. After any such failure the
 * group is broken and every later collective on either rank fails at
 * once, so a test ends with an error on both ranks, never in a hang. */

enum { RANK_WAIT_S = 30 }; /* far above any gap between two collectives here, also under the sanitizers */

typedef struct tgroup {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived;       /* ranks waiting at the current barrier */
    unsigned gen;      /* barriers passed */
    int left[2];       /* rank r's thread has returned */
    int broken;        /* a barrier failed: so do all later ones */
    char call[2][96];  /* the collective each rank is in */
    char why[256];     /* why the group broke */
    const void *in[2];
} tgroup;

static void group_init(tgroup *g)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
}

static void group_destroy(tgroup *g)
{
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

/* Under g->mu: marks the group broken, wakes the other rank. */
static void group_break(tgroup *g, const char *why)
{
    if (!g->broken)
        snprintf(g->why, sizeof g->why, "%s", why);
    g->broken = 1;
    pthread_cond_broadcast(&g->cv);
}

/* Waits until both ranks reach a barrier in the collective `call`. */
static nc_status meet(const nc_dist *d, const char *call)
{
    tgroup *g = d->impl;
    int me = d->rank, other = 1 - me;
    char why[256];
    pthread_mutex_lock(&g->mu);
    snprintf(g->call[me], sizeof g->call[me], "%s", call);
    unsigned gen = g->gen;
    if (g->broken) {
        /* nothing to do: fails below */
    } else if (g->left[other]) {
        snprintf(why, sizeof why, "rank %d left the group before %s", other, call);
        group_break(g, why);
    } else if (++g->arrived == 2) {
        /* the last to arrive checks that both are in the same collective */
        if (strcmp(g->call[0], g->call[1]) != 0) {
            snprintf(why, sizeof why, "rank 0 is in %s, rank 1 in %s", g->call[0], g->call[1]);
            group_break(g, why);
        }
        g->arrived = 0;
        g->gen++;
        pthread_cond_broadcast(&g->cv);
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += RANK_WAIT_S;
        int rc = 0;
        while (g->gen == gen && !g->broken && !g->left[other] && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&g->cv, &g->mu, &until);
        if (g->gen == gen && !g->broken) {
            if (g->left[other])
                snprintf(why, sizeof why, "rank %d left the group while rank %d waited in %s", other, me, call);
            else
                snprintf(why, sizeof why, "rank %d waited %d s in %s for rank %d", me, RANK_WAIT_S, call, other);
            group_break(g, why);
        }
    }
    nc_status st = NC_OK;
    if (g->broken)
        st = nc_errorf(NC_ERR_DEVICE, "test process group: %s", g->why);
    pthread_mutex_unlock(&g->mu);
    return st;
}

static size_t esize(nc_dist_type t) { return t == NC_DIST_F32 ? 4 : 8; }

static const char *type_name(nc_dist_type t)
{
    return t == NC_DIST_I64 ? "i64" : t == NC_DIST_U64 ? "u64" : t == NC_DIST_F64 ? "f64" : "f32";
}

static double get(const void *p, int64_t k, nc_dist_type t)
{
    switch (t) {
    case NC_DIST_I64: return (double)((const int64_t *)p)[k];
    case NC_DIST_U64: return (double)((const uint64_t *)p)[k];
    case NC_DIST_F64: return ((const double *)p)[k];
    default: return ((const float *)p)[k];
    }
}

static nc_status t_allreduce(const nc_dist *d, void *buf, int64_t n, nc_dist_type t, nc_dist_op op)
{
    tgroup *g = d->impl;
    size_t bytes = (size_t)n * esize(t);
    char call[96];
    snprintf(call, sizeof call, "allreduce(%lld %s, op %d)", (long long)n, type_name(t), (int)op);
    void *mine = malloc(bytes);
    if (!mine)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    memcpy(mine, buf, bytes);
    g->in[d->rank] = mine;
    nc_status st = meet(d, call);
    if (st != NC_OK) {
        free(mine);
        return st;
    }
    const void *other = g->in[1 - d->rank];
    const void *lo = d->rank == 0 ? mine : other, *hi = d->rank == 0 ? other : mine;
    for (int64_t k = 0; k < n; k++) {
        if (t == NC_DIST_I64 || t == NC_DIST_U64) { /* exact integers: no double round trip */
            int64_t x = ((const int64_t *)lo)[k], y = ((const int64_t *)hi)[k];
            if (op == NC_DIST_SUM) /* unsigned: wraps like MPI's, no overflow */
                ((uint64_t *)buf)[k] = (uint64_t)x + (uint64_t)y;
            else if (t == NC_DIST_U64) {
                uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
                ((uint64_t *)buf)[k] = op == NC_DIST_MAX ? (ux > uy ? ux : uy) : (ux < uy ? ux : uy);
            } else
                ((int64_t *)buf)[k] = op == NC_DIST_MAX ? (x > y ? x : y) : (x < y ? x : y);
        } else {
            /* rank order, as MPI_Reduce to rank 0 would add them */
            double a = get(lo, k, t), b = get(hi, k, t);
            double r = op == NC_DIST_SUM ? a + b : op == NC_DIST_MAX ? fmax(a, b) : fmin(a, b);
            if (t == NC_DIST_F32)
                ((float *)buf)[k] = op == NC_DIST_SUM ? (float)a + (float)b : (float)r;
            else
                ((double *)buf)[k] = r;
        }
    }
    st = meet(d, "the end of an allreduce");
    free(mine);
    return st;
}

static nc_status t_allgatherv(const nc_dist *d, const void *send, void *recv, const int64_t *bytes)
{
    tgroup *g = d->impl;
    char call[96];
    snprintf(call, sizeof call, "allgatherv(%lld + %lld bytes)", (long long)bytes[0], (long long)bytes[1]);
    int64_t off = d->rank == 0 ? 0 : bytes[0];
    g->in[d->rank] = send ? send : (char *)recv + off;
    nc_status st = meet(d, call);
    if (st != NC_OK)
        return st;
    for (int r = 0, o = 0; r < 2; o += (int)bytes[r], r++)
        if (r != d->rank || send)
            memcpy((char *)recv + o, g->in[r], (size_t)bytes[r]);
    return meet(d, "the end of an allgatherv");
}

static const nc_dist_ops T_OPS = {"threads", t_allreduce, t_allgatherv, NULL};

/* A rank's thread: fn, then the rank leaves the group (wakes a waiter). */
typedef struct rank_arg {
    void *(*fn)(void *);
    void *arg;
    tgroup *g;
    int rank;
} rank_arg;

static void *rank_main(void *p)
{
    rank_arg *a = p;
    void *ret = a->fn(a->arg);
    pthread_mutex_lock(&a->g->mu);
    a->g->left[a->rank] = 1;
    pthread_cond_broadcast(&a->g->cv);
    pthread_mutex_unlock(&a->g->mu);
    return ret;
}

/* Runs fn(args[r]) on two threads that form the group g (args[r] starts
 * with an nc_dist, set here) and waits for both. */
static void run_ranks(tgroup *g, void *(*fn)(void *), void *args[2], nc_dist *dists[2])
{
    group_init(g);
    pthread_t th[2];
    rank_arg ra[2];
    for (int r = 0; r < 2; r++) {
        *dists[r] = (nc_dist){.rank = r, .size = 2, .ops = &T_OPS, .impl = g};
        ra[r] = (rank_arg){fn, args[r], g, r};
        assert_int_equal(pthread_create(&th[r], NULL, rank_main, &ra[r]), 0);
    }
    for (int r = 0; r < 2; r++)
        pthread_join(th[r], NULL);
    group_destroy(g);
}

/* ---- what each rank does */

typedef struct job {
    nc_dist dist;
    const char *model; /* NULL: the shipped MLP */
    const nc_tensor *x, *y;
    nc_status st;
    char err[512];
    char *json;
    int64_t eval_total; /* the evaluation's progress total: this rank's share */
    nc_snn *tuned;
    int epochs;         /* fine-tuning: 0 = 1 */
    int fail_on_epoch;  /* fine-tuning: this rank's epoch callback fails */
} job;

static void on_progress(const char *what, int64_t done, int64_t total, void *user)
{
    (void)done;
    if (strcmp(what, "evaluation") == 0)
        ((job *)user)->eval_total = total;
}

static void finish(job *j, nc_status st)
{
    j->st = st;
    if (st != NC_OK)
        snprintf(j->err, sizeof j->err, "%s", nc_last_error());
}

static void *convert_and_eval(void *arg)
{
    job *j = arg;
    const nc_dist *d = j->dist.ops ? &j->dist : NULL;
    nc_model *m = NULL;
    nc_snn *s = NULL;
    nc_eval_result *r = NULL;
    nc_status st = nc_model_load_onnx(j->model ? j->model : nc_test_src("examples/models/mlp.onnx"), NULL, &m);
    nc_convert_options co = {.per_channel = 1, .dist = d};
    if (st == NC_OK)
        st = nc_convert(m, j->x, NULL, &co, &s, NULL);
    nc_eval_options eo = {.timesteps = 8, .batch = 48, .progress = on_progress, .progress_user = j, .dist = d};
    if (st == NC_OK)
        st = nc_snn_evaluate(s, m, j->x, j->y, &eo, &r);
    if (st == NC_OK)
        j->json = strdup(nc_eval_result_json(r));
    finish(j, st);
    nc_eval_result_free(r);
    nc_snn_free(s);
    nc_model_free(m);
    return NULL;
}

/* as the CLI's, which writes a checkpoint on rank 0 only */
static nc_status epoch_done(const nc_snn *s, const nc_finetune_epoch *e, void *user)
{
    (void)s;
    (void)e;
    return ((job *)user)->fail_on_epoch ? nc_errorf(NC_ERR_IO, "cannot write the checkpoint (a test)") : NC_OK;
}

static void *tune(void *arg)
{
    job *j = arg;
    const nc_dist *d = j->dist.ops ? &j->dist : NULL;
    nc_finetune_options o = {.timesteps = 4, .epochs = j->epochs ? j->epochs : 1, .lr = 0.01f, .optimizer = 1,
                             .batch = d ? 16 : 32, .dist = d, .on_epoch = epoch_done, .epoch_user = j};
    finish(j, nc_snn_finetune(j->tuned, j->x, j->y, NULL, NULL, &o));
    return NULL;
}

/* Runs fn on two threads that form a group (x2/y2: rank 1's data). */
static void run_pair(void *(*fn)(void *), job jobs[2], const nc_tensor *x, const nc_tensor *y,
                     const nc_tensor *x2, const nc_tensor *y2)
{
    tgroup g;
    for (int r = 0; r < 2; r++) {
        jobs[r].x = r ? x2 : x;
        jobs[r].y = r ? y2 : y;
    }
    run_ranks(&g, fn, (void *[2]){&jobs[0], &jobs[1]}, (nc_dist *[2]){&jobs[0].dist, &jobs[1].dist});
}

static void load_data(nc_tensor **x, nc_tensor **y)
{
    NC_ASSERT_OK(nc_data_load(nc_test_src("examples/data/fmnist_test_x.npy"), NC_DTYPE_F32, x));
    NC_ASSERT_OK(nc_data_load(nc_test_src("examples/data/fmnist_test_y.npy"), NC_DTYPE_I64, y));
}

static void test_eval_equals_one_process(void **state)
{
    (void)state;
    nc_tensor *x, *y;
    load_data(&x, &y);
    job one = {.x = x, .y = y}, two[2];
    memset(two, 0, sizeof two);
    convert_and_eval(&one);
    if (one.st != NC_OK)
        fail_msg("one process: %s", one.err);
    run_pair(convert_and_eval, two, x, y, x, y);
    for (int r = 0; r < 2; r++) {
        if (two[r].st != NC_OK)
            fail_msg("rank %d: %s", r, two[r].err);
        assert_string_equal(two[r].json, one.json);
        free(two[r].json);
    }
    /* 256 samples in batches of 48: 6 batches, 3 a rank (144 and 112 samples) */
    assert_int_equal(one.eval_total, 256);
    assert_int_equal(two[0].eval_total, 144);
    assert_int_equal(two[1].eval_total, 112);
    free(one.json);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

static void test_other_data_fails_on_both(void **state)
{
    (void)state;
    nc_tensor *x, *y, *x2 = NULL;
    load_data(&x, &y);
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, nc_tensor_ndim(x), nc_tensor_shape(x), nc_tensor_data(x), &x2));
    ((float *)nc_tensor_data(x2))[5000] += 0.5f;
    job two[2];
    memset(two, 0, sizeof two);
    run_pair(convert_and_eval, two, x, y, x2, y);
    for (int r = 0; r < 2; r++) {
        assert_int_not_equal(two[r].st, NC_OK);
        free(two[r].json);
    }
    /* calibration fails first: the data differ, so do the calibration
     * statistics; the evaluation's own check names the data */
    nc_tensor_free(x2);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

static void test_other_data_named_by_eval(void **state)
{
    (void)state;
    nc_tensor *x, *y, *y2 = NULL;
    load_data(&x, &y);
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, nc_tensor_shape(y), nc_tensor_data(y), &y2));
    int64_t *l = nc_tensor_data(y2);
    l[0] = (l[0] + 1) % 10; /* labels only: conversion agrees, evaluation must not */
    job two[2];
    memset(two, 0, sizeof two);
    run_pair(convert_and_eval, two, x, y, x, y2);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(two[r].st, NC_ERR_INVALID_ARG);
        assert_non_null(strstr(two[r].err, "not the same on every rank: the evaluation data or labels (rank 1"));
    }
    nc_tensor_free(y2);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

/* A rank that fails before its first collective (its model file is
 * missing) and returns: the other, waiting in calibration's first
 * collective, ends with an error instead of waiting for ever (the test
 * harness's group sees that rank 1 left). */
static void test_rank_failing_alone_ends_both(void **state)
{
    (void)state;
    nc_tensor *x, *y;
    load_data(&x, &y);
    job two[2];
    memset(two, 0, sizeof two);
    two[1].model = nc_test_src("tests/fixtures/no-such-model.onnx");
    run_pair(convert_and_eval, two, x, y, x, y);
    for (int r = 0; r < 2; r++) {
        assert_int_not_equal(two[r].st, NC_OK);
        free(two[r].json);
    }
    assert_non_null(strstr(two[1].err, "no-such-model.onnx"));
    assert_non_null(strstr(two[0].err, "rank 1 left the group"));
    nc_tensor_free(x);
    nc_tensor_free(y);
}

/* Rank 1 fails a check of its own input; rank 0 must fail with rank 1's
 * status and message through the library's agreement (nc_dist_agree_status),
 * not through the test harness noticing that rank 1 left. */
static void expect_failed_together(const job two[2], const char *reason)
{
    for (int r = 0; r < 2; r++)
        if (two[r].st == NC_OK)
            fail_msg("rank %d succeeded; rank 1 was given bad input", r);
    if (!strstr(two[1].err, reason))
        fail_msg("rank 1's message '%s' lacks '%s'", two[1].err, reason);
    char want[600];
    snprintf(want, sizeof want, "failed on rank 1 of 2: %s", two[1].err);
    if (!strstr(two[0].err, want))
        fail_msg("rank 0's message '%s' lacks '%s'", two[0].err, want);
    assert_int_equal(two[0].st, two[1].st);
}

static void test_bad_input_on_one_rank_fails_both(void **state)
{
    (void)state;
    nc_tensor *x, *y, *x2 = NULL, *y2 = NULL;
    load_data(&x, &y);
    job two[2];

    /* calibration data of another shape: nc_calibrate's own check */
    int64_t xs[2] = {256, 784};
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, xs, nc_tensor_data(x), &x2));
    memset(two, 0, sizeof two);
    run_pair(convert_and_eval, two, x, y, x2, y);
    expect_failed_together(two, "calibration data [256, 784]");
    nc_tensor_free(x2);

    /* one label too few: the evaluation's argument check */
    int64_t ys[1] = {255};
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, ys, nc_tensor_data(y), &y2));
    memset(two, 0, sizeof two);
    run_pair(convert_and_eval, two, x, y, x, y2);
    expect_failed_together(two, "labels");
    for (int r = 0; r < 2; r++)
        free(two[r].json);
    nc_tensor_free(y2);

    /* a label out of range: training's data check, before its first
     * collective (the hashes of network, data and options) */
    int64_t s64[4] = {64, 1, 28, 28}, l64[1] = {64};
    nc_tensor *x64 = NULL, *y64 = NULL;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, s64, nc_tensor_data(x), &x64));
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, l64, nc_tensor_data(y), &y64));
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, l64, nc_tensor_data(y), &y2));
    ((int64_t *)nc_tensor_data(y2))[3] = 99;
    nc_model *m = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("examples/models/mlp.onnx"), NULL, &m));
    memset(two, 0, sizeof two);
    for (int r = 0; r < 2; r++)
        NC_ASSERT_OK(nc_convert(m, x64, NULL, NULL, &two[r].tuned, NULL));
    run_pair(tune, two, x64, y64, x64, y2);
    expect_failed_together(two, "label 99 of sample 3");
    for (int r = 0; r < 2; r++)
        nc_snn_free(two[r].tuned);

    /* the epoch callback fails on rank 0 only (its checkpoint): rank 1
     * must not go on into the next epoch's collectives */
    memset(two, 0, sizeof two);
    for (int r = 0; r < 2; r++) {
        NC_ASSERT_OK(nc_convert(m, x64, NULL, NULL, &two[r].tuned, NULL));
        two[r].epochs = 2;
    }
    two[0].fail_on_epoch = 1;
    run_pair(tune, two, x64, y64, x64, y64);
    assert_int_equal(two[0].st, NC_ERR_IO);
    assert_int_equal(two[1].st, NC_ERR_IO);
    assert_non_null(strstr(two[1].err, "the end of an epoch failed on rank 0 of 2: cannot write the checkpoint"));
    for (int r = 0; r < 2; r++)
        nc_snn_free(two[r].tuned);
    nc_model_free(m);
    nc_tensor_free(y2);
    nc_tensor_free(x64);
    nc_tensor_free(y64);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

static double max_diff(const nc_snn *a, const nc_snn *b, double *moved_from, const nc_snn *base)
{
    double worst = 0.0, moved = 0.0;
    for (int i = 0; i < a->n_layers; i++) {
        const nc_tensor *ta[2] = {a->layers[i].weight, a->layers[i].bias};
        const nc_tensor *tb[2] = {b->layers[i].weight, b->layers[i].bias};
        const nc_tensor *t0[2] = {base->layers[i].weight, base->layers[i].bias};
        for (int k = 0; k < 2; k++)
            for (int64_t e = 0; ta[k] && e < ta[k]->numel; e++) {
                double d = fabs((double)nc_f32(ta[k])[e] - nc_f32(tb[k])[e]);
                double m = fabs((double)nc_f32(ta[k])[e] - nc_f32(t0[k])[e]);
                worst = d > worst ? d : worst;
                moved = m > moved ? m : moved;
            }
    }
    *moved_from = moved;
    return worst;
}

static void test_finetune_two_ranks_half_batch(void **state)
{
    (void)state;
    nc_tensor *x, *y, *x64 = NULL, *y64 = NULL;
    load_data(&x, &y);
    int64_t xs[4] = {64, 1, 28, 28}, ys[1] = {64};
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 4, xs, nc_tensor_data(x), &x64));
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_I64, 1, ys, nc_tensor_data(y), &y64));
    nc_model *m = NULL;
    nc_snn *base = NULL;
    NC_ASSERT_OK(nc_model_load_onnx(nc_test_src("examples/models/mlp.onnx"), NULL, &m));
    NC_ASSERT_OK(nc_convert(m, x64, NULL, NULL, &base, NULL));
    job one = {.x = x64, .y = y64}, two[2];
    memset(two, 0, sizeof two);
    /* conversion is deterministic: three equal copies of the network */
    NC_ASSERT_OK(nc_convert(m, x64, NULL, NULL, &one.tuned, NULL));
    tune(&one);
    if (one.st != NC_OK)
        fail_msg("one process: %s", one.err);
    for (int r = 0; r < 2; r++)
        NC_ASSERT_OK(nc_convert(m, x64, NULL, NULL, &two[r].tuned, NULL));
    run_pair(tune, two, x64, y64, x64, y64);
    for (int r = 0; r < 2; r++) {
        if (two[r].st != NC_OK)
            fail_msg("rank %d: %s", r, two[r].err);
        double moved, d = max_diff(two[r].tuned, one.tuned, &moved, base);
        if (!(d <= 1e-6) || !(moved > 1e-4))
            fail_msg("rank %d: weights differ by %g from one process's (tolerance 1e-6); moved %g", r, d, moved);
        nc_snn_free(two[r].tuned);
    }
    nc_snn_free(one.tuned);
    nc_snn_free(base);
    nc_model_free(m);
    nc_tensor_free(x64);
    nc_tensor_free(y64);
    nc_tensor_free(x);
    nc_tensor_free(y);
}

typedef struct hm {
    nc_dist d;
    nc_hist *h;
} hm;

static void *hist_merge_thread(void *arg)
{
    hm *a = arg;
    nc_status st = nc_hist_merge(&a->d, a->h, 1, NC_OK);
    return st == NC_OK ? NULL : arg;
}

/* The group itself: ranks in different collectives both fail, naming
 * them, and the broken group fails the next collective at once. */
typedef struct mm {
    nc_dist d;
    nc_status st[2];
    char err[256];
} mm;

static void *mismatched_sums(void *arg)
{
    mm *a = arg;
    int64_t v[2] = {1, 2};
    a->st[0] = nc_dist_sum_i64(&a->d, v, 1 + a->d.rank);
    snprintf(a->err, sizeof a->err, "%s", nc_last_error());
    a->st[1] = nc_dist_sum_i64(&a->d, v, 1);
    return NULL;
}

static void test_group_mismatch_fails_both(void **state)
{
    (void)state;
    tgroup g;
    mm a[2];
    memset(a, 0, sizeof a);
    run_ranks(&g, mismatched_sums, (void *[2]){&a[0], &a[1]}, (nc_dist *[2]){&a[0].d, &a[1].d});
    for (int r = 0; r < 2; r++) {
        assert_int_not_equal(a[r].st[0], NC_OK);
        assert_int_not_equal(a[r].st[1], NC_OK);
        assert_non_null(strstr(a[r].err, "rank 0 is in allreduce(1 i64, op 0), rank 1 in allreduce(2 i64, op 0)"));
    }
}

/* Ranks on one node spread over its GPUs by the launcher's local rank. */
static void test_device_for_process(void **state)
{
    (void)state;
    unsetenv("NEUROC_CUDA_DEVICE");
    unsetenv("MPI_LOCALRANKID");
    unsetenv("MV2_COMM_WORLD_LOCAL_RANK");
    unsetenv("SLURM_LOCALID");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
    assert_int_equal(nc_dist_device_for_process(4), 0);
    setenv("SLURM_LOCALID", "6", 1);
    assert_int_equal(nc_dist_device_for_process(4), 2);
    setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1); /* Open MPI's comes first */
    assert_int_equal(nc_dist_device_for_process(4), 3);
    assert_int_equal(nc_dist_device_for_process(1), 0);
    setenv("NEUROC_CUDA_DEVICE", "junk", 1); /* not a number: ignored */
    assert_int_equal(nc_dist_device_for_process(4), 3);
    setenv("NEUROC_CUDA_DEVICE", "1", 1);
    assert_int_equal(nc_dist_device_for_process(4), 1);
    unsetenv("NEUROC_CUDA_DEVICE");
    unsetenv("SLURM_LOCALID");
    unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

/* The public constructor (<neuroc/dist.h>) that MPI code outside the
 * library uses: arguments checked with *out NULL (impl stays the caller's:
 * release not called), the state handed back, release called once, with
 * impl, by nc_dist_free. */
static int g_released;
static void count_release(void *impl)
{
    g_released += impl == (void *)&g_released;
}

static void test_create_and_free(void **state)
{
    (void)state;
    static const nc_dist_ops ops = {"count", t_allreduce, t_allgatherv, count_release};
    static const nc_dist_ops no_gather = {"half", t_allreduce, NULL, count_release};
    static nc_dist junk;
    nc_dist *d = &junk; /* must come back NULL */
    assert_int_equal(nc_dist_create(NULL, &g_released, 0, 2, &d), NC_ERR_INVALID_ARG);
    assert_null(d);
    assert_int_equal(nc_dist_create(&no_gather, &g_released, 0, 2, &d), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_dist_create(&ops, &g_released, 2, 2, &d), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "rank 2 of a group of 2"));
    assert_int_equal(nc_dist_create(&ops, &g_released, 0, 0, &d), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_dist_create(&ops, &g_released, -1, 2, &d), NC_ERR_INVALID_ARG);
    assert_int_equal(nc_dist_create(&ops, &g_released, 0, 2, NULL), NC_ERR_INVALID_ARG);
    assert_null(d);
    assert_int_equal(g_released, 0);
    NC_ASSERT_OK(nc_dist_create(&ops, &g_released, 1, 3, &d));
    assert_int_equal(nc_dist_rank(d), 1);
    assert_int_equal(nc_dist_size(d), 3);
    assert_ptr_equal(nc_dist_impl(d), &g_released);
    assert_null(nc_dist_impl(NULL));
    nc_dist_free(d);
    assert_int_equal(g_released, 1);
    nc_dist_free(NULL);
    assert_int_equal(nc_dist_errorf(NC_ERR_DEVICE, "MPI_%s failed on rank %d", "Bcast", 1), NC_ERR_DEVICE);
    assert_string_equal(nc_last_error(), "MPI_Bcast failed on rank 1");
}

static void test_shares_and_histogram_merge(void **state)
{
    (void)state;
    int64_t lo, hi, prev = 0;
    for (int r = 0; r < 3; r++) {
        nc_dist_share_of(10, r, 3, &lo, &hi);
        assert_int_equal(lo, prev);
        assert_true(hi - lo == 3 || hi - lo == 4);
        prev = hi;
    }
    assert_int_equal(prev, 10);
    enum { N = 5000 };
    float *v = malloc(N * sizeof *v);
    uint64_t z = 7;
    for (int i = 0; i < N; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        v[i] = (float)((double)((z >> 33) % 100000) / 997.0 - 10.0); /* some <= 0 */
    }
    nc_hist *all = calloc(1, sizeof *all), *part = calloc(2, sizeof *part);
    nc_hist_add(all, v, N);
    /* halves in small pieces, so each half's range grows several times */
    for (int i = 0; i < N; i += 100)
        nc_hist_add(&part[i < N / 2 ? 0 : 1], v + i, 100);
    tgroup g;
    hm a[2];
    for (int r = 0; r < 2; r++)
        a[r].h = &part[r];
    run_ranks(&g, hist_merge_thread, (void *[2]){&a[0], &a[1]}, (nc_dist *[2]){&a[0].d, &a[1].d});
    for (int r = 0; r < 2; r++)
        assert_memory_equal(&part[r], all, sizeof *all);
    free(v);
    free(all);
    free(part);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_device_for_process),
        cmocka_unit_test(test_shares_and_histogram_merge),
        cmocka_unit_test(test_create_and_free),
        cmocka_unit_test(test_eval_equals_one_process),
        cmocka_unit_test(test_other_data_fails_on_both),
        cmocka_unit_test(test_other_data_named_by_eval),
        cmocka_unit_test(test_group_mismatch_fails_both),
        cmocka_unit_test(test_rank_failing_alone_ends_both),
        cmocka_unit_test(test_bad_input_on_one_rank_fails_both),
        cmocka_unit_test(test_finetune_two_ranks_half_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
