/* The registry of backends (registry.c): which backends neuroc knows, and
 * each one's backend (nc_backend, snn/run/backend.h) on request, loading a
 * module on first use. The session room sits above the backends because
 * of it: a session picks its backend here, so nothing below this room
 * names a backend (the link check of cmake/rooms.cmake holds that). */
#ifndef NC_SNN_SESSION_REGISTRY_H
#define NC_SNN_SESSION_REGISTRY_H

#include "snn/run/backend.h"

/* The backend called `name`, loading its module on first use: NC_OK with
 * *out set, else NC_ERR_BACKEND_UNAVAILABLE (an unknown name, or a backend
 * not built or whose module cannot be loaded, with the reason). Whether a
 * device is present is check()'s to say. */
nc_status nc_backend_find(const char *name, const nc_backend **out);
/* "cpu, cpu-fast, cuda" for messages. */
const char *nc_backend_names(void);

/* Whether backend `name` can run on this machine: NC_OK with the number of
 * devices in *devices (1 for a CPU backend), else
 * NC_ERR_BACKEND_UNAVAILABLE / NC_ERR_DEVICE with the bare reason. A module
 * backend is asked through its probe module when it has one (a small
 * module that loads none of the backend's heavy libraries), else its
 * module's probe. Not cached: each call probes. */
nc_status nc_backend_probe(const char *name, int *devices);

#endif
