/* Threshold calibration (calibrate.h). */
#include <math.h>
#include <string.h>

#include "calibrate.h"
#include "snn/base/alloc.h"
#include "convert/ann/ann_exec.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

/* ---- histograms ---- */

/* Grows the range until m < range. Ranges are powers of two (the smallest
 * above the first value), so v·(BINS/range) is exact and a bin halves
 * exactly when the range doubles. */
static void hist_grow(nc_hist *h, double m)
{
    if (h->range <= 0.0) {
        int e;
        frexp(m, &e); /* m < 2^e */
        h->range = ldexp(1.0, e);
        return;
    }
    while (m >= h->range) {
        for (int b = 0; b < NC_CALIB_BINS / 2; b++)
            h->bins[b] = h->bins[2 * b] + h->bins[2 * b + 1];
        memset(h->bins + NC_CALIB_BINS / 2, 0, NC_CALIB_BINS / 2 * sizeof h->bins[0]);
        h->range *= 2.0;
    }
}

void nc_hist_add(nc_hist *h, const float *v, int64_t n)
{
    float m = 0.0f;
    for (int64_t i = 0; i < n; i++)
        if (v[i] > m)
            m = v[i];
    if (m > 0.0f)
        hist_grow(h, m);
    if ((double)m > h->max)
        h->max = m;
    double scale = h->range > 0.0 ? NC_CALIB_BINS / h->range : 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (!(v[i] > 0.0f)) {
            h->zeros++;
            continue;
        }
        int64_t b = (int64_t)((double)v[i] * scale);
        h->bins[b < NC_CALIB_BINS ? b : NC_CALIB_BINS - 1]++;
        h->pos++;
    }
}

nc_status nc_hist_merge(const nc_dist *d, nc_hist *h, int64_t n, nc_status mine)
{
    if (nc_dist_size(d) <= 1)
        return NC_OK;
    int64_t nd = 2 * n, ni = n * (NC_CALIB_BINS + 2);
    double *dv = nc_malloc((size_t)(nd > 0 ? nd : 1) * sizeof *dv);
    int64_t *iv = nc_malloc((size_t)(ni > 0 ? ni : 1) * sizeof *iv);
    nc_status st = mine;
    if (st == NC_OK && (!dv || !iv))
        st = nc_errorf(NC_ERR_NOMEM, "out of memory merging calibration histograms");
    /* first agree that every rank has its histograms */
    if ((st = nc_dist_agree_status(d, st, "calibration")) != NC_OK) {
        nc_free(dv);
        nc_free(iv);
        return st;
    }
    /* the largest range and maximum, then the counts at that range */
    for (int64_t k = 0; k < n; k++) {
        dv[2 * k] = h[k].range;
        dv[2 * k + 1] = h[k].max;
    }
    if ((st = nc_dist_max_f64(d, dv, nd)) == NC_OK) {
        for (int64_t k = 0; k < n; k++) {
            if (dv[2 * k] > 0.0)
                hist_grow(&h[k], dv[2 * k] / 2); /* powers of two: lands on the largest range exactly */
            h[k].max = dv[2 * k + 1];
            int64_t *p = iv + k * (NC_CALIB_BINS + 2);
            memcpy(p, h[k].bins, sizeof h[k].bins);
            p[NC_CALIB_BINS] = h[k].zeros;
            p[NC_CALIB_BINS + 1] = h[k].pos;
        }
        st = nc_dist_sum_i64(d, iv, ni);
    }
    for (int64_t k = 0; st == NC_OK && k < n; k++) {
        const int64_t *p = iv + k * (NC_CALIB_BINS + 2);
        memcpy(h[k].bins, p, sizeof h[k].bins);
        h[k].zeros = p[NC_CALIB_BINS];
        h[k].pos = p[NC_CALIB_BINS + 1];
    }
    nc_free(dv);
    nc_free(iv);
    return st;
}

