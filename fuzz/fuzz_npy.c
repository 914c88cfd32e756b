/* .npy reading through nc_data_load (which also takes gzip-compressed
 * files); the first byte picks the dtype asked for (fuzz_util.h). */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_fuzz_data_load(data, size, ".npy");
    return 0;
}
