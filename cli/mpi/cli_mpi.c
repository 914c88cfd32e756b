/* The neuroc program's MPI calls (cli_mpi.h), in a module the program loads
 * only under mpirun; with it goes nc_dist_from_mpi_comm (snn/base/mpi/
 * dist_mpi.c, compiled in too). Its neuroc symbols (nc_dist_create, ...)
 * come from the program, which exports its public ones: there is one copy
 * of the library in the process. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <mpi.h>
#include <stdlib.h>
#include <time.h>

#include "cli_mpi.h"
#include "neuroc/mpi.h"

static int m_init(int *argc, char ***argv, int *rank, int *size)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return -1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

static nc_status m_world(nc_dist **out) { return nc_dist_from_mpi_comm(MPI_COMM_WORLD, out); }

static int m_max_exit(int rc, int wait_ms, int *all)
{
    MPI_Request req;
    int done = 0;
    if (MPI_Iallreduce(&rc, all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return -1;
    if (wait_ms < 0)
        return MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -1;
    struct timespec nap = {0, 10 * 1000 * 1000};
    for (int k = 0; k <= wait_ms / 10 && !done; k++) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return -1;
        if (!done)
            nanosleep(&nap, NULL);
    }
    return done ? 0 : 1;
}

static int m_allgather_int(const int *mine, int n, int *all)
{
    return MPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static int m_allgather_u64(const unsigned long long *mine, int n, unsigned long long *all)
{
    return MPI_Allgather(mine, n, MPI_UNSIGNED_LONG_LONG, all, n, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD) ==
                   MPI_SUCCESS
               ? 0
               : -1;
}

static void m_abort_job(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
    exit(code); /* MPI_Abort does not return; should it, the job still ends */
}

static void m_finalize(void) { MPI_Finalize(); }

static const cli_mpi_api API = {CLI_MPI_ABI,     m_init,          m_world,     m_max_exit,
                                m_allgather_int, m_allgather_u64, m_abort_job, m_finalize};

__attribute__((visibility("default"))) const cli_mpi_api *neuroc_cli_mpi_api(void);
const cli_mpi_api *neuroc_cli_mpi_api(void) { return &API; }
