/* What the backend interface (backend.h) gives every backend. */
#include "backend.h"
#include "kernels/hash.h"

float nc_uniform_hash(uint64_t seed, uint64_t step, uint64_t index)
{
    return nc_hash_uniform(seed, step, index);
}
