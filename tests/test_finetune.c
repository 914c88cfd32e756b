/* nc_snn_finetune (include/neuroc/convert.h): the batch chosen from a memory
 * budget with hand-worked byte counts, the error when one sample does not
 * fit, per-epoch reports, and a resumed run (start_epoch) that reproduces an
 * uninterrupted one bit for bit; the energy term (energy_weight) trains
 * fewer spikes. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "neuroc/convert.h"
#include "snn/ir/snn_ir.h"
#include "snn/base/tensor.h"

static uint64_t g_rng = 7;

static float urand(float lo, float hi)
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)(g_rng >> 40) * (1.0f / 16777216.0f);
}

static nc_tensor *rand_tensor(int ndim, const int64_t *shape, float lo, float hi)
{
    nc_tensor *t = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, ndim, shape, &t));
    float *d = nc_tensor_data(t);
    for (int64_t i = 0; i < nc_tensor_numel(t); i++)
        d[i] = urand(lo, hi);
    return t;
}

static int add_affine(nc_snn *s, int from, int64_t in, int64_t out)
{
    int64_t ws[2] = {out, in};
    nc_tensor *w = rand_tensor(2, ws, -0.4f, 0.4f), *b = rand_tensor(1, &out, -0.1f, 0.1f);
    int id;
    NC_ASSERT_OK(nc_snn_add_affine(s, from, w, b, NULL, &id));
    nc_tensor_free(w);
    nc_tensor_free(b);
    return id;
}

/* input 16 → Affine 32 → IF 32 (one θ) → Affine 4 → readout.
 * Neurons per sample: 16 + 32 + 32 + 4 + 4 = 88. Parameters:
 * 16·32 + 32 + 1 + 32·4 + 4 = 677. */
static nc_snn *small_net(uint64_t seed)
{
    g_rng = seed;
    int64_t shape[1] = {16}, one = 1;
    nc_snn *s = NULL;
    NC_ASSERT_OK(nc_snn_create(1, shape, &s));
    int a = add_affine(s, 0, 16, 32), n, o, id;
    nc_tensor *th = NULL;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 1, &one, &th));
    *(float *)nc_tensor_data(th) = 1.0f;
    nc_if_params p = {.threshold = th};
    NC_ASSERT_OK(nc_snn_add_if(s, a, &p, NULL, &n));
    nc_tensor_free(th);
    o = add_affine(s, n, 32, 4);
    NC_ASSERT_OK(nc_snn_add_readout(s, o, NULL, &id));
    return s;
}

/* Per sample at T = 4: 4·88·(3·4 + 1) = 4576 bytes of layer state plus
 * 4·(16 + 2·4) = 96 of input and logits = 4672. Fixed: 677 parameters ×
 * 4 bytes × 4 (weight, gradient, two Adam moments) = 10832; SGD × 3 = 8124. */
enum { PER = 4672, FIXED_ADAM = 10832, FIXED_SGD = 8124 };

static void test_plan_bytes(void **state)
{
    (void)state;
    nc_snn *s = small_net(1);
    int batch;
    int64_t bytes;
    nc_finetune_options o = {.timesteps = 4};
    NC_ASSERT_OK(nc_snn_finetune_plan(s, &o, &batch, &bytes));
    assert_int_equal(batch, 64); /* the default, no budget */
    assert_int_equal(bytes, FIXED_ADAM + 64 * PER);
    o.optimizer = 1;
    o.batch = 8;
    NC_ASSERT_OK(nc_snn_finetune_plan(s, &o, &batch, &bytes));
    assert_int_equal(batch, 8);
    assert_int_equal(bytes, FIXED_SGD + 8 * PER);
    nc_snn_free(s);
}

static void test_plan_budget(void **state)
{
    (void)state;
    nc_snn *s = small_net(1);
    int batch;
    int64_t bytes;
    nc_finetune_options o = {.timesteps = 4, .batch = 64};
    /* room for 10 samples and a bit: the largest batch that fits is 10 */
    o.max_memory = FIXED_ADAM + 10 * PER + 100;
    NC_ASSERT_OK(nc_snn_finetune_plan(s, &o, &batch, &bytes));
    assert_int_equal(batch, 10);
    assert_int_equal(bytes, FIXED_ADAM + 10 * PER);
    /* exactly one sample */
    o.max_memory = FIXED_ADAM + PER;
    NC_ASSERT_OK(nc_snn_finetune_plan(s, &o, &batch, NULL));
    assert_int_equal(batch, 1);
    /* a budget above the requested batch keeps it */
    o.max_memory = (int64_t)1 << 40;
    o.batch = 12;
    NC_ASSERT_OK(nc_snn_finetune_plan(s, &o, &batch, NULL));
    assert_int_equal(batch, 12);
    /* one byte short of one sample: NC_ERR_LIMIT naming need and budget */
    o.max_memory = FIXED_ADAM + PER - 1;
    batch = -7;
    assert_int_equal(nc_snn_finetune_plan(s, &o, &batch, NULL), NC_ERR_LIMIT);
    assert_int_equal(batch, -7);
    assert_non_null(strstr(nc_last_error(), "15504 bytes"));
    assert_non_null(strstr(nc_last_error(), "15503 bytes"));
    nc_snn_free(s);
}

