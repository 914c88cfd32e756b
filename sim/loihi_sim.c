/* The fixed-point simulation: every population's compartments follow the
 * integer CUBA update of loihi_fixed.h each step; a spike emitted at step t
 * reaches the synapses' targets at step t + 1 (+ the connection's delay),
 * one step a hop as on the chip. Samples are independent and everything is
 * integer, so the samples of a batch run on OpenMP threads and every count
 * and readout value is the same whatever the thread count or schedule. */
#include <math.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "loihi_fixed.h"
#include "sim_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

#define CHUNK 256 /* samples between progress reports */

typedef struct tstate {
    int32_t **u, **v;
    int64_t **acc;      /* per population: R slots × n, input arriving at a future step */
    int16_t **spk;      /* per population: this step's spike payloads, 0 or 1 (−B…B: signed IF) */
    uint8_t **prev;
    int32_t **net;      /* per signed IF population: net spike counts */
    int64_t **bias;     /* per population: effective bias for the current sample */
    int32_t *payload;   /* graded input */
    double *host_av;    /* host: axon values of the analog input */
    int64_t *cnt;       /* [n_pops][CNT_N] */
    int64_t *step_syn, *step_act;
} tstate;

static void tstate_free(tstate *t, int np)
{
    for (int p = 0; p < np; p++) {
        if (t->u) nc_free(t->u[p]);
        if (t->v) nc_free(t->v[p]);
        if (t->acc) nc_free(t->acc[p]);
        if (t->spk) nc_free(t->spk[p]);
        if (t->prev) nc_free(t->prev[p]);
        if (t->net) nc_free(t->net[p]);
        if (t->bias) nc_free(t->bias[p]);
    }
    nc_free(t->u), nc_free(t->v), nc_free(t->acc), nc_free(t->spk), nc_free(t->prev), nc_free(t->net), nc_free(t->bias);
    nc_free(t->payload), nc_free(t->host_av), nc_free(t->cnt), nc_free(t->step_syn), nc_free(t->step_act);
}

static int tstate_init(tstate *t, const nc_loihi_net *net, int steps)
{
    int np = net->n_pops, R = net->max_delay + 2;
    int64_t max_ax = 1;
    for (int ci = 0; ci < net->n_conns; ci++)
        if (net->conns[ci].host && net->conns[ci].n_axons > max_ax)
            max_ax = net->conns[ci].n_axons;
    t->u = nc_calloc((size_t)np, sizeof *t->u);
    t->v = nc_calloc((size_t)np, sizeof *t->v);
    t->acc = nc_calloc((size_t)np, sizeof *t->acc);
    t->spk = nc_calloc((size_t)np, sizeof *t->spk);
    t->prev = nc_calloc((size_t)np, sizeof *t->prev);
    t->net = nc_calloc((size_t)np, sizeof *t->net);
    t->bias = nc_calloc((size_t)np, sizeof *t->bias);
    t->payload = nc_calloc((size_t)net->in_size, sizeof *t->payload);
    t->host_av = nc_calloc((size_t)max_ax, sizeof *t->host_av);
    t->cnt = nc_calloc((size_t)np * CNT_N, sizeof *t->cnt);
    t->step_syn = nc_calloc((size_t)np * (size_t)steps, sizeof *t->step_syn);
    t->step_act = nc_calloc((size_t)np * (size_t)steps, sizeof *t->step_act);
    if (!t->u || !t->v || !t->acc || !t->spk || !t->prev || !t->net || !t->bias || !t->payload || !t->host_av || !t->cnt ||
        !t->step_syn || !t->step_act)
        return 0;
    for (int p = 0; p < np; p++) {
        size_t n = (size_t)net->pops[p].n;
        t->spk[p] = nc_calloc(n, sizeof **t->spk);
        if (!t->spk[p])
            return 0;
        if (p == 0)
            continue;
        t->u[p] = nc_calloc(n, sizeof **t->u);
        t->v[p] = nc_calloc(n, sizeof **t->v);
        t->acc[p] = nc_calloc(n * (size_t)R, sizeof **t->acc);
        t->prev[p] = nc_calloc(n, 1);
        t->bias[p] = nc_calloc(n, sizeof **t->bias);
        if (net->pops[p].sgn && !(t->net[p] = nc_calloc(n, sizeof **t->net)))
            return 0;
        if (!t->u[p] || !t->v[p] || !t->acc[p] || !t->prev[p] || !t->bias[p])
            return 0;
    }
    return 1;
}

