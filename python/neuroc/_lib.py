"""Finding libneuroc and declaring its C API for ctypes.

The library is found, in this order, at
  1. $NEUROC_LIBRARY (a path to libneuroc.so),
  2. the copy bundled into this package when it was installed (_lib/),
  3. the system's: ctypes.util.find_library("neuroc"), then pkg-config's libdir.
ctypes calls release the GIL for their whole duration (CDLL, not PyDLL).

The structs below mirror include/neuroc/*.h field by field; the tests
(tests/test_abi.py) compile a C probe against the headers and compare every
offset and size. Options structs carry a tail of spare bytes: a newer
library that appends fields has its nc_*_init fill them there with their
defaults instead of writing past our buffer.
"""
import ctypes
import ctypes.util
import glob
import os
import subprocess

from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int64,
                    c_size_t, c_uint64, c_void_p)

MAX_DIMS = 8
_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("NEUROC_LIBRARY")
    if env:
        return [(env, "NEUROC_LIBRARY")]
    found = sorted(glob.glob(os.path.join(_HERE, "_lib", "libneuroc.so*")))
    if found:
        return [(found[0], "bundled")]
    out = []
    name = ctypes.util.find_library("neuroc")
    if name:
        out.append((name, "system (ctypes.util)"))
    try:
        libdir = subprocess.run(["pkg-config", "--variable=libdir", "neuroc"], capture_output=True,
                                text=True, timeout=10).stdout.strip()
        if libdir:
            out.append((os.path.join(libdir, "libneuroc.so"), "pkg-config"))
    except (OSError, subprocess.SubprocessError):
        pass
    return out


def _load():
    tried = []
    for path, how in _candidates():
        try:
            return ctypes.CDLL(path), path, how
        except OSError as e:
            tried.append(f"{path} ({how}): {e}")
    raise ImportError("neuroc: libneuroc not found; set NEUROC_LIBRARY to its path, or reinstall the "
                      "package where the C library builds (neuroc's docs/python.md). "
                      "Tried: " + ("; ".join(tried) or "no candidates"))


lib, path, found_by = _load()

# ---------------------------------------------------------------- types

Dims = c_int64 * MAX_DIMS
PROGRESS_FN = ctypes.CFUNCTYPE(None, c_char_p, c_int64, c_int64, c_void_p)


class _Options(Structure):
    """Base of the options structs: filled by their nc_*_init."""


def _options(name, fields):
    return type(name, (_Options,), {"_fields_": fields + [("_spare", c_char * 256)]})


class ValueInfo(Structure):
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("ndim", c_int), ("shape", Dims)]


class LayerInfo(Structure):
    _fields_ = [("name", c_char_p), ("op", c_char_p), ("in_ndim", c_int), ("in_shape", Dims),
                ("out_ndim", c_int), ("out_shape", Dims), ("params", c_int64), ("macs", c_int64),
                ("supported", c_int)]


class NonlinearParams(Structure):  # nc_nonlinear_params
    _fields_ = [("fn", c_int), ("alpha", c_float), ("beta", c_float), ("eps", c_float), ("axis", c_int),
                ("trans_x", c_int), ("trans_y", c_int)]


class SnnLayerInfo(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("n_inputs", c_int), ("inputs", POINTER(c_int)),
                ("ndim", c_int), ("shape", Dims), ("params", c_int64), ("max_spikes", c_int),
                ("two_sided", c_int), ("nonlinear", NonlinearParams)]


class SnnOutputInfo(Structure):
    _fields_ = [("name", c_char_p), ("offset", c_int64), ("size", c_int64), ("ndim", c_int), ("shape", Dims)]


class BackendInfo(Structure):
    _fields_ = [("name", c_char_p), ("available", c_int), ("reason", c_char_p)]


ConvertOptions = _options("ConvertOptions", [
    ("method", c_int), ("percentile", c_double), ("count_zeros", c_int), ("per_channel", c_int),
    ("timesteps", c_int), ("levels", c_int), ("calib_samples", c_int64), ("reset", c_int),
    ("v_init_zero", c_int), ("binary_spikes", c_int), ("maxpool", c_int), ("qcfs_epochs", c_int),
    ("qcfs_lr", c_float), ("qcfs_batch", c_int), ("seed", c_uint64), ("progress", PROGRESS_FN),
    ("progress_user", c_void_p), ("bias_correction", c_int), ("dist", c_void_p),
    ("potential_correction", c_int), ("correction_rounds", c_int), ("spikes", c_int), ("burst", c_int),
    ("nonlinear_graded", c_int), ("target_loss", c_double), ("max_timesteps", c_int),
    ("holdout_samples", c_int64), ("keep_avgpool", c_int),
    ("finetune_epochs", c_int), ("finetune_lr", c_float), ("finetune_energy_weight", c_float),
    ("validation", c_void_p), ("validation_labels", c_void_p), ("threads", c_int),
    ("finetune_timesteps", c_int)])

