#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NC_ERR_LEN 1024

static _Thread_local char g_err[NC_ERR_LEN];
static nc_log_fn g_log_fn;
static void *g_log_user;

const char *nc_status_str(nc_status s)
{
    switch (s) {
    case NC_OK: return "ok";
    case NC_ERR_INVALID_ARG: return "invalid argument";
    case NC_ERR_NOMEM: return "out of memory";
    case NC_ERR_IO: return "I/O error";
    case NC_ERR_PARSE: return "malformed file";
    case NC_ERR_UNSUPPORTED: return "unsupported";
    case NC_ERR_SHAPE: return "shape error";
    case NC_ERR_MODEL: return "invalid model";
    case NC_ERR_LIMIT: return "size limit exceeded";
    case NC_ERR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case NC_ERR_DEVICE: return "device error";
    case NC_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *nc_last_error(void) { return g_err; }

void nc_error_clear(void) { g_err[0] = '\0'; }

nc_status nc_errorf(nc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_err, sizeof g_err, fmt, ap);
    va_end(ap);
    return st;
}

void nc_error_prefix(const char *fmt, ...)
{
    char old[NC_ERR_LEN];
    memcpy(old, g_err, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(g_err, sizeof g_err, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof g_err - 2)
        return;
    size_t room = sizeof g_err - (size_t)n;
    size_t len = 0;
    while (len < room - 3 && old[len])
        len++;
    g_err[n] = ':';
    g_err[n + 1] = ' ';
    memcpy(g_err + n + 2, old, len);
    g_err[(size_t)n + 2 + len] = '\0';
}

void nc_set_log_callback(nc_log_fn fn, void *user)
{
    g_log_fn = fn;
    g_log_user = user;
}

void nc_log(nc_log_level level, const char *fmt, ...)
{
    if (!g_log_fn)
        return;
    char msg[NC_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    g_log_fn(level, msg, g_log_user);
}
