/* The monotonic clock (clock.h). clock_gettime is POSIX, not C99: the
 * feature macro must come before any system header, so the clock lives in
 * its own file rather than inline in every includer. */
#define _POSIX_C_SOURCE 200809L

#include "clock.h"

#include <time.h>

double nc_monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
