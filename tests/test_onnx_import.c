/* ONNX import: each malformed model gives its own status and a message that
 * names the file and the node or tensor; good models load, list their
 * inputs, outputs and layers, and fold shape arithmetic.
 * Fixtures come from scripts/make_fixtures.py. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/ann/graph_prepare.h"
#include "convert/ann/onnx_tensor.h"
#include "snn/base/alloc.h"
#include "convert/ann/ann_ops.h"
#include "convert/ann/graph.h"
#include "convert/ann/model.h"

static const char *fixture(const char *rel)
{
    return nc_test_pathf("%s/tests/fixtures/%s", NC_SOURCE_DIR, rel);
}

/* Loads a fixture expecting `want`, and checks the message holds every
 * given substring (NULL-terminated list). */
static void expect_fail(const char *rel, nc_status want, ...)
{
    nc_model *m = (nc_model *)0x1;
    const char *path = fixture(rel);
    nc_status st = nc_model_load_onnx(path, NULL, &m);
    const char *msg = nc_last_error();
    if (st != want)
        fail_msg("%s: got %s (%s), want %s", rel, nc_status_str(st), msg, nc_status_str(want));
    assert_null(m);
    if (!strstr(msg, path))
        fail_msg("%s: message does not name the file: %s", rel, msg);
    va_list ap;
    va_start(ap, want);
    for (const char *s; (s = va_arg(ap, const char *));)
        if (!strstr(msg, s))
            fail_msg("%s: message lacks '%s': %s", rel, s, msg);
    va_end(ap);
}

/* ------------------------------------------------------------ errors */

static void test_missing_file(void **state)
{
    (void)state;
    expect_fail("bad/does_not_exist.onnx", NC_ERR_IO, "cannot open", NULL);
}

static void test_truncated(void **state)
{
    (void)state;
    expect_fail("bad/truncated.onnx", NC_ERR_PARSE, "not an ONNX model", NULL);
}

static void test_random_bytes(void **state)
{
    (void)state;
    expect_fail("bad/random.onnx", NC_ERR_PARSE, "not an ONNX model", NULL);
}

static void test_empty_buffer(void **state)
{
    (void)state;
    nc_model *m;
    assert_int_equal(nc_model_load_onnx_memory("", 0, "empty.onnx", NULL, &m), NC_ERR_PARSE);
    assert_non_null(strstr(nc_last_error(), "empty.onnx"));
    assert_null(m);
}

static void test_unsupported_op(void **state)
{
    (void)state;
    expect_fail("bad/unsupported_op.onnx", NC_ERR_UNSUPPORTED, "node 'sine'", "(Sin, opset 13)",
                "unsupported op", "neuroc supports: ", "Conv", NULL);
}

static void test_custom_domain(void **state)
{
    (void)state;
    expect_fail("bad/custom_domain.onnx", NC_ERR_UNSUPPORTED, "node 'custom'", "com.example", NULL);
}

static void test_cycle(void **state)
{
    (void)state;
    expect_fail("bad/cycle.onnx", NC_ERR_MODEL, "cycle through node 'loop_", NULL);
}

static void test_missing_external(void **state)
{
    (void)state;
    expect_fail("bad/missing_external.onnx", NC_ERR_IO, "tensor 'W'", "no_such_weights.bin", NULL);
}

static void test_escaping_external(void **state)
{
    (void)state;
    expect_fail("bad/escape_external.onnx", NC_ERR_UNSUPPORTED, "tensor 'W'", "../../etc/passwd",
                NULL);
}

static void test_size_mismatch(void **state)
{
    (void)state;
    expect_fail("bad/size_mismatch.onnx", NC_ERR_PARSE, "tensor 'W'", "[3, 4]", "12 elements",
                "holds 32 bytes", NULL);
}

static void test_float16_weight(void **state)
{
    (void)state;
    expect_fail("bad/float16_weight.onnx", NC_ERR_UNSUPPORTED, "tensor 'Wh'", "FLOAT16", NULL);
}

static void test_undefined_value(void **state)
{
    (void)state;
    expect_fail("bad/undefined_value.onnx", NC_ERR_MODEL, "node 'reader'", "'nowhere'", NULL);
}

