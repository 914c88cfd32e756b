/* nc_snn_check_finite (snn_ir.h): a network's weights, biases and
 * thresholds, wherever it came from (a conversion, a .nir file). */
#include <stdio.h>

#include "snn/base/error.h"
#include "snn/base/finite.h"
#include "snn_ir.h"

nc_status nc_snn_check_finite(const nc_snn *s, const char *src)
{
    static const char *const what[] = {"weight", "bias", "threshold"};
    for (int i = 0; i < s->n_layers; i++) {
        const nc_snn_layer *L = &s->layers[i];
        const nc_tensor *t[] = {L->weight, L->bias, L->threshold};
        for (int k = 0; k < 3; k++) {
            char name[300];
            snprintf(name, sizeof name, "%s: layer '%.200s': %s", src, L->name, what[k]);
            nc_status st = nc_check_finite(t[k], name, k == 2 ? NC_FINITE_POS_INF : 0);
            if (st != NC_OK)
                return st;
        }
    }
    return NC_OK;
}
