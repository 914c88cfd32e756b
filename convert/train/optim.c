/* Optimisers for the training engine: Adam (Kingma & Ba 2015, with bias
 * correction) and SGD with momentum, L2 weight decay added to the gradient
 * as torch.optim does, global-norm gradient clipping, a cosine learning-rate
 * schedule, and the engine's own random generator. */
#include <math.h>
#include <string.h>

#include "kernels/hash.h"
#include "snn/base/alloc.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "train_internal.h"

uint64_t nc_splitmix64(uint64_t *state)
{
    return nc_splitmix_mix(*state += 0x9E3779B97F4A7C15ull);
}

nc_status nc_optim_init(nc_optim *o, nc_optim_kind kind, float weight_decay, float momentum)
{
    memset(o, 0, sizeof *o);
    if (kind != NC_OPTIM_ADAM && kind != NC_OPTIM_SGD)
        return nc_errorf(NC_ERR_INVALID_ARG, "training: unknown optimiser %d", (int)kind);
    if (!(weight_decay >= 0.0f) || !(momentum >= 0.0f && momentum < 1.0f))
        return nc_errorf(NC_ERR_INVALID_ARG, "training: weight decay must be >= 0 and momentum in [0, 1)");
    o->kind = kind;
    o->beta1 = 0.9f;
    o->beta2 = 0.999f;
    o->eps = 1e-8f;
    o->momentum = momentum;
    o->weight_decay = weight_decay;
    return NC_OK;
}

nc_status nc_optim_add(nc_optim *o, float *w, float *g, int64_t n, int decay, float min_value)
{
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 16;
        nc_optim_param *p = nc_realloc(o->p, (size_t)cap * sizeof *p);
        if (!p)
            return nc_errorf(NC_ERR_NOMEM, "out of memory setting up the optimiser");
        o->p = p;
        o->cap = cap;
    }
    nc_optim_param *P = &o->p[o->n];
    memset(P, 0, sizeof *P);
    P->w = w, P->g = g, P->n = n, P->decay = decay, P->min_value = min_value;
    P->m = nc_calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    if (o->kind == NC_OPTIM_ADAM)
        P->v = nc_calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    if (!P->m || (o->kind == NC_OPTIM_ADAM && !P->v)) {
        nc_free(P->m);
        nc_free(P->v);
        return nc_errorf(NC_ERR_NOMEM, "out of memory for the optimiser's state (%lld values)", (long long)n);
    }
    o->n++;
    return NC_OK;
}

void nc_optim_free(nc_optim *o)
{
    for (int i = 0; i < o->n; i++) {
        nc_free(o->p[i].m);
        nc_free(o->p[i].v);
    }
    nc_free(o->p);
    nc_free(o->pack);
    memset(o, 0, sizeof *o);
}

nc_status nc_optim_allreduce(nc_optim *o, const nc_dist *d, float scale)
{
    int64_t total = 0;
    for (int i = 0; i < o->n; i++)
        total += o->p[i].n;
    if (!o->pack && !(o->pack = nc_malloc((size_t)(total > 0 ? total : 1) * sizeof *o->pack)))
        return nc_errorf(NC_ERR_NOMEM, "out of memory for the gradients' exchange (%lld values)", (long long)total);
    float *p = o->pack;
    for (int i = 0; i < o->n; i++)
        for (int64_t k = 0; k < o->p[i].n; k++)
            *p++ = o->p[i].g[k] * scale;
    nc_status st = nc_dist_sum_f32(d, o->pack, total);
    p = o->pack;
    for (int i = 0; st == NC_OK && i < o->n; i++) {
        memcpy(o->p[i].g, p, (size_t)o->p[i].n * sizeof *p);
        p += o->p[i].n;
    }
    return st;
}

void nc_optim_zero_grad(nc_optim *o)
{
    for (int i = 0; i < o->n; i++)
        memset(o->p[i].g, 0, (size_t)o->p[i].n * sizeof *o->p[i].g);
}

