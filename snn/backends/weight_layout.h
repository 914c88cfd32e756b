/* The fan-out weight layout every spiking backend reads (cpu, cpu-fast,
 * cuda): one input event scatters over contiguous outputs. */
#ifndef NC_SNN_WEIGHT_LAYOUT_H
#define NC_SNN_WEIGHT_LAYOUT_H

#include "kernels/window_index.h"
#include "snn/ir/snn_ir.h"

/* The weights of an Affine or Conv2d layer L rearranged: Affine [out][in] →
 * [in][out]; Conv2d [C_out][C_in/groups][kH][kW] → [C_in][kH][kW][C_out/groups]
 * (the index kernels/window_index.h nc_conv_w_index computes). Returns a new
 * array of L->weight->numel floats that the caller frees with nc_free, or
 * NULL when out of memory (no error is set: the caller names the layer). */
float *nc_snn_fanout_weights(const nc_snn_layer *L);

/* The window geometry (kernels/window_index.h) of a Conv2d or Pool2d layer
 * L reading layer X: input (C, H, W) of X, output (K, OH, OW) of L. */
nc_win_geom nc_snn_win_geom(const nc_snn_layer *L, const nc_snn_layer *X);

#endif
