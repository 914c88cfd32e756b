/* The operating point search (operating_point.c): nc_convert's path when
 * nc_convert_options.target_loss is set. */
#ifndef NC_CONVERT_OPERATING_POINT_H
#define NC_CONVERT_OPERATING_POINT_H

#include "neuroc/neuroc.h"

nc_status nc_convert_operating_point(const nc_model *m, const nc_tensor *calib, const nc_tensor *labels,
                                     const nc_convert_options *opt, nc_snn **out, nc_convert_report **report);

#endif
