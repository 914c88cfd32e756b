/* Placing populations on neuro cores.
 *
 * Each population is cut into runs of consecutive neurons, one run a core,
 * grown greedily until the next neuron would break a per-core limit:
 * compartments, input axons (distinct axons with a synapse into the core,
 * plus one self axon a neuron for the two-compartment emulation), synapse
 * memory, and output axons (one routing entry for each destination core a
 * neuron's spikes go to). Populations are placed from the readout backwards,
 * because a neuron's output axons depend on how its targets were cut.
 *
 * Synapse memory (Loihi 1 model): each input axon has a synapse list on each
 * core it reaches; a stored synapse is its weight mantissa plus a compartment
 * index (sparse format) and a list is padded to whole 64-bit words. Zero
 * weights are not stored. A convolution's shared weights are NOT shared on
 * Loihi 1: every (axon, output) pair is a synapse of its own, as the chip
 * stores them. With shared_conv_weights (the Loihi 2 default) a core stores
 * the kernel slices of the output channels it holds once, and the count of
 * synapses is that of the kernel weights. */
#include <string.h>

#include "sim_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"

typedef struct mstate {
    int64_t comps, axons, words, syns, outax;
} mstate;

typedef struct limits {
    int64_t comps, words, syns, in_ax, out_ax;
    int bits;      /* bits a stored synapse */
    int wbits;
    int shared;    /* shared convolution weights */
} limits;

static int64_t words_of(int64_t cnt, int bits) { return (cnt * bits + 63) / 64; }

static const char *violation(const limits *L, const mstate *m)
{
    if (m->comps > L->comps)
        return "compartments";
    if (L->words && m->words > L->words)
        return "synapse memory words";
    if (L->syns && m->syns > L->syns)
        return "synapses";
    if (L->in_ax && m->axons > L->in_ax)
        return "input axons";
    if (L->out_ax && m->outax > L->out_ax)
        return "output axons";
    return NULL;
}

typedef struct pwork {
    int n_in;
    int *in;               /* incoming connection indices */
    int32_t **cnt;         /* per incoming connection, per axon: synapses in the current core */
    int64_t **touched;
    int64_t *n_touched;
    int64_t *buf;
} pwork;

/* Adds (sign +1) or removes (-1) neuron j's synapses to the core's counts;
 * `start` is the core's first neuron. */
static void account(const nc_loihi_net *net, pwork *w, const limits *L, int64_t j, int sign, int64_t start,
                    mstate *m)
{
    for (int k = 0; k < w->n_in; k++) {
        const ls_conn *c = &net->conns[w->in[k]];
        int shared = L->shared && c->kind == LC_CONV;
        int64_t nf = ls_fanin(c, j, w->buf);
        for (int64_t f = 0; f < nf; f++) {
            int64_t a = w->buf[f];
            int32_t old = w->cnt[k][a], now = old + sign;
            w->cnt[k][a] = now;
            if (old == 0 && sign > 0) {
                m->axons++;
                w->touched[k][w->n_touched[k]++] = a;
            } else if (now == 0) {
                m->axons--;
            }
            if (!shared) {
                m->words += words_of(now, L->bits) - words_of(old, L->bits);
                m->syns += sign;
            }
        }
        if (shared) {
            /* the kernel slices of the output channels in [first, this one] */
            int64_t plane = c->OH * c->OW, per = c->ax_c / c->groups * c->kh * c->kw;
            int64_t kj = j / plane, kprev = (j - 1) / plane;
            int new_channel = j == start || kj != kprev;
            if (sign > 0 && new_channel) {
                m->syns += per;
                m->words += words_of(per, L->wbits);
            } else if (sign < 0 && new_channel) {
                m->syns -= per;
                m->words -= words_of(per, L->wbits);
            }
        }
    }
}

static void reset_counts(pwork *w)
{
    for (int k = 0; k < w->n_in; k++) {
        for (int64_t t = 0; t < w->n_touched[k]; t++)
            w->cnt[k][w->touched[k][t]] = 0;
        w->n_touched[k] = 0;
    }
}

static void pwork_free(pwork *w)
{
    for (int k = 0; k < w->n_in; k++) {
        nc_free(w->cnt ? w->cnt[k] : NULL);
        nc_free(w->touched ? w->touched[k] : NULL);
    }
    nc_free(w->cnt);
    nc_free(w->touched);
    nc_free(w->n_touched);
    nc_free(w->buf);
    nc_free(w->in);
}