double nc_hist_percentile(const nc_hist *h, double p, int count_zeros)
{
    if (h->pos == 0)
        return 0.0;
    double cum = count_zeros ? (double)h->zeros : 0.0;
    /* the smallest value whose cumulative count reaches p % of the total
     * (less a hair, so that 99.9 % of 1000 values is the 999th, not the
     * 1000th, whatever the rounding of p/100) */
    double total = (double)h->pos + cum, target = p / 100.0 * total - 1e-9 * total;
    if (target <= cum)
        return 0.0;
    double w = h->range / NC_CALIB_BINS;
    for (int b = 0; b < NC_CALIB_BINS; b++) {
        if (h->bins[b] && cum + (double)h->bins[b] >= target) {
            double v = (b + (target - cum) / (double)h->bins[b]) * w;
            return v < h->max ? v : h->max;
        }
        cum += (double)h->bins[b];
    }
    return h->max;
}

/* Σ (a − q_T(a; c))² over the histogram, each bin taken as uniform (sampled
 * at four points). */
static double quant_error(const nc_hist *h, double c, int T)
{
    static const double sub[4] = {0.125, 0.375, 0.625, 0.875};
    double w = h->range / NC_CALIB_BINS, err = 0.0;
    for (int b = 0; b < NC_CALIB_BINS; b++) {
        if (!h->bins[b])
            continue;
        double e = 0.0;
        for (int k = 0; k < 4; k++) {
            double a = (b + sub[k]) * w;
            double q = floor(a * T / c + 0.5);
            q = q > T ? T : q;
            e += (a - c * q / T) * (a - c * q / T);
        }
        err += (double)h->bins[b] * e * 0.25;
    }
    return err;
}

double nc_hist_mse_clip(const nc_hist *h, int T)
{
    if (h->pos == 0 || h->max <= 0.0)
        return 0.0;
    /* a coarse grid over (0, max], then a finer one around its best point */
    enum { COARSE = 128, FINE = 64 };
    double best = h->max, best_err = INFINITY;
    for (int k = 1; k <= COARSE; k++) {
        double c = h->max * k / COARSE, e = quant_error(h, c, T);
        if (e < best_err) {
            best_err = e;
            best = c;
        }
    }
    double lo = best - h->max / COARSE, hi = best + h->max / COARSE;
    if (lo <= 0.0)
        lo = h->max / (COARSE * FINE);
    if (hi > h->max)
        hi = h->max;
    for (int k = 0; k <= FINE; k++) {
        double c = lo + (hi - lo) * k / FINE, e = quant_error(h, c, T);
        if (e < best_err) {
            best_err = e;
            best = c;
        }
    }
    return best;
}

static double hist_stat(const nc_hist *h, const nc_calib_options *o)
{
    switch (o->method) {
    case NC_THRESHOLD_MAX: return h->max;
    case NC_THRESHOLD_MSE: return nc_hist_mse_clip(h, o->timesteps);
    default: return nc_hist_percentile(h, o->percentile, o->count_zeros);
    }
}

/* ---- the pass over the data ---- */

typedef struct site_stats {
    nc_if_site *site;
    int64_t channels, plane; /* the value per sample is channels × plane */
    nc_hist *layer;
    nc_hist *ch;             /* per channel, or NULL */
} site_stats;

static nc_status stats_add(site_stats *ss, const nc_tensor *t, int64_t rows)
{
    const float *d = nc_f32(t);
    int64_t per = ss->channels * ss->plane;
    float *mag = NULL; /* a two-sided site: the statistics of |x| */
    if (ss->site->two_sided) {
        if (!(mag = nc_malloc((size_t)(rows * per) * sizeof *mag)))
            return nc_errorf(NC_ERR_NOMEM, "out of memory");
        for (int64_t i = 0; i < rows * per; i++)
            mag[i] = fabsf(d[i]);
        d = mag;
    }
    nc_hist_add(ss->layer, d, rows * per);
    if (ss->ch)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < ss->channels; c++)
                nc_hist_add(&ss->ch[c], d + r * per + c * ss->plane, ss->plane);
    nc_free(mag);
    return NC_OK;
}

