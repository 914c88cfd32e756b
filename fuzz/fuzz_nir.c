/* NIR import: HDF5 needs a file, so the bytes go through a temporary one.
 * A network that loads is also described and freed. */
#include "fuzz_util.h"

#include "neuroc/neuroc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    nc_fuzz_set_limits();
    const char *path = nc_fuzz_temp_file(data, size, ".nir");
    if (!path)
        return 0;
    nc_snn *s = NULL;
    if (nc_snn_load_nir(path, NULL, &s) == NC_OK)
        nc_snn_free(s);
    return 0;
}
