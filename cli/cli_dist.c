/* The neuroc program under mpirun (cli.h): MPI start-up and shut-down, the
 * rank that prints, agreement on failures and the model-file check. The
 * program links no MPI library: under an MPI launcher it loads its MPI
 * module (cli/mpi/, neuroc_mpi_module.so) and makes every MPI call through
 * it, so a plain run never loads MPI. The library gets its own duplicate of
 * MPI_COMM_WORLD (nc_dist_from_mpi_comm, in the module), so these
 * collectives never mix with its traffic. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifdef NEUROC_HAVE_MPI
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#include "mpi/cli_mpi.h"

static const cli_mpi_api *g_mpi;
static int g_rank, g_size = 1;
static nc_dist *g_dist;
static char g_note[48];

/* Set by the launchers that start ranks: Open MPI (4: OMPI_*, 5: PMIX_*),
 * MPICH/Hydra and Slurm's PMI. A plain start stays one process without
 * touching MPI (a singleton MPI_Init can be slow or fail in containers). */
static const char *launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"};
    static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i])) {
            const char *r = getenv(ranks[i]);
            return r && *r ? r : "?";
        }
    return NULL;
}

/* dlopens `path`; on failure keeps dlerror's message in why. RTLD_GLOBAL
 * because Open MPI dlopens its own components (mca_*.so), and before 3.0
 * (open-mpi/ompi#3705) they were not linked against libmpi/libopen-pal but
 * expected those symbols in the global scope: with libmpi loaded
 * RTLD_LOCAL, MPI_Init fails to open them (builds of other MPIs and
 * plugins of their own can do the same; mpi4py does this too). Open MPI
 * 4.1 works either way. RTLD_NOW: a module that does not fit this program
 * fails here, with a message, not in the middle of a run. */
static void *open_module(const char *path, char *why, size_t n)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, n, "%s", e ? e : path);
    }
    return h;
}

/* NEUROC_MPI_MODULE (a full path) when set; else next to the program (the
 * build tree), then <bin>/../<libdir>/neuroc (an install moved to another
 * prefix, as `cmake --install --prefix` makes), then the configured
 * install folder. */
static void *find_module(char *why, size_t n)
{
    const char *env = getenv("NEUROC_MPI_MODULE");
    if (env && *env)
        return open_module(env, why, n);
    char exe[PATH_MAX], path[PATH_MAX + 64];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(path, sizeof path, "%s/%s", exe, NEUROC_MPI_MODULE_NAME);
        if (access(path, F_OK) == 0)
            return open_module(path, why, n);
        snprintf(path, sizeof path, "%s/../%s/neuroc/%s", exe, NEUROC_MPI_MODULE_LIBDIR, NEUROC_MPI_MODULE_NAME);
        if (access(path, F_OK) == 0)
            return open_module(path, why, n);
    }
    snprintf(path, sizeof path, "%s/%s", NEUROC_MPI_MODULE_DIR, NEUROC_MPI_MODULE_NAME);
    if (access(path, F_OK) == 0)
        return open_module(path, why, n);
    snprintf(why, n, "%s is neither next to the program nor in %s (NEUROC_MPI_MODULE may name it)",
             NEUROC_MPI_MODULE_NAME, NEUROC_MPI_MODULE_DIR);
    return NULL;
}

/* The module's table, or NULL with the reason in why. */
static const cli_mpi_api *load_module(char *why, size_t n)
{
    void *h = find_module(why, n);
    if (!h)
        return NULL;
    /* from void * to a function pointer through memcpy, as ISO C has no cast */
    void *sym = dlsym(h, CLI_MPI_ENTRY);
    cli_mpi_entry_fn entry = NULL;
    if (sym)
        memcpy(&entry, &sym, sizeof entry);
    const cli_mpi_api *api = entry ? entry() : NULL;
    if (!api || api->abi != CLI_MPI_ABI) {
        snprintf(why, n, "the MPI module is not this program's (no %s of version %d)", CLI_MPI_ENTRY, CLI_MPI_ABI);
        dlclose(h);
        return NULL;
    }
    return api; /* loaded until the process ends: MPI cannot be unloaded */
}