/* θ of a site from its histograms, into the IF layer. */
void nc_site_cap_theta(const nc_if_site *site, nc_tensor *theta)
{
    float cap = (float)site->cap;
    for (int64_t c = 0; c < theta->numel; c++)
        if (nc_f32(theta)[c] > cap)
            nc_f32(theta)[c] = cap;
}

static nc_status set_theta(nc_snn *s, site_stats *ss, const nc_calib_options *o, nc_strlist *warnings)
{
    nc_if_site *site = ss->site;
    nc_snn_layer *L = &s->layers[site->layer];
    double layer_theta = hist_stat(ss->layer, o);
    site->act_max = ss->layer->max;
    site->n_zeros = ss->layer->zeros;
    site->n_values = ss->layer->zeros + ss->layer->pos;
    if (!(layer_theta > 0.0)) {
        nc_status st = nc_strlist_addf(warnings,
                                       "IF layer '%s': its activations were never positive on the calibration "
                                       "data (or the statistic fell among the zeros); θ = 1", L->name);
        if (st != NC_OK)
            return st;
        layer_theta = 1.0;
    }
    site->stat = layer_theta;
    if (site->two_sided)
        site->median_abs = nc_hist_percentile(ss->layer, 50.0, 0);
    int64_t n = ss->ch ? ss->channels : 1;
    nc_tensor *t = nc_tensor_new(NC_DTYPE_F32, 1, &n);
    if (!t)
        return NC_ERR_NOMEM;
    for (int64_t c = 0; c < n; c++) {
        double v = ss->ch ? hist_stat(&ss->ch[c], o) : layer_theta;
        if (!(v > 0.0)) {
            v = layer_theta;
            site->fallback_channels++;
        }
        nc_f32(t)[c] = (float)v;
        if (!(nc_f32(t)[c] > 0.0f)) /* a denormal that rounds to 0 */
            nc_f32(t)[c] = (float)layer_theta;
    }
    nc_site_cap_theta(site, t);
    nc_tensor_free(L->threshold);
    L->threshold = t;
    return NC_OK;
}

static void free_stats(site_stats *ss, int n)
{
    for (int i = 0; ss && i < n; i++) {
        nc_free(ss[i].layer);
        nc_free(ss[i].ch);
    }
    nc_free(ss);
}

/* Called after each batch of the ANN pass with every value's tensor. */
typedef nc_status (*batch_fn)(void *user, nc_tensor *const *all, int64_t rows);

/* Checks x against g's input: float32, (N, *input). */
static nc_status check_data(const nc_graph *g, const nc_tensor *x, const char *what)
{
    char b1[160], b2[160];
    const nc_value *in = &g->values[g->inputs[0]];
    int same = x->dtype == NC_DTYPE_F32 && x->ndim == in->ndim && x->shape[0] > 0;
    for (int d = 1; same && d < x->ndim; d++)
        same = x->shape[d] == in->shape[d];
    if (!same)
        return nc_errorf(NC_ERR_SHAPE, "%s data %s (%s) does not match the model input '%s' %s (float32, one "
                         "row per sample)", what, nc_shape_str(x->ndim, x->shape, b1, sizeof b1),
                         nc_dtype_name(x->dtype), in->name, nc_shape_str(in->ndim, in->shape, b2, sizeof b2));
    return NC_OK;
}

/* Runs g on the first n rows of x in batches (the model's own batch size
 * when it is fixed, the last batch zero-padded) and hands every batch's
 * values to fn with the number of real rows. */
