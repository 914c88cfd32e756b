/* Between the neuroc program (cli/cli_dist.c) and its MPI module
 * (cli/mpi/cli_mpi.c, built as neuroc_mpi_module.so): the program links no
 * MPI library and dlopens the module only when an MPI launcher started it,
 * so a plain run never loads MPI. The module exports one function,
 * CLI_MPI_ENTRY, that returns this table (static, valid while the module is
 * loaded); `abi` must be CLI_MPI_ABI, so a program and a module of
 * different builds refuse each other instead of misreading the table.
 * Every call but init and abort_job needs init to have succeeded. */
#ifndef NC_CLI_MPI_H
#define NC_CLI_MPI_H

#include "neuroc/neuroc.h"

#define CLI_MPI_ABI 1
#define CLI_MPI_ENTRY "neuroc_cli_mpi_api"

typedef struct cli_mpi_api {
    int abi;
    /* MPI_Init, then MPI_ERRORS_RETURN on MPI_COMM_WORLD; this rank and the
     * world's size. 0 on success. */
    int (*init)(int *argc, char ***argv, int *rank, int *size);
    /* nc_dist_from_mpi_comm(MPI_COMM_WORLD): the library's own duplicate;
     * the caller owns *out (nc_dist_free, before finalize). */
    nc_status (*world)(nc_dist **out);
    /* Collective: the maximum of every rank's rc into *all. Waits for the
     * others without limit when wait_ms < 0, else up to wait_ms. 0: done;
     * 1: the others did not arrive in time; -1: MPI failed. */
    int (*max_exit)(int rc, int wait_ms, int *all);
    /* Collective MPI_Allgather of n values a rank, in rank order, into
     * `all` (n·size values). 0 on success. */
    int (*allgather_int)(const int *mine, int n, int *all);
    int (*allgather_u64)(const unsigned long long *mine, int n, unsigned long long *all);
    /* MPI_Abort of the whole job with `code`; does not return. */
    void (*abort_job)(int code);
    /* MPI_Finalize. */
    void (*finalize)(void);
} cli_mpi_api;

typedef const cli_mpi_api *(*cli_mpi_entry_fn)(void);

#endif
