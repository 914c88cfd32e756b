/* The training loop (convert/train/train.h): option defaults, data checks,
 * shuffled mini-batches, loss, backward, optimiser steps, progress; and the
 * evaluation of the QCFS and BPTT views. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/base/alloc.h"
#include "snn/base/blas.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "train_internal.h"

_Thread_local int nc_tr_threads = 1;

static nc_status check_data(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int64_t classes,
                            int64_t *N)
{
    if (!x || !labels)
        return nc_errorf(NC_ERR_INVALID_ARG, "training: data or labels missing");
    if (x->dtype != NC_DTYPE_F32 || x->ndim < 2 || x->shape[0] < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "training: data must be float32 (N, *input) with N >= 1");
    int64_t in = nc_snn_layer_size(&s->layers[0]);
    if (x->numel / x->shape[0] != in) {
        char a[64], b[64];
        return nc_errorf(NC_ERR_SHAPE, "training: data samples have shape %s but the network's input is %s",
                         nc_shape_str(x->ndim - 1, x->shape + 1, a, sizeof a),
                         nc_shape_str(s->layers[0].ndim, s->layers[0].shape, b, sizeof b));
    }
    if (labels->dtype != NC_DTYPE_I64 || labels->numel != x->shape[0])
        return nc_errorf(NC_ERR_SHAPE, "training: labels must be %lld int64 values (one per sample); got %lld",
                         (long long)x->shape[0], (long long)labels->numel);
    const int64_t *lab = nc_i64(labels);
    for (int64_t i = 0; i < labels->numel; i++)
        if (lab[i] < 0 || lab[i] >= classes)
            return nc_errorf(NC_ERR_INVALID_ARG, "training: label %lld of sample %lld is outside [0, %lld)",
                             (long long)lab[i], (long long)i, (long long)classes);
    *N = x->shape[0];
    return NC_OK;
}

/* Options with their defaults filled in, and the engine's configuration. */
static nc_status resolve(const nc_train_options *in, nc_train_options *o, nc_tr_config *c)
{
    static const nc_train_options none;
    *o = in ? *in : none;
    if (o->mode != NC_TRAIN_QCFS && o->mode != NC_TRAIN_BPTT)
        return nc_errorf(NC_ERR_INVALID_ARG, "training: unknown mode %d", (int)o->mode);
    if (o->levels == 0)
        o->levels = 8;
    if (o->timesteps == 0)
        o->timesteps = 4;
    if (o->epochs == 0)
        o->epochs = 1;
    if (o->batch == 0)
        o->batch = 64;
    if (o->lr == 0.0f)
        o->lr = 1e-3f;
    if (o->momentum == 0.0f)
        o->momentum = 0.9f;
    if (o->surrogate_width == 0.0f)
        o->surrogate_width = 1.0f;
    if (o->threads == 0)
        o->threads = 1;
    if (o->levels < 1 || o->epochs < 0 || o->batch < 1 || !(o->lr > 0.0f) || o->timesteps < 1 ||
        !(o->weight_decay >= 0.0f) || !(o->grad_clip >= 0.0f) || !(o->surrogate_width > 0.0f) ||
        o->surrogate < 0 || o->surrogate > NC_SURROGATE_ATAN || o->optimizer < 0 || o->optimizer > 1 ||
        o->threads < 1 || o->threads > 1024)
        return nc_errorf(NC_ERR_INVALID_ARG,
                         "training: bad options (levels %d, epochs %d, batch %d, lr %g, T %d, weight decay %g, "
                         "clip %g, surrogate %d width %g, optimizer %d)",
                         o->levels, o->epochs, o->batch, (double)o->lr, o->timesteps, (double)o->weight_decay,
                         (double)o->grad_clip, o->surrogate, (double)o->surrogate_width, o->optimizer);
    memset(c, 0, sizeof *c);
    c->mode = o->mode;
    c->levels = o->levels;
    c->T = o->timesteps;
    c->train_thresholds = o->train_thresholds > 0 || (o->train_thresholds == 0 && o->mode == NC_TRAIN_QCFS);
    c->detach_reset = o->detach_reset != 0;
    c->sg = (nc_surrogate)o->surrogate;
    c->sg_width = o->surrogate_width;
    if (!(o->energy_weight >= 0.0f) || !isfinite(o->energy_weight))
        return nc_errorf(NC_ERR_INVALID_ARG, "training: energy weight %g is not a number >= 0",
                         (double)o->energy_weight);
    c->energy_weight = o->mode == NC_TRAIN_BPTT ? o->energy_weight : 0.0f;
    return NC_OK;
}

