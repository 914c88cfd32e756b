#!/usr/bin/python3
"""Writes the small ONNX fixtures tests/test_onnx_import.c reads.

Run with Debian's python (`/usr/bin/python3 scripts/make_fixtures.py`): it
needs only the onnx package. Deterministic: same bytes every run. The models
are built with onnx.helper and are never passed through the checker, since
several are broken on purpose (tests/fixtures/bad/).
"""
import os
import random
import struct

import onnx
from onnx import TensorProto, helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures")
BAD = os.path.join(ROOT, "bad")


def model(nodes, inputs, outputs, inits=(), opset=13, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                          producer_name="neuroc-fixtures")
    m.ir_version = 8
    return m


def save(m, path):
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def f32(name, dims, vals):
    return helper.make_tensor(name, TensorProto.FLOAT, dims, vals)


def i64(name, dims, vals):
    return helper.make_tensor(name, TensorProto.INT64, dims, vals)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def gemm_relu(batch=1):
    # y = relu(x · Wᵀ + b), W 3×4: hand-checked in the test.
    w = [1, 0, 0, 0,
         0, 1, 0, 0,
         1, 1, 1, 1]
    b = [0.5, -10, 0]
    nodes = [helper.make_node("Gemm", ["x", "W", "b"], ["h"], name="fc", transB=1),
             helper.make_node("Relu", ["h"], ["y"], name="act")]
    return model(nodes, [vi("x", TensorProto.FLOAT, [batch, 4])],
                 [vi("y", TensorProto.FLOAT, [batch, 3])],
                 [f32("W", [3, 4], w), f32("b", [3], b)])


def view_flatten(batch):
    # What torch exports for x.view(x.size(0), -1) without constant folding.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node("Constant", [], ["zero"], name="c0",
                         value=helper.make_tensor("zero", TensorProto.INT64, [], [0])),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
        helper.make_node("Constant", [], ["axes"], name="c1", value_ints=[0]),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"], name="unsq"),
        helper.make_node("Constant", [], ["minus1"], name="c2", value_ints=[-1]),
        helper.make_node("Concat", ["n1", "minus1"], ["shp"], name="concat", axis=0),
        helper.make_node("Reshape", ["x", "shp"], ["y"], name="reshape"),
    ]
    return model(nodes, [vi("x", TensorProto.FLOAT, [batch, 3, 4])],
                 [vi("y", TensorProto.FLOAT, [batch, 12])])


def relu_model(opset=13):
    return model([helper.make_node("Relu", ["x"], ["y"], name="r")],
                 [vi("x", TensorProto.FLOAT, [1, 4])], [vi("y", TensorProto.FLOAT, [1, 4])],
                 opset=opset)


