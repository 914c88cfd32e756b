/* The NC_HD math and index functions the CUDA kernels are made of, tested
 * on the CPU (no GPU is needed):
 *  - the index helpers against brute force (bitmask words and bits, ballot
 *    slots, window taps, conv weight index vs the IR's layout, the hash);
 *  - a C emulation of the cuda backend (snn/backends/cuda/backend_cuda.c with
 *    snn/backends/cuda/cuda_kernels.cu): time-batched in chunks of steps, spike
 *    compaction done as the warp-ballot kernel does it (blocks of 256 lanes,
 *    warps of 32, per-warp prefix), the FC gather over 256-event chunks, the
 *    output-stationary conv, pooling, Concat, IF over time and readout sums, all
 *    through the same header functions the kernels call. Its outputs, spike
 *    counts and synaptic-op counts must equal the cpu reference backend's bit
 *    for bit on random networks and the converted example models. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/event_index.h"
#include "kernels/hash.h"
#include "kernels/time_loop.h"
#include "kernels/window_index.h"
#include "snn/base/alloc.h"
#include "snn/run/backend.h"
#include "snn/ir/snn_ir.h"
#include "snn/backends/weight_layout.h"
#include "random_nets.h"

/* ---------------------------------------------------------------- index helpers */

static void test_bits_and_slots(void **state)
{
    (void)state;
    assert_int_equal(nc_bit_words(0), 0);
    assert_int_equal(nc_bit_words(1), 1);
    assert_int_equal(nc_bit_words(32), 1);
    assert_int_equal(nc_bit_words(33), 2);
    for (int64_t i = 0; i < 200; i++) {
        assert_int_equal(nc_bit_word(i), i / 32);
        assert_int_equal(nc_bit_mask(i), 1u << (i % 32));
    }
    for (int r = 0; r < 1000; r++) {
        uint32_t m = (uint32_t)(net_frand() * 4294967296.0);
        int below = 0;
        for (int lane = 0; lane < 32; lane++) {
            assert_int_equal(nc_compact_slot(m, lane), below);
            below += (m >> lane) & 1;
        }
        assert_int_equal(nc_popc32(m), below);
    }
    assert_true(nc_is_event(1e-30f) && nc_is_event(-2.0f) && !nc_is_event(0.0f) && !nc_is_event(-0.0f));
}

static void test_window_taps(void **state)
{
    (void)state;
    for (int k = 1; k <= 4; k++)
        for (int stride = 1; stride <= 3; stride++)
            for (int pad = 0; pad < k; pad++)
                for (int dil = 1; dil <= 2; dil++)
                    for (int n = 1; n <= 9; n++) {
                        int n_out = (n + 2 * pad - dil * (k - 1) - 1) / stride + 1;
                        if (n_out < 1)
                            continue;
                        int count[16] = {0};
                        for (int o = 0; o < n_out; o++)
                            for (int i = 0; i < k; i++) {
                                int x = nc_win_in(o, i, stride, pad, dil);
                                assert_int_equal(x, o * stride - pad + i * dil);
                                if (x >= 0 && x < n)
                                    count[x]++;
                            }
                        for (int x = 0; x < n; x++)
                            assert_int_equal(nc_win_taps(x, k, stride, pad, dil, n_out), count[x]);
                    }
}

static void test_hash_is_the_session_hash(void **state)
{
    (void)state;
    for (uint64_t t = 0; t < 5; t++)
        for (uint64_t k = 0; k < 300; k += 7) {
            float u = nc_hash_uniform(42, t, k);
            assert_true(u >= 0.0f && u < 1.0f);
            assert_memory_equal(&u, &(float){nc_uniform_hash(42, t, k)}, sizeof u);
            assert_true(nc_poisson_spike(2.0f, 42, t, k) == 1.0f && nc_poisson_spike(-1.0f, 42, t, k) == 0.0f);
        }
}

/* ---------------------------------------------------------------- the emulated backend */

typedef struct emu_layer {
    int view, is_static;
    int64_t size;
    float *val, *wt, *v, *theta, *sval, *v0;
    int32_t *net;                   /* SignedIF */
    uint32_t *in_cnt, *out_cnt, *cum; /* SpikeMaxPool2d */
    int signed_in;
    nc_win_geom g;
} emu_layer;