static nc_status ann_pass(const nc_graph *g, const nc_tensor *x, int64_t n, int batch, batch_fn fn,
                          void *user, const char *what, nc_progress_fn progress, void *progress_user,
                          const nc_dist *dist)
{
    const nc_value *in = &g->values[g->inputs[0]];
    int fixed = in->shape[0] > 0;
    int64_t B = fixed ? in->shape[0] : (batch > 0 ? batch : 64);
    nc_status st = NC_OK;
    nc_tensor **all = nc_calloc((size_t)g->n_values + 1, sizeof *all);
    nc_tensor **outs = nc_calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!all || !outs)
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    /* a process group: this rank's contiguous run of the batches */
    nc_batches_options bo = {.batch = B, .samples = n, .pad = fixed, .dist = dist, .progress = progress,
                             .what = what, .progress_user = progress_user};
    nc_batches *it = NULL;
    nc_batch b;
    if (st == NC_OK)
        st = nc_batches_create(x, NULL, &bo, &it);
    while (st == NC_OK && nc_batches_next(it, &b)) {
        nc_tensor *bx = NULL;
        if ((st = nc_batches_tensor(it, &b, 0, NULL, &bx)) != NC_OK)
            break;
        const nc_tensor *ins[1] = {bx};
        st = nc_graph_execute(g, ins, outs, all, NULL);
        nc_tensor_free(bx);
        for (int k = 0; k < g->n_outputs; k++) {
            nc_tensor_free(outs[k]);
            outs[k] = NULL;
        }
        if (st == NC_OK)
            st = fn(user, all, b.count);
        for (int v = 0; v < g->n_values; v++) {
            nc_tensor_free(all[v]);
            all[v] = NULL;
        }
    }
    nc_batches_free(it);
    nc_free(all);
    nc_free(outs);
    return st;
}

typedef struct calib_run {
    const nc_graph *g;
    site_stats *ss;
    int n;
} calib_run;

static nc_status calib_batch(void *user, nc_tensor *const *all, int64_t rows)
{
    calib_run *r = user;
    for (int k = 0; k < r->n; k++) {
        const nc_tensor *t = all[r->ss[k].site->value];
        if (!t || t->dtype != NC_DTYPE_F32)
            return nc_errorf(NC_ERR_INTERNAL, "calibration value '%s' was not computed",
                             r->g->values[r->ss[k].site->value].name);
        nc_status st = stats_add(&r->ss[k], t, rows);
        if (st != NC_OK)
            return st;
    }
    return NC_OK;
}

/* Checks that the ANN value of `v` holds one number per neuron of layer L. */
static nc_status check_site_value(const nc_graph *g, const nc_snn_layer *L, int v)
{
    char b[160];
    const nc_value *val = &g->values[v];
    int64_t vsize = 1;
    for (int d = 1; d < val->ndim; d++)
        vsize *= val->shape[d];
    if (val->ndim < 2 || vsize != nc_snn_layer_size(L))
        return nc_errorf(NC_ERR_INTERNAL, "IF layer '%s' has %lld neurons but its ANN value '%s' is %s", L->name,
                         (long long)nc_snn_layer_size(L), val->name,
                         nc_shape_str(val->ndim, val->shape, b, sizeof b));
    return NC_OK;
}

