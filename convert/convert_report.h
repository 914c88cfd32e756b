/* The conversion report (include/neuroc/convert.h): what nc_convert did, as
 * JSON, with its warnings. */
#ifndef NC_CONVERT_CONVERT_REPORT_H
#define NC_CONVERT_CONVERT_REPORT_H

#include "convert_graph.h"

typedef struct nc_report_input {
    const nc_graph *g;
    const nc_convert_options *o;  /* with defaults filled in */
    const nc_cgraph *cg;          /* sites, warnings, notes */
    const nc_snn *snn;            /* the network the sites' ids refer to (before any fold) */
    int levels;                   /* L in use */
    int64_t calib_used;           /* rows calibrated on; 0 when no layer needed it */
    int calib_batch;
    int64_t train_samples;        /* rows fine-tuned on; 0 when not fine-tuned */
    int n_scale_layers;           /* scale layers the binary-spike fold inserted */
    int final_layers;             /* layers of the returned network */
} nc_report_input;

nc_status nc_convert_report_build(const nc_report_input *in, nc_convert_report **out);
/* The operating point search's result, and its JSON object (text) under
 * "operating_point" at the report's top level. */
nc_status nc_convert_report_set_operating_point(nc_convert_report *r, const nc_operating_point *op,
                                                const char *json);
nc_status nc_convert_report_add_warning(nc_convert_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
