/* Index maps of data movement (convert_route.h). */
#include "convert_route.h"

#include "neuroc/neuroc.h"

/* Element e's coordinates in shape (C order). */
static void coords(int ndim, const int64_t *shape, int64_t e, int64_t *i)
{
    for (int d = ndim - 1; d >= 0; d--) {
        i[d] = e % shape[d];
        e /= shape[d];
    }
}

static int64_t numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

void nc_route_view(int ndim, const int64_t *shape, const int64_t *stride, int64_t offset, const int64_t *via,
                   int64_t *out)
{
    int64_t n = numel(ndim, shape), i[NC_MAX_DIMS];
    for (int64_t e = 0; e < n; e++) {
        coords(ndim, shape, e, i);
        int64_t pos = offset;
        for (int d = 0; d < ndim; d++)
            pos += i[d] * stride[d];
        out[e] = via ? via[pos] : pos;
    }
}

void nc_route_window(int ndim, const int64_t *ishape, const int64_t *oshape, const int64_t *start,
                     const int64_t *step, const int64_t *in, int64_t *out)
{
    int64_t n = numel(ndim, oshape), i[NC_MAX_DIMS];
    for (int64_t e = 0; e < n; e++) {
        coords(ndim, oshape, e, i);
        int64_t at = 0;
        int inside = 1;
        for (int d = 0; d < ndim; d++) {
            int64_t k = start[d] + i[d] * step[d];
            inside &= k >= 0 && k < ishape[d];
            at = at * ishape[d] + k;
        }
        out[e] = inside ? in[at] : -1;
    }
}

void nc_route_place(int ndim, const int64_t *pshape, const int64_t *oshape, int axis, int64_t at, const int64_t *in,
                    int64_t *out)
{
    int64_t n = numel(ndim, pshape), i[NC_MAX_DIMS];
    for (int64_t e = 0; e < n; e++) {
        coords(ndim, pshape, e, i);
        i[axis] += at;
        int64_t o = 0;
        for (int d = 0; d < ndim; d++)
            o = o * oshape[d] + i[d];
        out[o] = in[e];
    }
}

void nc_route_lay(int ndim, const int64_t *shape, const int64_t *stride, const int64_t *src, int64_t *ix)
{
    int64_t n = numel(ndim, shape), i[NC_MAX_DIMS];
    for (int64_t e = 0; e < n; e++) {
        coords(ndim, shape, e, i);
        int64_t pos = 0;
        for (int d = 0; d < ndim; d++)
            pos += i[d] * stride[d];
        ix[pos] = src[e];
    }
}