EvalOptions = _options("EvalOptions", [
    ("backend", c_char_p), ("timesteps", c_int), ("batch", c_int), ("encoding", c_int), ("seed", c_uint64),
    ("energy_per_synop", c_double), ("energy_per_mac", c_double), ("progress", PROGRESS_FN),
    ("progress_user", c_void_p), ("dist", c_void_p)])

SessionOptions = _options("SessionOptions", [
    ("backend", c_char_p), ("timesteps", c_int), ("encoding", c_int), ("seed", c_uint64), ("per_step", c_int),
    ("record", POINTER(c_char_p)), ("n_record", c_int), ("cuda_strategy", c_char_p),
    ("cuda_dense_threshold", c_float), ("cuda_precision", c_int), ("profile", c_int), ("count_steps", c_int)])

LoadOptions = _options("LoadOptions", [("max_tensor_elems", c_int64), ("external_data_dir", c_char_p),
                                        ("describe_only", c_int)])
NirOptions = _options("NirOptions", [("reset", c_int), ("dt", c_double), ("spike", c_int), ("integration", c_int),
                                      ("snntorch_subtract", c_int)])
NirSaveOptions = _options("NirSaveOptions", [("strict", c_int)])


class NirFileInfo(Structure):
    _fields_ = [("neuroc_format", c_int), ("exact_graph", c_int), ("loss_known", c_int),
                ("standard_loss", c_char * 4096)]


class EvalLayerStats(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("neurons", c_int64), ("spikes", c_int64),
                ("spike_rate", c_double), ("synops", c_double), ("macs", c_int), ("burst_synops", c_double)]


class EvalCost(Structure):
    _fields_ = [("synaptic_adds", c_double), ("synaptic_macs", c_double), ("ann_macs", c_double),
                ("snn_joules", c_double), ("ann_joules", c_double), ("energy_per_synop", c_double),
                ("energy_per_mac", c_double), ("energy_source", c_char_p)]


class FinetuneEpoch(Structure):
    _fields_ = [("epoch", c_int), ("epochs", c_int), ("batch", c_int), ("loss", c_double),
                ("accuracy", c_double), ("val_loss", c_double), ("val_accuracy", c_double),
                ("samples", c_int64), ("seconds", c_double), ("optimizer_state", c_void_p),
                ("optimizer_steps", c_int64)]


EPOCH_FN = ctypes.CFUNCTYPE(c_int, c_void_p, POINTER(FinetuneEpoch), c_void_p)

FinetuneOptions = _options("FinetuneOptions", [
    ("timesteps", c_int), ("epochs", c_int), ("lr", c_float), ("batch", c_int), ("surrogate", c_int),
    ("surrogate_width", c_float), ("detach_reset", c_int), ("train_thresholds", c_int), ("optimizer", c_int),
    ("momentum", c_float), ("weight_decay", c_float), ("grad_clip", c_float), ("seed", c_uint64),
    ("max_memory", c_int64), ("start_epoch", c_int), ("optimizer_state", c_void_p),
    ("optimizer_steps", c_int64), ("threads", c_int), ("progress", PROGRESS_FN), ("progress_user", c_void_p),
    ("on_epoch", EPOCH_FN), ("epoch_user", c_void_p), ("dist", c_void_p), ("energy_weight", c_float)])

LoihiOptions = _options("LoihiOptions", [
    ("target", c_int), ("reset", c_int), ("input", c_int), ("weight_bits", c_int), ("headroom_bits", c_int),
    ("per_layer_scale", c_int), ("timesteps", c_int), ("input_min", c_float), ("input_max", c_float),
    ("calib", c_void_p), ("calib_samples", c_int64), ("params_path", c_char_p), ("neurons_per_core", c_int64)])

LoihiRunOptions = _options("LoihiRunOptions", [
    ("timesteps", c_int), ("extra_steps", c_int), ("threads", c_int), ("progress", PROGRESS_FN),
    ("progress_user", c_void_p), ("dist", c_void_p)])