/* ---- a process group: every rank simulated samples [lo, hi) of n */

/* Sums the counters and gathers the readouts of every rank's share, so
 * each rank holds the whole run (with the ranks' statuses: a failure
 * anywhere fails everywhere). */
static nc_status sim_gather(const nc_dist *d, nc_loihi_result *r, int64_t per_sample, nc_status st)
{
    if (nc_dist_size(d) <= 1)
        return st;
    if ((st = nc_dist_agree_status(d, st, "the Loihi simulation")) != NC_OK)
        return st;
    int np = r->n_pops;
    int64_t per_pop = CNT_N, n = (int64_t)np * per_pop + 2 * (int64_t)np * r->steps;
    int64_t *v = nc_malloc((size_t)n * sizeof *v), *bytes = nc_malloc((size_t)d->size * sizeof *bytes);
    int failed = !v || !bytes;
    if ((st = nc_dist_agree(d, &failed)) == NC_OK && failed)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory gathering the simulation's counters");
    if (st == NC_OK) {
        for (int p = 0; p < np; p++)
            memcpy(v + p * per_pop, r->pops[p].cnt, sizeof r->pops[p].cnt);
        memcpy(v + np * per_pop, r->step_syn, (size_t)np * (size_t)r->steps * sizeof *v);
        memcpy(v + np * per_pop + (int64_t)np * r->steps, r->step_act, (size_t)np * (size_t)r->steps * sizeof *v);
        st = nc_dist_sum_i64(d, v, n);
    }
    if (st == NC_OK) {
        for (int p = 0; p < np; p++)
            memcpy(r->pops[p].cnt, v + p * per_pop, sizeof r->pops[p].cnt);
        memcpy(r->step_syn, v + np * per_pop, (size_t)np * (size_t)r->steps * sizeof *v);
        memcpy(r->step_act, v + np * per_pop + (int64_t)np * r->steps, (size_t)np * (size_t)r->steps * sizeof *v);
        for (int k = 0; k < d->size; k++) {
            int64_t lo, hi;
            nc_dist_share_of(r->N, k, d->size, &lo, &hi);
            bytes[k] = (hi - lo) * per_sample * (int64_t)sizeof *r->readout;
        }
        st = d->ops->allgatherv(d, NULL, r->readout, bytes);
    }
    nc_free(v);
    nc_free(bytes);
    return st;
}

/* ---- the host's share for bias-coded input: W·x + b in float, per sample */

static void host_current(const ls_conn *c, const float *x, int64_t n_src, double *av, int64_t n, double *cur)
{
    memset(av, 0, (size_t)c->n_axons * sizeof *av);
    for (int64_t i = 0; i < n_src; i++)
        if (c->axon_of[i] >= 0)
            av[c->axon_of[i]] += x[i];
    if (c->kind == LC_ONE2ONE) {
        for (int64_t j = 0; j < n; j++)
            cur[j] += (double)c->wf[j] * av[j];
    } else if (c->kind == LC_DENSE) {
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            const float *w = c->wf + j * c->n_axons;
            for (int64_t a = 0; a < c->n_axons; a++)
                s += (double)w[a] * av[a];
            cur[j] += s;
        }
    } else {
        int64_t cg = c->ax_c / c->groups, kg = c->K / c->groups;
        for (int64_t j = 0; j < n; j++) {
            int64_t k = j / (c->OH * c->OW), oh = j / c->OW % c->OH, ow = j % c->OW, g = k / kg;
            double s = 0;
            for (int64_t ci = 0; ci < cg; ci++)
                for (int64_t i = 0; i < c->kh; i++) {
                    int64_t ih = oh * c->stride[0] - c->pad[0] + i * c->dil[0];
                    if (ih < 0 || ih >= c->ax_h)
                        continue;
                    for (int64_t jj = 0; jj < c->kw; jj++) {
                        int64_t iw = ow * c->stride[1] - c->pad[1] + jj * c->dil[1];
                        if (iw < 0 || iw >= c->ax_w)
                            continue;
                        s += (double)c->wf[((k * cg + ci) * c->kh + i) * c->kw + jj] *
                             av[((g * cg + ci) * c->ax_h + ih) * c->ax_w + iw];
                    }
                }
            cur[j] += s;
        }
    }
}

