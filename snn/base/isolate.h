/* Reading an HDF5 file in a child process first (nc_limits.isolate_hdf5):
 * HDF5's own parser can crash or hang on corrupt files, and only a process
 * boundary keeps that from the caller. */
#ifndef NC_SNN_ISOLATE_H
#define NC_SNN_ISOLATE_H

#include "neuroc/neuroc.h"

/* With isolation on (and not already inside such a child): runs read(arg)
 * in a forked child under the time limit and an address-space cap, and
 * returns its status and message; NC_ERR_PARSE naming `path` if the child
 * died of a signal, ran out of time or exited abnormally. NC_OK without
 * running anything when isolation is off: the caller then reads as usual. */
nc_status nc_isolated_preflight(const char *path, nc_status (*read)(void *arg), void *arg);

#endif
