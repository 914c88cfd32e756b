/* Matrix products (cblas_sgemm's arguments, row-major) through OpenBLAS,
 * loaded on first use, or through a plain loop where OpenBLAS could hang.
 *
 * OpenBLAS maps a 128 MB buffer for each thread that multiplies and
 * retries forever when the mapping fails: under an address-space limit
 * (ulimit -v) `neuroc --version` hung at exit waiting for its workers, and
 * convert/run/eval hung inside sgemm. So libneuroc does not link it: under
 * a finite RLIMIT_AS it is loaded single-threaded (OPENBLAS_NUM_THREADS=1),
 * only if its buffer fits with room to spare, which it then takes at once;
 * the products are serialised so that it never needs a second buffer.
 * Where it does not fit, or cannot be loaded, the plain loop computes the
 * same products (slower) and an allocation failure stays an error. */
#ifndef NC_SNN_BLAS_H
#define NC_SNN_BLAS_H

#include <cblas.h>

#include "blas_threads.h"

void nc_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, int m, int n, int k,
              float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);

/* "OpenBLAS" or "built-in (…why…)": which path nc_sgemm takes. */
const char *nc_blas_name(void);

#endif
