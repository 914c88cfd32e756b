/* Outputs that appear complete or not at all (nc_write_file_atomic, .npy,
 * .nir): written to "<path>.tmp.XXXXXX" in the same folder (so that rename
 * is atomic and the name says what it is), synced, renamed over <path>.
 * A file in progress is registered, so that nc_remove_temp_files() (from a
 * signal handler) can delete it; one killed by SIGKILL stays behind under
 * its recognisable name. */
#ifndef NC_SNN_ATOMIC_FILE_H
#define NC_SNN_ATOMIC_FILE_H

#include <sys/types.h>

#include "neuroc/neuroc.h"

/* The temporary file's name ends in this plus six random characters. */
#define NC_TMP_SUFFIX ".tmp."

typedef struct nc_atomic_file {
    char *tmp;  /* path of the temporary file */
    int fd;     /* open for writing, or -1 once the caller closed it */
    int slot;   /* in the cleanup registry, or -1 */
    mode_t mode; /* given to the file at the commit */
} nc_atomic_file;

/* "a directory", "a FIFO (named pipe)", "a character device", ... for
 * messages; "a regular file" for one. */
const char *nc_file_kind(mode_t mode);

/* Refuses (NC_ERR_IO, naming what is there) a `path` that exists and is not
 * a regular file: a device, FIFO, directory or symbolic link is never
 * replaced. Creates the temporary file for `path` with the mode an existing `path`
 * has (else 0644). Errors name `path`. */
nc_status nc_atomic_open(const char *path, nc_atomic_file *af);
/* Syncs, closes and renames the temporary file over `path`; on failure the
 * temporary file is removed. Either way af is released. */
nc_status nc_atomic_commit(nc_atomic_file *af, const char *path);
/* Closes and removes the temporary file; releases af. */
void nc_atomic_abort(nc_atomic_file *af);
/* Writes all n bytes to fd (retrying short writes and EINTR); 0 on error
 * (errno set, or 0 for a write that made no progress). */
int nc_write_all(int fd, const void *buf, size_t n);

#endif
