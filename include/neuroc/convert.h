/*
 * neuroc — ANN → SNN conversion (calibration, QCFS), QCFS fine-tuning, and
 * evaluation of spiking networks with accuracy at every timestep.
 * Included by <neuroc/neuroc.h>; the conventions of DESIGN §5 hold.
 */
/* The umbrella header first: it includes every public header in the order
 * their types need, this one among them, so this header stands alone. */
#include "neuroc/neuroc.h"

#ifndef NEUROC_CONVERT_H
#define NEUROC_CONVERT_H

#ifdef __cplusplus
extern "C" {
#endif

/* Progress of long work (calibration, fine-tuning, evaluation): `done` of
 * `total` units of `what` ("calibration", "epoch 2/3", "evaluation"). The
 * library calls it from the working thread; the CLI draws a bar when stderr
 * is a terminal. NULL = no progress. */
typedef void (*nc_progress_fn)(const char *what, int64_t done, int64_t total, void *user);

typedef enum nc_threshold_method {
    /* the default (0: a zeroed struct): NC_THRESHOLD_MAX with signed spikes,
     * NC_THRESHOLD_PERCENTILE at 99.9 with plain ones (a plain IF neuron
     * cannot take back the spikes of a slow start, so it wants the lower θ) */
    NC_THRESHOLD_DEFAULT = 0,
    NC_THRESHOLD_PERCENTILE = 1, /* the p-th percentile of the activations (default p = 99.9) */
    NC_THRESHOLD_MAX = 2,        /* the largest activation */
    NC_THRESHOLD_MSE = 3         /* the clip that minimises the MSE of the T-step quantised output */
} nc_threshold_method;

/* What an IF neuron sends (DESIGN §3). */
typedef enum nc_spike_kind {
    NC_SPIKES_DEFAULT = 0, /* the default (0: a zeroed struct): NC_SPIKES_SIGNED */
    /* NC_SNN_SIGNED_IF: a neuron also sends negative spikes to take back
     * the ones its cumulative input no longer supports, so its count is the
     * quantised ReLU of its summed input and deep networks converge in far
     * fewer steps. Runs on cpu, cpu-fast and cuda and trains by BPTT; NIR
     * stores it as neuroc.SignedIF extension nodes (strict mode refuses it);
     * the Loihi simulator refuses it. */
    NC_SPIKES_SIGNED = 1,
    /* NC_SNN_IF: spikes only when v reaches θ, the neuron other tools and
     * Loihi run; a neuron whose input falls keeps the spikes it fired */
    NC_SPIKES_PLAIN = 2
} nc_spike_kind;

/* How a MaxPool becomes spiking. Max pooling does not commute with rate
 * coding: the max of spike trains is not the spike train of the max. */
typedef enum nc_maxpool_mode {
    /* the default (0: nc_convert_options_init, NULL options, a zeroed
     * struct): currents where they are constant, as below; a MaxPool of
     * spikes becomes a SpikeMaxPool2d (nc_snn_add_spike_maxpool2d), whose
     * rate is the max of its inputs' rates */
    NC_MAXPOOL_SPIKES = 0,
    /* max-pool the currents before the neuron (max commutes with ReLU): exact
     * where the currents are constant, i.e. computed from the (directly
     * encoded) input alone; elsewhere the SNN overshoots the ANN */
    NC_MAXPOOL_CURRENTS = 1,
    NC_MAXPOOL_AVERAGE = 2    /* replace MaxPool by average pooling (the ANN changes) */
} nc_maxpool_mode;

/* Defaults (nc_convert_options_init, or a zeroed struct): signed spikes
 * with NC_THRESHOLD_MAX (plain spikes: NC_THRESHOLD_PERCENTILE at 99.9 over
 * the positive activations), per layer, timesteps 8, levels 0 (8, or what a
 * QCFS pattern says), 1000 calibration samples, NC_RESET_SUBTRACT, v(0) =
 * θ/2, spikes carrying θ, NC_MAXPOOL_SPIKES, no QCFS fine-tuning (lr 1e-3,
 * batch 64, seed 0 when on), no progress, no bias or potential correction
 * (1 round when on), one process, average pools of spikes folded into the
 * layer reading them (keep_avgpool 0). */
typedef struct nc_convert_options {
    nc_threshold_method method;
    double percentile;        /* for NC_THRESHOLD_PERCENTILE; 0 = 99.9 */
    int count_zeros;          /* percentiles over all activations (1) or the positive ones (0, default) */
    int per_channel;          /* a threshold per channel instead of per layer */
    int timesteps;            /* T the network is meant for (MSE clip); 0 = 8 */
    int levels;               /* QCFS levels L; 0 = 8, or what the QCFS pattern says */
    int64_t calib_samples;    /* 0 = 1000 (or all if fewer) */
    nc_reset_mode reset;      /* NC_RESET_DEFAULT = subtraction */
    int v_init_zero;          /* v(0) = 0 instead of θ/2 */
    int binary_spikes;        /* spikes carry 1 and θ is folded into the next weights */
    nc_maxpool_mode maxpool;
    /* ANN-side QCFS fine-tuning (needs labels): epochs 0 = none */
    int qcfs_epochs;
    float qcfs_lr;            /* 0 = 1e-3 (Adam) */
    int qcfs_batch;           /* 0 = 64 */
    uint64_t seed;
    nc_progress_fn progress;
    void *progress_user;
    /* Bias correction (Li et al., ICML 2021), after the thresholds are set:
     * IF layer by IF layer, the SNN runs `timesteps` steps on the
     * calibration samples and the per-channel mean of (the ANN's activation
     * clipped to [0, θ]) − (the SNN's output rate·θ) is added to the bias of
     * the Conv/Affine feeding the layer. It corrects the early-step errors
     * that deep and residual networks accumulate at small T. Costs one SNN
     * run over the calibration samples per IF layer (on cpu-fast where it
     * can run the network); skipped after QCFS fine-tuning (the ANN no
     * longer describes the network). */
    int bias_correction;
    /* A process group (nc_dist_from_mpi_comm) sharing calibration, bias
     * correction and QCFS fine-tuning; NULL = this process alone. Every
     * rank passes the same data and takes a contiguous run of its batches.
     * Calibration histograms are merged exactly (power-of-two ranges, bins
     * summed as integers): the thresholds equal one process's. Bias and
     * potential correction sum doubles across ranks (equal up to their rounding);
     * QCFS fine-tuning is data parallel as nc_finetune_options.dist
     * describes (qcfs_batch per rank). */
    const nc_dist *dist;
    /* Potential correction (the v(0) calibration of Li et al., ICML 2021),
     * after bias correction if both are on: IF layer by IF layer, each
     * neuron's v(0) is shifted by T × (the mean over the calibration
     * samples of the ANN's activation clipped to [0, θ] − the SNN's output
     * rate·θ at T = `timesteps`), so v(0) becomes per neuron. Per neuron it
     * also corrects position-dependent errors (borders, padding) that a
     * per-channel bias cannot; at T it acts like a bias of that error, and
     * it brings the charge at the start, so it helps most at small T. Same
     * cost as bias correction; skipped after QCFS fine-tuning. */
    int potential_correction;
    /* Rounds of each correction per layer (each measures the error again,
     * as the rate is a step function of bias and v(0)); 0 = 1. */
    int correction_rounds;
    /* What the IF neurons send: NC_SPIKES_DEFAULT = signed; NC_SPIKES_PLAIN
     * for files other tools run (nc_nir_write_options.strict) and for the
     * Loihi simulator. Signed spikes need NC_RESET_SUBTRACT. */
    nc_spike_kind spikes;
    /* Signed spikes only: up to `burst` spikes a step (at most 1024;
     * nc_if_params.max_spikes); 0 = with signed spikes NC_DEFAULT_BURST,
     * or with calibration data the power of two up to 64 the network needs:
     * the first whose quantisation at T = 32 (the QCFS view at B·32 levels,
     * up to 64 calibration rows) keeps the readout within centred cosine
     * 0.95 of the rate limit (deep networks add up each layer's error; a
     * note says why); 1 with plain ones, QCFS fine-tuning (which does not train bursts) or
     * a network with QCFS patterns (exact at T = L with one spike a step).
     * Each IF layer's threshold becomes its calibrated clip / burst, so the
     * clip stays and the rate code gets burst times finer at the same T; a
     * spiking max pool counts its input's bursts in spikes and sends bursts
     * itself (nc_snn_add_spike_maxpool2d). BPTT trains them; the Loihi 2
     * simulator sends graded spikes. */
    int burst;
    /* Synaptic layers read the graded outputs of the non-linear layers
     * (SiLU, Sigmoid, GELU, gates: NC_SNN_NONLINEAR) as they are, as
     * multiply-adds; 0 (default): a two-sided SignedIF (NC_SIGNED_TWO_SIDED)
     * with a calibrated threshold turns each such value into spikes first. */
    int nonlinear_graded;
    /* The operating point chosen for the caller: > 0 searches the
     * conversion of least energy whose accuracy is within target_loss
     * points (e.g. 0.5) of the ANN's at some T ≤ max_timesteps, measured on
     * the last holdout_samples rows of `calib` (the others calibrate):
     * against `labels` where given, else against the ANN's own predictions.
     * Searched one at a time, each kept at its best before the next, are the
     * options left at their defaults: burst (1, 2, 4, 8, 16), threshold
     * statistic (max, p99.99, p99.9), per-channel thresholds, bias
     * correction (at the T found). The network returned is the best one,
     * with that T as its operating T (nc_snn_timesteps), and the report
     * says what was tried (nc_convert_report_operating_point). Costs one
     * conversion and one run of the held-back rows per candidate (at most
     * 10). Needs calibration data; refused with QCFS fine-tuning. */
    double target_loss;
    int max_timesteps;        /* the search's largest T; 0 = 32 */
    int64_t holdout_samples;  /* rows held back; 0 = half the data, at most 2000 (100 at least) */
    /* 1: every AveragePool / GlobalAveragePool stays a Pool2d layer. 0
     * (default): one that pools the spikes of an IF layer, with one divisor
     * for every window of at most 5 taps, and is read by a Conv alone (or by
     * a Gemm after a flattening) folds into that layer, which then reads the
     * spikes themselves: a larger convolution of stride s·s_pool (an Affine
     * over the unpooled spikes), the same values, additions for single spikes
     * instead of multiply-adds on pooled sums. Refused, with a note, where
     * the composition would not be exactly one convolution. */
    int keep_avgpool;
    /* With target_loss and labels: the search goes on below the T it found
     * by fine-tuning (BPTT, nc_snn_finetune) the best conversion, calibrated
     * for each T (bursts of 1 and the mse clip at T, unless set), at T = 1,
     * 2, 4, … (while below that T, or up to max_timesteps when none was
     * within the target) for finetune_epochs epochs on the calibration rows
     * it does not hold back, and keeps the first T whose fine-tuned network
     * is within the target, where that costs less energy. Fine-tuning uses
     * the recipe measured on the shipped CNN (docs/energy.md): Adam,
     * finetune_lr (0 = 3e-3), thresholds trained, a triangle surrogate half
     * a threshold wide, the reset detached, batch qcfs_batch, seed. 0 = no
     * fine-tuning. Ignored without target_loss. finetune_energy_weight:
     * nc_finetune_options.energy_weight of that fine-tuning (0 = none). */
    int finetune_epochs;
    float finetune_lr;
    float finetune_energy_weight;
    /* With target_loss: the rows candidates are scored on, in place of the
     * last holdout_samples rows of `calib` (every calib row then calibrates
     * and fine-tunes); validation_labels are theirs (NULL: scored against
     * the ANN's own predictions). Give rows the ANN did not train on: on its
     * own training rows the ANN scores above what it scores on new data, and
     * a fine-tuned candidate, which did not train on the held-back rows,
     * looks that much worse than it is (a warning says so when the search
     * fine-tunes without validation data). Not owned; read during the call. */
    const nc_tensor *validation;
    const nc_tensor *validation_labels;
    /* Threads of fine-tuning's element-wise layers (nc_finetune_options.threads); 0 = 1. */
    int threads;
    /* With finetune_epochs: fine-tune at this T only (a latency the caller
     * needs), up to max_timesteps; 0 = T = 1, 2, 4, … as above. */
    int finetune_timesteps;
} nc_convert_options;
/* Conversion's default burst for signed spikes (nc_convert_options.burst). */
#define NC_DEFAULT_BURST 2
/* The burst of the two-sided SignedIF layers that turn the graded outputs
 * of Nonlinear layers into spikes (nc_convert_options.nonlinear_graded 0),
 * or the burst option where larger: their θ is the calibrated max |x| over
 * it. efficientnet_b0 (32 px, random weights), centred cosine at T = 32 and
 * 256: 0.67, 0.85 with bursts of 2; 0.89, 0.987 with 8; 0.959, 0.998 with
 * 32, for 10 % more synaptic operations than with 8. A layer whose values
 * are heavy-tailed (its clip above 128 × its median |x| on the calibration
 * data) gets more, up to 1024, until θ is at most 4 × that median: the clip
 * stays, the typical values are still resolved (efficientnet_v2_s with
 * random weights: |x| up to 10⁴, median 1). */
#define NC_NONLINEAR_BURST 32
NC_API void nc_convert_options_init(nc_convert_options *o);

/* What conversion did: one record per spiking layer, plus warnings. */
typedef struct nc_convert_report nc_convert_report;

/* Converts an imported ANN into a spiking network (DESIGN §3): BatchNorm
 * folded, ReLU / Clip(0, c) / QCFS patterns become IF layers with θ from the
 * calibration data `calib` (N, *input) or from the pattern, the last layer a
 * readout.
 * calib NULL: data-free. Clip/QCFS thresholds are exact anyway; a ReLU's θ
 * comes from the BatchNormalization before it: its output is taken, per
 * channel, as N(β, γ²) (the BN normalises with its own statistics), the ReLU
 * output as that rectified Gaussian, and θ is opt's statistic of it with
 * opt's zeros convention (count_zeros; per layer over the channels' equal
 * mixture, or per_channel): the percentile analytically; NC_THRESHOLD_MAX
 * as the 99.9999th percentile (a Gaussian has no maximum); NC_THRESHOLD_MSE
 * as the clip minimising the expected T-step quantisation error of the
 * modelled distribution (to a histogram bin). The statistics are carried
 * forward (source "propagated") as a Gaussian of matched mean and variance:
 * through ReLU (the rectified Gaussian's moments), Add (sums, the two taken
 * as independent), Conv (grouped too) / Gemm / MatMul (the mean exactly, the
 * variance Σ w²σ² with independent inputs), average pooling (mean exact,
 * variance kept: the bound for correlated neighbours), Flatten/Reshape,
 * Identity/Dropout/Pad, Concat along channels, and MaxPool (the max of k
 * independent). A ReLU not reached from a BatchNormalization gets the
 * statistics of the network input taken as normalised, N(0, 1) per channel,
 * carried the same way (source "assumed-input": an estimate from the weights
 * alone; one warning names those layers and recommends calibration data).
 * A ReLU that no rule reaches (an op none covers on the way) fails with
 * NC_ERR_INVALID_ARG naming every such layer. Bias/potential correction and QCFS fine-tuning need
 * data and are refused without it. The report's layer `source` says which
 * threshold came from where. Models exported by torch.onnx in eval mode
 * usually have their BN fused into the Conv already: export with
 * training=TrainingMode.PRESERVE (do_constant_folding=False) to keep it. `labels` (N int64) with opt->qcfs_epochs > 0 fine-tunes the QCFS
 * ANN on `calib` first. Non-convertible ops are refused naming the node;
 * calibration data holding NaN or ±inf naming the sample and index, and a
 * network whose weights, biases or thresholds come out non-finite naming the
 * layer.
 * The caller owns *out and *report (report may be NULL if not wanted). */
NC_API nc_status nc_convert(const nc_model *m, const nc_tensor *calib, const nc_tensor *labels,
                            const nc_convert_options *opt, nc_snn **out,
                            nc_convert_report **report);
NC_API void nc_convert_report_free(nc_convert_report *r);
/* The report as JSON text (owned by the report): everything below, plus
 * the options used and how calibration was done, in words. */
NC_API const char *nc_convert_report_json(const nc_convert_report *r);
NC_API size_t nc_convert_report_num_warnings(const nc_convert_report *r);
NC_API const char *nc_convert_report_warning(const nc_convert_report *r, size_t i);
/* Notes: what conversion did that is not a problem (e.g. corrections
 * skipped after QCFS fine-tuning). Strings owned by the report. */
NC_API size_t nc_convert_report_num_notes(const nc_convert_report *r);
NC_API const char *nc_convert_report_note(const nc_convert_report *r, size_t i);

/* What the operating point search (nc_convert_options.target_loss) chose.
 * Losses are accuracy points on the held-back rows (the ANN's accuracy
 * there minus the SNN's at t), energies per inference over steps 1..t. */
typedef struct nc_operating_point {
    int timesteps;               /* the T chosen: the network's nc_snn_timesteps */
    double target_loss, loss;    /* asked, and measured at timesteps */
    double snn_joules, ann_joules, energy_ratio;
    double ann_accuracy;         /* on the held-back rows (1 against its own predictions) */
    int64_t holdout_samples;
    int labelled;                /* 1: against labels; 0: against the ANN's predictions */
    int feasible;                /* 0: none was within the target up to max_timesteps; the closest kept */
    int candidates;              /* conversions tried */
    /* the options chosen */
    int burst;
    nc_threshold_method method;
    double percentile;
    int per_channel, bias_correction;
    /* fine-tuned (nc_convert_options.finetune_epochs) at T = finetune_timesteps
     * for finetune_epochs epochs; 0 = not fine-tuned */
    int finetune_timesteps, finetune_epochs;
    int validation;              /* 1: scored on nc_convert_options.validation; 0: on held-back calib rows */
} nc_operating_point;
/* NC_ERR_INVALID_ARG when the conversion made no search. */
NC_API nc_status nc_convert_report_operating_point(const nc_convert_report *r, nc_operating_point *out);

/* Where an IF layer's threshold came from. */
typedef enum nc_threshold_rule {
    NC_THRESHOLD_RULE_CALIBRATION = 0, /* calibrated on the data (nc_convert_options.method) */
    NC_THRESHOLD_RULE_CLIP = 1,        /* a Clip(0, c) activation: calibrated like a ReLU (source), at most c */
    NC_THRESHOLD_RULE_QCFS = 2         /* the λ of a QCFS activation */
} nc_threshold_rule;

/* One IF layer the conversion made, as the report's "layers" hold it.
 * Statistics over channels are of θ as set (after fine-tuning, if any);
 * a number that does not apply is NaN. Strings are owned by the report. */
typedef struct nc_convert_layer_info {
    const char *name;            /* the IF layer (nc_snn_find_layer finds it) */
    int64_t neurons;             /* per sample */
    int n_ann_nodes;             /* the ANN nodes it replaces, e.g. Relu */
    const char *const *ann_nodes;
    nc_threshold_rule rule;
    int levels;                  /* QCFS levels L (rule QCFS), else 0 */
    int maxpool_before;          /* a MaxPool was moved before the neuron */
    int64_t threshold_channels;  /* 1: one θ for the layer; C: per channel */
    double threshold_min, threshold_mean, threshold_max;
    int finetuned;               /* θ changed by QCFS fine-tuning: the _before_ fields hold */
    int64_t threshold_before_channels;
    double threshold_before_min, threshold_before_mean, threshold_before_max;
    /* rule CALIBRATION with data: the largest activation, the layer's
     * statistic (percentile, max or MSE clip), the fraction of zero
     * activations, and the channels that fell back to the layer's θ
     * (per channel, a channel without positive activations). */
    double activation_max, layer_statistic, zero_fraction;
    int64_t fallback_channels;
    double bias_shift;           /* bias correction's mean shift; NaN when not run */
    double potential_shift;      /* potential correction's mean v(0) shift; NaN when not run */
    /* where θ came from: "data" (rule CALIBRATION with data), "bn-stats" (the
     * BatchNormalization before the ReLU, data-free), "propagated" (BN
     * statistics carried forward, data-free), "assumed-input" (no BN upstream:
 * the input taken as N(0, 1) per channel, carried forward), "clip" (data-free, no
     * statistics: θ = c), "qcfs". Data-free layers have rule CALIBRATION
     * or CLIP, layer_statistic set, the data fields NaN. */
    const char *source;
    double threshold_cap;        /* rule CLIP: the c that θ may not exceed; else NaN */
    int max_spikes;              /* spikes a step at most (bursts): θ is the clip / max_spikes */
} nc_convert_layer_info;
NC_API int nc_convert_report_num_layers(const nc_convert_report *r);
NC_API nc_status nc_convert_report_layer(const nc_convert_report *r, int i, nc_convert_layer_info *out);

/* The conversion as a whole. */
typedef struct nc_convert_summary {
    int64_t calib_samples;       /* rows calibrated on; 0 when no layer needed calibration */
    int calib_batch;             /* rows per calibration batch (0 likewise) */
    int if_layers_calibrated;    /* IF layers with rule CALIBRATION */
    int64_t qcfs_samples;        /* rows of QCFS fine-tuning; 0 when not fine-tuned */
    int levels;                  /* QCFS levels L in use */
    int layers;                  /* layers of the network returned */
    int if_layers;
    int scale_layers;            /* scale layers the binary-spike fold inserted */
    const char *readout;         /* the readout layer's name, owned by the report */
    int if_layers_data_free;     /* of if_layers_calibrated: those set without data (bn-stats, propagated, assumed-input) */
} nc_convert_summary;
NC_API nc_status nc_convert_report_summary(const nc_convert_report *r, nc_convert_summary *out);

/* ---------------------------------------------------------------- evaluation */

/* Defaults (nc_eval_options_init): backend "cpu", timesteps 64, batch 64,
 * NC_ENCODING_DIRECT, seed 0, energy_per_synop 0.9e-12 J and
 * energy_per_mac 4.6e-12 J, no progress, one process. */
typedef struct nc_eval_options {
    const char *backend;      /* NULL = "cpu" */
    int timesteps;            /* 0 = 64 */
    int batch;                /* 0 = 64 */
    nc_encoding encoding;
    uint64_t seed;
    /* Energy per operation in joules; 0 = the defaults (45 nm CMOS, Horowitz
     * ISSCC 2014: 0.9 pJ a float32 add for an SNN synaptic op on a spike,
     * 4.6 pJ a float32 multiply-add for one on a graded value and for an
     * ANN MAC). */
    double energy_per_synop, energy_per_mac;
    nc_progress_fn progress;
    void *progress_user;
    /* A process group (nc_dist_from_mpi_comm) sharing the evaluation; NULL
     * = this process alone. Every rank passes the whole data set and takes
     * a contiguous run of its batches (the single-process batches, so every
     * backend sees the same inputs); the per-step correct counts, spikes and
     * synaptic operations (integers) are summed, so every rank gets the
     * result one process would get, bit for bit. */
    const nc_dist *dist;
} nc_eval_options;
NC_API void nc_eval_options_init(nc_eval_options *o);

/* Result of evaluating an SNN on labelled data. */
typedef struct nc_eval_result nc_eval_result;

/* Runs `s` on x (N, *input) for T steps and scores the readout against
 * labels (N int64) at every t ≤ T. If `ann` is given, its accuracy and MACs
 * are measured on the same data for comparison. The caller owns *out. */
NC_API nc_status nc_snn_evaluate(const nc_snn *s, const nc_model *ann, const nc_tensor *x,
                                 const nc_tensor *labels, const nc_eval_options *opt,
                                 nc_eval_result **out);
NC_API void nc_eval_result_free(nc_eval_result *r);
NC_API int nc_eval_result_timesteps(const nc_eval_result *r);
NC_API int64_t nc_eval_result_samples(const nc_eval_result *r);
/* Accuracy after t steps, 1 ≤ t ≤ T. */
NC_API double nc_eval_result_accuracy_at(const nc_eval_result *r, int t);
/* The ANN's accuracy, or a negative value when no ANN was given. */
NC_API double nc_eval_result_ann_accuracy(const nc_eval_result *r);
/* The whole result (per-step accuracy, spike rates per layer, synaptic ops
 * against MACs, energy with its sources) as JSON; owned by the result. */
NC_API const char *nc_eval_result_json(const nc_eval_result *r);
/* An SVG chart: accuracy against t with the ANN as a line, and spike rates
 * per layer as bars. Written atomically. */
NC_API nc_status nc_eval_result_write_svg(const nc_eval_result *r, const char *path);

/* What the JSON holds, per layer and in total, for programs that print it. */
typedef struct nc_eval_layer_stats {
    const char *name;          /* owned by the result */
    nc_snn_layer_kind kind;
    int64_t neurons;           /* per sample */
    int64_t spikes;            /* summed over samples and steps (0 unless spiking) */
    double spike_rate;         /* spikes / (neurons · T · samples) */
    double synops;             /* synaptic operations per inference (nc_session_synops) */
    /* 1: its synaptic ops are multiply-adds, 0: additions. A weighted
     * layer (Affine, Conv2d) adds when its input is spikes of payload ±1
     * times a value folded into its weights (IF, LIF, a SignedIF of one
     * spike a step, Poisson input), and multiplies when it reads graded
     * values (a SignedIF burst, the analog input, a current, a sum); a
     * pooling sum adds; any other kind that counts ops multiplies. A
     * SignedIF of bursts sends single spikes (added) and bursts of k ≥ 2
     * spikes: graded events, their readers' ops multiply-adds; so does a
     * spiking max pool of bursts (events of k ≥ 2 units). */
    int macs;
    /* A SignedIF's or a SpikeMaxPool2d's: of its readers' synaptic ops per
     * inference, those its bursts caused (multiply-adds in the cost); 0 for
     * other layers. */
    double burst_synops;
} nc_eval_layer_stats;
NC_API int nc_eval_result_num_layers(const nc_eval_result *r);
NC_API nc_status nc_eval_result_layer(const nc_eval_result *r, int i, nc_eval_layer_stats *out);

/* The cost of an inference (per sample), over all T steps or, _at, over
 * steps 1..t: what stopping the run after t steps would cost. */
typedef struct nc_eval_cost {
    double synaptic_adds;      /* synaptic operations that are additions (nc_eval_layer_stats.macs 0) */
    double synaptic_macs;      /* synaptic operations that are multiply-adds (macs 1) */
    double ann_macs;           /* the ANN's MACs per inference; < 0 without an ANN */
    double snn_joules;         /* synaptic_adds · energy_per_synop + synaptic_macs · energy_per_mac */
    double ann_joules;         /* ann_macs · energy_per_mac; < 0 without an ANN */
    double energy_per_synop, energy_per_mac; /* joules, as used */
    const char *energy_source; /* the citation (static string) */
} nc_eval_cost;
NC_API nc_status nc_eval_result_cost(const nc_eval_result *r, nc_eval_cost *out);
/* As nc_eval_result_cost over steps 1..t, 1 ≤ t ≤ T (t = T: the same);
 * another t is NC_ERR_INVALID_ARG. */
NC_API nc_status nc_eval_result_cost_at(const nc_eval_result *r, int t, nc_eval_cost *out);

/* ---------------------------------------------------------- BPTT fine-tuning */

typedef enum nc_surrogate_kind {
    NC_SURROGATE_KIND_TRIANGLE = 0,   /* max(0, γ − |x|)/γ² (default) */
    NC_SURROGATE_KIND_RECTANGLE = 1,  /* [|x| < γ/2]/γ */
    NC_SURROGATE_KIND_SIGMOID = 2,    /* k·σ(kx)·(1 − σ(kx)), k = 4/γ */
    NC_SURROGATE_KIND_ATAN = 3        /* (α/2)/(1 + (π/2·α·x)²), α = 2/γ */
} nc_surrogate_kind;

/* What one fine-tuning epoch did (epoch counts from 1). val_* are negative
 * without validation data. */
typedef struct nc_finetune_epoch {
    int epoch, epochs;
    int batch;                 /* the batch size used (after max_memory) */
    double loss, accuracy;     /* running means over the epoch's batches */
    double val_loss, val_accuracy;
    int64_t samples;
    double seconds;            /* wall time of the epoch's training */
    /* The optimiser's moments after this epoch (float32, 1-D; per trainable
     * tensor m, then v for Adam) and the steps it has taken: what a
     * checkpoint needs to resume exactly (nc_finetune_options.optimizer_state).
     * Owned by nc_snn_finetune, valid during the callback only. */
    const nc_tensor *optimizer_state;
    int64_t optimizer_steps;
} nc_finetune_epoch;
/* Called after every epoch with the network as it is now (to checkpoint it);
 * anything but NC_OK stops fine-tuning with that status. */
typedef nc_status (*nc_finetune_epoch_fn)(const nc_snn *s, const nc_finetune_epoch *e, void *user);

typedef enum nc_optimizer {
    NC_OPTIMIZER_ADAM = 0,     /* default */
    NC_OPTIMIZER_SGD = 1       /* SGD with momentum */
} nc_optimizer;

/* Defaults (nc_finetune_options_init): timesteps 4, epochs 3, lr 1e-4,
 * batch 64, NC_SURROGATE_KIND_TRIANGLE of width 1, gradient through the
 * reset, fixed thresholds, NC_OPTIMIZER_ADAM (momentum 0.9 for SGD), no
 * weight decay or clipping, seed 0, no memory limit, start_epoch 0, fresh
 * moments, 1 thread, no callbacks, one process. */
typedef struct nc_finetune_options {
    int timesteps;             /* T; 0 = 4 */
    int epochs;                /* 0 = 3 */
    float lr;                  /* peak learning rate of the cosine schedule; 0 = 1e-4 */
    int batch;                 /* 0 = 64; the largest batch <= this that fits max_memory is used */
    nc_surrogate_kind surrogate;
    float surrogate_width;     /* γ as a fraction of each IF layer's mean θ; 0 = 1 */
    int detach_reset;          /* no gradient through the reset term */
    int train_thresholds;      /* θ trainable too */
    nc_optimizer optimizer;
    float momentum;            /* SGD; 0 = 0.9 */
    float weight_decay;
    float grad_clip;           /* global gradient-norm clip; 0 = off */
    uint64_t seed;             /* mini-batch shuffling (epoch e uses a seed derived from it and e) */
    int64_t max_memory;        /* bytes for training state; 0 = no limit */
    int start_epoch;           /* epochs already done (resuming); the schedule continues from there */
    /* Resuming: the optimiser's moments and step count from the checkpoint's
     * nc_finetune_epoch (not owned; read at the start). NULL = fresh moments. */
    const nc_tensor *optimizer_state;
    int64_t optimizer_steps;
    int threads;               /* 0 = 1 */
    nc_progress_fn progress;   /* batches of each epoch */
    void *progress_user;
    nc_finetune_epoch_fn on_epoch;
    void *epoch_user;
    /* A process group (nc_dist_from_mpi_comm) training together, data
     * parallel and synchronous; NULL = this process alone. `batch` is then
     * per rank: each global mini-batch of size·batch samples is cut into
     * contiguous shares, the gradients are summed across ranks and divided
     * by the global batch, so size ranks with batch B take the steps one
     * process takes with batch size·B (equal up to float summation order).
     * The learning rate is not scaled. Weights are identical on every rank
     * after every step (checked by a hash every step). on_epoch runs on
     * every rank; write checkpoints from one. */
    const nc_dist *dist;
    /* Weight λ of an energy term in the loss (0 = none): λ × the energy of
     * the spikes' synaptic additions over the T steps / the energy of the
     * ANN's multiply-adds over the synapses spikes drive (the estimate's
     * 0.9 and 4.6 pJ, docs/energy.md), so training trades accuracy for
     * fewer spikes; its gradient reaches each spike through the surrogate. */
    float energy_weight;
} nc_finetune_options;
NC_API void nc_finetune_options_init(nc_finetune_options *o);

/* The batch fine-tuning would use and the training memory it needs, in
 * bytes: per sample 4·size·(3T + 1) for every layer (its output, gradient
 * and membrane at every step, plus one step of scratch), plus the input and
 * logit buffers; and fixed 4 bytes per parameter for the weights, their
 * gradients and, with Adam, two moments (one momentum buffer for SGD).
 * Convolution workspace (bounded, in chunks) is not counted.
 * NC_ERR_LIMIT (naming the need and the budget) when batch 1 does not fit. */
NC_API nc_status nc_snn_finetune_plan(const nc_snn *s, const nc_finetune_options *o, int *batch,
                                      int64_t *bytes);

/* Fine-tunes a spiking network in place with backpropagation through time
 * and a surrogate spike gradient (cross-entropy of the readout averaged over
 * T), on x (N, *input) float32 with int64 labels (N). val_x/val_labels may
 * be NULL; with them every epoch reports the BPTT view's accuracy at T.
 * Runs epochs start_epoch+1 .. epochs with one optimiser throughout (its
 * moments carry over from epoch to epoch, and from a checkpoint through
 * o->optimizer_state): fine-tuning N epochs in one call or resuming after
 * each gives bit-identical weights. */
NC_API nc_status nc_snn_finetune(nc_snn *s, const nc_tensor *x, const nc_tensor *labels,
                                 const nc_tensor *val_x, const nc_tensor *val_labels,
                                 const nc_finetune_options *o);

/* The network s's rates converge to as T grows, run on x (N samples of the
 * input layer's size, fed directly; x's first dimension is N): every IF or signed IF
 * layer is its spike value × clip(I/θ, 0, 1), a spiking max pool the max of
 * its inputs, the other layers as in the SNN. For a converted network this
 * is the clipped ANN that calibration defines (the ANN with each ReLU capped
 * at its threshold), which readout/T approaches; its distance to the ANN is
 * the clipping error, and the SNN's distance to it the error of the
 * dynamics. *out: (N, outputs). Refuses (NC_ERR_UNSUPPORTED, naming the
 * layer) LIF and CubaLIF layers and pools with per-window divisors. */
NC_API nc_status nc_snn_rate_limit(const nc_snn *s, const nc_tensor *x, nc_tensor **out);

#ifdef __cplusplus
}
#endif
#endif /* NEUROC_CONVERT_H */
