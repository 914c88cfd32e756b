/* The Loihi-style simulator's internal model: populations of compartments
 * (the input, IF layers, the readout) joined by connections, each a map from
 * source neurons to input axons (identity, or a non-overlapping pooling
 * window that merges several neurons onto one axon) followed by synapses
 * (dense, convolutional, or one-to-one). Built from the SNN IR by
 * quantize.c, placed on cores by mapping.c, run by loihi_sim.c. */
#ifndef NC_SIM_SIM_INTERNAL_H
#define NC_SIM_SIM_INTERNAL_H

#include "neuroc/neuroc.h"
#include "snn/ir/snn_ir.h"

typedef enum ls_kind { LS_INPUT = 0, LS_IF, LS_READOUT } ls_kind;
typedef enum lc_kind { LC_DENSE = 0, LC_CONV, LC_ONE2ONE } lc_kind;

/* ---- constants: core limits and per-operation figures (params.c) */

typedef struct ls_const {
    const char *key;
    double value;
    const char *unit;
    char source[320];
    char grade[96];
} ls_const;

enum {
    /* core and chip resources */
    P_COMPARTMENTS, P_SYN_WORDS, P_SYNAPSES, P_IN_AXONS, P_OUT_AXONS, P_CORES_PER_CHIP,
    P_SYN_INDEX_BITS, P_SHARED_CONV, P_WEIGHT_EXP_MIN, P_WEIGHT_EXP_MAX, P_BIAS_EXP_MAX,
    /* energy and time (Davies et al. 2018, Table 2) */
    P_E_SYNOP, P_E_NU_ACTIVE, P_E_NU_INACTIVE, P_E_SPIKE, P_T_SYNOP, P_T_NU_ACTIVE,
    P_T_NU_INACTIVE, P_T_BARRIER_MIN, P_T_BARRIER_MAX, P_CORES_PER_TILE,
    /* the ANN on a GPU */
    P_E_MAC_GPU,
    P_COUNT
};

typedef struct ls_params {
    ls_const c[P_COUNT];
} ls_params;

/* Built-in values for a target (0 = Loihi 2, 1 = Loihi 1). */
void ls_params_default(ls_params *p, int loihi1);
/* Applies a JSON override file (sim/loihi_params.json format). */
nc_status ls_params_load(ls_params *p, int loihi1, const char *path);

typedef struct ls_system {
    const char *name;
    int loihi1;
    int64_t chips;
    const char *source;
} ls_system;
extern const ls_system ls_systems[];
extern const int ls_n_systems;

/* ---- the network */

typedef struct ls_quant {
    int64_t weights, clipped, zeroed;
    double max_err, sq_err;       /* float units */
    double alpha;                 /* clip of the float weights (primary connection) */
} ls_quant;

typedef struct ls_conn {
    int src, dst;                 /* population indices */
    lc_kind kind;
    int syn_layer;                /* IR id of the Affine/Conv2d, or -1 (one-to-one) */
    char *via;                    /* IR name of the synaptic layer or of what it reads (reports) */
    int delay;                    /* extra steps, so paths of unequal length arrive together */
    int host;                     /* computed by the host into the bias (bias-coded input) */
    /* source neuron → axon */
    int32_t *axon_of;             /* per source neuron; -1 = reaches no axon (pool remainder) */
    int64_t n_axons;
    int64_t ax_c, ax_h, ax_w;     /* axon grid (channels, height, width); 1×1 for flat sources */
    int64_t pool_k[2];            /* 0 = no pooling */
    /* synapses */
    int64_t n_out;                /* = dst population size */
    int64_t K, OH, OW, kh, kw, stride[2], pad[2], dil[2], groups; /* CONV */
    float *wf;                    /* float weight per unit spike/payload, IR layout */
    int8_t *mant;                 /* quantised mantissas, IR layout */
    int wexp;
    int64_t *wt;                  /* effective weights (nc_lf_weight), laid out for scattering:
                                     DENSE [in][out], CONV [c][i][j][K/groups], ONE2ONE [axon] */
    int32_t *syn_per_axon;        /* stored synapses each axon reaches (for counting synops) */
    int64_t n_synapses;
    int32_t *dest_cores;          /* per axon: destination cores it reaches (from the mapping) */
    ls_quant q;
} ls_conn;

