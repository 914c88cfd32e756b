#include "testutil.h"

#include <stdio.h>
#include <sys/stat.h>

const char *nc_test_src(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", NC_SOURCE_DIR, rel);
    return buf;
}

int nc_test_file_exists(const char *path)
{
    struct stat sb;
    return path && stat(path, &sb) == 0;
}

const char *nc_test_shared(const char *rel)
{
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/%s", NC_SHARED_DIR, rel);
    return nc_test_file_exists(NC_SHARED_DIR) ? buf : NULL;
}
