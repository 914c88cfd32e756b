/* What a synaptic operation costs, from the graph alone: which layers'
 * operations are multiply-adds rather than additions (nc_snn_mark_macs),
 * and how many operations each graded event of a burst layer causes in the
 * layers that read it (nc_snn_event_fanout). The energy estimate of an
 * evaluation (snn/session/eval.c) and the backends' counts use them. */
#include "snn/base/alloc.h"
#include "snn_ir.h"

/* Bits of mark[j] while nc_snn_mark_macs runs: layer j's output is events
 * of payload ±1 times a per-neuron value, or bursts of k such events that
 * the backends count one by one (nc_snn_event_fanout); and it may hold
 * bursts. Set for the layers before i. */
#define NC_UNIT_EVENTS 2
#define NC_HAS_BURSTS 4
static int event_kind(const nc_snn *s, int series, nc_encoding enc, const char *mark, int i)
{
    const nc_snn_layer *L = &s->layers[i];
    switch (L->kind) {
    case NC_SNN_INPUT: return !series && enc == NC_ENCODING_POISSON ? NC_UNIT_EVENTS : 0;
    case NC_SNN_SIGNED_IF: return NC_UNIT_EVENTS | (nc_snn_layer_burst(L) > 1 ? NC_HAS_BURSTS : 0);
    case NC_SNN_THRESHOLD: return NC_UNIT_EVENTS;
    case NC_SNN_SPIKEMAXPOOL2D: /* events of d units of its winner's spike: bursts where its input has them */
        return NC_UNIT_EVENTS | (L->n_inputs > 0 && L->inputs[0] < i && (mark[L->inputs[0]] & NC_HAS_BURSTS) ?
                                 NC_HAS_BURSTS : 0);
    case NC_SNN_FLATTEN: case NC_SNN_READOUT: case NC_SNN_RESHAPE: case NC_SNN_DELAY: case NC_SNN_SCALE:
    case NC_SNN_MAXPOOL2D: case NC_SNN_CONCAT: case NC_SNN_GATHER: { /* pass their inputs' events on, scaled or selected */
        int unit = L->n_inputs > 0, bursts = 0;
        for (int k = 0; k < L->n_inputs; k++) {
            int in = L->inputs[k] < i ? mark[L->inputs[k]] : 0;
            unit &= (in & NC_UNIT_EVENTS) != 0;
            bursts |= (in & NC_HAS_BURSTS) != 0;
        }
        if (L->kind == NC_SNN_MAXPOOL2D && bursts) /* the largest of k-spike values: counted by no backend */
            unit = 0;
        return (unit ? NC_UNIT_EVENTS : 0) | (bursts ? NC_HAS_BURSTS : 0);
    }
    default: return nc_snn_kind_is_spiking(L->kind) ? NC_UNIT_EVENTS : 0;
    }
}

void nc_snn_mark_macs(const nc_snn *s, int series, nc_encoding enc, char *macs)
{
    /* one array, no allocation: bits 1 and 2 each layer's events (all set
     * first, so that a recurrent reader sees its source's), then bit 0 the
     * answer */
    for (int i = 0; i < s->n_layers; i++)
        macs[i] = (char)event_kind(s, series, enc, macs, i);
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        const nc_snn_kind_traits *K = nc_snn_kind(L->kind);
        int in_unit = L->n_inputs > 0 && (macs[L->inputs[0]] & NC_UNIT_EVENTS);
        macs[i] |= (char)(K->counts_synops && !K->window && (!K->synaptic || !in_unit));
    }
    for (int i = 0; i < s->n_layers; i++)
        macs[i] &= 1;
}

/* The synaptic ops one event at input element e of weighted layer R (its
 * input X) causes, as the backends count them: an Affine's outputs, a
 * Conv2d's taps that land in its output times its channels a group. */
