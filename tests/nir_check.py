"""Checks a .nir file written by neuroc with the `nir` package (PyPI).

usage: python nir_check.py FILE.nir [...]

Every file must pass nir.read (with its type checks) and follow DESIGN §4 at
the HDF5 level: /version and every string a scalar variable-length UTF-8
dataset, each node group holding exactly its constructor's fields, floats
float32, integers int64. When FILE.nir.json exists (written by test_nir) the
graph must also match it: node names and types, field shapes, integer
fields, edges, and single float values that show the spike-value folds.
A sidecar may say "type_check": false (compact grouped Conv2d weights, which
nir 1.0.x's type inference misreads: it takes weight.shape[1] as the input
channels) or "nir_read_refuses": true (a file with neuroc.<kind> extension
nodes, which nir.read cannot construct; only the HDF5 layout is checked).
"""
import json
import os
import sys

import h5py
import numpy as np
import nir

FIELDS = {
    "Input": {"shape"},
    "Output": {"shape"},
    "Affine": {"weight", "bias"},
    "Conv2d": {"input_shape", "weight", "stride", "padding", "dilation", "groups", "bias"},
    "SumPool2d": {"kernel_size", "stride", "padding"},
    "Flatten": {"start_dim", "end_dim", "input_type"},
    "IF": {"r", "v_threshold"},
    "LIF": {"tau", "r", "v_leak", "v_threshold"},
    "CubaLIF": {"tau_mem", "tau_syn", "r", "v_leak", "v_threshold", "w_in"},
    "Scale": {"scale"},
}
INTS = {"shape", "input_shape", "stride", "padding", "dilation", "groups", "kernel_size",
        "start_dim", "end_dim", "input_type"}


def is_vlen_utf8(ds):
    info = h5py.check_string_dtype(ds.dtype)
    return info is not None and info.length is None and info.encoding == "utf-8"


def check_hdf5(path, errors):
    with h5py.File(path, "r") as f:
        if not (is_vlen_utf8(f["version"]) and f["version"].shape == ()):
            errors.append("/version is not a scalar variable-length UTF-8 string")
        graph = f["node"]
        if graph["type"][()] != b"NIRGraph":
            errors.append("/node is not a NIRGraph")
        edges = graph["edges"]
        if not is_vlen_utf8(edges) or (edges.shape[0] and edges.shape[1:] != (2,)):
            errors.append(f"edges: shape {edges.shape}, dtype {edges.dtype}")
        for name, node in graph["nodes"].items():
            if node["type"][()].decode().startswith("neuroc."):
                continue  # an extension node: neuroc's own fields (export/nir/nir_ext.c)
            if not name.replace("_", "a").isalnum() or not name.isascii():
                errors.append(f"node name {name!r} is not [A-Za-z0-9_]+")
            if not (is_vlen_utf8(node["type"]) and node["type"].shape == ()):
                errors.append(f"{name}/type is not a scalar variable-length UTF-8 string")
            typ = node["type"][()].decode()
            have = set(node.keys()) - {"type"}
            if have != FIELDS.get(typ, set()):
                errors.append(f"{name} ({typ}) holds {sorted(have)}, expected {sorted(FIELDS.get(typ, []))}")
            for k in have:
                want = np.int64 if k in INTS else np.float32
                if node[k].dtype != want:
                    errors.append(f"{name}/{k} is {node[k].dtype}, expected {np.dtype(want)}")


def field(node, name):
    v = getattr(node, name)
    return next(iter(v.values())) if isinstance(v, dict) else v


def check_sidecar(graph, exp, errors):
    names = set(graph.nodes)
    if names != set(exp["nodes"]):
        errors.append(f"nodes {sorted(names)} != expected {sorted(exp['nodes'])}")
    for name, e in exp["nodes"].items():
        node = graph.nodes.get(name)
        if node is None:
            continue
        if type(node).__name__ != e["type"]:
            errors.append(f"{name}: type {type(node).__name__}, expected {e['type']}")
            continue
        for k, shape in e.get("shapes", {}).items():
            if list(np.shape(field(node, k))) != shape:
                errors.append(f"{name}.{k}: shape {np.shape(field(node, k))}, expected {shape}")
        for k, want in e.get("ints", {}).items():
            if not np.array_equal(np.asarray(field(node, k)), np.asarray(want)):
                errors.append(f"{name}.{k}: {field(node, k)}, expected {want}")
    got = sorted(tuple(e) for e in graph.edges)
    want = sorted(tuple(e) for e in exp["edges"])
    if got != want:
        errors.append(f"edges {got} != expected {want}")
    for name, k, idx, val in exp.get("values", []):
        v = np.asarray(field(graph.nodes[name], k)).ravel()[idx]
        if v.dtype != np.float32 or v != np.float32(val):
            errors.append(f"{name}.{k}[{idx}] = {v!r}, expected float32 {val!r}")


def main(paths):
    failed = 0
    for path in paths:
        errors = []
        try:
            exp = None
            if os.path.exists(path + ".json"):
                with open(path + ".json") as f:
                    exp = json.load(f)
            check_hdf5(path, errors)
            if exp is not None and exp.get("nir_read_refuses"):
                try:
                    nir.read(path)
                    errors.append("nir.read accepted a file with neuroc extension nodes")
                except Exception:
                    pass
            else:
                graph = nir.read(path, type_check=exp.get("type_check", True) if exp else True)
                if exp is not None and "nodes" in exp:
                    check_sidecar(graph, exp, errors)
        except Exception as e:  # nir.read's own complaint is the finding
            errors.append(f"{type(e).__name__}: {e}")
        for e in errors:
            print(f"{path}: {e}")
        print(f"{'FAIL' if errors else 'ok  '} {path} (nir {nir.__version__})")
        failed |= bool(errors)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
