/* The backends neuroc knows, as data: each is linked into the core, or held
 * by a module loaded on first use (module.h), or not built with the reason
 * why. nc_backend_find (sessions) and nc_backend_count/nc_backend_get_info
 * (the public listing, neuroc --version) read this one table. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "module.h"
#include "snn/base/error.h"

typedef struct nc_backend_entry {
    const char *name;
    const nc_backend *builtin; /* linked into the core, or NULL */
    const char *module;        /* else the module holding it (module.h), or NULL when not built */
    const char *absent;        /* why it cannot run when neither */
} nc_backend_entry;

#define NC_NO_CUDA "neuroc was built without CUDA (no nvcc found, or -DNEUROC_CUDA=OFF)"

static const nc_backend_entry g_entries[] = {
    {"cpu", &nc_backend_cpu_ref, NULL, NULL},
    {"cpu-fast", &nc_backend_cpu_fast, NULL, NULL},
#ifdef NEUROC_HAVE_CUDA
    {"cuda", NULL, "libneuroc_cuda.so", NULL},
#else
    {"cuda", NULL, NULL, NC_NO_CUDA},
#endif
};
#define NC_N_BACKENDS ((int)(sizeof g_entries / sizeof g_entries[0]))

/* What was found out about each entry, once per process (under g_lock). */
typedef struct nc_backend_state {
    int tried;                      /* the module load was tried */
    const nc_backend_module *mod;   /* loaded, or NULL with why */
    int probed;                     /* available and reason are known */
    int available;
    char why[512];                  /* why the module did not load */
    char reason[512];               /* why the backend cannot run here */
} nc_backend_state;

static nc_backend_state g_state[NC_N_BACKENDS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static int find_entry(const char *name)
{
    for (int i = 0; name && i < NC_N_BACKENDS; i++)
        if (strcmp(g_entries[i].name, name) == 0)
            return i;
    return -1;
}

/* Entry i's module, loaded on first use; NULL with the reason in why. Under g_lock. */
static const nc_backend_module *module_locked(int i, const char **why)
{
    const nc_backend_entry *e = &g_entries[i];
    nc_backend_state *S = &g_state[i];
    if (!e->module) {
        *why = e->absent ? e->absent : "it is not a module";
        return NULL;
    }
    if (!S->tried) {
        S->tried = 1;
        if (nc_backend_module_load(e->module, &S->mod) != NC_OK)
            snprintf(S->why, sizeof S->why, "%s", nc_last_error());
    }
    *why = S->why;
    return S->mod;
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
    const char *why;
    pthread_mutex_lock(&g_lock);
    const nc_backend_module *m = module_locked(i, &why);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", why);
    pthread_mutex_unlock(&g_lock);
    if (!m)
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "backend '%s' is unavailable: %s (use --backend cpu or "
                         "cpu-fast)", name, msg);
    *out = m->backend;
    return NC_OK;
}

nc_status nc_backend_module_of(const char *name, const nc_backend_module **out)
{
    *out = NULL;
    int i = find_entry(name);
    if (i < 0)
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "unknown backend '%s'", name ? name : "(null)");
    const char *why;
    pthread_mutex_lock(&g_lock);
    const nc_backend_module *m = module_locked(i, &why);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", why);
    pthread_mutex_unlock(&g_lock);
    if (!m)
        return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "%s", msg);
    *out = m;
    return NC_OK;
}

int nc_backend_count(void) { return NC_N_BACKENDS; }

nc_status nc_backend_get_info(int i, nc_backend_info *out)
{
    if (!out)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_backend_get_info: out is NULL");
    memset(out, 0, sizeof *out);
    if (i < 0 || i >= NC_N_BACKENDS)
        return nc_errorf(NC_ERR_INVALID_ARG, "nc_backend_get_info: no backend %d (there are %d)", i, NC_N_BACKENDS);
    nc_backend_state *S = &g_state[i];
    pthread_mutex_lock(&g_lock);
    if (!S->probed) {
        const char *why = NULL;
        const nc_backend_module *m = g_entries[i].builtin ? NULL : module_locked(i, &why);
        int devices = 0;
        S->available = 1;
        if (!g_entries[i].builtin && !m) {
            S->available = 0;
            snprintf(S->reason, sizeof S->reason, "%s", why);
        } else if (m && m->probe && m->probe(&devices) != NC_OK) {
            S->available = 0;
            snprintf(S->reason, sizeof S->reason, "%s", nc_last_error());
        }
        S->probed = 1;
    }
    out->name = g_entries[i].name;
    out->available = S->available;
    out->reason = S->available ? "" : S->reason;
    pthread_mutex_unlock(&g_lock);
    return NC_OK;
}
