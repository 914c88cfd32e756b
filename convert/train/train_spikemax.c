/* A spiking max pool (NC_SNN_SPIKEMAXPOOL2D) unrolled over time for BPTT.
 *
 * Forward: exactly the backends' rule, through the same code
 * (kernels/window_index.h, nc_spikemax_frame): each step adds the input's
 * spikes to its counts (in units of the input neuron's single spike) and
 * each output sends d times its winner's single spike when its window's
 * largest count moves by d. The counts are per sample state, like the IF
 * membranes, and start at zero with every batch.
 *
 * Backward, straight-through: the output's value at step t gets its
 * gradient routed to the input element that won at step t (the one the
 * forward picked: the input whose count the output's count follows; on a
 * step without an event, the first input at the window's max count), with
 * gain 1, and to nothing else. Why: the max of counts is piecewise
 * constant in the inputs, so its true gradient is zero almost everywhere;
 * over the steps the output's count is the winner's count, so the rate
 * view's max pool (QCFS's nc_tr_maxpool_bwd) sends the whole gradient to
 * the winner, and so does this, step by step. The event carries d of the
 * winner's own single spikes, as the winner's value carries its count's
 * move: both are in the same unit, so the gain is 1 whatever the unit (the
 * ratio of the output's single spike to the winner's is 1 by
 * construction). */
#include <string.h>

#include "kernels/window_index.h"
#include "train_internal.h"

static nc_win_geom win_geom(const nc_tr_geom *g)
{
    return (nc_win_geom){.C = (int)g->C, .H = (int)g->H, .W = (int)g->W, .K = (int)g->K, .OH = (int)g->OH,
                         .OW = (int)g->OW, .kh = (int)g->kh, .kw = (int)g->kw, .sh = (int)g->sh, .sw = (int)g->sw,
                         .ph = (int)g->ph, .pw = (int)g->pw, .dh = 1, .dw = 1, .groups = 1};
}

void nc_tr_spikemax_fwd(const nc_tr_spikemax *p, const float *x, int x_static, float *y, int32_t *win, int64_t N)
{
    nc_win_geom g = win_geom(&p->g);
    int64_t in = p->g.C * p->g.H * p->g.W, out = p->g.C * p->g.OH * p->g.OW;
    /* a thread per sample: its steps run in order over its own counts */
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(N * p->T * in))")
    for (int64_t n = 0; n < N; n++) {
        uint32_t *cin = p->cnt + n * (in + out), *cout = cin + in;
        memset(cin, 0, (size_t)(in + out) * sizeof *cin);
        for (int64_t t = 0; t < p->T; t++) {
            int64_t r = t * N + n;
            nc_spikemax_frame(x + (x_static ? n : r) * in, p->unit, cin, cout, g, p->signed_in, y + r * out, NULL,
                              NULL, win + r * out);
        }
    }
}

void nc_tr_spikemax_bwd(const nc_tr_spikemax *p, const int32_t *win, const float *dy, float *dx, int x_static,
                        int64_t N)
{
    int64_t in = p->g.C * p->g.H * p->g.W, out = p->g.C * p->g.OH * p->g.OW;
    /* a thread per sample: a constant input's row sums its steps in t order */
    NC_OMP("omp parallel for schedule(static) num_threads(nc_tr_threads) if (NC_PAR(N * p->T * out))")
    for (int64_t n = 0; n < N; n++)
        for (int64_t t = 0; t < p->T; t++) {
            int64_t r = t * N + n;
            float *d = dx + (x_static ? n : r) * in;
            for (int64_t o = 0; o < out; o++)
                if (win[r * out + o] >= 0)
                    d[win[r * out + o]] += dy[r * out + o];
        }
}
