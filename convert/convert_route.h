/* Index maps of data movement (the token converter's routing,
 * convert_tokens.c): an ONNX value's elements, in C order, as indices of
 * elements of one layer, -1 for a zero. Each data-movement op is run on
 * its input's map to give its output's; a Gather layer (NC_SNN_GATHER)
 * then holds the result. Pure functions of shapes and maps. */
#ifndef NC_CONVERT_CONVERT_ROUTE_H
#define NC_CONVERT_CONVERT_ROUTE_H

#include <stdint.h>

/* out[e] = via[offset + Σ i_d·stride_d] for element e = (i_0, …) of shape
 * (via NULL: the index itself): a strided view of a layer, read through
 * the map of the Gather holding it, if any. */
void nc_route_view(int ndim, const int64_t *shape, const int64_t *stride, int64_t offset, const int64_t *via,
                   int64_t *out);
/* out (shape oshape) from in (shape ishape): out[i] = in[start + i·step]
 * per axis, -1 where that falls outside in: a Slice of any step (start
 * the first element read), and a Pad (step 1, start −pad). */
void nc_route_window(int ndim, const int64_t *ishape, const int64_t *oshape, const int64_t *start,
                     const int64_t *step, const int64_t *in, int64_t *out);
/* in (shape pshape) written into out (shape oshape) from position `at`
 * of axis `axis` on: one input of a Concat. */
void nc_route_place(int ndim, const int64_t *pshape, const int64_t *oshape, int axis, int64_t at, const int64_t *in,
                    int64_t *out);
/* ix[Σ i_d·stride_d] = src[e]: the value's elements (shape, C order) at
 * their places in a layer that holds its axes with those strides. */
void nc_route_lay(int ndim, const int64_t *shape, const int64_t *stride, const int64_t *src, int64_t *ix);

#endif
