#include "neuroc/neuroc.h"

#ifndef NEUROC_VERSION
#define NEUROC_VERSION "0.0.0"
#endif

const char *nc_version(void) { return NEUROC_VERSION; }

#ifdef NEUROC_HAVE_CUDA
#define NC_FEATURES_CUDA " cuda"
#else
#define NC_FEATURES_CUDA ""
#endif
#ifdef NEUROC_HAVE_MPI
#define NC_FEATURES_MPI " mpi"
#else
#define NC_FEATURES_MPI ""
#endif

const char *nc_build_features(void) { return "cpu openblas" NC_FEATURES_CUDA NC_FEATURES_MPI; }