void cli_dist_init(int *argc, char ***argv)
{
    const char *rank = launcher_rank();
    if (!rank)
        return;
    char why[PATH_MAX + 256];
    g_mpi = load_module(why, sizeof why);
    if (!g_mpi) {
        /* every rank fails alike, before any collective: no rank waits */
        fprintf(stderr, "neuroc: rank %s: started by an MPI launcher, but cannot load the MPI module: %s\n", rank,
                why);
        exit(CLI_FAIL);
    }
    if (g_mpi->init(argc, argv, &g_rank, &g_size) != 0) {
        fprintf(stderr, "neuroc: MPI_Init failed; running as one process\n");
        g_mpi = NULL;
        g_rank = 0;
        g_size = 1;
        return;
    }
    if (g_size > 1) {
        nc_status st = g_mpi->world(&g_dist);
        if (st != NC_OK) {
            cli_fail(st);
            g_mpi->abort_job(CLI_FAIL);
        }
        snprintf(g_note, sizeof g_note, " (%d ranks)", g_size);
    }
    if (g_rank != 0 && !freopen("/dev/null", "w", stdout))
        fprintf(stderr, "neuroc: rank %d: cannot silence stdout\n", g_rank);
}

int cli_dist_finish(int rc)
{
    if (!g_mpi)
        return rc;
    if (g_size > 1) {
        /* Everyone reports its exit code. A rank that succeeded waits as
         * long as the others work; one that failed waits 10 s: if the
         * others do not arrive they are inside work that needs it, so the
         * job is aborted rather than left hanging. */
        int all = 0, r = g_mpi->max_exit(rc, rc == 0 ? -1 : 10000, &all);
        if (r < 0)
            g_mpi->abort_job(rc ? rc : CLI_FAIL);
        if (r > 0) {
            fprintf(stderr, "neuroc: rank %d of %d failed (above) while the others were still working; ending "
                    "the job\n", g_rank, g_size);
            fflush(stderr);
            g_mpi->abort_job(rc);
        }
        if (rc == 0 && all != 0)
            rc = all;
    }
    nc_dist_free(g_dist);
    g_dist = NULL;
    fflush(stdout);
    g_mpi->finalize();
    return rc;
}

const nc_dist *cli_dist(void) { return g_dist; }
int cli_is_root(void) { return g_rank == 0; }
const char *cli_dist_note(void) { return g_note; }

int cli_dist_agree(int rc)
{
    if (g_size <= 1)
        return rc;
    int *all = calloc((size_t)g_size, sizeof *all);
    if (!all || g_mpi->allgather_int(&rc, 1, all) != 0) {
        free(all);
        fprintf(stderr, "neuroc: rank %d: MPI_Allgather failed; ending the job\n", g_rank);
        g_mpi->abort_job(CLI_FAIL);
        return CLI_FAIL;
    }
    int first = -1;
    for (int r = 0; r < g_size && first < 0; r++)
        if (all[r] != CLI_OK)
            first = r;
    if (first >= 0 && rc == CLI_OK) {
        if (g_rank == 0)
            fprintf(stderr, "neuroc: rank %d of %d failed (its message is above); stopping every rank\n", first,
                    g_size);
        rc = all[first];
    }
    free(all);
    return rc;
}

int cli_dist_same_file(const char *what, const char *path)
{
    if (g_size <= 1 || !path)
        return CLI_OK;
    int ok;
    unsigned long long mine[2] = {cli_file_fnv1a(path, &ok), 0}, *all = calloc((size_t)g_size * 2, sizeof *all);
    mine[1] = (unsigned long long)ok;
    if (!all || g_mpi->allgather_u64(mine, 2, all) != 0) {
        free(all);
        fprintf(stderr, "neuroc: rank %d: MPI_Allgather failed; ending the job\n", g_rank);
        g_mpi->abort_job(CLI_FAIL);
        return CLI_FAIL;
    }
    int rc = CLI_OK;
    for (int r = 0; r < g_size && rc == CLI_OK; r++) {
        if (!all[2 * r + 1]) {
            if (g_rank == 0)
                cli_failf(NC_ERR_IO, "rank %d of %d cannot read the %s %s", r, g_size, what, path);
            rc = CLI_FAIL;
        } else if (all[2 * r] != all[0]) {
            if (g_rank == 0)
                cli_failf(NC_ERR_INVALID_ARG,
                          "the %s %s differs between ranks: rank %d's file (FNV-1a %016llx) is not rank 0's "
                          "(%016llx); every rank must read the same %s",
                          what, path, r, all[2 * r], all[0], what);
            rc = CLI_FAIL;
        }
    }
    free(all);
    return rc;
}

#else /* one process */

void cli_dist_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
}
int cli_dist_finish(int rc) { return rc; }
const nc_dist *cli_dist(void) { return NULL; }
int cli_is_root(void) { return 1; }
int cli_dist_agree(int rc) { return rc; }
int cli_dist_same_file(const char *what, const char *path)
{
    (void)what;
    (void)path;
    return CLI_OK;
}
const char *cli_dist_note(void) { return ""; }

#endif
