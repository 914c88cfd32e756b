/* Threshold calibration of a plain ReLU network (DESIGN §3): the ANN runs on
 * calibration data and each IF layer's θ becomes a statistic of the
 * activations it replaces, per layer or per channel: the maximum, a
 * percentile, or the clip c that minimises Σ (a − q_T(a; c))² with
 * q_T(a; c) = c·clip(floor(a·T/c + 1/2)/T, 0, 1) (Li et al., ICML 2021).
 *
 * The statistics come from one pass over the data into histograms of
 * NC_CALIB_BINS bins over [0, range), where range is the smallest power of
 * two above the largest value and doubles (neighbouring bins merge)
 * whenever a larger value arrives; range <= 2·max, so a percentile is
 * exact to one bin, at most max/1024. The maximum is exact. Because the
 * range is a power of two, a value's bin is exact arithmetic and the same
 * whichever range it arrived under: the histogram depends only on the
 * values, not their order, so histograms of parts of the data (the ranks
 * of a process group) merge exactly into the histogram of the whole. */
#ifndef NC_CONVERT_CALIBRATE_H
#define NC_CONVERT_CALIBRATE_H

#include "convert_graph.h"

#define NC_CALIB_BINS 2048

typedef struct nc_calib_options {
    nc_threshold_method method;
    double percentile;   /* in (0, 100] */
    int count_zeros;     /* percentiles over all activations, or (0) the positive ones */
    int per_channel;
    int timesteps;       /* T of the MSE clip */
    int64_t samples;     /* rows of x used (the first ones) */
    int batch;           /* rows per forward pass; a model with a fixed batch gets exactly that */
    nc_progress_fn progress;
    void *progress_user;
    const nc_dist *dist; /* shares of the batches, histograms merged; NULL = one process */
} nc_calib_options;

typedef struct nc_hist {
    double range;        /* upper edge of the last bin; 0 before the first positive value */
    double max;          /* largest value seen */
    int64_t zeros, pos;  /* values <= 0, values > 0 */
    int64_t bins[NC_CALIB_BINS];
} nc_hist;

/* Adds n values (zeros and negatives are counted as zeros). */
void nc_hist_add(nc_hist *h, const float *v, int64_t n);
/* Merges the histograms h[0..n) of every rank of d into each (collective):
 * the ranges grow to the largest, then counts are summed as integers and
 * maxima taken, so the result is exactly one process's histogram of all
 * the values. `mine` is this rank's status so far: when it, or any rank's,
 * is an error, the merge fails on every rank (returning `mine` where it
 * was the error). */
nc_status nc_hist_merge(const nc_dist *d, nc_hist *h, int64_t n, nc_status mine);
/* The p-th percentile (0 < p <= 100) of the positive values, or of all
 * values with count_zeros; 0 when that falls among the zeros or nothing
 * positive was seen. */
double nc_hist_percentile(const nc_hist *h, double p, int count_zeros);
/* The clip c in (0, max] minimising the T-step quantisation error. */
double nc_hist_mse_clip(const nc_hist *h, int T);

/* Runs g on the first o->samples rows of x (float32, (N, *input)) and sets
 * the threshold of the IF layer of every NC_THETA_CALIB site in s from its
 * ANN value's statistics, filling the site's statistics. A layer (or
 * channel) that never activated gets the layer's θ (or 1, with a warning). */
nc_status nc_calibrate(const nc_graph *g, const nc_tensor *x, const nc_calib_options *o, nc_snn *s,
                       nc_if_site *sites, int n_sites, nc_strlist *warnings);

/* θ of a site from a Clip(0, c) brought down to c where it exceeds it. */
void nc_site_cap_theta(const nc_if_site *site, nc_tensor *theta);

/* Where a calibrated (NC_THETA_CALIB) site's θ came from (nc_if_site.source). */
typedef enum nc_calib_source {
    NC_SOURCE_DATA = 0,       /* the histograms of nc_calibrate */
    NC_SOURCE_BN_STATS = 1,   /* the BatchNormalization right before the ReLU */
    NC_SOURCE_PROPAGATED = 2, /* BN statistics carried forward (ReLU, Add, a MaxPool before the neuron) */
    NC_SOURCE_CLIP = 3,       /* data-free without statistics: the cap c of a Clip(0, c) */
    NC_SOURCE_ASSUMED_INPUT = 4 /* no BN upstream: the input taken as N(0, 1) a channel, carried forward */
} nc_calib_source;

/* Without data (calibrate_datafree.c): the θ of every NC_THETA_CALIB site
 * from the modelled distribution of its activation. The pre-activation of a
 * BatchNormalization output is taken, per channel, as N(β, γ²) (the BN's own
 * premise: its input normalised by its running statistics), carried through
 * ReLU (moments), Add (sums, independent), Conv/Gemm/MatMul (mean exact,
 * variance with independent inputs), average pooling (variance kept),
 * Flatten and Identity (calibrate_datafree.c lists the rules); where no BN lies upstream,
 * from the input taken as N(0, 1) per channel, carried the same way (source
 * "assumed-input", named in one warning); the ReLU output is a
 * rectified Gaussian (after a MaxPool of k moved before the neuron, its
 * CDF^k). θ is o's statistic of it, with o's zeros convention: the
 * percentile analytically (per layer over the equal mixture of the
 * channels, as the data path's one histogram holds them); "max", which a
 * Gaussian lacks, as the 99.9999th percentile; the MSE clip as nc_hist_mse_clip
 * of the histogram the distribution would fill. o->samples, batch and dist
 * are not used. Sets site->source, stat and fallback_channels. When any
 * site has no statistics, fails (NC_ERR_INVALID_ARG) naming them all. */
nc_status nc_calibrate_data_free(const nc_graph *g, const nc_calib_options *o, nc_snn *s, nc_if_site *sites,
                                 int n_sites, nc_strlist *warnings);

/* Layer-wise correction of the converted network against the ANN (Li et
 * al., ICML 2021, bias and potential calibration): for each site in order,
 * the SNN runs `timesteps` steps on the first `samples` rows of x and its
 * output rate·θ is compared with the ANN's activation at out_value clipped
 * to [0, θ], per neuron, averaged over the samples. Bias correction adds
 * each channel's mean error to the bias of the Conv2d/Affine feeding the IF
 * layer (through pooling and one input of an Add); potential correction
 * then adds T × each neuron's error to its v(0). Each is repeated `rounds`
 * times (each round measures again). Sets site->bias_shift and
 * site->v0_shift. With a process group `dist` each rank takes a share of
 * the batches and the sums (doubles) are added across ranks: equal to one
 * process's up to their rounding. */
typedef struct nc_correct_options {
    int timesteps;
    int64_t samples;
    int bias, potential;
    int rounds;          /* 0 = 1 */
    nc_progress_fn progress;
    void *progress_user;
    const nc_dist *dist;
} nc_correct_options;

nc_status nc_layer_correct(const nc_graph *g, const nc_tensor *x, const nc_correct_options *o, nc_snn *s,
                           nc_if_site *sites, int n_sites, nc_strlist *warnings);

#endif
