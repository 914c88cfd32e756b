/* ANN graph → SNN structure (DESIGN §3), the first half of nc_convert.
 *
 * The prepared ANN graph (topologically sorted, constants folded) is walked
 * once. Each ANN value is held as one of:
 *  - an SNN layer (plus, possibly, a per-channel affine a·x + b and a zero
 *    padding not yet applied: BatchNorm, scalings and Pad nodes waiting to
 *    be folded into the next Conv/Gemm), or
 *  - a pending synaptic layer (Conv/Gemm/MatMul weights not yet appended), so
 *    that a following BatchNorm, bias Add or scaling folds into its weights.
 * Activations become IF layers: ReLU (θ from calibration), Clip(0, c)
 * (θ = c) and the QCFS pattern (θ = λ as stored, L recorded). Calibrated
 * thresholds are left at a placeholder and set later (calibrate.h). */
#ifndef NC_CONVERT_CONVERT_GRAPH_H
#define NC_CONVERT_CONVERT_GRAPH_H

#include "neuroc/neuroc.h"
#include "snn/base/error.h"
#include "convert/ann/graph.h"
#include "snn/ir/snn_ir.h"

typedef enum nc_theta_rule {
    NC_THETA_CALIB = 0, /* from calibration statistics of an ANN value (a Clip(0, c): at most c) */
    NC_THETA_QCFS       /* the λ of a QCFS pattern */
} nc_theta_rule;

#define NC_SITE_MAX_NODES 12

/* One IF layer of the converted network and where its threshold comes from. */
typedef struct nc_if_site {
    int layer;                 /* IF layer id */
    nc_theta_rule rule;
    int value;                 /* ANN value calibrated (NC_THETA_CALIB), else -1 */
    int out_value;             /* ANN value the layer's output rate·θ stands for */
    int levels;                /* QCFS L from the pattern, else 0 */
    int maxpool;               /* 1 when a MaxPool was moved before the neuron */
    double cap;                /* NC_THETA_CALIB from a Clip(0, c): θ is at most c; else INFINITY */
    int two_sided;             /* a two-sided SignedIF of a signed value: θ from a statistic of |x| */
    int n_nodes;
    const char *nodes[NC_SITE_MAX_NODES]; /* ANN nodes it came from (borrowed from the graph) */
    /* calibration results (NC_THETA_CALIB) */
    double act_max;            /* largest activation seen */
    double stat;               /* the layer-wide statistic chosen as θ (per layer) */
    double median_abs;         /* two-sided: the median of |x| (its bursts resolve it: apply_bursts) */
    int64_t n_values, n_zeros; /* activations seen, and how many were <= 0 */
    int fallback_channels;     /* per-channel: channels that never fired, given the layer's θ */
    int source;                /* NC_THETA_CALIB: nc_calib_source (calibrate.h); 0 = the data */
    double bias_shift;         /* bias correction: mean |shift| over channels; NAN when not corrected */
    double v0_shift;           /* potential correction: mean |v(0) shift| over neurons; NAN when not done */
    float *theta0;             /* θ before QCFS fine-tuning (owned), n_theta0 elements */
    int64_t n_theta0;
} nc_if_site;

typedef struct nc_strlist {
    char **s;
    int n, cap;
} nc_strlist;

/* Adds a formatted message; returns NC_ERR_NOMEM (error set) on failure. */
nc_status nc_strlist_addf(nc_strlist *l, const char *fmt, ...) NC_PRINTF(2, 3);
void nc_strlist_clear(nc_strlist *l);

typedef struct nc_cgraph {
    nc_snn *snn;               /* owned */
    nc_if_site *sites;
    int n_sites, cap_sites;
    nc_strlist warnings, notes;
    int readout;               /* readout layer id */
    int n_maxpool;             /* MaxPool nodes met */
    int64_t input_shape[NC_MAX_DIMS]; /* per-sample input shape */
    int input_ndim;
} nc_cgraph;

/* Builds c->snn from g (the ANN behind an nc_model) with the options o
 * (defaults already filled in). Calibrated IF layers get θ = 1 until
 * calibration sets them. On failure *c is cleared and the error names the
 * file, node and op. */
nc_status nc_cgraph_build(const nc_graph *g, const nc_convert_options *o, nc_cgraph *c);
void nc_cgraph_clear(nc_cgraph *c);

/* The graph with every MaxPool run as an AveragePool that counts padding
 * (what the SNN of NC_MAXPOOL_AVERAGE computes), for calibration. Node and
 * value data are shared with g: free it with nc_graph_view_free only, and
 * keep g alive meanwhile. */
nc_status nc_graph_avgpool_view(const nc_graph *g, nc_graph **out);
void nc_graph_view_free(nc_graph *view);

/* ---- QCFS pattern (convert_qcfs.c) ---- */

/* Consumers of each value: list[start[v] .. start[v+1]) are node indices
 * (a node reading v twice appears twice); is_output[v] marks graph outputs. */
typedef struct nc_consumers {
    int *start, *list;
    unsigned char *is_output;
} nc_consumers;

nc_status nc_consumers_build(const nc_graph *g, nc_consumers *c);
void nc_consumers_free(nc_consumers *c);
/* Number of readers of v (graph outputs count as one). */
int nc_consumers_count(const nc_consumers *c, int v);

typedef struct nc_qcfs_match {
    int n_nodes;
    int nodes[NC_SITE_MAX_NODES]; /* node indices of the chain, in graph order */
    int in_value, out_value;
    const nc_tensor *lambda;      /* the threshold λ as stored in the model */
    int levels;                   /* L */
} nc_qcfs_match;

/* 1 if node i is the first node of a QCFS activation:
 *   Div(x, λ) | Mul(x, 1/λ) → [Clip(0,1)] → Mul(L) → Add(0.5) → Floor → Div(L) | Mul(1/L)
 *   → [Clip(0,1), if not before] → Mul(λ)
 * where Floor may be written y + (Floor(y) − y), as a straight-through floor
 * exports; constants may come first in the commutative ops. Every value
 * inside the chain must have no other reader. */
int nc_qcfs_match_at(const nc_graph *g, const nc_consumers *cons, int i, nc_qcfs_match *m);

/* The bounds of a Clip node (attributes before opset 11, constant inputs
 * after); absent bounds are ±inf. NC_ERR_UNSUPPORTED if a bound is not a
 * constant scalar. */
nc_status nc_clip_bounds(const nc_graph *g, const nc_node *n, double *lo, double *hi);

/* A constant scalar (float32 or int64 tensor of one element) in *v; 0 if t is not one. */
int nc_const_scalar(const nc_tensor *t, double *v);

#endif