/* The compaction kernel of one frame, lane by lane: blocks of 256 values,
 * warps of 32, a ballot word per warp, slots = block offset + warp prefix +
 * active lanes below. Returns the number of events; checks the mask. */
static int emu_compact(const float *x, int size, uint32_t *mask, int32_t *idx, float *val)
{
    int base = 0;
    int64_t words = nc_bit_words(size);
    for (int k0 = 0; k0 < size; k0 += 256) {
        uint32_t ballot[8] = {0};
        int off[8], sum = 0;
        for (int w = 0; w < 8; w++) {
            for (int lane = 0; lane < 32; lane++) {
                int k = k0 + w * 32 + lane;
                if (k < size && nc_is_event(x[k]))
                    ballot[w] |= 1u << lane;
            }
            if (nc_bit_word(k0 + w * 32) < words)
                mask[nc_bit_word(k0 + w * 32)] = ballot[w];
            off[w] = sum;
            sum += nc_popc32(ballot[w]);
        }
        for (int w = 0; w < 8; w++)
            for (int lane = 0; lane < 32; lane++)
                if (ballot[w] >> lane & 1) {
                    int k = k0 + w * 32 + lane, slot = base + off[w] + nc_compact_slot(ballot[w], lane);
                    idx[slot] = k;
                    val[slot] = x[k];
                }
        base += sum;
    }
    for (int k = 0; k < size; k++) /* the mask says the same as the values */
        assert_int_equal(!!(mask[nc_bit_word(k)] & nc_bit_mask(k)), nc_is_event(x[k]));
    return base;
}