def main():
    os.makedirs(BAD, exist_ok=True)

    # ---- good models
    save(gemm_relu(1), os.path.join(ROOT, "gemm_relu.onnx"))
    save(view_flatten(2), os.path.join(ROOT, "view_fixed.onnx"))
    save(view_flatten("N"), os.path.join(ROOT, "view_dynamic.onnx"))

    # Opset 6 with an op unchanged since (Relu-6): accepted.
    save(relu_model(opset=6), os.path.join(ROOT, "relu_opset6.onnx"))

    # Constant node and unsorted nodes: Add(x, c) listed before the Constant.
    nodes = [helper.make_node("Add", ["x", "c"], ["y"], name="add"),
             helper.make_node("Constant", [], ["c"], name="c", value_floats=[1.0, 2.0, 3.0, 4.0])]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [1, 4])], [vi("y", TensorProto.FLOAT, [1, 4])]),
         os.path.join(ROOT, "const_add.onnx"))

    # External data that exists: W (2 floats) at offset 8 of ext_ok.bin.
    with open(os.path.join(ROOT, "ext_ok.bin"), "wb") as f:
        f.write(struct.pack("<4f", 9, 9, 2.0, -3.0))
    w = TensorProto()
    w.name = "W"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([2])
    w.data_location = TensorProto.EXTERNAL
    for k, v in (("location", "ext_ok.bin"), ("offset", "8"), ("length", "8")):
        e = w.external_data.add()
        e.key, e.value = k, v
    save(model([helper.make_node("Add", ["x", "W"], ["y"], name="add")],
               [vi("x", TensorProto.FLOAT, [2])], [vi("y", TensorProto.FLOAT, [2])], [w]),
         os.path.join(ROOT, "ext_ok.onnx"))

    # ---- bad models
    good = gemm_relu(1).SerializeToString()
    # Cut inside the graph: the outer length prefix then runs past the end.
    with open(os.path.join(BAD, "truncated.onnx"), "wb") as f:
        f.write(good[: len(good) // 2])
    rng = random.Random(1234)
    with open(os.path.join(BAD, "random.onnx"), "wb") as f:
        f.write(bytes([0xFF, 0xFF]) + bytes(rng.randrange(256) for _ in range(254)))

    save(model([helper.make_node("Sin", ["x"], ["y"], name="sine")],
               [vi("x", TensorProto.FLOAT, [1, 4])], [vi("y", TensorProto.FLOAT, [1, 4])]),
         os.path.join(BAD, "unsupported_op.onnx"))
    save(model([helper.make_node("Relu", ["x"], ["y"], name="custom", domain="com.example")],
               [vi("x", TensorProto.FLOAT, [1, 4])], [vi("y", TensorProto.FLOAT, [1, 4])]),
         os.path.join(BAD, "custom_domain.onnx"))

    # a = x + b, b = relu(a): a cycle through both nodes.
    nodes = [helper.make_node("Add", ["x", "b"], ["a"], name="loop_add"),
             helper.make_node("Relu", ["a"], ["b"], name="loop_relu")]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [1, 4])], [vi("a", TensorProto.FLOAT, [1, 4])]),
         os.path.join(BAD, "cycle.onnx"))

    # External data whose file is missing, and one that escapes the folder.
    for fname, loc in (("missing_external.onnx", "no_such_weights.bin"),
                       ("escape_external.onnx", "../../etc/passwd")):
        w = TensorProto()
        w.name = "W"
        w.data_type = TensorProto.FLOAT
        w.dims.extend([4])
        w.data_location = TensorProto.EXTERNAL
        e = w.external_data.add()
        e.key, e.value = "location", loc
        save(model([helper.make_node("Add", ["x", "W"], ["y"], name="add")],
                   [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])], [w]),
             os.path.join(BAD, fname))

    # W declares 3×4 = 12 floats but carries 8.
    w = TensorProto()
    w.name = "W"
    w.data_type = TensorProto.FLOAT
    w.dims.extend([3, 4])
    w.raw_data = struct.pack("<8f", *range(8))
    save(model([helper.make_node("MatMul", ["x", "W"], ["y"], name="mm")],
               [vi("x", TensorProto.FLOAT, [1, 3])], [vi("y", TensorProto.FLOAT, [1, 4])], [w]),
         os.path.join(BAD, "size_mismatch.onnx"))

    save(model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="reader")],
               [vi("x", TensorProto.FLOAT, [1, 4])], [vi("y", TensorProto.FLOAT, [1, 4])]),
         os.path.join(BAD, "undefined_value.onnx"))

    # Opset 6: Add still had its legacy broadcast attribute (changed at 7).
    save(model([helper.make_node("Add", ["x", "x"], ["y"], name="old_add")],
               [vi("x", TensorProto.FLOAT, [1, 4])], [vi("y", TensorProto.FLOAT, [1, 4])],
               opset=6),
         os.path.join(BAD, "opset_6.onnx"))
    save(relu_model(opset=22), os.path.join(BAD, "opset_22.onnx"))

    save(model([helper.make_node("Relu", ["x", "x"], ["y"], name="two_in")],
               [vi("x", TensorProto.FLOAT, [1, 4])], [vi("y", TensorProto.FLOAT, [1, 4])]),
         os.path.join(BAD, "too_many_inputs.onnx"))

    nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"], name="drop"),
             helper.make_node("Cast", ["mask"], ["m"], name="cast", to=TensorProto.FLOAT)]
    save(model(nodes, [vi("x", TensorProto.FLOAT, [1, 4])],
               [vi("y", TensorProto.FLOAT, [1, 4]), vi("m", TensorProto.FLOAT, [1, 4])]),
         os.path.join(BAD, "dropout_mask.onnx"))

    # float16 weights: a data type neuroc refuses, naming the tensor.
    w = helper.make_tensor("Wh", TensorProto.FLOAT16, [4], [0, 0, 0, 0])
    save(model([helper.make_node("Add", ["x", "Wh"], ["y"], name="add")],
               [vi("x", TensorProto.FLOAT, [4])], [vi("y", TensorProto.FLOAT, [4])], [w]),
         os.path.join(BAD, "float16_weight.onnx"))

    # Sanity: the truncated file must not parse (else the test proves nothing).
    try:
        onnx.load_from_string(open(os.path.join(BAD, "truncated.onnx"), "rb").read())
        raise SystemExit("truncated.onnx still parses: pick another cut")
    except Exception:  # google.protobuf's DecodeError
        pass


if __name__ == "__main__":
    main()