static nc_status push_core(ls_pop *P, int64_t start)
{
    int64_t *ns = nc_realloc(P->core_start, (size_t)(P->n_cores + 2) * sizeof *ns);
    if (!ns)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    P->core_start = ns;
    ns[P->n_cores++] = start;
    return NC_OK;
}

static void close_core(ls_pop *P, const mstate *m)
{
    P->syn_words += m->words;
    P->synapses += m->syns;
    if (m->axons > P->max_in_axons)
        P->max_in_axons = m->axons;
    if (m->outax > P->max_out_axons)
        P->max_out_axons = m->outax;
}

static nc_status partition(nc_loihi_net *net, int p, const limits *L)
{
    ls_pop *P = &net->pops[p];
    pwork w = {0};
    nc_status st = NC_OK;
    for (int ci = 0; ci < net->n_conns; ci++)
        if (net->conns[ci].dst == p && !net->conns[ci].host)
            w.n_in++;
    int64_t maxfan = 1;
    w.in = nc_malloc((size_t)(w.n_in + 1) * sizeof *w.in);
    w.cnt = nc_calloc((size_t)(w.n_in + 1), sizeof *w.cnt);
    w.touched = nc_calloc((size_t)(w.n_in + 1), sizeof *w.touched);
    w.n_touched = nc_calloc((size_t)(w.n_in + 1), sizeof *w.n_touched);
    if (!w.in || !w.cnt || !w.touched || !w.n_touched) {
        pwork_free(&w);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    int k = 0;
    for (int ci = 0; ci < net->n_conns; ci++) {
        const ls_conn *c = &net->conns[ci];
        if (c->dst != p || c->host)
            continue;
        w.in[k] = ci;
        w.cnt[k] = nc_calloc((size_t)c->n_axons, sizeof **w.cnt);
        w.touched[k] = nc_malloc((size_t)c->n_axons * sizeof **w.touched);
        if (!w.cnt[k] || !w.touched[k]) {
            w.n_in = k + 1;
            pwork_free(&w);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        if (ls_max_fanin(c) > maxfan)
            maxfan = ls_max_fanin(c);
        k++;
    }
    w.buf = nc_malloc((size_t)maxfan * sizeof *w.buf);
    if (!w.buf) {
        pwork_free(&w);
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    mstate m = {0};
    int64_t start = 0;
    int two = P->cpn == 2;
    st = push_core(P, 0);
    for (int64_t j = 0; j < P->n && st == NC_OK; j++) {
        mstate before = m;
        account(net, &w, L, j, +1, start, &m);
        m.comps += P->cpn;
        m.outax += P->msgs[j];
        if (two) { /* the self-inhibiting synapse: its own axon and list */
            m.axons++;
            m.words += words_of(1, L->bits);
            m.syns++;
        }
        const char *bad = violation(L, &m);
        if (!bad)
            continue;
        if (j == start) {
            st = nc_errorf(NC_ERR_LIMIT,
                           "layer '%s': neuron %lld alone exceeds a core's %s (%lld > %lld); the chip "
                           "cannot hold its fan-in",
                           P->name, (long long)j, bad,
                           (long long)(strcmp(bad, "compartments") == 0 ? m.comps
                                       : strcmp(bad, "input axons") == 0 ? m.axons
                                       : strcmp(bad, "output axons") == 0 ? m.outax
                                       : strcmp(bad, "synapses") == 0 ? m.syns : m.words),
                           (long long)(strcmp(bad, "compartments") == 0 ? L->comps
                                       : strcmp(bad, "input axons") == 0 ? L->in_ax
                                       : strcmp(bad, "output axons") == 0 ? L->out_ax
                                       : strcmp(bad, "synapses") == 0 ? L->syns : L->words));
            break;
        }
        /* j goes on a new core: close this one as it was before j (the
         * counts j added are cleared with the rest) */
        close_core(P, &before);
        reset_counts(&w);
        memset(&m, 0, sizeof m);
        start = j;
        if ((st = push_core(P, j)) != NC_OK)
            break;
        j--; /* place it again on the new core */
    }
    if (st == NC_OK) {
        close_core(P, &m);
        P->core_start[P->n_cores] = P->n;
    }
    pwork_free(&w);
    return st;
}

/* For each connection into p: the cores of p each axon reaches. */
static nc_status dest_cores(nc_loihi_net *net, int p)
{
    const ls_pop *P = &net->pops[p];
    for (int ci = 0; ci < net->n_conns; ci++) {
        ls_conn *c = &net->conns[ci];
        if (c->dst != p || c->host)
            continue;
        c->dest_cores = nc_calloc((size_t)c->n_axons, sizeof *c->dest_cores);
        int32_t *last = nc_malloc((size_t)c->n_axons * sizeof *last);
        int64_t *buf = nc_malloc((size_t)ls_max_fanin(c) * sizeof *buf);
        if (!c->dest_cores || !last || !buf) {
            nc_free(last);
            nc_free(buf);
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        }
        for (int64_t a = 0; a < c->n_axons; a++)
            last[a] = -1;
        for (int64_t core = 0; core < P->n_cores; core++)
            for (int64_t j = P->core_start[core]; j < P->core_start[core + 1]; j++) {
                int64_t nf = ls_fanin(c, j, buf);
                for (int64_t f = 0; f < nf; f++)
                    if (last[buf[f]] != (int32_t)core) {
                        last[buf[f]] = (int32_t)core;
                        c->dest_cores[buf[f]]++;
                    }
            }
        nc_free(last);
        nc_free(buf);
    }
    return NC_OK;
}

/* Messages a spike of each neuron of p sends: one to every core its axons
 * reach (connections out of p were placed already). */
static nc_status messages(nc_loihi_net *net, int p)
{
    ls_pop *P = &net->pops[p];
    P->msgs = nc_calloc((size_t)P->n, sizeof *P->msgs);
    if (!P->msgs)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int ci = 0; ci < net->n_conns; ci++) {
        const ls_conn *c = &net->conns[ci];
        if (c->src != p || c->host)
            continue;
        for (int64_t i = 0; i < P->n; i++)
            if (c->axon_of[i] >= 0)
                P->msgs[i] += c->dest_cores[c->axon_of[i]];
    }
    if (P->cpn == 2)
        for (int64_t i = 0; i < P->n; i++)
            P->msgs[i]++; /* to its own core, through the self-inhibiting synapse */
    return NC_OK;
}

nc_status ls_map(nc_loihi_net *net)
{
    const ls_params *pr = &net->params;
    limits L = {
        .comps = (int64_t)pr->c[P_COMPARTMENTS].value,
        .words = (int64_t)pr->c[P_SYN_WORDS].value,
        .syns = (int64_t)pr->c[P_SYNAPSES].value,
        .in_ax = (int64_t)pr->c[P_IN_AXONS].value,
        .out_ax = (int64_t)pr->c[P_OUT_AXONS].value,
        .wbits = net->weight_bits,
        .bits = net->weight_bits + (int)pr->c[P_SYN_INDEX_BITS].value,
        .shared = pr->c[P_SHARED_CONV].value != 0,
    };
    if (L.comps < 2)
        return nc_errorf(NC_ERR_INVALID_ARG, "compartments_per_core must be at least 2");
    nc_status st;
    net->cores = 0;
    for (int p = net->n_pops - 1; p >= 1; p--) {
        if ((st = messages(net, p)) != NC_OK || (st = partition(net, p, &L)) != NC_OK ||
            (st = dest_cores(net, p)) != NC_OK)
            return st;
        net->cores += net->pops[p].n_cores;
    }
    if ((st = messages(net, 0)) != NC_OK) /* the input's messages, when it sends spikes */
        return st;
    int64_t per_chip = (int64_t)pr->c[P_CORES_PER_CHIP].value;
    if (per_chip < 1)
        per_chip = 1;
    net->chips = (net->cores + per_chip - 1) / per_chip;
    net->smallest_system = "none";
    int64_t best = -1;
    for (int k = 0; k < ls_n_systems; k++)
        if (ls_systems[k].loihi1 == net->loihi1 && ls_systems[k].chips >= net->chips &&
            (best < 0 || ls_systems[k].chips < best)) {
            best = ls_systems[k].chips;
            net->smallest_system = ls_systems[k].name;
        }
    return NC_OK;
}