/* The trainable tensors in the optimiser's order: weight and bias of every
 * linear layer, then the threshold where trainable; each with its gradient. */
static nc_status setup_optim(nc_tr_net *net, const nc_train_options *o, nc_optim *opt)
{
    int rebind = opt->n > 0, k = 0;
    const float *pending = opt->pending;
    int64_t pending_len = opt->pending_len, pending_steps = opt->pending_steps;
    nc_status st = rebind ? NC_OK
                          : nc_optim_init(opt, o->optimizer == 1 ? NC_OPTIM_SGD : NC_OPTIM_ADAM, o->weight_decay,
                                          o->optimizer == 1 ? o->momentum : 0.0f);
    for (int i = 0; st == NC_OK && i < net->n; i++) {
        nc_snn_layer *L = &net->s->layers[i];
        nc_tr_layer *Y = &net->l[i];
        struct {
            nc_tensor *t;
            float *g;
            int decay;
            float min;
        } p[3] = {{Y->dW ? L->weight : NULL, Y->dW, 1, -INFINITY},
                  {Y->dW ? L->bias : NULL, Y->db, 0, -INFINITY},
                  {Y->dth ? L->threshold : NULL, Y->dth, 0, NC_TRAIN_MIN_THRESHOLD}};
        for (int j = 0; st == NC_OK && j < 3; j++) {
            if (!p[j].t)
                continue;
            if (!rebind)
                st = nc_optim_add(opt, nc_f32(p[j].t), p[j].g, p[j].t->numel, p[j].decay, p[j].min);
            else if (k >= opt->n || opt->p[k].n != p[j].t->numel)
                st = nc_errorf(NC_ERR_INVALID_ARG, "training: the optimiser state does not match the network's "
                                                   "trainable parameters (layer '%s')", L->name);
            else
                opt->p[k].w = nc_f32(p[j].t), opt->p[k].g = p[j].g;
            k++;
        }
    }
    if (st == NC_OK && rebind && k != opt->n)
        st = nc_errorf(NC_ERR_INVALID_ARG, "training: the optimiser state holds %d tensors, the network trains %d",
                       opt->n, k);
    if (st == NC_OK && !rebind && pending)
        st = nc_optim_state_set(opt, pending, pending_len, pending_steps);
    return st;
}

typedef struct batch_buf {
    float *x, *logits, *dlogits;
} batch_buf;

static void batch_free(batch_buf *b)
{
    nc_free(b->x);
    nc_free(b->logits);
    nc_free(b->dlogits);
}

static nc_status batch_alloc(batch_buf *b, int B, int64_t in, int64_t classes)
{
    memset(b, 0, sizeof *b);
    int64_t nx, nl;
    if (!nc_mul_i64(B, in, &nx) || !nc_mul_i64(B, classes, &nl) || (uint64_t)nx > SIZE_MAX / sizeof(float))
        return nc_errorf(NC_ERR_LIMIT, "training: a batch of %d is too large", B);
    b->x = nc_malloc((size_t)nx * sizeof(float));
    b->logits = nc_malloc((size_t)nl * sizeof(float));
    b->dlogits = nc_malloc((size_t)nl * sizeof(float));
    if (!b->x || !b->logits || !b->dlogits) {
        batch_free(b);
        return nc_errorf(NC_ERR_NOMEM, "out of memory for a training batch of %d", B);
    }
    return NC_OK;
}

