/* The layer kinds the cuda backend runs (nc_backend.kinds): what run_chunk
 * computes, feed-forward IF networks as conversion makes them. Here rather
 * than in backend_cuda.c so that the kind × backend table
 * (docs/layer-kinds.md, tests/layer_kinds_doc.c) is made without the CUDA
 * module. */
#ifndef NC_CUDA_KINDS_H
#define NC_CUDA_KINDS_H

#include "snn/ir/layer_kinds.h"

#define NC_CUDA_KINDS                                                                                    \
    (NC_KIND_BIT(NC_SNN_INPUT) | NC_KIND_BIT(NC_SNN_AFFINE) | NC_KIND_BIT(NC_SNN_CONV2D) |               \
     NC_KIND_BIT(NC_SNN_POOL2D) | NC_KIND_BIT(NC_SNN_MAXPOOL2D) | NC_KIND_BIT(NC_SNN_FLATTEN) |          \
     NC_KIND_BIT(NC_SNN_ADD) | NC_KIND_BIT(NC_SNN_CONCAT) | NC_KIND_BIT(NC_SNN_IF) |                     \
     NC_KIND_BIT(NC_SNN_SIGNED_IF) | NC_KIND_BIT(NC_SNN_SPIKEMAXPOOL2D) | NC_KIND_BIT(NC_SNN_READOUT) |          \
     NC_KIND_BIT(NC_SNN_NONLINEAR))

#endif
