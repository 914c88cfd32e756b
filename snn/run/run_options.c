/* The documented defaults of the session and evaluation options
 * (include/neuroc/snn.h, convert.h), written out. A zero field means the
 * same default inside nc_session_create and nc_snn_evaluate (session.c,
 * eval.c); tests/test_options.c checks that both give the same results. */
#include <string.h>

#include "neuroc/neuroc.h"

void nc_session_options_init(nc_session_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->backend = "cpu";
    o->timesteps = 1;
    o->encoding = NC_ENCODING_DIRECT;
    o->cuda_dense_threshold = 0.25f;
    o->cuda_precision = NC_CUDA_FP32;
}

void nc_eval_options_init(nc_eval_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->backend = "cpu";
    o->timesteps = 64;
    o->batch = 64;
    o->encoding = NC_ENCODING_DIRECT;
    o->energy_per_synop = 0.9e-12; /* eval.c's DEFAULT_E_SYNOP */
    o->energy_per_mac = 4.6e-12;   /* DEFAULT_E_MAC */
}
