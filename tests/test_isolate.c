/* Reading in a child process first (snn/base/isolate.h, nc_limits.isolate_hdf5):
 * a read that crashes, stalls or fails in the child comes back as an error
 * naming the file; a read that succeeds lets the caller go on; with
 * isolation off nothing runs in a child. Independent of HDF5's bugs: the
 * reads here crash and loop on purpose. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "snn/base/error.h"
#include "snn/base/isolate.h"

static int g_ran_here;

static nc_status read_ok(void *arg)
{
    (void)arg;
    g_ran_here++; /* counts only in this process: the child's copy is its own */
    return NC_OK;
}

static nc_status read_fails(void *arg)
{
    return nc_errorf(NC_ERR_SHAPE, "%s: the dataset has 3 dims, expected 2", (const char *)arg);
}

static nc_status read_crashes(void *arg)
{
    (void)arg;
    signal(SIGSEGV, SIG_DFL); /* as HDF5 does when it reads through a bad pointer */
    raise(SIGSEGV);
    return NC_OK;
}

static nc_status read_loops(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NC_OK;
}

static void set_isolation(int on, int timeout_s)
{
    nc_limits l;
    nc_limits_current(&l);
    l.isolate_hdf5 = on;
    l.hdf5_timeout_s = timeout_s;
    nc_set_limits(&l);
}

static void test_off_runs_nothing(void **state)
{
    (void)state;
    set_isolation(0, 0);
    g_ran_here = 0;
    NC_ASSERT_OK(nc_isolated_preflight("x.nir", read_crashes, NULL)); /* not called at all */
    assert_int_equal(g_ran_here, 0);
}

static void test_ok_and_error_come_back(void **state)
{
    (void)state;
    set_isolation(1, 10);
    g_ran_here = 0;
    NC_ASSERT_OK(nc_isolated_preflight("good.nir", read_ok, NULL));
    assert_int_equal(g_ran_here, 0); /* it ran in the child */
    assert_int_equal(nc_isolated_preflight("odd.h5", read_fails, "odd.h5"), NC_ERR_SHAPE);
    assert_non_null(strstr(nc_last_error(), "odd.h5: the dataset has 3 dims, expected 2"));
    set_isolation(0, 0);
}

static void test_crash_and_stall_are_errors(void **state)
{
    (void)state;
    set_isolation(1, 1);
    assert_int_equal(nc_isolated_preflight("bad.nir", read_crashes, NULL), NC_ERR_PARSE);
    assert_non_null(strstr(nc_last_error(), "bad.nir"));
    assert_non_null(strstr(nc_last_error(), "corrupt"));
    assert_int_equal(nc_isolated_preflight("slow.nir", read_loops, NULL), NC_ERR_PARSE);
    assert_non_null(strstr(nc_last_error(), "slow.nir: reading it did not finish within 1 s"));
    set_isolation(0, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_off_runs_nothing),
        cmocka_unit_test(test_ok_and_error_come_back),
        cmocka_unit_test(test_crash_and_stall_are_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