nc_status nc_calibrate(const nc_graph *g, const nc_tensor *x, const nc_calib_options *o, nc_snn *s,
                       nc_if_site *sites, int n_sites, nc_strlist *warnings)
{
    int n_calib = 0;
    for (int i = 0; i < n_sites; i++)
        n_calib += sites[i].rule == NC_THETA_CALIB;
    if (n_calib == 0)
        return NC_OK;
    /* a process group: a rank failing before the merges still takes part in
     * the agreement the others meet in the first nc_hist_merge (its first
     * collective is this one) */
    nc_status st = check_data(g, x, "calibration");
    if (st != NC_OK)
        return nc_dist_agree_status(o->dist, st, "calibration");
    int64_t n = o->samples < x->shape[0] ? o->samples : x->shape[0];
    if (n <= 0)
        return nc_dist_agree_status(o->dist, nc_errorf(NC_ERR_INVALID_ARG, "no calibration samples"),
                                    "calibration");

    site_stats *ss = nc_calloc((size_t)n_calib, sizeof *ss);
    if (!ss)
        return nc_dist_agree_status(o->dist, nc_errorf(NC_ERR_NOMEM, "out of memory"), "calibration");
    for (int i = 0, k = 0; i < n_sites; i++) {
        if (sites[i].rule != NC_THETA_CALIB)
            continue;
        site_stats *t = &ss[k++];
        const nc_snn_layer *L = &s->layers[sites[i].layer];
        t->site = &sites[i];
        t->channels = nc_snn_layer_channels(L);
        t->plane = nc_snn_layer_size(L) / t->channels;
        if ((st = check_site_value(g, L, sites[i].value)) != NC_OK)
            break;
        t->layer = nc_calloc(1, sizeof *t->layer);
        t->ch = o->per_channel ? nc_calloc((size_t)t->channels, sizeof *t->ch) : NULL;
        if (!t->layer || (o->per_channel && !t->ch)) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory for calibration histograms");
            break;
        }
    }
    calib_run run = {g, ss, n_calib};
    if (st == NC_OK)
        st = ann_pass(g, x, n, o->batch, calib_batch, &run, "calibration", o->progress, o->progress_user, o->dist);
    /* a process group: every rank has histograms of its share; merged, they
     * are those of all n samples (the first merge also carries a failure) */
    for (int k = 0; k < n_calib && nc_dist_size(o->dist) > 1; k++) {
        if ((st = nc_hist_merge(o->dist, ss[k].layer, 1, st)) == NC_OK && o->per_channel)
            st = nc_hist_merge(o->dist, ss[k].ch, ss[k].channels, st);
        if (st != NC_OK)
            break;
    }
    for (int k = 0; st == NC_OK && k < n_calib; k++)
        st = set_theta(s, &ss[k], o, warnings);
    free_stats(ss, n_calib);
    return st;
}

/* ---- bias correction ---- */

typedef struct bc_target {
    int64_t channels, plane;
    const nc_snn_layer *L;
    double *mean;   /* per neuron: sum over samples of the ANN activation clipped to [0, θ] */
} bc_target;

typedef struct bc_run {
    nc_if_site *sites;
    bc_target *t;
    int n;
} bc_run;

static nc_status bc_batch(void *user, nc_tensor *const *all, int64_t rows)
{
    bc_run *r = user;
    for (int k = 0; k < r->n; k++) {
        bc_target *t = &r->t[k];
        const float *a = nc_f32(all[r->sites[k].out_value]);
        int64_t per = t->channels * t->plane;
        for (int64_t j = 0; j < per; j++) {
            double th = nc_snn_param(t->L->threshold, t->L, j, 1.0f), acc = 0.0;
            for (int64_t i = 0; i < rows; i++) {
                double v = a[i * per + j];
                acc += v < 0.0 ? 0.0 : (v > th ? th : v);
            }
            t->mean[j] += acc;
        }
    }
    return NC_OK;
}

/* The Conv2d/Affine whose bias shifts the input current of IF layer L,
 * through max or average pooling and one input of an Add; -1 if none. */
static int bias_layer(const nc_snn *s, const nc_snn_layer *L)
{
    int id = L->inputs[0];
    for (int depth = 0; depth < 64 && id > 0; depth++) {
        const nc_snn_layer *X = &s->layers[id];
        switch (X->kind) {
        case NC_SNN_CONV2D: case NC_SNN_AFFINE:
            return X->shape[0] == L->shape[0] ? id : -1;
        case NC_SNN_MAXPOOL2D: case NC_SNN_POOL2D:
            id = X->inputs[0];
            break;
        case NC_SNN_ADD: {
            int next = -1;
            for (int k = 0; k < X->n_inputs && next < 0; k++) {
                int kind = s->layers[X->inputs[k]].kind;
                if (nc_snn_kind_is_synaptic(kind))
                    next = X->inputs[k];
            }
            id = next;
            break;
        }
        default:
            return -1;
        }
    }
    return -1;
}

/* Per-neuron mean output rate·(spike value) of IF layer `id` over the
 * first n rows of x, T steps, into mean[size]. With a process group each
 * rank runs its share of the batches and the sums are added across ranks. */
