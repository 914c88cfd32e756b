/* The table of supported ONNX ops. Constant is not here: the importer turns
 * Constant nodes into constant values. */
#include "ann_ops.h"

#include <stdio.h>
#include <string.h>

static const nc_op_def g_ops[] = {
    {"Conv", 2, 3, 1, nc_op_conv},
    {"Gemm", 2, 3, 1, nc_op_gemm},
    {"MatMul", 2, 2, 1, nc_op_matmul},
    {"BatchNormalization", 5, 5, 1, nc_op_batchnorm},
    {"AveragePool", 1, 1, 1, nc_op_averagepool},
    {"MaxPool", 1, 1, 1, nc_op_maxpool},
    {"GlobalAveragePool", 1, 1, 1, nc_op_globalaveragepool},
    {"Pad", 1, 4, 1, nc_op_pad},
    {"Add", 2, 2, 1, nc_op_add},
    {"Sub", 2, 2, 1, nc_op_sub},
    {"Mul", 2, 2, 1, nc_op_mul},
    {"Div", 2, 2, 1, nc_op_div},
    {"Relu", 1, 1, 1, nc_op_relu},
    {"Clip", 1, 3, 1, nc_op_clip},
    {"LeakyRelu", 1, 1, 1, nc_op_leakyrelu},
    {"Floor", 1, 1, 1, nc_op_floor},
    {"Softmax", 1, 1, 1, nc_op_softmax},
    {"LogSoftmax", 1, 1, 1, nc_op_logsoftmax},
    {"Identity", 1, 1, 1, nc_op_identity},
    {"Dropout", 1, 3, 2, nc_op_dropout},
    {"Flatten", 1, 1, 1, nc_op_flatten},
    {"Reshape", 2, 2, 1, nc_op_reshape},
    {"Squeeze", 1, 2, 1, nc_op_squeeze},
    {"Unsqueeze", 1, 2, 1, nc_op_unsqueeze},
    {"Concat", 1, 64, 1, nc_op_concat},
    {"Shape", 1, 1, 1, nc_op_shape},
    {"Gather", 2, 2, 1, nc_op_gather},
    {"Slice", 1, 5, 1, nc_op_slice},
    {"Cast", 1, 1, 1, nc_op_cast},
    {"Transpose", 1, 1, 1, nc_op_transpose},
    {"Sigmoid", 1, 1, 1, nc_op_sigmoid},
    {"HardSigmoid", 1, 1, 1, nc_op_hardsigmoid},
    {"HardSwish", 1, 1, 1, nc_op_hardswish},
    {"Erf", 1, 1, 1, nc_op_erf},
    {"Sqrt", 1, 1, 1, nc_op_sqrt},
    {"Tanh", 1, 1, 1, nc_op_tanh},
    {"Pow", 2, 2, 1, nc_op_pow},
    {"ReduceMean", 1, 2, 1, nc_op_reducemean},
    {"LayerNormalization", 2, 3, 3, nc_op_layernorm},
    {"Equal", 2, 2, 1, nc_op_equal},
    {"Where", 3, 3, 1, nc_op_where},
    {"Expand", 2, 2, 1, nc_op_expand},
    {"ConstantOfShape", 1, 1, 1, nc_op_constantofshape},
    {"Mod", 2, 2, 1, nc_op_mod},
    {"Range", 3, 3, 1, nc_op_range},
    {"ScatterND", 3, 3, 1, nc_op_scatternd},
    {"Not", 1, 1, 1, nc_op_not},
};

const nc_op_def *nc_op_lookup(const char *op_type)
{
    for (size_t i = 0; i < sizeof g_ops / sizeof g_ops[0]; i++)
        if (strcmp(g_ops[i].name, op_type) == 0)
            return &g_ops[i];
    return NULL;
}

char *nc_op_supported_list(char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof g_ops / sizeof g_ops[0]; i++) {
        int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", g_ops[i].name);
        if (n < 0 || (size_t)n >= len - off)
            break;
        off += (size_t)n;
    }
    return buf;
}