typedef struct blobs {
    nc_tensor *x, *y;
} blobs;

/* 40 samples in 4 classes: the label is the quarter of x that sums highest. */
static blobs make_data(void)
{
    blobs d;
    int64_t xs[2] = {40, 16}, n = 40;
    g_rng = 99;
    d.x = rand_tensor(2, xs, 0.0f, 1.0f);
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_I64, 1, &n, &d.y));
    const float *x = nc_tensor_data(d.x);
    int64_t *y = nc_tensor_data(d.y);
    for (int i = 0; i < 40; i++) {
        float best = -1.0f;
        for (int c = 0; c < 4; c++) {
            float sum = 0.0f;
            for (int k = 0; k < 4; k++)
                sum += x[i * 16 + c * 4 + k];
            if (sum > best) {
                best = sum;
                y[i] = c;
            }
        }
    }
    return d;
}

typedef struct epochs_seen {
    int n, epoch[8], batch[8];
    double loss[8], val[8];
    int stop_after;
    nc_tensor *state;      /* the optimiser state after the last epoch seen */
    int64_t steps;
} epochs_seen;

static nc_status record_epoch(const nc_snn *s, const nc_finetune_epoch *e, void *user)
{
    epochs_seen *r = user;
    assert_non_null(s);
    assert_true(r->n < 8);
    r->epoch[r->n] = e->epoch;
    r->batch[r->n] = e->batch;
    r->loss[r->n] = e->loss;
    r->val[r->n] = e->val_accuracy;
    r->n++;
    assert_int_equal(e->samples, 40);
    assert_non_null(e->optimizer_state);
    assert_true(e->optimizer_steps > 0);
    nc_tensor_free(r->state);
    r->state = nc_tensor_clone(e->optimizer_state);
    r->steps = e->optimizer_steps;
    return r->stop_after && e->epoch == r->stop_after ? NC_ERR_INTERNAL : NC_OK;
}

static void assert_same_weights(const nc_snn *a, const nc_snn *b)
{
    assert_int_equal(a->n_layers, b->n_layers);
    for (int i = 0; i < a->n_layers; i++) {
        const nc_snn_layer *A = &a->layers[i], *B = &b->layers[i];
        if (A->weight) {
            assert_memory_equal(A->weight->data, B->weight->data, (size_t)A->weight->numel * sizeof(float));
            assert_memory_equal(A->bias->data, B->bias->data, (size_t)A->bias->numel * sizeof(float));
        }
    }
}

static void test_finetune_epochs_and_resume(void **state)
{
    (void)state;
    blobs d = make_data();
    nc_snn *full = small_net(3), *part = small_net(3);
    epochs_seen r = {0};
    nc_finetune_options o = {.timesteps = 4, .epochs = 2, .lr = 3e-3f, .batch = 64, .seed = 5,
                             .max_memory = FIXED_ADAM + 10 * PER + 100, .on_epoch = record_epoch,
                             .epoch_user = &r};
    NC_ASSERT_OK(nc_snn_finetune(full, d.x, d.y, d.x, d.y, &o));
    assert_int_equal(r.n, 2);
    assert_int_equal(r.epoch[0], 1);
    assert_int_equal(r.epoch[1], 2);
    assert_int_equal(r.batch[0], 10); /* from the budget */
    assert_true(r.val[0] >= 0.0 && r.val[0] <= 1.0);

    /* interrupted after epoch 1 (the callback's status is returned) ... */
    epochs_seen r2 = {.stop_after = 1};
    o.epoch_user = &r2;
    assert_int_equal(nc_snn_finetune(part, d.x, d.y, NULL, NULL, &o), NC_ERR_INTERNAL);
    assert_int_equal(r2.n, 1);
    assert_true(r2.loss[0] == r.loss[0]);
    /* ... resumed without the optimiser's moments: Adam starts afresh, so
     * the weights differ from the whole run's ... */
    nc_snn *fresh = small_net(3);
    nc_finetune_options o2 = o;
    o2.on_epoch = NULL;
    o2.epochs = 1;
    NC_ASSERT_OK(nc_snn_finetune(fresh, d.x, d.y, NULL, NULL, &o2));
    o2.epochs = 2;
    o2.start_epoch = 1;
    NC_ASSERT_OK(nc_snn_finetune(fresh, d.x, d.y, NULL, NULL, &o2));
    assert_memory_not_equal(fresh->layers[1].weight->data, full->layers[1].weight->data,
                            (size_t)full->layers[1].weight->numel * sizeof(float));
    /* ... a state of the wrong size is refused ... */
    int64_t three = 3;
    nc_tensor *bad = nc_tensor_new(NC_DTYPE_F32, 1, &three);
    o2.optimizer_state = bad;
    o2.optimizer_steps = 1;
    assert_int_equal(nc_snn_finetune(fresh, d.x, d.y, NULL, NULL, &o2), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "does not fit"));
    nc_tensor_free(bad);
    nc_snn_free(fresh);
    /* ... and resumed with them: epoch 2 only, the same weights as the whole run */
    assert_int_equal(r2.steps, 4); /* 40 samples in batches of 10 */
    epochs_seen r3 = {0};
    o.epoch_user = &r3;
    o.start_epoch = 1;
    o.optimizer_state = r2.state;
    o.optimizer_steps = r2.steps;
    NC_ASSERT_OK(nc_snn_finetune(part, d.x, d.y, NULL, NULL, &o));
    assert_int_equal(r3.n, 1);
    assert_int_equal(r3.epoch[0], 2);
    assert_true(r3.loss[0] == r.loss[1]);
    assert_true(r3.val[0] < 0.0); /* no validation data */
    assert_same_weights(full, part);
    assert_int_equal(r3.steps, 8);
    assert_memory_equal(r3.state->data, r.state->data, (size_t)r.state->numel * sizeof(float));

    /* nothing left to run */
    o.start_epoch = 2;
    assert_int_equal(nc_snn_finetune(part, d.x, d.y, NULL, NULL, &o), NC_ERR_INVALID_ARG);
    nc_tensor_free(r.state);
    nc_tensor_free(r2.state);
    nc_tensor_free(r3.state);
    nc_snn_free(full);
    nc_snn_free(part);
    nc_tensor_free(d.x);
    nc_tensor_free(d.y);
}

