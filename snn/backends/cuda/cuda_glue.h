/* The CUDA kernels of the cuda backend (cuda_kernels.cu), as C functions
 * that snn/backends/cuda/backend_cuda.c calls. Each enqueues its kernel(s) on `st` and
 * returns the launch status; none synchronises. Buffers are device memory.
 * A frame is one sample at one step; frame f of a time chunk is step
 * f / N, sample f % N. Integer counters (unsigned long long) are added to
 * with atomics: integer sums do not depend on their order. Float sums never
 * use atomics. */
#ifndef NC_KERNELS_CUDA_GLUE_H
#define NC_KERNELS_CUDA_GLUE_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "kernels/window_index.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned long long nc_cu_count;

/* Events of each of `frames` frames of x (size values each): the ballot
 * bitmask (nc_bit_words(size) words a frame), the count per frame, and when
 * idx is not NULL the (index, value) list in ascending index (capacity size
 * a frame). The total is added to *total. */
cudaError_t nc_cu_compact(cudaStream_t st, const float *x, int frames, int size, uint32_t *mask, int32_t *cnt,
                          int32_t *idx, float *val, nc_cu_count *total);
/* y[f][o] = bias[o] + Σ wt[i][o]·x_i over the events of frame f in list order;
 * out at most NC_CU_FC_MAX_OUT (blocks of 256 outputs on grid.y, at most
 * 65535 of them). */
#define NC_CU_FC_MAX_OUT (65535 * 256)
cudaError_t nc_cu_fc_event(cudaStream_t st, const int32_t *idx, const float *val, const int32_t *cnt, int in,
                           const float *wt, const float *bias, int frames, int out, float *y);
/* Output-stationary Conv2d of frames×(C,H,W) into frames×(K,OH,OW);
 * wt [C_in][kH][kW][C_out/groups]. */
cudaError_t nc_cu_conv_event(cudaStream_t st, const float *x, int frames, nc_win_geom g, const float *wt,
                             const float *bias, float *y);
/* Event-driven Conv2d over the event lists of nc_cu_compact (idx, val, cnt;
 * capacity C·H·W a frame): the same outputs as nc_cu_conv_event bit for
 * bit, work following the events: the register-tile kernel where
 * nc_cu_conv_tile_cpt(g) > 0, else the shared-memory one, which needs
 * nc_cu_scatter_band(g) >= 1: the output rows a block holds
 * (NC_CU_SCATTER_SHARED floats of shared memory, NC_CU_SCATTER_K channels a
 * block); 0 when a row does not fit. row_off: room for frames ×
 * nc_cu_scatter_offsets(g) offsets (where each input row's events start, or
 * each tile's part of it; filled here), so a block reads only the events
 * that reach it. */
#define NC_CU_SCATTER_K 64
#define NC_CU_SCATTER_SHARED 10240
int nc_cu_scatter_band(nc_win_geom g);
/* The register-tile kernel nc_cu_conv_scatter runs instead where it fits
 * (a square kernel of size 1 or 3 and stride 1 or 2, no dilation, output
 * channels a group a multiple of 32): the output channels a thread holds
 * (8, 4, 2, 1), 0 where it does not fit. */
int nc_cu_conv_tile_cpt(nc_win_geom g);
/* The output rows and columns a tile of the register-tile kernel holds for
 * cpt channels a thread. */
int nc_cu_conv_tile_rows(int cpt);
int nc_cu_conv_tile_w(int cpt);
/* The offsets nc_cu_conv_scatter needs a frame in row_off (0: neither
 * kernel fits the layer). */
int64_t nc_cu_scatter_offsets(nc_win_geom g);
cudaError_t nc_cu_conv_scatter(cudaStream_t st, const int32_t *idx, const float *val, const int32_t *cnt,
                               int32_t *row_off, int frames, nc_win_geom g, const float *wt, const float *bias,
                               float *y);
/* Adds the Conv2d's synaptic operations for the events in `mask` to *ops. */
cudaError_t nc_cu_conv_ops(cudaStream_t st, const uint32_t *mask, int frames, nc_win_geom g, nc_cu_count *ops);
/* Sum pooling times scale (ops counted into *ops) and max pooling. */
cudaError_t nc_cu_pool(cudaStream_t st, const float *x, int frames, nc_win_geom g, float scale, float *y,
                       nc_cu_count *ops);
cudaError_t nc_cu_maxpool(cudaStream_t st, const float *x, int frames, nc_win_geom g, float *y);
/* y = x (first) or y += x, element by element over frames × size; x holds
 * x_frames frames and frame f reads x's frame f % x_frames (a static input
 * has N frames, one per sample). */
cudaError_t nc_cu_add(cudaStream_t st, float *y, const float *x, int x_frames, int frames, int64_t size, int first);
/* Copies the `part` values a frame of x (x_frames frames) into the output's
 * frames (size values each) at offset off: one input of a Concat. */
cudaError_t nc_cu_concat(cudaStream_t st, float *y, const float *x, int x_frames, int frames, int64_t part,
                         int64_t size, int64_t off);
