/* STUB: replaced by the evaluator. */
#include "neuroc/neuroc.h"
#include "error.h"

nc_status nc_snn_evaluate(const nc_snn *s, const nc_model *ann, const nc_tensor *x,
                          const nc_tensor *labels, const nc_eval_options *opt, nc_eval_result **out)
{
    (void)s; (void)ann; (void)x; (void)labels; (void)opt;
    if (out) *out = NULL;
    return nc_errorf(NC_ERR_UNSUPPORTED, "not implemented yet");
}
void nc_eval_result_free(nc_eval_result *r) { (void)r; }
int nc_eval_timesteps(const nc_eval_result *r) { (void)r; return 0; }
int64_t nc_eval_samples(const nc_eval_result *r) { (void)r; return 0; }
double nc_eval_accuracy_at(const nc_eval_result *r, int t) { (void)r; (void)t; return -1; }
double nc_eval_ann_accuracy(const nc_eval_result *r) { (void)r; return -1; }
const char *nc_eval_result_json(const nc_eval_result *r) { (void)r; return "{}"; }
nc_status nc_eval_result_write_svg(const nc_eval_result *r, const char *path)
{
    (void)r; (void)path;
    return nc_errorf(NC_ERR_UNSUPPORTED, "not implemented yet");
}
