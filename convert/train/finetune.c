/* BPTT fine-tuning of a spiking network (include/neuroc/convert.h): the
 * public face of the training engine (convert/train/train.h) with a batch chosen
 * from a memory budget, per-epoch reports and resumable schedules. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <string.h>
#include <time.h>

#include "snn/base/alloc.h"
#include "snn/base/clock.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"
#include "train_internal.h"

/* The defaults resolve() and nc_train's options give zero fields, written out. */
void nc_finetune_options_init(nc_finetune_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->timesteps = 4;
    o->epochs = 3;
    o->lr = 1e-4f;
    o->batch = 64;
    o->surrogate = NC_SURROGATE_KIND_TRIANGLE;
    o->surrogate_width = 1.0f;
    o->optimizer = NC_OPTIMIZER_ADAM;
    o->momentum = 0.9f;
    o->threads = 1;
}

static nc_status resolve(const nc_finetune_options *in, nc_finetune_options *o)
{
    static const nc_finetune_options none;
    *o = in ? *in : none;
    if (o->timesteps == 0)
        o->timesteps = 4;
    if (o->epochs == 0)
        o->epochs = 3;
    if (o->lr == 0.0f)
        o->lr = 1e-4f;
    if (o->batch == 0)
        o->batch = 64;
    if (o->timesteps < 1 || o->timesteps > 100000 || o->epochs < 1 || o->batch < 1 || !(o->lr > 0.0f) ||
        o->max_memory < 0 || o->start_epoch < 0 || (int)o->surrogate < 0 ||
        (int)o->surrogate > NC_SURROGATE_KIND_ATAN || (int)o->optimizer < 0 || (int)o->optimizer > NC_OPTIMIZER_SGD)
        return nc_errorf(NC_ERR_INVALID_ARG,
                         "fine-tuning: bad options (T %d, epochs %d, batch %d, lr %g, max memory %lld, start epoch "
                         "%d, surrogate %d, optimizer %d)",
                         o->timesteps, o->epochs, o->batch, (double)o->lr, (long long)o->max_memory,
                         o->start_epoch, (int)o->surrogate, (int)o->optimizer);
    return NC_OK;
}

/* Bytes per sample and fixed bytes of training state (see nc_snn_finetune_plan).
 * Doubles keep the sums free of overflow; the estimate is an upper bound
 * of the engine's buffers, not an exact count. */
static void estimate(const nc_snn *s, int T, int optimizer, double *per_sample, double *fixed)
{
    double per = 0.0, params = 0.0;
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        per += 4.0 * (double)nc_snn_layer_size(L) * (3.0 * T + 1.0);
        if (L->weight)
            params += (double)L->weight->numel;
        if (L->bias)
            params += (double)L->bias->numel;
        if (L->threshold)
            params += (double)L->threshold->numel;
    }
    /* the batch's input copy, logits and their gradient */
    per += 4.0 * ((double)nc_snn_layer_size(&s->layers[0]) +
                  2.0 * (double)nc_snn_layer_size(&s->layers[nc_snn_output_id(s)]));
    *per_sample = per;
    *fixed = params * 4.0 * (optimizer == 1 ? 3.0 : 4.0);
}

static nc_status plan(const nc_snn *s, const nc_finetune_options *o, int *batch, int64_t *bytes)
{
    double per, fixed;
    estimate(s, o->timesteps, o->optimizer, &per, &fixed);
    int B = o->batch;
    if (o->max_memory > 0) {
        double budget = (double)o->max_memory;
        if (fixed + per > budget)
            return nc_errorf(NC_ERR_LIMIT,
                             "fine-tuning needs about %.0f bytes (%.1f MiB) for one sample at T = %d (%.1f MiB of "
                             "weights, gradients and optimiser state, %.1f MiB of activations per sample), more "
                             "than the memory budget of %lld bytes (%.1f MiB)",
                             fixed + per, (fixed + per) / 1048576.0, o->timesteps, fixed / 1048576.0,
                             per / 1048576.0, (long long)o->max_memory, budget / 1048576.0);
        double fit = floor((budget - fixed) / per);
        if (fit < (double)B)
            B = (int)fit;
    }
    if (batch)
        *batch = B;
    if (bytes)
        *bytes = (int64_t)(fixed + per * B);
    return NC_OK;
}

nc_status nc_snn_finetune_plan(const nc_snn *s, const nc_finetune_options *opts, int *batch, int64_t *bytes)
{
    if (!s || s->n_layers < 2)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_finetune_plan: network is NULL or empty");
    nc_finetune_options o;
    nc_status st = resolve(opts, &o);
    return st != NC_OK ? st : plan(s, &o, batch, bytes);
}

/* A different shuffle every epoch, the same one for an epoch when resumed. */
static uint64_t epoch_seed(uint64_t seed, int epoch)
{
    uint64_t z = seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(epoch + 1));
    return nc_splitmix64(&z);
}

