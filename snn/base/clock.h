/* A monotonic clock for the library's timings (fine-tuning's progress,
 * per-layer profiles). */
#ifndef NC_BASE_CLOCK_H
#define NC_BASE_CLOCK_H

#include <time.h>

static inline double nc_monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
