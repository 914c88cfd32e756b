#!/usr/bin/python3
"""Writes tests/fixtures/bad/deep_*.onnx: a real small model
(tests/fixtures/gemm_relu.onnx) with messages appended that nest thousands
deep along the two paths issue 33 found (fuzz/regressions/onnx/nest-* hold
recipes for every recursive path of onnx.proto, which fuzz_onnx expands). protobuf merges a repeated
message field into the one already read, so each file is the model plus one
more graph input, node or function. Without a nesting limit, protobuf-c's
recursive unpack overflows the stack on every one of them (issue 33).

Pure Python (the protobuf wire format by hand): no onnx package needed.
    /usr/bin/python3 scripts/make_nesting_fixtures.py
"""
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BAD = os.path.join(ROOT, "tests", "fixtures", "bad")
LEN = 2  # wire type of strings, bytes and messages


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(num, payload):
    return varint(num << 3 | LEN) + varint(len(payload)) + payload


def string(num, s):
    return field(num, s.encode())


def enum(num, v):
    return varint(num << 3) + varint(v)


def nest(path, depth, inner=b""):
    """`path` (a list of (field number, extra bytes of that message)) repeated
    `depth` times, outermost first, around `inner`."""
    body = inner
    for _ in range(depth):
        for num, extra in reversed(path):
            body = field(num, extra + body)
    return body


GRAPH_ATTR = 5  # AttributeProto.type GRAPH


def if_level(attr_field, attr_type):
    # GraphProto.node → NodeProto (op If) .attribute → AttributeProto .g → GraphProto
    return [(1, string(4, "If")), (5, enum(20, attr_type)), (attr_field, b"")]


CASES = {
    # ModelProto.graph → GraphProto.input → ValueInfoProto.type → TypeProto,
    # then TypeProto.sequence_type → Sequence.elem_type → TypeProto ...
    "deep_sequence_type.onnx": field(7, field(11, string(1, "deep") + field(
        2, nest([(4, b""), (1, b"")], 4400)))),
    # ModelProto.graph → GraphProto.node (If) → .attribute then_branch → .g → GraphProto ...
    "deep_if_then_branch.onnx": field(7, nest(if_level(6, GRAPH_ATTR), 5000)),
}

with open(os.path.join(ROOT, "tests", "fixtures", "gemm_relu.onnx"), "rb") as f:
    base = f.read()
for name, extra in CASES.items():
    with open(os.path.join(BAD, name), "wb") as f:
        f.write(base + extra)
    print(f"{name}: {len(base) + len(extra)} bytes")