/* IF neurons (N × size, membrane v) over `steps` steps; x holds steps·N
 * frames, or N when x_static (the same current every step). y: steps·N
 * frames of ±sval or 0; rec_s / rec_v may be NULL. net (N × size net
 * counts) makes them signed IF neurons, sending up to `burst` spikes a step;
 * NULL for plain IF. Spikes added to *spikes. */
cudaError_t nc_cu_if(cudaStream_t st, const float *x, int x_static, int N, int size, int steps, float *v,
                     int32_t *net, const float *theta, const float *sval, int reset_zero, int burst, float *y,
                     float *rec_s, float *rec_v, nc_cu_count *spikes);
/* The synaptic ops the bursts among `frames` frames of a SignedIF's output
 * y cause downstream: fan[j] for every value other than 0 and ±sval[j] (an
 * event of k ≥ 2 spikes), added to *ops. */
cudaError_t nc_cu_burst_ops(cudaStream_t st, const float *y, int frames, int size, const float *sval,
                            const int32_t *fan, nc_cu_count *ops);
/* Spiking max pooling over `steps` steps of x (steps·N frames, or N when
 * x_static; signed_in: its spikes may be negative; unit (input size, may
 * be NULL): each input's single-spike value, nc_spike_count_delta): in_cnt
 * (N × input size) and out_cnt (N × output size) carry the counts between
 * chunks, cum (steps·N frames × input size) is workspace; y gets steps·N
 * frames, rec_s (may be NULL) the events' signs. Events added to *spikes;
 * with fan (output size, may be NULL: the ops one event of each output
 * causes downstream), fan[o] for each event of two units or more to
 * *burst_ops. */
cudaError_t nc_cu_spikemax(cudaStream_t st, const float *x, int x_static, int N, nc_win_geom g, int steps,
                           int signed_in, const float *unit, uint32_t *in_cnt, uint32_t *cum, uint32_t *out_cnt,
                           float *y, float *rec_s, const int32_t *fan, nc_cu_count *spikes, nc_cu_count *burst_ops);
/* A Nonlinear layer (kernels/nonlinear.h), as the kernels see it: the
 * function, x's and y's shapes (per sample), and the MatMul's geometry
 * (nc_nl_matmul_dims; element (i, q) of x at i·xi + q·xq, (q, j) of y at
 * q·yq + j·yj) or the row functions' (rows of len, stride inner). */
typedef struct nc_cu_nl {
    int fn;
    float alpha, beta, eps;
    int xnd, ynd;
    int64_t xshape[8], yshape[8];
    int64_t size, xsize, ysize;
    int64_t m, k, n, xi, xq, yq, yj;
    int64_t len, inner;
} nc_cu_nl;
/* The sums of an input (N × size) after each of `steps` steps (x as in
 * nc_cu_if) into cum (steps·N frames); S (N × size) carries them. */
cudaError_t nc_cu_nl_sums(cudaStream_t st, const float *x, int x_static, int N, int64_t size, int steps, float *S,
                          float *cum);
/* The layer's outputs for steps t0 .. t0 + steps − 1 from its inputs'
 * sums cx, cy (steps·N frames; cy NULL for one input) into y: the totals
 * t·f, then their increments (last: N × size totals before the chunk, then
 * after it). */
cudaError_t nc_cu_nonlinear(cudaStream_t st, const nc_cu_nl *p, const float *cx, const float *cy, int N, int t0,
                            int steps, float *last, float *y);
/* p[k] = v for k < n (a two-sided SignedIF's net counts start at 2^30). */
cudaError_t nc_cu_fill_i32(cudaStream_t st, int32_t *p, int32_t v, int64_t n);
/* acc[n][j] += x over the steps (x as in nc_cu_if). */
cudaError_t nc_cu_sum_steps(cudaStream_t st, float *acc, const float *x, int x_static, int N, int size, int steps);
/* Poisson spikes of analog x (steps·N frames, or N when x_static) for steps
 * t0.. t0+steps−1 into y (steps·N frames). */
cudaError_t nc_cu_poisson(cudaStream_t st, const float *x, int x_static, int N, int size, int t0, int steps,
                          uint64_t seed, float *y);
/* v[n][j] = v0[j]. */
cudaError_t nc_cu_fill_rows(cudaStream_t st, float *v, const float *v0, int rows, int size);
/* im2col of frames f0.. f0+nf−1 (groups 1): row (f, oh, ow), column
 * (c, i, j) = c·kh·kw + i·kw + j; 0 outside the input. */
cudaError_t nc_cu_im2col(cudaStream_t st, const float *x, nc_win_geom g, int nf, float *col);
/* y[f][k][p] = ycl[f][p][k] + bias[k] for nf frames of K×P. */
cudaError_t nc_cu_cl_to_nchw_bias(cudaStream_t st, const float *ycl, const float *bias, int nf, int K, int P,
                                  float *y);
/* CSR of the event lists: rowptr (frames + 1, exclusive scan of cnt), then
 * the lists packed; the number of events is rowptr[frames]. */
cudaError_t nc_cu_csr_pack(cudaStream_t st, const int32_t *idx, const float *val, const int32_t *cnt, int in,
                           int frames, int32_t *rowptr, int32_t *col, float *vals);

#ifdef __cplusplus
}
#endif
#endif
