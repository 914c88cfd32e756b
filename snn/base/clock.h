/* A monotonic clock for the library's timings (fine-tuning's progress,
 * per-layer profiles). */
#ifndef NC_BASE_CLOCK_H
#define NC_BASE_CLOCK_H

/* Seconds since an arbitrary fixed point; only differences mean anything. */
double nc_monotonic_s(void);

#endif
