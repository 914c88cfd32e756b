/* OpenBLAS's thread count, apart from blas.h: without cblas.h (and the
 * complex.h it brings, whose I clashes with names). Defined in blas.c. */
#ifndef NC_SNN_BLAS_THREADS_H
#define NC_SNN_BLAS_THREADS_H

/* OpenBLAS's own worker threads off from begin to end, for a caller that
 * splits its products over threads of its own (OpenMP): the two pools of
 * spinning threads otherwise compete for the cores. Calls nest and may
 * overlap across threads; the last end restores OpenBLAS's thread count. */
void nc_blas_serial_begin(void);
void nc_blas_serial_end(void);
/* OpenBLAS's thread count now (1 for the built-in loop). */
int nc_blas_threads(void);

#endif
