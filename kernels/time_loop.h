/* The per-neuron loops over time of the time-batched CUDA backend (run on
 * the CPU by test_cuda_host, tests/cuda_host/): a layer's input holds
 * all frames of a time chunk (frame = step·N + sample), and one thread runs
 * one neuron (or one output element) through every step of the chunk. */
#ifndef NC_KERNELS_TIME_LOOP_H
#define NC_KERNELS_TIME_LOOP_H

#include <stdint.h>

#include "neuron.h"
#include "window_index.h"

/* An IF neuron over `steps` steps: the current of step t is cur[t·cur_stride]
 * (stride 0: a static current, the same every step), the output y[t·y_stride]
 * is s·sval for a spike s (+1, or −1 for a signed neuron, up to ±burst for
 * a signed one with bursts), else 0; rec_s /
 * rec_v (may be NULL) get s and the membrane after the update at the same
 * index as y. *v carries the membrane from one chunk to the next; net, when
 * not NULL, makes it a signed IF (nc_signed_if_step) and carries its net
 * count. Returns the number of spikes (of either sign). */
NC_HD int nc_if_over_time(float *v, int32_t *net, const float *cur, int64_t cur_stride, float *y, int64_t y_stride,
                          int steps, float theta, float sval, int reset_zero, int burst, float *rec_s, float *rec_v)
{
    int n = 0;
    for (int t = 0; t < steps; t++) {
        int s = net ? nc_signed_if_step(v, net, cur[t * cur_stride], theta, burst)
                    : nc_if_step(v, cur[t * cur_stride], theta, reset_zero);
        y[t * y_stride] = s ? (float)s * sval : 0.0f;
        if (rec_s)
            rec_s[t * y_stride] = (float)s;
        if (rec_v)
            rec_v[t * y_stride] = *v;
        n += s != 0;
    }
    return n;
}

/* Spiking max pooling, time-batched in two passes. First, per input neuron:
 * its spike count after each step, cum[t·cum_stride] (*cnt carries the
 * count from one chunk to the next); x[t·x_stride] is its value at step t
 * (stride 0: static), unit its single spike's value (nc_spike_count_delta). */
NC_HD void nc_spike_count_over_time(uint32_t *cnt, const float *x, int64_t x_stride, uint32_t *cum,
                                    int64_t cum_stride, int steps, float unit, int signed_in)
{
    for (int t = 0; t < steps; t++) {
        *cnt += (uint32_t)nc_spike_count_delta(x[t * x_stride], unit, signed_in);
        cum[t * cum_stride] = *cnt;
    }
}

/* Then per output (c, oh, ow), nc_spikemax_output at each step over the
 * frame of input values x + t·x_stride and of counts cum + t·cum_stride
 * (unit: the input's single-spike values, may be NULL); *out_cnt carries
 * the output's count. y[t·y_stride] gets the output, rec_s (may be NULL)
 * its sign. Returns the events; *burst_ops gets fan (the synaptic ops one
 * event of this output causes downstream; 0: none) added for each event of
 * |payload| two units or more. */
NC_HD int nc_spikemax_over_time(const float *x, int64_t x_stride, const float *unit, const uint32_t *cum,
                                int64_t cum_stride, uint32_t *out_cnt, nc_win_geom g, int signed_in, int c, int oh,
                                int ow, float *y, int64_t y_stride, float *rec_s, int steps, int32_t fan,
                                int64_t *burst_ops)
{
    int n = 0;
    for (int t = 0; t < steps; t++) {
        int d;
        float o = nc_spikemax_output(x + t * x_stride, unit, cum + t * cum_stride, out_cnt, g, signed_in, c, oh, ow,
                                     &d, 0); /* no winner: the backends need none */
        y[t * y_stride] = o;
        if (rec_s)
            rec_s[t * y_stride] = (float)((o > 0.0f) - (o < 0.0f));
        n += d != 0;
        if (d > 1 || d < -1)
            *burst_ops += fan;
    }
    return n;
}

/* acc + x[0] + x[stride] + ... (steps terms) in step order: the readout sum
 * of one output element, continued from one chunk to the next. */
NC_HD float nc_sum_over_time(float acc, const float *x, int64_t stride, int steps)
{
    for (int t = 0; t < steps; t++)
        acc += x[t * stride];
    return acc;
}

/* Concat along channels over frames: element e of an input of `part` values
 * a frame (all frames of the output, `frames` of them, one thread each)
 * comes from x[nc_concat_src(...)] (an input holding x_frames frames: N
 * when static, each read by its sample) and goes to the output's
 * y[nc_concat_dst(...)] (size values a frame, the input's at offset off). */
NC_HD int64_t nc_concat_src(int64_t e, int64_t part, int64_t x_frames)
{
    return (e / part % x_frames) * part + e % part;
}

NC_HD int64_t nc_concat_dst(int64_t e, int64_t part, int64_t size, int64_t off)
{
    return e / part * size + off + e % part;
}

#endif
