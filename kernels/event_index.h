/* Index math of the event-driven kernels, shared by the CUDA kernels
 * (snn/backends/cuda/cuda_kernels.cu) and the tests; the kernels themselves
 * run without a GPU in test_cuda_host (the CPU harness, tests/cuda_host/).
 *
 * Spikes of one frame (one sample at one step) are compacted into a list of
 * (index, value) events in ascending neuron order: a warp of 32 threads looks
 * at 32 consecutive neurons, __ballot_sync gives the word of the bitmask in
 * which bit l is neuron (32·word + l) being non-zero, and each active lane
 * writes its event at the block's running offset plus the number of active
 * lanes below it. The order of the list, and so of every sum over it, is the
 * neuron order the reference backend visits (snn/backends/cpu_ref/backend_cpu_ref.c). */
#ifndef NC_KERNELS_EVENT_INDEX_H
#define NC_KERNELS_EVENT_INDEX_H

#include <stdint.h>

#include "neuron.h"

/* Words of 32 bits that hold n bits. */
NC_HD int64_t nc_bit_words(int64_t n) { return (n + 31) >> 5; }
/* The word and the bit of element i in a bitmask. */
NC_HD int64_t nc_bit_word(int64_t i) { return i >> 5; }
NC_HD uint32_t nc_bit_mask(int64_t i) { return 1u << (uint32_t)(i & 31); }

NC_HD int nc_popc32(uint32_t m)
{
#if defined(__CUDA_ARCH__)
    return __popc(m);
#else
    return __builtin_popcount(m);
#endif
}

/* Whether a value is an event: any non-zero (the reference skips exact
 * zeros, -0.0 included). */
NC_HD int nc_is_event(float x) { return x != 0.0f; }

/* Slot of lane `lane` (0..31) among the active lanes of a ballot word: the
 * number of active lanes below it. */
NC_HD int nc_compact_slot(uint32_t ballot, int lane)
{
    return nc_popc32(ballot & ((1u << (uint32_t)lane) - 1u));
}

/* One output of the event-driven fully connected layer: acc (the bias, or
 * the sum over earlier events) plus w[idx]·val for n events in list order.
 * wt is [in][out] (row i holds the fan-out of input i), so the threads of a
 * warp (consecutive o) read consecutive weights. Multiply, then add, as the
 * reference does (no FMA: --fmad=false, -ffp-contract=off). */
NC_HD float nc_fc_gather(float acc, const int32_t *idx, const float *val, int n, const float *wt, int64_t out,
                         int64_t o)
{
    for (int a = 0; a < n; a++)
        acc += wt[(int64_t)idx[a] * out + o] * val[a];
    return acc;
}

#endif
