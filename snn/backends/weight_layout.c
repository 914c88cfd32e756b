/* The fan-out weight layout of the spiking backends (weight_layout.h). */
#include "weight_layout.h"

#include "snn/base/alloc.h"
#include "snn/base/tensor.h"

float *nc_snn_fanout_weights(const nc_snn_layer *L)
{
    const float *W = nc_f32(L->weight);
    float *T = nc_malloc((size_t)L->weight->numel * sizeof *T);
    if (!T)
        return NULL;
    if (L->kind == NC_SNN_AFFINE) {
        int64_t out = L->weight->shape[0], in = L->weight->shape[1];
        for (int64_t o = 0; o < out; o++)
            for (int64_t i = 0; i < in; i++)
                T[i * out + o] = W[o * in + i];
        return T;
    }
    /* Output channel k of group g = k / kg reads input channels g·cg .. g·cg + cg. */
    int64_t K = L->weight->shape[0], cg = L->weight->shape[1], kk = L->weight->shape[2] * L->weight->shape[3];
    int64_t kg = K / L->groups;
    for (int64_t k = 0; k < K; k++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t e = 0; e < kk; e++)
                T[(((k / kg) * cg + c) * kk + e) * kg + k % kg] = W[(k * cg + c) * kk + e];
    return T;
}

nc_win_geom nc_snn_win_geom(const nc_snn_layer *L, const nc_snn_layer *X)
{
    nc_win_geom g = {.C = (int)X->shape[0], .H = (int)X->shape[1], .W = (int)X->shape[2], .K = (int)L->shape[0],
                     .OH = (int)L->shape[1], .OW = (int)L->shape[2], .groups = 1, .dh = 1, .dw = 1};
    if (L->kind == NC_SNN_CONV2D) {
        g.kh = (int)L->weight->shape[2];
        g.kw = (int)L->weight->shape[3];
        g.dh = (int)L->dilation[0];
        g.dw = (int)L->dilation[1];
        g.groups = (int)L->groups;
    } else {
        g.kh = (int)L->kernel[0];
        g.kw = (int)L->kernel[1];
        g.div = L->kind == NC_SNN_POOL2D && L->div_taps;
        g.dph = (int)L->div_pad[0];
        g.dpw = (int)L->div_pad[1];
    }
    g.sh = (int)L->stride[0];
    g.sw = (int)L->stride[1];
    g.ph = (int)L->padding[0];
    g.pw = (int)L->padding[1];
    return g;
}
