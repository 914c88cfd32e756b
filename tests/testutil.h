/* Helpers shared by the cmocka tests. */
#ifndef NC_TEST_UTIL_H
#define NC_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "neuroc/neuroc.h"

/* NC_SOURCE_DIR "/" rel, in a static buffer (one at a time). */
const char *nc_test_src(const char *rel);
/* NC_SHARED_DIR "/" rel, or NULL if ../shared is absent (a user's clone). */
const char *nc_test_shared(const char *rel);
int nc_test_file_exists(const char *path);
/* Asserts st == NC_OK, printing nc_last_error() otherwise. */
#define NC_ASSERT_OK(expr)                                                              \
    do {                                                                                \
        nc_status st_ = (expr);                                                         \
        if (st_ != NC_OK)                                                               \
            fail_msg("%s failed: %s: %s", #expr, nc_status_str(st_), nc_last_error()); \
    } while (0)

#endif
