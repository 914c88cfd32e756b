/* The public face of the simulator: compiling (options, quantisation,
 * mapping), freeing, accessors, and the JSON reports of a net and a run. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "snn/base/json.h"
#include "loihi_fixed.h"
#include "sim_internal.h"
#include "snn/base/alloc.h"
#include "snn/base/error.h"
#include "snn/base/tensor.h"

#define EMULATION_NOTE                                                                              \
    "Loihi 1 has no reset by subtraction. Each IF neuron is two compartments: A integrates (du = "  \
    "4095, dv = 0) and never fires; B reads A's v through a dendritic join each step and fires when " \
    "it exceeds vth*64. B's spike goes to the next layer and, through a synapse of weight -vth*64 "   \
    "(exactly representable: vth is rounded to a weight mantissa), back to A, arriving one step "    \
    "later, so A's v is the float neuron's membrane before reset. Cost: two compartments, one input " \
    "axon, one synapse and one synaptic op per spike more per neuron."
#define READOUT_NOTE                                                                                \
    "The readout is a non-spiking compartment (du = 4095, dv = 0, spikes disabled) that integrates " \
    "its input; its v, read after each step, is the summed readout. Its scale is sized so that v "    \
    "cannot saturate over the sized number of steps; saturations are counted."
#define BIAS_INPUT_NOTE                                                                                \
    "bias: the host computes the first synaptic layer on the analog input (W*x + b) once per sample " \
    "and writes it as each neuron's bias mantissa (13 bits) and exponent; those MACs are off-chip."
#define GRADED_INPUT_NOTE                                                                             \
    "graded: an input layer (off the neuro cores) sends each input value as a graded spike with an " \
    "8-bit payload every step; the first synaptic layer runs on chip with 8-bit weights times the "  \
    "payload."
#define MEMORY_NOTE                                                                                     \
    "Synapse lists per input axon and core; a stored synapse is its weight mantissa plus a compartment " \
    "index (sparse format), a list padded to whole 64-bit words; zero weights are not stored. "         \
    "Convolution weights are stored per synapse (not shared) unless shared_conv_weights is 1, when a "   \
    "core stores the kernel slices of its output channels once. Pooling windows share one input axon."

/* loihi_fixed.h writes nc_reset_mode's values out (it stands alone for CUDA) */
_Static_assert((int)NC_LF_RESET_SUBTRACT == (int)NC_RESET_SUBTRACT && (int)NC_LF_RESET_ZERO == (int)NC_RESET_ZERO &&
                   (int)NC_LF_RESET_TWO_COMP != (int)NC_RESET_DEFAULT,
               "loihi_fixed.h's reset values are nc_reset_mode's");

static const char *reset_name(int reset)
{
    switch (reset) {
    case NC_LF_RESET_SUBTRACT: return "subtract (Loihi 2 microcoded neuron)";
    case NC_LF_RESET_TWO_COMP: return "subtract (Loihi 1 two-compartment emulation)";
    default: return "zero";
    }
}

static const char *kind_name(ls_kind k) { return k == LS_INPUT ? "input" : k == LS_IF ? "IF" : "readout"; }

/* ---------------------------------------------------------------- net */

void ls_net_release(nc_loihi_net *net)
{
    for (int p = 0; net->pops && p < net->n_pops; p++) {
        ls_pop *P = &net->pops[p];
        nc_free(P->name), nc_free(P->bias_f), nc_free(P->theta_f), nc_free(P->spike_f), nc_free(P->v0_f);
        nc_free(P->scale), nc_free(P->vth), nc_free(P->bias_mant), nc_free(P->bias_exp), nc_free(P->v0);
        nc_free(P->core_start), nc_free(P->msgs);
    }
    for (int c = 0; net->conns && c < net->n_conns; c++) {
        ls_conn *C = &net->conns[c];
        nc_free(C->via), nc_free(C->axon_of), nc_free(C->wf), nc_free(C->mant), nc_free(C->wt);
        nc_free(C->syn_per_axon), nc_free(C->dest_cores);
    }
    nc_free(net->pops);
    nc_free(net->conns);
    nc_free(net->json);
}

