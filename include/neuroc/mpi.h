/*
 * neuroc over MPI: a group of processes (nc_dist, <neuroc/neuroc.h>) made
 * from the caller's communicator. Declared here, defined in libneuroc_mpi,
 * a library of its own so that libneuroc never links MPI: link with
 * `pkg-config --libs neuroc-mpi` (-lneuroc_mpi -lneuroc and MPI's flags) or
 * CMake's neuroc::mpi (neuroc::mpi_static for the static libraries).
 * Installed only when neuroc was built with MPI (-DNEUROC_MPI=AUTO finds
 * it, ON requires it); include it where <mpi.h> is available.
 * <neuroc/neuroc.h> itself never needs MPI.
 */
#ifndef NEUROC_MPI_H
#define NEUROC_MPI_H

#include <mpi.h>

#include "neuroc/neuroc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A group over `comm` for the `dist` field of nc_eval_options,
 * nc_convert_options, nc_finetune_options and nc_loihi_run_options.
 * Collective over comm. neuroc works on a duplicate of comm (its messages
 * never mix with the caller's) with MPI_ERRORS_RETURN set, so an MPI
 * failure comes back as NC_ERR_DEVICE with MPI's message. MPI must be
 * initialised, and stay so until nc_dist_free (which frees the duplicate;
 * after MPI_Finalize it only frees the memory). The caller keeps comm; it
 * owns *out (NULL on failure), freed with nc_dist_free. */
NC_API nc_status nc_dist_from_mpi_comm(MPI_Comm comm, nc_dist **out);

#ifdef __cplusplus
}
#endif
#endif /* NEUROC_MPI_H */