static void test_finetune_budget_error(void **state)
{
    (void)state;
    blobs d = make_data();
    nc_snn *s = small_net(3), *ref = small_net(3);
    epochs_seen r = {0};
    nc_finetune_options o = {.timesteps = 4, .epochs = 1, .max_memory = 1024, .on_epoch = record_epoch,
                             .epoch_user = &r};
    assert_int_equal(nc_snn_finetune(s, d.x, d.y, NULL, NULL, &o), NC_ERR_LIMIT);
    assert_non_null(strstr(nc_last_error(), "1024 bytes"));
    assert_int_equal(r.n, 0);
    assert_same_weights(s, ref); /* untouched */
    /* validation data without labels */
    o.max_memory = 0;
    assert_int_equal(nc_snn_finetune(s, d.x, d.y, d.x, NULL, &o), NC_ERR_INVALID_ARG);
    nc_snn_free(s);
    nc_snn_free(ref);
    nc_tensor_free(d.x);
    nc_tensor_free(d.y);
}

/* Synaptic additions per inference at T = 4 (nc_snn_evaluate's estimate). */
static double adds_at_4(const nc_snn *s, const blobs *d)
{
    nc_eval_options eo;
    nc_eval_options_init(&eo);
    eo.timesteps = 4;
    eo.backend = "cpu";
    nc_eval_result *r = NULL;
    NC_ASSERT_OK(nc_snn_evaluate(s, NULL, d->x, d->y, &eo, &r));
    nc_eval_cost c;
    NC_ASSERT_OK(nc_eval_result_cost(r, &c));
    nc_eval_result_free(r);
    return c.synaptic_adds;
}

/* energy_weight: the same run with the energy term in the loss ends with
 * fewer spikes (synaptic additions) than without it; a negative weight is
 * refused. */
static void test_finetune_energy_weight(void **state)
{
    (void)state;
    blobs d = make_data();
    nc_snn *plain = small_net(3), *frugal = small_net(3);
    nc_finetune_options o = {.timesteps = 4, .epochs = 4, .batch = 10, .lr = 1e-2f};
    NC_ASSERT_OK(nc_snn_finetune(plain, d.x, d.y, NULL, NULL, &o));
    o.energy_weight = 5.0f;
    NC_ASSERT_OK(nc_snn_finetune(frugal, d.x, d.y, NULL, NULL, &o));
    double a0 = adds_at_4(plain, &d), a1 = adds_at_4(frugal, &d);
    print_message("additions per inference at T = 4: %.1f without the energy term, %.1f with weight 5\n", a0, a1);
    assert_true(a0 > 0.0);
    assert_true(a1 < 0.8 * a0);
    o.energy_weight = -1.0f;
    assert_int_equal(nc_snn_finetune(frugal, d.x, d.y, NULL, NULL, &o), NC_ERR_INVALID_ARG);
    assert_non_null(strstr(nc_last_error(), "energy weight"));
    nc_snn_free(plain);
    nc_snn_free(frugal);
    nc_tensor_free(d.x);
    nc_tensor_free(d.y);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_bytes),
        cmocka_unit_test(test_plan_budget),
        cmocka_unit_test(test_finetune_epochs_and_resume),
        cmocka_unit_test(test_finetune_budget_error),
        cmocka_unit_test(test_finetune_energy_weight),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