static nc_status snn_means(nc_snn *s, int id, const nc_tensor *x, int64_t n, int T, double *mean,
                           const nc_dist *dist)
{
    const nc_snn_layer *L = &s->layers[id];
    int64_t size = nc_snn_layer_size(L);
    int64_t B = 64;
    int saved = s->output, saved_n = s->n_layers;
    s->output = id; /* the session then sums this layer's output over the steps */
    /* only layers up to id matter, unless a recurrent edge reads a later one */
    int cut = 1;
    for (int j = 0; j <= id; j++)
        for (int k = 0; k < s->layers[j].n_inputs; k++)
            cut &= s->layers[j].inputs[k] <= id;
    if (cut)
        s->n_layers = id + 1;
    /* cpu-fast gives the reference's results bit for bit, several times
     * faster; the reference runs whatever it cannot */
    nc_session_options so = {0};
    so.timesteps = T;
    so.backend = "cpu-fast";
    nc_session *ss = NULL;
    nc_status st = nc_session_create(s, &so, &ss);
    if (st != NC_OK && st != NC_ERR_NOMEM) {
        so.backend = "cpu";
        st = nc_session_create(s, &so, &ss);
    }
    memset(mean, 0, (size_t)size * sizeof *mean);
    /* a process group: this rank's run of the batches */
    nc_batches_options bo = {.batch = B, .samples = n, .dist = dist};
    nc_batches *it = NULL;
    nc_batch b;
    if (st == NC_OK)
        st = nc_batches_create(x, NULL, &bo, &it);
    while (st == NC_OK && nc_batches_next(it, &b)) {
        nc_tensor *bx = NULL, *out = NULL;
        if ((st = nc_batches_tensor(it, &b, 0, NULL, &bx)) != NC_OK)
            break;
        st = nc_session_run(ss, bx, &out);
        nc_tensor_free(bx);
        for (int64_t i = 0; st == NC_OK && i < b.count * size; i++)
            mean[i % size] += nc_f32(out)[i];
        nc_tensor_free(out);
    }
    nc_batches_free(it);
    nc_session_free(ss);
    s->output = saved;
    s->n_layers = saved_n;
    if ((st = nc_dist_agree_status(dist, st, "layer-wise correction")) == NC_OK)
        st = nc_dist_sum_f64(dist, mean, size);
    for (int64_t j = 0; j < size; j++)
        mean[j] /= (double)T * (double)n;
    return st;
}

/* Potential correction: v(0) of L becomes a full-shape tensor (θ/2 where it
 * was unset) shifted by T·err per neuron, the charge that T steps of a
 * current err would have brought. Returns the mean |shift| in *mean_shift. */
static nc_status shift_v0(nc_snn_layer *L, const double *err, int T, double *mean_shift)
{
    int64_t size = nc_snn_layer_size(L);
    nc_tensor *v = nc_tensor_new(NC_DTYPE_F32, L->ndim, L->shape);
    if (!v)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    double sum = 0.0;
    for (int64_t j = 0; j < size; j++) {
        float v0 = nc_snn_param(L->v_init, L, j, NAN);
        if (isnan(v0))
            v0 = 0.5f * nc_snn_param(L->threshold, L, j, 1.0f);
        nc_f32(v)[j] = (float)((double)v0 + T * err[j]);
        sum += fabs(T * err[j]);
    }
    *mean_shift = sum / (double)size;
    nc_tensor_free(L->v_init);
    L->v_init = v;
    return NC_OK;
}

