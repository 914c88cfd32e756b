/* Bursts per SignedIF layer (convert_bursts.h). */
#include <math.h>
#include <stdio.h>

#include "convert_bursts.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"
#include "convert/train/train.h"
#include "snn/ir/snn_ir.h"

/* The default burst: two spikes a step, measured on torchvision's deep
 * networks, where one spike a step leaves ResNet-50 and MobileNet-V2 short
 * of the ANN at T = 256 (docs/zoo.md); one where a QCFS pattern gave a
 * threshold, since a QCFS-trained network is exact at T = L with one spike
 * a step (finer levels are not the network it was trained as). */
int nc_default_burst(const nc_cgraph *cg)
{
    for (int i = 0; i < cg->n_sites; i++)
        if (cg->sites[i].rule == NC_THETA_QCFS)
            return 1;
    return NC_DEFAULT_BURST;
}

/* The bursts of two-sided layer L: at least NC_NONLINEAR_BURST, and more
 * (up to NC_MAX_BURST) where its values are heavy-tailed, so that θ = clip / B
 * is at most NC_MEDIAN_STEPS times the median |x| (a median neuron fires at
 * least once every NC_MEDIAN_STEPS steps): with the clip at the largest of a
 * few huge values (a deep residual stream with random weights: |x| up to
 * 10⁴ where the median is 1), 32 levels would leave the typical neurons
 * silent for hundreds of steps. Ordinary layers (clip / median below
 * 32·NC_MEDIAN_STEPS) keep NC_NONLINEAR_BURST. */
#define NC_MEDIAN_STEPS 4
static int two_sided_burst(const nc_if_site *site, int burst)
{
    int B = burst < NC_NONLINEAR_BURST ? NC_NONLINEAR_BURST : burst;
    double median_theta = site ? site->median_abs * NC_MEDIAN_STEPS : 0.0;
    if (!(median_theta > 0.0) || !(site->stat > median_theta * B))
        return B;
    double need = ceil(site->stat / median_theta);
    return need >= NC_MAX_BURST ? NC_MAX_BURST : (int)need;
}

/* The default burst, measured (nc_convert_options.burst 0). A signed
 * neuron's count after T steps is its summed input quantised to steps of
 * clip / (B·T) (DESIGN §3); the errors of the layers in series add up at the
 * readout, so deep networks need finer levels at the same T: with bursts of
 * 2 at T = 32, centred cosine against the ANN 0.26 on regnet_x_400mf (67
 * spiking layers in series) where resnet18 reaches 0.97, and bursts of 16
 * bring regnet over 0.9 (docs/energy.md). How much one network loses is
 * not predicted well by its layers' statistics alone (how an error grows
 * along the layers depends on the weights), so it is measured: the QCFS
 * view of the calibrated network (each IF layer's output quantised to B·T
 * levels, what the SNN computes at T with bursts of B, no dynamics; a
 * spiking max pool the max of its inputs' quantised rates, as its count is
 * the max of theirs) runs on up to
 * NC_RESOLUTION_SAMPLES calibration rows at B = burst, 2·burst, …
 * NC_RESOLUTION_MAX_BURST, against the unquantised view (the rate limit),
 * and B is the first whose centred cosine (over the rows) reaches
 * NC_RESOLUTION_COSINE at T = NC_RESOLUTION_T. Where bursts are what limits
 * the SNN, the view is close to it (view / SNN at T = 32, 16 held-out
 * images: regnet_x_400mf 0.951 / 0.924 with bursts of 16, mnasnet0_5
 * 0.982 / 0.984 with 32), so 0.95 leaves the SNN above 0.9. A network that
 * needs no more keeps `burst`; one the view cannot run (two-sided SignedIF,
 * Reshape) too. */
#define NC_RESOLUTION_T 32
#define NC_RESOLUTION_COSINE 0.95
#define NC_RESOLUTION_MAX_BURST 64
#define NC_RESOLUTION_SAMPLES 64
/* a doubling must cut 1 − cosine to this fraction at least (a quarter where
 * the levels are all that is left) to be taken; one that does not may still
 * precede doublings that do (heavy-tailed layers: their typical values are
 * resolved only once the levels are fine enough, inception_v3 at 96 px 0.739
 * with bursts of 2, 0.760 with 4, 0.890 with 8, 0.948 with 16, 0.976 with
 * 32), so the next one is measured too and taken where the two cut it to
 * the square of this fraction */
#define NC_RESOLUTION_GAIN 0.75

/* The cosine of a and b (rows × cols) after subtracting each column's mean
 * over the rows; NAN where either is constant over the rows. */
static double centred_cosine(const float *a, const float *b, int64_t rows, int64_t cols)
{
    double ab = 0.0, aa = 0.0, bb = 0.0;
    for (int64_t c = 0; c < cols; c++) {
        double ma = 0.0, mb = 0.0;
        for (int64_t r = 0; r < rows; r++) {
            ma += a[r * cols + c];
            mb += b[r * cols + c];
        }
        ma /= (double)rows;
        mb /= (double)rows;
        for (int64_t r = 0; r < rows; r++) {
            double da = a[r * cols + c] - ma, db = b[r * cols + c] - mb;
            ab += da * db;
            aa += da * da;
            bb += db * db;
        }
    }
    return aa > 0.0 && bb > 0.0 ? ab / sqrt(aa * bb) : NAN;
}

/* The centred cosine of the view's readout at bursts of B against `limit`
 * (rows × cols) into *c, and its entry appended to curve (size 256, *len
 * its length so far). */
