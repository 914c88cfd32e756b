/* HDF5 pre-flight reads in a child process (isolate.h). */
#define _POSIX_C_SOURCE 200809L

#include "isolate.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "atomic_file.h"
#include "error.h"

#if defined(__SANITIZE_ADDRESS__)
#define NC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NC_ASAN 1
#endif
#endif

static int g_in_child; /* the child reads for real: no second pre-flight */

typedef struct child_report {
    nc_status st;
    char msg[1024];
} child_report;

static void child(int fd, const nc_limits *L, nc_status (*fn)(void *), void *arg)
{
    g_in_child = 1;
#ifndef NC_ASAN /* the sanitizer reserves terabytes of address space up front */
    rlim_t cap = (rlim_t)L->max_model_bytes + ((rlim_t)2 << 30);
    struct rlimit rl = {cap, cap};
    setrlimit(RLIMIT_AS, &rl);
#endif
    signal(SIGALRM, SIG_DFL);
    alarm((unsigned)L->hdf5_timeout_s);
    child_report r;
    memset(&r, 0, sizeof r);
    r.st = fn(arg);
    if (r.st != NC_OK)
        strncpy(r.msg, nc_last_error(), sizeof r.msg - 1);
    nc_write_all(fd, &r, sizeof r);
    _exit(0); /* no atexit handlers, no stdio flush: the parent owns those */
}

nc_status nc_isolated_preflight(const char *path, nc_status (*fn)(void *arg), void *arg)
{
    nc_limits L = nc_limits_now();
    if (L.isolate_hdf5 <= 0 || g_in_child)
        return NC_OK;
    int fds[2];
    if (pipe(fds) != 0)
        return nc_errorf(NC_ERR_IO, "%s: cannot read it in a child process: pipe: %s", path, strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fds[0]);
        close(fds[1]);
        return nc_errorf(NC_ERR_IO, "%s: cannot read it in a child process: fork: %s", path, strerror(e));
    }
    if (pid == 0) {
        close(fds[0]);
        child(fds[1], &L, fn, arg);
    }
    close(fds[1]);
    child_report r;
    size_t got = 0;
    while (got < sizeof r) {
        ssize_t n = read(fds[0], (char *)&r + got, sizeof r - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(fds[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    if (got == sizeof r && WIFEXITED(ws) && WEXITSTATUS(ws) == 0) {
        r.msg[sizeof r.msg - 1] = 0;
        return r.st == NC_OK ? NC_OK : nc_errorf(r.st, "%s", r.msg);
    }
    if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGALRM)
        return nc_errorf(NC_ERR_PARSE, "%s: reading it did not finish within %d s (HDF5 loops on some corrupt "
                         "files); the file is corrupt", path, L.hdf5_timeout_s);
    if (WIFSIGNALED(ws))
        return nc_errorf(NC_ERR_PARSE, "%s: reading it crashed the HDF5 library (signal %d, %s) in a child "
                         "process; the file is corrupt", path, WTERMSIG(ws), strsignal(WTERMSIG(ws)));
    return nc_errorf(NC_ERR_PARSE, "%s: reading it failed in a child process (exit status %d; out of memory or "
                     "a memory error in HDF5); the file is corrupt", path, WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
}
