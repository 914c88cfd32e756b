/* The counter-based random numbers of Poisson input encoding, shared by the
 * CPU backends (through nc_uniform_hash, snn/run/backend.c) and the CUDA kernels
 * so every backend draws the same spikes. */
#ifndef NC_KERNELS_HASH_H
#define NC_KERNELS_HASH_H

#include <stdint.h>

#include "neuron.h"

/* splitmix64's finaliser: every bit of z mixed into every bit of the result. */
NC_HD uint64_t nc_splitmix_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Deterministic uniform in [0,1) from (seed, step, index): the splitmix64
 * finaliser over a combination of the three keys; 24 bits, exact in float. */
NC_HD float nc_hash_uniform(uint64_t seed, uint64_t step, uint64_t index)
{
    uint64_t z = seed ^ (step * 0x9E3779B97F4A7C15ull) ^ (index * 0xD1B54A32D192ED03ull);
    z = nc_splitmix_mix(z + 0x9E3779B97F4A7C15ull);
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

/* Poisson encoding of analog value x (clamped into [0, 1]) at step t for
 * element k of the batch (k = sample·size + index): 1 or 0. */
NC_HD float nc_poisson_spike(float x, uint64_t seed, uint64_t t, uint64_t k)
{
    float p = x < 0 ? 0 : (x > 1 ? 1 : x);
    return nc_hash_uniform(seed, t, k) < p ? 1.0f : 0.0f;
}

#endif