static int64_t reader_ops(const nc_snn_layer *R, const nc_snn_layer *X, int64_t e)
{
    if (R->kind == NC_SNN_AFFINE)
        return R->shape[0];
    int64_t H = X->shape[1], W = X->shape[2], ih = e / W % H, iw = e % W, taps_h = 0, taps_w = 0;
    for (int64_t i = 0; i < R->weight->shape[2]; i++) {
        int64_t th = ih + R->padding[0] - i * R->dilation[0];
        taps_h += th >= 0 && th % R->stride[0] == 0 && th / R->stride[0] < R->shape[1];
    }
    for (int64_t j = 0; j < R->weight->shape[3]; j++) {
        int64_t tw = iw + R->padding[1] - j * R->dilation[1];
        taps_w += tw >= 0 && tw % R->stride[1] == 0 && tw / R->stride[1] < R->shape[2];
    }
    return taps_h * taps_w * (R->shape[0] / R->groups);
}

/* fan[k] += the ops an event at element off + k of layer l (k < n) causes
 * in the adding weighted layers that read l, directly or through layers
 * that pass values on by index (views, Delay, Scale, Concat). depth bounds
 * a cycle of recurrent edges. */
static void add_fanout(const nc_snn *s, const char *macs, int l, int64_t off, int64_t n, int32_t *fan, int depth)
{
    if (depth > s->n_layers)
        return;
    const nc_snn_layer *X = &s->layers[l];
    for (int r = 0; r < s->n_layers; r++) {
        const nc_snn_layer *R = &s->layers[r];
        int64_t at = 0; /* where l's values start in R's input */
        for (int k = 0; k < R->n_inputs; k++) {
            if (R->inputs[k] != l) {
                at += R->kind == NC_SNN_CONCAT ? nc_snn_layer_size(&s->layers[R->inputs[k]]) : 0;
                continue;
            }
            switch (R->kind) {
            case NC_SNN_AFFINE: case NC_SNN_CONV2D:
                for (int64_t e = 0; !macs[r] && e < n; e++)
                    fan[e] += (int32_t)reader_ops(R, X, off + e);
                break;
            case NC_SNN_FLATTEN: case NC_SNN_READOUT: case NC_SNN_DELAY: case NC_SNN_SCALE:
                add_fanout(s, macs, r, off, n, fan, depth + 1);
                break;
            case NC_SNN_CONCAT: add_fanout(s, macs, r, at + off, n, fan, depth + 1); break;
            case NC_SNN_RESHAPE: { /* reads [kernel[0], kernel[0] + size) of its input */
                int64_t lo = off > R->kernel[0] ? off : R->kernel[0], end = R->kernel[0] + nc_snn_layer_size(R);
                int64_t hi = off + n < end ? off + n : end;
                if (hi > lo)
                    add_fanout(s, macs, r, lo - R->kernel[0], hi - lo, fan + (lo - off), depth + 1);
                break;
            }
            case NC_SNN_GATHER: { /* output e reads input index[e]: its fan-out goes to that input */
                int64_t gn = nc_snn_layer_size(R);
                int32_t *g = nc_calloc((size_t)gn, sizeof *g);
                if (!g)
                    break; /* an undercount, never a fault (the callers' counts are estimates of cost) */
                add_fanout(s, macs, r, 0, gn, g, depth + 1);
                for (int64_t e = 0; e < gn; e++) {
                    int64_t src = nc_i64(R->index)[e];
                    if (src >= off && src < off + n)
                        fan[src - off] += g[e];
                }
                nc_free(g);
                break;
            }
            default: break; /* a sum, a pooling, a neuron: no event reaches a synapse as it is */
            }
            at += R->kind == NC_SNN_CONCAT ? nc_snn_layer_size(X) : 0;
        }
    }
}

int32_t *nc_snn_event_fanout(const nc_snn *s, const char *macs, int l, int *fail)
{
    int64_t n = nc_snn_layer_size(&s->layers[l]);
    int32_t *fan = nc_calloc((size_t)n, sizeof *fan);
    if (!fan) {
        *fail = 1;
        return NULL;
    }
    add_fanout(s, macs, l, 0, n, fan, 0);
    return fan;
}
