/* Shared by the fuzz targets (fuzz_*.c) and the corpus replay driver
 * (replay.c). Each target defines LLVMFuzzerTestOneInput; libFuzzer calls
 * it in the fuzzer build, replay.c calls it on every file of a corpus in
 * the normal test suite.
 *
 * Readers that take a path (NIR through HDF5, npy/IDX through zlib) get
 * the bytes through a temporary file named after the process, so two
 * fuzzers running at once never share one. */
#ifndef NC_FUZZ_UTIL_H
#define NC_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to a per-process temporary file ending in `ext` and returns
 * its path (static storage), or NULL if it cannot be written. */
const char *nc_fuzz_temp_file(const uint8_t *data, size_t size, const char *ext);

/* The npy and IDX targets: data[0] picks the dtype asked for (keep, F32,
 * U8, I64), so every conversion path is reached; the rest is the file,
 * written with extension `ext` and read with nc_data_load. */
void nc_fuzz_data_load(const uint8_t *data, size_t size, const char *ext);

/* Tight limits for fuzzing: a claim of a large tensor must be refused by
 * the limit check, not by the fuzzer's own malloc limit. */
void nc_fuzz_set_limits(void);

#endif