static void test_opset_range(void **state)
{
    (void)state;
    expect_fail("bad/opset_6.onnx", NC_ERR_UNSUPPORTED, "node 'old_add' (Add, opset 6)",
                "changed at opset 7", "7 to 21", NULL);
    expect_fail("bad/opset_22.onnx", NC_ERR_UNSUPPORTED, "opset 22", "7 to 21", NULL);
}

/* An opset-6 model whose ops are unchanged at opset 7 loads. */
static void test_old_opset_unchanged_op(void **state)
{
    (void)state;
    nc_model *m;
    NC_ASSERT_OK(nc_model_load_onnx(fixture("relu_opset6.onnx"), NULL, &m));
    assert_int_equal(nc_model_num_layers(m), 1);
    nc_model_free(m);
}

static void test_too_many_inputs(void **state)
{
    (void)state;
    expect_fail("bad/too_many_inputs.onnx", NC_ERR_UNSUPPORTED, "node 'two_in'", "(Relu, opset 13)",
                "2 inputs", NULL);
}

static void test_dropout_mask(void **state)
{
    (void)state;
    expect_fail("bad/dropout_mask.onnx", NC_ERR_UNSUPPORTED, "node 'drop'", "'mask'", NULL);
}

static void test_tensor_limit(void **state)
{
    (void)state;
    nc_load_options opt = {.max_tensor_elems = 5};
    nc_model *m;
    const char *path = fixture("gemm_relu.onnx");
    assert_int_equal(nc_model_load_onnx(path, &opt, &m), NC_ERR_LIMIT);
    assert_non_null(strstr(nc_last_error(), "tensor 'W'"));
    assert_non_null(strstr(nc_last_error(), path));
}

/* Every prefix of a good model fails cleanly or loads: no crash, no leak
 * (valgrind / ASan runs check the latter). */
static void test_every_truncation(void **state)
{
    (void)state;
    uint8_t *data;
    size_t size;
    NC_ASSERT_OK(nc_onnx_read_file(fixture("gemm_relu.onnx"), &data, &size));
    for (size_t n = 0; n < size; n++) {
        nc_model *m = NULL;
        nc_status st = nc_model_load_onnx_memory(data, n, "cut.onnx", NULL, &m);
        if (st == NC_OK)
            nc_model_free(m);
        else
            assert_null(m);
    }
    nc_free(data);
}

/* ------------------------------------------------------------ graph preparation
 * (import only: no op is executed) */

static nc_graph *chain_graph(void)
{
    /* x → A → a → B → b (output), plus a dead node D reading x. Listed B, D, A. */
    nc_graph *g = nc_graph_new("chain");
    int x = nc_graph_add_value(g, "x"), a = nc_graph_add_value(g, "a");
    int b = nc_graph_add_value(g, "b"), d = nc_graph_add_value(g, "d");
    g->inputs = nc_calloc(1, sizeof(int));
    g->inputs[g->n_inputs++] = x;
    g->outputs = nc_calloc(1, sizeof(int));
    g->outputs[g->n_outputs++] = b;
    const char *names[] = {"B", "D", "A"};
    int ins[] = {a, x, x}, outs[] = {b, d, a};
    for (int i = 0; i < 3; i++) {
        nc_node *n = nc_graph_add_node(g);
        n->name = nc_strdup(names[i]);
        n->op_type = nc_strdup("Relu");
        n->def = nc_op_lookup("Relu");
        n->inputs = nc_malloc(sizeof(int));
        n->outputs = nc_malloc(sizeof(int));
        n->n_inputs = n->n_outputs = 1;
        n->inputs[0] = ins[i];
        n->outputs[0] = outs[i];
    }
    return g;
}

static void test_prepare_sorts_and_prunes(void **state)
{
    (void)state;
    nc_graph *g = chain_graph();
    NC_ASSERT_OK(nc_graph_prepare(g));
    assert_int_equal(g->n_nodes, 2);
    assert_string_equal(g->nodes[0].name, "A");
    assert_string_equal(g->nodes[1].name, "B");
    assert_int_equal(g->n_values, 3); /* d is gone */
    assert_string_equal(g->values[g->nodes[1].outputs[0]].name, "b");
    assert_int_equal(g->outputs[0], g->nodes[1].outputs[0]);
    assert_int_equal(g->nodes[0].outputs[0], g->nodes[1].inputs[0]);
    nc_graph_free(g);
}

