#include "neuroc/neuroc.h"

#ifndef NEUROC_VERSION
#define NEUROC_VERSION "0.0.0"
#endif

const char *nc_version(void) { return NEUROC_VERSION; }

const char *nc_build_features(void)
{
#ifdef NEUROC_HAVE_CUDA
    return "cpu openblas cuda";
#else
    return "cpu openblas";
#endif
}