class LoihiMapping(Structure):
    _fields_ = [("cores", c_int64), ("chips", c_int64), ("cores_per_chip", c_int64), ("latency_steps", c_int),
                ("host_macs", c_int64), ("ann_macs", c_int64), ("smallest_system", c_char_p)]


class LoihiCost(Structure):
    _fields_ = [("energy_j", c_double), ("synop_j", c_double), ("update_j", c_double), ("spike_j", c_double),
                ("static_j", c_double), ("latency_s", c_double), ("step_s", c_double), ("host_macs", c_double),
                ("ann_macs", c_double), ("ann_gpu_j", c_double), ("e_mac_gpu", c_double),
                ("energy_source", c_char_p), ("gpu_source", c_char_p), ("evidence", c_char_p)]


# C struct name of each mirror, for the layout test.
C_NAMES = {LoadOptions: "nc_load_options", ValueInfo: "nc_value_info", LayerInfo: "nc_layer_info", SnnLayerInfo: "nc_snn_layer_info",
           NonlinearParams: "nc_nonlinear_params",
           BackendInfo: "nc_backend_info", ConvertOptions: "nc_convert_options", EvalOptions: "nc_eval_options",
           SessionOptions: "nc_session_options", NirOptions: "nc_nir_options",
           NirSaveOptions: "nc_nir_save_options", NirFileInfo: "nc_nir_file_info", EvalLayerStats: "nc_eval_layer_stats", EvalCost: "nc_eval_cost",
           FinetuneEpoch: "nc_finetune_epoch", FinetuneOptions: "nc_finetune_options",
           LoihiOptions: "nc_loihi_options", LoihiRunOptions: "nc_loihi_run_options",
           LoihiMapping: "nc_loihi_mapping", LoihiCost: "nc_loihi_cost",
           SnnOutputInfo: "nc_snn_output_info"}

# ---------------------------------------------------------------- functions

P = c_void_p          # an opaque object: nc_model *, nc_snn *, nc_tensor *, ...
PP = POINTER(c_void_p)
ST = c_int            # nc_status