/* Per-sample setup: biases (with the host's current where input is bias-
 * coded), graded payloads, reset of the state. */
static void sample_setup(const nc_loihi_net *net, tstate *t, const float *x, double *cur)
{
    int bexp_max = (int)net->params.c[P_BIAS_EXP_MAX].value;
    const ls_pop *In = &net->pops[0];
    for (int64_t i = 0; i < In->n; i++) {
        double q = round(x[i] / In->in_step);
        double lo = In->in_signed ? -127 : 0, hi = In->in_signed ? 127 : 255;
        t->payload[i] = (int32_t)(q < lo ? lo : (q > hi ? hi : q));
    }
    for (int p = 1; p < net->n_pops; p++) {
        const ls_pop *P = &net->pops[p];
        if (P->has_host) {
            for (int64_t j = 0; j < P->n; j++)
                cur[j] = P->bias_f[j];
            for (int ci = 0; ci < net->n_conns; ci++)
                if (net->conns[ci].dst == p && net->conns[ci].host)
                    host_current(&net->conns[ci], x, In->n, t->host_av, P->n, cur);
            for (int64_t j = 0; j < P->n; j++) {
                double b = round(cur[j] * P->scale[j]);
                int64_t bi = fabs(b) < 0x1p62 ? (int64_t)b : (b < 0 ? -((int64_t)1 << 62) : ((int64_t)1 << 62));
                int32_t m;
                int e;
                t->cnt[p * CNT_N + CNT_BIAS_CLIPS] += nc_lf_bias_encode(bi, bexp_max, &m, &e);
                t->bias[p][j] = nc_lf_bias(m, e);
            }
        } else {
            for (int64_t j = 0; j < P->n; j++)
                t->bias[p][j] = nc_lf_bias(P->bias_mant[j], P->bias_exp[j]);
        }
        memcpy(t->v[p], P->v0, (size_t)P->n * sizeof *P->v0);
        memset(t->u[p], 0, (size_t)P->n * sizeof **t->u);
        memset(t->acc[p], 0, (size_t)P->n * (size_t)(net->max_delay + 2) * sizeof **t->acc);
        memset(t->prev[p], 0, (size_t)P->n);
        if (t->net[p])
            memset(t->net[p], 0, (size_t)P->n * sizeof *t->net[p]);
    }
}

/* ---- synapses: one message on axon a, times payload pl, into slot */

static int64_t scatter(const ls_conn *c, int64_t a, int64_t pl, int64_t *slot)
{
    if (c->kind == LC_ONE2ONE) {
        slot[a] += c->wt[a] * pl;
    } else if (c->kind == LC_DENSE) {
        const int64_t *w = c->wt + a * c->n_out;
        for (int64_t o = 0; o < c->n_out; o++)
            slot[o] += w[o] * pl;
    } else {
        int64_t plane = c->ax_h * c->ax_w, ch = a / plane, ih = a / c->ax_w % c->ax_h, iw = a % c->ax_w;
        int64_t cg = c->ax_c / c->groups, kg = c->K / c->groups, g = ch / cg, oplane = c->OH * c->OW;
        for (int64_t i = 0; i < c->kh; i++) {
            int64_t th = ih + c->pad[0] - i * c->dil[0];
            if (th < 0 || th % c->stride[0] || th / c->stride[0] >= c->OH)
                continue;
            for (int64_t j = 0; j < c->kw; j++) {
                int64_t tw = iw + c->pad[1] - j * c->dil[1];
                if (tw < 0 || tw % c->stride[1] || tw / c->stride[1] >= c->OW)
                    continue;
                int64_t *dst = slot + g * kg * oplane + (th / c->stride[0]) * c->OW + tw / c->stride[1];
                const int64_t *w = c->wt + ((ch * c->kh + i) * c->kw + j) * kg;
                for (int64_t k = 0; k < kg; k++)
                    dst[k * oplane] += w[k] * pl;
            }
        }
    }
    return c->syn_per_axon[a];
}

