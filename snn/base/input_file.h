/* Opening an input file: every reader's one way in. A path that names a
 * directory, FIFO, device or socket is refused by what it is, never read as
 * a file of 2^63 bytes, and a FIFO never blocks the open. */
#ifndef NC_SNN_INPUT_FILE_H
#define NC_SNN_INPUT_FILE_H

#include <stdint.h>
#include <stdio.h>

#include "neuroc/neuroc.h"

enum {
    NC_INPUT_NOFOLLOW = 1, /* refuse a symbolic link as the last component (O_NOFOLLOW) */
};

/* Opens `path` read-only and checks it is a regular file; *size gets its
 * bytes (size may be NULL). Errors (NC_ERR_IO) name `path` and the cause:
 * "x: is a directory; a file was expected", "x: cannot open: No such file
 * or directory". The caller closes *fd. */
nc_status nc_input_open(const char *path, int flags, int *fd, int64_t *size);
/* The same as a stdio stream; the caller fcloses *f. */
nc_status nc_input_fopen(const char *path, int flags, FILE **f, int64_t *size);
/* The same checks, closing the file again. */
nc_status nc_input_check(const char *path, int64_t *size);

#endif