/* The arguments of nc_snn_finetune; *o and *B when they pass. */
static nc_status check_call(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_tensor *val_x,
                            const nc_tensor *val_labels, const nc_finetune_options *opts, nc_finetune_options *o,
                            int *B)
{
    if (!s || s->n_layers < 2)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_finetune: network is NULL or empty");
    if (!x || !labels || x->ndim < 1 || x->shape[0] < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_finetune: training data or labels missing or empty");
    if (!val_x != !val_labels)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_finetune: validation data needs validation labels (and back)");
    nc_status st = resolve(opts, o);
    if (st != NC_OK)
        return st;
    if (o->start_epoch >= o->epochs)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_finetune: start epoch %d leaves nothing of %d epochs to run",
                         o->start_epoch, o->epochs);
    return plan(s, o, B, NULL);
}

nc_status nc_snn_finetune(nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_tensor *val_x,
                          const nc_tensor *val_labels, const nc_finetune_options *opts)
{
    nc_finetune_options o;
    int B;
    nc_status st = check_call(s, x, labels, val_x, val_labels, opts, &o, &B);
    /* a process group: one rank's bad argument ends the call on every rank */
    if ((st = nc_dist_agree_status(opts ? opts->dist : NULL, st, "checking the fine-tuning's arguments")) != NC_OK)
        return st;
    int64_t N = x->shape[0];
    /* B is per rank: a step takes B samples from each of the group's ranks */
    int64_t GB = (int64_t)B * nc_dist_size(o.dist) < N ? (int64_t)B * nc_dist_size(o.dist) : N;
    int64_t steps_per_epoch = (N + GB - 1) / GB;

    nc_train_options t = {
        .mode = NC_TRAIN_BPTT,
        .timesteps = o.timesteps,
        .epochs = 1,
        .batch = B,
        .lr = o.lr,
        .weight_decay = o.weight_decay,
        .train_thresholds = o.train_thresholds ? 1 : -1,
        .progress = o.progress,
        .progress_user = o.progress_user,
        .optimizer = o.optimizer,
        .momentum = o.momentum,
        .grad_clip = o.grad_clip,
        .surrogate = (int)o.surrogate,
        .surrogate_width = o.surrogate_width,
        .detach_reset = o.detach_reset,
        .threads = o.threads,
        .lr_total_steps = steps_per_epoch * o.epochs,
        .dist = o.dist,
        .energy_weight = o.energy_weight,
    };
    nc_optim optim;
    memset(&optim, 0, sizeof optim);
    if (o.optimizer_state) {
        if (o.optimizer_state->dtype != NC_DTYPE_F32)
            return nc_errorf(NC_ERR_INVALID_ARG, "nc_snn_finetune: the optimiser state must be float32");
        optim.pending = nc_f32(o.optimizer_state);
        optim.pending_len = o.optimizer_state->numel;
        optim.pending_steps = o.optimizer_steps;
    }
    t.optim = &optim;
    nc_tensor *state = NULL;
    /* One engine call per epoch so the caller can checkpoint between them;
     * the schedule runs over all epochs through lr_step0. */
    for (int e = o.start_epoch; st == NC_OK && e < o.epochs; e++) {
        t.seed = epoch_seed(o.seed, e);
        t.lr_step0 = steps_per_epoch * e;
        nc_train_stats ts;
        double t0 = nc_monotonic_s();
        if ((st = nc_train_ex(s, x, labels, &t, &ts)) != NC_OK)
            break;
        nc_finetune_epoch r = {.epoch = e + 1, .epochs = o.epochs, .batch = B, .loss = ts.loss,
                               .accuracy = ts.accuracy, .val_loss = -1.0, .val_accuracy = -1.0, .samples = N,
                               .seconds = nc_monotonic_s() - t0, .optimizer_steps = optim.t};
        if (val_x && (st = nc_bptt_evaluate_dist(s, val_x, val_labels, o.timesteps, o.dist, &r.val_loss,
                                                 &r.val_accuracy)) != NC_OK)
            break;
        if (o.on_epoch) {
            int64_t len = nc_optim_state_len(&optim);
            if (!state && !(state = nc_tensor_new(NC_DTYPE_F32, 1, &len))) {
                st = nc_errorf(NC_ERR_NOMEM, "out of memory copying the optimiser state (%lld values)",
                               (long long)len);
            } else {
                nc_optim_state_get(&optim, nc_f32(state));
                r.optimizer_state = state;
                st = o.on_epoch(s, &r, o.epoch_user);
            }
        }
        /* a process group: the callback may fail on one rank only (rank 0
         * writes the checkpoints), and the others must not start the next
         * epoch's collectives without it */
        st = nc_dist_agree_status(o.dist, st, "the end of an epoch");
    }
    nc_tensor_free(state);
    nc_optim_free(&optim);
    return st;
}
