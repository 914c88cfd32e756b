/* IDX reading (MNIST's format, plain or gzip) through nc_data_load; the
 * first byte picks the dtype asked for (fuzz_util.h). The two data targets
 * share the reader but not their corpora, so each starts from its format. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_fuzz_data_load(data, size, "-ubyte");
    return 0;
}