/* Runs s as the cuda backend does, `tc` steps a chunk. */
static void emu_run(const nc_snn *s, const nc_tensor *input, int T, int tc, nc_encoding enc, int per_step,
                    float *out, int64_t *spikes, int64_t *synops, float **tr_s, float **tr_v)
{
    int nl = s->n_layers, series = nc_tensor_ndim(input) == s->layers[0].ndim + 2;
    int N = (int)nc_tensor_shape(input)[series];
    emu_layer *E = calloc((size_t)nl, sizeof *E);
    char *is_static = calloc((size_t)nl, 1), *is_signed = calloc((size_t)nl, 1);
    nc_snn_mark_static(s, series, enc, is_static); /* as the backend */
    nc_snn_mark_signed(s, is_signed);
    int64_t max_in = 1;
    for (int i = 0; i < nl; i++) {
        const nc_snn_layer *L = &s->layers[i];
        E[i].size = nc_snn_layer_size(L);
        E[i].view = nc_snn_kind(L->kind)->view ? E[L->inputs[0]].view : i;
        E[i].val = E[i].view == i ? calloc((size_t)(tc * N * E[i].size), sizeof(float)) : NULL;
        E[i].is_static = is_static[i];
        if (L->kind == NC_SNN_CONV2D || L->kind == NC_SNN_POOL2D || L->kind == NC_SNN_MAXPOOL2D ||
            L->kind == NC_SNN_SPIKEMAXPOOL2D)
            E[i].g = nc_snn_win_geom(L, &s->layers[L->inputs[0]]);
        if (L->kind == NC_SNN_SPIKEMAXPOOL2D) {
            int64_t in = E[L->inputs[0]].size;
            E[i].in_cnt = calloc((size_t)(N * in), sizeof(uint32_t));
            E[i].out_cnt = calloc((size_t)(N * E[i].size), sizeof(uint32_t));
            E[i].cum = calloc((size_t)(tc * N * in), sizeof(uint32_t));
            E[i].signed_in = is_signed[L->inputs[0]];
        }
        if (L->kind == NC_SNN_SIGNED_IF)
            E[i].net = calloc((size_t)(N * E[i].size), sizeof(int32_t));
        if (L->kind == NC_SNN_CONV2D || L->kind == NC_SNN_AFFINE) {
            E[i].wt = nc_snn_fanout_weights(L); /* the backend's layout, read through nc_conv_w_index */
            assert_non_null(E[i].wt);
        }
        if (L->n_inputs > 0 && E[L->inputs[0]].size > max_in)
            max_in = E[L->inputs[0]].size;
        if (nc_snn_kind_is_if(L->kind)) {
            E[i].v = malloc((size_t)(N * E[i].size) * sizeof(float));
            E[i].theta = malloc((size_t)E[i].size * sizeof(float));
            E[i].sval = malloc((size_t)E[i].size * sizeof(float));
            E[i].v0 = malloc((size_t)E[i].size * sizeof(float));
            for (int64_t j = 0; j < E[i].size; j++) {
                E[i].theta[j] = nc_snn_param(L->threshold, L, j, 1.0f);
                E[i].sval[j] = nc_snn_param(L->spike_value, L, j, NAN);
                E[i].v0[j] = nc_snn_param(L->v_init, L, j, NAN);
                if (isnan(E[i].sval[j]))
                    E[i].sval[j] = E[i].theta[j];
                if (isnan(E[i].v0[j]))
                    E[i].v0[j] = E[i].theta[j] * 0.5f;
            }
            for (int64_t e = 0; e < N * E[i].size; e++)
                E[i].v[e] = E[i].v0[e % E[i].size];
        }
        spikes[i] = synops[i] = 0;
    }
    uint32_t *mask = calloc((size_t)nc_bit_words(max_in), sizeof *mask);
    int32_t *idx = calloc((size_t)max_in, sizeof *idx);
    float *ev = calloc((size_t)max_in, sizeof *ev);
    int o = nc_snn_output_id(s);
    int64_t osz = E[o].size;
    if (!per_step)
        memset(out, 0, (size_t)(N * osz) * sizeof *out);
    const float *in = nc_tensor_data_const(input);
    for (int t0 = 0; t0 < T; t0 += tc) {
        int steps = T - t0 < tc ? T - t0 : tc;
        for (int i = 0; i < nl; i++) {
            const nc_snn_layer *L = &s->layers[i];
            emu_layer *C = &E[i];
            if (C->is_static && t0 > 0)
                continue;
            int frames = C->is_static ? N : steps * N;
            const emu_layer *X = L->n_inputs > 0 ? &E[E[L->inputs[0]].view] : NULL;
            int64_t xs = X ? X->size : 0;
            nc_win_geom g = C->g;
            switch (L->kind) {
            case NC_SNN_INPUT:
                for (int64_t e = 0; e < frames * C->size; e++) {
                    int64_t step = (int64_t)N * C->size;
                    float a = in[(series ? t0 * step : 0) + (series ? e : e % step)];
                    C->val[e] = enc == NC_ENCODING_DIRECT ? a
                                                          : nc_poisson_spike(a, 7, (uint64_t)(t0 + e / step),
                                                                             (uint64_t)(e % step));
                }
                break;
            case NC_SNN_AFFINE:
                for (int f = 0; f < frames; f++) {
                    int n = emu_compact(X->val + f * xs, (int)xs, mask, idx, ev);
                    synops[i] += (int64_t)n * C->size;
                    for (int64_t q = 0; q < C->size; q++) {
                        float acc = nc_f32(L->bias)[q];
                        for (int a0 = 0; a0 < n; a0 += 256) /* the kernel's shared-memory chunks */
                            acc = nc_fc_gather(acc, idx + a0, ev + a0, n - a0 < 256 ? n - a0 : 256, C->wt, C->size, q);
                        C->val[f * C->size + q] = acc;
                    }
                }
                break;
            case NC_SNN_CONV2D:
                for (int f = 0; f < frames; f++) {
                    const float *x = X->val + f * xs;
                    emu_compact(x, (int)xs, mask, idx, ev);
                    for (int64_t w = 0; w < nc_bit_words(xs); w++) /* the ops kernel */
                        for (uint32_t m = mask[w]; m; m &= m - 1) {
                            int p = (int)((w * 32 + __builtin_ctz(m)) % (g.H * g.W));
                            synops[i] += nc_conv_input_ops(g, p / g.W, p % g.W);
                        }
                    for (int k = 0; k < g.K; k++)
                        for (int p = 0; p < g.OH * g.OW; p++)
                            C->val[(f * g.K + k) * g.OH * g.OW + p] =
                                nc_conv_output(x, C->wt, nc_f32(L->bias)[k], g, k, p / g.OW, p % g.OW);
                }
                break;
            case NC_SNN_POOL2D: case NC_SNN_MAXPOOL2D:
                for (int f = 0; f < frames; f++)
                    for (int c = 0; c < g.C; c++)
                        for (int p = 0; p < g.OH * g.OW; p++) {
                            float *y = &C->val[(f * g.C + c) * g.OH * g.OW + p];
                            int n = 0;
                            if (L->kind == NC_SNN_POOL2D)
                                *y = nc_pool_output(X->val + f * xs, g, L->scale, c, p / g.OW, p % g.OW, &n);
                            else
                                *y = nc_maxpool_output(X->val + f * xs, g, c, p / g.OW, p % g.OW);
                            synops[i] += n;
                        }
                break;
            case NC_SNN_ADD:
                for (int k = 0; k < L->n_inputs; k++) {
                    const emu_layer *A = &E[L->inputs[k]];
                    const float *a = E[A->view].val;
                    int64_t a_elems = (A->is_static ? N : frames) * C->size;
                    for (int64_t e = 0; e < frames * C->size; e++)
                        C->val[e] = k == 0 ? a[e % a_elems] : C->val[e] + a[e % a_elems];
                }
                break;
            case NC_SNN_CONCAT: /* as concat_kernel: one input after another, each frame */
                for (int64_t k = 0, off = 0; k < L->n_inputs; off += E[L->inputs[k]].size, k++) {
                    const emu_layer *A = &E[L->inputs[k]];
                    for (int64_t e = 0; e < frames * A->size; e++)
                        C->val[nc_concat_dst(e, A->size, C->size, off)] =
                            E[A->view].val[nc_concat_src(e, A->size, A->is_static ? N : frames)];
                }
                break;
            case NC_SNN_IF: case NC_SNN_SIGNED_IF: {
                int x_static = E[L->inputs[0]].is_static;
                for (int64_t e = 0; e < N * C->size; e++)
                    spikes[i] += nc_if_over_time(&C->v[e], C->net ? &C->net[e] : NULL, X->val + e,
                                                 x_static ? 0 : N * C->size, C->val + e, N * C->size, steps,
                                                 C->theta[e % C->size], C->sval[e % C->size],
                                                 L->reset == NC_RESET_ZERO, nc_snn_layer_burst(L),
                                                 tr_s[i] + t0 * N * C->size + e,
                                                 tr_v[i] + t0 * N * C->size + e);
                continue;
            }
            case NC_SNN_SPIKEMAXPOOL2D: { /* as nc_cu_spikemax: the counts pass, then the outputs pass */
                int x_static = E[L->inputs[0]].is_static;
                for (int64_t e = 0; e < N * xs; e++)
                    nc_spike_count_over_time(&C->in_cnt[e], X->val + e, x_static ? 0 : N * xs, C->cum + e, N * xs,
                                             steps, C->signed_in);
                int64_t P = (int64_t)g.OH * g.OW;
                for (int64_t e = 0; e < N * C->size; e++) {
                    int64_t smp = e / C->size, o = e % C->size;
                    int c = (int)(o / P), p = (int)(o % P);
                    spikes[i] += nc_spikemax_over_time(X->val + smp * xs, x_static ? 0 : N * xs, C->cum + smp * xs,
                                                       N * xs, &C->out_cnt[e], g, c, p / g.OW, p % g.OW, C->val + e,
                                                       N * C->size, tr_s[i] + t0 * N * C->size + e, steps);
                }
                break;
            }
            default: break;
            }
        }
        for (int i = 0; i < nl; i++) /* value traces of the other layers */
            if (!nc_snn_kind_is_neuron(s->layers[i].kind))
                for (int t = 0; t < steps; t++)
                    memcpy(tr_v[i] + (t0 + t) * N * E[i].size,
                           E[E[i].view].val + (E[i].is_static ? 0 : t * N * E[i].size),
                           (size_t)(N * E[i].size) * sizeof(float));
        const emu_layer *O = &E[o];
        const float *ov = E[O->view].val;
        for (int64_t e = 0; e < N * osz; e++) {
            if (per_step)
                for (int t = 0; t < steps; t++)
                    out[(t0 + t) * N * osz + e] = ov[(O->is_static ? 0 : t * N * osz) + e];
            else
                out[e] = nc_sum_over_time(out[e], ov + e, O->is_static ? 0 : N * osz, steps);
        }
    }
    for (int i = 0; i < nl; i++) {
        free(E[i].val);
        nc_free(E[i].wt);
        free(E[i].v);
        free(E[i].theta);
        free(E[i].sval);
        free(E[i].v0);
        free(E[i].net);
        free(E[i].in_cnt);
        free(E[i].out_cnt);
        free(E[i].cum);
    }
    free(E);
    free(is_static);
    free(is_signed);
    free(mask);
    free(idx);
    free(ev);
}