static void run_sample(const nc_loihi_net *net, tstate *t, const float *x, int steps, double *cur,
                       int32_t *readout)
{
    int np = net->n_pops, R = net->max_delay + 2;
    const ls_pop *RO = &net->pops[net->readout];
    sample_setup(net, t, x, cur);
    int64_t in_msgs = 0, in_spikes = 0;
    for (int64_t i = 0; net->input_graded && i < net->pops[0].n; i++)
        if (t->payload[i]) {
            in_msgs += net->pops[0].msgs[i];
            in_spikes++;
        }
    for (int step = 0; step < steps; step++) {
        for (int p = 1; p < np; p++) {
            const ls_pop *P = &net->pops[p];
            int64_t *slot = t->acc[p] + (size_t)(step % R) * (size_t)P->n;
            int32_t *u = t->u[p], *v = t->v[p];
            const int64_t *bias = t->bias[p];
            int16_t *spk = t->spk[p];
            uint8_t *prev = t->prev[p];
            int32_t *netc = t->net[p];
            int64_t *cnt = t->cnt + p * CNT_N;
            int64_t active = 0, spikes = 0, msgs = 0, wraps = 0, sats = 0;
            for (int64_t j = 0; j < P->n; j++) {
                int64_t in = slot[j];
                slot[j] = 0;
                active += in != 0 || bias[j] != 0 || u[j] != 0;
                int f, s = 0;
                if (P->kind == LS_READOUT) {
                    f = nc_lf_u_step(&u[j], in, P->du) ? NC_LF_U_WRAP : 0;
                    f |= nc_lf_v_step(&v[j], u[j], P->dv, bias[j]) ? NC_LF_V_SAT : 0;
                } else if (P->reset == NC_LF_RESET_TWO_COMP) {
                    f = nc_lf_two_comp_step(&u[j], &v[j], in, prev[j], P->du, P->dv, bias[j], P->vth[j]);
                    prev[j] = (uint8_t)(f & NC_LF_SPIKE);
                } else if (P->sgn) {
                    f = nc_lf_signed_step(&u[j], &v[j], &netc[j], in, P->du, P->dv, bias[j], P->vth[j], P->burst,
                                          &s);
                } else {
                    f = nc_lf_step(&u[j], &v[j], in, P->du, P->dv, bias[j], P->vth[j], P->reset);
                }
                if (!P->sgn)
                    s = (f & NC_LF_SPIKE) != 0;
                spk[j] = (int16_t)s;
                spikes += s != 0;
                msgs += s ? P->msgs[j] : 0;
                wraps += (f & NC_LF_U_WRAP) != 0;
                sats += (f & NC_LF_V_SAT) != 0;
            }
            cnt[CNT_ACTIVE] += active * P->cpn;
            cnt[CNT_INACTIVE] += (P->n - active) * P->cpn;
            cnt[CNT_SPIKES] += spikes;
            cnt[CNT_MSGS] += msgs;
            cnt[CNT_WRAPS] += wraps;
            cnt[CNT_SATS] += sats;
            if (P->cpn == 2) /* the self-inhibiting synapse of each spike */
                cnt[CNT_SYNOPS] += spikes, t->step_syn[(size_t)step * np + p] += spikes;
            t->step_act[(size_t)step * np + p] += active * P->cpn;
        }
        memcpy(readout + (size_t)step * RO->n, t->v[net->readout], (size_t)RO->n * sizeof *readout);
        /* deliver this step's spikes */
        t->cnt[CNT_SPIKES] += in_spikes;
        t->cnt[CNT_MSGS] += in_msgs;
        for (int ci = 0; ci < net->n_conns; ci++) {
            const ls_conn *c = &net->conns[ci];
            if (c->host)
                continue;
            const ls_pop *S = &net->pops[c->src], *D = &net->pops[c->dst];
            int64_t *slot = t->acc[c->dst] + (size_t)((step + 1 + c->delay) % R) * (size_t)D->n;
            int64_t ops = 0;
            if (c->src == 0) {
                for (int64_t i = 0; i < S->n; i++)
                    if (t->payload[i] && c->axon_of[i] >= 0)
                        ops += scatter(c, c->axon_of[i], t->payload[i], slot);
            } else {
                const int16_t *spk = t->spk[c->src];
                for (int64_t i = 0; i < S->n; i++)
                    if (spk[i] && c->axon_of[i] >= 0)
                        ops += scatter(c, c->axon_of[i], spk[i], slot);
            }
            t->cnt[c->dst * CNT_N + CNT_SYNOPS] += ops;
            t->step_syn[(size_t)step * np + c->dst] += ops;
        }
    }
}