nc_status nc_train_ex(nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_train_options *opts,
                      nc_train_stats *stats)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    nc_train_options o;
    nc_tr_config c;
    nc_status st = resolve(opts, &o, &c);
    int64_t N = 0, classes = 0;
    if (st == NC_OK && !s)
        st = nc_errorf(NC_ERR_INVALID_ARG, "nc_train: network is NULL");
    else if (st == NC_OK && s->n_layers < 2)
        st = nc_errorf(NC_ERR_INVALID_ARG, "nc_train: the network has no layers to train");
    if (st == NC_OK) {
        classes = nc_snn_layer_size(&s->layers[nc_snn_output_id(s)]);
        st = check_data(s, x, labels, classes, &N);
    }
    /* a process group: one rank's bad argument ends the call on every rank,
     * before the collectives below */
    if ((st = nc_dist_agree_status(o.dist, st, "checking the training's arguments")) != NC_OK)
        return st;
    /* GB samples a step, over all ranks; B the most one rank takes */
    int G = nc_dist_size(o.dist);
    int64_t GB = (int64_t)o.batch * G < N ? (int64_t)o.batch * G : N;
    int B = (int)((GB + G - 1) / G);
    int64_t in = x->numel / N;
    if (G > 1) {
        /* every rank must train the same network on the same data the same way */
        nc_status cs;
        double lr = o.lr;
        int64_t opt_v[10] = {o.mode, o.levels, o.timesteps, o.epochs, o.batch, (int64_t)o.seed, o.optimizer,
                             o.lr_step0, o.lr_total_steps, 0};
        memcpy(&opt_v[9], &lr, sizeof lr);
        uint64_t h[3] = {nc_hash_snn(s), nc_hash_tensor(nc_hash_tensor(NC_HASH_INIT, x), labels),
                         nc_hash_bytes(NC_HASH_INIT, opt_v, sizeof opt_v)};
        static const char *const what[3] = {"the network to train", "the training data or labels",
                                            "the training options (mode, epochs, batch, seed, lr, ...)"};
        if ((cs = nc_dist_check_same(o.dist, h, what, 3)) != NC_OK)
            return cs;
    }
    int threads_before = nc_tr_threads;
    nc_tr_threads = o.threads;
    int blas_serial = o.threads > 1; /* the products' threads are ours (tr_sgemm) */
    if (blas_serial)
        nc_blas_serial_begin();

    nc_tr_net *net = NULL;
    nc_optim own;
    memset(&own, 0, sizeof own);
    nc_optim *opt = o.optim ? o.optim : &own;
    batch_buf bb;
    memset(&bb, 0, sizeof bb);
    /* shuffled every epoch; each global batch of GB cut into the ranks' shares */
    nc_batches_options bo = {.batch = o.batch, .dist = o.dist, .shard = NC_BATCHES_SHARD_WITHIN, .shuffle = 1,
                             .seed = o.seed};
    nc_batches *it = NULL;
    if ((st = nc_tr_net_create(s, &c, B, &net)) != NC_OK)
        goto set_up;
    if ((st = setup_optim(net, &o, opt)) != NC_OK || (st = batch_alloc(&bb, B, in, classes)) != NC_OK)
        goto set_up;
    st = nc_batches_create(x, labels, &bo, &it);
set_up:
    /* a setup failure on one rank ends the call on all */
    if ((st = nc_dist_agree_status(o.dist, st, "setting up training")) != NC_OK)
        goto done;

    int64_t nb = nc_batches_count(it), total = nb * o.epochs, step = 0;
    for (int e = 0; e < o.epochs; e++) {
        if (e > 0)
            nc_batches_rewind(it); /* the next permutation */
        double loss_sum = 0.0;
        int64_t correct_sum = 0, seen = 0;
        char what[96];
        if (o.progress) {
            snprintf(what, sizeof what, "epoch %d/%d", e + 1, o.epochs);
            o.progress(what, 0, nb, o.progress_user);
        }
        nc_batch bt;
        while (nc_batches_next(it, &bt)) {
            /* this rank's contiguous share of the global batch of gn
             * shuffled samples */
            int64_t b = bt.index, gn = bt.global_count;
            int n = (int)bt.count;
            if ((st = nc_batches_copy(it, &bt, bb.x)) != NC_OK)
                goto done;
            int64_t correct = 0;
            double loss = 0.0;
            if (n > 0) {
                nc_tr_forward(net, bb.x, n);
                nc_tr_logits(net, bb.logits);
                loss = nc_tr_cross_entropy(bb.logits, bt.labels, n, classes, bb.dlogits, &correct);
            }
            if (G > 1) {
                /* the global batch's loss and hits, so every rank decides alike */
                double v[3] = {loss * n, (double)correct, 0.0};
                if ((st = nc_dist_sum_f64(o.dist, v, 3)) != NC_OK)
                    goto done;
                loss = v[0] / (double)gn;
                correct = (int64_t)v[1];
            }
            if (!isfinite(loss)) {
                st = nc_errorf(NC_ERR_INVALID_ARG,
                               "training diverged: the loss is not finite at epoch %d, batch %lld; lower the learning rate",
                               e + 1, (long long)b + 1);
                goto done;
            }
            if (n > 0)
                nc_tr_backward(net, bb.dlogits);
            else
                nc_optim_zero_grad(opt);
            /* each rank's gradient is its share's mean: weighted by n/gn and
             * summed, it is the global batch's mean */
            if (G > 1 && (st = nc_optim_allreduce(opt, o.dist, (float)n / (float)gn)) != NC_OK)
                goto done;
            if (o.grad_clip > 0.0f)
                nc_optim_clip(opt, o.grad_clip);
            float lr = o.cosine < 0            ? o.lr
                       : o.lr_total_steps > 0 ? nc_cosine_lr(o.lr, o.lr_step0 + step, o.lr_total_steps)
                                              : nc_cosine_lr(o.lr, step, total);
            nc_optim_step(opt, lr);
            step++;
            if (G > 1) { /* the same sums and steps must leave the same weights */
                uint64_t h = nc_optim_hash(opt);
                static const char *const what[1] = {"the weights after a step (a bug: please report it)"};
                if ((st = nc_dist_check_same(o.dist, &h, what, 1)) != NC_OK)
                    goto done;
            }
            loss_sum += loss * gn;
            correct_sum += correct;
            seen += gn;
            if (o.progress) {
                snprintf(what, sizeof what, "epoch %d/%d loss %.4f acc %.2f%%", e + 1, o.epochs,
                         loss_sum / (double)seen, 100.0 * (double)correct_sum / (double)seen);
                o.progress(what, b + 1, nb, o.progress_user);
            }
        }
        if (stats) {
            stats->loss = loss_sum / (double)seen;
            stats->accuracy = (double)correct_sum / (double)seen;
        }
    }
    if (stats)
        stats->steps = step;