def _fn(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    globals()[name] = f


_fn("nc_status_str", c_char_p, c_int)
_fn("nc_last_error", c_char_p)
_fn("nc_version", c_char_p)
_fn("nc_build_features", c_char_p)
_fn("nc_set_log_callback", None, c_void_p, c_void_p)
# tensors
_fn("nc_tensor_wrap", ST, c_int, c_int, POINTER(c_int64), c_void_p, PP)
_fn("nc_tensor_free", None, P)
_fn("nc_tensor_dtype", c_int, P)
_fn("nc_tensor_ndim", c_int, P)
_fn("nc_tensor_shape", POINTER(c_int64), P)
_fn("nc_tensor_numel", c_int64, P)
_fn("nc_tensor_data", c_void_p, P)
_fn("nc_data_load", ST, c_char_p, c_int, PP)
_fn("nc_npy_save", ST, c_char_p, P)
# ANN models
_fn("nc_load_options_init", None, POINTER(LoadOptions))
_fn("nc_model_load_onnx", ST, c_char_p, POINTER(LoadOptions), PP)
_fn("nc_model_load_onnx_memory", ST, c_char_p, c_size_t, c_char_p, POINTER(LoadOptions), PP)
_fn("nc_model_free", None, P)
_fn("nc_model_num_inputs", c_size_t, P)
_fn("nc_model_num_outputs", c_size_t, P)
_fn("nc_model_input", ST, P, c_size_t, POINTER(ValueInfo))
_fn("nc_model_output", ST, P, c_size_t, POINTER(ValueInfo))
_fn("nc_model_num_layers", c_int, P)
_fn("nc_model_layer", ST, P, c_int, POINTER(LayerInfo))
_fn("nc_model_run", ST, P, POINTER(c_void_p), c_size_t, POINTER(c_void_p), c_size_t)
# spiking networks
_fn("nc_snn_free", None, P)
_fn("nc_snn_kind_name", c_char_p, c_int)
_fn("nc_nonlinear_fn_name", c_char_p, c_int)
_fn("nc_snn_kind_is_neuron", c_int, c_int)
_fn("nc_snn_num_layers", c_int, P)
_fn("nc_snn_layer_at", ST, P, c_int, POINTER(SnnLayerInfo))
_fn("nc_snn_find_layer", c_int, P, c_char_p)
_fn("nc_snn_output_layer", c_int, P)
_fn("nc_snn_timesteps", c_int, P)
_fn("nc_snn_set_timesteps", c_int, P, c_int)
_fn("nc_snn_num_outputs", c_int, P)
_fn("nc_snn_output_at", ST, P, c_int, POINTER(SnnOutputInfo))
_fn("nc_nir_options_init", None, POINTER(NirOptions))
_fn("nc_snn_rate_limit", ST, P, P, PP)
_fn("nc_snn_load_nir", ST, c_char_p, POINTER(NirOptions), PP)
_fn("nc_nir_save_options_init", None, POINTER(NirSaveOptions))
_fn("nc_snn_save_nir_with", ST, P, c_char_p, POINTER(NirSaveOptions))
_fn("nc_snn_nir_standard", ST, P, PP, POINTER(c_char), c_size_t)
_fn("nc_nir_file_info_read", ST, c_char_p, POINTER(NirFileInfo))
_fn("nc_backend_count", c_int)
_fn("nc_backend_get_info", ST, c_int, POINTER(BackendInfo))
_fn("nc_session_options_init", None, POINTER(SessionOptions))
_fn("nc_session_create", ST, P, POINTER(SessionOptions), PP)
_fn("nc_session_free", None, P)
_fn("nc_session_run", ST, P, P, PP)
_fn("nc_session_set_seed", ST, P, c_uint64)
_fn("nc_batch_seed", c_uint64, c_uint64, c_int64)
_fn("nc_session_spike_count", ST, P, c_int, POINTER(c_int64))
_fn("nc_session_trace", ST, P, c_char_p, c_int, PP)
_fn("nc_session_layer_seconds", ST, P, c_int, POINTER(c_double))
# conversion, evaluation, fine-tuning
_fn("nc_convert_options_init", None, POINTER(ConvertOptions))
_fn("nc_convert", ST, P, P, P, POINTER(ConvertOptions), PP, PP)
_fn("nc_convert_report_free", None, P)
_fn("nc_convert_report_json", c_char_p, P)
_fn("nc_eval_options_init", None, POINTER(EvalOptions))
_fn("nc_snn_evaluate", ST, P, P, P, P, POINTER(EvalOptions), PP)
_fn("nc_eval_result_free", None, P)
_fn("nc_eval_result_timesteps", c_int, P)
_fn("nc_eval_result_samples", c_int64, P)
_fn("nc_eval_result_accuracy_at", c_double, P, c_int)
_fn("nc_eval_result_ann_accuracy", c_double, P)
_fn("nc_eval_result_json", c_char_p, P)
_fn("nc_eval_result_write_svg", ST, P, c_char_p)
_fn("nc_eval_result_num_layers", c_int, P)
_fn("nc_eval_result_layer", ST, P, c_int, POINTER(EvalLayerStats))
_fn("nc_eval_result_cost", ST, P, POINTER(EvalCost))
_fn("nc_eval_result_cost_at", ST, P, c_int, POINTER(EvalCost))
_fn("nc_finetune_options_init", None, POINTER(FinetuneOptions))
_fn("nc_snn_finetune", ST, P, P, P, P, P, POINTER(FinetuneOptions))
# the Loihi-style simulator
_fn("nc_loihi_options_init", None, POINTER(LoihiOptions))
_fn("nc_loihi_compile", ST, P, POINTER(LoihiOptions), PP)
_fn("nc_loihi_net_free", None, P)
_fn("nc_loihi_net_json", c_char_p, P)
_fn("nc_loihi_net_mapping", ST, P, POINTER(LoihiMapping))
_fn("nc_loihi_run_options_init", None, POINTER(LoihiRunOptions))
_fn("nc_loihi_run", ST, P, P, P, POINTER(LoihiRunOptions), PP)
_fn("nc_loihi_result_free", None, P)
_fn("nc_loihi_result_timesteps", c_int, P)
_fn("nc_loihi_result_samples", c_int64, P)
_fn("nc_loihi_result_accuracy_at", c_double, P, c_int)
_fn("nc_loihi_result_readout", ST, P, PP)
_fn("nc_loihi_result_cost", ST, P, POINTER(LoihiCost))
_fn("nc_loihi_result_json", c_char_p, P)


def new(options_type, init):
    """An options struct filled with the library's defaults."""
    o = options_type()
    init(ctypes.byref(o))
    return o
