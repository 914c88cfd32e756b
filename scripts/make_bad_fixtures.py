#!/usr/bin/python3
"""Writes the hostile fixtures of tests/test_limits.c into tests/fixtures/bad/.

Run with Debian's python (`/usr/bin/python3 scripts/make_bad_fixtures.py`):
it needs onnx, numpy and h5py. Each file is small but claims, or would make
neuroc build, something beyond one of the input limits (nc_set_limits).
"""
import os

import h5py
import numpy as np
import onnx
from onnx import TensorProto, helper

BAD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "bad")


def model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                          producer_name="neuroc-fixtures")
    m.ir_version = 8
    return m


def save(m, name):
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(m.SerializeToString())


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])

# A 16 GiB weight declared in a few bytes (no data at all).
w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[65536, 65536])
save(model([helper.make_node("Add", ["x", "W"], ["y"], name="add")], [x], [y], [w]),
     "huge_tensor.onnx")

# A node name of 100000 bytes (the default string limit is 65536).
save(model([helper.make_node("Relu", ["x"], ["y"], name="n" * 100000)], [x], [y]),
     "long_name.onnx")

# A Pad that makes a 1x1x80008x80008 float tensor (25.6 GB) from an 8x8 input:
# the limit applies to what a model computes, not only to what it stores.
xi = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])
yo = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
pads = helper.make_tensor("pads", TensorProto.INT64, [8], [0, 0, 40000, 40000, 0, 0, 40000, 40000])
save(model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad")], [xi], [yo], [pads]),
     "huge_pad.onnx")

# The same through the broadcasting ops a ViT's class token exports as: a
# ConstantOfShape of 10^13 floats, an Expand of a 1x1 input to 2^40 x 1.
cshape = helper.make_tensor("shape", TensorProto.INT64, [3], [100000, 100000, 1000])
save(model([helper.make_node("ConstantOfShape", ["shape"], ["c"], name="cos",
                             value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0])),
            helper.make_node("Add", ["x", "c"], ["y"], name="add")], [xi], [yo], [cshape]),
     "huge_constantofshape.onnx")
x11 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])
eshape = helper.make_tensor("eshape", TensorProto.INT64, [2], [1 << 40, 1])
save(model([helper.make_node("Expand", ["x", "eshape"], ["y"], name="expand")], [x11], [yo], [eshape]),
     "huge_expand.onnx")


def s(g, name, v):
    g.create_dataset(name, data=v, dtype=h5py.string_dtype())


def io_nodes(g):
    """A NIRGraph group g with Input and Output nodes of 4 values; returns its nodes group."""
    s(g, "type", "NIRGraph")
    nodes = g.create_group("nodes")
    for io in ("Input", "Output"):
        n = nodes.create_group(io.lower())
        s(n, "type", io)
        n["shape"] = np.array([4], np.int64)
    return nodes


def graph(g, depth):
    """A NIRGraph Input -> (nested graph of depth-1, or Linear) -> Output."""
    nodes = io_nodes(g)
    inner = nodes.create_group("inner")
    if depth > 1:
        graph(inner, depth - 1)
    else:
        s(inner, "type", "Linear")
        inner["weight"] = np.eye(4, dtype=np.float32)
    edges = np.array([["input", "inner"], ["inner", "output"]], dtype=object)
    g.create_dataset("edges", data=edges, dtype=h5py.string_dtype())


# NIRGraphs nested 6 deep: reads with the default depth limit (64), fails
# with max_graph_depth 4.
with h5py.File(os.path.join(BAD, "nested6.nir"), "w", libver="latest") as f:
    s(f, "version", "1.0.8")
    graph(f.create_group("node"), 6)

# A node's 'type' string of 100000 bytes.
with h5py.File(os.path.join(BAD, "long_string.nir"), "w", libver="latest") as f:
    s(f, "version", "1.0.8")
    g = f.create_group("node")
    s(g, "type", "NIRGraph")
    n = g.create_group("nodes").create_group("input")
    s(n, "type", "I" * 100000)
    n["shape"] = np.array([4], np.int64)
    g.create_dataset("edges", data=np.zeros((0, 2), dtype=object), dtype=h5py.string_dtype())

# A dataset declaring 2^40 float32 elements, stored in a few bytes
# (chunked, never written: HDF5 returns the fill value).
with h5py.File(os.path.join(BAD, "huge_weight.nir"), "w", libver="latest") as f:
    s(f, "version", "1.0.8")
    g = f.create_group("node")
    nodes = io_nodes(g)
    lin = nodes.create_group("lin")
    s(lin, "type", "Linear")
    lin.create_dataset("weight", shape=(1 << 20, 1 << 20), dtype=np.float32, chunks=(1, 1024))
    g.create_dataset("edges", data=np.array([["input", "lin"], ["lin", "output"]], dtype=object),
                     dtype=h5py.string_dtype())
