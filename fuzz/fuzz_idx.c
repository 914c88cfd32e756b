/* IDX reading (MNIST's format, plain or gzip) through nc_data_load. The
 * first byte picks the dtype asked for; the rest is the file. */
#include "fuzz_util.h"

#include "neuroc/neuroc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_fuzz_set_limits();
    if (size < 1)
        return 0;
    static const nc_dtype want[4] = {0, NC_DTYPE_F32, NC_DTYPE_U8, NC_DTYPE_I64};
    const char *path = nc_fuzz_temp_file(data + 1, size - 1, "-ubyte");
    if (!path)
        return 0;
    nc_tensor *t = NULL;
    if (nc_data_load(path, want[data[0] & 3], &t) == NC_OK)
        nc_tensor_free(t);
    return 0;
}
