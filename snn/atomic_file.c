/* Files that appear complete or not at all: written to a temporary file in
 * the same folder (so rename is atomic), synced, then renamed over the target.
 * An existing file's permissions are kept. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "error.h"

nc_status nc_write_file_atomic(const char *path, const void *bytes, size_t len)
{
    const char *data = bytes;
    if (!path || (len && !data))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_write_file_atomic: NULL argument");
    size_t plen = strlen(path);
    char *tmp = nc_malloc(plen + sizeof ".tmp.XXXXXX");
    if (!tmp)
        return nc_errorf(NC_ERR_NOMEM, "out of memory");
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    int fd = mkstemp(tmp);
    if (fd < 0) {
        nc_status st = nc_errorf(NC_ERR_IO, "%s: cannot create a temporary file next to it: %s", path,
                                 strerror(errno));
        nc_free(tmp);
        return st;
    }
    struct stat sb;
    mode_t mode = stat(path, &sb) == 0 ? (sb.st_mode & 07777) : 0644;
    int ok = fchmod(fd, mode) == 0;
    for (size_t done = 0; ok && done < len;) {
        ssize_t k = write(fd, data + done, len - done);
        if (k < 0 && errno == EINTR)
            continue;
        ok = k > 0;
        done += ok ? (size_t)k : 0;
    }
    ok = ok && fsync(fd) == 0;
    int err = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = 0;
        err = errno;
    }
    if (!ok)
        unlink(tmp);
    nc_free(tmp);
    return ok ? NC_OK : nc_errorf(NC_ERR_IO, "%s: cannot write: %s", path, strerror(err));
}
