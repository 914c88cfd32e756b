/* Opening an input file (input_file.h). */
#define _XOPEN_SOURCE 700

#include "input_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "error.h"

nc_status nc_input_open(const char *path, int flags, int *fd, int64_t *size)
{
    *fd = -1;
    if (size)
        *size = 0;
    if (!path || !*path)
        return nc_errorf(NC_ERR_INVALID_ARG, "an empty file name was given as an input");
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer */
    int f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (flags & NC_INPUT_NOFOLLOW ? O_NOFOLLOW : 0));
    if (f < 0) {
        int err = errno;
        if (err == ELOOP && (flags & NC_INPUT_NOFOLLOW))
            return nc_errorf(NC_ERR_IO, "%s: is a symbolic link, which is not followed here", path);
        return nc_errorf(NC_ERR_IO, "%s: cannot open: %s", path, strerror(err));
    }
    struct stat sb;
    if (fstat(f, &sb) != 0) {
        int err = errno;
        close(f);
        return nc_errorf(NC_ERR_IO, "%s: cannot read: %s", path, strerror(err));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(f);
        return nc_errorf(NC_ERR_IO, "%s: is %s; a file was expected", path, nc_file_kind(sb.st_mode));
    }
    int fl = fcntl(f, F_GETFL);
    if (fl >= 0)
        fcntl(f, F_SETFL, fl & ~O_NONBLOCK);
    *fd = f;
    if (size)
        *size = (int64_t)sb.st_size;
    return NC_OK;
}

nc_status nc_input_fopen(const char *path, int flags, FILE **f, int64_t *size)
{
    *f = NULL;
    int fd;
    nc_status st = nc_input_open(path, flags, &fd, size);
    if (st != NC_OK)
        return st;
    if (!(*f = fdopen(fd, "rb"))) {
        int err = errno;
        close(fd);
        return nc_errorf(err == ENOMEM ? NC_ERR_NOMEM : NC_ERR_IO, "%s: cannot read: %s", path, strerror(err));
    }
    return NC_OK;
}

nc_status nc_check_input_file(const char *path)
{
    return nc_input_check(path, NULL);
}

nc_status nc_input_check(const char *path, int64_t *size)
{
    int fd;
    nc_status st = nc_input_open(path, 0, &fd, size);
    if (st == NC_OK)
        close(fd);
    return st;
}