nc_status nc_layer_correct(const nc_graph *g, const nc_tensor *x, const nc_correct_options *o, nc_snn *s,
                           nc_if_site *sites, int n_sites, nc_strlist *warnings)
{
    if (n_sites == 0 || (!o->bias && !o->potential))
        return NC_OK;
    /* a process group: a rank failing before the ANN pass still takes part
     * in the agreement the others meet after it */
    const char *what = "layer-wise correction";
    nc_status st = check_data(g, x, "calibration");
    if (st != NC_OK)
        return nc_dist_agree_status(o->dist, st, what);
    int64_t n = o->samples < x->shape[0] ? o->samples : x->shape[0];
    int T = o->timesteps, rounds = o->rounds > 0 ? o->rounds : 1;
    if (n <= 0 || T <= 0)
        return nc_dist_agree_status(
            o->dist, nc_errorf(NC_ERR_INVALID_ARG, "layer-wise correction needs samples and T > 0"), what);
    bc_target *t = nc_calloc((size_t)n_sites, sizeof *t);
    double *err = NULL;
    if (!t)
        return nc_dist_agree_status(o->dist, nc_errorf(NC_ERR_NOMEM, "out of memory"), what);
    int64_t max_size = 1;
    for (int k = 0; k < n_sites && st == NC_OK; k++) {
        t[k].L = &s->layers[sites[k].layer];
        int64_t size = nc_snn_layer_size(t[k].L);
        t[k].channels = nc_snn_layer_channels(t[k].L);
        t[k].plane = size / t[k].channels;
        max_size = size > max_size ? size : max_size;
        if ((st = check_site_value(g, t[k].L, sites[k].out_value)) == NC_OK &&
            !(t[k].mean = nc_calloc((size_t)size, sizeof *t[k].mean)))
            st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    }
    bc_run run = {sites, t, n_sites};
    if (st == NC_OK)
        st = ann_pass(g, x, n, 64, bc_batch, &run, "layer-wise correction (ANN)", o->progress, o->progress_user,
                      o->dist);
    /* a process group: the sums of every rank's share */
    st = nc_dist_agree_status(o->dist, st, what);
    for (int k = 0; st == NC_OK && k < n_sites; k++)
        st = nc_dist_sum_f64(o->dist, t[k].mean, nc_snn_layer_size(t[k].L));
    if (st == NC_OK && !(err = nc_malloc((size_t)max_size * sizeof *err)))
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
    /* Layer by layer, so that each correction sees the corrected layers
     * before it; each round measures the error again, as the SNN's rate is
     * a step function of bias and v(0) and one linear step over- or
     * undershoots (most at small T). */
    for (int k = 0; st == NC_OK && k < n_sites; k++) {
        nc_if_site *site = &sites[k];
        nc_snn_layer *L = &s->layers[site->layer];
        int64_t size = nc_snn_layer_size(L), plane = t[k].plane;
        if (site->two_sided) /* spikes of a Nonlinear layer's signed output: no ReLU to compare with */
            continue;
        int b = o->bias ? bias_layer(s, L) : -1;
        if (o->bias && b < 0)
            st = nc_strlist_addf(warnings, "bias correction: IF layer '%s' has no Conv/Affine bias directly "
                                 "before it; left uncorrected", L->name);
        double shift = 0.0;
        for (int r = 0; b >= 0 && st == NC_OK && r < rounds; r++) {
            if ((st = snn_means(s, site->layer, x, n, T, err, o->dist)) != NC_OK)
                break;
            float *bias = nc_f32(s->layers[b].bias);
            for (int64_t c = 0; c < t[k].channels; c++) {
                double e = 0.0;
                for (int64_t j = c * plane; j < (c + 1) * plane; j++)
                    e += t[k].mean[j] / (double)n - err[j];
                e /= (double)plane;
                bias[c] = (float)((double)bias[c] + e);
                shift += fabs(e);
            }
        }
        if (b >= 0)
            site->bias_shift = shift / (double)t[k].channels;
        for (int r = 0; o->potential && st == NC_OK && r < rounds; r++) {
            double ms = 0.0;
            if ((st = snn_means(s, site->layer, x, n, T, err, o->dist)) != NC_OK)
                break;
            for (int64_t j = 0; j < size; j++)
                err[j] = t[k].mean[j] / (double)n - err[j];
            if ((st = shift_v0(L, err, T, &ms)) == NC_OK)
                site->v0_shift = (isnan(site->v0_shift) ? 0.0 : site->v0_shift) + ms;
        }
        if (o->progress)
            o->progress("layer-wise correction", k + 1, n_sites, o->progress_user);
    }
    for (int k = 0; k < n_sites; k++)
        nc_free(t[k].mean);
    nc_free(t);
    nc_free(err);
    return st;
}
