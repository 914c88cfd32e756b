/* Stands in for the CUDA units in builds without nvcc: the "cuda" backend
 * is still known by name, and says that neuroc was built without CUDA. */
#include <stdio.h>

#include "neuroc/neuroc.h"
#include "snn/run/backend.h"
#include "snn/base/error.h"

#define NC_NO_CUDA "neuroc was built without CUDA (no nvcc found, or -DNEUROC_CUDA=OFF)"

nc_status nc_cuda_device_count(int *count)
{
    if (count)
        *count = 0;
    return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "CUDA backend unavailable: " NC_NO_CUDA);
}

static int absent_supports(const nc_snn *s, int id, char *why, size_t len)
{
    (void)s, (void)id, (void)why, (void)len;
    return 1; /* check() says why nothing runs */
}

static nc_status absent_check(const nc_snn *s, const nc_session_options *o)
{
    (void)s, (void)o;
    return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "backend 'cuda' is unavailable: " NC_NO_CUDA
                     " (use --backend cpu or cpu-fast)");
}

static nc_status absent_plan_create(const nc_snn *s, int batch, void **plan)
{
    (void)batch;
    *plan = NULL;
    return absent_check(s, NULL);
}

static nc_status absent_run(void *plan, const nc_run_request *q)
{
    (void)plan, (void)q;
    return nc_errorf(NC_ERR_BACKEND_UNAVAILABLE, "backend 'cuda': " NC_NO_CUDA);
}

static void absent_plan_free(void *plan) { (void)plan; }

const nc_backend nc_backend_cuda = {
    .name = "cuda",
    .supports_layer = absent_supports,
    .plan_create = absent_plan_create,
    .run = absent_run,
    .plan_free = absent_plan_free,
    .check = absent_check,
};