void nc_loihi_net_free(nc_loihi_net *n)
{
    if (!n)
        return;
    ls_net_release(n);
    nc_free(n);
}

nc_status nc_loihi_compile(const nc_snn *s, const nc_loihi_options *opt, nc_loihi_net **out)
{
    if (out)
        *out = NULL;
    if (!s || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_compile: NULL argument");
    nc_loihi_options o = {0};
    if (opt)
        o = *opt;
    if (o.target != NC_LOIHI_1 && o.target != NC_LOIHI_2)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_compile: unknown target %d", (int)o.target);
    if ((int)o.reset < (int)NC_RESET_DEFAULT || (int)o.reset > (int)NC_RESET_ZERO || o.input < NC_LOIHI_INPUT_DEFAULT ||
        o.input > NC_LOIHI_INPUT_GRADED)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_compile: unknown reset or input mode");
    if (o.weight_bits && (o.weight_bits < 2 || o.weight_bits > 8))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_compile: weight bits %d (2..8)", o.weight_bits);
    if (o.headroom_bits && (o.headroom_bits < 1 || o.headroom_bits > 12))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_compile: headroom bits %d (1..12)", o.headroom_bits);
    if (o.timesteps < 0 || o.timesteps > (1 << 20) || o.neurons_per_core < 0)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_compile: timesteps or neurons a core out of range");
    int loihi1 = o.target == NC_LOIHI_1;
    if (loihi1 && o.input == NC_LOIHI_INPUT_GRADED)
        return nc_errorf(NC_ERR_UNSUPPORTED, "graded spikes need Loihi 2; use bias-coded input on Loihi 1");
    if (loihi1 && o.neurons_per_core)
        return nc_errorf(NC_ERR_INVALID_ARG, "neurons a core is configurable on Loihi 2 only (Loihi 1: 1024 "
                                             "compartments)");
    if (!(o.input_min == 0 && o.input_max == 0) && !(o.input_max > o.input_min))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_compile: input range [%g, %g]", o.input_min, o.input_max);
    nc_loihi_net *net = nc_calloc(1, sizeof *net);
    if (!net)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    net->loihi1 = loihi1;
    net->input_graded = o.input == NC_LOIHI_INPUT_GRADED;
    if (o.reset == NC_RESET_ZERO || (o.reset == NC_RESET_DEFAULT && loihi1))
        net->reset = NC_LF_RESET_ZERO;
    else
        net->reset = loihi1 ? NC_LF_RESET_TWO_COMP : NC_LF_RESET_SUBTRACT;
    net->weight_bits = o.weight_bits ? o.weight_bits : 8;
    net->headroom_bits = o.headroom_bits ? o.headroom_bits : 4;
    net->timesteps = o.timesteps ? o.timesteps : 64;
    net->per_channel = !o.per_layer_scale;
    net->input_min = o.input_min, net->input_max = o.input_max;
    if (o.input_min == 0 && o.input_max == 0)
        net->input_max = 1.0;
    ls_params_default(&net->params, loihi1);
    nc_status st = NC_OK;
    if (o.params_path)
        st = ls_params_load(&net->params, loihi1, o.params_path);
    if (st == NC_OK && o.neurons_per_core) {
        net->params.c[P_COMPARTMENTS].value = (double)o.neurons_per_core;
        snprintf(net->params.c[P_COMPARTMENTS].grade, sizeof net->params.c[P_COMPARTMENTS].grade,
                 "set by the caller");
    }
    if (st == NC_OK)
        st = ls_build(s, &o, net);
    if (st == NC_OK)
        st = ls_map(net);
    if (st == NC_OK)
        st = ls_net_json(net);
    if (st != NC_OK) {
        nc_loihi_net_free(net);
        return st;
    }
    *out = net;
    return NC_OK;
}

/* The defaults nc_loihi_compile and nc_loihi_run (loihi_sim.c) give zero
 * fields, written out; reset stays NC_RESET_DEFAULT (the target's own). */
void nc_loihi_options_init(nc_loihi_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->target = NC_LOIHI_2;
    o->reset = NC_RESET_DEFAULT;
    o->input = NC_LOIHI_INPUT_BIAS;
    o->weight_bits = 8;
    o->headroom_bits = 4;
    o->timesteps = 64;
    o->input_min = 0.0f;
    o->input_max = 1.0f;
    o->calib_samples = 256;
}

void nc_loihi_run_options_init(nc_loihi_run_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->timesteps = 32;
}

const char *nc_loihi_net_json(const nc_loihi_net *n) { return n && n->json ? n->json : "{}"; }
int nc_loihi_net_num_layers(const nc_loihi_net *n) { return n ? n->n_pops : 0; }

nc_status nc_loihi_net_layer(const nc_loihi_net *n, int i, nc_loihi_layer_info *out)
{
    if (!n || !out || i < 0 || i >= n->n_pops)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_net_layer: no layer %d", i);
    const ls_pop *P = &n->pops[i];
    memset(out, 0, sizeof *out);
    out->name = P->name;
    out->kind = kind_name(P->kind);
    out->neurons = P->n;
    out->compartments = i ? P->n * P->cpn : 0;
    out->depth = P->depth;
    out->scale_min = P->scale_min;
    out->scale_max = P->scale_max;
    out->weights = P->q.weights;
    out->weights_clipped = P->q.clipped;
    out->weights_zeroed = P->q.zeroed;
    out->weight_max_abs_err = P->q.max_err;
    out->weight_exp = P->wexp;
    out->thresholds_clipped = P->th_clipped;
    out->threshold_max_rel_err = P->th_max_rel_err;
    out->biases_clipped = P->bias_clipped;
    out->bias_max_abs_err = P->bias_max_err;
    out->cores = P->n_cores;
    out->synapses = P->synapses;
    out->synapse_words = P->syn_words;
    out->max_input_axons = P->max_in_axons;
    out->max_output_axons = P->max_out_axons;
    return NC_OK;
}

nc_status nc_loihi_net_mapping(const nc_loihi_net *n, nc_loihi_mapping *out)
{
    if (!n || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_net_mapping: NULL argument");
    out->cores = n->cores;
    out->chips = n->chips;
    out->cores_per_chip = (int64_t)n->params.c[P_CORES_PER_CHIP].value;
    out->latency_steps = n->latency;
    out->host_macs = n->host_macs;
    out->ann_macs = n->ann_macs;
    out->smallest_system = n->smallest_system;
    return NC_OK;
}

size_t nc_loihi_net_systems(const nc_loihi_net *n, nc_loihi_system *out, size_t cap)
{
    size_t k = 0;
    for (int i = 0; n && i < ls_n_systems; i++) {
        if (ls_systems[i].loihi1 != n->loihi1)
            continue;
        if (out && k < cap)
            out[k] = (nc_loihi_system){ls_systems[i].name, ls_systems[i].chips, ls_systems[i].chips >= n->chips,
                                       ls_systems[i].source};
        k++;
    }
    return k;
}

static void json_params(nc_json *j, const ls_params *p)
{
    nc_json_begin_array(j, "parameters");
    for (int k = 0; k < P_COUNT; k++) {
        nc_json_begin_object(j, NULL);
        nc_json_string(j, "key", p->c[k].key);
        nc_json_number(j, "value", p->c[k].value);
        nc_json_string(j, "unit", p->c[k].unit);
        nc_json_string(j, "source", p->c[k].source);
        nc_json_string(j, "grade", p->c[k].grade);
        nc_json_end_object(j);
    }
    nc_json_end_array(j);
}

nc_status ls_net_json(nc_loihi_net *net)
{
    nc_json j;
    nc_json_init(&j);
    nc_json_begin_object(&j, NULL);
    nc_json_string(&j, "target", net->loihi1 ? "loihi1" : "loihi2");
    nc_json_string(&j, "reset", reset_name(net->reset));
    if (net->reset == NC_LF_RESET_TWO_COMP)
        nc_json_string(&j, "reset_emulation", EMULATION_NOTE);
    nc_json_string(&j, "input", net->input_graded ? "graded" : "bias");
    nc_json_string(&j, "input_note", net->input_graded ? GRADED_INPUT_NOTE : BIAS_INPUT_NOTE);
    nc_json_number(&j, "input_min", net->input_min);
    nc_json_number(&j, "input_max", net->input_max);
    nc_json_string(&j, "readout_note", READOUT_NOTE);
    nc_json_int(&j, "weight_bits", net->weight_bits);
    nc_json_int(&j, "headroom_bits", net->headroom_bits);
    nc_json_string(&j, "scales", net->per_channel ? "per output channel of IF layers (thresholds are per compartment)"
                                                   : "one per layer");
    nc_json_int(&j, "readout_sized_for_steps", net->timesteps);
    if (net->calib_n) {
        nc_json_string(&j, "readout_sizing", "twice the largest |summed float readout| on the calibration samples");
        nc_json_int(&j, "readout_calibration_samples", net->calib_n);
        nc_json_number(&j, "readout_calibration_max", net->readout_max);
    } else {
        nc_json_string(&j, "readout_sizing", "every input neuron spiking every step (no calibration data)");
    }
    nc_json_int(&j, "latency_steps", net->latency);
    nc_json_begin_array(&j, "layers");
    for (int p = 0; p < net->n_pops; p++) {
        const ls_pop *P = &net->pops[p];
        nc_json_begin_object(&j, NULL);
        nc_json_string(&j, "name", P->name);
        nc_json_string(&j, "kind", kind_name(P->kind));
        nc_json_int(&j, "neurons", P->n);
        nc_json_int(&j, "depth", P->depth);
        if (p == 0) {
            if (net->input_graded) {
                nc_json_number(&j, "payload_step", P->in_step);
                nc_json_bool(&j, "payload_signed", P->in_signed);
            }
            nc_json_end_object(&j);
            continue;
        }
        nc_json_int(&j, "compartments", P->n * P->cpn);
        nc_json_number(&j, "scale_min", P->scale_min);
        nc_json_number(&j, "scale_max", P->scale_max);
        nc_json_int(&j, "du", P->du);
        nc_json_int(&j, "dv", P->dv);
        if (P->kind == LS_IF) {
            nc_json_string(&j, "reset", reset_name(P->reset));
            nc_json_bool(&j, "signed_spikes", P->sgn);
            nc_json_int(&j, "max_spikes", P->burst);
        }
        nc_json_int(&j, "cores", P->n_cores);
        nc_json_int(&j, "synapses", P->synapses);
        nc_json_int(&j, "synapse_words", P->syn_words);
        nc_json_int(&j, "max_input_axons_per_core", P->max_in_axons);
        nc_json_int(&j, "max_output_axons_per_core", P->max_out_axons);
        nc_json_begin_object(&j, "quantisation");
        nc_json_int(&j, "weights", P->q.weights);
        nc_json_int(&j, "weights_clipped", P->q.clipped);
        nc_json_int(&j, "weights_rounded_to_zero", P->q.zeroed);
        nc_json_number(&j, "weight_max_abs_err", P->q.max_err);
        nc_json_number(&j, "weight_rms_err", P->q.weights ? sqrt(P->q.sq_err / (double)P->q.weights) : 0);
        nc_json_number(&j, "weight_clip_alpha", P->q.alpha);
        nc_json_int(&j, "thresholds_clipped", P->th_clipped);
        nc_json_number(&j, "threshold_max_rel_err", P->th_max_rel_err);
        nc_json_int(&j, "biases_clipped", P->bias_clipped);
        nc_json_number(&j, "bias_max_abs_err", P->bias_max_err);
        if (P->has_host)
            nc_json_string(&j, "bias_note", "plus the host-computed input current, encoded per sample");
        nc_json_end_object(&j);
        nc_json_begin_array(&j, "connections");
        for (int c = 0; c < net->n_conns; c++) {
            const ls_conn *C = &net->conns[c];
            if (C->dst != p)
                continue;
            nc_json_begin_object(&j, NULL);
            nc_json_string(&j, "from", net->pops[C->src].name);
            nc_json_string(&j, "via", C->via);
            nc_json_string(&j, "kind", C->kind == LC_DENSE ? "dense" : C->kind == LC_CONV ? "conv" : "one-to-one");
            nc_json_bool(&j, "host", C->host);
            nc_json_int(&j, "axons", C->n_axons);
            if (C->pool_k[0])
                nc_json_int(&j, "pool_window", C->pool_k[0] * C->pool_k[1]);
            if (!C->host) {
                nc_json_int(&j, "delay", C->delay);
                nc_json_int(&j, "weight_exp", C->wexp);
                nc_json_int(&j, "synapses", C->n_synapses);
                nc_json_int(&j, "weights_clipped", C->q.clipped);
                nc_json_int(&j, "weights_rounded_to_zero", C->q.zeroed);
                nc_json_number(&j, "weight_max_abs_err", C->q.max_err);
            }
            nc_json_end_object(&j);
        }
        nc_json_end_array(&j);
        nc_json_end_object(&j);
    }
    nc_json_end_array(&j);
    nc_json_begin_object(&j, "mapping");
    nc_json_int(&j, "cores", net->cores);
    nc_json_int(&j, "chips", net->chips);
    nc_json_number(&j, "cores_per_chip", net->params.c[P_CORES_PER_CHIP].value);
    nc_json_string(&j, "smallest_system", net->smallest_system);
    nc_json_string(&j, "synapse_memory_model", MEMORY_NOTE);
    nc_json_begin_array(&j, "systems");
    for (int k = 0; k < ls_n_systems; k++) {
        if (ls_systems[k].loihi1 != net->loihi1)
            continue;
        nc_json_begin_object(&j, NULL);
        nc_json_string(&j, "name", ls_systems[k].name);
        nc_json_int(&j, "chips", ls_systems[k].chips);
        nc_json_bool(&j, "fits", ls_systems[k].chips >= net->chips);
        nc_json_string(&j, "source", ls_systems[k].source);
        nc_json_end_object(&j);
    }
    nc_json_end_array(&j);
    nc_json_int(&j, "host_macs_per_sample", net->host_macs);
    nc_json_int(&j, "ann_macs_per_sample", net->ann_macs);
    nc_json_end_object(&j);
    json_params(&j, &net->params);
    nc_json_end_object(&j);
    net->json = nc_json_take(&j);
    return net->json ? NC_OK : nc_errorf(NC_ERR_NOMEM, "out of memory writing the report");
}

/* ---------------------------------------------------------------- result */

void nc_loihi_result_free(nc_loihi_result *r)
{
    if (!r)
        return;
    for (int p = 0; r->pops && p < r->n_pops; p++)
        nc_free(r->pops[p].name);
    nc_free(r->pops);
    nc_free(r->readout);
    nc_free(r->correct);
    nc_free(r->step_syn);
    nc_free(r->step_act);
    nc_free(r->json);
    nc_free(r);
}

int nc_loihi_result_timesteps(const nc_loihi_result *r) { return r ? r->T : 0; }
int nc_loihi_result_steps_run(const nc_loihi_result *r) { return r ? r->steps : 0; }
int64_t nc_loihi_result_samples(const nc_loihi_result *r) { return r ? r->N : 0; }

double nc_loihi_result_accuracy_at_step(const nc_loihi_result *r, int step)
{
    if (!r || !r->correct || step < 1 || step > r->steps)
        return -1.0;
    return (double)r->correct[step - 1] / (double)r->N;
}

double nc_loihi_result_accuracy_at(const nc_loihi_result *r, int t)
{
    if (!r || t < 1 || t > r->T)
        return -1.0;
    int step = t + r->latency;
    if (step > r->steps)
        return -1.0;
    return nc_loihi_result_accuracy_at_step(r, step);
}

nc_status nc_loihi_result_readout(const nc_loihi_result *r, nc_tensor **out)
{
    if (out)
        *out = NULL;
    if (!r || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_result_readout: NULL argument");
    int64_t shape[3] = {r->steps, r->N, r->n_out};
    nc_tensor *t = nc_tensor_new(NC_DTYPE_I64, 3, shape);
    if (!t)
        return NC_ERR_NOMEM;
    int64_t *d = nc_i64(t);
    for (int64_t i = 0; i < r->N; i++)
        for (int s = 0; s < r->steps; s++)
            for (int k = 0; k < r->n_out; k++)
                d[((int64_t)s * r->N + i) * r->n_out + k] =
                    r->readout[((size_t)i * (size_t)r->steps + (size_t)s) * (size_t)r->n_out + (size_t)k];
    *out = t;
    return NC_OK;
}

nc_status nc_loihi_result_counts(const nc_loihi_result *r, int layer, nc_loihi_counts *out)
{
    if (!r || !out || layer < 0 || layer >= r->n_pops)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_result_counts: no layer %d", layer);
    const int64_t *c = r->pops[layer].cnt;
    double N = (double)r->N;
    out->name = r->pops[layer].name;
    out->synops = (double)c[CNT_SYNOPS] / N;
    out->spikes = (double)c[CNT_SPIKES] / N;
    out->axon_messages = (double)c[CNT_MSGS] / N;
    out->active_updates = (double)c[CNT_ACTIVE] / N;
    out->inactive_updates = (double)c[CNT_INACTIVE] / N;
    out->u_wraps = (double)c[CNT_WRAPS] / N;
    out->v_saturations = (double)c[CNT_SATS] / N;
    out->bias_clips = (double)c[CNT_BIAS_CLIPS] / N;
    return NC_OK;
}

nc_status nc_loihi_result_cost(const nc_loihi_result *r, nc_loihi_cost *out)
{
    if (!r || !out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_loihi_result_cost: NULL argument");
    *out = r->cost;
    return NC_OK;
}

const char *nc_loihi_result_json(const nc_loihi_result *r) { return r && r->json ? r->json : "{}"; }

static void json_const(nc_json *j, const ls_const *c)
{
    nc_json_begin_object(j, c->key);
    nc_json_number(j, "value", c->value);
    nc_json_string(j, "unit", c->unit);
    nc_json_string(j, "source", c->source);
    nc_json_string(j, "grade", c->grade);
    nc_json_end_object(j);
}

nc_status ls_result_json(nc_loihi_result *r, const nc_loihi_net *net)
{
    nc_json j;
    nc_json_init(&j);
    nc_json_begin_object(&j, NULL);
    nc_json_string(&j, "target", net->loihi1 ? "loihi1" : "loihi2");
    nc_json_string(&j, "reset", reset_name(net->reset));
    nc_json_string(&j, "input", net->input_graded ? "graded" : "bias");
    nc_json_int(&j, "timesteps", r->T);
    nc_json_int(&j, "steps_run", r->steps);
    nc_json_int(&j, "latency_steps", r->latency);
    nc_json_int(&j, "samples", r->N);
    if (r->correct) {
        nc_json_begin_array(&j, "accuracy");
        for (int t = 1; t <= r->T; t++)
            nc_json_number(&j, NULL, nc_loihi_result_accuracy_at(r, t));
        nc_json_end_array(&j);
        nc_json_string(&j, "accuracy_note", "accuracy[t-1]: after the readout integrated t steps of input, "
                                            "i.e. at chip step t + latency_steps (null when not run)");
        nc_json_begin_array(&j, "accuracy_per_step");
        for (int s = 1; s <= r->steps; s++)
            nc_json_number(&j, NULL, nc_loihi_result_accuracy_at_step(r, s));
        nc_json_end_array(&j);
    }
    nc_json_begin_array(&j, "layers");
    for (int p = 0; p < r->n_pops; p++) {
        nc_loihi_counts c;
        nc_loihi_result_counts(r, p, &c);
        nc_json_begin_object(&j, NULL);
        nc_json_string(&j, "name", r->pops[p].name);
        nc_json_string(&j, "kind", kind_name(r->pops[p].kind));
        nc_json_int(&j, "neurons", r->pops[p].n);
        nc_json_int(&j, "cores", r->pops[p].cores);
        nc_json_number(&j, "synops", c.synops);
        nc_json_number(&j, "spikes", c.spikes);
        nc_json_number(&j, "axon_messages", c.axon_messages);
        nc_json_number(&j, "active_updates", c.active_updates);
        nc_json_number(&j, "inactive_updates", c.inactive_updates);
        nc_json_number(&j, "u_wraps", c.u_wraps);
        nc_json_number(&j, "v_saturations", c.v_saturations);
        nc_json_number(&j, "bias_clips", c.bias_clips);
        nc_json_end_object(&j);
    }
    nc_json_end_array(&j);
    nc_json_string(&j, "counts_note", "per inference (one sample, all steps run); synops are counted at the "
                                      "layer they reach; an update is active when the compartment has input, "
                                      "bias or a non-zero current");
    const nc_loihi_cost *k = &r->cost;
    nc_json_begin_object(&j, "energy");
    nc_json_number(&j, "joules", k->energy_j);
    nc_json_number(&j, "synops_joules", k->synop_j);
    nc_json_number(&j, "updates_joules", k->update_j);
    nc_json_number(&j, "spikes_joules", k->spike_j);
    nc_json_string(&j, "excluded", "static power, tile-hop energy (placement-dependent), host and embedded "
                                   "processors, off-chip I/O");
    nc_json_string(&j, "evidence", r->evidence);
    json_const(&j, &r->params.c[P_E_SYNOP]);
    json_const(&j, &r->params.c[P_E_NU_ACTIVE]);
    json_const(&j, &r->params.c[P_E_NU_INACTIVE]);
    json_const(&j, &r->params.c[P_E_SPIKE]);
    nc_json_end_object(&j);
    nc_json_begin_object(&j, "latency");
    nc_json_number(&j, "seconds", k->latency_s);
    nc_json_number(&j, "step_seconds", k->step_s);
    nc_json_string(&j, "model", "a step lasts as long as its busiest core (a layer's load spread evenly over "
                                "its cores, mean over samples) plus the barrier synchronisation; the mapping "
                                "packs each layer into the fewest cores, so spreading a busy layer over more "
                                "cores would shorten it");
    json_const(&j, &r->params.c[P_T_SYNOP]);
    json_const(&j, &r->params.c[P_T_NU_ACTIVE]);
    json_const(&j, &r->params.c[P_T_NU_INACTIVE]);
    json_const(&j, &r->params.c[P_T_BARRIER_MIN]);
    json_const(&j, &r->params.c[P_T_BARRIER_MAX]);
    nc_json_end_object(&j);
    nc_json_begin_object(&j, "ann");
    nc_json_number(&j, "macs", k->ann_macs);
    nc_json_number(&j, "gpu_joules", k->ann_gpu_j);
    json_const(&j, &r->params.c[P_E_MAC_GPU]);
    nc_json_end_object(&j);
    nc_json_number(&j, "host_macs", k->host_macs);
    nc_json_int(&j, "cores", r->cores);
    nc_json_int(&j, "chips", r->chips);
    nc_json_end_object(&j);
    r->json = nc_json_take(&j);
    return r->json ? NC_OK : nc_errorf(NC_ERR_NOMEM, "out of memory writing the report");
}
