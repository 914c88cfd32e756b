#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "neuroc/neuroc.h"

static char g_path[512];

static void remove_temp(void)
{
    if (g_path[0])
        unlink(g_path);
}

const char *nc_fuzz_temp_file(const uint8_t *data, size_t size, const char *ext)
{
    char *path = g_path;
    if (!path[0])
        atexit(remove_temp); /* libFuzzer's fork mode starts many processes */
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof g_path, "%s/neuroc-fuzz-%ld%s", dir && *dir ? dir : "/tmp", (long)getpid(), ext);
    FILE *f = fopen(path, "wb");
    if (!f)
        return NULL;
    int ok = fwrite(data, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    return ok ? path : NULL;
}

void nc_fuzz_data_load(const uint8_t *data, size_t size, const char *ext)
{
    static const nc_dtype want[4] = {0, NC_DTYPE_F32, NC_DTYPE_U8, NC_DTYPE_I64};
    nc_fuzz_set_limits();
    if (size < 1)
        return;
    const char *path = nc_fuzz_temp_file(data + 1, size - 1, ext);
    if (!path)
        return;
    nc_tensor *t = NULL;
    if (nc_data_load(path, want[data[0] & 3], &t) == NC_OK)
        nc_tensor_free(t);
}

void nc_fuzz_set_limits(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    nc_limits lim = {0};
    lim.max_tensor_bytes = (int64_t)64 << 20;
    lim.max_model_bytes = (int64_t)256 << 20;
    nc_set_limits(&lim);
    nc_set_log_callback(NULL, NULL);
}
