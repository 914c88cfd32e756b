/* nc_check_finite (finite.h). */
#include "finite.h"

#include <math.h>

#include "error.h"

nc_status nc_check_finite(const nc_tensor *t, const char *what, int flags)
{
    if (!t || t->dtype != NC_DTYPE_F32)
        return NC_OK;
    const float *p = nc_f32(t);
    int64_t i = 0;
    int pos_inf = flags & NC_FINITE_POS_INF;
    while (i < t->numel && (isfinite(p[i]) || (pos_inf && p[i] > 0 && !isnan(p[i]))))
        i++;
    if (i == t->numel)
        return NC_OK;
    const char *v = isnan(p[i]) ? "NaN" : p[i] > 0 ? "+inf" : "-inf";
    if (!(flags & NC_FINITE_SAMPLES) || t->ndim < 1 || t->shape[0] < 1)
        return nc_errorf(NC_ERR_MODEL, "%s holds %s at index %lld (of %lld values): refused, as a network "
                         "with it computes nothing meaningful", what, v, (long long)i, (long long)t->numel);
    int64_t per = t->numel / t->shape[0];
    return nc_errorf(NC_ERR_INVALID_ARG, "%s: sample %lld holds %s at index %lld (of %lld values a sample): "
                     "refused; remove or repair that sample", what, (long long)(i / per), v,
                     (long long)(i % per), (long long)per);
}
