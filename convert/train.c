/* STUB: replaced by the training engine. */
#include "train.h"
#include "snn/error.h"

nc_status nc_train(nc_snn *s, const nc_tensor *x, const nc_tensor *labels, const nc_train_options *o)
{
    (void)s; (void)x; (void)labels; (void)o;
    return nc_errorf(NC_ERR_UNSUPPORTED, "training is not implemented yet");
}

nc_status nc_qcfs_evaluate(const nc_snn *s, const nc_tensor *x, const nc_tensor *labels, int levels,
                           double *loss, double *accuracy)
{
    (void)s; (void)x; (void)labels; (void)levels; (void)loss; (void)accuracy;
    return nc_errorf(NC_ERR_UNSUPPORTED, "training is not implemented yet");
}