static void test_prepare_double_producer(void **state)
{
    (void)state;
    nc_graph *g = chain_graph();
    g->nodes[1].outputs[0] = g->nodes[0].outputs[0]; /* D now also writes b */
    assert_int_equal(nc_graph_prepare(g), NC_ERR_MODEL);
    assert_non_null(strstr(nc_last_error(), "'b' is produced by both node 'B' and node 'D'"));
    nc_graph_free(g);
}

/* ------------------------------------------------------------ good models
 * (these need the ops' kernels: Gemm, Relu, Add, Shape, Gather, Unsqueeze,
 * Concat, Reshape) */

static void test_gemm_relu(void **state)
{
    (void)state;
    nc_model *m;
    NC_ASSERT_OK(nc_model_load_onnx(fixture("gemm_relu.onnx"), NULL, &m));
    assert_int_equal(nc_model_num_inputs(m), 1);
    assert_int_equal(nc_model_num_outputs(m), 1);
    nc_value_info vi;
    NC_ASSERT_OK(nc_model_input(m, 0, &vi));
    assert_string_equal(vi.name, "x");
    assert_int_equal(vi.dtype, NC_DTYPE_F32);
    assert_int_equal(vi.ndim, 2);
    assert_int_equal(vi.shape[0], 1);
    assert_int_equal(vi.shape[1], 4);
    NC_ASSERT_OK(nc_model_output(m, 0, &vi));
    assert_string_equal(vi.name, "y");
    assert_int_equal(vi.ndim, 2);
    assert_int_equal(vi.shape[1], 3);
    assert_int_equal(nc_model_num_layers(m), 2);
    nc_layer_info li;
    NC_ASSERT_OK(nc_model_layer(m, 0, &li));
    assert_string_equal(li.name, "fc");
    assert_string_equal(li.op, "Gemm");
    assert_int_equal(li.params, 15);
    assert_int_equal(li.macs, 12);
    NC_ASSERT_OK(nc_model_layer(m, 1, &li));
    assert_string_equal(li.op, "Relu");

    int64_t shape[] = {1, 4};
    float xv[] = {1, 2, 3, 4};
    nc_tensor *x, *y;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, shape, xv, &x));
    NC_ASSERT_OK(nc_model_run(m, (const nc_tensor *const *)&x, 1, &y, 1));
    const float *yv = nc_tensor_data_const(y);
    /* [1+0.5, 2-10, 1+2+3+4] through ReLU */
    assert_float_equal(yv[0], 1.5f, 1e-6);
    assert_float_equal(yv[1], 0.0f, 1e-6);
    assert_float_equal(yv[2], 10.0f, 1e-6);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_model_free(m);
}

static void test_constant_node_and_order(void **state)
{
    (void)state;
    nc_model *m;
    NC_ASSERT_OK(nc_model_load_onnx(fixture("const_add.onnx"), NULL, &m));
    assert_int_equal(nc_model_num_layers(m), 1);
    int64_t shape[] = {1, 4};
    float xv[] = {10, 20, 30, 40};
    nc_tensor *x, *y;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 2, shape, xv, &x));
    NC_ASSERT_OK(nc_model_run(m, (const nc_tensor *const *)&x, 1, &y, 1));
    const float *yv = nc_tensor_data_const(y);
    for (int i = 0; i < 4; i++)
        assert_float_equal(yv[i], xv[i] + (float)(i + 1), 1e-6);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_model_free(m);
}

static void test_external_data(void **state)
{
    (void)state;
    nc_model *m;
    NC_ASSERT_OK(nc_model_load_onnx(fixture("ext_ok.onnx"), NULL, &m));
    int64_t shape[] = {2};
    float xv[] = {1, 1};
    nc_tensor *x, *y;
    NC_ASSERT_OK(nc_tensor_create_from(NC_DTYPE_F32, 1, shape, xv, &x));
    NC_ASSERT_OK(nc_model_run(m, (const nc_tensor *const *)&x, 1, &y, 1));
    const float *yv = nc_tensor_data_const(y);
    assert_float_equal(yv[0], 3.0f, 1e-6);
    assert_float_equal(yv[1], -2.0f, 1e-6);
    nc_tensor_free(x);
    nc_tensor_free(y);
    nc_model_free(m);
}

