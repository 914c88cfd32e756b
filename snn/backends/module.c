/* Finding, opening and initialising backend modules (module.h). */
#define _GNU_SOURCE /* dladdr1, RTLD_DL_LINKMAP */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "module.h"
#include "snn/base/alloc.h"
#include "snn/base/dist.h"
#include "snn/base/error.h"

#ifndef NEUROC_VERSION
#define NEUROC_VERSION "0.0.0"
#endif
/* Set by CMake: the installed modules' folder, absolute, and the same
 * relative to the installed program's folder (bin → lib/neuroc). */
#ifndef NC_MODULE_INSTALL_DIR
#define NC_MODULE_INSTALL_DIR ""
#endif
#ifndef NC_MODULE_DIR_FROM_BIN
#define NC_MODULE_DIR_FROM_BIN ""
#endif

#define NC_MAX_DIRS 5

/* ---- the host table: the core's stateful services, and the IR helpers */

static nc_status host_verrorf(nc_status st, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return nc_errorf(st, "%s", msg);
}

static void host_vlog(nc_log_level level, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    nc_log(level, "%s", msg);
}

static const nc_host_api g_host = {
    .abi = NC_BACKEND_ABI,
    .size = sizeof(nc_host_api),
    .version = NEUROC_VERSION,
    .verrorf = host_verrorf,
    .last_error = nc_last_error,
    .vlog = host_vlog,
    .malloc = nc_malloc,
    .calloc = nc_calloc,
    .realloc = nc_realloc,
    .free = nc_free,
    .device_for_process = nc_dist_device_for_process,
    .snn_kind_name = nc_snn_kind_name,
    .snn_find_layer = nc_snn_find_layer,
    .snn_layer_size = nc_snn_layer_size,
    .snn_output_id = nc_snn_output_id,
    .snn_param = nc_snn_param,
    .snn_kind = nc_snn_kind,
    .snn_param_expand = nc_snn_param_expand,
    .snn_spike_values = nc_snn_spike_values,
    .snn_v_inits = nc_snn_v_inits,
    .snn_mark_static = nc_snn_mark_static,
    .snn_mark_signed = nc_snn_mark_signed,
    .snn_nl_matmul_dims = nc_nl_matmul_dims,
    .snn_mark_macs = nc_snn_mark_macs,
    .snn_event_fanout = nc_snn_event_fanout,
    .snn_spike_units = nc_snn_spike_units,
};

/* ---- where modules are looked for */

/* The folder of the object this code is linked into (libneuroc.so, or the
 * program that links libneuroc.a) into dir; 0 if unknown. */
static int own_folder(char *dir, size_t len)
{
    Dl_info info;
    struct link_map *map = NULL;
    char path[PATH_MAX];
    if (!dladdr1((void *)&nc_backend_module_load, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
        return 0;
    if (map->l_name && map->l_name[0]) {
        if (!realpath(map->l_name, path))
            return 0;
    } else { /* the main program: its name as run may be relative or a PATH lookup */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0)
            return 0;
        path[n] = '\0';
    }
    char *slash = strrchr(path, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    snprintf(dir, len, "%s", path[0] ? path : "/");
    return 1;
}

static void add_dir(char dirs[][PATH_MAX], int *n, const char *d1, const char *d2)
{
    char d[PATH_MAX];
    if (!d1[0] || *n >= NC_MAX_DIRS)
        return;
    if (snprintf(d, sizeof d, "%s%s%s", d1, d2[0] ? "/" : "", d2) >= (int)sizeof d)
        return;
    for (int i = 0; i < *n; i++)
        if (strcmp(dirs[i], d) == 0)
            return;
    memcpy(dirs[(*n)++], d, strlen(d) + 1);
}

static int search_dirs(char dirs[][PATH_MAX])
{
    int n = 0;
    const char *env = getenv("NEUROC_BACKEND_PATH");
    if (env && env[0]) { /* overrides: only there */
        add_dir(dirs, &n, env, "");
        return n;
    }
    char own[PATH_MAX];
    if (own_folder(own, sizeof own)) {
        add_dir(dirs, &n, own, "");       /* the build tree */
        add_dir(dirs, &n, own, "neuroc"); /* an installed libneuroc.so: lib/neuroc */
        add_dir(dirs, &n, own, NC_MODULE_DIR_FROM_BIN); /* an installed program: bin/../lib/neuroc */
    }
    add_dir(dirs, &n, NC_MODULE_INSTALL_DIR, "");
    return n;
}

/* ---- loading */

nc_status nc_backend_module_load(const char *file, const nc_backend_module **out)
{
    *out = NULL;
    char dirs[NC_MAX_DIRS][PATH_MAX], path[PATH_MAX + 256], tried[768] = "";
    int n = search_dirs(dirs);
    for (int i = 0; i < n; i++) {
        size_t used = strlen(tried);
        if (snprintf(tried + used, sizeof tried - used, "%s%s", i ? ", " : "", dirs[i]) >= (int)(sizeof tried - used))
            snprintf(tried + sizeof tried - 4, 4, "..."); /* the message shows what fits */
        if (snprintf(path, sizeof path, "%s/%s", dirs[i], file) >= (int)sizeof path || access(path, F_OK) != 0)
            continue;
        /* RTLD_LOCAL: the module's symbols stay its own; it exports only its entry point */
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            size_t pl = strlen(path);
            if (e && strncmp(e, path, pl) == 0 && strncmp(e + pl, ": ", 2) == 0)
                e += pl + 2; /* glibc's message starts with the path */
            return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "cannot load %s: %s", path, e ? e : "dlopen failed");
        }
        nc_backend_module_init_fn init;
        *(void **)&init = dlsym(h, NC_BACKEND_MODULE_INIT); /* POSIX's way to a function pointer */
        if (!init) {
            dlclose(h);
            return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "%s is not a neuroc backend module (no %s)", path,
                             NC_BACKEND_MODULE_INIT);
        }
        const nc_backend_module *m = init(&g_host, NC_BACKEND_ABI);
        if (!m || m->abi != NC_BACKEND_ABI || !m->version || strcmp(m->version, NEUROC_VERSION) != 0 ||
            (!m->backend && !m->probe)) {
            dlclose(h);
            return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "%s was built from other sources than this neuroc %s "
                             "(module ABI %u, version %s; the core's ABI %u): reinstall it with the library",
                             path, NEUROC_VERSION, m ? m->abi : 0u, m && m->version ? m->version : "?",
                             NC_BACKEND_ABI);
        }
        *out = m; /* never closed: device libraries do not like being unloaded */
        return NC_OK;
    }
    return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "module %s not found (looked in %s; set NEUROC_BACKEND_PATH "
                     "to the folder that holds it)", file, n ? tried : "no folder");
}