static nc_status measure_burst(const nc_cgraph *cg, const nc_tensor *view, int B, const float *limit, int64_t rows,
                               int64_t cols, double *c, char *curve, int *len)
{
    nc_tensor *yb = NULL;
    nc_status st = nc_snn_quantised_readouts(cg->snn, view, NC_RESOLUTION_T, &B, 1, NULL, &yb);
    if (st != NC_OK)
        return st;
    *c = centred_cosine(nc_f32(yb), limit, rows, cols);
    nc_tensor_free(yb);
    if (*len >= 0 && *len < 256)
        *len += snprintf(curve + *len, 256 - (size_t)*len, ", %.3f with %d", *c, B);
    return NC_OK;
}

nc_status nc_resolution_burst(const nc_cgraph *cg, const nc_tensor *calib, int burst, int *out,
                              nc_strlist *notes)
{
    *out = burst;
    int64_t rows = calib->shape[0] < NC_RESOLUTION_SAMPLES ? calib->shape[0] : NC_RESOLUTION_SAMPLES;
    if (rows < 2)
        return NC_OK;
    nc_tensor view = *calib; /* the first rows */
    view.shape[0] = rows;
    view.numel = calib->numel / calib->shape[0] * rows;
    int bursts[2] = {0, burst};
    nc_tensor *y = NULL;
    nc_status st = nc_snn_quantised_readouts(cg->snn, &view, NC_RESOLUTION_T, bursts, 2, NULL, &y);
    if (st != NC_OK) {
        if (st == NC_ERR_NOMEM)
            return st;
        /* not a network the view runs: the default stays */
        return nc_strlist_addf(notes, "bursts of %d: their resolution was not measured (%s)", burst,
                               nc_last_error());
    }
    int64_t cols = y->shape[2];
    const float *limit = nc_f32(y);
    float *q = nc_f32(y) + rows * cols;
    double cos = centred_cosine(q, limit, rows, cols);
    int B = burst;
    char curve[256];
    int len = snprintf(curve, sizeof curve, "%.3f with bursts of %d", cos, B);
    int stalled = 0;
    while (cos < NC_RESOLUTION_COSINE && B < NC_RESOLUTION_MAX_BURST) {
        double c2, c4;
        if ((st = measure_burst(cg, &view, 2 * B, limit, rows, cols, &c2, curve, &len)) != NC_OK)
            break;
        if (1.0 - c2 <= NC_RESOLUTION_GAIN * (1.0 - cos)) {
            B *= 2;
            cos = c2;
            continue;
        }
        /* little gain: the next doubling may still bring it (NC_RESOLUTION_GAIN) */
        if (4 * B > NC_RESOLUTION_MAX_BURST ||
            (st = measure_burst(cg, &view, 4 * B, limit, rows, cols, &c4, curve, &len)) != NC_OK ||
            !(1.0 - c4 <= NC_RESOLUTION_GAIN * NC_RESOLUTION_GAIN * (1.0 - cos))) {
            stalled = 1; /* finer levels no longer help: what is left is not theirs to remove */
            break;
        }
        B *= 4;
        cos = c4;
    }
    nc_tensor_free(y);
    if (st != NC_OK)
        return st;
    if (isnan(cos)) /* the readout does not vary over the rows: nothing to measure */
        return NC_OK;
    *out = B;
    if (stalled && cos < NC_RESOLUTION_COSINE) {
        return nc_strlist_addf(notes, "bursts of %d: the network's readout, quantised as the bursts quantise it at "
                               "T = %d, has centred cosine %s against its rate limit on %lld calibration rows, "
                               "below %.2f, and finer levels stop helping", B, NC_RESOLUTION_T, curve,
                               (long long)rows, NC_RESOLUTION_COSINE);
    }
    if (B == burst)
        return NC_OK;
    return nc_strlist_addf(notes, "bursts of up to %d spikes a step (not %d): the network's readout, quantised as "
                           "the bursts quantise it at T = %d, has centred cosine %s against its rate limit on "
                           "%lld calibration rows (%.2f wanted; --burst sets the burst)", B, burst,
                           NC_RESOLUTION_T, curve, (long long)rows, NC_RESOLUTION_COSINE);
}

nc_status nc_apply_bursts(const nc_cgraph *cg, int burst, nc_strlist *notes)
{
    nc_snn *s = cg->snn;
    int heavy = 0, heavy_max = 0;
    const nc_if_site **site_of = nc_calloc((size_t)s->n_layers, sizeof *site_of);
    if (!site_of)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    for (int k = 0; k < cg->n_sites; k++)
        site_of[cg->sites[k].layer] = &cg->sites[k];
    /* the layers that spiking max pools read too: a pool counts bursts in spikes (kernels/window_index.h) */
    for (int i = 0; i < s->n_layers; i++) {
        nc_snn_layer *L = &s->layers[i];
        if (L->kind != NC_SNN_SIGNED_IF)
            continue;
        int B = L->two_sided ? two_sided_burst(site_of[i], burst) : burst;
        if (L->two_sided && B > NC_NONLINEAR_BURST && B > burst) {
            heavy++;
            heavy_max = B > heavy_max ? B : heavy_max;
        }
        if (B < 2)
            continue;
        L->max_spikes = B;
        nc_tensor *ts[3] = {L->threshold, L->v_init, L->spike_value};
        for (int k = 0; k < 3; k++)
            for (int64_t j = 0; ts[k] && j < ts[k]->numel; j++)
                nc_f32(ts[k])[j] /= (float)B;
    }
    nc_free(site_of);
    if (heavy && nc_strlist_addf(notes, "%d two-sided SignedIF layers have heavy-tailed values (median |x| below "
                                 "their clip / %d): they send bursts of up to %d spikes a step", heavy,
                                 NC_NONLINEAR_BURST * NC_MEDIAN_STEPS, heavy_max) != NC_OK)
        return NC_ERR_NOMEM;
    return NC_OK;
}