static int64_t g_spikes;

/* The emulation (chunks of tc steps) against the reference, bit for bit. */
static void check_emulation(const nc_snn *s, const nc_tensor *x, int T, int tc, nc_encoding enc, int per_step)
{
    int nl = s->n_layers;
    const char *names[64];
    float *tr_s[64], *tr_v[64];
    assert_true(nl <= 64);
    for (int i = 0; i < nl; i++) {
        names[i] = s->layers[i].name;
        int64_t n = (int64_t)T * nc_tensor_shape(x)[nc_tensor_ndim(x) == s->layers[0].ndim + 2] *
                    nc_snn_layer_size(&s->layers[i]);
        tr_s[i] = calloc((size_t)n, sizeof(float));
        tr_v[i] = calloc((size_t)n, sizeof(float));
    }
    nc_session_options o = {.backend = "cpu", .timesteps = T, .encoding = enc, .seed = 7, .per_step = per_step,
                            .record = names, .n_record = nl};
    nc_session *ss = NULL;
    nc_tensor *y = NULL;
    NC_ASSERT_OK(nc_session_create(s, &o, &ss));
    NC_ASSERT_OK(nc_session_run(ss, x, &y));
    int64_t *es = calloc((size_t)(2 * nl), sizeof *es), *eo = es + nl;
    float *ey = calloc((size_t)nc_tensor_numel(y), sizeof *ey);
    emu_run(s, x, T, tc, enc, per_step, ey, es, eo, tr_s, tr_v);
    for (int i = 0; i < nl; i++) /* spike trains, membranes and every layer's value at every step */
        for (int kind = 0; kind < 2; kind++) {
            nc_tensor *tr = NULL;
            NC_ASSERT_OK(nc_session_trace(ss, names[i], kind, &tr));
            const float *r = nc_tensor_data_const(tr), *e = kind ? tr_v[i] : tr_s[i];
            for (int64_t k = 0; k < nc_tensor_numel(tr); k++)
                if (memcmp(&r[k], &e[k], sizeof(float)) != 0)
                    fail_msg("layer %d (%s) %s trace at %lld: cpu %.9g, emulated cuda %.9g (T %d, chunk %d)", i,
                             names[i], kind ? "value/membrane" : "spike", (long long)k, (double)r[k], (double)e[k],
                             T, tc);
            nc_tensor_free(tr);
        }
    for (int i = 0; i < nl; i++) {
        free(tr_s[i]);
        free(tr_v[i]);
    }
    const float *ry = nc_tensor_data_const(y);
    for (int64_t k = 0; k < nc_tensor_numel(y); k++)
        if (memcmp(&ry[k], &ey[k], sizeof(float)) != 0)
            fail_msg("output %lld: cpu %.9g, emulated cuda %.9g (T %d, chunk %d)", (long long)k, (double)ry[k],
                     (double)ey[k], T, tc);
    for (int i = 0; i < nl; i++) {
        int64_t sp, op;
        NC_ASSERT_OK(nc_session_spike_count(ss, i, &sp));
        NC_ASSERT_OK(nc_session_synops(ss, i, &op));
        if (sp != es[i] || op != eo[i])
            fail_msg("layer %d (%s): spikes cpu %lld emulated %lld, synops cpu %lld emulated %lld", i,
                     s->layers[i].name, (long long)sp, (long long)es[i], (long long)op, (long long)eo[i]);
        g_spikes += sp;
    }
    free(es);
    free(ey);
    nc_tensor_free(y);
    nc_session_free(ss);
}

