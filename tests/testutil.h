/* Helpers shared by the cmocka tests. */
#ifndef NC_TEST_UTIL_H
#define NC_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "neuroc/neuroc.h"

/* Paths built by the helpers below live in a ring of NC_TEST_PATH_RING
 * buffers of the calling thread: safe from threads (the rank threads of
 * test_mpi_dist.c each get their own), and several may be used in one
 * expression; a path stays valid until its thread has built that many
 * more. Copy one that must live longer. */
#define NC_TEST_PATH_RING 16

/* printf into the calling thread's next ring buffer (aborts if it does not
 * fit, rather than hand back a truncated path). */
const char *nc_test_pathf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* NC_SOURCE_DIR "/" rel. */
const char *nc_test_src(const char *rel);
/* NC_SHARED_DIR "/" rel, or NULL if ../shared is absent (a user's clone). */
const char *nc_test_shared(const char *rel);
int nc_test_file_exists(const char *path);
/* The float32 tensor in the data file NC_SOURCE_DIR "/" rel (fails the test
 * if it cannot be read). The caller frees it. */
nc_tensor *nc_test_load_f32(const char *rel);
/* Mean |a/T − b| over b's elements (a: a readout summed over T steps, b
 * the ANN's logits): how far an SNN is from its ANN at T. */
double nc_test_mean_gap(const nc_tensor *a, const nc_tensor *b, int T);
/* Cosine of a/T and b (N, K) after subtracting each output's mean over the
 * samples (what is common to all inputs says nothing). */
double nc_test_centred_cosine(const nc_tensor *a, const nc_tensor *b, int T);
/* Applies the environment's case selection before cmocka_run_group_tests:
 * NC_TEST_FILTER runs only the cases matching its pattern, NC_TEST_SKIP
 * leaves those matching its pattern out (cmocka's '*' and '?' patterns).
 * CMakeLists.txt splits a long test in two this way (NEUROC_TEST_SPLITS). */
void nc_test_select_cases(void);
/* The output layer of s summed over T steps of the static input x on
 * `backend` (NULL: the reference); fails the test on an error. */
nc_tensor *nc_test_run(const nc_snn *s, const char *backend, const nc_tensor *x, int T);
/* Asserts st == NC_OK, printing nc_last_error() otherwise. */
#define NC_ASSERT_OK(expr)                                                              \
    do {                                                                                \
        nc_status st_ = (expr);                                                         \
        if (st_ != NC_OK)                                                               \
            fail_msg("%s failed: %s: %s", #expr, nc_status_str(st_), nc_last_error()); \
    } while (0)

#endif