nc_status nc_loihi_run(const nc_loihi_net *net, const nc_tensor *x, const nc_tensor *labels,
                       const nc_loihi_run_options *opt, nc_loihi_result **out)
{
    if (out)
        *out = NULL;
    if (!net || !x || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_run: NULL argument");
    nc_loihi_run_options o = {0};
    if (opt)
        o = *opt;
    int T = o.timesteps ? o.timesteps : 32;
    int extra = o.extra_steps < 0 ? net->latency : o.extra_steps;
    if (T < 1 || T > (1 << 20) || extra > (1 << 20))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_run: timesteps %d or extra steps %d out of range", T, extra);
    if (x->dtype != NC_DTYPE_F32 || x->ndim < 1)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_run: x must be float32 (N, ...)");
    int64_t N = x->shape[0];
    if (N < 1 || x->numel != N * net->in_size)
        return nc_errorf(NC_ERR_SHAPE, "nc_loihi_run: x has %lld values a sample; the network takes %lld",
                         (long long)(N ? x->numel / N : 0), (long long)net->in_size);
    if (labels && (labels->dtype != NC_DTYPE_I64 || labels->numel != N))
        return nc_errorf(NC_ERR_SHAPE, "nc_loihi_run: expected %lld int64 labels", (long long)N);
    int steps = T + extra, np = net->n_pops;
    const ls_pop *RO = &net->pops[net->readout];
    int64_t total;
    if (!nc_mul_i64(N, (int64_t)steps * RO->n, &total) || total > ((int64_t)1 << 31))
        return nc_errorf(NC_ERR_LIMIT, "nc_loihi_run: %lld samples × %d steps × %lld classes is too many readout "
                                       "values to keep", (long long)N, steps, (long long)RO->n);
    nc_loihi_result *r = nc_calloc(1, sizeof *r);
    if (!r)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    r->T = T, r->steps = steps, r->latency = net->latency, r->N = N, r->n_out = (int)RO->n, r->n_pops = np;
    r->loihi1 = net->loihi1;
    r->cores = net->cores, r->chips = net->chips, r->host_macs = net->host_macs, r->ann_macs = net->ann_macs;
    r->params = net->params;
    r->readout = nc_malloc((size_t)total * sizeof *r->readout);
    r->pops = nc_calloc((size_t)np, sizeof *r->pops);
    r->step_syn = nc_calloc((size_t)np * (size_t)steps, sizeof *r->step_syn);
    r->step_act = nc_calloc((size_t)np * (size_t)steps, sizeof *r->step_act);
    int nt = o.threads > 0 ? o.threads : 1;
#ifdef _OPENMP
    if (o.threads <= 0)
        nt = omp_get_max_threads();
#else
    nt = 1;
#endif
    tstate *ts = nc_calloc((size_t)nt, sizeof *ts);
    int64_t max_n = 1;
    for (int p = 0; p < np; p++)
        max_n = net->pops[p].n > max_n ? net->pops[p].n : max_n;
    double *cur = nc_malloc((size_t)nt * (size_t)max_n * sizeof *cur);
    int ok = r->readout && r->pops && r->step_syn && r->step_act && ts && cur;
    for (int p = 0; ok && p < np; p++) {
        const ls_pop *P = &net->pops[p];
        r->pops[p].name = nc_strdup(P->name);
        r->pops[p].kind = P->kind;
        r->pops[p].n = P->n;
        r->pops[p].compartments = p ? P->n * P->cpn : 0;
        r->pops[p].cores = P->n_cores;
        ok = r->pops[p].name != NULL;
    }
    for (int k = 0; ok && k < nt; k++)
        ok = tstate_init(&ts[k], net, steps);
    /* this rank's samples (all of them without a group), CHUNK at a time */
    nc_batches_options bo = {.batch = CHUNK, .dist = o.dist, .shard = NC_BATCHES_SHARD_SAMPLES,
                             .progress = o.progress, .what = "loihi simulation", .progress_user = o.progress_user};
    nc_batches *it = NULL;
    if (ok)
        ok = nc_batches_create(x, NULL, &bo, &it) == NC_OK;
    if (!ok) {
        for (int k = 0; ts && k < nt; k++)
            tstate_free(&ts[k], np);
        nc_free(ts);
        nc_free(cur);
        nc_batches_free(it);
        nc_status st = sim_gather(o.dist, r, 0, nc_errorf(NC_ERR_NOMEM, "out of memory for the Loihi simulation"));
        nc_loihi_result_free(r);
        return st;
    }
    const float *xd = nc_f32(x);
    nc_batch b;
    while (nc_batches_next(it, &b)) {
        int64_t c0 = b.first, c1 = b.first + b.count;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
#endif
        for (int64_t i = c0; i < c1; i++) {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            run_sample(net, &ts[tid], xd + i * net->in_size, steps, cur + (size_t)tid * (size_t)max_n,
                       r->readout + (size_t)i * (size_t)steps * (size_t)RO->n);
        }
    }
    nc_batches_free(it);
    /* integer sums: the same in any order */
    for (int k = 0; k < nt; k++) {
        for (int p = 0; p < np; p++)
            for (int q = 0; q < CNT_N; q++)
                r->pops[p].cnt[q] += ts[k].cnt[p * CNT_N + q];
        for (size_t e = 0; e < (size_t)np * (size_t)steps; e++) {
            r->step_syn[e] += ts[k].step_syn[e];
            r->step_act[e] += ts[k].step_act[e];
        }
        tstate_free(&ts[k], np);
    }
    nc_free(ts);
    nc_free(cur);
    nc_status gs = sim_gather(o.dist, r, (int64_t)steps * RO->n, NC_OK);
    if (gs != NC_OK) {
        nc_loihi_result_free(r);
        return gs;
    }
    if (labels) {
        r->correct = nc_calloc((size_t)steps, sizeof *r->correct);
        if (!r->correct) {
            nc_loihi_result_free(r);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        const int64_t *y = nc_i64(labels);
        for (int64_t i = 0; i < N; i++)
            for (int s = 0; s < steps; s++) {
                const int32_t *v = r->readout + ((size_t)i * (size_t)steps + (size_t)s) * (size_t)RO->n;
                int best = 0;
                for (int k = 1; k < r->n_out; k++)
                    if (v[k] > v[best])
                        best = k;
                r->correct[s] += best == y[i];
            }
    }
    ls_cost(r);
    nc_status st = ls_result_json(r, net);
    if (st != NC_OK) {
        nc_loihi_result_free(r);
        return st;
    }
    *out = r;
    return NC_OK;
}
