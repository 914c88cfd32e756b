/* Files that appear complete or not at all (atomic_file.h). An existing
 * file's permissions are kept. */
#define _XOPEN_SOURCE 700

#include "atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "error.h"

/* ---- registry of files in progress, for nc_remove_temp_files ----
 * Fixed slots of static storage: the signal handler may neither allocate
 * nor lock. A slot is 0 (free), 1 (being filled) or 2 (holds a path). */
#define SLOTS 16
#define SLOT_PATH 4096
static char g_path[SLOTS][SLOT_PATH];
static atomic_int g_state[SLOTS];

/* Takes a slot for a temporary file whose name mkstemp is about to make
 * from `tmpl`, and copies the template into it: mkstemp then writes the
 * name in the slot itself (slot_name), so a handler that runs at any moment,
 * on any thread, unlinks whatever name the slot holds: the template or a
 * name not yet created (nothing to remove), or the file. Blocking signals
 * around mkstemp is not enough: it holds for the calling thread only, and a
 * signal sent to the process is then handled by another one (an OpenMP
 * worker), which used to find the slot not yet filled and left the file. */
static int slot_take(const char *tmpl)
{
    if (strlen(tmpl) >= SLOT_PATH)
        return -1;
    for (int i = 0; i < SLOTS; i++) {
        int free_ = 0;
        if (atomic_compare_exchange_strong(&g_state[i], &free_, 1)) {
            memcpy(g_path[i], tmpl, strlen(tmpl) + 1);
            atomic_store(&g_state[i], 2);
            return i;
        }
    }
    return -1; /* more than SLOTS files at once: this one is simply not registered */
}

static char *slot_name(int i) { return g_path[i]; }

static void slot_release(int i)
{
    if (i >= 0)
        atomic_store(&g_state[i], 0);
}

void nc_remove_temp_files(void)
{
    for (int i = 0; i < SLOTS; i++)
        if (atomic_load(&g_state[i]) == 2)
            unlink(g_path[i]);
}

/* ---- one file ---- */

const char *nc_file_kind(mode_t mode)
{
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

/* The rename replaces whatever `path` names: a device, a FIFO, the link
 * rather than its target. Only a regular file, or nothing, may be there. */
static nc_status check_destination(const char *path)
{
    struct stat sb;
    if (lstat(path, &sb) != 0 || S_ISREG(sb.st_mode))
        return NC_OK;
    return nc_errorf(NC_ERR_IO, "%s: is %s; neuroc writes its outputs as regular files and replaces only "
                     "those (remove it or choose another name)", path, nc_file_kind(sb.st_mode));
}

nc_status nc_atomic_open(const char *path, nc_atomic_file *af)
{
    af->tmp = NULL;
    af->fd = -1;
    af->slot = -1;
    if (!*path)
        return nc_errorf(NC_ERR_INVALID_ARG, "an empty file name was given as an output");
    nc_status dst = check_destination(path);
    if (dst != NC_OK)
        return dst;
    size_t plen = strlen(path);
    char *tmp = nc_malloc(plen + sizeof NC_TMP_SUFFIX "XXXXXX");
    if (!tmp)
        return nc_errorf(NC_ERR_NOMEM, "%s: out of memory", path);
    memcpy(tmp, path, plen);
    memcpy(tmp + plen, NC_TMP_SUFFIX "XXXXXX", sizeof NC_TMP_SUFFIX "XXXXXX");
    /* The slot holds the name while mkstemp makes it (slot_take), and this
     * thread's signals wait meanwhile, so that a handler calling
     * nc_remove_temp_files never misses a file that exists. */
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    af->slot = slot_take(tmp);
    int fd = mkstemp(af->slot >= 0 ? slot_name(af->slot) : tmp), err = errno;
    if (af->slot >= 0)
        memcpy(tmp, slot_name(af->slot), strlen(tmp) + 1);
    if (fd < 0) {
        slot_release(af->slot);
        af->slot = -1;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        nc_status st = nc_errorf(NC_ERR_IO, "%s: cannot create a temporary file next to it: %s", path,
                                 strerror(err));
        nc_free(tmp);
        return st;
    }
    /* mkstemp makes the file 0600; the commit gives it an existing file's
     * mode, else the usual 0644 (less the umask's bits, as open() would):
     * not before, as a writer that reopens it by name (HDF5) could not
     * write a read-only file's replacement. */
    struct stat sb;
    if (stat(path, &sb) == 0) {
        af->mode = sb.st_mode & 07777;
    } else {
        mode_t um = umask(0);
        umask(um);
        af->mode = 0644 & ~um;
    }
    af->tmp = tmp;
    af->fd = fd;
    return NC_OK;
}

void nc_atomic_abort(nc_atomic_file *af)
{
    if (af->fd >= 0)
        close(af->fd);
    if (af->tmp)
        unlink(af->tmp);
    slot_release(af->slot);
    nc_free(af->tmp);
    af->tmp = NULL;
    af->fd = -1;
    af->slot = -1;
}

nc_status nc_atomic_commit(nc_atomic_file *af, const char *path)
{
    int fd = af->fd >= 0 ? af->fd : open(af->tmp, O_RDONLY);
    int ok = fd >= 0 && fchmod(fd, af->mode) == 0 && fsync(fd) == 0;
    int err = errno;
    if (fd >= 0 && close(fd) != 0 && ok) {
        ok = 0;
        err = errno;
    }
    af->fd = -1;
    /* checked again: the destination may have been replaced since the open */
    nc_status dst = ok ? check_destination(path) : NC_OK;
    if (dst != NC_OK) {
        nc_atomic_abort(af);
        return dst;
    }
    if (ok && rename(af->tmp, path) != 0) {
        ok = 0;
        err = errno;
    }
    if (!ok) {
        nc_atomic_abort(af);
        return nc_errorf(NC_ERR_IO, "%s: cannot write: %s", path, strerror(err));
    }
    slot_release(af->slot);
    nc_free(af->tmp);
    af->tmp = NULL;
    af->slot = -1;
    return NC_OK;
}

nc_status nc_output_check(const char *path)
{
    if (!path)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_output_check: path is NULL");
    nc_atomic_file af;
    nc_status st = nc_atomic_open(path, &af);
    if (st == NC_OK)
        nc_atomic_abort(&af);
    return st;
}

int nc_write_all(int fd, const void *buf, size_t n)
{
    const unsigned char *p = buf;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = 0;
            return 0;
        }
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

nc_status nc_write_file_atomic(const char *path, const void *bytes, size_t len)
{
    const char *data = bytes;
    if (!path || (len && !data))
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_write_file_atomic: NULL argument");
    nc_atomic_file af;
    nc_status st = nc_atomic_open(path, &af);
    if (st != NC_OK)
        return st;
    if (!nc_write_all(af.fd, data, len)) {
        st = nc_errorf(NC_ERR_IO, "%s: cannot write: %s", path, errno ? strerror(errno) : "no space");
        nc_atomic_abort(&af);
        return st;
    }
    return nc_atomic_commit(&af, path);
}
