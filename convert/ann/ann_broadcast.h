/* Multidirectional (numpy-style) broadcasting of two shapes, and an
 * odometer that walks the output in C order while tracking the matching
 * element offsets in both inputs. Internal to the ANN ops. */
#ifndef NC_SNN_ANN_BROADCAST_H
#define NC_SNN_ANN_BROADCAST_H

#include <stdint.h>
#include <string.h>

#include "neuroc/neuroc.h"

typedef struct nc_bcast {
    int ndim;
    int64_t shape[NC_MAX_DIMS];   /* the broadcast output shape */
    int64_t sa[NC_MAX_DIMS];      /* element strides of a, 0 along broadcast dims */
    int64_t sb[NC_MAX_DIMS];
    /* iteration state */
    int64_t idx[NC_MAX_DIMS];
    int64_t oa, ob;
} nc_bcast;

/* Aligns the shapes at their trailing dimension; returns 0 when they are
 * incompatible (two dims differ and neither is 1). */
static inline int nc_bcast_init(nc_bcast *bc, int na, const int64_t *a, int nb, const int64_t *b)
{
    memset(bc, 0, sizeof *bc);
    int nd = na > nb ? na : nb;
    if (nd > NC_MAX_DIMS)
        return 0;
    bc->ndim = nd;
    int64_t stride_a = 1, stride_b = 1;
    for (int d = nd - 1; d >= 0; d--) {
        int ia = d - (nd - na), ib = d - (nd - nb);
        int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
        int64_t o;
        if (da == db || db == 1)
            o = da;
        else if (da == 1)
            o = db;
        else
            return 0;
        bc->shape[d] = o;
        bc->sa[d] = (da == o && o != 1) ? stride_a : 0;
        bc->sb[d] = (db == o && o != 1) ? stride_b : 0;
        /* unsigned: a zero-size tensor may have dims whose product overflows */
        stride_a = (int64_t)((uint64_t)stride_a * (uint64_t)da);
        stride_b = (int64_t)((uint64_t)stride_b * (uint64_t)db);
    }
    return 1;
}

/* Moves to the next output element (C order), updating oa and ob. */
static inline void nc_bcast_next(nc_bcast *bc)
{
    for (int d = bc->ndim - 1; d >= 0; d--) {
        bc->oa += bc->sa[d];
        bc->ob += bc->sb[d];
        if (++bc->idx[d] < bc->shape[d])
            return;
        bc->oa -= bc->sa[d] * bc->shape[d];
        bc->ob -= bc->sb[d] * bc->shape[d];
        bc->idx[d] = 0;
    }
}

#endif