done:
    nc_batches_free(it);
    batch_free(&bb);
    nc_optim_free(&own);
    nc_tr_net_free(net);
    if (blas_serial)
        nc_blas_serial_end();
    nc_tr_threads = threads_before;
    return st;
}

nc_status nc_train(nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_train_options *o)
{
    return nc_train_ex(s, x, labels, o, NULL);
}

/* Loss and accuracy of the engine's view of s, in batches. */
static nc_status evaluate(const nc_snn *s, const nc_tr_config *c, const nc_tensor *x, const nc_tensor *labels,
                          const nc_dist *dist, double *loss, double *accuracy)
{
    if (loss)
        *loss = 0.0;
    if (accuracy)
        *accuracy = 0.0;
    /* a process group: a rank failing here takes part in the agreement the
     * others meet after their batches */
    if (!s || s->n_layers < 2)
        return nc_dist_agree_status(
            dist, nc_errorf(NC_ERR_INVALID_ARG, "evaluation: network is NULL or empty"), "evaluation");
    int64_t N, classes = nc_snn_layer_size(&s->layers[nc_snn_output_id(s)]);
    nc_status st = check_data(s, x, labels, classes, &N);
    if (st != NC_OK)
        return nc_dist_agree_status(dist, st, "evaluation");
    int B = N < 256 ? (int)N : 256;
    int64_t in = x->numel / N;
    nc_tr_net *net = NULL;
    batch_buf bb;
    memset(&bb, 0, sizeof bb);
    /* the engine only reads the network when nothing is trained */
    if ((st = nc_tr_net_create((nc_snn *)s, c, B, &net)) == NC_OK)
        st = batch_alloc(&bb, B, in, classes);
    /* a process group: this rank's run of the batches, sums added up */
    double v[2] = {0.0, 0.0}; /* loss sum, hits */
    nc_batches_options bo = {.batch = B, .dist = dist};
    nc_batches *it = NULL;
    nc_batch b;
    if (st == NC_OK)
        st = nc_batches_create(x, labels, &bo, &it);
    while (st == NC_OK && nc_batches_next(it, &b)) {
        int n = (int)b.count;
        nc_tr_forward(net, b.data, n);
        nc_tr_logits(net, bb.logits);
        int64_t correct;
        v[0] += nc_tr_cross_entropy(bb.logits, b.labels, n, classes, NULL, &correct) * n;
        v[1] += (double)correct;
    }
    nc_batches_free(it);
    batch_free(&bb);
    nc_tr_net_free(net);
    if ((st = nc_dist_agree_status(dist, st, "evaluation")) == NC_OK)
        st = nc_dist_sum_f64(dist, v, 2);
    if (st != NC_OK)
        return st;
    if (loss)
        *loss = v[0] / (double)N;
    if (accuracy)
        *accuracy = v[1] / (double)N;
    return NC_OK;
}

nc_status nc_qcfs_evaluate(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int levels,
                           double *loss, double *accuracy)
{
    nc_tr_config c = {.mode = NC_TRAIN_QCFS, .levels = levels ? levels : 8};
    return evaluate(s, &c, x, labels, NULL, loss, accuracy);
}

nc_status nc_bptt_evaluate(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int timesteps,
                           double *loss, double *accuracy)
{
    return nc_bptt_evaluate_dist(s, x, labels, timesteps, NULL, loss, accuracy);
}

nc_status nc_bptt_evaluate_dist(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int timesteps,
                                const nc_dist *dist, double *loss, double *accuracy)
{
    nc_tr_config c = {.mode = NC_TRAIN_BPTT, .T = timesteps ? timesteps : 4, .sg_width = 1.0f};
    return evaluate(s, &c, x, labels, dist, loss, accuracy);
}