typedef struct ls_pop {
    char *name;
    int ir_id;
    ls_kind kind;
    int64_t n;
    int64_t c, h, w;              /* shape as (channels, height, width) */
    int cpn;                      /* compartments a neuron */
    int depth;                    /* step at which its input first arrives (input: 0) */
    int reset;                    /* NC_LF_RESET_* */
    int sgn;                      /* IF: signed spikes (Loihi 2, subtractive reset) */
    int burst;                    /* IF: most spikes a step, the largest |payload| (1: binary) */
    int du, dv;
    double *scale;                /* per neuron: integer units of v per float unit */
    double scale_min, scale_max;
    int wexp;                     /* weight exponent of the main connection */
    float *bias_f;                /* float bias current per neuron (sum over its terms) */
    float *theta_f;               /* IF: float threshold per neuron */
    float *spike_f;               /* IF: float spike value per neuron */
    float *v0_f;                  /* IF: float v(0) per neuron */
    int32_t *vth;                 /* IF: threshold mantissa (v > vth·64 spikes) */
    int32_t *bias_mant;
    int8_t *bias_exp;
    int32_t *v0;
    int has_host;                 /* some connection into it is computed by the host */
    /* graded input: payload = round((x − 0)/input_step), clamped */
    double in_step;
    int in_signed;
    /* mapping */
    int64_t n_cores;
    int64_t *core_start;          /* n_cores + 1 neuron boundaries */
    int32_t *msgs;                /* axon messages a spike of each neuron sends */
    int64_t syn_words, synapses, max_in_axons, max_out_axons;
    /* quantisation report (connections into it, thresholds, biases) */
    ls_quant q;
    int64_t th_clipped, bias_clipped;
    double th_max_rel_err, bias_max_err;
} ls_pop;

struct nc_loihi_net {
    int loihi1;
    int input_graded;
    int reset;                    /* NC_LF_RESET_* of every IF layer */
    int weight_bits, headroom_bits, timesteps, per_channel;
    double input_min, input_max;
    double readout_max;           /* largest |summed readout| on calibration data; 0 = none */
    int64_t calib_n;
    ls_params params;
    int n_pops, n_conns;
    ls_pop *pops;                 /* pops[0] is the input */
    ls_conn *conns;
    int readout;                  /* population index of the output */
    int latency;                  /* depth of the readout */
    int max_delay;
    int64_t in_size;
    int64_t cores, chips, host_macs, ann_macs;
    const char *smallest_system;
    char *json;
};

/* ---- a run */

enum { CNT_SYNOPS, CNT_SPIKES, CNT_MSGS, CNT_ACTIVE, CNT_INACTIVE, CNT_WRAPS, CNT_SATS, CNT_BIAS_CLIPS, CNT_N };

typedef struct ls_rpop {
    char *name;
    ls_kind kind;
    int64_t n, compartments, cores;
    int64_t cnt[CNT_N];           /* summed over samples and steps */
} ls_rpop;

struct nc_loihi_result {
    int T, steps, latency, loihi1;
    int64_t N;
    int n_out, n_pops;
    int32_t *readout;             /* [N][steps][n_out]: the readout's v after each step */
    int64_t *correct;             /* [steps]; NULL without labels */
    ls_rpop *pops;
    int64_t *step_syn, *step_act; /* [steps][n_pops], summed over samples */
    int64_t cores, chips, host_macs, ann_macs;
    ls_params params;
    nc_loihi_cost cost;
    char energy_source[400], evidence[200];
    char *json;
};

/* energy.c: fills r->cost from the counters. */
void ls_cost(nc_loihi_result *r);
/* sim_report.c */
nc_status ls_result_json(nc_loihi_result *r, const nc_loihi_net *net);

/* quantize.c: the network from the IR, quantised. */
nc_status ls_build(const nc_snn *s, const nc_loihi_options *o, nc_loihi_net *net);
/* The axons of connection c that reach dst neuron j with a stored synapse,
 * into buf (at least ls_max_fanin(c) long); returns how many. */
int64_t ls_fanin(const ls_conn *c, int64_t j, int64_t *buf);
int64_t ls_max_fanin(const ls_conn *c);
/* mapping.c */
nc_status ls_map(nc_loihi_net *net);
/* sim_report.c */
nc_status ls_net_json(nc_loihi_net *net);
void ls_net_release(nc_loihi_net *net);

#endif