static void check_modes(const nc_snn *s, int T)
{
    nc_tensor *x = net_rand_input(s, 0, 3), *xs = net_rand_input(s, T, 2);
    check_emulation(s, x, T, T, NC_ENCODING_DIRECT, 0);
    check_emulation(s, x, T, 3, NC_ENCODING_DIRECT, 1);   /* chunks of 3 steps, per-step output */
    check_emulation(s, x, T, 2, NC_ENCODING_POISSON, 0);
    check_emulation(s, xs, T, 4, NC_ENCODING_DIRECT, 0);  /* a time series: nothing is static */
    nc_tensor_free(x);
    nc_tensor_free(xs);
}

static void test_emulated_random_layers(void **state)
{
    (void)state;
    g_spikes = 0;
    nc_snn *s = net_random_layers(NET_RANDOM_CUDA);
    check_modes(s, 7);
    nc_snn_free(s);
    s = net_static_paths(0);
    check_modes(s, 5);
    nc_snn_free(s);
    s = net_cnn_shapes();
    check_modes(s, 8);
    nc_snn_free(s);
    s = net_concat_paths();
    check_modes(s, 6);
    nc_snn_free(s);
    for (int sgn = 0; sgn < 2; sgn++) {
        s = net_spike_maxpool(sgn, NULL);
        check_modes(s, 7);
        nc_snn_free(s);
    }
    assert_true(g_spikes > 0);
}

