/* nc_snn_evaluate (include/neuroc/convert.h): the evaluator of spiking
 * networks (snn/session/eval.c) with the ANN's side, which runs the
 * converter's ANN (convert/ann/model.c) on the same data: here, above both,
 * so that the SNN core never calls the converter (cmake/rooms.cmake's link
 * check). */
#include <string.h>

#include "snn/base/error.h"
#include "snn/base/tensor.h"
#include "snn/session/eval.h"

/* The ANN's accuracy and MACs per sample on x (per values a sample) into r. */
static nc_status run_ann(const void *ann, const nc_tensor *x, const nc_tensor *labels,
                         const nc_eval_options *o, int64_t per, nc_eval_result *r)
{
    const nc_model *m = ann;
    nc_value_info in;
    nc_status st;
    if (nc_model_num_inputs(m) != 1)
        return nc_errorf(NC_ERR_UNSUPPORTED, "the ANN has %zu inputs; evaluation feeds one",
                         nc_model_num_inputs(m));
    if ((st = nc_model_input(m, 0, &in)) != NC_OK)
        return st;
    if (in.dtype != NC_DTYPE_F32 || in.ndim < 1)
        return nc_errorf(NC_ERR_UNSUPPORTED, "the ANN's input '%s' is not a float32 batch", in.name);
    /* Per-sample shape: the model's, or the data's where the model leaves it open. */
    int ndim = in.ndim - 1, open = 0;
    int64_t shape[NC_MAX_DIMS], ann_per = 1;
    for (int d = 0; d < ndim; d++) {
        shape[d] = in.shape[d + 1];
        open |= shape[d] < 0;
        ann_per *= shape[d] < 0 ? 1 : shape[d];
    }
    if (open) {
        if (x->ndim != in.ndim)
            return nc_errorf(NC_ERR_SHAPE, "the data's rank %d does not fit the ANN's input '%s' of "
                             "rank %d", x->ndim, in.name, in.ndim);
        memcpy(shape, x->shape + 1, (size_t)ndim * sizeof *shape);
        ann_per = per;
    }
    if (ann_per != per)
        return nc_errorf(NC_ERR_SHAPE, "the ANN's input '%s' takes %lld values per sample, the data "
                         "has %lld", in.name, (long long)ann_per, (long long)per);
    /* A model with a fixed batch size gets full batches, the last padded. */
    int64_t fixed = in.shape[0] > 0 ? in.shape[0] : 0, chunk = fixed ? fixed : r->batch;
    int64_t macs = 0;
    for (int i = 0; i < nc_model_num_layers(m); i++) {
        nc_layer_info li;
        if (nc_model_layer(m, i, &li) == NC_OK)
            macs += li.macs;
    }
    r->ann_macs = fixed > 1 ? macs / fixed : macs;
    r->ann_correct = 0;
    nc_batches_options bo = {.batch = chunk, .pad = fixed > 0, .dist = o->dist, .progress = o->progress,
                             .what = "ANN evaluation", .progress_user = o->progress_user};
    nc_batches *it = NULL;
    nc_batch b;
    st = nc_batches_create(x, labels, &bo, &it);
    while (st == NC_OK && nc_batches_next(it, &b)) {
        nc_tensor *bx = NULL, *y = NULL;
        if ((st = nc_batches_tensor(it, &b, ndim, shape, &bx)) != NC_OK)
            break;
        const nc_tensor *inputs[1] = {bx};
        st = nc_model_run(m, inputs, 1, &y, 1);
        nc_tensor_free(bx);
        if (st != NC_OK)
            break;
        int64_t fed = b.padded;
        if (y->dtype != NC_DTYPE_F32 || y->ndim < 1 || y->shape[0] != fed || y->numel % fed) {
            char ys[160];
            nc_shape_str(y->ndim, y->shape, ys, sizeof ys);
            nc_tensor_free(y);
            st = nc_errorf(NC_ERR_SHAPE, "the ANN's output 0 (%s) is not one row of class scores per sample", ys);
            break;
        }
        int64_t classes = y->numel / fed;
        for (int64_t i = 0; i < b.count; i++)
            r->ann_correct += nc_eval_argmax(nc_f32(y) + i * classes, classes) == b.labels[i];
        nc_tensor_free(y);
    }
    nc_batches_free(it);
    return st;
}

nc_status nc_snn_evaluate(const nc_snn *s, const nc_model *ann, const nc_tensor *x,
                          const nc_tensor *labels, const nc_eval_options *opt, nc_eval_result **out)
{
    return nc_eval_run(s, ann, run_ann, x, labels, opt, out);
}
