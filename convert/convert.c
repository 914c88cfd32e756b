/* STUB: replaced by the converter. */
#include "neuroc/neuroc.h"
#include "snn/error.h"

nc_status nc_convert(const nc_model *m, const nc_tensor *calib, const nc_tensor *labels,
                     const nc_convert_options *opt, nc_snn **out, nc_convert_report **report)
{
    (void)m; (void)calib; (void)labels; (void)opt;
    if (out) *out = NULL;
    if (report) *report = NULL;
    return nc_errorf(NC_ERR_UNSUPPORTED, "not implemented yet");
}
void nc_convert_report_free(nc_convert_report *r) { (void)r; }
const char *nc_convert_report_json(const nc_convert_report *r) { (void)r; return "{}"; }
size_t nc_convert_report_num_warnings(const nc_convert_report *r) { (void)r; return 0; }
const char *nc_convert_report_warning(const nc_convert_report *r, size_t i) { (void)r; (void)i; return ""; }
