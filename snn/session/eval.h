/* The evaluation result behind the public nc_eval_result handle
 * (include/neuroc/convert.h), shared by the evaluator (eval.c), its ANN
 * side (convert/evaluate.c, nc_snn_evaluate) and the SVG chart
 * (export/svg/eval_svg.c). */
#ifndef NC_SNN_EVAL_H
#define NC_SNN_EVAL_H

#include "neuroc/neuroc.h"

typedef struct nc_eval_lrec {
    char *name;
    nc_snn_layer_kind kind;
    int spiking;          /* IF / LIF / CubaLIF */
    int macs;             /* its synaptic ops are multiply-accumulates (nc_snn_mark_macs), not adds */
    int64_t neurons;      /* per sample */
    int64_t spikes;       /* summed over samples and steps */
    int64_t synops;       /* summed over samples and steps (a static layer's once a sample) */
    int64_t burst_ops;    /* of its readers' synops, those its bursts caused (multiply-adds), likewise */
} nc_eval_lrec;

struct nc_eval_result {
    int T;
    int64_t n;                /* samples */
    int64_t *correct;         /* [T]: samples right after t+1 steps */
    /* [T]: synaptic additions and multiply-accumulates of steps 1..t+1,
     * summed over samples (while the run counts: of step t+1 alone) */
    int64_t *adds_through, *macs_through;
    int64_t ann_correct;      /* -1: no ANN */
    int64_t ann_macs;         /* per sample; -1: no ANN */
    int n_layers;
    nc_eval_lrec *layers;
    /* options as used */
    char backend[32];
    int batch;
    nc_encoding encoding;
    uint64_t seed;
    double e_synop, e_mac;    /* joules */
    char *json;
};

/* The ANN's side of an evaluation, given by the caller that has the ANN
 * (convert/evaluate.c): runs `ann` on x (per values a sample, options o
 * with their defaults) and sets r->ann_correct (this rank's count) and
 * r->ann_macs. */
typedef nc_status (*nc_eval_ann_fn)(const void *ann, const nc_tensor *x, const nc_tensor *labels,
                                    const nc_eval_options *o, int64_t per, struct nc_eval_result *r);
/* nc_snn_evaluate with the ANN as `ann` (NULL: none) run by run_ann. */
nc_status nc_eval_run(const nc_snn *s, const void *ann, nc_eval_ann_fn run_ann, const nc_tensor *x,
                      const nc_tensor *labels, const nc_eval_options *opt, nc_eval_result **out);
/* Index of the largest of n values; ties go to the lowest index. */
int64_t nc_eval_argmax(const float *v, int64_t n);

/* Per inference, over steps 1..t (1 ≤ t ≤ T): the synaptic additions and
 * multiply-accumulates, and their energy (the model of eval.c). */
double nc_eval_adds_through(const struct nc_eval_result *r, int t);
double nc_eval_macs_through(const struct nc_eval_result *r, int t);
double nc_eval_joules_through(const struct nc_eval_result *r, int t);
/* Spikes per neuron per step of layer i. */
double nc_eval_spike_rate(const struct nc_eval_result *r, int i);

#endif