uint64_t nc_optim_hash(const nc_optim *o)
{
    uint64_t h = NC_HASH_INIT;
    for (int i = 0; i < o->n; i++)
        h = nc_hash_bytes(h, o->p[i].w, (size_t)o->p[i].n * sizeof *o->p[i].w);
    return h;
}

double nc_optim_grad_norm(const nc_optim *o)
{
    double s = 0.0;
    for (int i = 0; i < o->n; i++)
        for (int64_t k = 0; k < o->p[i].n; k++)
            s += (double)o->p[i].g[k] * o->p[i].g[k];
    return sqrt(s);
}

double nc_optim_clip(nc_optim *o, double max_norm)
{
    double norm = nc_optim_grad_norm(o);
    if (max_norm > 0.0 && norm > max_norm) {
        float f = (float)(max_norm / norm);
        for (int i = 0; i < o->n; i++)
            for (int64_t k = 0; k < o->p[i].n; k++)
                o->p[i].g[k] *= f;
    }
    return norm;
}

void nc_optim_step(nc_optim *o, float lr)
{
    o->t++;
    /* bias corrections of Adam's moment estimates */
    float c1 = (float)(1.0 - pow(o->beta1, (double)o->t));
    float c2 = (float)(1.0 - pow(o->beta2, (double)o->t));
    for (int i = 0; i < o->n; i++) {
        nc_optim_param *P = &o->p[i];
        float wd = P->decay ? o->weight_decay : 0.0f;
        NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(P->n))")
        for (int64_t k = 0; k < P->n; k++) {
            float g = P->g[k] + wd * P->w[k];
            if (o->kind == NC_OPTIM_ADAM) {
                P->m[k] = o->beta1 * P->m[k] + (1.0f - o->beta1) * g;
                P->v[k] = o->beta2 * P->v[k] + (1.0f - o->beta2) * g * g;
                float mh = P->m[k] / c1, vh = P->v[k] / c2;
                P->w[k] -= lr * mh / (sqrtf(vh) + o->eps);
            } else {
                P->m[k] = o->momentum * P->m[k] + g;
                P->w[k] -= lr * P->m[k];
            }
            if (P->w[k] < P->min_value)
                P->w[k] = P->min_value;
        }
    }
}

int64_t nc_optim_state_len(const nc_optim *o)
{
    int64_t len = 0;
    for (int i = 0; i < o->n; i++)
        len += o->p[i].n * (o->kind == NC_OPTIM_ADAM ? 2 : 1);
    return len;
}

void nc_optim_state_get(const nc_optim *o, float *out)
{
    for (int i = 0; i < o->n; i++) {
        const nc_optim_param *P = &o->p[i];
        memcpy(out, P->m, (size_t)P->n * sizeof(float));
        out += P->n;
        if (o->kind == NC_OPTIM_ADAM) {
            memcpy(out, P->v, (size_t)P->n * sizeof(float));
            out += P->n;
        }
    }
}

nc_status nc_optim_state_set(nc_optim *o, const float *in, int64_t len, int64_t steps)
{
    int64_t want = nc_optim_state_len(o);
    if (len != want || steps < 0)
        return nc_errorf(NC_ERR_INVALID_ARG,
                         "optimiser state of %lld values after %lld steps does not fit this network and optimiser "
                         "(%s, %lld values)",
                         (long long)len, (long long)steps, o->kind == NC_OPTIM_ADAM ? "Adam" : "SGD",
                         (long long)want);
    for (int i = 0; i < o->n; i++) {
        nc_optim_param *P = &o->p[i];
        memcpy(P->m, in, (size_t)P->n * sizeof(float));
        in += P->n;
        if (o->kind == NC_OPTIM_ADAM) {
            memcpy(P->v, in, (size_t)P->n * sizeof(float));
            in += P->n;
        }
    }
    o->t = steps;
    return NC_OK;
}

float nc_cosine_lr(float lr, int64_t step, int64_t total)
{
    if (total <= 1)
        return lr;
    double f = (double)step / (double)total;
    if (f > 1.0)
        f = 1.0;
    return (float)(0.5 * lr * (1.0 + cos(3.14159265358979323846 * f)));
}
