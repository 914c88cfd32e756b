/* The backends neuroc knows, as data: each is linked into the core, or held
 * by a module loaded on first use (module.h), or not built with the reason
 * why. nc_backend_find (sessions), nc_backend_probe (nc_cuda_device_count)
 * and nc_backend_count/nc_backend_get_info (the public listing, neuroc
 * --version) read this one table. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"
#include "snn/backends/module.h"
#include "snn/base/error.h"

typedef struct nc_backend_entry {
    const char *name;
    const nc_backend *builtin; /* linked into the core, or NULL */
    const char *module;        /* else the module holding it (module.h), or NULL when not built */
    const char *probe_module;  /* optional: a small module that only says whether it can run here */
    const char *absent;        /* why it cannot run when not built */
} nc_backend_entry;

#define NC_NO_CUDA "neuroc was built without CUDA (no nvcc found, or -DNEUROC_CUDA=OFF)"

static const nc_backend_entry g_entries[] = {
    {"cpu", &nc_backend_cpu_ref, NULL, NULL, NULL},
    {"cpu-fast", &nc_backend_cpu_fast, NULL, NULL, NULL},
#ifdef NEUROC_HAVE_CUDA
    {"cuda", NULL, "libneuroc_cuda.so", "libneuroc_cuda_probe.so", NULL},
#else
    {"cuda", NULL, NULL, NULL, NC_NO_CUDA},
#endif
};
#define NC_N_BACKENDS ((int)(sizeof g_entries / sizeof g_entries[0]))

/* A module's load, tried once per process (under g_load_lock). */
typedef struct nc_module_state {
    int tried;
    const nc_backend_module *mod; /* loaded, or NULL with why */
    char why[512];
} nc_module_state;

/* What nc_backend_get_info found, once per process (under g_info_lock). */
typedef struct nc_info_state {
    int probed;
    int available;
    char reason[512];
} nc_info_state;

static nc_module_state g_mod[NC_N_BACKENDS][2]; /* [entry][0: module, 1: probe module] */
static nc_info_state g_info[NC_N_BACKENDS];
static pthread_mutex_t g_load_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t g_info_lock = PTHREAD_MUTEX_INITIALIZER;

static int find_entry(const char *name)
{
    for (int i = 0; name && i < NC_N_BACKENDS; i++)
        if (strcmp(g_entries[i].name, name) == 0)
            return i;
    return -1;
}

/* Entry i's module (probe 0) or probe module (probe 1), loaded on first
 * use: NC_OK, or NC_ERR_BACKEND_UNAVAILABLE with the bare reason. */
static nc_status load(int i, int probe, const nc_backend_module **out)
{
    const nc_backend_entry *e = &g_entries[i];
    const char *file = probe ? e->probe_module : e->module;
    *out = NULL;
    if (!file)
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "%s", e->absent ? e->absent : "not a module");
    nc_module_state *S = &g_mod[i][probe];
    char why[512];
    pthread_mutex_lock(&g_load_lock);
    if (!S->tried) {
        S->tried = 1;
        if (nc_backend_module_load(file, &S->mod) != NC_OK)
            snprintf(S->why, sizeof S->why, "%s", nc_last_error());
    }
    *out = S->mod;
    snprintf(why, sizeof why, "%s", S->why);
    pthread_mutex_unlock(&g_load_lock);
    return *out ? NC_OK : nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "%s", why);
}

static char g_names[128];

static void fill_names(void)
{
    for (int i = 0; i < NC_N_BACKENDS; i++) {
        size_t used = strlen(g_names);
        snprintf(g_names + used, sizeof g_names - used, "%s%s", i ? ", " : "", g_entries[i].name);
    }
}

const char *nc_backend_names(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, fill_names);
    return g_names;
}

nc_status nc_backend_find(const char *name, const nc_backend **out)
{
    *out = NULL;
    int i = find_entry(name);
    if (i < 0)
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "unknown backend '%s' (known: %s)", name ? name : "(null)",
                         nc_backend_names());
    if (g_entries[i].builtin) {
        *out = g_entries[i].builtin;
        return NC_OK;
    }
    const nc_backend_module *m;
    nc_status st = load(i, 0, &m);
    if (st == NC_OK && !m->backend)
        st = nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "module %s holds no backend", g_entries[i].module);
    if (st != NC_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", nc_last_error());
        return nc_errorf(st, "backend '%s' is unavailable: %s (use --backend cpu or cpu-fast)", name, why);
    }
    *out = m->backend;
    return NC_OK;
}

nc_status nc_backend_probe(const char *name, int *devices)
{
    *devices = 0;
    int i = find_entry(name);
    if (i < 0)
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "unknown backend '%s'", name ? name : "(null)");
    if (g_entries[i].builtin) {
        *devices = 1;
        return NC_OK;
    }
    const nc_backend_module *m;
    nc_status st = load(i, g_entries[i].probe_module != NULL, &m);
    if (st != NC_OK)
        return st;
    if (!m->probe) { /* a module without a probe runs wherever it loads */
        *devices = 1;
        return NC_OK;
    }
    return m->probe(devices);
}

int nc_backend_count(void) { return NC_N_BACKENDS; }

nc_status nc_backend_get_info(int i, nc_backend_info *out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_backend_get_info: out is NULL");
    memset(out, 0, sizeof *out);
    if (i < 0 || i >= NC_N_BACKENDS)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_backend_get_info: no backend %d (there are %d)", i, NC_N_BACKENDS);
    nc_info_state *S = &g_info[i];
    pthread_mutex_lock(&g_info_lock);
    if (!S->probed) {
        int devices = 0;
        S->available = nc_backend_probe(g_entries[i].name, &devices) == NC_OK;
        if (!S->available)
            snprintf(S->reason, sizeof S->reason, "%s", nc_last_error());
        S->probed = 1;
    }
    out->name = g_entries[i].name;
    out->available = S->available;
    out->reason = S->available ? "" : S->reason;
    pthread_mutex_unlock(&g_info_lock);
    return NC_OK;
}
