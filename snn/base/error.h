/* Internal error reporting: a thread-local message behind nc_last_error(). */
#ifndef NC_SNN_ERROR_H
#define NC_SNN_ERROR_H

#include "neuroc/neuroc.h"

#if defined(__GNUC__)
#define NC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NC_PRINTF(a, b)
#endif

/* Records the message and returns `st`, so callers can `return nc_errorf(...)`. */
nc_status nc_errorf(nc_status st, const char *fmt, ...) NC_PRINTF(2, 3);
/* Puts "prefix: " in front of the current message (for context added by callers). */
void nc_error_prefix(const char *fmt, ...) NC_PRINTF(1, 2);
void nc_error_clear(void);
/* Sends a message to the user's log callback, if one is set. */
void nc_log(nc_log_level level, const char *fmt, ...) NC_PRINTF(2, 3);

#endif
