/* The neuroc program under mpirun (cli.h): MPI start-up and shut-down, the
 * rank that prints, agreement on failures and the model-file check. The
 * library gets its own duplicate of MPI_COMM_WORLD (nc_dist_from_mpi_comm),
 * so these collectives never mix with its traffic. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#ifdef NEUROC_HAVE_MPI
#include "neuroc/mpi.h"

static int g_on, g_rank, g_size = 1;
static nc_dist *g_dist;
static char g_note[48];

/* Set by the launchers that start ranks: Open MPI (4: OMPI_*, 5: PMIX_*),
 * MPICH/Hydra and Slurm's PMI. A plain start stays one process without
 * touching MPI (a singleton MPI_Init can be slow or fail in containers). */
static int launched_by_mpi(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (getenv(vars[i]))
            return 1;
    return 0;
}

void cli_dist_init(int *argc, char ***argv)
{
    if (!launched_by_mpi())
        return;
    if (MPI_Init(argc, argv) != MPI_SUCCESS) {
        fprintf(stderr, "neuroc: MPI_Init failed; running as one process\n");
        return;
    }
    g_on = 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (g_size > 1) {
        nc_status st = nc_dist_from_mpi_comm(MPI_COMM_WORLD, &g_dist);
        if (st != NC_OK) {
            cli_fail(st);
            MPI_Abort(MPI_COMM_WORLD, CLI_FAIL);
        }
        snprintf(g_note, sizeof g_note, " (%d ranks)", g_size);
    }
    if (g_rank != 0 && !freopen("/dev/null", "w", stdout))
        fprintf(stderr, "neuroc: rank %d: cannot silence stdout\n", g_rank);
}

int cli_dist_finish(int rc)
{
    if (!g_on)
        return rc;
    if (g_size > 1) {
        /* Everyone reports its exit code. A rank that succeeded waits as
         * long as the others work; one that failed waits 10 s: if the
         * others do not arrive they are inside work that needs it, so the
         * job is aborted rather than left hanging. */
        int mine = rc, all = 0, done = 0;
        MPI_Request req;
        if (MPI_Iallreduce(&mine, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req) != MPI_SUCCESS) {
            MPI_Abort(MPI_COMM_WORLD, rc ? rc : CLI_FAIL);
        } else if (rc == 0) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            done = 1;
        } else {
            struct timespec nap = {0, 10 * 1000 * 1000};
            for (int k = 0; k < 1000 && !done; k++) {
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
                if (!done)
                    nanosleep(&nap, NULL);
            }
        }
        if (!done) {
            fprintf(stderr, "neuroc: rank %d of %d failed (above) while the others were still working; ending "
                    "the job\n", g_rank, g_size);
            fflush(stderr);
            MPI_Abort(MPI_COMM_WORLD, rc);
        }
        if (rc == 0 && all != 0)
            rc = all;
    }
    nc_dist_free(g_dist);
    g_dist = NULL;
    fflush(stdout);
    MPI_Finalize();
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
    if (!all || MPI_Allgather(&rc, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(all);
        fprintf(stderr, "neuroc: rank %d: MPI_Allgather failed; ending the job\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, CLI_FAIL);
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
    if (!all || MPI_Allgather(mine, 2, MPI_UNSIGNED_LONG_LONG, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD) !=
                    MPI_SUCCESS) {
        free(all);
        fprintf(stderr, "neuroc: rank %d: MPI_Allgather failed; ending the job\n", g_rank);
        MPI_Abort(MPI_COMM_WORLD, CLI_FAIL);
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
