/* Threshold calibration (calibrate.h). */
#include <math.h>
#include <string.h>

#include "calibrate.h"
#include "snn/alloc.h"
#include "snn/ann_exec.h"
#include "snn/error.h"
#include "snn/tensor.h"

/* ---- histograms ---- */

static void hist_grow(nc_hist *h, double m)
{
    if (h->range <= 0.0) {
        h->range = m;
        return;
    }
    while (m > h->range) {
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

double nc_hist_percentile(const nc_hist *h, double p, int count_zeros)
{
    if (h->pos == 0)
        return 0.0;
    double cum = count_zeros ? (double)h->zeros : 0.0;
    double target = p / 100.0 * ((double)h->pos + cum);
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

static void stats_add(site_stats *ss, const nc_tensor *t, int64_t rows)
{
    const float *d = nc_f32(t);
    int64_t per = ss->channels * ss->plane;
    nc_hist_add(ss->layer, d, rows * per);
    if (ss->ch)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < ss->channels; c++)
                nc_hist_add(&ss->ch[c], d + r * per + c * ss->plane, ss->plane);
}

/* θ of a site from its histograms, into the IF layer. */
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

nc_status nc_calibrate(const nc_graph *g, const nc_tensor *x, const nc_calib_options *o, nc_snn *s,
                       nc_if_site *sites, int n_sites, nc_strlist *warnings)
{
    char b1[160], b2[160];
    int n_calib = 0;
    for (int i = 0; i < n_sites; i++)
        n_calib += sites[i].rule == NC_THETA_CALIB;
    if (n_calib == 0)
        return NC_OK;
    const nc_value *in = &g->values[g->inputs[0]];
    int same = x->dtype == NC_DTYPE_F32 && x->ndim == in->ndim;
    for (int d = 1; same && d < x->ndim; d++)
        same = x->shape[d] == in->shape[d];
    if (!same)
        return nc_errorf(NC_ERR_SHAPE, "calibration data %s (%s) does not match the model input '%s' %s "
                         "(float32, one row per sample)", nc_shape_str(x->ndim, x->shape, b1, sizeof b1),
                         nc_dtype_name(x->dtype), in->name, nc_shape_str(in->ndim, in->shape, b2, sizeof b2));
    int64_t n = o->samples < x->shape[0] ? o->samples : x->shape[0];
    if (n <= 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "no calibration samples");
    int fixed = in->shape[0] > 0;
    int64_t B = fixed ? in->shape[0] : (o->batch > 0 ? o->batch : 64);
    int64_t row = x->numel / x->shape[0];

    nc_status st = NC_OK;
    site_stats *ss = nc_calloc((size_t)n_calib, sizeof *ss);
    nc_tensor **all = nc_calloc((size_t)g->n_values + 1, sizeof *all);
    nc_tensor **outs = nc_calloc((size_t)g->n_outputs + 1, sizeof *outs);
    if (!ss || !all || !outs) {
        st = nc_errorf(NC_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (int i = 0, k = 0; i < n_sites; i++) {
        if (sites[i].rule != NC_THETA_CALIB)
            continue;
        site_stats *t = &ss[k++];
        const nc_snn_layer *L = &s->layers[sites[i].layer];
        const nc_value *v = &g->values[sites[i].value];
        t->site = &sites[i];
        t->channels = nc_snn_layer_channels(L);
        t->plane = nc_snn_layer_size(L) / t->channels;
        int64_t vsize = 1;
        for (int d = 1; d < v->ndim; d++)
            vsize *= v->shape[d];
        if (v->ndim < 2 || vsize != nc_snn_layer_size(L)) {
            st = nc_errorf(NC_ERR_INTERNAL, "IF layer '%s' has %lld neurons but its ANN value '%s' is %s",
                           L->name, (long long)nc_snn_layer_size(L), v->name,
                           nc_shape_str(v->ndim, v->shape, b1, sizeof b1));
            goto done;
        }
        t->layer = nc_calloc(1, sizeof *t->layer);
        t->ch = o->per_channel ? nc_calloc((size_t)t->channels, sizeof *t->ch) : NULL;
        if (!t->layer || (o->per_channel && !t->ch)) {
            st = nc_errorf(NC_ERR_NOMEM, "out of memory for calibration histograms");
            goto done;
        }
    }

    for (int64_t start = 0; start < n && st == NC_OK; start += B) {
        int64_t rows = n - start < B ? n - start : B;
        int64_t shape[NC_MAX_DIMS];
        memcpy(shape, x->shape, sizeof shape);
        shape[0] = fixed ? B : rows;
        nc_tensor *batch = nc_tensor_new(NC_DTYPE_F32, x->ndim, shape);
        if (!batch) {
            st = NC_ERR_NOMEM;
            break;
        }
        memcpy(batch->data, nc_f32(x) + start * row, (size_t)(rows * row) * sizeof(float));
        const nc_tensor *ins[1] = {batch};
        st = nc_graph_execute(g, ins, outs, all, NULL);
        nc_tensor_free(batch);
        for (int k = 0; k < g->n_outputs; k++) {
            nc_tensor_free(outs[k]);
            outs[k] = NULL;
        }
        for (int k = 0; st == NC_OK && k < n_calib; k++) {
            const nc_tensor *t = all[ss[k].site->value];
            if (!t || t->dtype != NC_DTYPE_F32)
                st = nc_errorf(NC_ERR_INTERNAL, "calibration value '%s' was not computed",
                               g->values[ss[k].site->value].name);
            else
                stats_add(&ss[k], t, rows);
        }
        for (int v = 0; v < g->n_values; v++) {
            nc_tensor_free(all[v]);
            all[v] = NULL;
        }
        if (st == NC_OK && o->progress)
            o->progress("calibration", start + rows, n, o->progress_user);
    }
    for (int k = 0; st == NC_OK && k < n_calib; k++)
        st = set_theta(s, &ss[k], o, warnings);

done:
    free_stats(ss, n_calib);
    nc_free(all);
    nc_free(outs);
    return st;
}