static void test_emulated_example_models(void **state)
{
    (void)state;
    /* vgg: max pools of spikes (SpikeMaxPool2d); squeezenet: Concat and ceil-mode max pools; the
       last three with signed spikes (net_spike_maxpool has signed max pools), two of them with bursts */
    static const char *models[] = {"examples/models/cnn.onnx", "examples/models/resnet.onnx",
                                   "examples/models/mlp.onnx", "examples/models/vgg.onnx",
                                   "examples/models/squeezenet.onnx", "examples/models/resnet.onnx",
                                   "examples/models/resnet.onnx", "examples/models/squeezenet.onnx"};
    for (size_t k = 0; k < sizeof models / sizeof models[0]; k++) {
        g_spikes = 0;
        nc_tensor *x = NULL;
        nc_convert_options co;
        nc_convert_options_init(&co);
        co.spikes = k >= 5 ? NC_SPIKES_SIGNED : NC_SPIKES_PLAIN;
        co.burst = k == 6 ? 2 : k == 7 ? 3 : 1; /* squeezenet: bursts beside pools of single spikes */
        nc_snn *s = net_example(nc_test_src(models[k]), 4, &x, &co);
        check_emulation(s, x, 8, 8, NC_ENCODING_DIRECT, 0);
        check_emulation(s, x, 8, 3, NC_ENCODING_DIRECT, 1);
        assert_true(g_spikes > 0);
        nc_snn_free(s);
        nc_tensor_free(x);
    }
}

/* The backend is known by name in every build; without a usable device it
 * says why before allocating anything. */
static void test_cuda_backend_known(void **state)
{
    (void)state;
    nc_snn *s = net_cnn_shapes();
    nc_session_options o = {.backend = "cuda", .timesteps = 2, .cuda_strategy = "event"};
    nc_session *ss = NULL;
    int count = 0;
    nc_status dev = nc_cuda_device_count(&count);
    nc_status st = nc_session_create(s, &o, &ss);
    if (dev != NC_OK) {
        assert_int_equal(st, NC_ERR_BACKEND_UNAVAILABLE);
        assert_null(ss);
        assert_non_null(strstr(nc_last_error(), "--backend cpu"));
    } else {
        NC_ASSERT_OK(st);
        nc_session_free(ss);
    }
    nc_snn_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bits_and_slots),          cmocka_unit_test(test_window_taps),
        cmocka_unit_test(test_hash_is_the_session_hash), cmocka_unit_test(test_emulated_random_layers),
        cmocka_unit_test(test_emulated_example_models), cmocka_unit_test(test_cuda_backend_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