static int count_op(const nc_model *m, const char *op)
{
    int c = 0;
    for (int i = 0; i < nc_model_num_layers(m); i++) {
        nc_layer_info li;
        if (nc_model_layer(m, i, &li) == NC_OK && strcmp(li.op, op) == 0)
            c++;
    }
    return c;
}

static void run_view(const nc_model *m, int64_t batch)
{
    int64_t shape[] = {batch, 3, 4};
    nc_tensor *x, *y;
    NC_ASSERT_OK(nc_tensor_create(NC_DTYPE_F32, 3, shape, &x));
    float *xv = nc_tensor_data(x);
    for (int64_t i = 0; i < batch * 12; i++)
        xv[i] = (float)i * 0.5f;
    NC_ASSERT_OK(nc_model_run(m, (const nc_tensor *const *)&x, 1, &y, 1));
    assert_int_equal(nc_tensor_ndim(y), 2);
    assert_int_equal(nc_tensor_shape(y)[0], batch);
    assert_int_equal(nc_tensor_shape(y)[1], 12);
    assert_memory_equal(nc_tensor_data_const(y), xv, (size_t)batch * 12 * sizeof(float));
    nc_tensor_free(x);
    nc_tensor_free(y);
}

static void test_view_fixed_batch_folds(void **state)
{
    (void)state;
    nc_model *m;
    NC_ASSERT_OK(nc_model_load_onnx(fixture("view_fixed.onnx"), NULL, &m));
    /* Shape → Gather → Unsqueeze → Concat all folded into Reshape's constant. */
    assert_int_equal(nc_model_num_layers(m), 1);
    assert_int_equal(count_op(m, "Reshape"), 1);
    nc_value_info vi;
    NC_ASSERT_OK(nc_model_output(m, 0, &vi));
    assert_int_equal(vi.ndim, 2);
    assert_int_equal(vi.shape[0], 2);
    assert_int_equal(vi.shape[1], 12);
    run_view(m, 2);
    nc_model_free(m);
}

static void test_view_dynamic_batch(void **state)
{
    (void)state;
    nc_model *m;
    NC_ASSERT_OK(nc_model_load_onnx(fixture("view_dynamic.onnx"), NULL, &m));
    /* The batch is only known at run time: the shape nodes stay. */
    assert_int_equal(count_op(m, "Shape"), 1);
    nc_value_info vi;
    NC_ASSERT_OK(nc_model_input(m, 0, &vi));
    assert_int_equal(vi.shape[0], -1);
    NC_ASSERT_OK(nc_model_output(m, 0, &vi));
    assert_int_equal(vi.shape[0], -1);
    assert_int_equal(vi.shape[1], 12);
    run_view(m, 1);
    run_view(m, 3);
    nc_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_random_bytes),
        cmocka_unit_test(test_empty_buffer),
        cmocka_unit_test(test_unsupported_op),
        cmocka_unit_test(test_custom_domain),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_missing_external),
        cmocka_unit_test(test_escaping_external),
        cmocka_unit_test(test_size_mismatch),
        cmocka_unit_test(test_float16_weight),
        cmocka_unit_test(test_undefined_value),
        cmocka_unit_test(test_opset_range),
        cmocka_unit_test(test_too_many_inputs),
        cmocka_unit_test(test_old_opset_unchanged_op),
        cmocka_unit_test(test_dropout_mask),
        cmocka_unit_test(test_tensor_limit),
        cmocka_unit_test(test_every_truncation),
        cmocka_unit_test(test_prepare_sorts_and_prunes),
        cmocka_unit_test(test_prepare_double_producer),
        cmocka_unit_test(test_gemm_relu),
        cmocka_unit_test(test_constant_node_and_order),
        cmocka_unit_test(test_external_data),
        cmocka_unit_test(test_view_fixed_batch_folds),
        cmocka_unit_test(test_view_dynamic_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
